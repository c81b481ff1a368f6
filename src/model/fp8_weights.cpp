#include "model/fp8_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/load_error.h"
#include "vt/cpu/kernels.h"

namespace vllm::model {

float fp8_e4m3_to_float(uint8_t code) {
  const int e = (code >> 3) & 0xF, m = code & 7;
  float v;
  if (e == 0xF && m == 7)
    v = std::nanf("");
  else if (e == 0)
    v = std::ldexp(static_cast<float>(m), -9);  // m / 8 * 2^-6
  else
    v = std::ldexp(static_cast<float>(8 + m), e - 10);  // (1 + m / 8) * 2^(e - 7)
  return code & 0x80 ? -v : v;
}

namespace {

// `x.weight` -> `x.weight_scale_inv` (and a fused expert stack `experts.gate_up_proj` ->
// `experts.gate_up_proj_scale_inv`).
std::string scale_name(const std::string& weight) { return weight + "_scale_inv"; }

void convert(WeightStore& s, const std::string& name, int64_t br, int64_t bc) {
  const TensorRef w = s.take(name);
  if (w.shape.size() < 2)
    throw LoadError(w.file, "FP8 tensor " + w.label() + " has shape " + w.shape_str() +
                                " (an FP8 block-quantized weight is a matrix or a stack of them)");
  const std::string sname = scale_name(name);
  const TensorRef* sp = s.find(sname);
  if (!sp)
    throw LoadError(w.file, "FP8 tensor " + w.label() + " has no scale tensor '" + sname + "'");
  const TensorRef sc = s.take(sname);
  const int64_t R = w.shape[w.shape.size() - 2], C = w.shape.back();
  std::vector<int64_t> want(w.shape.begin(), w.shape.end() - 2);
  const int64_t SR = (R + br - 1) / br, SC = (C + bc - 1) / bc;
  want.push_back(SR);
  want.push_back(SC);
  if (sc.shape != want || !sc.unsupported_type.empty() ||
      (sc.dtype != vt::DType::F32 && sc.dtype != vt::DType::BF16 && sc.dtype != vt::DType::F16)) {
    TensorRef t;
    t.shape = want;
    throw LoadError(
        sc.file, "FP8 scale " + sc.label() + " of " + w.label() + " has shape " + sc.shape_str() +
                     " and type " +
                     (sc.unsupported_type.empty() ? std::string(vt::dtype_info(sc.dtype).name)
                                                  : sc.unsupported_type) +
                     ", expected F32, BF16 or F16 " + t.shape_str() + " (weight_block_size [" +
                     std::to_string(br) + ", " + std::to_string(bc) + "])");
  }
  const int64_t mats = w.numel() / (R * C);
  if (static_cast<size_t>(w.numel()) != w.n_bytes)
    throw LoadError(w.file, "FP8 tensor " + w.label() + " holds " + std::to_string(w.n_bytes) +
                                " bytes for " + std::to_string(w.numel()) + " elements");
  std::vector<float> scales(static_cast<size_t>(mats * SR * SC));
  vt::cpu::dequantize_row(sc.dtype, sc.data, scales.data(), static_cast<int64_t>(scales.size()));
  for (size_t i = 0; i < scales.size(); ++i)
    if (!std::isfinite(scales[i]) || scales[i] < 0)
      throw LoadError(sc.file, "FP8 scale " + sc.label() + " element " + std::to_string(i) + " = " +
                                   std::to_string(scales[i]) +
                                   " (scales must be finite and non-negative)");
  float lut[256];
  for (int c = 0; c < 256; ++c) lut[c] = fp8_e4m3_to_float(static_cast<uint8_t>(c));
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(w.numel()) * 2);
  const auto* q = static_cast<const uint8_t*>(w.data);
  auto* out = reinterpret_cast<uint16_t*>(bytes->data());
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t r = 0; r < R; ++r) {
      const float* srow = scales.data() + (m * SR + r / br) * SC;
      const int64_t base = (m * R + r) * C;
      for (int64_t c0 = 0; c0 < C; c0 += bc) {
        const float sv = srow[c0 / bc];
        for (int64_t c = c0; c < std::min(C, c0 + bc); ++c) {
          const uint8_t code = q[base + c];
          if ((code & 0x7F) == 0x7F)
            throw LoadError(w.file, "FP8 tensor " + w.label() + " element " +
                                        std::to_string(base + c) + " is a NaN code");
          out[base + c] = vt::cpu::fp32_to_bf16(lut[code] * sv);
        }
      }
    }
  TensorRef t;
  t.name = name;
  t.dtype = vt::DType::BF16;
  t.shape = w.shape;
  t.data = bytes->data();
  t.n_bytes = bytes->size();
  t.file = w.file;
  t.stored_name = w.stored_name;
  s.keep_converted(std::move(bytes));  // freed once packed (WeightStore::release_converted)
  s.add(std::move(t));
}

}  // namespace

void dequantize_fp8_weights(WeightStore& s, const ModelConfig& c) {
  if (c.fp8_block_rows <= 0) return;
  std::vector<std::string> names;
  for (const auto& [n, t] : s.all())
    if (t.unsupported_type == "F8_E4M3") names.push_back(n);
  for (const std::string& n : names) convert(s, n, c.fp8_block_rows, c.fp8_block_cols);
}

}  // namespace vllm::model
