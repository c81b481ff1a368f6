// The GGUF twins of the tiny Hugging Face models whose architectures llama.cpp's converter
// lays out its own way (tools/make_gemma_gguf.py: Gemma 2 and 3; tools/make_phi3_gguf.py:
// Phi-3 with fused F16 attn_qkv / ffn_up; tools/make_llama_gguf.py: Mixtral's stacked experts,
// SmolLM3's NoPE layers, Granite's multipliers, Qwen2.5-VL's text model as `qwen2vl`,
// OLMo 2's norms; gpt-oss's MXFP4 experts, sinks and YaRN), against
// llama.cpp on the same files: greedy decoding equals llama.cpp's under the near-tie rule of
// DESIGN.md, and the two best logits of every step are llama.cpp's (within 0.05). Goldens:
// tests/golden/<arch>/greedy.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/static_batch.h"
#include "model/weight_store.h"
#include "test_paths.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::StaticBatch;

namespace {
std::string gguf_path(const std::string& arch) { return tiny_models_dir() + "/" + arch + ".gguf"; }
}  // namespace

class GgufTwin : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufTwin, GreedyAndTopLogitsMatchLlamaCpp) {
  const std::string arch = GetParam();
  const auto gold = read_json_file(golden_dir() + "/" + arch + "/greedy.json");
  auto m = CausalLM::load(gguf_path(arch));
  const int64_t V = m->config().vocab_size;
  int total_agreed = 0, total_steps = 0, near_ties = 0;
  ASSERT_GE(gold["prompts"].size(), 3u);
  // longrope past its original length (phi3_5, phi4_mini): llama.cpp at a context past it
  // rotates with rope_factors_long, as the engine does when loaded for such a context.
  std::unique_ptr<CausalLM> long_model;
  auto prompts = gold["prompts"];
  for (const auto& p : gold.value("long_prompts", nlohmann::json::array())) {
    vllm::model::LoadOptions opts;
    opts.max_model_len = p["n_ctx"].get<int64_t>();
    long_model = CausalLM::load(gguf_path(arch), vt::ThreadPool::global(), opts);
    EXPECT_TRUE(long_model->config().rope_scaling.use_long);
    EXPECT_GT(p["prompt_ids"].size(),
              static_cast<size_t>(m->config().rope_scaling.original_max_position_embeddings));
    prompts.push_back(p);
  }
  for (const auto& p : prompts) {
    const bool is_long = p.contains("n_ctx");
    CausalLM& model = is_long ? *long_model : *m;
    const auto ids = p["prompt_ids"].get<std::vector<int32_t>>();
    const auto& steps = p["steps"];
    StaticBatch sb(model, 1, static_cast<int64_t>(ids.size() + steps.size()) + 1, 16,
                   vt::DType::F32);
    const std::vector<float>* logits = &sb.prefill({ids});
    for (size_t s = 0; s < steps.size(); ++s) {
      const float* l = logits->data();
      const int32_t ours = static_cast<int32_t>(std::max_element(l, l + V) - l);
      const int32_t ref = steps[s]["id"].get<int32_t>();
      const auto top2 = steps[s]["top2_logits"].get<std::vector<double>>();
      if (ours != ref) {
        // The long prompts' top-2 gaps are wide (0.015 and more at every step in transformers,
        // llama.cpp equal to it): no near-tie stop there.
        EXPECT_FALSE(is_long) << p["name"].get<std::string>() << " step " << s << ": ours " << ours
                              << ", llama.cpp " << ref;
        EXPECT_LT(top2[0] - top2[1], 0.5)
            << p["name"].get<std::string>() << " step " << s << ": ours " << ours << ", llama.cpp "
            << ref << " (not a near-tie)";
        ++near_ties;
        break;
      }
      const auto top2_ids = steps[s]["top2_ids"].get<std::vector<int32_t>>();
      EXPECT_NEAR(l[ours], top2[0], 0.05) << p["name"].get<std::string>() << " step " << s;
      EXPECT_NEAR(l[top2_ids[1]], top2[1], 0.05) << p["name"].get<std::string>() << " step " << s;
      ++total_agreed;
      if (s + 1 < steps.size()) logits = &sb.decode({ours});
    }
    total_steps += static_cast<int>(steps.size());
  }
  std::printf("%s llama.cpp gate: %d/%d steps agree, %d near-tie stops\n", arch.c_str(),
              total_agreed, total_steps, near_ties);
  EXPECT_GE(total_agreed, total_steps * 3 / 4);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, GgufTwin,
                         ::testing::Values("gemma3", "gemma2", "phi3", "mixtral", "smollm3",
                                           "granite", "qwen2_5_vl", "olmo2", "phi3_5", "phi4_mini",
                                           "glm4", "cohere", "cohere2", "exaone4", "gpt_oss",
                                           "qwen2_moe", "olmoe", "granitemoe", "glm4_moe",
                                           "minimax_m2", "ernie4_5", "ernie4_5_moe", "seed_oss",
                                           "arcee", "gemma", "hunyuan_dense", "stablelm", "phi",
                                           "starcoder2", "deepseek_v3", "ministral3"));

