// vLLM's pooler resolution (api/pooler_config.h) over Sentence Transformers folders written
// here around the tiny qwen3 (its config.json and weights linked), and the /v1/embeddings body
// parser (api/server/embeddings.h): what vLLM would pick, and what cannot be honoured refused by
// name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../model/test_paths.h"
#include "api/pooler_config.h"
#include "api/server/api_error.h"
#include "api/server/embeddings.h"
#include "model/causal_lm.h"
#include "tokenizer/tokenizer.h"

namespace vllm::api {
namespace {

namespace fs = std::filesystem;
using engine::PoolingType;

class PoolerConfig : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string base = testing::tiny_models_dir() + "/qwen3";
    model_ = model::CausalLM::load(base).release();
    tok_ = tok::Tokenizer::from_files(base + "/tokenizer.json", base + "/tokenizer_config.json")
               .release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
    delete tok_;
    tok_ = nullptr;
  }
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("pooler_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "1_Pooling");
    fs::copy_file(testing::tiny_models_dir() + "/qwen3/config.json", dir_ / "config.json");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  void st(const std::string& pooling_config, bool normalize) {
    write("modules.json",
          std::string(R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.)"
                      R"(Transformer"},{"idx":1,"name":"1","path":"1_Pooling","type":)"
                      R"("sentence_transformers.models.Pooling"})") +
              (normalize ? R"(,{"idx":2,"name":"2","path":"2_Normalize","type":)"
                           R"("sentence_transformers.models.Normalize"}])"
                         : "]"));
    write("1_Pooling/config.json", pooling_config);
  }
  std::optional<PoolerSetup> resolve(PoolerFlags f = {}) {
    return resolve_pooler(f, dir_.string(), *model_, tok_);
  }
  std::string refusal(PoolerFlags f = {}) {
    try {
      resolve(f);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  }
  static model::CausalLM* model_;
  static tok::Tokenizer* tok_;
  fs::path dir_;
};
model::CausalLM* PoolerConfig::model_ = nullptr;
tok::Tokenizer* PoolerConfig::tok_ = nullptr;

TEST_F(PoolerConfig, RunnerAutoPicksPoolingForSentenceTransformersFolders) {
  EXPECT_FALSE(resolve().has_value());  // config.json alone: a generation model
  PoolerFlags pool;
  pool.runner = "pooling";
  auto p = resolve(pool);  // the model default: LAST, normalized
  ASSERT_TRUE(p);
  EXPECT_EQ(p->type, PoolingType::kLast);
  EXPECT_TRUE(p->normalize);
  EXPECT_EQ(p->hidden_size, 64);
  PoolerFlags task;
  task.task = "embed";  // older vLLM's spelling
  EXPECT_TRUE(resolve(task).has_value());

  st(R"({"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true})", false);
  p = resolve();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->type, PoolingType::kMean);
  EXPECT_FALSE(p->normalize);  // no Normalize module
  st(R"({"pooling_mode": "lasttoken"})", true);
  p = resolve();
  EXPECT_EQ(p->type, PoolingType::kLast);
  EXPECT_TRUE(p->normalize);
  st(R"({"pooling_mode_cls_token": true})", true);
  EXPECT_EQ(resolve()->type, PoolingType::kCls);
  // --pooler-config wins over the folder; --runner generate ignores the folder.
  PoolerFlags over;
  over.pooler_config = R"({"seq_pooling_type": "MEAN", "use_activation": false, "dimensions": 8})";
  p = resolve(over);
  EXPECT_EQ(p->type, PoolingType::kMean);
  EXPECT_FALSE(p->normalize);
  EXPECT_EQ(p->dimensions, 8);
  PoolerFlags gen;
  gen.runner = "generate";
  EXPECT_FALSE(resolve(gen).has_value());
}

TEST_F(PoolerConfig, MatryoshkaFromConfigOrOverrides) {
  st(R"({"pooling_mode_lasttoken": true})", true);
  EXPECT_FALSE(resolve()->is_matryoshka);
  PoolerFlags f;
  f.hf_overrides = R"({"matryoshka_dimensions": [32, 8]})";
  auto p = resolve(f);
  EXPECT_TRUE(p->is_matryoshka);
  EXPECT_EQ(p->matryoshka_dimensions, (std::vector<int32_t>{32, 8}));
  f.hf_overrides = R"({"is_matryoshka": true})";
  p = resolve(f);
  EXPECT_TRUE(p->is_matryoshka);
  EXPECT_TRUE(p->matryoshka_dimensions.empty());
  f.hf_overrides = R"({"matryoshka_dimensions": [65]})";
  EXPECT_NE(refusal(f).find("matryoshka_dimensions: 65 is not in [1, 64]"), std::string::npos);
}

