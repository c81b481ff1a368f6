#!/usr/bin/env python3
"""Goldens for vt::cpu quantization: fp16/bf16 conversions and GGML block formats.

The reference is the `gguf` Python package (gguf.quants), which mirrors GGML's C
reference (de)quantizers. Writes tests/golden/quant/*.bin (little-endian):

  convert.bin:  u32 n, f32 x[n], u16 fp16(x)[n], u16 bf16(x)[n],
                u32 m, u16 h[m], f32 fp16_to_f32(h)[m]
  <type>.bin:   u32 n, u32 nbytes, f32 src[n], u8 blocks[nbytes], f32 dequant[n]
                (q8_0/q4_0/q4_1/q5_0/q5_1: blocks = gguf quantize(src); q4_k/q5_k/q6_k: blocks
                are random bytes with sane fp16 scales and src is unused zeros;
                q2_k/q3_k/iq4_nl/iq4_xs: blocks = llama.cpp's quantizer (ggml_quantize_chunk,
                through the libggml of llama-cpp-python) applied to src)
  <type>_random.bin: the same layout, random blocks with sane fp16 scales (every bit
                pattern of the scales and quants; src unused zeros), for q5_0 ... iq4_xs.
  mxfp4.bin:    blocks = gguf quantize(src) (asserted equal to llama.cpp's quantizer);
  mxfp4_random.bin: 256 random blocks, block i with exponent byte i (all 256 E8M0 values,
                denormal 2^-128 and 2^-127 scales up to 12 * 2^127 = inf).
dequant is always gguf.quants.dequantize(blocks); for the llama.cpp-quantized types the
script also checks it equals llama.cpp's own dequantizer (ggml type traits to_float).

Usage: python3 tools/make_quant_goldens.py [out_dir]
"""
import ctypes
import glob
import os
import struct
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import quants

rng = np.random.default_rng(1234)


def conversion_inputs() -> np.ndarray:
    f = np.float32
    special = [0.0, -0.0, 1.0, -1.0, 0.5, 65504.0, 65519.99, 65520.0, 1e6, -1e6,
               2.0**-24, 2.0**-25, 3 * 2.0**-25, 2.0**-26, 2.0**-14, 2.0**-14 * 0.999,
               6.1e-5, 1e-8, -1e-8, 1e-40, np.inf, -np.inf, np.nan,
               1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,  # fp16 ties: to even (down, up)
               1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8,    # bf16 ties
               3.4e38, -3.4e38, 1.17549435e-38]
    rnd = (rng.standard_normal(200) * np.exp2(rng.integers(-30, 20, 200))).astype(f)
    # Values exactly halfway between representable fp16 numbers.
    h = rng.integers(0x0400, 0x7bff, 40).astype(np.uint16).view(np.float16).astype(f)
    h2 = (np.arange(0x0400, 0x7bff)[rng.integers(0, 0x77ff, 40)] + 1).astype(np.uint16)
    mid = ((h.astype(np.float64) + h2.view(np.float16).astype(np.float64)) / 2).astype(f)
    return np.concatenate([np.array(special, dtype=f), rnd, mid])


def bf16_bits(x: np.ndarray) -> np.ndarray:
    return quants.quantize(x, Q.BF16).view(np.uint16)


def write_convert(out: Path) -> None:
    x = conversion_inputs()
    with np.errstate(over="ignore"):
        f16 = x.astype(np.float16).view(np.uint16)
    bf = bf16_bits(x)
    halves = np.concatenate([np.array([0, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff,
                                       0x7c00, 0xfc00, 0x8001, 0x83ff], dtype=np.uint16),
                             rng.integers(0, 0x7c00, 200).astype(np.uint16),
                             rng.integers(0x8000, 0xfc00, 100).astype(np.uint16)])
    hf = halves.view(np.float16).astype(np.float32)
    with open(out / "convert.bin", "wb") as fp:
        fp.write(struct.pack("<I", len(x)))
        fp.write(x.tobytes() + f16.tobytes() + bf.tobytes())
        fp.write(struct.pack("<I", len(halves)))
        fp.write(halves.tobytes() + hf.tobytes())


def write_type(out: Path, name: str, qtype: Q, blocks: np.ndarray, src: np.ndarray) -> None:
    deq = quants.dequantize(blocks, qtype).astype(np.float32).reshape(-1)
    with open(out / f"{name}.bin", "wb") as fp:
        fp.write(struct.pack("<II", src.size, blocks.size))
        fp.write(src.astype(np.float32).tobytes() + blocks.tobytes() + deq.tobytes())


