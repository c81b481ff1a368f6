// DeviceArena: 256-byte aligned pieces of one backend storage buffer (bump allocation), for
// the device copy of the weights.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "vt/storage.h"

namespace vt::cuda {

class DeviceArena {
 public:
  static size_t round(size_t n) { return (n + 255) / 256 * 256; }
  void reset(StorageBuffer mem) {
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
  StorageBuffer mem_;
  size_t used_ = 0;
};

}  // namespace vt::cuda
