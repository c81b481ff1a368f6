#!/usr/bin/env python3
"""Write tiny random checkpoints in real Hugging Face layout (config.json + safetensors).

Owns the test models that the C++ loader and the transformers goldens
(tests/golden/hf/) share. Pure numpy: CI runs this without torch, and the golden
files record the sha256 of each weight file, so the output must be byte-identical
on every run and machine.

Why the random numbers are built the way they are: numpy's normal generators use
libm log/exp in their slow paths and SIMD transcendental kernels that may round
differently across CPUs. Here every value is a sum of four uniform doubles (exact
bit recipe of PCG64 `random()`), then scaled and rounded with IEEE add/mul/convert
only, so the bytes cannot depend on the machine. The sum of four uniforms
(Irwin-Hall) is close enough to a normal for test weights.

  python3 tools/make_tiny_models.py --out ~/.cache/vllm-cpp/tiny-models

Models (each a folder under --out): qwen3 (BF16, tied), qwen3_moe (F32, 2 shards,
layer 1 dense), llama (F16, llama3 rope scaling, tied, no tokenizer), qwen2 (F32,
q/k/v bias), mistral (F32, sliding window 16, no tokenizer), gemma3 (F32, Gemma 3's block,
no tokenizer; gemma3_mm: the same as a Gemma3ForConditionalGeneration), gemma2 (F32, Gemma 2's
block with soft-capping, no tokenizer), gemma (F32, Gemma 2B's layout small: multi-query,
tied, the legacy hidden_act "gelu", no tokenizer), hunyuan_dense (F32, Hunyuan dense: q/k norms
after RoPE, the NTK-alpha "dynamic" rope_scaling, tied, no tokenizer), olmo3 (F32, OLMo 2's
block with three sliding layers of four and YaRN on the full one, no tokenizer), stablelm (F32,
LayerNorms with biases, q/k/v biases, rotary on a quarter of each head, no tokenizer), phi
(F32, Phi-2's block: LayerNorm, parallel block, biases everywhere incl. lm_head, gelu_new),
starcoder2 (F32, StarCoder2's LayerNorms, biases and ungated GELU MLP, sliding window 8, tied),
deepseek_v2 / deepseek_v3 (F32, multi-head latent attention without / with a q latent, YaRN with
DeepSeek's mscale on v2, softmax / sigmoid-grouped MoE with shared experts), glm4_moe_lite (F32,
GLM-4.7-Flash's config: deepseek_v3's block with mlp_layer_types), ministral3 (F32, the Mistral
block with YaRN and Llama 4's attention temperature), phi3 (F32, fused qkv_proj / gate_up_proj, sliding
window 12, no tokenizer), mixtral (F32, 8 experts top-2 in every layer as block_sparse_moe w1/w2/w3,
no tokenizer); mistral3, qwen2_5_vl, qwen3_vl (F32 multimodal checkpoints in their hub layouts,
served as their text models: Mistral Small 3.1's, Qwen2.5-VL's top-level fields with
"mrope", Qwen3-VL's text_config with q/k norms; no tokenizer), smollm3 (F32, four layers, the
fourth without rotary embedding, tied, no tokenizer), granite (F32, Granite's four multipliers,
untied, no tokenizer), olmo2 (F32, output norms and whole-projection q/k norms, no tokenizer),
phi3_5 (F32, phi3 with Phi-3.5's longrope, no tokenizer), qwen2_yarn (F32, qwen2 with
YaRN rope scaling, no tokenizer), phi4_mini (F32, phi3 with Phi-4-mini's partial rotary factor
0.75, longrope and tied embeddings, no tokenizer), glm4 (F32, GLM-4's four norms per layer,
q/k/v bias, fused gate_up_proj, interleaved rotary on half of each head, no tokenizer),
cohere (F32, Command-R's LayerNorm and parallel block, logit_scale, tied, no tokenizer),
cohere2 (F32, cohere with Command R7B's sliding layers and rotary-free global layer),
exaone4 (F32, EXAONE 4.0's output norms, per-head q/k norms, hybrid sliding / global layers),
gpt_oss (BF16 with the experts as U8 MXFP4 blocks / scales, gpt-oss-20b's config.json and tensor
names: sinks, biased router and experts, clamped SwiGLU, YaRN, sliding / full layers; no
tokenizer) and gpt_oss_plain (the same weights, the experts dequantized to BF16 as an
unquantized gpt-oss checkpoint stores them), qwen2_moe (BF16, Qwen1.5-MoE-A2.7B's config.json
and tensor names: 4 experts top 2 without renormalization, a shared expert behind a sigmoid
gate in every sparse layer, q/k/v bias, layer 1 dense; no tokenizer), olmoe (BF16,
OLMoE-1B-7B-0924's config.json and tensor names: 4 experts top 2 without renormalization in
every layer, q/k norms over the whole projection; no tokenizer), granitemoe (BF16,
granite-3.1-1b-a400m's config.json and tensor names: Granite's four multipliers, 4 experts top 2
(softmax over the top-2 router logits) as block_sparse_moe router.layer / input_linear (gate
rows, then up rows) / output_linear in every layer, tied; no tokenizer), glm4_moe (BF16, GLM-4.5's
config.json and tensor names: layer 0 dense, then 8 experts in 2 groups (one kept) top 2 with
the sigmoid router, its correction bias, renormalization and routed_scaling_factor, a shared
expert, q/k norms, q/k/v bias, half-head rotary, an unread MTP layer; no tokenizer), minimax_m2
(BF16, MiniMax-M2's config.json and tensor names: 8 experts top 2 behind the sigmoid router with
its correction bias as block_sparse_moe gate / e_score_correction_bias / experts' w1 w3 w2,
whole-projection q/k norms, rotary_dim 16 of 32; no tokenizer), qwen3_fp8 (qwen3's weights as an
FP8 checkpoint: quantization_config fp8, the projections as F8_E4M3 codes with F32
weight_scale_inv per 32 x 32 block; the Qwen3 tokenizer), ernie4_5 (BF16, ERNIE-4.5-0.3B's
config.json: adjacent-pair rotary, tied; no tokenizer) and ernie4_5_moe (BF16, ERNIE-4.5-21B-A3B's:
layer 0 dense, then 8 experts top 2 behind the softmax router with its correction bias
(moe_statics), 2 shared experts; no tokenizer), seed_oss (BF16, Seed-OSS-36B's config.json: q/k/v
bias; no tokenizer), arcee (BF16, AFM-4.5B's config.json: the ungated relu2 MLP; no tokenizer).
See MODELS below for the exact shapes.
"""
import argparse
import hashlib
import json
import os
import shutil
import struct
import sys

import numpy as np

QWEN_VOCAB = 151936
QWEN_BOS, QWEN_EOS = 151643, 151645

# Standard deviations chosen so a 64-wide random model still produces logits with
# clear top-2 gaps (a greedy golden full of near-ties tests nothing).
STD_PROJ = 0.2
STD_EMBED = 0.4
STD_NORM_NOISE = 0.1
STD_BIAS = 0.1
# Output projections (o_proj, down_proj) write into the residual stream. With tied
# embeddings the input token's own embedding dominates the final hidden state unless
# the layers add more than it, and greedy decoding then repeats the last token forever.
STD_OUT = 0.5


def _seed(model, name):
    return int.from_bytes(hashlib.sha256(f"{model}/{name}".encode()).digest()[:8], "little")


def normalish(model, name, shape, std):
    """Deterministic ~N(0, std^2) float32 array, seeded by (model, tensor name)."""
    rng = np.random.default_rng(_seed(model, name))
    acc = np.zeros(shape, np.float64)
    for _ in range(4):
        acc += rng.random(shape)  # exact: 53 random bits times 2^-53
    # Sum of 4 U(0,1): mean 2, variance 4/12 = 1/3.
    acc -= 2.0
    acc *= std * 3.0**0.5
    return acc.astype(np.float32)


def to_bf16_bytes(a):
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    # Round to nearest even; inputs are finite by construction.
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16).tobytes()


ELEMENT_BYTES = {"F32": 4, "F16": 2, "BF16": 2}


