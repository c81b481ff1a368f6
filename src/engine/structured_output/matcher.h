// Per-request state of constrained decoding over a shared CompiledGrammar.
//
// Engine use, one matcher per request (cheap to create: the initial configuration set and
// an empty stack pool; movable and copyable):
//   each step, before sampling:  m.fill_mask(row)   // row: mask_words() uint32, bit i = id i
//   after sampling token t:      m.accept(t)        // false: t breaks the grammar (a bug in
//                                                   // the caller's masking; state unchanged)
//   m.is_terminated()            a stop token was accepted: the request is done
//   speculative tokens rejected: m.rollback(k)      // up to max_rollback() tokens
//   preemption:                  nothing; the matcher lives with the request and its output
//                                tokens, which preemption keeps (or reset() + accept(each
//                                output token) rebuilds it from scratch)
// Stop tokens (the vocabulary's stop ids plus add_stop_ids) are allowed exactly when the
// grammar is complete; other special tokens never.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/structured_output/compiled_grammar.h"
#include "engine/structured_output/stack_walk.h"

namespace vllm::engine::so {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> g, int32_t max_rollback = 16);

  // Writes the allowed-token bitmask. `words` may be longer than mask_words() (a model's
  // padded vocabulary); the extra bits are cleared.
  void fill_mask(std::span<uint32_t> words);
  bool accept(int32_t token);
  // Bytes not tied to a token (tests and forced prefixes); all-or-nothing.
  bool accept_bytes(std::string_view bytes);

  bool is_complete() const { return complete_; }  // a stop token is allowed now
  bool can_only_stop() const { return complete_ && configs_.empty(); }
  bool is_terminated() const { return terminated_; }
  void rollback(int32_t num_tokens);  // throws std::out_of_range past the kept history
  void reset();
  void add_stop_ids(const std::vector<int32_t>& ids);

  int32_t mask_words() const { return grammar_->vocab().mask_words(); }
  int32_t max_rollback() const { return max_rollback_; }
  const CompiledGrammar& grammar() const { return *grammar_; }
  // The normalized state as a canonical string: equal for equal states, whatever the
  // matcher; the mask cache key.
  std::string state_key() const;
  // A shortest byte string that completes the grammar from here (false when none within
  // max_bytes): for tests, and for forcing an ending.
  bool shortest_completion(std::string& out, int32_t max_bytes = 4096) const;

 private:
  struct Snapshot {
    std::vector<Config> configs;
    bool complete, terminated;
    size_t pool_size;
  };
  bool advance(std::string_view bytes);
  void compute_mask(uint32_t* words);

  std::shared_ptr<const CompiledGrammar> grammar_;
  int32_t max_rollback_;
  NodePool pool_;
  std::vector<Config> configs_;
  bool complete_ = false, terminated_ = false;
  std::vector<Snapshot> history_;  // most recent last, at most max_rollback_
  std::vector<int32_t> extra_stops_;
};

}  // namespace vllm::engine::so
