// The FP8 checkpoint loader (model/fp8_weights.h): e4m3 decoding against torch's
// (tests/golden/fp8/e4m3.json, tools/make_fp8_goldens.py), the block scales over a weight whose
// sides the block does not divide (vLLM's ceil-sized scale grid), bf16 rounding of products
// that are not bfloat16 values, and the errors that name the tensor. The whole path on a model
// is the qwen3_fp8 HfReference gate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/fp8_weights.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "test_paths.h"

using vllm::model::dequantize_fp8_weights;
using vllm::model::fp8_e4m3_to_float;
using vllm::model::LoadError;
using vllm::model::ModelConfig;
using vllm::model::TensorRef;
using vllm::model::WeightStore;
using vllm::testing::golden_dir;
using vllm::testing::read_json_file;

namespace {

// Round to nearest even at bfloat16 (finite inputs), written apart from the loader's.
uint16_t bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t lsb = (u >> 16) & 1;
  return static_cast<uint16_t>((u + 0x7FFF + lsb) >> 16);
}

struct Fp8Store {
  WeightStore s;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> keep;
  void add(const std::string& name, std::vector<int64_t> shape, std::vector<uint8_t> bytes,
           vt::DType dtype, const std::string& unsupported = "") {
    auto b = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    TensorRef t;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data = b->data();
    t.n_bytes = b->size();
    t.file = "test.safetensors";
    t.unsupported_type = unsupported;
    keep.push_back(b);
    s.add(std::move(t));
  }
  void add_codes(const std::string& name, std::vector<int64_t> shape,
                 const std::vector<uint8_t>& codes) {
    add(name, std::move(shape), codes, vt::DType::I32, "F8_E4M3");
  }
  void add_f32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    add(name, std::move(shape), std::move(b), vt::DType::F32);
  }
};

ModelConfig fp8_config(int64_t br, int64_t bc) {
  ModelConfig c;
  c.fp8_block_rows = br;
  c.fp8_block_cols = bc;
  return c;
}

std::string load_error(Fp8Store& f, const ModelConfig& c) {
  try {
    dequantize_fp8_weights(f.s, c);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Fp8Weights, E4m3DecodingMatchesTorch) {
  const auto gold = read_json_file(golden_dir() + "/fp8/e4m3.json")["values"];
  ASSERT_EQ(gold.size(), 256u);
  for (int c = 0; c < 256; ++c) {
    const float v = fp8_e4m3_to_float(static_cast<uint8_t>(c));
    if (gold[c].is_null())
      EXPECT_TRUE(std::isnan(v)) << "code " << c;
    else
      EXPECT_EQ(v, gold[c].get<double>()) << "code " << c;
  }
}

// A 5 x 7 weight in 2 x 4 blocks: a 3 x 2 scale grid whose last row and column cover partial
// blocks; scales that are not powers of two, so products round at bfloat16.
TEST(Fp8Weights, BlockScalesCoverPartialBlocksAndRoundToBf16) {
  Fp8Store f;
  std::vector<uint8_t> codes(35);
  for (int i = 0; i < 35; ++i) codes[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  codes[3] = 0x7E;  // the largest finite code, 448
  for (auto& c : codes)
    if ((c & 0x7F) == 0x7F) c ^= 1;  // no NaN codes here
  const std::vector<float> scales = {0.013f, 1.7e-3f, 3.3f, 0.0f, 0.29f, 7.1e-5f};
  f.add_codes("model.layers.0.mlp.up_proj.weight", {5, 7}, codes);
  f.add_f32("model.layers.0.mlp.up_proj.weight_scale_inv", {3, 2}, scales);
  dequantize_fp8_weights(f.s, fp8_config(2, 4));
  EXPECT_FALSE(f.s.has("model.layers.0.mlp.up_proj.weight_scale_inv"));
  const TensorRef* t = f.s.find("model.layers.0.mlp.up_proj.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, vt::DType::BF16);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{5, 7}));
  const auto gold = read_json_file(golden_dir() + "/fp8/e4m3.json")["values"];
  const auto* out = static_cast<const uint16_t*>(t->data);
  int rounded = 0;
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 7; ++c) {
      const float prod =
          static_cast<float>(gold[codes[r * 7 + c]].get<double>()) * scales[(r / 2) * 2 + c / 4];
      EXPECT_EQ(out[r * 7 + c], bf16_rne(prod)) << r << "," << c;
      uint32_t u;
      std::memcpy(&u, &prod, 4);
      rounded += (u & 0xFFFF) != 0;
    }
  EXPECT_GT(rounded, 10);  // the rounding is exercised, not only exact products
}

// Stacked experts (transformers 5's fused form): the scale grid per matrix.
TEST(Fp8Weights, StackedMatricesTakeTheirOwnScales) {
  Fp8Store f;
  std::vector<uint8_t> codes(2 * 2 * 2, 0x38);  // 1.0
  f.add_codes("model.layers.0.mlp.experts.down_proj", {2, 2, 2}, codes);
  f.add_f32("model.layers.0.mlp.experts.down_proj_scale_inv", {2, 1, 1}, {0.5f, 4.0f});
  dequantize_fp8_weights(f.s, fp8_config(128, 128));
  const auto* out =
      static_cast<const uint16_t*>(f.s.find("model.layers.0.mlp.experts.down_proj")->data);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], bf16_rne(0.5f));
  for (int i = 4; i < 8; ++i) EXPECT_EQ(out[i], bf16_rne(4.0f));
}

