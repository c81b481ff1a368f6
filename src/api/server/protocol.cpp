// Strict field-by-field parsing of /v1/completions and /v1/chat/completions bodies. Every
// field of vLLM's protocol is read here: honoured fields land in SamplingParams or the
// request's serving options; fields this engine does not implement are refused (a 400 naming
// them) unless they hold their default; structured-output and tool fields are read by
// structured_outputs.cpp.
#include "api/server/protocol.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "api/server/protocol_fields.h"
#include "api/server/structured_outputs.h"

namespace vllm::api {

using detail::Fields;
using detail::unsupported;
using detail::wrong_type;

namespace {

constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();

float as_float(double d) { return static_cast<float>(d); }

// vLLM fields this engine does not implement: accepted only while they hold their default.
void refuse_unimplemented(Fields& f, bool chat) {
  if (auto v = f.boolean("use_beam_search"); v && *v)
    unsupported("use_beam_search", "beam search is not implemented");
  if (auto v = f.number("length_penalty"); v && *v != 1.0)
    unsupported("length_penalty", "it only applies to beam search, which is not implemented");
  if (auto v = f.boolean("watermarking"); v && *v)
    unsupported("watermarking", "output watermarking is not implemented");
  auto refuse_set = [&](const char* k, const char* why) {
    const ojson* v = f.get(k);
    if (v && !((v->is_object() || v->is_array()) && v->empty())) unsupported(k, why);
  };
  refuse_set("logits_processors", "custom logits processors cannot be loaded");
  refuse_set("logprob_token_ids", "logprobs of chosen token ids are not implemented");
  refuse_set("kv_transfer_params", "there is no KV transfer (disaggregated serving)");
  refuse_set("ec_transfer_params", "there is no encoder-cache transfer");
  refuse_set("vllm_xargs", "there are no extensions to pass arguments to");
  refuse_set("repetition_detection", "repetition detection is not implemented");
  if (auto v = f.integer("stream_interval"); v && *v != 1)
    unsupported("stream_interval", "every token is streamed as it comes");
  if (auto v = f.integer("routed_experts_prompt_start"); v && *v != 0)
    unsupported("routed_experts_prompt_start", "routed experts are not returned");
  if (chat) {
    refuse_set("mm_processor_kwargs", "there is no multimodal input");
    refuse_set("media_io_kwargs", "there is no multimodal input");
  } else {
    refuse_set("prompt_embeds", "prompts are token ids or text only");
    if (auto v = f.string("suffix"); v && !v->empty())
      unsupported("suffix", "fill-in-the-middle is not implemented");
  }
  // Accepted without effect, as in vLLM: `user` and `session_id` only identify the caller;
  // spaces_between_special_tokens does nothing for fast (tokenizer.json) tokenizers;
  // return_token_offsets / return_mm_kwargs only apply to the /render endpoints.
  for (const char* k : {"user", "session_id", "spaces_between_special_tokens",
                        "return_token_offsets", "return_mm_kwargs", "parallel_tool_calls"})
    f.mark(k);
}

// The n-th logprobs count against --max-logprobs (-1: the whole vocabulary).
void check_logprobs(const char* field, int64_t v, const ParseOptions& opts) {
  if (v < -1) throw bad_request(std::string(field) + " must be a non-negative value or -1", field);
  if (opts.max_logprobs >= 0 && (v == -1 || v > opts.max_logprobs))
    throw bad_request(std::string(field) + ": requested " +
                          (v == -1 ? std::string("the whole vocabulary") : std::to_string(v)) +
                          ", which is greater than max allowed: " +
                          std::to_string(opts.max_logprobs) + " (--max-logprobs)",
                      field);
}

void parse_logit_bias(Fields& f, engine::SamplingParams& s) {
  const ojson* v = f.get("logit_bias");
  if (!v) return;
  if (!v->is_object()) wrong_type("logit_bias", "an object of token id -> bias", *v);
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string& key = it.key();
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty() || id < 0 || id > kI32)
      throw bad_request("logit_bias: key '" + key + "' is not a token id (an integer string)",
                        "logit_bias");
    if (!it->is_number()) wrong_type("logit_bias", "numbers as values", *it);
    const double b = it->get<double>();
    if (!std::isfinite(b) || b < -100.0 || b > 100.0)
      throw bad_request(
          "logit_bias: the bias of token " + key + " must be in [-100, 100], got " + it->dump(),
          "logit_bias");
    s.logit_bias.emplace_back(static_cast<int32_t>(id), as_float(b));
  }
}

