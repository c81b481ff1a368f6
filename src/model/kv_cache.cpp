// KV cache storage.
#include "model/kv_cache.h"

namespace vllm::model {

void KvCache::init(int64_t num_layers, int64_t num_blocks, int block_size, int n_kv_heads,
                   int head_dim) {
  num_blocks_ = num_blocks;
  block_size_ = block_size;
  n_kv_heads_ = n_kv_heads;
  head_dim_ = head_dim;
  layer_floats_ = num_blocks * block_size * n_kv_heads * head_dim;
  k_.assign(static_cast<size_t>(layer_floats_ * num_layers), 0.0f);
  v_.assign(static_cast<size_t>(layer_floats_ * num_layers), 0.0f);
}

vt::cpu::KvLayerView KvCache::layer(int64_t l) {
  vt::cpu::KvLayerView v;
  v.k = k_.data() + l * layer_floats_;
  v.v = v_.data() + l * layer_floats_;
  v.block_size = block_size_;
  v.n_kv_heads = n_kv_heads_;
  v.head_dim = head_dim_;
  return v;
}

int64_t KvCache::bytes_per_block(int64_t num_layers, int block_size, int n_kv_heads, int head_dim) {
  return 2 * num_layers * block_size * n_kv_heads * head_dim * static_cast<int64_t>(sizeof(float));
}

}  // namespace vllm::model
