// Packed layout of Q8_0 / Q4_0 / Q4_1 weights for the SIMD kernels.
//
// Rows are taken kPackRows (16) at a time. For each 32-element block index b, the 16 rows'
// blocks are stored together as one packed block:
//   d[16]   fp16 scales, row j at 2j                      (32 bytes)
//   m[16]   fp16 mins (Q4_1 only)                          (32 bytes)
//   q       the quant bytes in 4-byte columns: chunk k (64 bytes) holds bytes 4k..4k+3 of
//           each row's block, row j at 64k + 4j. Q8_0 has 8 chunks and stores each byte
//           XOR 0x80 (w + 128, unsigned); Q4_0 / Q4_1 have 4 chunks of the GGUF nibble
//           bytes as they are (low nibble: element 4k+i, high nibble: element 16+4k+i).
// A packed block has exactly the bytes of 16 GGUF blocks, so a group is 16 rows' bytes
// rearranged: one 64-byte load gives every row of the group four consecutive elements, and
// a VNNI dot product against 4 broadcast activation bytes yields one partial sum per row.
// Rows past the end of the matrix are zero blocks (scale 0).
// The K-quants (Q4_K / Q5_K / Q6_K) have their own packed super-blocks (kquant.h).
#include <algorithm>
#include <cstring>

#include "vt/cpu/kquant.h"
#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {

bool packable(DType t) {
  return t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q4_1 || is_kquant(t);
}

int64_t pack_group_count(const WeightView& w) { return (w.rows + kPackRows - 1) / kPackRows; }

size_t packed_bytes(const WeightView& w) {
  return static_cast<size_t>(pack_group_count(w) * kPackRows) * row_bytes(w.dtype, w.cols);
}

WeightView packed_view(const WeightView& w, const uint8_t* dst) {
  WeightView p = w;
  p.data = dst;
  p.row_stride = row_bytes(w.dtype, w.cols);
  p.packed = true;
  return p;
}

void pack_groups(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst) {
  if (is_kquant(w.dtype)) return pack_groups_kquant(w, g0, g1, dst);
  const PackedLayout f = packed_layout(w.dtype);
  const int64_t nb = w.cols / kQK;
  const int64_t pb_bytes = f.block();
  const size_t gbytes = static_cast<size_t>(kPackRows) * row_bytes(w.dtype, w.cols);
  const bool has_m = w.dtype == DType::Q4_1;
  for (int64_t g = g0; g < g1; ++g) {
    uint8_t* gp = dst + g * gbytes;
    for (int64_t j = 0; j < kPackRows; ++j) {
      const int64_t r = g * kPackRows + j;
      const uint8_t* row =
          r < w.rows ? static_cast<const uint8_t*>(w.data) + r * w.row_stride : nullptr;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* pb = gp + b * pb_bytes;
        if (!row) {
          std::memset(pb + 2 * j, 0, 2);
          if (has_m) std::memset(pb + 32 + 2 * j, 0, 2);
          for (int k = 0; k < f.qbytes / 4; ++k) std::memset(pb + f.hdr + 64 * k + 4 * j, 0, 4);
          continue;
        }
        const uint8_t* src = row + b * f.src_block;
        std::memcpy(pb + 2 * j, src, 2);
        if (has_m) std::memcpy(pb + 32 + 2 * j, src + 2, 2);
        const uint8_t* qs = src + (has_m ? 4 : 2);
        for (int k = 0; k < f.qbytes / 4; ++k)
          for (int i = 0; i < 4; ++i) pb[f.hdr + 64 * k + 4 * j + i] = qs[4 * k + i] ^ f.flip;
      }
    }
  }
}

void unpack_row(const WeightView& w, int64_t r, void* out) {
  if (is_kquant(w.dtype)) return unpack_row_kquant(w, r, out);
  const PackedLayout f = packed_layout(w.dtype);
  const int64_t nb = w.cols / kQK;
  const int64_t pb_bytes = f.block();
  const bool has_m = w.dtype == DType::Q4_1;
  const int64_t g = r / kPackRows, j = r % kPackRows;
  const uint8_t* gp = static_cast<const uint8_t*>(w.data) + g * kPackRows * w.row_stride;
  uint8_t* o = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = gp + b * pb_bytes;
    uint8_t* dst = o + b * f.src_block;
    std::memcpy(dst, pb + 2 * j, 2);
    if (has_m) std::memcpy(dst + 2, pb + 32 + 2 * j, 2);
    uint8_t* qs = dst + (has_m ? 4 : 2);
    for (int k = 0; k < f.qbytes / 4; ++k)
      for (int i = 0; i < 4; ++i) qs[4 * k + i] = pb[f.hdr + 64 * k + 4 * j + i] ^ f.flip;
  }
}

}  // namespace vt::cpu
