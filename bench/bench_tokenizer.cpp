// Tokenizer encode cost per input byte ("time/B", CPU time), for the SmolLM2 (GGUF,
// $VLLM_TEST_GGUF) and Qwen3 (tokenizer.json fixture) vocabularies, on ordinary English and on
// the single-piece inputs an unauthenticated client can send to make tokenization expensive:
// 8 MB of 'a', 1 MB of spaces / newlines / random bytes / one CJK character / digits. The rate
// is computed from CPU time, which other processes on a shared machine disturb less.
//
// RefuseAt8192/* times encode_bounded refusing those texts at max_tokens = 8192.
//
//   build/bench_tokenizer --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// With repetitions, the "_min" rows are the least disturbed runs on a shared machine.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "model/tokenizer_loader.h"
#include "tokenizer/tokenizer.h"

namespace {

const vllm::tok::Tokenizer& vocab(const std::string& name) {
  static std::map<std::string, std::unique_ptr<vllm::tok::Tokenizer>> cache;
  auto& t = cache[name];
  if (!t) {
    const char* home = std::getenv("HOME");
    if (name == "qwen3") {
      t = vllm::model::load_tokenizer(VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer");
    } else if (name == "llama_spm") {  // scripts/fetch_vocabs.sh: Llama 2's SentencePiece pieces
      const char* e = std::getenv("VLLM_SPM_VOCAB");
      t = vllm::model::load_tokenizer(e && *e
                                          ? std::string(e)
                                          : std::string(home ? home : "/root") +
                                                "/.cache/vllm-cpp/vocab/ggml-vocab-llama-spm.gguf");
    } else {
      const char* e = std::getenv("VLLM_TEST_GGUF");
      t = vllm::model::load_tokenizer(e && *e
                                          ? std::string(e)
                                          : std::string(home ? home : "/root") +
                                                "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf");
    }
  }
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

std::string repeat(const std::string& unit, size_t bytes) {
  std::string s;
  s.reserve(bytes);
  while (s.size() + unit.size() <= bytes) s += unit;
  return s;
}

std::string random_bytes(size_t bytes, uint32_t lo, uint32_t hi) {
  std::mt19937 rng(7);
  std::string s(bytes, '\0');
  for (char& c : s) c = static_cast<char>(lo + rng() % (hi - lo + 1));
  return s;
}

constexpr size_t kMB = 1 << 20;

std::string make_input(const std::string& name) {
  if (name == "English1M") return english(kMB);
  if (name == "English256K") return english(kMB / 4);
  if (name == "RandomBytes256K") return random_bytes(kMB / 4, 0, 255);
  if (name == "A8M") return std::string(8 * kMB, 'a');
  if (name == "Spaces1M") return std::string(kMB, ' ');
  if (name == "Newlines1M") return std::string(kMB, '\n');
  if (name == "RandomBytes1M") return random_bytes(kMB, 0, 255);
  if (name == "CJK1M") return repeat("\xE4\xB8\xAD", kMB);  // U+4E2D
  if (name == "Digits1M") return random_bytes(kMB, '0', '9');
  std::abort();
}

void encode(benchmark::State& state, const std::string& vocab_name, const std::string& input) {
  const auto& tok = vocab(vocab_name);
  const std::string text = make_input(input);
  size_t n = 0;
  for (auto _ : state) {
    auto ids = tok.encode(text);
    n = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  // Inverted rate of bytes per CPU second = CPU seconds per byte, printed with an SI prefix
  // ("time/B=2.8us" is 2.8 microseconds per byte).
  state.counters["time/B"] = benchmark::Counter(
      static_cast<double>(text.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["tokens"] = static_cast<double>(n);
}

// The server's question: does this prompt fit max_model_len? encode_bounded answers without
// tokenizing all of a prompt that does not ("us" is the time per call).
void refuse(benchmark::State& state, const std::string& vocab_name, const std::string& input,
            size_t max_tokens) {
  const auto& tok = vocab(vocab_name);
  const std::string text = make_input(input);
  std::vector<int32_t> ids;
  bool fits = true;
  for (auto _ : state) {
    fits = tok.encode_bounded(text, true, max_tokens, ids);
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["fits"] = fits;
}

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
  for (const char* v : {"smollm2", "qwen3", "llama_spm"}) {
    for (const char* in :
         {"English1M", "A8M", "Spaces1M", "Newlines1M", "RandomBytes1M", "CJK1M", "Digits1M"}) {
      benchmark::RegisterBenchmark((std::string("Encode/") + v + "/" + in).c_str(), encode,
                                   std::string(v), std::string(in))
          ->Unit(benchmark::kMillisecond)
          ->ComputeStatistics("min", min_of);
    }
  }
  for (const char* v : {"smollm2", "qwen3"}) {
    // 8 MB of 'a' is refused by the length pre-check; 256 KB of English or random bytes are
    // short enough to pass it and stop at the piece that goes over the budget.
    for (const char* in : {"A8M", "English256K", "RandomBytes256K"}) {
      benchmark::RegisterBenchmark((std::string("RefuseAt8192/") + v + "/" + in).c_str(), refuse,
                                   std::string(v), std::string(in), size_t{8192})
          ->Unit(benchmark::kMicrosecond)
          ->ComputeStatistics("min", min_of);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
