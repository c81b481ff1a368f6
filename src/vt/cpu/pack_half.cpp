// Packed layout of BF16 / F16 weights (described in matmul_half.h): a 16-row group is a
// transpose of its rows in 4-byte units (BF16 column pairs) or 2-byte units (F16 columns),
// so one 64- or 32-byte load gives every row of the group its next columns.
#include <cstring>

#include "vt/cpu/matmul_half.h"

namespace vt::cpu {

namespace {

// Columns per packed unit and bytes per unit of one row.
int unit_cols(DType t) { return t == DType::BF16 ? 2 : 1; }

int64_t unit_count(DType t, int64_t cols) { return (cols + unit_cols(t) - 1) / unit_cols(t); }

}  // namespace

size_t half_packed_row_bytes(DType t, int64_t cols) {
  return static_cast<size_t>(unit_count(t, cols) * unit_cols(t)) * 2;
}

void pack_groups_half(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst) {
  const int ub = 2 * unit_cols(w.dtype);  // bytes per unit
  const int64_t nu = unit_count(w.dtype, w.cols);
  const size_t row_src = static_cast<size_t>(w.cols) * 2;
  const size_t gbytes = static_cast<size_t>(kPackRows) * half_packed_row_bytes(w.dtype, w.cols);
  for (int64_t g = g0; g < g1; ++g) {
    uint8_t* gp = dst + g * gbytes;
    for (int64_t j = 0; j < kPackRows; ++j) {
      const int64_t r = g * kPackRows + j;
      uint8_t* out = gp + j * ub;
      if (r >= w.rows) {
        for (int64_t u = 0; u < nu; ++u) std::memset(out + u * kPackRows * ub, 0, ub);
        continue;
      }
      const uint8_t* row = static_cast<const uint8_t*>(w.data) + r * w.row_stride;
      const int64_t full = static_cast<int64_t>(row_src) / ub;  // units wholly inside the row
      for (int64_t u = 0; u < full; ++u) std::memcpy(out + u * kPackRows * ub, row + u * ub, ub);
      if (full < nu) {  // BF16 with an odd column count: the last column paired with a zero
        uint8_t* o = out + full * kPackRows * ub;
        std::memset(o, 0, ub);
        std::memcpy(o, row + full * ub, row_src - static_cast<size_t>(full * ub));
      }
    }
  }
}

void unpack_row_half(const WeightView& w, int64_t r, void* out) {
  const int ub = 2 * unit_cols(w.dtype);
  const int64_t g = r / kPackRows, j = r % kPackRows;
  const uint8_t* src = static_cast<const uint8_t*>(w.data) + g * kPackRows * w.row_stride + j * ub;
  const size_t row_src = static_cast<size_t>(w.cols) * 2;
  auto* o = static_cast<uint8_t*>(out);
  for (size_t off = 0; off < row_src; off += ub) {
    const size_t n = std::min<size_t>(ub, row_src - off);
    std::memcpy(o + off, src + (off / ub) * kPackRows * ub, n);
  }
}

}  // namespace vt::cpu
