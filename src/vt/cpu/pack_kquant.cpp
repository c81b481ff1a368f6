// Packing Q4_K / Q5_K / Q6_K rows into the 16-row layout of kquant.h, and back (for
// embedding lookups and the scalar reference).
#include <cstddef>
#include <cstring>

#include "vt/cpu/kquant.h"

namespace vt::cpu {

namespace {

// Sub-block j's 6-bit scale and min from a GGUF Q4_K / Q5_K scales[12].
void scale_min(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void put_scale_min(int j, int sc, int m, uint8_t* q) {
  if (j < 4) {
    q[j] = static_cast<uint8_t>((q[j] & 0xC0) | sc);
    q[j + 4] = static_cast<uint8_t>((q[j + 4] & 0xC0) | m);
  } else {
    q[j + 4] = static_cast<uint8_t>((sc & 0xF) | ((m & 0xF) << 4));
    q[j - 4] = static_cast<uint8_t>((q[j - 4] & 0x3F) | ((sc >> 4) << 6));
    q[j] = static_cast<uint8_t>((q[j] & 0x3F) | ((m >> 4) << 6));
  }
}

inline void set_bits(uint8_t* p, int shift, int width, int v) {
  const int mask = ((1 << width) - 1) << shift;
  *p = static_cast<uint8_t>((*p & ~mask) | ((v << shift) & mask));
}

// Entry e = 16 j + r of the packed scale area (kquant.h).
void put_packed_scale(uint8_t* s, int e, int sc, int m) {
  const int i = e & 63, up = e >> 6;
  set_bits(s + i, 4 * up, 4, sc & 15);
  set_bits(s + 64 + i, 4 * up, 4, m & 15);
  set_bits(s + 128 + i, 2 * up, 2, sc >> 4);
  set_bits(s + 128 + i, 4 + 2 * up, 2, m >> 4);
}

void get_packed_scale(const uint8_t* s, int e, int* sc, int* m) {
  const int i = e & 63, up = e >> 6;
  *sc = ((s[i] >> (4 * up)) & 15) | (((s[128 + i] >> (2 * up)) & 3) << 4);
  *m = ((s[64 + i] >> (4 * up)) & 15) | (((s[128 + i] >> (4 + 2 * up)) & 3) << 4);
}

// Q5_K mask 2k + h, bits 4r..4r+3 (kquant.h).
void put_mask_nibble(uint8_t* masks, int idx, int r, int bits4) {
  uint64_t v;
  std::memcpy(&v, masks + 8 * idx, 8);
  v &= ~(uint64_t{0xF} << (4 * r));
  v |= static_cast<uint64_t>(bits4) << (4 * r);
  std::memcpy(masks + 8 * idx, &v, 8);
}

int get_mask_nibble(const uint8_t* masks, int idx, int r) {
  uint64_t v;
  std::memcpy(&v, masks + 8 * idx, 8);
  return static_cast<int>((v >> (4 * r)) & 0xF);
}

// Row r's chunks: bytes 4k..4k+3 of src go to column r of chunk k.
void put_chunks(uint8_t* dst, int r, const uint8_t* src, int n_bytes) {
  for (int k = 0; k < n_bytes / 4; ++k) std::memcpy(dst + 64 * k + 4 * r, src + 4 * k, 4);
}

void get_chunks(const uint8_t* pk, int r, uint8_t* out, int n_bytes) {
  for (int k = 0; k < n_bytes / 4; ++k) std::memcpy(out + 4 * k, pk + 64 * k + 4 * r, 4);
}

// One row's super-block into packed block pb (src null: a zero padding row).
void pack_q45(DType t, const uint8_t* src, uint8_t* pb, int r) {
  constexpr BlockQ5_K kZero{};
  const KQuantLayout L = kquant_layout(t);
  const bool five = t == DType::Q5_K;
  // Q4_K and Q5_K agree on d, dmin and scales; the qs offset differs by qh.
  const uint8_t* blk = src ? src : reinterpret_cast<const uint8_t*>(&kZero);
  std::memcpy(pb + 2 * r, blk, 2);
  std::memcpy(pb + 32 + 2 * r, blk + 2, 2);
  const uint8_t* scales = blk + 4;
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    scale_min(j, scales, &sc, &m);
    put_packed_scale(pb + kKScales, 16 * j + r, sc, m);
  }
  const uint8_t* qs = blk + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
  if (five) {
    const uint8_t* qh = blk + offsetof(BlockQ5_K, qh);
    for (int k = 0; k < 32; ++k)
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * (k / 8) + h;
        int bits = 0;
        for (int i = 0; i < 4; ++i) bits |= ((qh[4 * (k % 8) + i] >> j) & 1) << i;
        put_mask_nibble(pb + L.qh, 2 * k + h, r, bits);
      }
  }
  put_chunks(pb + L.qs, r, qs, kQK_K / 2);
}

void unpack_q45(DType t, const uint8_t* pb, int r, uint8_t* out) {
  const KQuantLayout L = kquant_layout(t);
  const bool five = t == DType::Q5_K;
  std::memcpy(out, pb + 2 * r, 2);
  std::memcpy(out + 2, pb + 32 + 2 * r, 2);
  uint8_t* scales = out + 4;
  std::memset(scales, 0, 12);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    get_packed_scale(pb + kKScales, 16 * j + r, &sc, &m);
    put_scale_min(j, sc, m, scales);
  }
  uint8_t* qs = out + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
  if (five) {
    uint8_t* qh = out + offsetof(BlockQ5_K, qh);
    std::memset(qh, 0, kQK_K / 8);
    for (int k = 0; k < 32; ++k)
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * (k / 8) + h;
        const int bits = get_mask_nibble(pb + L.qh, 2 * k + h, r);
        for (int i = 0; i < 4; ++i) qh[4 * (k % 8) + i] |= ((bits >> i) & 1) << j;
      }
  }
  get_chunks(pb + L.qs, r, qs, kQK_K / 2);
}

