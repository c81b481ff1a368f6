// Row (de)quantization for every stored weight type, in GGML's block layouts and exact
// dequantization semantics, plus the activation quantizers the integer dot products use.
// Q4_K / Q5_K / Q6_K quantizers are simple reference quantizers (tests and tools only); the
// formats' decoders are exact since real GGUF files are read with them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "vt/cpu/kernels.h"
#include "vt/cpu/matmul_internal.h"
#include "vt/cpu/quant_zoo.h"

namespace vt::cpu {

namespace {

// Unpacks the 6-bit scale and min of sub-block j of a Q4_K super-block.
inline void q4k_scale_min(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void dequant_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[i * kQK + j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void dequant_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[i * kQK + j] = static_cast<float>((b[i].qs[j] & 0xF) - 8) * d;
      y[i * kQK + j + 16] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequant_q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      // Separate statements keep the product rounded before the add (no fma contraction).
      const float lo = static_cast<float>(b[i].qs[j] & 0xF) * d;
      const float hi = static_cast<float>(b[i].qs[j] >> 4) * d;
      y[i * kQK + j] = lo + m;
      y[i * kQK + j + 16] = hi + m;
    }
  }
}

void dequant_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    float* out = y + i * kQK_K;
    for (int j = 0; j < 4; ++j) {
      int sc1, m1, sc2, m2;
      q4k_scale_min(2 * j, b[i].scales, &sc1, &m1);
      q4k_scale_min(2 * j + 1, b[i].scales, &sc2, &m2);
      const float d1 = d * static_cast<float>(sc1), mm1 = dmin * static_cast<float>(m1);
      const float d2 = d * static_cast<float>(sc2), mm2 = dmin * static_cast<float>(m2);
      for (int l = 0; l < 32; ++l) {
        const float a = d1 * static_cast<float>(q[32 * j + l] & 0xF);
        const float c = d2 * static_cast<float>(q[32 * j + l] >> 4);
        out[64 * j + l] = a - mm1;
        out[64 * j + 32 + l] = c - mm2;
      }
    }
  }
}

void dequant_q5_k(const BlockQ5_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
    float* out = y + i * kQK_K;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      q4k_scale_min(j, b[i].scales, &sc, &m);
      const float dj = d * static_cast<float>(sc), mj = dmin * static_cast<float>(m);
      const uint8_t* q = b[i].qs + 32 * (j / 2);
      for (int l = 0; l < 32; ++l) {
        const int v = ((q[l] >> (4 * (j & 1))) & 0xF) | (((b[i].qh[l] >> j) & 1) << 4);
        const float a = dj * static_cast<float>(v);  // rounded before the subtraction
        out[32 * j + l] = a - mj;
      }
    }
  }
}

// Q6_K value of element e (0..255) of a super-block, in 0..63 (subtract 32 for the weight).
inline int q6k_value(const BlockQ6_K& b, int e) {
  const int h = e / 128, k = (e % 128) / 32, l = e % 32;
  const int lo = (b.ql[64 * h + l + (k & 1) * 32] >> (4 * (k >> 1))) & 0xF;
  const int hi = (b.qh[32 * h + l] >> (2 * k)) & 3;
  return lo | (hi << 4);
}

void dequant_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int e = 0; e < kQK_K; ++e) {
      const float ds = d * static_cast<float>(b[i].scales[e / 16]);
      y[i * kQK_K + e] = ds * static_cast<float>(q6k_value(b[i], e) - 32);
    }
  }
}

// ---- reference quantizers ----

void quant_q8_0(const float* x, BlockQ8_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) b[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

void quant_q4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0, max = 0;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f)));
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void quant_q4_1(const float* x, BlockQ4_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float mn = x[0], mx = x[0];
    for (int j = 1; j < kQK; ++j) {
      mn = std::min(mn, x[j]);
      mx = std::max(mx, x[j]);
    }
    const float d = (mx - mn) / 15.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    b[i].m = fp32_to_fp16(mn);
    for (int j = 0; j < kQK / 2; ++j) {
      const float v0 = (x[j] - mn) * id, v1 = (x[j + 16] - mn) * id;
      const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(v0 + 0.5f)));
      const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(v1 + 0.5f)));
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

