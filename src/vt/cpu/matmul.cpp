// matmul / matmul_multi / get_rows: activation quantization into per-thread scratch,
// splitting output rows over the thread pool, and dispatch to the per-ISA row kernels.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "vt/cpu/matmul_half.h"

namespace vt::cpu {

namespace {

using RowsFn = void (*)(const WeightView&, const ActView&, int64_t, int64_t, float*, int64_t);

RowsFn rows_fn(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return matmul_rows_avx512;
    case Isa::kAvx2:
      return matmul_rows_avx2;
    default:
      return matmul_rows_scalar;
  }
}

using QuantQ8_0Fn = void (*)(const float*, int64_t, int8_t*, float*, float*, int32_t*);
using QuantQ8_KFn = void (*)(const float*, int64_t, int8_t*, float*, int16_t*);

QuantQ8_0Fn quant_q8_0_fn(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return quantize_act_q8_0_avx512;
    case Isa::kAvx2:
      return quantize_act_q8_0_avx2;
    default:
      return quantize_act_q8_0;
  }
}

QuantQ8_KFn quant_q8_k_fn(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return quantize_act_q8_k_avx512;
    case Isa::kAvx2:
      return quantize_act_q8_k_avx2;
    default:
      return quantize_act_q8_k;
  }
}

// Grow-only scratch for one activation format, owned by the calling thread.
struct ActScratch {
  std::vector<int8_t> qs;
  std::vector<float> d, s;
  std::vector<int16_t> bsums, pairs;
  std::vector<int32_t> xsum;

  template <class T>
  static T* grow(std::vector<T>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
  }
};

// Quantizes x into `fmt` (or views it as float). Tokens are spread over the pool when
// there are enough of them to pay for the extra barrier.
ActView prepare_act(Isa isa, DType fmt, const float* x, int64_t ldx, int64_t n_tok, int64_t cols,
                    ActScratch& sc, ThreadPool& pool, int round = -1) {
  ActView a;
  a.n_tok = n_tok;
  a.cols = cols;
  a.x = x;
  a.ldx = ldx;
  a.fmt = fmt;
  if (fmt == DType::F32) return a;
  if (fmt == DType::BF16) return prepare_act_bf16(isa, x, ldx, n_tok, cols, pool, round);
  const int64_t blk = fmt == DType::Q8_0 ? kQK : kQK_K;
  const int64_t nb = cols / blk;
  a.n_blocks = nb;
  int8_t* qs = ActScratch::grow(sc.qs, static_cast<size_t>(n_tok * cols));
  float* d = ActScratch::grow(sc.d, static_cast<size_t>(n_tok * nb));
  float* s = nullptr;
  int16_t* bsums = nullptr;
  int16_t* pairs = nullptr;
  int32_t* xsum = nullptr;
  if (fmt == DType::Q8_0) {
    s = ActScratch::grow(sc.s, static_cast<size_t>(n_tok * nb));
    xsum = ActScratch::grow(sc.xsum, static_cast<size_t>(n_tok * nb));
  } else {
    bsums = ActScratch::grow(sc.bsums, static_cast<size_t>(n_tok * nb * 16));
    pairs = ActScratch::grow(sc.pairs, static_cast<size_t>(n_tok * nb * 8));
  }
  const QuantQ8_0Fn q8_0 = quant_q8_0_fn(isa);
  const QuantQ8_KFn q8_k = quant_q8_k_fn(isa);
  auto quant = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      if (fmt == DType::Q8_0) {
        q8_0(x + t * ldx, cols, qs + t * cols, d + t * nb, s + t * nb, xsum + t * nb);
        continue;
      }
      int16_t* bs = bsums + t * nb * 16;
      q8_k(x + t * ldx, cols, qs + t * cols, d + t * nb, bs);
      // The 32-element sub-block sums the K-quant tiles' min sums take, once per activation
      // rather than once per product share.
      for (int64_t i = 0; i < nb * 8; ++i)
        pairs[t * nb * 8 + i] = static_cast<int16_t>(bs[2 * i] + bs[2 * i + 1]);
    }
  };
  if (n_tok >= 4 && pool.size() > 1)
    pool.parallel_for(n_tok, quant);
  else
    quant(0, n_tok);
  a.qs = qs;
  a.d = d;
  a.s = s;
  a.xsum = xsum;
  a.bsums = bsums;
  a.bsum_pairs = pairs;
  return a;
}

thread_local ActScratch tl_q8_0;
thread_local ActScratch tl_q8_k;

// Output rows are handed out in units of this many, so each thread's range starts on a
// row-tile boundary of every ISA's kernels.
constexpr int64_t kRowUnit = 16;
// Below this many multiply-adds the barrier costs more than a second thread saves.
constexpr int64_t kMinParallelMacs = 1 << 16;
// Tokens from which a product is shared out dynamically, in this many shares per thread.
constexpr int64_t kDynamicMinTokens = 16;
constexpr int kSharesPerThread = 4;

}  // namespace

