// LoRA adapters through the engine: requests of two adapters and of the base model, scheduled
// together, give peft's greedy tokens (tests/golden/lora/, tools/make_lora_goldens.py), and the
// decode steps replay captured graphs that carry the adapter ops: the same ids and logprobs,
// bit for bit, as --enforce-eager, with replays counted.
#include <gtest/gtest.h>

#include <map>

#include "../model/test_paths.h"
#include "engine/cpu_model_executor.h"
#include "engine/llm_engine.h"
#include "model/causal_lm.h"

namespace vllm::engine {
namespace {

struct EngineRun {
  std::map<std::string, std::vector<int32_t>> ids;
  std::map<std::string, std::vector<float>> logprobs;
  DecodeGraphDriver::Stats graph;
};

EngineRun run(model::CausalLM& m, bool eager, const nlohmann::json& all,
              const nlohmann::json& mlp) {
  EngineConfig cfg;
  cfg.enforce_eager = eager;
  cfg.kv_cache_dtype = vt::DType::F32;  // peft's goldens are fp32
  cfg.max_model_len = 128;
  cfg.num_gpu_blocks = 64;
  cfg.block_size = 16;
  CpuModelExecutor ex(m);
  LLMEngine eng(cfg, ex);
  for (size_t k = 0; k < all["prompts"].size(); ++k) {
    const auto ids = all["prompts"][k]["prompt_ids"].get<std::vector<int32_t>>();
    for (int32_t lora : {0, 1, 2}) {
      SamplingParams p;
      p.temperature = 0.0f;
      p.max_tokens = 32;
      p.ignore_eos = true;
      p.logprobs = 0;
      p.lora_id = lora;
      eng.add_request(std::to_string(k) + "/" + std::to_string(lora), ids, p);
    }
  }
  EngineRun r;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step()) {
      auto& v = r.ids[o.request_id];
      v.insert(v.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      for (const auto& lp : o.logprobs) r.logprobs[o.request_id].push_back(lp.logprob);
    }
  if (const DecodeGraphDriver* g = eng.core().model_runner().graph_driver()) r.graph = g->stats();
  return r;
}

TEST(LoraEngine, AdaptersReplayInDecodeGraphsAsEager) {
  using namespace vllm::testing;
  const auto all = read_json_file(golden_dir() + "/lora/qwen3_all/index.json");
  const auto mlp = read_json_file(golden_dir() + "/lora/qwen3_mlp/index.json");
  auto m = model::CausalLM::load(tiny_models_dir() + "/qwen3");
  m->add_lora(1, "all", tiny_models_dir() + "/lora/qwen3_all", model::LoraLoadOptions{});
  m->add_lora(2, "mlp", tiny_models_dir() + "/lora/qwen3_mlp", model::LoraLoadOptions{});
  const EngineRun graph = run(*m, false, all, mlp);
  const EngineRun eager = run(*m, true, all, mlp);
  for (size_t k = 0; k < all["prompts"].size(); ++k) {
    const std::string s = std::to_string(k);
    EXPECT_EQ(graph.ids.at(s + "/0"),
              all["prompts"][k]["base_greedy_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(graph.ids.at(s + "/1"), all["prompts"][k]["greedy_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(graph.ids.at(s + "/2"), mlp["prompts"][k]["greedy_ids"].get<std::vector<int32_t>>());
  }
  EXPECT_EQ(graph.ids, eager.ids);
  EXPECT_EQ(graph.logprobs, eager.logprobs);  // bit for bit
  EXPECT_GT(graph.graph.replays, 20);
  EXPECT_EQ(eager.graph.replays, 0);
}

// Graphs captured before any adapter was loaded carry no adapter ops: once one is, they are
// recorded again before a row of it replays.
TEST(LoraEngine, AGraphCapturedBeforeAnAdapterIsRecordedAgain) {
  using namespace vllm::testing;
  const auto all = read_json_file(golden_dir() + "/lora/qwen3_all/index.json");
  auto m = model::CausalLM::load(tiny_models_dir() + "/qwen3");
  EngineConfig cfg;
  cfg.kv_cache_dtype = vt::DType::F32;
  cfg.max_model_len = 128;
  cfg.num_gpu_blocks = 64;
  cfg.block_size = 16;
  CpuModelExecutor ex(*m);
  LLMEngine eng(cfg, ex);
  const auto& p0 = all["prompts"][0];
  // The base request stays within one KV block, so the adapter's first steps reuse its entry
  // at the same block-table width (a width change would re-record the graph anyway).
  auto greedy = [&](const std::string& id, int32_t lora, int32_t n) {
    SamplingParams p;
    p.temperature = 0.0f;
    p.max_tokens = n;
    p.ignore_eos = true;
    p.lora_id = lora;
    eng.add_request(id, p0["prompt_ids"].get<std::vector<int32_t>>(), p);
    std::vector<int32_t> ids;
    while (eng.has_unfinished_requests())
      for (auto& o : eng.step())
        ids.insert(ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    return ids;
  };
  const auto base = p0["base_greedy_ids"].get<std::vector<int32_t>>();
  EXPECT_EQ(greedy("base", 0, 6), std::vector<int32_t>(base.begin(), base.begin() + 6));
  const auto& g = *eng.core().model_runner().graph_driver();
  const int64_t captures = g.stats().captures;
  ASSERT_GT(captures, 0);
  m->add_lora(1, "all", tiny_models_dir() + "/lora/qwen3_all", model::LoraLoadOptions{});
  EXPECT_EQ(greedy("all", 1, 32), p0["greedy_ids"].get<std::vector<int32_t>>());
  EXPECT_GT(g.stats().captures, captures);
}

}  // namespace
}  // namespace vllm::engine