TEST_F(PoolerConfig, WhatCannotBeHonouredIsRefusedByName) {
  auto refused = [&](const std::string& want, PoolerFlags f = {}) {
    const std::string got = refusal(f);
    EXPECT_NE(got.find(want), std::string::npos) << got;
  };
  st(R"({"pooling_mode_max_tokens": true})", false);
  refused("pooling type 'MAX' is not supported");
  st(R"({"pooling_mode_mean_sqrt_len_tokens": true})", false);
  refused("pooling_mode_mean_sqrt_len_tokens is not supported");
  st(R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true})", false);
  refused("more than one pooling mode");
  st(R"({"pooling_mode_lasttoken": true, "include_prompt": false})", false);
  refused("include_prompt false");
  write("modules.json", R"([{"type": "sentence_transformers.models.Dense", "path": "2_Dense"}])");
  refused("sentence_transformers.models.Dense' is not supported");
  fs::remove(dir_ / "modules.json");
  PoolerFlags f;
  f.runner = "pooling";
  for (const auto& [cfg, want] : std::vector<std::pair<std::string, std::string>>{
           {R"({"pooling_type": "STEP"})", "token pooling (STEP)"},
           {R"({"tok_pooling_type": "ALL"})", "--pooler-config tok_pooling_type"},
           {R"({"normalize": true})", "Parameter `normalize` was removed"},
           {R"({"pooling_type": "LAST", "seq_pooling_type": "MEAN"})", "Cannot set both"},
           {R"({"task": "classify"})", "this model's task is embed"},
           {R"({"enable_chunked_processing": true})", "chunked processing"},
           {R"({"dimensions": 65})", "[1, 64]"},
           {R"({"step_tag_id": 3})", "reward-model setting"},
           {R"({"logit_mean": 0.5})", "logit normalization"},
           {R"({"bogus": 1})", "--pooler-config bogus: unknown field"},
           {"[1]", "a JSON object is wanted"},
       }) {
    f.pooler_config = cfg;
    refused(want, f);
  }
  f.pooler_config.clear();
  f.convert = "classify";
  refused("has no classifier head (score.weight)", f);
  f.convert = "none";
  refused("Qwen3ForCausalLM is not a pooling model", f);
}

