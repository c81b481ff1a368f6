// Row (de)quantization of the less common weight types (dtype_zoo.h): Q5_0, Q5_1, Q2_K,
// Q3_K, IQ4_NL, IQ4_XS, MXFP4. Decoders follow GGML's reference dequantizers operation for
// operation (real GGUF files are read with them, and the goldens compare bits). Q5_0 / Q5_1
// quantizers are GGML's reference ones; the Q2_K / Q3_K / IQ4 quantizers are simple
// round-to-nearest schemes that only feed tests (llama.cpp's search for optimal scales is not
// needed there); the MXFP4 quantizer is GGML's reference one (gguf's numpy quantizer gives the same
// bytes).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "vt/cpu/quant_zoo.h"

namespace vt::cpu {

namespace {

uint32_t load_qh(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Element j's 5-bit value: the nibble plus bit j of qh as bit 4.
inline int q5_value(const uint8_t* qs, uint32_t qh, int j) {
  const int nib = j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4;
  return nib | static_cast<int>(((qh >> j) & 1) << 4);
}

void dequant_q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const uint32_t qh = load_qh(b[i].qh);
    for (int j = 0; j < 32; ++j)
      y[i * 32 + j] = static_cast<float>(q5_value(b[i].qs, qh, j) - 16) * d;
  }
}

void dequant_q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    const uint32_t qh = load_qh(b[i].qh);
    for (int j = 0; j < 32; ++j) {
      const float v = static_cast<float>(q5_value(b[i].qs, qh, j)) * d;
      y[i * 32 + j] = v + m;  // this TU has no FMA: the product is rounded before the add
    }
  }
}

void dequant_q2_k(const BlockQ2_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
    for (int g = 0; g < 16; ++g) {
      const float dl = d * static_cast<float>(b[i].scales[g] & 0xF);
      const float ml = dmin * static_cast<float>(b[i].scales[g] >> 4);
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * g + l;
        const float v = dl * static_cast<float>(q2k_value(b[i], e));
        y[i * 256 + e] = v - ml;
      }
    }
  }
}

void dequant_q3_k(const BlockQ3_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int g = 0; g < 16; ++g) {
      const float dl = d * static_cast<float>(q3k_scale(b[i].scales, g));
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * g + l;
        y[i * 256 + e] = dl * static_cast<float>(q3k_value(b[i], e));
      }
    }
  }
}

void dequant_iq4_nl(const BlockIQ4_NL* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < 16; ++j) {
      y[i * 32 + j] = d * static_cast<float>(kIQ4Values[b[i].qs[j] & 0xF]);
      y[i * 32 + j + 16] = d * static_cast<float>(kIQ4Values[b[i].qs[j] >> 4]);
    }
  }
}

void dequant_iq4_xs(const BlockIQ4_XS* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = d * static_cast<float>(iq4xs_scale(b[i], ib));
      const uint8_t* qs = b[i].qs + 16 * ib;
      float* out = y + i * 256 + 32 * ib;
      for (int j = 0; j < 16; ++j) {
        out[j] = dl * static_cast<float>(kIQ4Values[qs[j] & 0xF]);
        out[j + 16] = dl * static_cast<float>(kIQ4Values[qs[j] >> 4]);
      }
    }
  }
}

void dequant_mxfp4(const BlockMXFP4* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = e8m0_half(b[i].e);
    for (int j = 0; j < 16; ++j) {
      y[i * 32 + j] = static_cast<float>(kMXFP4Values[b[i].qs[j] & 0xF]) * d;
      y[i * 32 + j + 16] = static_cast<float>(kMXFP4Values[b[i].qs[j] >> 4]) * d;
    }
  }
}

// ---- quantizers ----

// Stores element j's 5-bit value v.
inline void put_q5(uint8_t* qs, uint32_t* qh, int j, int v) {
  if (j < 16)
    qs[j] = static_cast<uint8_t>((qs[j] & 0xF0) | (v & 0xF));
  else
    qs[j - 16] = static_cast<uint8_t>((qs[j - 16] & 0x0F) | ((v & 0xF) << 4));
  *qh |= static_cast<uint32_t>((v >> 4) & 1) << j;
}

void quant_q5_0(const float* x, BlockQ5_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -16.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    uint32_t qh = 0;
    std::memset(b[i].qs, 0, sizeof(b[i].qs));
    for (int j = 0; j < 32; ++j)
      put_q5(b[i].qs, &qh, j,
             std::min(31, static_cast<int>(static_cast<int8_t>(x[j] * id + 16.5f))));
    std::memcpy(b[i].qh, &qh, 4);
  }
}

