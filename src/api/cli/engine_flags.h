// Engine flags shared by `vllm generate`, `vllm bench` and `vllm serve`, named as in Python
// vLLM. Flags that mean something here are honoured; vLLM flags that have no effect on this
// engine are accepted with a one-line warning; flags asking for what it cannot do
// (--tensor-parallel-size 2) are refused with a message. Header-only: the `vllm` program and
// libvllm_server.so both use it.
#pragma once

#include <fnmatch.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/pooler_config.h"
#include "engine/engine_config.h"
#include "model/lora.h"

namespace vllm::cli {

inline void warn(const std::string& msg) {
  std::fprintf(stderr, "WARNING vllm.cpp: %s\n", msg.c_str());
}

// vLLM's human_readable_int: a number with k / m / g / t is decimal (25.6k = 25600), with
// K / M / G / T binary (1K = 1024; whole numbers only). Rewrites `v` to digits and returns "";
// leaves a value without such a suffix as it is; returns the error for a malformed one.
inline std::string rewrite_human_readable_int(std::string& v) {
  if (v.empty()) return {};
  const char suffix = v.back();
  static const std::string kDecimal = "kmgt", kBinary = "KMGT";
  const size_t dec = kDecimal.find(suffix), bin = kBinary.find(suffix);
  if (dec == std::string::npos && bin == std::string::npos) return {};
  const std::string number = v.substr(0, v.size() - 1);
  const bool digits = !number.empty() && std::isdigit(static_cast<unsigned char>(number[0]));
  const size_t dot = number.find('.');
  if (!digits || number.find_first_not_of("0123456789.") != std::string::npos ||
      (dot != std::string::npos && number.find('.', dot + 1) != std::string::npos) ||
      number.back() == '.' || number.size() > 15)
    return "not a number with a k/m/g/t or K/M/G/T suffix: " + v;
  if (bin != std::string::npos) {
    if (dot != std::string::npos)
      return "decimals are not allowed with binary suffixes like " + std::string(1, suffix) +
             "; did you mean " + number + static_cast<char>(std::tolower(suffix)) + "?";
    const long long n = std::stoll(number);
    if (n >= (1LL << (62 - 10 * (bin + 1)))) return "too large: " + v;
    v = std::to_string(n << (10 * (bin + 1)));
  } else {
    double x = std::stod(number);
    for (size_t i = 0; i <= dec; ++i) x *= 1000;
    if (x >= 9e18) return "too large: " + v;
    v = std::to_string(static_cast<long long>(x));
  }
  return {};
}

// The size flags vLLM reads with human_readable_int (--max-model-len, --max-num-batched-tokens,
// --max-num-scheduled-tokens, --kv-cache-memory-bytes), as a CLI11 transform.
inline CLI::Validator human_readable_int() {
  return CLI::Validator(rewrite_human_readable_int, "INT[kmgtKMGT]", "human-readable int");
}

// vLLM's dotted arguments: `--compilation-config.cudagraph_mode FULL`, `--X.a.b=V` and
// `--X.a+ v1,v2` (a list) set fields of the JSON option --X; the fields of one option are
// merged into one object, given after the other arguments. Each value is read as JSON, else as a
// human-readable int, else as a string. Returns the arguments (argv[1:]) so rewritten.
inline std::vector<std::string> merge_dotted_args(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> merged;
  for (size_t i = 0; i < in.size(); ++i) {
    std::string a = in[i];
    if (a.empty() || a[0] != '-' || a.find('.') == std::string::npos) {
      out.push_back(a);
      continue;
    }
    std::string value;
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      value = a.substr(eq + 1);
      a.resize(eq);
      if (a.find('.') == std::string::npos) {  // the dot was in the value
        out.push_back(in[i]);
        continue;
      }
    } else if (i + 1 < in.size()) {
      value = in[++i];
    } else {
      throw std::invalid_argument(a + ": expected a value");
    }
    nlohmann::ordered_json v;
    if (a.back() == '+') {
      a.pop_back();
      v = nlohmann::ordered_json::array();
      for (size_t s = 0;;) {
        const size_t c = value.find(',', s);
        v.push_back(value.substr(s, c - s));
        if (c == std::string::npos) break;
        s = c + 1;
      }
    } else {
      v = nlohmann::ordered_json::parse(value, nullptr, /*allow_exceptions=*/false);
      if (v.is_discarded()) {
        std::string n = value;
        if (rewrite_human_readable_int(n).empty() && n != value)  // 80g, 1K
          v = std::stoll(n);
        else
          v = value;
      }
    }
    std::vector<std::string> keys;
    for (size_t s = 0;;) {
      const size_t d = a.find('.', s);
      keys.push_back(a.substr(s, d - s));
      if (d == std::string::npos) break;
      s = d + 1;
    }
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const auto& m) { return m.first == keys[0]; });
    if (it == merged.end()) {
      merged.emplace_back(keys[0], nlohmann::ordered_json::object());
      it = merged.end() - 1;
    }
    nlohmann::ordered_json* node = &it->second;
    for (size_t k = 1; k + 1 < keys.size(); ++k) {
      if (!node->contains(keys[k]) || !(*node)[keys[k]].is_object())
        (*node)[keys[k]] = nlohmann::ordered_json::object();
      node = &(*node)[keys[k]];
    }
    if (keys.size() < 2 || keys.back().empty())
      throw std::invalid_argument(in[i] + ": not a --FLAG.FIELD argument");
    (*node)[keys.back()] = std::move(v);
  }
  for (const auto& [flag, obj] : merged) {
    out.push_back(flag);
    out.push_back(obj.dump());
  }
  return out;
}

