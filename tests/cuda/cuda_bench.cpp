// Decode throughput on the GPU, captured graphs vs eager: batch-1 and batch-32 (by default)
// decode tok/s and host microseconds per step (the host's time to queue a step: the graph
// launch, or the eager step's copies and ~10 launches per layer). Both modes keep logits on
// the device and bring back only the greedy ids, as a serving engine sampling on the GPU
// would. Prefill and the first 3 decode steps (warm-up, capture) are not timed.
//
//   cuda_bench [--model PATH] [--batch 1,32] [--input-len 128] [--output-len 128]
//              [--iters 3] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "vt/cuda/device_checks.h"
#include "vt/cuda/kernels.h"

namespace {

using namespace vllm::cuda_testing;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Result {
  double tok_s = 0, host_us = 0, step_ms = 0;
};

Result run(const vllm::model::CausalLM& m, int B, int in_len, int out_len, bool graph) {
  const int64_t V = m.config().vocab_size;
  vt::cuda::CudaBackend be;
  vt::cuda::CudaModelExecutor ex(m, be);
  const int blocks_per = (in_len + out_len + 8 + 15) / 16;
  ex.init_kv_cache(static_cast<int64_t>(B) * blocks_per + 8, 16, ex.default_kv_cache_dtype());
  Seqs seqs(ex, static_cast<int64_t>(B) * blocks_per + 8, 16);
  std::vector<int> ss;
  std::vector<int32_t> tok(B);
  for (int b = 0; b < B; ++b) {
    ss.push_back(seqs.add());
    std::vector<int32_t> p;
    for (int i = 0; i < in_len; ++i)
      p.push_back(static_cast<int32_t>(100 + (b * 7919 + i * 104729) %
                                                 (std::min<int64_t>(V, 30000) - 100)));
    tok[b] = host_argmax(seqs.prefill(ss[b], p).data(), V);
  }
  std::unique_ptr<GraphDecoder> dec;
  vt::DeviceBuffer *lbuf = nullptr, *ibuf = nullptr;
  if (graph) {
    GraphOptions o;
    o.download_logits = false;
    dec = std::make_unique<GraphDecoder>(ex, o, 16, std::max(B, 1), 64, in_len);
  } else {
    lbuf = be.alloc(static_cast<size_t>(B) * V * sizeof(float));
    ibuf = be.alloc(static_cast<size_t>(B) * sizeof(int32_t));
    seqs.set_logits_target(static_cast<float*>(lbuf->data));
  }
  double host = 0, t0 = 0;
  const int warm = 3;
  for (int step = 0; step < warm + out_len; ++step) {
    if (step == warm) {
      be.synchronize();
      t0 = now_us();
      host = 0;
    }
    if (graph) {
      std::vector<GraphDecoder::Row> rows;
      for (int b = 0; b < B; ++b) {
        const int32_t pos = seqs.length(ss[b]);
        seqs.ensure(ss[b], pos + 1);
        rows.push_back({static_cast<uint64_t>(b), tok[b], pos, seqs.blocks(ss[b]).data(),
                        static_cast<int32_t>(seqs.blocks(ss[b]).size())});
      }
      dec->step(rows);
      host += dec->last_issue_us();
      for (int b = 0; b < B; ++b) {
        seqs.advance(ss[b], 1);
        tok[b] = dec->next_ids()[b];
      }
    } else {
      const double s0 = now_us();
      seqs.decode(ss, tok);
      vt::cuda::argmax_rows(be.stream(), static_cast<const float*>(be.device_ptr(lbuf)), B, V, V,
                            static_cast<int32_t*>(be.device_ptr(ibuf)));
      host += now_us() - s0;
      be.download(tok.data(), be.device_ptr(ibuf), static_cast<size_t>(B) * sizeof(int32_t));
    }
  }
  be.synchronize();
  const double total = now_us() - t0;
  Result r;
  r.tok_s = static_cast<double>(B) * out_len / (total * 1e-6);
  r.host_us = host / out_len;
  r.step_ms = total / out_len / 1000.0;
  return r;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) v.push_back(std::stoi(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = default_gguf();
  std::vector<int> batches = {1, 32};
  int in_len = 128, out_len = 128, iters = 3;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cuda_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--model")
      model = next();
    else if (a == "--batch")
      batches = parse_list(next());
    else if (a == "--input-len")
      in_len = std::stoi(next());
    else if (a == "--output-len")
      out_len = std::stoi(next());
    else if (a == "--iters")
      iters = std::stoi(next());
    else if (a == "--json")
      json = true;
    else {
      std::fprintf(stderr, "cuda_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const std::string problem = vt::cuda::device_problem(vt::cuda::query_device(0));
  if (!problem.empty()) {
    std::fprintf(stderr, "cuda_bench: %s\n", problem.c_str());
    return 1;
  }
  auto m = vllm::model::CausalLM::load(model);
  std::printf("%-6s %-6s %12s %14s %10s   (%s, input %d, output %d, best of %d)\n", "batch", "mode",
              "decode tok/s", "host us/step", "step ms", model.c_str(), in_len, out_len, iters);
  for (int B : batches) {
    Result best[2];
    for (int it = 0; it < iters; ++it)
      for (int g : {1, 0}) {  // alternate, so drift hits both modes alike
        const Result r = run(*m, B, in_len, out_len, g == 1);
        if (r.tok_s > best[g].tok_s) best[g] = r;
      }
    for (int g : {1, 0}) {
      const Result& r = best[g];
      std::printf("%-6d %-6s %12.1f %14.1f %10.3f\n", B, g ? "graph" : "eager", r.tok_s, r.host_us,
                  r.step_ms);
      if (json)
        std::printf(
            "{\"batch\": %d, \"mode\": \"%s\", \"decode_tok_s\": %.2f, \"host_us_per_step\": "
            "%.2f, \"step_ms\": %.4f}\n",
            B, g ? "graph" : "eager", r.tok_s, r.host_us, r.step_ms);
    }
    std::printf("%-6d graph/eager decode speed %.3f\n", B, best[1].tok_s / best[0].tok_s);
  }
  return 0;
}
