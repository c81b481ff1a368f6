// Reference gate, llama.cpp: greedy decoding of the real SmolLM2-135M-Instruct Q4_1 file
// equals llama.cpp's (goldens: tools/make_llamacpp_goldens.py). A mismatch passes only
// as a near-tie: the reference's top-2 gap at the first divergence is < 0.5 nats, and
// the comparison of that prompt stops there.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "model/causal_lm.h"
#include "model/static_batch.h"
#include "test_paths.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::StaticBatch;

TEST(LlamaCppReference, SmolLM2GreedyMatches) {
  const auto gold = read_json_file(golden_dir() + "/llamacpp/smollm2_q4_1.json");
  const std::string path = default_gguf();
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing: run scripts/fetch_models.sh";
  auto m = CausalLM::load(path);
  const int64_t V = m->config().vocab_size;
  int total_agreed = 0, total_steps = 0, near_ties = 0;
  ASSERT_GE(gold["prompts"].size(), 8u);
  for (const auto& p : gold["prompts"]) {
    const auto ids = p["prompt_ids"].get<std::vector<int32_t>>();
    const auto& steps = p["steps"];
    StaticBatch sb(*m, 1, static_cast<int64_t>(ids.size() + steps.size()) + 1);
    const std::vector<float>* logits = &sb.prefill({ids});
    int agreed = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      const float* l = logits->data();
      const int32_t ours = static_cast<int32_t>(std::max_element(l, l + V) - l);
      const int32_t ref = steps[s]["id"].get<int32_t>();
      if (ours != ref) {
        const auto top2 = steps[s]["top2_logits"].get<std::vector<double>>();
        const double gap = top2[0] - top2[1];
        EXPECT_LT(gap, 0.5) << "prompt '" << p["name"].get<std::string>() << "' step " << s
                            << ": ours " << ours << ", llama.cpp " << ref << " (gap " << gap
                            << " nats is not a near-tie)";
        ++near_ties;
        break;
      }
      ++agreed;
      if (s + 1 < steps.size()) logits = &sb.decode({ours});
    }
    std::printf("[%s] %d/%zu steps agree\n", p["name"].get<std::string>().c_str(), agreed,
                steps.size());
    total_agreed += agreed;
    total_steps += static_cast<int>(steps.size());
  }
  std::printf("llama.cpp gate: %d/%d steps agree, %d near-tie stops\n", total_agreed, total_steps,
              near_ties);
}
