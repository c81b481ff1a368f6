// Load errors around the zoo types: a type this engine does not run names the tensor and the
// type; a zoo tensor whose row length is not a whole number of blocks, or whose data the file
// cuts short, names the file and the tensor (the checks read the geometry from dtype_info).
#include <gtest/gtest.h>

#include <filesystem>

#include "load_error_test_util.h"
#include "model/causal_lm.h"
#include "model/load_error.h"
#include "test_files.h"

using vllm::model::CausalLM;
using vllm::model::LoadError;
using namespace vllm::testing;

namespace {

class ZooLoadErrors : public ScratchDirTest {};

GgufSpec::Tensor& tensor(GgufSpec& g, const std::string& name) {
  GgufSpec::Tensor* t = g.tensor(name);
  if (!t) throw std::runtime_error("no tensor " + name);
  return *t;
}

TEST_F(ZooLoadErrors, UnsupportedTypeNamesTensorAndType) {
  const struct {
    uint32_t id;
    const char* name;
  } types[] = {{16, "IQ2_XXS"}, {19, "IQ1_S"}, {21, "IQ3_S"}, {34, "TQ1_0"}, {35, "TQ2_0"}};
  for (const auto& ty : types) {
    GgufSpec g = tiny_llama_gguf();
    tensor(g, "blk.0.ffn_up.weight").type = ty.id;
    const std::string p = path(std::string(ty.name) + ".gguf");
    g.write(p);
    const std::string e = load_error(p);
    EXPECT_NE(e.find("blk.0.ffn_up.weight"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("unsupported dtype ") + ty.name), std::string::npos) << e;
  }
}

TEST_F(ZooLoadErrors, RowLengthNotAWholeNumberOfBlocks) {
  // The tiny model's rows have 32 elements: one block of the 32-element types, a fraction of
  // a 256-element super-block.
  const struct {
    uint32_t id;
    const char* name;
  } types[] = {{10, "q2_k"}, {11, "q3_k"}, {23, "iq4_xs"}};
  for (const auto& ty : types) {
    GgufSpec g = tiny_llama_gguf();
    auto& t = tensor(g, "blk.0.attn_q.weight");
    t.type = ty.id;
    t.data.resize(4096);
    const std::string p = path(std::string(ty.name) + ".gguf");
    g.write(p);
    const std::string e = load_error(p);
    EXPECT_NE(e.find(p), std::string::npos) << e;
    EXPECT_NE(e.find("blk.0.attn_q.weight"), std::string::npos) << e;
    EXPECT_NE(e.find(ty.name), std::string::npos) << e;
    EXPECT_EQ(e.find("unsupported"), std::string::npos) << e;  // a known type, a bad shape
  }
}

TEST_F(ZooLoadErrors, Mxfp4RowLengthNotAWholeNumberOfBlocks) {
  // MXFP4 blocks are 32 elements, so a 48-element row is one and a half of them; the reader
  // refuses it before any model asks for the tensor.
  GgufSpec g = tiny_llama_gguf();
  auto& t = tensor(g, "blk.0.ffn_down.weight");
  t.type = 39;
  t.ne = {48, 32};
  t.data.assign(4096, 0);
  const std::string p = path("mxfp4_rows.gguf");
  g.write(p);
  const std::string e = load_error(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("blk.0.ffn_down.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("row length 48"), std::string::npos) << e;
  EXPECT_NE(e.find("mxfp4 block size 32"), std::string::npos) << e;
  EXPECT_EQ(e.find("unsupported"), std::string::npos) << e;
}

TEST_F(ZooLoadErrors, TruncatedZooTensor) {
  // ffn_down is the last tensor: 32 rows of 64 elements, 2 blocks each.
  const struct {
    uint32_t id;
    size_t block_bytes;
  } types[] = {{6, 22}, {7, 24}, {20, 18}, {39, 17}};
  for (const auto& ty : types) {
    GgufSpec g = tiny_llama_gguf();
    auto& t = tensor(g, "blk.0.ffn_down.weight");
    t.type = ty.id;
    t.data.assign(32 * 2 * ty.block_bytes, 0);
    auto b = g.bytes();
    b.resize(b.size() - 40);  // past the alignment padding, into the last blocks
    const std::string p = path("trunc" + std::to_string(ty.id) + ".gguf");
    write_file(p, b);
    const std::string e = load_error(p);
    EXPECT_NE(e.find(p), std::string::npos) << e;
    EXPECT_NE(e.find("blk.0.ffn_down.weight"), std::string::npos) << e;
    EXPECT_NE(e.find("past the end"), std::string::npos) << e;
  }
}

TEST_F(ZooLoadErrors, ZooTypesOfTheTinyModelLoad) {
  // The same tiny model with its 32-wide matrices in the 32-element zoo types runs.
  for (uint32_t id : {6u, 7u, 20u, 39u}) {
    GgufSpec g = tiny_llama_gguf();
    auto& t = tensor(g, "blk.0.attn_q.weight");  // 32 x 32: 32 blocks
    t.type = id;
    t.data.assign(32 * (id == 6 ? 22 : id == 7 ? 24 : id == 20 ? 18 : 17), 0x11);
    const std::string p = path("ok" + std::to_string(id) + ".gguf");
    g.write(p);
    EXPECT_EQ(load_error(p), "") << id;
  }
}

}  // namespace
