// fp16/bf16 conversions and GGML block (de)quantization against goldens made by
// tools/make_quant_goldens.py (Python gguf package), plus properties of the reference
// K-quant quantizers and of the activation quantizers used by the integer dot products.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {
namespace {

std::vector<uint8_t> read_golden(const std::string& name) {
  const std::string path = std::string(VLLM_SOURCE_DIR) + "/tests/golden/quant/" + name;
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing golden " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Sequential little-endian reader over a golden file.
struct Reader {
  const std::vector<uint8_t>& buf;
  size_t pos = 0;
  template <class T>
  std::vector<T> take(size_t n) {
    std::vector<T> v(n);
    EXPECT_LE(pos + n * sizeof(T), buf.size());
    if (pos + n * sizeof(T) <= buf.size()) std::memcpy(v.data(), buf.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
    return v;
  }
  uint32_t u32() { return take<uint32_t>(1)[0]; }
};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Convert, MatchesNumpyAndGguf) {
  const auto buf = read_golden("convert.bin");
  Reader rd{buf};
  const uint32_t n = rd.u32();
  ASSERT_GT(n, 100u);
  const auto x = rd.take<float>(n);
  const auto f16 = rd.take<uint16_t>(n);
  const auto bf = rd.take<uint16_t>(n);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(fp32_to_fp16(x[i]), f16[i]) << "fp16(" << x[i] << ") i=" << i;
    EXPECT_EQ(fp32_to_bf16(x[i]), bf[i]) << "bf16(" << x[i] << ") i=" << i;
    EXPECT_EQ(bits(bf16_to_fp32(bf[i])), static_cast<uint32_t>(bf[i]) << 16);
  }
  const uint32_t m = rd.u32();
  const auto h = rd.take<uint16_t>(m);
  const auto hf = rd.take<float>(m);
  for (uint32_t i = 0; i < m; ++i)
    EXPECT_EQ(bits(fp16_to_fp32(h[i])), bits(hf[i])) << "half 0x" << std::hex << h[i];
}

TEST(Convert, Fp16RoundTripAllFinite) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // inf / nan
    ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(static_cast<uint16_t>(h))), h);
  }
}

struct TypeGolden {
  std::vector<float> src, deq;
  std::vector<uint8_t> blocks;
};

TypeGolden load_type(const std::string& name) {
  const auto buf = read_golden(name + ".bin");
  Reader rd{buf};
  TypeGolden g;
  const uint32_t n = rd.u32(), nbytes = rd.u32();
  g.src = rd.take<float>(n);
  g.blocks = rd.take<uint8_t>(nbytes);
  g.deq = rd.take<float>(n);
  EXPECT_EQ(rd.pos, buf.size());
  return g;
}

struct Case {
  const char* name;
  DType t;
  bool exact_quantizer;
};
const Case kCases[] = {{"q8_0", DType::Q8_0, true},
                       {"q4_0", DType::Q4_0, true},
                       {"q4_1", DType::Q4_1, true},
                       {"q4_k", DType::Q4_K, false},
                       {"q5_k", DType::Q5_K, false},
                       {"q6_k", DType::Q6_K, false},
                       // The zoo: gguf-quantized (Q5) or llama.cpp-quantized blocks of real
                       // data, and random blocks that reach every scale and quant pattern.
                       {"q5_0", DType::Q5_0, true},
                       {"q5_1", DType::Q5_1, true},
                       {"q2_k", DType::Q2_K, false},
                       {"q3_k", DType::Q3_K, false},
                       {"iq4_nl", DType::IQ4_NL, false},
                       {"iq4_xs", DType::IQ4_XS, false},
                       {"q5_0_random", DType::Q5_0, false},
                       {"q5_1_random", DType::Q5_1, false},
                       {"q2_k_random", DType::Q2_K, false},
                       {"q3_k_random", DType::Q3_K, false},
                       {"iq4_nl_random", DType::IQ4_NL, false},
                       {"iq4_xs_random", DType::IQ4_XS, false},
                       // gguf- (and llama.cpp-) quantized real data; random blocks with every
                       // exponent 0..255 (2^-128 denormals up to 12 * 2^127 = inf).
                       {"mxfp4", DType::MXFP4, true},
                       {"mxfp4_random", DType::MXFP4, false}};

TEST(Quant, DequantizeMatchesGguf) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const TypeGolden g = load_type(c.name);
    const int64_t n = static_cast<int64_t>(g.deq.size());
    ASSERT_EQ(row_bytes(c.t, n), g.blocks.size());
    std::vector<float> out(n);
    dequantize_row(c.t, g.blocks.data(), out.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(bits(out[i]), bits(g.deq[i])) << "i=" << i;
  }
}

