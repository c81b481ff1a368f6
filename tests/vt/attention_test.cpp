// Paged attention and reshape_and_cache: against a double-precision reference that reads
// K/V from unpaged per-sequence arrays (so block-table addressing is checked too), on every
// ISA path, and the batch-invariance properties the engine's gates depend on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "isa_paths.h"
#include "self_disasm.h"
#include "vt/cpu/kernels.h"
#include "vt/cpu/ops.h"

namespace vt::cpu {
namespace {

// A paged cache holding several sequences in shuffled blocks. Unwritten slots hold NaN, so
// reading a wrong slot poisons the output.
struct Cache {
  int n_heads = 0, n_kv = 0, hd = 0, bs = 0, num_blocks = 0;
  int64_t bt_stride = 0;
  DType kv = DType::F32;  // F16 / BF16: a 16-bit cache (kc16 / vc16)
  std::vector<float> kc, vc;
  std::vector<uint16_t> kc16, vc16;
  std::vector<std::vector<float>> k, v;  // per sequence: [len][n_kv * hd]
  std::vector<int32_t> bt;               // [n_seq][bt_stride]

  KvLayerView view() {
    if (kv != DType::F32) return KvLayerView{kc16.data(), vc16.data(), bs, n_kv, hd, kv};
    return KvLayerView{kc.data(), vc.data(), bs, n_kv, hd};
  }
  int64_t row() const { return int64_t(n_kv) * hd; }
  int64_t slot(int seq, int pos) const {
    return int64_t(bt[seq * bt_stride + pos / bs]) * bs + pos % bs;
  }
};

// kv: F16 / BF16 for a 16-bit cache, with K/V drawn already representable in it so the
// reference reads the values the cache holds.
Cache make_cache(int n_heads, int n_kv, int hd, int bs, const std::vector<int>& lens, uint32_t seed,
                 DType kv = DType::F32) {
  Cache c;
  c.kv = kv;
  c.n_heads = n_heads;
  c.n_kv = n_kv;
  c.hd = hd;
  c.bs = bs;
  // Separate streams: K/V of sequence s depend only on seed and the lengths before it.
  std::mt19937 rng(seed), rng_kv(seed * 7919u + 1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  int need = 0, widest = 0;
  for (int len : lens) {
    need += (len + bs - 1) / bs;
    widest = std::max(widest, (len + bs - 1) / bs);
  }
  c.num_blocks = need + 3;  // a few never used
  c.bt_stride = widest + 2;
  std::vector<int32_t> ids(c.num_blocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  c.bt.assign(lens.size() * c.bt_stride, -1);
  int next = 0;
  for (size_t s = 0; s < lens.size(); ++s)
    for (int b = 0; b < (lens[s] + bs - 1) / bs; ++b) c.bt[s * c.bt_stride + b] = ids[next++];
  c.kc.assign(int64_t(c.num_blocks) * bs * c.row(), NAN);
  c.vc.assign(c.kc.size(), NAN);
  if (kv != DType::F32) {
    const uint16_t nan = kv == DType::F16 ? 0x7e00 : 0x7fc0;
    c.kc16.assign(c.kc.size(), nan);
    c.vc16.assign(c.kc.size(), nan);
  }
  auto draw = [&] {
    const float x = d(rng_kv);
    if (kv == DType::F16) return fp16_to_fp32(fp32_to_fp16(x));
    if (kv == DType::BF16) return bf16_to_fp32(fp32_to_bf16(x));
    return x;
  };
  for (int len : lens) {
    c.k.emplace_back(int64_t(len) * c.row());
    c.v.emplace_back(int64_t(len) * c.row());
    for (auto& x : c.k.back()) x = draw();
    for (auto& x : c.v.back()) x = draw();
  }
  return c;
}

// Writes positions [from, to) of sequence s with one reshape_and_cache call.
void write(Cache& c, int s, int from, int to) {
  std::vector<int64_t> slots;
  for (int p = from; p < to; ++p) slots.push_back(c.slot(s, p));
  reshape_and_cache(c.k[s].data() + from * c.row(), c.row(), c.v[s].data() + from * c.row(),
                    c.row(), to - from, slots.data(), c.view());
}

void write_all(Cache& c) {
  for (size_t s = 0; s < c.k.size(); ++s) write(c, int(s), 0, int(c.k[s].size() / c.row()));
}

struct Query {
  int seq, pos;
};

struct AttnRun {
  int64_t ldq, ldo;
  std::vector<float> q, out;
};

// q for (seq, pos) is a pure function of (seq, pos), so a token's query is the same in
// every batch it appears in.
std::vector<float> query_of(const Cache& c, Query t) {
  std::mt19937 rng(1000003u * t.seq + t.pos);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> q(int64_t(c.n_heads) * c.hd);
  for (auto& x : q) x = d(rng);
  return q;
}

// window > 0: a sliding window (AttnBatch::window).
AttnRun attend(Isa is, Cache& c, const std::vector<Query>& toks, ThreadPool& pool, int window = 0,
               float softcap = 0, const float* sinks = nullptr) {
  AttnRun r;
  const int64_t n = int64_t(c.n_heads) * c.hd;
  r.ldq = n + 3;
  r.ldo = n + 5;
  r.q.assign(toks.size() * r.ldq, 0.f);
  r.out.assign(toks.size() * r.ldo, -7.f);
  std::vector<int32_t> pos, seq;
  for (size_t t = 0; t < toks.size(); ++t) {
    auto qt = query_of(c, toks[t]);
    std::copy(qt.begin(), qt.end(), r.q.begin() + t * r.ldq);
    pos.push_back(toks[t].pos);
    seq.push_back(toks[t].seq);
  }
  AttnBatch b{int64_t(toks.size()), pos.data(), seq.data(), c.bt.data(),
              c.bt_stride,          window,     softcap,    sinks};
  paged_attention_isa(is, r.q.data(), r.ldq, c.n_heads, c.view(), b, 1.0f / std::sqrt(float(c.hd)),
                      r.out.data(), r.ldo, pool);
  return r;
}

void check_against_reference(Isa is, const Cache& c, const std::vector<Query>& toks,
                             const AttnRun& r, int window = 0, double softcap = 0,
                             const float* sinks = nullptr) {
  const int group = c.n_heads / c.n_kv;
  const double scale = 1.0f / std::sqrt(float(c.hd));
  for (size_t t = 0; t < toks.size(); ++t) {
    const auto& K = c.k[toks[t].seq];
    const auto& V = c.v[toks[t].seq];
    const int n = toks[t].pos + 1;
    const int lo = window > 0 ? std::max(0, n - window) : 0;  // keys p > pos - window
    for (int h = 0; h < c.n_heads; ++h) {
      const float* q = r.q.data() + t * r.ldq + int64_t(h) * c.hd;
      const int64_t kv = int64_t(h / group) * c.hd;
      std::vector<double> s(n, -INFINITY);
      double m = -INFINITY;
      for (int p = lo; p < n; ++p) {
        double dot = 0;
        for (int d = 0; d < c.hd; ++d) dot += double(q[d]) * K[p * c.row() + kv + d];
        s[p] = dot * scale;
        if (softcap > 0) s[p] = softcap * std::tanh(s[p] / softcap);
        m = std::max(m, s[p]);
      }
      if (sinks) m = std::max(m, double(sinks[h]));
      double l = sinks ? std::exp(sinks[h] - m) : 0;  // a sink: in the denominator only
      for (auto& x : s) l += x = std::exp(x - m);
      for (int d = 0; d < c.hd; ++d) {
        double o = 0;
        for (int p = lo; p < n; ++p) o += s[p] * V[p * c.row() + kv + d];
        o /= l;
        ASSERT_NEAR(r.out[t * r.ldo + int64_t(h) * c.hd + d], o, 3e-6)
            << isa_name(is) << " token " << t << " (seq " << toks[t].seq << " pos " << toks[t].pos
            << ") head " << h << " d " << d;
      }
    }
    // Padding after the token's heads is untouched.
    for (int64_t i = int64_t(c.n_heads) * c.hd; i < r.ldo; ++i)
      ASSERT_EQ(r.out[t * r.ldo + i], -7.f);
  }
}

struct Shape {
  int n_heads, n_kv, hd, bs;
};

// A mixed batch: a whole prefill of one sequence, chunks and decodes of others, with
// lengths straddling the 256-position segment boundary.
std::vector<Query> mixed_batch(const std::vector<int>& lens) {
  std::vector<Query> toks;
  for (int p = 0; p < lens[0]; ++p) toks.push_back({0, p});
  for (size_t s = 1; s < lens.size(); ++s) {
    toks.push_back({int(s), lens[s] - 1});
    if (lens[s] > 3) toks.push_back({int(s), lens[s] / 2});
  }
  return toks;
}

TEST(PagedAttention, MatchesReferenceAcrossShapesAndIsas) {
  // Block sizes below, at, above and not a multiple of the vector widths (8, 16), and
  // one (24) whose pages straddle the 256-position segment boundaries.
  const Shape shapes[] = {{4, 4, 64, 16},
                          {9, 3, 64, 16},
                          {16, 4, 128, 16},
                          {12, 4, 128, 32},
                          {6, 2, 40, 16},
                          {24, 2, 64, 16},
                          {9, 3, 64, 1},
                          {9, 3, 64, 4},
                          {9, 3, 64, 8},
                          {9, 3, 64, 24},
                          {6, 2, 40, 5},
                          // DeepSeek's latent head: 16 query heads on one 64 + 512 dim head.
                          {16, 1, 576, 32}};
  const std::vector<int> lens = {37, 1, 256, 257, 600, 16};
  ThreadPool pool(2);
  for (const Shape& sh : shapes) {
    Cache c = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, lens, 42 + sh.hd + sh.n_heads);
    write_all(c);
    auto toks = mixed_batch(lens);
    for (Isa is : hardware_isas()) {
      check_against_reference(is, c, toks, attend(is, c, toks, pool));
      // Decode-sized calls take the split-segment path.
      std::vector<Query> one = {{4, 599}};
      check_against_reference(is, c, one, attend(is, c, one, pool));
    }
  }
}

// Every ISA gives the scalar path's bits (scores are per-key fma chains, the softmax sum is
// a canonical 16-lane sum, P.V is fused in key order), for every cache element type.
TEST(PagedAttention, EveryIsaComputesTheScalarBits) {
  const Shape shapes[] = {{9, 3, 64, 16}, {6, 2, 40, 5}, {16, 4, 128, 24}, {16, 1, 576, 32}};
  const std::vector<int> lens = {37, 1, 256, 257, 600};
  ThreadPool pool(2);
  for (const Shape& sh : shapes)
    for (DType kv : {DType::F32, DType::F16, DType::BF16}) {
      Cache c = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, lens, 7 + sh.hd, kv);
      write_all(c);
      const auto toks = mixed_batch(lens);
      const std::vector<Query> one = {{4, 599}};
      const auto all = hardware_isas();
      const AttnRun ref = attend(all[0], c, toks, pool), ref1 = attend(all[0], c, one, pool);
      for (size_t i = 1; i < all.size(); ++i) {
        EXPECT_EQ(attend(all[i], c, toks, pool).out, ref.out)
            << isa_name(all[i]) << " hd " << sh.hd << " bs " << sh.bs << " kv " << int(kv);
        EXPECT_EQ(attend(all[i], c, one, pool).out, ref1.out)
            << isa_name(all[i]) << " (split) hd " << sh.hd << " bs " << sh.bs << " kv " << int(kv);
      }
    }
}

TEST(PagedAttention, LongContext8k) {
  Cache c = make_cache(8, 2, 64, 16, {8192}, 7);
  write_all(c);
  ThreadPool pool(2);
  std::vector<Query> toks = {{0, 8191}, {0, 4095}, {0, 300}};
  for (Isa is : hardware_isas()) {
    std::vector<Query> one = {{0, 8191}};
    check_against_reference(is, c, one, attend(is, c, one, pool));
    check_against_reference(is, c, toks, attend(is, c, toks, pool));
  }
}

void expect_same_rows(const AttnRun& a, size_t ta, const AttnRun& b, size_t tb, int64_t n,
                      const char* what) {
  ASSERT_EQ(0, std::memcmp(a.out.data() + ta * a.ldo, b.out.data() + tb * b.ldo, n * sizeof(float)))
      << what;
}

// A sliding window (Mistral 7B v0.1, Qwen2 with use_sliding_window): each token reads its
// last `window` positions only. Against the reference for windows of one key, inside one
// segment, at and across the 256-position segment boundaries, and wider than every context;
// the same token alone (split mode), in a small batch, in the big batch (prefill tiles) and
// under 1 or 2 threads gives the same bits, and every ISA gives the scalar path's bits, on
// every cache element type.
TEST(PagedAttention, SlidingWindowMatchesReferenceAndKeepsItsBits) {
  const Shape shapes[] = {{9, 3, 64, 16}, {16, 4, 128, 16}, {6, 2, 40, 5}, {9, 3, 64, 24}};
  const std::vector<int> lens = {300, 1, 256, 257, 600, 40, 1100};
  ThreadPool p1(1), p2(2);
  const auto isas = hardware_isas();
  const Isa native = isas.back();
  for (DType kv : {DType::F32, DType::F16, DType::BF16})
    for (const Shape& sh : shapes) {
      if (kv != DType::F32 && sh.bs != 16) continue;
      Cache c = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, lens, 31 + sh.hd, kv);
      write_all(c);
      auto toks = mixed_batch(lens);
      const int64_t n = int64_t(sh.n_heads) * sh.hd;
      for (int window : {1, 100, 256, 300}) {
        SCOPED_TRACE("window " + std::to_string(window) + " kv " + std::to_string(int(kv)));
        AttnRun big = attend(native, c, toks, p2, window);
        check_against_reference(native, c, toks, big, window);
        for (Isa is : isas)  // every ISA computes the same bits
          if (is != native) EXPECT_EQ(attend(is, c, toks, p2, window).out, big.out) << isa_name(is);
        AttnRun big1 = attend(native, c, toks, p1, window);
        for (size_t t = 0; t < toks.size(); ++t) {
          expect_same_rows(big, t, big1, t, n, "1 vs 2 threads");
          if (toks[t].seq == 0 && toks[t].pos % 97 != 3 && toks[t].pos != 255) continue;
          expect_same_rows(big, t, attend(native, c, {toks[t]}, p2, window), 0, n, "alone");
          expect_same_rows(big, t, attend(native, c, {toks[t], {2, 0}, {3, 255}}, p2, window), 0, n,
                           "in a small batch");
        }
      }
      // A window wider than every context changes nothing.
      EXPECT_EQ(attend(native, c, toks, p2, 4096).out, attend(native, c, toks, p2).out);
    }
}

// Gemma 2's soft-capped scores (cap * tanh(score / cap) before the softmax), with and without a
// window: against the reference, the same bits on every ISA and alone vs in the batch.
TEST(PagedAttention, SoftcappedScoresMatchReference) {
  const std::vector<int> lens = {300, 1, 257, 40};
  ThreadPool p2(2);
  Cache c = make_cache(9, 3, 64, 16, lens, 77);
  write_all(c);
  auto toks = mixed_batch(lens);
  const auto isas = hardware_isas();
  for (int window : {0, 100}) {
    AttnRun big = attend(isas.back(), c, toks, p2, window, 2.0f);
    check_against_reference(isas.back(), c, toks, big, window, 2.0);
    for (Isa is : isas) EXPECT_EQ(attend(is, c, toks, p2, window, 2.0f).out, big.out);
    for (size_t t = 0; t < toks.size(); t += 37)
      expect_same_rows(big, t, attend(isas.back(), c, {toks[t]}, p2, window, 2.0f), 0, 9 * 64,
                       "alone");
    // A cap this small changes the output.
    EXPECT_NE(attend(isas.back(), c, toks, p2, window).out, big.out);
  }
}

// GPT-OSS's attention sinks (one logit per query head in the softmax's denominator), with and
// without a window, through every work decomposition (whole-token units, a decode alone in
// split mode, many one-token decodes over all kv heads): against the reference, the same bits
// on every ISA, alone vs in the batch, and different from no sinks.
TEST(PagedAttention, SinksMatchReferenceInEveryDecomposition) {
  const std::vector<int> lens = {300, 1, 257, 40, 600, 9, 77, 130, 512, 2, 33, 64};
  ThreadPool p2(2);
  Cache c = make_cache(8, 2, 64, 16, lens, 91);
  write_all(c);
  // A sink far above every score (it takes most of the weight), far below, and in between.
  const std::vector<float> sinks = {6.f, -3.f, 0.5f, 20.f, -40.f, 1.5f, 0.f, 2.f};
  auto toks = mixed_batch(lens);
  std::vector<Query> decodes;  // one token per sequence: the all-kv-heads decode units
  for (size_t s = 0; s < lens.size(); ++s) decodes.push_back({int(s), lens[s] - 1});
  const auto isas = hardware_isas();
  for (int window : {0, 100})
    for (const auto* batch : {&toks, &decodes}) {
      SCOPED_TRACE("window " + std::to_string(window) + " batch " + std::to_string(batch->size()));
      AttnRun big = attend(isas.back(), c, *batch, p2, window, 0, sinks.data());
      check_against_reference(isas.back(), c, *batch, big, window, 0, sinks.data());
      for (Isa is : isas)
        EXPECT_EQ(attend(is, c, *batch, p2, window, 0, sinks.data()).out, big.out);
      for (size_t t = 0; t < batch->size(); t += 5)
        expect_same_rows(big, t, attend(isas.back(), c, {(*batch)[t]}, p2, window, 0, sinks.data()),
                         0, 8 * 64, "alone");
      EXPECT_NE(attend(isas.back(), c, *batch, p2, window).out, big.out);
    }
}

// The same token alone, inside a big batch, and under 1, 2 or 3 threads: identical bits.
// Alone it runs split-segment with one head per unit; in the batch it runs whole-token with
// grouped heads, so the test also pins that both decompositions agree.
TEST(PagedAttention, BatchInvariant) {
  const Shape shapes[] = {{9, 3, 64, 16},  {16, 4, 128, 16}, {4, 4, 64, 16},
                          {24, 2, 64, 16}, {9, 3, 64, 4},    {9, 3, 64, 24}};
  const std::vector<int> lens = {200, 700, 1, 256, 513};
  ThreadPool p1(1), p2(2), p3(3);
  for (const Shape& sh : shapes) {
    Cache c = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, lens, 99);
    write_all(c);
    auto batch = mixed_batch(lens);
    const int64_t n = int64_t(sh.n_heads) * sh.hd;
    for (Isa is : hardware_isas()) {
      AttnRun big = attend(is, c, batch, p2);
      AttnRun big1 = attend(is, c, batch, p1);
      AttnRun big3 = attend(is, c, batch, p3);
      for (size_t t = 0; t < batch.size(); ++t) {
        expect_same_rows(big, t, big1, t, n, "1 vs 2 threads");
        expect_same_rows(big, t, big3, t, n, "3 vs 2 threads");
      }
      // Every token of sequences 1..4 alone; a few prefill tokens of sequence 0 alone.
      for (size_t t = 0; t < batch.size(); ++t) {
        if (batch[t].seq == 0 && batch[t].pos % 50 != 7) continue;
        for (ThreadPool* p : {&p1, &p2, &p3}) {
          AttnRun alone = attend(is, c, {batch[t]}, *p);
          expect_same_rows(big, t, alone, 0, n, isa_name(is));
        }
        // In a small batch of three (the split path with grouped heads).
        AttnRun small = attend(is, c, {batch[t], {2, 0}, {3, 255}}, p2);
        expect_same_rows(big, t, small, 0, n, isa_name(is));
      }
    }
  }
}