def encode(a, dtype):
    if a.dtype == np.uint8:  # packed codes / exponents (MXFP4 blocks and scales), FP8 codes
        return np.ascontiguousarray(a).tobytes()
    if dtype == "BF16":
        return to_bf16_bytes(a)
    if dtype == "F16":
        return np.ascontiguousarray(a, np.float32).astype("<f2").tobytes()
    if dtype == "F32":
        return np.ascontiguousarray(a, "<f4").tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, float32 array), or uint8 arrays stored as U8 whatever dtype says,
    or (name, array, stored dtype) for a tensor stored in its own type (an FP8 checkpoint's
    F8_E4M3 codes as uint8 and its F32 scales). Header keys sorted, data in that order."""
    tensors = sorted(tensors, key=lambda t: t[0])
    header, blobs, off = {}, [], 0
    for name, arr, *own in tensors:
        d = own[0] if own else ("U8" if arr.dtype == np.uint8 else dtype)
        b = encode(arr, "F32" if d == "F32" else dtype)
        header[name] = {"dtype": d, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # spec: header may be space-padded; keeps data 8-aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return off


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")


# ---------------------------------------------------------------- tensor lists


def norm_w(model, name, n):
    return 1.0 + normalish(model, name, (n,), STD_NORM_NOISE)


def attention(model, p, E, H, KV, D, qk_norm, qkv_bias, norm=None):
    norm = norm or norm_w
    t = []
    for proj, rows in (("q_proj", H * D), ("k_proj", KV * D), ("v_proj", KV * D)):
        n = f"{p}self_attn.{proj}.weight"
        t.append((n, normalish(model, n, (rows, E), STD_PROJ)))
        if qkv_bias:
            n = f"{p}self_attn.{proj}.bias"
            t.append((n, normalish(model, n, (rows,), STD_BIAS)))
    n = f"{p}self_attn.o_proj.weight"
    t.append((n, normalish(model, n, (E, H * D), STD_OUT)))
    if qk_norm:
        for nm in ("q_norm", "k_norm"):
            n = f"{p}self_attn.{nm}.weight"
            t.append((n, norm(model, n, D)))
    return t


def dense_mlp(model, p, E, F):
    t = []
    for proj, shape in (("gate_proj", (F, E)), ("up_proj", (F, E)), ("down_proj", (E, F))):
        n = f"{p}{proj}.weight"
        t.append((n, normalish(model, n, shape, STD_OUT if proj == "down_proj" else STD_PROJ)))
    return t


def decoder(model, cfg, layer_mlp):
    E, V = cfg["hidden_size"], cfg["vocab_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = cfg.get("head_dim", E // H)
    gemma = cfg["model_type"] in ("gemma", "gemma2", "gemma3_text")
    qk_norm = cfg["model_type"] in ("qwen3", "qwen3_moe", "gemma3_text", "qwen3_vl_text",
                                    "hunyuan_v1_dense") or \
        (cfg["model_type"] == "glm4_moe" and cfg["use_qk_norm"])
    qkv_bias = cfg["model_type"] in ("qwen2", "qwen2_5_vl", "glm4", "qwen2_moe", "seed_oss") or \
        (cfg["model_type"] == "glm4_moe" and cfg["attention_bias"])  # qwen2_yarn: qwen2
    # OLMoE: RMSNorm over the whole q / k projection (H * D / KV * D wide) before the heads split.
    whole_qk_norm = cfg["model_type"] in ("olmoe", "minimax_m2")
    # Gemma stores RMSNorm weights as w - 1 (it computes x * (1 + w)).
    norm = (lambda m, n, k: norm_w(m, n, k) - np.float32(1.0)) if gemma else norm_w
    t = [("model.embed_tokens.weight", normalish(model, "model.embed_tokens.weight", (V, E), STD_EMBED))]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        norms = ["input_layernorm", "post_attention_layernorm"]
        if gemma and cfg["model_type"] != "gemma":
            norms += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
        for nm in norms:
            t.append((p + nm + ".weight", norm(model, p + nm + ".weight", E)))
        t += attention(model, p, E, H, KV, D, qk_norm, qkv_bias, norm)
        if whole_qk_norm:
            for nm, n in (("q_norm", H * D), ("k_norm", KV * D)):
                t.append((f"{p}self_attn.{nm}.weight", norm(model, f"{p}self_attn.{nm}.weight", n)))
        t += layer_mlp(i, p + "mlp.")
    t.append(("model.norm.weight", norm(model, "model.norm.weight", E)))
    if not cfg["tie_word_embeddings"]:
        t.append(("lm_head.weight", normalish(model, "lm_head.weight", (V, E), STD_EMBED)))
    return t


# ---------------------------------------------------------------- configs

COMMON = {
    "attention_dropout": 0.0,
    "hidden_act": "silu",
    "initializer_range": 0.02,
    "transformers_version": "4.51.0",
    "use_cache": True,
}


def qwen3_config():
    return dict(COMMON, **{
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
        "attention_bias": False, "bos_token_id": QWEN_BOS, "eos_token_id": QWEN_EOS,
        "head_dim": 32, "hidden_size": 64, "intermediate_size": 128,
        "max_position_embeddings": 40960, "max_window_layers": 2,
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 1000000.0,
        "sliding_window": None, "use_sliding_window": False,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": QWEN_VOCAB,
    })


def qwen3_moe_config():
    return dict(COMMON, **{
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
        "attention_bias": False, "bos_token_id": QWEN_BOS, "eos_token_id": QWEN_EOS,
        "decoder_sparse_step": 1, "head_dim": 32, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 40960, "max_window_layers": 3,
        "mlp_only_layers": [1], "moe_intermediate_size": 32, "norm_topk_prob": True,
        "num_attention_heads": 4, "num_experts": 8, "num_experts_per_tok": 2,
        "num_hidden_layers": 3, "num_key_value_heads": 2, "output_router_logits": False,
        "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.001, "sliding_window": None, "use_sliding_window": False,
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": QWEN_VOCAB,
    })


def llama_config():
    return dict(COMMON, **{
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "attention_bias": False, "mlp_bias": False, "bos_token_id": 1, "eos_token_id": 2,
        "head_dim": 16, "hidden_size": 64, "intermediate_size": 160,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "pretraining_tp": 1, "rms_norm_eps": 1e-5,
        "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 64, "rope_type": "llama3"},
        "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "float16",
        "vocab_size": 2048,
    })


def mistral_config():
    # A sliding window of 16 positions on every layer (Mistral 7B v0.1's 4096, shrunk so that
    # the golden prompts run far past it).
    return dict(COMMON, **{
        "architectures": ["MistralForCausalLM"], "model_type": "mistral",
        "bos_token_id": 1, "eos_token_id": 2,
        "head_dim": 16, "hidden_size": 64, "intermediate_size": 128,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "sliding_window": 16, "tie_word_embeddings": False, "torch_dtype": "float32",
        "vocab_size": 2048,
    })


def gemma3_config():
    # Gemma 3's text block, small: sliding window 8 on layer 0 (sliding_window_pattern 2: every
    # second layer full), its own rope base there (1e4) and rope_theta 1e6 with linear scaling
    # on the full layer, query_pre_attn_scalar 24 (not head_dim), hidden 80 (sqrt not exact).
    # Untied (Gemma 3 ties): a random tied model this small repeats one token.
    return {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": None,
        "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0,
        "final_logit_softcapping": None, "head_dim": 16, "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 80, "initializer_range": 0.02, "intermediate_size": 128,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-6,
        "rope_local_base_freq": 10000.0, "rope_scaling": {"factor": 4.0, "rope_type": "linear"},
        "rope_theta": 1000000.0, "sliding_window": 8, "sliding_window_pattern": 2,
        "tie_word_embeddings": False, "torch_dtype": "float32", "transformers_version": "4.51.0",
        "use_cache": True, "vocab_size": 2048,
    }


def gemma2_config():
    # Gemma 2's block, small: layer 0 sliding (window 8), layer 1 full, one rope base, attention
    # scores and logits soft-capped at 5 and 10 (Gemma 2 uses 50 and 30; smaller caps make the
    # tanh bend at these tiny scales), query_pre_attn_scalar 24, no q/k norms. Untied.
    return {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
        "attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": 5.0,
        "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0,
        "final_logit_softcapping": 10.0, "head_dim": 16, "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 80, "initializer_range": 0.02, "intermediate_size": 128,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0, "sliding_window": 8, "tie_word_embeddings": False,
        "torch_dtype": "float32", "transformers_version": "4.51.0", "use_cache": True,
        "vocab_size": 2048,
    }


def gemma_config():
    # Gemma (1)'s block, small: Gemma 2B's layout (multi-query attention, head_dim above
    # hidden / heads, tied) with the released config.json's legacy hidden_act "gelu" that both
    # transformers and vLLM read as the tanh GELU; no window, no soft-capping, two norms.
    return {
        "architectures": ["GemmaForCausalLM"], "model_type": "gemma",
        "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 2, "eos_token_id": 1,
        "pad_token_id": 0, "head_dim": 24, "hidden_act": "gelu", "hidden_activation": None,
        "hidden_size": 64, "initializer_range": 0.02, "intermediate_size": 128,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 1, "rms_norm_eps": 1e-6, "rope_scaling": None,
        "rope_theta": 10000.0, "tie_word_embeddings": True, "torch_dtype": "float32",
        "transformers_version": "4.51.0", "use_cache": True, "vocab_size": 2048,
    }


def hunyuan_dense_config():
    # Hunyuan-1.8B-Instruct's config.json small: per-head q/k norms after RoPE
    # (query_layernorm / key_layernorm), the "dynamic" rope_scaling with alpha 1000 that is a
    # fixed NTK stretch of the base, tied, eps 1e-5.
    return dict(COMMON, **{
        "architectures": ["HunYuanDenseV1ForCausalLM"], "model_type": "hunyuan_v1_dense",
        "attention_bias": False, "mlp_bias": False, "bos_token_id": 1, "eos_token_id": 2,
        "pad_token_id": 0, "eod_token_id": 3, "head_dim": 16, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 512, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-5,
        "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                         "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"},
        "rope_theta": 10000.0, "tie_word_embeddings": True, "torch_dtype": "float32",
        "use_qk_norm": True, "vocab_size": 2048,
    })


def hunyuan_dense_tensors(tensors):
    # Hugging Face's names for the per-head norms.
    return [(n.replace("self_attn.q_norm.", "self_attn.query_layernorm.")
             .replace("self_attn.k_norm.", "self_attn.key_layernorm."), a) for n, a in tensors]


def gemma_tensors(cfg, tensors):
    # Tied and times sqrt(hidden_size) on the way in: smaller embeddings keep each step's input
    # token from dominating its own logits (as the gemma2 twin's).
    return [(n, a * np.float32(0.25) if n == "model.embed_tokens.weight" else a)
            for n, a in tensors]


def phi3_config():
    # Phi-3's layout (fused qkv_proj and gate_up_proj), a sliding window of 12 on every layer
    # as Phi-3-mini-4k's 2047 (Hugging Face applies it; llama.cpp does not).
    return dict(COMMON, **{
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
        "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "embd_pdrop": 0.0,
        "resid_pdrop": 0.0, "hidden_size": 64, "intermediate_size": 128,
        "max_position_embeddings": 512, "original_max_position_embeddings": 512,
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": 10000.0,
        "sliding_window": 12, "tie_word_embeddings": False, "torch_dtype": "float32",
        "vocab_size": 2048,
    })


def phi3_5_config():
    # Phi-3.5-mini's longrope, small: max_position_embeddings 4096 over an original 512
    # (factor 8: attention_factor sqrt(1 + ln 8 / ln 512)), short and long factors per rotary
    # pair (head_dim 16: 8 each), sliding_window 4096 (wider than any prompt, as Phi-3.5's
    # 262144); the prompts stay within the original length, where the short factors apply.
    short = [1.0, 1.05, 1.1, 1.3, 1.6, 2.0, 2.5, 3.0]
    return dict(phi3_config(), **{
        "max_position_embeddings": 4096, "original_max_position_embeddings": 512,
        "sliding_window": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": short,
                         "long_factor": [f * 4 for f in short]},
    })


def phi4_mini_config():
    # Phi-4-mini's block, small: partial_rotary_factor 0.75 (head_dim 32: the first 24 dims
    # rotate, 8 pass through; Phi-4-mini's 128 / 96), longrope with one factor per rotated
    # pair (12), max 4096 over an original 512 (the prompts stay within it), tied embeddings,
    # sliding_window wider than any prompt (Phi-4-mini's 262144).
    short = [1.0, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5, 1.7, 2.0, 2.4, 2.8, 3.2]
    return dict(phi3_config(), **{
        "hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 4,
        "num_key_value_heads": 2, "partial_rotary_factor": 0.75,
        "max_position_embeddings": 4096, "original_max_position_embeddings": 512,
        "sliding_window": 4096, "tie_word_embeddings": True,
        "rope_scaling": {"type": "longrope", "short_factor": short,
                         "long_factor": [f * 4 for f in short]},
    })


def glm4_config():
    # GLM-4-0414's block, small: head_dim 32 given explicitly (Glm4Config's default is 128; the
    # q width 128 differs from hidden 64), partial_rotary_factor left out (transformers' 0.5:
    # 16 dims rotate in adjacent pairs), q/k/v bias, a list of EOS ids as GLM-4's.
    return dict(COMMON, **{
        "architectures": ["Glm4ForCausalLM"], "model_type": "glm4",
        "attention_bias": True, "bos_token_id": None, "eos_token_id": [2, 3],
        "pad_token_id": 0, "head_dim": 32, "hidden_size": 64, "intermediate_size": 128,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": 2048,
    })


def glm4_tensors(model, cfg):
    """The plain decoder's tensors plus GLM-4's post_self_attn_layernorm / post_mlp_layernorm,
    gate and up stacked into gate_up_proj."""
    E = cfg["hidden_size"]
    d = dict(decoder(model, cfg, lambda i, p: dense_mlp(model, p, E, cfg["intermediate_size"])))
    out = []
    for n, a in d.items():
        if n.endswith("mlp.gate_proj.weight"):
            p = n[:-len("gate_proj.weight")]
            out.append((p + "gate_up_proj.weight",
                        np.concatenate([d[p + "gate_proj.weight"], d[p + "up_proj.weight"]])))
        elif not n.endswith("mlp.up_proj.weight"):
            out.append((n, a))
    for i in range(cfg["num_hidden_layers"]):
        for nm in ("post_self_attn_layernorm", "post_mlp_layernorm"):
            n = f"model.layers.{i}.{nm}.weight"
            out.append((n, norm_w(model, n, E)))
    return out


def cohere_config():
    # Command-R's block, small: LayerNorm (weight only) before a parallel attention + MLP, no
    # post-attention norm, interleaved rotary, logit_scale (Command-R's 0.0625 flattens a random
    # model's logits into near-ties: 0.5 here), tied embeddings, layer_norm_eps.
    return dict(COMMON, **{
        "architectures": ["CohereForCausalLM"], "model_type": "cohere",
        "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "hidden_size": 64,
        "intermediate_size": 128, "layer_norm_eps": 1e-5, "logit_scale": 0.5,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "rope_theta": 10000.0, "tie_word_embeddings": True,
        "torch_dtype": "float32", "use_qk_norm": False, "vocab_size": 2048,
    })


def cohere2_config():
    # Command R7B's block, small: cohere's, four layers of which every fourth is global
    # (layer_types: sliding window 8 with rotary; the full layer without rotary).
    return dict(cohere_config(), **{
        "architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "head_dim": 16,
        "num_hidden_layers": 4, "sliding_window": 8,
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
    })


def cohere_tensors(model, cfg):
    """The plain decoder's tensors without post_attention_layernorm (one norm per layer)."""
    E = cfg["hidden_size"]
    t = decoder(model, cfg, lambda i, p: dense_mlp(model, p, E, cfg["intermediate_size"]))
    return [(n, a) for n, a in t if "post_attention_layernorm" not in n]


