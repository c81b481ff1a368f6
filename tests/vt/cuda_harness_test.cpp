// The GPU gates' CUDA-free pieces, run on the CPU executor so their logic is checked where
// there is no GPU: the synthetic mixed-quantization GGUF loads and generates varied tokens,
// and the batch-invariance scenario (Seqs with scattered block tables, 7-token chunks mixed
// with other requests' prefills and decodes, a batch-8 decode) gives the request the same
// logits bits as running alone (the CPU kernels are batch-invariant too). A broken Seqs
// (slots, block tables, chunk bookkeeping) would break the equality here first.
#include <gtest/gtest.h>

#include <set>

#include "../cuda/invariance_scenario.h"
#include "../cuda/synthetic_model.h"
#include "engine/cpu_model_executor.h"

namespace {

using namespace vllm::cuda_testing;

TEST(CudaHarnessOnCpu, SyntheticModelAloneEqualsAmongOthers) {
  auto m = vllm::model::CausalLM::load(synthetic_gguf());
  EXPECT_EQ(m->config().architecture, "LlamaForCausalLM");
  const int64_t V = m->config().vocab_size;
  vllm::engine::CpuModelExecutor ex(*m);
  const auto p = scenario_prompt(23, 99, V);
  ex.init_kv_cache(128, 16, ex.default_kv_cache_dtype());
  const auto alone = alone_hashes(ex, p);
  ex.init_kv_cache(256, 16, ex.default_kv_cache_dtype());
  Seqs seqs(ex, 256, 16, /*seed=*/7);
  const auto crowd = crowd_hashes(seqs, V, p, eager_decode(V));
  ASSERT_EQ(alone.size(), static_cast<size_t>(kScenarioSteps + 1));
  EXPECT_EQ(crowd, alone);
  // Not a degenerate model: the request's logits differ from step to step.
  EXPECT_GT(std::set<uint64_t>(alone.begin(), alone.end()).size(), alone.size() / 2);
}

}  // namespace
