// Grow-only scratch memory from an anonymous mapping: pages are committed when first
// touched, so sizing scratch for the largest batch costs memory only when such a batch
// runs. Contents are not preserved across growth (scratch never outlives a step).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace vt {

template <class T>
class Scratch {
 public:
  Scratch() = default;
  ~Scratch() { release(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) const { return data_[i]; }
  // Ensures room for n elements; returns whether the address changed.
  bool reserve(size_t n) {
    if (n <= size_) return false;
    release();
    bytes_ = (n * sizeof(T) + 4095) / 4096 * 4096;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    size_ = bytes_ / sizeof(T);
    return true;
  }

 private:
  void release() {
    if (data_) ::munmap(data_, bytes_);
    data_ = nullptr;
    size_ = bytes_ = 0;
  }
  T* data_ = nullptr;
  size_t size_ = 0, bytes_ = 0;
};

}  // namespace vt
