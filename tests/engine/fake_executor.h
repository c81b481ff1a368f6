// Test doubles for the engine. PagedFakeExecutor really depends on the paged KV cache: it
// stores each token (and its position) at its slot_mapping slot, and computes a row's logits
// from the tokens it reads back through the block table for positions 0..pos. A wrong block
// table, slot mapping or prefix-cache reuse therefore changes the output tokens.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine/llm_engine.h"
#include "engine/model_executor.h"

namespace vllm::engine::testing {

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

class PagedFakeExecutor : public ModelExecutor {
 public:
  explicit PagedFakeExecutor(int32_t vocab = 256, int32_t max_len = 1024)
      : vocab_(vocab), max_len_(max_len) {}

  int32_t vocab_size() const override { return vocab_; }
  int32_t max_model_len() const override { return max_len_; }
  void init_kv_cache(int64_t num_blocks, int block_size, vt::DType) override {
    block_size_ = block_size;
    kv_.assign(static_cast<size_t>(num_blocks * block_size), Cell{});
  }
  int64_t kv_bytes_per_block(int block_size, vt::DType) const override { return 64 * block_size; }

  void execute(const vllm::model::ForwardBatch& b, float* logits) override {
    ++num_steps;
    num_tokens_executed += b.n_tok;
    for (int64_t t = 0; t < b.n_tok; ++t) {
      const int32_t s = b.seq_of_token[t];
      const int32_t pos = b.positions[t];
      if (s < 0 || s >= b.n_seqs) fail("seq_of_token out of range");
      const int64_t want = slot_of(b, s, pos);
      if (b.slot_mapping[t] != want) fail("slot_mapping disagrees with the block table");
      if (want < 0 || want >= static_cast<int64_t>(kv_.size()))
        fail("slot outside the cache");
      else
        kv_[want] = Cell{b.token_ids[t], pos};
    }
    // All K/V of the step is written before any row reads, as a layer-by-layer model does.
    for (int64_t r = 0; r < b.n_logits; ++r) {
      const int32_t t = b.logits_indices[r];
      const int32_t s = b.seq_of_token[t];
      const int32_t pos = b.positions[t];
      uint64_t h = 0x1234567ull;
      for (int32_t p = 0; p <= pos; ++p) {
        const int64_t slot = slot_of(b, s, p);
        const Cell c = slot >= 0 && slot < static_cast<int64_t>(kv_.size()) ? kv_[slot] : Cell{};
        if (c.pos != p) fail("KV slot holds another position (stale or overwritten block)");
        h = mix64(h ^ (static_cast<uint64_t>(c.token) + 0x9e3779b97f4a7c15ull));
      }
      float* row = logits + r * vocab_;
      for (int32_t v = 0; v < vocab_; ++v)
        row[v] =
            static_cast<float>(mix64(h + static_cast<uint64_t>(v)) >> 40) * (8.0f / 16777216.0f) -
            4.0f;
    }
  }

  std::string error;  // first inconsistency seen, empty if none
  int64_t num_tokens_executed = 0;
  int64_t num_steps = 0;

 private:
  struct Cell {
    int32_t token = -1;
    int32_t pos = -1;
  };
  int64_t slot_of(const vllm::model::ForwardBatch& b, int32_t s, int32_t pos) const {
    const int32_t block = b.block_tables[s * b.bt_stride + pos / block_size_];
    return static_cast<int64_t>(block) * block_size_ + pos % block_size_;
  }
  void fail(const char* what) {
    if (error.empty()) error = what;
  }

  int32_t vocab_, max_len_;
  int block_size_ = 16;
  std::vector<Cell> kv_;
};

// Detokenizer double: token id t becomes "<t>" so stop strings can be aimed at known ids.
class BracketTextStream : public TextStream {
 public:
  std::string append(int32_t id) override { return "<" + std::to_string(id) + ">"; }
};

inline TextStreamFactory bracket_streams() {
  return [](std::span<const int32_t>, bool) { return std::make_unique<BracketTextStream>(); };
}

struct Finished {
  std::vector<int32_t> tokens;
  std::string text;
  std::string finish_reason;
  std::vector<TokenLogprobs> logprobs;
  std::vector<TokenLogprobs> prompt_logprobs;
  bool finished = false;
};

// Runs the engine to completion, collecting per-request results.
inline std::map<std::string, Finished> run_to_completion(LLMEngine& eng, int max_steps = 100000) {
  std::map<std::string, Finished> res;
  for (int i = 0; i < max_steps && eng.has_unfinished_requests(); ++i) {
    for (auto& o : eng.step()) {
      Finished& f = res[o.request_id];
      f.tokens.insert(f.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      f.text += o.text_delta;
      f.logprobs.insert(f.logprobs.end(), o.logprobs.begin(), o.logprobs.end());
      f.prompt_logprobs.insert(f.prompt_logprobs.end(), o.prompt_logprobs.begin(),
                               o.prompt_logprobs.end());
      if (o.finished) {
        f.finished = true;
        f.finish_reason = o.finish_reason;
      }
    }
  }
  return res;
}

// A request's output when it is the only one in a roomy engine.
inline Finished run_alone(const std::vector<int32_t>& prompt, const SamplingParams& p,
                          int32_t vocab = 256, int32_t max_len = 1024,
                          std::optional<int32_t> eos = std::nullopt) {
  PagedFakeExecutor ex(vocab, max_len);
  EngineConfig c;
  c.num_gpu_blocks = 4096;
  c.block_size = 16;  // block counts here are of 16-slot blocks
  LLMEngine eng(c, ex, bracket_streams(), eos);
  eng.add_request("alone", prompt, p);
  return run_to_completion(eng)["alone"];
}

inline std::vector<int32_t> random_prompt(std::mt19937_64& rng, int len, int32_t vocab = 256) {
  std::vector<int32_t> p(len);
  for (auto& t : p) t = static_cast<int32_t>(rng() % vocab);
  return p;
}

}  // namespace vllm::engine::testing
