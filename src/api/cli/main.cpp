// `vllm` command-line entry point: dispatches to the subcommands.
#include <cstdio>
#include <cstring>

#include "api/version.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("vllm.cpp %s\n", vllm::api::kVersion);
    return 0;
  }
  std::fprintf(stderr, "usage: vllm {generate|bench|tokenize|serve} ...\n");
  return 2;
}
