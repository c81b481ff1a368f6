// Prompt preparation for the generation endpoints.
#include "api/server/request_inputs.h"

#include <memory>

#include "api/llm.h"
#include "api/server/reasoning_parser.h"
#include "api/server/strict_tools.h"
#include "api/server/structured_outputs.h"
#include "tokenizer/chat_template/chat_template.h"

namespace vllm::api {

bool truncate_prompt(std::vector<int32_t>& ids, const GenerationRequest& r, int32_t max_model_len) {
  if (!r.truncate_prompt_tokens) return false;
  const int64_t keep = *r.truncate_prompt_tokens < 0 ? max_model_len : *r.truncate_prompt_tokens;
  if (keep > max_model_len)
    throw bad_request("truncate_prompt_tokens value (" + std::to_string(keep) +
                          ") is greater than max_model_len (" + std::to_string(max_model_len) +
                          "). Please request a smaller truncation size.",
                      "truncate_prompt_tokens");
  if (static_cast<int64_t>(ids.size()) <= keep) return false;
  if (r.truncate_left)
    ids.erase(ids.begin(), ids.end() - keep);
  else
    ids.resize(static_cast<size_t>(keep));
  return true;
}

std::vector<int32_t> encode_truncatable(const LLM& llm, const std::string& text, bool special,
                                        const GenerationRequest& r, int32_t max_model_len,
                                        const char* field) {
  if (r.truncate_prompt_tokens) return llm.tokenizer().encode(text, special);
  return encode_prompt(llm, text, special, max_model_len, field);
}

std::string render_chat(const LLM& llm, const ojson& messages, const ojson& tools,
                        bool add_generation_prompt, const ojson& kwargs,
                        const std::optional<std::string>& chat_template, bool trusted,
                        bool continue_final_message) {
  std::unique_ptr<tok::ChatTemplate> own;
  if (chat_template) {
    if (!trusted)
      throw bad_request(
          "Chat template is passed with request, but --trust-request-chat-template is not set. "
          "Refused request with untrusted chat template.",
          "chat_template");
    own = std::make_unique<tok::ChatTemplate>(*chat_template);
  }
  try {
    return llm.apply_chat_template(messages, tools, add_generation_prompt, kwargs, own.get(),
                                   continue_final_message);
  } catch (const std::invalid_argument& e) {
    throw bad_request(e.what(), "continue_final_message");
  }
}

namespace {

void tokenize_bad_words(const LLM& llm, GenerationRequest& r) {
  if (!r.bad_words.empty()) r.sampling.bad_words_token_ids = llm.bad_words_token_ids(r.bad_words);
}

// thinking_token_budget: the reasoning's start and end tokens, which the model must have.
void set_think_tokens(const LLM& llm, GenerationRequest& r) {
  if (!r.sampling.thinking_budget) return;
  const ThinkTags tags = think_tags(llm.tokenizer());
  if (!tags.start || !tags.end)
    throw bad_request(
        "thinking_token_budget needs a model whose vocabulary has <think> and </think> tokens",
        "thinking_token_budget");
  r.sampling.think_start_token = *tags.start;
  r.sampling.think_end_token = *tags.end;
}

// vLLM's is_reasoning_end over the prompt decides whether the model starts inside its
// reasoning (then the grammar waits for the end: </think>, or Olmo 3's three tokens of it) or
// after it (enable_thinking false puts an empty <think></think> in the prompt). No end in the
// vocabulary: the grammar applies from the first token.
std::vector<std::vector<int32_t>> grammar_start_sequences(const ThinkTags& tags,
                                                          const std::vector<int32_t>& prompt,
                                                          ReasoningParserKind kind) {
  if (prompt_ends_reasoning(prompt, tags, kind)) return {};
  std::vector<std::vector<int32_t>> seqs;
  if (tags.end) seqs.push_back({*tags.end});
  for (int32_t first : tags.end_first) {
    seqs.push_back({first});
    seqs.back().insert(seqs.back().end(), tags.end_rest.begin(), tags.end_rest.end());
  }
  return seqs;
}

}  // namespace

std::vector<int32_t> encode_prompt(const LLM& llm, const std::string& text, bool add_special,
                                   int32_t max_model_len, const char* field) {
  std::vector<int32_t> ids;
  if (!llm.tokenizer().encode_bounded(text, add_special, static_cast<size_t>(max_model_len), ids))
    throw bad_request("The prompt is too long: more than " + std::to_string(max_model_len) +
                          " tokens, the maximum model length is " + std::to_string(max_model_len),
                      field);
  return ids;
}

PreparedInputs prepare_chat(const LLM& llm, ChatRequest& r, const InputOptions& opts) {
  // --exclude-tools-when-tool-choice-none: the template does not see tools the model may not
  // call.
  const bool hide_tools =
      opts.exclude_tools_when_tool_choice_none && r.tool_choice == ToolChoice::kNone;
  const std::string prompt =
      render_chat(llm, r.messages, hide_tools ? ojson() : r.tools, r.add_generation_prompt,
                  r.chat_template_kwargs, r.chat_template, opts.trust_request_chat_template,
                  r.continue_final_message);
  PreparedInputs in;
  PromptInput p;
  // The template already holds the special tokens (vLLM's default add_special_tokens=False).
  p.ids = encode_truncatable(llm, prompt, r.add_special_tokens.value_or(false), r,
                             opts.max_model_len, "messages");
  truncate_prompt(p.ids, r, opts.max_model_len);
  in.prompts.push_back(std::move(p));
  GenerationOptions& o = in.options;
  o.role = r.add_generation_prompt ? opts.response_role
                                   : r.messages.back().value("role", opts.response_role);
  o.chat_logprobs = r.logprobs;
  o.include_reasoning = r.include_reasoning;
  o.glm_thinking = reasoning_enabled(ReasoningParserKind::kGlm45, r.chat_template_kwargs);
  o.thinking =
      !opts.reasoning_parser || reasoning_enabled(*opts.reasoning_parser, r.chat_template_kwargs);
  if (opts.reasoning_parser == ReasoningParserKind::kDeepseekV3 && o.thinking) {
    const ThinkTags t = think_tags(llm.tokenizer());
    if (!t.start || !t.end)
      throw bad_request(
          "--reasoning-parser deepseek_v3 cannot think with this model: its vocabulary has no "
          "<think> / </think> tokens",
          "chat_template_kwargs");
  }
  // As vLLM's engine-based Qwen3, GLM and MiniMax-M2 parsers (adjust_request): their tags may be
  // special tokens.
  if (opts.reasoning_parser == ReasoningParserKind::kQwen3 ||
      opts.reasoning_parser == ReasoningParserKind::kSeedOss ||
      opts.reasoning_parser == ReasoningParserKind::kGlm45 ||
      opts.reasoning_parser == ReasoningParserKind::kMinimaxM2 ||
      opts.reasoning_parser == ReasoningParserKind::kKimiK2)
    r.sampling.skip_special_tokens = false;
  if (r.return_prompt_text) o.prompt_text = prompt;
  // Echo: the last message is continued when it already has the reply's role.
  if (r.echo) {
    const ojson& last = r.messages.back();
    if (last.value("role", "") == o.role) o.chat_echo = content_text(last["content"]);
  }
  tokenize_bad_words(llm, r);
  set_think_tokens(llm, r);
  // Harmony's channels and recipients are special tokens: the splitter reads them in the text
  // and removes them (vLLM parses the token ids, whatever skip_special_tokens says).
  if (opts.harmony) r.sampling.skip_special_tokens = false;
  // gpt-oss: a structured output shapes harmony's final message, after an optional analysis
  // message, as vLLM's HarmonyParser has it (strict_tools.h).
  if (opts.harmony && r.constraint)
    r.constraint = OutputConstraint{engine::so::GrammarKind::kStructuralTag,
                                    harmony_output_tag(*r.constraint).dump(), r.constraint->field};
  // Strict tool calling: under the parsers vLLM constrains (hermes, ...), the calls it
  // constrains are constrained in the model's own format and read by the parser, whatever the
  // tool_choice (strict_tools.h).
  std::optional<OutputConstraint> tool_tag;
  if (opts.auto_tool_parser && r.tool_choice != ToolChoice::kNone && !r.tools.is_null()) {
    if (auto t =
            tool_structural_tag(*opts.auto_tool_parser, r, r.constraint, opts.tool_strict_level))
      tool_tag = OutputConstraint{engine::so::GrammarKind::kStructuralTag, t->dump(), "tools"};
  }
  // Tools: "auto" needs a parser; "required" and a named function force the call through the
  // grammar engine, in the formats vLLM uses for them (or through the strict-call tag above,
  // read by the parser as "auto" is).
  if ((r.tool_choice == ToolChoice::kAuto || tool_tag) && !r.tools.is_null()) {
    if (!opts.auto_tool_parser)
      throw bad_request(
          "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to "
          "be set",
          "tool_choice");
    o.tool_parser = opts.auto_tool_parser;
    o.tools = r.tools;
    // As vLLM's hermes, mistral and engine-based parsers: their tags may be special tokens.
    // Its llama3_json, pythonic, olmo3, phi4_mini_json and ernie45 parsers keep the request's
    // setting.
    const ToolParserKind k = *o.tool_parser;
    if (k != ToolParserKind::kLlama3Json && k != ToolParserKind::kPythonic &&
        k != ToolParserKind::kOlmo3 && k != ToolParserKind::kPhi4MiniJson &&
        k != ToolParserKind::kErnie45)
      r.sampling.skip_special_tokens = false;
  } else if (r.tool_choice == ToolChoice::kNone && opts.auto_tool_parser &&
             parsers_engine_based(*opts.auto_tool_parser, opts.reasoning_parser)) {
    // tool_choice "none" (given, or the default without tools) under vLLM's engine-based
    // parsers: the output is still read by the tool parser and its calls are dropped, so call
    // markup does not reach the content.
    o.tool_parser = opts.auto_tool_parser;
    o.tools = r.tools;
    o.drop_tool_calls = true;
  } else if (r.tool_choice == ToolChoice::kRequired) {
    o.tool_parser = ToolParserKind::kRequired;
  } else if (r.tool_choice == ToolChoice::kNamed) {
    o.tool_parser = ToolParserKind::kNamed;
    o.named_tool = r.tool_choice_name;
  }
  o.parallel_tool_calls = r.parallel_tool_calls;
  o.server_tool_parser = opts.auto_tool_parser.has_value();
  std::optional<OutputConstraint> c = r.constraint;
  if (tool_tag)
    c = std::move(tool_tag);
  else if (auto t = tool_call_constraint(r))
    c = std::move(t);
  if (c) {
    // Granite's reasoning ends at a phrase, not a token: no grammar can wait for it (vLLM's
    // never engages then), so a thinking request's constraint is refused, not applied to the
    // reasoning or dropped.
    if (opts.reasoning_parser == ReasoningParserKind::kGranite && r.include_reasoning &&
        kwarg_truthy(r.chat_template_kwargs, "thinking"))
      throw bad_request(c->field +
                            " cannot be honoured with chat_template_kwargs thinking under "
                            "--reasoning-parser granite: the reasoning ends at the text \"Here "
                            "is my response:\", which a grammar cannot wait for",
                        c->field);
    r.sampling.grammar = compile_constraint(llm, *c);
    if (opts.reasoning_parser && r.include_reasoning && o.thinking && !opts.grammar_in_reasoning) {
      const ReasoningParserKind kind = *opts.reasoning_parser;
      const ThinkTags tags = think_tags(llm.tokenizer(), kind);
      r.sampling.grammar_start_sequences =
          grammar_start_sequences(tags, in.prompts.front().ids, kind);
      // vLLM's engine-based parsers (the ones with implicit ends) end the reasoning at a content
      // token too (qwen3's <tool_call>, ...): that token is the grammar's first, and one the
      // grammar rejects is masked while the model reasons (vLLM's _get_constraint_bounds /
      // _masked_reasoning_ends).
      if (!r.sampling.grammar_start_sequences.empty())
        r.sampling.grammar_implicit_starts = tags.implicit_end;
    }
  }
  return in;
}

PreparedInputs prepare_completion(const LLM& llm, CompletionRequest& r, const InputOptions& opts) {
  PreparedInputs in;
  const bool special = r.add_special_tokens.value_or(true);
  for (const auto& t : r.prompt_texts) {
    PromptInput p;
    p.ids = encode_truncatable(llm, t, special, r, opts.max_model_len, "prompt");
    p.text = t;
    if (truncate_prompt(p.ids, r, opts.max_model_len) && r.echo) p.text = llm.decode(p.ids, false);
    in.prompts.push_back(std::move(p));
  }
  for (auto& ids : r.prompt_ids) {
    PromptInput p;
    p.ids = std::move(ids);
    truncate_prompt(p.ids, r, opts.max_model_len);
    if (r.echo) {
      try {
        p.text = llm.decode(p.ids, false);
      } catch (const std::exception& e) {
        throw bad_request(std::string("prompt: ") + e.what(), "prompt");
      }
    }
    in.prompts.push_back(std::move(p));
  }
  in.options.echo_only = r.echo_only;
  tokenize_bad_words(llm, r);
  set_think_tokens(llm, r);
  if (r.constraint) r.sampling.grammar = compile_constraint(llm, *r.constraint);
  return in;
}

}  // namespace vllm::api
