// BF16 / F16 products, portable part: the contract's scalar operations (bf16 rounding of
// activations, the DAZ/FTZ fused multiply-add of vdpbf16ps), the scalar kernels that spell
// the contract out one (row, token) at a time, the per-call activation rounding, and the
// choice between vdpbf16ps and its emulation. See matmul_half.h for the contract.
#include "vt/cpu/matmul_half.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace vt::cpu {

uint16_t bf16_act_round(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;                            // NaN
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000);  // DAZ
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);           // RNE
}

namespace {

inline float daz(float v) {
  const uint32_t u = std::bit_cast<uint32_t>(v);
  return (u & 0x7f800000u) == 0 ? std::bit_cast<float>(u & 0x80000000u) : v;
}

inline float canonical(float v) { return v != v ? std::bit_cast<float>(kCanonicalNan) : v; }

}  // namespace

float bf16_fma(float a, float b, float c) {
  a = daz(a);
  b = daz(b);
  c = daz(c);
  const float r = std::fma(a, b, c);  // IEEE: gradual underflow, rounded once
  const float m = std::fabs(r);
  if (!(m <= FLT_MIN)) return r;  // normal, inf or NaN
  if (m < FLT_MIN) return std::copysign(0.0f, r);
  // |r| == FLT_MIN: the exact value e may lie in [FLT_MIN - 2^-150, FLT_MIN - 2^-151), where
  // gradual underflow rounds up to FLT_MIN but rounding to 24 bits with unbounded exponent
  // stays below it (tiny after rounding). In double, a*b + c is exact whenever it can land
  // near the threshold: a*b has 16 significant bits, and if a*b and c cancel, their bits
  // span at most ~50 places; if one is far smaller, e is far from the threshold and
  // rounding, being monotonic, keeps it on its side.
  const double e = std::fma(static_cast<double>(a), static_cast<double>(b), static_cast<double>(c));
  if (std::fabs(e) < static_cast<double>(FLT_MIN) - 0x1p-151) return std::copysign(0.0f, r);
  return r;
}

// ---- crafted cases (see matmul_half.h) ----

const Bf16Case kBf16Cases[] = {
    // acc = 1 + 2^-23; then +2^-24 (a tie, to even: 1 + 2^-22) and -2^-23. Even half first
    // would give 1.
    {{0x3400, 0x3f80, 0xb400, 0x3380},
     {0x3f80, 0x3f80, 0x3f80, 0x3f80},
     0x3f800001,
     "the odd column of a pair is added first"},
    // acc = 1; then 2^-24 twice: each a tie that rounds back to 1 (a pair rounded once: 1+2^-23).
    {{0, 0x3f80, 0x3380, 0x3380},
     {0, 0x3f80, 0x3f80, 0x3f80},
     0x3f800000,
     "each product is rounded into the accumulator on its own"},
    {{0, 0, 0, 0x0001}, {0, 0, 0, 0x7180}, 0x00000000, "a denormal weight counts as zero"},
    {{0, 0, 0, 0x7180}, {0, 0, 0, 0x0001}, 0x00000000, "a denormal activation counts as zero"},
    {{0, 0, 0, 0x1f00}, {0, 0, 0, 0x1f00}, 0x00000000, "an exact denormal result is flushed"},
    // acc = FLT_MIN; minus 1.5 * 2^-151: rounds to FLT_MIN - 2^-150 with unbounded exponent.
    {{0, 0x2000, 0, 0x99c0},
     {0, 0x2000, 0, 0x1a00},
     0x00000000,
     "a result tiny after rounding is flushed"},
    // acc = FLT_MIN; minus 2^-152: below FLT_MIN, but rounds to FLT_MIN.
    {{0, 0x2000, 0, 0x9980},
     {0, 0x2000, 0, 0x1980},
     0x00800000,
     "tininess is judged after rounding"},
    // 1.5 * 2^-127 (flushed), then + 2^-126; unflushed the sum would be 1.75 * 2^-126.
    {{0, 0, 0x2000, 0x1fc0},
     {0, 0, 0x2000, 0x2000},
     0x00800000,
     "the odd half's result is flushed before the even half"},
    // 2^129 overflows to inf; -2^129 stays exact inside the next fused multiply-add, so the
    // sum is inf (rounding each product first would give inf - inf = NaN).
    {{0, 0, 0xff00, 0x7f00},
     {0, 0, 0x4080, 0x4080},
     0x7f800000,
     "an overflowed accumulator is not cancelled by an exact product"},
    // acc = -(2^128 - 2^120); + 2^128 (not representable) is exactly 2^120.
    {{0, 0xff7f, 0, 0x7f00},
     {0, 0x3f80, 0, 0x4000},
     0x7b800000,
     "an overflowing product inside the fused multiply-add"},
    {{0, 0, 0, 0x7f80}, {0, 0, 0, 0x0000}, kCanonicalNan, "inf x 0 is NaN"},
    // -2^-130 flushes to -0; -0 + (-0 x 1) stays -0.
    {{0, 0, 0x8000, 0x9f00}, {0, 0, 0x3f80, 0x1f00}, 0x80000000, "a flushed result keeps its sign"},
    {{0, 0, 0x7f81, 0x7fc1}, {0, 0, 0x3f80, 0x3f80}, kCanonicalNan, "NaNs come out canonical"},
};
const int kBf16CaseCount = sizeof(kBf16Cases) / sizeof(kBf16Cases[0]);

