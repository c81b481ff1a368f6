#!/usr/bin/env python3
"""The tiny Gemma / Gemma 2 / Gemma 3 of tools/make_tiny_models.py (Hugging Face folders) as the
GGUF llama.cpp's converter writes, and llama.cpp's greedy goldens for them.

  python3 tools/make_gemma_gguf.py --hf TINY/gemma3 --out TINY/gemma3.gguf [--goldens]
  python3 tools/make_gemma_gguf.py --hf TINY/gemma2 --out TINY/gemma2.gguf [--goldens]
  python3 tools/make_gemma_gguf.py --hf TINY/gemma --out TINY/gemma.gguf [--goldens]

gemma: Llama's tensor names (post_attention_layernorm -> ffn_norm), the norms' 1 added back,
tied, no window or soft-capping keys. The GGUF: architecture `gemma2` / `gemma3` (from config.json's model_type); RMSNorm weights
with Gemma's 1 added back (Hugging Face stores w - 1); pre_feedforward_layernorm -> ffn_norm,
post_attention_layernorm -> post_attention_norm, post_feedforward_layernorm -> post_ffw_norm;
q/k rows as stored (Gemma's RoPE is NEOX in llama.cpp); the sliding window and its per-layer
pattern (a flag per layer); gemma3: q/k norms, the local rope base, linear rope scaling;
gemma2: the two soft-capping values, and no output.weight (llama.cpp's gemma2 always ties
the output to the embeddings, so the twin of the untied tiny model is a tied variant, its embeddings scaled by 1/4 so that
the greedy path does not repeat the input token); a 2048-token byte-level vocabulary (llama.cpp needs one
to load; the tests feed ids). Deterministic; needs numpy and `gguf`. Without --goldens it checks
the file against the sha256 in tests/golden/<arch>/greedy.json, so CI regenerates exactly what
llama.cpp ran on. --goldens (llama-cpp-python 0.3.36, never in CI) writes that file: 24 greedy
steps per prompt with the top-2 logits.
"""
import argparse
import hashlib
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tekken_tokenizer import byte_chars  # noqa: E402
from make_tiny_internlm2 import llamacpp_greedy  # noqa: E402

def golden_path(arch):
    return os.path.join(os.path.dirname(HERE), "tests", "golden", arch, "greedy.json")


def arch_of(hf):
    return {"gemma": "gemma", "gemma2": "gemma2", "gemma3_text": "gemma3"}[
        json.load(open(os.path.join(hf, "config.json")))["model_type"]]
