// KV cache storage. The pages come from an anonymous mapping, so memory is committed as
// blocks are first written, not when the cache is sized.
#include "model/kv_cache.h"

#include <sys/mman.h>

#include <stdexcept>

namespace vllm::model {

KvCache::~KvCache() { release(); }

void KvCache::release() {
  if (base_) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

void KvCache::init(int64_t num_layers, int64_t num_blocks, int block_size, int n_kv_heads,
                   int head_dim) {
  release();
  num_blocks_ = num_blocks;
  block_size_ = block_size;
  n_kv_heads_ = n_kv_heads;
  head_dim_ = head_dim;
  num_layers_ = num_layers;
  layer_floats_ = num_blocks * block_size * n_kv_heads * head_dim;
  bytes_ = static_cast<size_t>(2 * num_layers * layer_floats_) * sizeof(float);
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error("cannot reserve " + std::to_string(bytes_) + " bytes of KV cache");
  base_ = static_cast<float*>(p);
}

// Layer l's K half then its V half; the layouts inside them are KvLayerView's.
vt::cpu::KvLayerView KvCache::layer(int64_t l) {
  vt::cpu::KvLayerView v;
  v.k = base_ + (2 * l) * layer_floats_;
  v.v = base_ + (2 * l + 1) * layer_floats_;
  v.block_size = block_size_;
  v.n_kv_heads = n_kv_heads_;
  v.head_dim = head_dim_;
  return v;
}

int64_t KvCache::bytes_per_block(int64_t num_layers, int block_size, int n_kv_heads, int head_dim) {
  return 2 * num_layers * block_size * n_kv_heads * head_dim * static_cast<int64_t>(sizeof(float));
}

}  // namespace vllm::model
