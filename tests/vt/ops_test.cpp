// Elementwise, normalization, softmax, RoPE and ops_extra kernels against plain
// double-precision references, on every ISA path this machine can run, at odd sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isa_paths.h"
#include "vt/cpu/kernels.h"
#include "vt/cpu/ops.h"
#include "vt/cpu/ops_extra.h"

namespace vt::cpu {
namespace {

std::vector<float> random_vec(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

const int64_t kOddDims[] = {1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 576, 1001};

TEST(Ops, AvailableIsasMatchTheHardware) {
  auto v = hardware_isas();
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front(), Isa::kScalar);
  EXPECT_EQ(v.back(), hardware_isa());
  EXPECT_EQ(v.size(), static_cast<size_t>(hardware_isa()) + 1);
  // VT_ISA only ever lowers the dispatched ISA.
  EXPECT_LE(static_cast<int>(isa()), static_cast<int>(hardware_isa()));
}

TEST(Ops, RmsNormMatchesDoubleReference) {
  for (Isa is : hardware_isas()) {
    for (int64_t dim : kOddDims) {
      const int64_t rows = 3, ldx = dim + 5, ldy = dim + 3;
      auto x = random_vec(rows * ldx, -3.f, 3.f, 11 + dim);
      auto w = random_vec(dim, 0.5f, 1.5f, 7 + dim);
      std::vector<float> y(rows * ldy, 123.f);
      const float eps = 1e-6f;
      rms_norm_isa(is, x.data(), ldx, w.data(), rows, dim, eps, y.data(), ldy);
      for (int64_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (int64_t i = 0; i < dim; ++i) ss += double(x[r * ldx + i]) * x[r * ldx + i];
        const double inv = 1.0 / std::sqrt(ss / dim + eps);
        for (int64_t i = 0; i < dim; ++i) {
          const double ref = x[r * ldx + i] * inv * w[i];
          ASSERT_NEAR(y[r * ldy + i], ref, 2e-6 * std::max(1.0, std::fabs(ref)))
              << isa_name(is) << " dim " << dim << " row " << r << " i " << i;
        }
        // The padding between rows is not written.
        for (int64_t i = dim; i < ldy && r + 1 < rows; ++i) ASSERT_EQ(y[r * ldy + i], 123.f);
      }
      // In place (x aliases y) gives the same bits.
      std::vector<float> xi = x;
      rms_norm_isa(is, xi.data(), ldx, w.data(), rows, dim, eps, xi.data(), ldx);
      for (int64_t r = 0; r < rows; ++r)
        ASSERT_EQ(0, std::memcmp(&xi[r * ldx], &y[r * ldy], dim * sizeof(float))) << isa_name(is);
    }
  }
}

// Cohere's LayerNorm (no bias): rows with a large common offset, where subtracting the mean
// first matters (a one-pass E[x^2] - E[x]^2 would lose the variance).
TEST(Ops, LayerNormMatchesDoubleReference) {
  for (Isa is : hardware_isas()) {
    for (int64_t dim : kOddDims) {
      const int64_t rows = 3, ldx = dim + 5, ldy = dim + 3;
      auto x = random_vec(rows * ldx, -3.f, 3.f, 31 + dim);
      for (int64_t i = 0; i < ldx; ++i) x[ldx + i] += 40.f;  // row 1 off-centre
      auto w = random_vec(dim, 0.5f, 1.5f, 37 + dim);
      std::vector<float> y(rows * ldy, 123.f);
      const float eps = 1e-5f;
      layer_norm_isa(is, x.data(), ldx, w.data(), rows, dim, eps, y.data(), ldy);
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < dim; ++i) mean += x[r * ldx + i];
        mean /= dim;
        for (int64_t i = 0; i < dim; ++i) var += (x[r * ldx + i] - mean) * (x[r * ldx + i] - mean);
        const double inv = 1.0 / std::sqrt(var / dim + eps);
        for (int64_t i = 0; i < dim; ++i) {
          const double ref = (x[r * ldx + i] - mean) * inv * w[i];
          ASSERT_NEAR(y[r * ldy + i], ref, 2e-5 * std::max(1.0, std::fabs(ref)))
              << isa_name(is) << " dim " << dim << " row " << r << " i " << i;
        }
        for (int64_t i = dim; i < ldy && r + 1 < rows; ++i) ASSERT_EQ(y[r * ldy + i], 123.f);
      }
      std::vector<float> xi = x;  // in place gives the same bits
      layer_norm_isa(is, xi.data(), ldx, w.data(), rows, dim, eps, xi.data(), ldx);
      for (int64_t r = 0; r < rows; ++r)
        ASSERT_EQ(0, std::memcmp(&xi[r * ldx], &y[r * ldy], dim * sizeof(float))) << isa_name(is);
    }
  }
}

