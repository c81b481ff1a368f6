// matmul / matmul_multi / get_rows for every weight type and every ISA the CPU has,
// against a scalar reference (dequantize, then a double-precision dot), plus the
// batch-invariance contract: a row's result is bit-identical whatever the batch size,
// its position in the batch, the thread count, the tile it fell in, or the ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "isa_paths.h"
#include "self_disasm.h"
#include "vt/cpu/kernels.h"
#include "vt/cpu/matmul_half.h"

namespace vt::cpu {
namespace {

std::vector<float> randn(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

// A weight matrix quantized from Gaussian data, rows padded by `pad` bytes; for the
// Q8_0 family also its packed copy (what the model multiplies).
struct Weight {
  std::vector<uint8_t> bytes, packed_bytes;
  WeightView view, packed;
  Weight(DType t, int64_t rows, int64_t cols, uint32_t seed, size_t pad = 0) {
    const size_t rb = row_bytes(t, cols) + pad;
    bytes.assign(rb * rows, 0xEE);
    const auto f = randn(rows * cols, seed, 0.5f);
    for (int64_t r = 0; r < rows; ++r)
      quantize_row(t, f.data() + r * cols, bytes.data() + r * rb, cols);
    view = WeightView{t, rows, cols, bytes.data(), rb};
    if (packable(t)) {
      packed_bytes.assign(vt::cpu::packed_bytes(view), 0xEE);
      pack_groups(view, 0, pack_group_count(view), packed_bytes.data());
      packed = packed_view(view, packed_bytes.data());
    }
  }
  // The views to test: row-major, and packed where the type has it.
  std::vector<const WeightView*> views() const {
    if (packed.packed) return {&view, &packed};
    return {&view};
  }
  std::vector<float> row(int64_t r) const {
    std::vector<float> out(view.cols);
    dequantize_row(view.dtype, bytes.data() + r * view.row_stride, out.data(), view.cols);
    return out;
  }
};

int64_t block_of(DType t) { return dtype_info(t).block_elems; }

// Reference for one token: double-precision dot of the dequantized weight row with the
// activation as the kernel sees it (quantized to q8_0 / q8_K for quantized weights; for
// Q4_1 the block-sum term uses the fp16-rounded s like GGML's q8_1).
std::vector<double> reference(const Weight& w, const float* x, double* abs_sum) {
  const WeightView& v = w.view;
  const DType fmt = act_format(v.dtype);
  std::vector<float> xa(x, x + v.cols);
  std::vector<int8_t> qs(v.cols);
  std::vector<float> d(v.cols), s(v.cols);
  std::vector<int16_t> bs(v.cols);
  std::vector<int32_t> xsum(v.cols);
  if (fmt == DType::Q8_0) {
    quantize_act_q8_0(x, v.cols, qs.data(), d.data(), s.data(), xsum.data());
    for (int64_t i = 0; i < v.cols; ++i) xa[i] = d[i / 32] * qs[i];
  } else if (fmt == DType::Q8_K) {
    quantize_act_q8_k(x, v.cols, qs.data(), d.data(), bs.data());
    for (int64_t i = 0; i < v.cols; ++i) xa[i] = d[i / 256] * qs[i];
  } else if (fmt == DType::BF16 && bf16_round_activations()) {
    for (int64_t i = 0; i < v.cols; ++i) xa[i] = bf16_to_fp32(bf16_act_round(x[i]));
  }
  std::vector<double> y(v.rows);
  *abs_sum = 0;
  for (int64_t r = 0; r < v.rows; ++r) {
    double acc = 0, as = 0;
    if (v.dtype == DType::Q4_1 || v.dtype == DType::Q5_1) {
      const uint8_t* row = w.bytes.data() + r * v.row_stride;
      for (int64_t b = 0; b < v.cols / 32; ++b) {
        int q[32];
        double dw, mw;
        if (v.dtype == DType::Q4_1) {
          const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
          for (int j = 0; j < 16; ++j) q[j] = blk.qs[j] & 0xF, q[j + 16] = blk.qs[j] >> 4;
          dw = fp16_to_fp32(blk.d), mw = fp16_to_fp32(blk.m);
        } else {
          const auto& blk = reinterpret_cast<const BlockQ5_1*>(row)[b];
          uint32_t qh;
          std::memcpy(&qh, blk.qh, 4);
          for (int j = 0; j < 16; ++j) {
            q[j] = (blk.qs[j] & 0xF) | ((qh >> j) & 1) << 4;
            q[j + 16] = (blk.qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4;
          }
          dw = fp16_to_fp32(blk.d), mw = fp16_to_fp32(blk.m);
        }
        int64_t isum = 0;
        for (int j = 0; j < 32; ++j) isum += q[j] * qs[b * 32 + j];
        acc += dw * d[b] * double(isum) + mw * double(s[b]);
        as += std::fabs(dw * d[b] * double(isum)) + std::fabs(mw * s[b]);
      }
    } else {
      const auto wr = w.row(r);
      for (int64_t c = 0; c < v.cols; ++c) {
        acc += double(wr[c]) * xa[c];
        as += std::fabs(double(wr[c]) * xa[c]);
      }
    }
    y[r] = acc;
    *abs_sum = std::max(*abs_sum, as);
  }
  return y;
}

const DType kTypes[] = {DType::F32,  DType::F16,    DType::BF16,   DType::Q8_0,
                        DType::Q4_0, DType::Q4_1,   DType::Q4_K,   DType::Q5_K,
                        DType::Q6_K, DType::Q5_0,   DType::Q5_1,   DType::Q2_K,
                        DType::Q3_K, DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4};

std::vector<int64_t> col_cases(DType t) {
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) return {16, 37, 100, 263};
  if (block_of(t) == 32) return {32, 96, 288, 640};
  return {256, 768};
}

TEST(Matmul, MatchesReferenceAllTypesAllIsas) {
  ThreadPool pool(2);
  const int64_t row_cases[] = {1, 5, 17, 37};
  const int64_t tok_cases[] = {1, 3, 8, 37};
  for (DType t : kTypes) {
    for (int64_t cols : col_cases(t)) {
      for (int64_t rows : row_cases) {
        const Weight w(t, rows, cols, static_cast<uint32_t>(rows * 131 + cols));
        for (int64_t n_tok : tok_cases) {
          const int64_t ldx = cols + 3, ldy = rows + 2;
          const auto x = randn(n_tok * ldx, static_cast<uint32_t>(n_tok + cols));
          std::vector<std::vector<double>> ref(n_tok);
          std::vector<double> tol(n_tok);
          for (int64_t k = 0; k < n_tok; ++k) {
            double abs_sum;
            ref[k] = reference(w, x.data() + k * ldx, &abs_sum);
            tol[k] = 1e-6 * abs_sum * std::sqrt(double(cols)) + 1e-6;
            // BF16 / F16: one sequential fp32 chain per row (matmul_half.h), whose bound
            // is gamma_n = n u / (1 - n u) times the sum of |terms|.
            const double steps = double(cols + 1), u = 0x1p-24;
            if (is_half(t)) tol[k] = steps * u / (1 - steps * u) * abs_sum;
          }
          std::vector<float> first;
          for (Isa i : hardware_isas()) {
            for (const WeightView* view : w.views()) {
              SCOPED_TRACE(std::string(dtype_name(t)) + " " + isa_name(i) +
                           (view->packed ? " packed" : "") + " rows=" + std::to_string(rows) +
                           " cols=" + std::to_string(cols) + " n_tok=" + std::to_string(n_tok));
              std::vector<float> y(n_tok * ldy, -7.0f);
              matmul_isa(i, *view, x.data(), ldx, n_tok, y.data(), ldy, pool);
              for (int64_t k = 0; k < n_tok; ++k) {
                for (int64_t r = 0; r < rows; ++r)
                  ASSERT_NEAR(y[k * ldy + r], ref[k][r], tol[k]) << "tok " << k << " row " << r;
                for (int64_t r = rows; r < ldy; ++r) ASSERT_EQ(y[k * ldy + r], -7.0f);
              }
              // The arithmetic is the same on every ISA and layout: results agree bit for bit.
              if (first.empty())
                first = y;
              else
                ASSERT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(float)));
            }
          }
        }
      }
    }
  }
}

// Every quant at its largest value against +-127 activations: the AVX2 kernels keep
// maddubs's int16 pair sums in int16 across several chunks (4-bit weights: a whole block,
// 5-bit: half), so this is where a run too long for the bit width would overflow. The
// result must still be the exact reference, on every ISA bit for bit.
TEST(Matmul, ExtremeBlocksAtTheInt16Bounds) {
  ThreadPool pool(1);
  const int64_t rows = 19, cols = 256;
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::MXFP4}) {
    Weight w(t, rows, cols, 7);
    const size_t bb = dtype_info(t).block_bytes;
    for (size_t off = 0, i = 0; off < w.bytes.size(); off += bb, ++i) {
      uint8_t* blk = w.bytes.data() + off;
      std::memset(blk, 0xFF, bb);  // every q = 15 (31 with the fifth bit)
      if (t == DType::MXFP4) {
        // Every value +12 (q = 7) or -12 (q = 15) by block, scale 2^(128 - 128) = 1.
        std::memset(blk, i % 2 ? 0xFF : 0x77, bb);
        blk[0] = 128;
        continue;
      }
      const uint16_t one = 0x3C00, half = 0x3800;
      std::memcpy(blk, &one, 2);
      if (t == DType::Q4_1 || t == DType::Q5_1) std::memcpy(blk + 2, i % 2 ? &half : &one, 2);
    }
    pack_groups(w.view, 0, pack_group_count(w.view), w.packed_bytes.data());
    // +1 everywhere (+127 after Q8_0), -1 everywhere (-127), alternating signs per 4.
    std::vector<float> x(3 * cols);
    for (int64_t c = 0; c < cols; ++c) {
      x[c] = 1.0f;
      x[cols + c] = -1.0f;
      x[2 * cols + c] = (c / 4) % 2 ? -1.0f : 1.0f;
    }
    std::vector<float> first;
    for (Isa i : hardware_isas()) {
      for (const WeightView* view : w.views()) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " " + isa_name(i) +
                     (view->packed ? " packed" : ""));
        std::vector<float> y(3 * rows);
        matmul_isa(i, *view, x.data(), cols, 3, y.data(), rows, pool);
        for (int64_t k = 0; k < 3; ++k) {
          double abs_sum;
          const auto ref = reference(w, x.data() + k * cols, &abs_sum);
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_NEAR(y[k * rows + r], ref[r], 1e-6 * abs_sum) << "tok " << k << " row " << r;
        }
        if (first.empty())
          first = y;
        else
          ASSERT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(float)));
      }
    }
  }
}