void pack_q6(const uint8_t* src, uint8_t* pb, uint8_t* pd, int r) {
  constexpr BlockQ6_K kZero{};
  const KQuantLayout L = kquant_layout(DType::Q6_K);
  const auto& blk = src ? *reinterpret_cast<const BlockQ6_K*>(src) : kZero;
  std::memcpy(pd + 2 * r, &blk.d, 2);
  for (int g = 0; g < 16; ++g) pb[16 * g + r] = static_cast<uint8_t>(blk.scales[g]);
  put_chunks(pb + L.qh, r, blk.qh, kQK_K / 4);
  put_chunks(pb + L.qs, r, blk.ql, kQK_K / 2);
}

void unpack_q6(const uint8_t* pb, const uint8_t* pd, int r, uint8_t* out) {
  const KQuantLayout L = kquant_layout(DType::Q6_K);
  auto& blk = *reinterpret_cast<BlockQ6_K*>(out);
  std::memcpy(&blk.d, pd + 2 * r, 2);
  for (int g = 0; g < 16; ++g) blk.scales[g] = static_cast<int8_t>(pb[16 * g + r]);
  get_chunks(pb + L.qh, r, blk.qh, kQK_K / 4);
  get_chunks(pb + L.qs, r, blk.ql, kQK_K / 2);
}

}  // namespace

void pack_groups_kquant(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst) {
  const KQuantLayout L = kquant_layout(w.dtype);
  const int64_t nb = w.cols / kQK_K;
  const int src_block = dtype_info(w.dtype).block_bytes;
  const size_t gbytes = static_cast<size_t>(kPackRows) * row_bytes(w.dtype, w.cols);
  for (int64_t g = g0; g < g1; ++g) {
    uint8_t* gp = dst + g * gbytes;
    for (int r = 0; r < kPackRows; ++r) {
      const int64_t row = g * kPackRows + r;
      const uint8_t* src =
          row < w.rows ? static_cast<const uint8_t*>(w.data) + row * w.row_stride : nullptr;
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* sb = src ? src + b * src_block : nullptr;
        if (w.dtype == DType::Q6_K)
          pack_q6(sb, gp + b * L.block, gp + nb * L.block + 32 * b, r);
        else
          pack_q45(w.dtype, sb, gp + b * L.block, r);
      }
    }
  }
}

void unpack_row_kquant(const WeightView& w, int64_t r, void* out) {
  const KQuantLayout L = kquant_layout(w.dtype);
  const int64_t nb = w.cols / kQK_K;
  const int src_block = dtype_info(w.dtype).block_bytes;
  const int64_t g = r / kPackRows;
  const int j = static_cast<int>(r % kPackRows);
  const uint8_t* gp = static_cast<const uint8_t*>(w.data) + g * kPackRows * w.row_stride;
  auto* o = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < nb; ++b) {
    if (w.dtype == DType::Q6_K)
      unpack_q6(gp + b * L.block, gp + nb * L.block + 32 * b, j, o + b * src_block);
    else
      unpack_q45(w.dtype, gp + b * L.block, j, o + b * src_block);
  }
}

}  // namespace vt::cpu
