// Seqs: sequences over a paged KV cache driven through any engine::ModelExecutor with host
// arrays (eager steps of any mix of prefill chunks and decodes). Blocks come from a shuffled
// free list, so block tables are scattered. Header-only and CUDA-free: the GPU gates use it
// over CudaModelExecutor, and tests/vt/cuda_harness_test.cpp checks it over the CPU executor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "engine/model_executor.h"
#include "vt/cuda/index_math.h"

namespace vllm::cuda_testing {

class Seqs {
 public:
  Seqs(vllm::engine::ModelExecutor& ex, int64_t num_blocks, int block_size, uint32_t seed = 1);

  int add();  // a new empty sequence
  void release(int seq);
  int32_t length(int seq) const { return seqs_.at(seq).len; }
  const std::vector<int32_t>& blocks(int seq) const { return seqs_.at(seq).blocks; }
  // Holds blocks for positions < len.
  void ensure(int seq, int32_t len);
  // Length bookkeeping for tokens another driver fed (GraphDecoder).
  void advance(int seq, int32_t n);

  struct Part {
    int seq;
    std::vector<int32_t> tokens;
    bool all_logits = false;  // logits of every token (else of the last)
  };
  // One forward over all parts' tokens (prefill chunks and decodes mixed). Returns logits
  // rows in part order ([all tokens] or [last token] per part), [rows][vocab].
  const std::vector<float>& run(const std::vector<Part>& parts);
  // With a target (a CudaBackend state buffer's host view), run() writes the logits there on
  // the device and returns an empty vector: no download, no wait (the measurement).
  void set_logits_target(float* p) { target_ = p; }
  // Shorthands.
  const std::vector<float>& prefill(int seq, const std::vector<int32_t>& ids,
                                    bool all_logits = false);
  const std::vector<float>& decode(const std::vector<int>& seqs,
                                   const std::vector<int32_t>& tokens);

 private:
  struct Seq {
    int32_t len = 0;
    std::vector<int32_t> blocks;
  };
  vllm::engine::ModelExecutor& ex_;
  int block_size_;
  std::vector<int32_t> free_;
  std::map<int, Seq> seqs_;
  int next_ = 0;
  std::vector<int32_t> ids_, pos_, seq_of_, bt_, rows_;
  std::vector<int64_t> slots_;
  std::vector<float> logits_;
  float* target_ = nullptr;
};

// FNV-1a over the bits of n floats.
inline uint64_t hash_bits(const float* x, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(x);
  for (int64_t i = 0; i < n * 4; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// The first index of the largest value (what a greedy engine picks).
inline int32_t host_argmax(const float* x, int64_t n) {
  return static_cast<int32_t>(std::max_element(x, x + n) - x);
}

inline Seqs::Seqs(vllm::engine::ModelExecutor& ex, int64_t num_blocks, int block_size,
                  uint32_t seed)
    : ex_(ex), block_size_(block_size) {
  for (int64_t b = 0; b < num_blocks; ++b) free_.push_back(static_cast<int32_t>(b));
  std::mt19937 rng(seed);
  std::shuffle(free_.begin(), free_.end(), rng);
}

inline int Seqs::add() {
  seqs_[next_] = Seq{};
  return next_++;
}

inline void Seqs::release(int seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  free_.insert(free_.end(), it->second.blocks.rbegin(), it->second.blocks.rend());
  seqs_.erase(it);
}

inline void Seqs::ensure(int seq, int32_t len) {
  Seq& s = seqs_.at(seq);
  while (static_cast<int32_t>(s.blocks.size()) * block_size_ < len) {
    if (free_.empty()) throw std::runtime_error("test harness: out of KV blocks");
    s.blocks.push_back(free_.back());
    free_.pop_back();
  }
}

inline void Seqs::advance(int seq, int32_t n) {
  ensure(seq, length(seq) + n);
  seqs_.at(seq).len += n;
}

inline const std::vector<float>& Seqs::run(const std::vector<Part>& parts) {
  ids_.clear();
  pos_.clear();
  seq_of_.clear();
  rows_.clear();
  slots_.clear();
  size_t width = 1;
  for (const Part& p : parts) {
    ensure(p.seq, length(p.seq) + static_cast<int32_t>(p.tokens.size()));
    width = std::max(width, blocks(p.seq).size());
  }
  bt_.assign(parts.size() * width, 0);
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    Seq& s = seqs_.at(p.seq);
    std::copy(s.blocks.begin(), s.blocks.end(), bt_.begin() + i * width);
    for (size_t k = 0; k < p.tokens.size(); ++k) {
      const int32_t pos = s.len++;
      if (p.all_logits || k + 1 == p.tokens.size())
        rows_.push_back(static_cast<int32_t>(ids_.size()));
      ids_.push_back(p.tokens[k]);
      pos_.push_back(pos);
      seq_of_.push_back(static_cast<int32_t>(i));
      slots_.push_back(vt::cuda::slot_of(s.blocks.data(), pos, block_size_));
    }
  }
  vllm::model::ForwardBatch b;
  b.n_tok = static_cast<int64_t>(ids_.size());
  b.token_ids = ids_.data();
  b.positions = pos_.data();
  b.seq_of_token = seq_of_.data();
  b.slot_mapping = slots_.data();
  b.block_tables = bt_.data();
  b.bt_stride = static_cast<int64_t>(width);
  b.n_seqs = static_cast<int64_t>(parts.size());
  b.logits_indices = rows_.data();
  b.n_logits = static_cast<int64_t>(rows_.size());
  if (target_) {
    logits_.clear();
    ex_.execute(b, target_);
    return logits_;
  }
  logits_.resize(rows_.size() * static_cast<size_t>(ex_.vocab_size()));
  ex_.execute(b, logits_.data());
  return logits_;
}

inline const std::vector<float>& Seqs::prefill(int seq, const std::vector<int32_t>& ids,
                                               bool all_logits) {
  return run({Part{seq, ids, all_logits}});
}

inline const std::vector<float>& Seqs::decode(const std::vector<int>& seqs,
                                              const std::vector<int32_t>& tokens) {
  std::vector<Part> parts;
  for (size_t i = 0; i < seqs.size(); ++i) parts.push_back(Part{seqs[i], {tokens[i]}, false});
  return run(parts);
}

}  // namespace vllm::cuda_testing
