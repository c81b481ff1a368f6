// The SentencePiece-style tokenizer (GGUF tokenizer.ggml.model "llama") against llama.cpp on
// Llama 2's vocabulary: every corpus text with and without BOS, decoding, and a ~256 KB mixed
// text. Goldens: tools/make_spm_goldens.py; the vocabulary: scripts/fetch_vocabs.sh
// (VLLM_SPM_VOCAB).
#include <gtest/gtest.h>

#include <cstring>

#include "tok_test_util.h"
#include "tokenizer/spm.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::testing {
namespace {

std::string spm_vocab_path() {
  return env_or_cache("VLLM_SPM_VOCAB", "vocab/ggml-vocab-llama-spm.gguf");
}

const Tokenizer& llama_spm() {
  static std::unique_ptr<Tokenizer> t = model::load_tokenizer(spm_vocab_path());
  return *t;
}

struct SpmCase {
  std::string text, decoded;
  std::vector<int32_t> ids, ids_plain;
};

std::vector<SpmCase> spm_cases() {
  std::ifstream f(golden_dir() + "/llama_spm.jsonl");
  std::vector<SpmCase> out;
  std::string line;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    out.push_back({j.at("text").get<std::string>(), j.at("decoded").get<std::string>(),
                   j.at("ids").get<std::vector<int32_t>>(),
                   j.at("ids_plain").get<std::vector<int32_t>>()});
  }
  return out;
}

TEST(SpmTokenizer, LlamaVocabularyMatchesLlamaCpp) {
  const Tokenizer& tok = llama_spm();
  EXPECT_EQ(tok.vocab_size(), 32000);
  EXPECT_TRUE(tok.add_bos());
  const auto cases = spm_cases();
  ASSERT_GE(cases.size(), 400u) << "golden file missing or short";
  for (const auto& c : cases) {
    EXPECT_EQ(tok.encode(c.text), c.ids) << "text: " << c.text;
    EXPECT_EQ(tok.encode(c.text, /*add_special_tokens=*/false), c.ids_plain) << c.text;
    // The budgeted encoder gives the same ids, and refuses one id short.
    std::vector<int32_t> bounded;
    EXPECT_TRUE(tok.encode_bounded(c.text, true, c.ids.size(), bounded));
    EXPECT_EQ(bounded, c.ids) << c.text;
    EXPECT_FALSE(tok.encode_bounded(c.text, true, c.ids.size() - 1, bounded)) << c.text;
    EXPECT_EQ(tok.decode(c.ids), c.decoded) << c.text;
  }
}

TEST(SpmTokenizer, DecodingDropsOnlyTheLeadingSpaceAndStreamsTheSameText) {
  const Tokenizer& tok = llama_spm();
  const std::vector<int32_t> hello = tok.encode("Hello world", false);  // "▁Hello" "▁world"
  EXPECT_EQ(tok.decode(hello), "Hello world");
  // With BOS first, the decoded text keeps the space after "<s>" (as llama.cpp and Hugging
  // Face), and skipping special tokens is the decode of the rest.
  std::vector<int32_t> with_bos = {tok.bos_id()};
  with_bos.insert(with_bos.end(), hello.begin(), hello.end());
  EXPECT_EQ(tok.decode(with_bos), "<s> Hello world");
  EXPECT_EQ(tok.decode(with_bos, /*skip_special_tokens=*/true), "Hello world");
  // Streaming keeps every byte: generated text follows a prompt, so its first space stays.
  IncrementalDetokenizer d(tok);
  std::string streamed;
  for (int32_t id : tok.encode(" Paris\tis\n\u4e2d\u6587 \xF0\x9F\xA6\x99", false))
    streamed += d.step(id);
  streamed += d.finish();
  EXPECT_EQ(streamed, "  Paris\tis\n\u4e2d\u6587 \xF0\x9F\xA6\x99");
}

TEST(SpmTokenizer, BigTextMatchesLlamaCpp) {
  std::vector<GoldenCase> cases;
  for (const auto& c : spm_cases()) cases.push_back({c.text, "", "", {}, true});
  const std::string text = big_text(cases, 1u << 18);
  const auto meta = nlohmann::json::parse(read_binary(golden_dir() + "/llama_spm_big.json"));
  ASSERT_EQ(text.size(), meta.at("bytes").get<size_t>());
  const std::string bin = read_binary(golden_dir() + "/llama_spm_big.bin");
  std::vector<int32_t> want(bin.size() / 4);
  std::memcpy(want.data(), bin.data(), bin.size());  // little-endian host
  const auto got = llama_spm().encode(text, false);
  ASSERT_EQ(got.size(), want.size());
  size_t first_diff = got.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      first_diff = i;
      break;
    }
  EXPECT_EQ(first_diff, got.size()) << "first mismatch at id index " << first_diff;
}

// tokenizer.json of the same vocabulary in Hugging Face's two SentencePiece-style forms
// (tools/make_spm_tokenizer_json.py, written under VLLM_SPM_HF) against Hugging Face
// `tokenizers` on those files.
std::string spm_hf_dir() { return vocab_dir(); }

