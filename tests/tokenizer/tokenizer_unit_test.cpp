// Tokenizer behaviour beyond the goldens: added-token flags, BOS/EOS, invalid UTF-8, decode
// errors, refusal of unsupported tokenizers, stop ids.
#include <gtest/gtest.h>

#include "tok_test_util.h"
#include "tokenizer/byte_level.h"

namespace vllm::tok::testing {
namespace {

TEST(Tokenizer, Qwen3KnownIdsAndFlags) {
  const Tokenizer& t = qwen3();
  EXPECT_EQ(t.encode("Hello"), std::vector<int32_t>({9707}));
  EXPECT_EQ(t.vocab_size(), 151669);
  EXPECT_TRUE(t.is_special(151644));   // <|im_start|>
  EXPECT_FALSE(t.is_special(151657));  // <tool_call>: added but not special
  EXPECT_TRUE(t.is_added(151657));
  EXPECT_FALSE(t.is_added(9707));
  EXPECT_EQ(t.token_to_id("<think>"), 151667);
  EXPECT_EQ(t.id_to_token(220), "\xC4\xA0");  // "Ġ"
  EXPECT_EQ(t.eos_id(), 151645);
  EXPECT_EQ(t.eos_token(), "<|im_end|>");
  EXPECT_EQ(t.bos_id(), -1);
  EXPECT_FALSE(t.add_bos());
  EXPECT_EQ(t.stop_ids(), std::vector<int32_t>({151643, 151645}));
  EXPECT_NE(t.chat_template().find("<|im_start|>"), std::string::npos);
  // Skipping special tokens keeps non-special added tokens.
  const auto ids = t.encode("<|im_start|>a<tool_call>b<|im_end|>");
  EXPECT_EQ(t.decode(ids, true), "a<tool_call>b");
}

TEST(Tokenizer, SmolLM2GgufMetadata) {
  const Tokenizer& t = smollm2();
  EXPECT_EQ(t.vocab_size(), 49152);
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.eos_id(), 2);
  EXPECT_EQ(t.eos_token(), "<|im_end|>");
  EXPECT_TRUE(t.is_special(0));
  EXPECT_FALSE(t.is_special(17));
  EXPECT_EQ(t.stop_ids(), std::vector<int32_t>({0, 2}));
  EXPECT_FALSE(t.add_bos());
  EXPECT_NE(t.chat_template().find("im_start"), std::string::npos);
  // Digits are split one by one (the "smollm" pre-tokenizer).
  EXPECT_EQ(t.encode("123").size(), 3u);
}

TEST(Tokenizer, InvalidUtf8BytesAreEncodedNotDropped) {
  for (const Tokenizer* t : {&qwen3(), &smollm2()}) {
    const std::string bad = std::string("ok\xFF\xFE x \xE4\xBD end \xC3") + "\x80\x80 \xF0\x9F\x98";
    const auto ids = t->encode(bad);
    std::string bytes;
    for (int32_t id : ids) bytes += t->token_bytes(id);
    if (t == &qwen3()) {
      EXPECT_EQ(bytes, bad);  // every byte exists in the Qwen3 byte alphabet
    } else {
      // 0xFF, 0xFE, 0x80 are missing from SmolLM2's vocabulary: unk (id 0) stands in.
      EXPECT_NE(std::find(ids.begin(), ids.end(), 0), ids.end());
    }
    // The lossy decode replaces each invalid subpart once, like from_utf8_lossy.
    EXPECT_NE(t->decode(ids).find("\xEF\xBF\xBD"), std::string::npos);
  }
  // A lone byte of a split character is one piece, encoded as that byte's token.
  const Tokenizer& q = qwen3();
  const auto one = q.encode("\xE4");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(q.token_bytes(one[0]), "\xE4");
}

TEST(Tokenizer, DecodeOutOfRangeThrows) {
  const Tokenizer& t = qwen3();
  EXPECT_THROW(t.decode({9707, t.vocab_size()}), std::out_of_range);
  EXPECT_THROW(t.decode({-1}), std::out_of_range);
  EXPECT_THROW(t.id_to_token(1 << 30), std::out_of_range);
  EXPECT_NO_THROW(t.decode({t.vocab_size() - 1}));
}

const char* kTinyJson = R"({
  "version": "1.0", "added_tokens": [
    {"id": 8, "content": "<s>", "special": true, "lstrip": false, "rstrip": false,
     "single_word": false, "normalized": false},
    {"id": 9, "content": "<L>", "special": false, "lstrip": true, "rstrip": false,
     "single_word": false, "normalized": false},
    {"id": 10, "content": "<R>", "special": false, "lstrip": false, "rstrip": true,
     "single_word": false, "normalized": false},
    {"id": 11, "content": "xy", "special": false, "lstrip": false, "rstrip": false,
     "single_word": true, "normalized": false},
    {"id": 12, "content": "<L><R>", "special": false, "lstrip": false, "rstrip": false,
     "single_word": false, "normalized": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [8], "tokens": ["<s>"]}}},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "Ġ": 2, "c": 3, "ab": 4, "Ġc": 5, "x": 6, "y": 7},
            "merges": ["a b", ["Ġ", "c"]]}})";

