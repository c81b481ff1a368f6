// The batch-invariance gate on the GPU: a request's logits (hence greedy ids) are
// bit-identical whether it runs alone, prefilled in one piece, or prefilled in chunks mixed
// with other requests' prefills and decodes and then decoded among 7 others, eagerly or
// through captured graphs (invariance_scenario.h). SmolLM2-135M Q4_1 (fp16 KV), the tiny
// bf16 Qwen3 (bf16 KV) and the synthetic mixed-quantization Llama GGUF (synthetic_model.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

#include "harness.h"
#include "invariance_scenario.h"

namespace {

using namespace vllm::cuda_testing;
using vllm::model::CausalLM;

const CausalLM& load(const std::string& path) {
  static std::map<std::string, std::unique_ptr<CausalLM>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return *it->second;
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path + " missing: scripts/gpu_check.sh fetches / generates it");
  return *(cache[path] = CausalLM::load(path));
}

std::vector<uint64_t> alone(const CausalLM& m, const std::vector<int32_t>& p) {
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(m, be);
  ex.init_kv_cache(128, 16, ex.default_kv_cache_dtype());
  return alone_hashes(ex, p);
}

std::vector<uint64_t> crowd(const CausalLM& m, const std::vector<int32_t>& p, bool graph) {
  const int64_t V = m.config().vocab_size;
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(m, be);
  ex.init_kv_cache(256, 16, ex.default_kv_cache_dtype());
  Seqs seqs(ex, 256, 16, /*seed=*/7);
  if (!graph) return crowd_hashes(seqs, V, p, eager_decode(V));
  GraphDecoder dec(ex, GraphOptions{}, 16, 8, 64, 256);
  return crowd_hashes(
      seqs, V, p,
      [&](Seqs& s, const std::vector<int>& ss, const std::vector<int32_t>& toks,
          std::vector<int32_t>& next) {
        std::vector<GraphDecoder::Row> rows;
        for (size_t i = 0; i < ss.size(); ++i) {
          const int32_t pos = s.length(ss[i]);
          s.ensure(ss[i], pos + 1);
          rows.push_back({static_cast<uint64_t>(ss[i]), toks[i], pos, s.blocks(ss[i]).data(),
                          static_cast<int32_t>(s.blocks(ss[i]).size())});
        }
        const std::vector<float>& l = dec.step(rows);
        for (size_t i = 0; i < ss.size(); ++i) s.advance(ss[i], 1);
        next = dec.next_ids();
        return l.data();
      });
}

void expect_invariant(const std::string& path) {
  const CausalLM& m = load(path);
  const auto p = scenario_prompt(23, 99, m.config().vocab_size);
  const auto a = alone(m, p);
  const auto e = crowd(m, p, false);
  const auto g = crowd(m, p, true);
  ASSERT_EQ(a.size(), static_cast<size_t>(kScenarioSteps + 1));
  EXPECT_EQ(e, a) << "eager, chunked among 7 others";
  EXPECT_EQ(g, a) << "graphs, chunked among 7 others";
}

TEST(CudaBatchInvariance, SmolLM2AloneEqualsAmongOthers) { expect_invariant(default_gguf()); }
TEST(CudaBatchInvariance, SyntheticMixedQuantsAloneEqualsAmongOthers) {
  expect_invariant(synthetic_gguf());
}
TEST(CudaBatchInvariance, TinyQwen3Bf16AloneEqualsAmongOthers) {
  expect_invariant(tiny_models_dir() + "/qwen3");
}

}  // namespace