void check_hf_form(const std::string& form) {
  const std::string dir = spm_hf_dir() + "/llama-" + form;
  const auto tok = Tokenizer::from_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
  EXPECT_EQ(tok->vocab_size(), 32000);
  std::ifstream f(golden_dir() + "/hf_llama_" + form + ".jsonl");
  std::string line;
  size_t n = 0;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string text = j.at("text").get<std::string>();
    const auto ids = j.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok->encode(text), ids) << form << " text: " << text;
    EXPECT_EQ(tok->encode(text, false), j.at("ids_plain").get<std::vector<int32_t>>()) << text;
    EXPECT_EQ(tok->decode(ids), j.at("decoded").get<std::string>()) << text;
    EXPECT_EQ(tok->decode(ids, true), j.at("decoded_skip").get<std::string>()) << text;
    ++n;
  }
  EXPECT_GE(n, 400u) << "golden file missing or short";
}

TEST(SpmTokenizer, HuggingFaceLegacyFormMatchesTokenizers) { check_hf_form("legacy"); }
TEST(SpmTokenizer, HuggingFaceMetaspaceFormMatchesTokenizers) { check_hf_form("metaspace"); }
// Gemma's form: Replace(" ", "▁") alone (no space put first, none dropped when decoding).
TEST(SpmTokenizer, HuggingFaceGemmaFormMatchesTokenizers) { check_hf_form("gemma"); }

// Phi-3's GGUF vocabulary (llama.cpp's own test file, general.name "Phi3"): llama.cpp sets
// rstrip on the special tokens by the model's name, so "<|user|>\nHello" loses its newline.
// Goldens: tools/make_phi3_vocab_goldens.py.
TEST(SpmTokenizer, Phi3VocabularyMatchesLlamaCpp) {
  const auto tok = model::load_tokenizer(spm_hf_dir() + "/ggml-vocab-phi-3.gguf");
  EXPECT_EQ(tok->vocab_size(), 32064);
  std::ifstream f(golden_dir() + "/phi3_spm.jsonl");
  std::string line;
  size_t n = 0, stripped = 0;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string text = j.at("text").get<std::string>();
    const auto ids = j.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok->encode(text), ids) << "text: " << text;
    EXPECT_EQ(tok->decode(ids), j.at("decoded").get<std::string>()) << text;
    stripped += text.find("|>\n") != std::string::npos;
    ++n;
  }
  EXPECT_GE(n, 400u) << "golden file missing or short";
  EXPECT_GE(stripped, 3u) << "no case where a special token meets whitespace";
  // "<|user|>\nHi" is two ids: the newline after the special token is eaten.
  EXPECT_EQ(tok->encode("<|user|>\nHi", false).size(), 2u);
}

// Gemma's GGUFs: tokenizer.ggml.add_space_prefix = false (the same vocabulary with the key
// added by tools/make_spm_tokenizer_json.py) against llama.cpp on that file.
TEST(SpmTokenizer, NoSpacePrefixVocabularyMatchesLlamaCpp) {
  const auto tok = model::load_tokenizer(spm_hf_dir() + "/ggml-vocab-llama-spm-noprefix.gguf");
  std::ifstream f(golden_dir() + "/llama_spm_noprefix.jsonl");
  std::string line;
  size_t n = 0, differs_from_prefixed = 0;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string text = j.at("text").get<std::string>();
    const auto ids = j.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok->encode(text), ids) << "text: " << text;
    EXPECT_EQ(tok->encode(text, false), j.at("ids_plain").get<std::vector<int32_t>>()) << text;
    EXPECT_EQ(tok->decode(ids), j.at("decoded").get<std::string>()) << text;
    differs_from_prefixed += llama_spm().encode(text) != ids;
    ++n;
  }
  EXPECT_GE(n, 400u) << "golden file missing or short";
  EXPECT_GE(differs_from_prefixed, n / 2) << "the space prefix changed almost nothing";
}

// Work stays linear in the input whatever it holds (tokenizer_linear_test.cpp's inputs): no
// merge loop is longer than the window, and the bytes merged and heap steps per input byte do
// not grow with the input. The ids spell the input after the space SentencePiece puts first.
TEST(SpmTokenizer, PathologicalInputsCostLinearWork) {
  constexpr size_t kMB = 1 << 20;
  const Tokenizer& tok = llama_spm();
  const auto small = pathological_inputs(kMB);
  const auto large = pathological_inputs(2 * kMB);
  for (size_t k = 0; k < small.size(); ++k) {
    SCOPED_TRACE(small[k].name);
    EncodeStats s1, s2;
    tok.encode(small[k].text, false, &s1);
    const auto ids = tok.encode(large[k].text, false, &s2);
    const double n1 = static_cast<double>(small[k].text.size());
    const double n2 = static_cast<double>(large[k].text.size());
    for (const auto& [s, n] : {std::pair{&s1, n1}, std::pair{&s2, n2}}) {
      EXPECT_LE(s->max_merge_bytes, Spm::kMaxPieceBytes);
      // A space is 3 bytes ("▁") once escaped; windows overlap by at most a quarter.
      EXPECT_LE(static_cast<double>(s->merge_bytes), 2.0 * 3.0 * n + 3.0);
      EXPECT_LE(static_cast<double>(s->merge_steps), 8.0 * n);
    }
    EXPECT_LE(static_cast<double>(s2.merge_steps) / n2,
              1.25 * static_cast<double>(s1.merge_steps) / n1 + 1e-3);
    if (utf8_is_valid(large[k].text)) {
      std::string spelled;
      for (int32_t id : ids) spelled += tok.token_bytes(id);
      EXPECT_TRUE(spelled == " " + large[k].text) << "ids do not spell the input";
    }
  }
}

}  // namespace
}  // namespace vllm::tok::testing
