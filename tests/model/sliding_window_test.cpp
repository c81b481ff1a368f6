// Sliding-window attention from config.json: which layers get a window under each family's
// Hugging Face rule, the errors for a malformed layer_types, and --disable-sliding-window
// (full attention, the context capped at the window). The numerics are gated against
// transformers by hf_reference_test.cpp on the tiny Mistral (window 16, prompts to 80
// positions).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/load_error.h"
#include "model/static_batch.h"
#include "test_paths.h"

namespace vllm::testing {
namespace {

using model::config_from_hf_json;
using model::ModelConfig;
using nlohmann::json;

json base(const std::string& arch) {
  return {{"architectures", {arch}}, {"vocab_size", 64},         {"hidden_size", 32},
          {"num_hidden_layers", 4},  {"num_attention_heads", 4}, {"intermediate_size", 64}};
}

ModelConfig parse(const json& j) { return config_from_hf_json(j.dump(), "config.json"); }

TEST(SlidingWindowConfig, MistralPutsTheWindowOnEveryLayer) {
  json j = base("MistralForCausalLM");
  j["sliding_window"] = 4096;
  EXPECT_EQ(parse(j).sliding_window, std::vector<int32_t>(4, 4096));
  j["sliding_window"] = nullptr;  // Mistral v0.2 / v0.3
  EXPECT_TRUE(parse(j).sliding_window.empty());
  j.erase("sliding_window");  // MistralConfig's default
  EXPECT_EQ(parse(j).sliding_window, std::vector<int32_t>(4, 4096));
  j["sliding_window"] = 128;
  j["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  EXPECT_EQ(parse(j).sliding_window, (std::vector<int32_t>{128, 0, 128, 0}));
  EXPECT_EQ(parse(j).max_sliding_window(), 128);
}

// Ministral 3's checkpoints are Mistral3ForConditionalGeneration with a ministral3 text_config:
// Ministral3Config's defaults fill what it leaves out (no sliding window, where Mistral Small's
// text model defaults to 4096), and its rope_parameters bring YaRN and Llama 4's attention
// temperature over the pretraining length.
TEST(SlidingWindowConfig, Ministral3TextConfigHasNoWindowAndItsTemperature) {
  const json text = {{"model_type", "ministral3"},
                     {"hidden_size", 64},
                     {"num_attention_heads", 4},
                     {"num_key_value_heads", 2},
                     {"head_dim", 16},
                     {"intermediate_size", 128},
                     {"num_hidden_layers", 2},
                     {"vocab_size", 2048},
                     {"rope_parameters",
                      {{"rope_type", "yarn"},
                       {"rope_theta", 1000000.0},
                       {"factor", 16.0},
                       {"original_max_position_embeddings", 16384},
                       {"mscale", 1.0},
                       {"mscale_all_dim", 1.0},
                       {"llama_4_scaling_beta", 0.1}}}};
  const ModelConfig c =
      parse({{"architectures", {"Mistral3ForConditionalGeneration"}}, {"text_config", text}});
  EXPECT_TRUE(c.sliding_window.empty());
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_DOUBLE_EQ(c.rope_scaling.attention_factor, 1.0);  // mscale / mscale_all_dim
  EXPECT_DOUBLE_EQ(c.attn_temperature_scale, 0.1);
  EXPECT_EQ(c.attn_temperature_length, 16384);
  EXPECT_EQ(c.max_position_embeddings, 262144);
  // Mistral Small 3.1's text model keeps Mistral's default window.
  json mistral = text;
  mistral["model_type"] = "mistral";
  mistral.erase("rope_parameters");
  const ModelConfig m =
      parse({{"architectures", {"Mistral3ForConditionalGeneration"}}, {"text_config", mistral}});
  EXPECT_FALSE(m.sliding_window.empty());
  EXPECT_EQ(m.attn_temperature_scale, 0.0);
}

TEST(SlidingWindowConfig, LlamaHasNoneUnlessTheConfigSetsOne) {
  json j = base("LlamaForCausalLM");
  EXPECT_TRUE(parse(j).sliding_window.empty());
  j["sliding_window"] = 64;  // vLLM applies a config's window to every layer
  EXPECT_EQ(parse(j).sliding_window, std::vector<int32_t>(4, 64));
}

TEST(SlidingWindowConfig, QwenNeedsUseSlidingWindowAndStartsAtMaxWindowLayers) {
  for (const char* arch : {"Qwen2ForCausalLM", "Qwen3ForCausalLM"}) {
    SCOPED_TRACE(arch);
    json j = base(arch);
    j["sliding_window"] = 32768;  // as Qwen2.5 ships it, with use_sliding_window false
    j["max_window_layers"] = 2;
    EXPECT_TRUE(parse(j).sliding_window.empty());
    j["use_sliding_window"] = true;
    EXPECT_EQ(parse(j).sliding_window, (std::vector<int32_t>{0, 0, 32768, 32768}));
    j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "full_attention"};
    EXPECT_EQ(parse(j).sliding_window, (std::vector<int32_t>{0, 32768, 0, 0}));
  }
}

TEST(SlidingWindowConfig, GemmaCountsItsPatternOrTakesLayerTypes) {
  json j = base("Gemma3ForCausalLM");
  j["num_hidden_layers"] = 7;
  j["sliding_window"] = 512;
  EXPECT_EQ(parse(j).sliding_window, (std::vector<int32_t>{512, 512, 512, 512, 512, 0, 512}));
  j["sliding_window_pattern"] = 2;
  EXPECT_EQ(parse(j).sliding_window, (std::vector<int32_t>{512, 0, 512, 0, 512, 0, 512}));
  j["layer_types"] = {"full_attention",    "sliding_attention", "full_attention",
                      "sliding_attention", "full_attention",    "full_attention",
                      "sliding_attention"};
  EXPECT_EQ(parse(j).sliding_window, (std::vector<int32_t>{0, 512, 0, 512, 0, 0, 512}));
  json g2 = base("Gemma2ForCausalLM");  // every other layer, 4096 by default
  EXPECT_EQ(parse(g2).sliding_window, (std::vector<int32_t>{4096, 0, 4096, 0}));
}

// EXAONE 4.0 and Cohere2 rotate only on their sliding layers; without a window every layer
// rotates. EXAONE's pattern may be a string of L (local) and G (global).
TEST(SlidingWindowConfig, HybridModelsRotateOnlyOnTheirSlidingLayers) {
  json e = base("Exaone4ForCausalLM");
  e["sliding_window"] = 64;
  e["sliding_window_pattern"] = "LLG";
  ModelConfig c = parse(e);
  EXPECT_EQ(c.sliding_window, (std::vector<int32_t>{64, 64, 0, 64}));
  EXPECT_EQ(c.no_rope, (std::vector<bool>{false, false, true, false}));
  e.erase("sliding_window_pattern");  // Exaone4Config's default period 4
  EXPECT_EQ(parse(e).no_rope, (std::vector<bool>{false, false, false, true}));
  e["sliding_window"] = nullptr;  // EXAONE 4.0 1.2B: global attention, rotary everywhere
  EXPECT_TRUE(parse(e).sliding_window.empty());
  EXPECT_TRUE(parse(e).no_rope.empty());
  e["sliding_window"] = 64;
  e["sliding_window_pattern"] = "LLX";
  EXPECT_THROW(parse(e), model::LoadError);
  json c2 = base("Cohere2ForCausalLM");
  c2["sliding_window"] = 32;
  c = parse(c2);
  EXPECT_EQ(c.sliding_window, (std::vector<int32_t>{32, 32, 32, 0}));
  EXPECT_EQ(c.no_rope, (std::vector<bool>{false, false, false, true}));
}

TEST(SlidingWindowConfig, BadLayerTypesAndWindowsAreNamed) {
  json j = base("MistralForCausalLM");
  j["layer_types"] = {"sliding_attention"};
  auto message = [&] {
    try {
      parse(j);
    } catch (const model::LoadError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_NE(message().find("layer_types must list one entry per layer (4)"), std::string::npos)
      << message();
  j["layer_types"] = {"sliding_attention", "chunked_attention", "full_attention", "full_attention"};
  EXPECT_NE(message().find("layer_types[1] = chunked_attention"), std::string::npos) << message();
  j.erase("layer_types");
  j["sliding_window"] = -5;
  EXPECT_NE(message().find("sliding_window"), std::string::npos) << message();
}

// --disable-sliding-window: vLLM's rule, full attention with the context capped at the window.
// Inside the window the logits are transformers' (the golden's first prompt has 7 positions).
TEST(SlidingWindowModel, DisablingItCapsTheContextAndKeepsTheLogitsInsideTheWindow) {
  const std::string dir = tiny_models_dir() + "/mistral";
  ASSERT_TRUE(std::filesystem::exists(dir + "/config.json"))
      << dir << " missing: run python3 tools/make_tiny_models.py --out " << tiny_models_dir();
  auto windowed = model::CausalLM::load(dir);
  EXPECT_EQ(windowed->config().sliding_window, std::vector<int32_t>(2, 16));
  EXPECT_EQ(windowed->config().max_position_embeddings, 512);
  model::LoadOptions o;
  o.disable_sliding_window = true;
  auto full = model::CausalLM::load(dir, vt::ThreadPool::global(), o);
  EXPECT_TRUE(full->config().sliding_window.empty());
  EXPECT_EQ(full->config().max_position_embeddings, 16);
  const auto index = read_json_file(golden_dir() + "/hf/mistral/index.json");
  const auto ids = index["prompts"][0]["prompt_ids"].get<std::vector<int32_t>>();
  const int64_t V = full->config().vocab_size, n = static_cast<int64_t>(ids.size());
  std::vector<float> gold(static_cast<size_t>(n * V));
  std::ifstream(golden_dir() + "/hf/mistral/prompt0.logits.f32", std::ios::binary)
      .read(reinterpret_cast<char*>(gold.data()), static_cast<std::streamsize>(gold.size() * 4));
  model::StaticBatch sb(*full, 1, 16, 16, vt::DType::F32);
  const std::vector<float> logits = sb.prefill_all(0, ids);
  ASSERT_EQ(logits.size(), gold.size());
  for (size_t i = 0; i < gold.size(); ++i) ASSERT_NEAR(logits[i], gold[i], 1e-4) << i;
}

}  // namespace
}  // namespace vllm::testing
