// The CUDA kernels' weight decoding (src/vt/cuda/block_decode.h), run on the host: 16-bit
// conversions and every weight type's 32-element units equal vt::cpu's dequantization bit
// for bit, and the matmul's per-output reduction (unit dots, lane partials, warp butterfly)
// computes the dot product to float accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/cuda/block_decode.h"

namespace {

using vt::DType;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(CudaBlockDecode, SixteenBitWideningMatchesCpuForEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto v = static_cast<uint16_t>(h);
    ASSERT_EQ(bits(vt::cuda::fp16_to_fp32(v)), bits(vt::cpu::fp16_to_fp32(v))) << "fp16 " << h;
    ASSERT_EQ(bits(vt::cuda::bf16_to_fp32(v)), bits(vt::cpu::bf16_to_fp32(v))) << "bf16 " << h;
  }
}

TEST(CudaBlockDecode, SixteenBitNarrowingMatchesCpu) {
  std::vector<float> xs = {0.0f,     -0.0f,     1.0f,          -1.0f,          65504.0f,
                           65520.0f, 65519.99f, -65520.0f,     6.1e-5f,        5.96e-8f,
                           2.98e-8f, 2.99e-8f,  1e-10f,        INFINITY,       -INFINITY,
                           NAN,      3.0e38f,   1.0009765625f, 1.00048828125f, 1.000732421875f};
  std::mt19937 rng(7);
  for (int i = 0; i < 1 << 20; ++i) xs.push_back(from_bits(static_cast<uint32_t>(rng())));
  std::normal_distribution<float> nd(0.0f, 3.0f);
  for (int i = 0; i < 1 << 16; ++i) xs.push_back(nd(rng));
  // Every fp16 rounding boundary and its neighbours (ties go to even).
  for (uint32_t h = 0; h < 0x7c00; h += 7) {
    const float a = vt::cpu::fp16_to_fp32(static_cast<uint16_t>(h));
    const float b = vt::cpu::fp16_to_fp32(static_cast<uint16_t>(h + 1));
    const float mid = (a + b) / 2;
    xs.insert(xs.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)});
  }
  for (float x : xs) {
    ASSERT_EQ(vt::cuda::fp32_to_fp16(x), vt::cpu::fp32_to_fp16(x)) << "fp16 of " << bits(x);
    ASSERT_EQ(vt::cuda::fp32_to_bf16(x), vt::cpu::fp32_to_bf16(x)) << "bf16 of " << bits(x);
  }
}

// A row of `cols` elements of type t: quantized from Gaussian values (realistic blocks)
// with every other block overwritten by random bytes whose scale fields stay finite
// (every bit pattern of the quants and sub-scales).
std::vector<uint8_t> random_row(DType t, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(cols);
  for (auto& v : x) v = nd(rng);
  std::vector<uint8_t> row(vt::row_bytes(t, cols));
  vt::cpu::quantize_row(t, x.data(), row.data(), cols);
  if (!vt::is_quantized(t)) return row;
  const auto& info = vt::dtype_info(t);
  auto finite_scale = [&] {
    return vt::cpu::fp32_to_fp16(std::ldexp(nd(rng), static_cast<int>(rng() % 16) - 12));
  };
  for (size_t b = 1; b * info.block_bytes < row.size(); b += 2) {
    uint8_t* p = row.data() + b * info.block_bytes;
    for (int i = 0; i < info.block_bytes; ++i) p[i] = static_cast<uint8_t>(rng());
    auto put = [&](size_t off) {
      const uint16_t s = finite_scale();
      std::memcpy(p + off, &s, 2);
    };
    switch (t) {
      case DType::Q8_0:
      case DType::Q4_0:
        put(0);
        break;
      case DType::Q4_1:
      case DType::Q4_K:
        put(0);
        put(2);
        break;
      case DType::Q6_K:
        put(offsetof(vt::BlockQ6_K, d));
        break;
      default:
        break;
    }
  }
  return row;
}

