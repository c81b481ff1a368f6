#!/usr/bin/env python3
"""The tiny Mixtral, SmolLM3, Granite, Qwen2.5-VL, OLMo 2, GLM-4, Cohere, Cohere2, EXAONE 4.0,
gpt-oss, Qwen2-MoE, OLMoE, GraniteMoE, GLM-4.5, MiniMax-M2, ERNIE 4.5 and Seed-OSS of
tools/make_tiny_models.py
(Hugging Face folders) as the GGUFs llama.cpp's converter writes, and llama.cpp's greedy goldens
for them.

  python3 tools/make_llama_gguf.py --hf TINY/mixtral --out TINY/mixtral.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/smollm3 --out TINY/smollm3.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/granite --out TINY/granite.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/qwen2_5_vl --out TINY/qwen2_5_vl.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/olmo2 --out TINY/olmo2.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/glm4 --out TINY/glm4.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/cohere --out TINY/cohere.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/cohere2 --out TINY/cohere2.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/exaone4 --out TINY/exaone4.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/gpt_oss --out TINY/gpt_oss.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/qwen2_moe --out TINY/qwen2_moe.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/olmoe --out TINY/olmoe.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/granitemoe --out TINY/granitemoe.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/glm4_moe --out TINY/glm4_moe.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/minimax_m2 --out TINY/minimax_m2.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/ernie4_5 --out TINY/ernie4_5.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/ernie4_5_moe --out TINY/ernie4_5_moe.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/seed_oss --out TINY/seed_oss.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/arcee --out TINY/arcee.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/hunyuan_dense --out TINY/hunyuan_dense.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/stablelm --out TINY/stablelm.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/phi --out TINY/phi.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/starcoder2 --out TINY/starcoder2.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/deepseek_v2 --out TINY/deepseek_v2.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/deepseek_v3 --out TINY/deepseek_v3.gguf [--goldens]
  python3 tools/make_llama_gguf.py --hf TINY/ministral3 --out TINY/ministral3.gguf [--goldens]

The first three are the Llama layout with q/k rows permuted for llama.cpp's interleaved RoPE;
qwen2_5_vl is llama.cpp's `qwen2vl` (its text model): q/k rows as stored, q/k/v biases,
qwen2vl.rope.dimension_sections (the mrope sections and an empty fourth); olmo2 likewise
NEOX, with post_attention_norm / post_ffw_norm and whole-projection attn_q_norm / attn_k_norm
instead of attn_norm / ffn_norm. glm4: llama.cpp's `glm4`, q/k rows as stored (its rope NORM
rotates adjacent pairs, as transformers' GLM), glm4.rope.dimension_count half the head
(partial_rotary_factor 0.5), q/k/v biases, post_attention_norm / post_ffw_norm beside attn_norm /
ffn_norm, gate and up fused in ffn_up, the first EOS id as EOS and the second as EOT (the
converter's <|endoftext|> and <|user|>). cohere / cohere2: llama.cpp's `command-r` / `cohere2`,
q/k rows as stored (rope NORM), attention.layer_norm_epsilon, logit_scale, one attn_norm per
layer (no ffn_norm: the parallel block), tied; cohere2 adds attention.sliding_window (llama.cpp
fixes the pattern: 3 sliding layers of 4, rotary only on them). exaone4: llama.cpp's `exaone4`,
OLMo 2's tensor layout with per-head q/k norms, written without the window keys (the 1.2B's
form): llama.cpp 0.3.36 applies EXAONE 4.0's sliding window and global NoPE only to 64-layer
files (the 32B), so on the tiny hybrid model the converter's keys would make llama.cpp differ
from its own reading of a real 32B file (measured: 0.48 max logit difference to transformers
with the keys, 0.005 without, rotating every layer); this engine reads the keys when present,
as transformers reads layer_types. The twin is therefore the tiny model's weights with every
layer global and rotating, and its goldens are llama.cpp's on that form. mixtral:
architecture `llama` with llama.expert_count / expert_used_count (llama.cpp's Mixtral), the
router as ffn_gate_inp and each projection's experts stacked in one 3-D tensor,
ffn_gate_exps / ffn_up_exps / ffn_down_exps. smollm3: architecture `smollm3` (llama.cpp fixes
its NoPE interval at 4, no key), tied embeddings (no output.weight). granite: architecture
`granite` with its four multipliers as granite.embedding_scale / attention.scale /
residual_scale / logit_scale. gpt_oss (from the MXFP4 folder): llama.cpp's `gpt-oss` with the
converter's keys (sliding_window, expert_feed_forward_length, expert_count / expert_used_count,
rope.scaling yarn type / factor / original_context_length / beta_fast / beta_slow; llama.cpp
fixes the layer pattern: sliding, full, ...), post_attention_layernorm as post_attention_norm,
attn_sinks, the router as ffn_gate_inp with its bias, q/k/v/o biases, q/k rows as stored (NEOX),
and the experts as the converter repacks them: rows 0::2 / 1::2 of gate_up_proj split into
ffn_gate_exps / ffn_up_exps, each block's nibbles reordered into GGML's MXFP4 (type 39, the
same codes and exponents; checked value for value against gguf-py's dequantization), the biases
split the same way; the other tensors F32 (the BF16 values, exact). On it llama.cpp 0.3.36
differs from transformers three ways, none a weight: it floors / ceils YaRN's correction range
(gpt-oss's rope_scaling says truncate false, and the GGUF has no key for it), it rounds the
experts' activations to Q8_0 before the MXFP4 products (the CPU kernel's), and it keeps K / V in
F16; with F32 experts and an F32 cache it matches transformers with truncate true to 1e-4, and
the MXFP4 twin matches that with Q8_0 activations to 3e-5. qwen2_moe: llama.cpp's `qwen2moe`
with Qwen2MoeModel's keys (expert_count / expert_used_count, expert_feed_forward_length,
expert_shared_feed_forward_length; no key_length: config.json has no head_dim), q/k/v biases,
q/k rows as stored (NEOX), the router as ffn_gate_inp, the experts stacked as ffn_gate_exps /
ffn_up_exps / ffn_down_exps, the shared expert as ffn_gate_shexp / ffn_up_shexp / ffn_down_shexp
and its gate as ffn_gate_inp_shexp kept [1, H] (GGUF ne {H, 1}; the converter no longer squeezes,
llama.cpp asks for {H} and takes both); BF16 widened to F32 (exact). llama.cpp's qwen2moe has no
dense layer (every layer loads the router and both expert kinds), so the dense layer 1
(mlp_only_layers) is written as a qwen2moe layer computing the same MLP (qwen2moe_dense_as_moe):
with an F32 cache llama.cpp matches transformers to 5e-5 on every prompt position. olmoe:
llama.cpp's `olmoe` with OlmoeModel's keys (TextModel's, expert_count / expert_used_count, eps
1e-5; feed_forward_length is the expert width, no key_length), q/k rows as stored (NEOX: the
converter does not permute them), attn_q_norm / attn_k_norm over the whole projection (GGUF ne
{n_embd}), the router as ffn_gate_inp, the experts stacked as ffn_gate_exps / ffn_up_exps /
ffn_down_exps; BF16 widened to F32 (exact). granitemoe: llama.cpp's `granitemoe` with
GraniteMoeModel's keys (TextModel's, expert_count / expert_used_count, feed_forward_length the
expert width, no key_length; LlamaModel's vocab_size and rope.dimension_count; Granite's
attention.scale / embedding_scale / residual_scale / logit_scale), q/k rows permuted as
granite's, tied (no output.weight), router.layer as ffn_gate_inp, input_linear split along its
rows into ffn_gate_exps (the first half) and ffn_up_exps (the second), output_linear as
ffn_down_exps; BF16 widened to F32 (exact). glm4_moe: llama.cpp's `glm4moe` with Glm4MoeModel's
keys (TextModel's expert_count / expert_used_count / expert_group_count / expert_group_used_count
and key_length; rope.dimension_count half the head, expert_feed_forward_length,
expert_shared_count, leading_dense_block_count, expert_gating_func sigmoid, expert_weights_scale,
expert_weights_norm, nextn_predict_layers) and the MTP layer exported (block_count counts it),
q/k rows as stored (NEOX), q/k/v biases, attn_q_norm / attn_k_norm, the pre-MLP norm as
post_attention_norm, the router as ffn_gate_inp with exp_probs_b.bias, the experts stacked, the
shared expert as ffn_*_shexp; BF16 widened to F32 (exact). minimax_m2: llama.cpp's `minimax-m2`
with MiniMaxM2Model's keys (TextModel's expert_count / expert_used_count, expert_gating_func
sigmoid from scoring_func, key_length; expert_feed_forward_length, rope.dimension_count =
rotary_dim), q/k rows as stored (NEOX), attn_q_norm / attn_k_norm over the whole projections,
the router as ffn_gate_inp with exp_probs_b.bias, w1 / w3 / w2 stacked as ffn_gate_exps /
ffn_up_exps / ffn_down_exps; BF16 widened to F32 (exact). ernie4_5 / ernie4_5_moe: llama.cpp's
`ernie4_5` / `ernie4_5-moe` with Ernie4_5Model's keys (TextModel's, key_length; the MoE's
expert_count / expert_used_count, interleave_moe_layer_step, leading_dense_block_count,
expert_feed_forward_length, expert_shared_count and the converter's
expert_shared_feed_forward_length = intermediate_size / num_key_value_heads), q/k rows as stored
(rope NORM: transformers' pairs already), tied, the router as ffn_gate_inp with exp_probs_b.bias
[1, experts], the experts stacked, the shared experts as ffn_*_shexp; BF16 widened to F32
(exact). seed_oss: llama.cpp's `seed_oss` with TextModel's keys (key_length), q/k rows as stored
(NEOX), q/k/v biases, the pre-MLP norm as post_attention_norm; BF16 widened to F32 (exact).
arcee: llama.cpp's `arcee` as ArceeModel (LlamaModel) writes it: q/k rows permuted (rope NORM),
ffn_up / ffn_down only (the ungated relu2 MLP); BF16 widened to F32 (exact). All
others
F32 (with F16 experts llama.cpp rounds the activations to f16 before the expert products, and
in a draft of the random Mixtral one token's router then picked another expert: the logits
moved by 0.7 at that step, a router near-tie, not an error of either engine); a 2048-token
byte-level vocabulary (llama.cpp needs one; the tests feed ids). Deterministic; needs numpy and
`gguf`. Without --goldens it checks the file against the sha256 in
tests/golden/<name>/greedy.json.
--goldens (llama-cpp-python 0.3.36, never in CI) writes that file: 24 greedy steps per prompt
of tests/golden/hf/<name> with the top-2 logits.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_gemma_gguf import add_vocab, finish, read_safetensors, twin_main, vocab  # noqa
from make_tiny_internlm2 import permute  # noqa: E402

ARCH = {"mixtral": "llama", "smollm3": "smollm3", "granite": "granite", "qwen2_5_vl": "qwen2vl",
        "olmo2": "olmo2", "glm4": "glm4", "cohere": "command-r", "cohere2": "cohere2",
        "exaone4": "exaone4", "gpt_oss": "gpt-oss", "qwen2_moe": "qwen2moe", "olmoe": "olmoe",
        "granitemoe": "granitemoe", "glm4_moe": "glm4moe",
        "minimax_m2": "minimax-m2", "ernie4_5": "ernie4_5", "ernie4_5_moe": "ernie4_5-moe",
        "seed_oss": "seed_oss", "arcee": "arcee", "hunyuan_v1_dense": "hunyuan-dense",
        "stablelm": "stablelm", "phi": "phi2", "starcoder2": "starcoder2",
        "deepseek_v2": "deepseek2", "deepseek_v3": "deepseek2", "ministral3": "mistral3"}


def name_of(hf):
    mt = json.load(open(os.path.join(hf, "config.json")))["model_type"]
    return {"hunyuan_v1_dense": "hunyuan_dense"}.get(mt, mt)  # the tiny folder's name


def mxfp4_to_ggml(blocks, scales):
    """gpt-oss's MXFP4 experts ([..., rows, G, 16] blocks, byte j = elements 2j (low nibble) and
    2j+1 (high); [..., rows, G] exponents) as GGML MXFP4 rows ([..., rows, G * 17]: per block
    the exponent byte, then 16 bytes, byte j = elements j (low) and j + 16 (high)). Codes and
    exponents carry over: ggml's table is the e2m1 values doubled, its scale 2^(e - 128)."""
    lo, hi = blocks & 0x0F, blocks >> 4
    vals = np.stack([lo, hi], axis=-1).reshape(blocks.shape[:-1] + (32,))
    qs = (vals[..., :16] | (vals[..., 16:] << 4)).astype(np.uint8)
    raw = np.concatenate([scales[..., None], qs], axis=-1)
    return np.ascontiguousarray(raw.reshape(raw.shape[:-2] + (-1,)))


