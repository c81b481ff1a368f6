// The machine's roofs, the denominators of "fraction of the roof" figures in README.md:
//   roof/stream_read  bytes/s a streaming read of 1 GiB reaches on every pool thread (AVX2
//                     loads, the way a batch-1 decode step streams weights from DRAM)
//   roof/fma_fp32     GFLOP/s of independent fp32 FMA chains (ten 8-lane chains per thread)
//   roof/int8_bcast   GOP/s (2 per multiply-add) of the AVX2 int8 tiles' inner step: broadcast
//                     4 activation bytes, vpmaddubsw with a held weight vector, add the int16
//                     pairs (eight token chains per thread), the ceiling of the K-quant
//                     many-token tiles before their widen / scale / min work
//   roof/vnni_bcast   GOP/s of the AVX-512 VNNI K-quant / Q8 tiles' inner step: broadcast 4
//                     activation bytes, vpdpbusd with a held weight vector (eight token chains
//                     per thread); skipped without AVX-512 VNNI
//   roof/vnni_ktile   roof/vnni_bcast's vpdpbusd inside the Q4_K / Q5_K tile's instruction mix
//                     (its scale folds, mins and super-block scales; see ktile_mix): what the
//                     K-quant tiles can reach where those multiplies share the vpdpbusd pipes
//   roof/dpbf16       GFLOP/s (2 per multiply-add) of independent AVX512-BF16 vdpbf16ps chains
//                     (sixteen 16-lane chains per thread), the ceiling of the BF16 products
//                     with bf16 activations; skipped without AVX512-BF16
// All run on vt::ThreadPool::global() (VT_NUM_THREADS sets its size); AVX2 + FMA except
// roof/vnni_bcast and roof/dpbf16.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "vt/thread_pool.h"

