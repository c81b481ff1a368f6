// NFC against Python's unicodedata (tools/make_tokenizer_long_goldens.py) on inputs that stress
// canonical ordering and composition, the quick check that lets most text skip NFC, and the
// bound on how much NFC can shrink text (encode_bounded's length pre-check relies on it).
#include <gtest/gtest.h>

#include <fstream>

#include "tok_test_util.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::testing {
namespace {

TEST(Nfc, MatchesPythonUnicodedata) {
  std::ifstream f(golden_dir() + "/nfc.jsonl");
  std::vector<nlohmann::json> cases;
  for (std::string line; std::getline(f, line);) cases.push_back(nlohmann::json::parse(line));
  ASSERT_GE(cases.size(), 300u) << "golden file missing or short: nfc.jsonl";
  size_t changed = 0;
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    const std::string want = c.at("nfc").get<std::string>();
    EXPECT_TRUE(nfc_normalize(text) == want) << "input: " << text.substr(0, 60);
    // The quick check may say "maybe" for stable text, never "stable" for text NFC changes.
    if (nfc_quick_stable(text)) EXPECT_TRUE(text == want) << text.substr(0, 60);
    changed += text != want;
  }
  EXPECT_GT(changed, cases.size() / 2);
  EXPECT_STREQ(nfc_unicode_version(), "14.0.0");  // the version the goldens were made with
}

TEST(Nfc, QuickCheckAcceptsCommonScripts) {
  EXPECT_TRUE(nfc_quick_stable("plain ascii"));
  EXPECT_TRUE(nfc_quick_stable("\xE4\xB8\xAD\xE6\x96\x87 \xD0\x96 \xCE\xB1"));  // 中文 Ж α
  EXPECT_TRUE(nfc_quick_stable("caf\xC3\xA9"));                                 // precomposed é
  EXPECT_FALSE(nfc_quick_stable("cafe\xCC\x81"));                               // e + U+0301
  EXPECT_FALSE(nfc_quick_stable("\xE2\x84\xAA"));                               // KELVIN SIGN
  EXPECT_FALSE(nfc_quick_stable("\xE1\x84\x80\xE1\x85\xA1"));                   // jamo L + V
}

TEST(Nfc, ShrinkBoundHoldsForTheWorstKnownInputs) {
  const size_t r = nfc_max_shrink();
  EXPECT_GE(r, 3u);  // KELVIN SIGN and Hangul L+V+T jamo really shrink 3x
  EXPECT_LE(r, 4u);
  for (const std::string& s :
       {std::string("\xE2\x84\xAA"), std::string("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"),
        std::string("\xE2\x84\xA6\xCC\x93\xCC\x80\xCD\x85"), std::string("U\xCC\x88\xCC\x84")}) {
    const std::string n = nfc_normalize(s);
    EXPECT_LT(n.size(), s.size());
    EXPECT_GE(n.size() * r, s.size()) << s;
  }
}

}  // namespace
}  // namespace vllm::tok::testing
