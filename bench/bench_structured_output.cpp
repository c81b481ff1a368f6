// Token-mask speed for a 10-field JSON schema (the corpus' "ten_fields") on the SmolLM2
// (49,152) and Qwen3 (151,669) vocabularies, over a realistic document tokenized by each:
//   Warm    — masks with the grammar's caches already filled (steady state of a server
//             decoding many requests with one schema): fill_mask + accept per token;
//   ColdCI  — a freshly compiled grammar each iteration: every state's context-independent
//             set and full mask computed on first use (the first request of a new schema);
//   ColdNewSchema — a fresh grammar, but the compiler has served another schema before;
//   Compile — schema text -> automaton (no vocabulary work; that is lazy).
// Counter "mask" is CPU seconds per token (fill_mask + accept); worst_mask_ms is the slowest
// single cold fill_mask (wall clock). Budget (brief): 32 requests at
// ~320 tok/s total leaves ~0.3 ms per mask for 10% of a step.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/structured_output/structured_output.h"
#include "model/tokenizer_loader.h"

namespace {

using namespace vllm::engine::so;

struct Setup {
  std::unique_ptr<vllm::tok::Tokenizer> tok;
  std::shared_ptr<const VocabIndex> vocab;
  std::string schema;
  std::vector<int32_t> doc;
};

std::string schema_text() {
  std::ifstream f(VLLM_SOURCE_DIR "/tests/golden/structured_output/corpus.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const nlohmann::json corpus = nlohmann::json::parse(ss.str());
  for (const auto& e : corpus["entries"])
    if (e["name"] == "ten_fields") return e["text"];
  throw std::runtime_error("ten_fields missing from the corpus");
}

const char* kDoc =
    "{\"id\": 48213, \"name\": \"Alice Smith\", \"email\": \"alice.smith@example.com\", "
    "\"active\": true, \"score\": 87.5, \"tags\": [\"admin\", \"beta-tester\", \"emea\"], "
    "\"role\": \"admin\", \"created\": \"2024-05-01T12:30:00Z\", \"manager_id\": null, "
    "\"notes\": \"Prefers email contact; reviewed the Q3 report and asked for a follow-up "
    "meeting next week.\"}";

Setup& setup(bool qwen) {
  static std::unique_ptr<Setup> s[2];
  auto& x = s[qwen];
  if (!x) {
    x = std::make_unique<Setup>();
    if (qwen) {
      x->tok = vllm::model::load_tokenizer(VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer");
    } else {
      const char* p = std::getenv("VLLM_TEST_GGUF");
      const char* home = std::getenv("HOME");
      x->tok =
          vllm::model::load_tokenizer(p ? p
                                        : std::string(home ? home : "/root") +
                                              "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf");
    }
    x->vocab = VocabIndex::build(*x->tok);
    x->schema = schema_text();
    x->doc = x->tok->encode(kDoc, false);
  }
  return *x;
}

std::shared_ptr<const CompiledGrammar> fresh(const Setup& s) {
  const Grammar g = GrammarCompiler::to_grammar(GrammarKind::kJsonSchema, s.schema);
  return std::make_shared<const CompiledGrammar>(compile_fsm(g), s.vocab,
                                                 static_cast<int32_t>(g.rules.size()));
}

// Returns the slowest single fill_mask in seconds.
double run_doc(const std::shared_ptr<const CompiledGrammar>& g, const Setup& s,
               std::vector<uint32_t>& mask) {
  Matcher m(g);
  double worst = 0;
  for (int32_t t : s.doc) {
    const auto t0 = std::chrono::steady_clock::now();
    m.fill_mask(mask);
    worst = std::max(worst,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!((mask[t >> 5] >> (t & 31)) & 1) || !m.accept(t)) throw std::runtime_error("rejected");
  }
  if (!m.is_complete()) throw std::runtime_error("incomplete");
  return worst;
}

void BM_Warm(benchmark::State& state) {
  const Setup& s = setup(state.range(0));
  auto g = fresh(s);
  std::vector<uint32_t> mask(s.vocab->mask_words());
  run_doc(g, s, mask);  // fills the caches
  for (auto _ : state) run_doc(g, s, mask);
  state.counters["mask"] = benchmark::Counter(
      static_cast<double>(s.doc.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["tokens"] = static_cast<double>(s.doc.size());
  state.counters["vocab"] = s.vocab->vocab_size();
  const auto st = g->stats();
  state.counters["cache_entries"] = static_cast<double>(st.mask_entries);
  state.counters["cache_KiB"] = static_cast<double>(st.mask_cache_bytes + st.ci_bytes) / 1024;
}

void BM_ColdCI(benchmark::State& state) {
  const Setup& s = setup(state.range(0));
  std::vector<uint32_t> mask(s.vocab->mask_words());
  int64_t ci = 0;
  double worst = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto g = fresh(s);
    state.ResumeTiming();
    worst = std::max(worst, run_doc(g, s, mask));
    ci = g->stats().ci_computed;
  }
  state.counters["worst_mask_ms"] = worst * 1e3;
  state.counters["mask"] = benchmark::Counter(
      static_cast<double>(s.doc.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["ci_states"] = static_cast<double>(ci);
}

// A new schema on a server that has served another one: the context-independent sets of
// states it shares with earlier grammars (string content, ...) come from the compiler-wide
// cache; the rest is computed.
void BM_ColdNewSchema(benchmark::State& state) {
  const Setup& s = setup(state.range(0));
  GrammarCompiler compiler(s.vocab);
  std::vector<uint32_t> mask(s.vocab->mask_words());
  {
    auto other = compiler.compile(GrammarKind::kJsonSchema,
                                  R"({"type":"object","properties":{"q":{"type":"string"}}})");
    Matcher m(other);
    for (int32_t t : s.tok->encode(R"({"q": "hello there"})", false)) {
      m.fill_mask(mask);
      m.accept(t);
    }
  }
  int64_t shared = 0, computed = 0;
  double worst = 0;
  int i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // A text the compile cache has not seen, for the same schema.
    auto g = compiler.compile(GrammarKind::kJsonSchema, s.schema + std::string(++i, ' '));
    state.ResumeTiming();
    worst = std::max(worst, run_doc(g, s, mask));
    shared = g->stats().ci_shared;
    computed = g->stats().ci_computed;
  }
  state.counters["mask"] = benchmark::Counter(
      static_cast<double>(s.doc.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["worst_mask_ms"] = worst * 1e3;
  state.counters["ci_shared"] = static_cast<double>(shared);
  state.counters["ci_computed"] = static_cast<double>(computed);
}

void BM_Compile(benchmark::State& state) {
  const Setup& s = setup(state.range(0));
  int32_t states = 0;
  for (auto _ : state) {
    auto g = fresh(s);
    states = g->fsm().num_states();
  }
  state.counters["states"] = states;
}

// 0 = SmolLM2, 1 = Qwen3
BENCHMARK(BM_Warm)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ColdCI)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ColdNewSchema)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Compile)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