TEST(Fp8Weights, BadScalesAndCodesNameTheTensor) {
  {
    Fp8Store f;
    f.add_codes("model.layers.0.self_attn.q_proj.weight", {2, 2}, {0x38, 0x38, 0x38, 0x38});
    const std::string e = load_error(f, fp8_config(2, 2));
    EXPECT_NE(e.find("'model.layers.0.self_attn.q_proj.weight'"), std::string::npos) << e;
    EXPECT_NE(e.find("no scale tensor"), std::string::npos) << e;
  }
  {
    Fp8Store f;
    f.add_codes("w.weight", {4, 4}, std::vector<uint8_t>(16, 0x38));
    f.add_f32("w.weight_scale_inv", {1, 1}, {1.0f});  // blocks of 2 x 2 need a 2 x 2 grid
    const std::string e = load_error(f, fp8_config(2, 2));
    EXPECT_NE(e.find("'w.weight_scale_inv'"), std::string::npos) << e;
    EXPECT_NE(e.find("expected F32, BF16 or F16 [2, 2]"), std::string::npos) << e;
  }
  {
    Fp8Store f;
    f.add_codes("w.weight", {2, 2}, {0x38, 0x7F, 0x38, 0x38});
    f.add_f32("w.weight_scale_inv", {1, 1}, {1.0f});
    const std::string e = load_error(f, fp8_config(2, 2));
    EXPECT_NE(e.find("'w.weight' element 1 is a NaN code"), std::string::npos) << e;
  }
  {
    Fp8Store f;
    f.add_codes("w.weight", {2, 2}, std::vector<uint8_t>(4, 0x38));
    f.add_f32("w.weight_scale_inv", {1, 1}, {-1.0f});
    const std::string e = load_error(f, fp8_config(2, 2));
    EXPECT_NE(e.find("'w.weight_scale_inv' element 0"), std::string::npos) << e;
  }
}

// A checkpoint without quantization_config never has its FP8 tensors converted: they stay
// unsupported, and binding one names its type.
TEST(Fp8Weights, WithoutTheConfigNothingIsConverted) {
  Fp8Store f;
  f.add_codes("w.weight", {2, 2}, std::vector<uint8_t>(4, 0x38));
  f.add_f32("w.weight_scale_inv", {1, 1}, {1.0f});
  dequantize_fp8_weights(f.s, ModelConfig{});
  EXPECT_EQ(f.s.find("w.weight")->unsupported_type, "F8_E4M3");
  EXPECT_TRUE(f.s.has("w.weight_scale_inv"));
}

// The model holds one copy of an FP8 checkpoint's projections: packing copies the BF16
// dequantization, which is then freed (2 layers x (q 128x64, k, v 64x64, o 64x128, gate, up
// 128x64, down 64x128) bf16 values).
TEST(Fp8Weights, DequantizedCopiesAreFreedOncePacked) {
  auto m = vllm::model::CausalLM::load(vllm::testing::tiny_models_dir() + "/qwen3_fp8");
  EXPECT_EQ(m->converted_bytes_freed(), size_t{2 * (8192 + 4096 + 4096 + 8192 * 4) * 2});
}
