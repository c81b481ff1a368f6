// `vllm generate`: complete one prompt from the command line.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "api/cli/commands.h"
#include "model/static_batch.h"
#include "model/causal_lm.h"
#include "model/tokenizer_loader.h"
#include "tokenizer/tokenizer.h"

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

int32_t sample(const float* logits, int64_t n, float temperature, std::mt19937_64& rng) {
  if (temperature <= 0.0f)
    return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
  const float mx = *std::max_element(logits, logits + n);
  std::vector<double> p(n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += p[i] = std::exp((logits[i] - mx) / temperature);
  double r = std::uniform_real_distribution<double>(0, sum)(rng);
  for (int64_t i = 0; i < n; ++i)
    if ((r -= p[i]) <= 0) return static_cast<int32_t>(i);
  return static_cast<int32_t>(n - 1);
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  CLI::App app{"vllm generate: complete a prompt"};
  std::string model_path, prompt, prompt_ids;
  int64_t max_tokens = 16;
  float temperature = 0.0f;
  uint64_t seed = 0;
  bool ignore_eos = false, as_json = false;
  app.add_option("--model", model_path, "model folder or .gguf file")->required();
  auto* p_opt = app.add_option("--prompt", prompt, "prompt text");
  auto* i_opt = app.add_option("--prompt-ids", prompt_ids, "prompt token ids, comma-separated");
  p_opt->excludes(i_opt);
  app.add_option("--max-tokens", max_tokens, "tokens to generate (>= 1)");
  app.add_option("--temperature", temperature, "0 = greedy");
  app.add_option("--seed", seed, "sampling seed");
  app.add_flag("--ignore-eos", ignore_eos, "keep generating after end-of-sequence");
  app.add_flag("--json", as_json, "print one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (max_tokens < 1) throw std::invalid_argument("--max-tokens must be >= 1");
  if (temperature < 0 || !std::isfinite(temperature))
    throw std::invalid_argument("--temperature must be >= 0");
  if (prompt.empty() && prompt_ids.empty())
    throw std::invalid_argument("give --prompt TEXT or --prompt-ids 1,2,3");

  auto m = model::CausalLM::load(model_path);
  const auto& c = m->config();
  auto tok = model::load_tokenizer(model_path);
  std::vector<int32_t> ids = prompt_ids.empty() ? tok->encode(prompt) : parse_ids(prompt_ids);
  if (ids.empty()) throw std::invalid_argument("the prompt is empty after tokenization");
  for (int32_t id : ids)
    if (id < 0 || id >= c.vocab_size)
      throw std::invalid_argument("prompt token id " + std::to_string(id) + " is outside [0, " +
                                  std::to_string(c.vocab_size) + ")");
  const int64_t ctx = c.max_position_embeddings;
  if (static_cast<int64_t>(ids.size()) >= ctx)
    throw std::invalid_argument("prompt has " + std::to_string(ids.size()) +
                                " tokens, the model's context is " + std::to_string(ctx));
  max_tokens = std::min<int64_t>(max_tokens, ctx - static_cast<int64_t>(ids.size()));

  std::vector<int32_t> stop;
  for (int64_t e : c.eos_token_ids) stop.push_back(static_cast<int32_t>(e));
  for (int32_t e : tok->stop_ids())
    if (std::find(stop.begin(), stop.end(), e) == stop.end()) stop.push_back(e);

  model::StaticBatch sb(*m, 1, static_cast<int64_t>(ids.size()) + max_tokens);
  std::mt19937_64 rng(seed);
  const std::vector<float>* logits = &sb.prefill({ids});
  std::vector<int32_t> out;
  std::string finish = "length";
  for (int64_t i = 0; i < max_tokens; ++i) {
    int32_t next = sample(logits->data(), c.vocab_size, temperature, rng);
    if (!ignore_eos && std::find(stop.begin(), stop.end(), next) != stop.end()) {
      finish = "stop";
      break;
    }
    out.push_back(next);
    if (i + 1 < max_tokens) logits = &sb.decode({next});
  }
  const std::string text = tok->decode(out, /*skip_special_tokens=*/true);
  if (as_json) {
    nlohmann::json j = {
        {"prompt_token_ids", ids}, {"token_ids", out}, {"text", text}, {"finish_reason", finish}};
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s%s\n", prompt.c_str(), text.c_str());
  }
  return 0;
}

}  // namespace vllm::cli
