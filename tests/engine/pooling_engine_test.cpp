// Pooling (embedding) requests through the engine: the tiny Sentence Transformers folders of
// tools/make_tiny_embedding.py give sentence-transformers' embeddings (tests/golden/embed/,
// tools/make_embedding_goldens.py) for last-token, first-token and mean pooling, Matryoshka
// truncation follows vLLM (truncate, then normalize), and a request's embedding is the same
// bit for bit alone, chunked, among generation requests, preempted and served from the prefix
// cache.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../model/test_paths.h"
#include "engine/cpu_model_executor.h"
#include "engine/llm_engine.h"
#include "model/causal_lm.h"

namespace vllm::engine {
namespace {

PoolingParams params_of(const nlohmann::json& g) {
  PoolingParams p;
  const std::string t = g["pooling"];
  p.type = t == "LAST" ? PoolingType::kLast : t == "CLS" ? PoolingType::kCls : PoolingType::kMean;
  p.normalize = g["normalize"];
  return p;
}

EngineConfig config(int64_t budget, int64_t blocks = 64, bool prefix_caching = true) {
  EngineConfig cfg;
  cfg.kv_cache_dtype = vt::DType::F32;  // the goldens are fp32
  cfg.max_model_len = 256;
  cfg.num_gpu_blocks = blocks;
  cfg.block_size = 16;
  cfg.max_num_batched_tokens = budget;
  cfg.long_prefill_token_threshold = 0;
  cfg.enable_prefix_caching = prefix_caching;
  return cfg;
}

using Outputs = std::map<std::string, RequestOutput>;

Outputs drain(LLMEngine& eng) {
  Outputs out;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step()) {
      EXPECT_TRUE(o.error.empty()) << o.error;
      auto& acc = out[o.request_id];
      acc.new_token_ids.insert(acc.new_token_ids.end(), o.new_token_ids.begin(),
                               o.new_token_ids.end());
      if (o.finished) {
        acc.finished = true;
        acc.embedding = o.embedding;
        acc.num_cached_tokens = o.num_cached_tokens;
        acc.num_prompt_tokens = o.num_prompt_tokens;
      }
    }
  return out;
}

void expect_close(const std::vector<float>& got, const nlohmann::json& want,
                  const std::string& what) {
  const auto w = want.get<std::vector<float>>();
  ASSERT_EQ(got.size(), w.size()) << what;
  double err = 0, ref = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    err = std::max(err, std::abs(double(got[i]) - w[i]));
    ref = std::max(ref, std::abs(double(w[i])));
  }
  EXPECT_LT(err, 1e-4 * ref) << what << ": max abs error " << err << " of max " << ref;
}

class PoolingGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(PoolingGolden, EmbeddingsMatchSentenceTransformers) {
  using namespace vllm::testing;
  const std::string variant = GetParam();
  const auto g = read_json_file(golden_dir() + "/embed/" + variant + ".json");
  auto m = model::CausalLM::load(tiny_models_dir() + "/embed/" + variant);
  CpuModelExecutor ex(*m);
  LLMEngine eng(config(512), ex);
  const PoolingParams pp = params_of(g);
  const auto& prompts = g["prompts"];
  for (size_t k = 0; k < prompts.size(); ++k) {
    SamplingParams p;
    p.pooling = pp;
    eng.add_request(std::to_string(k), prompts[k]["ids"].get<std::vector<int32_t>>(), p);
  }
  for (size_t t = 0; t < g["truncated"].size(); ++t) {
    const auto& tr = g["truncated"][t];
    SamplingParams p;
    p.pooling = pp;
    p.pooling->dimensions = tr["dimensions"];
    eng.add_request("t" + std::to_string(t),
                    prompts[tr["prompt"].get<size_t>()]["ids"].get<std::vector<int32_t>>(), p);
  }
  const Outputs out = drain(eng);
  ASSERT_EQ(out.size(), prompts.size() + g["truncated"].size());
  for (size_t k = 0; k < prompts.size(); ++k) {
    const RequestOutput& o = out.at(std::to_string(k));
    EXPECT_TRUE(o.new_token_ids.empty());
    expect_close(o.embedding, prompts[k]["embedding"], variant + " prompt " + std::to_string(k));
  }
  for (size_t t = 0; t < g["truncated"].size(); ++t)
    expect_close(out.at("t" + std::to_string(t)).embedding, g["truncated"][t]["embedding"],
                 variant + " truncated " + std::to_string(t));
  EXPECT_EQ(eng.metrics().generation_tokens_total, 0);
}

INSTANTIATE_TEST_SUITE_P(Variants, PoolingGolden,
                         ::testing::Values("qwen3_last", "qwen3_cls", "qwen2_mean", "qwen3_bare"));

