// `vllm generate`: complete one prompt, or many (--prompts-file, one JSON prompt per line)
// run together as one continuous batch through the engine.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/cli/commands.h"
#include "api/cli/engine_flags.h"
#include "api/llm.h"
#include "api/model_resolver.h"

namespace vllm::cli {

namespace {

std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty())
      throw std::invalid_argument("--prompt-ids: '" + item + "' is not an integer");
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

struct Prompt {
  std::string text;  // as given (empty for id prompts)
  std::vector<int32_t> ids;
};

// One line of --prompts-file: a JSON string, or {"prompt": "..."} / {"prompt_token_ids": [...]}.
Prompt parse_prompt_line(const std::string& line, size_t lineno, const tok::Tokenizer& tok) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("--prompts-file line " + std::to_string(lineno) + ": not JSON (" +
                                e.what() + ")");
  }
  Prompt p;
  if (j.is_string()) {
    p.text = j.get<std::string>();
  } else if (j.is_object() && j.contains("prompt") && j["prompt"].is_string()) {
    p.text = j["prompt"].get<std::string>();
  } else if (j.is_object() && j.contains("prompt_token_ids") && j["prompt_token_ids"].is_array()) {
    p.ids = j["prompt_token_ids"].get<std::vector<int32_t>>();
    return p;
  } else {
    throw std::invalid_argument("--prompts-file line " + std::to_string(lineno) +
                                ": expected a string or {\"prompt\": ...}");
  }
  p.ids = tok.encode(p.text);
  return p;
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  CLI::App app{"vllm generate: complete prompts"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string model_path, prompt, prompt_ids, prompts_file;
  int64_t max_tokens = 16;
  engine::SamplingParams sp;
  sp.temperature = 0.0f;
  bool as_json = false;
  EngineFlags ef;
  app.add_option("--model", model_path, "model folder or .gguf file")->required();
  auto* p_opt = app.add_option("--prompt", prompt, "prompt text");
  auto* i_opt = app.add_option("--prompt-ids", prompt_ids, "prompt token ids, comma-separated");
  auto* f_opt = app.add_option("--prompts-file", prompts_file,
                               "one JSON prompt per line (string, or {\"prompt\": ...})");
  p_opt->excludes(i_opt)->excludes(f_opt);
  i_opt->excludes(f_opt);
  app.add_option("--max-tokens", max_tokens, "tokens to generate per prompt (>= 1)");
  app.add_option("--temperature", sp.temperature, "0 = greedy");
  app.add_option("--top-p", sp.top_p, "nucleus sampling mass in (0, 1]");
  app.add_option("--top-k", sp.top_k, "keep the k most likely tokens (-1 or 0: all)");
  app.add_option("--min-p", sp.min_p, "drop tokens below min_p * max probability");
  app.add_option("--repetition-penalty", sp.repetition_penalty, "> 1 discourages repeats");
  app.add_option("--stop", sp.stop, "stop strings")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--ignore-eos", sp.ignore_eos, "keep generating after end-of-sequence");
  app.add_flag("--json", as_json, "print one JSON object per request");
  int32_t logprobs = -2, prompt_logprobs = -2;
  app.add_option("--logprobs", logprobs, "with --json: each new token's logprob and top N");
  app.add_option("--prompt-logprobs", prompt_logprobs,
                 "with --json: each prompt token's logprob (after the first) and top N");
  ef.add(app);
  try {
    std::vector<std::string> args = vllm_args(argc, argv);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (max_tokens < 1) throw std::invalid_argument("--max-tokens must be >= 1");
  if (prompt.empty() && prompt_ids.empty() && prompts_file.empty())
    throw std::invalid_argument("give --prompt TEXT, --prompt-ids 1,2,3 or --prompts-file FILE");
  sp.max_tokens = static_cast<int32_t>(max_tokens);
  if (logprobs > -2) sp.logprobs = logprobs;
  if (prompt_logprobs > -2) sp.prompt_logprobs = prompt_logprobs;
  // --seed (an engine flag) also seeds this request's sampler.
  if (ef.cfg.seed != 0) sp.seed = ef.cfg.seed;
  sp.validate();

  ef.refuse_pooling("vllm generate");
  auto llm = api::LLM::load(api::resolve_model(model_path).path, ef.resolve());
  api::refuse_classifier("vllm generate", llm->model());
  llm->set_compact_json(ef.structured_outputs_compact_json());
  const tok::Tokenizer& tok = llm->tokenizer();
  std::vector<Prompt> prompts;
  if (!prompts_file.empty()) {
    std::ifstream in(prompts_file);
    if (!in) throw std::invalid_argument("cannot open --prompts-file " + prompts_file);
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n)
      if (line.find_first_not_of(" \t\r") != std::string::npos)
        prompts.push_back(parse_prompt_line(line, n, tok));
  } else if (!prompt_ids.empty()) {
    prompts.push_back({"", parse_ids(prompt_ids)});
  } else {
    prompts.push_back({prompt, tok.encode(prompt)});
  }

  auto& engine = llm->engine();
  const engine::SamplingParams params = llm->with_model_stops(sp);
  struct Result {
    std::vector<int32_t> ids;
    std::string text, finish;
    std::vector<engine::TokenLogprobs> logprobs, prompt_logprobs;
  };
  std::map<std::string, Result> results;
  for (size_t i = 0; i < prompts.size(); ++i)
    engine.add_request(std::to_string(i), prompts[i].ids, params);  // throws on bad input
  while (engine.has_unfinished_requests()) {
    for (auto& out : engine.step()) {
      Result& r = results[out.request_id];
      r.ids.insert(r.ids.end(), out.new_token_ids.begin(), out.new_token_ids.end());
      r.text += out.text_delta;
      r.logprobs.insert(r.logprobs.end(), out.logprobs.begin(), out.logprobs.end());
      r.prompt_logprobs.insert(r.prompt_logprobs.end(), out.prompt_logprobs.begin(),
                               out.prompt_logprobs.end());
      if (out.finished) r.finish = out.error.empty() ? out.finish_reason : "error: " + out.error;
    }
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Result& r = results[std::to_string(i)];
    if (as_json) {
      nlohmann::json j = {{"prompt_token_ids", prompts[i].ids},
                          {"token_ids", r.ids},
                          {"text", r.text},
                          {"finish_reason", r.finish}};
      if (!prompts[i].text.empty()) j["prompt"] = prompts[i].text;
      // [{"token_id", "logprob", "rank", "top": [[id, logprob], ...]}, ...]
      auto lp_json = [](const engine::TokenLogprobs& lp) {
        nlohmann::json top = nlohmann::json::array();
        for (const auto& [id, v] : lp.top) top.push_back({id, v});
        return nlohmann::json{
            {"token_id", lp.token_id}, {"logprob", lp.logprob}, {"rank", lp.rank}, {"top", top}};
      };
      if (sp.logprobs) {
        j["logprobs"] = nlohmann::json::array();
        for (const auto& lp : r.logprobs) j["logprobs"].push_back(lp_json(lp));
      }
      if (sp.prompt_logprobs) {
        j["prompt_logprobs"] = nlohmann::json::array({nullptr});
        for (const auto& lp : r.prompt_logprobs) j["prompt_logprobs"].push_back(lp_json(lp));
      }
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      std::printf("%s%s\n", prompts[i].text.c_str(), r.text.c_str());
    }
  }
  return 0;
}

}  // namespace vllm::cli
