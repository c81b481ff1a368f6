// Reference gates on the GPU: the tiny Hugging Face checkpoints' logits at every prompt
// position within 1e-3 relative of transformers and their greedy continuations (near-tie
// rule), and SmolLM2-135M Q4_1 greedy decoding against llama.cpp's goldens (near-tie rule).
// Goldens: tests/golden/hf (tools/make_hf_goldens.py), tests/golden/llamacpp
// (tools/make_llamacpp_goldens.py), the same files the CPU gates use.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../model/test_paths.h"
#include "harness.h"
#include "model/load_error.h"

namespace {

using namespace vllm::cuda_testing;
using vllm::model::CausalLM;

class CudaHfReference : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaHfReference, LogitsAndGreedyMatchTransformers) {
  const std::string name = GetParam();
  const std::string gdir = golden_dir() + "/hf/" + name;
  const auto index = vllm::testing::read_json_file(gdir + "/index.json");
  const std::string mdir = tiny_models_dir() + "/" + name;
  ASSERT_TRUE(std::filesystem::exists(mdir + "/config.json"))
      << mdir << " missing: run python3 tools/make_tiny_models.py --out " << tiny_models_dir();
  auto m = CausalLM::load(mdir);
  const int64_t V = m->config().vocab_size;
  ASSERT_EQ(V, index["vocab_size"].get<int64_t>());
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(*m, be);
  // The fp32 reference gate keeps an fp32 KV cache, as the CPU gate does.
  ex.init_kv_cache(64, 16, vt::DType::F32);
  for (const auto& p : index["prompts"]) {
    const auto ids = p["prompt_ids"].get<std::vector<int32_t>>();
    const int64_t n = static_cast<int64_t>(ids.size());
    const auto gold =
        vllm::testing::read_f32(gdir + "/" + p["logits_file"].get<std::string>(), n * V);
    const auto greedy = p["greedy_ids"].get<std::vector<int32_t>>();
    const auto top2 = p["greedy_top2_logits"].get<std::vector<std::vector<double>>>();
    Seqs seqs(ex, 64, 16);
    const int s = seqs.add();
    const std::vector<float> logits = seqs.prefill(s, ids, /*all_logits=*/true);
    double worst = 0;
    for (int64_t t = 0; t < n; ++t) {
      double max_abs_ref = 0, max_err = 0;
      for (int64_t i = 0; i < V; ++i) {
        max_abs_ref = std::max(max_abs_ref, std::fabs(double(gold[t * V + i])));
        max_err = std::max(max_err, std::fabs(double(logits[t * V + i]) - gold[t * V + i]));
      }
      worst = std::max(worst, max_err / max_abs_ref);
    }
    EXPECT_LE(worst, 1e-3) << name << ": relative max logit error";
    int agreed = 0;
    int32_t next = host_argmax(logits.data() + (n - 1) * V, V);
    for (size_t step = 0; step < greedy.size(); ++step) {
      if (next != greedy[step]) {
        const double gap = top2[step][0] - top2[step][1];
        EXPECT_LT(gap, 0.5) << name << " step " << step << ": ours " << next << ", transformers "
                            << greedy[step] << " (gap " << gap << " is not a near-tie)";
        break;
      }
      ++agreed;
      if (step + 1 < greedy.size()) next = host_argmax(seqs.decode({s}, {next}).data(), V);
    }
    std::printf("[%s] %lld positions, rel max err %.2e, %d/%zu greedy tokens agree\n", name.c_str(),
                static_cast<long long>(n), worst, agreed, greedy.size());
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, CudaHfReference, ::testing::Values("qwen3", "llama", "qwen2"));

TEST(CudaHfReferenceMoe, IsRefusedByName) {
  const std::string mdir = tiny_models_dir() + "/qwen3_moe";
  ASSERT_TRUE(std::filesystem::exists(mdir + "/config.json")) << mdir << " missing";
  auto m = CausalLM::load(mdir);
  vt::cuda::CudaBackend be;
  try {
    vt::cuda::CudaModelExecutor ex(*m, be);
    FAIL() << "a MoE model was accepted by the CUDA executor";
  } catch (const vllm::model::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("mixture-of-experts"), std::string::npos) << e.what();
  }
}

TEST(CudaLlamaCppReference, SmolLM2GreedyMatches) {
  const auto gold = vllm::testing::read_json_file(golden_dir() + "/llamacpp/smollm2_q4_1.json");
  const std::string path = default_gguf();
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing: run scripts/fetch_models.sh";
  auto m = CausalLM::load(path);
  const int64_t V = m->config().vocab_size;
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(*m, be);
  ex.init_kv_cache(64, 16, ex.default_kv_cache_dtype());
  int total_agreed = 0, total_steps = 0, near_ties = 0;
  double worst_top = 0;
  ASSERT_GE(gold["prompts"].size(), 8u);
  for (const auto& p : gold["prompts"]) {
    const auto ids = p["prompt_ids"].get<std::vector<int32_t>>();
    const auto& steps = p["steps"];
    Seqs seqs(ex, 64, 16);
    const int s = seqs.add();
    std::vector<float> logits = seqs.prefill(s, ids);
    int agreed = 0;
    for (size_t st = 0; st < steps.size(); ++st) {
      const int32_t ours = host_argmax(logits.data(), V);
      const int32_t ref = steps[st]["id"].get<int32_t>();
      const auto top2 = steps[st]["top2_logits"].get<std::vector<double>>();
      if (ours != ref) {
        const double gap = top2[0] - top2[1];
        EXPECT_LT(gap, 0.5) << "prompt '" << p["name"].get<std::string>() << "' step " << st
                            << ": ours " << ours << ", llama.cpp " << ref << " (gap " << gap
                            << " nats is not a near-tie)";
        ++near_ties;
        break;
      }
      worst_top = std::max(worst_top, std::fabs(logits[ours] - top2[0]));
      ++agreed;
      if (st + 1 < steps.size()) logits = seqs.decode({s}, {ours});
    }
    std::printf("[%s] %d/%zu steps agree\n", p["name"].get<std::string>().c_str(), agreed,
                steps.size());
    total_agreed += agreed;
    total_steps += static_cast<int>(steps.size());
  }
  std::printf(
      "llama.cpp gate (CUDA): %d/%d steps agree, %d near-tie stops, largest |our top logit - "
      "llama.cpp's| %.3f\n",
      total_agreed, total_steps, near_ties, worst_top);
  EXPECT_LT(worst_top, 1.0) << "a correct Q4_1 path is within ~0.1-0.2 of llama.cpp's logits";
}

}  // namespace
