// libFuzzer target: chat-template parse and render with hostile templates and contexts. Input:
// template source, a NUL byte, then a JSON context (messages, tools, kwargs); without the NUL,
// a fixed two-message context. Only ChatTemplateError may come out; the engine's limits must
// stop runaway output, loops and recursion (libFuzzer's -timeout and -rss_limit_mb catch the
// rest).
#include <cstdint>
#include <cstring>
#include <string>

#include "tokenizer/chat_template/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  const char* nul = static_cast<const char*>(std::memchr(p, 0, size));
  const std::string source(p, nul ? static_cast<size_t>(nul - p) : size);
  nlohmann::ordered_json ctx;
  if (nul) {
    ctx = nlohmann::ordered_json::parse(nul + 1, p + size, nullptr, /*allow_exceptions=*/false);
    // The server bounds request nesting at 128 (protocol.h); contexts deeper than that never
    // reach the template engine, so they are not this target's business.
    if (ctx.is_discarded() || ctx.dump().size() > (1u << 20)) return 0;
  }
  if (!ctx.is_object()) {
    ctx = {
        {"messages",
         {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}},
        {"add_generation_prompt", true},
        {"bos_token", "<s>"},
        {"eos_token", "</s>"}};
  }
  try {
    // A fortieth of the default CPU budget per render (50 ms; 200 ms until 2026-12-02): the
    // units that run into the budget (runaway loops the other limits allow, ~3% of the corpus)
    // took ~90% of the fuzzer's time at 200 ms, while a typical unit renders in under 1 ms.
    // The budget check itself is what runs either way.
    vllm::tok::ChatTemplateLimits limits;
    limits.max_render_ms = 50;
    vllm::tok::ChatTemplate t(source, limits);
    t.render_ordered(ctx);
  } catch (const vllm::tok::ChatTemplateError&) {
  }
  return 0;
}
