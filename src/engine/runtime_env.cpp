// RuntimeEnv parsing.
#include "engine/runtime_env.h"

#include <cstdlib>
#include <cstring>

namespace vllm::engine {

namespace {
bool flag(const char* name, bool def) {
  const char* v = std::getenv(name);
  if (!v || !*v) return def;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0 || std::strcmp(v, "off") == 0);
}
int64_t number(const char* name, int64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : def;
}
}  // namespace

const RuntimeEnv& RuntimeEnv::get() {
  static const RuntimeEnv env = [] {
    RuntimeEnv e;
    e.decode_graph = flag("VT_DECODE_GRAPH", true);
    e.graph_strict = flag("VT_GRAPH_STRICT", false);
    e.recapture_every = number("VT_RECAPTURE_EVERY", 0);
    e.dump_top2 = flag("VT_DUMP_TOP2", false);
    return e;
  }();
  return env;
}

}  // namespace vllm::engine
