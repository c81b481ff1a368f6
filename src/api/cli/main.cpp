// `vllm` command-line entry point: dispatches to the subcommands.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "api/cli/commands.h"
#include "api/version.h"

namespace {
void usage() {
  std::fprintf(stderr,
               "usage: vllm <command> [options]\n"
               "commands:\n"
               "  generate   generate text from a prompt (or many)\n"
               "  bench      latency | throughput benchmarks; serve: online, against a server\n"
               "  tokenize   encode text or decode ids with a model's tokenizer\n"
               "  serve      OpenAI-compatible HTTP server\n"
               "  run-batch  OpenAI batch files (JSON lines) through the engine\n"
               "  chat       chat with a running server\n"
               "  complete   complete prompts with a running server\n"
               "  --version  print the version\n"
               "run `vllm <command> --help` for its options\n");
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "version") {
    std::printf("vllm.cpp %s (devices: %s)\n", vllm::api::kVersion, vllm::api::devices());
    return 0;
  }
  if (cmd == "--help" || cmd == "-h") {
    usage();
    return 0;
  }
  try {
    if (cmd == "generate") return vllm::cli::cmd_generate(argc - 1, argv + 1);
    if (cmd == "bench" && argc > 2 && std::string(argv[2]) == "serve") {
      argv[2] = const_cast<char*>("bench-serve");
      return vllm::cli::cmd_client(argc - 2, argv + 2);
    }
    if (cmd == "bench") return vllm::cli::cmd_bench(argc - 1, argv + 1);
    if (cmd == "chat" || cmd == "complete") return vllm::cli::cmd_client(argc - 1, argv + 1);
    if (cmd == "run-batch") return vllm::cli::cmd_run_batch(argc - 1, argv + 1);
    if (cmd == "tokenize") return vllm::cli::cmd_tokenize(argc - 1, argv + 1);
    if (cmd == "serve") return vllm::cli::cmd_serve(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "error: unknown command '%s'\n", cmd.c_str());
  usage();
  return 2;
}