def mxfp4_values(blocks, scales):
    """The float32 values of gpt-oss's MXFP4 blocks / scales (transformers' reading)."""
    fp4 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)
    vals = np.stack([fp4[blocks & 0x0F], fp4[blocks >> 4]], axis=-1)
    vals = vals.reshape(blocks.shape[:-1] + (32,))
    vals = vals * np.ldexp(np.float32(1), scales.astype(np.int32) - 127)[..., None]
    return vals.reshape(vals.shape[:-2] + (-1,))


def text_model_writer(out, cfg):
    """A GGUFWriter with the keys convert_hf_to_gguf.py's TextModel.set_gguf_parameters writes
    first (no head_dim in config.json: no key_length / value_length; feed_forward_length is
    intermediate_size, the expert width of the MoE models here)."""
    import gguf
    g = gguf.GGUFWriter(out, ARCH[cfg["model_type"]])
    g.add_name("tiny-" + cfg["model_type"])
    g.add_block_count(cfg["num_hidden_layers"])
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(cfg["hidden_size"])
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_head_count(cfg["num_attention_heads"])
    g.add_head_count_kv(cfg["num_key_value_heads"])
    return g


SWIGLU = (("gate", "gate_proj"), ("up", "up_proj"), ("down", "down_proj"))
MIXTRAL = (("gate", "w1"), ("up", "w3"), ("down", "w2"))


