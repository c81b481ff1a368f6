// Constrained decoding on the real SmolLM2 file, through the whole engine: a constrained
// request's ids and logprobs are the same alone and among 31 others (unconstrained, or under
// another grammar), with prefix caching and chunked prefill, under preemption, and with the
// decode graph or eager. The graph path matters: its in-graph argmax is of the UNMASKED logits,
// so a masked greedy row must take its argmax after masking (a regression there emits a token
// the grammar forbids, which the engine turns into an abort, or changes the ids vs eager).
// Every constrained output is accepted token by token by a fresh matcher.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "api/llm.h"
#include "engine/structured_output/structured_output.h"

namespace {

using vllm::engine::EngineConfig;
using vllm::engine::SamplingParams;
namespace so = vllm::engine::so;

std::string gguf_path() {
  if (const char* p = std::getenv("VLLM_TEST_GGUF")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf";
}

struct Result {
  std::vector<int32_t> ids;
  std::vector<float> logprobs;
  std::string finish, error;
};

const char* kPerson =
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},)"
    R"("age":{"type":"integer","minimum":0,"maximum":99}},"required":["name","age"]})";

struct Spec {
  std::vector<int32_t> prompt;
  int kind;  // 0 unconstrained, 1 person schema, 2 regex
};

std::vector<Spec> specs(int vocab) {
  std::mt19937_64 rng(11);
  std::vector<Spec> s;
  for (int i = 0; i < 32; ++i) {
    std::vector<int32_t> p(5 + rng() % 60);
    for (auto& t : p) t = 200 + static_cast<int32_t>(rng() % std::min(20000, vocab - 200));
    s.push_back({p, i % 3});
  }
  return s;
}

std::map<int, Result> run(const std::vector<Spec>& all, const std::vector<int>& which, bool eager,
                          int64_t budget, int64_t blocks, int64_t* preempted = nullptr) {
  EngineConfig cfg;
  cfg.max_num_seqs = 32;
  cfg.max_model_len = 512;
  cfg.num_gpu_blocks = blocks;
  cfg.block_size = 16;  // block counts here are of 16-slot blocks
  cfg.max_num_batched_tokens = budget;
  cfg.enforce_eager = eager;
  auto llm = vllm::api::LLM::load(gguf_path(), cfg);
  auto& c = llm->grammar_compiler();
  std::shared_ptr<const so::CompiledGrammar> g[3] = {
      nullptr, c.compile(so::GrammarKind::kJsonSchema, kPerson),
      c.compile(so::GrammarKind::kRegex, "[a-z]{2,6}( [a-z]{2,6}){1,3}[.]")};
  auto& eng = llm->engine();
  for (int i : which) {
    SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 24;
    p.logprobs = 0;
    p.grammar = g[all[i].kind];
    eng.add_request(std::to_string(i), all[i].prompt, p);
  }
  std::map<int, Result> res;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step()) {
      Result& r = res[std::stoi(o.request_id)];
      r.ids.insert(r.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      for (auto& lp : o.logprobs) r.logprobs.push_back(lp.logprob);
      if (o.finished) {
        r.finish = o.finish_reason;
        r.error = o.error;
      }
    }
  if (preempted) *preempted = eng.metrics().num_preemptions_total;
  // Every constrained output is in its grammar (a fresh matcher accepts each token).
  for (int i : which) {
    if (!g[all[i].kind]) continue;
    so::Matcher m(g[all[i].kind]);
    for (int32_t t : res[i].ids) EXPECT_TRUE(m.accept(t)) << "request " << i << " token " << t;
    if (res[i].finish == "stop") {
      EXPECT_TRUE(m.is_terminated()) << i;
    }
    EXPECT_EQ(res[i].error, "") << i;
  }
  return res;
}

TEST(StructuredOutputInvariance, ConstrainedRowsAreBatchInvariantGraphAndEager) {
  const int vocab = 49152;
  const auto all = specs(vocab);
  std::vector<int> everyone(32);
  for (int i = 0; i < 32; ++i) everyone[i] = i;
  // References: a few probes of each kind alone, eager.
  const std::vector<int> probes = {0, 1, 2, 4, 5, 7};
  std::map<int, Result> alone;
  for (int i : probes) alone[i] = run(all, {i}, true, 2048, 64)[i];
  int constrained_stops = 0;
  for (int i : probes)
    if (all[i].kind && alone[i].finish == "stop") ++constrained_stops;
  EXPECT_GE(constrained_stops, 2) << "the grammars should finish some outputs";
  struct Case {
    bool eager;
    int64_t budget, blocks;
  };
  for (const Case& k : {Case{false, 2048, 256}, Case{true, 64, 256}, Case{false, 64, 12}}) {
    SCOPED_TRACE("eager=" + std::to_string(k.eager) + " budget=" + std::to_string(k.budget) +
                 " blocks=" + std::to_string(k.blocks));
    int64_t preempted = 0;
    auto got = run(all, everyone, k.eager, k.budget, k.blocks, &preempted);
    if (k.blocks == 12) {
      EXPECT_GT(preempted, 0);
    }
    for (int i : probes) {
      EXPECT_EQ(got[i].ids, alone[i].ids) << i;
      EXPECT_EQ(got[i].logprobs, alone[i].logprobs) << i;
      EXPECT_EQ(got[i].finish, alone[i].finish) << i;
    }
  }
}

}  // namespace