// vLLM's two-letter single-dash aliases (-tp 2), which CLI11 cannot declare: rewritten in
// place to their long names before parsing.
inline void expand_short_aliases(int argc, char** argv) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"-tp", "--tensor-parallel-size"},
      {"-pp", "--pipeline-parallel-size"},
      {"-dp", "--data-parallel-size"}};
  for (int i = 1; i < argc; ++i)
    for (const auto& [from, to] : kAliases)
      if (std::string(argv[i]) == from) argv[i] = const_cast<char*>(to);
}

// What `app.parse` takes for a command's argv: vLLM's short aliases expanded and its dotted
// arguments merged, in the reverse order CLI11 reads a vector in.
inline std::vector<std::string> vllm_args(int argc, char** argv) {
  expand_short_aliases(argc, argv);
  std::vector<std::string> args =
      merge_dotted_args(std::vector<std::string>(argv + 1, argv + argc));
  std::reverse(args.begin(), args.end());
  return args;
}

struct EngineFlags {
  engine::EngineConfig cfg;
  int64_t num_gpu_blocks = 0;
  int64_t kv_cache_memory = 0;
  double gpu_memory_utilization = 0.0;
  bool prefix = true;
  std::string kv_cache_dtype = "auto";
  std::string dtype = "auto";
  std::string device = "auto";
  int tensor_parallel = 1, pipeline_parallel = 1, data_parallel = 1;
  std::string scheduling_policy = "fcfs";
  CLI::Option* kv_dtype_opt = nullptr;
  CLI::Option* gpu_util_opt = nullptr;
  CLI::Option* hf_token_opt = nullptr;
  // vLLM flags accepted without effect: (option, why it has none).
  std::vector<std::pair<CLI::Option*, std::string>> no_effect;
  // vLLM flags refused when given: (option, why).
  std::vector<std::pair<CLI::Option*, std::string>> refused;
  std::deque<std::string> ignored_values;  // storage for their values (stable addresses)
  std::string structured_outputs_config;
  std::vector<std::string> ignore_patterns;  // --ignore-patterns
  // vLLM's LoRAConfig (--enable-lora and its limits); serve's --lora-modules names the adapters.
  bool enable_lora = false;
  int32_t max_loras = 1;
  int max_lora_rank = 16;
  int32_t max_cpu_loras = 0;  // 0: max_loras
  std::string lora_dtype = "auto";
  std::vector<CLI::Option*> lora_opts;  // the limits, which mean nothing without --enable-lora
  // --runner / --convert / --task / --pooler-config (serve resolves them: pooler_config.h).
  api::PoolerFlags pooler;
  // api::resolve_pooler over these flags and --hf-overrides (`folder`: ResolvedModel::folder).
  std::optional<api::PoolerSetup> resolve_pooler(const std::string& folder,
                                                 const model::CausalLM& m,
                                                 const tok::Tokenizer* tok) const {
    api::PoolerFlags f = pooler;
    f.hf_overrides = cfg.hf_overrides;
    return api::resolve_pooler(f, folder, m, tok);
  }
  // For the commands that only generate: throws when the flags ask for a pooling model.
  void refuse_pooling(const char* command) const { api::refuse_pooling_flags(pooler, command); }