// A sequence prefilled in one call vs the same sequence built by decode steps (one write,
// one attention call per token) in different physical blocks: identical bits per token.
TEST(PagedAttention, PrefillEqualsTokenByTokenDecode) {
  const int len = 530;
  for (Shape sh : {Shape{9, 3, 64, 16}, Shape{16, 4, 128, 16}, Shape{9, 3, 64, 24}}) {
    Cache pre = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, {len}, 5);
    Cache dec = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, {len, 3}, 5);  // same K/V
    ASSERT_EQ(pre.k[0], dec.k[0]);
    const int nblk = (len + sh.bs - 1) / sh.bs;
    std::reverse(dec.bt.begin(), dec.bt.begin() + nblk);  // other physical pages
    ThreadPool pool(2), single(1);
    for (Isa is : hardware_isas()) {
      for (Cache* x : {&pre, &dec}) {
        std::fill(x->kc.begin(), x->kc.end(), NAN);
        std::fill(x->vc.begin(), x->vc.end(), NAN);
      }
      write(pre, 0, 0, len);
      std::vector<Query> all;
      for (int p = 0; p < len; ++p) all.push_back({0, p});
      AttnRun full = attend(is, pre, all, pool);
      for (int p = 0; p < len; ++p) {
        write(dec, 0, p, p + 1);
        // Attend at a sample of steps (every call is a pool barrier; CI cores are shared),
        // always around the segment boundaries.
        if (p % 23 != 0 && std::abs(p % 256 - 128) < 124 && p != len - 1) continue;
        AttnRun step = attend(is, dec, {{0, p}}, single);
        expect_same_rows(full, p, step, 0, int64_t(sh.n_heads) * sh.hd, isa_name(is));
      }
      // And chunked prefill (chunks of 100) agrees too.
      Cache ch = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, {len}, 5);
      for (int from = 0; from < len; from += 100) {
        const int to = std::min(len, from + 100);
        write(ch, 0, from, to);
        std::vector<Query> chunk;
        for (int p = from; p < to; ++p) chunk.push_back({0, p});
        AttnRun r = attend(is, ch, chunk, pool);
        for (int p = from; p < to; ++p)
          expect_same_rows(full, p, r, p - from, int64_t(sh.n_heads) * sh.hd, "chunked");
      }
    }
  }
}