TEST(Quant, QuantizeMatchesGguf) {
  for (const Case& c : kCases) {
    if (!c.exact_quantizer) continue;
    SCOPED_TRACE(c.name);
    const TypeGolden g = load_type(c.name);
    const int64_t n = static_cast<int64_t>(g.src.size());
    std::vector<uint8_t> out(row_bytes(c.t, n));
    quantize_row(c.t, g.src.data(), out.data(), n);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], g.blocks[i]) << "byte " << i;
  }
}

std::vector<float> random_row(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

double rel_rms_error(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * double(a[i] - b[i]);
    den += double(a[i]) * a[i];
  }
  return std::sqrt(num / den);
}

TEST(Quant, ReferenceQuantizersRoundTrip) {
  // Expected relative RMS error of each format on Gaussian data (4-bit ~ 1/10, 6/8-bit less;
  // the simple Q2_K / Q3_K quantizers give ~0.33 / ~0.15).
  const struct {
    DType t;
    double max_err;
  } cases[] = {
      {DType::Q8_0, 0.01}, {DType::Q4_0, 0.12},   {DType::Q4_1, 0.12},   {DType::Q4_K, 0.12},
      {DType::Q5_K, 0.06}, {DType::Q6_K, 0.04},   {DType::F16, 1e-3},    {DType::BF16, 5e-3},
      {DType::Q8_K, 0.01}, {DType::Q5_0, 0.06},   {DType::Q5_1, 0.06},   {DType::Q2_K, 0.45},
      {DType::Q3_K, 0.22}, {DType::IQ4_NL, 0.12}, {DType::IQ4_XS, 0.12}, {DType::MXFP4, 0.2}};
  const int64_t n = 1024;
  const auto x = random_row(n, 7, 0.3f);
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.t)));
    std::vector<uint8_t> q(row_bytes(c.t, n));
    std::vector<float> back(n);
    quantize_row(c.t, x.data(), q.data(), n);
    dequantize_row(c.t, q.data(), back.data(), n);
    const double err = rel_rms_error(x, back);
    EXPECT_LT(err, c.max_err);
    EXPECT_GT(err, 0.0);
  }
}

TEST(Quant, ActivationQ8_0) {
  const int64_t n = 256;
  auto x = random_row(n, 11);
  for (int j = 0; j < 32; ++j) x[32 + j] = 0;  // an all-zero block
  std::vector<int8_t> qs(n);
  std::vector<float> d(n / 32), s(n / 32);
  std::vector<int32_t> xsum(n / 32);
  quantize_act_q8_0(x.data(), n, qs.data(), d.data(), s.data(), xsum.data());
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    int sum = 0, qmax = 0;
    for (int j = 0; j < 32; ++j) {
      amax = std::max(amax, std::fabs(x[b * 32 + j]));
      sum += qs[b * 32 + j];
      qmax = std::max(qmax, std::abs(int(qs[b * 32 + j])));
    }
    EXPECT_EQ(d[b], fp16_to_fp32(fp32_to_fp16(amax / 127.0f)));
    EXPECT_EQ(s[b], fp16_to_fp32(fp32_to_fp16(amax / 127.0f * sum)));
    EXPECT_EQ(xsum[b], sum);
    if (amax > 0) {
      EXPECT_EQ(qmax, 127);
    }
    for (int j = 0; j < 32; ++j) {
      EXPECT_NEAR(d[b] * qs[b * 32 + j], x[b * 32 + j], 0.51f * amax / 127.0f + 1e-3f * amax);
    }
  }
}

TEST(Quant, ActivationQ8_K) {
  const int64_t n = 512;
  auto x = random_row(n, 12);
  x[300] = -9.0f;  // the largest magnitude is negative in the second block
  std::vector<int8_t> qs(n);
  std::vector<float> d(n / 256);
  std::vector<int16_t> bs(n / 16);
  quantize_act_q8_k(x.data(), n, qs.data(), d.data(), bs.data());
  EXPECT_EQ(qs[300], -127);  // GGML scales by -127 / max, so max maps to -127
  EXPECT_GT(d[1], 0.0f);
  for (int64_t b = 0; b < n / 256; ++b) {
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += qs[b * 256 + g * 16 + l];
      EXPECT_EQ(bs[b * 16 + g], sum);
    }
    for (int j = 0; j < 256; ++j)
      EXPECT_NEAR(d[b] * qs[b * 256 + j], x[b * 256 + j], 0.51f * std::fabs(d[b]));
  }
}

}  // namespace
}  // namespace vt::cpu

