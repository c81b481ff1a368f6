// Tokenizer encode throughput: 64 KB of 'a', 64 KB of spaces (the long single-piece cases a
// quadratic merge loop or regex would choke on) and 1 MB of English-like text, with MB/s.
// Each must take under 200 ms per iteration.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "model/tokenizer_loader.h"
#include "tokenizer/tokenizer.h"

namespace {

const vllm::tok::Tokenizer& qwen3() {
  static auto t =
      vllm::model::load_tokenizer(VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer");
  return *t;
}

std::string english(size_t bytes) {
  static const char* kWords[] = {"the",   "quick",   "brown",     "fox",     "jumps",  "over",
                                 "lazy",  "dog",     "tokenizer", "serving", "engine", "cache",
                                 "batch", "request", "It's",      "don't",   "we'll",  "model",
                                 "2024",  "fast",    "memory"};
  std::string s;
  uint32_t x = 12345;
  while (s.size() < bytes) {
    x = x * 1103515245u + 12345u;
    s += kWords[(x >> 16) % (sizeof(kWords) / sizeof(kWords[0]))];
    s += ((x >> 8) % 13 == 0) ? ".\n" : ((x >> 8) % 7 == 0 ? ", " : " ");
  }
  s.resize(bytes);
  return s;
}

void run(benchmark::State& state, const std::string& text) {
  const auto& tok = qwen3();
  size_t n = 0;
  for (auto _ : state) {
    auto ids = tok.encode(text);
    n = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(text.size()) / 1e6,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens"] = static_cast<double>(n);
}

void BM_EncodeA64K(benchmark::State& s) { run(s, std::string(64 * 1024, 'a')); }
void BM_EncodeSpaces64K(benchmark::State& s) { run(s, std::string(64 * 1024, ' ')); }
void BM_EncodeEnglish1M(benchmark::State& s) { run(s, english(1 << 20)); }
BENCHMARK(BM_EncodeA64K)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeSpaces64K)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeEnglish1M)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
