// Type table and GGML id mapping.
#include "vt/dtype.h"

#include <string>

#include "vt/cpu/kernels.h"

namespace vt {

namespace {
const DTypeInfo kInfo[] = {
    {"f32", 1, 4},
    {"f16", 1, 2},
    {"bf16", 1, 2},
    {"q8_0", kQK, sizeof(BlockQ8_0)},
    {"q4_0", kQK, sizeof(BlockQ4_0)},
    {"q4_1", kQK, sizeof(BlockQ4_1)},
    {"q4_k", kQK_K, sizeof(BlockQ4_K)},
    {"q6_k", kQK_K, sizeof(BlockQ6_K)},
    {"i32", 1, 4},
    {"q8_k", kQK_K, sizeof(BlockQ8_K)},
    {"q5_0", kQK, sizeof(BlockQ5_0)},
    {"q5_1", kQK, sizeof(BlockQ5_1)},
    {"q2_k", kQK_K, sizeof(BlockQ2_K)},
    {"q3_k", kQK_K, sizeof(BlockQ3_K)},
    {"iq4_nl", kQK, sizeof(BlockIQ4_NL)},
    {"iq4_xs", kQK_K, sizeof(BlockIQ4_XS)},
    {"q5_k", kQK_K, sizeof(BlockQ5_K)},
    {"mxfp4", kQK, sizeof(BlockMXFP4)},
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == static_cast<size_t>(DType::MXFP4) + 1);
}  // namespace

const DTypeInfo& dtype_info(DType t) { return kInfo[static_cast<int>(t)]; }

bool is_quantized(DType t) { return dtype_info(t).block_elems > 1; }

size_t row_bytes(DType t, int64_t n) {
  const DTypeInfo& i = dtype_info(t);
  return static_cast<size_t>(n / i.block_elems) * static_cast<size_t>(i.block_bytes);
}

std::optional<DType> dtype_from_ggml(uint32_t g) {
  switch (g) {
    case 0:
      return DType::F32;
    case 1:
      return DType::F16;
    case 2:
      return DType::Q4_0;
    case 3:
      return DType::Q4_1;
    case 6:
      return DType::Q5_0;
    case 7:
      return DType::Q5_1;
    case 8:
      return DType::Q8_0;
    case 10:
      return DType::Q2_K;
    case 11:
      return DType::Q3_K;
    case 12:
      return DType::Q4_K;
    case 13:
      return DType::Q5_K;
    case 14:
      return DType::Q6_K;
    case 20:
      return DType::IQ4_NL;
    case 23:
      return DType::IQ4_XS;
    case 26:
      return DType::I32;
    case 30:
      return DType::BF16;
    case 39:
      return DType::MXFP4;
    default:
      return std::nullopt;
  }
}

std::string_view ggml_type_name(uint32_t g) {
  static const char* names[] = {
      "F32",   "F16",        "Q4_0",       "Q4_1",       "Q4_2",     "Q4_3",     "Q5_0",
      "Q5_1",  "Q8_0",       "Q8_1",       "Q2_K",       "Q3_K",     "Q4_K",     "Q5_K",
      "Q6_K",  "Q8_K",       "IQ2_XXS",    "IQ2_XS",     "IQ3_XXS",  "IQ1_S",    "IQ4_NL",
      "IQ3_S", "IQ2_S",      "IQ4_XS",     "I8",         "I16",      "I32",      "I64",
      "F64",   "IQ1_M",      "BF16",       "Q4_0_4_4",   "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",
      "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4"};
  if (g < sizeof(names) / sizeof(names[0])) return names[g];
  return "unknown";
}

uint16_t fp32_to_fp16_bits(float f) { return cpu::fp32_to_fp16(f); }
uint16_t fp32_to_bf16_bits(float f) { return cpu::fp32_to_bf16(f); }

}  // namespace vt
