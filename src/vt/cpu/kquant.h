// K-quant weights (Q4_K, Q5_K, Q6_K) in the kernels' packed layout: the byte offsets of a
// packed super-block, shared by the packer (pack_kquant.cpp) and the SIMD kernels
// (matmul_kquant_simd.h), and the scalar reference dot (matmul_kquant_scalar.cpp).
//
// As for the Q8_0 family (pack.cpp), rows are taken kPackRows (16) at a time and, for each
// 256-element super-block index b, the 16 rows' blocks are stored together, quant bytes in
// 4-byte columns: chunk k (64 bytes) holds bytes 4k..4k+3 of each row's quant array, row r
// at 64k + 4r. One 64-byte load gives every row four consecutive elements of one
// sub-block, so a VNNI dot against 4 broadcast activation bytes adds one partial sum per
// row. A packed super-block has exactly the bytes of 16 GGUF blocks (packing changes no
// sizes, so the model's peak memory stays one copy of the file).
//
// Q4_K (2304 bytes) / Q5_K (2816 bytes), super-block b of a group at b * block:
//   [0, 32)    d[16] fp16, row r at 2r
//   [32, 64)   dmin[16] fp16
//   [64, 256)  the 6-bit scales sc and mins m of the 8 sub-blocks j, as 128 entries each,
//              entry e = 16 j + r (so 16 consecutive entries are one sub-block's 16 rows):
//                [64, 128)   byte i: sc[i] & 15 | (sc[i + 64] & 15) << 4
//                [128, 192)  byte i: m[i] & 15 | (m[i + 64] & 15) << 4
//                [192, 256)  byte i: sc[i] >> 4 | (sc[i + 64] >> 4) << 2 | (m[i] >> 4) << 4
//                                    | (m[i + 64] >> 4) << 6
//              i.e. three 64-byte vectors that a few shifts and masks turn into all 256
//              scale and min bytes at once.
//   Q5_K only: [256, 768)  the fifth bits as 64 little-endian 64-bit masks: mask 2k + h has
//              bit 4r + i set when the element in byte 4r + i of chunk k, nibble h (0: low,
//              1: high), has its fifth bit, i.e. exactly the bytes that need 16 added. An
//              AVX-512 mask register (or an AVX2 byte compare) applies it with no shifts.
//   then 32 chunks of the GGUF qs bytes as they are: the low nibbles of chunk k are elements
//   64 (k / 8) + 4 (k % 8) + i of sub-block 2 (k / 8), the high nibbles the same of
//   sub-block 2 (k / 8) + 1.
//
// Q6_K (3360 bytes per super-block): super-block b at b * 3328 holds
//   [0, 256)     int8 scales, entry 16 g + r for group g (16 elements) of row r
//   [256, 1280)  16 chunks of the GGUF qh bytes
//   [1280, 3328) 32 chunks of the GGUF ql bytes
// and the fp16 d[16] of every super-block follow all of them at nb * 3328 + 32 b, so each
// 3328-byte block (52 cache lines) starts on a cache line when the group does.
// Rows past the end of the matrix are zero blocks (scale 0).
#pragma once

#include <cstdint>

#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {

inline bool is_kquant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }

struct KQuantLayout {
  int block;  // bytes per packed super-block (Q6_K: without the d area at the group end)
  int qh;     // offset of the Q5_K masks / Q6_K qh chunks (0: none)
  int qs;     // offset of the qs / ql chunks
};
constexpr KQuantLayout kquant_layout(DType t) {
  return t == DType::Q4_K   ? KQuantLayout{2304, 0, 256}
         : t == DType::Q5_K ? KQuantLayout{2816, 256, 768}
                            : KQuantLayout{3328, 256, 1280};  // Q6_K
}
constexpr int kKScales = 64;  // Q4_K / Q5_K: offset of the packed scales and mins

void pack_groups_kquant(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst);
void unpack_row_kquant(const WeightView& w, int64_t r, void* out);

// The reference dot of one row (GGUF block bytes) with token t of a Q8_K activation, the
// arithmetic of matmul_internal.h's contract spelled out one row at a time.
float dot_kquant_scalar(DType t, const void* row, const ActView& a, int64_t tok);

}  // namespace vt::cpu