void quant_q5_1(const float* x, BlockQ5_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32) {
    float mn = x[0], mx = x[0];
    for (int j = 1; j < 32; ++j) {
      mn = std::min(mn, x[j]);
      mx = std::max(mx, x[j]);
    }
    const float d = (mx - mn) / 31.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    b[i].m = fp32_to_fp16(mn);
    uint32_t qh = 0;
    std::memset(b[i].qs, 0, sizeof(b[i].qs));
    for (int j = 0; j < 32; ++j)
      put_q5(b[i].qs, &qh, j, static_cast<uint8_t>((x[j] - mn) * id + 0.5f));
    std::memcpy(b[i].qh, &qh, 4);
  }
}

float fp16_round(float f) { return fp16_to_fp32(fp32_to_fp16(f)); }

int round_clamp(float v, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(v)), lo, hi);
}

// Per 16-element group an affine grid [mn, mx] with mn <= 0 on 2 bits; 4-bit scales and
// mins relative to fp16 super-block factors.
void quant_q2_k(const float* x, BlockQ2_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 256) {
    float scale[16], minv[16], max_scale = 0, max_min = 0;
    for (int g = 0; g < 16; ++g) {
      float mn = 0, mx = 0;
      for (int l = 0; l < 16; ++l) {
        mn = std::min(mn, x[16 * g + l]);
        mx = std::max(mx, x[16 * g + l]);
      }
      scale[g] = (mx - mn) / 3.0f;
      minv[g] = -mn;
      max_scale = std::max(max_scale, scale[g]);
      max_min = std::max(max_min, minv[g]);
    }
    const float d = fp16_round(max_scale / 15.0f), dmin = fp16_round(max_min / 15.0f);
    b[i].d = fp32_to_fp16(d);
    b[i].dmin = fp32_to_fp16(dmin);
    std::memset(b[i].qs, 0, sizeof(b[i].qs));
    for (int g = 0; g < 16; ++g) {
      const int sc = d > 0 ? round_clamp(scale[g] / d, 0, 15) : 0;
      const int m = dmin > 0 ? round_clamp(minv[g] / dmin, 0, 15) : 0;
      b[i].scales[g] = static_cast<uint8_t>(sc | (m << 4));
      const float ds = d * static_cast<float>(sc), dm = dmin * static_cast<float>(m);
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * g + l;
        const int q = ds > 0 ? round_clamp((x[e] + dm) / ds, 0, 3) : 0;
        b[i].qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>(q << (2 * ((e % 128) / 32)));
      }
    }
  }
}

// Per 16-element group a symmetric grid q in [-4, 3] (the largest magnitude maps to -4);
// signed 6-bit scales relative to one fp16 super-block factor.
void quant_q3_k(const float* x, BlockQ3_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 256) {
    float gscale[16], max_abs = 0;
    for (int g = 0; g < 16; ++g) {
      float amax = 0, max = 0;
      for (int l = 0; l < 16; ++l) {
        if (std::fabs(x[16 * g + l]) > amax) {
          amax = std::fabs(x[16 * g + l]);
          max = x[16 * g + l];
        }
      }
      gscale[g] = max / -4.0f;
      max_abs = std::max(max_abs, std::fabs(gscale[g]));
    }
    const float d = fp16_round(max_abs / 31.0f);
    b[i].d = fp32_to_fp16(d);
    std::memset(b[i].hmask, 0, sizeof(b[i].hmask));
    std::memset(b[i].qs, 0, sizeof(b[i].qs));
    std::memset(b[i].scales, 0, sizeof(b[i].scales));
    for (int g = 0; g < 16; ++g) {
      const int sc = d > 0 ? round_clamp(gscale[g] / d, -32, 31) : 0;
      const int u = sc + 32;  // stored 6-bit value
      b[i].scales[g % 8] |= static_cast<uint8_t>((u & 0xF) << (4 * (g / 8)));
      b[i].scales[8 + g % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (g / 4)));
      const float ds = d * static_cast<float>(sc);
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * g + l;
        const int q = ds != 0 ? round_clamp(x[e] / ds, -4, 3) + 4 : 4;  // 0..7
        b[i].qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>((q & 3) << (2 * ((e % 128) / 32)));
        if (q >= 4) b[i].hmask[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
      }
    }
  }
}

// Index of the code-book entry nearest to v (ties to the lower index).
int nearest_iq4(float v) {
  int best = 0;
  float err = std::fabs(v - kIQ4Values[0]);
  for (int k = 1; k < 16; ++k) {
    const float e = std::fabs(v - kIQ4Values[k]);
    if (e < err) {
      err = e;
      best = k;
    }
  }
  return best;
}

// 32 elements as code-book indices for scale ds, in the Q4_0 nibble layout.
void put_iq4(const float* x, float ds, uint8_t* qs) {
  const float id = ds != 0 ? 1.0f / ds : 0.0f;
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>(nearest_iq4(x[j] * id) | (nearest_iq4(x[j + 16] * id) << 4));
}

// The largest magnitude maps onto the code book's end -127.
float iq4_block_scale(const float* x) {
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max / -127.0f;
}

