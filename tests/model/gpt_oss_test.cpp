// The tiny gpt-oss (tools/make_tiny_models.py) in its three forms: the released checkpoints'
// MXFP4 folder (U8 blocks / exponents, gate and up interleaved), an unquantized export (BF16,
// input dimension first) and the GGUF llama.cpp's converter writes (tools/make_llama_gguf.py).
// They hold the same weights (make_hf_goldens.py checks it with transformers' own dequantizer),
// so every weight the loader binds must read back bit for bit the same from all three: the
// MXFP4 rewrite (nibble order, gate / up split, bias split) and the transposes are exact.
#include <gtest/gtest.h>

#include <vector>

#include "model/causal_lm.h"
#include "test_paths.h"
#include "vt/cpu/kernels.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::LoadOptions;

namespace {

std::unique_ptr<CausalLM> load_unpacked(const std::string& path) {
  LoadOptions o;
  o.pack_weights = false;  // rows as stored, read back with dequantize_row
  return CausalLM::load(path, vt::ThreadPool::global(), o);
}

std::vector<float> rows_f32(const vt::cpu::WeightView& w) {
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r)
    vt::cpu::dequantize_row(w.dtype, static_cast<const uint8_t*>(w.data) + r * w.row_stride,
                            out.data() + r * w.cols, w.cols);
  return out;
}

}  // namespace

TEST(GptOss, ThreeFormsBindTheSameWeights) {
  const std::string dir = tiny_models_dir();
  auto mx = load_unpacked(dir + "/gpt_oss");
  auto plain = load_unpacked(dir + "/gpt_oss_plain");
  auto gguf = load_unpacked(dir + "/gpt_oss.gguf");
  ASSERT_EQ(mx->layers().size(), 4u);
  EXPECT_EQ(mx->layers()[0].experts.gate[0].dtype, vt::DType::MXFP4);
  EXPECT_EQ(gguf->layers()[0].experts.down[3].dtype, vt::DType::MXFP4);
  EXPECT_EQ(plain->layers()[0].experts.up[1].dtype, vt::DType::BF16);
  for (const CausalLM* other : {plain.get(), gguf.get()}) {
    const auto& a = mx->config();
    const auto& b = other->config();
    EXPECT_EQ(a.num_experts, b.num_experts);
    EXPECT_EQ(a.num_experts_per_tok, b.num_experts_per_tok);
    EXPECT_EQ(a.moe_intermediate_size, b.moe_intermediate_size);
    EXPECT_EQ(a.sliding_window, b.sliding_window);
    EXPECT_EQ(a.rope_scaling.factor, b.rope_scaling.factor);
    EXPECT_EQ(a.rope_scaling.original_max_position_embeddings,
              b.rope_scaling.original_max_position_embeddings);
    EXPECT_TRUE(b.o_bias && b.attention_sinks && b.moe_bias && b.topk_before_softmax);
    EXPECT_EQ(b.swiglu_alpha, 1.702);
    EXPECT_EQ(b.swiglu_limit, 7.0);
    for (size_t i = 0; i < mx->layers().size(); ++i) {
      SCOPED_TRACE("layer " + std::to_string(i));
      const auto& x = mx->layers()[i];
      const auto& y = other->layers()[i];
      EXPECT_EQ(x.attn.o_bias, y.attn.o_bias);
      EXPECT_EQ(x.attn.sinks, y.attn.sinks);
      EXPECT_EQ(x.attn.q_bias, y.attn.q_bias);
      EXPECT_EQ(rows_f32(x.attn.o), rows_f32(y.attn.o));
      EXPECT_EQ(x.experts.norm, y.experts.norm);
      EXPECT_EQ(x.experts.router_bias, y.experts.router_bias);
      EXPECT_EQ(rows_f32(x.experts.router), rows_f32(y.experts.router));
      for (size_t e = 0; e < x.experts.gate.size(); ++e) {
        SCOPED_TRACE("expert " + std::to_string(e));
        EXPECT_EQ(rows_f32(x.experts.gate[e]), rows_f32(y.experts.gate[e]));
        EXPECT_EQ(rows_f32(x.experts.up[e]), rows_f32(y.experts.up[e]));
        EXPECT_EQ(rows_f32(x.experts.down[e]), rows_f32(y.experts.down[e]));
        EXPECT_EQ(x.experts.gate_bias[e], y.experts.gate_bias[e]);
        EXPECT_EQ(x.experts.up_bias[e], y.experts.up_bias[e]);
        EXPECT_EQ(x.experts.down_bias[e], y.experts.down_bias[e]);
      }
    }
  }
  // The two checkpoints say truncate: false (transformers' reading); the GGUF has no key and is
  // read as llama.cpp reads it.
  EXPECT_FALSE(mx->config().rope_scaling.truncate);
  EXPECT_FALSE(plain->config().rope_scaling.truncate);
  EXPECT_TRUE(gguf->config().rope_scaling.truncate);
}

// The MXFP4 checkpoint's experts are rewritten into a buffer of their own; once packing has
// copied them out, that buffer is freed (one copy of the experts in memory, not two), and the
// packed model still reads them (the HfReference gate runs it).
TEST(GptOss, RewrittenExpertsAreFreedOncePacked) {
  auto packed = CausalLM::load(tiny_models_dir() + "/gpt_oss");
  // 4 layers x 4 experts x (gate + up: 2 x 32 rows of 2 blocks, down: 64 rows of 1 block) x 17
  // bytes, and the split gate / up biases (4 layers x 2 x 4 experts x 32 floats), which the
  // layers copied.
  EXPECT_EQ(packed->converted_bytes_freed(),
            size_t{4 * 4 * (2 * 32 * 2 + 64 * 1) * 17 + 4 * 2 * 4 * 32 * 4});
  EXPECT_EQ(load_unpacked(tiny_models_dir() + "/gpt_oss")->converted_bytes_freed(), 0u);
}
