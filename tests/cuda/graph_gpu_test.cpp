// The graph gate on the GPU (DESIGN.md section 4): decode steps replayed from captured CUDA
// graphs give bit-identical logits and ids to eager execution over 160+ generated tokens (10+
// KV block boundaries at block size 16), at batch 1, 3 and 8 with requests joining and
// leaving, with forced re-capture every 8 replays, and in strict mode with zero
// host-to-device copies in steady state. Mutation checks: each switch that breaks a
// mechanism turns the gate red. Models: SmolLM2-135M Q4_1 (fp16 KV), the tiny bf16 Qwen3
// (bf16 KV) and a synthetic Llama GGUF with every quantized type (harness.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

#include "harness.h"

namespace {

using namespace vllm::cuda_testing;
using vllm::model::CausalLM;

struct Job {
  int arrive_step;
  int prompt_len;
  int max_tokens;
};

struct Trace {
  std::map<std::pair<int, int>, std::pair<uint64_t, int32_t>> rows;  // (job, index) -> (hash, id)
  GraphDecoder::Stats graph;
  vt::cuda::CudaBackend::TransferStats xfer;
  std::string error;
};

const CausalLM& model(const std::string& which) {
  static std::map<std::string, std::unique_ptr<CausalLM>> cache;
  auto it = cache.find(which);
  if (it != cache.end()) return *it->second;
  const std::string path = which == "smollm2"     ? default_gguf()
                           : which == "synthetic" ? synthetic_gguf()
                                                  : tiny_models_dir() + "/" + which;
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path +
                             " missing: run scripts/fetch_models.sh and "
                             "tools/make_tiny_models.py (scripts/gpu_check.sh does)");
  return *(cache[which] = CausalLM::load(path));
}

Trace run(const std::string& which, const std::vector<Job>& jobs, bool graph,
          GraphOptions opts = {}) {
  Trace tr;
  const CausalLM& m = model(which);
  const int64_t V = m.config().vocab_size;
  const int32_t vocab_ids = static_cast<int32_t>(std::min<int64_t>(V, 30000) - 100);
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(m, be);
  ex.init_kv_cache(256, 16, ex.default_kv_cache_dtype());
  Seqs seqs(ex, 256, 16);
  std::unique_ptr<GraphDecoder> dec;
  if (graph) dec = std::make_unique<GraphDecoder>(ex, opts, 16, 8, 64, 512);
  struct Live {
    int job, seq;
    int32_t last;
    int produced;
  };
  std::vector<Live> running;
  try {
    size_t next = 0;
    for (int step = 0; next < jobs.size() || !running.empty(); ++step) {
      for (; next < jobs.size() && jobs[next].arrive_step <= step; ++next) {
        std::vector<int32_t> prompt;
        for (int i = 0; i < jobs[next].prompt_len; ++i)
          prompt.push_back(100 + static_cast<int32_t>((next * 7919 + i * 104729) % vocab_ids));
        const int s = seqs.add();
        const auto& l = seqs.prefill(s, prompt);
        const int32_t tok = host_argmax(l.data(), V);
        tr.rows[{static_cast<int>(next), 0}] = {hash_bits(l.data(), V), tok};
        if (jobs[next].max_tokens > 1)
          running.push_back({static_cast<int>(next), s, tok, 1});
        else
          seqs.release(s);
      }
      if (running.empty()) continue;
      std::vector<int32_t> ids(running.size());
      const std::vector<float>* logits;
      if (!dec) {
        std::vector<int> ss;
        std::vector<int32_t> toks;
        for (const Live& r : running) ss.push_back(r.seq), toks.push_back(r.last);
        logits = &seqs.decode(ss, toks);
        for (size_t i = 0; i < running.size(); ++i) ids[i] = host_argmax(logits->data() + i * V, V);
      } else {
        std::vector<GraphDecoder::Row> rows;
        for (const Live& r : running) {
          const int32_t pos = seqs.length(r.seq);
          seqs.ensure(r.seq, pos + 1);
          rows.push_back({static_cast<uint64_t>(r.job), r.last, pos, seqs.blocks(r.seq).data(),
                          static_cast<int32_t>(seqs.blocks(r.seq).size())});
        }
        logits = &dec->step(rows);
        for (size_t i = 0; i < running.size(); ++i) {
          seqs.advance(running[i].seq, 1);
          ids[i] = dec->next_ids()[i];
          // The in-graph argmax picks what a host argmax of the same logits picks.
          if (ids[i] != host_argmax(logits->data() + i * V, V))
            throw std::runtime_error("device argmax disagrees with the host's");
        }
      }
      std::vector<Live> still;
      for (size_t i = 0; i < running.size(); ++i) {
        Live r = running[i];
        tr.rows[{r.job, r.produced}] = {hash_bits(logits->data() + i * V, V), ids[i]};
        r.last = ids[i];
        if (++r.produced < jobs[r.job].max_tokens)
          still.push_back(r);
        else
          seqs.release(r.seq);
      }
      running = std::move(still);
    }
  } catch (const std::exception& e) {
    tr.error = e.what();
  }
  if (dec) tr.graph = dec->stats();
  tr.xfer = be.transfer_stats();
  return tr;
}

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