// Per 32-element sub-block: affine grid [mn, mx] with mn <= 0 (Q4_K / Q5_K store mins as
// positive offsets); 6-bit scales and mins relative to fp16 super-block factors. Writes the
// 4-bit (Q4_K) or 5-bit (Q5_K) values; both blocks share d, dmin, scales and the nibbles.
template <class Block>
void quant_q45_k(const float* x, Block* b, int64_t nb) {
  constexpr bool five = std::is_same_v<Block, BlockQ5_K>;
  constexpr int qmax = five ? 31 : 15;
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float scale[8], minv[8], max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      float mn = 0, mx = 0;
      for (int l = 0; l < 32; ++l) {
        mn = std::min(mn, x[32 * j + l]);
        mx = std::max(mx, x[32 * j + l]);
      }
      scale[j] = (mx - mn) / static_cast<float>(qmax);
      minv[j] = -mn;
      max_scale = std::max(max_scale, scale[j]);
      max_min = std::max(max_min, minv[j]);
    }
    const float d = fp16_to_fp32(fp32_to_fp16(max_scale / 63.0f));
    const float dmin = fp16_to_fp32(fp32_to_fp16(max_min / 63.0f));
    b[i].d = fp32_to_fp16(d);
    b[i].dmin = fp32_to_fp16(dmin);
    int sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = d > 0 ? std::min(63, static_cast<int>(std::lround(scale[j] / d))) : 0;
      m[j] = dmin > 0 ? std::min(63, static_cast<int>(std::lround(minv[j] / dmin))) : 0;
    }
    for (int j = 0; j < 4; ++j) {
      b[i].scales[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
      b[i].scales[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
      b[i].scales[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
    }
    std::memset(b[i].qs, 0, sizeof(b[i].qs));
    if constexpr (five) std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int e = 0; e < kQK_K; ++e) {
      const int j = e / 32;
      const float ds = d * static_cast<float>(sc[j]), dm = dmin * static_cast<float>(m[j]);
      const int q = ds > 0 ? static_cast<int>(std::lround((x[e] + dm) / ds)) : 0;
      const int qc = std::clamp(q, 0, qmax);
      const int byte = 32 * (e / 64) + e % 32;
      b[i].qs[byte] |= static_cast<uint8_t>((qc & 0xF) << ((e % 64) >= 32 ? 4 : 0));
      if constexpr (five) b[i].qh[e % 32] |= static_cast<uint8_t>((qc >> 4) << j);
    }
  }
}