void matmul_multi_isa(Isa isa, const MatmulOut* outs, int n_outs, const float* x, int64_t ldx,
                      int64_t n_tok, ThreadPool& pool) {
  if (n_outs <= 0 || n_tok <= 0) return;
  const int64_t cols = outs[0].w->cols;
  // One quantization per activation format present among the outputs.
  ActView acts[4];
  bool need[4] = {false, false, false, false};
  auto fmt_index = [](DType f) {
    return f == DType::F32 ? 0 : f == DType::Q8_0 ? 1 : f == DType::Q8_K ? 2 : 3;
  };
  auto units_of = [&](int i) { return (outs[i].w->rows + kRowUnit - 1) / kRowUnit; };
  int64_t total_units = 0, macs = 0;
  int round = -1;  // the BF16 weights' activation rounding (one model's: all alike)
  for (int i = 0; i < n_outs; ++i) {
    need[fmt_index(act_format(outs[i].w->dtype))] = true;
    if (act_format(outs[i].w->dtype) == DType::BF16 && round < 0) round = outs[i].w->round_act;
    total_units += units_of(i);
    macs += outs[i].w->rows * cols * n_tok;
  }
  if (need[0]) acts[0] = prepare_act(isa, DType::F32, x, ldx, n_tok, cols, tl_q8_0, pool);
  if (need[1]) acts[1] = prepare_act(isa, DType::Q8_0, x, ldx, n_tok, cols, tl_q8_0, pool);
  if (need[2]) acts[2] = prepare_act(isa, DType::Q8_K, x, ldx, n_tok, cols, tl_q8_k, pool);
  if (need[3]) acts[3] = prepare_act(isa, DType::BF16, x, ldx, n_tok, cols, tl_q8_0, pool, round);
  const RowsFn fn = rows_fn(isa);

  auto work = [&](int64_t u0, int64_t u1) {
    int64_t base = 0;
    for (int i = 0; i < n_outs && base < u1; ++i) {
      const WeightView& w = *outs[i].w;
      const int64_t units = units_of(i);
      const int64_t a = std::max(u0, base), b = std::min(u1, base + units);
      if (a < b) {
        const int64_t r0 = (a - base) * kRowUnit, r1 = std::min(w.rows, (b - base) * kRowUnit);
        fn(w, acts[fmt_index(act_format(w.dtype))], r0, r1, outs[i].y, outs[i].ldy);
      }
      base += units;
    }
  };
  if (pool.size() == 1 || macs < kMinParallelMacs) return work(0, total_units);
  // The units are shared out by cost, not rows: fused outputs (q/k/v, gate/up) may mix types
  // (Q4_K_M's Q6_K attn_v beside Q4_K q/k). A few tokens stream the weights, so the cost is
  // their bytes (an even row split had one thread stream 1.23x what another did); many tokens
  // are bound by the multiply-adds, the same per row for every type, so their share grows
  // with the token count (kMacsPerByte: roughly the multiply-adds in a DRAM byte's time). Every
  // row is computed the same way whichever thread takes it.
  constexpr int64_t kMacsPerByte = 16;
  const int64_t unit_macs = kRowUnit * cols * n_tok / kMacsPerByte;
  auto unit_bytes = [&](int i) {
    return static_cast<int64_t>(outs[i].w->row_stride) * kRowUnit + unit_macs;
  };
  int64_t total_bytes = 0;
  for (int i = 0; i < n_outs; ++i) total_bytes += units_of(i) * unit_bytes(i);
  auto boundary = [&](int t, int nt) {  // thread t's first unit; nt's is total_units
    const int64_t target = total_bytes * t / nt;
    int64_t base = 0, bytes = 0;
    for (int i = 0; i < n_outs; ++i) {
      const int64_t units = units_of(i), ub = unit_bytes(i);
      if (bytes + units * ub > target) return base + (target - bytes + ub / 2) / ub;
      base += units;
      bytes += units * ub;
    }
    return total_units;
  };
  if (n_tok < kDynamicMinTokens) {
    pool.run([&](int t, int nt) {
      const int64_t u0 = boundary(t, nt), u1 = boundary(t + 1, nt);
      if (u0 < u1) work(u0, u1);
    });
    return;
  }
  // Many tokens: compute-bound, and a static split leaves every thread waiting for the one
  // that lost its core for a while (a shared VM). Shares of equal cost are handed out in
  // turn instead.
  const int nshares = kSharesPerThread * pool.size();
  std::atomic<int> next{0};
  pool.run([&](int, int) {
    for (int i; (i = next.fetch_add(1, std::memory_order_relaxed)) < nshares;) {
      const int64_t u0 = boundary(i, nshares), u1 = boundary(i + 1, nshares);
      if (u0 < u1) work(u0, u1);
    }
  });
}

void matmul_isa(Isa isa, const WeightView& w, const float* x, int64_t ldx, int64_t n_tok, float* y,
                int64_t ldy, ThreadPool& pool) {
  const MatmulOut out{&w, y, ldy};
  matmul_multi_isa(isa, &out, 1, x, ldx, n_tok, pool);
}

void matmul(const WeightView& w, const float* x, int64_t ldx, int64_t n_tok, float* y, int64_t ldy,
            ThreadPool& pool) {
  matmul_isa(isa(), w, x, ldx, n_tok, y, ldy, pool);
}

void matmul_multi(const MatmulOut* outs, int n_outs, const float* x, int64_t ldx, int64_t n_tok,
                  ThreadPool& pool) {
  matmul_multi_isa(isa(), outs, n_outs, x, ldx, n_tok, pool);
}

void get_rows(const WeightView& w, const int32_t* ids, int64_t n, float* out, int64_t ld_out) {
  if (w.packed) {
    thread_local std::vector<uint8_t> row;
    if (row.size() < w.row_stride) row.resize(w.row_stride);
    for (int64_t i = 0; i < n; ++i) {
      unpack_row(w, ids[i], row.data());
      dequantize_row(w.dtype, row.data(), out + i * ld_out, w.cols);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const void* row =
        static_cast<const uint8_t*>(w.data) + static_cast<size_t>(ids[i]) * w.row_stride;
    dequantize_row(w.dtype, row, out + i * ld_out, w.cols);
  }
}

}  // namespace vt::cpu
