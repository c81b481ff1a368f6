// --dtype's rounding of BF16 products' activations belongs to the model it was loaded with:
// loading a second model with the other setting in the same process (two LLMs, the C API's
// two engines) leaves the first one's logprobs bit for bit as they were. The tiny Qwen3
// checkpoint has BF16 weights, and the test first checks that the setting changes them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "api/llm.h"

namespace vllm::api {
namespace {

std::string tiny_qwen3() {
  const char* p = std::getenv("VLLM_TINY_MODELS");
  const char* home = std::getenv("HOME");
  return (p ? std::string(p)
            : std::string(home ? home : "/root") + "/.cache/vllm-cpp/tiny-models") +
         "/qwen3";
}

std::unique_ptr<LLM> load(bool round) {
  engine::EngineConfig cfg;
  cfg.num_gpu_blocks = 32;
  cfg.block_size = 16;  // block counts here are of 16-slot blocks
  cfg.bf16_activations = round;
  return LLM::load(tiny_qwen3(), cfg);
}

// Greedy ids and each step's top-5 logprobs.
std::vector<float> run(LLM& llm) {
  engine::SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 8;
  p.ignore_eos = true;
  p.logprobs = 5;
  llm.engine().add_request("r", llm.tokenizer().encode("The weather today is", false), p);
  std::vector<float> out;
  while (llm.engine().has_unfinished_requests())
    for (auto& o : llm.engine().step())
      for (const auto& lp : o.logprobs) {
        out.push_back(static_cast<float>(lp.token_id));
        for (const auto& [id, v] : lp.top) out.push_back(v);
      }
  return out;
}

TEST(ActivationRounding, StaysWithTheModelItWasLoadedWith) {
  ASSERT_TRUE(std::filesystem::exists(tiny_qwen3() + "/config.json")) << tiny_qwen3();
  auto fp32 = load(false);
  const std::vector<float> before = run(*fp32);
  ASSERT_EQ(before.size(), 8u * 6u);
  auto bf16 = load(true);
  const std::vector<float> rounded = run(*bf16);
  ASSERT_NE(rounded, before) << "rounding no longer changes this model; the test shows nothing";
  EXPECT_EQ(run(*fp32), before);  // the later load did not change the first model
  EXPECT_EQ(run(*bf16), rounded);
}

}  // namespace
}  // namespace vllm::api
