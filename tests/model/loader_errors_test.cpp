// Malformed model files: each problem gives one LoadError naming the file and the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "load_error_test_util.h"
#include "model/causal_lm.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "test_files.h"

using vllm::model::CausalLM;
using vllm::model::LoadError;
using namespace vllm::testing;

namespace {

class GgufErrors : public ScratchDirTest {};

TEST_F(GgufErrors, ValidFileLoads) {
  auto p = path("ok.gguf");
  tiny_llama_gguf().write(p);
  EXPECT_EQ(load_error(p), "");
  auto m = CausalLM::load(p);
  EXPECT_EQ(m->config().architecture, "LlamaForCausalLM");
  EXPECT_EQ(m->config().vocab_size, 64);
  EXPECT_EQ(m->config().num_kv_heads, 1);
  EXPECT_TRUE(m->config().tie_word_embeddings);
}

TEST_F(GgufErrors, TruncatedHeader) {
  auto b = tiny_llama_gguf().bytes();
  b.resize(100);
  auto p = path("trunc.gguf");
  write_file(p, b);
  auto e = load_error(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST_F(GgufErrors, TruncatedData) {
  auto b = tiny_llama_gguf().bytes();
  b.resize(b.size() - 64);
  auto p = path("trunc_data.gguf");
  write_file(p, b);
  auto e = load_error(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("past the end"), std::string::npos) << e;
}

TEST_F(GgufErrors, BadMagic) {
  auto b = tiny_llama_gguf().bytes();
  b[0] = 'X';
  auto p = path("magic.gguf");
  write_file(p, b);
  EXPECT_NE(load_error(p).find("not a GGUF file"), std::string::npos);
}

TEST_F(GgufErrors, HugeArrayLengthIsRejectedBeforeAllocation) {
  GgufSpec g = tiny_llama_gguf();
  auto b = g.bytes();
  // Patch the tokens array length (after key, type 9, elem type 8) to 2^60.
  const std::string key = "tokenizer.ggml.tokens";
  auto it = std::search(b.begin(), b.end(), key.begin(), key.end());
  ASSERT_NE(it, b.end());
  size_t len_at = (it - b.begin()) + key.size() + 4 + 4;
  uint64_t huge = 1ull << 60;
  std::memcpy(&b[len_at], &huge, 8);
  auto p = path("huge.gguf");
  write_file(p, b);
  auto e = load_error(p);
  EXPECT_NE(e.find("exceeds the file"), std::string::npos) << e;
}

TEST_F(GgufErrors, UnsupportedTensorType) {
  GgufSpec g = tiny_llama_gguf();
  for (auto& t : g.tensors)
    if (t.name == "blk.0.attn_q.weight") {
      t.type = 16;  // IQ2_XXS: a type this engine does not run
      t.data.resize(32 / 32 * 22 * 32);
    }
  auto p = path("iq2.gguf");
  g.write(p);
  auto e = load_error(p);
  EXPECT_NE(e.find("blk.0.attn_q.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported dtype IQ2_XXS"), std::string::npos) << e;
}

TEST_F(GgufErrors, ShapeDisagreesWithConfig) {
  GgufSpec g = tiny_llama_gguf();
  for (auto& t : g.tensors)
    if (t.name == "blk.0.ffn_gate.weight") t.ne = {32, 32}, t.data.resize(32 * 32 * 4);
  auto p = path("shape.gguf");
  g.write(p);
  auto e = load_error(p);
  EXPECT_NE(e.find("mlp.gate_proj.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("config implies"), std::string::npos) << e;
}

TEST_F(GgufErrors, MissingTensor) {
  GgufSpec g = tiny_llama_gguf();
  g.tensors.erase(std::remove_if(g.tensors.begin(), g.tensors.end(),
                                 [](auto& t) { return t.name == "blk.0.attn_v.weight"; }),
                  g.tensors.end());
  auto p = path("missing.gguf");
  g.write(p);
  auto e = load_error(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  // Named as the file names it, the shared name beside it.
  EXPECT_NE(
      e.find("missing tensor 'blk.0.attn_v.weight' ('model.layers.0.self_attn.v_proj.weight')"),
      std::string::npos)
      << e;
}

TEST_F(GgufErrors, UnknownArchitecture) {
  GgufSpec g = tiny_llama_gguf();
  g.strs = {{"general.architecture", "gptneox"}};
  auto p = path("arch.gguf");
  g.write(p);
  auto e = load_error(p);
  EXPECT_NE(e.find("unsupported architecture 'gptneox'"), std::string::npos) << e;
}

TEST_F(GgufErrors, MissingFile) {
  EXPECT_NE(load_error(path("nope.gguf")).find("no such file"), std::string::npos);
}

class SafetensorsErrors : public ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    const HfSpec h = tiny_llama_hf();
    write_config(h.config);
    entries_ = h.entries;
  }
  void write_config(const nlohmann::json& cfg) {
    std::ofstream(dir_ + "/config.json") << cfg.dump();
  }
  void write(const std::vector<uint8_t>& b) { write_file(dir_ + "/model.safetensors", b); }
  std::vector<SafetensorsEntry> entries_;
};

TEST_F(SafetensorsErrors, ValidFolderLoads) {
  write(safetensors_bytes(entries_));
  EXPECT_EQ(load_error(dir_), "");
}

TEST_F(SafetensorsErrors, TruncatedFile) {
  auto b = safetensors_bytes(entries_);
  b.resize(b.size() - 100);
  write(b);
  auto e = load_error(dir_);
  EXPECT_NE(e.find("model.safetensors"), std::string::npos) << e;
  EXPECT_NE(e.find("past the end"), std::string::npos) << e;
}

TEST_F(SafetensorsErrors, HeaderLengthPastEnd) {
  auto b = safetensors_bytes(entries_);
  uint64_t huge = 1ull << 40;
  std::memcpy(b.data(), &huge, 8);
  write(b);
  EXPECT_NE(load_error(dir_).find("header length"), std::string::npos);
}

TEST_F(SafetensorsErrors, UnknownDtype) {
  entries_[3].dtype = "F9";
  write(safetensors_bytes(entries_));
  auto e = load_error(dir_);
  EXPECT_NE(e.find("unknown dtype 'F9'"), std::string::npos) << e;
}

TEST_F(SafetensorsErrors, UnsupportedDtype) {
  entries_[3].dtype = "I8";
  entries_[3].data.resize(32 * 32);
  write(safetensors_bytes(entries_));
  auto e = load_error(dir_);
  EXPECT_NE(e.find("q_proj.weight' has unsupported dtype I8"), std::string::npos) << e;
}

TEST_F(SafetensorsErrors, ShapeDisagreesWithConfig) {
  entries_[4].shape = {32, 16};
  write(safetensors_bytes(entries_));
  auto e = load_error(dir_);
  EXPECT_NE(e.find("k_proj.weight' has shape [32, 16] but the config implies [16, 32]"),
            std::string::npos)
      << e;
}

TEST_F(SafetensorsErrors, MissingTensor) {
  entries_.pop_back();
  write(safetensors_bytes(entries_));
  auto e = load_error(dir_);
  EXPECT_NE(e.find("missing tensor 'model.layers.0.mlp.down_proj.weight'"), std::string::npos) << e;
}

TEST_F(SafetensorsErrors, UnknownArchitecture) {
  write(safetensors_bytes(entries_));
  write_config({{"architectures", {"GPT2LMHeadModel"}},
                {"vocab_size", 64},
                {"hidden_size", 32},
                {"intermediate_size", 64},
                {"num_hidden_layers", 1},
                {"num_attention_heads", 2}});
  auto e = load_error(dir_);
  EXPECT_NE(e.find("unsupported architecture 'GPT2LMHeadModel'"), std::string::npos) << e;
  EXPECT_NE(e.find("config.json"), std::string::npos) << e;
}

TEST_F(SafetensorsErrors, InconsistentConfig) {
  write(safetensors_bytes(entries_));
  write_config({{"architectures", {"LlamaForCausalLM"}},
                {"vocab_size", 64},
                {"hidden_size", 32},
                {"intermediate_size", 64},
                {"num_hidden_layers", 1},
                {"num_attention_heads", 3},
                {"num_key_value_heads", 2}});
  EXPECT_NE(load_error(dir_).find("not a multiple"), std::string::npos);
}

TEST_F(SafetensorsErrors, MissingShardInIndex) {
  write(safetensors_bytes(entries_));
  std::filesystem::rename(dir_ + "/model.safetensors", dir_ + "/a.safetensors");
  nlohmann::json idx;
  for (auto& e : entries_) idx["weight_map"][e.name] = "a.safetensors";
  idx["weight_map"]["model.extra"] = "b.safetensors";
  std::ofstream(dir_ + "/model.safetensors.index.json") << idx.dump();
  auto e = load_error(dir_);
  EXPECT_NE(e.find("b.safetensors"), std::string::npos) << e;
}

}  // namespace