TEST(Ops, RmsNormRowIsIndependentOfBatch) {
  for (Isa is : hardware_isas()) {
    const int64_t dim = 577, rows = 9;
    auto x = random_vec(rows * dim, -2.f, 2.f, 5);
    auto w = random_vec(dim, 0.5f, 1.5f, 6);
    std::vector<float> all(rows * dim), one(dim);
    rms_norm_isa(is, x.data(), dim, w.data(), rows, dim, 1e-5f, all.data(), dim);
    for (int64_t r = 0; r < rows; ++r) {
      rms_norm_isa(is, x.data() + r * dim, dim, w.data(), 1, dim, 1e-5f, one.data(), dim);
      ASSERT_EQ(0, std::memcmp(one.data(), &all[r * dim], dim * sizeof(float)));
    }
  }
}

TEST(Ops, SiluMulMatchesDoubleReference) {
  for (Isa is : hardware_isas()) {
    for (int64_t dim : kOddDims) {
      const int64_t n_tok = 2, ldg = dim + 1, ldu = dim + 2, ldo = dim + 3;
      auto g = random_vec(n_tok * ldg, -12.f, 12.f, 100 + dim);
      auto u = random_vec(n_tok * ldu, -2.f, 2.f, 200 + dim);
      // Saturated tails of the sigmoid and exact zero.
      const float special[] = {-100.f, 100.f, 0.f, -87.5f, 88.5f, -1e-7f};
      for (size_t i = 0; i < 6 && i < static_cast<size_t>(dim); ++i) g[i] = special[i];
      std::vector<float> o(n_tok * ldo);
      silu_mul_isa(is, g.data(), ldg, u.data(), ldu, n_tok, dim, o.data(), ldo);
      for (int64_t t = 0; t < n_tok; ++t)
        for (int64_t i = 0; i < dim; ++i) {
          const double gv = g[t * ldg + i];
          const double ref = gv / (1.0 + std::exp(-gv)) * u[t * ldu + i];
          ASSERT_NEAR(o[t * ldo + i], ref, 2e-6 * std::max(1.0, std::fabs(ref)))
              << isa_name(is) << " dim " << dim << " g " << gv;
        }
    }
  }
}

// Gemma's GeGLU against torch's formula, 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) * u,
// in double, including the saturated tails.
TEST(Ops, GeluTanhMulMatchesDoubleReference) {
  for (Isa is : hardware_isas()) {
    for (int64_t dim : kOddDims) {
      const int64_t n_tok = 2, ldg = dim + 1, ldu = dim + 2, ldo = dim + 3;
      auto g = random_vec(n_tok * ldg, -8.f, 8.f, 300 + dim);
      auto u = random_vec(n_tok * ldu, -2.f, 2.f, 400 + dim);
      const float special[] = {-100.f, 100.f, 0.f, -30.f, 30.f, -1e-7f};
      for (size_t i = 0; i < 6 && i < static_cast<size_t>(dim); ++i) g[i] = special[i];
      std::vector<float> o(n_tok * ldo);
      gelu_tanh_mul_isa(is, g.data(), ldg, u.data(), ldu, n_tok, dim, o.data(), ldo);
      for (int64_t t = 0; t < n_tok; ++t)
        for (int64_t i = 0; i < dim; ++i) {
          const double gv = g[t * ldg + i];
          const double z = std::sqrt(2.0 / M_PI) * (gv + 0.044715 * gv * gv * gv);
          const double ref = 0.5 * gv * (1.0 + std::tanh(z)) * u[t * ldu + i];
          ASSERT_NEAR(o[t * ldo + i], ref, 4e-6 * std::max(1.0, std::fabs(ref)))
              << isa_name(is) << " dim " << dim << " g " << gv;
        }
    }
  }
}