def fuse_phi3(tensors):
    """q/k/v and gate/up rows stacked into Phi-3's qkv_proj and gate_up_proj."""
    d = dict(tensors)
    out = []
    for n, a in tensors:
        if n.endswith("self_attn.q_proj.weight"):
            p = n[:-len("q_proj.weight")]
            out.append((p + "qkv_proj.weight", np.concatenate(
                [d[p + "q_proj.weight"], d[p + "k_proj.weight"], d[p + "v_proj.weight"]])))
        elif n.endswith("mlp.gate_proj.weight"):
            p = n[:-len("gate_proj.weight")]
            out.append((p + "gate_up_proj.weight",
                        np.concatenate([d[p + "gate_proj.weight"], d[p + "up_proj.weight"]])))
        elif not any(n.endswith(x) for x in ("k_proj.weight", "v_proj.weight", "up_proj.weight")):
            out.append((n, a))
    return out


def gemma3_mm(cfg, tensors):
    """The tiny Gemma 3 as a Gemma3ForConditionalGeneration checkpoint (how the 4B-27B models
    ship): the text fields under text_config with those equal to transformers' defaults left
    out, the weights under language_model.*, and a vision tensor the text model never reads."""
    defaults = {"hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
                "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
                "final_logit_softcapping": None, "attn_logit_softcapping": None}
    text = {k: v for k, v in cfg.items()
            if k not in defaults and k not in ("architectures", "bos_token_id", "eos_token_id",
                                               "pad_token_id", "torch_dtype",
                                               "transformers_version", "tie_word_embeddings")}
    text["model_type"] = "gemma3_text"
    mm = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
          "bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0,
          "tie_word_embeddings": cfg["tie_word_embeddings"], "image_token_index": 262144,
          "mm_tokens_per_image": 256, "text_config": text,
          "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 16},
          "torch_dtype": "float32", "transformers_version": "4.51.0"}
    out = [("language_model." + n if n.startswith("lm_head") else
            "language_model.model." + n[len("model."):], a) for n, a in tensors]
    out.append(("vision_tower.vision_model.embeddings.patch_embedding.weight",
                normalish("gemma3_mm", "vision", (16, 3, 2, 2), STD_PROJ)))
    return mm, out


def mixtral_config():
    # Mixtral 8x7B's block, small: 8 experts, top 2, every layer sparse (experts named
    # block_sparse_moe.experts.E.w1 / w2 / w3 as the real checkpoints ship them); intermediate_size
    # is the expert width; no sliding window (Mixtral 8x7B / 8x22B ship null).
    return dict(COMMON, **{
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
        "bos_token_id": 1, "eos_token_id": 2,
        "head_dim": 16, "hidden_size": 64, "intermediate_size": 56,
        "max_position_embeddings": 512, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "num_experts_per_tok": 2, "num_local_experts": 8,
        "output_router_logits": False, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.02, "router_jitter_noise": 0.0, "sliding_window": None,
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": 2048,
    })


def mixtral_moe(model, cfg):
    E, n_exp, F = cfg["hidden_size"], cfg["num_local_experts"], cfg["intermediate_size"]

    def mlp(i, p):
        p = p.replace(".mlp.", ".block_sparse_moe.")
        t = [(p + "gate.weight", normalish(model, p + "gate.weight", (n_exp, E), 0.3))]
        for e in range(n_exp):
            for w, shape in (("w1", (F, E)), ("w3", (F, E)), ("w2", (E, F))):
                n = f"{p}experts.{e}.{w}.weight"
                t.append((n, normalish(model, n, shape, STD_OUT if w == "w2" else STD_PROJ)))
        return t

    return mlp


# MXFP4 (OCP microscaling FP4, e2m1) code values, the table of transformers'
# integrations/mxfp4.py: code c means FP4_VALUES[c] * 2^(scale - 127).
FP4_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                       -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], np.float32)


def gpt_oss_config():
    # gpt-oss-20b's config.json (the hub file: legacy rope_theta / rope_scaling, the original
    # repo's experts_per_token / initial_context_length beside the transformers names, MXFP4
    # quantization_config), small: 4 layers alternating sliding (window 8) / full, 4 experts top
    # 2, expert width 32 (one MXFP4 block), the real YaRN (factor 32 over 4096, truncate false)
    # and swiglu_limit. No tokenizer (o200k is 200k ids): eos 2, pad 0 as ids of the 2048 vocab.
    return {
        "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
        "attention_bias": True, "attention_dropout": 0.0, "eos_token_id": 2,
        "experts_per_token": 2, "head_dim": 16, "hidden_act": "silu", "hidden_size": 64,
        "initial_context_length": 4096, "initializer_range": 0.02, "intermediate_size": 32,
        "layer_types": ["sliding_attention", "full_attention"] * 2,
        "max_position_embeddings": 131072, "num_attention_heads": 4, "num_experts_per_tok": 2,
        "num_hidden_layers": 4, "num_key_value_heads": 2, "num_local_experts": 4,
        "output_router_logits": False, "pad_token_id": 0,
        "quantization_config": {
            "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                       "model.embed_tokens", "lm_head"],
            "quant_method": "mxfp4"},
        "rms_norm_eps": 1e-05,
        "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                         "original_max_position_embeddings": 4096, "rope_type": "yarn",
                         "truncate": False},
        "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 8,
        "swiglu_limit": 7.0, "tie_word_embeddings": False,
        "transformers_version": "4.55.0.dev0", "use_cache": True, "vocab_size": 2048,
    }


def gpt_oss_plain_config():
    # The same model as an unquantized (BF16) checkpoint: no quantization_config.
    c = dict(gpt_oss_config(), torch_dtype="bfloat16")
    del c["quantization_config"]
    return c


