// Compiles the grammar IR into a pushdown automaton over bytes: one DFA per rule (code-point
// classes become UTF-8 byte paths), byte transitions through a table indexed by byte class,
// and "call" edges that push a return state and enter another rule's DFA. Calls whose return
// state can only finish are tail calls and push nothing, so right-recursive chains (object
// members, list tails) do not deepen the stack. States that can never finish are trimmed, so
// every state a matcher can reach still has a way to complete: a mask never leads into a dead
// end. Left recursion and grammars matching nothing are refused here.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/structured_output/grammar.h"

namespace vllm::engine::so {

struct Limits {
  int32_t max_nfa_states = 1'000'000;  // before determinization
  int32_t max_dfa_states = 250'000;    // all rules together
  int32_t max_repeat = 10'000;         // {m,n} bounds, maxItems, maxLength, ...
  int64_t max_table_entries = 64'000'000;
};

struct Fsm {
  enum : uint8_t { kFinal = 1, kHasBytes = 2, kHasCalls = 4 };
  struct Call {
    int32_t target;  // the callee's start state
    int32_t ret;     // state to continue in after the callee finishes; -1: tail call
  };

  int32_t num_classes = 0;
  std::array<uint8_t, 256> byte_class{};
  std::vector<int32_t> next;  // [state * num_classes + class] -> state, -1 = no edge
  std::vector<uint8_t> flags;
  std::vector<int32_t> call_begin;  // calls of state s: calls[call_begin[s] .. call_begin[s+1])
  std::vector<Call> calls;
  std::vector<int32_t> state_rule;  // owning rule, for debugging
  int32_t root_start = 0;

  int32_t num_states() const { return static_cast<int32_t>(flags.size()); }
  int32_t step(int32_t s, uint8_t b) const { return next[s * num_classes + byte_class[b]]; }
  size_t memory_bytes() const {
    return next.size() * 4 + flags.size() + call_begin.size() * 4 + calls.size() * 8 +
           state_rule.size() * 4;
  }
};

// Throws GrammarError naming the rule (undefined, left-recursive, matches nothing) or the
// limit that was exceeded.
Fsm compile_fsm(const Grammar& g, const Limits& lim = {});

// UTF-8 byte-range sequences covering code points [lo, hi] (surrogate-free), exposed for
// tests: each inner vector is one path of (lo, hi) byte ranges.
std::vector<std::vector<std::pair<uint8_t, uint8_t>>> utf8_sequences(uint32_t lo, uint32_t hi);

}  // namespace vllm::engine::so
