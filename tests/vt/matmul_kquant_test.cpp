// K-quant (Q4_K / Q5_K / Q6_K) products in depth: the packed kernels of every ISA against
// the exact value of the quantized product (computed in double from the blocks' integer
// parts) within the error bound of matmul_internal.h's contract, bit-identical to the
// scalar row-major reference, at row counts that leave a partial 16-row group, at every
// token count 1..67 (every tile and tail shape), on random block bytes (all scale bit
// patterns) and on the formats' extremes (largest scales, values and activations, where an
// int16 intermediate would saturate or an int32 overflow). Also the packed layout's round
// trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isa_paths.h"
#include "vt/cpu/kernels.h"
#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {
namespace {

const DType kKTypes[] = {DType::Q4_K, DType::Q5_K, DType::Q6_K};

// Element e of a row as w = a - m: a = d * scale * q (Q6_K: q - 32), m = dmin * min (0 for
// Q6_K), decoded here from the GGML block definitions independently of the library.
void decode(DType t, const uint8_t* row, int64_t cols, std::vector<double>& a,
            std::vector<double>& m) {
  a.assign(cols, 0);
  m.assign(cols, 0);
  const size_t bb = dtype_info(t).block_bytes;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const uint8_t* blk = row + b * bb;
    if (t == DType::Q6_K) {
      const auto& q = *reinterpret_cast<const BlockQ6_K*>(blk);
      const double d = fp16_to_fp32(q.d);
      for (int e = 0; e < 256; ++e) {
        const int h = e / 128, k = (e % 128) / 32, l = e % 32;
        const int lo = (q.ql[64 * h + l + 32 * (k & 1)] >> (4 * (k / 2))) & 15;
        const int hi = (q.qh[32 * h + l] >> (2 * k)) & 3;
        a[256 * b + e] = d * q.scales[e / 16] * ((lo | hi << 4) - 32);
      }
      continue;
    }
    uint16_t dh, mh;
    std::memcpy(&dh, blk, 2);
    std::memcpy(&mh, blk + 2, 2);
    const uint8_t* sc = blk + 4;
    const uint8_t* qh = t == DType::Q5_K ? blk + 16 : nullptr;
    const uint8_t* qs = blk + (t == DType::Q5_K ? 48 : 16);
    for (int j = 0; j < 8; ++j) {
      const int s = j < 4 ? sc[j] & 63 : (sc[j + 4] & 15) | (sc[j - 4] >> 6) << 4;
      const int mn = j < 4 ? sc[j + 4] & 63 : (sc[j + 4] >> 4) | (sc[j] >> 6) << 4;
      for (int l = 0; l < 32; ++l) {
        int q = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
        if (qh) q |= ((qh[l] >> j) & 1) << 4;
        a[256 * b + 32 * j + l] = double(fp16_to_fp32(dh)) * s * q;
        m[256 * b + 32 * j + l] = double(fp16_to_fp32(mh)) * mn;
      }
    }
  }
}

// A matrix whose GGUF bytes the test controls, with its packed copy.
struct KWeight {
  DType t;
  int64_t rows, cols;
  std::vector<uint8_t> bytes, packed_bytes;
  WeightView view, packed;
  KWeight(DType type, int64_t r, int64_t c, std::vector<uint8_t> b)
      : t(type), rows(r), cols(c), bytes(std::move(b)) {
    view = WeightView{t, rows, cols, bytes.data(), row_bytes(t, cols)};
    packed_bytes.assign(vt::cpu::packed_bytes(view), 0xEE);
    pack_groups(view, 0, pack_group_count(view), packed_bytes.data());
    packed = packed_view(view, packed_bytes.data());
  }
};

// Random block bytes: every bit pattern of scales and quants, fp16 d / dmin in [2^-10, 2^-6).
std::vector<uint8_t> random_blocks(DType t, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(rows * row_bytes(t, cols));
  for (auto& x : v) x = static_cast<uint8_t>(rng());
  const size_t bb = dtype_info(t).block_bytes;
  auto half = [&] { return static_cast<uint16_t>(0x1800 + rng() % 0x1000); };
  for (size_t off = 0; off < v.size(); off += bb) {
    const uint16_t d = half(), dm = half();
    if (t == DType::Q6_K) {
      std::memcpy(&v[off + 208], &d, 2);
    } else {
      std::memcpy(&v[off], &d, 2);
      std::memcpy(&v[off + 2], &dm, 2);
    }
  }
  return v;
}

