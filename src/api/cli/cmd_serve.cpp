// The commands that live in shared modules, loaded only when run: `vllm serve` and `vllm
// run-batch` (libvllm_server.so: the HTTP server, the OpenAI protocol and their libraries),
// `vllm chat`, `vllm complete` and `vllm bench serve` (libvllm_client.so: libcurl). A module
// is looked for beside this executable first, then on the normal library path.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "api/cli/commands.h"

namespace vllm::cli {

namespace {

std::string exe_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

int run_module(const char* kModule, const char* symbol, int argc, char** argv) {
  std::string beside = exe_dir() + "/" + kModule;
  void* h = ::dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string first_error;
  if (!h) {
    first_error = ::dlerror();
    h = ::dlopen(kModule, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    std::fprintf(stderr, "error: `vllm %s` needs %s (%s; %s)\n", argv[0], kModule,
                 first_error.c_str(), ::dlerror());
    return 1;
  }
  using Entry = int (*)(int, char**);
  auto entry = reinterpret_cast<Entry>(::dlsym(h, symbol));
  if (!entry) {
    std::fprintf(stderr, "error: %s has no %s: %s\n", beside.c_str(), symbol, ::dlerror());
    return 1;
  }
  return entry(argc, argv);
}

int cmd_serve(int argc, char** argv) {
  return run_module("libvllm_server.so", "vllm_serve_main", argc, argv);
}

int cmd_run_batch(int argc, char** argv) {
  return run_module("libvllm_server.so", "vllm_run_batch_main", argc, argv);
}

int cmd_client(int argc, char** argv) {
  return run_module("libvllm_client.so", "vllm_client_main", argc, argv);
}

}  // namespace vllm::cli
