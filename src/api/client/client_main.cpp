// Entry point of libvllm_client.so: dispatches to the client commands and turns their errors
// into a message and exit status 1.
#include <cstdio>
#include <exception>
#include <string>

#include "api/client/client_commands.h"

extern "C" int vllm_client_main(int argc, char** argv) {
  try {
    const std::string cmd = argv[0];
    if (cmd == "chat") return vllm::client::cmd_chat(argc, argv);
    if (cmd == "complete") return vllm::client::cmd_complete(argc, argv);
    if (cmd == "bench-serve") return vllm::client::cmd_bench_serve(argc, argv);
    std::fprintf(stderr, "error: libvllm_client has no command '%s'\n", cmd.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
