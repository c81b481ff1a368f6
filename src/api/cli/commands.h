// Subcommands of the `vllm` executable. Each takes the arguments after its name
// (argv[0] is the subcommand name) and returns the process exit code.
#pragma once

namespace vllm::cli {

int cmd_generate(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_chat(int argc, char** argv);

}  // namespace vllm::cli
