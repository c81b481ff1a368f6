// libFuzzer target: the server's request parsing. The first byte picks the endpoint (4: a
// /v1/responses body, 5: a /v1/messages body, each translated to its chat request; 224-229: a
// /score body, 230-235 a /rerank one, 236-239 a /classify one; 240 and above: a /v1/embeddings
// body, 248 and above a /pooling one); the rest is the body. A parsed chat
// request is also rendered through the real Qwen3 chat template (request content reaches the
// template engine as values). Only ApiError and ChatTemplateError may come out: anything else would
// be a 500 or a crash in the server. A chat request's structural tag (its own, or the strict-tools
// tag built for it under hermes) is compiled on a byte vocabulary: GrammarError is the only way
// out.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "api/server/anthropic_api.h"
#include "api/server/embeddings.h"
#include "api/server/protocol.h"
#include "api/server/responses_api.h"
#include "api/server/scoring.h"
#include "api/server/strict_tools.h"
#include "engine/structured_output/structured_output.h"
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

vllm::engine::so::GrammarCompiler& byte_compiler() {
  static vllm::engine::so::GrammarCompiler c = [] {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
    t.push_back("<eos>");
    return vllm::engine::so::GrammarCompiler(vllm::engine::so::VocabIndex::from_strings(t, {256}));
  }();
  return c;
}

void compile_tags(const vllm::api::ChatRequest& r) {
  using vllm::engine::so::GrammarKind;
  try {
    if (r.constraint && r.constraint->kind == GrammarKind::kStructuralTag)
      byte_compiler().compile(GrammarKind::kStructuralTag, r.constraint->text);
    if (r.constraint)
      byte_compiler().compile(GrammarKind::kStructuralTag,
                              vllm::api::harmony_output_tag(*r.constraint).dump());
    for (auto k : {vllm::api::ToolParserKind::kHermes, vllm::api::ToolParserKind::kLlama3Json,
                   vllm::api::ToolParserKind::kDeepseekV3, vllm::api::ToolParserKind::kQwen3Coder,
                   vllm::api::ToolParserKind::kMinimaxM2, vllm::api::ToolParserKind::kGlm45,
                   vllm::api::ToolParserKind::kKimiK2, vllm::api::ToolParserKind::kOpenAI})
      if (auto t = vllm::api::tool_structural_tag(k, r, r.constraint,
                                                  vllm::api::ToolStrictLevel::kParameter))
        byte_compiler().compile(GrammarKind::kStructuralTag, t->dump());
  } catch (const vllm::engine::so::GrammarError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vllm::api;
  if (size < 1) return 0;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const ojson j = parse_body(body);
    // The older seeds keep their endpoint.
    const int ep = data[0] >= 240 ? 6 : data[0] >= 224 ? 7 : data[0] % 6;
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
        compile_tags(r);
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
      case 6:  // 248 and above: vLLM's /pooling, the same body with a task
        parse_embedding_request(j, data[0] >= 248 ? PoolingApi::kPooling : PoolingApi::kEmbeddings);
        break;
      case 7:
        if (data[0] >= 236)
          parse_embedding_request(j, PoolingApi::kClassify);
        else
          parse_score_request(j, data[0] >= 230);
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
