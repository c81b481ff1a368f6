// `vllm serve MODEL`: the OpenAI-compatible HTTP server. Flags follow Python vLLM's names.
// This lives in libvllm_server.so with the HTTP stack (libmicrohttpd, which pulls in GnuTLS,
// and prometheus-cpp); the `vllm` program loads it only for `serve`, so `generate` and
// `bench` neither map nor initialize those libraries.
#include <pthread.h>
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <thread>

#include "api/cli/engine_flags.h"
#include "api/llm.h"
#include "api/server/openai_server.h"
#include "api/server/serve_main.h"

namespace vllm::api {
namespace {

int serve_main(int argc, char** argv) {
  CLI::App app{"vllm serve: OpenAI-compatible HTTP server"};
  std::string model;
  api::ServerConfig sc;
  cli::EngineFlags flags;
  app.add_option("model", model, "model folder or .gguf file")->required();
  app.add_option("--host", sc.host, "address to listen on");
  app.add_option("--port", sc.port, "port to listen on (0: any free port)");
  app.add_option("--served-model-name", sc.served_model_names,
                 "model name(s) in the API (default: the model path)");
  app.add_option("--api-key", sc.api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  app.add_option("--reasoning-parser", sc.reasoning_parser,
                 "split <think> reasoning out of chat output ('qwen3')");
  flags.add(app);
  app.add_option("--max-waiting-requests", sc.max_waiting_requests,
                 "queued requests beyond which the server answers 503");
  app.add_option("--max-request-bytes", sc.max_body_bytes,
                 "largest request body accepted (413 beyond; chunked bodies too)");
  app.add_option("--request-read-timeout", sc.request_timeout_s,
                 "seconds a connection has to deliver a whole request (slow clients are cut)")
      ->check(CLI::Range(1, 3600));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const engine::EngineConfig ec = flags.resolve();

  // Signals go to one waiting thread (blocked everywhere else, set before any thread starts);
  // a write to a hung-up client must fail, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto llm = api::LLM::load(model, ec);
  api::OpenAIServer server(*llm, sc);
  if (!server.bind()) return 1;
  std::thread sig([&] {
    int s = 0;
    sigwait(&set, &s);
    std::fprintf(stderr, "vllm.cpp: signal %d, shutting down\n", s);
    server.stop();
  });
  sig.detach();
  const auto& cfg = llm->engine().config();
  std::printf("vllm.cpp serving %s on http://%s:%d (max_model_len=%d, kv blocks=%lld x %d)\n",
              server.model_name().c_str(), sc.host.c_str(), server.port(), cfg.max_model_len,
              static_cast<long long>(cfg.num_gpu_blocks.value_or(0)), cfg.block_size);
  std::fflush(stdout);
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