void parse_common(Fields& f, GenerationRequest& r, bool chat, const ParseOptions& opts) {
  r.model = f.string("model");
  auto& s = r.sampling;
  if (auto v = f.integer("n", 1, kMaxN)) r.n = static_cast<int32_t>(*v);
  if (auto v = f.boolean("stream")) r.stream = *v;
  if (const ojson* so = f.get("stream_options")) {
    if (!r.stream)
      throw bad_request("Stream options can only be defined when `stream=True`.", "stream_options");
    Fields o(*so, "stream_options");
    if (auto v = o.boolean("include_usage")) r.include_usage = *v;
    if (auto v = o.boolean("continuous_usage_stats")) r.continuous_usage_stats = *v;
  }
  if (r.stream && opts.force_include_usage) r.include_usage = true;
  if (auto v = f.integer("min_tokens", 0, kI32)) s.min_tokens = static_cast<int32_t>(*v);
  // Request value, else the model's generation_config.json default, else OpenAI's.
  const GenerationDefaults& d = opts.defaults;
  if (auto v = f.number("temperature"))
    s.temperature = as_float(*v);
  else if (d.temperature)
    s.temperature = *d.temperature;
  if (auto v = f.number("top_p"))
    s.top_p = as_float(*v);
  else if (d.top_p)
    s.top_p = *d.top_p;
  if (auto v = f.integer("top_k", -1, kI32))
    s.top_k = static_cast<int32_t>(*v);
  else if (d.top_k)
    s.top_k = *d.top_k;
  if (auto v = f.number("min_p"))
    s.min_p = as_float(*v);
  else if (d.min_p)
    s.min_p = *d.min_p;
  if (auto v = f.number("repetition_penalty"))
    s.repetition_penalty = as_float(*v);
  else if (d.repetition_penalty)
    s.repetition_penalty = *d.repetition_penalty;
  if (auto v = f.number("presence_penalty")) s.presence_penalty = as_float(*v);
  if (auto v = f.number("frequency_penalty")) s.frequency_penalty = as_float(*v);
  if (auto v = f.integer("seed")) s.seed = static_cast<uint64_t>(*v);
  if (auto v = f.integer("thinking_token_budget", -1, kI32); v && *v >= 0)
    s.thinking_budget = static_cast<int32_t>(*v);  // -1 (or null): no budget
  if (auto v = f.string("cache_salt")) {
    if (v->empty())
      throw bad_request("Parameter 'cache_salt' must be a non-empty string if provided.",
                        "cache_salt");
    s.cache_salt = *v;
  }
  if (const ojson* v = f.get("stop")) {
    if (v->is_string()) {
      s.stop.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      for (const auto& e : *v) {
        if (!e.is_string()) wrong_type("stop", "a string or a list of strings", *v);
        s.stop.push_back(e.get<std::string>());
      }
    } else {
      wrong_type("stop", "a string or a list of strings", *v);
    }
  }
  if (auto v = f.token_ids("stop_token_ids")) s.stop_token_ids = *v;
  if (auto v = f.boolean("ignore_eos")) s.ignore_eos = *v;
  if (auto v = f.boolean("skip_special_tokens")) s.skip_special_tokens = *v;
  if (auto v = f.boolean("include_stop_str_in_output")) s.include_stop_str_in_output = *v;

  // Logits processors.
  parse_logit_bias(f, s);
  if (auto v = f.token_ids("allowed_token_ids")) {
    if (v->empty()) throw bad_request("allowed_token_ids must not be empty", "allowed_token_ids");
    s.allowed_token_ids = *v;
  }
  if (auto v = f.strings("bad_words")) {
    for (const std::string& w : *v)
      if (w.find_first_not_of(" \t\n\r") == std::string::npos)
        throw bad_request("bad_words must not contain empty words", "bad_words");
    r.bad_words = *v;
  }

  if (auto v = f.integer("prompt_logprobs")) {
    check_logprobs("prompt_logprobs", *v, opts);
    if (r.stream)
      throw bad_request("`prompt_logprobs` are not available when `stream=True`.",
                        "prompt_logprobs");
    s.prompt_logprobs = static_cast<int32_t>(*v);
  }

  // Prompt handling.
  r.add_special_tokens = f.boolean("add_special_tokens");
  detail::parse_truncation(f, r.truncate_prompt_tokens, r.truncate_left);
  if (auto v = f.boolean("echo")) r.echo = *v;
  if (auto v = f.boolean("return_token_ids")) r.return_token_ids = *v;
  r.return_tokens_as_token_ids =
      f.boolean("return_tokens_as_token_ids").value_or(opts.return_tokens_as_token_ids);
  r.request_id = f.string("request_id");
  if (auto v = f.integer("priority")) r.priority = *v;
  parse_structured_outputs(f, r);
  refuse_unimplemented(f, chat);
}

