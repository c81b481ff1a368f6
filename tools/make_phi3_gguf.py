#!/usr/bin/env python3
"""The tiny Phi-3 and Phi-3.5 of tools/make_tiny_models.py (Hugging Face folders) as the GGUFs
llama.cpp's converter writes, and llama.cpp's greedy goldens for them.

  python3 tools/make_phi3_gguf.py --hf TINY/phi3 --out TINY/phi3.gguf [--goldens]
  python3 tools/make_phi3_gguf.py --hf TINY/phi3_5 --out TINY/phi3_5.gguf [--goldens]
  python3 tools/make_phi3_gguf.py --hf TINY/phi4_mini --out TINY/phi4_mini.gguf [--goldens]

phi3_5 adds longrope as the converter writes it: rope_factors_long / rope_factors_short
tensors (F32), rope.scaling.original_context_length and rope.scaling.attn_factor
(sqrt(1 + ln(max / original) / ln(original))); llama.cpp uses the short factors while its
context (512 here) is within the original length. phi4_mini adds Phi-4-mini's partial rotary
as the converter writes it: rope.dimension_count int(partial_rotary_factor x hidden) / heads
(24 of head_dim 32 here; 96 of 128 on Phi-4-mini), one rope factor per rotated pair, and no
output.weight (tied: llama.cpp reads token_embd for the head).

The GGUF: architecture `phi3`; q/k/v kept fused as attn_qkv and gate/up as ffn_up (2 x
feed_forward_length rows, gate first), both stored as F16 so that the engine's row ranges of
a packed matrix are exercised (Q8_0 was tried: its activation rounding differs from
llama.cpp's by up to 0.17 in these logits and turns the tiny model's small top-2 gaps into
early near-tie stops), the rest F32; no sliding window key (llama.cpp ignores Phi's); a
2048-token byte-level vocabulary with Phi-3's control-token names (llama.cpp needs one; the
tests feed ids). Deterministic; needs
numpy and `gguf`. Without --goldens it checks the file against the sha256 in
tests/golden/<name>/greedy.json. --goldens (llama-cpp-python 0.3.36, never in CI) writes that
file: 24 greedy steps per prompt of tests/golden/hf/<name> with the top-2 logits.
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_gemma_gguf import add_vocab, finish, read_safetensors, twin_main, vocab  # noqa

def name_of(hf):
    return os.path.basename(os.path.normpath(hf))


def write_gguf(hf, out):
    import gguf
    cfg = json.load(open(os.path.join(hf, "config.json")))
    t = read_safetensors(os.path.join(hf, "model.safetensors"))
    L, E, H = cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"]
    g = gguf.GGUFWriter(out, "phi3")
    g.add_name("tiny-" + name_of(hf))
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(E)
    g.add_block_count(L)
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_head_count(H)
    g.add_head_count_kv(cfg["num_key_value_heads"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_rope_dimension_count(int(cfg.get("partial_rotary_factor", 1.0) * E) // H)
    g.add_rope_freq_base(cfg["rope_theta"])
    rs = cfg.get("rope_scaling") or {}
    longrope = rs.get("type") == "longrope"
    if longrope:  # as llama.cpp's converter: the original length and the attention factor
        orig = cfg["original_max_position_embeddings"]
        scale = cfg["max_position_embeddings"] / orig
        g.add_rope_scaling_orig_ctx_len(orig)
        g.add_rope_scaling_attn_factors(
            math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1 else 1.0)
    g.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    # Phi-3's control-token names: llama.cpp looks <unk>, <s>, </s> and <|endoftext|> up by
    # name in any vocabulary whose model name says phi3 (its rstrip rule for Phi-3).
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    tokens[-1] = "<|endoftext|>"
    add_vocab(g, cfg, tokens, types, merges)

    def f16(name, a):
        g.add_tensor(name, np.ascontiguousarray(a).astype(np.float16))

    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])
    if not cfg["tie_word_embeddings"]:
        g.add_tensor("output.weight", t["lm_head.weight"])
    if longrope:
        g.add_tensor("rope_factors_long.weight", np.array(rs["long_factor"], dtype=np.float32))
        g.add_tensor("rope_factors_short.weight", np.array(rs["short_factor"], dtype=np.float32))
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        f16(b + "attn_qkv.weight", t[p + "self_attn.qkv_proj.weight"])
        g.add_tensor(b + "attn_output.weight", t[p + "self_attn.o_proj.weight"])
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        f16(b + "ffn_up.weight", t[p + "mlp.gate_up_proj.weight"])
        g.add_tensor(b + "ffn_down.weight", t[p + "mlp.down_proj.weight"])
    finish(g)


if __name__ == "__main__":
    twin_main(__doc__, write_gguf, name_of, "make_phi3_gguf.py",
              "the tiny phi3, phi3_5 or phi4_mini folder (make_tiny_models.py)")
