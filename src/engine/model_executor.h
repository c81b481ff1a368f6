// ModelExecutor: the engine's only view of a model. The lead implements it over the real model
// (src/model); tests implement fakes. The engine hands it flat token batches with paged-KV
// addressing and reads back logits; it never sees a tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <string>

#include "model/forward_batch.h"
#include "vt/dtype.h"
#include "vt/graph.h"

namespace vllm::engine {

class ModelExecutor {
 public:
  virtual ~ModelExecutor() = default;
  virtual int32_t vocab_size() const = 0;
  virtual int32_t max_model_len() const = 0;
  // Why max_model_len is below what the checkpoint was trained to ("" when it is not), for the
  // error refusing a longer --max-model-len.
  virtual std::string max_model_len_note() const { return ""; }
  // Allocates the paged KV storage for num_blocks blocks of block_size slots of `dtype`
  // elements (F32, F16 or BF16) (called once).
  virtual void init_kv_cache(int64_t num_blocks, int block_size, vt::DType dtype) = 0;
  // The KV element type of --kv-cache-dtype auto.
  virtual vt::DType default_kv_cache_dtype() const { return vt::DType::F16; }
  // Bytes one block takes over all layers (K and V), to size the cache from a memory budget.
  virtual int64_t kv_bytes_per_block(int block_size, vt::DType dtype) const = 0;
  // Bytes of the KV cache resident in host memory now (a lazily mapped cache commits pages as
  // blocks are first written); 0 where the cache is not host memory. Any thread may call it.
  virtual int64_t kv_cache_resident_bytes() const { return 0; }
  // Commits the memory of KV blocks [0, n) now, where the cache is lazily mapped host memory
  // (model::KvCache::prefault); returns the bytes committed, 0 where there is nothing to do,
  // -1 where it cannot. For benchmarks, before their clock starts.
  virtual int64_t prefault_kv_blocks(int64_t n) { return 0; }
  // Memory a --gpu-memory-utilization fraction applies to, for an executor whose KV cache is
  // not host memory (a device's free bytes after the weights, less its working reserve);
  // nullopt: host memory (the engine reads MemAvailable).
  virtual std::optional<int64_t> device_memory_available() const { return std::nullopt; }
  // One forward pass over a flat token batch (prefill chunks and decodes mixed). Writes the
  // K/V of every token at its slot_mapping slot, attends through block_tables over positions
  // 0..pos of its sequence, and writes logits [batch.n_logits][vocab] for logits_indices.
  virtual void execute(const vllm::model::ForwardBatch& batch, float* logits) = 0;

  // The width of ForwardBatch::hidden_out's rows (the model's hidden size), for pooling
  // requests; 0 where this executor cannot hand hidden states back (pooling refused).
  virtual int32_t hidden_size() const { return 0; }

  // Whether LoRA adapter `id` is loaded (ForwardBatch::lora_ids may name it), and whether any is.
  virtual bool has_lora(int32_t id) const { return false; }
  virtual bool has_loras() const { return false; }

  // Decode step graphs (DecodeGraphDriver). An executor that can be captured emits its ops
  // through `ex` (recorded, not run, while ex.capturing()).
  virtual bool supports_graphs() const { return false; }
  virtual void execute(const vllm::model::ForwardBatch& batch, float* logits, vt::Exec& ex) {
    execute(batch, logits);
  }
  // Sizes scratch for up to max_tokens per forward and pins it (graphs point into it).
  virtual void prepare_graphs(int64_t max_tokens) {}

  // The backend the executor's buffers, graphs and decode state live on; the runner takes it
  // from here. The default is a CPU backend made on first use (the CPU executor and test
  // fakes); a device executor returns its own.
  virtual vt::Backend& backend() {
    if (!backend_) backend_ = vt::make_cpu_backend();
    return *backend_;
  }

 protected:
  std::unique_ptr<vt::Backend> backend_;
};

}  // namespace vllm::engine
