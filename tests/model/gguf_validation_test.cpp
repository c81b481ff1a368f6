// Hostile GGUF headers: every count, dimension, offset and hyperparameter is checked before it
// sizes, divides or indexes anything, and the LoadError names the file, the key and the value.
// Each case here crashed, hit undefined behaviour, loaded silently or gave an error naming
// neither key nor value before the loaders validated it (docs/MODEL_FILES.md).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "model/causal_lm.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/tokenizer_loader.h"
#include "test_files.h"

namespace vllm::testing {
namespace {

using model::CausalLM;
using model::LoadError;

class GgufValidation : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = temp_dir("gguf_validation"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes g, loads it as a model (or only its tokenizer) and returns the LoadError message;
  // "" when it loaded, "NOT A LoadError: ..." for any other exception.
  std::string error_of(const GgufSpec& g, bool tokenizer_only = false) {
    const std::string p = dir_ + "/m.gguf";
    g.write(p);
    try {
      if (tokenizer_only)
        model::load_tokenizer(p);
      else
        CausalLM::load(p);
    } catch (const LoadError& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("NOT A LoadError: ") + e.what();
    }
    return "";
  }
  // The message names the file and contains every piece of `want`.
  void expect_error(const GgufSpec& g, std::initializer_list<std::string> want,
                    bool tokenizer_only = false) {
    const std::string e = error_of(g, tokenizer_only);
    ASSERT_NE(e, "") << "loaded without error";
    EXPECT_EQ(e.rfind("NOT A", 0), std::string::npos) << e;
    EXPECT_NE(e.find(dir_ + "/m.gguf"), std::string::npos) << e;
    for (const auto& w : want)
      EXPECT_NE(e.find(w), std::string::npos) << "want '" << w << "' in " << e;
  }
  std::string dir_;
};

// A tokenizer-ready tiny llama: byte-level "gpt2" model over the 64 test tokens.
GgufSpec tiny_with_tokenizer() {
  GgufSpec g = tiny_llama_gguf();
  g.strs.emplace_back("tokenizer.ggml.model", "gpt2");
  return g;
}

TEST_F(GgufValidation, BaselinesLoad) {
  EXPECT_EQ(error_of(tiny_llama_gguf()), "");
  EXPECT_EQ(error_of(tiny_with_tokenizer(), true), "");
}

// Was SIGFPE: hidden_size / head_count ran before validation.
TEST_F(GgufValidation, HeadCountZero) {
  GgufSpec g = tiny_llama_gguf();
  g.set_u32("llama.attention.head_count", 0);
  expect_error(g, {"llama.attention.head_count = 0"});
}

// Was std::bad_alloc: the layer table was reserved from the unchecked count (~1.4 TB).
TEST_F(GgufValidation, BlockCountHuge) {
  GgufSpec g = tiny_llama_gguf();
  g.set_u32("llama.block_count", 0x7fffffff);
  expect_error(g, {"llama.block_count = 2147483647", "[1, 1024]"});
}

// Was a silent load: two weights sharing bytes (NaN activations with quantized data).
TEST_F(GgufValidation, OverlappingTensors) {
  GgufSpec g = tiny_llama_gguf();
  g.tensor("blk.0.attn_k.weight")->offset = 0;  // on top of token_embd.weight
  expect_error(g, {"overlaps", "blk.0.attn_k.weight", "token_embd.weight"});
}

// Was a shape error about q_proj: head_dim was hidden / heads rounded down.
TEST_F(GgufValidation, EmbeddingNotDivisibleByHeads) {
  GgufSpec g = tiny_llama_gguf();
  g.set_u32("llama.attention.head_count", 3);
  expect_error(g,
               {"llama.embedding_length = 32 is not a multiple of llama.attention.head_count = 3"});
}

TEST_F(GgufValidation, KvHeadsAboveHeads) {
  GgufSpec g = tiny_llama_gguf();
  g.set_u32("llama.attention.head_count_kv", 3);
  expect_error(g, {"llama.attention.head_count_kv = 3", "[1, 2]"});
}

TEST_F(GgufValidation, ValueHeadSizeDiffersFromKey) {
  GgufSpec g = tiny_llama_gguf();
  g.set_u32("llama.attention.value_length", 8);
  expect_error(g, {"llama.attention.value_length = 8"});
}

// One key set to one bad value; the error must name the key and the value.
struct BadKey {
  const char* name;
  std::function<void(GgufSpec&)> mutate;
  std::vector<std::string> want;
};

class GgufBadKey : public GgufValidation, public ::testing::WithParamInterface<BadKey> {};

TEST_P(GgufBadKey, NamesKeyAndValue) {
  GgufSpec g = tiny_llama_gguf();
  GetParam().mutate(g);
  const std::string e = error_of(g);
  ASSERT_NE(e, "") << "loaded without error";
  EXPECT_EQ(e.rfind("NOT A", 0), std::string::npos) << e;
  for (const auto& w : GetParam().want)
    EXPECT_NE(e.find(w), std::string::npos) << "want '" << w << "' in " << e;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

INSTANTIATE_TEST_SUITE_P(
    Keys, GgufBadKey,
    ::testing::Values(
        BadKey{"ContextLengthHuge",
               [](GgufSpec& g) {
                 g.set_scalar<uint64_t>("llama.context_length", 10, uint64_t{1} << 40);
               },
               {"llama.context_length = 1099511627776"}},
        BadKey{"VocabSizeHuge",
               [](GgufSpec& g) { g.set_u32("llama.vocab_size", 0x80000000u); },
               {"llama.vocab_size", "= 2147483648"}},
        BadKey{"EmbeddingLengthHuge",
               [](GgufSpec& g) { g.set_u32("llama.embedding_length", 0x80000000u); },
               {"llama.embedding_length = 2147483648"}},
        BadKey{"EmbeddingLengthZero",
               [](GgufSpec& g) { g.set_u32("llama.embedding_length", 0); },
               {"llama.embedding_length = 0"}},
        BadKey{"FeedForwardZero",
               [](GgufSpec& g) { g.set_u32("llama.feed_forward_length", 0); },
               {"llama.feed_forward_length = 0"}},
        BadKey{"KeyLengthZero",
               [](GgufSpec& g) { g.set_u32("llama.attention.key_length", 0); },
               {"llama.attention.key_length = 0"}},
        BadKey{"KeyLengthOdd",
               [](GgufSpec& g) { g.set_u32("llama.attention.key_length", 15); },
               {"llama.attention.key_length = 15"}},
        BadKey{"KeyLengthHuge",
               [](GgufSpec& g) { g.set_u32("llama.attention.key_length", 1u << 20); },
               {"llama.attention.key_length = 1048576"}},
        BadKey{"RmsEpsNaN",
               [](GgufSpec& g) {
                 g.set_f32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(kNaN));
               },
               {"llama.attention.layer_norm_rms_epsilon = nan"}},
        BadKey{"RmsEpsNegative",
               [](GgufSpec& g) { g.set_f32("llama.attention.layer_norm_rms_epsilon", -1.f); },
               {"llama.attention.layer_norm_rms_epsilon = -1"}},
        // Was undefined behaviour: 1e300 converted to float for the rotary table.
        BadKey{"RopeBaseHuge",
               [](GgufSpec& g) { g.set_scalar<double>("llama.rope.freq_base", 12, 1e300); },
               {"llama.rope.freq_base = 1e+300"}},
        BadKey{"RopeBaseZero",
               [](GgufSpec& g) { g.set_f32("llama.rope.freq_base", 0.f); },
               {"llama.rope.freq_base = 0"}},
        BadKey{"RopeScalingFactorZero",
               [](GgufSpec& g) {
                 g.strs.emplace_back("llama.rope.scaling.type", "linear");
                 g.set_f32("llama.rope.scaling.factor", 0.f);
               },
               {"llama.rope.scaling.factor = 0"}},
        BadKey{"YarnFactorBelowOne",
               [](GgufSpec& g) {
                 g.strs.emplace_back("llama.rope.scaling.type", "yarn");
                 g.set_f32("llama.rope.scaling.factor", 0.5f);
                 g.set_u32("llama.rope.scaling.original_context_length", 32);
               },
               {"llama.rope.scaling.factor = 0.5"}},
        BadKey{"YarnOriginalContextZero",
               [](GgufSpec& g) {
                 g.strs.emplace_back("llama.rope.scaling.type", "yarn");
                 g.set_f32("llama.rope.scaling.factor", 4.f);
                 g.set_u32("llama.rope.scaling.original_context_length", 0);
               },
               {"llama.rope.scaling.original_context_length = 0"}},
        BadKey{"YarnAttnFactorRefused",  // llama.cpp's own mix with its factor: not guessed
               [](GgufSpec& g) {
                 g.strs.emplace_back("llama.rope.scaling.type", "yarn");
                 g.set_f32("llama.rope.scaling.factor", 4.f);
                 g.set_u32("llama.rope.scaling.original_context_length", 32);
                 g.set_f32("llama.rope.scaling.yarn_attn_factor", 1.f);
               },
               {"llama.rope.scaling.yarn_attn_factor is not supported"}},
        BadKey{"BlockCountPastInt64",
               [](GgufSpec& g) {
                 g.set_scalar<uint64_t>("llama.block_count", 10, (uint64_t{1} << 63) + 5);
               },
               {"llama.block_count", "9223372036854775813", "too large"}},
        BadKey{"BosOutsideVocab",
               [](GgufSpec& g) { g.set_u32("tokenizer.ggml.bos_token_id", 64); },
               {"tokenizer.ggml.bos_token_id = 64", "[0, 63]"}},
        BadKey{"EosOutsideVocab",
               [](GgufSpec& g) {
                 g.set_scalar<int64_t>("tokenizer.ggml.eos_token_id", 11, (int64_t{1} << 32) + 2);
               },
               {"tokenizer.ggml.eos_token_id = 4294967298"}},
        BadKey{"AlignmentNotMultipleOf8",
               [](GgufSpec& g) { g.set_u32("general.alignment", 4); },
               {"general.alignment = 4"}},
        BadKey{"AlignmentNegative",
               [](GgufSpec& g) {
                 g.set_scalar<int64_t>("general.alignment", 11,
                                       std::numeric_limits<int64_t>::min());
               },
               {"general.alignment = -9223372036854775808"}}),
    [](const auto& info) { return std::string(info.param.name); });

// llama.cpp's YaRN keys (Qwen3's long-context GGUFs) give transformers' parameters: the
// default attention factor 0.1 ln(factor) + 1, betas from their keys, the rounded correction
// range; the rotary table is YaRN's, not the plain one.
TEST_F(GgufValidation, YarnKeysGiveTransformersParameters) {
  GgufSpec g = tiny_llama_gguf();
  g.strs.emplace_back("llama.rope.scaling.type", "yarn");
  g.set_f32("llama.rope.scaling.factor", 4.f);
  g.set_u32("llama.rope.scaling.original_context_length", 32);
  g.set_f32("llama.rope.scaling.yarn_beta_fast", 16.f);
  const std::string p = dir_ + "/m.gguf";
  g.write(p);
  const auto m = CausalLM::load(p);
  const auto& r = m->config().rope_scaling;
  EXPECT_EQ(r.type, "yarn");
  EXPECT_DOUBLE_EQ(r.factor, 4.0);
  EXPECT_EQ(r.original_max_position_embeddings, 32);
  EXPECT_NEAR(r.attention_factor, 0.1 * std::log(4.0) + 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.beta_fast, 16.0);
  EXPECT_DOUBLE_EQ(r.beta_slow, 1.0);
  EXPECT_TRUE(r.truncate);
  model::ModelConfig plain = m->config();
  plain.rope_scaling = {};
  EXPECT_NE(m->rope_inv_freq(), plain.rope_inv_freq());
}

// A qwen3moe header (config only: the error comes before any tensor is looked at).
GgufSpec qwen3moe_header(uint32_t experts, uint32_t used, uint32_t ff) {
  GgufSpec g = tiny_llama_gguf();
  g.strs = {{"general.architecture", "qwen3moe"}};
  for (auto& [k, v] : g.u32s) k.replace(0, 5, "qwen3moe");
  for (auto& [k, v] : g.f32s) k.replace(0, 5, "qwen3moe");
  g.u32s.emplace_back("qwen3moe.expert_count", experts);
  g.u32s.emplace_back("qwen3moe.expert_used_count", used);
  g.u32s.emplace_back("qwen3moe.expert_feed_forward_length", ff);
  return g;
}

// Was a stack overflow at the first forward: the router keeps <= 1024 experts on the stack.
TEST_F(GgufValidation, ExpertCountAboveKernelLimit) {
  expect_error(qwen3moe_header(2000, 2, 32), {"qwen3moe.expert_count = 2000", "[0, 1024]"});
}

// Mixtral's GGUF form (llama with experts): the expert keys must agree, and a file whose
// layers are dense after all is named by the router tensor it lacks.
TEST_F(GgufValidation, LlamaWithExpertsChecksKeysAndTensors) {
  GgufSpec g = tiny_llama_gguf();
  g.u32s.emplace_back("llama.expert_count", 8);
  g.u32s.emplace_back("llama.expert_used_count", 2);
  expect_error(g, {"ffn_gate_inp.weight"});
  GgufSpec over = tiny_llama_gguf();
  over.u32s.emplace_back("llama.expert_count", 4);
  over.u32s.emplace_back("llama.expert_used_count", 5);
  expect_error(over, {"llama.expert_used_count = 5", "[1, 4]"});
  GgufSpec no_used = tiny_llama_gguf();
  no_used.u32s.emplace_back("llama.expert_count", 4);
  expect_error(no_used, {"llama.expert_used_count"});
}

// qwen2vl (Qwen2-VL / Qwen2.5-VL's text model): the rope sections are rotary-pair counts that
// fit in a head (tiny_llama_gguf: head_dim 16, 8 pairs).
TEST_F(GgufValidation, Qwen2vlRopeSectionsMustFitAHead) {
  auto header = [](std::vector<int32_t> sections) {
    GgufSpec g = tiny_llama_gguf();
    g.strs = {{"general.architecture", "qwen2vl"}};
    for (auto& [k, v] : g.u32s) k.replace(0, 5, "qwen2vl");
    for (auto& [k, v] : g.f32s) k.replace(0, 5, "qwen2vl");
    g.set_array("qwen2vl.rope.dimension_sections", 5, sections);  // i32 elements
    return g;
  };
  expect_error(header({2, 3, 4, 0}), {"qwen2vl.rope.dimension_sections sums to 9"});
  expect_error(header({-1, 3, 3, 0}), {"qwen2vl.rope.dimension_sections has an entry -1"});
  // Within a head the file loads as far as its tensors (the q/k/v biases qwen2 needs).
  expect_error(header({2, 3, 3, 0}), {"attn_q.bias"});
}

TEST_F(GgufValidation, ExpertsUsedAboveCount) {
  expect_error(qwen3moe_header(4, 5, 32), {"qwen3moe.expert_used_count = 5", "[1, 4]"});
}

TEST_F(GgufValidation, ExpertWidthZero) {
  expect_error(qwen3moe_header(4, 2, 0), {"qwen3moe.expert_feed_forward_length = 0"});
}

// Was a lazy error only when a model asked for the tensor; the size of a tensor of no GGML
// type cannot be known, so its place in the file cannot be checked.
TEST_F(GgufValidation, UnknownTensorTypeNamesTensorAndType) {
  GgufSpec g = tiny_llama_gguf();
  g.add_f32("extra.weight", {32});
  g.tensor("extra.weight")->type = 200;
  expect_error(g, {"tensor 'extra.weight' has unknown GGML type 200"});
}

// Was a silent load: the matmul kernels have no i32 path and left the output unwritten.
TEST_F(GgufValidation, IntegerTensorAsWeight) {
  GgufSpec g = tiny_llama_gguf();
  g.tensor("blk.0.attn_q.weight")->type = 26;  // I32: same bytes per element as F32
  expect_error(g, {"blk.0.attn_q.weight", "i32", "not a weight type"});
}

// Was a refusal of the whole file: a u64 past INT64_MAX is an error only where it is read.
TEST_F(GgufValidation, LargeUnsignedMetadataIsReadOnlyWhenUsed) {
  GgufSpec g = tiny_llama_gguf();
  g.set_scalar<uint64_t>("general.file_hash", 10, ~uint64_t{0});
  EXPECT_EQ(error_of(g), "");
}

// Was a silent load with infinite rotary frequencies.
TEST_F(GgufValidation, RopeFreqsDivisorZero) {
  GgufSpec g = tiny_llama_gguf();
  g.add_f32("rope_freqs.weight", {8}, 0.f);  // scale 0: every divisor is 0
  expect_error(g, {"rope_freqs.weight", "element 0"});
}

// Was a silent load: ~1.4 MB of keys is a valid file, but far past any real header.
TEST_F(GgufValidation, TooManyMetadataKeys) {
  GgufSpec g = tiny_llama_gguf();
  for (int i = 0; i < 70000; ++i) g.u32s.emplace_back("k" + std::to_string(i), 0);
  expect_error(g, {"metadata count 70010", "65536"});
}

// Was a parse of every element: a count bounded only by the file (tensor data included) let a
// mutated header build ~12M strings from a 100 MB file.
TEST_F(GgufValidation, MetadataArrayOverCap) {
  GgufSpec g = tiny_llama_gguf();
  g.set_array<uint8_t>("general.blob", 0, std::vector<uint8_t>((1 << 22) + 1));
  expect_error(g, {"key 'general.blob': array length 4194305", "4194304"});
}

// Tokenizer metadata (load_tokenizer on the file).

// Was a silent truncation to id 2.
TEST_F(GgufValidation, VocabEosIdPastInt32) {
  GgufSpec g = tiny_with_tokenizer();
  g.set_scalar<int64_t>("tokenizer.ggml.eos_token_id", 11, (int64_t{1} << 32) + 2);
  expect_error(g, {"tokenizer.ggml.eos_token_id = 4294967298"}, true);
}

// Was a silent load (only ids past the end were checked).
TEST_F(GgufValidation, VocabPadIdNegative) {
  GgufSpec g = tiny_with_tokenizer();
  g.set_scalar<int32_t>("tokenizer.ggml.padding_token_id", 5, -5);
  expect_error(g, {"tokenizer.ggml.padding_token_id = -5"}, true);
}

TEST_F(GgufValidation, VocabTokenTypeCountMismatch) {
  GgufSpec g = tiny_with_tokenizer();
  g.set_array<int32_t>("tokenizer.ggml.token_type", 5, {1, 1, 3});
  expect_error(g, {"tokenizer.ggml.token_type has 3 entries", "tokenizer.ggml.tokens has 64"},
               true);
}

TEST_F(GgufValidation, VocabTokenTypeUnknown) {
  GgufSpec g = tiny_with_tokenizer();
  std::vector<int32_t> types(64, 1);
  types[7] = 99;
  g.set_array<int32_t>("tokenizer.ggml.token_type", 5, types);
  expect_error(g, {"tokenizer.ggml.token_type value 99"}, true);
}

// The header parser runs on bytes in memory, without a file (the fuzzing entry point).
TEST(GgufParse, FromMemory) {
  const auto b = tiny_llama_gguf().bytes();
  auto g = model::GgufFile::parse("in-memory", b.data(), b.size());
  EXPECT_EQ(g->mapped(), nullptr);
  EXPECT_EQ(g->tensors().size(), 11u);
  EXPECT_GT(g->data_start(), g->tensor_infos_start());
  vllm::model::LoadOptions opts;
  opts.pack_weights = false;
  auto m = CausalLM::from_gguf(std::move(g), vt::ThreadPool::global(), opts);
  EXPECT_EQ(m->config().num_layers, 1);
  std::vector<uint8_t> bad = b;
  bad.resize(40);
  try {
    model::GgufFile::parse("in-memory", bad.data(), bad.size());
    ADD_FAILURE() << "truncated bytes parsed";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("in-memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vllm::testing
