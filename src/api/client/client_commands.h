// The client commands of libvllm_client.so (each takes the arguments after its name; argv[0]
// is the command name) and the module's entry point, looked up by name from `vllm`.
#pragma once

namespace vllm::client {

int cmd_chat(int argc, char** argv);
int cmd_complete(int argc, char** argv);
int cmd_bench_serve(int argc, char** argv);

}  // namespace vllm::client

extern "C" {
// argv[0] is "chat", "complete" or "bench-serve"; returns the process exit status.
int vllm_client_main(int argc, char** argv);
}
