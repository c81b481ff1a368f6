// Start-up checks of the CUDA backend as pure functions of what the driver reported, so the
// CPU tests pin down the messages: no device, a device too old for this build, too little
// memory for the weights or the KV cache, a weight the kernels cannot read.
// Each returns "" when all is well, else a message naming the value and what to do.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "vt/dtype.h"

namespace vt::cuda {

// The oldest compute capability this build runs on: it carries sm_90 code and compute_90
// PTX, which the driver JIT-compiles for newer GPUs but cannot run on older ones.
constexpr int kMinComputeMajor = 9;
constexpr int kMinComputeMinor = 0;

struct DeviceFacts {
  int device_count = 0;
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  size_t free_bytes = 0, total_bytes = 0;
  std::string runtime_error;  // non-empty: cudaGetDeviceCount failed (no driver, ...)
};

// What the CUDA runtime reports for device `ordinal` (device.cpp; CUDA builds only).
DeviceFacts query_device(int ordinal);
// Throws std::runtime_error with device_problem's message when the device cannot be used.
void require_device(int ordinal);

inline std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

inline std::string device_problem(const DeviceFacts& f) {
  if (!f.runtime_error.empty())
    return "no CUDA device: the CUDA runtime reports '" + f.runtime_error +
           "' (is the NVIDIA driver installed and a GPU visible? check nvidia-smi and "
           "CUDA_VISIBLE_DEVICES)";
  if (f.device_count == 0)
    return "no CUDA device: the CUDA runtime sees no GPU (check nvidia-smi and "
           "CUDA_VISIBLE_DEVICES)";
  if (f.ordinal < 0 || f.ordinal >= f.device_count)
    return "CUDA device " + std::to_string(f.ordinal) + " does not exist (" +
           std::to_string(f.device_count) + " visible; valid ordinals are 0.." +
           std::to_string(f.device_count - 1) + ")";
  if (f.cc_major < kMinComputeMajor ||
      (f.cc_major == kMinComputeMajor && f.cc_minor < kMinComputeMinor))
    return "CUDA device " + std::to_string(f.ordinal) + " (" + f.name +
           ") has compute capability " + std::to_string(f.cc_major) + "." +
           std::to_string(f.cc_minor) + "; this build needs " + std::to_string(kMinComputeMajor) +
           "." + std::to_string(kMinComputeMinor) +
           " or newer (Hopper and later; it carries sm_90 code and compute_90 PTX)";
  return "";
}

// `reserve` is what must stay free beside the request (scratch, cuBLASLt workspace, the
// CUDA context's own allocations).
inline std::string weights_memory_problem(const std::string& model, size_t weight_bytes,
                                          size_t free_bytes, size_t reserve) {
  if (weight_bytes + reserve <= free_bytes) return "";
  return "not enough device memory for the weights of " + model + ": they need " +
         gib(static_cast<double>(weight_bytes)) + " plus " + gib(static_cast<double>(reserve)) +
         " of working memory, the device has " + gib(static_cast<double>(free_bytes)) +
         " free (use a smaller or more quantized model, or free the GPU)";
}

inline std::string kv_memory_problem(int64_t num_blocks, int64_t bytes_per_block, size_t free_bytes,
                                     size_t reserve) {
  const double need = static_cast<double>(num_blocks) * static_cast<double>(bytes_per_block);
  if (need + static_cast<double>(reserve) <= static_cast<double>(free_bytes)) return "";
  const int64_t fit =
      free_bytes > reserve ? static_cast<int64_t>((free_bytes - reserve) / bytes_per_block) : 0;
  return "not enough device memory for the KV cache: " + std::to_string(num_blocks) +
         " blocks of " + std::to_string(bytes_per_block) + " bytes need " + gib(need) +
         ", the device has " + gib(static_cast<double>(free_bytes)) + " free with " +
         gib(static_cast<double>(reserve)) + " kept for scratch; at most " + std::to_string(fit) +
         " blocks fit (lower --kv-cache-memory or --num-gpu-blocks-override)";
}

// The weight types the CUDA matmul and embedding kernels decode.
inline bool weight_type_supported(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q4_K:
    case DType::Q6_K:
      return true;
    default:
      return false;
  }
}

// A matrix of rows x cols stored as t, named as in the checkpoint (Hugging Face names).
inline std::string weight_problem(const std::string& tensor, DType t, int64_t rows, int64_t cols) {
  if (!weight_type_supported(t))
    return "tensor '" + tensor + "' is stored as " + std::string(dtype_name(t)) +
           ", which the CUDA backend cannot run (it runs F32, F16, BF16, Q8_0, Q4_0, Q4_1, "
           "Q4_K and Q6_K weights; use the CPU backend or another quantization)";
  const int64_t unit = (t == DType::Q4_K || t == DType::Q6_K) ? kQK_K : kQK;
  if (cols % unit != 0)
    return "tensor '" + tensor + "' has rows of " + std::to_string(cols) +
           " elements; the CUDA kernels read rows in units of " + std::to_string(unit) + " for " +
           std::string(dtype_name(t)) + " (use the CPU backend for this model)";
  if (rows <= 0) return "tensor '" + tensor + "' has no rows";
  return "";
}

}  // namespace vt::cuda