// Gemma 2's soft-capping against cap * tanh(x / cap) in double, and the same bits on every ISA.
TEST(Ops, SoftcapMatchesTanhAndEveryIsaAgrees) {
  std::vector<float> first;
  for (Isa is : hardware_isas())
    for (int64_t n : kOddDims) {
      auto x = random_vec(n, -200.f, 200.f, 500 + n);
      const auto x0 = x;
      softcap_isa(is, x.data(), n, 30.f);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(x[i], 30.0 * std::tanh(x0[i] / 30.0), 4e-6 * 30.0)
            << isa_name(is) << " x " << x0[i];
      if (n == 1001) {
        if (first.empty())
          first = x;
        else
          EXPECT_EQ(x, first) << isa_name(is);
      }
    }
}

TEST(Ops, AddInplaceIsExactFloatAdd) {
  for (Isa is : hardware_isas()) {
    for (int64_t n : kOddDims) {
      auto y = random_vec(n + 1, -5.f, 5.f, n);
      auto x = random_vec(n, -5.f, 5.f, n + 1);
      std::vector<float> expect = y;
      for (int64_t i = 0; i < n; ++i) expect[i] = y[i] + x[i];
      add_inplace_isa(is, y.data(), x.data(), n);
      ASSERT_EQ(0, std::memcmp(y.data(), expect.data(), (n + 1) * sizeof(float))) << isa_name(is);
    }
  }
}

TEST(Ops, SoftmaxMatchesDoubleReference) {
  for (Isa is : hardware_isas()) {
    for (int64_t n : kOddDims) {
      auto x = random_vec(n, -20.f, 20.f, 300 + n);
      if (n > 3) x[2] = -200.f;  // underflows to ~0
      std::vector<float> y = x;
      softmax_isa(is, y.data(), n);
      double m = *std::max_element(x.begin(), x.end()), s = 0;
      for (float v : x) s += std::exp(double(v) - m);
      double total = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double ref = std::exp(double(x[i]) - m) / s;
        ASSERT_NEAR(y[i], ref, 2e-6 * std::max(ref, 1e-6))
            << isa_name(is) << " n " << n << " i " << i;
        total += y[i];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
  }
}

void rope_ref(std::vector<float>& x, int64_t ld, int64_t n_tok, int n_heads, int hd,
              const std::vector<int32_t>& pos, const std::vector<float>& inv_freq, RopeStyle st,
              std::vector<double>& out, int rd = 0, float mscale = 1.0f) {
  out.assign(x.size(), 0.0);
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i];  // dims past rd pass through
  const int half = (rd > 0 ? rd : hd) / 2;
  for (int64_t t = 0; t < n_tok; ++t)
    for (int h = 0; h < n_heads; ++h)
      for (int i = 0; i < half; ++i) {
        // The angle is a float product (as HF); only cos/sin are taken in double.
        const float ang = static_cast<float>(pos[t]) * inv_freq[i];
        const double c = std::cos(double(ang)) * mscale, s = std::sin(double(ang)) * mscale;
        const int64_t base = t * ld + int64_t(h) * hd;
        const int64_t a = st == RopeStyle::kNeox ? base + i : base + 2 * i;
        const int64_t b = st == RopeStyle::kNeox ? base + i + half : base + 2 * i + 1;
        out[a] = double(x[a]) * c - double(x[b]) * s;
        out[b] = double(x[b]) * c + double(x[a]) * s;
      }
}

// (head_dim, rotated dims): whole heads (rd 0), and partial rotary as Phi-4-mini's 96 of 128
// and odd splits around the vector widths; the dims past rd must come back untouched. The
// partial shapes also scale the rotated dims (longrope's attention factor on cos / sin).
float rope_mscale(int rd) { return rd > 0 ? 1.1547f : 1.0f; }
const std::pair<int, int> kRopeShapes[] = {{2, 0},   {6, 0},   {16, 0},  {34, 0},
                                           {64, 0},  {80, 0},  {128, 0}, {128, 96},
                                           {32, 24}, {80, 40}, {64, 2},  {34, 18}};

