// BF16 / F16 products (matmul_half.h): the scalar reading of vdpbf16ps's arithmetic against
// crafted cases, every path (scalar, AVX2, AVX-512 with and without vdpbf16ps) bit-identical
// to the scalar one on packed and row-major weights, on special values (denormals, inf, NaN,
// signed zeros, underflow boundaries), and the results within the contract's error bound of
// a double-precision reference.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isa_paths.h"
#include "vt/cpu/matmul_half.h"

namespace vt::cpu {
namespace {

// A way to run a product: an ISA, and on AVX-512 whether vdpbf16ps may be used.
struct Path {
  Isa isa;
  bool native;
  std::string name() const { return native ? "avx512-bf16" : isa_name(isa); }
};

std::vector<Path> paths() {
  std::vector<Path> v;
  for (Isa i : hardware_isas()) v.push_back({i, false});
  if (hardware_avx512_bf16()) v.push_back({Isa::kAvx512, true});
  return v;
}

// BF16's activation contract for the scope (matmul_half.h): rounded to bf16 or fp32.
struct RoundActivations {
  bool old;
  explicit RoundActivations(bool on) : old(bf16_round_activations()) {
    set_bf16_round_activations(on);
  }
  ~RoundActivations() { set_bf16_round_activations(old); }
};

void run(const Path& p, const WeightView& w, const float* x, int64_t ldx, int64_t n_tok, float* y,
         int64_t ldy, ThreadPool& pool) {
  force_bf16_emulation(!p.native);
  matmul_isa(p.isa, w, x, ldx, n_tok, y, ldy, pool);
  force_bf16_emulation(false);
}

// A BF16 / F16 matrix from 16-bit patterns, row-major (rows padded by 3 elements so the
// stride is not the row size) and packed.
struct Half {
  std::vector<uint16_t> bits;
  std::vector<uint8_t> packed_bytes;
  WeightView view, packed;
  Half(DType t, int64_t rows, int64_t cols, const std::vector<uint16_t>& src) {
    const int64_t ld = cols + 3;
    bits.assign(static_cast<size_t>(rows * ld), 0x7e7e);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(bits.data() + r * ld, src.data() + r * cols, cols * 2);
    view = WeightView{t, rows, cols, bits.data(), static_cast<size_t>(ld * 2)};
    packed_bytes.assign(vt::cpu::packed_bytes(view), 0xEE);
    pack_groups(view, 0, pack_group_count(view), packed_bytes.data());
    packed = packed_view(view, packed_bytes.data());
  }
  float w(int64_t r, int64_t c) const {
    const uint16_t h = bits[r * (view.cols + 3) + c];
    return view.dtype == DType::BF16 ? bf16_to_fp32(h) : fp16_to_fp32(h);
  }
};

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

TEST(Bf16Fma, CraftedCasesGiveTheDocumentedResults) {
  for (int i = 0; i < kBf16CaseCount; ++i) {
    const Bf16Case& c = kBf16Cases[i];
    EXPECT_EQ(bits_of(bf16_case_result(c)), c.expect) << c.what;
  }
}

// On a CPU with AVX512-BF16 the probe must accept vdpbf16ps, else the fast path is off and
// the emulation runs instead (correct, but slower): that must show up as a failure here.
TEST(Bf16Fma, ProbeAcceptsVdpbf16ps) {
  if (!has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  const int bad = bf16_probe_avx512();
  EXPECT_EQ(bad, -1) << "vdpbf16ps differs from the contract on: " << kBf16Cases[bad].what;
  EXPECT_TRUE(bf16_native_dot());
}

TEST(Bf16Act, RoundsLikeVcvtneps2bf16) {
  // Normal values: round to nearest even, as the reference converter does.
  std::mt19937 rng(1);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    const uint32_t u = bits_of(f);
    if ((u & 0x7f800000u) == 0 || f != f) continue;
    ASSERT_EQ(bf16_act_round(f), fp32_to_bf16(f)) << std::hex << u;
  }
  EXPECT_EQ(bf16_act_round(std::bit_cast<float>(0x00000001u)), 0x0000);  // denormal: +0
  EXPECT_EQ(bf16_act_round(std::bit_cast<float>(0x807fffffu)), 0x8000);  // -denormal: -0
  EXPECT_EQ(bf16_act_round(std::bit_cast<float>(0x7f800001u)), 0x7fc0);  // sNaN
  EXPECT_EQ(bf16_act_round(std::bit_cast<float>(0xffc12345u)), 0x7fc0);  // -qNaN
  EXPECT_EQ(bf16_act_round(FLT_MAX), 0x7f80);                            // rounds to inf
  EXPECT_EQ(bf16_act_round(-INFINITY), 0xff80);
}

// The vectorized row rounding (what every AVX2 / AVX-512 product uses, also the bf16 pairs
// vdpbf16ps reads) equals bf16_act_round element by element, padding included.
TEST(Bf16Act, RowRoundingSameOnEveryIsa) {
  std::mt19937 rng(5);
  const uint32_t specials[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f800000,
                               0xff800000, 0x7fc00000, 0x7f800001, 0xffffffff, 0x3f808000,
                               0x3f818000, 0x7f7fffff, 0x00800000, 0x80800000};
  for (int64_t n : {1, 7, 8, 15, 16, 17, 33, 100}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i)
      x[i] = std::bit_cast<float>(i % 3 == 0 ? specials[rng() % std::size(specials)]
                                             : static_cast<uint32_t>(rng()));
    const int64_t ldr = (n + 1) & ~int64_t{1};
    std::vector<uint16_t> want(ldr, 0);
    for (int64_t i = 0; i < n; ++i) want[i] = bf16_act_round(x[i]);
    for (const Path& p : paths()) {
      if (p.isa == Isa::kScalar || p.native) continue;
      std::vector<uint16_t> got(ldr + 4, 0xABCD);
      (p.isa == Isa::kAvx512 ? bf16_round_row_avx512 : bf16_round_row_avx2)(x.data(), n, ldr,
                                                                            got.data());
      for (int64_t i = 0; i < ldr; ++i)
        ASSERT_EQ(got[i], want[i]) << p.name() << " n=" << n << " i=" << i;
      for (int64_t i = ldr; i < ldr + 4; ++i) ASSERT_EQ(got[i], 0xABCD) << "wrote past ldr";
    }
  }
}

// Each crafted case as one row and one token of a 13 x 4 product, so the cases also sit in
// every lane position of a tile: the diagonal must give the documented result, the whole
// product the scalar path's bits.
TEST(MatmulHalf, CraftedCasesOnEveryPath) {
  const RoundActivations mode(true);
  ThreadPool pool(1);
  const int n = kBf16CaseCount;
  std::vector<uint16_t> wb(n * 4);
  std::vector<float> x(n * 4);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c) {
      wb[i * 4 + c] = kBf16Cases[i].w[c];
      x[i * 4 + c] = bf16_to_fp32(kBf16Cases[i].x[c]);
    }
  const Half w(DType::BF16, n, 4, wb);
  std::vector<float> ref;
  for (const Path& p : paths()) {
    for (const WeightView* v : {&w.view, &w.packed}) {
      SCOPED_TRACE(p.name() + (v->packed ? " packed" : " row-major"));
      std::vector<float> y(n * n);
      run(p, *v, x.data(), 4, n, y.data(), n, pool);
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(bits_of(y[i * n + i]), kBf16Cases[i].expect) << kBf16Cases[i].what;
      if (ref.empty()) ref = y;
      for (int k = 0; k < n * n; ++k)
        ASSERT_EQ(bits_of(y[k]), bits_of(ref[k])) << "token " << k / n << " row " << k % n;
    }
  }
}

