// StorageBuffer: one piece of backend storage (Backend::alloc_storage / adopt_storage), freed
// with its owner. Weights, KV pages and activation scratch are held this way on every
// backend, so a model's memory lives wherever its executor's backend puts it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "vt/graph.h"

namespace vt {

class StorageBuffer {
 public:
  StorageBuffer() = default;
  StorageBuffer(Backend& be, size_t bytes, StorageKind kind, const std::string& what)
      : be_(&be), b_(bytes ? be.alloc_storage(bytes, kind, what) : nullptr) {}
  // Host memory the caller keeps owning, accounted as storage (Backend::adopt_storage).
  static StorageBuffer adopt(Backend& be, const void* host, size_t bytes, StorageKind kind,
                             const std::string& what) {
    StorageBuffer s;
    s.be_ = &be;
    s.b_ = be.adopt_storage(host, bytes, kind, what);
    return s;
  }
  ~StorageBuffer() { reset(); }
  StorageBuffer(StorageBuffer&& o) noexcept
      : be_(std::exchange(o.be_, nullptr)), b_(std::exchange(o.b_, nullptr)) {}
  StorageBuffer& operator=(StorageBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      be_ = std::exchange(o.be_, nullptr);
      b_ = std::exchange(o.b_, nullptr);
    }
    return *this;
  }
  StorageBuffer(const StorageBuffer&) = delete;
  StorageBuffer& operator=(const StorageBuffer&) = delete;

  void reset() {
    if (b_) be_->free_storage(b_);
    b_ = nullptr;
  }
  void* get() const { return b_ ? b_->data : nullptr; }
  template <class T>
  T* as() const {
    return static_cast<T*>(get());
  }
  size_t bytes() const { return b_ ? b_->bytes : 0; }
  int64_t resident_bytes() const { return b_ ? be_->resident_bytes(b_) : 0; }
  bool commit(size_t offset, size_t bytes) const { return b_ && be_->commit(b_, offset, bytes); }

 private:
  Backend* be_ = nullptr;
  DeviceBuffer* b_ = nullptr;
};

}  // namespace vt
