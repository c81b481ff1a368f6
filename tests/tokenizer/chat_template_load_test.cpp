// LLM::load parses the model's chat template once; a template that does not parse stops the
// load with an error naming the file it came from and the template line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/llm.h"

namespace {

using nlohmann::json;

std::string tiny_models() {
  if (const char* p = std::getenv("VLLM_TINY_MODELS")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/tiny-models";
}

TEST(ChatTemplateLoad, BrokenModelTemplateNamesItsFile) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(tiny_models()) / "qwen3";
  ASSERT_TRUE(fs::exists(src / "tokenizer_config.json")) << "missing test model " << src;
  const fs::path dir = fs::path(testing::TempDir()) / "broken_chat_template_model";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "tokenizer_config.json")
      fs::create_symlink(e.path(), dir / e.path().filename());
  std::ifstream in(src / "tokenizer_config.json");
  json cfg = json::parse(in);
  cfg["chat_template"] = "{{ bos_token }}\n{% extends 'base.html' %}";
  std::ofstream(dir / "tokenizer_config.json") << cfg.dump();
  try {
    vllm::api::LLM::load(dir.string(), vllm::engine::EngineConfig{});
    FAIL() << "a model with a broken chat template loaded";
  } catch (const std::exception& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(dir.string() + " (tokenizer_config.json chat_template)"), std::string::npos)
        << what;
    EXPECT_NE(what.find("line 2: unsupported tag 'extends'"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

}  // namespace
