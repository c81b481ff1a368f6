// A fixed batch of sequences run to completion with contiguous block tables: the
// harness `vllm bench latency` and the model tests use to drive CausalLM directly,
// without the scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/causal_lm.h"

namespace vllm::model {

class StaticBatch {
 public:
  // Reserves KV pages for n_seqs sequences of up to max_len tokens each, of `kv` elements
  // (default: the model's default KV type, as the engine's --kv-cache-dtype auto).
  StaticBatch(CausalLM& m, int64_t n_seqs, int64_t max_len, int block_size = 16,
              std::optional<vt::DType> kv = std::nullopt);

  // Feeds tokens[s] to sequence s (all sequences, same count or not), in chunks of at most
  // `chunk` tokens per forward; returns the logits of each sequence's last token.
  const std::vector<float>& prefill(const std::vector<std::vector<int32_t>>& tokens,
                                    int64_t chunk = 512);
  // Feeds one sequence's tokens in a single forward and returns the logits of every
  // position, [ids.size()][vocab] (reference tests compare all of them).
  const std::vector<float>& prefill_all(int64_t seq, const std::vector<int32_t>& ids);
  // One decode step: token[s] appended to every sequence; returns [n_seqs][vocab] logits.
  const std::vector<float>& decode(const std::vector<int32_t>& token);
  int64_t length(int64_t s) const { return lens_[s]; }
  // Runs sequence s with LoRA adapter `id` (CausalLM::add_lora; 0: none) from its next token.
  void set_lora(int64_t s, int32_t id);

 private:
  void run(const std::vector<int32_t>& ids, const std::vector<int32_t>& seq,
           const std::vector<int32_t>& logit_rows);

  CausalLM& m_;
  int64_t n_seqs_, max_len_;
  int block_size_;
  int64_t blocks_per_seq_;
  std::vector<int32_t> block_tables_;
  std::vector<int64_t> lens_;
  std::vector<int32_t> pos_;
  std::vector<int64_t> slots_;
  std::vector<int32_t> seq_lora_, lora_ids_;  // per sequence; per token of a forward
  std::vector<float> logits_;
};

}  // namespace vllm::model