// Checks every ISA and both layouts against the exact product and each other for the
// tokens of x (n_tok rows of cols floats).
void check_all(const KWeight& w, const std::vector<float>& x, int64_t n_tok, ThreadPool& pool,
               const std::string& what) {
  const int64_t cols = w.cols, rows = w.rows, nb = cols / 256;
  // The activation as the kernels see it.
  std::vector<int8_t> qs(n_tok * cols);
  std::vector<float> d(n_tok * nb);
  std::vector<int16_t> bs(n_tok * nb * 16);
  for (int64_t k = 0; k < n_tok; ++k)
    quantize_act_q8_k(x.data() + k * cols, cols, qs.data() + k * cols, d.data() + k * nb,
                      bs.data() + k * nb * 16);
  std::vector<double> exact(n_tok * rows), tol(n_tok * rows);
  std::vector<double> a, m;
  for (int64_t r = 0; r < rows; ++r) {
    decode(w.t, w.bytes.data() + r * w.view.row_stride, cols, a, m);
    for (int64_t k = 0; k < n_tok; ++k) {
      double sum = 0, mag = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const double xv = double(d[k * nb + c / 256]) * qs[k * cols + c];
        sum += (a[c] - m[c]) * xv;
        mag += (std::fabs(a[c]) + std::fabs(m[c])) * std::fabs(xv);
      }
      // matmul_internal.h: one rounding per fma of a super-block's sub-block sum, per
      // d * d_x and per fma of the chain, each at most 2^-24 relative to its terms.
      const int n_sub = w.t == DType::Q6_K ? 16 : 8;
      exact[k * rows + r] = sum;
      tol[k * rows + r] = (n_sub + 2.0 * nb + 3) * std::ldexp(mag, -24) + 1e-30;
    }
  }
  std::vector<float> first;
  for (Isa i : hardware_isas()) {
    for (const WeightView* v : {&w.view, &w.packed}) {
      SCOPED_TRACE(what + " " + isa_name(i) + (v->packed ? " packed" : " row-major") +
                   " n_tok=" + std::to_string(n_tok));
      const int64_t ldy = rows + 3;
      std::vector<float> y(n_tok * ldy, -7.0f);
      matmul_isa(i, *v, x.data(), cols, n_tok, y.data(), ldy, pool);
      for (int64_t k = 0; k < n_tok; ++k) {
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_NEAR(y[k * ldy + r], exact[k * rows + r], tol[k * rows + r])
              << "tok " << k << " row " << r;
        for (int64_t r = rows; r < ldy; ++r) ASSERT_EQ(y[k * ldy + r], -7.0f);
      }
      if (first.empty())
        first = y;
      else
        ASSERT_EQ(0, std::memcmp(first.data(), y.data(), y.size() * sizeof(float)));
    }
  }
}