TEST(Ops, RopeMatchesDoubleReference) {
  for (Isa is : hardware_isas()) {
    for (RopeStyle st : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
      for (auto [hd, rd] : kRopeShapes) {
        const int n_heads = 3, r = rd > 0 ? rd : hd;
        const int64_t n_tok = 5, ld = n_heads * hd + 4;
        std::vector<int32_t> pos = {0, 1, 17, 8191, 32767};
        std::vector<float> inv_freq(r / 2);
        for (int i = 0; i < r / 2; ++i)
          inv_freq[i] = static_cast<float>(1.0 / std::pow(10000.0, 2.0 * i / r));
        auto x = random_vec(n_tok * ld, -2.f, 2.f, 400 + hd + rd);
        const auto x0 = x;
        std::vector<double> ref;
        rope_ref(x, ld, n_tok, n_heads, hd, pos, inv_freq, st, ref, rd, rope_mscale(rd));
        rope_isa(is, x.data(), ld, n_tok, n_heads, hd, pos.data(), inv_freq.data(), st, rd,
                 rope_mscale(rd));
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_NEAR(x[i], ref[i], 2e-6 * std::max(1.0, std::fabs(ref[i])))
              << isa_name(is) << (st == RopeStyle::kNeox ? " neox" : " interleaved") << " hd " << hd
              << " rd " << rd << " i " << i;
        // The pass-through dims are bit-identical, and the rotated ones did move.
        size_t moved = 0;
        for (int64_t t = 0; t < n_tok; ++t)
          for (int h = 0; h < n_heads; ++h)
            for (int d = 0; d < hd; ++d) {
              const size_t i = t * ld + int64_t(h) * hd + d;
              if (d >= r) ASSERT_EQ(x[i], x0[i]) << "hd " << hd << " rd " << rd << " d " << d;
              moved += x[i] != x0[i];
            }
        EXPECT_GT(moved, size_t(n_heads * r)) << "hd " << hd << " rd " << rd;
      }
    }
  }
}

