// DeviceMemory: one cudaMalloc'd region, freed with its owner (weights, KV, scratch).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "vt/cuda/cuda_check.h"

namespace vt::cuda {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error("cannot allocate " + std::to_string(bytes) +
                               " bytes of device memory for " + what + ": " +
                               cudaGetErrorString(e));
    }
  }
  ~DeviceMemory() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceMemory(DeviceMemory&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Hands out 256-byte aligned pieces of one DeviceMemory (bump allocation).
class DeviceArena {
 public:
  static size_t round(size_t n) { return (n + 255) / 256 * 256; }
  void reset(DeviceMemory mem) {
    mem_ = std::move(mem);
    used_ = 0;
  }
  void* take(size_t bytes) {
    const size_t n = round(bytes);
    if (used_ + n > mem_.bytes())
      throw std::logic_error("device arena overflow (" + std::to_string(used_ + n) + " > " +
                             std::to_string(mem_.bytes()) + " bytes)");
    void* p = static_cast<char*>(mem_.get()) + used_;
    used_ += n;
    return p;
  }
  size_t bytes() const { return mem_.bytes(); }

 private:
  DeviceMemory mem_;
  size_t used_ = 0;
};

}  // namespace vt::cuda
