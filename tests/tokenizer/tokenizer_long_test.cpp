// Pre-tokens longer than the BPE window against Hugging Face tokenizers
// (tools/make_tokenizer_long_goldens.py): windowing must not change the ids of text people
// write, and must keep every byte of the pathological repeated-character pieces.
#include <gtest/gtest.h>

#include <fstream>

#include "tok_test_util.h"
#include "tokenizer/bpe.h"

namespace vllm::tok::testing {
namespace {

std::vector<nlohmann::json> read_jsonl(const std::string& name) {
  std::ifstream f(golden_dir() + "/" + name);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(f, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

void check_long(const Tokenizer& tok, const std::string& name) {
  const auto cases = read_jsonl(name + "_long.jsonl");
  ASSERT_GE(cases.size(), 30u) << "golden file missing or short: " << name << "_long.jsonl";
  size_t windowed = 0, repeat_equal = 0, repeats = 0;
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    const auto want = c.at("ids").get<std::vector<int32_t>>();
    EncodeStats st;
    const auto got = tok.encode(text, false, &st);
    if (st.merge_loops > st.pieces) ++windowed;
    if (c.at("kind") == "natural") {
      // Text people write: windowing must not change a single id.
      EXPECT_EQ(got, want) << name << ": " << text.substr(0, 40);
    } else {
      // One character or pair repeated: merges can interact over any distance, so ids may
      // differ near window boundaries, but never the bytes they spell.
      ++repeats;
      repeat_equal += got == want;
      std::string a, b;
      for (int32_t id : got) a += tok.token_bytes(id);
      for (int32_t id : want) b += tok.token_bytes(id);
      EXPECT_TRUE(a == b) << name << ": " << text.substr(0, 40);
    }
  }
  EXPECT_GE(windowed, cases.size() - 2) << "the cases no longer exceed the window";
  std::cout << name << ": " << repeat_equal << " of " << repeats
            << " repeated-character pieces give the reference's ids exactly\n";
}

TEST(TokenizerLong, Qwen3LongPiecesMatchReference) { check_long(qwen3(), "qwen3"); }
TEST(TokenizerLong, SmolLM2LongPiecesMatchReference) { check_long(smollm2(), "smollm2"); }

}  // namespace
}  // namespace vllm::tok::testing
