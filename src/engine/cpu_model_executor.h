// The ModelExecutor over a CausalLM on the CPU backend: what the engine drives in
// production (tests use fakes with the same interface).
#pragma once

#include "engine/model_executor.h"
#include "model/causal_lm.h"

namespace vllm::engine {

class CpuModelExecutor : public ModelExecutor {
 public:
  explicit CpuModelExecutor(model::CausalLM& m) : m_(m) {}
  int32_t vocab_size() const override { return static_cast<int32_t>(m_.config().vocab_size); }
  int32_t max_model_len() const override {
    return static_cast<int32_t>(m_.config().max_position_embeddings);
  }
  std::string max_model_len_note() const override { return m_.config().max_len_note; }
  void init_kv_cache(int64_t num_blocks, int block_size, vt::DType dtype) override {
    m_.init_kv_cache(num_blocks, block_size, dtype);
  }
  vt::DType default_kv_cache_dtype() const override { return m_.default_kv_dtype(); }
  int64_t kv_bytes_per_block(int block_size, vt::DType dtype) const override {
    return m_.kv_bytes_per_block(block_size, dtype);
  }
  int64_t kv_cache_resident_bytes() const override { return m_.kv_cache().resident_bytes(); }
  int64_t prefault_kv_blocks(int64_t n) override { return m_.kv_cache().prefault(n); }
  void execute(const model::ForwardBatch& batch, float* logits) override {
    m_.forward(batch, logits);
  }
  int32_t hidden_size() const override { return static_cast<int32_t>(m_.config().hidden_size); }
  bool has_lora(int32_t id) const override { return m_.lora(id) != nullptr; }
  bool has_loras() const override { return m_.has_loras(); }
  bool supports_graphs() const override { return true; }
  void execute(const model::ForwardBatch& batch, float* logits, vt::Exec& ex) override {
    m_.forward(batch, logits, ex);
  }
  void prepare_graphs(int64_t max_tokens) override {
    m_.reserve_workspace(max_tokens);
    m_.freeze_workspace(true);
  }
  // The model's backend: its storage holds the weights, KV pages and scratch the graphs
  // point into, and the runner's graphs and decode state live on it too.
  vt::Backend& backend() override { return m_.backend(); }

 private:
  model::CausalLM& m_;
};

}  // namespace vllm::engine
