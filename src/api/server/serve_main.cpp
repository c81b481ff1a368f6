// `vllm serve MODEL`: the OpenAI-compatible HTTP server. Flags follow Python vLLM's names
// (docs/SERVING.md lists them with what each does here). This lives in libvllm_server.so with
// the HTTP stack (libmicrohttpd, which pulls in GnuTLS, and prometheus-cpp); the `vllm` program
// loads it only for `serve`, so `generate` and `bench` neither map nor initialize those
// libraries.
#include <pthread.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "api/cli/engine_flags.h"
#include "api/generation_config.h"
#include "api/llm.h"
#include "api/model_resolver.h"
#include "api/server/openai_server.h"
#include "api/server/reasoning_parser.h"
#include "api/server/serve_main.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(std::string(flag) + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// vLLM's --allowed-origins / --allowed-methods / --allowed-headers take a JSON list; a bare
// word is taken as a one-element list.
std::vector<std::string> json_list(const std::string& v, const char* flag) {
  if (v.empty() || v[0] != '[') return {v};
  try {
    return nlohmann::json::parse(v).get<std::vector<std::string>>();
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(flag) + ": expected a JSON list of strings, got " + v);
  }
}

// vLLM's rule: an existing file is read; text with template syntax or newlines is the
// template itself; anything else that looks like a path is an error.
std::string load_chat_template(const std::string& v) {
  if (fs::is_regular_file(v)) return read_file(v, "--chat-template");
  if (v.find_first_of("{}\n") != std::string::npos) return v;
  throw std::invalid_argument("--chat-template: the supplied chat template string (" + v +
                              ") appears path-like, but doesn't exist!");
}

// --limit-mm-per-prompt: a text-only engine honours limits of 0 ({"image": 0} or, in vLLM's
// newer form, {"image": {"count": 0}}); any other asks for inputs it cannot take.
void check_mm_limits(const std::string& v) {
  if (v.empty()) return;
  const nlohmann::json j = nlohmann::json::parse(v, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())  // a parse error is `discarded`, not an object
    throw std::invalid_argument("--limit-mm-per-prompt: expected a JSON object, got " + v);
  for (const auto& [modality, limit] : j.items()) {
    const nlohmann::json& n = limit.is_object() && limit.contains("count") ? limit["count"] : limit;
    if (!n.is_number_integer() || n.get<int64_t>() != 0)
      throw std::invalid_argument("--limit-mm-per-prompt: " + modality + " " + limit.dump() +
                                  ": this engine serves text-only models (only limits of 0)");
  }
}

// One --lora-modules entry, read as vLLM's LoRAParserAction reads it: name=path (when the item
// has an = and no comma), else a JSON object {"name", "path", "base_model_name"?}.
struct LoraModuleArg {
  std::string name, path, base_model_name;
};

std::vector<LoraModuleArg> parse_lora_modules(const std::vector<std::string>& items) {
  std::vector<LoraModuleArg> out;
  for (const auto& item : items) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq != std::string::npos && item.find(',') == std::string::npos) {
      out.push_back({item.substr(0, eq), item.substr(eq + 1), ""});
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(item, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw std::invalid_argument("Invalid JSON format for --lora-modules: " + item);
    LoraModuleArg a;
    for (const auto& [k, v] : j.items()) {
      std::string* dst = k == "name"              ? &a.name
                         : k == "path"            ? &a.path
                         : k == "base_model_name" ? &a.base_model_name
                                                  : nullptr;
      if (k == "is_3d_lora_weight" && v.is_boolean() && !v.get<bool>()) continue;
      if (!dst || !(v.is_string() || (k == "base_model_name" && v.is_null())))
        throw std::invalid_argument("Invalid fields for --lora-modules: " + item + " - '" + k +
                                    "' is not one of name, path, base_model_name (strings)");
      if (v.is_string()) *dst = v.get<std::string>();
    }
    if (a.name.empty() || a.path.empty())
      throw std::invalid_argument("Invalid fields for --lora-modules: " + item +
                                  " - name and path are required");
    out.push_back(std::move(a));
  }
  return out;
}

