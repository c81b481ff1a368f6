// LLM::load parses the model's chat template once; a template that does not parse stops the
// load with an error naming the file it came from and the template line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/llm.h"
#include "model/load_error.h"
#include "model/tokenizer_loader.h"

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

// The qwen3 tiny model's files linked into a fresh folder, but tokenizer_config.json written
// from `cfg` (the original's when null) and `extra` files added.
std::filesystem::path model_copy(const std::string& name, const json& cfg,
                                 const std::vector<std::pair<std::string, std::string>>& extra) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(tiny_models()) / "qwen3";
  const fs::path dir = fs::path(testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "tokenizer_config.json")
      fs::create_symlink(e.path(), dir / e.path().filename());
  json c = cfg;
  if (c.is_null()) c = json::parse(std::ifstream(src / "tokenizer_config.json"));
  std::ofstream(dir / "tokenizer_config.json") << c.dump();
  for (const auto& [file, text] : extra) std::ofstream(dir / file) << text;
  return dir;
}

// chat_template.jinja (transformers >= 4.56 saves the template there) replaces
// tokenizer_config.json's, as transformers' tokenizer and vLLM read it.
TEST(ChatTemplateLoad, JinjaFileWinsOverTokenizerConfig) {
  const auto dir = model_copy("jinja_template_model", nullptr,
                              {{"chat_template.jinja", "{{ messages[0]['content'] }}!"}});
  auto t = vllm::model::load_tokenizer(dir.string());
  EXPECT_EQ(t->chat_template(), "{{ messages[0]['content'] }}!");
  EXPECT_EQ(t->chat_template_source(), "chat_template.jinja");
  auto llm = vllm::api::LLM::load(dir.string(), vllm::engine::EngineConfig{});
  nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
  msgs.push_back({{"role", "user"}, {"content", "hi"}});
  EXPECT_EQ(llm->apply_chat_template(msgs, nlohmann::ordered_json::array(), true,
                                     nlohmann::ordered_json::object()),
            "hi!");
  std::filesystem::remove_all(dir);
}

// chat_template.json (a multimodal processor's: Qwen2.5-VL, Mistral Small 3.1) serves when the
// tokenizer has no template; a malformed one is an error naming it.
TEST(ChatTemplateLoad, ProcessorJsonWhenTheTokenizerHasNone) {
  json cfg = json::parse(
      std::ifstream(std::filesystem::path(tiny_models()) / "qwen3" / "tokenizer_config.json"));
  cfg.erase("chat_template");
  const auto dir =
      model_copy("json_template_model", cfg,
                 {{"chat_template.json", R"({"chat_template": "[{{ messages|length }}]"})"}});
  auto t = vllm::model::load_tokenizer(dir.string());
  EXPECT_EQ(t->chat_template(), "[{{ messages|length }}]");
  EXPECT_EQ(t->chat_template_source(), "chat_template.json");
  // The tokenizer's own template wins over the processor's.
  const auto both = model_copy("both_templates_model", nullptr,
                               {{"chat_template.json", R"({"chat_template": "x"})"}});
  EXPECT_EQ(vllm::model::load_tokenizer(both.string())->chat_template_source(),
            "tokenizer_config.json chat_template");
  const auto bad = model_copy("bad_template_json_model", cfg, {{"chat_template.json", "[1, 2"}});
  try {
    vllm::model::load_tokenizer(bad.string());
    FAIL() << "a malformed chat_template.json loaded";
  } catch (const vllm::model::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("chat_template.json"), std::string::npos) << e.what();
  }
  for (const auto& d : {dir, both, bad}) std::filesystem::remove_all(d);
}

}  // namespace
