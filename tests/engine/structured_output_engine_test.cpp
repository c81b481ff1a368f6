// What the engine relies on beyond single-request correctness: limits are errors naming the
// limit, one compiled grammar shared by threads gives the same masks, a matcher rebuilt by
// replaying its output tokens (preemption, restart) is in the same state, and copies are
// independent.
#include <gtest/gtest.h>

#include <thread>

#include "structured_output_test_util.h"

namespace vllm::engine::so {
namespace {

using namespace testing;

void expect_error(GrammarKind k, const std::string& text, const std::string& needle) {
  try {
    smollm2_compiler().compile(k, text);
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(StructuredOutputEngine, LimitsAreErrorsNamingTheLimit) {
  std::string big_enum = "{\"enum\": [";
  for (int i = 0; i < 5000; ++i) big_enum += (i ? ",\"v" : "\"v") + std::to_string(i) + "\"";
  expect_error(GrammarKind::kJsonSchema, big_enum + "]}", "over the limit of 4096");
  std::string deep = "true";
  for (int i = 0; i < 300; ++i) deep = "{\"type\":\"array\",\"items\":" + deep + "}";
  expect_error(GrammarKind::kJsonSchema, deep, "deeper than 200 levels");
  expect_error(GrammarKind::kGrammar, "root ::= (\"ab\"{1,10000}){1,10000}", "grammar too large");
  expect_error(GrammarKind::kRegex, "(a{1,5000}){1,5000}", "grammar too large");
  std::string huge = "[";
  for (int i = 0; i < 300; ++i)
    huge += (i ? ",\"" : "\"") + std::string(20000, 'a' + i % 26) + "\"";
  expect_error(GrammarKind::kChoice, huge + "]", "limit");
}

TEST(StructuredOutputEngine, ThreadsShareOneGrammar) {
  // A fresh compiler, so the caches start cold and the threads race to fill them.
  GrammarCompiler c(VocabIndex::build(smollm2_tok()));
  const std::string schema =
      R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"integer"}}},"required":["a","b"]})";
  const auto doc = smollm2_tok().encode(R"({"a": "x y \"z\"", "b": [1, 22, -3]})", false);
  auto masks_of = [&](std::shared_ptr<const CompiledGrammar> g) {
    std::vector<std::vector<uint32_t>> out;
    Matcher m(g);
    for (int32_t t : doc) {
      std::vector<uint32_t> w(m.mask_words());
      m.fill_mask(w);
      out.push_back(w);
      EXPECT_TRUE(m.accept(t));
    }
    return out;
  };
  auto g = c.compile(GrammarKind::kJsonSchema, schema);
  std::vector<std::vector<std::vector<uint32_t>>> res(4);
  std::vector<std::thread> th;
  for (int i = 0; i < 4; ++i) th.emplace_back([&, i] { res[i] = masks_of(g); });
  for (auto& t : th) t.join();
  GrammarCompiler single(VocabIndex::build(smollm2_tok()));
  const auto ref = masks_of(single.compile(GrammarKind::kJsonSchema, schema));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(res[i], ref) << "thread " << i;
  EXPECT_EQ(c.compile(GrammarKind::kJsonSchema, schema).get(), g.get());
}

TEST(StructuredOutputEngine, ReplayAfterResetRestoresTheState) {
  auto g = qwen3_compiler().compile(GrammarKind::kJsonObject, "");
  const auto doc = qwen3_tok().encode(R"({"k": [1, {"n": null}], "s": "é\n")", false);
  Matcher m(g, /*max_rollback=*/4);
  for (int32_t t : doc) ASSERT_TRUE(m.accept(t));
  const std::string key = m.state_key();
  Matcher copy = m;
  std::vector<uint32_t> w1(m.mask_words()), w2(m.mask_words());
  m.fill_mask(w1);
  // Preempted and recomputed from scratch: replaying the kept output tokens.
  m.reset();
  EXPECT_NE(m.state_key(), key);
  for (int32_t t : doc) ASSERT_TRUE(m.accept(t));
  EXPECT_EQ(m.state_key(), key);
  m.fill_mask(w2);
  EXPECT_EQ(w1, w2);
  // Rollback of speculative tokens, bounded by max_rollback.
  m.rollback(3);
  EXPECT_THROW(m.rollback(2), std::out_of_range);
  for (size_t i = doc.size() - 3; i < doc.size(); ++i) ASSERT_TRUE(m.accept(doc[i]));
  EXPECT_EQ(m.state_key(), key);
  // The copy was not disturbed by any of it.
  EXPECT_EQ(copy.state_key(), key);
  ASSERT_TRUE(copy.accept(qwen3_tok().encode("}", false)[0]));
  EXPECT_TRUE(copy.is_complete());
  EXPECT_FALSE(m.is_complete());
}

TEST(StructuredOutputEngine, ContextIndependentSetsAreSharedAcrossGrammars) {
  // Two schemas with string values: the second reuses the string-content sets of the first,
  // and its masks equal those of a compiler that never saw the first (and brute force).
  GrammarCompiler c(VocabIndex::build(smollm2_tok()));
  const std::string a =
      R"({"type":"object","properties":{"x":{"type":"string"}},"required":["x"]})";
  const std::string b =
      R"({"type":"object","properties":{"y":{"type":"integer"},"z":{"type":"string"}},"required":["y","z"]})";
  const auto doc_a = smollm2_tok().encode(R"({"x": "some text"})", false);
  const auto doc_b = smollm2_tok().encode(R"({"y": 7, "z": "more \"text\" here"})", false);
  auto masks = [&](std::shared_ptr<const CompiledGrammar> g, const std::vector<int32_t>& doc) {
    std::vector<std::vector<uint32_t>> out;
    Matcher m(g);
    for (int32_t t : doc) {
      std::vector<uint32_t> w(m.mask_words());
      m.fill_mask(w);
      out.push_back(w);
      if (out.size() == 9) {
        EXPECT_EQ(w, brute_force_mask(m, smollm2_tok().vocab_size()));
      }
      EXPECT_TRUE(m.accept(t));
    }
    return out;
  };
  masks(c.compile(GrammarKind::kJsonSchema, a), doc_a);
  auto gb = c.compile(GrammarKind::kJsonSchema, b);
  const auto shared = masks(gb, doc_b);
  EXPECT_GT(gb->stats().ci_shared, 0);
  GrammarCompiler alone(VocabIndex::build(smollm2_tok()));
  auto gb2 = alone.compile(GrammarKind::kJsonSchema, b);
  EXPECT_EQ(masks(gb2, doc_b), shared);
  EXPECT_EQ(gb2->stats().ci_shared, 0);
}

TEST(StructuredOutputEngine, PaddedMaskRowsAreCleared) {
  auto g = smollm2_compiler().compile(GrammarKind::kChoice, R"(["yes","no"])");
  Matcher m(g);
  std::vector<uint32_t> w(m.mask_words() + 8, 0xFFFFFFFFu);
  m.fill_mask(w);
  for (size_t i = m.mask_words(); i < w.size(); ++i) EXPECT_EQ(w[i], 0u);
  std::vector<uint32_t> small(m.mask_words() - 1);
  EXPECT_THROW(m.fill_mask(small), std::invalid_argument);
}

}  // namespace
}  // namespace vllm::engine::so