// The activation quantization must not be a self-consistent mistake: compare against the
// unquantized input too, with the error bound of 8-bit activations.
TEST(Matmul, CloseToUnquantizedProduct) {
  ThreadPool pool(1);
  for (DType t : kTypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const int64_t rows = 8, cols = 512;
    const Weight w(t, rows, cols, 99);
    const auto x = randn(cols, 5);
    std::vector<float> y(rows);
    matmul(*w.views().back(), x.data(), cols, 1, y.data(), rows, pool);
    for (int64_t r = 0; r < rows; ++r) {
      const auto wr = w.row(r);
      double acc = 0, as = 0;
      for (int64_t c = 0; c < cols; ++c) {
        acc += double(wr[c]) * x[c];
        as += std::fabs(double(wr[c]) * x[c]);
      }
      // BF16 may round activations to bf16 (relative error <= 2^-9 each).
      const double rel = act_format(t) == DType::F32 ? 1e-5
                         : t != DType::BF16          ? 2e-2
                         : bf16_round_activations()  ? 0x1p-8
                                                     : 1e-5;
      EXPECT_NEAR(y[r], acc, rel * as) << "row " << r;
    }
  }
}

TEST(Matmul, BatchInvariantAcrossBatchSizeThreadsAndIsa) {
  ThreadPool pool1(1), pool2(2), pool3(3);
  const int64_t rows = 45, n_tok = 37;
  for (DType t : kTypes) {
    const int64_t cols = block_of(t) == 256 ? 512 : block_of(t) == 32 ? 160 : 150;
    const Weight w(t, rows, cols, 3);
    const auto x = randn(n_tok * cols, 4);
    for (Isa i : hardware_isas()) {
      for (const WeightView* view : w.views()) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " " + isa_name(i) +
                     (view->packed ? " packed" : ""));
        std::vector<float> batch(n_tok * rows), batch2(n_tok * rows);
        matmul_isa(i, *view, x.data(), cols, n_tok, batch.data(), rows, pool1);
        matmul_isa(i, *view, x.data(), cols, n_tok, batch2.data(), rows, pool2);
        ASSERT_EQ(0, std::memcmp(batch.data(), batch2.data(), batch.size() * sizeof(float)));
        matmul_isa(i, *view, x.data(), cols, n_tok, batch2.data(), rows, pool3);
        ASSERT_EQ(0, std::memcmp(batch.data(), batch2.data(), batch.size() * sizeof(float)));
        for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{17}, n_tok - 1}) {
          std::vector<float> one(rows);
          matmul_isa(i, *view, x.data() + k * cols, cols, 1, one.data(), rows, pool2);
          ASSERT_EQ(0, std::memcmp(one.data(), batch.data() + k * rows, rows * sizeof(float)))
              << "token " << k;
          // A sub-range of rows (another tile split) gives the same values too: rows 3..9,
          // or for a packed view rows 16..22 (views start on a group).
          const int64_t first = view->packed ? kPackRows : 3;
          WeightView sub = *view;
          sub.rows = 7;
          sub.data = static_cast<const uint8_t*>(view->data) + first * view->row_stride;
          std::vector<float> part(7);
          matmul_isa(i, sub, x.data() + k * cols, cols, 1, part.data(), 7, pool1);
          ASSERT_EQ(0,
                    std::memcmp(part.data(), batch.data() + k * rows + first, 7 * sizeof(float)));
        }
      }
    }
  }
}

