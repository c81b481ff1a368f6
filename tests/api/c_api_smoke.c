/* A plain C program linked against libvllm.so: loads the model named on the command line,
 * runs a greedy completion, a streamed one, a chat and a submitted-then-cancelled request, and
 * prints one line per check. Exit status 0 only if every check passed. */
#include <stdio.h>
#include <string.h>

#include "vllm.h"

static int failures = 0;

static void check(int ok, const char* what) {
  printf("%s %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) {
    printf("  last error: %s\n", vllm_last_error());
    failures++;
  }
}

struct collected {
  char text[4096];
  size_t len;
  int calls;
};

static int on_text(const char* text, size_t len, void* user) {
  struct collected* c = (struct collected*)user;
  if (c->len + len < sizeof(c->text)) {
    memcpy(c->text + c->len, text, len);
    c->len += len;
    c->text[c->len] = '\0';
  }
  c->calls++;
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]);
    return 2;
  }
  check(vllm_abi_version() == VLLM_ABI_VERSION, "abi version matches the header");
  check(strlen(vllm_version()) > 0, "version string");
  check(vllm_engine_load("/nonexistent/model.gguf", NULL) == NULL && strlen(vllm_last_error()) > 0,
        "loading a missing file fails with a message");

  vllm_engine_options opts;
  vllm_engine_options_init(&opts);
  opts.kv_cache_memory_bytes = 128 << 20;
  opts.max_model_len = 2048;
  vllm_engine* e = vllm_engine_load(argv[1], &opts);
  check(e != NULL, "engine loads");
  if (!e) return 1;

  vllm_sampling_params p;
  vllm_sampling_params_init(&p);
  p.temperature = 0.0f;
  p.max_tokens = 8;
  p.ignore_eos = 1;

  vllm_completion a;
  vllm_completion_init(&a);
  vllm_status s = vllm_complete(e, "The capital of France is", &p, &a);
  check(s == VLLM_OK && a.text && strlen(a.text) > 0, "blocking completion");
  check(a.completion_tokens == 8 && strcmp(a.finish_reason, "length") == 0,
        "8 tokens, finish_reason length");
  check(a.prompt_tokens > 0, "prompt tokens counted");
  printf("  text: [%s]\n", a.text ? a.text : "(null)");

  struct collected c;
  memset(&c, 0, sizeof(c));
  vllm_completion b;
  vllm_completion_init(&b);
  s = vllm_complete_stream(e, "The capital of France is", &p, on_text, &c, &b);
  check(s == VLLM_OK && c.calls > 0, "streaming completion calls back");
  check(a.text && strcmp(c.text, a.text) == 0, "streamed text equals the blocking result");
  check(b.text && strcmp(b.text, a.text) == 0, "stream result equals the blocking result");

  vllm_completion ch;
  vllm_completion_init(&ch);
  s = vllm_chat(e, "[{\"role\":\"user\",\"content\":\"Hi\"}]", &p, &ch);
  check(s == VLLM_OK && ch.text && ch.completion_tokens > 0, "chat completion");
  check(vllm_chat(e, "not json", &p, &ch) == VLLM_ERROR_INVALID_ARGUMENT,
        "bad messages json is an invalid argument");

  vllm_sampling_params bad = p;
  bad.temperature = -1.0f;
  check(vllm_complete(e, "x", &bad, &b) == VLLM_ERROR_INVALID_ARGUMENT &&
            strstr(vllm_last_error(), "temperature") != NULL,
        "bad temperature rejected, named in the error");

  /* Long enough that the engine thread cannot finish it (seconds of decoding on any machine)
   * between the submit returning and the cancel: the C API has no way to hold the engine. */
  vllm_sampling_params longp = p;
  longp.max_tokens = 2000;
  vllm_request* r = vllm_request_submit(e, "Once upon a time", &longp);
  check(r != NULL, "non-blocking submit");
  vllm_request_cancel(r);
  vllm_completion rc;
  vllm_completion_init(&rc);
  s = vllm_request_wait(r, 30000, &rc);
  check(s == VLLM_OK && strcmp(rc.finish_reason, "abort") == 0, "cancelled request ends in abort");
  check(rc.completion_tokens < 2000, "cancelled before max_tokens");
  vllm_request_free(r);

  r = vllm_request_submit(e, "Once upon a time", &p);
  s = vllm_request_wait(r, 30000, &rc);
  check(s == VLLM_OK && rc.completion_tokens == 8, "submit + wait completes");
  vllm_request_free(r);

  vllm_completion_clear(&a);
  vllm_completion_clear(&b);
  vllm_completion_clear(&ch);
  vllm_completion_clear(&rc);
  vllm_engine_free(e);
  printf("%s\n", failures ? "FAILED" : "ALL OK");
  return failures ? 1 : 0;
}