def add_experts(g, t, b, m, X, names=SWIGLU):
    """Each projection of the X per-expert SwiGLU MLPs under `m`experts.E. stacked into one 3-D
    tensor, blk.N.ffn_{gate,up,down}_exps, as the converters merge them."""
    for kind, w in names:
        g.add_tensor(f"{b}ffn_{kind}_exps.weight",
                     np.stack([t[f"{m}experts.{e}.{w}.weight"] for e in range(X)]))


def add_embeddings(g, t, tied=False):
    """token_embd, output_norm and (untied) output, the converters' first tensors."""
    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])
    if not tied:
        g.add_tensor("output.weight", t["lm_head.weight"])


def add_attention(g, t, p, b, bias=False, qk_norm=False):
    """q/k/v (with their biases) and o rows as stored: rope NEOX, or a converter that does not
    permute them; then the q/k norms (per head, or over the whole projection: the checkpoint's
    shapes)."""
    for x in "qkv":
        g.add_tensor(f"{b}attn_{x}.weight", t[f"{p}self_attn.{x}_proj.weight"])
        if bias:
            g.add_tensor(f"{b}attn_{x}.bias", t[f"{p}self_attn.{x}_proj.bias"])
    g.add_tensor(b + "attn_output.weight", t[p + "self_attn.o_proj.weight"])
    if qk_norm:
        g.add_tensor(b + "attn_q_norm.weight", t[p + "self_attn.q_norm.weight"])
        g.add_tensor(b + "attn_k_norm.weight", t[p + "self_attn.k_norm.weight"])


def add_shared_expert(g, t, b, prefix):
    """A shared expert's SwiGLU MLP (`prefix`{gate,up,down}_proj) as blk.N.ffn_*_shexp."""
    for kind, w in SWIGLU:
        g.add_tensor(f"{b}ffn_{kind}_shexp.weight", t[f"{prefix}{w}.weight"])


def add_dense_mlp(g, t, b, m, kinds=("gate", "up", "down")):
    """A dense MLP (`m`{gate,up,down}_proj, the kinds present) as blk.N.ffn_{gate,up,down}."""
    for kind, w in SWIGLU:
        if kind in kinds:
            g.add_tensor(f"{b}ffn_{kind}.weight", t[f"{m}{w}.weight"])


def add_sparse_layer(g, t, b, m, X, score_bias):
    """A DeepSeek-style sparse layer (GLM-4.5, ERNIE 4.5): the router, its correction bias
    (`m` + score_bias, [1, experts] or [experts] as the checkpoint keeps it), the stacked
    experts and the shared experts."""
    g.add_tensor(b + "ffn_gate_inp.weight", t[m + "gate.weight"])
    g.add_tensor(b + "exp_probs_b.bias", t[m + score_bias])
    add_experts(g, t, b, m, X)
    add_shared_expert(g, t, b, m + "shared_experts.")


def write_gpt_oss(out, cfg, t):
    """llama.cpp's `gpt-oss` as convert_hf_to_gguf.py writes it from the MXFP4 checkpoint."""
    import gguf
    L, X = cfg["num_hidden_layers"], cfg["num_local_experts"]
    rope = cfg.get("rope_scaling") or cfg["rope_parameters"]
    g = text_model_writer(out, cfg)
    assert rope["rope_type"] == "yarn"
    g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    g.add_rope_scaling_factor(rope["factor"])
    g.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
    g.add_rope_scaling_yarn_beta_fast(rope["beta_fast"])
    g.add_rope_scaling_yarn_beta_slow(rope["beta_slow"])
    g.add_rope_freq_base(cfg.get("rope_theta", rope.get("rope_theta")))
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_key_length(cfg["head_dim"])
    g.add_value_length(cfg["head_dim"])
    g.add_file_type(gguf.LlamaFileType.MOSTLY_MXFP4_MOE)
    # llama.cpp's gpt-oss fixes the layer pattern (sliding, full, ...: load_swa_pattern(2)).
    assert cfg["layer_types"] == ["sliding_attention", "full_attention"] * (L // 2)
    g.add_sliding_window(cfg["sliding_window"])
    g.add_expert_feed_forward_length(cfg["intermediate_size"])
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, dict(cfg, bos_token_id=1), tokens, types, merges, pad=True)

    add_embeddings(g, t)
    mxfp4 = gguf.GGMLQuantizationType.MXFP4
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        g.add_tensor(b + "post_attention_norm.weight", t[p + "post_attention_layernorm.weight"])
        for x, gg in (("q", "attn_q"), ("k", "attn_k"), ("v", "attn_v"), ("o", "attn_output")):
            for kind in ("weight", "bias"):  # q/k rows as stored (NEOX)
                g.add_tensor(f"{b}{gg}.{kind}", t[f"{p}self_attn.{x}_proj.{kind}"])
        g.add_tensor(b + "attn_sinks.weight", t[p + "self_attn.sinks"])
        g.add_tensor(b + "ffn_gate_inp.weight", t[p + "mlp.router.weight"])
        g.add_tensor(b + "ffn_gate_inp.bias", t[p + "mlp.router.bias"])
        x = p + "mlp.experts."
        gu_b, gu_s = t[x + "gate_up_proj_blocks"], t[x + "gate_up_proj_scales"]
        gu_bias = t[x + "gate_up_proj_bias"]
        parts = (("ffn_gate_exps", gu_b[:, 0::2], gu_s[:, 0::2], gu_bias[:, 0::2]),
                 ("ffn_up_exps", gu_b[:, 1::2], gu_s[:, 1::2], gu_bias[:, 1::2]),
                 ("ffn_down_exps", t[x + "down_proj_blocks"], t[x + "down_proj_scales"],
                  t[x + "down_proj_bias"]))
        for gg, blocks, scales, bias in parts:
            raw = mxfp4_to_ggml(blocks, scales)
            # The repacking must not change a value (gguf-py's reading of the GGUF; its table,
            # like ggml's, has one zero: code 8, e2m1's -0, reads +0).
            assert np.array_equal(gguf.quants.dequantize(raw, mxfp4),
                                  mxfp4_values(blocks, scales)), gg
            g.add_tensor(b + gg + ".weight", raw, raw_dtype=mxfp4)
            g.add_tensor(b + gg + ".bias", np.ascontiguousarray(bias))
    finish(g)


