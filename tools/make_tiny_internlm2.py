#!/usr/bin/env python3
"""A tiny random InternLM2 in both forms, and llama.cpp's greedy goldens for it.

Owns tests/golden/internlm2/:
  hf/config.json, hf/model.safetensors  Hugging Face layout: model.tok_embeddings, fused
                                        attention.wqkv in InternLM2's grouped order (per kv head:
                                        q_per_kv query heads, one k head, one v head), wo,
                                        feed_forward.w1/w2/w3, attention_norm, ffn_norm, output.
  tiny_internlm2.gguf                   the same weights as llama.cpp's converter writes them:
                                        GGUF architecture `internlm2`, wqkv split into
                                        attn_q/attn_k/attn_v with q and k rows permuted for
                                        llama.cpp's interleaved (NORM) RoPE; a 272-token
                                        byte-level BPE vocabulary so llama.cpp can load it.
  greedy.json                           (--goldens) llama.cpp's 24 greedy steps per prompt.

Everything is F32 and deterministic (numpy PCG64 with fixed seeds). The model files need only
numpy and the `gguf` package; --goldens needs llama-cpp-python (never in CI: the goldens are
committed with the command that made them):

  python3 tools/make_tiny_internlm2.py --out tests/golden/internlm2 --goldens
"""
import argparse
import json
import os
import struct

import numpy as np

V, E, L, H, KV, F = 272, 64, 2, 4, 2, 96
D = E // H
EPS, THETA, CTX = 1e-5, 10000.0, 512
BOS, EOS = 256, 257
N_STEPS = 24


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (a format fact of byte-level BPE)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def vocab():
    b2u = bytes_to_unicode()
    tokens = [b2u[b] for b in range(256)] + ["<s>", "</s>"]
    types = [1] * 256 + [3, 3]  # normal, control
    pairs = [("Ġ", "t"), ("h", "e"), ("i", "n"), ("e", "r"), ("a", "n"), ("Ġ", "a"), ("o", "n"),
             ("r", "e"), ("Ġt", "he"), ("e", "n"), ("a", "t"), ("o", "r"), ("e", "s"), ("Ġ", "s")]
    merges = []
    for a, b in pairs:
        merges.append(f"{a} {b}")
        tokens.append(a + b)
        types.append(1)
    assert len(tokens) == V, len(tokens)
    return tokens, types, merges


def weights():
    rng = np.random.Generator(np.random.PCG64(20260530))

    def w(*shape, std=0.2):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    t = {"model.tok_embeddings.weight": w(V, E, std=0.4),
         "model.norm.weight": (1 + w(E, std=0.1)),
         "output.weight": w(V, E, std=0.4)}
    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "attention_norm.weight"] = 1 + w(E, std=0.1)
        t[p + "attention.wqkv.weight"] = w((H + 2 * KV) * D, E)
        t[p + "attention.wo.weight"] = w(E, E)
        t[p + "ffn_norm.weight"] = 1 + w(E, std=0.1)
        t[p + "feed_forward.w1.weight"] = w(F, E)
        t[p + "feed_forward.w3.weight"] = w(F, E)
        t[p + "feed_forward.w2.weight"] = w(E, F)
    return t


def write_hf(out, t):
    os.makedirs(out, exist_ok=True)
    cfg = {"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2",
           "vocab_size": V, "hidden_size": E, "intermediate_size": F, "num_hidden_layers": L,
           "num_attention_heads": H, "num_key_value_heads": KV, "rms_norm_eps": EPS,
           "rope_theta": THETA, "max_position_embeddings": CTX, "bias": False,
           "tie_word_embeddings": False, "bos_token_id": BOS, "eos_token_id": EOS,
           "torch_dtype": "float32", "rope_scaling": None}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
        f.write("\n")
    header, off = {}, 0
    names = sorted(t)
    for n in names:
        nb = t[n].nbytes
        header[n] = {"dtype": "F32", "shape": list(t[n].shape), "data_offsets": [off, off + nb]}
        off += nb
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * (-len(hb) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb)
        for n in names:
            f.write(np.ascontiguousarray(t[n]).tobytes())


