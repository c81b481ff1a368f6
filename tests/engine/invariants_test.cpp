// Randomized workloads against the invariants of issue 4: after every step no block is leaked
// or double-owned and ref counts balance; at the end every request produced exactly the tokens
// (and logprobs, and prompt logprobs) it produces alone — across token budgets 16/64/2048,
// prefix caching on/off, shared prefixes, tiny KV pools that force preemption, random aborts
// mid-flight, and the logits processors (logit_bias, allowed_token_ids, bad words, min_tokens).
#include <gtest/gtest.h>

#include <set>

#include "fake_executor.h"

namespace vllm::engine {
namespace {

using testing::bracket_streams;
using testing::Finished;
using testing::PagedFakeExecutor;
using testing::run_alone;

struct Workload {
  int64_t budget;
  bool caching;
  int64_t num_blocks;
  int block_size;
  int32_t max_num_seqs;
  int num_requests;
  uint64_t seed;
};

struct Spec {
  std::vector<int32_t> prompt;
  SamplingParams params;
  int add_at_step;
  int abort_at_step;  // -1: never
};

void run_workload(const Workload& w) {
  SCOPED_TRACE("budget=" + std::to_string(w.budget) + " caching=" + std::to_string(w.caching) +
               " blocks=" + std::to_string(w.num_blocks) + " seed=" + std::to_string(w.seed));
  std::mt19937_64 rng(w.seed);
  constexpr int32_t kMaxLen = 160;
  // A few shared prefixes so prefix caching has something to find.
  std::vector<std::vector<int32_t>> prefixes;
  for (int i = 0; i < 4; ++i) prefixes.push_back(testing::random_prompt(rng, 8 + rng() % 40));
  std::vector<Spec> specs;
  for (int i = 0; i < w.num_requests; ++i) {
    Spec s;
    if (rng() % 2) s.prompt = prefixes[rng() % prefixes.size()];
    auto tail = testing::random_prompt(rng, 1 + rng() % 40);
    s.prompt.insert(s.prompt.end(), tail.begin(), tail.end());
    s.params.max_tokens = 1 + static_cast<int32_t>(rng() % 24);
    if (rng() % 3 == 0) {
      s.params.temperature = 0.9f;
      switch (rng() % 3) {
        case 0:
          s.params.top_k = 20;
          break;
        case 1:
          s.params.top_p = 0.8f;
          break;
        default:
          s.params.min_p = 0.2f;
      }
      s.params.seed = rng();  // seeded sampling must be batch-invariant as well
    } else {
      s.params.temperature = 0.0f;
    }
    if (rng() % 4 == 0) s.params.logprobs = 2;
    if (rng() % 5 == 0) s.params.prompt_logprobs = static_cast<int32_t>(rng() % 3);
    // Logits processors: each edits the row of its own request only.
    if (rng() % 4 == 0)
      for (int k = 0; k < 6; ++k)
        s.params.logit_bias.emplace_back(static_cast<int32_t>(rng() % 256),
                                         static_cast<float>(rng() % 9) - 4.0f);
    if (rng() % 5 == 0) {
      std::vector<int32_t> allowed;
      for (int k = 0; k < 12; ++k) allowed.push_back(static_cast<int32_t>(rng() % 256));
      s.params.allowed_token_ids = allowed;
    }
    if (rng() % 4 == 0)
      for (int k = 0; k < 8; ++k)
        s.params.bad_words_token_ids.push_back(
            testing::random_prompt(rng, 1 + static_cast<int>(rng() % 2)));
    if (rng() % 5 == 0) {
      s.params.min_tokens = std::min<int32_t>(*s.params.max_tokens, 3);
      s.params.stop_token_ids = {static_cast<int32_t>(rng() % 256)};
    }
    s.add_at_step = static_cast<int>(rng() % (w.num_requests * 2));
    s.abort_at_step = rng() % 8 == 0 ? s.add_at_step + static_cast<int>(rng() % 30) : -1;
    specs.push_back(std::move(s));
  }

  PagedFakeExecutor ex(256, kMaxLen);
  EngineConfig c;
  c.num_gpu_blocks = w.num_blocks;
  c.block_size = w.block_size;
  c.max_num_batched_tokens = w.budget;
  c.max_num_seqs = w.max_num_seqs;
  c.enable_prefix_caching = w.caching;
  LLMEngine eng(c, ex, bracket_streams());
  const KVCacheManager& kv = eng.core().scheduler().kv_cache_manager();

  std::map<std::string, Finished> got;
  std::set<std::string> aborted;
  size_t added = 0;
  int step = 0;
  for (; step < 100000; ++step) {
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::string id = "r" + std::to_string(i);
      if (specs[i].add_at_step == step) {
        eng.add_request(id, specs[i].prompt, specs[i].params);
        ++added;
      }
      if (specs[i].abort_at_step == step && eng.abort_request(id)) aborted.insert(id);
    }
    if (added == specs.size() && !eng.has_unfinished_requests()) break;
    for (auto& o : eng.step()) {
      Finished& f = got[o.request_id];
      ASSERT_FALSE(f.finished) << o.request_id << " output after finishing";
      f.tokens.insert(f.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      f.logprobs.insert(f.logprobs.end(), o.logprobs.begin(), o.logprobs.end());
      f.prompt_logprobs.insert(f.prompt_logprobs.end(), o.prompt_logprobs.begin(),
                               o.prompt_logprobs.end());
      f.text += o.text_delta;
      f.finished = o.finished;
      f.finish_reason = o.finish_reason;
    }
    ASSERT_EQ(kv.check_consistency(), "") << "after step " << step;
    const auto& so = eng.core().last_scheduler_output();
    ASSERT_LE(so.total_num_scheduled_tokens, w.budget);
    ASSERT_LE(eng.metrics().num_requests_running, w.max_num_seqs);
    ASSERT_TRUE(ex.error.empty()) << ex.error << " at step " << step;
  }
  ASSERT_FALSE(eng.has_unfinished_requests());
  // Everything is back in the free queue once the engine is idle.
  EXPECT_EQ(kv.num_free_blocks(), kv.num_blocks());

  int n_checked = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string id = "r" + std::to_string(i);
    const Finished& f = got[id];
    ASSERT_TRUE(f.finished) << id;
    const Finished alone = run_alone(specs[i].prompt, specs[i].params, 256, kMaxLen);
    if (aborted.count(id)) {
      EXPECT_EQ(f.finish_reason, "abort");
      ASSERT_LE(f.tokens.size(), alone.tokens.size()) << id;
      EXPECT_TRUE(std::equal(f.tokens.begin(), f.tokens.end(), alone.tokens.begin())) << id;
      continue;
    }
    EXPECT_EQ(f.tokens, alone.tokens) << id;
    EXPECT_EQ(f.text, alone.text) << id;
    ASSERT_EQ(f.logprobs.size(), alone.logprobs.size()) << id;
    for (size_t k = 0; k < f.logprobs.size(); ++k) {
      EXPECT_EQ(f.logprobs[k].logprob, alone.logprobs[k].logprob) << id;  // bit-identical
      EXPECT_EQ(f.logprobs[k].top, alone.logprobs[k].top) << id;
    }
    if (specs[i].params.prompt_logprobs) {
      // One per prompt token after the first, scored once even when preempted and recomputed.
      EXPECT_EQ(alone.prompt_logprobs.size(), specs[i].prompt.size() - 1) << id;
      ASSERT_EQ(f.prompt_logprobs.size(), alone.prompt_logprobs.size()) << id;
      for (size_t k = 0; k < f.prompt_logprobs.size(); ++k) {
        EXPECT_EQ(f.prompt_logprobs[k].token_id, specs[i].prompt[k + 1]) << id;
        EXPECT_EQ(f.prompt_logprobs[k].logprob, alone.prompt_logprobs[k].logprob) << id;
        EXPECT_EQ(f.prompt_logprobs[k].top, alone.prompt_logprobs[k].top) << id;
      }
    }
    if (const auto& allowed = specs[i].params.allowed_token_ids) {
      for (int32_t t : f.tokens) {
        EXPECT_NE(std::find(allowed->begin(), allowed->end(), t), allowed->end())
            << id << " sampled " << t << " outside allowed_token_ids";
      }
    }
    ++n_checked;
  }
  EXPECT_GT(n_checked, w.num_requests / 2);
  const EngineMetrics m = eng.metrics();
  if (w.caching)
    EXPECT_GT(m.prefix_cache_hits, 0);
  else
    EXPECT_EQ(m.prefix_cache_hits, 0);
  std::printf(
      "  budget=%lld caching=%d blocks=%lld: %d steps, %lld preemptions, %lld/%lld "
      "prefix tokens hit\n",
      static_cast<long long>(w.budget), w.caching, static_cast<long long>(w.num_blocks), step,
      static_cast<long long>(m.num_preemptions_total), static_cast<long long>(m.prefix_cache_hits),
      static_cast<long long>(m.prefix_cache_queries));
}

void PrintTo(const Workload& w, std::ostream* os) {
  *os << "budget=" << w.budget << " caching=" << w.caching << " blocks=" << w.num_blocks << "x"
      << w.block_size << " max_num_seqs=" << w.max_num_seqs << " seed=" << w.seed;
}

class Invariants : public ::testing::TestWithParam<Workload> {};

TEST_P(Invariants, RandomWorkload) { run_workload(GetParam()); }

// Tiny pools (num_blocks) force preemption; 16 blocks of 16 = 256 slots still hold any single
// request (<= 88 + 24 tokens), as add_request requires.
INSTANTIATE_TEST_SUITE_P(Engine, Invariants,
                         ::testing::Values(Workload{16, true, 16, 16, 32, 200, 1},
                                           Workload{16, false, 16, 16, 32, 200, 2},
                                           Workload{64, true, 12, 16, 32, 200, 3},
                                           Workload{64, false, 40, 4, 8, 200, 4},
                                           Workload{2048, true, 10, 16, 64, 300, 5},
                                           Workload{2048, false, 30, 4, 256, 300, 6},
                                           Workload{64, true, 200, 4, 32, 200, 7},
                                           Workload{2048, true, 2000, 16, 32, 200, 8}));

TEST(Invariants, PreemptionHappensInTinyPools) {
  // The gate above is only meaningful if preemption really occurs there.
  PagedFakeExecutor ex(256, 160);
  EngineConfig c;
  c.num_gpu_blocks = 10;
  c.block_size = 16;  // block counts here are of 16-slot blocks
  c.max_num_batched_tokens = 2048;
  LLMEngine eng(c, ex);
  std::mt19937_64 rng(1);
  SamplingParams p;
  p.temperature = 0;
  p.max_tokens = 24;
  for (int i = 0; i < 20; ++i)
    eng.add_request("r" + std::to_string(i), testing::random_prompt(rng, 30 + i), p);
  while (eng.has_unfinished_requests()) eng.step();
  EXPECT_GT(eng.metrics().num_preemptions_total, 0);
  EXPECT_TRUE(ex.error.empty()) << ex.error;
}

// Mutation checks: the fake must notice a wrong slot mapping and stale K/V, otherwise the
// invariance gate could not fail.
TEST(PagedFakeExecutor, DetectsWrongSlotMappingAndStaleKV) {
  PagedFakeExecutor ex(16, 64);
  ex.init_kv_cache(4, 4, vt::DType::F32);
  int32_t toks[2] = {1, 2}, pos[2] = {0, 1}, seq[2] = {0, 0}, bt[2] = {2, 3}, li[1] = {1};
  int64_t slots[2] = {8, 9};
  float logits[16];
  vllm::model::ForwardBatch b{2, toks, pos, seq, slots, bt, 2, 1, li, 1};
  ex.execute(b, logits);
  EXPECT_EQ(ex.error, "");
  slots[1] = 10;  // not block_table[0] * 4 + 1
  ex.execute(b, logits);
  EXPECT_NE(ex.error, "");
  PagedFakeExecutor ex2(16, 64);
  ex2.init_kv_cache(4, 4, vt::DType::F32);
  int32_t bt2[2] = {1, 3};  // reads block 1, which no token was written to
  vllm::model::ForwardBatch b2{1, toks + 1, pos + 1, seq, slots, bt2, 2, 1, li, 0};
  int32_t li0[1] = {0};
  b2.logits_indices = li0;
  b2.n_logits = 1;
  int64_t slot5[1] = {5};
  b2.slot_mapping = slot5;
  ex2.execute(b2, logits);
  EXPECT_NE(ex2.error, "");  // position 0 was never written
}

}  // namespace
}  // namespace vllm::engine