def qwen2moe_dense_as_moe(cfg, t, p):
    """A dense layer's MLP (gate / up [F, H], down [H, F], F = intermediate_size) as the tensors of
    llama.cpp's qwen2moe layer, which has no dense form, computing the same function: the first
    n_ff_shexp units as the shared expert, its down projection doubled behind a gate held at
    sigmoid(~0) = 1/2; the remaining n_ff_exp units as every routed expert, their down projection
    doubled, behind a zero router (softmax 1/4 each, two chosen: 1/2). Doublings and halvings are
    exact in binary floating point."""
    F, Fs = cfg["intermediate_size"], cfg["shared_expert_intermediate_size"]
    Fx = cfg["moe_intermediate_size"]
    X, H = cfg["num_experts"], cfg["hidden_size"]
    assert F == Fs + Fx and cfg["num_experts_per_tok"] == 2 and X == 4, "widths the emulation needs"
    gate, up, down = (t[f"{p}mlp.{w}_proj.weight"] for w in ("gate", "up", "down"))
    two = np.float32(2)
    # llama.cpp computes sigmoid(z) as silu(z) / z, NaN at z == 0: a tiny positive weight on
    # every input (2^-30) keeps z nonzero and normal (on the three prompts |z| is 7e-11..2e-8:
    # sigmoid 1/2 to 5e-9, below float32's resolution there).
    return {
        "ffn_gate_inp": np.zeros((X, H), np.float32),
        "ffn_gate_exps": np.stack([gate[Fs:]] * X), "ffn_up_exps": np.stack([up[Fs:]] * X),
        "ffn_down_exps": np.stack([down[:, Fs:] * two] * X),
        "ffn_gate_inp_shexp": np.full((1, H), 2.0 ** -30, np.float32),
        "ffn_gate_shexp": gate[:Fs], "ffn_up_shexp": up[:Fs], "ffn_down_shexp": down[:, :Fs] * two,
    }


def write_qwen2moe(out, cfg, t):
    """llama.cpp's `qwen2moe` as convert_hf_to_gguf.py's Qwen2MoeModel writes it."""
    import gguf
    L, X = cfg["num_hidden_layers"], cfg["num_experts"]
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    # Qwen2MoeModel.set_gguf_parameters
    g.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    g.add_expert_shared_feed_forward_length(cfg["shared_expert_intermediate_size"])
    # llama.cpp's qwen2moe never renormalizes the top-k weights (transformers' norm_topk_prob
    # false) and has no key for it.
    assert cfg["norm_topk_prob"] is False
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges)

    add_embeddings(g, t)
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        add_attention(g, t, p, b, bias=True)  # rows as stored (NEOX)
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "mlp."
        if m + "gate.weight" not in t:  # a dense layer (mlp_only_layers): see qwen2moe_dense_as_moe
            for gg, w in qwen2moe_dense_as_moe(cfg, t, p).items():
                g.add_tensor(b + gg + ".weight", np.ascontiguousarray(w))
            continue
        g.add_tensor(b + "ffn_gate_inp.weight", t[m + "gate.weight"])
        add_experts(g, t, b, m, X)
        # [1, H] in the checkpoint; the converter keeps that shape (GGUF ne {H, 1}), which
        # llama.cpp's {n_embd} accepts.
        g.add_tensor(b + "ffn_gate_inp_shexp.weight", t[m + "shared_expert_gate.weight"])
        add_shared_expert(g, t, b, m + "shared_expert.")
    finish(g)


def write_olmoe(out, cfg, t):
    """llama.cpp's `olmoe` as convert_hf_to_gguf.py's OlmoeModel writes it."""
    import gguf
    L, X, E = cfg["num_hidden_layers"], cfg["num_experts"], cfg["hidden_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    # llama.cpp's olmoe loads attn_k_norm as {n_embd} (no GQA form), applies no clip_qkv (the
    # converter writes no clamp key for it), never renormalizes the top-k weights (build_moe_ffn
    # with norm_w false: transformers' norm_topk_prob false) and has no bias tensors.
    assert KV == H and cfg.get("head_dim", E // H) == E // H, "llama.cpp's olmoe is MHA"
    assert cfg["clip_qkv"] is None and cfg["norm_topk_prob"] is False
    assert not cfg["attention_bias"]
    # OlmoeModel.set_gguf_parameters writes eps 1e-5 over config.json's value.
    assert cfg["rms_norm_eps"] == 1e-5
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges, pad=True)  # pad 1 from config.json, as SpecialVocab

    add_embeddings(g, t)
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        # q/k norms [H * D] and [KV * D] = [n_embd]: one RMSNorm over the whole projection.
        add_attention(g, t, p, b, qk_norm=True)
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "mlp."
        g.add_tensor(b + "ffn_gate_inp.weight", t[m + "gate.weight"])
        add_experts(g, t, b, m, X)
    finish(g)


def write_granitemoe(out, cfg, t):
    """llama.cpp's `granitemoe` as convert_hf_to_gguf.py's GraniteMoeModel writes it."""
    import gguf
    L, X, E = cfg["num_hidden_layers"], cfg["num_local_experts"], cfg["hidden_size"]
    H, KV, F = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["intermediate_size"]
    # llama.cpp's granitemoe weights the top-k by softmax over all experts, renormalized over the
    # k (build_moe_ffn with norm_w true): transformers' softmax over the top-k logits. No bias
    # tensors, no shared expert (GraniteMoeShared's shared_intermediate_size).
    assert not cfg["attention_bias"] and "shared_intermediate_size" not in cfg
    assert cfg["tie_word_embeddings"] and "lm_head.weight" not in t
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    # LlamaModel.set_gguf_parameters
    g.add_vocab_size(cfg["vocab_size"])
    g.add_rope_dimension_count(E // H)
    # GraniteModel.set_gguf_parameters: the multipliers as *_scale keys
    g.add_attention_scale(cfg["attention_multiplier"])
    g.add_embedding_scale(cfg["embedding_multiplier"])
    g.add_residual_scale(cfg["residual_multiplier"])
    g.add_logit_scale(cfg["logits_scaling"])
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges, pad=True)  # pad 0 from config.json, as SpecialVocab

    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])  # tied: no output.weight
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        # LlamaModel permutes q / k rows for llama.cpp's NORM (interleaved) rotary.
        g.add_tensor(b + "attn_q.weight",
                     np.ascontiguousarray(permute(t[p + "self_attn.q_proj.weight"], H)))
        g.add_tensor(b + "attn_k.weight",
                     np.ascontiguousarray(permute(t[p + "self_attn.k_proj.weight"], KV)))
        g.add_tensor(b + "attn_v.weight", t[p + "self_attn.v_proj.weight"])
        g.add_tensor(b + "attn_output.weight", t[p + "self_attn.o_proj.weight"])
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "block_sparse_moe."
        g.add_tensor(b + "ffn_gate_inp.weight", t[m + "router.layer.weight"])
        # GraniteMoeModel.modify_tensors: input_linear [E, 2F, H] split along dim -2, the first
        # F rows ffn_gate_exps, the last F ffn_up_exps.
        w = t[m + "input_linear.weight"]
        assert w.shape == (X, 2 * F, E)
        g.add_tensor(b + "ffn_gate_exps.weight", np.ascontiguousarray(w[:, :F]))
        g.add_tensor(b + "ffn_up_exps.weight", np.ascontiguousarray(w[:, F:]))
        g.add_tensor(b + "ffn_down_exps.weight", t[m + "output_linear.weight"])
    finish(g)