float bf16_case_result(const Bf16Case& c) {
  float acc = 0.0f;
  for (int p = 0; p < 4; p += 2) {
    acc = bf16_fma(bf16_to_fp32(c.w[p + 1]), bf16_to_fp32(c.x[p + 1]), acc);
    acc = bf16_fma(bf16_to_fp32(c.w[p]), bf16_to_fp32(c.x[p]), acc);
  }
  return acc != acc ? std::bit_cast<float>(kCanonicalNan) : acc;
}

// ---- scalar kernels ----

namespace {

// Row r of w in row-major 16-bit form (a pointer into w, or `buf` for a packed view).
const uint16_t* row16(const WeightView& w, int64_t r, std::vector<uint16_t>& buf) {
  if (!w.packed)
    return reinterpret_cast<const uint16_t*>(static_cast<const uint8_t*>(w.data) +
                                             r * w.row_stride);
  buf.resize(static_cast<size_t>(w.cols));
  unpack_row(w, r, buf.data());
  return buf.data();
}

// Activation i of token t as the BF16 kernels see it (fp32 value of a bf16).
inline float act_bf16(const ActView& a, int64_t t, int64_t i) {
  const int64_t t0 = t / a.tile * a.tile, n = std::min(a.tile, a.n_tok - t0);
  const int64_t at = t0 * a.ldr + (i / 2) * 2 * n + 2 * (t - t0) + (i & 1);
  if (a.xr) return a.xr[at];
  return bf16_to_fp32(reinterpret_cast<const uint16_t*>(a.xp)[at]);
}

template <bool kRounded>
float dot_bf16(const uint16_t* w, const ActView& a, int64_t t) {
  const int64_t n = a.cols;
  auto f = [](float x, float y, float acc) {
    return kRounded ? bf16_fma(x, y, acc) : std::fma(x, y, acc);
  };
  float acc = 0.0f;
  for (int64_t i = 0; i < n; i += 2) {
    const float w1 = i + 1 < n ? bf16_to_fp32(w[i + 1]) : 0.0f;
    acc = f(w1, act_bf16(a, t, i + 1), acc);  // the padded activation is zero
    acc = f(bf16_to_fp32(w[i]), act_bf16(a, t, i), acc);
  }
  return canonical(acc);
}

float dot_f16(const uint16_t* w, const float* x, int64_t n) {
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc = std::fma(fp16_to_fp32(w[i]), x[i], acc);
  return canonical(acc);
}

}  // namespace

void matmul_rows_half_scalar(const WeightView& w, const ActView& a, int64_t r0, int64_t r1,
                             float* y, int64_t ldy) {
  thread_local std::vector<uint16_t> buf;
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* row = row16(w, r, buf);
    for (int64_t t = 0; t < a.n_tok; ++t)
      y[t * ldy + r] = w.dtype == DType::F16 ? dot_f16(row, a.x + t * a.ldx, w.cols)
                       : a.rounded           ? dot_bf16<true>(row, a, t)
                                             : dot_bf16<false>(row, a, t);
  }
}

// ---- activations ----