// 16-bit patterns mixing ordinary values with the special ones of each format.
uint16_t special16(DType t, std::mt19937& rng) {
  static const uint16_t bf[] = {0x0000, 0x8000, 0x0001, 0x807f, 0x0040, 0x0080, 0x8080, 0x7f7f,
                                0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x1f00, 0x9f00, 0x2000,
                                0x99c0, 0x1a00, 0x3f80, 0xbf80, 0x3380, 0x3400};
  static const uint16_t hf[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x8400, 0x7bff, 0xfbff,
                                0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x3c00, 0xbc00, 0x1400, 0x0200};
  const uint32_t r = rng();
  if (r % 4 != 0) {  // a random finite value around 1
    const float f = std::ldexp(static_cast<float>(static_cast<int>(r >> 8) % 2001 - 1000) / 1000,
                               static_cast<int>(r >> 20) % 7 - 3);
    return t == DType::BF16 ? fp32_to_bf16(f) : fp32_to_fp16(f);
  }
  return t == DType::BF16 ? bf[(r >> 4) % std::size(bf)] : hf[(r >> 4) % std::size(hf)];
}

float special_act(std::mt19937& rng) {
  static const uint32_t sp[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000,
                                0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
                                0x7f800001, 0x3f808000, 0x3f818000, 0x1f000000, 0x20000000,
                                0x0d800000, 0x33800000};
  const uint32_t r = rng();
  if (r % 3 != 0)
    return std::ldexp(static_cast<float>(r % 4097) / 2048.0f - 1.0f, (r >> 16) % 5 - 2);
  return std::bit_cast<float>(sp[(r >> 4) % std::size(sp)]);
}

