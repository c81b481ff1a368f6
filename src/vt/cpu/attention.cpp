// Paged KV cache writes and the scalar instantiation of paged attention.
#include <cstring>

#include "vt/cpu/attention_kernel.h"
#include "vt/cpu/ops.h"

namespace vt::cpu {

namespace scalar_impl {
void paged_attention(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                     const AttnBatch& batch, float scale, float* out, int64_t ldo,
                     ThreadPool& pool) {
  paged_attention_impl<VecScalar>(q, ldq, n_heads, cache, batch, scale, out, ldo, pool);
}
}  // namespace scalar_impl

void reshape_and_cache(const float* k, int64_t ldk, const float* v, int64_t ldv, int64_t n_tok,
                       const int64_t* slot_mapping, const KvLayerView& cache) {
  // slot = block * block_size + offset. V rows are stored whole at row `slot`; K goes into
  // its page transposed, [kv_head][dim][offset], one float per (head, dim).
  const int bs = cache.block_size, hd = cache.head_dim;
  const int64_t row = static_cast<int64_t>(cache.n_kv_heads) * hd;
  for (int64_t t = 0; t < n_tok; ++t) {
    const int64_t slot = slot_mapping[t];
    if (slot < 0) continue;
    std::memcpy(cache.v + slot * row, v + t * ldv, row * sizeof(float));
    float* kt = cache.k + (slot / bs) * bs * row + slot % bs;
    const float* kr = k + t * ldk;
    for (int64_t i = 0; i < row; ++i) kt[i * bs] = kr[i];
  }
}

}  // namespace vt::cpu