void quant_iq4_nl(const float* x, BlockIQ4_NL* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32) {
    const float d = fp16_round(iq4_block_scale(x));
    b[i].d = fp32_to_fp16(d);
    put_iq4(x, d, b[i].qs);
  }
}

// Index of the MXFP4 value nearest to v at scale d (the first of equals: +0 before -0, the
// smaller magnitude at a tie), measured in fp32 as GGML and gguf measure it.
int nearest_mxfp4(float v, float d) {
  int best = 0;
  float err = std::fabs(d * static_cast<float>(kMXFP4Values[0]) - v);
  for (int k = 1; k < 16; ++k) {
    const float e = std::fabs(d * static_cast<float>(kMXFP4Values[k]) - v);
    if (e < err) {
      err = e;
      best = k;
    }
  }
  return best;
}

// The exponent puts the block's largest magnitude amax in [4, 8) * 2^(e - 128), i.e.
// e = floor(log2(amax)) - 2 + 127 (values above 6 * scale clamp to the 12 end); frexp gives
// floor(log2) exactly. An all-zero block gets e = 0.
void quant_mxfp4(const float* x, BlockMXFP4* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 32) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    int e = 0;
    if (amax > 0) {
      int ex;
      std::frexp(amax, &ex);  // amax = m * 2^ex, m in [0.5, 1): floor(log2(amax)) = ex - 1
      e = std::clamp(ex - 1 - 2 + 127, 0, 255);
    }
    b[i].e = static_cast<uint8_t>(e);
    const float d = e8m0_half(b[i].e);
    for (int j = 0; j < 16; ++j)
      b[i].qs[j] =
          static_cast<uint8_t>(nearest_mxfp4(x[j], d) | (nearest_mxfp4(x[j + 16], d) << 4));
  }
}

void quant_iq4_xs(const float* x, BlockIQ4_XS* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += 256) {
    float s[8], max_abs = 0;
    for (int ib = 0; ib < 8; ++ib) {
      s[ib] = iq4_block_scale(x + 32 * ib);
      max_abs = std::max(max_abs, std::fabs(s[ib]));
    }
    const float d = fp16_round(max_abs / 31.0f);
    b[i].d = fp32_to_fp16(d);
    b[i].scales_h = 0;
    std::memset(b[i].scales_l, 0, sizeof(b[i].scales_l));
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = (d > 0 ? round_clamp(s[ib] / d, -32, 31) : 0) + 32;
      b[i].scales_l[ib / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (ib % 2)));
      b[i].scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * ib));
      put_iq4(x + 32 * ib, d * static_cast<float>(ls - 32), b[i].qs + 16 * ib);
    }
  }
}

}  // namespace

bool dequantize_row_zoo(DType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case DType::Q5_0:
      dequant_q5_0(static_cast<const BlockQ5_0*>(src), dst, n / 32);
      return true;
    case DType::Q5_1:
      dequant_q5_1(static_cast<const BlockQ5_1*>(src), dst, n / 32);
      return true;
    case DType::Q2_K:
      dequant_q2_k(static_cast<const BlockQ2_K*>(src), dst, n / 256);
      return true;
    case DType::Q3_K:
      dequant_q3_k(static_cast<const BlockQ3_K*>(src), dst, n / 256);
      return true;
    case DType::IQ4_NL:
      dequant_iq4_nl(static_cast<const BlockIQ4_NL*>(src), dst, n / 32);
      return true;
    case DType::IQ4_XS:
      dequant_iq4_xs(static_cast<const BlockIQ4_XS*>(src), dst, n / 256);
      return true;
    case DType::MXFP4:
      dequant_mxfp4(static_cast<const BlockMXFP4*>(src), dst, n / 32);
      return true;
    default:
      return false;
  }
}

bool quantize_row_zoo(DType t, const float* src, void* dst, int64_t n) {
  switch (t) {
    case DType::Q5_0:
      quant_q5_0(src, static_cast<BlockQ5_0*>(dst), n / 32);
      return true;
    case DType::Q5_1:
      quant_q5_1(src, static_cast<BlockQ5_1*>(dst), n / 32);
      return true;
    case DType::Q2_K:
      quant_q2_k(src, static_cast<BlockQ2_K*>(dst), n / 256);
      return true;
    case DType::Q3_K:
      quant_q3_k(src, static_cast<BlockQ3_K*>(dst), n / 256);
      return true;
    case DType::IQ4_NL:
      quant_iq4_nl(src, static_cast<BlockIQ4_NL*>(dst), n / 32);
      return true;
    case DType::IQ4_XS:
      quant_iq4_xs(src, static_cast<BlockIQ4_XS*>(dst), n / 256);
      return true;
    case DType::MXFP4:
      quant_mxfp4(src, static_cast<BlockMXFP4*>(dst), n / 32);
      return true;
    default:
      return false;
  }
}

}  // namespace vt::cpu