namespace {

std::atomic<bool> g_force_emulation{false};

bool round_from_env() {
  const char* v = std::getenv("VT_BF16_ACTIVATIONS");
  return v && std::strcmp(v, "bf16") == 0;
}
std::atomic<bool> g_round_activations{round_from_env()};

void bf16_round_row_scalar(const float* x, int64_t n, int64_t ldr, uint16_t* out) {
  for (int64_t i = 0; i < ldr; ++i) out[i] = i < n ? bf16_act_round(x[i]) : 0;
}

struct Bf16Scratch {
  std::vector<float> xr;
  std::vector<uint32_t> xp;
};
thread_local Bf16Scratch tl_bf16;

}  // namespace

bool bf16_native_dot() {
  static const bool ok = has_avx512_bf16() && bf16_probe_avx512() < 0;
  return ok && !g_force_emulation.load(std::memory_order_relaxed);
}

void force_bf16_emulation(bool on) { g_force_emulation.store(on, std::memory_order_relaxed); }

bool bf16_round_activations() { return g_round_activations.load(std::memory_order_relaxed); }

void set_bf16_round_activations(bool on) {
  g_round_activations.store(on, std::memory_order_relaxed);
}

ActView prepare_act_bf16(Isa isa, const float* x, int64_t ldx, int64_t n_tok, int64_t cols,
                         ThreadPool& pool, int round) {
  ActView a;
  a.n_tok = n_tok;
  a.cols = cols;
  a.x = x;
  a.ldx = ldx;
  a.fmt = DType::BF16;
  a.ldr = (cols + 1) & ~int64_t{1};
  a.tile = isa == Isa::kAvx512 ? kHalfTileAvx512 : isa == Isa::kAvx2 ? kHalfTileAvx2 : 1;
  a.rounded = round < 0 ? bf16_round_activations() : round != 0;
  const size_t n = static_cast<size_t>(n_tok * a.ldr);
  float* xr = nullptr;
  uint32_t* xp = nullptr;
  if (a.rounded && isa == Isa::kAvx512 && bf16_native_dot()) {
    if (tl_bf16.xp.size() < n / 2) tl_bf16.xp.resize(n / 2);
    a.xp = xp = tl_bf16.xp.data();
  } else {
    if (tl_bf16.xr.size() < n) tl_bf16.xr.resize(n);
    a.xr = xr = tl_bf16.xr.data();
  }
  auto round_row = isa == Isa::kAvx512 ? bf16_round_row_avx512
                   : isa == Isa::kAvx2 ? bf16_round_row_avx2
                                       : bf16_round_row_scalar;
  const int64_t ldr = a.ldr, tile = a.tile, n_tiles = (n_tok + tile - 1) / tile;
  auto run = [&](int64_t j0, int64_t j1) {
    thread_local std::vector<uint16_t> row;
    if (row.size() < static_cast<size_t>(ldr)) row.resize(static_cast<size_t>(ldr));
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t t0 = j * tile, nt = std::min(tile, n_tok - t0);
      for (int64_t t = 0; t < nt; ++t) {
        const float* xt = x + (t0 + t) * ldx;
        // Element i of token t goes to slot (i / 2) * 2 nt + 2 t + (i & 1) of the tile.
        if (!a.rounded) {
          float* dst = xr + t0 * ldr + 2 * t;
          for (int64_t i = 0; i < ldr; ++i) dst[(i / 2) * 2 * nt + (i & 1)] = i < cols ? xt[i] : 0;
          continue;
        }
        round_row(xt, cols, ldr, row.data());
        if (xp) {
          uint32_t* dst = xp + t0 * ldr / 2 + t;
          for (int64_t k = 0; k < ldr / 2; ++k)
            dst[k * nt] = row[2 * k] | static_cast<uint32_t>(row[2 * k + 1]) << 16;
        } else {
          float* dst = xr + t0 * ldr + 2 * t;
          for (int64_t k = 0; k < ldr / 2; ++k) {
            dst[2 * k * nt] = bf16_to_fp32(row[2 * k]);
            dst[2 * k * nt + 1] = bf16_to_fp32(row[2 * k + 1]);
          }
        }
      }
    }
  };
  if (n_tok >= 4 && n_tiles > 1 && pool.size() > 1)
    pool.parallel_for(n_tiles, run);
  else
    run(0, n_tiles);
  return a;
}

}  // namespace vt::cpu
