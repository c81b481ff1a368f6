// The safetensors fuzz corpus's seeds of the newer families (tools/make_fuzz_seeds.py) load to
// a model of that family, so fuzzing starts from inputs that reach the family's own loading
// code (gpt-oss's expert rewrite, Qwen2-MoE's shared expert, OLMoE's norms, GraniteMoE's fused
// experts, GLM-4.5's router, MiniMax-M2's names, FP8 dequantization,
// ERNIE 4.5's router, Arcee's ungated MLP) rather than an early error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/weight_store.h"

using vllm::model::CausalLM;

namespace {

// Loads every seed whose config names `arch` as the fuzz target does; returns how many.
int load_seeds(const std::string& arch, const std::function<void(const CausalLM&)>& check) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(VLLM_SOURCE_DIR) +
                                                           "/fuzz/corpus/safetensors")) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t nul = bytes.find('\0');
    EXPECT_NE(nul, std::string::npos) << e.path();
    if (nul == std::string::npos) continue;
    const std::string config = bytes.substr(0, nul);
    if (config.find("\"" + arch + "\"") == std::string::npos) continue;
    SCOPED_TRACE(e.path().string());
    auto cfg = vllm::model::config_from_hf_json(config, "seed/config.json");
    vllm::model::WeightStore store;
    vllm::model::load_safetensors_bytes("seed/model.safetensors",
                                        reinterpret_cast<const uint8_t*>(bytes.data()) + nul + 1,
                                        bytes.size() - nul - 1, store);
    vllm::model::LoadOptions o;
    o.pack_weights = false;
    auto m = CausalLM::from_weights("seed", std::move(cfg), std::move(store),
                                    vt::ThreadPool::global(), o);
    check(*m);
    ++n;
  }
  return n;
}

}  // namespace

// The MXFP4 and the unquantized checkpoint forms, bf16 and f32 each.
TEST(FuzzSeeds, GptOssLoadToAModel) {
  EXPECT_EQ(load_seeds("GptOssForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_TRUE(m.config().attention_sinks);
                         EXPECT_EQ(m.layers()[0].experts.gate.size(), 2u);
                       }),
            4);
}

TEST(FuzzSeeds, Qwen2MoeLoadsToAModelWithASharedExpert) {
  EXPECT_EQ(load_seeds("Qwen2MoeForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_EQ(m.config().shared_expert_intermediate_size, 48);
                         EXPECT_EQ(m.layers()[0].experts.shared_expert_gate.size(), 32u);
                       }),
            2);
}

TEST(FuzzSeeds, OlmoeLoadsToAModelWithWholeProjectionQkNorms) {
  EXPECT_EQ(load_seeds("OlmoeForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_TRUE(m.config().qk_norm_whole);
                         EXPECT_EQ(m.layers()[0].attn.k_norm.size(), 32u);
                         EXPECT_EQ(m.layers()[0].experts.gate.size(), 2u);
                       }),
            2);
}

TEST(FuzzSeeds, GraniteMoeLoadsToAModelWithFusedExperts) {
  EXPECT_EQ(load_seeds("GraniteMoeForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_TRUE(m.config().topk_before_softmax);
                         EXPECT_GT(m.config().residual_multiplier, 0);
                         EXPECT_EQ(m.layers()[0].experts.up.size(), 2u);
                         EXPECT_EQ(m.layers()[0].experts.up[1].rows, 32);
                       }),
            2);
}

TEST(FuzzSeeds, Glm4MoeLoadsToAModelWithItsSigmoidRouter) {
  EXPECT_EQ(load_seeds("Glm4MoeForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_TRUE(m.config().router_sigmoid);
                         EXPECT_TRUE(m.layers()[0].moe);
                         EXPECT_EQ(m.layers()[0].experts.router_score_bias.size(), 2u);
                         EXPECT_EQ(m.layers()[0].experts.shared_up.rows, 32);
                         EXPECT_TRUE(m.layers()[0].experts.shared_expert_gate.empty());
                       }),
            2);
}

TEST(FuzzSeeds, MiniMaxM2LoadsToAModelWithItsRenamedExperts) {
  EXPECT_EQ(load_seeds("MiniMaxM2ForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_TRUE(m.config().router_sigmoid);
                         EXPECT_TRUE(m.config().qk_norm_whole);
                         EXPECT_EQ(m.layers()[0].experts.router_score_bias.size(), 2u);
                         EXPECT_EQ(m.layers()[0].experts.up.size(), 2u);
                       }),
            2);
}

TEST(FuzzSeeds, Fp8CheckpointLoadsToAModelWithBf16Projections) {
  EXPECT_EQ(load_seeds("fp8",  // the quant_method value
                       [](const CausalLM& m) {
                         EXPECT_EQ(m.config().fp8_block_rows, 16);
                         EXPECT_EQ(m.layers()[0].attn.q.dtype, vt::DType::BF16);
                         EXPECT_EQ(m.layers()[0].mlp.down.dtype, vt::DType::BF16);
                       }),
            1);
}

TEST(FuzzSeeds, ArceeLoadsToAModelWithAnUngatedMlp) {
  EXPECT_EQ(load_seeds("ArceeForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_EQ(m.config().hidden_act, vllm::model::Activation::kRelu2);
                         EXPECT_EQ(m.layers()[0].mlp.gate.rows, 0);
                         EXPECT_EQ(m.layers()[0].mlp.up.rows, 64);
                       }),
            2);
}

TEST(FuzzSeeds, Ernie45MoeLoadsToAModelWithItsBiasedSoftmaxRouter) {
  EXPECT_EQ(load_seeds("Ernie4_5_MoeForCausalLM",
                       [](const CausalLM& m) {
                         EXPECT_TRUE(m.config().router_score_bias);
                         EXPECT_FALSE(m.config().router_sigmoid);
                         EXPECT_EQ(m.layers()[0].experts.router_score_bias.size(), 2u);
                         EXPECT_EQ(m.layers()[0].experts.shared_up.rows, 32);
                       }),
            2);
}