TEST(Ops, RopeStylesDifferAndPositionZeroIsIdentity) {
  const int hd = 64;
  std::vector<float> inv_freq(hd / 2);
  for (int i = 0; i < hd / 2; ++i) inv_freq[i] = std::pow(10000.f, -2.f * i / hd);
  auto x = random_vec(hd, -1.f, 1.f, 9);
  std::vector<float> a = x, b = x, z = x;
  int32_t p = 5, p0 = 0;
  rope(a.data(), hd, 1, 1, hd, &p, inv_freq.data(), RopeStyle::kNeox);
  rope(b.data(), hd, 1, 1, hd, &p, inv_freq.data(), RopeStyle::kInterleaved);
  rope(z.data(), hd, 1, 1, hd, &p0, inv_freq.data(), RopeStyle::kNeox);
  EXPECT_NE(0, std::memcmp(a.data(), b.data(), hd * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(z.data(), x.data(), hd * sizeof(float)));
}

// Every ISA computes the same bits as the scalar path (canonical 16-lane sums, one exp, fused
// multiply-adds only where written, no compiler contraction): the model's greedy tokens then
// cannot depend on the machine's vector width.
TEST(Ops, EveryIsaComputesTheScalarBits) {
  const auto all = hardware_isas();
  for (int64_t dim : kOddDims) {
    const int64_t rows = 3;
    auto x = random_vec(rows * dim, -6.f, 6.f, 900 + dim);
    auto w = random_vec(dim, 0.5f, 1.5f, 901 + dim);
    auto u = random_vec(rows * dim, -2.f, 2.f, 902 + dim);
    std::vector<std::vector<float>> norm, lnorm, silu, gelu, soft;
    for (Isa is : all) {
      std::vector<float> y(rows * dim), ln(rows * dim), o(rows * dim), ge(rows * dim),
          sm(x.begin(), x.begin() + dim);
      rms_norm_isa(is, x.data(), dim, w.data(), rows, dim, 1e-6f, y.data(), dim);
      layer_norm_isa(is, x.data(), dim, w.data(), rows, dim, 1e-5f, ln.data(), dim);
      lnorm.push_back(ln);
      silu_mul_isa(is, x.data(), dim, u.data(), dim, rows, dim, o.data(), dim);
      gelu_tanh_mul_isa(is, x.data(), dim, u.data(), dim, rows, dim, ge.data(), dim);
      softmax_isa(is, sm.data(), dim);
      norm.push_back(y);
      silu.push_back(o);
      gelu.push_back(ge);
      soft.push_back(sm);
    }
    for (size_t i = 1; i < all.size(); ++i) {
      EXPECT_EQ(norm[i], norm[0]) << "rms_norm " << isa_name(all[i]) << " dim " << dim;
      EXPECT_EQ(lnorm[i], lnorm[0]) << "layer_norm " << isa_name(all[i]) << " dim " << dim;
      EXPECT_EQ(silu[i], silu[0]) << "silu_mul " << isa_name(all[i]) << " dim " << dim;
      EXPECT_EQ(gelu[i], gelu[0]) << "gelu_tanh_mul " << isa_name(all[i]) << " dim " << dim;
      EXPECT_EQ(soft[i], soft[0]) << "softmax " << isa_name(all[i]) << " dim " << dim;
    }
  }
  for (RopeStyle st : {RopeStyle::kNeox, RopeStyle::kInterleaved})
    for (auto [hd, rd] : kRopeShapes) {
      const int n_heads = 3, r = rd > 0 ? rd : hd;
      const int64_t n_tok = 4, ld = n_heads * hd;
      std::vector<int32_t> pos = {0, 3, 1000, 32767};
      std::vector<float> inv_freq(r / 2);
      for (int i = 0; i < r / 2; ++i)
        inv_freq[i] = static_cast<float>(1.0 / std::pow(10000.0, 2.0 * i / r));
      const auto x0 = random_vec(n_tok * ld, -2.f, 2.f, 950 + hd + rd);
      std::vector<float> first;
      for (Isa is : all) {
        auto x = x0;
        rope_isa(is, x.data(), ld, n_tok, n_heads, hd, pos.data(), inv_freq.data(), st, rd,
                 rope_mscale(rd));
        if (first.empty())
          first = x;
        else
          EXPECT_EQ(x, first) << "rope " << isa_name(is) << " hd " << hd << " rd " << rd;
      }
    }
}

TEST(OpsExtra, Argmax) {
  const float a[] = {1.f, 3.f, -2.f, 3.f, 0.f};
  EXPECT_EQ(argmax(a, 5), 1);  // first of the tied maxima
  const float b[] = {NAN, -1.f, -0.5f};
  EXPECT_EQ(argmax(b, 3), 2);
  const float c[] = {-INFINITY};
  EXPECT_EQ(argmax(c, 1), 0);
  auto r = random_vec(1001, -1.f, 1.f, 3);
  EXPECT_EQ(argmax(r.data(), 1001), std::max_element(r.begin(), r.end()) - r.begin());
  // Long rows take the vector path: NaNs never win, the first of tied maxima does, tails count.
  auto v = random_vec(49157, -1.f, 1.f, 4);
  v[7] = NAN;
  v[30000] = 2.f;
  v[40001] = 2.f;
  EXPECT_EQ(argmax(v.data(), 49157), 30000);
  v[49156] = 3.f;
  EXPECT_EQ(argmax(v.data(), 49157), 49156);
  std::vector<float> nans(100, NAN);
  EXPECT_EQ(argmax(nans.data(), 100), 0);
  // Every ISA, vector length and tail against the scalar rule (first maximum, NaN never wins, a
  // leading NaN loses to anything), with NaNs, ties and -inf planted.
  auto rule = [](const std::vector<float>& x) {
    int64_t best = 0;
    for (int64_t i = 1; i < static_cast<int64_t>(x.size()); ++i)
      if (x[i] > x[best] || (std::isnan(x[best]) && !std::isnan(x[i]))) best = i;
    return best;
  };
  Isa isas[3];
  const int n_isas = available_isas(isas);
  for (int n = 1; n < 64 + 40; ++n)
    for (int rep = 0; rep < 4; ++rep) {
      auto w = random_vec(n, -1.f, 1.f, 100 * n + rep);
      for (int i = rep; i < n; i += 7) w[i] = rep == 2 ? -INFINITY : std::round(w[i] * 2);
      if (rep & 1) w[0] = w[n - 1 - n / 3] = NAN;  // a leading one, and one in a late vector
      if (rep == 3) w[n - 1] = 5.f;
      for (int k = 0; k < n_isas; ++k)
        ASSERT_EQ(argmax_isa(isas[k], w.data(), n), rule(w))
            << isa_name(isas[k]) << " n " << n << " rep " << rep;
    }
}

TEST(OpsExtra, AddBiasAndScaleAdd) {
  const int64_t dim = 37, ld = 40, n_tok = 3;
  auto y = random_vec(n_tok * ld, -1.f, 1.f, 1);
  auto bias = random_vec(dim, -1.f, 1.f, 2);
  std::vector<float> y0 = y;
  add_bias(y.data(), ld, n_tok, bias.data(), dim);
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t i = 0; i < ld; ++i)
      ASSERT_EQ(y[t * ld + i], i < dim ? y0[t * ld + i] + bias[i] : y0[t * ld + i]);
  auto x = random_vec(dim, -1.f, 1.f, 4);
  std::vector<float> z = y0;
  scale_add(z.data(), x.data(), 0.37f, dim);
  for (int64_t i = 0; i < dim; ++i) {
    volatile float p = x[i] * 0.37f;
    ASSERT_EQ(z[i], y0[i] + p);
  }
  EXPECT_EQ(z[dim], y0[dim]);
}

