// Batch invariance on the real SmolLM2-135M GGUF (issue 4, item 5): each request's greedy ids
// and the logprob of every sampled token (log_softmax of the raw logits, compared bit for bit)
// are the same alone and in a batch — chunked at budgets 16 / 64 / 2048, with prefix caching
// on and off, and when a tiny KV pool forces preemption and recomputation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

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
};

model::CausalLM& smollm() {
  static std::unique_ptr<model::CausalLM> m = [] {
    const std::string path = gguf_path();
    if (!std::filesystem::exists(path)) throw std::runtime_error("test model missing: " + path);
    return model::CausalLM::load(path);
  }();
  return *m;
}

std::map<std::string, Result> run(const std::vector<std::vector<int32_t>>& prompts,
                                  const EngineConfig& cfg, int64_t* preemptions = nullptr) {
  CpuModelExecutor ex(smollm());
  LLMEngine eng(cfg, ex);
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 4;
  p.ignore_eos = true;
  p.logprobs = 0;
  for (size_t i = 0; i < prompts.size(); ++i)
    eng.add_request("r" + std::to_string(i), prompts[i], p);
  std::map<std::string, Result> res;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step()) {
      Result& r = res[o.request_id];
      r.ids.insert(r.ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      for (auto& lp : o.logprobs) r.logprobs.push_back(lp.logprob);
    }
  if (preemptions) *preemptions = eng.metrics().num_preemptions_total;
  return res;
}

TEST(RealModelInvariance, SmolLM2GreedyIdsAndLogprobsAreBatchInvariant) {
  ASSERT_NO_THROW(smollm());
  std::mt19937_64 rng(3);
  std::vector<int32_t> shared(40);
  for (auto& t : shared) t = 200 + static_cast<int32_t>(rng() % 20000);
  std::vector<std::vector<int32_t>> prompts;
  for (int len : {14, 30, 47, 62, 5}) {
    std::vector<int32_t> pr;
    if (len > 40) pr = shared;  // two prompts share a 40-token prefix
    while (static_cast<int>(pr.size()) < len)
      pr.push_back(200 + static_cast<int32_t>(rng() % 20000));
    prompts.push_back(pr);
  }
  // Prompts cross a block boundary while decoding, so the 11-block pool (all prompts fit,
  // their growth does not) must preempt. Reference: every request alone.
  std::map<std::string, Result> alone;
  for (size_t i = 0; i < prompts.size(); ++i) {
    EngineConfig c;
    c.num_gpu_blocks = 64;
    c.enable_prefix_caching = false;
    alone["r" + std::to_string(i)] = run({prompts[i]}, c)["r0"];
  }
  struct Case {
    int64_t budget;
    bool caching;
    int64_t blocks;
  };
  for (const Case& k :
       {Case{16, false, 64}, Case{64, true, 64}, Case{2048, true, 64}, Case{2048, false, 11}}) {
    SCOPED_TRACE("budget=" + std::to_string(k.budget) + " caching=" + std::to_string(k.caching) +
                 " blocks=" + std::to_string(k.blocks));
    EngineConfig c;
    c.max_num_batched_tokens = k.budget;
    c.enable_prefix_caching = k.caching;
    c.num_gpu_blocks = k.blocks;
    int64_t preempted = 0;
    auto got = run(prompts, c, &preempted);
    if (k.blocks == 11) {
      EXPECT_GT(preempted, 0) << "the tiny pool should force preemption";
    }
    for (auto& [id, r] : alone) {
      EXPECT_EQ(got[id].ids, r.ids) << id;
      ASSERT_EQ(got[id].logprobs.size(), r.logprobs.size()) << id;
      for (size_t t = 0; t < r.logprobs.size(); ++t)
        EXPECT_EQ(got[id].logprobs[t], r.logprobs[t]) << id << " token " << t;
    }
  }
}

}  // namespace
}  // namespace vllm::engine
