// Hostile Hugging Face files: config.json, generation_config.json, safetensors headers and
// tokenizer.json. Every number goes through the checked JSON helper or a bound before use, and
// the LoadError names the file, the field and the value. Each case here hit undefined
// behaviour, crashed, allocated without bound, loaded silently or gave an error naming neither
// field nor value before the loaders validated it (docs/MODEL_FILES.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "load_error_util.h"
#include "model/causal_lm.h"
#include "model/load_error.h"
#include "model/tokenizer_loader.h"
#include "model/weight_store.h"
#include "test_files.h"

namespace vllm::testing {
namespace {

using model::CausalLM;
using model::LoadError;
using nlohmann::json;

class HfValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("hf_validation");
    hf_ = tiny_llama_hf();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string load_model() {
    hf_.write(dir_);
    return error_of([&] { CausalLM::load(dir_); });
  }
  std::string dir_;
  HfSpec hf_;
};

TEST_F(HfValidation, BaselineLoads) { EXPECT_EQ(load_model(), ""); }

// config.json: one field set to one value; the error names config.json, the field and value.
struct BadField {
  const char* name;
  std::function<void(json&)> mutate;
  std::vector<std::string> want;
};

class HfBadField : public HfValidation, public ::testing::WithParamInterface<BadField> {};

TEST_P(HfBadField, NamesFieldAndValue) {
  GetParam().mutate(hf_.config);
  const std::string e = load_model();
  std::vector<std::string> want = GetParam().want;
  want.push_back(dir_ + "/config.json");
  expect_has(e, want);
}

json moe_config() {
  json c = tiny_llama_hf().config;
  c["architectures"] = {"Qwen3MoeForCausalLM"};
  c["num_experts"] = 4;
  c["num_experts_per_tok"] = 2;
  c["moe_intermediate_size"] = 32;
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, HfBadField,
    ::testing::Values(
        // Was undefined behaviour: get<int64_t>() casts the double.
        BadField{"VocabHugeFloat",
                 [](json& c) { c["vocab_size"] = 1e300; },
                 {"field 'vocab_size': 1e+300 is not an integer in [1, 16777216]"}},
        BadField{
            "VocabBool", [](json& c) { c["vocab_size"] = true; }, {"field 'vocab_size': true"}},
        BadField{"VocabHugeInt",
                 [](json& c) { c["vocab_size"] = int64_t{1} << 40; },
                 {"field 'vocab_size': 1099511627776"}},
        BadField{"HiddenFraction",
                 [](json& c) { c["hidden_size"] = 32.5; },
                 {"field 'hidden_size': 32.5"}},
        // Was std::bad_alloc.
        BadField{"LayersHuge",
                 [](json& c) { c["num_hidden_layers"] = 2147483647; },
                 {"field 'num_hidden_layers': 2147483647", "[1, 1024]"}},
        BadField{"HeadsZero",
                 [](json& c) { c["num_attention_heads"] = 0; },
                 {"field 'num_attention_heads': 0"}},
        BadField{"HeadsHugeFloat",
                 [](json& c) { c["num_attention_heads"] = 1e300; },
                 {"field 'num_attention_heads': 1e+300"}},
        BadField{"KvHeadsNegative",
                 [](json& c) { c["num_key_value_heads"] = -1; },
                 {"field 'num_key_value_heads': -1"}},
        BadField{"HeadDimHugeFloat",
                 [](json& c) { c["head_dim"] = 1e300; },
                 {"field 'head_dim': 1e+300"}},
        BadField{"ContextHuge",
                 [](json& c) { c["max_position_embeddings"] = 1e18; },
                 {"field 'max_position_embeddings': 1e+18"}},
        BadField{
            "EpsString", [](json& c) { c["rms_norm_eps"] = "x"; }, {"field 'rms_norm_eps': \"x\""}},
        BadField{
            "EpsNegative", [](json& c) { c["rms_norm_eps"] = -1.0; }, {"field 'rms_norm_eps': -1"}},
        BadField{"RopeThetaNegative",
                 [](json& c) { c["rope_theta"] = -5.0; },
                 {"field 'rope_theta': -5"}},
        // Was undefined behaviour: converted to float for the rotary table.
        BadField{"RopeThetaHuge",
                 [](json& c) { c["rope_theta"] = 1e300; },
                 {"field 'rope_theta': 1e+300"}},
        BadField{"IntermediateHugeFloat",
                 [](json& c) { c["intermediate_size"] = 1e300; },
                 {"field 'intermediate_size': 1e+300"}},
        BadField{"TieNotBool",
                 [](json& c) { c["tie_word_embeddings"] = 1; },
                 {"field 'tie_word_embeddings': 1 is not true or false"}},
        BadField{"BosHugeFloat",
                 [](json& c) { c["bos_token_id"] = 1e300; },
                 {"field 'bos_token_id': 1e+300"}},
        BadField{"BosOutsideVocab",
                 [](json& c) { c["bos_token_id"] = 64; },
                 {"bos_token_id = 64", "[0, 63]"}},
        BadField{"EosListHugeFloat",
                 [](json& c) {
                   c["eos_token_id"] = {2, 1e300};
                 },
                 {"field 'eos_token_id': 1e+300"}},
        BadField{"EosPastInt32",
                 [](json& c) { c["eos_token_id"] = int64_t{1} << 32; },
                 {"field 'eos_token_id': 4294967296"}},
        // Was a shape error about q_proj: head_dim was hidden / heads rounded down.
        BadField{"HiddenNotDivisibleByHeads",
                 [](json& c) {
                   c["num_attention_heads"] = 3;
                   c["num_key_value_heads"] = 1;
                 },
                 {"hidden_size = 32 is not a multiple of num_attention_heads = 3"}},
        // Was NaN rotary frequencies: (old / wavelen - lo) / (hi - lo) with hi == lo.
        BadField{"Llama3HighEqualsLow",
                 [](json& c) {
                   c["rope_scaling"] = {{"rope_type", "llama3"},
                                        {"factor", 8.0},
                                        {"low_freq_factor", 4.0},
                                        {"high_freq_factor", 4.0}};
                 },
                 {"rope_scaling.high_freq_factor = 4", "low_freq_factor = 4"}},
        BadField{"RopeFactorZero",
                 [](json& c) {
                   c["rope_scaling"] = {{"type", "linear"}, {"factor", 0.0}};
                 },
                 {"field 'rope_scaling.factor': 0"}},
        BadField{"RopeOriginalContextHuge",
                 [](json& c) {
                   c["rope_scaling"] = {{"rope_type", "llama3"},
                                        {"factor", 8.0},
                                        {"original_max_position_embeddings", 1e300}};
                 },
                 {"field 'rope_scaling.original_max_position_embeddings': 1e+300"}},
        BadField{"ExpertsAboveKernelLimit",
                 [](json& c) {
                   c = moe_config();
                   c["num_experts"] = 2000;
                 },
                 {"field 'num_experts': 2000", "[0, 1024]"}},
        BadField{"ExpertsPerTokAboveExperts",
                 [](json& c) {
                   c = moe_config();
                   c["num_experts_per_tok"] = 5;
                 },
                 {"num_experts_per_tok = 5", "[1, 4]"}},
        BadField{"SparseStepZero",
                 [](json& c) {
                   c = moe_config();
                   c["decoder_sparse_step"] = 0;
                 },
                 {"field 'decoder_sparse_step': 0"}},
        // Was undefined behaviour: get<std::vector<int64_t>>() casts each double.
        BadField{"MlpOnlyLayersHugeFloat",
                 [](json& c) {
                   c = moe_config();
                   c["mlp_only_layers"] = {1e300};
                 },
                 {"field 'mlp_only_layers': 1e+300"}},
        BadField{"MlpOnlyLayerPastLastLayer",
                 [](json& c) {
                   c = moe_config();
                   c["mlp_only_layers"] = {5};
                 },
                 {"mlp_only_layers = 5", "[0, 0]"}},
        // GLM-4.5's group-limited router: groups must split the experts evenly, at least two
        // each (a group's score is its two best), and hold the top-k.
        BadField{"Glm4MoeGroupsNotDividingExperts",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"Glm4MoeForCausalLM"};
                   c["n_routed_experts"] = 4;
                   c["n_group"] = 3;
                 },
                 {"n_group = 3", "must divide the 4 experts"}},
        BadField{"Glm4MoeTopkGroupAboveGroups",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"Glm4MoeForCausalLM"};
                   c["n_routed_experts"] = 4;
                   c["n_group"] = 2;
                   c["topk_group"] = 3;
                 },
                 {"topk_group = 3", "[1, 2]"}},
        BadField{"Glm4MoeTopkAboveKeptGroups",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"Glm4MoeForCausalLM"};
                   c["n_routed_experts"] = 4;
                   c["num_experts_per_tok"] = 3;
                   c["n_group"] = 2;
                   c["topk_group"] = 1;
                 },
                 {"num_experts_per_tok = 3", "[1, 2]"}},
        BadField{"Glm4MoeScalingFactorZero",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"Glm4MoeForCausalLM"};
                   c["n_routed_experts"] = 4;
                   c["routed_scaling_factor"] = 0.0;
                 },
                 {"routed_scaling_factor", "0"}},
        // MiniMax-M2 forms this engine does not implement, refused by name.
        BadField{"MiniMaxLightningAttention",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"MiniMaxM2ForCausalLM"};
                   c["num_local_experts"] = 4;
                   c["attn_type_list"] = {1, 0};
                 },
                 {"attn_type_list holds 0", "lightning attention"}},
        BadField{"MiniMaxSoftmaxScoring",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"MiniMaxM2ForCausalLM"};
                   c["num_local_experts"] = 4;
                   c["scoring_func"] = "softmax";
                 },
                 {"scoring_func = \"softmax\"", "only the sigmoid router"}},
        BadField{"ErnieWithBiases",
                 [](json& c) {
                   c["architectures"] = {"Ernie4_5ForCausalLM"};
                   c["use_bias"] = true;
                 },
                 {"use_bias = true", "not supported"}},
        BadField{"SeedOssOutputBias",
                 [](json& c) {
                   c["architectures"] = {"SeedOssForCausalLM"};
                   c["attention_out_bias"] = true;
                 },
                 {"attention_out_bias = true", "not supported"}},
        // relu2 is Arcee's ungated MLP; on a gated one it is refused by name, and Arcee's MLP
        // with another activation or a bias too.
        BadField{"Relu2OnAGatedMlp",
                 [](json& c) { c["hidden_act"] = "relu2"; },
                 {"hidden_act relu2", "LlamaForCausalLM's gated one"}},
        BadField{"ArceeWithSilu",
                 [](json& c) {
                   c["architectures"] = {"ArceeForCausalLM"};
                   c["hidden_act"] = "silu";
                 },
                 {"hidden_act", "relu2 only"}},
        BadField{"ArceeMlpBias",
                 [](json& c) {
                   c["architectures"] = {"ArceeForCausalLM"};
                   c["mlp_bias"] = true;
                 },
                 {"mlp_bias = true", "not supported"}},
        // Hunyuan dense: biases and configs without its q/k norms, and plain dynamic NTK
        // scaling (no alpha: lengths past the original stretch it as they go).
        BadField{"HunyuanAttentionBias",
                 [](json& c) {
                   c["architectures"] = {"HunYuanDenseV1ForCausalLM"};
                   c["attention_bias"] = true;
                 },
                 {"attention_bias = true", "not supported"}},
        BadField{"HunyuanWithoutQkNorm",
                 [](json& c) {
                   c["architectures"] = {"HunYuanDenseV1ForCausalLM"};
                   c["use_qk_norm"] = false;
                 },
                 {"use_qk_norm = false", "not supported"}},
        BadField{"HunyuanDynamicWithoutAlpha",
                 [](json& c) {
                   c["architectures"] = {"HunYuanDenseV1ForCausalLM"};
                   c["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
                 },
                 {"unsupported rope_scaling type 'dynamic'"}},
        BadField{"StableLmQkLayerNorm",
                 [](json& c) {
                   c["architectures"] = {"StableLmForCausalLM"};
                   c["qk_layernorm"] = true;
                 },
                 {"qk_layernorm = true", "not supported"}},
        BadField{"StableLmParallelResidual",
                 [](json& c) {
                   c["architectures"] = {"StableLmForCausalLM"};
                   c["use_parallel_residual"] = true;
                 },
                 {"use_parallel_residual = true", "not supported"}},
        BadField{"PhiQkLayerNorm",
                 [](json& c) {
                   c["architectures"] = {"PhiForCausalLM"};
                   c["qk_layernorm"] = true;
                 },
                 {"qk_layernorm = true", "not supported"}},
        BadField{"PhiSiluMlp",
                 [](json& c) {
                   c["architectures"] = {"PhiForCausalLM"};
                   c["hidden_act"] = "silu";
                 },
                 {"hidden_act", "gelu_new only"}},
        BadField{"StarCoder2Relu2Mlp",
                 [](json& c) {
                   c["architectures"] = {"Starcoder2ForCausalLM"};
                   c["hidden_act"] = "relu2";
                 },
                 {"hidden_act", "gelu_pytorch_tanh only"}},
        BadField{"DeepSeekV2GroupLimitedGreedy",
                 [](json& c) {
                   c["architectures"] = {"DeepseekV2ForCausalLM"};
                   c["topk_method"] = "group_limited_greedy";
                 },
                 {"topk_method 'group_limited_greedy'", "greedy only"}},
        BadField{"DeepSeekAttentionBias",
                 [](json& c) {
                   c["architectures"] = {"DeepseekV3ForCausalLM"};
                   c["attention_bias"] = true;
                 },
                 {"attention_bias = true", "not supported"}},
        BadField{"DeepSeekMoeLayerFreq",
                 [](json& c) {
                   c["architectures"] = {"DeepseekV2ForCausalLM"};
                   c["moe_layer_freq"] = 2;
                 },
                 {"moe_layer_freq", "only 1"}},
        BadField{"GlmLiteMlpLayerTypes",
                 [](json& c) {
                   c["architectures"] = {"Glm4MoeLiteForCausalLM"};
                   c["mlp_layer_types"] = json::array();
                 },
                 {"mlp_layer_types", "num_hidden_layers"}},
        BadField{"LlamaExactGelu",
                 [](json& c) { c["hidden_act"] = "gelu_fast"; },
                 {"unsupported hidden_act 'gelu_fast'", "gelu_new"}},
        BadField{"MixtralExpertsAboveKernelLimit",
                 [](json& c) {
                   c["architectures"] = {"MixtralForCausalLM"};
                   c["num_local_experts"] = 2000;
                 },
                 {"field 'num_local_experts': 2000"}},
        // Multimodal rope is only the plain rope for text in the VL classes; elsewhere it is a
        // scaling this engine does not know.
        BadField{"LongropeShortFactorsPerPair",
                 [](json& c) {
                   c["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 2.0}}};
                 },
                 {"rope_scaling.short_factor = 2 entries", "one per rotated pair, 8"}},
        BadField{"LongropeLongFactorsPerPair",
                 [](json& c) {
                   c["rope_scaling"] = {{"type", "longrope"},
                                        {"short_factor", std::vector<double>(8, 1.0)},
                                        {"long_factor", {1.0, 2.0, 3.0}}};
                 },
                 {"rope_scaling.long_factor = 3 entries", "one per rotated pair, 8"}},
        BadField{"LongropeLongFactorNotPositive",
                 [](json& c) {
                   std::vector<double> lf(8, 4.0);
                   lf[3] = 0;
                   c["rope_scaling"] = {{"type", "longrope"},
                                        {"short_factor", std::vector<double>(8, 1.0)},
                                        {"long_factor", lf}};
                 },
                 {"rope_scaling.long_factor"}},
        BadField{"LongropeLongFactorsNotAList",
                 [](json& c) {
                   c["rope_scaling"] = {{"type", "longrope"},
                                        {"short_factor", std::vector<double>(8, 1.0)},
                                        {"long_factor", 4.0}};
                 },
                 {"rope_scaling.long_factor", "list"}},
        BadField{"LongropeWithoutShortFactors",
                 [](json& c) {
                   c["rope_scaling"] = {{"type", "longrope"}};
                 },
                 {"rope_scaling.short_factor"}},
        BadField{"MropeOutsideVl",
                 [](json& c) {
                   c["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", {2, 3, 3}}};
                 },
                 {"unsupported rope_scaling type 'mrope'"}},
        BadField{"MropeSectionNotCounts",
                 [](json& c) {
                   c["architectures"] = {"Qwen2_5_VLForConditionalGeneration"};
                   c["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", "x"}};
                 },
                 {"rope_scaling.mrope_section = \"x\""}},
        // transformers 5's rope_parameters: read like rope_scaling, and checked like it.
        BadField{"RopeParametersNotAnObject",
                 [](json& c) { c["rope_parameters"] = 5; },
                 {"rope_parameters = 5 (must be an object)"}},
        BadField{"RopeParametersUnknownType",
                 [](json& c) {
                   c["rope_parameters"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
                 },
                 {"unsupported rope_scaling type 'dynamic'"}},
        BadField{"RopeParametersThetaNegative",
                 [](json& c) {
                   c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", -1.0}};
                 },
                 {"rope_theta"}},
        BadField{"RopeParametersUnknownLayerType",
                 [](json& c) {
                   c["rope_parameters"] = {{"full_attention", {{"rope_theta", 1e4}}},
                                           {"chunked_attention", {{"rope_theta", 1e4}}}};
                 },
                 {"rope_parameters.chunked_attention: unsupported layer type"}},
        BadField{"RopeParametersScaledSlidingLayers",
                 [](json& c) {
                   c["rope_parameters"] = {
                       {"full_attention", {{"rope_theta", 1e6}}},
                       {"sliding_attention",
                        {{"rope_type", "linear"}, {"factor", 2.0}, {"rope_theta", 1e4}}}};
                 },
                 {"rope_parameters.sliding_attention.rope_type = 'linear'"}},
        BadField{"CohereQkNorm",
                 [](json& c) {
                   c["architectures"] = {"CohereForCausalLM"};
                   c["use_qk_norm"] = true;
                 },
                 {"use_qk_norm = true: Command R+'s per-head q/k LayerNorms are not supported"}},
        BadField{"CohereLogitScaleZero",
                 [](json& c) {
                   c["architectures"] = {"CohereForCausalLM"};
                   c["logit_scale"] = 0.0;
                 },
                 {"logit_scale = 0 (must be positive)"}},
        BadField{"PartialRotaryZero",
                 [](json& c) { c["partial_rotary_factor"] = 0.0; },
                 {"partial_rotary_factor = 0.0 (must be in (0, 1])"}},
        BadField{"PartialRotaryOddDims",  // head_dim 16: 5 rotated dims
                 [](json& c) { c["partial_rotary_factor"] = 0.3125; },
                 {"partial_rotary_factor = rotating 5 of head_dim 16 dims", "must be even"}},
        BadField{"QuantizationAwq",  // a quantized folder the loader cannot read: refused by name
                 [](json& c) {
                   c["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
                 },
                 {"quantization_config.quant_method = 'awq' is not supported for LlamaForCausalLM",
                  "supported: fp8; or an unquantized folder or a GGUF"}},
        // FP8 forms the loader does not dequantize, refused by name.
        BadField{"QuantizationFp8E5m2",
                 [](json& c) {
                   c["quantization_config"] = {
                       {"quant_method", "fp8"}, {"fmt", "e5m2"}, {"weight_block_size", {128, 128}}};
                 },
                 {"quantization_config.fmt = 'e5m2' is not supported"}},
        BadField{"QuantizationFp8StaticActivations",
                 [](json& c) {
                   c["quantization_config"] = {{"quant_method", "fp8"},
                                               {"activation_scheme", "static"},
                                               {"weight_block_size", {128, 128}}};
                 },
                 {"quantization_config.activation_scheme = \"static\" is not supported"}},
        BadField{"QuantizationFp8PerTensor",
                 [](json& c) {
                   c["quantization_config"] = {{"quant_method", "fp8"}};
                 },
                 {"without a two-number weight_block_size"}},
        BadField{
            "QuantizationFp8BlockZero",
            [](json& c) {
              c["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {0, 128}}};
            },
            {"weight_block_size[0]", "0"}},
        BadField{"QuantizationMxfp4OutsideGptOss",
                 [](json& c) {
                   c["quantization_config"] = {{"quant_method", "mxfp4"}};
                 },
                 {"quantization_config.quant_method = 'mxfp4'"}},
        BadField{"QuantizationWithoutMethod",
                 [](json& c) {
                   c["quantization_config"] = {{"bits", 8}};
                 },
                 {"quantization_config = ", "has no quant_method string"}},
        BadField{"GptOssSwigluLimitZero",
                 [](json& c) {
                   c["architectures"] = {"GptOssForCausalLM"};
                   c["num_local_experts"] = 4;
                   c["num_experts_per_tok"] = 2;
                   c["swiglu_limit"] = 0.0;
                 },
                 {"swiglu_limit"}},
        BadField{"Qwen2MoeSharedExpertWidthHuge",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"Qwen2MoeForCausalLM"};
                   c["shared_expert_intermediate_size"] = int64_t{1} << 30;
                 },
                 {"field 'shared_expert_intermediate_size': 1073741824"}},
        BadField{"OlmoeClipQkv",
                 [](json& c) {
                   c = moe_config();
                   c["architectures"] = {"OlmoeForCausalLM"};
                   c["clip_qkv"] = 8.0;
                 },
                 {"clip_qkv = 8.0: clamping q, k and v is not supported"}},
        BadField{"VlTextConfigNotObjectFieldsMissing",
                 [](json& c) {
                   c = json{{"architectures", {"Qwen3VLForConditionalGeneration"}},
                            {"text_config", {{"hidden_size", 1e300}}}};
                 },
                 {"field 'hidden_size': 1e+300"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(HfValidation, GenerationConfigEosHugeFloat) {
  hf_.write(dir_);
  std::ofstream(dir_ + "/generation_config.json") << R"({"eos_token_id": [2, 1e300]})";
  expect_has(error_of([&] { CausalLM::load(dir_); }),
             {dir_ + "/generation_config.json", "field 'eos_token_id': 1e+300"});
}

// Was a read without end (until memory ran out): config.json linked to /dev/zero.
TEST_F(HfValidation, ConfigIsNotARegularFile) {
  hf_.write(dir_);
  std::filesystem::remove(dir_ + "/config.json");
  std::filesystem::create_symlink("/dev/zero", dir_ + "/config.json");
  expect_has(error_of([&] { CausalLM::load(dir_); }),
             {dir_ + "/config.json", "not a regular file"});
}

// safetensors headers.

TEST_F(HfValidation, SafetensorsShapeHugeFloat) {
  json h = {{"x", {{"dtype", "F32"}, {"shape", {1e300, 32}}, {"data_offsets", {0, 128}}}}};
  write_file(dir_ + "/x.safetensors", safetensors_bytes(h, std::vector<uint8_t>(128)));
  model::WeightStore s;
  expect_has(error_of([&] { model::load_safetensors_file(dir_ + "/x.safetensors", s); }),
             {dir_ + "/x.safetensors", "field 'x.shape': 1e+300"});
}

TEST_F(HfValidation, SafetensorsOffsetHugeFloat) {
  json h = {{"x", {{"dtype", "F32"}, {"shape", {32}}, {"data_offsets", {0, 1e300}}}}};
  write_file(dir_ + "/x.safetensors", safetensors_bytes(h, std::vector<uint8_t>(128)));
  model::WeightStore s;
  expect_has(error_of([&] { model::load_safetensors_file(dir_ + "/x.safetensors", s); }),
             {"field 'x.data_offsets[1]': 1e+300"});
}

TEST_F(HfValidation, SafetensorsTooManyDims) {
  json h = {{"x", {{"dtype", "F32"}, {"shape", std::vector<int>(9, 1)}, {"data_offsets", {0, 4}}}}};
  write_file(dir_ + "/x.safetensors", safetensors_bytes(h, std::vector<uint8_t>(4)));
  model::WeightStore s;
  expect_has(error_of([&] { model::load_safetensors_file(dir_ + "/x.safetensors", s); }),
             {"tensor 'x' shape is not a list of at most 8 dimensions"});
}

// Was a silent load: q and k read the same bytes.
TEST_F(HfValidation, SafetensorsOverlappingTensors) {
  json h;
  h["a"] = {{"dtype", "F32"}, {"shape", {8}}, {"data_offsets", {0, 32}}};
  h["b"] = {{"dtype", "F32"}, {"shape", {8}}, {"data_offsets", {16, 48}}};
  write_file(dir_ + "/x.safetensors", safetensors_bytes(h, std::vector<uint8_t>(48)));
  model::WeightStore s;
  expect_has(error_of([&] { model::load_safetensors_file(dir_ + "/x.safetensors", s); }),
             {"tensor 'b' data [16, 48) overlaps tensor 'a' [0, 32)"});
}

// Was a JSON parse of 150 MB: the format caps its header at 100 MB. (A sparse file.)
TEST_F(HfValidation, SafetensorsHeaderOverFormatLimit) {
  const std::string p = dir_ + "/x.safetensors";
  {
    std::ofstream f(p, std::ios::binary);
    const uint64_t n = 150'000'000;
    f.write(reinterpret_cast<const char*>(&n), 8);
  }
  std::filesystem::resize_file(p, 200'000'000);
  model::WeightStore s;
  expect_has(error_of([&] { model::load_safetensors_file(p, s); }),
             {"header length 150000000 is over the format's limit of 100000000"});
}

// Was a misaligned f32 read (undefined behaviour) when the writer did not pad the header.
TEST_F(HfValidation, SafetensorsUnalignedDataIsReadAligned) {
  std::vector<float> v = {1.5f, -2.f, 3.25f, 4.f};
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), v.data(), 16);
  json h = {{"x", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}}};
  auto b = safetensors_bytes(h, bytes);
  ASSERT_NE((8 + h.dump().size()) % 4, 0u) << "the header must leave the data unaligned";
  write_file(dir_ + "/x.safetensors", b);
  model::WeightStore s;
  model::load_safetensors_file(dir_ + "/x.safetensors", s);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s.find("x")->data) % alignof(float), 0u);
  EXPECT_EQ(s.vector_f32("x", 4), v);
}

// Was a silent load: the matmul kernels have no i32 path and left the output unwritten.
TEST_F(HfValidation, IntegerTensorAsWeight) {
  hf_.entry("model.layers.0.self_attn.q_proj.weight")->dtype = "I32";
  expect_has(load_model(), {"q_proj.weight", "i32", "not a weight type"});
}

}  // namespace
}  // namespace vllm::testing
