// FP8 checkpoints (config.json quantization_config {"quant_method": "fp8", "fmt": "e4m3",
// "weight_block_size": [br, bc], "activation_scheme": "dynamic"}: Qwen3-*-FP8, DeepSeek-V3's
// form, MiniMax-M2, GLM-4.5-FP8): each F8_E4M3 weight [..., R, C] with its `*.weight_scale_inv`
// [..., ceil(R / br), ceil(C / bc)] (F32 / BF16 / F16) becomes one BF16 tensor,
// bf16(float(e4m3) * scale) rounded to nearest even, as transformers' dequantizer computes it
// for a bf16 model (FineGrainedFP8 dequantize: (q.float() * s).to(bfloat16)). The products then
// run as a BF16 checkpoint's: activations are not quantized to FP8 (vLLM's GPU kernels
// quantize them per 128-element group; that is a compute approximation, not part of the
// weights). The BF16 copies are converted buffers (WeightStore::keep_converted), freed once
// packing has copied them.
#pragma once

#include "model/config.h"
#include "model/weight_store.h"

namespace vllm::model {

// Replaces every F8_E4M3 tensor of `s` by its BF16 dequantization and drops the scales used.
// A LoadError names the tensor for a missing or misshapen scale, a non-finite or negative
// scale, or an FP8 NaN code. No-op unless c.fp8_block_rows > 0.
void dequantize_fp8_weights(WeightStore& s, const ModelConfig& c);

// float(e4m3fn code): sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 subnormal;
// 0x7F / 0xFF NaN (no infinities).
float fp8_e4m3_to_float(uint8_t code);

}  // namespace vllm::model