// BF16 in both activation contracts (bf16 first), F16.
struct Mode {
  DType t;
  bool rounded;
  std::string name() const {
    return std::string(dtype_name(t)) + (t == DType::F16 ? ""
                                         : rounded       ? " bf16-act"
                                                         : " fp32-act");
  }
};
const Mode kModes[] = {{DType::BF16, true}, {DType::BF16, false}, {DType::F16, false}};

TEST(MatmulHalf, SpecialValuesBitIdenticalOnEveryPath) {
  ThreadPool pool(2);
  std::mt19937 rng(7);
  for (const Mode m : kModes) {
    const RoundActivations mode(m.rounded);
    const DType t = m.t;
    for (int64_t rows : {1, 17, 37, 67}) {
      for (int64_t cols : {1, 6, 37}) {
        std::vector<uint16_t> wb(rows * cols);
        for (auto& h : wb) h = special16(t, rng);
        const Half w(t, rows, cols, wb);
        for (int64_t n_tok : {1, 5, 19}) {
          const int64_t ldx = cols + 1, ldy = rows + 1;
          std::vector<float> x(n_tok * ldx);
          for (auto& v : x) v = special_act(rng);
          std::vector<float> ref;
          for (const Path& p : paths()) {
            for (const WeightView* v : {&w.view, &w.packed}) {
              SCOPED_TRACE(m.name() + " " + p.name() + (v->packed ? " packed" : " row-major") +
                           " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) +
                           " n_tok=" + std::to_string(n_tok));
              std::vector<float> y(n_tok * ldy, -7.0f);
              run(p, *v, x.data(), ldx, n_tok, y.data(), ldy, pool);
              if (ref.empty()) ref = y;
              for (size_t k = 0; k < y.size(); ++k)
                ASSERT_EQ(bits_of(y[k]), bits_of(ref[k])) << "at " << k;
            }
          }
        }
      }
    }
  }
}

// gamma_n of the classical error analysis: a chain of n roundings (each an exact product
// added and rounded once) is within gamma_n * sum |terms| of the exact sum.
double gamma(int64_t n) {
  const double u = 0x1p-24;
  return n * u / (1 - n * u);
}

