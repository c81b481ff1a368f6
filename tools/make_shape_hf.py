#!/usr/bin/env python3
"""Write a Hugging Face folder with the exact tensor shapes of a Qwen3 model and random bf16
weights, and (with --gguf) a BF16 GGUF of the very same weights for llama.cpp.

The Hugging Face twin of ../shared/tools/make_shape_gguf.py (whose shapes it imports): a
forward pass costs the same whatever the weights are, so these files time bf16 models of
real sizes that no package ships. The folder holds config.json (Qwen3ForCausalLM),
model.safetensors (bf16), and tokenizer.json + tokenizer_config.json copied from
../shared/fixtures/qwen3-tokenizer. The GGUF carries the same tokenizer and the same bf16
bits (norm vectors as f32, as llama.cpp's converter stores them; they are all ones).

  python3 tools/make_shape_hf.py --shape qwen3-0.6b --out ~/.cache/vllm-cpp/qwen3-0.6b-shape-hf \\
      --gguf ~/.cache/vllm-cpp/qwen3-0.6b-shape.BF16.gguf

Weights are N(0, 0.02^2) rounded to bf16 (nearest even), one generator per tensor seeded
from its name, streamed in slices so memory stays far below the file size. Needs numpy
(and gguf for --gguf).
"""
import argparse
import ast
import importlib.util
import json
import os
import shutil
import struct
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared")
VOCAB = 151936
SLICE_BYTES = 64 << 20  # generate at most this much fp32 at a time


SHAPE_SCRIPT = os.path.join(SHARED, "tools", "make_shape_gguf.py")


def shapes():
    """SHAPES of the shared generator, read without importing it (it needs gguf)."""
    tree = ast.parse(open(SHAPE_SCRIPT).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "SHAPES" for t in node.targets):
            # A dict of dict(...) calls: evaluated with nothing but dict in scope.
            expr = compile(ast.Expression(node.value), SHAPE_SCRIPT, "eval")
            return eval(expr, {"__builtins__": {}, "dict": dict})
    sys.exit("no SHAPES in " + SHAPE_SCRIPT)