int serve_main(int argc, char** argv) {
  CLI::App app{"vllm serve: OpenAI-compatible HTTP server"};
  // As argparse: a flag given twice takes its last value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string model_pos, model_opt, gguf, revision = "main", tokenizer, tokenizer_revision;
  std::string chat_template, limit_mm, default_kwargs, content_format = "auto";
  std::string generation_config = "auto", override_generation_config, log_level = "info";
  std::string origins = "[\"*\"]", methods = "[\"*\"]", headers = "[\"*\"]";
  std::string ssl_keyfile, ssl_certfile, ssl_ca_certs;
  int ssl_cert_reqs = 0;
  bool enable_log_requests = false, disable_log_requests = false, enable_log_outputs = false;
  api::ServerConfig sc;
  cli::EngineFlags flags;
  app.add_option("model_tag", model_pos,
                 "model: a folder, a .gguf file, ORG/NAME from the Hugging Face cache, or "
                 "ORG/NAME:QUANT for one of its GGUF files");
  app.add_option("--model", model_opt, "the model (instead of the positional argument)");
  app.add_option("--gguf", gguf, "the GGUF file inside the --model folder (or repo) to load");
  app.add_option("--revision", revision, "branch, tag or commit of a Hugging Face cache model");
  app.add_option("--tokenizer", tokenizer,
                 "folder (or cached repo) with tokenizer.json to use instead of the model's");
  app.add_option("--tokenizer-revision", tokenizer_revision,
                 "revision of a cached --tokenizer repo (default: --revision)");
  app.add_option("--host", sc.host, "address to listen on (default 127.0.0.1)");
  app.add_option("--port", sc.port, "port to listen on (0: any free port)");
  app.add_option("--served-model-name", sc.served_model_names,
                 "model name(s) in the API (default: the model as given)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--api-key", sc.api_keys,
                 "require 'Authorization: Bearer KEY' with any of these keys (default: "
                 "$VLLM_API_KEY); as in vLLM it takes every word up to the next flag")
      ->expected(1, -1)
      ->allow_extra_args()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--reasoning-parser", sc.reasoning_parser,
                 "split reasoning out of chat output as vLLM 0.33's parser of that name does: " +
                     std::string(reasoning_parser_names()) +
                     " (openai_gptoss is on by default for gpt-oss models; "
                     "docs/SERVING.md has each one's rules)");
  app.add_flag("--enable-auto-tool-choice", sc.enable_auto_tool_choice,
               "parse tool calls out of the output for tool_choice \"auto\" (needs "
               "--tool-call-parser)");
  app.add_option("--tool-call-parser", sc.tool_call_parser,
                 "how tool calls are written, read as vLLM 0.33's parser of that name reads "
                 "them: " +
                     std::string(tool_parser_names()));
  app.add_option("--chat-template", chat_template,
                 "chat template: a file, or the template text itself");
  app.add_flag("--trust-request-chat-template", sc.trust_request_chat_template,
               "let requests bring their own chat_template");
  app.add_option("--default-chat-template-kwargs", default_kwargs,
                 "JSON object of chat template variables for every request (e.g. "
                 "'{\"enable_thinking\": false}'); a request's chat_template_kwargs win");
  std::string effort_map;
  app.add_option("--reasoning-effort-map", effort_map,
                 "JSON object rewriting a request's reasoning_effort to one the chat template "
                 "knows (e.g. '{\"medium\": \"low\", \"xhigh\": \"max\"}')");
  app.add_option("--chat-template-content-format", content_format,
                 "message content in templates: string (auto: the default here) or openai "
                 "(a list of {\"type\": \"text\", \"text\": ...} parts)")
      ->check(CLI::IsMember({"auto", "string", "openai"}));
  app.add_option("--tool-strict-level", sc.tool_strict_level,
                 "floor for strict tool calls (vLLM's): auto (a tool's own strict field, the "
                 "default; function for glm45 / glm47, as vLLM's GLM parser), function (every "
                 "call's envelope constrained), parameter (also every tool's arguments, as if all "
                 "were strict); built for --tool-call-parser hermes / qwen3_json, llama3_json / "
                 "llama4_json, qwen3_coder / qwen3_xml, minimax_m2, deepseek_v3, deepseek_v31, "
                 "glm45 / glm47, kimi_k2, openai")
      ->check(CLI::IsMember({"auto", "function", "parameter"}));
  app.add_flag("--exclude-tools-when-tool-choice-none", sc.exclude_tools_when_tool_choice_none,
               "tool_choice \"none\" keeps the tools out of the prompt");
  app.add_option("--response-role", sc.response_role,
                 "the chat reply's role after a generation prompt (default assistant)");
  app.add_option("--limit-mm-per-prompt", limit_mm,
                 "JSON object of multimodal items per prompt: only limits of 0 (text only)");
  app.add_option("--generation-config", generation_config,
                 "sampling defaults: auto (the model's generation_config.json), vllm (none), "
                 "or a folder holding generation_config.json");
  app.add_option("--override-generation-config", override_generation_config,
                 "JSON object of sampling defaults over the generation config");
  app.add_option("--allowed-origins", origins, "CORS: JSON list of allowed origins");
  app.add_option("--allowed-methods", methods, "CORS: JSON list of allowed methods");
  app.add_option("--allowed-headers", headers, "CORS: JSON list of allowed headers");
  app.add_flag("--allow-credentials", sc.allow_credentials, "CORS: allow credentials");
  app.add_option("--ssl-keyfile", ssl_keyfile, "TLS private key (PEM file)");
  app.add_option("--ssl-certfile", ssl_certfile, "TLS certificate (PEM file)");
  app.add_option("--ssl-ca-certs", ssl_ca_certs, "not supported (client certificates)");
  app.add_option("--ssl-cert-reqs", ssl_cert_reqs, "not supported (client certificates)");
  app.add_flag("--enable-log-requests", enable_log_requests, "log one line per request");
  app.add_flag("--disable-log-requests", disable_log_requests, "do not log requests (the default)");
  app.add_option("--uvicorn-log-level", log_level,
                 "server log level; debug also logs request fields that were ignored")
      ->check(CLI::IsMember({"critical", "error", "warning", "info", "debug", "trace"}));
  flags.add(app);
  app.add_flag("--enable-force-include-usage", sc.parse.force_include_usage,
               "every stream ends with a usage chunk (as stream_options.include_usage)");
  app.add_flag("--return-tokens-as-token-ids", sc.parse.return_tokens_as_token_ids,
               "logprobs show tokens as 'token_id:N' unless a request says otherwise");
  app.add_flag("--enable-request-id-headers", sc.request_id_headers,
               "every response carries X-Request-Id (the request's, else a new one)");
  app.add_flag("--enable-server-load-tracking", sc.server_load_tracking,
               "GET /load counts the generation requests being handled");
  app.add_option("--root-path", sc.root_path,
                 "a path prefix a proxy leaves on requests (/api: /api/v1/models is /v1/models)");
  flags.no_effect_option(app, "--disable-access-log-for-endpoints", "no access log is written");
  flags.no_effect_option(app, "--h11-max-incomplete-event-size",
                         "bodies are bounded by --max-request-bytes, headers by the "
                         "connection's memory pool");
  flags.no_effect_option(app, "--h11-max-header-count",
                         "headers are bounded by the connection's memory pool");
  flags.no_effect_flag(app, "--log-error-stack", "errors are answered with their message");
  flags.refused_option(app, "--tool-parser-plugin",
                       ("Python plugins cannot be loaded (built-in --tool-call-parser: " +
                        std::string(tool_parser_names()) + ")")
                           .c_str());
  flags.refused_option(app, "--middleware", "Python ASGI middleware cannot be loaded");
  flags.refused_option(app, "--tool-server", "built-in tool servers are not implemented");
  flags.refused_option(app, "--log-config-file",
                       "logging is set by --log-level, --uvicorn-log-level and VLLM_LOGGING_LEVEL");
  flags.refused_flag(app, "--enable-tokenizer-info-endpoint",
                     "there is no /tokenizer_info endpoint");
  app.add_option("--uds", sc.unix_socket,
                 "listen on this Unix domain socket instead of --host / --port");
  flags.refused_flag(app, "--headless", "the server always runs its API frontend");
  flags.no_effect_flag(app, "--disable-log-stats", "no periodic stats are logged (see /metrics)");
  app.add_flag("--enable-log-outputs", enable_log_outputs,
               "with --enable-log-requests: log each finished choice's text and finish reason");
  app.add_option("--max-log-len", sc.max_log_len,
                 "characters of output text logged by --enable-log-outputs (default: all)");
  flags.no_effect_flag(app, "--disable-fastapi-docs", "there are no /docs or /redoc pages");
  flags.no_effect_flag(app, "--disable-uvicorn-access-log",
                       "no access log is written (--enable-log-requests: one line per request)");
  flags.no_effect_flag(app, "--disable-mm-preprocessor-cache", "there are no multimodal inputs");
  flags.no_effect_option(app, "--api-server-count", "one HTTP server serves every request", {"1"});
  flags.no_effect_option(app, "--stream-interval", "every token is streamed as it is made", {"1"});
  app.add_option("--max-waiting-requests", sc.max_waiting_requests,
                 "queued requests beyond which the server answers 503");
  int64_t max_num_queued_reqs = -1, max_num_queued_tokens = -1;
  app.add_option("--max-num-queued-reqs", max_num_queued_reqs,
                 "unfinished requests (waiting + running; n > 1 counts n) beyond which a new one "
                 "gets 503 (default: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-num-queued-tokens", max_num_queued_tokens,
                 "prompt tokens of requests still in prefill at which a new request gets 503 "
                 "(default: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shutdown-timeout", sc.shutdown_timeout_s,
                 "seconds SIGTERM / SIGINT lets the requests already taken finish before they are "
                 "aborted (default 0: abort at once)")
      ->check(CLI::Range(0, 86400));
  app.add_option("--fingerprint-mode", sc.fingerprint_mode,
                 "system_fingerprint of chat / completions responses: full or hash "
                 "(vllm.cpp-VERSION-HASH8), custom (--fingerprint-value) or none")
      ->check(CLI::IsMember({"full", "hash", "custom", "none"}));
  std::string fingerprint_value;
  CLI::Option* fp_value = app.add_option("--fingerprint-value", fingerprint_value,
                                         "the system_fingerprint of --fingerprint-mode custom");
  int sse_keep_alive = 0;
  app.add_option("--sse-keep-alive-interval", sse_keep_alive,
                 "accepted: an idle stream (queued, prefill, between tokens) always gets a "
                 "': keep-alive' comment after 1 s, which meets any interval (it also finds "
                 "clients that hung up)")
      ->check(CLI::NonNegativeNumber);
  std::string engine_log_level;
  app.add_option("--log-level", engine_log_level,
                 "DEBUG also logs request fields that were ignored; WARNING, ERROR and CRITICAL "
                 "drop the startup and request lines (default: VLLM_LOGGING_LEVEL, else INFO)")
      ->check(CLI::IsMember({"CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"},
                            CLI::ignore_case));
  std::vector<std::string> lora_modules;
  app.add_option("--lora-modules", lora_modules,
                 "LoRA adapters to serve (with --enable-lora): name=path or JSON {\"name\", "
                 "\"path\", \"base_model_name\"}; a request names one as its `model`")
      ->expected(1, -1)
      ->allow_extra_args()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--max-request-bytes", sc.max_body_bytes,
                 "largest request body accepted (413 beyond; chunked bodies too)");
  app.add_option("--request-read-timeout", sc.request_timeout_s,
                 "seconds a connection has to deliver a whole request (slow clients are cut)")
      ->check(CLI::Range(1, 3600));
  try {
    std::vector<std::string> args = cli::vllm_args(argc, argv);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  engine::EngineConfig ec = flags.resolve();
  const std::vector<LoraModuleArg> loras = parse_lora_modules(lora_modules);
  if (!loras.empty() && !flags.enable_lora)
    throw std::invalid_argument("--lora-modules needs --enable-lora");
  sc.structured_outputs_in_reasoning = flags.structured_outputs_in_reasoning();
  if (!model_pos.empty() && !model_opt.empty() && model_pos != model_opt)
    throw std::invalid_argument("two models given: '" + model_pos + "' and --model '" + model_opt +
                                "'");
  const std::string model = model_pos.empty() ? model_opt : model_pos;
  if (model.empty())
    throw std::invalid_argument(
        std::string("no model: vllm serve MODEL (or --model MODEL); run with --help") +
        (sc.api_keys.size() > 1 ? " (--api-key takes every word after it, as in vLLM: put the "
                                  "model before it)"
                                : ""));
  if (sc.api_keys.empty())
    if (const char* k = std::getenv("VLLM_API_KEY"); k && *k) sc.api_keys.push_back(k);
  // vLLM's switch for its in-memory Responses store, an integer as vLLM's envs read it.
  if (const char* v = std::getenv("VLLM_ENABLE_RESPONSES_API_STORE"); v && *v) {
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end != '\0')
      throw std::invalid_argument(std::string("VLLM_ENABLE_RESPONSES_API_STORE: expected an "
                                              "integer (0 or 1), got '") +
                                  v + "'");
    sc.responses_store = n != 0;
  }
  sc.allowed_origins = json_list(origins, "--allowed-origins");
  sc.allowed_methods = json_list(methods, "--allowed-methods");
  sc.allowed_headers = json_list(headers, "--allowed-headers");
  if (!ssl_ca_certs.empty() || ssl_cert_reqs != 0)
    throw std::invalid_argument(
        "--ssl-ca-certs / --ssl-cert-reqs: client certificate verification is not supported");
  if (ssl_keyfile.empty() != ssl_certfile.empty())
    throw std::invalid_argument("--ssl-keyfile and --ssl-certfile go together");
  if (!ssl_keyfile.empty()) {
    sc.tls_key_pem = read_file(ssl_keyfile, "--ssl-keyfile");
    sc.tls_cert_pem = read_file(ssl_certfile, "--ssl-certfile");
  }
  if (fp_value->count() > 0) sc.fingerprint_value = fingerprint_value;
  if (sc.fingerprint_mode == "custom" && !sc.fingerprint_value)
    throw std::invalid_argument("--fingerprint-mode custom needs --fingerprint-value");
  if (sc.fingerprint_mode != "custom" && sc.fingerprint_value)
    cli::warn("--fingerprint-value has no effect without --fingerprint-mode custom");
  if (max_num_queued_reqs >= 0) sc.max_num_queued_reqs = max_num_queued_reqs;
  if (max_num_queued_tokens >= 0) sc.max_num_queued_tokens = max_num_queued_tokens;
  // vLLM's --log-level (its LoggingConfig), defaulting to VLLM_LOGGING_LEVEL.
  std::string level = engine_log_level;
  if (level.empty())
    if (const char* env_level = std::getenv("VLLM_LOGGING_LEVEL")) level = env_level;
  for (char& ch : level) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  sc.debug_log =
      log_level == "debug" || log_level == "trace" || level == "DEBUG" || level == "NOTSET";
  const bool quiet = level == "WARNING" || level == "ERROR" || level == "CRITICAL";
  if (quiet) enable_log_requests = false;
  sc.log_requests = enable_log_requests && !disable_log_requests;
  // As vLLM: outputs are logged by the request logger, which only --enable-log-requests makes.
  sc.log_outputs = enable_log_outputs && sc.log_requests;
  if (enable_log_outputs && !sc.log_requests && !quiet)
    cli::warn("--enable-log-outputs has no effect without --enable-log-requests (as in vLLM)");
  check_mm_limits(limit_mm);
  sc.parse.max_logprobs = ec.max_logprobs;
  sc.parse.content_parts = content_format == "openai";
  if (!default_kwargs.empty()) {
    sc.parse.default_chat_template_kwargs =
        nlohmann::ordered_json::parse(default_kwargs, nullptr, /*allow_exceptions=*/false);
    if (!sc.parse.default_chat_template_kwargs.is_object())
      throw std::invalid_argument("--default-chat-template-kwargs: expected a JSON object, got " +
                                  default_kwargs);
  }
  if (!effort_map.empty()) {
    const nlohmann::json m = nlohmann::json::parse(effort_map, nullptr, false);
    if (!m.is_object())
      throw std::invalid_argument("--reasoning-effort-map: expected a JSON object, got " +
                                  effort_map);
    for (const auto& [k, v] : m.items()) {
      if (!v.is_string())
        throw std::invalid_argument("--reasoning-effort-map: the value of '" + k +
                                    "' must be a string, got " + v.dump());
      sc.parse.reasoning_effort_map[k] = v.get<std::string>();
    }
  }
  if (!sc.root_path.empty() && (sc.root_path[0] != '/' || sc.root_path.back() == '/'))
    throw std::invalid_argument(
        "--root-path: expected a path like /api (a leading /, no "
        "trailing /), got " +
        sc.root_path);

  const ResolvedModel rm = resolve_model(model, revision, gguf);
  LLM::LoadOptions lo;
  if (!tokenizer.empty())
    lo.tokenizer =
        resolve_model(tokenizer, tokenizer_revision.empty() ? revision : tokenizer_revision).folder;
  std::string chat_template_text;
  if (!chat_template.empty()) chat_template_text = load_chat_template(chat_template);
  sc.chat_template_given = !chat_template_text.empty();
  GenerationDefaults defaults = load_generation_defaults(
      generation_config, generation_config == "auto" ? rm.folder : rm.path);
  if (generation_config == "auto" && !fs::is_directory(rm.path) &&
      !fs::exists(fs::path(rm.folder) / "generation_config.json"))
    defaults.source = "none: a GGUF file carries no generation_config.json (vLLM's defaults)";
  if (!override_generation_config.empty()) {
    try {
      defaults.merge(nlohmann::json::parse(override_generation_config),
                     "--override-generation-config");
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(std::string("--override-generation-config: not JSON (") +
                                  e.what() + ")");
    }
  }
  sc.parse.defaults = defaults;
  if (sc.served_model_names.empty()) sc.served_model_names.push_back(model);

  // Signals go to one waiting thread (blocked everywhere else, set before any thread starts);
  // a write to a hung-up client must fail, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto llm = api::LLM::load(rm.path, ec, lo);
  llm->set_compact_json(flags.structured_outputs_compact_json());
  sc.pooling = flags.resolve_pooler(rm.folder, llm->model(), &llm->tokenizer());
  if (sc.pooling && ec.device == "cuda")
    throw std::invalid_argument(
        "--device cuda: embedding (pooling) models run on the CPU only (--device cpu)");
  for (const auto& l : loras) {
    // vLLM keeps base_model_name only when it is a served name.
    const bool base = std::find(sc.served_model_names.begin(), sc.served_model_names.end(),
                                l.base_model_name) != sc.served_model_names.end();
    try {
      llm->add_lora(l.name, resolve_model(l.path, "main", "", false).path,
                    flags.lora_load_options(), base ? l.base_model_name : "");
    } catch (const std::exception& e) {
      throw std::invalid_argument("--lora-modules " + l.name + ": " + e.what());
    }
  }
  if (!chat_template_text.empty()) llm->set_chat_template(chat_template_text);
  api::OpenAIServer server(*llm, sc);
  if (!server.bind()) return 1;
  std::thread sig([&] {
    int s = 0;
    sigwait(&set, &s);
    std::fprintf(stderr, "vllm.cpp: signal %d, shutting down\n", s);
    server.stop(/*graceful=*/true);
  });
  sig.detach();
  const auto& cfg = llm->engine().config();
  if (!quiet) {  // the INFO start-up lines (--log-level WARNING and above drop them)
    if (defaults.empty())
      std::printf("vllm.cpp generation config: %s\n", defaults.source.c_str());
    else
      std::printf(
          "vllm.cpp: default sampling parameters have been overridden by the model's generation "
          "config (%s): %s; --generation-config vllm restores vLLM's defaults\n",
          defaults.source.c_str(), defaults.to_json().dump().c_str());
    std::printf("vllm.cpp model: %s (%s)\n", rm.path.c_str(), rm.source.c_str());
    if (sc.pooling && sc.pooling->task == api::PoolerSetup::Task::kClassify)
      std::printf("vllm.cpp classification model (--runner pooling): %s; serving /classify%s\n",
                  sc.pooling->source.c_str(),
                  sc.pooling->serves_score() ? ", /score and /rerank" : "");
    else if (sc.pooling)
      std::printf(
          "vllm.cpp embedding model (--runner pooling): %s, %d dimensions%s; serving "
          "/v1/embeddings, /score and /rerank\n",
          sc.pooling->source.c_str(), sc.pooling->hidden_size,
          sc.pooling->is_matryoshka ? ", Matryoshka" : "");
    if (const std::string& note = llm->model().packed_weights_note(); !note.empty())
      std::printf("vllm.cpp packed weights: %s\n", note.c_str());
    const vt::DType kv_dtype = cfg.kv_cache_dtype.value_or(llm->model().default_kv_dtype());
    std::printf("vllm.cpp KV cache: %lld blocks x %d tokens of %s (%.2f GiB%s)\n",
                static_cast<long long>(cfg.num_gpu_blocks.value_or(0)), cfg.block_size,
                std::string(vt::dtype_name(kv_dtype)).c_str(),
                double(cfg.num_gpu_blocks.value_or(0)) *
                    double(llm->model().kv_bytes_per_block(cfg.block_size, kv_dtype)) /
                    double(1 << 30),
                cfg.gpu_memory_utilization
                    ? (", " + std::to_string(*cfg.gpu_memory_utilization).substr(0, 4) +
                       " of the available memory; --gpu-memory-utilization / --kv-cache-memory")
                          .c_str()
                    : "");
    const std::string where = !sc.unix_socket.empty()
                                  ? "unix:" + sc.unix_socket
                                  : std::string(sc.tls_key_pem.empty() ? "http" : "https") + "://" +
                                        sc.host + ":" + std::to_string(server.port());
    for (const auto& l : llm->lora_modules()) {
      const model::LoraAdapter* a = llm->model().lora(l.id);
      std::string mods;
      for (const auto& m : a->target_modules) mods += (mods.empty() ? "" : ",") + m;
      std::printf("vllm.cpp LoRA adapter %s: %s (rank %lld; %s)\n", l.name.c_str(), l.path.c_str(),
                  static_cast<long long>(a->max_rank), mods.c_str());
    }
    std::printf("vllm.cpp serving %s on %s (max_model_len=%d, kv blocks=%lld x %d)\n",
                server.model_name().c_str(), where.c_str(), cfg.max_model_len,
                static_cast<long long>(cfg.num_gpu_blocks.value_or(0)), cfg.block_size);
    std::fflush(stdout);
  }
  server.serve();
  server.stop();
  return 0;
}

}  // namespace
}  // namespace vllm::api

extern "C" int vllm_serve_main(int argc, char** argv) {
  try {
    return vllm::api::serve_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