N_STEPS = 24


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        if info["dtype"] == "BF16":  # widened to F32: exact
            w = (np.frombuffer(data[a:b], dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "U8":  # packed codes / exponents, as they are
            w = np.frombuffer(data[a:b], dtype=np.uint8)
        else:
            assert info["dtype"] == "F32", (name, info["dtype"])
            w = np.frombuffer(data[a:b], dtype="<f4")
        out[name] = w.reshape(info["shape"])
    return out


def vocab(n):
    bc = byte_chars()
    tokens = ["<pad>", "<eos>", "<bos>"] + [bc[b] for b in range(256)]
    types = [3, 3, 3] + [1] * 256
    merges = []
    for a, b in [("Ġ", "t"), ("h", "e"), ("i", "n"), ("e", "r"), ("a", "n"), ("Ġ", "a")]:
        merges.append(f"{a} {b}")
        tokens.append(a + b)
        types.append(1)
    while len(tokens) < n:
        tokens.append(f"<unused{len(tokens)}>")
        types.append(3)
    return tokens, types, merges


def write_gguf(hf, out):
    import gguf
    cfg = json.load(open(os.path.join(hf, "config.json")))
    t = read_safetensors(os.path.join(hf, "model.safetensors"))
    L, E = cfg["num_hidden_layers"], cfg["hidden_size"]
    one = np.float32(1.0)
    arch = arch_of(hf)
    g = gguf.GGUFWriter(out, arch)
    g.add_name("tiny-" + arch)
    g.add_context_length(cfg["max_position_embeddings"])
    g.add_embedding_length(E)
    g.add_block_count(L)
    g.add_feed_forward_length(cfg["intermediate_size"])
    g.add_head_count(cfg["num_attention_heads"])
    g.add_head_count_kv(cfg["num_key_value_heads"])
    g.add_key_length(cfg["head_dim"])
    g.add_value_length(cfg["head_dim"])
    g.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    g.add_rope_freq_base(cfg["rope_theta"])
    if arch == "gemma3":
        g.add_float32("gemma3.rope.freq_base_swa", cfg["rope_local_base_freq"])
        g.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        g.add_rope_scaling_factor(cfg["rope_scaling"]["factor"])
    elif arch == "gemma2":
        g.add_float32("gemma2.attn_logit_softcapping", cfg["attn_logit_softcapping"])
        g.add_float32("gemma2.final_logit_softcapping", cfg["final_logit_softcapping"])
    if arch != "gemma":  # Gemma (1) has no window
        g.add_sliding_window(cfg["sliding_window"])
        n = cfg.get("sliding_window_pattern", 2)
        g.add_array(f"{arch}.attention.sliding_window_pattern",
                    [bool((i + 1) % n) for i in range(L)])
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    add_vocab(g, cfg, *vocab(cfg["vocab_size"]), pad=True)
    embed = t["model.embed_tokens.weight"]
    if arch == "gemma2":  # tied: smaller embeddings keep the input token from dominating
        embed = embed * np.float32(0.25)
    g.add_tensor("token_embd.weight", embed)
    g.add_tensor("output_norm.weight", t["model.norm.weight"] + one)
    # llama.cpp's gemma2 always ties the output to the embeddings: its GGUF twin of the
    # (untied) tiny model is the tied model.
    if not cfg["tie_word_embeddings"] and arch != "gemma2":
        g.add_tensor("output.weight", t["lm_head.weight"])
    names = {"input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm",
             "pre_feedforward_layernorm": "ffn_norm", "post_feedforward_layernorm": "post_ffw_norm",
             "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    if arch in ("gemma", "gemma2"):  # no q/k norms
        del names["self_attn.q_norm"], names["self_attn.k_norm"]
    if arch == "gemma":  # Llama's two norms: post_attention_layernorm is the MLP's input norm
        del names["pre_feedforward_layernorm"], names["post_feedforward_layernorm"]
        names["post_attention_layernorm"] = "ffn_norm"
    for i in range(L):
        for hf_name, gg in names.items():
            w = t[f"model.layers.{i}.{hf_name}.weight"]
            if "norm" in hf_name:
                w = w + one
            g.add_tensor(f"blk.{i}.{gg}.weight", np.ascontiguousarray(w))
    finish(g)


def add_vocab(g, cfg, tokens, types, merges, pad=False):
    """The byte-level vocabulary keys of a twin: ids from config.json, no BOS added."""
    g.add_tokenizer_model("gpt2")
    g.add_tokenizer_pre("default")
    g.add_token_list(tokens)
    g.add_token_types(types)
    g.add_token_merges(merges)
    if cfg["bos_token_id"] is not None:
        g.add_bos_token_id(cfg["bos_token_id"])
    g.add_eos_token_id(cfg["eos_token_id"])
    if pad:
        g.add_pad_token_id(cfg["pad_token_id"])
    g.add_add_bos_token(False)


def finish(g):
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# Twins whose goldens run llama.cpp with an F32 KV cache (the C++ gate's) instead of its F16
# default: the tiny gpt-oss's near-tied router choices turn the F16 rounding into 0.1-0.2 logit
# moves (llama.cpp against itself), above the gate's 0.05; on the tiny Qwen2-MoE the F16 cache
# moves llama.cpp's greedy top-2 logits by up to 0.044 from transformers' (0.054 over the prompt
# positions; 5e-5 with F32), too near the gate's 0.05; on the tiny OLMoE it moves them by up to
# 0.044 (3.6e-5 with F32) and flips a 0.008 greedy near-tie at step 10 of prompt 0; on the tiny
# GraniteMoE it moves the prompt logits by up to 0.045 (2.5e-5 with F32).
F32_KV = ("gpt_oss", "qwen2_moe", "olmoe", "granitemoe", "glm4_moe", "minimax_m2", "ernie4_5", "ernie4_5_moe",
          "seed_oss", "arcee", "hunyuan_dense")


LONG_N_CTX = 1024


def write_twin_goldens(gguf_path, arch, tool):
    """llama.cpp's greedy steps on a tiny model's GGUF twin, for the id prompts of
    tests/golden/hf/<arch>, into tests/golden/<arch>/greedy.json (with the GGUF's sha256)."""
    import llama_cpp
    idx = json.load(open(os.path.join(os.path.dirname(HERE), "tests", "golden", "hf", arch,
                                      "index.json")))
    V = idx["vocab_size"]
    kv = {"type_k": 0, "type_v": 0} if arch in F32_KV else {}  # GGML_TYPE_F32
    llm = llama_cpp.Llama(model_path=gguf_path, n_ctx=512, n_batch=512, n_ubatch=512,
                          n_threads=2, n_threads_batch=2, seed=0, verbose=False, **kv)
    assert llm.n_vocab() == V
    entries = []
    for k, p in enumerate(idx["prompts"]):
        ids = p["prompt_ids"]
        steps = llamacpp_greedy(llm, ids, V, N_STEPS)
        gaps = [s["top2_logits"][0] - s["top2_logits"][1] for s in steps]
        agree = sum(1 for a, b in zip(steps, p["greedy_ids"]) if a["id"] == b)
        print(f"prompt{k}: {len(ids)} ids, min gap {min(gaps):.4f}, "
              f"{agree}/{N_STEPS} steps equal to transformers' greedy")
        entries.append({"name": f"prompt{k}", "prompt_ids": ids, "steps": steps})
    # longrope past its original length (tests/golden/hf/<arch>'s long_prompts): llama.cpp with
    # a context past it (LONG_N_CTX), where it rotates with rope_factors_long.
    long_entries = []
    if idx.get("long_prompts"):
        del llm
        llm = llama_cpp.Llama(model_path=gguf_path, n_ctx=LONG_N_CTX, n_batch=LONG_N_CTX,
                              n_ubatch=LONG_N_CTX, n_threads=2, n_threads_batch=2, seed=0,
                              verbose=False, **kv)
        for k, p in enumerate(idx["long_prompts"]):
            ids = p["prompt_ids"]
            steps = llamacpp_greedy(llm, ids, V, N_STEPS)
            agree = sum(1 for a, b in zip(steps, p["greedy_ids"]) if a["id"] == b)
            print(f"long{k}: {len(ids)} ids at n_ctx {LONG_N_CTX}, "
                  f"{agree}/{N_STEPS} steps equal to transformers' greedy")
            long_entries.append({"name": f"long{k}", "n_ctx": LONG_N_CTX, "prompt_ids": ids,
                                 "steps": steps})
    golden = {"model_file": arch + ".gguf", "gguf_sha256": sha256(gguf_path),
              "reference": dict({"llama_cpp_python": llama_cpp.__version__, "n_threads": 2,
                                 "n_ctx": 512, "n_batch": 512},
                                **({"kv_cache": "f32"} if kv else {})),
              "n_steps": N_STEPS,
              "command": "python3 tools/make_tiny_models.py --out DIR && "
                         f"python3 tools/{tool} --hf DIR/{arch} --out DIR/{arch}.gguf --goldens",
              "prompts": entries}
    if long_entries:
        golden["long_prompts"] = long_entries
    os.makedirs(os.path.dirname(golden_path(arch)), exist_ok=True)
    with open(golden_path(arch), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


def twin_main(doc, write, name_of, tool, hf_help):
    """A twin tool's command line: write --out from --hf; with --goldens run llama.cpp on it and
    write tests/golden/<name>/greedy.json, else check it against the sha256 recorded there."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hf", required=True, help=hf_help)
    ap.add_argument("--out", required=True)
    ap.add_argument("--goldens", action="store_true", help="run llama.cpp, write greedy.json")
    a = ap.parse_args()
    write(a.hf, a.out)
    name = name_of(a.hf)
    if a.goldens:
        write_twin_goldens(a.out, name, tool)
    elif os.path.exists(golden_path(name)):
        want = json.load(open(golden_path(name)))["gguf_sha256"]
        if sha256(a.out) != want:
            sys.exit(f"{a.out}: sha256 {sha256(a.out)}, the goldens were made from {want}")
    print(a.out)


if __name__ == "__main__":
    twin_main(__doc__, write_gguf, arch_of, "make_gemma_gguf.py",
              "the tiny gemma, gemma2 or gemma3 folder (make_tiny_models.py)")
