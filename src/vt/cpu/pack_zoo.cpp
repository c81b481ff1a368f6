// Packed layout of Q2_K / Q3_K / IQ4_XS weights for the SIMD kernels (matmul_zoo_simd.h).
//
// Rows are taken kPackRows (16) at a time, like the Q8_0 family (pack.cpp). For each
// 256-element super-block index b, the 16 rows' blocks become one packed block of exactly
// 16 GGUF blocks' bytes, field by field in the GGUF order, each field at 16 times its GGUF
// offset:
//   * a 2-byte field (d, dmin, IQ4_XS's scales_h): the 16 rows' values as an array, row j
//     at 2j (one fp16 / u16 load gives all rows);
//   * a field of 4k bytes (scales, qs, hmask, scales_l): k chunks of 64 bytes; chunk c holds
//     bytes 4c..4c+3 of each row's field, row j at 4j (one 64-byte load gives every row the
//     same 4 bytes, so a VNNI dot against 4 broadcast activation bytes is one partial sum
//     per row, and 32-bit shifts decode a packed scale byte for all rows at once).
// Rows past the end of the matrix are zero blocks (scales 0).
#include <cstring>

#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {

namespace {

struct Field {
  int off, size;
};
struct Fields {
  Field f[4];
  int n;
};

Fields fields(DType t) {
  switch (t) {
    case DType::Q2_K:  // scales[16], qs[64], d, dmin
      return {{{0, 16}, {16, 64}, {80, 2}, {82, 2}}, 4};
    case DType::Q3_K:  // hmask[32], qs[64], scales[12], d
      return {{{0, 32}, {32, 64}, {96, 12}, {108, 2}}, 4};
    default:  // IQ4_XS: d, scales_h, scales_l[4], qs[128]
      return {{{0, 2}, {2, 2}, {4, 4}, {8, 128}}, 4};
  }
}

// Offset in a packed block of byte i of row j's field.
inline int packed_pos(const Field& f, int64_t j, int i) {
  const int base = static_cast<int>(kPackRows) * f.off;
  if (f.size == 2) return base + 2 * static_cast<int>(j) + i;
  return base + 64 * (i / 4) + 4 * static_cast<int>(j) + i % 4;
}

}  // namespace

bool zoo_k_packed(DType t) { return t == DType::Q2_K || t == DType::Q3_K || t == DType::IQ4_XS; }

void pack_groups_zoo(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst) {
  const Fields fs = fields(w.dtype);
  const int bb = dtype_info(w.dtype).block_bytes;
  const int64_t nb = w.cols / kQK_K;
  const size_t gbytes = static_cast<size_t>(kPackRows) * row_bytes(w.dtype, w.cols);
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t j = 0; j < kPackRows; ++j) {
      const int64_t r = g * kPackRows + j;
      const uint8_t* row =
          r < w.rows ? static_cast<const uint8_t*>(w.data) + r * w.row_stride : nullptr;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* pb = dst + g * gbytes + b * kPackRows * bb;
        for (int k = 0; k < fs.n; ++k)
          for (int i = 0; i < fs.f[k].size; ++i)
            pb[packed_pos(fs.f[k], j, i)] = row ? row[b * bb + fs.f[k].off + i] : 0;
      }
    }
  }
}

void unpack_row_zoo(const WeightView& w, int64_t r, void* out) {
  const Fields fs = fields(w.dtype);
  const int bb = dtype_info(w.dtype).block_bytes;
  const int64_t nb = w.cols / kQK_K;
  const int64_t g = r / kPackRows, j = r % kPackRows;
  const uint8_t* gp = static_cast<const uint8_t*>(w.data) + g * kPackRows * w.row_stride;
  uint8_t* o = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = gp + b * kPackRows * bb;
    for (int k = 0; k < fs.n; ++k)
      for (int i = 0; i < fs.f[k].size; ++i)
        o[b * bb + fs.f[k].off + i] = pb[packed_pos(fs.f[k], j, i)];
  }
}

}  // namespace vt::cpu