void validate_sampling(GenerationRequest& r, const ParseOptions& opts) {
  // generation_config.json's max_new_tokens caps what a request may ask for (vLLM takes the
  // smallest of the request's max_tokens, this default and what fits the context).
  if (const auto& cap = opts.defaults.max_new_tokens; cap && *cap > 0)
    r.sampling.max_tokens = std::min(r.sampling.max_tokens.value_or(*cap), *cap);
  r.sampling.n = r.n;
  try {
    r.sampling.validate();
  } catch (const std::invalid_argument& e) {
    // The messages start with the field's name ("top_p must be in (0, 1]").
    std::string msg = e.what();
    throw bad_request(msg, msg.substr(0, msg.find(' ')));
  }
  r.sampling.n = 1;  // the server fans n out into n engine requests
}

}  // namespace

CompletionRequest parse_completion_request(const ojson& body, const ParseOptions& opts) {
  Fields f(body, "completion request");
  CompletionRequest r;
  parse_common(f, r, false, opts);
  // max_tokens: 0 is allowed with echo (the prompt only), as in vLLM.
  if (auto v = f.integer("max_tokens", 0, kI32)) {
    if (*v == 0 && !r.echo)
      throw bad_request("max_tokens must be at least 1, got 0 (0 needs echo)", "max_tokens");
    r.echo_only = *v == 0;
    r.sampling.max_tokens = r.echo_only ? 1 : static_cast<int32_t>(*v);
  } else {
    r.sampling.max_tokens = 16;
  }
  const ojson* p = f.get("prompt");
  if (!p) throw bad_request("prompt is required", "prompt");
  if (p->is_string()) {
    r.prompt_texts.push_back(p->get<std::string>());
  } else if (p->is_array()) {
    if (p->empty()) throw bad_request("prompt must not be empty", "prompt");
    if ((*p)[0].is_string()) {
      for (const auto& e : *p) {
        if (!e.is_string()) wrong_type("prompt", "a string, a list of strings or token ids", e);
        r.prompt_texts.push_back(e.get<std::string>());
      }
    } else if ((*p)[0].is_array()) {
      for (const auto& e : *p) {
        if (!e.is_array()) wrong_type("prompt", "a list of token-id lists", e);
        std::vector<int32_t> ids;
        for (const auto& t : e) ids.push_back(detail::token_id(t, "prompt"));
        r.prompt_ids.push_back(std::move(ids));
      }
    } else {
      std::vector<int32_t> ids;
      for (const auto& t : *p) ids.push_back(detail::token_id(t, "prompt"));
      r.prompt_ids.push_back(std::move(ids));
    }
  } else {
    wrong_type("prompt", "a string, a list of strings or token ids", *p);
  }
  if (auto v = f.integer("logprobs")) {
    check_logprobs("logprobs", *v, opts);
    r.sampling.logprobs = static_cast<int32_t>(*v);
  }
  // echo + logprobs: the prompt's own logprobs come first (what lm-evaluation-harness reads).
  if (r.echo && !r.sampling.prompt_logprobs && r.sampling.logprobs)
    r.sampling.prompt_logprobs = r.sampling.logprobs;
  if (auto v = f.integer("best_of"); v && *v != r.n)
    unsupported("best_of", "best_of must equal n (it needs beam search or ranking)");
  validate_sampling(r, opts);
  r.ignored_fields = f.unknown();
  return r;
}