// Gaussian weights and activations (some rows scaled so terms cancel), every token count
// 1..67, odd and even row and column counts: every path bit-identical, packed and
// row-major, and within the contract's bound of the exact product of what the kernel
// multiplies (activations rounded to bf16 or not, as the contract says).
TEST(MatmulHalf, WithinContractBoundAndBitIdentical) {
  ThreadPool pool(2);
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  struct Shape {
    int64_t rows, cols;
  };
  for (const Mode m : kModes) {
    const RoundActivations mode(m.rounded);
    const DType t = m.t;
    // 37 rows: single groups; 130: four-group tiles, then single ones (AVX-512).
    for (const Shape s :
         {Shape{37, 263}, Shape{130, 40}, Shape{16, 64}, Shape{33, 3}, Shape{1, 1}}) {
      std::vector<uint16_t> wb(s.rows * s.cols);
      for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c) {
          const float f = nd(rng) * (r % 3 == 0 ? 1e3f : 0.05f);
          wb[r * s.cols + c] = t == DType::BF16 ? fp32_to_bf16(f) : fp32_to_fp16(f);
        }
      const Half w(t, s.rows, s.cols, wb);
      const int64_t steps = t == DType::BF16 ? (s.cols + 1) / 2 * 2 : s.cols;
      for (int64_t n_tok = 1; n_tok <= 67; ++n_tok) {
        if (s.cols > 64 && n_tok % 11 != 0 && n_tok > 9) continue;  // keep the scalar path quick
        const int64_t ldx = s.cols + 2, ldy = s.rows + 3;
        std::vector<float> x(n_tok * ldx);
        for (auto& v : x) v = nd(rng);
        std::vector<float> ref;
        for (const Path& p : paths()) {
          for (const WeightView* v : {&w.view, &w.packed}) {
            SCOPED_TRACE(m.name() + " " + p.name() + (v->packed ? " packed" : " row-major") +
                         " rows=" + std::to_string(s.rows) + " cols=" + std::to_string(s.cols) +
                         " n_tok=" + std::to_string(n_tok));
            std::vector<float> y(n_tok * ldy, -7.0f);
            run(p, *v, x.data(), ldx, n_tok, y.data(), ldy, pool);
            if (ref.empty()) {
              ref = y;
              for (int64_t k = 0; k < n_tok; ++k) {
                for (int64_t r = 0; r < s.rows; ++r) {
                  double exact = 0, abs_sum = 0;
                  for (int64_t c = 0; c < s.cols; ++c) {
                    const float xv =
                        m.rounded ? bf16_to_fp32(bf16_act_round(x[k * ldx + c])) : x[k * ldx + c];
                    exact += double(w.w(r, c)) * xv;
                    abs_sum += std::fabs(double(w.w(r, c)) * xv);
                  }
                  ASSERT_NEAR(y[k * ldy + r], exact, gamma(steps) * abs_sum)
                      << "token " << k << " row " << r;
                }
                for (int64_t r = s.rows; r < ldy; ++r) ASSERT_EQ(y[k * ldy + r], -7.0f);
              }
            }
            ASSERT_EQ(0, std::memcmp(y.data(), ref.data(), y.size() * sizeof(float)));
          }
        }
      }
    }
  }
}

TEST(PackHalf, RowsRoundTripAndLayoutIsColumnMajorInGroups) {
  std::mt19937 rng(3);
  for (DType t : {DType::BF16, DType::F16}) {
    for (int64_t cols : {1, 2, 7, 64}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " cols=" + std::to_string(cols));
      const int64_t rows = 21;
      std::vector<uint16_t> wb(rows * cols);
      for (auto& h : wb) h = static_cast<uint16_t>(rng() | 1);  // never 0: padding shows
      const Half w(t, rows, cols, wb);
      const int64_t unit = t == DType::BF16 ? 2 : 1;  // columns per lane of a packed chunk
      const int64_t units = (cols + unit - 1) / unit;
      ASSERT_EQ(w.packed.row_stride, static_cast<size_t>(units * unit * 2));
      ASSERT_EQ(packed_bytes(w.view), 32 * w.packed.row_stride);  // 21 rows -> 2 groups
      const auto* p = reinterpret_cast<const uint16_t*>(w.packed_bytes.data());
      for (int64_t r = 0; r < 32; ++r)
        for (int64_t c = 0; c < units * unit; ++c) {
          const int64_t g = r / 16, j = r % 16, u = c / unit;
          const uint16_t got = p[g * 16 * units * unit + u * 16 * unit + j * unit + c % unit];
          const uint16_t want = r < rows && c < cols ? wb[r * cols + c] : 0;
          ASSERT_EQ(got, want) << "row " << r << " col " << c;
        }
      std::vector<uint16_t> row(cols);
      for (int64_t r = 0; r < rows; ++r) {
        unpack_row(w.packed, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), wb.data() + r * cols, cols * 2)) << r;
      }
    }
  }
}

}  // namespace
}  // namespace vt::cpu