TEST(Tokenizer, AddedTokenFlagsAndTemplateBos) {
  auto t = Tokenizer::from_json_text(kTinyJson, R"({"bos_token": "<s>"})");
  // Expected ids checked with Hugging Face tokenizers on the same JSON (merges as strings).
  EXPECT_EQ(t->bos_id(), 8);
  EXPECT_TRUE(t->add_bos());
  EXPECT_EQ(t->encode("abc c"), std::vector<int32_t>({8, 4, 3, 5}));  // BOS + merges (string, pair)
  EXPECT_EQ(t->encode("abc c", false), std::vector<int32_t>({4, 3, 5}));
  // lstrip eats the spaces before <L>; rstrip eats those after <R>.
  EXPECT_EQ(t->encode("c  <L>c", false), std::vector<int32_t>({3, 9, 3}));
  EXPECT_EQ(t->encode("c<R>  c", false), std::vector<int32_t>({3, 10, 3}));
  // Longest match first.
  EXPECT_EQ(t->encode("<L><R>", false), std::vector<int32_t>({12}));
  // single_word: "xy" only as a whole word.
  EXPECT_EQ(t->encode("c xy c", false), std::vector<int32_t>({3, 2, 11, 5}));
  EXPECT_EQ(t->encode("cxy", false), std::vector<int32_t>({3, 6, 7}));
  EXPECT_EQ(t->encode("xy", false), std::vector<int32_t>({11}));
}

// A special <end_of_turn> (Gemma), <|eot_id|> (Llama 3), <|return|> or <|call|> (gpt-oss's
// harmony) ends generation even when the file names another EOS, as llama.cpp's
// end-of-generation list does; gpt-oss's <|end|> (between its messages) does not.
TEST(Tokenizer, EndOfTurnTokensStopGeneration) {
  for (const std::string name : {"<end_of_turn>", "<|eot_id|>", "<|return|>", "<|call|>"}) {
    std::string s = kTinyJson;
    const std::string from = R"("id": 12, "content": "<L><R>", "special": false)";
    s.replace(s.find(from), from.size(),
              R"("id": 12, "content": ")" + name + R"(", "special": true)");
    auto t = Tokenizer::from_json_text(s, R"({"bos_token": "<s>"})");
    const auto stops = t->stop_ids();
    EXPECT_NE(std::find(stops.begin(), stops.end(), 12), stops.end()) << name;
  }
  {
    std::string s = kTinyJson;
    const std::string from = R"("id": 12, "content": "<L><R>", "special": false)";
    s.replace(s.find(from), from.size(), R"("id": 12, "content": "<|end|>", "special": true)");
    const auto stops = Tokenizer::from_json_text(s, R"({"bos_token": "<s>"})")->stop_ids();
    EXPECT_EQ(std::find(stops.begin(), stops.end(), 12), stops.end()) << "<|end|>";
  }
  // Not special: an ordinary piece of text.
  auto plain = Tokenizer::from_json_text(kTinyJson, R"({"bos_token": "<s>"})");
  const auto stops = plain->stop_ids();
  EXPECT_EQ(std::find(stops.begin(), stops.end(), 12), stops.end());
}

