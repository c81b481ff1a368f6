// The model's memory is its backend's storage (the seam a device backend plugs into): the
// weights, the KV pages and the activation scratch are Backend::alloc_storage / adopt_storage
// buffers of the backend the executor supplies, the decode graphs and their state live on
// that same backend, and nothing is left once the model is gone.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "../model/test_paths.h"
#include "engine/cpu_model_executor.h"
#include "engine/llm_engine.h"
#include "model/causal_lm.h"
#include "vt/graph.h"

namespace {

using vllm::engine::CpuModelExecutor;
using vllm::engine::EngineConfig;
using vllm::engine::LLMEngine;
using vllm::engine::SamplingParams;
namespace model = vllm::model;

int64_t storage(const vt::Backend& be, vt::StorageKind k) {
  return be.stats().storage_bytes[static_cast<int>(k)];
}

TEST(BackendStorage, WeightsKvAndScratchLiveOnTheExecutorsBackend) {
  const std::string mdir = vllm::testing::tiny_models_dir() + "/qwen3";
  ASSERT_TRUE(std::filesystem::exists(mdir + "/config.json")) << mdir << " missing";
  std::shared_ptr<vt::Backend> be = vt::make_cpu_backend();
  model::LoadOptions opts;
  opts.backend = be;
  auto m = model::CausalLM::load(mdir, vt::ThreadPool::global(), opts);
  // Loaded: the weights are storage (the mapped safetensors, and the packed copies), and
  // nothing else is yet.
  const int64_t weights = storage(*be, vt::StorageKind::Weights);
  EXPECT_GT(weights, 0);
  EXPECT_EQ(storage(*be, vt::StorageKind::KvCache), 0);
  EXPECT_EQ(storage(*be, vt::StorageKind::Scratch), 0);
  {
    CpuModelExecutor ex(*m);
    EXPECT_EQ(&ex.backend(), be.get());  // the executor supplies the model's backend
    EngineConfig cfg;
    cfg.num_gpu_blocks = 24;
    LLMEngine eng(cfg, ex);
    EXPECT_EQ(storage(*be, vt::StorageKind::KvCache),
              24 * ex.kv_bytes_per_block(cfg.block_size, eng.config().kv_cache_dtype.value_or(
                                                             ex.default_kv_cache_dtype())));
    SamplingParams p;
    p.temperature = 0.0f;
    p.max_tokens = 6;
    p.ignore_eos = true;
    eng.add_request("a", {300, 301, 302, 303, 304}, p);
    eng.add_request("b", {400, 401, 402}, p);
    int64_t tokens = 0;
    while (eng.has_unfinished_requests())
      for (auto& o : eng.step()) tokens += static_cast<int64_t>(o.new_token_ids.size());
    EXPECT_EQ(tokens, 12);
    EXPECT_GT(storage(*be, vt::StorageKind::Scratch), 0);
    EXPECT_EQ(storage(*be, vt::StorageKind::Weights), weights);
    // The decode graphs ran on the same backend, over that storage.
    EXPECT_GT(be->stats().replays, 0);
  }
  m.reset();
  const vt::Backend::Stats s = be->stats();
  EXPECT_EQ(s.storage_buffers, 0);
  for (int k = 0; k < vt::kStorageKinds; ++k) EXPECT_EQ(s.storage_bytes[k], 0) << k;
}

}  // namespace
