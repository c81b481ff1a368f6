// Element types a tensor can hold, and the block geometry of the quantized ones.
// Quantized formats follow GGML's block layouts byte for byte, so GGUF tensors are
// used where they are mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "vt/dtype_zoo.h"

namespace vt {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  Q8_0,
  Q4_0,
  Q4_1,
  Q4_K,
  Q6_K,
  I32,
  Q8_K,
  // The rest of llama.cpp's common quantization mixes (dtype_zoo.h has their blocks).
  Q5_0,
  Q5_1,
  Q2_K,
  Q3_K,
  IQ4_NL,
  IQ4_XS,
  Q5_K,   // GGML type 13 (K-quant helper's kquant.h)
  MXFP4,  // GGML type 39 (GPT-OSS's MoE experts): e2m1 values with an E8M0 block scale
};

struct DTypeInfo {
  std::string_view name;
  int block_elems;  // elements per block (1 for plain types)
  int block_bytes;  // bytes per block
};

const DTypeInfo& dtype_info(DType t);
inline std::string_view dtype_name(DType t) { return dtype_info(t).name; }
bool is_quantized(DType t);

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t row_bytes(DType t, int64_t n);

// The IEEE binary16 / bfloat16 bits of an fp32 value, rounded to nearest even: the kernels'
// own conversions, for layers above vt (the embeddings API's float16 / bfloat16 base64).
uint16_t fp32_to_fp16_bits(float f);
uint16_t fp32_to_bf16_bits(float f);

// GGML type ids as stored in GGUF headers (ggml_type), for the types we run.
std::optional<DType> dtype_from_ggml(uint32_t ggml_type);
std::string_view ggml_type_name(uint32_t ggml_type);  // for error messages; "type N" if unknown

// Block layouts (GGML-compatible). Scales are fp16 stored as raw bits.
constexpr int kQK = 32;     // elements per Q8_0 / Q4_0 / Q4_1 block
constexpr int kQK_K = 256;  // elements per K-quant super-block

struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];  // low nibble: element j, high nibble: element j + 16
};
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];  // 8 6-bit scales and 8 6-bit mins, packed
  uint8_t qs[kQK_K / 2];
};
// Q4_K's scales and mins, plus a fifth bit per element: bit j of qh[l] belongs to element
// 32 j + l (sub-block j); the low nibbles are laid out as Q4_K's.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
// Activation format for K-quant dot products: f32 scale, int8 values, 16-element sums.
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};

static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

}  // namespace vt
