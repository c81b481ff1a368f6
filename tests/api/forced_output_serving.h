// The chat serving path (prepare_chat, Generation over AsyncEngine) driven without the model a
// parser belongs to: the tiny Qwen3 is made to write a given text by a regex grammar (the
// parsers read text, so ordinary tokens spelling a model's tags read as its own tokens). Shared
// by the harmony and MiniMax-M2 serving tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/llm.h"
#include "api/server/serving.h"

namespace vllm::api::testing {

inline std::string tiny_qwen3() {
  const char* p = std::getenv("VLLM_TINY_MODELS");
  const char* home = std::getenv("HOME");
  return (p ? std::string(p)
            : std::string(home ? home : "/root") + "/.cache/vllm-cpp/tiny-models") +
         "/qwen3";
}

// The regex matching exactly `s` (its metacharacters, the tags' '|' among them, escaped).
inline std::string regex_literal(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (std::string("|.()[]{}*+?^$\\").find(c) != std::string::npos) r += '\\';
    r += c;
  }
  return r;
}

// The tiny Qwen3 behind an AsyncEngine and a ServingContext, loaded once per suite; each test
// is skipped when the model is not there.
class ForcedOutputServing : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(tiny_qwen3() + "/config.json")) return;
    engine::EngineConfig cfg;
    cfg.num_gpu_blocks = 64;
    cfg.block_size = 16;  // block counts here are of 16-slot blocks
    llm_ = LLM::load(tiny_qwen3(), cfg).release();
    engine_ = new engine::AsyncEngine(llm_->engine());
    ctx_ = new ServingContext{*llm_, *engine_, "m"};
  }
  static void TearDownTestSuite() {
    delete ctx_;
    delete engine_;
    delete llm_;
    ctx_ = nullptr;
    engine_ = nullptr;
    llm_ = nullptr;
  }
  void SetUp() override {
    if (!llm_) GTEST_SKIP() << "no tiny model at " << tiny_qwen3();
  }

  // The stream's deltas put together as a message ({reasoning, content, calls}: null where no
  // delta carried that field), and its finish_reason.
  static nlohmann::json streamed(const std::shared_ptr<Generation>& g, std::string& finish) {
    using nlohmann::json;
    std::string reasoning, content;
    bool any_reasoning = false, any_content = false;
    json calls = json::array();
    auto write = [&](const std::string& ev) {
      if (ev.rfind("data: {", 0) != 0) return true;
      const json j = json::parse(ev.substr(6));
      for (const json& ch : j.value("choices", json::array())) {
        const json& d = ch["delta"];
        if (d.contains("reasoning")) {
          reasoning += d["reasoning"].get<std::string>();
          any_reasoning = true;
        }
        if (d.contains("content") && !d["content"].get<std::string>().empty()) {
          content += d["content"].get<std::string>();
          any_content = true;
        }
        for (const json& t : d.value("tool_calls", json::array())) {
          const size_t i = t["index"];
          if (t.contains("id")) {
            EXPECT_EQ(i, calls.size());
            EXPECT_EQ(t["id"].get<std::string>().rfind("chatcmpl-tool-", 0), 0u);
            calls.push_back({{"name", t["function"]["name"]}, {"arguments", ""}});
          }
          calls[i]["arguments"] = calls[i]["arguments"].get<std::string>() +
                                  t["function"]["arguments"].get<std::string>();
        }
        if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
      }
      return true;
    };
    while (g->stream_step(write, std::chrono::milliseconds(200))) {
    }
    return {{"reasoning", any_reasoning ? json(reasoning) : json(nullptr)},
            {"content", any_content ? json(content) : json(nullptr)},
            {"calls", calls}};
  }

  inline static LLM* llm_ = nullptr;
  inline static engine::AsyncEngine* engine_ = nullptr;
  inline static ServingContext* ctx_ = nullptr;
};

}  // namespace vllm::api::testing