std::vector<float> randn(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

TEST(KQuant, RandomBlocksEveryTokenCount) {
  ThreadPool pool(2);
  const int64_t cols = 768;  // 3 super-blocks
  // 2 full groups + 5 rows, and + 13 rows (a last group whose second 8-row half is partial:
  // the AVX2 one-token tiles and the decoded many-token tiles of 16+ tokens run both halves
  // at once; 22 and 23 tokens end in a 6- and a 7-token tail).
  for (int64_t rows : {37, 45})
    for (DType t : kKTypes) {
      const KWeight w(t, rows, cols, random_blocks(t, rows, cols, 17));
      const auto x = randn(67 * cols, 5);
      std::vector<int64_t> counts;
      for (int64_t n = 1; n <= (rows == 37 ? 67 : 9); ++n) counts.push_back(n);
      if (rows == 45) counts.insert(counts.end(), {16, 22, 23});
      for (int64_t n : counts) {
        check_all(w, x, n, pool, std::string(dtype_name(t)) + " rows " + std::to_string(rows));
        if (HasFatalFailure()) return;
      }
    }
}

// Largest scales and values against +-127 activations: the sums an int16 lane would
// saturate on (AVX2 maddubs pairs) and the int32 super-block sums at their bound.
TEST(KQuant, ExtremeBlocks) {
  ThreadPool pool(1);
  const int64_t rows = 21, cols = 512;
  for (DType t : kKTypes) {
    std::vector<uint8_t> v(rows * row_bytes(t, cols));
    std::mt19937 rng(3);
    const size_t bb = dtype_info(t).block_bytes;
    for (size_t off = 0, i = 0; off < v.size(); off += bb, ++i) {
      uint8_t* blk = v.data() + off;
      // Row patterns: all bits set (largest scale, min, q), or random with the largest scales.
      std::memset(blk, 0xFF, bb);
      if (i % 3 == 1)
        for (size_t k = 0; k < bb; ++k) blk[k] = static_cast<uint8_t>(rng());
      if (t == DType::Q6_K) {
        for (int g = 0; g < 16; ++g) blk[192 + g] = (g + i) % 2 ? 0x80 : 0x7F;  // -128 / 127
        if (i % 3 == 2) std::memset(blk, 0, 192);  // every q = 0, i.e. -32
        const uint16_t d = 0x3C00;
        std::memcpy(blk + 208, &d, 2);
      } else {
        std::memset(blk + 4, 0xFF, 12);  // sc = m = 63
        const uint16_t d = 0x3C00, dm = i % 2 ? 0x3800 : 0;
        std::memcpy(blk, &d, 2);
        std::memcpy(blk + 2, &dm, 2);
      }
    }
    const KWeight w(t, rows, cols, std::move(v));
    // +1 everywhere (all -127 after Q8_K), -1 everywhere (+127), alternating signs, and +1
    // with one 126/127 per 32 (-127s and one -126): odd sub-block sums, so the fp32 fold's partial
    // sums pass 2^24 where fp32 spacing is 2 and the fold rounds (a kernel that summed the scaled
    // integers exactly and rounded once would differ in the last bit).
    std::vector<float> x(4 * cols);
    for (int64_t c = 0; c < cols; ++c) {
      x[c] = 1.0f;
      x[cols + c] = -1.0f;
      x[2 * cols + c] = (c / 4) % 2 ? -1.0f : 1.0f;
      x[3 * cols + c] = c % 32 ? 1.0f : 126.0f / 127.0f;
    }
    check_all(w, x, 4, pool, std::string(dtype_name(t)) + " extreme");
    if (HasFatalFailure()) return;
  }
}

// Weights from real-valued data (the reference quantizers) through matmul_multi with other
// types, several threads: one activation quantization serves all three K-quants.
TEST(KQuant, QuantizedDataThreadsAndMulti) {
  ThreadPool pool(3);
  const int64_t cols = 1024, n_tok = 11;
  std::vector<KWeight> ws;
  for (DType t : kKTypes) {
    const int64_t rows = t == DType::Q6_K ? 48 : 45;
    const auto f = randn(rows * cols, static_cast<uint32_t>(t));
    std::vector<uint8_t> b(rows * row_bytes(t, cols));
    for (int64_t r = 0; r < rows; ++r)
      quantize_row(t, f.data() + r * cols, b.data() + r * row_bytes(t, cols), cols);
    ws.emplace_back(t, rows, cols, std::move(b));
  }
  const auto x = randn(n_tok * cols, 8);
  std::vector<std::vector<float>> sep(3), multi(3);
  std::vector<MatmulOut> outs;
  for (int i = 0; i < 3; ++i) {
    check_all(ws[i], x, n_tok, pool, std::string(dtype_name(ws[i].t)) + " quantized");
    sep[i].resize(n_tok * ws[i].rows);
    multi[i].resize(n_tok * ws[i].rows);
    matmul(ws[i].packed, x.data(), cols, n_tok, sep[i].data(), ws[i].rows, pool);
    outs.push_back({&ws[i].packed, multi[i].data(), ws[i].rows});
  }
  matmul_multi(outs.data(), 3, x.data(), cols, n_tok, pool);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(0, std::memcmp(sep[i].data(), multi[i].data(), sep[i].size() * sizeof(float))) << i;
}

TEST(KQuant, PackedRowsRoundTripAndPaddingIsZero) {
  for (DType t : kKTypes) {
    for (int64_t cols : {256, 768}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " cols=" + std::to_string(cols));
      const int64_t rows = 37;
      const KWeight w(t, rows, cols, random_blocks(t, rows, cols, 9));
      const size_t rb = row_bytes(t, cols);
      ASSERT_EQ(packed_bytes(w.view), 48 * rb);  // no bytes added: 3 groups of 16 rows
      std::vector<uint8_t> row(rb);
      for (int64_t r = 0; r < rows; ++r) {
        unpack_row(w.packed, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), w.bytes.data() + r * rb, rb)) << r;
      }
      for (int64_t r = rows; r < 48; ++r) {
        unpack_row(w.packed, r, row.data());
        std::vector<float> f(cols);
        dequantize_row(t, row.data(), f.data(), cols);
        for (float v : f) ASSERT_EQ(v, 0.0f) << r;
      }
      // Packing over stale bytes (a reused buffer) gives the same copy.
      std::vector<uint8_t> again(w.packed_bytes.size(), 0x5A);
      pack_groups(w.view, 0, pack_group_count(w.view), again.data());
      ASSERT_EQ(again, w.packed_bytes);
    }
  }
}

}  // namespace
}  // namespace vt::cpu
