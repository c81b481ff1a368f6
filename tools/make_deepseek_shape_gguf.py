#!/usr/bin/env python3
"""A DeepSeek-shaped GGUF for speed measurements of the latent attention: DeepSeek-V2-Lite's
dims (hidden 2048, 16 heads, kv_lora_rank 512, qk_nope 128 + qk_rope 64, v 128, 64 experts of
1408 top-6 plus 2 shared, vocabulary 102400) with V2 / V3's q latent (q_lora_rank 1536:
llama.cpp reads a GGUF without one only at the Lite's 27 layers), --layers layers (the first
dense, width 10944), random weights (a forward pass costs the same whatever the weights), in
llama.cpp's current MQA form (tools/make_llama_gguf.py's write_deepseek2), F16, then
quantized to --type with llama.cpp's quantizer through llama-cpp-python (tooling only).

  python3 tools/make_deepseek_shape_gguf.py --out /tmp/dsbench --layers 4 --type Q4_K_M
"""
import argparse
import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_llama_gguf  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for ds.f16.gguf and ds.<type>.gguf")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--type", default="Q4_K_M", help="a llama.cpp LLAMA_FTYPE_MOSTLY_ name")
    a = ap.parse_args()
    E, V, H, F, Fm, X = 2048, 102400, 16, 10944, 1408, 64
    cfg = {"model_type": "deepseek_v2", "num_hidden_layers": a.layers, "hidden_size": E,
           "intermediate_size": F, "moe_intermediate_size": Fm, "n_routed_experts": X,
           "num_experts_per_tok": 6, "n_shared_experts": 2, "first_k_dense_replace": 1,
           "num_attention_heads": H, "num_key_value_heads": H, "q_lora_rank": 1536,
           "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
           "v_head_dim": 128, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_scaling": None,
           "routed_scaling_factor": 1.0, "norm_topk_prob": False, "scoring_func": "softmax",
           "n_group": 1, "topk_group": 1, "vocab_size": V, "max_position_embeddings": 4096,
           "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2}
    rng = np.random.default_rng(0)

    def w(*shape, s=0.02):
        return (rng.standard_normal(shape, dtype=np.float32) * s).astype(np.float16)

    def ones(n):
        return np.ones(n, np.float32)
    t = {"model.embed_tokens.weight": w(V, E), "model.norm.weight": ones(E),
         "lm_head.weight": w(V, E)}
    for i in range(a.layers):
        p = f"model.layers.{i}."
        s = p + "self_attn."
        t.update({p + "input_layernorm.weight": ones(E), p + "post_attention_layernorm.weight": ones(E),
                  s + "q_a_proj.weight": w(1536, E), s + "q_a_layernorm.weight": ones(1536),
                  s + "q_b_proj.weight": w(H * 192, 1536),
                  s + "kv_a_proj_with_mqa.weight": w(576, E), s + "kv_a_layernorm.weight": ones(512),
                  s + "kv_b_proj.weight": w(H * 256, 512), s + "o_proj.weight": w(E, H * 128)})
        m = p + "mlp."
        mlps = [(m, F)] if i == 0 else [(f"{m}experts.{e}.", Fm) for e in range(X)] + \
            [(m + "shared_experts.", 2 * Fm)]
        for q, width in mlps:
            t.update({q + "gate_proj.weight": w(width, E), q + "up_proj.weight": w(width, E),
                      q + "down_proj.weight": w(E, width)})
        if i > 0:
            t[m + "gate.weight"] = w(X, E, s=0.1).astype(np.float32)
    os.makedirs(a.out, exist_ok=True)
    f16 = os.path.join(a.out, "ds.f16.gguf")
    make_llama_gguf.write_deepseek2(f16, cfg, t, mqa=True)
    import llama_cpp
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = getattr(llama_cpp, "LLAMA_FTYPE_MOSTLY_" + a.type)
    p.nthread = os.cpu_count() or 1
    out = os.path.join(a.out, f"ds.{a.type.lower()}.gguf")
    if llama_cpp.llama_model_quantize(f16.encode(), out.encode(), ctypes.byref(p)) != 0:
        sys.exit("llama_model_quantize failed")
    print(out)


if __name__ == "__main__":
    main()
