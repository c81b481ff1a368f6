// `vllm run-batch -i in.jsonl -o out.jsonl --model M`: OpenAI's batch file format run in
// process (no HTTP): each input line {"custom_id", "method": "POST", "url", "body"} becomes a
// /v1/completions or /v1/chat/completions request (/v1/embeddings for an embedding model, whose
// lines run one at a time while the generation lines around them run on) parsed, validated and
// answered exactly as `vllm serve` would, and one output line {"id", "custom_id", "response":
// {"status_code", "request_id", "body"}, "error"} in input order. A malformed line or a rejected
// request is an error on its own output line; the others run on, batched together by the engine.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>

#include "api/cli/engine_flags.h"
#include "api/generation_config.h"
#include "api/llm.h"
#include "api/model_resolver.h"
#include "api/pooler_config.h"
#include "api/server/embeddings.h"
#include "api/server/protocol.h"
#include "api/server/request_inputs.h"
#include "api/server/scoring.h"
#include "api/server/serving.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::api {
namespace {

using nlohmann::json;

struct Pending {
  size_t line_no = 0;
  json custom_id;
  std::shared_ptr<Generation> gen;  // null when the line already failed (or is an embedding)
  json embeddings;                  // an /v1/embeddings line's answer
  int status = 200;
  std::string error;
};

json output_line(const Pending& p, const json& body) {
  json response = {{"status_code", p.status},
                   {"request_id", random_id("vllm-batch-")},
                   {"body", p.error.empty() ? body : json(nullptr)}};
  return {{"id", random_id("vllm-")},
          {"custom_id", p.custom_id},
          {"response", response},
          {"error", p.error.empty() ? json(nullptr) : json(p.error)}};
}

int run_batch(int argc, char** argv) {
  CLI::App app{"vllm run-batch: OpenAI batch files through the engine, in process"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string input, output, model, gguf, revision = "main", generation_config = "auto";
  std::vector<std::string> served;
  cli::EngineFlags flags;
  app.add_option("-i,--input-file", input, "batch input (JSON lines; - for stdin)")->required();
  app.add_option("-o,--output-file", output, "batch output (JSON lines; - for stdout)")->required();
  app.add_option("--model", model, "model: folder, .gguf, ORG/NAME or ORG/NAME:QUANT")->required();
  app.add_option("--gguf", gguf, "the GGUF file inside the --model folder");
  app.add_option("--revision", revision, "revision of a Hugging Face cache model");
  app.add_option("--served-model-name", served, "model name(s) requests may give")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--generation-config", generation_config,
                 "sampling defaults: auto, vllm, or a folder with generation_config.json");
  flags.add(app);
  try {
    std::vector<std::string> args = cli::vllm_args(argc, argv);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const engine::EngineConfig ec = flags.resolve();
  const ResolvedModel rm = resolve_model(model, revision, gguf);
  ParseOptions po;
  po.max_logprobs = ec.max_logprobs;
  po.defaults = load_generation_defaults(
      generation_config, generation_config == "auto" ? rm.folder : generation_config);
  if (served.empty()) served.push_back(model);

  std::ifstream in_file;
  if (input != "-") {
    in_file.open(input);
    if (!in_file) throw std::invalid_argument("--input-file: cannot open " + input);
  }
  std::istream& in = input == "-" ? std::cin : in_file;
  std::ofstream out_file;
  if (output != "-") {
    out_file.open(output);
    if (!out_file) throw std::invalid_argument("--output-file: cannot write " + output);
  }
  std::ostream& out = output == "-" ? std::cout : out_file;

  auto llm = LLM::load(rm.path, ec);
  const std::optional<PoolerSetup> pooling =
      flags.resolve_pooler(rm.folder, llm->model(), &llm->tokenizer());
  engine::AsyncEngine engine(llm->engine());
  ServingContext ctx{*llm, engine, served.front(), std::nullopt};
  // gpt-oss chat output is split as harmony here too (vLLM's run_batch serves chat the same way).
  ctx.harmony = is_harmony_architecture(llm->model().config().architecture);
  InputOptions io;
  io.max_model_len = engine.config().max_model_len;
  io.harmony = ctx.harmony;
  // Enough requests in flight to fill the batch, few enough to stay under the waiting limit.
  const size_t window = static_cast<size_t>(ec.max_num_seqs) * 2;

  std::deque<Pending> pending;
  size_t n_ok = 0, n_err = 0;
  auto flush_front = [&] {
    Pending p = std::move(pending.front());
    pending.pop_front();
    json body = std::move(p.embeddings);
    if (p.gen) {
      try {
        body = p.gen->collect();
      } catch (const ApiError& e) {
        p.status = e.status();
        p.error = e.what();
      } catch (const std::exception& e) {
        p.status = 500;
        p.error = e.what();
      }
    }
    (p.error.empty() ? n_ok : n_err) += 1;
    out << output_line(p, body).dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  };
  std::string text;
  for (size_t line_no = 1; std::getline(in, text); ++line_no) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Pending p;
    p.line_no = line_no;
    try {
      json line;
      try {
        line = json::parse(text);
      } catch (const json::exception& e) {
        throw bad_request("line " + std::to_string(line_no) + " is not JSON: " + e.what());
      }
      if (!line.is_object())
        throw bad_request("line " + std::to_string(line_no) +
                          ": a batch line must be a JSON object");
      if (line.contains("custom_id")) p.custom_id = line["custom_id"];
      if (!p.custom_id.is_string())
        throw bad_request("line " + std::to_string(line_no) + ": custom_id must be a string",
                          "custom_id");
      if (line.value("method", std::string("POST")) != "POST")
        throw bad_request("method must be POST", "method");
      const std::string url = line.value("url", std::string());
      // vLLM's url_matches: the score API's unversioned routes by suffix.
      auto ends_with = [&url](const std::string& tail) {
        return url.size() >= tail.size() &&
               url.compare(url.size() - tail.size(), tail.size(), tail) == 0;
      };
      const bool score = ends_with("/score"), rerank = ends_with("/rerank");
      if (url != "/v1/chat/completions" && url != "/v1/completions" && url != "/v1/embeddings" &&
          !score && !rerank)
        throw bad_request("url '" + url +
                              "' is not supported in batch files (use /v1/chat/completions, "
                              "/v1/completions, /v1/embeddings, /score or /rerank)",
                          "url");
      if (auto refused = route_refusal(score    ? "/score"
                                       : rerank ? "/rerank"
                                                : url,
                                       pooling ? &*pooling : nullptr))
        throw *refused;
      if (!line.contains("body") || !line["body"].is_object())
        throw bad_request("body must be a JSON object", "body");
      const ojson body = ojson::parse(line["body"].dump());
      auto check_model = [&](const std::optional<std::string>& model) {
        if (model && std::find(served.begin(), served.end(), *model) == served.end())
          throw ApiError(404, "The model `" + *model + "` does not exist.", "model");
      };
      auto check = [&](const GenerationRequest& r) {
        check_model(r.model);
        if (r.stream) throw bad_request("stream is not supported in batch files", "stream");
      };
      PoolingServeOptions po_opts;
      po_opts.pooler = pooling ? &*pooling : nullptr;
      po_opts.model_name = served.front();
      po_opts.max_model_len = io.max_model_len;
      if (url == "/v1/embeddings") {
        const EmbeddingRequest r = parse_embedding_request(body);
        check_model(r.model);
        p.embeddings = serve_embeddings(ctx, r, po_opts, {});
      } else if (score || rerank) {
        const ScoreRequest r = parse_score_request(body, rerank);
        check_model(r.model);
        p.embeddings = serve_score(ctx, r, po_opts, {});
      } else if (url == "/v1/chat/completions") {
        ChatRequest r = parse_chat_request(body, po);
        check(r);
        PreparedInputs pi = prepare_chat(*llm, r, io);
        p.gen = Generation::start(ctx, Generation::Kind::kChat, r, std::move(pi.prompts),
                                  std::move(pi.options));
      } else {
        CompletionRequest r = parse_completion_request(body, po);
        check(r);
        PreparedInputs pi = prepare_completion(*llm, r, io);
        p.gen = Generation::start(ctx, Generation::Kind::kCompletion, r, std::move(pi.prompts),
                                  std::move(pi.options));
      }
    } catch (const ApiError& e) {
      p.status = e.status();
      p.error = e.what();
    } catch (const tok::ChatTemplateError& e) {
      p.status = 400;
      p.error = std::string("chat template: ") + e.what();
    } catch (const std::exception& e) {
      p.status = 400;
      p.error = e.what();
    }
    pending.push_back(std::move(p));
    while (pending.size() > window) flush_front();
  }
  while (!pending.empty()) flush_front();
  out.flush();
  engine.shutdown();
  std::fprintf(stderr, "vllm.cpp run-batch: %zu requests done, %zu failed\n", n_ok, n_err);
  return 0;
}

}  // namespace
}  // namespace vllm::api

extern "C" int vllm_run_batch_main(int argc, char** argv) {
  try {
    return vllm::api::run_batch(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