TEST(OpsExtra, TopkSoftmax) {
  for (int n : {4, 8, 60, 128}) {
    for (int k : {1, 2, 4}) {
      auto lg = random_vec(n, -4.f, 4.f, 10 * n + k);
      lg[n - 1] = lg[0];  // a tie: the lower index must come first
      for (bool renorm : {false, true}) {
        std::vector<int32_t> ids(k);
        std::vector<float> w(k);
        topk_softmax(lg.data(), n, k, renorm, ids.data(), w.data());
        std::vector<double> p(n);
        double m = *std::max_element(lg.begin(), lg.end()), s = 0;
        for (int e = 0; e < n; ++e) s += p[e] = std::exp(double(lg[e]) - m);
        for (auto& v : p) v /= s;
        std::vector<int> order(n);
        for (int e = 0; e < n; ++e) order[e] = e;
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lg[a] > lg[b]; });
        double sel = 0;
        for (int j = 0; j < k; ++j) sel += p[order[j]];
        for (int j = 0; j < k; ++j) {
          ASSERT_EQ(ids[j], order[j]) << "n " << n << " k " << k << " j " << j;
          const double ref = renorm ? p[order[j]] / sel : p[order[j]];
          ASSERT_NEAR(w[j], ref, 1e-6 * std::max(1.0, ref));
        }
      }
    }
  }
}

// GLM-4.5 / DeepSeek-V3 routing against a double-precision restatement of HF
// DeepseekV3TopkRouter: group scores from the two best biased scores, the topk_group best groups
// kept (the rest masked), top-k of the biased scores, weights the unbiased sigmoid scores.
TEST(OpsExtra, TopkSigmoidGroupedMatchesReference) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 2.f), bd(0.f, 0.3f);
  for (int n : {8, 64, 160}) {
    for (int n_group : {1, 4, 8}) {
      if (n % n_group) continue;
      const int gs = n / n_group;
      for (int topk_group : {1, 2, n_group}) {
        if (topk_group > n_group || (topk_group < n_group && gs < 2)) continue;
        for (int k : {1, 2, 8}) {
          if (k > n || k > topk_group * gs) continue;
          for (bool renorm : {false, true}) {
            std::vector<float> lg(n), bias(n);
            for (auto& v : lg) v = nd(rng);
            for (auto& v : bias) v = bd(rng);
            std::vector<int32_t> ids(k);
            std::vector<float> w(k);
            topk_sigmoid_grouped(lg.data(), n, k, bias.data(), n_group, topk_group, renorm, 2.5f,
                                 ids.data(), w.data());
            std::vector<double> s(n), c(n);
            for (int e = 0; e < n; ++e) {
              s[e] = 1.0 / (1.0 + std::exp(-double(lg[e])));
              c[e] = s[e] + bias[e];
            }
            if (topk_group < n_group) {
              std::vector<std::pair<double, int>> gsc;
              for (int g = 0; g < n_group; ++g) {
                std::vector<double> v(c.begin() + g * gs, c.begin() + (g + 1) * gs);
                std::sort(v.rbegin(), v.rend());
                gsc.push_back({v[0] + v[1], g});
              }
              std::stable_sort(gsc.begin(), gsc.end(),
                               [](auto& a, auto& b) { return a.first > b.first; });
              std::vector<bool> keep(n_group, false);
              for (int j = 0; j < topk_group; ++j) keep[gsc[j].second] = true;
              for (int e = 0; e < n; ++e)
                if (!keep[e / gs]) c[e] = -HUGE_VAL;
            }
            std::vector<int> order(n);
            for (int e = 0; e < n; ++e) order[e] = e;
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c[a] > c[b]; });
            double sel = 0;
            for (int j = 0; j < k; ++j) sel += s[order[j]];
            for (int j = 0; j < k; ++j) {
              ASSERT_EQ(ids[j], order[j]) << "n " << n << " groups " << n_group << "/" << topk_group
                                          << " k " << k << " j " << j;
              const double ref = (renorm ? s[order[j]] / sel : s[order[j]]) * 2.5;
              ASSERT_NEAR(w[j], ref, 1e-6 * std::max(1.0, ref));
            }
          }
        }
      }
    }
  }
}

