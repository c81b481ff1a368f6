// GGML block layouts of the less common weight types: Q5_0 / Q5_1 (32-element blocks with a
// fifth bit plane), Q2_K / Q3_K (256-element super-blocks of 16-element groups) and the
// non-linear IQ4_NL / IQ4_XS (4-bit indices into a fixed 16-entry table) and MXFP4 (the OCP
// microscaling e2m1 format: 4-bit floats with a power-of-two block scale). Byte for byte
// what llama.cpp writes, so GGUF tensors are used where they are mapped.
#pragma once

#include <cstdint>

namespace vt {

struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];       // bit j of the little-endian word: fifth bit of element j
  uint8_t qs[32 / 2];  // low nibble: element j, high nibble: element j + 16
};
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[32 / 2];
};
// Element e: 2 bits at (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3, group
// e / 16 with 4-bit scale (scales[g] & 0xF) and 4-bit min (scales[g] >> 4).
struct BlockQ2_K {
  uint8_t scales[256 / 16];
  uint8_t qs[256 / 4];
  uint16_t d;
  uint16_t dmin;
};
// Element e: the Q2_K 2-bit layout minus 4 unless bit (e / 32) of hmask[e % 32] is set;
// group e / 16 has a 6-bit scale (minus 32) packed into 12 bytes.
struct BlockQ3_K {
  uint8_t hmask[256 / 8];
  uint8_t qs[256 / 4];
  uint8_t scales[12];
  uint16_t d;
};
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[32 / 2];  // indices into kIQ4Values, nibbles as in Q4_0
};
// Eight 32-element sub-blocks in the IQ4_NL nibble layout, each with a 6-bit scale (minus
// 32): low 4 bits in scales_l (nibble ib % 2 of byte ib / 2), high 2 bits in scales_h.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[256 / 64];
  uint8_t qs[256 / 2];
};
// OCP MX FP4: 32 e2m1 values (as indices into kMXFP4Values, nibbles as in Q4_0) sharing one
// E8M0 exponent e. Element value kMXFP4Values[q] * 2^(e - 128): the table holds the e2m1
// values doubled, so the scale is half of E8M0's 2^(e - 127) (GGML's ggml_e8m0_to_fp32_half).
struct BlockMXFP4 {
  uint8_t e;
  uint8_t qs[32 / 2];
};

// The IQ4 code book (GGML's kvalues_iq4nl).
inline constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};

// The e2m1 values doubled (GGML's kvalues_mxfp4): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
inline constexpr int8_t kMXFP4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockMXFP4) == 17);

}  // namespace vt