// MXFP4's scales are exact powers of two 2^(e - 128) that the SIMD kernels build from the
// exponent byte with integer ops; e = 0 / 1 are fp32 denormals. Rows whose blocks all carry
// one exponent (the denormals, the first normals, around 1, large) must each match the
// exact product to the chain's rounding, relative to the row's own magnitude, on every ISA
// and layout bit for bit.
TEST(Matmul, Mxfp4EveryScaleClass) {
  ThreadPool pool(2);
  const uint8_t exps[] = {0, 1, 2, 3, 64, 127, 128, 129, 200, 230};
  const int64_t n_e = sizeof(exps), rows = 2 * n_e + 3, cols = 256, n_tok = 5;
  Weight w(DType::MXFP4, rows, cols, 17);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < cols / 32; ++b) w.bytes[r * w.view.row_stride + b * 17] = exps[r % n_e];
  pack_groups(w.view, 0, pack_group_count(w.view), w.packed_bytes.data());
  // Large activations keep d_x near 1, so d_w * d_x stays exact even at e = 0.
  const auto x = randn(n_tok * cols, 23, 100.0f);
  // Per token the exact products and each row's own sum of |terms| (no absolute slack, which
  // would hide a wrong tiny scale).
  std::vector<std::vector<double>> ref(n_tok), row_as(n_tok, std::vector<double>(rows));
  for (int64_t k = 0; k < n_tok; ++k) {
    double unused;
    ref[k] = reference(w, x.data() + k * cols, &unused);
    std::vector<int8_t> qs(cols);
    std::vector<float> d(cols / 32), s(cols / 32);
    std::vector<int32_t> xsum(cols / 32);
    quantize_act_q8_0(x.data() + k * cols, cols, qs.data(), d.data(), s.data(), xsum.data());
    for (int64_t r = 0; r < rows; ++r) {
      const auto wr = w.row(r);
      for (int64_t c = 0; c < cols; ++c)
        row_as[k][r] += std::fabs(double(wr[c]) * d[c / 32] * qs[c]);
      ASSERT_GT(row_as[k][r], 0.0) << "row " << r;
    }
  }
  std::vector<float> first;
  for (Isa i : hardware_isas()) {
    for (const WeightView* view : w.views()) {
      SCOPED_TRACE(std::string(isa_name(i)) + (view->packed ? " packed" : ""));
      std::vector<float> y(n_tok * rows);
      matmul_isa(i, *view, x.data(), cols, n_tok, y.data(), rows, pool);
      for (int64_t k = 0; k < n_tok; ++k)
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_NEAR(y[k * rows + r], ref[k][r], 0x1p-20 * row_as[k][r])
              << "tok " << k << " row " << r << " e " << int(exps[r % n_e]);
      if (first.empty())
        first = y;
      else
        ASSERT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(float)));
    }
  }
}

