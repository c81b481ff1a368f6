// Batch invariance on real files (issue 4, item 5): the SmolLM2-135M GGUF and the tiny Hugging
// Face checkpoints of tools/make_tiny_models.py. Each request's greedy ids and the logprob of
// every sampled token (log_softmax of the raw logits, compared bit for bit) are the same alone
// and among 31 other requests of different lengths — chunked at budgets 16 / 64 / 2048, with
// prefix caching on and off, and when a tiny KV pool forces preemption and recomputation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include "../model/test_paths.h"
#include "engine/cpu_model_executor.h"
#include "engine/llm_engine.h"
#include "model/causal_lm.h"

namespace vllm::engine {
namespace {

std::string gguf_path() {
  if (const char* p = std::getenv("VLLM_TEST_GGUF")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf";
}

struct Result {
  std::vector<int32_t> ids;
  std::vector<float> logprobs;
  std::vector<std::pair<int32_t, float>> first_top;  // the first token's top logprobs
};

// Models are loaded once per path and kept for the whole test binary.
model::CausalLM& load_model(const std::string& path) {
  static std::map<std::string, std::unique_ptr<model::CausalLM>> cache;
  auto& m = cache[path];
  if (!m) {
    if (!std::filesystem::exists(path)) throw std::runtime_error("test model missing: " + path);
    m = model::CausalLM::load(path);
  }
  return *m;
}

model::CausalLM& smollm() { return load_model(gguf_path()); }

std::map<std::string, Result> run(model::CausalLM& m,
                                  const std::vector<std::vector<int32_t>>& prompts,
                                  const EngineConfig& cfg, int64_t* preemptions = nullptr,
                                  int top_logprobs = 0) {
  CpuModelExecutor ex(m);
  LLMEngine eng(cfg, ex);
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 4;
  p.ignore_eos = true;
  p.logprobs = top_logprobs;
  for (size_t i = 0; i < prompts.size(); ++i)
    eng.add_request("r" + std::to_string(i), prompts[i], p);
  std::map<std::string, Result> res;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step()) {
      Result& r = res[o.request_id];
      if (r.ids.empty() && !o.logprobs.empty()) r.first_top = o.logprobs[0].top;
      r.ids.insert(r.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      for (auto& lp : o.logprobs) r.logprobs.push_back(lp.logprob);
    }
  if (preemptions) *preemptions = eng.metrics().num_preemptions_total;
  return res;
}

// 32 requests of different lengths (5..70 tokens); some share a 40-token prefix.
std::vector<std::vector<int32_t>> invariance_prompts(const model::CausalLM& m) {
  const int32_t vocab = static_cast<int32_t>(m.config().vocab_size);
  const int32_t span = std::min<int32_t>(20000, vocab - 200);
  std::mt19937_64 rng(3);
  std::vector<int32_t> shared(40);
  for (auto& t : shared) t = 200 + static_cast<int32_t>(rng() % span);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 32; ++i) {
    const int len = 5 + static_cast<int>(rng() % 66);
    std::vector<int32_t> pr;
    if (len > 40 && i % 2 == 0) pr = shared;
    while (static_cast<int>(pr.size()) < len)
      pr.push_back(200 + static_cast<int32_t>(rng() % span));
    prompts.push_back(pr);
  }
  return prompts;
}

// Returns the requests' results alone (the reference every batched run must equal).
// kv: the KV cache type (default: --kv-cache-dtype auto, fp16 for these files).
std::map<std::string, Result> check_invariance(model::CausalLM& m,
                                               std::optional<vt::DType> kv = std::nullopt) {
  const auto prompts = invariance_prompts(m);
  // Reference: every request alone.
  std::map<std::string, Result> alone;
  for (size_t i = 0; i < prompts.size(); ++i) {
    EngineConfig c;  // the default block size
    c.num_gpu_blocks = 64;
    c.enable_prefix_caching = false;
    c.kv_cache_dtype = kv;
    alone["r" + std::to_string(i)] = run(m, {prompts[i]}, c)["r0"];
  }
  struct Case {
    int64_t budget;
    bool caching;
    int64_t blocks;
    int block_size;  // where a key lives never changes its arithmetic
  };
  // 12 blocks of 16 hold any single request (at most 74 tokens) but not the batch: preemption.
  for (const Case& k :
       {Case{16, false, 256, 16}, Case{64, true, 128, 32}, Case{2048, true, 256, 16},
        Case{2048, false, 128, 32}, Case{64, true, 12, 16}}) {
    SCOPED_TRACE("budget=" + std::to_string(k.budget) + " caching=" + std::to_string(k.caching) +
                 " blocks=" + std::to_string(k.blocks) +
                 " block_size=" + std::to_string(k.block_size));
    EngineConfig c;
    c.max_num_batched_tokens = k.budget;
    c.enable_prefix_caching = k.caching;
    c.num_gpu_blocks = k.blocks;
    c.block_size = k.block_size;
    c.max_num_seqs = 32;
    c.kv_cache_dtype = kv;
    int64_t preempted = 0;
    auto got = run(m, prompts, c, &preempted);
    if (k.blocks == 12) {
      EXPECT_GT(preempted, 0) << "the tiny pool should force preemption";
    }
    for (auto& [id, r] : alone) {
      EXPECT_EQ(got[id].ids, r.ids) << id;
      if (got[id].logprobs.size() != r.logprobs.size()) {
        ADD_FAILURE() << id << ": " << got[id].logprobs.size() << " logprobs, alone "
                      << r.logprobs.size();
        continue;
      }
      for (size_t t = 0; t < r.logprobs.size(); ++t)
        EXPECT_EQ(got[id].logprobs[t], r.logprobs[t]) << id << " token " << t;
    }
  }
  return alone;
}

// On the default cache (fp16 for this file).
TEST(RealModelInvariance, SmolLM2GreedyIdsAndLogprobsAreBatchInvariant) {
  ASSERT_NO_THROW(smollm());
  check_invariance(smollm());
}

// --kv-cache-dtype float32: batch invariance holds the same way, and the default fp16 K/V
// change the model little: each request's first greedy token is the f32 cache's or its
// near-tie runner-up, its logprob within 0.35 (measured: up to 0.26 on these random-token
// prompts, whose flat distributions are the sensitive case; the clang ASan build flips one
// near-tie that GCC's release build does not).
TEST(RealModelInvariance, SmolLM2F32KvCacheIsBatchInvariantAndCloseToFp16) {
  ASSERT_NO_THROW(smollm());
  model::CausalLM& m = smollm();
  check_invariance(m, vt::DType::F32);
  // The fp16 cache's batch invariance is the test above; here each request alone on both
  // caches. The first greedy token agrees unless the two best were a near-tie (under 0.5
  // nats apart on the f32 cache: random-token prompts give flat distributions), and the
  // token's logprob is within 0.35 either way.
  const auto prompts = invariance_prompts(m);
  EngineConfig c;
  c.num_gpu_blocks = 64;
  c.block_size = 16;  // block counts here are of 16-slot blocks
  c.enable_prefix_caching = false;
  int agreed = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string id = "r" + std::to_string(i);
    c.kv_cache_dtype = std::nullopt;
    const Result h = run(m, {prompts[i]}, c, nullptr, 2)["r0"];
    c.kv_cache_dtype = vt::DType::F32;
    const Result f = run(m, {prompts[i]}, c, nullptr, 2)["r0"];
    ASSERT_FALSE(h.ids.empty());
    ASSERT_EQ(f.first_top.size(), 2u) << id;
    if (h.ids[0] == f.ids[0]) {
      ++agreed;
      EXPECT_NEAR(h.logprobs[0], f.logprobs[0], 0.35) << id;
      continue;
    }
    ASSERT_EQ(h.ids[0], f.first_top[1].first) << id << ": fp16 picked neither of f32's top two";
    const float gap = f.first_top[0].second - f.first_top[1].second;
    EXPECT_LT(gap, 0.5f) << id << ": fp16 " << h.ids[0] << ", f32 " << f.ids[0] << " (gap " << gap
                         << " nats is not a near-tie)";
    EXPECT_NEAR(h.logprobs[0], f.first_top[1].second, 0.35) << id;
  }
  std::printf("fp16 vs f32 cache: %d/8 first tokens agree, the rest near-ties\n", agreed);
}

class TinyModelInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyModelInvariance, GreedyIdsAndLogprobsAreBatchInvariant) {
  const std::string path = vllm::testing::tiny_models_dir() + "/" + GetParam();
  ASSERT_TRUE(std::filesystem::exists(path + "/config.json"))
      << path << " missing: run python3 tools/make_tiny_models.py --out "
      << vllm::testing::tiny_models_dir();
  check_invariance(load_model(path));
}

INSTANTIATE_TEST_SUITE_P(TinyModels, TinyModelInvariance,
                         ::testing::ValuesIn(vllm::testing::tiny_hf_models()));

// --kv-cache-dtype bfloat16 (the default for bf16 checkpoints) keeps batch invariance too.
TEST(RealModelInvariance, Bf16KvCacheIsBatchInvariant) {
  const std::string path = vllm::testing::tiny_models_dir() + "/qwen3";
  ASSERT_TRUE(std::filesystem::exists(path + "/config.json")) << path;
  check_invariance(load_model(path), vt::DType::BF16);
}

}  // namespace
}  // namespace vllm::engine