ChatRequest parse_chat_request(const ojson& body, const ParseOptions& opts) {
  Fields f(body, "chat completion request");
  ChatRequest r;
  parse_common(f, r, true, opts);
  std::optional<int64_t> mt = f.integer("max_completion_tokens", 1, kI32);
  if (auto v = f.integer("max_tokens", 1, kI32); v && !mt) mt = v;
  // Chat default: whatever fits in max_model_len.
  r.sampling.max_tokens =
      mt ? std::optional<int32_t>(static_cast<int32_t>(*mt)) : std::optional<int32_t>();
  const ojson* m = f.get("messages");
  if (!m) throw bad_request("messages is required", "messages");
  r.messages = detail::parse_messages(*m, opts.content_parts);
  parse_tool_fields(f, r);
  if (r.constraint &&
      (r.tool_choice == ToolChoice::kRequired || r.tool_choice == ToolChoice::kNamed))
    throw bad_request(
        "You can only either use constraints for structured outputs or tools, not both (" +
            r.constraint->field + " with a forced tool_choice).",
        r.constraint->field);
  r.chat_template_kwargs = detail::parse_kwargs(f);
  r.chat_template = f.string("chat_template");
  if (const ojson* d = f.get("documents")) {
    if (!d->is_array()) wrong_type("documents", "a list of objects", *d);
    if (!r.chat_template_kwargs.contains("documents")) r.chat_template_kwargs["documents"] = *d;
  }
  if (auto e = f.string("reasoning_effort")) {
    static const std::vector<std::string> kEfforts = {"none", "minimal", "low", "medium",
                                                      "high", "xhigh",   "max"};
    if (std::find(kEfforts.begin(), kEfforts.end(), *e) == kEfforts.end())
      throw bad_request("reasoning_effort '" + *e +
                            "' is not one of none, minimal, low, "
                            "medium, high, xhigh, max",
                        "reasoning_effort");
    // As vLLM: the template sees it (through --reasoning-effort-map), and models that gate
    // thinking on enable_thinking get it.
    const auto mapped = opts.reasoning_effort_map.find(*e);
    const std::string effort = mapped == opts.reasoning_effort_map.end() ? *e : mapped->second;
    r.chat_template_kwargs["reasoning_effort"] = effort;
    if (!r.chat_template_kwargs.contains("enable_thinking"))
      r.chat_template_kwargs["enable_thinking"] = effort != "none";
  }
  detail::merge_default_kwargs(r.chat_template_kwargs, opts.default_chat_template_kwargs);
  if (auto v = f.boolean("include_reasoning")) r.include_reasoning = *v;
  const std::optional<bool> agp = f.boolean("add_generation_prompt");
  if (auto v = f.boolean("continue_final_message")) r.continue_final_message = *v;
  if (r.continue_final_message && agp.value_or(false))
    throw bad_request(
        "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
        "continue_final_message");
  r.add_generation_prompt = r.continue_final_message ? false : agp.value_or(true);
  if (auto v = f.boolean("logprobs")) r.logprobs = *v;
  if (auto v = f.integer("top_logprobs")) {
    check_logprobs("top_logprobs", *v, opts);
    r.top_logprobs = static_cast<int32_t>(*v);
    if (!r.logprobs && *v > 0)
      throw bad_request("top_logprobs requires logprobs to be true", "top_logprobs");
  }
  if (r.logprobs) r.sampling.logprobs = r.top_logprobs;
  // As vLLM: chat echo also returns the prompt's logprobs (top_logprobs of them).
  if (r.echo && !r.sampling.prompt_logprobs && !r.stream)
    r.sampling.prompt_logprobs = r.top_logprobs;
  if (auto v = f.boolean("return_prompt_text")) r.return_prompt_text = *v;
  validate_sampling(r, opts);
  r.ignored_fields = f.unknown();
  return r;
}

}  // namespace vllm::api
