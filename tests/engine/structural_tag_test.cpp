// Structural tags against xgrammar's own answers (tests/golden/structured_output/
// structural_tags.json, made by tools/make_structural_tag_goldens.py): every text is accepted
// as a prefix, and as a whole, exactly when xgrammar accepts it; the tags vLLM builds for
// hermes tool calls also run on the real Qwen3 vocabulary, token by token, each token in the
// mask before it. Unsupported formats are refused naming the path to them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "structured_output_test_util.h"

namespace vllm::engine::so {
namespace {

using namespace testing;

const nlohmann::json& goldens() {
  static nlohmann::json g = nlohmann::json::parse(
      read_file(source_dir() + "/tests/golden/structured_output/structural_tags.json"));
  return g;
}

// One token per byte (and a stop token), so any text can be fed.
struct ByteVocab {
  std::shared_ptr<const VocabIndex> index;
  int32_t eos = 256;
  ByteVocab() {
    std::vector<std::string> t;
    for (int b = 0; b < 256; ++b) t.push_back(std::string(1, static_cast<char>(b)));
    t.push_back("<eos>");
    index = VocabIndex::from_strings(t, {eos});
  }
};

GrammarCompiler& byte_compiler() {
  static ByteVocab v;
  static GrammarCompiler c(v.index);
  return c;
}

void check_texts(const std::shared_ptr<const CompiledGrammar>& g, const nlohmann::json& texts,
                 const std::string& name, int& checked) {
  for (const auto& t : texts) {
    const std::string text = t["text"].get<std::string>();
    Matcher m(g);
    const bool prefix = m.accept_bytes(text);
    EXPECT_EQ(prefix, t["prefix"].get<bool>()) << name << ": prefix " << text;
    EXPECT_EQ(prefix && m.is_complete(), t["complete"].get<bool>()) << name << ": whole " << text;
    ++checked;
  }
}

TEST(StructuralTag, AnswersAsXgrammar) {
  int checked = 0;
  for (const auto& c : goldens()["grammars"]) {
    const std::string name = c["name"].get<std::string>();
    std::shared_ptr<const CompiledGrammar> g;
    ASSERT_NO_THROW(
        g = byte_compiler().compile(GrammarKind::kStructuralTag, c["structural_tag"].dump()))
        << name;
    check_texts(g, c["texts"], name, checked);
  }
  auto tool_tags = [&](const char* parser, const nlohmann::json& cases) {
    for (const auto& c : cases) {
      if (c["structural_tag"].is_null()) continue;
      const std::string name = std::string(parser) + " " + c["name"].get<std::string>();
      auto g = byte_compiler().compile(GrammarKind::kStructuralTag, c["structural_tag"].dump());
      check_texts(g, c["texts"], name, checked);
    }
  };
  tool_tags("hermes", goldens()["hermes"]);
  for (const auto& [parser, cases] : goldens()["builtin"].items()) tool_tags(parser.c_str(), cases);
  // gpt-oss's structured outputs around harmony's channels (vLLM's _adjust_output_format).
  tool_tags("harmony", goldens()["harmony_outputs"]);
  EXPECT_GT(checked, 2500);
}

TEST(StructuralTag, HermesCallsOnTheQwen3Vocabulary) {
  // A strict call spelled by Qwen3's tokenizer (<tool_call> is one token there): every token is
  // in the mask before it is accepted, and the call completes; a wrong argument type dies.
  const nlohmann::json* tag = nullptr;
  for (const auto& c : goldens()["hermes"])
    if (c["name"] == "strict_auto_parNone_None") tag = &c["structural_tag"];
  ASSERT_NE(tag, nullptr);
  auto g = qwen3_compiler().compile(GrammarKind::kStructuralTag, tag->dump());
  const std::string ok =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\", \"unit\": \"c\"}}\n</tool_call>";
  Matcher m(g);
  std::vector<uint32_t> w;
  for (int32_t t : qwen3_tok().encode(ok, false)) {
    w.assign(m.mask_words(), 0);
    m.fill_mask(w);
    ASSERT_TRUE(bit(w, t)) << "token " << t << " not in the mask";
    ASSERT_TRUE(m.accept(t));
  }
  EXPECT_TRUE(m.is_complete());
  Matcher bad(g);
  bool all = true;
  for (int32_t t : qwen3_tok().encode(
           "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}}", false))
    all = all && bad.accept(t);
  EXPECT_FALSE(all);
}

// One schema held by many tags (a harmony call spells one tool's arguments twelve ways) is one
// rule: a thousand tags of it compile, and each still checks its arguments.
TEST(StructuralTag, RepeatedSchemasAreOneRule) {
  const nlohmann::json schema = {{"type", "object"},
                                 {"properties",
                                  {{"a", {{"type", "string"}}},
                                   {"b", {{"type", "integer"}}},
                                   {"c", {{"type", "array"}, {"items", {{"type", "number"}}}}}}},
                                 {"required", {"a"}}};
  nlohmann::json tags = nlohmann::json::array();
  for (int i = 0; i < 1000; ++i)
    tags.push_back({{"type", "tag"},
                    {"begin", "<" + std::to_string(i) + ">"},
                    {"content", {{"type", "json_schema"}, {"json_schema", schema}}},
                    {"end", "</>"}});
  const nlohmann::json st = {{"type", "structural_tag"},
                             {"format", {{"type", "or"}, {"elements", tags}}}};
  std::shared_ptr<const CompiledGrammar> g;
  ASSERT_NO_THROW(g = byte_compiler().compile(GrammarKind::kStructuralTag, st.dump()));
  Matcher ok(g);
  EXPECT_TRUE(ok.accept_bytes(R"(<999>{"a": "x", "c": [1.5]}</>)") && ok.is_complete());
  Matcher bad(g);
  EXPECT_FALSE(bad.accept_bytes(R"(<7>{"b": 1}</>)") && bad.is_complete());
}

// vLLM's disable_any_whitespace (CompilerConfig::compact_json): JSON schema and json_object
// outputs without whitespace between tokens, as xgrammar answers with any_whitespace=False and
// separators "," / ":" (checked against xgrammar 0.2.9 by hand for these texts); a structural
// tag's JSON keeps its whitespace, as in vLLM.
TEST(StructuralTag, CompactJsonIsWhitespaceFree) {
  static ByteVocab v;
  CompilerConfig cfg;
  cfg.compact_json = true;
  GrammarCompiler compact(v.index, cfg);
  const std::string schema =
      R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array",)"
      R"("items":{"type":"integer"}}}})";
  auto accepts = [](const std::shared_ptr<const CompiledGrammar>& g, const std::string& t) {
    Matcher m(g);
    return m.accept_bytes(t) && m.is_complete();
  };
  const auto g = compact.compile(GrammarKind::kJsonSchema, schema);
  EXPECT_TRUE(accepts(g, R"({"a":1,"b":[1,2]})"));
  EXPECT_TRUE(accepts(g, "{}"));
  for (const char* t : {R"({"a": 1, "b": [1, 2]})", R"({ "a":1})", R"({"a":1 })",
                        R"({"a":1, "b":[1]})", R"({"b":[1 ,2]})", "{ }"})
    EXPECT_FALSE(accepts(g, t)) << t;
  const auto obj = compact.compile(GrammarKind::kJsonObject, "");
  EXPECT_TRUE(accepts(obj, R"({"x":{"y":[1,"a b"]}})"));
  EXPECT_FALSE(accepts(obj, R"({"x": 1})"));
  // The default compiler takes both; a structural tag's JSON under compact_json too.
  EXPECT_TRUE(accepts(byte_compiler().compile(GrammarKind::kJsonSchema, schema),
                      R"({"a": 1, "b": [1, 2]})"));
  const nlohmann::json tag = {
      {"type", "structural_tag"},
      {"format", {{"type", "json_schema"}, {"json_schema", nlohmann::json::parse(schema)}}}};
  EXPECT_TRUE(accepts(compact.compile(GrammarKind::kStructuralTag, tag.dump()),
                      R"({"a": 1, "b": [1, 2]})"));
}

TEST(StructuralTag, UnsupportedFormatsAreNamed) {
  auto err = [](const std::string& text) {
    try {
      byte_compiler().compile(GrammarKind::kStructuralTag, text);
    } catch (const GrammarError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err(R"({"type":"structural_tag","format":{"type":"token","token":5}})")
                .find("format type \"token\" is not supported"),
            std::string::npos);
  EXPECT_NE(err(R"({"type":"structural_tag","format":{"type":"json_schema","json_schema":{},)"
                R"("style":"deepseek_xml"}})")
                .find("style"),
            std::string::npos);
  EXPECT_NE(err(R"({"type":"structural_tag","format":{"type":"any_text","max_tokens":5}})")
                .find("max_tokens"),
            std::string::npos);
  EXPECT_NE(err(R"({"type":"structural_tag","format":{"type":"sequence","elements":[)"
                R"({"type":"const_string","value":"a"},{"type":"nope"}]}})")
                .find("elements[1].type: unknown format type \"nope\""),
            std::string::npos);
  EXPECT_NE(
      err(R"({"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<a"],)"
          R"("tags":[{"type":"tag","begin":"<b>","content":{"type":"any_text"},"end":"x"}]}})")
          .find("starts with none of the triggers"),
      std::string::npos);
  EXPECT_NE(err(R"({"type":"structural_tag"})").find("needs a format"), std::string::npos);
  EXPECT_NE(err("[1").find("not valid JSON"), std::string::npos);
  // Hostile nesting is refused, not recursed into.
  std::string deep = R"({"type":"const_string","value":"x"})";
  for (int i = 0; i < 200; ++i) deep = R"({"type":"optional","content":)" + deep + "}";
  EXPECT_NE(err(R"({"type":"structural_tag","format":)" + deep + "}").find("nested deeper"),
            std::string::npos);
}

}  // namespace
}  // namespace vllm::engine::so