// GLM-4.5's two forms read to the same configuration: the GGUF's block_count counts the MTP
// layer (nextn_predict_layers), its leading_dense_block_count / expert_group_* / expert_weights_*
// / expert_shared_count keys are config.json's first_k_dense_replace / n_group, topk_group /
// routed_scaling_factor, norm_topk_prob / n_shared_experts, and the optional q/k norm and q/k/v
// bias tensors say use_qk_norm / attention_bias.
TEST(Glm4Moe, GgufAndHfConfigurations) {
  auto g = vllm::model::GgufFile::open(gguf_path("glm4_moe"));
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/glm4_moe");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_EQ(c->num_layers, 3);
    EXPECT_EQ(c->mlp_only_layers, std::vector<int64_t>{0});
    EXPECT_FALSE(c->layer_is_moe(0));
    EXPECT_TRUE(c->layer_is_moe(1));
    EXPECT_TRUE(c->layer_is_moe(2));
    EXPECT_EQ(c->num_experts, 8);
    EXPECT_EQ(c->num_experts_per_tok, 2);
    EXPECT_EQ(c->moe_intermediate_size, 32);
    EXPECT_EQ(c->shared_expert_intermediate_size, 32);
    EXPECT_TRUE(c->router_sigmoid);
    EXPECT_EQ(c->n_group, 2);
    EXPECT_EQ(c->topk_group, 1);
    EXPECT_TRUE(c->norm_topk_prob);
    EXPECT_DOUBLE_EQ(c->routed_scaling_factor, 2.5);
    EXPECT_TRUE(c->qk_norm);
    EXPECT_TRUE(c->attention_bias);
    EXPECT_EQ(c->rope_dim(), 16);
    EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kNeox);
  }
}

// Phi-3's GGUF: the fused matrices read as row ranges of F16 tensors; no sliding window (the
// file has none, and llama.cpp ignores Phi's); the HF folder keeps config.json's window.
TEST(Phi3, GgufAndHfConfigurations) {
  auto g = vllm::model::GgufFile::open(gguf_path("phi3"));
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/phi3");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_EQ(c->architecture, "Phi3ForCausalLM");
    EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kNeox);
    EXPECT_EQ(c->head_dim, 16);
    EXPECT_EQ(c->intermediate_size, 128);
  }
  EXPECT_TRUE(gc.sliding_window.empty());
  EXPECT_EQ(hc.sliding_window, (std::vector<int32_t>{12, 12}));
  auto m = CausalLM::load(gguf_path("phi3"));
  EXPECT_EQ(m->layers()[0].attn.q.dtype, vt::DType::F16);
  EXPECT_EQ(m->layers()[0].mlp.up.rows, 128);
}