// Every way of scheduling a pooling request gives the same embedding, bit for bit: alone with
// the whole prompt in one step, chunked 16 tokens at a time among the other prompts and a
// generation request (whose greedy ids stay those it gets alone), preempted in a cache too
// small for all of them, and, for last-token pooling, with its prefix read from the cache.
TEST(PoolingEngine, EmbeddingsDoNotDependOnScheduling) {
  using namespace vllm::testing;
  for (const char* variant : {"qwen3_last", "qwen2_mean"}) {
    SCOPED_TRACE(variant);
    const auto g = read_json_file(golden_dir() + "/embed/" + variant + ".json");
    auto m = model::CausalLM::load(tiny_models_dir() + "/embed/" + variant);
    CpuModelExecutor ex(*m);
    SamplingParams pool;
    pool.pooling = params_of(g);
    SamplingParams gen;
    gen.temperature = 0.0f;
    gen.max_tokens = 24;
    gen.ignore_eos = true;
    const auto& prompts = g["prompts"];
    auto ids = [&](size_t k) { return prompts[k]["ids"].get<std::vector<int32_t>>(); };
    std::map<std::string, std::vector<float>> alone;
    std::vector<int32_t> gen_alone;
    {
      LLMEngine eng(config(512), ex);
      for (size_t k = 0; k < prompts.size(); ++k) {
        eng.add_request(std::to_string(k), ids(k), pool);
        alone[std::to_string(k)] = drain(eng).at(std::to_string(k)).embedding;
      }
      eng.add_request("gen", ids(2), gen);
      gen_alone = drain(eng).at("gen").new_token_ids;
    }
    {  // chunked, all at once, with a generation request running beside them
      LLMEngine eng(config(16), ex);
      eng.add_request("gen", ids(2), gen);
      for (size_t k = 0; k < prompts.size(); ++k) eng.add_request(std::to_string(k), ids(k), pool);
      const Outputs out = drain(eng);
      EXPECT_EQ(out.at("gen").new_token_ids, gen_alone);
      EXPECT_TRUE(out.at("gen").embedding.empty());
      for (const auto& [id, e] : alone) EXPECT_EQ(out.at(id).embedding, e) << "chunked " << id;
    }
    {  // 14 blocks of 16 slots: the 155-token prompt twice (10 blocks each) and its
       // neighbours, 16 tokens a step each, cannot all fit
      EngineConfig c = config(64, 14);
      c.long_prefill_token_threshold = 16;
      LLMEngine eng(c, ex);
      for (size_t k = 0; k < prompts.size(); ++k) eng.add_request(std::to_string(k), ids(k), pool);
      eng.add_request("1b", ids(1), pool);
      const Outputs out = drain(eng);
      EXPECT_GT(eng.metrics().num_preemptions_total, 0);
      EXPECT_EQ(out.at("1b").embedding, alone.at("1"));
      for (const auto& [id, e] : alone) EXPECT_EQ(out.at(id).embedding, e) << "preempted " << id;
    }
    {  // the same prompt twice: LAST reads the cached prefix, MEAN must not
      LLMEngine eng(config(512), ex);
      eng.add_request("a", ids(1), pool);
      drain(eng);
      eng.add_request("b", ids(1), pool);
      const RequestOutput b = drain(eng).at("b");
      EXPECT_EQ(b.embedding, alone.at("1"));
      if (pool.pooling->type == PoolingType::kLast)
        EXPECT_GT(b.num_cached_tokens, 0);
      else
        EXPECT_EQ(b.num_cached_tokens, 0);
    }
  }
}

// A pooling request fills the whole context (no token is generated), and what it cannot do
// is refused by name.
TEST(PoolingEngine, RequestsAreValidated) {
  using namespace vllm::testing;
  auto m = model::CausalLM::load(tiny_models_dir() + "/embed/qwen3_last");
  CpuModelExecutor ex(*m);
  LLMEngine eng(config(512), ex);
  SamplingParams p;
  p.pooling = PoolingParams{};
  eng.add_request("full", std::vector<int32_t>(256, 100), p);
  const Outputs out = drain(eng);
  EXPECT_EQ(out.at("full").embedding.size(), 64u);
  auto refused = [&](SamplingParams q, size_t n, const std::string& needle) {
    try {
      eng.add_request("x", std::vector<int32_t>(n, 100), q);
      ADD_FAILURE() << "accepted; wanted an error with: " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused(p, 257, "too long");
  SamplingParams d = p;
  d.pooling->dimensions = 65;
  refused(d, 4, "dimensions must be in [1, 64]");
  SamplingParams lp = p;
  lp.logprobs = 1;
  refused(lp, 4, "samples no token");
}

}  // namespace
}  // namespace vllm::engine
