"""Deterministic numpy quantizers for GGML block types (test models only).

Owns the bytes of the generated zoo test models (tools/make_zoo_models.py): the goldens
made offline with llama.cpp belong to files with a recorded sha256, so CI must be able to
write the very same bytes again from numpy alone. Every step is an IEEE elementwise
operation (multiply, divide, rint, float16 cast, comparisons); there are no float
reductions other than max/min, whose result does not depend on the order. The schemes are
simple round-to-nearest ones (llama.cpp searches for better scales; the tests only need
valid blocks of each type), with the block layouts of GGML:

  quantize(rows: float32 [n, k], type_name) -> uint8 [n, k / block * block_bytes]

Types: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 (32-element blocks), Q2_K, Q3_K, Q4_K, Q5_K,
Q6_K, IQ4_XS (256-element super-blocks).
"""
import numpy as np

# GGML type ids, block elements and block bytes.
TYPES = {
    "F32": (0, 1, 4), "Q8_0": (8, 32, 34), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24),
    "IQ4_NL": (20, 32, 18), "Q2_K": (10, 256, 84), "Q3_K": (11, 256, 110),
    "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210),
    "IQ4_XS": (23, 256, 136), "MXFP4": (39, 32, 17),
}
TYPE_BY_ID = {v[0]: k for k, v in TYPES.items()}

IQ4_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                      dtype=np.float32)
_IQ4_MID = (IQ4_VALUES[1:] + IQ4_VALUES[:-1]) / np.float32(2)
# The e2m1 values doubled (GGML's kvalues_mxfp4); index 8 is -0.
MXFP4_VALUES = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=np.float32)

f32 = np.float32


def _half(x):
    """[n] float32 -> (fp16 bits as [n, 2] bytes, the fp16 value back as float32)."""
    h = np.ascontiguousarray(np.asarray(x, np.float32).astype(np.float16))
    return h.view(np.uint8).reshape(h.shape[0], -1), h.astype(np.float32)


def _safe_div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b != 0, a / np.where(b != 0, b, f32(1)), f32(0)).astype(np.float32)


def _signed_max(x):
    """Per row of the last axis, the element of largest magnitude (first one on ties)."""
    i = np.abs(x).argmax(axis=-1)[..., None]
    return np.take_along_axis(x, i, axis=-1)[..., 0]


def _rint_clip(v, lo, hi):
    return np.clip(np.rint(v), lo, hi).astype(np.int32)


def _nibbles(lo, hi):
    return (lo.astype(np.uint8) & 0xF) | ((hi.astype(np.uint8) & 0xF) << 4)


# ---- 32-element blocks ----


def q8_0(b):
    d, dv = _half(np.abs(b).max(axis=-1) / f32(127))
    q = _rint_clip(_safe_div(b, dv[:, None]), -127, 127).astype(np.int8).view(np.uint8)
    return np.concatenate([d, q], axis=1)


def q4_0(b):
    d, dv = _half(_signed_max(b) / f32(-8))
    q = _rint_clip(_safe_div(b, dv[:, None]) + f32(8), 0, 15)
    return np.concatenate([d, _nibbles(q[:, :16], q[:, 16:])], axis=1)


def q4_1(b):
    mn, mx = b.min(axis=-1), b.max(axis=-1)
    d, dv = _half((mx - mn) / f32(15))
    m, mv = _half(mn)
    q = _rint_clip(_safe_div(b - mv[:, None], dv[:, None]), 0, 15)
    return np.concatenate([d, m, _nibbles(q[:, :16], q[:, 16:])], axis=1)


def _q5_pack(q):
    qs = _nibbles(q[:, :16], q[:, 16:])
    qh = np.packbits((q >> 4).astype(np.uint8) & 1, axis=-1, bitorder="little")
    return qh, qs


def q5_0(b):
    d, dv = _half(_signed_max(b) / f32(-16))
    q = _rint_clip(_safe_div(b, dv[:, None]) + f32(16), 0, 31)
    qh, qs = _q5_pack(q)
    return np.concatenate([d, qh, qs], axis=1)


def q5_1(b):
    mn, mx = b.min(axis=-1), b.max(axis=-1)
    d, dv = _half((mx - mn) / f32(31))
    m, mv = _half(mn)
    q = _rint_clip(_safe_div(b - mv[:, None], dv[:, None]), 0, 31)
    qh, qs = _q5_pack(q)
    return np.concatenate([d, m, qh, qs], axis=1)


def _iq4_index(v):
    return np.searchsorted(_IQ4_MID, v, side="left").astype(np.uint8)


def iq4_nl(b):
    d, dv = _half(_signed_max(b) / f32(-127))
    idx = _iq4_index(_safe_div(b, dv[:, None]))
    return np.concatenate([d, _nibbles(idx[:, :16], idx[:, 16:])], axis=1)


