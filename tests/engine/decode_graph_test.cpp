// The graph gate (DESIGN.md section 4): captured-and-replayed decode steps give
// bit-identical logits and ids to eager execution, on the real SmolLM2 file, over 160+
// generated tokens (10+ KV block boundaries at block size 16), at batch 1, 3 and 8, with
// requests joining and finishing mid-generation, with forced re-capture, and in strict
// mode, and with grammar-constrained rows (whose masked argmax differs from the in-graph
// argmax, so the host writes the sampled id). Mutation checks: each test-only switch that
// breaks a mechanism turns the gate red.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "api/llm.h"
#include "engine/runner/decode_graph.h"
#include "engine/structured_output/structured_output.h"

namespace {

using vllm::engine::DecodeGraphOptions;
using vllm::engine::EngineConfig;
using vllm::engine::SamplingParams;

std::string gguf_path() {
  if (const char* p = std::getenv("VLLM_TEST_GGUF")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf";
}

struct Job {
  int arrive_step;
  int prompt_len;
  int max_tokens;
  int grammar = 0;  // 0 none, 1 lower-case words (long), 2 a small JSON schema (short)
};

// What a run produced: per (request, output index) the logits' bit hash and the token.
struct Trace {
  std::map<std::pair<std::string, int>, std::pair<uint64_t, int32_t>> rows;
  vllm::engine::DecodeGraphDriver::Stats graph;
  std::string error;
};

uint64_t hash_bits(const float* x, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(x);
  for (int64_t i = 0; i < n * 4; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

Trace run(const std::vector<Job>& jobs, bool eager, DecodeGraphOptions g = {}) {
  EngineConfig cfg;
  cfg.max_num_seqs = 8;
  cfg.max_model_len = 512;
  cfg.num_gpu_blocks = 256;
  cfg.block_size = 16;  // block counts here are of 16-slot blocks
  cfg.enforce_eager = eager;
  cfg.graph = g;
  Trace tr;
  auto llm = vllm::api::LLM::load(gguf_path(), cfg);
  auto& engine = llm->engine();
  namespace so = vllm::engine::so;
  std::shared_ptr<const so::CompiledGrammar> grammars[3] = {
      nullptr, llm->grammar_compiler().compile(so::GrammarKind::kRegex, "([a-z]{1,12} ){1,400}"),
      llm->grammar_compiler().compile(
          so::GrammarKind::kJsonSchema,
          R"({"type":"object","properties":{"city":{"type":"string","maxLength":20},)"
          R"("n":{"type":"integer"}},"required":["city","n"],"additionalProperties":false})")};
  std::map<std::string, int> produced;
  engine.core().model_runner_mut().set_logits_observer(
      [&](const std::vector<vllm::engine::Request*>& reqs, const float* logits, int32_t V) {
        for (size_t i = 0; i < reqs.size(); ++i) {
          const std::string& id = reqs[i]->request_id;
          tr.rows[{id, produced[id]}].first = hash_bits(logits + i * V, V);
        }
      });
  try {
    size_t next = 0;
    for (int step = 0; next < jobs.size() || engine.has_unfinished_requests(); ++step) {
      for (; next < jobs.size() && jobs[next].arrive_step <= step; ++next) {
        std::vector<int32_t> prompt;
        for (int i = 0; i < jobs[next].prompt_len; ++i)
          prompt.push_back(100 + static_cast<int32_t>((next * 7919 + i * 104729) % 30000));
        SamplingParams p;
        p.temperature = 0;
        p.ignore_eos = true;
        p.max_tokens = jobs[next].max_tokens;
        p.grammar = grammars[jobs[next].grammar];
        engine.add_request("r" + std::to_string(next), prompt, p);
      }
      for (const auto& out : engine.step())
        for (int32_t t : out.new_token_ids)
          tr.rows[{out.request_id, produced[out.request_id]++}].second = t;
    }
  } catch (const std::exception& e) {
    tr.error = e.what();
  }
  if (const auto* d = engine.core().model_runner().graph_driver()) tr.graph = d->stats();
  return tr;
}

// Number of rows whose logits or token differ ("" error and equal size required).
int differences(const Trace& a, const Trace& b) {
  if (a.rows.size() != b.rows.size()) return 1 << 20;
  int d = 0;
  for (const auto& [k, v] : a.rows) {
    auto it = b.rows.find(k);
    if (it == b.rows.end() || it->second != v) ++d;
  }
  return d;
}

const std::vector<Job> kBatch1 = {{0, 5, 170}};
const std::vector<Job> kBatch3 = {{0, 5, 165}, {0, 9, 40}, {20, 3, 70}};
const std::vector<Job> kBatch8 = {{0, 5, 165}, {0, 9, 40},  {0, 17, 30}, {3, 3, 90},
                                  {3, 12, 60}, {10, 7, 20}, {25, 4, 80}, {40, 6, 50}};

class GraphGate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(std::filesystem::exists(gguf_path())) << gguf_path(); }
};

void expect_identical(const std::vector<Job>& jobs, DecodeGraphOptions g = {}) {
  const Trace eager = run(jobs, true);
  const Trace graph = run(jobs, false, g);
  ASSERT_EQ(eager.error, "");
  ASSERT_EQ(graph.error, "");
  EXPECT_EQ(differences(eager, graph), 0);
  EXPECT_GT(graph.graph.captures, 0);
  EXPECT_GT(graph.graph.replays, 100);
  EXPECT_GT(graph.graph.steady_replays, 50);  // replays with no host write before them
  std::printf(
      "graph gate: %zu rows identical; captures %lld, replays %lld (steady %lld), seeds "
      "%lld, block writes %lld, width changes %lld\n",
      graph.rows.size(), (long long)graph.graph.captures, (long long)graph.graph.replays,
      (long long)graph.graph.steady_replays, (long long)graph.graph.seeds,
      (long long)graph.graph.block_writes, (long long)graph.graph.width_changes);
}

TEST_F(GraphGate, Batch1MatchesEager) { expect_identical(kBatch1); }
TEST_F(GraphGate, Batch3JoinLeaveMatchesEager) { expect_identical(kBatch3); }
TEST_F(GraphGate, Batch8JoinLeaveMatchesEager) { expect_identical(kBatch8); }

// Constrained rows: the grammar's mask moves the greedy choice away from the in-graph argmax
// (the model wants capitals, digits and punctuation), so the host writes those ids into the
// graph's inputs; rows join and leave (the JSON rows finish early), re-capture every 8.
const std::vector<Job> kConstrained = {{0, 5, 170, 1}, {0, 9, 60, 2},  {0, 6, 40},
                                       {12, 3, 90, 1}, {20, 7, 60, 2}, {30, 4, 50}};

TEST_F(GraphGate, ConstrainedRowsMatchEager) {
  DecodeGraphOptions g;
  g.recapture_every = 8;
  const Trace eager = run(kConstrained, true);
  const Trace graph = run(kConstrained, false, g);
  ASSERT_EQ(eager.error, "");
  ASSERT_EQ(graph.error, "");
  EXPECT_EQ(differences(eager, graph), 0);
  EXPECT_GT(graph.graph.token_writes, 10);  // masked rows really differed from the argmax
  EXPECT_GT(graph.graph.replays, 100);
  std::printf("constrained graph gate: %zu rows identical; replays %lld, token writes %lld\n",
              graph.rows.size(), (long long)graph.graph.replays,
              (long long)graph.graph.token_writes);
}

TEST_F(GraphGate, ForcedRecaptureEvery8MatchesEager) {
  DecodeGraphOptions g;
  g.recapture_every = 8;
  expect_identical(kBatch3, g);
}

TEST_F(GraphGate, StrictModeSteadyStateHasNoHostWrites) {
  DecodeGraphOptions g;
  g.strict = true;  // a stray host write to graph state would fault here
  const Trace eager = run(kBatch1, true);
  const Trace graph = run(kBatch1, false, g);
  ASSERT_EQ(graph.error, "");
  EXPECT_EQ(differences(eager, graph), 0);
  // 170 steps cross 10 block boundaries: each is a block-table write, or is covered by the
  // re-seed that follows a width change. Every other replay ran with no host write at all.
  EXPECT_GE(graph.graph.block_writes + graph.graph.width_changes, 10);
  EXPECT_LE(graph.graph.replays - graph.graph.steady_replays,
            graph.graph.block_writes + graph.graph.seeds);
  EXPECT_GT(graph.graph.steady_replays, 140);
}

// Mutation checks: a gate that cannot fail is not a gate.
bool gate_fails(DecodeGraphOptions g, const std::vector<Job>& jobs = kBatch3) {
  const Trace eager = run(jobs, true);
  const Trace graph = run(jobs, false, g);
  if (!graph.error.empty()) std::printf("mutated run refused: %s\n", graph.error.c_str());
  return !graph.error.empty() || differences(eager, graph) > 0;
}

TEST_F(GraphGate, MutationSkipPerEntryReseedIsCaught) {
  DecodeGraphOptions g;
  g.mutate_skip_reseed = true;
  EXPECT_TRUE(gate_fails(g));
}

TEST_F(GraphGate, MutationKeepOldBlockTableWidthIsCaught) {
  DecodeGraphOptions g;
  g.mutate_keep_width = true;
  EXPECT_TRUE(gate_fails(g));
}

TEST_F(GraphGate, MutationSkipSampledTokenWriteIsCaught) {
  DecodeGraphOptions g;
  g.mutate_skip_token_write = true;
  EXPECT_TRUE(gate_fails(g, kConstrained));
}

TEST_F(GraphGate, MutationFreeInsteadOfRetireIsCaught) {
  DecodeGraphOptions g;
  g.mutate_free_not_retire = true;
  EXPECT_TRUE(gate_fails(g));
}

}  // namespace