// --kv-cache-dtype float16 / bfloat16: the same kernel reading 16-bit pages. Against the
// reference on every ISA and block-size path, and bit-identical alone vs in a batch.
TEST(PagedAttention, SixteenBitCachesMatchReferenceAndAreBatchInvariant) {
  const Shape shapes[] = {{9, 3, 64, 16}, {16, 4, 128, 16}, {6, 2, 40, 5}, {9, 3, 64, 24}};
  const std::vector<int> lens = {37, 1, 256, 257, 600, 16};
  ThreadPool p1(1), p2(2);
  for (DType kv : {DType::F16, DType::BF16})
    for (const Shape& sh : shapes) {
      Cache c = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, lens, 17, kv);
      write_all(c);
      auto toks = mixed_batch(lens);
      const int64_t n = int64_t(sh.n_heads) * sh.hd;
      for (Isa is : hardware_isas()) {
        AttnRun big = attend(is, c, toks, p2);
        check_against_reference(is, c, toks, big);
        for (size_t t = 0; t < toks.size(); t += 7) {
          AttnRun alone = attend(is, c, {toks[t]}, p1);
          expect_same_rows(big, t, alone, 0, n, isa_name(is));
        }
      }
    }
}

// A decode step of many sequences (one token each): with at least 4 per thread each token
// is one unit over all its kv heads, its pages read in address order; alone it runs one kv
// head per unit, or, with at least 4 segments per thread (1100 and 2100 positions), one
// segment over all kv heads per unit. Identical bits, on every cache type and page size
// (including runs of keys that are not whole vectors), and close to the reference.
TEST(PagedAttention, ManySequenceDecodeRunsAllHeadsPerTokenWithTheSameBits) {
  const Shape shapes[] = {{16, 8, 128, 16}, {9, 3, 64, 16}, {16, 4, 128, 16},
                          {4, 4, 64, 16},   {9, 3, 64, 24}, {6, 2, 40, 5}};
  const std::vector<int> lens = {1, 17, 255, 256, 257, 300, 513, 40, 100, 600, 2, 1100, 2100};
  ThreadPool p1(1), p2(2), p3(3);
  for (DType kv : {DType::F32, DType::F16, DType::BF16})
    for (const Shape& sh : shapes) {
      Cache c = make_cache(sh.n_heads, sh.n_kv, sh.hd, sh.bs, lens, 23, kv);
      write_all(c);
      std::vector<Query> toks;
      for (size_t s = 0; s < lens.size(); ++s) toks.push_back({int(s), lens[s] - 1});
      const int64_t n = int64_t(sh.n_heads) * sh.hd;
      for (Isa is : hardware_isas()) {
        AttnRun big = attend(is, c, toks, p2);
        check_against_reference(is, c, toks, big);
        AttnRun big1 = attend(is, c, toks, p1), big3 = attend(is, c, toks, p3);
        for (size_t t = 0; t < toks.size(); ++t) {
          expect_same_rows(big, t, big1, t, n, "1 vs 2 threads");
          expect_same_rows(big, t, big3, t, n, "3 vs 2 threads");
          for (ThreadPool* p : {&p1, &p2}) {
            AttnRun alone = attend(is, c, {toks[t]}, *p);
            expect_same_rows(big, t, alone, 0, n, isa_name(is));
          }
        }
      }
    }
}