namespace vt::cpu {
namespace {

// The vectorized activation quantizers must equal the scalar ones bit for bit (rounding
// ties, zero blocks, and the sign of the largest-magnitude element included).
TEST(Quant, ActivationQuantizersAgreeAcrossIsas) {
  const int64_t n = 1024;
  auto x = random_row(n, 13);
  for (int j = 0; j < 256; ++j) x[256 + j] = 0;               // zero Q8_K and Q8_0 blocks
  for (int j = 0; j < 32; ++j) x[512 + j] = (j - 16) * 0.5f;  // x * id hits .5 ties
  x[600] = -9.0f;                                             // negative max...
  x[601] = 9.0f;                                              // ...tied in magnitude
  std::vector<int8_t> q0(n), q1(n);
  std::vector<float> d0(n / 32), d1(n / 32), s0(n / 32), s1(n / 32);
  std::vector<int16_t> b0(n / 16), b1(n / 16);
  std::vector<int32_t> xs0(n / 32), xs1(n / 32);
  // Hardware support, not isa(): VT_ISA must not turn this comparison off.
  const bool avx2 = hardware_isa() != Isa::kScalar;
  const bool avx512 = hardware_isa() == Isa::kAvx512;
  if (!avx2) GTEST_SKIP() << "no SIMD path on this CPU";
  quantize_act_q8_0(x.data(), n, q0.data(), d0.data(), s0.data(), xs0.data());
  for (int k = 0; k < (avx512 ? 2 : 1); ++k) {
    (k ? quantize_act_q8_0_avx512 : quantize_act_q8_0_avx2)(x.data(), n, q1.data(), d1.data(),
                                                            s1.data(), xs1.data());
    EXPECT_EQ(q0, q1);
    EXPECT_EQ(xs0, xs1);
    EXPECT_EQ(0, std::memcmp(d0.data(), d1.data(), d0.size() * 4));
    EXPECT_EQ(0, std::memcmp(s0.data(), s1.data(), s0.size() * 4));
  }
  quantize_act_q8_k(x.data(), n, q0.data(), d0.data(), b0.data());
  for (int k = 0; k < (avx512 ? 2 : 1); ++k) {
    (k ? quantize_act_q8_k_avx512 : quantize_act_q8_k_avx2)(x.data(), n, q1.data(), d1.data(),
                                                            b1.data());
    EXPECT_EQ(q0, q1);
    EXPECT_EQ(0, std::memcmp(d0.data(), d1.data(), (n / 256) * 4));
    EXPECT_EQ(b0, b1);
  }
}

// A NaN or infinity in one block (a broken checkpoint's activations) stays in that block:
// on every ISA the other blocks come out as the scalar loop makes them.
TEST(Quant, ActivationQ8_KNonFiniteBlockStaysInItsBlock) {
  const int64_t n = 768;
  auto x = random_row(n, 17);
  // In the last block, at both ends of it, beside an infinity.
  for (int j : {0, 7, 250, 255}) x[512 + j] = std::numeric_limits<float>::quiet_NaN();
  x[512 + 200] = std::numeric_limits<float>::infinity();
  std::vector<int8_t> q0(n), q1(n);
  std::vector<float> d0(n / 256), d1(n / 256);
  std::vector<int16_t> b0(n / 16), b1(n / 16);
  quantize_act_q8_k(x.data(), n, q0.data(), d0.data(), b0.data());
  const bool avx2 = hardware_isa() != Isa::kScalar;
  const bool avx512 = hardware_isa() == Isa::kAvx512;
  if (!avx2) GTEST_SKIP() << "no SIMD path on this CPU";
  for (int k = 0; k < (avx512 ? 2 : 1); ++k) {
    (k ? quantize_act_q8_k_avx512 : quantize_act_q8_k_avx2)(x.data(), n, q1.data(), d1.data(),
                                                            b1.data());
    for (int blk : {0, 1}) {
      EXPECT_TRUE(
          std::equal(q0.begin() + 256 * blk, q0.begin() + 256 * (blk + 1), q1.begin() + 256 * blk));
      EXPECT_EQ(0, std::memcmp(&d0[blk], &d1[blk], 4));
      EXPECT_TRUE(
          std::equal(b0.begin() + 16 * blk, b0.begin() + 16 * (blk + 1), b1.begin() + 16 * blk));
    }
  }
}

}  // namespace
}  // namespace vt::cpu