  void add(CLI::App& app) {
    app.add_option("--max-num-seqs", cfg.max_num_seqs, "requests in one batch at most");
    app.add_option("--max-model-len", cfg.max_model_len,
                   "context length (default: the model's); 32k, 32K as vLLM reads them; auto "
                   "or -1: the model's, lowered to what the KV cache holds")
        ->transform(CLI::Validator(
            [](std::string& v) -> std::string {
              std::string lower = v;
              for (char& ch : lower)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
              if (lower == "auto") v = "-1";
              if (v == "-1") return {};
              if (!v.empty() && v[0] == '-') return "a context length, auto or -1, not " + v;
              return rewrite_human_readable_int(v);
            },
            "INT[kmgtKMGT]|auto", "human-readable int or auto"));
    app.add_option("--max-num-batched-tokens", cfg.max_num_batched_tokens, "tokens per step")
        ->transform(human_readable_int());
    app.add_option("--max-num-scheduled-tokens", cfg.max_num_scheduled_tokens,
                   "tokens issued per step (default and at most --max-num-batched-tokens)")
        ->transform(human_readable_int())
        ->check(CLI::PositiveNumber);
    app.add_option("--max-num-active-seqs", cfg.max_num_active_seqs,
                   "requests running at once (default --max-num-seqs, at most it)")
        ->check(CLI::PositiveNumber);
    app.add_option("--long-prefill-token-threshold", cfg.long_prefill_token_threshold,
                   "while other requests wait or run, no prompt chunk is longer than this "
                   "(0: no cap)")
        ->check(CLI::NonNegativeNumber);
    app.add_flag(
        "--long-prefill-token-threshold-adaptive,!--no-long-prefill-token-threshold-"
        "adaptive",
        cfg.long_prefill_token_threshold_adaptive,
        "raise that cap to --max-num-batched-tokens / (running + waiting) when larger");
    app.add_option("--block-size", cfg.block_size, "KV cache block size in tokens");
    app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", prefix,
                 "reuse KV blocks of shared prompt prefixes (default on)");
    app.add_option("--kv-cache-memory,--kv-cache-memory-bytes", kv_cache_memory,
                   "KV cache size in bytes (overrides --gpu-memory-utilization); 4G = 4 GiB, "
                   "4g = 4e9")
        ->transform(human_readable_int());
    gpu_util_opt = app.add_option(
        "--gpu-memory-utilization", gpu_memory_utilization,
        "on the CPU: the KV cache's share of the memory available after loading (0, 1]; "
        "default 0.9");
    kv_dtype_opt =
        app.add_option("--kv-cache-dtype", kv_cache_dtype,
                       "KV cache element type: auto (bfloat16 for bf16 checkpoints, float16 "
                       "otherwise), bfloat16, float16 or float32")
            ->check(
                CLI::IsMember({"auto", "float32", "float16", "fp16", "half", "bfloat16", "bf16"}));
    app.add_option("--num-gpu-blocks-override", num_gpu_blocks, "exactly this many KV blocks");
    app.add_flag("--enforce-eager", cfg.enforce_eager, "no decode step graphs");
    app.add_flag("--disable-sliding-window", cfg.disable_sliding_window,
                 "full attention in every layer, the context capped at the sliding window");
    app.add_option("--hf-overrides", cfg.hf_overrides,
                   "a JSON object whose fields replace config.json's top-level ones (e.g. "
                   "'{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0, "
                   "\"original_max_position_embeddings\": 32768}}'); Hugging Face folders only");
    app.add_option("--device", device,
                   "auto (= cpu), cpu, or cuda (CUDA builds only; docs/CUDA.md)")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--seed", cfg.seed, "seed of requests that bring none");
    app.add_option("--dtype", dtype,
                   "auto / bfloat16: BF16 weight products round activations to bfloat16 (like "
                   "vLLM; AVX512-BF16 runs them natively); float32 / float16: they stay float32. "
                   "float32 / float16 / bfloat16 also set the KV cache type when "
                   "--kv-cache-dtype is not given")
        ->check(CLI::IsMember({"auto", "float32", "float", "float16", "half", "bfloat16"}));
    app.add_option("--tensor-parallel-size", tensor_parallel, "must be 1 (one process); -tp");
    app.add_option("--pipeline-parallel-size", pipeline_parallel, "must be 1; -pp");
    app.add_option("--data-parallel-size", data_parallel, "must be 1; -dp");
    app.add_option("--scheduling-policy", scheduling_policy,
                   "fcfs, or priority (requests' `priority`, lower first)")
        ->check(CLI::IsMember({"fcfs", "priority"}));
    app.add_option("--max-logprobs", cfg.max_logprobs,
                   "most logprobs / prompt_logprobs a request may ask for (-1: no limit)");
    no_effect_flag(app, "--trust-remote-code", "this engine never runs model code from the hub");
    no_effect_flag(app, "--enable-chunked-prefill,!--no-enable-chunked-prefill",
                   "chunked prefill is always on");
    no_effect_flag(app, "--disable-custom-all-reduce", "there is one process, no all-reduce");
    no_effect_flag(app, "--enable-prompt-tokens-details",
                   "usage always reports prompt_tokens_details.cached_tokens");
    no_effect_flag(app, "--async-scheduling",
                   "steps are scheduled one after another; the outputs are the same");
    no_effect_option(app, "--swap-space", "preempted requests are recomputed, never swapped");
    no_effect_option(app, "--preemption-mode", "preempted requests are recomputed", {"recompute"});
    no_effect_option(app, "--cpu-offload-gb", "weights already live in host memory");
    no_effect_option(app, "--distributed-executor-backend", "there is one process");
    no_effect_option(app, "--download-dir", "nothing is downloaded");
    no_effect_option(app, "--prefix-caching-hash-algo",
                     "a cached block is matched against its stored tokens, so the hash cannot "
                     "change a result",
                     {"sha256", "sha256_cbor", "xxhash", "xxhash_cbor"});
    no_effect_option(app, "--code-revision", "no model code from the hub is run");
    no_effect_option(app, "--max-parallel-loading-workers",
                     "weights are read and packed over the thread pool");
    no_effect_option(app, "--load-format", "the format is detected from the files",
                     {"auto", "gguf", "safetensors"});
    no_effect_option(app, "-q,--quantization", "the weights' types are read from the model files",
                     {"gguf"});
    no_effect_option(app, "--tokenizer-mode",
                     "the tokenizer is always tokenizer.json's (or GGUF's)",
                     {"auto", "hf", "slow"});
    app.add_option("--runner", pooler.runner,
                   "auto (pooling for a Sentence Transformers folder or a classifier), generate, "
                   "or pooling: /v1/embeddings (or /classify), /score and /rerank")
        ->check(CLI::IsMember({"auto", "generate", "pooling"}));
    app.add_option("--convert", pooler.convert,
                   "auto, none, embed or classify: serve a *ForCausalLM model's pooled hidden "
                   "states as embeddings, or through a classifier head (--runner pooling)")
        ->check(CLI::IsMember({"auto", "none", "embed", "classify"}));
    app.add_option("--task", pooler.task,
                   "older vLLM's spelling: embed = --runner pooling, classify / score = "
                   "--convert classify")
        ->check(CLI::IsMember({"auto", "generate", "embed", "embedding", "classify", "score"}));
    app.add_option("--pooler-config", pooler.pooler_config,
                   "JSON object: pooling_type / seq_pooling_type (CLS, LAST, MEAN), "
                   "use_activation (normalize), dimensions (the default Matryoshka size)");
    no_effect_option(app, "--compilation-config", "decode step graphs replace torch.compile");
    no_effect_option(app, "--max-seq-len-to-capture", "decode graphs are captured at any length");
    no_effect_option(app, "--cuda-graph-sizes", "decode graphs are captured at any batch width", {},
                     true);
    no_effect_option(app, "--max-cudagraph-capture-size",
                     "decode graphs are captured at any batch width");
    no_effect_option(app, "--model-impl", "the model is always this engine's own implementation",
                     {"auto", "vllm"});
    no_effect_option(app, "--config-format", "config.json (or the GGUF header) is read as it is",
                     {"auto", "hf"});
    no_effect_option(app, "--logprobs-mode",
                     "logprobs are always the log-softmax of the raw logits (vLLM's default)",
                     {"raw_logprobs"});
    no_effect_option(app, "--guided-decoding-backend",
                     "structured outputs always use this engine's own grammar engine",
                     {"auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer"});
    no_effect_flag(app, "--enable-expert-parallel",
                   "there is one process; MoE experts all run in it");
    no_effect_flag(app, "--calculate-kv-scales", "the KV cache is 16- or 32-bit, never fp8");
    no_effect_option(app, "--cudagraph-capture-sizes",
                     "decode graphs are captured at any batch width", {}, true);
    no_effect_option(app, "-O,--optimization-level",
                     "decode step graphs are always on and cost nothing at start-up",
                     {"0", "1", "2", "3"});
    no_effect_option(app, "--performance-mode", "one set of kernels serves every batch size",
                     {"balanced", "interactivity", "throughput"});
    no_effect_option(app, "--safetensors-load-strategy",
                     "safetensors files are memory-mapped and read as the weights are packed",
                     {"lazy", "eager", "prefetch"});
    no_effect_flag(app, "--use-tqdm-on-load,!--no-use-tqdm-on-load", "no progress bar is drawn");
    no_effect_flag(app, "--disable-cascade-attn,!--no-disable-cascade-attn",
                   "there is no cascade attention (vLLM 0.33 removed it too)");
    no_effect_flag(app, "--disable-hybrid-kv-cache-manager,!--no-disable-hybrid-kv-cache-manager",
                   "every layer's KV cache already has the same size (there is no hybrid KV "
                   "cache manager)");
    no_effect_flag(app, "--language-model-only", "models are served text only");
    no_effect_flag(app, "--numa-bind,!--no-numa-bind", "there are no GPU worker processes");
    hf_token_opt = app.add_option("--hf-token", ignored_values.emplace_back(),
                                  "accepted, no effect: nothing is downloaded")
                       ->expected(0, 1);
    no_effect.emplace_back(hf_token_opt, "nothing is downloaded");
    no_effect_option(app, "--allowed-local-media-path", "there are no multimodal inputs");
    no_effect_option(app, "--allowed-media-domains", "there are no multimodal inputs", {}, true);
    app.add_option("--ignore-patterns", ignore_patterns,
                   "files of the model folder not to load (vLLM's fnmatch patterns); the "
                   "weights read here are model.safetensors or the index's shards (or the GGUF "
                   "file), so a pattern matching one of those is refused")
        ->expected(1, -1)
        ->allow_extra_args();
    no_effect_option(app, "--media-io-kwargs", "there are no multimodal inputs");
    no_effect_option(app, "--show-hidden-metrics-for-version",
                     "no metric is hidden here: /metrics shows every one it has");
    refused_option(app, "--kv-events-config", "KV cache events are not published");
    refused_option(app, "--worker-extension-cls", "there are no Python worker processes");
    refused_option(app, "--model-loader-extra-config",
                   "the loader has no extra configuration (the files' formats are detected)");
    app.add_flag("--enable-lora,!--no-enable-lora", enable_lora,
                 "serve LoRA adapters (serve's --lora-modules; requests name one as `model`)");
    lora_opts.push_back(
        app.add_option("--max-loras", max_loras, "distinct LoRA adapters in one batch (default 1)")
            ->check(CLI::PositiveNumber));
    lora_opts.push_back(app.add_option("--max-lora-rank", max_lora_rank,
                                       "the largest adapter rank accepted (default 16)")
                            ->check(CLI::IsMember({1, 8, 16, 32, 64, 128, 256, 320, 512})));
    lora_opts.push_back(app.add_option("--max-cpu-loras", max_cpu_loras,
                                       "adapters kept in memory (at least --max-loras; every "
                                       "--lora-modules adapter stays loaded here)")
                            ->check(CLI::PositiveNumber));
    lora_opts.push_back(app.add_option("--lora-dtype", lora_dtype,
                                       "auto: adapter values as stored; float16 / bfloat16: "
                                       "rounded to that type at load (products run in fp32)")
                            ->check(CLI::IsMember({"auto", "float16", "bfloat16"})));
    no_effect_flag(app, "--fully-sharded-loras",
                   "there is no tensor parallelism to shard adapters over");
    refused_option(app, "--speculative-config", "speculative decoding is not implemented");
    for (const char* f : {"--spec-method", "--spec-model", "--spec-tokens"})
      refused_option(app, f, "speculative decoding is not implemented");
    refused_option(app, "--logits-processors",
                   "Python logits processor classes cannot be loaded (built-in: min_p, "
                   "logit_bias, min_tokens, bad_words, allowed_token_ids)");
    refused_flag(app, "--kv-cache-metrics", "KV cache residency metrics are not implemented");
    refused_flag(app, "--enable-mfu-metrics", "MFU metrics are not implemented");
    refused_flag(app, "--enable-return-routed-experts",
                 "returning routed experts is not implemented");
    refused_option(app, "--kv-transfer-config", "disaggregated prefill is not implemented");
    refused_flag(app, "--enable-sleep-mode", "there is no sleep mode (/sleep, /wake_up)");
    refused_flag(app, "--skip-tokenizer-init",
                 "requests are text or token ids detokenized by the model's tokenizer");
    refused_flag(app, "--enable-prompt-embeds", "prompts are token ids or text only");
    refused_option(app, "--hf-config-path", "config.json is read from the model folder");
    refused_option(app, "--mm-processor-kwargs", "there are no multimodal inputs");
    refused_option(app, "--override-pooler-config",
                   "vLLM renamed it --pooler-config, which is supported");
    refused_option(app, "--otlp-traces-endpoint", "OpenTelemetry tracing is not implemented");
    refused_option(app, "--collect-detailed-traces", "OpenTelemetry tracing is not implemented");
    refused_option(app, "--reasoning-parser-plugin",
                   "Python plugins cannot be loaded (use a built-in --reasoning-parser; "
                   "--help lists them)");
    app.add_option("--structured-outputs-config", structured_outputs_config,
                   "JSON object: backend (no effect: one grammar engine), enable_in_reasoning "
                   "(the grammar constrains the reasoning too), disable_any_whitespace (JSON "
                   "outputs without whitespace)");
  }

  // --structured-outputs-config: vLLM's {"backend": ...} picks a grammar library, which
  // changes nothing here; a setting that would change the output is refused.
  void check_structured_outputs_config() const {
    if (structured_outputs_config.empty()) return;
    const std::string flag = "--structured-outputs-config";
    const nlohmann::json j = nlohmann::json::parse(structured_outputs_config, nullptr, false);
    if (!j.is_object())
      throw std::invalid_argument(flag + ": expected a JSON object, got " +
                                  structured_outputs_config);
    for (const auto& [k, v] : j.items()) {
      if (k == "backend") {
        static const std::vector<std::string> kBackends = {"auto", "xgrammar", "guidance",
                                                           "outlines", "lm-format-enforcer"};
        if (!v.is_string() ||
            std::find(kBackends.begin(), kBackends.end(), v.get<std::string>()) == kBackends.end())
          throw std::invalid_argument(flag + ": backend " + v.dump() +
                                      " is not one of auto, xgrammar, guidance, outlines, "
                                      "lm-format-enforcer");
      } else if (k == "enable_in_reasoning" || k == "disable_any_whitespace") {
        if (!v.is_boolean())
          throw std::invalid_argument(flag + ": " + k + " must be true or false, got " + v.dump());
      } else if (!(v.is_null() || v == false || v == "")) {
        throw std::invalid_argument(flag + ": " + k + " " + v.dump() +
                                    ": not supported by vllm.cpp (only backend, "
                                    "enable_in_reasoning and disable_any_whitespace are "
                                    "accepted; docs/STRUCTURED_OUTPUTS.md)");
      }
    }
    if (!j.value("enable_in_reasoning", false) && !j.value("disable_any_whitespace", false))
      warn(flag +
           " is accepted but has no effect: structured outputs always use this engine's "
           "own grammar engine");
  }
  // vLLM's structured_outputs_config.enable_in_reasoning: the grammar constrains the reasoning
  // too (from the first token) instead of waiting for its end.
  bool structured_outputs_in_reasoning() const {
    return structured_outputs_flag("enable_in_reasoning");
  }
  // ... .disable_any_whitespace: JSON schema / json_object grammars allow no whitespace.
  bool structured_outputs_compact_json() const {
    return structured_outputs_flag("disable_any_whitespace");
  }
  bool structured_outputs_flag(const char* key) const {
    if (structured_outputs_config.empty()) return false;
    const nlohmann::json j = nlohmann::json::parse(structured_outputs_config, nullptr, false);
    return j.is_object() && j.value(key, false);
  }

  void no_effect_flag(CLI::App& app, const char* name, const char* why) {
    no_effect.emplace_back(
        app.add_flag(std::string(name))->description("accepted, no effect: " + std::string(why)),
        why);
  }
  // `values`: the only values that change nothing here; any other (one this engine cannot
  // honour, like --tokenizer-mode mistral) is refused by CLI11 naming the flag and the set.
  // `many`: vLLM takes a list (--cuda-graph-sizes 1 2 4).
  void no_effect_option(CLI::App& app, const char* name, const char* why,
                        std::vector<std::string> values = {}, bool many = false) {
    ignored_values.emplace_back();
    CLI::Option* o =
        app.add_option(name, ignored_values.back(), "accepted, no effect: " + std::string(why));
    if (many)
      o->expected(1, -1)->allow_extra_args()->multi_option_policy(CLI::MultiOptionPolicy::Join);
    if (!values.empty()) o->check(CLI::IsMember(std::move(values)));
    no_effect.emplace_back(o, why);
  }
  // vLLM flags asking for what this engine does not do: parsed, so that resolve() can name
  // them and say why, instead of CLI11's "not expected".
  void refused_flag(CLI::App& app, const char* name, const char* why) {
    refused.emplace_back(
        app.add_flag(std::string(name))->description("refused: " + std::string(why)), why);
  }
  void refused_option(CLI::App& app, const char* name, const char* why) {
    refused.emplace_back(app.add_option(std::string(name))
                             ->description("refused: " + std::string(why))
                             ->expected(1, -1)
                             ->allow_extra_args(),
                         why);
  }

  // --ignore-patterns: vLLM skips the files they match; the files this loader reads are the
  // folder's model.safetensors / index shards or a GGUF file, so a pattern that would skip those
  // is refused rather than obeyed by loading nothing (vLLM's default original/**/* and the like
  // match nothing read here).
  void check_ignore_patterns() const {
    for (const auto& pat : ignore_patterns)
      for (const char* f : {"model.safetensors", "model-00001-of-00002.safetensors",
                            "model.safetensors.index.json", "model.gguf"})
        if (fnmatch(pat.c_str(), f, 0) == 0)
          throw std::invalid_argument("--ignore-patterns " + pat + ": it matches the weights (" +
                                      f + ") this engine reads; nothing else would be loaded");
  }

  model::LoraLoadOptions lora_load_options() const {
    model::LoraLoadOptions o;
    o.max_lora_rank = max_lora_rank;
    o.dtype = lora_dtype;
    return o;
  }

  engine::EngineConfig resolve() const {
    check_ignore_patterns();
    for (const auto& [opt, why] : refused)
      if (opt->count() > 0)
        throw std::invalid_argument(opt->get_name() + ": not supported by vllm.cpp (" + why + ")");
    check_structured_outputs_config();
    engine::EngineConfig c = cfg;
    if (enable_lora) {
      if (max_cpu_loras > 0 && max_cpu_loras < max_loras)
        throw std::invalid_argument("max_cpu_loras (" + std::to_string(max_cpu_loras) +
                                    ") must be >= max_loras (" + std::to_string(max_loras) + ")");
      c.max_loras = max_loras;
    } else {
      for (const CLI::Option* o : lora_opts)
        if (o->count() > 0)
          warn(o->get_name() + " has no effect without --enable-lora (as in vLLM)");
    }
    c.enable_prefix_caching = prefix;
    if (num_gpu_blocks > 0) c.num_gpu_blocks = num_gpu_blocks;
    if (kv_cache_memory > 0) c.kv_cache_memory_bytes = kv_cache_memory;
    if (gpu_util_opt && gpu_util_opt->count() > 0) {
      if (!(gpu_memory_utilization > 0.0 && gpu_memory_utilization <= 1.0))
        throw std::invalid_argument("--gpu-memory-utilization must be in (0, 1], got " +
                                    std::to_string(gpu_memory_utilization));
      if (kv_cache_memory <= 0) c.gpu_memory_utilization = gpu_memory_utilization;
    }
    // vLLM's default --gpu-memory-utilization 0.9 for every command (serve, bench, generate,
    // run-batch), when the KV cache is not sized otherwise. Pages are committed as blocks are
    // first used, so a large cache costs only what the requests fill.
    if (!c.num_gpu_blocks && kv_cache_memory <= 0 && !c.gpu_memory_utilization)
      c.gpu_memory_utilization = 0.9;
    if (kv_cache_dtype == "float32")
      c.kv_cache_dtype = vt::DType::F32;
    else if (kv_cache_dtype == "bfloat16" || kv_cache_dtype == "bf16")
      c.kv_cache_dtype = vt::DType::BF16;
    else if (kv_cache_dtype != "auto")
      c.kv_cache_dtype = vt::DType::F16;
    // --dtype: the activations of BF16 weight products (EngineConfig::bf16_activations), and
    // the KV cache's type where --kv-cache-dtype does not say (vLLM's cache follows the model
    // dtype). Weights keep their stored type.
    if (dtype == "bfloat16")
      c.bf16_activations = true;
    else if (dtype != "auto")
      c.bf16_activations = false;
    if (dtype != "auto" && (!kv_dtype_opt || kv_dtype_opt->count() == 0))
      c.kv_cache_dtype = dtype == "float32" || dtype == "float" ? vt::DType::F32
                         : dtype == "bfloat16"                  ? vt::DType::BF16
                                                                : vt::DType::F16;
    if (dtype == "float16" || dtype == "half")
      warn("--dtype " + dtype +
           ": the CPU has no float16 products; activations stay float32 (BF16 weight products "
           "included), weights keep their stored type, and the KV cache is stored in float16");
    for (const auto& [flag, n] :
         {std::pair<const char*, int>{"--tensor-parallel-size", tensor_parallel},
          {"--pipeline-parallel-size", pipeline_parallel},
          {"--data-parallel-size", data_parallel}})
      if (n != 1)
        throw std::invalid_argument(std::string(flag) + " " + std::to_string(n) +
                                    ": not yet; this engine runs one model in one process "
                                    "(use 1)");
    // auto is the CPU: the CUDA backend is opt-in until it has passed its GPU gates.
    c.device = device == "cuda" ? "cuda" : "cpu";
    c.scheduling_policy = scheduling_policy == "priority" ? engine::SchedulingPolicy::kPriority
                                                          : engine::SchedulingPolicy::kFcfs;
    for (const auto& [opt, why] : no_effect)
      if (opt->count() > 0) warn(opt->get_name() + " is accepted but has no effect: " + why);
    return c;
  }
};

}  // namespace vllm::cli