// vLLM's classifier_from_token: a *ForCausalLM made a classifier of its LM-head rows, as
// Qwen3-Reranker is served (--hf-overrides classifier_from_token / method, or
// is_original_qwen3_reranker).
TEST_F(PoolerConfig, ClassifierFromTokens) {
  const int32_t no = *tok_->token_to_id("no"), yes = *tok_->token_to_id("yes");
  const std::vector<float> rows = model_->lm_head_rows({no, yes});
  const size_t H = rows.size() / 2;
  PoolerFlags f;
  f.convert = "classify";
  for (const char* overrides :
       {R"({"classifier_from_token": ["no", "yes"], "method": "from_2_way_softmax"})",
        R"({"classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": true})"}) {
    f.hf_overrides = overrides;
    const std::optional<PoolerSetup> s = resolve(f);
    ASSERT_TRUE(s) << overrides;
    EXPECT_EQ(s->task, PoolerSetup::Task::kClassify);
    EXPECT_EQ(s->type, PoolingType::kLast);
    ASSERT_EQ(s->num_labels, 1);
    EXPECT_EQ(s->labels, std::vector<std::string>{"LABEL_0"});
    EXPECT_FALSE(s->use_sep_token);  // an LLM as reranker: query and document as one string
    EXPECT_TRUE(s->serves_score());
    ASSERT_EQ(s->classifier.size(), H);
    for (size_t i = 0; i < H; ++i) ASSERT_EQ(s->classifier[i], rows[H + i] - rows[i]) << i;
    // One label: the activation is a sigmoid of yes minus no, i.e. the 2-way softmax's p(yes).
    std::vector<float> h(H);
    for (size_t i = 0; i < H; ++i) h[i] = 0.01f * static_cast<float>(i % 7) - 0.02f;
    double ly = 0, ln = 0;
    for (size_t i = 0; i < H; ++i) ly += double(rows[H + i]) * h[i], ln += double(rows[i]) * h[i];
    EXPECT_NEAR(s->classify(h, true)[0], std::exp(ly) / (std::exp(ly) + std::exp(ln)), 1e-5);
    EXPECT_NEAR(s->classify(h, false)[0], ly - ln, 1e-4);
  }
  f.hf_overrides = R"({"classifier_from_token": ["no", "yes"], "method": "no_post_processing"})";
  std::optional<PoolerSetup> s = resolve(f);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->num_labels, 2);
  EXPECT_EQ(s->classifier, rows);
  EXPECT_FALSE(s->serves_score());  // vLLM's score API wants one label
  // Two labels: softmax, which sums to one.
  const std::vector<float> p = s->classify(std::vector<float>(H, 0.5f), true);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-6);
  for (const auto& [overrides, want] : std::vector<std::pair<std::string, std::string>>{
           {R"({"classifier_from_token": ["no", "yes"]})", "needs method"},
           {R"({"classifier_from_token": ["no", "yes"], "method": "mean"})", "method 'mean'"},
           {R"({"classifier_from_token": ["yes"], "method": "from_2_way_softmax"})",
            "must name two tokens"},
           {R"({"classifier_from_token": ["no", "no such token"], "method": "no_post_processing"})",
            "'no such token' is not a token"},
           {R"({"is_original_qwen3_reranker": true})", "must name two tokens"},
           {R"({"classifier_from_token": ["no", "yes"], "method": "from_2_way_softmax",
                "sbert_ce_default_activation_function": "os.system"})",
            "restricted to torch.nn.modules"},
       }) {
    f.hf_overrides = overrides;
    EXPECT_NE(refusal(f).find(want), std::string::npos) << refusal(f);
  }
  f.hf_overrides.clear();
  f.convert = "embed";
  f.runner = "generate";
  EXPECT_NE(refusal(f).find("--convert embed needs --runner pooling"), std::string::npos);
}

TEST(EmbeddingRequest, ParsesInputsAndRefusesWhatItCannotHonour) {
  auto parse = [](const char* body) { return parse_embedding_request(ojson::parse(body)); };
  EmbeddingRequest r = parse(R"({"input": ["a", "b"], "user": "u", "whatever": 1})");
  EXPECT_EQ(r.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.ignored, std::vector<std::string>{"whatever"});
  r = parse(R"({"input": [[1, 2], [3]]})");
  EXPECT_TRUE(r.inputs_are_ids);
  EXPECT_EQ(r.token_ids, (std::vector<std::vector<int32_t>>{{1, 2}, {3}}));
  r = parse(R"({"input": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(r.conversations.size(), 1u);
  r = parse(
      R"({"messages": [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]})");
  EXPECT_EQ(r.conversations.size(), 2u);
  r = parse(R"({"input": "x", "encoding_format": "base64", "embed_dtype": "bfloat16",
               "endianness": "big", "dimensions": 8, "use_activation": false,
               "truncate_prompt_tokens": 5, "truncation_side": "right"})");
  EXPECT_EQ(r.encoding_format, "base64");
  EXPECT_EQ(r.embed_dtype, "bfloat16");
  EXPECT_EQ(r.dimensions, 8);
  EXPECT_EQ(r.use_activation, false);
  EXPECT_FALSE(r.truncate_left);
  for (const auto& [body, param] : std::vector<std::pair<const char*, const char*>>{
           {R"({"input": "x", "normalize": true})", "normalize"},
           {R"({"input": "x", "encoding_format": "bytes_only"})", "encoding_format"},
           {R"({"input": "x", "embed_dtype": "fp8_e5m2"})", "embed_dtype"},
           {R"({"input": "x", "endianness": "middle"})", "endianness"},
           {R"({"input": "x", "padding": "max_length"})", "padding"},
           {R"({"input": "x", "truncate_prompt_tokens": 0})", "truncate_prompt_tokens"},
           {R"({"input": "x", "mm_processor_kwargs": {}})", "mm_processor_kwargs"},
           {R"({"input": []})", "input"},
           {R"({"input": [1, "a"]})", "input[1]"},
           {R"({"input": ["a", 1]})", "input[1]"},
           {R"({"input": [[]]})", "input[0]"},
           {R"({})", "input"},
           {R"({"input": "x", "messages": []})", "messages"},
       }) {
    try {
      parse(body);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400) << body;
      EXPECT_EQ(e.param(), param) << body << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace vllm::api
