// KV cache storage. The pages are backend storage; on the CPU an anonymous mapping, so memory
// is committed as blocks are first written, not when the cache is sized.
#include "model/kv_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vllm::model {

void KvCache::init(vt::Backend& be, int64_t num_layers, int64_t num_blocks, int block_size,
                   int n_kv_heads, int head_dim, vt::DType dtype) {
  mem_.reset();
  num_blocks_ = 0;
  layer_bytes_ = num_blocks * block_size * n_kv_heads * head_dim * elem_bytes(dtype);
  mem_ = vt::StorageBuffer(be, static_cast<size_t>(2 * num_layers * layer_bytes_),
                           vt::StorageKind::KvCache, "the KV cache");
  num_blocks_ = num_blocks;
  block_size_ = block_size;
  n_kv_heads_ = n_kv_heads;
  head_dim_ = head_dim;
  num_layers_ = num_layers;
  dtype_ = dtype;
}

int64_t KvCache::resident_bytes() const { return mem_.resident_bytes(); }

int64_t KvCache::prefault(int64_t n) {
  n = std::clamp<int64_t>(n, 0, num_blocks_);
  if (n == 0) return 0;
  const int64_t block_bytes = layer_bytes_ / num_blocks_;  // one block of one K or V half
  for (int64_t half = 0; half < 2 * num_layers_; ++half)
    if (!mem_.commit(static_cast<size_t>(half * layer_bytes_),
                     static_cast<size_t>(n * block_bytes)))
      return -1;
  return 2 * num_layers_ * n * block_bytes;
}

// Layer l's K half then its V half; the layouts inside them are KvLayerView's.
vt::cpu::KvLayerView KvCache::layer(int64_t l) {
  vt::cpu::KvLayerView v;
  uint8_t* base = mem_.as<uint8_t>();
  v.k = base + (2 * l) * layer_bytes_;
  v.v = base + (2 * l + 1) * layer_bytes_;
  v.dtype = dtype_;
  v.block_size = block_size_;
  v.n_kv_heads = n_kv_heads_;
  v.head_dim = head_dim_;
  return v;
}

int KvCache::elem_bytes(vt::DType dtype) {
  if (dtype != vt::DType::F32 && dtype != vt::DType::F16 && dtype != vt::DType::BF16)
    throw std::invalid_argument("the KV cache holds float32, float16 or bfloat16, not " +
                                std::string(vt::dtype_name(dtype)));
  return vt::dtype_info(dtype).block_bytes;
}

int64_t KvCache::bytes_per_block(int64_t num_layers, int block_size, int n_kv_heads, int head_dim,
                                 vt::DType dtype) {
  return 2 * num_layers * block_size * n_kv_heads * head_dim * elem_bytes(dtype);
}

}  // namespace vllm::model
