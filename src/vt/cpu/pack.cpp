// Packed layout of Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 / IQ4_NL / MXFP4 weights for the SIMD
// kernels.
//
// Rows are taken kPackRows (16) at a time. For each 32-element block index b, the 16 rows'
// blocks are stored together as one packed block:
//   d[16]   fp16 scales, row j at 2j                      (32 bytes)
//   m[16]   fp16 mins (Q4_1 only)                          (32 bytes)
//   q       the quant bytes in 4-byte columns: chunk k (64 bytes) holds bytes 4k..4k+3 of
//           each row's block, row j at 64k + 4j. Q8_0 has 8 chunks and stores each byte
//           XOR 0x80 (w + 128, unsigned); Q4_0 / Q4_1 have 4 chunks of the GGUF nibble
//           bytes as they are (low nibble: element 4k+i, high nibble: element 16+4k+i).
// Q5_0 / Q5_1 store their nibbles like Q4_0 / Q4_1 and, between the scales and the chunks,
// the fifth bits as 8 little-endian 64-bit masks (64 bytes): mask 2k + h has bit 4j + i set
// when element 16h + 4k + i of row j has its fifth bit, i.e. exactly the bytes of nibble
// chunk k (h = 0: low nibbles, 1: high) that need 16 added. An AVX-512 mask register or an
// AVX2 byte compare turns a mask into those bytes without any shifting per row.
// IQ4_NL is packed like Q4_0 (its nibbles index a table instead of being offset by 8).
// MXFP4 is packed like IQ4_NL but with its 1-byte E8M0 exponents in place of the fp16 scales:
//   e[16]   the rows' exponents, row j at byte j                (16 bytes)
//   q       4 chunks of nibble bytes as Q4_0's                  (256 bytes)
// 272 bytes, exactly 16 GGUF blocks of 17 bytes, so the packed copy is the file's size and a
// model holds one copy of its experts. The 16-byte header leaves the chunks 16 bytes off a
// 64-byte line (as 16 x 17-byte blocks leave every other offset); the kernels use unaligned
// loads throughout (IQ4_NL's 288-byte blocks are no better aligned), so nothing assumes more.
// The kernels widen the 16 exponents to 16 fp32 scales with integer ops (e8m0_half).
// Q2_K / Q3_K / IQ4_XS have their own field-by-field layout (pack_zoo.cpp).
// A packed block has exactly the bytes of 16 GGUF blocks, so a group is 16 rows' bytes
// rearranged: one 64-byte load gives every row of the group four consecutive elements, and
// a VNNI dot product against 4 broadcast activation bytes yields one partial sum per row.
// Rows past the end of the matrix are zero blocks (scale 0; MXFP4: e = 0 and all-zero values).
// BF16 / F16 weights (pack_half.cpp) and the K-quants Q4_K / Q5_K / Q6_K (kquant.h) have their
// own packed layouts; these entry points dispatch to them.
#include <algorithm>
#include <cstring>

#include "vt/cpu/kquant.h"
#include "vt/cpu/matmul_half.h"
#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {

bool packable(DType t) {
  return t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q5_0 ||
         t == DType::Q5_1 || t == DType::IQ4_NL || t == DType::MXFP4 || zoo_k_packed(t) ||
         is_kquant(t) || is_half(t);
}

namespace {

// Bytes of one row in the packed copy (a group is kPackRows of them).
size_t packed_row_bytes(const WeightView& w) {
  return is_half(w.dtype) ? half_packed_row_bytes(w.dtype, w.cols) : row_bytes(w.dtype, w.cols);
}

bool has_min(DType t) { return t == DType::Q4_1 || t == DType::Q5_1; }

// Offset of the quant nibbles / bytes inside a GGUF block: after d (MXFP4: e), m and qh.
int src_qs_offset(DType t, const PackedLayout& f) {
  return f.dbytes + (has_min(t) ? 2 : 0) + (f.qh ? 4 : 0);
}

// Moves row j's 32 fifth bits between the GGUF word and the packed masks (see above).
void put_qh(uint8_t* masks, int64_t j, uint32_t qh) {
  for (int w = 0; w < 8; ++w) {
    const int k = w / 2, h = w % 2;
    uint64_t m;
    std::memcpy(&m, masks + 8 * w, 8);
    m &= ~(uint64_t{0xF} << (4 * j));
    m |= static_cast<uint64_t>((qh >> (16 * h + 4 * k)) & 0xF) << (4 * j);
    std::memcpy(masks + 8 * w, &m, 8);
  }
}

uint32_t get_qh(const uint8_t* masks, int64_t j) {
  uint32_t qh = 0;
  for (int w = 0; w < 8; ++w) {
    const int k = w / 2, h = w % 2;
    uint64_t m;
    std::memcpy(&m, masks + 8 * w, 8);
    qh |= static_cast<uint32_t>((m >> (4 * j)) & 0xF) << (16 * h + 4 * k);
  }
  return qh;
}

}  // namespace

