// Environment variables the engine honours, read once at start-up (never in the step
// loop). docs/ENVIRONMENT.md lists them for users.
#pragma once

#include <cstdint>

namespace vllm::engine {

struct RuntimeEnv {
  bool decode_graph = true;     // VT_DECODE_GRAPH=0 disables decode step graphs
  bool graph_strict = false;    // VT_GRAPH_STRICT=1 write-protects graph state from the host
  int64_t recapture_every = 0;  // VT_RECAPTURE_EVERY=N re-captures every N replays
  bool dump_top2 = false;       // VT_DUMP_TOP2=1 prints argmax, runner-up and gap per step

  static const RuntimeEnv& get();  // parsed on first use
};

}  // namespace vllm::engine