// ERNIE 4.5's routing against a double-precision restatement of HF Ernie4_5_MoeTopKRouter: the
// choice on softmax + bias, the weights the chosen probabilities over their sum.
TEST(OpsExtra, TopkSoftmaxBiasedMatchesReference) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 2.f), bd(0.f, 0.05f);
  for (int n : {4, 8, 64}) {
    for (int k : {1, 2, 6}) {
      if (k > n) continue;
      std::vector<float> lg(n), bias(n);
      for (auto& v : lg) v = nd(rng);
      for (auto& v : bias) v = bd(rng);
      std::vector<int32_t> ids(k);
      std::vector<float> w(k);
      topk_softmax_biased(lg.data(), n, k, bias.data(), ids.data(), w.data());
      std::vector<double> p(n), c(n);
      double m = *std::max_element(lg.begin(), lg.end()), s = 0;
      for (int e = 0; e < n; ++e) s += p[e] = std::exp(double(lg[e]) - m);
      for (int e = 0; e < n; ++e) c[e] = (p[e] /= s) + bias[e];
      std::vector<int> order(n);
      for (int e = 0; e < n; ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c[a] > c[b]; });
      double sel = 0;
      for (int j = 0; j < k; ++j) sel += p[order[j]];
      for (int j = 0; j < k; ++j) {
        ASSERT_EQ(ids[j], order[j]) << "n " << n << " k " << k << " j " << j;
        ASSERT_NEAR(w[j], p[order[j]] / sel, 1e-6);
      }
    }
  }
}

// The group limit decides, not the single best score: group 0 holds the best expert but the
// worse pair, so with one group kept both choices come from group 1.
TEST(OpsExtra, TopkSigmoidGroupedKeepsTheBestPairGroup) {
  const float lg[8] = {4.0f, -4.0f, -4.0f, -4.0f, 2.0f, 2.0f, 1.9f, -4.0f};
  int32_t ids[2];
  float w[2];
  topk_sigmoid_grouped(lg, 8, 2, nullptr, 2, 1, false, 1.0f, ids, w);
  EXPECT_EQ(ids[0], 4);
  EXPECT_EQ(ids[1], 5);
  topk_sigmoid_grouped(lg, 8, 2, nullptr, 2, 2, false, 1.0f, ids, w);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 4);
  // A correction bias moves the choice but not the weight: expert 3 chosen, weighted by
  // sigmoid(-4).
  const float bias[8] = {0, 0, 0, 2.0f, 0, 0, 0, 0};
  topk_sigmoid_grouped(lg, 8, 1, bias, 1, 1, false, 1.0f, ids, w);
  EXPECT_EQ(ids[0], 3);
  EXPECT_FLOAT_EQ(w[0], 1.0f / (1.0f + std::exp(4.0f)));
}

}  // namespace
}  // namespace vt::cpu
