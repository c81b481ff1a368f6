// `vllm serve`: loads libvllm_server.so (the HTTP server and its libraries) and runs it. The
// module is looked for beside this executable first, then on the normal library path.
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

int cmd_serve(int argc, char** argv) {
  constexpr const char* kModule = "libvllm_server.so";
  std::string beside = exe_dir() + "/" + kModule;
  void* h = ::dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string first_error;
  if (!h) {
    first_error = ::dlerror();
    h = ::dlopen(kModule, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    std::fprintf(stderr, "error: `vllm serve` needs %s (%s; %s)\n", kModule, first_error.c_str(),
                 ::dlerror());
    return 1;
  }
  using Entry = int (*)(int, char**);
  auto entry = reinterpret_cast<Entry>(::dlsym(h, "vllm_serve_main"));
  if (!entry) {
    std::fprintf(stderr, "error: %s has no vllm_serve_main: %s\n", beside.c_str(), ::dlerror());
    return 1;
  }
  return entry(argc, argv);
}

}  // namespace vllm::cli
