// Defaults of the optional Backend calls: a backend that does not override them does not
// support them, and says which backend refused.
#include <stdexcept>
#include <string>

#include "vt/decode_state.h"
#include "vt/graph.h"

namespace vt {

const void* Backend::read_back(const DeviceBuffer*, size_t, size_t, void*) {
  throw std::logic_error(std::string("backend '") + name() + "' does not implement read_back");
}

DeviceBuffer* Backend::adopt_storage(const void*, size_t, StorageKind kind,
                                     const std::string& what) {
  throw std::logic_error(std::string("backend '") + name() + "' cannot use host memory as " +
                         storage_kind_name(kind) + " storage (" + what +
                         "): its kernels read only its own memory");
}

const char* storage_kind_name(StorageKind k) {
  switch (k) {
    case StorageKind::Weights:
      return "weights";
    case StorageKind::KvCache:
      return "KV cache";
    case StorageKind::Scratch:
      return "scratch";
  }
  return "?";
}

std::unique_ptr<DecodeState> Backend::make_decode_state(int32_t, int32_t, int) {
  throw std::logic_error(std::string("backend '") + name() +
                         "' has no decode state (decode graphs are not supported on it)");
}

}  // namespace vt
