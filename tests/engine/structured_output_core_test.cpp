// The automaton core on small vocabularies: UTF-8 range splitting, closure / tail calls,
// masks equal to a brute-force re-check, rollback, stop tokens, caches, limits.
#include <gtest/gtest.h>

#include "structured_output_test_util.h"

namespace vllm::engine::so {
namespace {

using testing::allowed;
using testing::brute_force_mask;

// All 256 single bytes plus some multi-byte tokens; id 256+k = extra[k]; last id = EOS.
struct ToyVocab {
  std::vector<std::string> tokens;
  int32_t eos;
  std::shared_ptr<const VocabIndex> index;
  ToyVocab(std::vector<std::string> extra) {
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
    for (auto& e : extra) tokens.push_back(e);
    tokens.push_back("<eos>");
    eos = static_cast<int32_t>(tokens.size() - 1);
    index = VocabIndex::from_strings(tokens, {eos});
  }
  std::shared_ptr<const CompiledGrammar> compile(GrammarKind k, const std::string& text) {
    GrammarCompiler c(index);
    return c.compile(k, text);
  }
};

std::vector<int32_t> mask_of(Matcher& m) {
  std::vector<uint32_t> w(m.mask_words());
  m.fill_mask(w);
  return allowed(w);
}

TEST(StructuredOutputCore, Utf8SequencesCoverExactlyTheRange) {
  // Every code point in [lo, hi] encodes to a path of the sequences and nothing else does.
  const std::pair<uint32_t, uint32_t> cases[] = {{0, 0x10FFFF},      {0x80, 0x7FF},
                                                 {0x7F, 0x800},      {0x3B1, 0x3C9},
                                                 {0xE000, 0x10FFFF}, {0x1F600, 0x1F64F}};
  for (auto [lo, hi] : cases) {
    auto rs = normalize_ranges({{lo, hi}});
    std::vector<std::vector<std::pair<uint8_t, uint8_t>>> seqs;
    for (auto r : rs)
      for (auto& s : utf8_sequences(r.lo, r.hi)) seqs.push_back(s);
    auto matches = [&](const std::string& enc) {
      int n = 0;
      for (const auto& s : seqs) {
        if (s.size() != enc.size()) continue;
        bool ok = true;
        for (size_t i = 0; i < s.size(); ++i) {
          const auto b = static_cast<uint8_t>(enc[i]);
          ok &= b >= s[i].first && b <= s[i].second;
        }
        n += ok;
      }
      return n;
    };
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x3000 ? 1 : 97)) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      std::string enc;
      utf8_append(enc, cp);
      EXPECT_EQ(matches(enc), (cp >= lo && cp <= hi) ? 1 : 0) << std::hex << cp;
    }
  }
}

TEST(StructuredOutputCore, RegexMaskEqualsBruteForce) {
  ToyVocab v({"ab", "abc", "a1", "12", "123", "x", "\xce\xb1", "\xce", "b\xce", "-a"});
  auto g = v.compile(GrammarKind::kRegex, "(ab|[0-9]+|\xce\xb1)+-?a?");
  Matcher m(g);
  std::mt19937 rng(1);
  for (int stepi = 0; stepi < 30; ++stepi) {
    std::vector<uint32_t> w(m.mask_words());
    m.fill_mask(w);
    ASSERT_EQ(w, brute_force_mask(m, v.index->vocab_size())) << "step " << stepi;
    auto ids = allowed(w);
    ASSERT_FALSE(ids.empty());
    const int32_t t = ids[rng() % ids.size()];
    ASSERT_TRUE(m.accept(t));
    if (m.is_terminated()) break;
  }
}

TEST(StructuredOutputCore, StopOnlyWhenComplete) {
  ToyVocab v({"ab"});
  auto g = v.compile(GrammarKind::kRegex, "a+b");
  Matcher m(g);
  EXPECT_FALSE(m.is_complete());
  EXPECT_FALSE(m.accept(v.eos));
  EXPECT_EQ(mask_of(m), (std::vector<int32_t>{'a', 256}));
  ASSERT_TRUE(m.accept('a'));
  EXPECT_EQ(mask_of(m), (std::vector<int32_t>{'a', 'b', 256}));
  ASSERT_TRUE(m.accept(256));  // "ab" after "a": "aab"
  EXPECT_TRUE(m.is_complete());
  EXPECT_TRUE(m.can_only_stop());
  EXPECT_EQ(mask_of(m), std::vector<int32_t>{v.eos});
  ASSERT_TRUE(m.accept(v.eos));
  EXPECT_TRUE(m.is_terminated());
  EXPECT_FALSE(m.accept('a'));
  m.rollback(2);
  EXPECT_EQ(mask_of(m), (std::vector<int32_t>{'a', 'b', 256}));
  m.reset();
  EXPECT_EQ(mask_of(m), (std::vector<int32_t>{'a', 256}));
}

TEST(StructuredOutputCore, RecursiveGrammarAndTailCalls) {
  ToyVocab v({"((", "))", "()"});
  auto g = v.compile(GrammarKind::kGrammar, "root ::= item+\nitem ::= \"(\" root? \")\"\n");
  Matcher m(g);
  const std::string doc = "((()())(((()))))";
  for (char c : doc) {
    std::vector<uint32_t> w(m.mask_words());
    m.fill_mask(w);
    ASSERT_EQ(w, brute_force_mask(m, v.index->vocab_size()));
    ASSERT_TRUE(m.accept(static_cast<uint8_t>(c)));
  }
  EXPECT_TRUE(m.is_complete());
  EXPECT_FALSE(m.can_only_stop());
  EXPECT_FALSE(m.accept(')'));
  // A right-recursive list keeps the stack flat: 2000 items, constant state size.
  auto list = v.compile(GrammarKind::kGrammar, "root ::= \"x\" root | \"x\"");
  Matcher l(list);
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(l.accept('x'));
  EXPECT_LT(l.state_key().size(), 64u);
}

TEST(StructuredOutputCore, MaskCacheIsSharedAndBounded) {
  ToyVocab v({"ab"});
  GrammarCompiler c(v.index);
  auto g1 = c.compile(GrammarKind::kRegex, "[a-c]{2,5}");
  auto g2 = c.compile(GrammarKind::kRegex, "[a-c]{2,5}");
  EXPECT_EQ(g1.get(), g2.get());  // compiled once, by (kind, text)
  Matcher a(g1), b(g2);
  std::vector<uint32_t> w(a.mask_words());
  a.fill_mask(w);
  b.fill_mask(w);
  EXPECT_EQ(g1->stats().mask_hits, 1);
  EXPECT_EQ(a.state_key(), b.state_key());
}

TEST(StructuredOutputCore, LeftRecursionAndEmptyLanguageAreErrors) {
  try {
    parse_gbnf("root ::= root \"a\" | \"a\"");
    compile_fsm(parse_gbnf("root ::= root \"a\" | \"a\""));
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("left recursion"), std::string::npos) << e.what();
  }
  try {
    compile_fsm(parse_gbnf("root ::= \"a\" root"));
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("matches no string"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vllm::engine::so