int64_t pack_group_count(const WeightView& w) { return (w.rows + kPackRows - 1) / kPackRows; }

size_t packed_bytes(const WeightView& w) {
  return static_cast<size_t>(pack_group_count(w) * kPackRows) * packed_row_bytes(w);
}

WeightView packed_view(const WeightView& w, const uint8_t* dst) {
  WeightView p = w;
  p.data = dst;
  p.row_stride = packed_row_bytes(w);
  p.packed = true;
  return p;
}

void pack_groups(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst) {
  if (is_half(w.dtype)) return pack_groups_half(w, g0, g1, dst);
  if (zoo_k_packed(w.dtype)) return pack_groups_zoo(w, g0, g1, dst);
  if (is_kquant(w.dtype)) return pack_groups_kquant(w, g0, g1, dst);
  const PackedLayout f = packed_layout(w.dtype);
  const int64_t nb = w.cols / kQK;
  const int64_t pb_bytes = f.block();
  const size_t gbytes = static_cast<size_t>(kPackRows) * row_bytes(w.dtype, w.cols);
  const bool has_m = has_min(w.dtype);
  const int qs_at = src_qs_offset(w.dtype, f);
  for (int64_t g = g0; g < g1; ++g) {
    uint8_t* gp = dst + g * gbytes;
    for (int64_t j = 0; j < kPackRows; ++j) {
      const int64_t r = g * kPackRows + j;
      const uint8_t* row =
          r < w.rows ? static_cast<const uint8_t*>(w.data) + r * w.row_stride : nullptr;
      for (int64_t b = 0; b < nb; ++b) {
        uint8_t* pb = gp + b * pb_bytes;
        if (!row) {
          std::memset(pb + f.dbytes * j, 0, f.dbytes);
          if (has_m) std::memset(pb + 32 + 2 * j, 0, 2);
          if (f.qh) put_qh(pb + f.hdr, j, 0);
          for (int k = 0; k < f.qbytes / 4; ++k)
            std::memset(pb + f.chunks() + 64 * k + 4 * j, 0, 4);
          continue;
        }
        const uint8_t* src = row + b * f.src_block;
        std::memcpy(pb + f.dbytes * j, src, f.dbytes);
        if (has_m) std::memcpy(pb + 32 + 2 * j, src + 2, 2);
        if (f.qh) {
          uint32_t qh;
          std::memcpy(&qh, src + qs_at - 4, 4);
          put_qh(pb + f.hdr, j, qh);
        }
        const uint8_t* qs = src + qs_at;
        for (int k = 0; k < f.qbytes / 4; ++k)
          for (int i = 0; i < 4; ++i) pb[f.chunks() + 64 * k + 4 * j + i] = qs[4 * k + i] ^ f.flip;
      }
    }
  }
}

void unpack_row(const WeightView& w, int64_t r, void* out) {
  if (is_half(w.dtype)) return unpack_row_half(w, r, out);
  if (zoo_k_packed(w.dtype)) return unpack_row_zoo(w, r, out);
  if (is_kquant(w.dtype)) return unpack_row_kquant(w, r, out);
  const PackedLayout f = packed_layout(w.dtype);
  const int64_t nb = w.cols / kQK;
  const int64_t pb_bytes = f.block();
  const bool has_m = has_min(w.dtype);
  const int qs_at = src_qs_offset(w.dtype, f);
  const int64_t g = r / kPackRows, j = r % kPackRows;
  const uint8_t* gp = static_cast<const uint8_t*>(w.data) + g * kPackRows * w.row_stride;
  uint8_t* o = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = gp + b * pb_bytes;
    uint8_t* dst = o + b * f.src_block;
    std::memcpy(dst, pb + f.dbytes * j, f.dbytes);
    if (has_m) std::memcpy(dst + 2, pb + 32 + 2 * j, 2);
    if (f.qh) {
      const uint32_t qh = get_qh(pb + f.hdr, j);
      std::memcpy(dst + qs_at - 4, &qh, 4);
    }
    uint8_t* qs = dst + qs_at;
    for (int k = 0; k < f.qbytes / 4; ++k)
      for (int i = 0; i < 4; ++i) qs[4 * k + i] = pb[f.chunks() + 64 * k + 4 * j + i] ^ f.flip;
  }
}

}  // namespace vt::cpu
