// Matmul micro-benchmarks: every weight type at the projection shapes of small Llama-style
// models, batch-1 matvec (memory-bound) and 32/128 tokens (compute-bound). Counters:
// weight bytes/s and GFLOP/s. The "cold" variants cycle through enough copies of the weight
// (> L3) that every call streams it from DRAM, as a decode step over a whole model does.
// BF16 / F16 also run at the Qwen3-0.6B projection shapes (matmul_half/...): BF16 with fp32
// activations (the default) and with bf16 activations ("bf16act": vdpbf16ps where the CPU
// has it, and "bf16act-emul", its emulation, there too); the label says which ran.
//   VT_ISA=avx2|scalar selects a lower ISA; VT_NUM_THREADS the thread count.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/cpu/matmul_half.h"
#include "vt/cpu/matmul_internal.h"

namespace {

using vt::DType;

struct Setup {
  std::vector<std::vector<uint8_t>> copies;
  std::vector<vt::cpu::WeightView> views;
  std::vector<float> x, y;
};

std::unique_ptr<Setup> make_setup(DType t, int64_t rows, int64_t cols, int64_t n_tok, bool cold) {
  auto s = std::make_unique<Setup>();
  const size_t rb = vt::row_bytes(t, cols);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 0.5f);
  std::vector<float> f(cols);
  std::vector<uint8_t> w(rb * rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : f) v = nd(rng);
    vt::cpu::quantize_row(t, f.data(), w.data() + r * rb, cols);
  }
  const vt::cpu::WeightView src{t, rows, cols, w.data(), rb};
  // Quantized types are multiplied in the packed layout the model loads them into.
  if (vt::cpu::packable(t)) {
    w.assign(vt::cpu::packed_bytes(src), 0);
    vt::cpu::pack_groups(src, 0, vt::cpu::pack_group_count(src), w.data());
  }
  const size_t n_copies = cold ? std::max<size_t>(2, (256u << 20) / w.size()) : 1;
  for (size_t i = 0; i < n_copies; ++i) s->copies.push_back(w);
  for (auto& c : s->copies)
    s->views.push_back(vt::cpu::packable(t) ? vt::cpu::packed_view(src, c.data())
                                            : vt::cpu::WeightView{t, rows, cols, c.data(), rb});
  s->x.resize(n_tok * cols);
  for (auto& v : s->x) v = nd(rng);
  s->y.resize(n_tok * rows);
  return s;
}

// How a BF16 product runs: fp32 activations, or bf16 ones with vdpbf16ps where available or
// forced onto its emulation.
enum class Bf16 { kFp32Act, kBf16Act, kBf16ActEmul };

