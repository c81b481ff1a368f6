// The batch-invariance scenario, over any engine::ModelExecutor: a request's logits hashes
// when it runs alone (one prefill, then greedy decodes at batch 1), and when it is prefilled 7
// tokens at a time in steps shared with 7 other requests' prefills and decodes and then decoded
// at row 3 of a batch of 8 by a caller-given decode step (eager, or captured graphs).
// CUDA-free: the GPU gate runs it over CudaModelExecutor, tests/vt/cuda_harness_test.cpp over
// the CPU executor.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "seqs.h"

namespace vllm::cuda_testing {

inline std::vector<int32_t> scenario_prompt(int len, int salt, int64_t vocab) {
  std::vector<int32_t> p;
  for (int i = 0; i < len; ++i)
    p.push_back(
        static_cast<int32_t>((salt * 7919 + i * 104729 + 100) % std::min<int64_t>(vocab, 30000)));
  return p;
}

constexpr int kScenarioSteps = 40;

// `ex` has a KV cache of at least 128 blocks of 16.
inline std::vector<uint64_t> alone_hashes(vllm::engine::ModelExecutor& ex,
                                          const std::vector<int32_t>& p) {
  const int64_t V = ex.vocab_size();
  Seqs seqs(ex, 128, 16);
  const int s = seqs.add();
  std::vector<uint64_t> h;
  std::vector<float> l = seqs.prefill(s, p);
  for (int step = 0; step <= kScenarioSteps; ++step) {
    h.push_back(hash_bits(l.data(), V));
    if (step < kScenarioSteps) l = seqs.decode({s}, {host_argmax(l.data(), V)});
  }
  return h;
}

// One decode step of sequences `ss` fed `toks`: returns the logits rows ([ss.size()][vocab])
// and sets `next` to each row's greedy token.
using DecodeStep =
    std::function<const float*(Seqs& seqs, const std::vector<int>& ss,
                               const std::vector<int32_t>& toks, std::vector<int32_t>& next)>;

inline DecodeStep eager_decode(int64_t vocab) {
  return [vocab](Seqs& seqs, const std::vector<int>& ss, const std::vector<int32_t>& toks,
                 std::vector<int32_t>& next) {
    const std::vector<float>& l = seqs.decode(ss, toks);
    next.resize(ss.size());
    for (size_t i = 0; i < ss.size(); ++i) next[i] = host_argmax(l.data() + i * vocab, vocab);
    return l.data();
  };
}

// `seqs` runs over an executor with a KV cache of at least 256 blocks of 16.
inline std::vector<uint64_t> crowd_hashes(Seqs& seqs, int64_t V, const std::vector<int32_t>& p,
                                          const DecodeStep& decode) {
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
        parts.push_back({others[i], scenario_prompt(lens[i], i + 1, V)});
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
  for (int step = 0; step < kScenarioSteps; ++step) {
    std::vector<int> ss;
    std::vector<int32_t> toks, next;
    for (int o : order) {
      ss.push_back(o < 0 ? r : others[o]);
      toks.push_back(o < 0 ? tok : last[o]);
    }
    const float* l = decode(seqs, ss, toks, next);
    h.push_back(hash_bits(l + 3 * V, V));
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] < 0)
        tok = next[i];
      else
        last[order[i]] = next[i];
    }
  }
  return h;
}

}  // namespace vllm::cuda_testing