def write_glm4moe(out, cfg, t):
    """llama.cpp's `glm4moe` as convert_hf_to_gguf.py's Glm4MoeModel writes it (MTP exported, the
    converter's default)."""
    import gguf
    L, X, E = cfg["num_hidden_layers"], cfg["n_routed_experts"], cfg["hidden_size"]
    D, nextn = cfg["head_dim"], cfg["num_nextn_predict_layers"]
    g = text_model_writer(out, dict(cfg, num_hidden_layers=L + nextn))  # block_count counts MTP
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    # TextModel: expert counts and groups, head_dim as key / value length.
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_expert_group_count(cfg["n_group"])
    g.add_expert_group_used_count(cfg["topk_group"])
    g.add_key_length(D)
    g.add_value_length(D)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    # Glm4MoeModel.set_gguf_parameters
    g.add_rope_dimension_count(int(D * cfg["partial_rotary_factor"]))
    g.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    g.add_expert_shared_count(cfg["n_shared_experts"])
    g.add_leading_dense_block_count(cfg["first_k_dense_replace"])
    g.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    g.add_expert_weights_scale(cfg["routed_scaling_factor"])
    g.add_expert_weights_norm(cfg["norm_topk_prob"])
    g.add_nextn_predict_layers(nextn)
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    eos = cfg["eos_token_id"]
    add_vocab(g, dict(cfg, eos_token_id=eos[0]), tokens, types, merges, pad=True)
    g.add_eot_token_id(eos[1])

    add_embeddings(g, t)
    for i in range(L + nextn):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        if i >= L:  # the MTP layer (a decoder layer and these): llama.cpp's decoding skips it
            g.add_tensor(b + "nextn.eh_proj.weight", t[p + "eh_proj.weight"])
            g.add_tensor(b + "nextn.enorm.weight", t[p + "enorm.weight"])
            g.add_tensor(b + "nextn.hnorm.weight", t[p + "hnorm.weight"])
            g.add_tensor(b + "nextn.shared_head_norm.weight", t[p + "shared_head.norm.weight"])
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        add_attention(g, t, p, b, bias=True, qk_norm=cfg["use_qk_norm"])  # rows as stored (NEOX)
        # glm4moe's pre-MLP norm is ATTN_POST_NORM (post_attention_norm), not ffn_norm.
        g.add_tensor(b + "post_attention_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "mlp."
        if i < cfg["first_k_dense_replace"]:
            add_dense_mlp(g, t, b, m)
        else:
            add_sparse_layer(g, t, b, m, X, "gate.e_score_correction_bias")
    finish(g)


def write_minimax_m2(out, cfg, t):
    """llama.cpp's `minimax-m2` as convert_hf_to_gguf.py's MiniMaxM2Model writes it."""
    import gguf
    L, X, D = cfg["num_hidden_layers"], cfg["num_local_experts"], cfg["head_dim"]
    # llama.cpp's minimax-m2 always renormalizes the top-k weights, has no scaling and no
    # shared expert, and needs the whole-projection q/k norms and the correction bias.
    assert cfg["scoring_func"] == "sigmoid" and cfg["use_routing_bias"]
    assert cfg["qk_norm_type"] == "per_layer" and cfg["shared_intermediate_size"] == 0
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    # TextModel: expert counts, the gating function from scoring_func, head_dim as key / value
    # length.
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    g.add_key_length(D)
    g.add_value_length(D)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    # MiniMaxM2Model.set_gguf_parameters
    g.add_expert_feed_forward_length(cfg["intermediate_size"])
    g.add_rope_dimension_count(cfg["rotary_dim"])
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges)

    add_embeddings(g, t)
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        # q/k norms [H * D] and [KV * D]: one RMSNorm over each whole projection.
        add_attention(g, t, p, b, qk_norm=True)
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "block_sparse_moe."
        g.add_tensor(b + "ffn_gate_inp.weight", t[m + "gate.weight"])
        g.add_tensor(b + "exp_probs_b.bias", t[m + "e_score_correction_bias"])
        add_experts(g, t, b, m, X, MIXTRAL)
    finish(g)


def write_ernie4_5(out, cfg, t):
    """llama.cpp's `ernie4_5` / `ernie4_5-moe` as convert_hf_to_gguf.py's Ernie4_5Model /
    Ernie4_5MoeModel write them."""
    import gguf
    L, D, moe = cfg["num_hidden_layers"], cfg["head_dim"], cfg["model_type"] == "ernie4_5_moe"
    assert not cfg["use_bias"] and cfg["tie_word_embeddings"] and "lm_head.weight" not in t
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_key_length(D)  # TextModel: head_dim as key / value length
    g.add_value_length(D)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    if moe:  # Ernie4_5MoeModel.set_gguf_parameters
        X = cfg["moe_num_experts"]
        # llama.cpp has no end index and no renormalization key (it always renormalizes).
        assert cfg["moe_layer_end_index"] in (-1, L - 1)
        g.add_expert_count(X)
        g.add_expert_used_count(cfg["moe_k"])
        g.add_interleave_moe_layer_step(cfg["moe_layer_interval"])
        g.add_leading_dense_block_count(cfg["moe_layer_start_index"])
        g.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        g.add_expert_shared_count(cfg["moe_num_shared_experts"])
        # The converter's shared width: intermediate_size / num_key_value_heads (the hub's
        # 12288 / 4 = 2 x 1536; the tiny model's 128 / 2 = 2 x 32).
        shared = cfg["intermediate_size"] // cfg["num_key_value_heads"]
        assert shared == cfg["moe_num_shared_experts"] * cfg["moe_intermediate_size"]
        g.add_expert_shared_feed_forward_length(shared)
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges, pad=True)

    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])  # tied: no output.weight
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        add_attention(g, t, p, b)
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "mlp."
        if not moe or i < cfg["moe_layer_start_index"]:
            add_dense_mlp(g, t, b, m)
        else:  # the bias [1, experts] as the checkpoint keeps it (GGUF ne {experts, 1})
            add_sparse_layer(g, t, b, m, X, "moe_statics.e_score_correction_bias")
    finish(g)