// MiniMax-M2's two forms read to the same configuration: the sigmoid router with its
// correction bias and renormalized weights (llama.cpp always renormalizes; the GGUF's
// expert_gating_func says sigmoid), whole-projection q/k norms, rotary_dim (config.json's
// legacy key) as rope.dimension_count.
TEST(MiniMaxM2, GgufAndHfConfigurations) {
  auto g = vllm::model::GgufFile::open(gguf_path("minimax_m2"));
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/minimax_m2");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_EQ(c->num_layers, 3);
    for (int64_t l = 0; l < 3; ++l) EXPECT_TRUE(c->layer_is_moe(l));
    EXPECT_EQ(c->num_experts, 8);
    EXPECT_EQ(c->num_experts_per_tok, 2);
    EXPECT_EQ(c->moe_intermediate_size, 32);
    EXPECT_EQ(c->shared_expert_intermediate_size, 0);
    EXPECT_TRUE(c->router_sigmoid);
    EXPECT_EQ(c->n_group, 1);
    EXPECT_TRUE(c->norm_topk_prob);
    EXPECT_DOUBLE_EQ(c->routed_scaling_factor, 1.0);
    EXPECT_TRUE(c->qk_norm);
    EXPECT_TRUE(c->qk_norm_whole);
    EXPECT_FALSE(c->attention_bias);
    EXPECT_EQ(c->rope_dim(), 16);
    EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kNeox);
  }
}

// ERNIE 4.5's two forms read to the same configuration: rotary in adjacent pairs (llama.cpp's rope
// NORM on rows as stored), tied; the MoE's sparse layers from moe_layer_start_index /
// moe_layer_interval (leading_dense_block_count / interleave_moe_layer_step), its shared width
// from moe_num_shared_experts (the converter's expert_shared_feed_forward_length), the softmax
// router with its correction bias.
TEST(Ernie45, GgufAndHfConfigurations) {
  for (const char* name : {"ernie4_5", "ernie4_5_moe"}) {
    SCOPED_TRACE(name);
    auto g = vllm::model::GgufFile::open(gguf_path(name));
    const auto gc = vllm::model::config_from_gguf(*g);
    const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/" + name);
    const bool moe = std::string(name) == "ernie4_5_moe";
    for (const auto* c : {&gc, &hc}) {
      EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kInterleaved);
      EXPECT_EQ(c->rope_dim(), 32);
      EXPECT_TRUE(c->tie_word_embeddings);
      EXPECT_EQ(c->num_layers, moe ? 3 : 2);
      EXPECT_EQ(c->num_experts, moe ? 8 : 0);
      if (!moe) continue;
      EXPECT_FALSE(c->layer_is_moe(0));
      EXPECT_TRUE(c->layer_is_moe(1));
      EXPECT_TRUE(c->layer_is_moe(2));
      EXPECT_EQ(c->num_experts_per_tok, 2);
      EXPECT_EQ(c->moe_intermediate_size, 32);
      EXPECT_EQ(c->shared_expert_intermediate_size, 64);
      EXPECT_TRUE(c->router_score_bias);
      EXPECT_FALSE(c->router_sigmoid);
      EXPECT_TRUE(c->norm_topk_prob);
    }
  }
}

// Seed-OSS's two forms: q/k/v biases (config.json's attention_bias; the GGUF's attn_q.bias),
// rotate-half rotary, the pre-MLP norm from the GGUF's post_attention_norm.
TEST(SeedOss, GgufAndHfConfigurations) {
  auto g = vllm::model::GgufFile::open(gguf_path("seed_oss"));
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/seed_oss");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_TRUE(c->attention_bias);
    EXPECT_FALSE(c->o_bias);
    EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kNeox);
    EXPECT_EQ(c->head_dim, 32);
    EXPECT_FALSE(c->tie_word_embeddings);
  }
}

