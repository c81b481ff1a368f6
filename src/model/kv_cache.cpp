// KV cache storage. The pages come from an anonymous mapping, so memory is committed as
// blocks are first written, not when the cache is sized.
#include "model/kv_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include <stdexcept>
#include <string>

namespace vllm::model {

KvCache::~KvCache() { release(); }

void KvCache::release() {
  if (base_) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

void KvCache::init(int64_t num_layers, int64_t num_blocks, int block_size, int n_kv_heads,
                   int head_dim, vt::DType dtype) {
  release();
  num_blocks_ = num_blocks;
  block_size_ = block_size;
  n_kv_heads_ = n_kv_heads;
  head_dim_ = head_dim;
  num_layers_ = num_layers;
  dtype_ = dtype;
  layer_bytes_ = num_blocks * block_size * n_kv_heads * head_dim * elem_bytes(dtype);
  bytes_ = static_cast<size_t>(2 * num_layers * layer_bytes_);
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error("cannot reserve " + std::to_string(bytes_) + " bytes of KV cache");
  base_ = static_cast<uint8_t*>(p);
}

int64_t KvCache::resident_bytes() const {
  if (!base_) return 0;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // mincore takes a page-aligned start; mmap's is. 64 Ki pages per call bounds the vector.
  const size_t chunk = page << 16;
  std::vector<unsigned char> vec(chunk / page);
  int64_t resident = 0;
  for (size_t off = 0; off < bytes_; off += chunk) {
    const size_t len = std::min(chunk, bytes_ - off);
    const size_t n = (len + page - 1) / page;
    if (::mincore(base_ + off, len, vec.data()) != 0) return -1;
    for (size_t i = 0; i < n; ++i) resident += (vec[i] & 1) ? static_cast<int64_t>(page) : 0;
  }
  return resident;
}

// Layer l's K half then its V half; the layouts inside them are KvLayerView's.
vt::cpu::KvLayerView KvCache::layer(int64_t l) {
  vt::cpu::KvLayerView v;
  v.k = base_ + (2 * l) * layer_bytes_;
  v.v = base_ + (2 * l + 1) * layer_bytes_;
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