def shape_module():
    """The shared generator itself (its Qwen3 vocabulary reader), for --gguf."""
    spec = importlib.util.spec_from_file_location("make_shape_gguf", SHAPE_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tensor_list(s):
    """(hf name, gguf name, shape, is_norm) in file order."""
    E, H, KV, D, F = s["E"], s["H"], s["KV"], s["D"], s["F"]
    out = [("model.embed_tokens.weight", "token_embd.weight", (VOCAB, E), False)]
    for i in range(s["L"]):
        p, g = "model.layers.%d." % i, "blk.%d." % i
        out += [
            (p + "input_layernorm.weight", g + "attn_norm.weight", (E,), True),
            (p + "self_attn.q_proj.weight", g + "attn_q.weight", (H * D, E), False),
            (p + "self_attn.k_proj.weight", g + "attn_k.weight", (KV * D, E), False),
            (p + "self_attn.v_proj.weight", g + "attn_v.weight", (KV * D, E), False),
            (p + "self_attn.o_proj.weight", g + "attn_output.weight", (E, H * D), False),
            (p + "self_attn.q_norm.weight", g + "attn_q_norm.weight", (D,), True),
            (p + "self_attn.k_norm.weight", g + "attn_k_norm.weight", (D,), True),
            (p + "post_attention_layernorm.weight", g + "ffn_norm.weight", (E,), True),
            (p + "mlp.gate_proj.weight", g + "ffn_gate.weight", (F, E), False),
            (p + "mlp.up_proj.weight", g + "ffn_up.weight", (F, E), False),
            (p + "mlp.down_proj.weight", g + "ffn_down.weight", (E, F), False),
        ]
    out.append(("model.norm.weight", "output_norm.weight", (E,), True))
    if not s["tied"]:
        out.append(("lm_head.weight", "output.weight", (VOCAB, E), False))
    return out


def to_bf16(a):
    """fp32 -> bf16 bits, round to nearest even (the values are finite)."""
    u = a.view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def slices(name, shape, is_norm):
    """The tensor's bf16 bits, a slice of rows at a time."""
    if is_norm:
        yield np.full(shape, 0x3F80, np.uint16)  # 1.0
        return
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    rows, cols = shape
    step = max(1, SLICE_BYTES // (4 * cols))
    for r in range(0, rows, step):
        n = min(step, rows - r)
        yield to_bf16(rng.standard_normal((n, cols), dtype=np.float32) * np.float32(0.02))


def config_json(s):
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": s["E"],
        "intermediate_size": s["F"],
        "num_hidden_layers": s["L"],
        "num_attention_heads": s["H"],
        "num_key_value_heads": s["KV"],
        "head_dim": s["D"],
        "vocab_size": VOCAB,
        "max_position_embeddings": 40960,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000,
        "rope_scaling": None,
        "tie_word_embeddings": s["tied"],
        "attention_bias": False,
        "hidden_act": "silu",
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "torch_dtype": "bfloat16",
    }


def safetensors_header(tensors):
    header, off = {}, 0
    for hf, _, shape, _ in tensors:
        n = 2 * int(np.prod(shape))
        header[hf] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # data starts 8-byte aligned
    return struct.pack("<Q", len(raw)) + raw


def gguf_writer(path, shape_name, s, tensors, mod):
    import gguf

    tok_dir = os.path.join(SHARED, "fixtures", "qwen3-tokenizer")
    tokens, types, merges = mod.qwen3_vocab(tok_dir)
    cfg = json.load(open(os.path.join(tok_dir, "tokenizer_config.json")))
    w = gguf.GGUFWriter(path, "qwen3")
    w.add_name(shape_name + "-random")
    w.add_context_length(40960)
    w.add_embedding_length(s["E"])
    w.add_block_count(s["L"])
    w.add_feed_forward_length(s["F"])
    w.add_head_count(s["H"])
    w.add_head_count_kv(s["KV"])
    w.add_key_length(s["D"])
    w.add_value_length(s["D"])
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_BF16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(151643)
    w.add_eos_token_id(151645)
    w.add_pad_token_id(151643)
    w.add_add_bos_token(False)
    w.add_chat_template(cfg["chat_template"])
    for _, gg, shape, is_norm in tensors:
        n = int(np.prod(shape))
        if is_norm:
            w.add_tensor_info(gg, shape, np.dtype(np.float32), 4 * n)
        else:
            w.add_tensor_info(gg, shape, np.dtype(np.uint16), 2 * n,
                              raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    return w


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", required=True, help="qwen3-0.6b, qwen3-1.7b or qwen3-4b")
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--gguf", help="also write the same weights as a BF16 GGUF here")
    a = ap.parse_args()
    known = shapes()
    if a.shape not in known:
        sys.exit("unknown shape %r (known: %s)" % (a.shape, ", ".join(known)))
    s = known[a.shape]
    tensors = tensor_list(s)
    out = os.path.abspath(os.path.expanduser(a.out))
    os.makedirs(out, exist_ok=True)
    tok_dir = os.path.join(SHARED, "fixtures", "qwen3-tokenizer")
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(tok_dir, f), os.path.join(out, f))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config_json(s), f, indent=2)

    st_tmp = os.path.join(out, "model.safetensors.tmp")
    gg_path = os.path.abspath(os.path.expanduser(a.gguf)) if a.gguf else None
    gw = gguf_writer(gg_path + ".tmp", a.shape, s, tensors, shape_module()) if gg_path else None
    with open(st_tmp, "wb") as st:
        st.write(safetensors_header(tensors))
        for hf, gg, shape, is_norm in tensors:
            parts = list(slices(hf, shape, is_norm))
            for p in parts:
                p.tofile(st)
            if gw:
                # One tensor at a time (the writer pads between tensors); norms as f32 ones.
                data = (np.ones(shape, np.float32) if is_norm else np.concatenate(parts))
                gw.write_tensor_data(data)
    os.replace(st_tmp, os.path.join(out, "model.safetensors"))
    print("wrote", out, "(%.0f MiB)" % (os.path.getsize(os.path.join(out, "model.safetensors")) / 2**20))
    if gw:
        gw.close()
        os.replace(gg_path + ".tmp", gg_path)
        print("wrote", gg_path, "(%.0f MiB)" % (os.path.getsize(gg_path) / 2**20))


if __name__ == "__main__":
    main()
