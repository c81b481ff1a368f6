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

std::unique_ptr<DecodeState> Backend::make_decode_state(int32_t, int32_t, int) {
  throw std::logic_error(std::string("backend '") + name() +
                         "' has no decode state (decode graphs are not supported on it)");
}

}  // namespace vt