// Element of V[head][dim] of the token in `slot`: pages are [head][offset][dim].
int64_t v_at(int64_t slot, int h, int d, int bs, int n_kv, int hd) {
  return (slot / bs) * bs * n_kv * hd + (int64_t(h) * bs + slot % bs) * hd + d;
}

// The score tiles of the default block size (full K loads) stay out of line: inlined into
// attn_segment, GCC 12 spilled the P.V pass's accumulators to the stack on every key and the
// kernel ran at 0.6-0.7x (docs/QUANT_ZOO.md, 345ea3a). Read from this binary's machine code,
// like Matmul.PackedKernelsKeepTheirWeightPrefetch.
TEST(PagedAttention, ScoreTilesStayOutOfLine) {
  // The fp16-cache full-load tiles of each vector ISA -> found as a function of their own.
  std::map<std::string, bool> found{{"VecAvx512, unsigned short>", false},
                                    {"VecAvx2, unsigned short>", false}};
  ASSERT_TRUE(for_each_self_disasm_line([&](const std::string& s) {
    if (!is_disasm_function_header(s) || s.find("attn_score_tile<") == std::string::npos ||
        s.find("(vt::cpu::(anonymous namespace)::AttnKLoad)0, true>") == std::string::npos)
      return;
    for (auto& [isa, seen] : found)
      if (s.find(isa) != std::string::npos) seen = true;
  })) << "objdump (binutils) failed";
  for (const auto& [isa, seen] : found)
    EXPECT_TRUE(seen) << "no out-of-line full-load attn_score_tile for " << isa;
}