def mxfp4(b):
    """GGML's (and gguf's) MXFP4 quantizer: exponent e = floor(log2(amax)) - 2 + 127 (0 for
    an all-zero block), scale 2^(e - 128), each value the nearest of MXFP4_VALUES * scale
    (the first of equals). floor(log2) is taken exactly from frexp instead of a log2."""
    amax = np.abs(b).max(axis=-1)
    _, ex = np.frexp(amax)  # amax = m 2^ex, m in [0.5, 1): floor(log2(amax)) = ex - 1
    e = np.where(amax > 0, np.clip(ex.astype(np.int32) - 1 - 2 + 127, 0, 255), 0).astype(np.uint8)
    d = np.ldexp(f32(1), e.astype(np.int32) - 128).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.abs(d[:, None, None] * MXFP4_VALUES[None, None, :] - b[:, :, None])
    idx = err.argmin(axis=-1).astype(np.uint8)
    return np.concatenate([e[:, None], _nibbles(idx[:, :16], idx[:, 16:])], axis=1)


# ---- 256-element super-blocks ----


def _elem_2bit_pack(q):
    """q: [n, 256] values 0..3 -> qs [n, 64]: element 128n + 32j + l at bits 2j of byte 32n + l."""
    q = q.astype(np.uint8).reshape(-1, 2, 4, 32)
    out = q[:, :, 0] | (q[:, :, 1] << 2) | (q[:, :, 2] << 4) | (q[:, :, 3] << 6)
    return out.reshape(-1, 64)


def q2_k(b):
    n = b.shape[0]
    g = b.reshape(n, 16, 16)
    mn = np.minimum(g.min(axis=-1), f32(0))
    scale = (g.max(axis=-1) - mn) / f32(3)
    d, dv = _half(scale.max(axis=-1) / f32(15))
    dm, dmv = _half((-mn).max(axis=-1) / f32(15))
    sc = _rint_clip(_safe_div(scale, dv[:, None]), 0, 15)
    m = _rint_clip(_safe_div(-mn, dmv[:, None]), 0, 15)
    ds = dv[:, None] * sc.astype(np.float32)
    dmm = dmv[:, None] * m.astype(np.float32)
    q = _rint_clip(_safe_div(g + dmm[..., None], ds[..., None]), 0, 3).reshape(n, 256)
    scales = (sc | (m << 4)).astype(np.uint8)
    return np.concatenate([scales, _elem_2bit_pack(q), d, dm], axis=1)


def q3_k(b):
    n = b.shape[0]
    g = b.reshape(n, 16, 16)
    gs = _signed_max(g) / f32(-4)
    d, dv = _half(np.abs(gs).max(axis=-1) / f32(31))
    sc = _rint_clip(_safe_div(gs, dv[:, None]), -32, 31)
    ds = dv[:, None] * sc.astype(np.float32)
    q = (_rint_clip(_safe_div(g, ds[..., None]), -4, 3) + 4).reshape(n, 256)  # 0..7
    qs = _elem_2bit_pack(q & 3)
    hbit = (q >> 2).astype(np.uint8).reshape(n, 8, 32)  # bit e // 32 of hmask[e % 32]
    hmask = np.zeros((n, 32), np.uint8)
    for k in range(8):
        hmask |= hbit[:, k] << k
    u = (sc + 32).astype(np.uint8)  # 16 6-bit values
    lo = (u[:, :8] & 0xF) | ((u[:, 8:] & 0xF) << 4)
    hi2 = u >> 4
    hi = hi2[:, 0:4] | (hi2[:, 4:8] << 2) | (hi2[:, 8:12] << 4) | (hi2[:, 12:16] << 6)
    return np.concatenate([hmask, qs, lo, hi, d], axis=1)


def _kquant_affine(b, levels):
    """Q4_K / Q5_K: 8 sub-blocks of 32 on an affine grid with mn <= 0; 6-bit scales/mins."""
    n = b.shape[0]
    g = b.reshape(n, 8, 32)
    mn = np.minimum(g.min(axis=-1), f32(0))
    scale = (g.max(axis=-1) - mn) / f32(levels)
    d, dv = _half(scale.max(axis=-1) / f32(63))
    dm, dmv = _half((-mn).max(axis=-1) / f32(63))
    sc = _rint_clip(_safe_div(scale, dv[:, None]), 0, 63)
    m = _rint_clip(_safe_div(-mn, dmv[:, None]), 0, 63)
    ds = dv[:, None] * sc.astype(np.float32)
    dmm = dmv[:, None] * m.astype(np.float32)
    q = _rint_clip(_safe_div(g + dmm[..., None], ds[..., None]), 0, levels).reshape(n, 256)
    sc8, m8 = sc.astype(np.uint8), m.astype(np.uint8)
    scales = np.concatenate([
        (sc8[:, :4] & 63) | ((sc8[:, 4:] >> 4) << 6),
        (m8[:, :4] & 63) | ((m8[:, 4:] >> 4) << 6),
        (sc8[:, 4:] & 0xF) | ((m8[:, 4:] & 0xF) << 4)], axis=1)
    return d, dm, scales, q


