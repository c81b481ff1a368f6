// What a host_write changed, host-only so the CPU tests check it.
//
// CudaBackend::host_write runs the caller's write on a pinned host view of the buffer that
// was refreshed from the device first, then uploads only the byte range the write changed.
// Uploading nothing when nothing changed keeps device-side results (an eager step that ran
// inside the write, the in-graph advance) from being overwritten by the host view.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vt::cuda {

struct ByteRange {
  size_t begin = 0, end = 0;  // [begin, end); empty when begin == end
  bool empty() const { return begin == end; }
  size_t size() const { return end - begin; }
};

inline ByteRange changed_range(const uint8_t* before, const uint8_t* after, size_t n) {
  size_t lo = 0;
  while (lo < n && before[lo] == after[lo]) ++lo;
  if (lo == n) return {};
  size_t hi = n;
  while (hi > lo && before[hi - 1] == after[hi - 1]) --hi;
  return {lo, hi};
}

}  // namespace vt::cuda