// Per 16-element group: symmetric grid q in [-32, 31] with an int8 scale relative to one
// fp16 super-block factor.
void quant_q6_k(const float* x, BlockQ6_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float gscale[16], max_abs_scale = 0;
    for (int g = 0; g < 16; ++g) {
      float amax = 0, max = 0;
      for (int l = 0; l < 16; ++l) {
        if (std::fabs(x[16 * g + l]) > amax) {
          amax = std::fabs(x[16 * g + l]);
          max = x[16 * g + l];
        }
      }
      gscale[g] = max / -32.0f;
      max_abs_scale = std::max(max_abs_scale, std::fabs(gscale[g]));
    }
    const float d = fp16_to_fp32(fp32_to_fp16(max_abs_scale / 127.0f));
    b[i].d = fp32_to_fp16(d);
    std::memset(b[i].ql, 0, sizeof(b[i].ql));
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int g = 0; g < 16; ++g) {
      const int sc =
          d > 0 ? std::clamp(static_cast<int>(std::lround(gscale[g] / d)), -128, 127) : 0;
      b[i].scales[g] = static_cast<int8_t>(sc);
      const float ds = d * static_cast<float>(sc);
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * g + l;
        const int q = ds != 0 ? static_cast<int>(std::lround(x[e] / ds)) : 0;
        const int v = std::clamp(q, -32, 31) + 32;
        const int h = e / 128, k = (e % 128) / 32, ll = e % 32;
        b[i].ql[64 * h + ll + (k & 1) * 32] |= static_cast<uint8_t>((v & 0xF) << (4 * (k >> 1)));
        b[i].qh[32 * h + ll] |= static_cast<uint8_t>((v >> 4) << (2 * k));
      }
    }
  }
}

}  // namespace

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::F16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
      return;
    }
    case DType::BF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
      return;
    }
    case DType::Q8_0:
      dequant_q8_0(static_cast<const BlockQ8_0*>(src), dst, n / kQK);
      return;
    case DType::Q4_0:
      dequant_q4_0(static_cast<const BlockQ4_0*>(src), dst, n / kQK);
      return;
    case DType::Q4_1:
      dequant_q4_1(static_cast<const BlockQ4_1*>(src), dst, n / kQK);
      return;
    case DType::Q4_K:
      dequant_q4_k(static_cast<const BlockQ4_K*>(src), dst, n / kQK_K);
      return;
    case DType::Q5_K:
      dequant_q5_k(static_cast<const BlockQ5_K*>(src), dst, n / kQK_K);
      return;
    case DType::Q6_K:
      dequant_q6_k(static_cast<const BlockQ6_K*>(src), dst, n / kQK_K);
      return;
    case DType::Q8_K: {
      const auto* b = static_cast<const BlockQ8_K*>(src);
      for (int64_t i = 0; i < n / kQK_K; ++i)
        for (int j = 0; j < kQK_K; ++j)
          dst[i * kQK_K + j] = b[i].d * static_cast<float>(b[i].qs[j]);
      return;
    }
    case DType::I32: {
      const auto* v = static_cast<const int32_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(v[i]);
      return;
    }
    default:
      dequantize_row_zoo(t, src, dst, n);
      return;
  }
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::F16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0:
      quant_q8_0(src, static_cast<BlockQ8_0*>(dst), n / kQK);
      return;
    case DType::Q4_0:
      quant_q4_0(src, static_cast<BlockQ4_0*>(dst), n / kQK);
      return;
    case DType::Q4_1:
      quant_q4_1(src, static_cast<BlockQ4_1*>(dst), n / kQK);
      return;
    case DType::Q4_K:
      quant_q45_k(src, static_cast<BlockQ4_K*>(dst), n / kQK_K);
      return;
    case DType::Q5_K:
      quant_q45_k(src, static_cast<BlockQ5_K*>(dst), n / kQK_K);
      return;
    case DType::Q6_K:
      quant_q6_k(src, static_cast<BlockQ6_K*>(dst), n / kQK_K);
      return;
    case DType::Q8_K: {
      auto* b = static_cast<BlockQ8_K*>(dst);
      for (int64_t i = 0; i < n / kQK_K; ++i) {
        float d;
        quantize_act_q8_k(src + i * kQK_K, kQK_K, b[i].qs, &d, b[i].bsums);
        b[i].d = d;
      }
      return;
    }
    case DType::I32: {
      auto* v = static_cast<int32_t*>(dst);
      for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(src[i]);
      return;
    }
    default:
      quantize_row_zoo(t, src, dst, n);
      return;
  }
}

DType act_format(DType weight) {
  switch (weight) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
      return DType::Q8_0;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      return DType::Q8_K;
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL:
    case DType::MXFP4:
      return DType::Q8_0;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::IQ4_XS:
      return DType::Q8_K;
    case DType::BF16:
      return DType::BF16;  // rounded to bf16, see matmul_half.h
    default:
      return DType::F32;
  }
}

namespace {
// Rounds an activation already scaled into [-127, 127]. A NaN (a NaN or inf activation; inf
// times a zero inverse scale) would make the int conversion undefined; it becomes -128, what
// the SIMD paths' saturating pack makes of cvtps2dq's 0x80000000.
inline int round_act(float v) {
  return std::isnan(v) ? -128 : static_cast<int>(std::nearbyint(std::clamp(v, -128.0f, 127.0f)));
}
}  // namespace

void quantize_act_q8_0(const float* x, int64_t n, int8_t* qs, float* d, float* s, int32_t* xsum) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK, qs += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float dd = amax / 127.0f;
    const float id = amax != 0 ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const int q = round_act(x[j] * id);
      qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    d[i] = fp16_to_fp32(fp32_to_fp16(dd));
    s[i] = fp16_to_fp32(fp32_to_fp16(dd * static_cast<float>(sum)));
    xsum[i] = sum;
  }
}

void quantize_act_q8_k(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums) {
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qs += kQK_K, bsums += kQK_K / 16) {
    float amax = 0, max = 0;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    if (amax == 0) {
      d[i] = 0;
      std::memset(qs, 0, kQK_K);
      std::memset(bsums, 0, kQK_K / 16 * sizeof(int16_t));
      continue;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < kQK_K; ++j)
      qs[j] = static_cast<int8_t>(std::min(127, round_act(iscale * x[j])));
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += qs[16 * g + l];
      bsums[g] = static_cast<int16_t>(sum);
    }
    d[i] = 1.0f / iscale;
  }
}

}  // namespace vt::cpu
