// `vllm serve MODEL`: the OpenAI-compatible HTTP server. Flags follow Python vLLM's names.
// This lives in libvllm_server.so with the HTTP stack (cpp-httplib, which pulls in OpenSSL,
// and prometheus-cpp); the `vllm` program loads it only for `serve`, so `generate` and
// `bench` neither map nor initialize those libraries.
#include <pthread.h>
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <thread>

#include "api/llm.h"
#include "api/server/openai_server.h"
#include "api/server/serve_main.h"

namespace vllm::api {
namespace {

int serve_main(int argc, char** argv) {
  CLI::App app{"vllm serve: OpenAI-compatible HTTP server"};
  std::string model;
  api::ServerConfig sc;
  engine::EngineConfig ec;
  std::optional<int64_t> kv_bytes, num_blocks;
  bool prefix = true;
  app.add_option("model", model, "model folder or .gguf file")->required();
  app.add_option("--host", sc.host, "address to listen on");
  app.add_option("--port", sc.port, "port to listen on (0: any free port)");
  app.add_option("--served-model-name", sc.served_model_names,
                 "model name(s) in the API (default: the model path)");
  app.add_option("--api-key", sc.api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  app.add_option("--reasoning-parser", sc.reasoning_parser,
                 "split <think> reasoning out of chat output ('qwen3')");
  app.add_option("--max-num-seqs", ec.max_num_seqs, "requests in one batch at most");
  app.add_option("--max-model-len", ec.max_model_len, "context length (default: the model's)");
  app.add_option("--max-num-batched-tokens", ec.max_num_batched_tokens, "tokens per step");
  app.add_option("--block-size", ec.block_size, "KV cache block size in tokens");
  app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", prefix,
               "reuse KV blocks of shared prompt prefixes");
  app.add_option("--kv-cache-memory", kv_bytes, "KV cache size in bytes");
  app.add_option("--num-gpu-blocks-override", num_blocks, "exactly this many KV blocks");
  app.add_option("--max-waiting-requests", sc.max_waiting_requests,
                 "queued requests beyond which the server answers 503");
  app.add_option("--seed", ec.seed, "seed of requests that bring none");
  app.add_flag("--enforce-eager", ec.enforce_eager, "no decode step graphs");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  ec.enable_prefix_caching = prefix;
  if (kv_bytes) ec.kv_cache_memory_bytes = *kv_bytes;
  if (num_blocks) ec.num_gpu_blocks = *num_blocks;

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