TEST(Matmul, MultiMatchesSeparateCalls) {
  ThreadPool pool(2);
  const int64_t cols = 512, n_tok = 6;
  const Weight a(DType::Q4_1, 40, cols, 1), b(DType::Q4_K, 24, cols, 2), c(DType::F32, 9, cols, 3),
      d(DType::Q8_0, 33, cols, 4, /*pad=*/6);
  const auto x = randn(n_tok * cols, 8);
  const Weight* ws[] = {&a, &b, &c, &d};
  std::vector<std::vector<float>> sep(4), multi(4);
  std::vector<MatmulOut> outs;
  for (int i = 0; i < 4; ++i) {
    const WeightView& v = *ws[i]->views().back();
    sep[i].resize(n_tok * v.rows);
    multi[i].resize(n_tok * v.rows);
    matmul(v, x.data(), cols, n_tok, sep[i].data(), v.rows, pool);
    outs.push_back({&v, multi[i].data(), v.rows});
  }
  matmul_multi(outs.data(), 4, x.data(), cols, n_tok, pool);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(0, std::memcmp(sep[i].data(), multi[i].data(), sep[i].size() * sizeof(float))) << i;
}

TEST(Matmul, GetRowsEqualsDequantize) {
  const int32_t ids[] = {4, 0, 11, 4};
  for (DType t : kTypes) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const int64_t cols = block_of(t) == 256 ? 256 : 64;
    const Weight w(t, 12, cols, 21);
    const int64_t ld = cols + 5;
    for (const WeightView* view : w.views()) {
      std::vector<float> out(4 * ld);
      get_rows(*view, ids, 4, out.data(), ld);
      for (int i = 0; i < 4; ++i) {
        const auto ref = w.row(ids[i]);
        EXPECT_EQ(0, std::memcmp(ref.data(), out.data() + i * ld, cols * sizeof(float)));
      }
    }
  }
}

