// GGUF pre-tokenizers of files whose own vocabularies are not at hand (DeepSeek LLM / Coder,
// Falcon 3, Smaug, Granite's refact, Pixtral, Megrez, Mi:dm 2.0, dbrx): SmolLM2's vocabulary under
// each tokenizer.ggml.pre name (tools/make_pre_vocabs.py, written under VLLM_SPM_HF), against
// llama.cpp's ids and text on the same files.
#include <gtest/gtest.h>

#include <map>

#include "tok_test_util.h"

namespace vllm::tok::testing {
namespace {

TEST(GgufPreTokenizers, MatchLlamaCppOnEachName) {
  std::map<std::string, std::unique_ptr<Tokenizer>> toks;
  std::map<std::string, size_t> cases, differs_from_smollm;
  std::ifstream f(golden_dir() + "/pre_vocabs.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string pre = j.at("pre").get<std::string>();
    auto& tok = toks[pre];
    if (!tok) tok = model::load_tokenizer(vocab_dir() + "/ggml-vocab-smollm2-" + pre + ".gguf");
    const std::string text = j.at("text").get<std::string>();
    const auto ids = j.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok->encode(text), ids) << pre << " text: " << text;
    // llama.cpp cleans spaces before punctuation when decoding for the Llama 3 kind
    // (clean_up_tokenization_spaces); vLLM's detokenizer, and ours, never do.
    if (pre.rfind("deepseek", 0) == 0)
      EXPECT_EQ(tok->decode(ids), j.at("decoded").get<std::string>()) << pre << " text: " << text;
    ++cases[pre];
    differs_from_smollm[pre] += smollm2().encode(text) != ids;
  }
  for (const char* pre : {"deepseek-llm", "deepseek-coder", "falcon3", "smaug-bpe", "pixtral",
                          "megrez", "midm-2.0", "dbrx"}) {
    EXPECT_GE(cases[pre], 300u) << pre << ": golden cases missing";
    // The name changes the splits: texts tokenize differently from SmolLM2's own pre
    // (measured: 22 of 405 for the Llama 3 pattern, most for DeepSeek's).
    EXPECT_GE(differs_from_smollm[pre], cases[pre] / 20) << pre;
  }
  // Granite's refact is SmolLM2's own chain (digits one by one, then GPT-2's split).
  EXPECT_GE(cases["refact"], 300u);
  EXPECT_EQ(differs_from_smollm["refact"], 0u);
}

// Without tokenizer.ggml.add_bos_token the pre-tokenizer name decides, as in llama.cpp: the
// Llama 3 names and Tekken add BOS, the others do not (pre_vocabs_bos.jsonl: llama.cpp's ids
// with add_special on the -nobos files).
TEST(GgufPreTokenizers, BosDefaultFollowsTheNameWhenTheKeyIsAbsent) {
  std::ifstream f(golden_dir() + "/pre_vocabs_bos.jsonl");
  std::string line;
  size_t n = 0, with_bos = 0;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    const std::string pre = j.at("pre").get<std::string>();
    auto tok = model::load_tokenizer(vocab_dir() + "/ggml-vocab-smollm2-" + pre + "-nobos.gguf");
    const std::string text = j.at("text").get<std::string>();
    const auto ids = j.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok->encode(text), ids) << pre << " text: " << text;
    ++n;
    with_bos += text.empty() && !ids.empty();
  }
  EXPECT_GE(n, 27u);
  EXPECT_EQ(with_bos, 4u);  // llama-bpe, tekken, falcon3, pixtral
}

}  // namespace
}  // namespace vllm::tok::testing
