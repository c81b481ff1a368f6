// Paged KV cache writes and the scalar instantiation of paged attention.
#include <immintrin.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "vt/cpu/attention_kernel.h"
#include "vt/cpu/isa.h"
#include "vt/cpu/ops.h"

namespace vt::cpu {

namespace scalar_impl {
void paged_attention(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                     const AttnBatch& batch, float scale, float* out, int64_t ldo,
                     ThreadPool& pool) {
  paged_attention_any<VecScalar>(q, ldq, n_heads, cache, batch, scale, out, ldo, pool);
}
}  // namespace scalar_impl

namespace {

// fp32 -> fp16 with round to nearest even: F16C where the CPU has it (the same bits as
// fp32_to_fp16, which is the fallback).
__attribute__((target("avx2,f16c"))) void to_fp16_f16c(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void to_fp16(const float* x, uint16_t* y, int64_t n) {
  // The AVX2 level includes F16C (isa.h); VT_ISA=scalar takes the (bit-identical) fallback.
  static const bool f16c = isa() != Isa::kScalar;
  if (f16c) return to_fp16_f16c(x, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

// fp32 -> bf16 with round to nearest even (fp32_to_bf16's rule, NaN kept quiet), written so
// the compiler vectorizes it.
void to_bf16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, 4);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    y[i] = static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : r);
  }
}

template <class E>
void write_slots(const float* k, int64_t ldk, const float* v, int64_t ldv, int64_t n_tok,
                 const int64_t* slot_mapping, const KvLayerView& cache) {
  // slot = block * block_size + offset. V goes into its page per kv head, [kv_head][offset]
  // [dim]; K transposed, [kv_head][dim][offset], one element per (head, dim).
  const int bs = cache.block_size, hd = cache.head_dim;
  const int64_t row = static_cast<int64_t>(cache.n_kv_heads) * hd;
  E* kc = static_cast<E*>(cache.k);
  E* vc = static_cast<E*>(cache.v);
  thread_local std::vector<uint16_t> k16;  // 16-bit cache: a K row before its scatter
  if constexpr (!std::is_same_v<E, float>)
    if (k16.size() < static_cast<size_t>(row)) k16.resize(row);
  // n elements from fp32 to the cache's type.
  auto put = [&](const float* src, E* dst, int64_t n) {
    if constexpr (std::is_same_v<E, float>)
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    else
      (cache.dtype == DType::BF16 ? to_bf16 : to_fp16)(src, dst, n);
  };
  for (int64_t t = 0; t < n_tok; ++t) {
    const int64_t slot = slot_mapping[t];
    if (slot < 0) continue;
    E* kt = kc + (slot / bs) * bs * row + slot % bs;
    E* vp = vc + (slot / bs) * bs * row + static_cast<int64_t>(slot % bs) * hd;  // head 0
    const float* vr = v + t * ldv;
    for (int h = 0; h < cache.n_kv_heads; ++h)
      put(vr + int64_t{h} * hd, vp + int64_t{h} * bs * hd, hd);
    const E* kr;  // the K row in the cache's type, then scattered
    if constexpr (std::is_same_v<E, float>) {
      kr = k + t * ldk;
    } else {
      put(k + t * ldk, k16.data(), row);
      kr = k16.data();
    }
    for (int64_t i = 0; i < row; ++i) kt[i * bs] = kr[i];
  }
}

}  // namespace

void reshape_and_cache(const float* k, int64_t ldk, const float* v, int64_t ldv, int64_t n_tok,
                       const int64_t* slot_mapping, const KvLayerView& cache) {
  if (cache.dtype == DType::F16 || cache.dtype == DType::BF16)
    write_slots<uint16_t>(k, ldk, v, ldv, n_tok, slot_mapping, cache);
  else
    write_slots<float>(k, ldk, v, ldv, n_tok, slot_mapping, cache);
}

}  // namespace vt::cpu