TEST(Pack, EveryRowRoundTripsAndPaddingIsZero) {
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL,
                  DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::IQ4_XS}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    ASSERT_TRUE(packable(t));
    const int64_t cols = block_of(t) == 256 ? 512 : 96;
    const Weight w(t, 37, cols, 7, /*pad=*/4);
    const size_t rb = row_bytes(t, cols);
    ASSERT_EQ(packed_bytes(w.view), 48 * rb);  // 37 rows -> 3 groups of 16
    ASSERT_EQ(w.packed.row_stride, rb);
    std::vector<uint8_t> row(rb);
    for (int64_t r = 0; r < 37; ++r) {
      unpack_row(w.packed, r, row.data());
      ASSERT_EQ(0, std::memcmp(row.data(), w.bytes.data() + r * w.view.row_stride, rb)) << r;
    }
    // Rows 37..47 exist only as padding: their scales are zero, so they dequantize to 0.
    for (int64_t r = 37; r < 48; ++r) {
      unpack_row(w.packed, r, row.data());
      std::vector<float> f(cols);
      dequantize_row(t, row.data(), f.data(), cols);
      for (float v : f) ASSERT_EQ(v, 0.0f) << r;
    }
  }
}

// The packed kernels' weight prefetch (GroupPrefetch, matmul_simd.h) is what lets batch-1
// decode stream from DRAM at twice the rate on some hosts, and it changes no result, so only
// the machine code can show it is there: GCC once deleted it as a call of a "pure" function.
// Every ISA's one-token Q6_K / Q4_K tile must hold a prefetch into L2.
TEST(Matmul, PackedKernelsKeepTheirWeightPrefetch) {
  // Every ISA's tile, named as objdump -C prints it -> its prefetcht1 count (-1: not found).
  const char* const kTiles[] = {
      "avx2::(anonymous namespace)::kq6_halves<1, 2, false>",
      "avx2::(anonymous namespace)::kq45_halves<(vt::DType)6, 1, 2, false>",
      "avx512::(anonymous namespace)::kq6_tile<1, false>",
      "avx512::(anonymous namespace)::kq45_tile<(vt::DType)6, 1, false>"};
  std::map<std::string, int> prefetches;
  for (const char* t : kTiles) prefetches[t] = -1;
  std::string fn;
  ASSERT_TRUE(for_each_self_disasm_line([&](const std::string& s) {
    if (is_disasm_function_header(s)) {
      fn.clear();
      for (const char* t : kTiles)
        if (s.find(std::string("vt::cpu::") + t + "(") != std::string::npos) fn = t;
      if (!fn.empty()) prefetches[fn] = 0;
    } else if (!fn.empty() && s.find("prefetcht1") != std::string::npos) {
      ++prefetches[fn];
    }
  })) << "objdump (binutils) failed";
  for (const auto& [name, n] : prefetches) {
    EXPECT_NE(n, -1) << name << " not found in the test binary";
    EXPECT_GT(n, 0) << name << " has no prefetcht1";
  }
}

}  // namespace
}  // namespace vt::cpu
