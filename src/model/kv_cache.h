// Paged KV storage for all layers, in backend storage (StorageKind::KvCache): per layer a K half of
// [num_blocks][n_kv_heads][head_dim][block_size] (transposed inside each page) and a V half
// of [num_blocks][n_kv_heads][block_size][head_dim] (see vt::cpu::KvLayerView); both are
// block_size * n_kv_heads * head_dim elements (f32, f16 or bf16) per block. Which block
// belongs to which request is the engine's business; this only owns the memory.
#pragma once

#include <cstdint>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/storage.h"

namespace vllm::model {

class KvCache {
 public:
  KvCache() = default;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;
  // dtype: F32 (the activations' type), F16 or BF16. The pages are `be`'s storage.
  void init(vt::Backend& be, int64_t num_layers, int64_t num_blocks, int block_size, int n_kv_heads,
            int head_dim, vt::DType dtype = vt::DType::F32);
  bool initialized() const { return num_blocks_ > 0; }
  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  vt::cpu::KvLayerView layer(int64_t l);
  // Bytes of one K or V element; throws std::invalid_argument for a dtype the cache can't hold.
  static int elem_bytes(vt::DType dtype);
  // Bytes of the cache's pages now in memory (Backend::resident_bytes): the CPU's mapping is
  // lazy, so this grows as blocks are first written. Safe to call from any thread once init()
  // has returned.
  int64_t resident_bytes() const;
  // Commits blocks [0, n) of every layer now (Backend::commit; contents kept), so that first
  // writes to them later take no page faults: the blocks a fresh engine hands out first
  // (BlockPool's free queue starts in id order). Returns the bytes asked for, or -1 where the
  // backend cannot (the CPU before Linux 5.14): the pages then stay lazy. A
  // benchmark calls it before its clock starts, as llama.cpp clears its cache at context
  // creation and vLLM zeroes its own at startup.
  int64_t prefault(int64_t n);
  static int64_t bytes_per_block(int64_t num_layers, int block_size, int n_kv_heads, int head_dim,
                                 vt::DType dtype = vt::DType::F32);

 private:
  int64_t num_blocks_ = 0;
  int block_size_ = 16;
  int n_kv_heads_ = 0;
  int head_dim_ = 0;
  int64_t num_layers_ = 0;
  int64_t layer_bytes_ = 0;  // one of K or V of one layer
  vt::DType dtype_ = vt::DType::F32;
  vt::StorageBuffer mem_;  // [layer][K: block][head][dim][slot] | [V: block][slot][head][dim]
};

}  // namespace vllm::model
