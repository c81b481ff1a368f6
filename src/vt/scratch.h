// Grow-only scratch memory in backend storage (StorageKind::Scratch). On the CPU that is a
// lazily committed mapping, so sizing scratch for the largest batch costs memory only when
// such a batch runs. Contents are not preserved across growth (scratch never outlives a step).
#pragma once

#include <atomic>
#include <cstddef>
#include <stdexcept>

#include "vt/storage.h"

namespace vt {

template <class T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // The backend whose storage holds the buffer; rebinding drops the current one.
  void bind(Backend& be) {
    if (be_ == &be) return;
    drop();
    be_ = &be;
  }
  T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) const { return data_[i]; }
  // Ensures room for n elements; returns whether the address changed.
  bool reserve(size_t n) {
    if (n <= size_) return false;
    if (!be_) throw std::logic_error("scratch grown before it was bound to a backend");
    drop();
    // Fresh mappings are page aligned, so the first rows of every scratch buffer would share
    // L1/L2 sets (4 KiB aliasing). Start each at its own cache-line offset instead.
    static std::atomic<unsigned> color{0};
    const size_t offset = (color.fetch_add(1, std::memory_order_relaxed) * 7 % 64) * 64;
    const size_t bytes = (n * sizeof(T) + offset + 4095) / 4096 * 4096;
    mem_ = StorageBuffer(*be_, bytes, StorageKind::Scratch, "activation scratch");
    data_ = reinterpret_cast<T*>(mem_.as<char>() + offset);
    size_ = (bytes - offset) / sizeof(T);
    return true;
  }

 private:
  void drop() {
    mem_.reset();
    data_ = nullptr;
    size_ = 0;
  }
  Backend* be_ = nullptr;
  StorageBuffer mem_;
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace vt