void bm_matmul(benchmark::State& state, DType t, int64_t rows, int64_t cols, int64_t n_tok,
               bool cold, Bf16 mode) {
  auto s = make_setup(t, rows, cols, n_tok, cold);
  vt::ThreadPool& pool = vt::ThreadPool::global();
  const bool round_was = vt::cpu::bf16_round_activations();
  vt::cpu::set_bf16_round_activations(mode != Bf16::kFp32Act);
  vt::cpu::force_bf16_emulation(mode == Bf16::kBf16ActEmul);
  size_t i = 0;
  for (auto _ : state) {
    vt::cpu::matmul(s->views[i], s->x.data(), cols, n_tok, s->y.data(), rows, pool);
    benchmark::ClobberMemory();
    if (++i == s->views.size()) i = 0;
  }
  std::string label = vt::cpu::active_isa();
  if (t == DType::BF16)
    label += mode == Bf16::kFp32Act                            ? " fp32-act"
             : label == "avx512" && vt::cpu::bf16_native_dot() ? " bf16-act vdpbf16ps"
                                                               : " bf16-act emulated";
  vt::cpu::force_bf16_emulation(false);
  vt::cpu::set_bf16_round_activations(round_was);
  const double iters = static_cast<double>(state.iterations());
  state.counters["bytes/s"] = benchmark::Counter(
      iters * static_cast<double>(vt::row_bytes(t, cols) * rows), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(
      iters * 2e-9 * static_cast<double>(rows * cols * n_tok), benchmark::Counter::kIsRate);
  state.SetLabel(label);
}

// The K-quant tiles' activation quantizer (Q8_K: 256-element blocks with 16-element sums),
// one thread over a 128-token, 1024-column activation; elements/s.
using QuantQ8K = void (*)(const float*, int64_t, int8_t*, float*, int16_t*);
void bm_quant_q8_k(benchmark::State& state, QuantQ8K fn) {
  const int64_t n = 128 * 1024;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 0.5f);
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  std::vector<int8_t> qs(n);
  std::vector<float> d(n / 256);
  std::vector<int16_t> bs(n / 16);
  for (auto _ : state) {
    fn(x.data(), n, qs.data(), d.data(), bs.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

}  // namespace

int main(int argc, char** argv) {
  const DType types[] = {DType::F32,  DType::F16,    DType::BF16,   DType::Q8_0,
                         DType::Q4_0, DType::Q4_1,   DType::Q4_K,   DType::Q5_K,
                         DType::Q6_K, DType::Q5_0,   DType::Q5_1,   DType::Q2_K,
                         DType::Q3_K, DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4};
  const int64_t shapes[][2] = {{576, 1536}, {1024, 3072}, {3072, 1024}};
  for (DType t : types) {
    for (const auto& sh : shapes) {
      for (int64_t n_tok : {1, 32, 128}) {
        for (bool cold : {false, true}) {
          if (cold && n_tok == 128) continue;
          const std::string name = "matmul/" + std::string(vt::dtype_name(t)) + "/" +
                                   std::to_string(sh[0]) + "x" + std::to_string(sh[1]) +
                                   "/tok:" + std::to_string(n_tok) + (cold ? "/cold" : "");
          benchmark::RegisterBenchmark(name.c_str(), bm_matmul, t, sh[0], sh[1], n_tok, cold,
                                       Bf16::kFp32Act)
              ->UseRealTime();
        }
      }
    }
  }
  // Qwen3-0.6B: q, o, gate (and up), down.
  const int64_t qwen3[][2] = {{2048, 1024}, {1024, 2048}, {3072, 1024}, {1024, 3072}};
  for (DType t : {DType::BF16, DType::F16}) {
    for (const auto& sh : qwen3) {
      for (int64_t n_tok : {1, 32, 128}) {
        for (Bf16 mode : {Bf16::kFp32Act, Bf16::kBf16Act, Bf16::kBf16ActEmul}) {
          if (t != DType::BF16 && mode != Bf16::kFp32Act) continue;
          if (mode == Bf16::kBf16ActEmul && !vt::cpu::has_avx512_bf16()) continue;
          const char* suffix = mode == Bf16::kBf16Act       ? "/bf16act"
                               : mode == Bf16::kBf16ActEmul ? "/bf16act-emul"
                                                            : "";
          const std::string name = "matmul_half/" + std::string(vt::dtype_name(t)) + "/" +
                                   std::to_string(sh[0]) + "x" + std::to_string(sh[1]) +
                                   "/tok:" + std::to_string(n_tok) + (n_tok == 1 ? "/cold" : "") +
                                   suffix;
          benchmark::RegisterBenchmark(name.c_str(), bm_matmul, t, sh[0], sh[1], n_tok, n_tok == 1,
                                       mode)
              ->UseRealTime();
        }
      }
    }
  }
  // The tied embedding / output head of the Qwen3 shapes (151936 x 1024): llama.cpp's K-quant
  // mixes store it as Q6_K, a third of a Q4_K_M 0.6B file, read once per decode step; a bf16
  // checkpoint's is 311 MB, a long stream beside the 2-6 MB projections.
  for (DType t : {DType::BF16, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    const std::string name = "matmul_head/" + std::string(vt::dtype_name(t)) + "/151936x1024/tok:1";
    benchmark::RegisterBenchmark(name.c_str(), bm_matmul, t, 151936, 1024, 1, false, Bf16::kFp32Act)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("quant_act/q8_k/scalar/128x1024", bm_quant_q8_k,
                               vt::cpu::quantize_act_q8_k);
  if (vt::cpu::hardware_isa() != vt::cpu::Isa::kScalar)
    benchmark::RegisterBenchmark("quant_act/q8_k/avx2/128x1024", bm_quant_q8_k,
                                 vt::cpu::quantize_act_q8_k_avx2);
  if (vt::cpu::hardware_isa() == vt::cpu::Isa::kAvx512)
    benchmark::RegisterBenchmark("quant_act/q8_k/avx512/128x1024", bm_quant_q8_k,
                                 vt::cpu::quantize_act_q8_k_avx512);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