void expect_identical(const std::string& which, const std::vector<Job>& jobs, GraphOptions g = {}) {
  const Trace eager = run(which, jobs, false);
  const Trace graph = run(which, jobs, true, g);
  ASSERT_EQ(eager.error, "");
  ASSERT_EQ(graph.error, "");
  EXPECT_EQ(differences(eager, graph), 0);
  EXPECT_GT(graph.graph.captures, 0);
  EXPECT_GT(graph.graph.replays, 100);
  EXPECT_GT(graph.graph.steady_steps, 50);
  EXPECT_EQ(graph.graph.steady_h2d, 0);
  std::printf(
      "graph gate (%s): %zu rows identical; captures %lld, replays %lld (steady %lld), seeds "
      "%lld, block writes %lld, width changes %lld; H2D copies %lld\n",
      which.c_str(), graph.rows.size(), (long long)graph.graph.captures,
      (long long)graph.graph.replays, (long long)graph.graph.steady_steps,
      (long long)graph.graph.seeds, (long long)graph.graph.block_writes,
      (long long)graph.graph.width_changes, (long long)graph.xfer.h2d_copies);
}

TEST(CudaGraphGate, Batch1MatchesEager) { expect_identical("smollm2", kBatch1); }
TEST(CudaGraphGate, Batch3JoinLeaveMatchesEager) { expect_identical("smollm2", kBatch3); }
TEST(CudaGraphGate, Batch8JoinLeaveMatchesEager) { expect_identical("smollm2", kBatch8); }
TEST(CudaGraphGate, Bf16TinyQwen3Batch8MatchesEager) { expect_identical("qwen3", kBatch8); }
TEST(CudaGraphGate, SyntheticMixedQuantsBatch8MatchesEager) {
  expect_identical("synthetic", kBatch8);
}

TEST(CudaGraphGate, ForcedRecaptureEvery8MatchesEager) {
  GraphOptions g;
  g.recapture_every = 8;
  expect_identical("smollm2", kBatch3, g);
  expect_identical("synthetic", kBatch3, g);
}

class CudaGraphStrict : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaGraphStrict, SteadyStateHasNoHostToDeviceCopies) {
  GraphOptions g;
  g.strict = true;
  const Trace eager = run(GetParam(), kBatch1, false);
  const Trace graph = run(GetParam(), kBatch1, true, g);
  ASSERT_EQ(graph.error, "");
  EXPECT_EQ(differences(eager, graph), 0);
  // 170 steps cross 10 block boundaries (a block write, or a re-seed after a width change);
  // every other replay ran with no host-to-device copy at all.
  EXPECT_GE(graph.graph.block_writes + graph.graph.width_changes, 10);
  EXPECT_GT(graph.graph.steady_steps, 140);
  EXPECT_EQ(graph.graph.steady_h2d, 0);
  // The backend's own count agrees (it also counts the first replay after the warm-up's
  // seed as not steady, which the decoder counts as a steady capture step).
  EXPECT_GT(graph.xfer.steady_replays, 140);
  std::printf("strict: %lld steady replays, %lld H2D copies before replays (seeds and blocks)\n",
              (long long)graph.xfer.steady_replays,
              (long long)graph.xfer.strict_h2d_before_replays);
}

INSTANTIATE_TEST_SUITE_P(Models, CudaGraphStrict, ::testing::Values("smollm2", "synthetic"));

// Mutation checks: a gate that cannot fail is not a gate. On the synthetic model, which is
// always there.
bool gate_fails(GraphOptions g) {
  const Trace eager = run("synthetic", kBatch3, false);
  const Trace graph = run("synthetic", kBatch3, true, g);
  if (!graph.error.empty()) std::printf("mutated run refused: %s\n", graph.error.c_str());
  return !graph.error.empty() || differences(eager, graph) > 0;
}

TEST(CudaGraphGate, MutationSkipPerEntryReseedIsCaught) {
  GraphOptions g;
  g.mutate_skip_reseed = true;
  EXPECT_TRUE(gate_fails(g));
}

TEST(CudaGraphGate, MutationKeepOldBlockTableWidthIsCaught) {
  GraphOptions g;
  g.mutate_keep_width = true;
  EXPECT_TRUE(gate_fails(g));
}

TEST(CudaGraphGate, MutationFreeInsteadOfRetireIsCaught) {
  GraphOptions g;
  g.mutate_free_not_retire = true;
  EXPECT_TRUE(gate_fails(g));
}

}  // namespace