class Ggml:
    """llama.cpp's quantizer and dequantizer, called in the libggml llama-cpp-python ships."""

    class TypeTraits(ctypes.Structure):
        _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64),
                    ("blck_size_interleave", ctypes.c_int64), ("type_size", ctypes.c_size_t),
                    ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p),
                    ("from_float_ref", ctypes.c_void_p)]

    def __init__(self):
        import llama_cpp
        libdir = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
        self.lib = ctypes.CDLL(glob.glob(os.path.join(libdir, "libggml-base.*"))[0])
        self.lib.ggml_quantize_chunk.restype = ctypes.c_size_t
        self.lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                                 ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                                 ctypes.c_void_p]
        self.lib.ggml_get_type_traits.restype = ctypes.POINTER(Ggml.TypeTraits)
        self.lib.ggml_get_type_traits.argtypes = [ctypes.c_int]
        self.version = llama_cpp.__version__

    def quantize(self, src: np.ndarray, qtype: Q) -> np.ndarray:
        src = np.ascontiguousarray(src, np.float32)
        traits = self.lib.ggml_get_type_traits(int(qtype)).contents
        out = np.zeros(src.size // traits.blck_size * traits.type_size, np.uint8)
        n = self.lib.ggml_quantize_chunk(int(qtype), src.ctypes.data, out.ctypes.data, 0, 1,
                                         src.size, None)
        assert n == out.size
        return out

    def dequantize(self, blocks: np.ndarray, qtype: Q, n: int) -> np.ndarray:
        traits = self.lib.ggml_get_type_traits(int(qtype)).contents
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(traits.to_float)
        out = np.zeros(n, np.float32)
        fn(np.ascontiguousarray(blocks).ctypes.data, out.ctypes.data, n)
        return out


def random_blocks(gen: np.random.Generator, qtype: Q, nblk: int) -> np.ndarray:
    """Random block bytes whose fp16 scales are small and finite."""
    size = quants.GGML_QUANT_SIZES[qtype][1]
    b = gen.integers(0, 256, (nblk, size), dtype=np.uint8)
    half = lambda v: np.array([v], dtype=np.float16).view(np.uint8)  # noqa: E731
    if qtype in (Q.Q5_0, Q.IQ4_NL, Q.IQ4_XS):
        b[:, 0:2] = half(0.01)
    elif qtype == Q.Q5_1:
        b[:, 0:2], b[:, 2:4] = half(0.01), half(-0.2)
    elif qtype == Q.Q2_K:
        b[:, 80:82], b[:, 82:84] = half(0.01), half(0.003)
    elif qtype == Q.Q3_K:
        b[:, 108:110] = half(0.004)
    return b.reshape(-1)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent.parent / "tests/golden/quant"
    out.mkdir(parents=True, exist_ok=True)
    write_convert(out)
    n = 512
    src = (rng.standard_normal(n) * 0.05).astype(np.float32)
    src[:32] = 0.0                      # an all-zero block (d == 0)
    src[32:64] = np.linspace(-1, 1, 32)  # exact ties in the rounding
    src[64:96] *= 100.0                  # large magnitudes
    for name, qt in (("q8_0", Q.Q8_0), ("q4_0", Q.Q4_0), ("q4_1", Q.Q4_1)):
        write_type(out, name, qt, quants.quantize(src.reshape(1, -1), qt).reshape(-1), src)
    # K-quants: gguf has no quantizer, so the blocks are random bytes with sane scales.
    nblk = n // 256
    q4k = rng.integers(0, 256, (nblk, 144), dtype=np.uint8)
    q4k[:, 0:2] = np.array([0.01], dtype=np.float16).view(np.uint8)
    q4k[:, 2:4] = np.array([0.003], dtype=np.float16).view(np.uint8)
    write_type(out, "q4_k", Q.Q4_K, q4k.reshape(-1), np.zeros(n, np.float32))
    q6k = rng.integers(0, 256, (nblk, 210), dtype=np.uint8)
    q6k[:, 208:210] = np.array([0.004], dtype=np.float16).view(np.uint8)
    write_type(out, "q6_k", Q.Q6_K, q6k.reshape(-1), np.zeros(n, np.float32))
    # Drawn last so the files above stay byte-identical to what earlier versions wrote.
    q5k = rng.integers(0, 256, (nblk, 176), dtype=np.uint8)
    q5k[:, 0:2] = np.array([0.01], dtype=np.float16).view(np.uint8)
    q5k[:, 2:4] = np.array([0.003], dtype=np.float16).view(np.uint8)
    write_type(out, "q5_k", Q.Q5_K, q5k.reshape(-1), np.zeros(n, np.float32))

    # The rest of the zoo, from its own generator: the files above (and any other type drawn
    # from `rng` later) do not depend on whether this section runs first. 1024 elements: four
    # 256-element super-blocks.
    zrng = np.random.default_rng(20)
    n = 1024
    src = (zrng.standard_normal(n) * 0.05).astype(np.float32)
    src[:32] = 0.0                         # an all-zero block
    src[256:288] = np.linspace(-1, 1, 32)  # exact ties
    src[512:768] *= 100.0                  # large magnitudes in a whole super-block
    src[800:816] = -src[800:816] ** 2      # a group with no positive value
    for name, qt in (("q5_0", Q.Q5_0), ("q5_1", Q.Q5_1)):
        write_type(out, name, qt, quants.quantize(src.reshape(1, -1), qt).reshape(-1), src)
    ggml = Ggml()
    for name, qt in (("q2_k", Q.Q2_K), ("q3_k", Q.Q3_K), ("iq4_nl", Q.IQ4_NL),
                     ("iq4_xs", Q.IQ4_XS)):
        blocks = ggml.quantize(src, qt)
        ref = ggml.dequantize(blocks, qt, n)
        ours = quants.dequantize(blocks, qt).astype(np.float32).reshape(-1)
        assert np.array_equal(ref.view(np.uint32), ours.view(np.uint32)), name
        write_type(out, name, qt, blocks, src)
    for name, qt in (("q5_0", Q.Q5_0), ("q5_1", Q.Q5_1), ("q2_k", Q.Q2_K), ("q3_k", Q.Q3_K),
                     ("iq4_nl", Q.IQ4_NL), ("iq4_xs", Q.IQ4_XS)):
        blocks = random_blocks(zrng, qt, n // quants.GGML_QUANT_SIZES[qt][0])
        ref = ggml.dequantize(blocks, qt, n)
        ours = quants.dequantize(blocks, qt).astype(np.float32).reshape(-1)
        assert np.array_equal(ref.view(np.uint32), ours.view(np.uint32)), name
        write_type(out, name + "_random", qt, blocks, np.zeros(n, np.float32))
    write_mxfp4(out, ggml)
    print("llama.cpp (llama-cpp-python) " + ggml.version)


def write_mxfp4(out: Path, ggml: Ggml) -> None:
    """MXFP4 (GGML type 39, GPT-OSS's experts), from its own generator: the files above stay
    byte-identical to what earlier versions wrote."""
    mrng = np.random.default_rng(39)
    n = 1024
    src = (mrng.standard_normal(n) * 0.05).astype(np.float32)
    src[:32] = 0.0                         # an all-zero block (e = 0)
    src[32:64] = np.linspace(-1, 1, 32)    # exact ties between neighbouring values
    src[64:96] *= 100.0                    # large magnitudes
    src[96:128] = np.linspace(-3e-38, 2e-38, 32)   # e = 0: scale 2^-128, fp32 denormals
    src[128:160] = np.linspace(6e-38, -5e-38, 32)  # e = 1: scale 2^-127
    src[160:192] *= np.float32(2e-35)              # the smallest normal scales
    src[192:224] = np.linspace(-3e38, 3.3e38, 32)  # fp32's top: e = 252
    src[224:256] = -np.abs(src[224:256])           # no positive value
    blocks = quants.quantize(src.reshape(1, -1), Q.MXFP4).reshape(-1)
    assert np.array_equal(blocks, ggml.quantize(src, Q.MXFP4)), "mxfp4 quantizer"
    ref = ggml.dequantize(blocks, Q.MXFP4, n)
    ours = quants.dequantize(blocks, Q.MXFP4).astype(np.float32).reshape(-1)
    assert np.array_equal(ref.view(np.uint32), ours.view(np.uint32)), "mxfp4"
    write_type(out, "mxfp4", Q.MXFP4, blocks, src)
    rb = mrng.integers(0, 256, (256, 17), dtype=np.uint8)
    rb[:, 0] = np.arange(256, dtype=np.uint8)
    rb = rb.reshape(-1)
    n = 256 * 32
    ref = ggml.dequantize(rb, Q.MXFP4, n)
    ours = quants.dequantize(rb, Q.MXFP4).astype(np.float32).reshape(-1)
    assert np.array_equal(ref.view(np.uint32), ours.view(np.uint32)), "mxfp4_random"
    write_type(out, "mxfp4_random", Q.MXFP4, rb, np.zeros(n, np.float32))


if __name__ == "__main__":
    main()