namespace {

// The greedy SmolLM2 model the grammar-start tests share, and one request's output ids under
// `p` (temperature 0, 12 tokens) for a fixed prompt.
std::unique_ptr<vllm::api::LLM> small_llm() {
  EngineConfig cfg;
  cfg.max_model_len = 512;
  cfg.num_gpu_blocks = 64;
  cfg.block_size = 16;  // block counts here are of 16-slot blocks
  return vllm::api::LLM::load(gguf_path(), cfg);
}

std::vector<int32_t> greedy_ids(vllm::api::LLM& llm, SamplingParams p) {
  const std::vector<int32_t> prompt = {504, 3458, 314, 260, 1345, 28, 216};
  p.temperature = 0;
  p.max_tokens = 12;
  auto& eng = llm.engine();
  eng.add_request("q", prompt, p);
  std::vector<int32_t> ids;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step())
      ids.insert(ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
  return ids;
}

// --reasoning-parser: the grammar waits for the reasoning end (grammar_start_sequences) and
// constrains only what follows it. Here the "end token" is the model's own first greedy token,
// so the first token is free (the unconstrained one) and everything after it is in the
// grammar; with an end token never generated the output is the unconstrained one.
TEST(StructuredOutputInvariance, GrammarStartsAfterTheStartToken) {
  auto llm = small_llm();
  auto g = llm->grammar_compiler().compile(so::GrammarKind::kRegex, "[0-9]{3}-[0-9]{2}");
  auto gen = [&](std::shared_ptr<const so::CompiledGrammar> grammar,
                 std::vector<std::vector<int32_t>> start) {
    SamplingParams p;
    p.grammar = grammar;
    p.grammar_start_sequences = std::move(start);
    return greedy_ids(*llm, std::move(p));
  };
  const std::vector<int32_t> free = gen(nullptr, {});
  ASSERT_GE(free.size(), 2u);
  const std::vector<int32_t> after = gen(g, {{free[0]}});
  ASSERT_GE(after.size(), 2u);
  EXPECT_EQ(after[0], free[0]);
  so::Matcher m(g);
  for (size_t i = 1; i < after.size(); ++i) EXPECT_TRUE(m.accept(after[i])) << i;
  EXPECT_TRUE(m.is_terminated());
  // The start token never comes: the grammar never engages.
  EXPECT_EQ(gen(g, {{49151}}), free);

  // An end written as several tokens (grammar_start_sequences, Olmo 3's "</think>"): the
  // grammar engages after the model's own first three free tokens, not after the first two,
  // and one of several sequences (here the second) is enough.
  ASSERT_GE(free.size(), 4u);
  const std::vector<int32_t> seq3 =
      gen(g, {{49151, free[1], free[2]}, {free[0], free[1], free[2]}});
  ASSERT_GE(seq3.size(), 4u);
  EXPECT_TRUE(std::equal(free.begin(), free.begin() + 3, seq3.begin()));
  so::Matcher m3(g);
  for (size_t i = 3; i < seq3.size(); ++i) EXPECT_TRUE(m3.accept(seq3[i])) << i;
  EXPECT_TRUE(m3.is_terminated());
  // A sequence the output never ends with: never engaged.
  EXPECT_EQ(gen(g, {{free[1], free[0]}}), free);
}

// vLLM's engine-based reasoning parsers also end the reasoning on a content token (qwen3's
// <tool_call>): sampled while the grammar waits, it starts the grammar as its first token; one
// the grammar cannot start with is masked until the grammar starts. Here that token is the
// model's own first greedy token.
TEST(StructuredOutputInvariance, ImplicitReasoningEndsStartTheGrammarOrAreMasked) {
  auto llm = small_llm();
  auto gen = [&](std::shared_ptr<const so::CompiledGrammar> grammar,
                 std::vector<int32_t> implicit) {
    SamplingParams p;
    p.grammar = grammar;
    if (grammar) p.grammar_start_sequences = {{49151}};  // never generated
    p.grammar_implicit_starts = std::move(implicit);
    return greedy_ids(*llm, std::move(p));
  };
  const std::vector<int32_t> free = gen(nullptr, {});
  ASSERT_GE(free.size(), 3u);
  // A grammar that starts with the first token's text: that token starts it, and the grammar
  // then finishes the output ("42" after it).
  const std::string first = llm->tokenizer().decode({free[0]}, false);
  auto starts = llm->grammar_compiler().compile(so::GrammarKind::kChoice,
                                                nlohmann::json::array({first + "42"}).dump());
  const std::vector<int32_t> with = gen(starts, {free[0]});
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with[0], free[0]);
  so::Matcher m(starts);
  for (int32_t t : with) EXPECT_TRUE(m.accept(t));
  EXPECT_TRUE(m.is_terminated());
  EXPECT_NE(with, free);
  // A grammar that cannot start with it: the token is masked while the grammar waits, so the
  // model writes something else (and the grammar, never started, leaves the rest free).
  const std::string other = first.rfind('@', 0) == 0 ? "###" : "@@@";
  auto rejects = llm->grammar_compiler().compile(so::GrammarKind::kChoice,
                                                 nlohmann::json::array({other}).dump());
  const std::vector<int32_t> without = gen(rejects, {free[0]});
  ASSERT_FALSE(without.empty());
  EXPECT_NE(without[0], free[0]);
  EXPECT_EQ(std::count(without.begin(), without.end(), free[0]), 0);
  // Not listed as an implicit end: the same grammar leaves the output as it was.
  EXPECT_EQ(gen(rejects, {}), free);
}

}  // namespace
