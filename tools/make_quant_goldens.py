#!/usr/bin/env python3
"""Goldens for vt::cpu quantization: fp16/bf16 conversions and GGML block formats.

The reference is the `gguf` Python package (gguf.quants), which mirrors GGML's C
reference (de)quantizers. Writes tests/golden/quant/*.bin (little-endian):

  convert.bin:  u32 n, f32 x[n], u16 fp16(x)[n], u16 bf16(x)[n],
                u32 m, u16 h[m], f32 fp16_to_f32(h)[m]
  <type>.bin:   u32 n, u32 nbytes, f32 src[n], u8 blocks[nbytes], f32 dequant[n]
                (q8_0/q4_0/q4_1: blocks = gguf quantize(src); q4_k/q5_k/q6_k: blocks are
                random bytes with sane fp16 scales and src is unused zeros)

Usage: python3 tools/make_quant_goldens.py [out_dir]
"""
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


if __name__ == "__main__":
    main()
