// Micro-benchmarks for the elementwise / RoPE / paged-attention kernels, per ISA path.
// Attention reports bytes of K/V read, to compare against the DRAM (~30 GB/s) and L3
// (~60 GB/s) roofs of DESIGN.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/cpu/ops.h"
#include "vt/thread_pool.h"

namespace {

using vt::cpu::Isa;
using vt::cpu::isa_name;

std::vector<float> rnd(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void bm_rms_norm(benchmark::State& st, Isa is, int64_t rows, int64_t dim) {
  auto x = rnd(rows * dim, 1), w = rnd(dim, 2), y = rnd(rows * dim, 3);
  for (auto _ : st) {
    vt::cpu::rms_norm_isa(is, x.data(), dim, w.data(), rows, dim, 1e-5f, y.data(), dim);
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(st.iterations() * rows * dim * 8);
}

void bm_silu_mul(benchmark::State& st, Isa is, int64_t rows, int64_t dim) {
  auto g = rnd(rows * dim, 1, -8, 8), u = rnd(rows * dim, 2), o = rnd(rows * dim, 3);
  for (auto _ : st) {
    vt::cpu::silu_mul_isa(is, g.data(), dim, u.data(), dim, rows, dim, o.data(), dim);
    benchmark::DoNotOptimize(o.data());
  }
  st.SetItemsProcessed(st.iterations() * rows * dim);
}

// Gemma 2's logit soft-capping over its vocabulary (256000).
void bm_softcap(benchmark::State& st, Isa is, int64_t n) {
  auto x = rnd(n, 4, -40, 40);
  for (auto _ : st) {
    vt::cpu::softcap_isa(is, x.data(), n, 30.f);
    benchmark::DoNotOptimize(x.data());
  }
  st.SetItemsProcessed(st.iterations() * n);
}

// Gemma's GeGLU over Gemma 3 1B's intermediate width (6912).
void bm_gelu_tanh_mul(benchmark::State& st, Isa is, int64_t rows, int64_t dim) {
  auto g = rnd(rows * dim, 1, -8, 8), u = rnd(rows * dim, 2), o = rnd(rows * dim, 3);
  for (auto _ : st) {
    vt::cpu::gelu_tanh_mul_isa(is, g.data(), dim, u.data(), dim, rows, dim, o.data(), dim);
    benchmark::DoNotOptimize(o.data());
  }
  st.SetItemsProcessed(st.iterations() * rows * dim);
}

void bm_rope(benchmark::State& st, Isa is, int64_t n_tok, int heads, int hd) {
  auto x = rnd(n_tok * heads * hd, 1);
  std::vector<float> inv(hd / 2);
  for (int i = 0; i < hd / 2; ++i) inv[i] = std::pow(10000.f, -2.f * i / hd);
  std::vector<int32_t> pos(n_tok);
  for (int64_t t = 0; t < n_tok; ++t) pos[t] = static_cast<int32_t>(1000 + t);
  for (auto _ : st) {
    vt::cpu::rope_isa(is, x.data(), heads * hd, n_tok, heads, hd, pos.data(), inv.data(),
                      vt::cpu::RopeStyle::kNeox);
    benchmark::DoNotOptimize(x.data());
  }
  st.SetItemsProcessed(st.iterations() * n_tok * heads * hd);
}

// n_seq sequences of ctx positions each, in pages of bs slots in reverse order (or, asc, in
// the order a fresh block pool hands them out); each sends n_tok queries at positions
// [ctx - n_tok, ctx): decode (n_tok = 1) or a prefill chunk.
void bm_attention(benchmark::State& st, Isa is, int n_heads, int n_kv, int hd, int ctx, int n_tok,
                  int n_seq, int bs, vt::DType kv, bool asc) {
  const int nbs = (ctx + bs - 1) / bs, nb = nbs * n_seq;
  const int64_t row = int64_t(n_kv) * hd;
  auto kc = rnd(int64_t(nb) * bs * row, 1), vc = rnd(int64_t(nb) * bs * row, 2);
  // fp16 cache (the default): the same values rounded, in the first half of each buffer.
  if (kv == vt::DType::F16)
    for (auto* c : {&kc, &vc}) {
      auto* h = reinterpret_cast<uint16_t*>(c->data());
      for (size_t i = 0; i < c->size(); ++i) h[i] = vt::cpu::fp32_to_fp16((*c)[i]);
    }
  std::vector<int32_t> bt(nb);
  for (int b = 0; b < nb; ++b) bt[b] = asc ? b : nb - 1 - b;
  std::vector<int32_t> pos, seq;
  for (int s = 0; s < n_seq; ++s)
    for (int t = 0; t < n_tok; ++t) {
      pos.push_back(ctx - n_tok + t);
      seq.push_back(s);
    }
  const int64_t nt = int64_t(pos.size());
  auto q = rnd(nt * n_heads * hd, 3);
  std::vector<float> out(q.size());
  vt::cpu::KvLayerView view{kc.data(), vc.data(), bs, n_kv, hd, kv};
  vt::cpu::AttnBatch b{nt, pos.data(), seq.data(), bt.data(), nbs};
  auto& pool = vt::ThreadPool::global();
  for (auto _ : st) {
    vt::cpu::paged_attention_isa(is, q.data(), int64_t(n_heads) * hd, n_heads, view, b,
                                 1.f / std::sqrt(float(hd)), out.data(), int64_t(n_heads) * hd,
                                 pool);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetBytesProcessed(st.iterations() * int64_t(ctx) * n_seq * row * 2 *
                       (kv == vt::DType::F16 ? 2 : 4));
  int64_t pairs = 0;  // (query, key) pairs per head
  for (int64_t t = 0; t < nt; ++t) pairs += pos[t] + 1;
  st.counters["GFLOP/s"] =
      benchmark::Counter(double(pairs) * n_heads * hd * 4 * st.iterations(),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

}  // namespace

int main(int argc, char** argv) {
  Isa all[3];
  const int n = vt::cpu::available_isas(all);
  for (int i = n - 1; i >= 0; --i) {
    const Isa is = all[i];
    const std::string s = isa_name(is);
    for (auto [rows, dim] : {std::pair<int64_t, int64_t>{1, 576}, {1, 4096}, {128, 576}})
      benchmark::RegisterBenchmark(
          ("rms_norm/" + s + "/rows:" + std::to_string(rows) + "/dim:" + std::to_string(dim))
              .c_str(),
          bm_rms_norm, is, rows, dim);
    for (auto [rows, dim] : {std::pair<int64_t, int64_t>{1, 1536}, {128, 1536}})
      benchmark::RegisterBenchmark(
          ("silu_mul/" + s + "/rows:" + std::to_string(rows) + "/dim:" + std::to_string(dim))
              .c_str(),
          bm_silu_mul, is, rows, dim);
    for (auto [rows, dim] : {std::pair<int64_t, int64_t>{1, 6912}, {128, 6912}})
      benchmark::RegisterBenchmark(
          ("gelu_tanh_mul/" + s + "/rows:" + std::to_string(rows) + "/dim:" + std::to_string(dim))
              .c_str(),
          bm_gelu_tanh_mul, is, rows, dim);
    benchmark::RegisterBenchmark(("softcap/" + s + "/n:256000").c_str(), bm_softcap, is,
                                 int64_t{256000});
    for (int64_t nt : {1, 128})
      for (auto [heads, hd] : {std::pair<int, int>{12, 64}, {24, 128}})
        benchmark::RegisterBenchmark(("rope/" + s + "/tok:" + std::to_string(nt) + "/heads:" +
                                      std::to_string(heads) + "/hd:" + std::to_string(hd))
                                         .c_str(),
                                     bm_rope, is, nt, heads, hd);
    struct AttnShape {
      int h, kv, hd;
    };
    for (AttnShape a : {AttnShape{9, 3, 64}, AttnShape{16, 8, 128}}) {
      const std::string shape =
          std::to_string(a.h) + "x" + std::to_string(a.kv) + "x" + std::to_string(a.hd);
      for (int ctx : {128, 1024, 4096})
        benchmark::RegisterBenchmark(
            ("attn_decode/" + s + "/" + shape + "/ctx:" + std::to_string(ctx)).c_str(),
            bm_attention, is, a.h, a.kv, a.hd, ctx, 1, 1, 16, vt::DType::F32, false);
      // The default fp16 cache at depth (batch 1).
      benchmark::RegisterBenchmark(("attn_decode/" + s + "/" + shape + "/ctx:4096/f16").c_str(),
                                   bm_attention, is, a.h, a.kv, a.hd, 4096, 1, 1, 16,
                                   vt::DType::F16, false);
      benchmark::RegisterBenchmark(("attn_prefill/" + s + "/" + shape + "/tok:128").c_str(),
                                   bm_attention, is, a.h, a.kv, a.hd, 128, 128, 1, 16,
                                   vt::DType::F32, false);
      // The serving shapes: a decode step of 32 sequences, a 256-token first prefill chunk.
      benchmark::RegisterBenchmark(("attn_decode/" + s + "/" + shape + "/seqs:32/ctx:320").c_str(),
                                   bm_attention, is, a.h, a.kv, a.hd, 320, 1, 32, 16,
                                   vt::DType::F32, false);
      benchmark::RegisterBenchmark(
          ("attn_decode/" + s + "/" + shape + "/seqs:32/ctx:320/f16").c_str(), bm_attention, is,
          a.h, a.kv, a.hd, 320, 1, 32, 16, vt::DType::F16, false);
      // The same step at other page sizes (--block-size), and 32 sequences deep enough that
      // their pages cannot sit in the last-level cache.
      for (int bs : {32, 64, 128})
        benchmark::RegisterBenchmark(
            ("attn_decode/" + s + "/" + shape + "/seqs:32/ctx:320/f16/bs:" + std::to_string(bs))
                .c_str(),
            bm_attention, is, a.h, a.kv, a.hd, 320, 1, 32, bs, vt::DType::F16, false);
      for (int bs : {16, 128})
        benchmark::RegisterBenchmark(
            ("attn_decode/" + s + "/" + shape + "/seqs:32/ctx:2048/f16/bs:" + std::to_string(bs))
                .c_str(),
            bm_attention, is, a.h, a.kv, a.hd, 2048, 1, 32, bs, vt::DType::F16, false);
      for (int ctx : {320, 2048})
        benchmark::RegisterBenchmark(("attn_decode/" + s + "/" + shape +
                                      "/seqs:32/ctx:" + std::to_string(ctx) + "/f16/bs:16/asc")
                                         .c_str(),
                                     bm_attention, is, a.h, a.kv, a.hd, ctx, 1, 32, 16,
                                     vt::DType::F16, true);
      // A 256-token prefill chunk: the first on the f32 and the default fp16 cache, the last of
      // a 4096-token prompt (16 segments of keys per query), and a block size that is not a
      // multiple of the vector width (K chunks are gathered).
      struct Chunk {
        const char* name;
        int ctx, bs;
        vt::DType kv;
      };
      for (Chunk c : {Chunk{"tok:256", 256, 16, vt::DType::F32},
                      Chunk{"tok:256/f16", 256, 16, vt::DType::F16},
                      Chunk{"ctx:4096/tok:256/f16", 4096, 16, vt::DType::F16},
                      Chunk{"tok:256/bs:12", 256, 12, vt::DType::F32}})
        benchmark::RegisterBenchmark(("attn_prefill/" + s + "/" + shape + "/" + c.name).c_str(),
                                     bm_attention, is, a.h, a.kv, a.hd, c.ctx, 256, 1, c.bs, c.kv,
                                     false);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
