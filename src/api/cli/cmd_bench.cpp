// `vllm bench latency`: prefill and decode speed of one static batch, like Python
// vLLM's `vllm bench latency` (random prompt ids, fixed output length, ignore EOS).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "api/cli/commands.h"
#include "model/static_batch.h"
#include "model/causal_lm.h"
#include "vt/cpu/kernels.h"

namespace vllm::cli {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int bench_latency(const std::string& model_path, int64_t in_len, int64_t out_len, int64_t batch,
                  int iters, bool as_json) {
  auto m = model::CausalLM::load(model_path);
  const auto& c = m->config();
  if (in_len + out_len > c.max_position_embeddings)
    throw std::runtime_error("input-len + output-len exceeds the model's context (" +
                             std::to_string(c.max_position_embeddings) + ")");
  std::mt19937 rng(0);
  std::uniform_int_distribution<int32_t> tok(
      0, static_cast<int32_t>(std::min<int64_t>(c.vocab_size, 10000) - 1));
  std::vector<std::vector<int32_t>> prompts(batch, std::vector<int32_t>(in_len));
  for (auto& p : prompts)
    for (auto& t : p) t = tok(rng);
  std::vector<double> prefill_s, decode_s;
  for (int it = 0; it < iters + 1; ++it) {  // iteration 0 warms up
    model::StaticBatch sb(*m, batch, in_len + out_len);
    double t0 = now_s();
    const std::vector<float>* logits = &sb.prefill(prompts, 2048);
    double t1 = now_s();
    std::vector<int32_t> next(batch);
    for (int64_t step = 0; step < out_len; ++step) {
      for (int64_t s = 0; s < batch; ++s) {
        const float* l = logits->data() + s * c.vocab_size;
        next[s] = static_cast<int32_t>(std::max_element(l, l + c.vocab_size) - l);
      }
      if (step + 1 < out_len) logits = &sb.decode(next);
    }
    double t2 = now_s();
    if (it > 0) {
      prefill_s.push_back(t1 - t0);
      decode_s.push_back(t2 - t1);
    }
  }
  std::sort(prefill_s.begin(), prefill_s.end());
  std::sort(decode_s.begin(), decode_s.end());
  const double p = prefill_s[prefill_s.size() / 2], d = decode_s[decode_s.size() / 2];
  // The first output token comes from the prefill; out_len - 1 decode steps follow.
  const double prefill_tps = batch * in_len / p;
  const double decode_tps = out_len > 1 ? batch * (out_len - 1) / d : 0.0;
  nlohmann::json j = {{"model", model_path},
                      {"input_len", in_len},
                      {"output_len", out_len},
                      {"batch_size", batch},
                      {"iters", iters},
                      {"isa", vt::cpu::active_isa()},
                      {"threads", vt::ThreadPool::global().size()},
                      {"prefill_latency_s", p},
                      {"decode_latency_s", d},
                      {"avg_latency_s", p + d},
                      {"prefill_tokens_per_s", prefill_tps},
                      {"decode_tokens_per_s", decode_tps}};
  if (as_json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("model %s  batch %lld  input %lld  output %lld  (%s, %d threads)\n",
                model_path.c_str(), static_cast<long long>(batch), static_cast<long long>(in_len),
                static_cast<long long>(out_len), vt::cpu::active_isa(),
                vt::ThreadPool::global().size());
    std::printf("Avg latency: %.4f s (prefill %.4f s, decode %.4f s)\n", p + d, p, d);
    std::printf("Prefill: %.1f tokens/s\nDecode:  %.1f tokens/s\n", prefill_tps, decode_tps);
  }
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  CLI::App app{"vllm bench: latency | throughput"};
  app.require_subcommand(1);
  std::string model;
  int64_t in_len = 128, out_len = 128, batch = 1;
  int iters = 3;
  bool as_json = false;
  auto* lat = app.add_subcommand("latency", "prefill and decode speed of one batch");
  lat->add_option("--model", model, "model folder or .gguf file")->required();
  lat->add_option("--input-len", in_len, "prompt tokens per request")->check(CLI::PositiveNumber);
  lat->add_option("--output-len", out_len, "generated tokens per request")
      ->check(CLI::PositiveNumber);
  lat->add_option("--batch-size", batch, "requests in the batch")->check(CLI::PositiveNumber);
  lat->add_option("--num-iters", iters, "measured iterations (after one warm-up)")
      ->check(CLI::PositiveNumber);
  lat->add_flag("--json", as_json, "print one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (lat->parsed()) return bench_latency(model, in_len, out_len, batch, iters, as_json);
  return 2;
}

}  // namespace vllm::cli
