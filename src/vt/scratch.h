// Grow-only scratch memory from an anonymous mapping: pages are committed when first
// touched, so sizing scratch for the largest batch costs memory only when such a batch
// runs. Contents are not preserved across growth (scratch never outlives a step).
#pragma once

#include <sys/mman.h>

#include <atomic>
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
    // Fresh mappings are page aligned, so the first rows of every scratch buffer would share
    // L1/L2 sets (4 KiB aliasing). Start each at its own cache-line offset instead.
    static std::atomic<unsigned> color{0};
    const size_t offset = (color.fetch_add(1, std::memory_order_relaxed) * 7 % 64) * 64;
    bytes_ = (n * sizeof(T) + offset + 4095) / 4096 * 4096;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = p;
    data_ = reinterpret_cast<T*>(static_cast<char*>(p) + offset);
    size_ = (bytes_ - offset) / sizeof(T);
    return true;
  }

 private:
  void release() {
    if (base_) ::munmap(base_, bytes_);
    base_ = nullptr;
    data_ = nullptr;
    size_ = bytes_ = 0;
  }
  void* base_ = nullptr;
  T* data_ = nullptr;
  size_t size_ = 0, bytes_ = 0;
};

}  // namespace vt