// DeepSeek-V2's GGUF in both of llama.cpp's forms (the current converter's MQA form with kv_b
// split into attn_k_b / attn_v_b, and the earlier attn_kv_b form that scripts/test.sh writes as
// deepseek_v2.kv_b.gguf) reads to the Hugging Face folder's model, whose logits the transformers
// gate holds: the same configuration (latent sizes, YaRN with DeepSeek's mscale, the softmax
// router's scale) and the same logits over a prompt and eight greedy steps. (llama.cpp 0.3.36
// leaves transformers' greedy path on this 27-layer model with YaRN, so the tiny V3 carries the
// llama.cpp gate for the MLA GGUF instead.)
TEST(DeepSeek, V2GgufFormsReadAsTheHfFolder) {
  const std::string legacy = tiny_models_dir() + "/deepseek_v2.kv_b.gguf";
  ASSERT_TRUE(std::filesystem::exists(legacy)) << legacy << " missing (scripts/test.sh makes it)";
  auto hf = CausalLM::load(tiny_models_dir() + "/deepseek_v2");
  const std::vector<int32_t> ids = {1, 2047, 3, 880, 881, 882, 64, 1024, 77, 5, 1500, 9};
  auto run = [&](CausalLM& m) {
    std::vector<std::vector<float>> out;
    StaticBatch sb(m, 1, static_cast<int64_t>(ids.size()) + 10, 16, vt::DType::F32);
    const std::vector<float>* l = &sb.prefill({ids});
    for (int s = 0; s < 8; ++s) {
      out.push_back(*l);
      const int32_t next =
          static_cast<int32_t>(std::max_element(l->begin(), l->end()) - l->begin());
      l = &sb.decode({next});
    }
    return out;
  };
  const auto want = run(*hf);
  for (const std::string& path : {gguf_path("deepseek_v2"), legacy}) {
    auto g = CausalLM::load(path);
    const auto& c = g->config();
    const auto& h = hf->config();
    EXPECT_TRUE(c.mla) << path;
    EXPECT_EQ(c.q_lora_rank, 0) << path;
    EXPECT_EQ(c.kv_lora_rank, h.kv_lora_rank) << path;
    EXPECT_EQ(c.qk_nope_head_dim, h.qk_nope_head_dim) << path;
    EXPECT_EQ(c.v_head_dim, h.v_head_dim) << path;
    EXPECT_EQ(c.head_dim, 8 + 32) << path;  // one latent head: the rotated part, kv_lora_rank
    EXPECT_EQ(c.rope_dim(), 8) << path;
    EXPECT_EQ(c.num_kv_heads, 1) << path;
    EXPECT_EQ(c.rope_style, vt::cpu::RopeStyle::kInterleaved) << path;
    EXPECT_EQ(c.rope_scaling.type, "yarn") << path;
    EXPECT_DOUBLE_EQ(c.rope_scaling.factor, 4.0) << path;
    EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 32) << path;
    EXPECT_NEAR(c.attention_multiplier, h.attention_multiplier, 1e-6) << path;
    EXPECT_GT(c.attention_multiplier, 1.0 / std::sqrt(24.0) * 1.1) << path;  // mscale^2 applied
    EXPECT_FALSE(c.router_sigmoid) << path;
    EXPECT_NEAR(c.routed_scaling_factor, 1.5, 1e-6) << path;
    EXPECT_FALSE(c.norm_topk_prob) << path;
    EXPECT_EQ(c.shared_expert_intermediate_size, 64) << path;
    EXPECT_EQ(c.mlp_only_layers, std::vector<int64_t>{0}) << path;
    const auto got = run(*g);
    ASSERT_EQ(got.size(), want.size());
    for (size_t s = 0; s < want.size(); ++s) {
      float worst = 0;
      for (size_t i = 0; i < want[s].size(); ++i)
        worst = std::max(worst, std::fabs(got[s][i] - want[s][i]));
      EXPECT_LT(worst, 1e-3f) << path << " step " << s;
    }
  }
}