TEST(ReshapeAndCache, Fp16RoundsToNearestEvenInTheSameLayout) {
  const int n_kv = 2, hd = 8, bs = 4, nb = 3;
  const int64_t row = n_kv * hd;
  std::vector<uint16_t> kc(nb * bs * row, 0), vc(kc.size(), 0);
  KvLayerView view{kc.data(), vc.data(), bs, n_kv, hd, DType::F16};
  std::vector<float> k(2 * row), v(2 * row);
  for (size_t i = 0; i < k.size(); ++i) k[i] = 0.1f * float(i + 1), v[i] = -1.0f / float(i + 3);
  const int64_t slots[] = {9, -1};
  reshape_and_cache(k.data(), row, v.data(), row, 2, slots, view);
  for (int h = 0; h < n_kv; ++h)
    for (int d = 0; d < hd; ++d) {
      const int64_t i = int64_t(h) * hd + d;
      EXPECT_EQ(kc[2 * bs * row + i * bs + 1], fp32_to_fp16(k[i])) << h << " " << d;
      EXPECT_EQ(vc[v_at(9, h, d, bs, n_kv, hd)], fp32_to_fp16(v[i])) << h << " " << d;
    }
  int written = 0;
  for (uint16_t x : kc) written += x != 0;
  for (uint16_t x : vc) written += x != 0;
  EXPECT_EQ(written, 2 * row);
}