def write_seed_oss(out, cfg, t):
    """llama.cpp's `seed_oss` as convert_hf_to_gguf.py's SeedOssModel (TextModel) writes it."""
    import gguf
    L, D = cfg["num_hidden_layers"], cfg["head_dim"]
    assert cfg["attention_bias"] and not cfg["attention_out_bias"] and not cfg["mlp_bias"]
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_key_length(D)
    g.add_value_length(D)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges, pad=True)

    add_embeddings(g, t)
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        add_attention(g, t, p, b, bias=True)  # rows as stored (NEOX)
        # seed_oss's pre-MLP norm is ATTN_POST_NORM (post_attention_norm), not ffn_norm.
        g.add_tensor(b + "post_attention_norm.weight", t[p + "post_attention_layernorm.weight"])
        add_dense_mlp(g, t, b, p + "mlp.")
    finish(g)


def write_hunyuan_dense(out, cfg, t):
    """llama.cpp's `hunyuan-dense` as convert_hf_to_gguf.py's HunYuanModel (TextModel) writes it:
    the "dynamic" rope_scaling's alpha folded into the base (rope_theta * alpha^(D / (D - 2)),
    rope scaling NONE, factor 1, original context and context 256 Ki), q/k rows as stored
    (NEOX), the per-head norms as attn_q_norm / attn_k_norm, tied (no output.weight)."""
    import gguf
    L, D = cfg["num_hidden_layers"], cfg["head_dim"]
    assert not cfg["attention_bias"] and not cfg["mlp_bias"] and cfg["tie_word_embeddings"]
    g = text_model_writer(out, cfg)
    rs = cfg["rope_scaling"]
    g.add_rope_freq_base(cfg["rope_theta"] * rs["alpha"] ** (D / (D - 2)))
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_key_length(D)
    g.add_value_length(D)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    g.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    g.add_rope_scaling_factor(1)
    g.add_rope_scaling_orig_ctx_len(256 * 1024)
    g.add_context_length(256 * 1024)
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    add_vocab(g, cfg, tokens, types, merges, pad=True)
    add_embeddings(g, t, tied=True)
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        for x in "qkv":
            g.add_tensor(f"{b}attn_{x}.weight", t[f"{p}self_attn.{x}_proj.weight"])
        g.add_tensor(b + "attn_output.weight", t[p + "self_attn.o_proj.weight"])
        g.add_tensor(b + "attn_q_norm.weight", t[p + "self_attn.query_layernorm.weight"])
        g.add_tensor(b + "attn_k_norm.weight", t[p + "self_attn.key_layernorm.weight"])
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        add_dense_mlp(g, t, b, p + "mlp.")
    finish(g)


