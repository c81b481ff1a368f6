// The C ABI of include/vllm.h: LLM + AsyncEngine behind opaque handles, exceptions turned
// into status codes and a thread-local error message.
#include "vllm.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "api/llm.h"
#include "api/version.h"
#include "engine/async_engine.h"

struct vllm_engine {
  std::unique_ptr<vllm::api::LLM> llm;
  std::unique_ptr<vllm::engine::AsyncEngine> engine;
  std::atomic<uint64_t> next_id{0};
};

struct vllm_request {
  vllm_engine* engine = nullptr;
  std::string id;
  std::shared_ptr<vllm::engine::RequestStream> stream;
  std::mutex mu;  // one waiter at a time accumulates the outputs
  std::string text;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::string finish_reason;
  std::string error;
  bool done = false;
};

namespace {

using vllm::engine::RequestOutput;
using vllm::engine::RequestStream;

thread_local std::string g_last_error;

vllm_status fail(vllm_status s, const std::string& msg) {
  g_last_error = msg;
  return s;
}

char* dup_string(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// Reads a struct that may come from an older caller: only its first struct_size bytes.
template <typename T>
T read_versioned(const T* in, void (*init)(T*)) {
  T v;
  init(&v);
  if (in) {
    const size_t n = in->struct_size < sizeof(T) ? in->struct_size : sizeof(T);
    std::memcpy(static_cast<void*>(&v), in, n);
    v.struct_size = sizeof(T);
  }
  return v;
}

vllm::engine::SamplingParams to_params(const vllm_sampling_params* in) {
  const vllm_sampling_params p = read_versioned(in, vllm_sampling_params_init);
  vllm::engine::SamplingParams s;
  if (p.max_tokens > 0)
    s.max_tokens = p.max_tokens;
  else if (p.max_tokens == 0)
    s.max_tokens = std::nullopt;
  else
    throw std::invalid_argument("max_tokens must be >= 0");
  s.temperature = p.temperature;
  s.top_p = p.top_p;
  s.top_k = p.top_k;
  s.min_p = p.min_p;
  s.presence_penalty = p.presence_penalty;
  s.frequency_penalty = p.frequency_penalty;
  s.repetition_penalty = p.repetition_penalty;
  if (p.has_seed) s.seed = p.seed;
  s.ignore_eos = p.ignore_eos != 0;
  for (size_t i = 0; i < p.num_stop; ++i) {
    if (!p.stop || !p.stop[i])
      throw std::invalid_argument("stop[" + std::to_string(i) + "] is NULL");
    s.stop.emplace_back(p.stop[i]);
  }
  s.validate();
  return s;
}

// Submits token ids; on failure returns nullptr with the error set.
vllm_request* submit_ids(vllm_engine* e, std::vector<int32_t> ids,
                         const vllm::engine::SamplingParams& sp, vllm_status* status) {
  auto r = std::make_unique<vllm_request>();
  r->engine = e;
  r->id = "capi-" + std::to_string(e->next_id++);
  r->prompt_tokens = static_cast<int64_t>(ids.size());
  try {
    r->stream = e->engine->add_request(r->id, std::move(ids), e->llm->with_model_stops(sp));
  } catch (const vllm::engine::EngineOverloaded& ex) {
    *status = fail(VLLM_ERROR_OVERLOADED, ex.what());
    return nullptr;
  }
  const std::string err = r->stream->wait_admitted();
  if (!err.empty()) {
    *status = fail(VLLM_ERROR_INVALID_ARGUMENT, err);
    return nullptr;
  }
  *status = VLLM_OK;
  return r.release();
}

// Applies one output to the request; calls cb with new text (non-zero return: cancel).
void absorb(vllm_request* r, RequestOutput& o, vllm_stream_callback cb, void* user,
            bool* cancelled) {
  r->text += o.text_delta;
  if (o.num_output_tokens > r->completion_tokens) r->completion_tokens = o.num_output_tokens;
  if (cb && !o.text_delta.empty() && !*cancelled &&
      cb(o.text_delta.data(), o.text_delta.size(), user) != 0) {
    *cancelled = true;
    r->engine->engine->abort(r->id);
  }
  if (o.finished) {
    r->done = true;
    r->finish_reason = o.finish_reason;
    r->error = o.error;
  }
}

// Waits for the end (timeout_ms < 0: forever).
vllm_status wait_request(vllm_request* r, int64_t timeout_ms, vllm_stream_callback cb, void* user,
                         vllm_completion* out) {
  std::lock_guard<std::mutex> lk(r->mu);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool cancelled = false;
  while (!r->done) {
    auto wait = std::chrono::milliseconds(100);
    if (timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return fail(VLLM_ERROR_TIMEOUT, "the request is still running");
      wait = std::min(wait, left);
    }
    RequestOutput o;
    const auto res = r->stream->pop(o, wait);
    if (res == RequestStream::PopResult::kOutput) absorb(r, o, cb, user, &cancelled);
    if (res == RequestStream::PopResult::kClosed && !r->done) {
      r->done = true;
      r->finish_reason = "abort";
    }
  }
  if (out) {
    vllm_completion_clear(out);
    out->text = dup_string(r->text);
    out->prompt_tokens = r->prompt_tokens;
    out->completion_tokens = r->completion_tokens;
    std::snprintf(out->finish_reason, sizeof(out->finish_reason), "%s", r->finish_reason.c_str());
  }
  if (!r->error.empty()) return fail(VLLM_ERROR_INTERNAL, r->error);
  if (cancelled) return fail(VLLM_ERROR_CANCELLED, "cancelled by the stream callback");
  return VLLM_OK;
}

template <typename F>
vllm_status guarded(F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    return fail(VLLM_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return fail(VLLM_ERROR_INTERNAL, e.what());
  }
}

vllm_status run_blocking(vllm_engine* e, std::vector<int32_t> ids,
                         const vllm_sampling_params* params, vllm_stream_callback cb, void* user,
                         vllm_completion* out) {
  vllm_status st = VLLM_OK;
  vllm_request* r = submit_ids(e, std::move(ids), to_params(params), &st);
  if (!r) return st;
  const vllm_status s = wait_request(r, -1, cb, user, out);
  vllm_request_free(r);
  return s;
}

}  // namespace

extern "C" {

int vllm_abi_version(void) { return VLLM_ABI_VERSION; }
const char* vllm_version(void) { return vllm::api::kVersion; }
const char* vllm_last_error(void) { return g_last_error.c_str(); }
void vllm_string_free(char* s) { std::free(s); }

void vllm_engine_options_init(vllm_engine_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
  o->enable_prefix_caching = 1;
}

void vllm_sampling_params_init(vllm_sampling_params* p) {
  if (!p) return;
  std::memset(p, 0, sizeof(*p));
  p->struct_size = sizeof(*p);
  p->max_tokens = 16;
  p->temperature = 1.0f;
  p->top_p = 1.0f;
  p->repetition_penalty = 1.0f;
}

void vllm_completion_init(vllm_completion* out) {
  if (!out) return;
  std::memset(out, 0, sizeof(*out));
  out->struct_size = sizeof(*out);
}

void vllm_completion_clear(vllm_completion* out) {
  if (!out) return;
  std::free(out->text);
  out->text = nullptr;
}

vllm_engine* vllm_engine_load(const char* model_path, const vllm_engine_options* opts) {
  if (!model_path) {
    fail(VLLM_ERROR_INVALID_ARGUMENT, "model_path is NULL");
    return nullptr;
  }
  try {
    const vllm_engine_options o = read_versioned(opts, vllm_engine_options_init);
    vllm::engine::EngineConfig c;
    if (o.max_num_seqs > 0) c.max_num_seqs = o.max_num_seqs;
    if (o.max_model_len > 0) c.max_model_len = o.max_model_len;
    if (o.max_num_batched_tokens > 0) c.max_num_batched_tokens = o.max_num_batched_tokens;
    if (o.block_size > 0) c.block_size = o.block_size;
    if (o.kv_cache_memory_bytes > 0) c.kv_cache_memory_bytes = o.kv_cache_memory_bytes;
    c.enable_prefix_caching = o.enable_prefix_caching != 0;
    auto e = std::make_unique<vllm_engine>();
    e->llm = vllm::api::LLM::load(model_path, c);
    e->engine = std::make_unique<vllm::engine::AsyncEngine>(e->llm->engine());
    g_last_error.clear();
    return e.release();
  } catch (const std::exception& ex) {
    fail(VLLM_ERROR_LOAD, std::string("cannot load ") + model_path + ": " + ex.what());
    return nullptr;
  }
}

void vllm_engine_free(vllm_engine* e) {
  if (!e) return;
  e->engine->shutdown();
  delete e;
}

vllm_status vllm_complete(vllm_engine* e, const char* prompt, const vllm_sampling_params* params,
                          vllm_completion* out) {
  return vllm_complete_stream(e, prompt, params, nullptr, nullptr, out);
}

vllm_status vllm_complete_stream(vllm_engine* e, const char* prompt,
                                 const vllm_sampling_params* params, vllm_stream_callback cb,
                                 void* user, vllm_completion* out) {
  if (!e || !prompt) return fail(VLLM_ERROR_INVALID_ARGUMENT, "engine and prompt are required");
  return guarded([&] {
    return run_blocking(e, e->llm->tokenizer().encode(prompt, true), params, cb, user, out);
  });
}

vllm_status vllm_chat(vllm_engine* e, const char* messages_json, const vllm_sampling_params* params,
                      vllm_completion* out) {
  if (!e || !messages_json)
    return fail(VLLM_ERROR_INVALID_ARGUMENT, "engine and messages_json are required");
  return guarded([&] {
    nlohmann::ordered_json msgs;
    try {
      msgs = nlohmann::ordered_json::parse(messages_json);
    } catch (const std::exception& ex) {
      throw std::invalid_argument(std::string("messages_json: ") + ex.what());
    }
    if (!msgs.is_array() || msgs.empty())
      throw std::invalid_argument("messages_json must be a non-empty JSON array of messages");
    const std::string prompt =
        e->llm->apply_chat_template(msgs, nullptr, true, nlohmann::ordered_json::object());
    return run_blocking(e, e->llm->tokenizer().encode(prompt, false), params, nullptr, nullptr,
                        out);
  });
}

vllm_request* vllm_request_submit(vllm_engine* e, const char* prompt,
                                  const vllm_sampling_params* params) {
  if (!e || !prompt) {
    fail(VLLM_ERROR_INVALID_ARGUMENT, "engine and prompt are required");
    return nullptr;
  }
  try {
    vllm_status st = VLLM_OK;
    return submit_ids(e, e->llm->tokenizer().encode(prompt, true), to_params(params), &st);
  } catch (const std::exception& ex) {
    fail(VLLM_ERROR_INVALID_ARGUMENT, ex.what());
    return nullptr;
  }
}

vllm_status vllm_request_wait(vllm_request* r, int64_t timeout_ms, vllm_completion* out) {
  if (!r) return fail(VLLM_ERROR_INVALID_ARGUMENT, "request is NULL");
  return guarded([&] { return wait_request(r, timeout_ms, nullptr, nullptr, out); });
}

void vllm_request_cancel(vllm_request* r) {
  if (r) r->engine->engine->abort(r->id);
}

void vllm_request_free(vllm_request* r) {
  if (!r) return;
  if (!r->done && !r->stream->finished()) r->engine->engine->abort(r->id);
  delete r;
}

}  // extern "C"
