// AVX-512 instantiation of paged attention (head_dim a multiple of 16; else scalar).
#include "vt/cpu/attention_kernel.h"
#include "vt/cpu/ops.h"

namespace vt::cpu::avx512_impl {

void paged_attention(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                     const AttnBatch& batch, float scale, float* out, int64_t ldo,
                     ThreadPool& pool) {
  if (cache.head_dim % VecAvx512::kW != 0)
    return scalar_impl::paged_attention(q, ldq, n_heads, cache, batch, scale, out, ldo, pool);
  paged_attention_any<VecAvx512>(q, ldq, n_heads, cache, batch, scale, out, ldo, pool);
}

}  // namespace vt::cpu::avx512_impl