template <DType T>
void check_units(int64_t cols) {
  std::mt19937 rng(static_cast<unsigned>(T) * 977 + 3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int rep = 0; rep < 40; ++rep) {
    const auto row = random_row(T, cols, rng);
    std::vector<float> ref(cols);
    vt::cpu::dequantize_row(T, row.data(), ref.data(), cols);
    std::vector<float> x(cols);
    for (auto& v : x) v = nd(rng);
    for (int64_t u = 0; u < vt::cuda::units_per_row(cols); ++u) {
      float w[vt::cuda::kUnit];
      vt::cuda::decode_unit<T>(row.data(), u, w);
      float chain = 0.0f;
      for (int i = 0; i < vt::cuda::kUnit; ++i) {
        const float r = ref[u * vt::cuda::kUnit + i];
        ASSERT_EQ(bits(w[i]), bits(r)) << vt::dtype_name(T) << " unit " << u << " elem " << i;
        chain = std::fma(r, x[u * vt::cuda::kUnit + i], chain);
      }
      ASSERT_EQ(bits(vt::cuda::dot_unit(w, x.data() + u * vt::cuda::kUnit)), bits(chain));
    }
    // The whole output as a kernel forms it: lane partials, then the butterfly.
    float lanes[32];
    double exact = 0, mag = 0;
    for (int l = 0; l < 32; ++l)
      lanes[l] = vt::cuda::lane_partial<T>(row.data(), x.data(), cols, l);
    for (int64_t i = 0; i < cols; ++i) {
      exact += static_cast<double>(ref[i]) * x[i];
      mag += std::fabs(static_cast<double>(ref[i]) * x[i]);
    }
    EXPECT_NEAR(vt::cuda::butterfly_sum_host(lanes), exact, 1e-6 * mag + 1e-30)
        << vt::dtype_name(T) << " row dot";
  }
}

TEST(CudaBlockDecode, F32UnitsMatchCpu) { check_units<DType::F32>(256); }
TEST(CudaBlockDecode, F16UnitsMatchCpu) { check_units<DType::F16>(256); }
TEST(CudaBlockDecode, Bf16UnitsMatchCpu) { check_units<DType::BF16>(256); }
TEST(CudaBlockDecode, Q8_0UnitsMatchCpu) { check_units<DType::Q8_0>(1152); }
TEST(CudaBlockDecode, Q4_0UnitsMatchCpu) { check_units<DType::Q4_0>(1152); }
TEST(CudaBlockDecode, Q4_1UnitsMatchCpu) { check_units<DType::Q4_1>(1152); }
TEST(CudaBlockDecode, Q4_KUnitsMatchCpu) { check_units<DType::Q4_K>(1536); }
TEST(CudaBlockDecode, Q6_KUnitsMatchCpu) { check_units<DType::Q6_K>(1536); }

// Every unit of a row is summed by exactly one lane: with one-hot activations the combined
// lane partials are exactly the decoded weight at that element.
TEST(CudaBlockDecode, LanePartialsSkipNothingAndDoubleCountNothing) {
  std::mt19937 rng(11);
  const int64_t cols = 2048;
  const auto row = random_row(DType::Q4_K, cols, rng);
  std::vector<float> ref(cols);
  vt::cpu::dequantize_row(DType::Q4_K, row.data(), ref.data(), cols);
  std::vector<float> x(cols, 0.0f);
  for (int64_t e :
       {int64_t{0}, int64_t{31}, int64_t{32}, int64_t{1023}, int64_t{1024}, int64_t{2047}}) {
    x[e] = 1.0f;
    float lanes[32];
    for (int l = 0; l < 32; ++l)
      lanes[l] = vt::cuda::lane_partial<DType::Q4_K>(row.data(), x.data(), cols, l);
    EXPECT_EQ(bits(vt::cuda::butterfly_sum_host(lanes)), bits(ref[e] + 0.0f)) << "element " << e;
    x[e] = 0.0f;
  }
}

}  // namespace
