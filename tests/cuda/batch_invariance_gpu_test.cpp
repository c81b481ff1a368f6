// The batch-invariance gate on the GPU: a request's logits (hence greedy ids) are
// bit-identical whether it runs alone, prefilled in one piece, or prefilled in chunks mixed
// with other requests' prefills and decodes and then decoded among 7 others, eagerly or
// through captured graphs. SmolLM2-135M Q4_1 (fp16 KV), the tiny bf16 Qwen3 (bf16 KV) and
// the synthetic mixed-quantization Llama GGUF (harness.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "harness.h"

namespace {

using namespace vllm::cuda_testing;
using vllm::model::CausalLM;

std::vector<int32_t> prompt(int len, int salt, int64_t vocab) {
  std::vector<int32_t> p;
  for (int i = 0; i < len; ++i)
    p.push_back(
        static_cast<int32_t>((salt * 7919 + i * 104729 + 100) % std::min<int64_t>(vocab, 30000)));
  return p;
}

constexpr int kSteps = 40;

// The request alone: one prefill, then kSteps greedy decodes at batch 1 (eager).
std::vector<uint64_t> alone(const CausalLM& m, const std::vector<int32_t>& p) {
  const int64_t V = m.config().vocab_size;
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(m, be);
  ex.init_kv_cache(128, 16, ex.default_kv_cache_dtype());
  Seqs seqs(ex, 128, 16);
  const int s = seqs.add();
  std::vector<uint64_t> h;
  std::vector<float> l = seqs.prefill(s, p);
  for (int step = 0; step <= kSteps; ++step) {
    h.push_back(hash_bits(l.data(), V));
    if (step < kSteps) l = seqs.decode({s}, {host_argmax(l.data(), V)});
  }
  return h;
}

// The request among 7 others: prefilled 7 tokens at a time in steps shared with the others'
// prefills and decodes, then decoded in a batch of 8 (at row 3), eagerly or from graphs.
std::vector<uint64_t> crowd(const CausalLM& m, const std::vector<int32_t>& p, bool graph) {
  const int64_t V = m.config().vocab_size;
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(m, be);
  ex.init_kv_cache(256, 16, ex.default_kv_cache_dtype());
  Seqs seqs(ex, 256, 16, /*seed=*/7);
  std::unique_ptr<GraphDecoder> dec;
  if (graph) dec = std::make_unique<GraphDecoder>(ex, GraphOptions{}, 16, 8, 64, 256);
  const int lens[7] = {5, 11, 17, 30, 3, 9, 40};
  std::vector<int> others;
  std::vector<int32_t> last(7, 0);
  for (int i = 0; i < 7; ++i) others.push_back(seqs.add());
  const int r = seqs.add();
  std::vector<uint64_t> h;
  int32_t tok = 0;  // the request's next token
  size_t done = 0;
  bool started[7] = {};
  for (int step = 0; done < p.size(); ++step) {
    std::vector<Seqs::Part> parts;
    std::vector<int> who;  // -1: the request, else the other's index
    // Others: full prompts at steps 0 (0..3) and 1 (4..6), single-token decodes afterwards.
    for (int i = 0; i < 7; ++i) {
      if (!started[i] && step == (i < 4 ? 0 : 1)) {
        parts.push_back({others[i], prompt(lens[i], i + 1, V)});
        started[i] = true;
        who.push_back(i);
      } else if (started[i]) {
        parts.push_back({others[i], {last[i]}});
        who.push_back(i);
      }
    }
    const size_t n = std::min<size_t>(7, p.size() - done);
    const size_t at = std::min<size_t>(parts.size(), 2);
    parts.insert(parts.begin() + at,
                 {r, std::vector<int32_t>(p.begin() + done, p.begin() + done + n)});
    who.insert(who.begin() + at, -1);
    done += n;
    const auto& l = seqs.run(parts);
    for (size_t k = 0; k < who.size(); ++k) {
      const float* row = l.data() + k * V;
      if (who[k] >= 0) {
        last[who[k]] = host_argmax(row, V);
      } else if (done == p.size()) {
        h.push_back(hash_bits(row, V));
        tok = host_argmax(row, V);
      }
    }
  }
  // Decode in a batch of 8 with the request at row 3.
  const std::vector<int> order = {0, 1, 2, -1, 3, 4, 5, 6};
  for (int step = 0; step < kSteps; ++step) {
    std::vector<int> ss;
    std::vector<int32_t> toks;
    for (int o : order) {
      ss.push_back(o < 0 ? r : others[o]);
      toks.push_back(o < 0 ? tok : last[o]);
    }
    std::vector<int32_t> next(order.size());
    const std::vector<float>* l;
    if (!dec) {
      l = &seqs.decode(ss, toks);
      for (size_t i = 0; i < order.size(); ++i) next[i] = host_argmax(l->data() + i * V, V);
    } else {
      std::vector<GraphDecoder::Row> rows;
      for (size_t i = 0; i < order.size(); ++i) {
        const int32_t pos = seqs.length(ss[i]);
        seqs.ensure(ss[i], pos + 1);
        rows.push_back({static_cast<uint64_t>(ss[i]), toks[i], pos, seqs.blocks(ss[i]).data(),
                        static_cast<int32_t>(seqs.blocks(ss[i]).size())});
      }
      l = &dec->step(rows);
      for (size_t i = 0; i < order.size(); ++i) {
        seqs.advance(ss[i], 1);
        next[i] = dec->next_ids()[i];
      }
    }
    h.push_back(hash_bits(l->data() + 3 * V, V));
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] < 0)
        tok = next[i];
      else
        last[order[i]] = next[i];
    }
  }
  return h;
}

const CausalLM& load(const std::string& path) {
  static std::map<std::string, std::unique_ptr<CausalLM>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return *it->second;
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path + " missing: scripts/gpu_check.sh fetches / generates it");
  return *(cache[path] = CausalLM::load(path));
}

void expect_invariant(const std::string& path) {
  const CausalLM& m = load(path);
  const auto p = prompt(23, 99, m.config().vocab_size);
  const auto a = alone(m, p);
  const auto e = crowd(m, p, false);
  const auto g = crowd(m, p, true);
  ASSERT_EQ(a.size(), static_cast<size_t>(kSteps + 1));
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