def mxfp4_codes(model, name, rows, cols, scale_lo):
    """Random MXFP4 weights of one expert's [rows, cols] matrix (cols the input dim), as the
    gpt-oss checkpoint stores them: blocks uint8 [rows, cols/32, 16]
    (byte j of a block: element 2j in the low nibble, 2j+1 in the high one), scales uint8
    [rows, cols/32] (biased exponents, scale_lo .. scale_lo+2: 2^(scale_lo-127) ..), and the
    float32 values they stand for. Codes and exponents come from the same exact uniform bits
    as normalish (floor of random() * n: exact), so they are machine-independent."""
    rng = np.random.default_rng(_seed(model, name + "_blocks"))
    codes = (rng.random((rows, cols)) * 16).astype(np.uint8)
    rng = np.random.default_rng(_seed(model, name + "_scales"))
    scales = (scale_lo + (rng.random((rows, cols // 32)) * 3).astype(np.uint8)).astype(np.uint8)
    pairs = codes.reshape(rows, cols // 32, 16, 2)
    blocks = (pairs[..., 0] | (pairs[..., 1] << 4)).astype(np.uint8)
    mult = np.ldexp(np.float32(1.0), scales.astype(np.int32) - 127).astype(np.float32)
    values = (FP4_VALUES[codes].reshape(rows, cols // 32, 32) * mult[..., None]).reshape(rows, cols)
    return blocks, scales, values


def gpt_oss_tensors(cfg, plain):
    """gpt-oss's tensors under the checkpoint's names: q/k/v/o with biases, per-head sinks, the
    router (mlp.router, weight and bias), the experts fused (mlp.experts.gate_up_proj with gate /
    up interleaved by rows of the [2I, H] matrix, down_proj) with biases. plain=False: the
    expert weights as the hub's MXFP4 blocks / scales (U8); plain=True: the same values
    dequantized, transposed as an unquantized checkpoint stores them (gate_up_proj [E, H, 2I],
    down_proj [E, I, H]). Seeded by "gpt_oss" in both forms: the two hold the same weights."""
    model = "gpt_oss"
    E, V, L = cfg["hidden_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    H, KV, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    X, F = cfg["num_local_experts"], cfg["intermediate_size"]
    t = [("model.embed_tokens.weight", normalish(model, "model.embed_tokens.weight", (V, E), STD_EMBED))]
    for i in range(L):
        p = f"model.layers.{i}."
        for nm in ("input_layernorm", "post_attention_layernorm"):
            t.append((p + nm + ".weight", norm_w(model, p + nm + ".weight", E)))
        t += attention(model, p, E, H, KV, D, False, True)
        n = p + "self_attn.o_proj.bias"
        t.append((n, normalish(model, n, (E,), STD_BIAS)))
        # Sinks of the size of attention logits: they take a real share of each softmax.
        n = p + "self_attn.sinks"
        t.append((n, normalish(model, n, (H,), 1.0)))
        m = p + "mlp."
        t.append((m + "router.weight", normalish(model, m + "router.weight", (X, E), 0.3)))
        t.append((m + "router.bias", normalish(model, m + "router.bias", (X,), STD_BIAS)))
        x = m + "experts."
        for proj, rows, cols, lo in (("gate_up_proj", 2 * F, E, 122), ("down_proj", E, F, 123)):
            n = x + proj
            parts = [mxfp4_codes(model, f"{n}.{e}", rows, cols, lo) for e in range(X)]
            if plain:  # [X, cols, rows]: the input dim first
                t.append((n, np.stack([np.ascontiguousarray(v.T) for _, _, v in parts])))
            else:
                t.append((n + "_blocks", np.stack([b for b, _, _ in parts])))
                t.append((n + "_scales", np.stack([s for _, s, _ in parts])))
            t.append((n + "_bias", normalish(model, n + "_bias", (X, rows), STD_BIAS)))
    t.append(("model.norm.weight", norm_w(model, "model.norm.weight", E)))
    t.append(("lm_head.weight", normalish(model, "lm_head.weight", (V, E), STD_EMBED)))
    return t


def smollm3_config():
    # SmolLM3's block, small: four layers, the fourth without rotary embedding (NoPE:
    # no_rope_layers 1, 1, 1, 0, interval 4), tied embeddings and rope_theta 2e6 as SmolLM3-3B.
    return dict(COMMON, **{
        "architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
        "bos_token_id": 1, "eos_token_id": 2, "head_dim": 16, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 512, "max_window_layers": 4,
        "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 2,
        "no_rope_layers": [1, 1, 1, 0], "no_rope_layer_interval": 4, "pad_token_id": None,
        "attention_bias": False, "mlp_bias": False, "rms_norm_eps": 1e-6,
        "rope_theta": 2000000.0, "sliding_window": None, "use_sliding_window": False,
        "tie_word_embeddings": True, "torch_dtype": "float32", "vocab_size": 2048,
    })


def granite_config():
    # Granite 3's block, small: the four multipliers at values of their kind (Granite 3.x 2B:
    # embedding 12, attention 1/64, residual 0.22, logits 8). Untied: with these random
    # embeddings times 12 and the blocks' outputs times 0.22, a tied model only repeats its
    # input token.
    return dict(COMMON, **{
        "architectures": ["GraniteForCausalLM"], "model_type": "granite",
        "bos_token_id": 1, "eos_token_id": 2, "head_dim": 16, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 512, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "attention_bias": False,
        "mlp_bias": False, "rms_norm_eps": 1e-5, "rope_theta": 10000000.0,
        "embedding_multiplier": 12.0, "attention_multiplier": 0.125, "residual_multiplier": 0.22,
        "logits_scaling": 8.0, "tie_word_embeddings": False, "torch_dtype": "float32",
        "vocab_size": 2048,
    })


def olmo2_config():
    # OLMo 2's block, small: norms on the blocks' outputs only, q/k norms over the whole
    # projection.
    return dict(COMMON, **{
        "architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2",
        "bos_token_id": None, "eos_token_id": 2, "pad_token_id": 1, "hidden_size": 64,
        "intermediate_size": 192, "max_position_embeddings": 512, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "attention_bias": False,
        "rms_norm_eps": 1e-6, "rope_theta": 500000.0, "tie_word_embeddings": False,
        "torch_dtype": "float32", "vocab_size": 2048,
    })


def olmo3_config():
    # Olmo-3-7B's block, small: OLMo 2's norms, four layers (Olmo3Config's default layer_types:
    # three sliding of every four, window 8 here), YaRN (factor 8 from 64 positions, Olmo-3's
    # attention_factor rule) on the full layer only.
    return dict(COMMON, **{
        "architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3",
        "bos_token_id": None, "eos_token_id": 2, "pad_token_id": 1, "hidden_size": 64,
        "intermediate_size": 192, "max_position_embeddings": 512, "num_attention_heads": 4,
        "num_hidden_layers": 4, "num_key_value_heads": 2, "attention_bias": False,
        "rms_norm_eps": 1e-6, "rope_theta": 500000.0, "sliding_window": 8,
        "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64,
                         "attention_factor": 1.2079441541679836, "beta_fast": 32,
                         "beta_slow": 1},
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": 2048,
    })


def stablelm_config():
    # StableLM 2 1.6B's config.json small: LayerNorms with biases, q/k/v biases, rotary on the
    # first quarter of each head (8 of 32 dims), untied.
    return dict(COMMON, **{
        "architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
        "bos_token_id": 1, "eos_token_id": 2, "hidden_size": 64,
        "intermediate_size": 128, "layer_norm_eps": 1e-5, "max_position_embeddings": 512,
        "num_attention_heads": 2, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "partial_rotary_factor": 0.25, "qk_layernorm": False, "rope_theta": 10000,
        "tie_word_embeddings": False, "torch_dtype": "float32", "use_parallel_residual": False,
        "use_qkv_bias": True, "vocab_size": 2048,
    })


def stablelm_tensors(model, cfg):
    E, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = E // H
    t = [("model.embed_tokens.weight", normalish(model, "model.embed_tokens.weight", (V, E), STD_EMBED))]

    def layer_norm(name):
        return [(name + ".weight", norm_w(model, name + ".weight", E)),
                (name + ".bias", normalish(model, name + ".bias", (E,), STD_BIAS))]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t += layer_norm(p + "input_layernorm") + layer_norm(p + "post_attention_layernorm")
        t += attention(model, p, E, H, KV, D, False, True)
        t += dense_mlp(model, p + "mlp.", E, F)
    t += layer_norm("model.norm")
    t.append(("lm_head.weight", normalish(model, "lm_head.weight", (V, E), STD_EMBED)))
    return t


def phi_config():
    # Phi-2's config.json (microsoft/phi-2) small: its 80-dim heads with the first 0.4 (32 dims)
    # rotating, LayerNorm + parallel block, biases on every projection and on lm_head, gelu_new,
    # GQA 2 / 1 (Phi-2 itself has none; the loader's grouping is generic), untied.
    return dict(COMMON, **{
        "architectures": ["PhiForCausalLM"], "model_type": "phi", "bos_token_id": 1,
        "embd_pdrop": 0.0, "eos_token_id": 2, "hidden_act": "gelu_new", "hidden_size": 160,
        "intermediate_size": 256, "layer_norm_eps": 1e-5, "max_position_embeddings": 512,
        "num_attention_heads": 2, "num_hidden_layers": 2, "num_key_value_heads": 1,
        "partial_rotary_factor": 0.4, "qk_layernorm": False, "resid_pdrop": 0.1,
        "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
        "torch_dtype": "float32", "vocab_size": 2048,
    })


def starcoder2_config():
    # StarCoder2-3B's config.json (bigcode/starcoder2-3b) small: LayerNorms with biases, biases
    # on q/k/v/o and on the ungated MLP (c_fc / c_proj, gelu_pytorch_tanh), GQA 4 / 2, a
    # sliding window (8 here, 4096 there), tied.
    return dict(COMMON, **{
        "architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
        "bos_token_id": 1, "eos_token_id": 2, "embedding_dropout": 0.0,
        "hidden_act": "gelu_pytorch_tanh", "hidden_size": 64, "intermediate_size": 256,
        "max_position_embeddings": 512, "mlp_type": "default", "norm_epsilon": 1e-5,
        "norm_type": "layer_norm", "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "residual_dropout": 0.0, "rope_theta": 999999.4420358813,
        "sliding_window": 8, "tie_word_embeddings": True, "torch_dtype": "float32",
        "use_bias": True, "vocab_size": 2048,
    })


def biased_lm_tensors(model, cfg):
    """Phi's and StarCoder2's layers under their own names: LayerNorms, q/k/v/o and the ungated
    MLP all with biases."""
    phi = cfg["model_type"] == "phi"
    E, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = E // H

    def linear(name, rows, cols, std):
        return [(name + ".weight", normalish(model, name + ".weight", (rows, cols), std)),
                (name + ".bias", normalish(model, name + ".bias", (rows,), STD_BIAS))]

    def layer_norm(name):
        return [(name + ".weight", norm_w(model, name + ".weight", E)),
                (name + ".bias", normalish(model, name + ".bias", (E,), STD_BIAS))]
    t = [("model.embed_tokens.weight", normalish(model, "model.embed_tokens.weight", (V, E), STD_EMBED))]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t += layer_norm(p + "input_layernorm")
        if not phi:
            t += layer_norm(p + "post_attention_layernorm")
        for proj, rows in (("q_proj", H * D), ("k_proj", KV * D), ("v_proj", KV * D)):
            t += linear(f"{p}self_attn.{proj}", rows, E, STD_PROJ)
        t += linear(p + ("self_attn.dense" if phi else "self_attn.o_proj"), E, H * D, STD_OUT)
        t += linear(p + ("mlp.fc1" if phi else "mlp.c_fc"), F, E, STD_PROJ)
        t += linear(p + ("mlp.fc2" if phi else "mlp.c_proj"), E, F, STD_OUT)
    t += layer_norm("model.final_layernorm" if phi else "model.norm")
    if not cfg["tie_word_embeddings"]:
        t += linear("lm_head", V, E, STD_EMBED)
    return t


def ministral3_config():
    # Ministral-3-8B's text config small (Ministral3ForCausalLM): the Mistral block with YaRN
    # (factor 32 from 16 positions to 512; mscale / mscale_all_dim 1) and Llama 4's attention
    # temperature (llama_4_scaling_beta 0.1 over those 16 positions: the prompts reach 79, where
    # q is scaled by 1 + 0.1 ln 5), head_dim 16 given, GQA 4 / 2, no sliding window, untied;
    # bos 1, eos 2, pad 11.
    return dict(COMMON, **{
        "architectures": ["Ministral3ForCausalLM"], "model_type": "ministral3",
        "bos_token_id": 1, "eos_token_id": 2, "head_dim": 16, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 512, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 11,
        "rms_norm_eps": 1e-5,
        "rope_parameters": {"type": "yarn", "rope_type": "yarn", "rope_theta": 1000000.0,
                            "factor": 32.0, "original_max_position_embeddings": 16,
                            "max_position_embeddings": 512, "beta_fast": 32.0, "beta_slow": 1.0,
                            "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1},
        "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "float32",
        "vocab_size": 2048,
    })


def deepseek_v2_config():
    # DeepSeek-V2-Lite's config.json small: multi-head latent attention without a q latent
    # (q_lora_rank null; kv_lora_rank 32, heads of 16 + 8 rotated dims for q.k, 16 for v), YaRN
    # with DeepSeek's mscale / mscale_all_dim (factor 4 from 32 positions to the 128 of
    # max_position_embeddings: the prompts run past 32), layer 0 dense, then softmax-routed MoE (8 experts, top 2, greedy, not renormalized,
    # routed_scaling_factor 1.5 where the Lite has 1.0: the product is exercised) with 2 shared
    # experts; untied; V2-Lite's 27 layers (llama.cpp reads a GGUF without a q latent only at
    # that depth). No tokenizer (DeepSeek's is 102400 ids): a 2048 vocabulary, bos 1, eos 2.
    return dict(COMMON, **{
        "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
        "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
        "first_k_dense_replace": 1, "hidden_size": 64, "intermediate_size": 128,
        "kv_lora_rank": 32, "max_position_embeddings": 128, "moe_intermediate_size": 32,
        "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 8, "n_shared_experts": 2,
        "norm_topk_prob": False, "num_attention_heads": 4, "num_experts_per_tok": 2,
        "num_hidden_layers": 27, "num_key_value_heads": 4, "q_lora_rank": None,
        "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "rms_norm_eps": 1e-6,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32,
                         "beta_fast": 32, "beta_slow": 1, "mscale": 0.707,
                         "mscale_all_dim": 0.707},
        "rope_theta": 10000.0, "routed_scaling_factor": 1.5, "scoring_func": "softmax",
        "tie_word_embeddings": False, "topk_group": 1, "topk_method": "greedy",
        "torch_dtype": "float32", "v_head_dim": 16, "vocab_size": 2048,
    })


def deepseek_v3_config():
    # DeepSeek-V3's config.json (Moonlight and Kimi K2 have the same keys) small: a q latent
    # (q_lora_rank 24), kv_lora_rank 32, heads of 16 + 8 for q.k and 16 for v, no rope scaling,
    # rope_interleave; layer 0 dense, then the sigmoid router with e_score_correction_bias, 8
    # experts in n_group 4 of which topk_group 2 are kept, top 2, renormalized, times 2.5, one
    # shared expert; untied; bos 1, eos 2.
    return dict(COMMON, **{
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
        "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
        "first_k_dense_replace": 1, "hidden_size": 64, "intermediate_size": 128,
        "kv_lora_rank": 32, "max_position_embeddings": 512, "moe_intermediate_size": 32,
        "n_group": 4, "n_routed_experts": 8, "n_shared_experts": 1, "norm_topk_prob": True,
        "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
        "num_key_value_heads": 4, "q_lora_rank": 24, "qk_nope_head_dim": 16,
        "qk_rope_head_dim": 8, "rms_norm_eps": 1e-6, "rope_interleave": True,
        "rope_scaling": None, "rope_theta": 10000.0, "routed_scaling_factor": 2.5,
        "scoring_func": "sigmoid", "tie_word_embeddings": False, "topk_group": 2,
        "topk_method": "noaux_tc", "torch_dtype": "float32", "v_head_dim": 16,
        "vocab_size": 2048,
    })


def glm4_moe_lite_config():
    # GLM-4.7-Flash's config.json small: DeepSeek-V3's block (the deepseek_v3 model's sizes),
    # the dense / sparse split as mlp_layer_types (layers 0 and 2 dense here, where the Flash has
    # only layer 0: the list is read, not a prefix), one group, routed_scaling_factor 1.8, rope
    # theta 1e6; untied; bos 0, eos 1.
    c = dict(deepseek_v3_config(), **{
        "architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite",
        "bos_token_id": 0, "eos_token_id": 1, "mlp_layer_types": ["dense", "sparse", "dense"],
        "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.8, "rope_theta": 1000000.0,
    })
    for k in ("first_k_dense_replace", "scoring_func", "topk_method"):
        c.pop(k)
    return c


def deepseek_tensors(model, cfg):
    """DeepSeek's layers in the hub's names: the latent attention's projections and norms,
    layer 0's dense MLP, then the router (with V3's correction bias), per-expert SwiGLU experts
    and the shared experts."""
    E, V, H = cfg["hidden_size"], cfg["vocab_size"], cfg["num_attention_heads"]
    n_exp, Fm = cfg["n_routed_experts"], cfg["moe_intermediate_size"]
    NP, R, VD = cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]
    QL, KL = cfg["q_lora_rank"], cfg["kv_lora_rank"]
    v3 = cfg["model_type"] in ("deepseek_v3", "glm4_moe_lite")
    dense = ([i for i, k in enumerate(cfg["mlp_layer_types"]) if k == "dense"]
             if "mlp_layer_types" in cfg else list(range(cfg["first_k_dense_replace"])))

    def w(name, shape, std=STD_PROJ):
        return (name, normalish(model, name, shape, std))
    t = [w("model.embed_tokens.weight", (V, E), STD_EMBED)]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = p + "self_attn."
        t += [(p + n + ".weight", norm_w(model, p + n + ".weight", E))
              for n in ("input_layernorm", "post_attention_layernorm")]
        if QL:
            t += [w(a + "q_a_proj.weight", (QL, E)),
                  (a + "q_a_layernorm.weight", norm_w(model, a + "q_a_layernorm.weight", QL)),
                  w(a + "q_b_proj.weight", (H * (NP + R), QL))]
        else:
            t.append(w(a + "q_proj.weight", (H * (NP + R), E)))
        t += [w(a + "kv_a_proj_with_mqa.weight", (KL + R, E)),
              (a + "kv_a_layernorm.weight", norm_w(model, a + "kv_a_layernorm.weight", KL)),
              w(a + "kv_b_proj.weight", (H * (NP + VD), KL)),
              w(a + "o_proj.weight", (E, H * VD), STD_OUT)]
        m = p + "mlp."
        if i in dense:
            t += dense_mlp(model, m, E, cfg["intermediate_size"])
            continue
        t.append(w(m + "gate.weight", (n_exp, E), 0.4))
        if v3:
            t.append(w(m + "gate.e_score_correction_bias", (n_exp,), 0.1))
        for e in range(n_exp):
            t += dense_mlp(model, f"{m}experts.{e}.", E, Fm)
        t += dense_mlp(model, m + "shared_experts.", E, Fm * cfg["n_shared_experts"])
    t.append(("model.norm.weight", norm_w(model, "model.norm.weight", E)))
    t.append(w("lm_head.weight", (V, E), STD_EMBED))
    return t


def exaone4_config():
    # EXAONE 4.0 32B's block, small: OLMo 2's output norms with per-head q/k norms, four layers
    # in its hybrid pattern (sliding_window_pattern "LLLG" and the layer_types it implies:
    # window 8 with rotary on three, the fourth global without rotary).
    return dict(COMMON, **{
        "architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4",
        "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "hidden_size": 64,
        "head_dim": 16, "intermediate_size": 128, "max_position_embeddings": 512,
        "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "sliding_window": 8,
        "sliding_window_pattern": "LLLG",
        "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": 2048,
    })


def output_norm_decoder(model, cfg, whole_qk_norms):
    """The tensors of a block that normalizes its outputs (OLMo 2, EXAONE 4.0): no input norms;
    post_attention_layernorm / post_feedforward_layernorm on the blocks' outputs; q_norm / k_norm
    as wide as the q / k projections (OLMo 2) or one head (EXAONE 4.0)."""
    E, V, H, KV = (cfg["hidden_size"], cfg["vocab_size"], cfg["num_attention_heads"],
                   cfg["num_key_value_heads"])
    D = cfg.get("head_dim", E // H)
    qn, kn = (H * D, KV * D) if whole_qk_norms else (D, D)
    t = [("model.embed_tokens.weight", normalish(model, "model.embed_tokens.weight", (V, E), STD_EMBED))]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t += attention(model, p, E, H, KV, D, False, False)
        for nm, n in (("self_attn.q_norm", qn), ("self_attn.k_norm", kn),
                      ("post_attention_layernorm", E), ("post_feedforward_layernorm", E)):
            t.append((p + nm + ".weight", norm_w(model, p + nm + ".weight", n)))
        t += dense_mlp(model, p + "mlp.", E, cfg["intermediate_size"])
    t.append(("model.norm.weight", norm_w(model, "model.norm.weight", E)))
    if not cfg["tie_word_embeddings"]:
        t.append(("lm_head.weight", normalish(model, "lm_head.weight", (V, E), STD_EMBED)))
    return t


def vl_vision_tensor(model, name, shape=(16, 3, 2, 14, 14)):
    """One tensor of a vision tower the text model never reads (a real multimodal checkpoint
    carries them all; transformers initializes the rest, unused by text-only prompts)."""
    return (name, normalish(model, name, shape, STD_PROJ))


def mistral3_config():
    # Mistral Small 3.1's layout, small: a Mistral3ForConditionalGeneration whose text model
    # sits under text_config (fields equal to MistralConfig's defaults left out, as
    # transformers saves them; sliding_window null and rope_theta 1e9 as the real one).
    text = {"model_type": "mistral", "head_dim": 16, "hidden_size": 64,
            "intermediate_size": 128, "max_position_embeddings": 512,
            "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
            "rms_norm_eps": 1e-5, "rope_theta": 1000000000.0, "sliding_window": None,
            "tie_word_embeddings": False, "vocab_size": 2048}
    return {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
            "image_token_index": 10, "multimodal_projector_bias": False,
            "projector_hidden_act": "gelu", "spatial_merge_size": 2, "text_config": text,
            "vision_config": {"model_type": "pixtral", "hidden_size": 16, "head_dim": 8,
                              "intermediate_size": 32, "num_attention_heads": 2,
                              "num_hidden_layers": 1, "image_size": 56, "patch_size": 14,
                              "rope_theta": 10000.0},
            "vision_feature_layer": -1, "torch_dtype": "float32",
            "transformers_version": "4.51.0"}


def qwen2_5_vl_config():
    # Qwen2.5-VL's hub layout, small: the text fields at the top level, rope_scaling "mrope"
    # with sections of 2 / 3 / 3 rotary pairs (head_dim 16), weights under model.* / lm_head
    # beside visual.*.
    return dict(COMMON, **{
        "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
        "bos_token_id": 1, "eos_token_id": 2, "hidden_size": 64, "intermediate_size": 128,
        "max_position_embeddings": 512, "max_window_layers": 2, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-6,
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
        "rope_theta": 1000000.0, "sliding_window": 32768, "use_sliding_window": False,
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": 2048,
        "image_token_id": 5, "video_token_id": 6, "vision_start_token_id": 7,
        "vision_end_token_id": 8,
        "vision_config": {"depth": 1, "hidden_size": 16, "intermediate_size": 32,
                          "num_heads": 2, "out_hidden_size": 64, "patch_size": 14,
                          "spatial_merge_size": 2, "temporal_patch_size": 2,
                          "fullatt_block_indexes": [0], "window_size": 112,
                          "in_chans": 3},
    })


def qwen3_vl_config():
    # Qwen3-VL's hub layout, small: text_config with q/k norms and the interleaved mrope
    # (rope_type default + mrope_section), weights under model.language_model.* / lm_head
    # beside model.visual.*.
    text = {"model_type": "qwen3_vl_text", "head_dim": 16, "hidden_size": 64,
            "intermediate_size": 128, "max_position_embeddings": 512,
            "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
            "rms_norm_eps": 1e-6, "rope_theta": 5000000.0, "vocab_size": 2048,
            "bos_token_id": 1, "eos_token_id": 2,
            "rope_scaling": {"rope_type": "default", "mrope_section": [2, 3, 3],
                             "mrope_interleaved": True}}
    return {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
            "image_token_id": 5, "video_token_id": 6, "vision_start_token_id": 7,
            "vision_end_token_id": 8, "tie_word_embeddings": False, "text_config": text,
            "vision_config": {"depth": 1, "hidden_size": 16, "intermediate_size": 32,
                              "num_heads": 2, "out_hidden_size": 64, "patch_size": 14,
                              "spatial_merge_size": 2, "temporal_patch_size": 2,
                              "num_position_embeddings": 16, "deepstack_visual_indexes": [0],
                              "in_channels": 3},
            "torch_dtype": "float32", "transformers_version": "4.57.0"}


def qwen2_config():
    return dict(COMMON, **{
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "bos_token_id": QWEN_BOS, "eos_token_id": QWEN_EOS, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 32768, "max_window_layers": 2,
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 1000000.0,
        "sliding_window": None, "use_sliding_window": False,
        "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": QWEN_VOCAB,
    })


def qwen2_yarn_config():
    # Qwen's YaRN recipe (rope_scaling yarn, factor 4, over an original length), small: the
    # original length 32 puts the blend of interpolated and original frequencies across the
    # head's 8 rotary pairs, and the prompts run past it; a 2048-token vocabulary, id prompts.
    return dict(qwen2_config(), **{
        "bos_token_id": 1, "eos_token_id": 2, "max_position_embeddings": 32,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": 32},
        "rope_theta": 10000.0, "vocab_size": 2048,
    })


def moe_mlp(model, cfg, width="moe_intermediate_size", router_std=0.3):
    """Per-expert SwiGLU experts under mlp.gate (Qwen3-MoE; OLMoE, whose experts are
    intermediate_size wide and every layer sparse)."""
    E, n_exp, Fm = cfg["hidden_size"], cfg["num_experts"], cfg[width]

    def mlp(i, p):
        sparse = (i not in cfg.get("mlp_only_layers", [])
                  and (i + 1) % cfg.get("decoder_sparse_step", 1) == 0)
        if not sparse:
            return dense_mlp(model, p, E, cfg["intermediate_size"])
        # Router std is larger so expert choice is decisive, not a coin toss between near-equal scores.
        t = [(p + "gate.weight", normalish(model, p + "gate.weight", (n_exp, E), router_std))]
        for e in range(n_exp):
            t += dense_mlp(model, f"{p}experts.{e}.", E, Fm)
        return t

    return mlp


def qwen2_moe_config():
    # Qwen1.5-MoE-A2.7B's config.json (Qwen2-57B-A14B's has the same keys), small: 4 experts top
    # 2 (softmax over all experts, norm_topk_prob false: the two weights are not renormalized),
    # expert width 32, a shared expert of width 48 in every sparse layer; q/k/v bias implied
    # (no key: transformers' qkv_bias default); sliding_window set but use_sliding_window false,
    # as the hub file. The hub models are sparse in every layer; mlp_only_layers [1] (a key
    # transformers reads) makes layer 1 a dense MLP of intermediate_size 80, a width apart from
    # both expert widths. No tokenizer (Qwen's is 151936 ids): a 2048 vocabulary, bos 1, eos 2.
    return dict(COMMON, **{
        "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
        "bos_token_id": 1, "eos_token_id": 2, "decoder_sparse_step": 1, "hidden_size": 64,
        "intermediate_size": 80, "max_position_embeddings": 8192, "max_window_layers": 3,
        "mlp_only_layers": [1], "moe_intermediate_size": 32, "norm_topk_prob": False,
        "num_attention_heads": 4, "num_experts": 4, "num_experts_per_tok": 2,
        "num_hidden_layers": 3, "num_key_value_heads": 2, "output_router_logits": False,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
        "shared_expert_intermediate_size": 48, "sliding_window": 32768,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_sliding_window": False,
        "vocab_size": 2048,
    })


def qwen2_moe_mlp(model, cfg):
    E, n_exp, Fm = cfg["hidden_size"], cfg["num_experts"], cfg["moe_intermediate_size"]

    def mlp(i, p):
        sparse = i not in cfg["mlp_only_layers"] and (i + 1) % cfg["decoder_sparse_step"] == 0
        if not sparse:
            return dense_mlp(model, p, E, cfg["intermediate_size"])
        # Router std 0.4: the normed input has rms ~1, so the 4 router logits spread by ~3 and
        # the top-2 choice is decisive. Shared-expert gate std 0.3: its logit spreads by ~2.4,
        # so sigmoid(gate) ranges over ~0.1..0.9 from token to token instead of sitting at 0.5.
        t = [(p + "gate.weight", normalish(model, p + "gate.weight", (n_exp, E), 0.4)),
             (p + "shared_expert_gate.weight",
              normalish(model, p + "shared_expert_gate.weight", (1, E), 0.3))]
        for e in range(n_exp):
            t += dense_mlp(model, f"{p}experts.{e}.", E, Fm)
        t += dense_mlp(model, p + "shared_expert.", E, cfg["shared_expert_intermediate_size"])
        return t

    return mlp


def glm4_moe_config():
    # GLM-4.5's config.json (GLM-4.5-Air and GLM-4.6 have the same keys), small: layer 0 dense
    # (first_k_dense_replace 1, width 80), layers 1-2 MoE with 8 routed experts of width 32 in
    # n_group 2 groups of which topk_group 1 is kept (DeepSeek-V3's group limit; the hub's GLM
    # models have 1 / 1, so this runs the general case), top 2, norm_topk_prob, the 355B's
    # routed_scaling_factor 2.5 and use_qk_norm, one shared expert; q/k/v bias, head_dim 32
    # given (the hub's 128 against hidden 4096 / 96 heads), partial_rotary_factor 0.5 (16 dims
    # rotate, rotate-half pairs). num_nextn_predict_layers 1: the folder holds an MTP layer
    # (model.layers.3) that nothing reads. No tokenizer (GLM's is 151552 ids): a 2048
    # vocabulary, no bos, two EOS ids (2, 3) as GLM's list, pad 0.
    return dict(COMMON, **{
        "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe",
        "attention_bias": True, "bos_token_id": None, "eos_token_id": [2, 3],
        "first_k_dense_replace": 1, "head_dim": 32, "hidden_size": 64, "intermediate_size": 80,
        "max_position_embeddings": 4096, "moe_intermediate_size": 32, "n_group": 2,
        "n_routed_experts": 8, "n_shared_experts": 1, "norm_topk_prob": True,
        "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
        "num_key_value_heads": 2, "num_nextn_predict_layers": 1, "pad_token_id": 0,
        "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-5, "rope_scaling": None,
        "rope_theta": 1000000.0, "routed_scaling_factor": 2.5, "tie_word_embeddings": False,
        "topk_group": 1, "torch_dtype": "bfloat16", "use_qk_norm": True, "vocab_size": 2048,
    })


def glm4_moe_tensors(model, cfg):
    E, n_exp, Fm = cfg["hidden_size"], cfg["n_routed_experts"], cfg["moe_intermediate_size"]

    def mlp(i, p):
        if i < cfg["first_k_dense_replace"]:
            return dense_mlp(model, p, E, cfg["intermediate_size"])
        # Router std 0.4 (a decisive choice); the correction bias std 0.1 moves the biased
        # scores (sigmoid in 0..1) enough to change some choices from the unbiased ones.
        t = [(p + "gate.weight", normalish(model, p + "gate.weight", (n_exp, E), 0.4)),
             (p + "gate.e_score_correction_bias",
              normalish(model, p + "gate.e_score_correction_bias", (n_exp,), 0.1))]
        for e in range(n_exp):
            t += dense_mlp(model, f"{p}experts.{e}.", E, Fm)
        t += dense_mlp(model, p + "shared_experts.", E, Fm * cfg["n_shared_experts"])
        return t

    # The MTP layers after the last decoder layer (GLM-4.5-Air's model.layers.46): a whole sparse
    # decoder layer plus its own norms and projection; transformers and this engine leave them
    # unread. The other tensors are seeded by name, so they do not depend on these.
    L = cfg["num_hidden_layers"]
    t = decoder(model, dict(cfg, num_hidden_layers=L + cfg["num_nextn_predict_layers"]), mlp)
    for i in range(L, L + cfg["num_nextn_predict_layers"]):
        p = f"model.layers.{i}."
        for n, shape in (("eh_proj.weight", (E, 2 * E)), ("enorm.weight", (E,)),
                         ("hnorm.weight", (E,)), ("shared_head.norm.weight", (E,))):
            t.append((p + n, normalish(model, p + n, shape, STD_PROJ)))
    return t


def minimax_m2_config():
    # MiniMax-M2's config.json (M2.1 has the same keys), small: 8 experts of width 32
    # (intermediate_size is the expert width) top 2 in every layer behind the sigmoid router with
    # its correction bias (use_routing_bias, scoring_func sigmoid; weights always renormalized,
    # no scaling), q/k RMSNorm over the whole projection (qk_norm_type per_layer), rotary_dim 16
    # of head_dim 32 (the legacy key; rotate-half pairs), GQA 4 / 2, all-full attention
    # (attn_type_list of 1s), no shared expert, untied, rope_theta 5e6 as the hub. The hub's
    # weights are FP8; this is the BF16 form. No tokenizer (MiniMax's is 200064 ids): a 2048
    # vocabulary, bos 1, eos 2.
    return dict(COMMON, **{
        "architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2",
        "attn_type_list": [1, 1, 1], "bos_token_id": 1, "eos_token_id": 2, "head_dim": 32,
        "hidden_size": 64, "intermediate_size": 32, "max_position_embeddings": 4096,
        "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
        "num_key_value_heads": 2, "num_local_experts": 8, "output_router_logits": False,
        "qk_norm_type": "per_layer", "rms_norm_eps": 1e-6, "rope_theta": 5000000,
        "rotary_dim": 16, "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0,
        "scoring_func": "sigmoid", "shared_intermediate_size": 0, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "use_qk_norm": True, "use_routing_bias": True,
        "vocab_size": 2048,
    })


def minimax_m2_mlp(model, cfg):
    E, n_exp, F = cfg["hidden_size"], cfg["num_local_experts"], cfg["intermediate_size"]

    def mlp(i, p):
        p = p.replace(".mlp.", ".block_sparse_moe.")
        # Mixtral's names; the correction bias beside the router, as the hub keeps it. Router
        # std 0.4 and bias std 0.1 as glm4_moe's.
        t = [(p + "gate.weight", normalish(model, p + "gate.weight", (n_exp, E), 0.4)),
             (p + "e_score_correction_bias",
              normalish(model, p + "e_score_correction_bias", (n_exp,), 0.1))]
        for e in range(n_exp):
            for w, shape, std in (("w1", (F, E), STD_PROJ), ("w3", (F, E), STD_PROJ),
                                  ("w2", (E, F), STD_OUT)):
                n = f"{p}experts.{e}.{w}.weight"
                t.append((n, normalish(model, n, shape, std)))
        return t

    return mlp


# float(e4m3fn code) for the 256 codes (sign, 4 exponent bits with bias 7, 3 mantissa bits;
# exponent 0 subnormal; 0x7F / 0xFF NaN).
def e4m3_values():
    c = np.arange(256)
    e, m = (c >> 3) & 15, (c & 7).astype(np.float64)
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    v = np.where(c & 0x80, -v, v)
    v[(c & 0x7F) == 0x7F] = np.nan
    return v


def fp8_block_quantize(w, block):
    """w [R, C] float32 as e4m3 codes and per-block F32 scales [R / br, C / bc] (DeepSeek-V3's
    weight_block_size form), each scale the power of two that brings the block's largest value
    to at most 448: every dequantized value code * scale is then exact in bfloat16 (4
    significant bits), so transformers' float32 dequantization and a BF16 one agree bit for
    bit. Codes: the nearest e4m3 value (ties to the lower code)."""
    br, bc = block
    R, C = w.shape
    assert R % br == 0 and C % bc == 0
    vals = e4m3_values()
    finite = np.where(~np.isnan(vals))[0]
    order = finite[np.argsort(vals[finite], kind="stable")]
    sv = vals[order]
    scales = np.zeros((R // br, C // bc), np.float32)
    codes = np.zeros((R, C), np.uint8)
    for i in range(R // br):
        for j in range(C // bc):
            blk = w[i * br:(i + 1) * br, j * bc:(j + 1) * bc].astype(np.float64)
            s = 2.0 ** np.ceil(np.log2(max(np.abs(blk).max(), 1e-30) / 448.0))
            x = blk / s
            k = np.clip(np.searchsorted(sv, x), 1, len(sv) - 1)
            k = np.where(np.abs(sv[k - 1] - x) <= np.abs(sv[k] - x), k - 1, k)
            codes[i * br:(i + 1) * br, j * bc:(j + 1) * bc] = order[k]
            scales[i, j] = s
    return codes, scales


def qwen3_fp8_config():
    # Qwen3-*-FP8's config.json: the tiny qwen3 with quantization_config fp8 (e4m3, dynamic
    # activations, weight_block_size 32 x 32 where the hub has 128 x 128, so every projection
    # spans several blocks both ways), embeddings, norms and the tied head unquantized.
    return dict(qwen3_config(), **{
        "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                "quant_method": "fp8", "weight_block_size": [32, 32]}})


def fp8_tensors(cfg, tensors):
    """Each projection weight of `tensors` as F8_E4M3 codes plus its F32 weight_scale_inv."""
    block = cfg["quantization_config"]["weight_block_size"]
    out = []
    for n, a in tensors:
        if n.endswith("_proj.weight") and a.ndim == 2:
            codes, scales = fp8_block_quantize(a, block)
            out.append((n, codes, "F8_E4M3"))
            out.append((n + "_scale_inv", scales, "F32"))
        else:
            out.append((n, a))
    return out


def ernie4_5_config():
    # ERNIE-4.5-0.3B-PT's config.json, small: head_dim 32 given (q width 128 against hidden 64),
    # rotary over the whole head in adjacent pairs, use_bias false, tied, rope_theta 500000,
    # eps 1e-5. No tokenizer (ERNIE's is a 103424-piece SentencePiece model): a 2048
    # vocabulary, bos 1, eos 2, pad 0 (the hub's ids).
    return dict(COMMON, **{
        "architectures": ["Ernie4_5ForCausalLM"], "model_type": "ernie4_5",
        "bos_token_id": 1, "eos_token_id": 2, "head_dim": 32, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 4096, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 0, "rms_norm_eps": 1e-5,
        "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "use_bias": False, "vocab_size": 2048,
    })


def ernie4_5_moe_config():
    # ERNIE-4.5-21B-A3B-PT's config.json, small: layer 0 dense (moe_layer_start_index 1, width
    # 128), layers 1-2 sparse with 8 experts of width 32 (moe_num_experts, moe_k 2) behind the
    # softmax router with its correction bias, 2 shared experts (64 wide: llama.cpp's converter
    # writes intermediate_size / num_key_value_heads = 64 for their width, which the hub's
    # 12288 / 4 = 2 x 1536 also satisfies), moe_norm_min 1e-12; otherwise ernie4_5's block.
    return dict(ernie4_5_config(), **{
        "architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe",
        "num_hidden_layers": 3, "moe_intermediate_size": 32, "moe_k": 2, "moe_layer_end_index": -1,
        "moe_layer_interval": 1, "moe_layer_start_index": 1, "moe_norm_min": 1e-12,
        "moe_num_experts": 8, "moe_num_shared_experts": 2, "output_router_logits": False,
        "router_aux_loss_coef": 0.001,
    })


def ernie4_5_moe_mlp(model, cfg):
    E, n_exp, Fm = cfg["hidden_size"], cfg["moe_num_experts"], cfg["moe_intermediate_size"]

    def mlp(i, p):
        if i < cfg["moe_layer_start_index"]:
            return dense_mlp(model, p, E, cfg["intermediate_size"])
        # Router std 0.4; the correction bias [1, experts] (one group) std 0.05 against softmax
        # probabilities of ~1/8, enough to change some choices.
        n = p + "moe_statics.e_score_correction_bias"
        t = [(p + "gate.weight", normalish(model, p + "gate.weight", (n_exp, E), 0.4)),
             (n, normalish(model, n, (1, n_exp), 0.05))]
        for e in range(n_exp):
            t += dense_mlp(model, f"{p}experts.{e}.", E, Fm)
        t += dense_mlp(model, p + "shared_experts.", E, Fm * cfg["moe_num_shared_experts"])
        return t

    return mlp


def seed_oss_config():
    # Seed-OSS-36B's config.json, small: q/k/v bias (attention_bias), no o_proj or MLP bias,
    # head_dim 32 given (q width 128 against hidden 64), untied, rope_theta 1e7, eps 1e-6; the
    # dropouts are training-only. No tokenizer (Seed-OSS's is 155136 ids): a 2048 vocabulary,
    # bos 0, eos 2, pad 1 (the hub's ids).
    return dict(COMMON, **{
        "architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss",
        "attention_bias": True, "attention_dropout": 0.1, "attention_out_bias": False,
        "bos_token_id": 0, "eos_token_id": 2, "head_dim": 32, "hidden_size": 64,
        "intermediate_size": 128, "max_position_embeddings": 4096, "mlp_bias": False,
        "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "pad_token_id": 1, "residual_dropout": 0.1, "rms_norm_eps": 1e-6, "rope_theta": 10000000.0,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 2048,
    })


def arcee_config():
    # AFM-4.5B's config.json (arcee-ai/AFM-4.5B), small: the Llama block with the ungated MLP
    # down(relu2(up x)) (hidden_act relu2; no gate_proj), GQA 4 / 2, head_dim 32, untied,
    # rope_theta 1e4 (the hub's YaRN scaling is left out: the rope is generic). No tokenizer
    # (AFM's is 128004 ids): a 2048 vocabulary, bos 1, eos 2.
    return dict(COMMON, **{
        "architectures": ["ArceeForCausalLM"], "model_type": "arcee",
        "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2, "head_dim": 32,
        "hidden_act": "relu2", "hidden_size": 64, "intermediate_size": 160,
        "max_position_embeddings": 4096, "mlp_bias": False, "num_attention_heads": 4,
        "num_hidden_layers": 3, "num_key_value_heads": 2, "rms_norm_eps": 1e-5,
        "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "vocab_size": 2048,
    })


def ungated_mlp(model, cfg):
    # Arcee's MLP: up_proj and down_proj only.
    E, F = cfg["hidden_size"], cfg["intermediate_size"]

    def mlp(i, p):
        return [(p + "up_proj.weight", normalish(model, p + "up_proj.weight", (F, E), STD_PROJ)),
                (p + "down_proj.weight", normalish(model, p + "down_proj.weight", (E, F), STD_OUT))]

    return mlp


def olmoe_config():
    # OLMoE-1B-7B-0924's config.json (-0125 and the -Instruct models have the same keys), small:
    # 4 experts top 2 in every layer (softmax over all experts, norm_topk_prob false: the two
    # weights are not renormalized), expert width 32 (intermediate_size is the expert width; no
    # dense MLP, no shared expert), clip_qkv null, no attention bias, MHA (4 / 4 heads as the hub
    # has 16 / 16: llama.cpp's olmoe asks for an n_embd-wide k_norm, so it has no GQA form),
    # rope_theta 1e4, eps 1e-5 (the converter writes 1e-5 whatever config.json says). No
    # tokenizer (OLMoE's is GPT-NeoX's 50280 ids): a 2048 vocabulary, no bos (as the hub), eos 2,
    # pad 1 (the hub's pad id).
    return dict(COMMON, **{
        "architectures": ["OlmoeForCausalLM"], "model_type": "olmoe",
        "attention_bias": False, "bos_token_id": None, "clip_qkv": None, "eos_token_id": 2,
        "hidden_size": 64, "intermediate_size": 32, "max_position_embeddings": 4096,
        "norm_topk_prob": False, "num_attention_heads": 4, "num_experts": 4,
        "num_experts_per_tok": 2, "num_hidden_layers": 3, "num_key_value_heads": 4,
        "output_router_logits": False, "pad_token_id": 1, "rms_norm_eps": 1e-5,
        "rope_scaling": None, "rope_theta": 10000.0, "router_aux_loss_coef": 0.01,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 2048,
    })


def granitemoe_config():
    # granite-3.1-1b-a400m-instruct's config.json (granite-3.1-3b-a800m and the 3.0 *-a*m models
    # have the same keys), small: 4 experts top 2 in every layer (transformers: top 2 of the
    # router logits, softmax over those two), expert width 32 (intermediate_size is the expert
    # width; no dense MLP, no shared expert), GQA 4 / 2, no attention bias, tied as the hub
    # models are. The four multipliers on the hub's side of 1 (the hub's: embedding 12, attention
    # 1/64, residual 0.22, logits 6), sized for this tied random model: only residual /
    # embedding matters to the residual stream (every norm removes a common scale), and at the
    # dense tiny granite's 0.22 / 12 the input token's own embedding dominates the last hidden
    # state and greedy repeats it at every step (measured: 24/24 on each prompt); at 0.875 /
    # 1.25 = 0.7 greedy moves on (0-3 repeats in 24). Attention 0.125 (not 1/sqrt(16)), logits
    # 1.5. rope_theta 1e4 (granite-3.0's; 3.1 has 1e7), eps 1e-6. No tokenizer (Granite's is
    # 49155 ids): a 2048 vocabulary, bos 1, eos 2 (the hub's 0 is all three), pad 0 (the hub's).
    return dict(COMMON, **{
        "architectures": ["GraniteMoeForCausalLM"], "model_type": "granitemoe",
        "attention_bias": False, "attention_multiplier": 0.125, "bos_token_id": 1,
        "embedding_multiplier": 1.25, "eos_token_id": 2, "hidden_size": 64,
        "intermediate_size": 32, "logits_scaling": 1.5, "max_position_embeddings": 4096,
        "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
        "num_key_value_heads": 2, "num_local_experts": 4, "output_router_logits": False,
        "pad_token_id": 0, "residual_multiplier": 0.875, "rms_norm_eps": 1e-6,
        "rope_scaling": None, "rope_theta": 10000.0, "router_aux_loss_coef": 0.01,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": 2048,
    })


def granitemoe_mlp(model, cfg):
    E, n_exp, F = cfg["hidden_size"], cfg["num_local_experts"], cfg["intermediate_size"]

    def mlp(i, p):
        p = p.replace(".mlp.", ".block_sparse_moe.")
        # The hub's JetMoE-style parallel experts: router.layer [E_n, H]; input_linear
        # [E_n, 2F, H], rows 0..F-1 the gate (silu) and F..2F-1 the up projection (transformers
        # chunks the product in two, gate first; llama.cpp's converter splits it the same way);
        # output_linear [E_n, H, F]. Router std 0.4 (as olmoe): a decisive top-2 choice.
        t = [(p + "router.layer.weight", normalish(model, p + "router.layer.weight", (n_exp, E), 0.4))]
        n = p + "input_linear.weight"
        t.append((n, normalish(model, n, (n_exp, 2 * F, E), STD_PROJ)))
        n = p + "output_linear.weight"
        t.append((n, normalish(model, n, (n_exp, E, F), STD_OUT)))
        return t

    return mlp


# ---------------------------------------------------------------- writers


def tokenizer_files(tok_dir, out):
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(tok_dir, f), os.path.join(out, f))


def gen_config(cfg, gen=None):
    bos, eos = gen or (cfg["bos_token_id"], cfg["eos_token_id"])
    return {"bos_token_id": bos, "eos_token_id": eos, "do_sample": False,
            "transformers_version": cfg["transformers_version"]}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_model(name, cfg, tensors, dtype, out_root, tok_dir, shards=1, gen=None):
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):  # a stale shard layout must not survive a rerun
        if f.endswith(".safetensors") or f.endswith(".safetensors.index.json"):
            os.remove(os.path.join(out, f))
    write_json(os.path.join(out, "config.json"), cfg)
    write_json(os.path.join(out, "generation_config.json"), gen_config(cfg, gen))
    if tok_dir:
        tokenizer_files(tok_dir, out)
    files = []
    if shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors, dtype)
        files.append("model.safetensors")
    else:
        # Split in tensor order at half the bytes, like HF's size-based sharding: one
        # layer's tensors then straddle two files, which a loader must handle.
        esize = ELEMENT_BYTES[dtype]
        total = sum(a.size * esize for _, a in tensors)
        parts, acc, cur = [[] for _ in range(shards)], 0, 0
        for n, a in tensors:
            nbytes = a.size * esize
            if acc >= total * (cur + 1) / shards and cur < shards - 1:
                cur += 1
            parts[cur].append((n, a))
            acc += nbytes
        weight_map = {}
        for k, part in enumerate(parts):
            fn = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
            write_safetensors(os.path.join(out, fn), part, dtype)
            files.append(fn)
            for n, _ in part:
                weight_map[n] = fn
        write_json(os.path.join(out, "model.safetensors.index.json"),
                   {"metadata": {"total_size": int(total)}, "weight_map": weight_map})
    for fn in files:
        print(f"{name}/{fn} sha256={sha256_file(os.path.join(out, fn))}")
    return out


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder (one subfolder per model)")
    ap.add_argument("--tokenizer-dir",
                    default=os.path.join(repo, "..", "shared", "fixtures", "qwen3-tokenizer"),
                    help="folder with the Qwen3 tokenizer.json and tokenizer_config.json")
    ap.add_argument("--models", default="qwen3,qwen3_moe,llama,qwen2,mistral,gemma3,gemma2,phi3,mixtral,"
                    "mistral3,qwen2_5_vl,qwen3_vl,smollm3,granite,olmo2,phi3_5,qwen2_yarn,"
                    "phi4_mini,glm4,cohere,cohere2,exaone4,gpt_oss,gpt_oss_plain,qwen2_moe,olmoe,"
                    "granitemoe,glm4_moe,minimax_m2,qwen3_fp8,ernie4_5,ernie4_5_moe,seed_oss,arcee,gemma,"
                    "hunyuan_dense,olmo3,stablelm,phi,starcoder2,deepseek_v2,deepseek_v3,glm4_moe_lite,"
                    "ministral3",
                    help="comma-separated subset to write")
    args = ap.parse_args()
    want = args.models.split(",")
    tok = args.tokenizer_dir
    if any(m in ("qwen3", "qwen3_moe", "qwen2") for m in want) and not os.path.isfile(os.path.join(tok, "tokenizer.json")):
        sys.exit(f"Qwen3 tokenizer not found in {tok} (pass --tokenizer-dir)")

    def dense(model, cfg):
        return lambda i, p: dense_mlp(model, p, cfg["hidden_size"], cfg["intermediate_size"])

    if "qwen3" in want:
        c = qwen3_config()
        write_model("qwen3", c, decoder("qwen3", c, dense("qwen3", c)), "BF16", args.out, tok)
    if "qwen3_fp8" in want:
        c = qwen3_fp8_config()
        write_model("qwen3_fp8", c, fp8_tensors(c, decoder("qwen3", c, dense("qwen3", c))), "BF16",
                    args.out, tok)
    if "qwen3_moe" in want:
        c = qwen3_moe_config()
        write_model("qwen3_moe", c, decoder("qwen3_moe", c, moe_mlp("qwen3_moe", c)), "F32",
                    args.out, tok, shards=2)
    if "llama" in want:
        c = llama_config()
        write_model("llama", c, decoder("llama", c, dense("llama", c)), "F16", args.out, None)
    if "mistral" in want:
        c = mistral_config()
        write_model("mistral", c, decoder("mistral", c, dense("mistral", c)), "F32", args.out,
                    None)
    if "gemma3" in want:
        c = gemma3_config()
        t = decoder("gemma3", c, dense("gemma3", c))
        write_model("gemma3", c, t, "F32", args.out, None)
        mm, t_mm = gemma3_mm(c, t)
        write_model("gemma3_mm", mm, t_mm, "F32", args.out, None)
    if "phi3" in want:
        c = phi3_config()
        t = fuse_phi3(decoder("phi3", c, dense("phi3", c)))
        write_model("phi3", c, t, "F32", args.out, None)
    if "phi3_5" in want:
        c = phi3_5_config()
        t = fuse_phi3(decoder("phi3_5", c, dense("phi3_5", c)))
        write_model("phi3_5", c, t, "F32", args.out, None)
    if "phi4_mini" in want:
        c = phi4_mini_config()
        t = fuse_phi3(decoder("phi4_mini", c, dense("phi4_mini", c)))
        write_model("phi4_mini", c, t, "F32", args.out, None)
    if "glm4" in want:
        c = glm4_config()
        write_model("glm4", c, glm4_tensors("glm4", c), "F32", args.out, None, gen=(1, [2, 3]))
    for name, cf in (("cohere", cohere_config), ("cohere2", cohere2_config)):
        if name in want:
            c = cf()
            write_model(name, c, cohere_tensors(name, c), "F32", args.out, None)
    if "exaone4" in want:
        c = exaone4_config()
        write_model("exaone4", c, output_norm_decoder("exaone4", c, False), "F32", args.out,
                    None)
    if "hunyuan_dense" in want:
        c = hunyuan_dense_config()
        write_model("hunyuan_dense", c,
                    hunyuan_dense_tensors(decoder("hunyuan_dense", c, dense("hunyuan_dense", c))),
                    "F32", args.out, None)
    if "gemma" in want:
        c = gemma_config()
        write_model("gemma", c, gemma_tensors(c, decoder("gemma", c, dense("gemma", c))), "F32",
                    args.out, None)
    if "gemma2" in want:
        c = gemma2_config()
        write_model("gemma2", c, decoder("gemma2", c, dense("gemma2", c)), "F32", args.out, None)
    if "mixtral" in want:
        c = mixtral_config()
        write_model("mixtral", c, decoder("mixtral", c, mixtral_moe("mixtral", c)), "F32",
                    args.out, None)
    for name, cf in (("gpt_oss", gpt_oss_config), ("gpt_oss_plain", gpt_oss_plain_config)):
        if name in want:
            c = cf()
            write_model(name, c, gpt_oss_tensors(c, name == "gpt_oss_plain"), "BF16", args.out,
                        None, gen=(1, 2))
    if "qwen2_moe" in want:
        c = qwen2_moe_config()
        write_model("qwen2_moe", c, decoder("qwen2_moe", c, qwen2_moe_mlp("qwen2_moe", c)),
                    "BF16", args.out, None)
    if "olmoe" in want:
        c = olmoe_config()
        write_model("olmoe", c, decoder("olmoe", c, moe_mlp("olmoe", c, "intermediate_size", 0.4)), "BF16", args.out,
                    None, gen=(None, 2))
    if "granitemoe" in want:
        c = granitemoe_config()
        write_model("granitemoe", c, decoder("granitemoe", c, granitemoe_mlp("granitemoe", c)),
                    "BF16", args.out, None)
    if "glm4_moe" in want:
        c = glm4_moe_config()
        write_model("glm4_moe", c, glm4_moe_tensors("glm4_moe", c), "BF16", args.out, None,
                    gen=(None, [2, 3]))
    if "minimax_m2" in want:
        c = minimax_m2_config()
        write_model("minimax_m2", c, decoder("minimax_m2", c, minimax_m2_mlp("minimax_m2", c)),
                    "BF16", args.out, None)
    if "ernie4_5" in want:
        c = ernie4_5_config()
        write_model("ernie4_5", c, decoder("ernie4_5", c, dense("ernie4_5", c)), "BF16", args.out,
                    None)
    if "ernie4_5_moe" in want:
        c = ernie4_5_moe_config()
        write_model("ernie4_5_moe", c,
                    decoder("ernie4_5_moe", c, ernie4_5_moe_mlp("ernie4_5_moe", c)), "BF16",
                    args.out, None)
    if "arcee" in want:
        c = arcee_config()
        write_model("arcee", c, decoder("arcee", c, ungated_mlp("arcee", c)), "BF16", args.out, None)
    if "seed_oss" in want:
        c = seed_oss_config()
        write_model("seed_oss", c, decoder("seed_oss", c, dense("seed_oss", c)), "BF16", args.out,
                    None)
    if "smollm3" in want:
        c = smollm3_config()
        write_model("smollm3", c, decoder("smollm3", c, dense("smollm3", c)), "F32", args.out,
                    None)
    if "granite" in want:
        c = granite_config()
        write_model("granite", c, decoder("granite", c, dense("granite", c)), "F32", args.out,
                    None)
    if "stablelm" in want:
        c = stablelm_config()
        write_model("stablelm", c, stablelm_tensors("stablelm", c), "F32", args.out, None)
    if "ministral3" in want:
        c = ministral3_config()
        write_model("ministral3", c, decoder("ministral3", c, dense("ministral3", c)), "F32",
                    args.out, None)
    for name, make in (("phi", phi_config), ("starcoder2", starcoder2_config)):
        if name in want:
            c = make()
            write_model(name, c, biased_lm_tensors(name, c), "F32", args.out, None)
    for name, make in (("deepseek_v2", deepseek_v2_config), ("deepseek_v3", deepseek_v3_config),
                       ("glm4_moe_lite", glm4_moe_lite_config)):
        if name in want:
            c = make()
            write_model(name, c, deepseek_tensors(name, c), "F32", args.out, None)
    if "olmo3" in want:
        c = olmo3_config()
        write_model("olmo3", c, output_norm_decoder("olmo3", c, True), "F32", args.out, None,
                    gen=(1, 2))
    if "olmo2" in want:
        c = olmo2_config()
        write_model("olmo2", c, output_norm_decoder("olmo2", c, True), "F32", args.out, None,
                    gen=(1, 2))
    if "mistral3" in want:
        c = mistral3_config()
        tc = dict(c["text_config"], tie_word_embeddings=False)
        t = decoder("mistral3", tc, dense("mistral3", tc))
        t = [("language_model." + n if n.startswith("lm_head") else
              "language_model.model." + n[len("model."):], a) for n, a in t]
        t.append(vl_vision_tensor("mistral3", "vision_tower.patch_conv.weight", (16, 3, 14, 14)))
        write_model("mistral3", c, t, "F32", args.out, None, gen=(1, 2))
    if "qwen2_5_vl" in want:
        c = qwen2_5_vl_config()
        t = decoder("qwen2_5_vl", c, dense("qwen2_5_vl", c))
        t.append(vl_vision_tensor("qwen2_5_vl", "visual.patch_embed.proj.weight"))
        write_model("qwen2_5_vl", c, t, "F32", args.out, None)
    if "qwen3_vl" in want:
        c = qwen3_vl_config()
        tc = dict(c["text_config"], tie_word_embeddings=False)
        t = decoder("qwen3_vl", tc, dense("qwen3_vl", tc))
        t = [(n if n.startswith("lm_head") else "model.language_model." + n[len("model."):], a)
             for n, a in t]
        t.append(vl_vision_tensor("qwen3_vl", "model.visual.patch_embed.proj.weight"))
        write_model("qwen3_vl", c, t, "F32", args.out, None, gen=(1, 2))
    if "qwen2_yarn" in want:
        c = qwen2_yarn_config()
        write_model("qwen2_yarn", c, decoder("qwen2_yarn", c, dense("qwen2_yarn", c)), "F32",
                    args.out, None)
    if "qwen2" in want:
        c = qwen2_config()
        write_model("qwen2", c, decoder("qwen2", c, dense("qwen2", c)), "F32", args.out, tok)


if __name__ == "__main__":
    main()