TEST(ReshapeAndCache, Bf16RoundsToNearestEvenInTheSameLayout) {
  const int n_kv = 2, hd = 8, bs = 4, nb = 3;
  const int64_t row = n_kv * hd;
  std::vector<uint16_t> kc(nb * bs * row, 0), vc(kc.size(), 0);
  KvLayerView view{kc.data(), vc.data(), bs, n_kv, hd, DType::BF16};
  std::vector<float> k(2 * row), v(2 * row);
  for (size_t i = 0; i < k.size(); ++i) k[i] = 0.1f * float(i + 1), v[i] = -1.0f / float(i + 3);
  k[3] = NAN;
  k[4] = INFINITY;
  v[5] = 1.00390625f;  // exactly between two bf16 values: rounds to the even one (1.0)
  const int64_t slots[] = {9, -1};
  reshape_and_cache(k.data(), row, v.data(), row, 2, slots, view);
  for (int h = 0; h < n_kv; ++h)
    for (int d = 0; d < hd; ++d) {
      const int64_t i = int64_t(h) * hd + d;
      EXPECT_EQ(kc[2 * bs * row + i * bs + 1], fp32_to_bf16(k[i])) << h << " " << d;
      EXPECT_EQ(vc[v_at(9, h, d, bs, n_kv, hd)], fp32_to_bf16(v[i])) << h << " " << d;
    }
  EXPECT_EQ(vc[v_at(9, 0, 5, bs, n_kv, hd)], 0x3f80);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(kc[2 * bs * row + 3 * bs + 1])));
}