def permute(w, n_head):
    """llama.cpp's converter: HF rotate-half q/k rows -> its interleaved-pair order."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2) \
        .reshape(w.shape)


def write_gguf(path, t):
    import gguf
    tokens, types, merges = vocab()
    g = gguf.GGUFWriter(path, "internlm2")
    g.add_name("tiny-internlm2")
    g.add_context_length(CTX)
    g.add_embedding_length(E)
    g.add_block_count(L)
    g.add_feed_forward_length(F)
    g.add_head_count(H)
    g.add_head_count_kv(KV)
    g.add_layer_norm_rms_eps(EPS)
    g.add_rope_freq_base(THETA)
    g.add_file_type(gguf.LlamaFileType.ALL_F32)
    g.add_tokenizer_model("gpt2")
    g.add_tokenizer_pre("default")
    g.add_token_list(tokens)
    g.add_token_types(types)
    g.add_token_merges(merges)
    g.add_bos_token_id(BOS)
    g.add_eos_token_id(EOS)
    g.add_add_bos_token(False)
    g.add_tensor("token_embd.weight", t["model.tok_embeddings.weight"])
    g.add_tensor("output_norm.weight", t["model.norm.weight"])
    g.add_tensor("output.weight", t["output.weight"])
    q_per_kv = H // KV
    for i in range(L):
        p = f"model.layers.{i}."
        qkv = t[p + "attention.wqkv.weight"].reshape(KV, q_per_kv + 2, D, E)
        q = qkv[:, :q_per_kv].reshape(-1, E)
        k = qkv[:, -2].reshape(-1, E)
        v = qkv[:, -1].reshape(-1, E)
        b = f"blk.{i}."
        g.add_tensor(b + "attn_norm.weight", t[p + "attention_norm.weight"])
        g.add_tensor(b + "attn_q.weight", np.ascontiguousarray(permute(q, H)))
        g.add_tensor(b + "attn_k.weight", np.ascontiguousarray(permute(k, KV)))
        g.add_tensor(b + "attn_v.weight", np.ascontiguousarray(v))
        g.add_tensor(b + "attn_output.weight", t[p + "attention.wo.weight"])
        g.add_tensor(b + "ffn_norm.weight", t[p + "ffn_norm.weight"])
        g.add_tensor(b + "ffn_gate.weight", t[p + "feed_forward.w1.weight"])
        g.add_tensor(b + "ffn_up.weight", t[p + "feed_forward.w3.weight"])
        g.add_tensor(b + "ffn_down.weight", t[p + "feed_forward.w2.weight"])
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()


def prompts():
    rng = np.random.Generator(np.random.PCG64(7))
    out = [("short", [BOS, 72, 101, 108, 108, 111]), ("single", [65])]
    for n in (5, 17, 40, 90):
        out.append((f"random_{n}", [int(x) for x in rng.integers(0, V, n)]))
    return out


def llamacpp_greedy(llm, ids, n_vocab, n_steps):
    """llama.cpp's greedy continuation of ids (llama-cpp-python's Llama): per step the chosen
    id and the two best ids and logits."""
    import llama_cpp
    llm.reset()
    llm.eval(ids)
    steps = []
    for _ in range(n_steps):
        ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        row = np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy()
        top = np.argsort(-row, kind="stable")[:2]
        steps.append({"id": int(top[0]), "top2_ids": [int(top[0]), int(top[1])],
                      "top2_logits": [float(row[top[0]]), float(row[top[1]])]})
        llm.eval([int(top[0])])
    return steps


def write_goldens(gguf_path, path):
    import llama_cpp
    llm = llama_cpp.Llama(model_path=gguf_path, n_ctx=CTX, n_batch=CTX, n_ubatch=CTX,
                          n_threads=2, n_threads_batch=2, seed=0, verbose=False)
    assert llm.n_vocab() == V
    entries = []
    for name, ids in prompts():
        steps = llamacpp_greedy(llm, ids, V, N_STEPS)
        gaps = [s["top2_logits"][0] - s["top2_logits"][1] for s in steps]
        print(f"{name}: {len(ids)} ids, min gap {min(gaps):.4f}")
        entries.append({"name": name, "prompt_ids": ids, "steps": steps})
    golden = {"model_file": os.path.basename(gguf_path),
              "reference": {"llama_cpp_python": llama_cpp.__version__, "n_threads": 2,
                            "n_ctx": CTX, "n_batch": CTX},
              "n_steps": N_STEPS,
              "command": "python3 tools/make_tiny_internlm2.py --out tests/golden/internlm2 "
                         "--goldens",
              "prompts": entries}
    with open(path, "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--goldens", action="store_true", help="also run llama.cpp (greedy.json)")
    a = ap.parse_args()
    t = weights()
    write_hf(os.path.join(a.out, "hf"), t)
    gguf_path = os.path.join(a.out, "tiny_internlm2.gguf")
    write_gguf(gguf_path, t)
    if a.goldens:
        write_goldens(gguf_path, os.path.join(a.out, "greedy.json"))


if __name__ == "__main__":
    main()