def _kquant_nibbles(q):
    """[n, 256] -> [n, 128]: element 64j + l low nibble, 64j + 32 + l high nibble of 32j + l."""
    q = q.reshape(-1, 4, 2, 32)
    return _nibbles(q[:, :, 0], q[:, :, 1]).reshape(-1, 128)


def q4_k(b):
    d, dm, scales, q = _kquant_affine(b, 15)
    return np.concatenate([d, dm, scales, _kquant_nibbles(q)], axis=1)


def q5_k(b):
    d, dm, scales, q = _kquant_affine(b, 31)
    n = b.shape[0]
    hbit = (q >> 4).astype(np.uint8).reshape(n, 8, 32)  # bit e // 32 of qh[e % 32]
    qh = np.zeros((n, 32), np.uint8)
    for k in range(8):
        qh |= hbit[:, k] << k
    return np.concatenate([d, dm, scales, qh, _kquant_nibbles(q & 15)], axis=1)


def q6_k(b):
    n = b.shape[0]
    g = b.reshape(n, 16, 16)
    gs = _signed_max(g) / f32(-32)
    d, dv = _half(np.abs(gs).max(axis=-1) / f32(127))
    sc = _rint_clip(_safe_div(gs, dv[:, None]), -128, 127)
    ds = dv[:, None] * sc.astype(np.float32)
    q = (_rint_clip(_safe_div(g, ds[..., None]), -32, 31) + 32).astype(np.uint8).reshape(n, 2, 4, 32)
    lo, hi = q & 0xF, q >> 4
    ql = np.concatenate([lo[:, :, 0] | (lo[:, :, 2] << 4), lo[:, :, 1] | (lo[:, :, 3] << 4)],
                        axis=2).reshape(n, 128)
    qh = (hi[:, :, 0] | (hi[:, :, 1] << 2) | (hi[:, :, 2] << 4) | (hi[:, :, 3] << 6)).reshape(n, 64)
    return np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8), d], axis=1)


def iq4_xs(b):
    n = b.shape[0]
    g = b.reshape(n, 8, 32)
    s = _signed_max(g) / f32(-127)
    d, dv = _half(np.abs(s).max(axis=-1) / f32(31))
    ls = _rint_clip(_safe_div(s, dv[:, None]), -32, 31)
    dl = dv[:, None] * ls.astype(np.float32)
    idx = _iq4_index(_safe_div(g, dl[..., None]))  # [n, 8, 32]
    qs = _nibbles(idx[:, :, :16], idx[:, :, 16:]).reshape(n, 128)
    u = (ls + 32).astype(np.uint16)
    scales_h = np.zeros(n, np.uint16)
    for ib in range(8):
        scales_h |= (u[:, ib] >> 4) << (2 * ib)
    u8 = (u & 0xF).astype(np.uint8)
    scales_l = u8[:, 0::2] | (u8[:, 1::2] << 4)
    sh = scales_h.astype("<u2").view(np.uint8).reshape(n, 2)
    return np.concatenate([d, sh, scales_l, qs], axis=1)


_FUNCS = {"Q8_0": q8_0, "Q4_0": q4_0, "Q4_1": q4_1, "Q5_0": q5_0, "Q5_1": q5_1, "IQ4_NL": iq4_nl, "MXFP4": mxfp4, "Q2_K": q2_k,
          "Q3_K": q3_k, "Q4_K": q4_k, "Q5_K": q5_k, "Q6_K": q6_k, "IQ4_XS": iq4_xs}


def quantize(rows, type_name):
    """rows: float32 [..., k] -> uint8 [..., k / block * block_bytes] in GGML's layout."""
    rows = np.ascontiguousarray(rows, np.float32)
    if type_name == "F32":
        return rows.view(np.uint8).reshape(*rows.shape[:-1], -1)
    _, blk, nbytes = TYPES[type_name]
    if rows.shape[-1] % blk:
        raise ValueError(f"row length {rows.shape[-1]} is not a multiple of {type_name}'s {blk}")
    out = _FUNCS[type_name](rows.reshape(-1, blk))
    assert out.dtype == np.uint8 and out.shape[1] == nbytes, (type_name, out.shape)
    return out.reshape(*rows.shape[:-1], rows.shape[-1] // blk * nbytes)