TEST(ReshapeAndCache, WritesSlotsAndSkipsNegative) {
  const int n_kv = 2, hd = 8, bs = 4, nb = 3;
  const int64_t row = n_kv * hd;
  std::vector<float> kc(nb * bs * row, 0.f), vc(kc.size(), 0.f);
  KvLayerView view{kc.data(), vc.data(), bs, n_kv, hd};
  const int64_t ld = row + 2;
  std::vector<float> k(3 * ld), v(3 * ld);
  for (size_t i = 0; i < k.size(); ++i) k[i] = float(i + 1), v[i] = -float(i + 1);
  const int64_t slots[] = {9, -1, 2};
  reshape_and_cache(k.data(), ld, v.data(), ld, 3, slots, view);
  // K page: [head][dim][offset]; V page: [head][offset][dim].
  auto kat = [&](int64_t slot, int h, int d) {
    return kc[(slot / bs) * bs * row + (int64_t(h) * hd + d) * bs + slot % bs];
  };
  for (int h = 0; h < n_kv; ++h)
    for (int d = 0; d < hd; ++d) {
      const int64_t i = int64_t(h) * hd + d;
      EXPECT_EQ(kat(9, h, d), k[i]) << h << " " << d;
      EXPECT_EQ(kat(2, h, d), k[2 * ld + i]) << h << " " << d;
      EXPECT_EQ(vc[v_at(9, h, d, bs, n_kv, hd)], v[i]);
      EXPECT_EQ(vc[v_at(2, h, d, bs, n_kv, hd)], v[2 * ld + i]);
    }
  // Concretely: slot 9 is block 2 offset 1, so K head 1 dim 3 of it sits at
  // 2 * bs * row + (1 * hd + 3) * bs + 1.
  EXPECT_EQ(kc[2 * bs * row + (hd + 3) * bs + 1], k[hd + 3]);
  // And V head 1 dim 3 of it at 2 * bs * row + (1 * bs + 1) * hd + 3.
  EXPECT_EQ(vc[2 * bs * row + (bs + 1) * hd + 3], v[hd + 3]);
  int written = 0;
  for (float x : kc) written += x != 0.f;
  EXPECT_EQ(written, 2 * row);
  written = 0;
  for (float x : vc) written += x != 0.f;
  EXPECT_EQ(written, 2 * row);
}

}  // namespace
}  // namespace vt::cpu