TEST(Tokenizer, RefusesUnsupportedTypes) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kTinyJson;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  auto message = [](const std::string& json) {
    try {
      Tokenizer::from_json_text(json, "");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(with(R"("type": "BPE")", R"("type": "Unigram")")).find("Unigram"),
            std::string::npos);
  EXPECT_NE(message(with(R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})",
                         R"({"type": "Whitespace"})"))
                .find("Whitespace"),
            std::string::npos);
  // SentencePiece-style: a Metaspace pre-tokenizer is read, but not beside a normalizer.
  {
    std::string j = with(R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})",
                         R"({"type": "Metaspace", "replacement": "▁"})");
    j.replace(j.find(R"("normalizer": null)"), 18, R"("normalizer": {"type": "NFC"})");
    EXPECT_NE(message(j).find("SentencePiece-style"), std::string::npos) << message(j);
  }
  EXPECT_NE(
      message(with(R"("normalizer": null)", R"("normalizer": {"type": "NFKC"})")).find("NFKC"),
      std::string::npos);
  VocabData v;
  v.model = "t5";  // Unigram: not implemented
  v.tokens = {"a"};
  try {
    Tokenizer::from_vocab(v);
    ADD_FAILURE() << "t5 (Unigram) vocab accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'t5'"), std::string::npos);
  }
  v.model = "llama";
  v.scores = {0.0f, 1.0f};  // one score too many
  try {
    Tokenizer::from_vocab(v);
    ADD_FAILURE() << "mismatched scores accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scores"), std::string::npos);
  }
  v.scores.clear();
  v.model = "gpt2";
  v.pre = "made-up-pre";
  try {
    Tokenizer::from_vocab(v);
    ADD_FAILURE() << "unknown pre accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("made-up-pre"), std::string::npos);
  }
}

TEST(Tokenizer, GgufPreNamesBuild) {
  // Each supported pre name gives a working tokenizer over a tiny byte vocabulary.
  VocabData v;
  v.model = "gpt2";
  const ByteLevel& bl = ByteLevel::get();
  for (int b = 0; b < 256; ++b) v.tokens.push_back(bl.encode_byte(static_cast<uint8_t>(b)));
  v.tokens.push_back("<|eos|>");
  v.token_types.assign(256, 1);
  v.token_types.push_back(3);
  v.eos_id = 256;
  v.add_eos = true;
  for (const char* pre : {"qwen2", "llama-bpe", "smollm", "gpt-2", "default", "tekken",
                          "deepseek-llm", "deepseek-coder", "falcon3", "smaug-bpe"}) {
    v.pre = pre;
    auto t = Tokenizer::from_vocab(v);
    const auto ids = t->encode("Hi 12<|eos|>");
    EXPECT_EQ(ids.back(), 256) << pre;
    EXPECT_EQ(t->decode(ids), "Hi 12<|eos|><|eos|>") << pre;
  }
}

TEST(Tokenizer, LoaderAcceptsFolderAndErrorsClearly) {
  auto t = model::load_tokenizer(qwen3_dir());
  EXPECT_EQ(t->encode("Hello"), std::vector<int32_t>({9707}));
  try {
    model::load_tokenizer("/nonexistent/model");
    ADD_FAILURE();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model"), std::string::npos);
  }
}

}  // namespace
}  // namespace vllm::tok::testing
