// `vllm bench latency` and `vllm bench throughput`, like Python vLLM's: random prompt ids,
// fixed output length, EOS ignored, run through the engine (scheduler, decode graphs).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "api/cli/commands.h"
#include "api/cli/engine_flags.h"
#include "api/llm.h"
#include "api/model_resolver.h"
#include "engine/structured_output/structured_output.h"
#include "vt/ops.h"

namespace vllm::cli {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::vector<int32_t>> random_prompts(int64_t n, int64_t len, int64_t vocab,
                                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> tok(
      0, static_cast<int32_t>(std::min<int64_t>(vocab, 10000) - 1));
  std::vector<std::vector<int32_t>> p(n, std::vector<int32_t>(len));
  for (auto& v : p)
    for (auto& t : v) t = tok(rng);
  return p;
}

engine::SamplingParams bench_params(int64_t out_len) {
  engine::SamplingParams sp;
  sp.temperature = 0;
  sp.ignore_eos = true;
  sp.max_tokens = static_cast<int32_t>(out_len);
  return sp;
}

struct Common {
  std::string model;
  int64_t in_len = 128, out_len = 128;
  bool as_json = false;
  EngineFlags ef;
};

void add_common(CLI::App* a, Common& c) {
  a->add_option("--model", c.model, "model folder or .gguf file")->required();
  a->add_option("--input-len", c.in_len, "prompt tokens per request")->check(CLI::PositiveNumber);
  a->add_option("--output-len", c.out_len, "generated tokens per request")
      ->check(CLI::PositiveNumber);
  a->add_flag("--json", c.as_json, "print one JSON object");
  c.ef.add(*a);
}

nlohmann::json run_info(api::LLM& llm) {
  const auto* g = llm.engine().core().model_runner().graph_driver();
  nlohmann::json j = {{"isa", vt::active_isa()},
                      {"threads", vt::ThreadPool::global().size()},
                      {"decode_graph", g != nullptr}};
  if (g) {
    const auto& s = g->stats();
    j["graph_stats"] = {{"captures", s.captures},
                        {"replays", s.replays},
                        {"steady_replays", s.steady_replays},
                        {"seeds", s.seeds},
                        {"eager_warmups", s.eager_warmups},
                        {"width_changes", s.width_changes}};
  }
  return j;
}

// One batch of `batch` prompts prefilled in one step; no prefix caching, since every
// iteration must really prefill.
engine::EngineConfig latency_config(Common& c, int64_t batch) {
  c.ef.refuse_pooling("vllm bench");
  engine::EngineConfig cfg = c.ef.resolve();
  cfg.max_num_seqs = std::max<int32_t>(cfg.max_num_seqs, static_cast<int32_t>(batch));
  cfg.max_num_batched_tokens = std::max<int64_t>(cfg.max_num_batched_tokens, batch * c.in_len);
  cfg.enable_prefix_caching = false;
  return cfg;
}

int bench_latency(Common& c, int64_t batch, int iters) {
  auto llm = api::LLM::load(c.model, latency_config(c, batch));
  api::refuse_classifier("vllm bench", llm->model());
  auto& engine = llm->engine();
  const auto& runner = engine.core().model_runner();
  std::vector<double> prefill_s, decode_s, host_us;
  // Every iteration's KV pages committed up front (see run_throughput): without prefix
  // caching each iteration takes blocks no earlier one used.
  engine.prefault_kv((iters + 1) * batch, c.in_len + c.out_len);
  for (int it = 0; it <= iters; ++it) {  // iteration 0 warms up (and captures graphs)
    auto prompts = random_prompts(batch, c.in_len, llm->model().config().vocab_size, 1000 + it);
    for (int64_t i = 0; i < batch; ++i)
      engine.add_request("b" + std::to_string(it) + "_" + std::to_string(i), prompts[i],
                         bench_params(c.out_len));
    const double t0 = now_s();
    double t_first = 0;
    int64_t with_output = 0, steps = 0;
    double decode_step_time = 0, decode_fwd = 0;
    while (engine.has_unfinished_requests()) {
      const double s0 = now_s(), f0 = runner.forward_seconds();
      const auto outs = engine.step();
      const double s1 = now_s();
      if (with_output < batch) {
        for (const auto& o : outs)
          if (o.num_output_tokens == static_cast<int64_t>(o.new_token_ids.size()) &&
              !o.new_token_ids.empty())
            ++with_output;
        if (with_output >= batch) t_first = s1;
      } else {
        decode_step_time += s1 - s0;
        decode_fwd += runner.forward_seconds() - f0;
        ++steps;
      }
    }
    const double t1 = now_s();
    if (it > 0) {
      prefill_s.push_back(t_first - t0);
      decode_s.push_back(t1 - t_first);
      host_us.push_back(steps ? 1e6 * (decode_step_time - decode_fwd) / steps : 0.0);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double p = median(prefill_s), d = median(decode_s), h = median(host_us);
  const double prefill_tps = batch * c.in_len / p;
  const double decode_tps = c.out_len > 1 ? batch * (c.out_len - 1) / d : 0.0;
  nlohmann::json j = {{"model", c.model},
                      {"input_len", c.in_len},
                      {"output_len", c.out_len},
                      {"batch_size", batch},
                      {"iters", iters},
                      {"prefill_latency_s", p},
                      {"decode_latency_s", d},
                      {"avg_latency_s", p + d},
                      {"prefill_tokens_per_s", prefill_tps},
                      {"decode_tokens_per_s", decode_tps},
                      {"decode_host_us_per_step", h}};
  j.update(run_info(*llm));
  if (c.as_json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("model %s  batch %lld  input %lld  output %lld  (%s, %d threads, graphs %s)\n",
                c.model.c_str(), static_cast<long long>(batch), static_cast<long long>(c.in_len),
                static_cast<long long>(c.out_len), vt::active_isa(),
                vt::ThreadPool::global().size(), j["decode_graph"].get<bool>() ? "on" : "off");
    std::printf("Avg latency: %.4f s (prefill %.4f s, decode %.4f s)\n", p + d, p, d);
    std::printf("Prefill: %.1f tokens/s\nDecode:  %.1f tokens/s (host %.1f us/step)\n", prefill_tps,
                decode_tps, h);
  }
  return 0;
}

// --compare-eager: one model file, two engines (decode graphs / --enforce-eager), the same
// prompts, stepped in turn: one decode step of each, then the next. Each engine's decode
// time is the sum of its own steps, so slow drift of a noisy machine (which makes two
// separate runs differ by several percent) hits both alike.
int bench_latency_paired(Common& c, int64_t batch, int iters) {
  engine::EngineConfig cfg = latency_config(c, batch);
  cfg.enforce_eager = false;
  engine::EngineConfig eager_cfg = cfg;
  eager_cfg.enforce_eager = true;
  std::unique_ptr<api::LLM> llms[2] = {api::LLM::load(c.model, cfg),
                                       api::LLM::load(c.model, eager_cfg)};
  double decode_s[2] = {0, 0}, fwd_s[2] = {0, 0};
  int64_t steps[2] = {0, 0};
  std::vector<double> ratio;             // per iteration: graph decode speed / eager decode speed
  for (int it = 0; it <= iters; ++it) {  // iteration 0 warms up (and captures graphs)
    auto prompts = random_prompts(batch, c.in_len, llms[0]->model().config().vocab_size, 1000 + it);
    double it_s[2] = {0, 0};
    for (int kk = 0; kk < 2; ++kk) {
      const int k = (it + kk) % 2;  // who goes first alternates
      auto& eng = llms[k]->engine();
      for (int64_t i = 0; i < batch; ++i)
        eng.add_request("b" + std::to_string(it) + "_" + std::to_string(i), prompts[i],
                        bench_params(c.out_len));
      int64_t with_output = 0;  // prefill: until every request has its first token
      while (with_output < batch)
        for (const auto& o : eng.step())
          if (o.num_output_tokens == 1 && !o.new_token_ids.empty()) ++with_output;
    }
    bool busy = true;
    while (busy) {
      busy = false;
      for (int kk = 0; kk < 2; ++kk) {
        const int k = (it + kk) % 2;
        auto& eng = llms[k]->engine();
        if (!eng.has_unfinished_requests()) continue;
        busy = true;
        const auto& runner = eng.core().model_runner();
        const double f0 = runner.forward_seconds(), s0 = now_s();
        eng.step();
        const double dt = now_s() - s0;
        it_s[k] += dt;
        if (it > 0) {
          decode_s[k] += dt;
          fwd_s[k] += runner.forward_seconds() - f0;
          ++steps[k];
        }
      }
    }
    if (it > 0) ratio.push_back(it_s[1] / it_s[0]);
  }
  const char* names[2] = {"graph", "eager"};
  nlohmann::json j = {{"model", c.model},        {"input_len", c.in_len},
                      {"output_len", c.out_len}, {"batch_size", batch},
                      {"iters", iters},          {"graph_over_eager_per_iter", ratio}};
  for (int k = 0; k < 2; ++k) {
    j[std::string(names[k]) + "_decode_tokens_per_s"] = batch * steps[k] / decode_s[k];
    j[std::string(names[k]) + "_decode_host_us_per_step"] =
        1e6 * (decode_s[k] - fwd_s[k]) / static_cast<double>(steps[k]);
  }
  j["graph_over_eager"] = decode_s[1] / decode_s[0];
  j["graph_stats"] = run_info(*llms[0])["graph_stats"];
  if (c.as_json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf(
        "decode tok/s: graph %.2f, eager %.2f (graph/eager %.4f); host us/step %.1f / %.1f\n",
        j["graph_decode_tokens_per_s"].get<double>(), j["eager_decode_tokens_per_s"].get<double>(),
        j["graph_over_eager"].get<double>(), j["graph_decode_host_us_per_step"].get<double>(),
        j["eager_decode_host_us_per_step"].get<double>());
  }
  return 0;
}

struct ThroughputRun {
  double elapsed = 0;
  int64_t out_tokens = 0;
  engine::EngineMetrics metrics_delta;
};

// Every prompt submitted at once, stepped to the end. `grammar`: each request constrained by it.
// `loras`: request i runs adapter loras[i] (empty: none).
ThroughputRun run_throughput(api::LLM& llm, const std::vector<std::vector<int32_t>>& prompts,
                             int64_t out_len, const std::string& tag,
                             std::shared_ptr<const engine::so::CompiledGrammar> grammar,
                             const std::vector<int32_t>& loras = {}) {
  auto& engine = llm.engine();
  // The KV pages these requests will fill, committed before the clock starts: llama.cpp
  // clears its cache when the context is created and vLLM zeroes its own at startup, so
  // neither peer times first-touch page faults (on a VM whose memory the host backs lazily,
  // ~2 s per GB). The engine itself maps the cache lazily, for a fast start.
  size_t longest = 0;  // every request's blocks, counted at the longest prompt's
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  engine.prefault_kv(static_cast<int64_t>(prompts.size()), static_cast<int64_t>(longest) + out_len);
  const engine::EngineMetrics m0 = engine.metrics();
  ThroughputRun r;
  const double t0 = now_s();
  for (size_t i = 0; i < prompts.size(); ++i) {
    engine::SamplingParams sp = bench_params(out_len);
    sp.grammar = grammar;
    if (!loras.empty()) sp.lora_id = loras[i];
    engine.add_request(tag + std::to_string(i), prompts[i], sp);
  }
  while (engine.has_unfinished_requests())
    for (const auto& o : engine.step())
      r.out_tokens += static_cast<int64_t>(o.new_token_ids.size());
  r.elapsed = now_s() - t0;
  const engine::EngineMetrics m1 = engine.metrics();
  r.metrics_delta.structured_output_seconds =
      m1.structured_output_seconds - m0.structured_output_seconds;
  r.metrics_delta.structured_output_rows = m1.structured_output_rows - m0.structured_output_rows;
  r.metrics_delta.structured_output_steps = m1.structured_output_steps - m0.structured_output_steps;
  r.metrics_delta.num_steps = m1.num_steps - m0.num_steps;
  return r;
}

// --structured-output: "json" (any JSON object) or a JSON Schema file.
std::shared_ptr<const engine::so::CompiledGrammar> bench_grammar(api::LLM& llm,
                                                                 const std::string& spec) {
  if (spec == "json")
    return llm.grammar_compiler().compile(engine::so::GrammarKind::kJsonObject, "");
  std::ifstream f(spec);
  if (!f) throw std::invalid_argument("--structured-output: cannot read '" + spec + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return llm.grammar_compiler().compile(engine::so::GrammarKind::kJsonSchema, ss.str());
}

int bench_throughput(Common& c, int64_t num_prompts, const std::string& structured,
                     const std::string& lora_path) {
  if (!lora_path.empty() && !c.ef.enable_lora)
    throw std::invalid_argument("--lora-path needs --enable-lora");
  if (!lora_path.empty() && !structured.empty())
    throw std::invalid_argument("--lora-path and --structured-output: one comparison at a time");
  c.ef.refuse_pooling("vllm bench");
  auto llm = api::LLM::load(c.model, c.ef.resolve());
  api::refuse_classifier("vllm bench", llm->model());
  llm->set_compact_json(c.ef.structured_outputs_compact_json());
  auto prompts = random_prompts(num_prompts, c.in_len, llm->model().config().vocab_size, 7);
  std::shared_ptr<const engine::so::CompiledGrammar> grammar;
  if (!structured.empty()) grammar = bench_grammar(*llm, structured);
  // vLLM's --lora-path: the adapter loaded as ids 1..max_loras (named "1", "2", ...), each
  // request given one of them at random; here also the same number of requests without one
  // first, for the ratio.
  std::vector<int32_t> loras;
  if (!lora_path.empty()) {
    const std::string dir = api::resolve_model(lora_path, "main", "", false).path;
    const int32_t n = std::max<int32_t>(1, c.ef.max_loras);
    for (int32_t id = 1; id <= n; ++id)
      llm->add_lora(std::to_string(id), dir, c.ef.lora_load_options());
    std::mt19937 rng(11);
    for (int64_t i = 0; i < num_prompts; ++i)
      loras.push_back(1 + static_cast<int32_t>(rng() % static_cast<uint32_t>(n)));
  }
  // With a grammar (or --lora-path): a warm-up (decode graphs captured), the requests
  // unconstrained (without adapters), then the same number constrained (on the adapters) on
  // fresh prompts of the same length (fresh, so that neither run gets prefix-cache hits from the
  // other): one process, one report, the ratio of the two.
  ThroughputRun base, so_run;
  if (grammar || !loras.empty()) {
    // As many requests as measured, so that the run's batch widths are captured here.
    run_throughput(*llm, random_prompts(num_prompts, c.in_len, llm->model().config().vocab_size, 5),
                   std::min<int64_t>(c.out_len, 16), "w", nullptr);
    base = run_throughput(*llm, prompts, c.out_len, "t", nullptr);
    so_run = run_throughput(
        *llm, random_prompts(num_prompts, c.in_len, llm->model().config().vocab_size, 8), c.out_len,
        "s", grammar, loras);
  } else {
    so_run = run_throughput(*llm, prompts, c.out_len, "t", nullptr);
  }
  const double el = so_run.elapsed;
  const int64_t out_tokens = so_run.out_tokens;
  const int64_t total = num_prompts * c.in_len + out_tokens;
  nlohmann::json j = {{"model", c.model},
                      {"input_len", c.in_len},
                      {"output_len", c.out_len},
                      {"num_requests", num_prompts},
                      {"elapsed_time", el},
                      {"total_num_tokens", total},
                      {"num_output_tokens", out_tokens},
                      {"requests_per_second", num_prompts / el},
                      {"tokens_per_second", total / el},
                      {"output_tokens_per_second", out_tokens / el}};
  if (!loras.empty()) {
    const double base_tps = base.out_tokens / base.elapsed;
    j["lora_path"] = lora_path;
    j["max_loras"] = std::max<int32_t>(1, c.ef.max_loras);
    j["base_output_tokens_per_second"] = base_tps;
    j["lora_over_base"] = (out_tokens / el) / base_tps;
  }
  if (grammar) {
    const auto& m = so_run.metrics_delta;
    const double base_tps = base.out_tokens / base.elapsed;
    j["structured_output"] = structured;
    j["unconstrained_output_tokens_per_second"] = base_tps;
    j["unconstrained_num_output_tokens"] = base.out_tokens;
    j["structured_over_unconstrained"] = (out_tokens / el) / base_tps;
    j["mask_seconds"] = m.structured_output_seconds;
    j["mask_us_per_step"] = m.structured_output_steps
                                ? 1e6 * m.structured_output_seconds / m.structured_output_steps
                                : 0.0;
    j["mask_us_per_row"] = m.structured_output_rows
                               ? 1e6 * m.structured_output_seconds / m.structured_output_rows
                               : 0.0;
    j["masked_steps"] = m.structured_output_steps;
  }
  j.update(run_info(*llm));
  if (c.as_json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output tokens/s\n",
                num_prompts / el, total / el, out_tokens / el);
    if (grammar)
      std::printf(
          "Structured output (%s): %.2f output tokens/s vs %.2f unconstrained (ratio %.3f); "
          "mask %.1f us/step, %.1f us/row\n",
          structured.c_str(), out_tokens / el,
          j["unconstrained_output_tokens_per_second"].get<double>(),
          j["structured_over_unconstrained"].get<double>(), j["mask_us_per_step"].get<double>(),
          j["mask_us_per_row"].get<double>());
    if (!loras.empty())
      std::printf("LoRA (%s, %d adapters): %.2f output tokens/s vs %.2f without (ratio %.3f)\n",
                  lora_path.c_str(), j["max_loras"].get<int>(), out_tokens / el,
                  j["base_output_tokens_per_second"].get<double>(),
                  j["lora_over_base"].get<double>());
  }
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  CLI::App app{"vllm bench: latency | throughput"};
  app.require_subcommand(1);
  Common lat_c, thr_c;
  int64_t batch = 1, num_prompts = 64;
  int iters = 3;
  bool compare_eager = false;
  auto* lat = app.add_subcommand("latency", "prefill and decode speed of one batch");
  add_common(lat, lat_c);
  lat->add_option("--batch-size", batch, "requests in the batch")->check(CLI::PositiveNumber);
  lat->add_option("--num-iters", iters, "measured iterations (after one warm-up)")
      ->check(CLI::PositiveNumber);
  lat->add_flag("--compare-eager", compare_eager,
                "decode graphs vs --enforce-eager: two engines stepped in turn, one report");
  auto* thr = app.add_subcommand("throughput", "requests/s and tokens/s of a prompt set");
  add_common(thr, thr_c);
  thr->add_option("--num-prompts", num_prompts, "requests")->check(CLI::PositiveNumber);
  std::string structured;
  thr->add_option("--structured-output", structured,
                  "also run the same requests constrained: 'json' (any JSON object) or a JSON "
                  "Schema file; reports both output tokens/s, their ratio and the mask time");
  std::string lora_path;
  thr->add_option("--lora-path", lora_path,
                  "with --enable-lora: a PEFT adapter loaded as --max-loras adapters, each "
                  "request given one at random; also runs the requests without one and reports "
                  "the ratio");
  try {
    std::vector<std::string> args = vllm_args(argc, argv);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (Common* c : {&lat_c, &thr_c})
    if (!c->model.empty()) c->model = api::resolve_model(c->model).path;
  if (lat->parsed() && compare_eager) return bench_latency_paired(lat_c, batch, iters);
  if (lat->parsed()) return bench_latency(lat_c, batch, iters);
  if (thr->parsed()) return bench_throughput(thr_c, num_prompts, structured, lora_path);
  return 2;
}

}  // namespace vllm::cli
