// InternLM2, added as one family file (src/model/models/internlm2.cpp). The tiny random model
// of tests/golden/internlm2 (tools/make_tiny_internlm2.py) exists as a GGUF (architecture
// internlm2, q/k/v split and permuted as llama.cpp's converter does) and as a Hugging Face
// folder (fused grouped wqkv, InternLM2 tensor names).
//  - GGUF greedy decoding equals llama.cpp's under the near-tie rule of DESIGN.md (the
//    reference's top-2 gap at the first divergence is < 0.5 nats; that prompt stops there).
//  - The HF folder gives the GGUF's logits at every position: the wqkv split (grouped layout),
//    the renames and the RoPE pairing agree with llama.cpp's conversion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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
std::string dir() { return golden_dir() + "/internlm2"; }
}  // namespace

TEST(InternLM2, FamilyIsRegisteredUnderBothNames) {
  const auto* hf = vllm::model::family_for_hf("InternLM2ForCausalLM");
  ASSERT_NE(hf, nullptr);
  EXPECT_EQ(hf, vllm::model::family_for_gguf("internlm2"));
  auto g = vllm::model::GgufFile::open(dir() + "/tiny_internlm2.gguf");
  const auto c = vllm::model::config_from_gguf(*g);
  EXPECT_EQ(c.architecture, "InternLM2ForCausalLM");
  EXPECT_EQ(c.num_heads, 4);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.rope_style, vt::cpu::RopeStyle::kInterleaved);
}

TEST(InternLM2, GgufGreedyMatchesLlamaCpp) {
  const auto gold = read_json_file(dir() + "/greedy.json");
  auto m = CausalLM::load(dir() + "/tiny_internlm2.gguf");
  const int64_t V = m->config().vocab_size;
  ASSERT_EQ(V, 272);
  int total_agreed = 0, total_steps = 0, near_ties = 0;
  ASSERT_GE(gold["prompts"].size(), 6u);
  for (const auto& p : gold["prompts"]) {
    const auto ids = p["prompt_ids"].get<std::vector<int32_t>>();
    const auto& steps = p["steps"];
    StaticBatch sb(*m, 1, static_cast<int64_t>(ids.size() + steps.size()) + 1);
    const std::vector<float>* logits = &sb.prefill({ids});
    for (size_t s = 0; s < steps.size(); ++s) {
      const float* l = logits->data();
      const int32_t ours = static_cast<int32_t>(std::max_element(l, l + V) - l);
      const int32_t ref = steps[s]["id"].get<int32_t>();
      if (ours != ref) {
        const auto top2 = steps[s]["top2_logits"].get<std::vector<double>>();
        EXPECT_LT(top2[0] - top2[1], 0.5)
            << "prompt '" << p["name"].get<std::string>() << "' step " << s << ": ours " << ours
            << ", llama.cpp " << ref << " (not a near-tie)";
        ++near_ties;
        break;
      }
      ++total_agreed;
      if (s + 1 < steps.size()) logits = &sb.decode({ours});
    }
    total_steps += static_cast<int>(steps.size());
  }
  std::printf("internlm2 llama.cpp gate: %d/%d steps agree, %d near-tie stops\n", total_agreed,
              total_steps, near_ties);
  // Near-ties may end a prompt early, but most of the greedy path must be llama.cpp's.
  EXPECT_GE(total_agreed, total_steps * 3 / 4);
}

TEST(InternLM2, HfFolderMatchesGgufAtEveryPosition) {
  auto hf = CausalLM::load(dir() + "/hf");
  auto gg = CausalLM::load(dir() + "/tiny_internlm2.gguf");
  ASSERT_EQ(hf->config().architecture, "InternLM2ForCausalLM");
  EXPECT_EQ(hf->config().rope_style, vt::cpu::RopeStyle::kNeox);
  const int64_t V = hf->config().vocab_size;
  std::vector<int32_t> ids;
  for (int i = 0; i < 40; ++i) ids.push_back((i * 37 + 11) % 272);
  StaticBatch a(*hf, 1, 64), b(*gg, 1, 64);
  const std::vector<float> la = a.prefill_all(0, ids);
  const std::vector<float>& lb = b.prefill_all(0, ids);
  ASSERT_EQ(la.size(), lb.size());
  ASSERT_EQ(la.size(), ids.size() * V);
  double worst = 0;
  for (size_t i = 0; i < la.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(la[i] - lb[i])));
  EXPECT_LT(worst, 2e-3) << "HF (fused wqkv) and GGUF (split, permuted) logits differ";
}
