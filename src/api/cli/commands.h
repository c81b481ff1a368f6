// Subcommands of the `vllm` executable. Each takes the arguments after its name
// (argv[0] is the subcommand name) and returns the process exit code.
#pragma once

namespace vllm::cli {

int cmd_generate(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_run_batch(int argc, char** argv);
// chat, complete, bench-serve (argv[0] names which): the clients in libvllm_client.so.
int cmd_client(int argc, char** argv);

}  // namespace vllm::cli