def write_stablelm(out, cfg, t):
    """llama.cpp's `stablelm` as convert_hf_to_gguf.py's StableLMModel writes it: its own keys
    (no rope base: llama.cpp's 10000; rope.dimension_count the rotary quarter of the head;
    use_parallel_residual; attention.layer_norm_epsilon), LayerNorm weights and biases, q/k/v
    rows as stored (NEOX) with their biases, untied."""
    import gguf
    L, E, H = cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"]
    assert cfg["rope_theta"] == 10000 and cfg["use_qkv_bias"] and not cfg["qk_layernorm"]
    g = gguf.GGUFWriter(out, ARCH[cfg["model_type"]])
    g.add_name("tiny-" + cfg["model_type"])
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(E)
    g.add_block_count(L)
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_rope_dimension_count(int(cfg["partial_rotary_factor"] * (E // H)))
    g.add_head_count(H)
    g.add_head_count_kv(cfg["num_key_value_heads"])
    g.add_parallel_residual(cfg["use_parallel_residual"])
    g.add_layer_norm_eps(cfg["layer_norm_eps"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocab(cfg["vocab_size"])
    add_vocab(g, cfg, tokens, types, merges)
    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])
    g.add_tensor("output_norm.bias", t["model.norm.bias"])
    g.add_tensor("output.weight", t["lm_head.weight"])
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        for hf_n, gg in (("input_layernorm", "attn_norm"), ("post_attention_layernorm", "ffn_norm")):
            g.add_tensor(f"{b}{gg}.weight", t[f"{p}{hf_n}.weight"])
            g.add_tensor(f"{b}{gg}.bias", t[f"{p}{hf_n}.bias"])
        add_attention(g, t, p, b, bias=True)
        add_dense_mlp(g, t, b, p + "mlp.")
    finish(g)


def add_biased(g, t, gg, hf):
    """A projection and its bias: `gg`.weight / `gg`.bias from `hf`.weight / `hf`.bias."""
    g.add_tensor(gg + ".weight", t[hf + ".weight"])
    g.add_tensor(gg + ".bias", t[hf + ".bias"])


def write_phi2(out, cfg, t):
    """llama.cpp's `phi2` as convert_hf_to_gguf.py's Phi2Model writes it (rope.dimension_count the
    rotated 0.4 of each head, layer_norm_epsilon, no bos added), with q, k and v fused into
    attn_qkv (rows q | k | v, and the bias) as the GGUFs converted from the original Phi-2
    checkpoint (Wqkv) carry them; LayerNorms, projections and lm_head with biases, untied."""
    import gguf
    L, E, H = cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"]
    assert cfg["rope_theta"] == 10000 and not cfg["qk_layernorm"]
    g = gguf.GGUFWriter(out, ARCH[cfg["model_type"]])
    g.add_name("tiny-" + cfg["model_type"])
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(E)
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_block_count(L)
    g.add_head_count(H)
    g.add_head_count_kv(cfg["num_key_value_heads"])
    g.add_layer_norm_eps(cfg["layer_norm_eps"])
    g.add_rope_dimension_count(int(cfg["partial_rotary_factor"] * E) // H)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocab(cfg["vocab_size"])
    add_vocab(g, cfg, tokens, types, merges)
    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    add_biased(g, t, "output_norm", "model.final_layernorm")
    add_biased(g, t, "output", "lm_head")
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        add_biased(g, t, b + "attn_norm", p + "input_layernorm")
        for kind in ("weight", "bias"):
            g.add_tensor(f"{b}attn_qkv.{kind}", np.concatenate(
                [t[f"{p}self_attn.{x}_proj.{kind}"] for x in "qkv"], axis=0))
        add_biased(g, t, b + "attn_output", p + "self_attn.dense")
        add_biased(g, t, b + "ffn_up", p + "mlp.fc1")
        add_biased(g, t, b + "ffn_down", p + "mlp.fc2")
    finish(g)


def write_starcoder2(out, cfg, t):
    """llama.cpp's `starcoder2` as convert_hf_to_gguf.py's StarCoder2Model (TextModel) writes it:
    the shared keys, rope.freq_base, layer_norm_epsilon (norm_epsilon); LayerNorms and every
    projection with biases, q/k rows as stored (NEOX); tied: no output tensor. No sliding-window
    key (llama.cpp's starcoder2 attends to the whole context)."""
    import gguf
    L = cfg["num_hidden_layers"]
    assert cfg["use_bias"] and cfg["tie_word_embeddings"]
    g = text_model_writer(out, cfg)
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_eps(cfg["norm_epsilon"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocab(cfg["vocab_size"])
    add_vocab(g, cfg, tokens, types, merges)
    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    add_biased(g, t, "output_norm", "model.norm")
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        add_biased(g, t, b + "attn_norm", p + "input_layernorm")
        for x in "qkv":
            add_biased(g, t, f"{b}attn_{x}", f"{p}self_attn.{x}_proj")
        add_biased(g, t, b + "attn_output", p + "self_attn.o_proj")
        add_biased(g, t, b + "ffn_norm", p + "post_attention_layernorm")
        add_biased(g, t, b + "ffn_up", p + "mlp.c_fc")
        add_biased(g, t, b + "ffn_down", p + "mlp.c_proj")
    finish(g)


def write_deepseek2(out, cfg, t, mqa=True):
    """llama.cpp's `deepseek2` as convert_hf_to_gguf.py's DeepseekV2Model / DeepseekV3Model write
    it: by default the current MQA form (head_count_kv 1, key_length kv_lora_rank + rope,
    value_length kv_lora_rank, the heads' sizes in key_length_mla / value_length_mla, kv_b split
    per head into attn_k_b, transposed, and attn_v_b); with mqa=False the form converters wrote
    before llama.cpp's MLA (key_length / value_length the expanded heads', head_count_kv the
    heads, kv_b as attn_kv_b), which scripts/test.sh writes as deepseek_v2.kv_b.gguf (llama.cpp
    0.3.36 runs that form with rope_set_offset and leaves transformers' logits by up to 0.9 on
    the tiny model, so it is gated against this engine's MQA-form reading instead). Both: the
    q latent's tensors when there is one, the dense lead,
    the router with its gating function, scale, norm flag and groups, stacked experts, shared
    experts, YaRN's keys with yarn_log_multiplier 0.1 mscale_all_dim; rows as stored (rope NORM
    on the checkpoint's adjacent pairs)."""
    import gguf
    L, X, E, H = (cfg["num_hidden_layers"], cfg["n_routed_experts"], cfg["hidden_size"],
                  cfg["num_attention_heads"])
    NP, R, VD = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    KL, QL = cfg["kv_lora_rank"], cfg["q_lora_rank"]
    g = text_model_writer(out, dict(cfg, num_key_value_heads=1 if mqa else H))
    g.add_rope_freq_base(cfg["rope_theta"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_expert_count(X)
    g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_expert_group_count(cfg["n_group"])
    g.add_expert_group_used_count(cfg["topk_group"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    g.add_vocab_size(cfg["vocab_size"])
    if QL:
        g.add_q_lora_rank(QL)
    g.add_kv_lora_rank(KL)
    if mqa:
        g.add_key_length(KL + R)
        g.add_value_length(KL)
        g.add_key_length_mla(NP + R)
        g.add_value_length_mla(VD)
    else:
        g.add_key_length(NP + R)
        g.add_value_length(VD)
    g.add_leading_dense_block_count(cfg["first_k_dense_replace"])
    g.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    g.add_expert_shared_count(cfg["n_shared_experts"])
    g.add_expert_weights_scale(cfg["routed_scaling_factor"])
    g.add_expert_weights_norm(cfg["norm_topk_prob"])
    g.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID if cfg["scoring_func"] == "sigmoid"
                             else gguf.ExpertGatingFuncType.SOFTMAX)
    g.add_rope_dimension_count(R)
    rs = cfg["rope_scaling"]
    if rs:
        g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        g.add_rope_scaling_factor(rs["factor"])
        g.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
        g.add_rope_scaling_yarn_log_mul(0.1 * rs["mscale_all_dim"])
    tokens, types, merges = vocab(cfg["vocab_size"])
    add_vocab(g, cfg, tokens, types, merges)
    add_embeddings(g, t)
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        a = p + "self_attn."
        g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        if QL:
            g.add_tensor(b + "attn_q_a.weight", t[a + "q_a_proj.weight"])
            g.add_tensor(b + "attn_q_a_norm.weight", t[a + "q_a_layernorm.weight"])
            g.add_tensor(b + "attn_q_b.weight", t[a + "q_b_proj.weight"])
        else:
            g.add_tensor(b + "attn_q.weight", t[a + "q_proj.weight"])
        g.add_tensor(b + "attn_kv_a_mqa.weight", t[a + "kv_a_proj_with_mqa.weight"])
        g.add_tensor(b + "attn_kv_a_norm.weight", t[a + "kv_a_layernorm.weight"])
        kv_b = t[a + "kv_b_proj.weight"]
        if mqa:
            kv = kv_b.reshape(H, NP + VD, KL)
            g.add_tensor(b + "attn_k_b.weight", np.ascontiguousarray(kv[:, :NP, :].transpose(0, 2, 1)))
            g.add_tensor(b + "attn_v_b.weight", np.ascontiguousarray(kv[:, NP:, :]))
        else:
            g.add_tensor(b + "attn_kv_b.weight", kv_b)
        g.add_tensor(b + "attn_output.weight", t[a + "o_proj.weight"])
        g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        m = p + "mlp."
        if i < cfg["first_k_dense_replace"]:
            add_dense_mlp(g, t, b, m)
            continue
        g.add_tensor(b + "ffn_gate_inp.weight", t[m + "gate.weight"])
        if m + "gate.e_score_correction_bias" in t:
            g.add_tensor(b + "exp_probs_b.bias", t[m + "gate.e_score_correction_bias"])
        add_experts(g, t, b, m, X)
        add_shared_expert(g, t, b, m + "shared_experts.")
    finish(g)


def write_deepseek2_file(hf, out, mqa=True):
    """write_deepseek2 from a tiny DeepSeek folder (scripts/test.sh's attn_kv_b form)."""
    write_deepseek2(out, json.load(open(os.path.join(hf, "config.json"))),
                    read_safetensors(os.path.join(hf, "model.safetensors")), mqa)


# The model types with a writer of their own (llama.cpp lays them out its own way); the rest
# are Llama's layout with per-type keys, written by write_gguf.
WRITERS = {"gpt_oss": write_gpt_oss, "qwen2_moe": write_qwen2moe, "olmoe": write_olmoe,
           "granitemoe": write_granitemoe, "glm4_moe": write_glm4moe,
           "minimax_m2": write_minimax_m2, "ernie4_5": write_ernie4_5,
           "ernie4_5_moe": write_ernie4_5, "seed_oss": write_seed_oss,
           "hunyuan_v1_dense": write_hunyuan_dense, "stablelm": write_stablelm,
           "phi": write_phi2, "starcoder2": write_starcoder2, "deepseek_v2": write_deepseek2,
           "deepseek_v3": write_deepseek2}


def write_gguf(hf, out):
    import gguf
    cfg = json.load(open(os.path.join(hf, "config.json")))
    t = read_safetensors(os.path.join(hf, "model.safetensors"))
    writer = WRITERS.get(cfg["model_type"])
    if writer:
        return writer(out, cfg, t)
    if cfg["model_type"] == "ministral3":  # rope_theta inside rope_parameters
        cfg = dict(cfg, rope_theta=cfg["rope_parameters"]["rope_theta"])
    L, E = cfg["num_hidden_layers"], cfg["hidden_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    X = cfg.get("num_local_experts", 0)
    olmo2 = cfg["model_type"] in ("olmo2", "exaone4")  # norms on the blocks' outputs
    # q/k rows as stored (llama.cpp's NEOX / M-RoPE)
    neox = cfg["model_type"] in ("qwen2_5_vl", "olmo2", "glm4", "cohere", "cohere2", "exaone4")
    cohere = cfg["model_type"] in ("cohere", "cohere2")
    glm4 = cfg["model_type"] == "glm4"
    rot = (lambda w, n: w) if neox else permute
    D = cfg.get("head_dim", E // H)
    g = gguf.GGUFWriter(out, ARCH[cfg["model_type"]])
    g.add_name("tiny-" + cfg["model_type"])
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(E)
    g.add_block_count(L)
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_head_count(H)
    g.add_head_count_kv(KV)
    g.add_key_length(D)
    g.add_value_length(D)
    if cohere:
        g.add_layer_norm_eps(cfg["layer_norm_eps"])
        g.add_logit_scale(cfg["logit_scale"])
        if cfg["model_type"] == "cohere2":
            g.add_sliding_window(cfg["sliding_window"])
    else:
        g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_rope_dimension_count(int(D * cfg.get("partial_rotary_factor", 0.5 if glm4 else 1.0)))
    if cfg["model_type"] == "qwen2_5_vl":  # time / height / width / extra sections of mrope
        g.add_rope_dimension_sections(cfg["rope_scaling"]["mrope_section"] + [0])
    g.add_rope_freq_base(cfg["rope_theta"])
    if cfg["model_type"] == "ministral3":
        # convert_hf_to_gguf.py's Ministral3Model: YaRN's keys, yarn_log_multiplier the
        # mscale_all_dim itself, Llama 4's attention temperature.
        rp = cfg["rope_parameters"]
        g.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        g.add_rope_scaling_factor(rp["factor"])
        g.add_rope_scaling_orig_ctx_len(rp["original_max_position_embeddings"])
        g.add_rope_scaling_yarn_beta_fast(rp["beta_fast"])
        g.add_rope_scaling_yarn_beta_slow(rp["beta_slow"])
        g.add_rope_scaling_yarn_log_mul(rp["mscale_all_dim"])
        g.add_attn_temperature_scale(rp["llama_4_scaling_beta"])
    if cfg["model_type"] == "granite":
        g.add_embedding_scale(cfg["embedding_multiplier"])
        g.add_attention_scale(cfg["attention_multiplier"])
        g.add_residual_scale(cfg["residual_multiplier"])
        g.add_logit_scale(cfg["logits_scaling"])
    if X:
        g.add_expert_count(X)
        g.add_expert_used_count(cfg["num_experts_per_tok"])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, types, merges = vocab(cfg["vocab_size"])
    tokens[:3] = ["<unk>", "<s>", "</s>"]
    if isinstance(cfg["eos_token_id"], list):  # GLM-4: <|endoftext|> and <|user|>
        eos = cfg["eos_token_id"]
        add_vocab(g, dict(cfg, eos_token_id=eos[0]), tokens, types, merges)
        g.add_eot_token_id(eos[1])
    else:
        add_vocab(g, cfg, tokens, types, merges)

    g.add_tensor("token_embd.weight", t["model.embed_tokens.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])
    if not cfg["tie_word_embeddings"]:
        g.add_tensor("output.weight", t["lm_head.weight"])
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        m = p + "block_sparse_moe."
        if olmo2:  # norms on the blocks' outputs, q/k norms over the whole projection
            for gg, hf_name in (("post_attention_norm", "post_attention_layernorm"),
                                ("post_ffw_norm", "post_feedforward_layernorm"),
                                ("attn_q_norm", "self_attn.q_norm"),
                                ("attn_k_norm", "self_attn.k_norm")):
                g.add_tensor(b + gg + ".weight", t[p + hf_name + ".weight"])
        else:
            g.add_tensor(b + "attn_norm.weight", t[p + "input_layernorm.weight"])
        if glm4:
            g.add_tensor(b + "post_attention_norm.weight", t[p + "post_self_attn_layernorm.weight"])
            g.add_tensor(b + "post_ffw_norm.weight", t[p + "post_mlp_layernorm.weight"])
            g.add_tensor(b + "ffn_up.weight", t[p + "mlp.gate_up_proj.weight"])
        g.add_tensor(b + "attn_q.weight",
                     np.ascontiguousarray(rot(t[p + "self_attn.q_proj.weight"], H)))
        g.add_tensor(b + "attn_k.weight",
                     np.ascontiguousarray(rot(t[p + "self_attn.k_proj.weight"], KV)))
        g.add_tensor(b + "attn_v.weight", t[p + "self_attn.v_proj.weight"])
        for x in "qkv":
            if p + f"self_attn.{x}_proj.bias" in t:
                g.add_tensor(b + f"attn_{x}.bias", t[p + f"self_attn.{x}_proj.bias"])
        g.add_tensor(b + "attn_output.weight", t[p + "self_attn.o_proj.weight"])
        if not olmo2 and not cohere:
            g.add_tensor(b + "ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        if glm4:
            g.add_tensor(b + "ffn_down.weight", t[p + "mlp.down_proj.weight"])
            continue
        if not X:  # arcee: no gate (its MLP is ungated)
            add_dense_mlp(g, t, b, p + "mlp.",
                          ("up", "down") if cfg["model_type"] == "arcee" else ("gate", "up", "down"))
            continue
        g.add_tensor(b + "ffn_gate_inp.weight", t[m + "gate.weight"])
        add_experts(g, t, b, m, X, MIXTRAL)
    finish(g)


if __name__ == "__main__":
    twin_main(__doc__, write_gguf, name_of, "make_llama_gguf.py",
              "a tiny mixtral, smollm3, granite, qwen2_5_vl, olmo2, glm4, cohere, cohere2, exaone4, "
              "gpt_oss, qwen2_moe, olmoe, granitemoe, glm4_moe, minimax_m2, ernie4_5, ernie4_5_moe, seed_oss or "
              "arcee folder "
              "(make_tiny_models.py)")
