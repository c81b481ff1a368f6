/* vllm.cpp C API: a stable C ABI over the engine.
 *
 * Handles are opaque. Option and parameter structs start with `struct_size` and are filled by
 * their *_init function first, so fields can be appended without breaking old callers.
 * Functions that fail return NULL or a non-zero vllm_status and set a thread-local message
 * readable with vllm_last_error(). Strings returned in `char**` are owned by the caller and
 * released with vllm_string_free(). All functions are thread-safe: an engine runs its own
 * engine thread and may be used from many threads at once. */
#ifndef VLLM_H_
#define VLLM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VLLM_ABI_VERSION 1

#if defined(__GNUC__)
#define VLLM_API __attribute__((visibility("default")))
#else
#define VLLM_API
#endif

typedef enum vllm_status {
  VLLM_OK = 0,
  VLLM_ERROR_INVALID_ARGUMENT = 1, /* bad parameters or request (message says which) */
  VLLM_ERROR_LOAD = 2,             /* the model could not be loaded */
  VLLM_ERROR_TIMEOUT = 3,          /* vllm_request_wait: nothing new within the timeout */
  VLLM_ERROR_CANCELLED = 4,        /* the request was cancelled (or a callback stopped it) */
  VLLM_ERROR_OVERLOADED = 5,       /* too many requests waiting */
  VLLM_ERROR_INTERNAL = 6
} vllm_status;

typedef struct vllm_engine vllm_engine;
typedef struct vllm_request vllm_request;

typedef struct vllm_engine_options {
  size_t struct_size;
  int32_t max_num_seqs;           /* 0: default */
  int32_t max_model_len;          /* 0: the model's */
  int32_t max_num_batched_tokens; /* 0: default */
  int32_t block_size;             /* 0: default (16) */
  int32_t enable_prefix_caching;  /* 1 (default) or 0 */
  int64_t kv_cache_memory_bytes;  /* 0: default (1 GiB) */
} vllm_engine_options;

typedef struct vllm_sampling_params {
  size_t struct_size;
  int32_t max_tokens; /* default 16; 0: as many as fit in max_model_len */
  float temperature;  /* default 1.0; 0 = greedy */
  float top_p;        /* default 1.0 */
  int32_t top_k;      /* default 0 (off) */
  float min_p;        /* default 0 */
  float presence_penalty;
  float frequency_penalty;
  float repetition_penalty; /* default 1.0 */
  int32_t has_seed;         /* use `seed` when non-zero */
  uint64_t seed;
  int32_t ignore_eos;
  const char* const* stop; /* stop strings, `num_stop` of them (may be NULL) */
  size_t num_stop;
} vllm_sampling_params;

/* Result of a finished request. */
typedef struct vllm_completion {
  size_t struct_size;
  char* text; /* caller frees with vllm_string_free */
  int64_t prompt_tokens;
  int64_t completion_tokens;
  char finish_reason[16]; /* "stop", "length" or "abort" */
} vllm_completion;

/* Streaming callback: gets each new piece of text (not NUL-terminated: use len). Return 0 to
 * continue, non-zero to cancel the request. */
typedef int (*vllm_stream_callback)(const char* text, size_t len, void* user_data);

VLLM_API int vllm_abi_version(void);
VLLM_API const char* vllm_version(void);
/* The last error message of the calling thread ("" if none). Valid until the next call. */
VLLM_API const char* vllm_last_error(void);
VLLM_API void vllm_string_free(char* s);

VLLM_API void vllm_engine_options_init(vllm_engine_options* opts);
VLLM_API void vllm_sampling_params_init(vllm_sampling_params* params);
VLLM_API void vllm_completion_init(vllm_completion* out);
/* Frees the text of a completion filled by this API (the struct itself is the caller's). */
VLLM_API void vllm_completion_clear(vllm_completion* out);

/* Loads a model (.gguf file or Hugging Face folder). opts may be NULL. NULL on failure. */
VLLM_API vllm_engine* vllm_engine_load(const char* model_path, const vllm_engine_options* opts);
/* Cancels whatever is still running and frees the engine. NULL is a no-op. */
VLLM_API void vllm_engine_free(vllm_engine* engine);

/* Blocking completion of a text prompt. params may be NULL (defaults). */
VLLM_API vllm_status vllm_complete(vllm_engine* engine, const char* prompt,
                                   const vllm_sampling_params* params, vllm_completion* out);
/* Blocking chat completion: messages_json is an OpenAI message list, e.g.
 * [{"role":"user","content":"Hi"}]; the model's chat template renders it. */
VLLM_API vllm_status vllm_chat(vllm_engine* engine, const char* messages_json,
                               const vllm_sampling_params* params, vllm_completion* out);
/* Like vllm_complete, calling `cb` with each new piece of text as it is produced. `out` may
 * be NULL; if given, it receives the whole result. */
VLLM_API vllm_status vllm_complete_stream(vllm_engine* engine, const char* prompt,
                                          const vllm_sampling_params* params,
                                          vllm_stream_callback cb, void* user_data,
                                          vllm_completion* out);

/* Non-blocking: submits a prompt and returns at once (NULL on error). */
VLLM_API vllm_request* vllm_request_submit(vllm_engine* engine, const char* prompt,
                                           const vllm_sampling_params* params);
/* Waits up to timeout_ms (negative: forever) for the request to finish. VLLM_OK when it has
 * finished (then `out`, if not NULL, gets the result), VLLM_ERROR_TIMEOUT otherwise. */
VLLM_API vllm_status vllm_request_wait(vllm_request* req, int64_t timeout_ms, vllm_completion* out);
/* Asks the engine to stop the request; a later wait reports finish_reason "abort". */
VLLM_API void vllm_request_cancel(vllm_request* req);
/* Cancels if still running, then frees. NULL is a no-op. */
VLLM_API void vllm_request_free(vllm_request* req);

#ifdef __cplusplus
}
#endif

#endif /* VLLM_H_ */