namespace {

bool has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

__attribute__((target("avx2"))) uint64_t read_sum(const uint8_t* p, int64_t n) {
  __m256i a = _mm256_setzero_si256(), b = a;
  for (int64_t i = 0; i + 64 <= n; i += 64) {
    a = _mm256_add_epi8(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi8(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
  }
  return static_cast<uint64_t>(_mm256_extract_epi64(_mm256_add_epi8(a, b), 0));
}

void BM_StreamRead(benchmark::State& state) {
  if (!has_avx2_fma()) return state.SkipWithError("needs AVX2");
  const int64_t n = int64_t{1} << 30;
  std::unique_ptr<uint8_t, decltype(&std::free)> buf(
      static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>(n))), &std::free);
  std::memset(buf.get(), 1, static_cast<size_t>(n));
  vt::ThreadPool& pool = vt::ThreadPool::global();
  uint64_t sink = 0;
  for (auto _ : state) {
    pool.run([&](int i, int nt) {
      const int64_t b = n / nt * i, e = i + 1 == nt ? n : n / nt * (i + 1);
      const uint64_t s = read_sum(buf.get() + b, e - b);
      if (i == 0) sink += s;
    });
  }
  benchmark::DoNotOptimize(sink);
  state.counters["bytes/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(n),
                         benchmark::Counter::kIsRate);
  state.counters["threads"] = pool.size();
}

#define VT_ROOF_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9)

__attribute__((target("avx2,fma"))) float fma_chains(int64_t iters) {
  // Ten named registers (an array would live in memory behind the asm barriers).
#define VT_ROOF_INIT(k) __m256 a##k = _mm256_set1_ps(0.1f * (k));
  VT_ROOF_CHAINS(VT_ROOF_INIT)
  __m256 m = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  asm("" : "+x"(m), "+x"(c));
  for (int64_t n = 0; n < iters; ++n) {
#define VT_ROOF_FMA(k) a##k = _mm256_fmadd_ps(a##k, m, c);
    VT_ROOF_CHAINS(VT_ROOF_FMA)
    // Ten live register chains, nothing folded away.
#define VT_ROOF_KEEP(k) asm("" : "+x"(a##k));
    VT_ROOF_CHAINS(VT_ROOF_KEEP)
  }
  __m256 t = _mm256_setzero_ps();
#define VT_ROOF_SUM(k) t = _mm256_add_ps(t, a##k);
  VT_ROOF_CHAINS(VT_ROOF_SUM)
  return _mm256_cvtss_f32(t);
}

// Runs chains() once per pool thread per iteration and reports `unit` (ops_per_call x 1e-9 per
// call, summed over the threads) as a rate.
template <class Chains>
void run_chains(benchmark::State& state, const char* unit, double ops_per_call, Chains chains) {
  vt::ThreadPool& pool = vt::ThreadPool::global();
  decltype(chains()) sink{};
  for (auto _ : state) {
    pool.run([&](int i, int) {
      const auto s = chains();
      if (i == 0) sink += s;
    });
  }
  benchmark::DoNotOptimize(sink);
  state.counters[unit] = benchmark::Counter(
      static_cast<double>(state.iterations()) * pool.size() * ops_per_call * 1e-9,
      benchmark::Counter::kIsRate);
  state.counters["threads"] = pool.size();
}

constexpr int64_t kChainIters = 20000000;

void BM_FmaPeak(benchmark::State& state) {
  if (!has_avx2_fma()) return state.SkipWithError("needs AVX2 + FMA");
  // 10 chains x 8 lanes x 2 flops per iteration, on every thread.
  run_chains(state, "GFLOP/s", kChainIters * 160.0, [] { return fma_chains(kChainIters); });
}

#define VT_ROOF_TOKENS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

__attribute__((target("avx2"))) int maddubs_chains(int64_t iters, const int8_t* act) {
#define VT_ROOF_IINIT(k) __m256i s##k = _mm256_set1_epi16(k);
  VT_ROOF_TOKENS(VT_ROOF_IINIT)
  __m256i w = _mm256_set1_epi8(3);
  asm("" : "+x"(w));
  for (int64_t n = 0; n < iters; ++n) {
    const int8_t* a = act + (n & 63) * 32;
#define VT_ROOF_DOT(k)                                                                      \
  s##k = _mm256_add_epi16(                                                                  \
      s##k, _mm256_maddubs_epi16(w, _mm256_broadcastd_epi32(_mm_loadu_si32(a + 4 * (k))))); \
  asm("" : "+x"(s##k));
    VT_ROOF_TOKENS(VT_ROOF_DOT)
  }
  __m256i t = _mm256_setzero_si256();
#define VT_ROOF_ISUM(k) t = _mm256_xor_si256(t, s##k);
  VT_ROOF_TOKENS(VT_ROOF_ISUM)
  return _mm256_extract_epi32(t, 0);
}

// Activation bytes the integer chains broadcast from: 64 rows of 32, cycled through.
const int8_t* roof_acts() {
  alignas(64) static const std::array<int8_t, 64 * 32 + 32> act = [] {
    std::array<int8_t, 64 * 32 + 32> v{};
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(i * 37 % 255 - 127);
    return v;
  }();
  return act.data();
}

void BM_Int8Bcast(benchmark::State& state) {
  if (!has_avx2_fma()) return state.SkipWithError("needs AVX2");
  // 8 chains x 32 multiply-adds x 2 ops per iteration, on every thread.
  run_chains(state, "GOP/s", kChainIters * 512.0,
             [] { return maddubs_chains(kChainIters, roof_acts()); });
}

// AVX-512 F with one extension; __builtin_cpu_supports needs a literal feature name.
#define VT_ROOF_HAS_AVX512(ext) \
  (__builtin_cpu_init(), __builtin_cpu_supports("avx512f") && __builtin_cpu_supports(ext))

__attribute__((target("avx512f,avx512vnni"))) int dpbusd_chains(int64_t iters, const int8_t* act) {
#define VT_ROOF_VINIT(k) __m512i v##k = _mm512_set1_epi32(k);
  VT_ROOF_TOKENS(VT_ROOF_VINIT)
  __m512i w = _mm512_set1_epi8(3);
  asm("" : "+v"(w));
  for (int64_t n = 0; n < iters; ++n) {
    const int8_t* a = act + (n & 63) * 32;
#define VT_ROOF_VDOT(k)                                                                          \
  v##k = _mm512_dpbusd_epi32(v##k, w,                                                            \
                             _mm512_set1_epi32(*reinterpret_cast<const int32_t*>(a + 4 * (k)))); \
  asm("" : "+v"(v##k));
    VT_ROOF_TOKENS(VT_ROOF_VDOT)
  }
  __m512i t = _mm512_setzero_si512();
#define VT_ROOF_VSUM(k) t = _mm512_xor_si512(t, v##k);
  VT_ROOF_TOKENS(VT_ROOF_VSUM)
  return _mm_cvtsi128_si32(_mm512_castsi512_si128(t));
}

void BM_VnniBcast(benchmark::State& state) {
  if (!VT_ROOF_HAS_AVX512("avx512vnni")) return state.SkipWithError("needs AVX-512 VNNI");
  // 8 chains x 64 multiply-adds x 2 ops per iteration, on every thread.
  run_chains(state, "GOP/s", kChainIters * 1024.0,
             [] { return dpbusd_chains(kChainIters, roof_acts()); });
}

// The Q4_K / Q5_K tile's instruction mix (matmul_kquant_vnni_simd.h, kq45_tile), one super-block
// of 256 weights for 16 rows and 8 tokens per iteration: 8 sub-blocks of 8 vpdpbusd per token,
// each sub-block folded into a float with its scale (vsubps + vfmadd), then the mins (4
// vpdpwssd per token) and the super-block's d / dmin (2 vmulps, vfmadd, vfnmadd, vcvtdq2ps).
// On cores where the multiplies share the vpdpbusd pipes this is the tiles' ceiling: 512
// vpdpbusd and 128 other multiplies per iteration. Counted like roof/vnni_bcast (the vpdpbusd
// multiply-adds only), so the ratio of the two is the fraction the mix leaves.
__attribute__((target("avx512f,avx512vnni"))) float ktile_mix(int64_t iters, const int8_t* act) {
#define VT_ROOF_KINIT(k)                \
  __m512 acc##k = _mm512_set1_ps(0.0f); \
  __m512 f##k = _mm512_set1_ps(0.0f);   \
  __m512i is##k = _mm512_set1_epi32(1000);
  VT_ROOF_TOKENS(VT_ROOF_KINIT)
  __m512i w = _mm512_set1_epi8(3);
  __m512 sc = _mm512_set1_ps(1e-3f), dw = _mm512_set1_ps(1e-3f);
  asm("" : "+v"(w), "+v"(sc), "+v"(dw));
  for (int64_t n = 0; n < iters; ++n) {
    const int8_t* a = act + (n & 63) * 32;
    for (int j = 0; j < 8; ++j) {
#define VT_ROOF_KDOT(k)                                                                           \
  is##k = _mm512_dpbusd_epi32(is##k, w,                                                           \
                              _mm512_set1_epi32(*reinterpret_cast<const int32_t*>(a + 4 * (k)))); \
  asm("" : "+v"(is##k));
      for (int c = 0; c < 8; ++c) {
        VT_ROOF_TOKENS(VT_ROOF_KDOT)
      }
#define VT_ROOF_KFOLD(k)                                                                          \
  f##k =                                                                                          \
      _mm512_fmadd_ps(sc, _mm512_sub_ps(_mm512_castsi512_ps(is##k), _mm512_set1_ps(1.0f)), f##k); \
  is##k = _mm512_set1_epi32(1000);                                                                \
  asm("" : "+v"(f##k), "+v"(is##k));
      VT_ROOF_TOKENS(VT_ROOF_KFOLD)
    }
#define VT_ROOF_KSB(k)                                                                           \
  {                                                                                              \
    __m512i ms = _mm512_setzero_si512();                                                         \
    for (int q = 0; q < 4; ++q)                                                                  \
      ms = _mm512_dpwssd_epi32(ms, w,                                                            \
                               _mm512_set1_epi32(*reinterpret_cast<const int32_t*>(a + 4 * q))); \
    const __m512 dx = _mm512_set1_ps(a[k] * 1e-3f);                                              \
    acc##k = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx), f##k, acc##k);                               \
    acc##k = _mm512_fnmadd_ps(_mm512_mul_ps(sc, dx), _mm512_cvtepi32_ps(ms), acc##k);            \
    f##k = _mm512_setzero_ps();                                                                  \
    asm("" : "+v"(acc##k), "+v"(f##k));                                                          \
  }
    VT_ROOF_TOKENS(VT_ROOF_KSB)
  }
  __m512 t = _mm512_setzero_ps();
#define VT_ROOF_KSUM(k) t = _mm512_add_ps(t, acc##k);
  VT_ROOF_TOKENS(VT_ROOF_KSUM)
  return _mm512_reduce_add_ps(t);
}

void BM_VnniKTile(benchmark::State& state) {
  if (!VT_ROOF_HAS_AVX512("avx512vnni")) return state.SkipWithError("needs AVX-512 VNNI");
  // 512 vpdpbusd x 64 multiply-adds x 2 ops per iteration, on every thread.
  run_chains(state, "GOP/s", kChainIters / 64 * 65536.0,
             [] { return ktile_mix(kChainIters / 64, roof_acts()); });
}

#define VT_ROOF_BCHAINS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

__attribute__((target("avx512f,avx512bf16"))) float dpbf16_chains(int64_t iters) {
  // Sixteen named 16-lane accumulators, each a vdpbf16ps chain (32 bf16 multiply-adds a step):
  // enough to cover its latency at two a cycle.
#define VT_ROOF_BINIT(k) __m512 b##k = _mm512_set1_ps(0.01f * (k));
  VT_ROOF_BCHAINS(VT_ROOF_BINIT)
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3a83);
  asm("" : "+v"(x), "+v"(y));
  for (int64_t n = 0; n < iters; ++n) {
#define VT_ROOF_BDOT(k) b##k = _mm512_dpbf16_ps(b##k, x, y);
    VT_ROOF_BCHAINS(VT_ROOF_BDOT)
#define VT_ROOF_BKEEP(k) asm("" : "+v"(b##k));
    VT_ROOF_BCHAINS(VT_ROOF_BKEEP)
  }
  __m512 t = _mm512_setzero_ps();
#define VT_ROOF_BSUM(k) t = _mm512_add_ps(t, b##k);
  VT_ROOF_BCHAINS(VT_ROOF_BSUM)
  return _mm512_reduce_add_ps(t);
}

void BM_Bf16Peak(benchmark::State& state) {
  if (!VT_ROOF_HAS_AVX512("avx512bf16")) return state.SkipWithError("needs AVX512-BF16");
  // 16 chains x 32 multiply-adds x 2 flops per iteration, on every thread.
  run_chains(state, "GFLOP/s", kChainIters * 1024.0, [] { return dpbf16_chains(kChainIters); });
}

}  // namespace

BENCHMARK(BM_StreamRead)->Name("roof/stream_read")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FmaPeak)->Name("roof/fma_fp32")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Int8Bcast)->Name("roof/int8_bcast")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_VnniBcast)->Name("roof/vnni_bcast")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_VnniKTile)->Name("roof/vnni_ktile")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bf16Peak)->Name("roof/dpbf16")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
