// libFuzzer target: the server's request parsing. The first byte picks the endpoint (4: a
// /v1/responses body, 5: a /v1/messages body, each translated to its chat request); the rest
// is the body. A parsed chat request
// is also rendered through the real Qwen3 chat template (request content reaches the template
// engine as values). Only ApiError and ChatTemplateError may come out: anything else would be a 500
// or a crash in the server.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "api/server/anthropic_api.h"
#include "api/server/protocol.h"
#include "api/server/responses_api.h"
#include "tokenizer/chat_template/chat_template.h"

namespace {

const vllm::tok::ChatTemplate& qwen3_template() {
  static const vllm::tok::ChatTemplate t = [] {
    std::ifstream f(VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer/tokenizer_config.json");
    std::stringstream ss;
    ss << f.rdbuf();
    const auto cfg = nlohmann::json::parse(ss.str());
    return vllm::tok::ChatTemplate(cfg.at("chat_template").get<std::string>());
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vllm::api;
  if (size < 1) return 0;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const ojson j = parse_body(body);
    const int ep = data[0] % 6;
    switch (ep) {
      case 0:
        parse_completion_request(j);
        break;
      case 1:
      case 4:    // /v1/responses, through the chat request it becomes
      case 5: {  // /v1/messages, the same
        ChatRequest r = parse_chat_request(ep == 4   ? responses_to_chat(j, {}).chat
                                           : ep == 5 ? anthropic_to_chat(j).chat
                                                     : j);
        ojson ctx = r.chat_template_kwargs;
        ctx["messages"] = r.messages;
        if (!r.tools.is_null()) ctx["tools"] = r.tools;
        ctx["add_generation_prompt"] = r.add_generation_prompt;
        qwen3_template().render_ordered(ctx);
        break;
      }
      case 2:
        parse_tokenize_request(j);
        break;
      default:
        parse_detokenize_request(j);
        break;
    }
  } catch (const ApiError&) {
  } catch (const vllm::tok::ChatTemplateError&) {
  }
  return 0;
}