// DeepSeek-V3's GGUF (the MQA form, a q latent) reads to config.json's configuration: the
// sigmoid router with its groups, scale and renormalization, the latent sizes.
TEST(DeepSeek, V3GgufAndHfConfigurations) {
  auto g = vllm::model::GgufFile::open(gguf_path("deepseek_v3"));
  const auto gc = vllm::model::config_from_gguf(*g);
  const auto hc = vllm::model::config_from_hf_dir(tiny_models_dir() + "/deepseek_v3");
  for (const auto* c : {&gc, &hc}) {
    EXPECT_TRUE(c->mla);
    EXPECT_EQ(c->q_lora_rank, 24);
    EXPECT_EQ(c->kv_lora_rank, 32);
    EXPECT_EQ(c->qk_nope_head_dim, 16);
    EXPECT_EQ(c->v_head_dim, 16);
    EXPECT_EQ(c->head_dim, 8 + 32);
    EXPECT_EQ(c->rope_dim(), 8);
    EXPECT_EQ(c->num_kv_heads, 1);
    EXPECT_EQ(c->rope_style, vt::cpu::RopeStyle::kInterleaved);
    EXPECT_TRUE(c->router_sigmoid);
    EXPECT_TRUE(c->router_score_bias);
    EXPECT_EQ(c->n_group, 4);
    EXPECT_EQ(c->topk_group, 2);
    EXPECT_TRUE(c->norm_topk_prob);
    EXPECT_DOUBLE_EQ(c->routed_scaling_factor, 2.5);
    EXPECT_EQ(c->shared_expert_intermediate_size, 32);
    EXPECT_NEAR(c->attention_multiplier, 1.0 / std::sqrt(24.0), 1e-9);
  }
}

// The absorbed latent attention reads each head's k rows of kv_b transposed (k_b). From a
// Hugging Face folder they are built at load: a BF16 (or F16) checkpoint's values move as they
// are, in their own type (half of F32's bytes for every token to read); F32 stays F32.
TEST(DeepSeek, KbTransposeKeepsTheCheckpointsSixteenBitType) {
  const int64_t H = 2, NP = 3, VD = 2, KL = 4, rows = H * (NP + VD);
  vllm::model::ModelConfig c;
  c.num_layers = 1;
  c.num_heads = H;
  c.qk_nope_head_dim = NP;
  c.v_head_dim = VD;
  c.kv_lora_rank = KL;
  const auto* family = vllm::model::family_for_hf("DeepseekV2ForCausalLM");
  ASSERT_NE(family, nullptr);
  ASSERT_NE(family->hf_weights, nullptr);
  for (const vt::DType dt : {vt::DType::BF16, vt::DType::F32}) {
    const size_t esz = dt == vt::DType::BF16 ? 2 : 4;
    auto src = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * KL) * esz);
    // Element (row, k) holds the value row * KL + k (exact in BF16's top float bits).
    for (int64_t i = 0; i < rows * KL; ++i) {
      const float f = static_cast<float>(i);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (esz == 2) {
        const uint16_t top = static_cast<uint16_t>(bits >> 16);
        std::memcpy(src->data() + i * 2, &top, 2);
      } else {
        std::memcpy(src->data() + i * 4, &f, 4);
      }
    }
    vllm::model::WeightStore s;
    vllm::model::TensorRef t;
    t.name = "model.layers.0.self_attn.kv_b_proj.weight";
    t.dtype = dt;
    t.shape = {rows, KL};
    t.data = src->data();
    t.n_bytes = src->size();
    t.file = "kv_b";
    s.add(t);
    s.keep_alive(src);
    family->hf_weights(s, c);
    const auto* kb = s.find("model.layers.0.self_attn.k_b_proj.weight");
    ASSERT_NE(kb, nullptr);
    EXPECT_EQ(kb->dtype, dt);
    EXPECT_EQ(kb->shape, (std::vector<int64_t>{H, KL, NP}));
    for (int64_t h = 0; h < H; ++h)
      for (int64_t k = 0; k < KL; ++k)
        for (int64_t r = 0; r < NP; ++r) {
          const size_t at = static_cast<size_t>((h * KL + k) * NP + r);
          float got;
          if (esz == 2) {
            uint16_t top;
            std::memcpy(&top, static_cast<const uint8_t*>(kb->data) + at * 2, 2);
            const uint32_t bits = static_cast<uint32_t>(top) << 16;
            std::memcpy(&got, &bits, 4);
          } else {
            std::memcpy(&got, static_cast<const uint8_t*>(kb->data) + at * 4, 4);
          }
          EXPECT_EQ(got, static_cast<float>((h * (NP + VD) + r) * KL + k))
              << "head " << h << " k " << k << " r " << r;
        }
  }
}
