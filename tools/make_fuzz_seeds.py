#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (fuzz/corpus/<target>/) from the project's real files and
goldens, so each fuzzer starts from inputs that reach deep into its parser:

  request          request bodies of every endpoint (the shapes the e2e tests send;
                   first byte: 0 completions, 1 chat, 2 tokenize, 3 detokenize, 4 responses,
                   5 messages)
  chat_template    every golden template (real Qwen3 / Llama 3 / Mistral / SmolLM2 / ChatML and
                   the feature snippets) with one of its golden contexts after a NUL byte
  tokenizer_json   the real Qwen3 tokenizer.json cut down to its first 400 tokens and the merges
                   among them (all other fields as in the real file) + its tokenizer_config.json,
                   and Llama 2's first 400 SentencePiece pieces as tokenizer.json (both forms)
  bpe              the golden tokenizer strings (Qwen3 and SmolLM2 sets)
  spm              the SentencePiece golden strings (Llama 2's vocabulary)
  gguf             small GGUF files written by the gguf package with SmolLM2's real metadata
                   (vocabulary cut down) and tiny tensors of every supported type
  safetensors      tiny checkpoints' headers (a small tensor each) and config.json variants

  python3 tools/make_fuzz_seeds.py            # rewrites fuzz/corpus/
  python3 tools/make_fuzz_seeds.py spm        # only these targets' corpora
"""
import hashlib
import json
import os
import struct
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QWEN = os.path.join(REPO, "..", "shared", "fixtures", "qwen3-tokenizer")
OUT = os.path.join(REPO, "fuzz", "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def requests():
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    tool = {"type": "function", "function": {"name": "get_weather", "description": "w",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}
    bodies = [
        (0, {"model": "m", "prompt": "Hello", "max_tokens": 8, "temperature": 0.7, "top_p": 0.9,
             "stop": ["\n"], "logprobs": 2, "echo": False, "seed": 1, "stream": True,
             "stream_options": {"include_usage": True}}),
        (0, {"prompt": [[1, 2, 3], [4, 5]], "n": 2, "presence_penalty": 0.5, "ignore_eos": True}),
        (0, {"prompt": ["a", "b"], "min_tokens": 2, "stop_token_ids": [2], "top_k": 5}),
        (1, {"model": "m", "messages": msgs, "max_completion_tokens": 4, "logprobs": True,
             "top_logprobs": 3, "chat_template_kwargs": {"enable_thinking": False}}),
        (1, {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
             "tools": [tool], "tool_choice": "auto", "add_generation_prompt": False}),
        (1, {"messages": msgs + [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                          "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], "tools": [tool]}),
        (2, {"prompt": "hello", "add_special_tokens": False, "return_token_strs": True}),
        (2, {"messages": msgs, "add_generation_prompt": True}),
        (3, {"tokens": [1, 2, 3, 151643]}),
        (4, {"model": "m", "input": "Hi", "instructions": "Be brief.", "max_output_tokens": 8,
             "stream": True, "text": {"format": {"type": "json_object"}}}),
        (4, {"input": [{"role": "user", "content": [{"type": "input_text", "text": "x"}]},
                       {"type": "reasoning", "summary": [],
                        "content": [{"type": "reasoning_text", "text": "r"}]},
                       {"type": "function_call", "call_id": "c1", "name": "get_weather",
                        "arguments": "{\"city\": \"Paris\"}"},
                       {"type": "function_call_output", "call_id": "c1", "output": "sunny"}],
             "tools": [dict(type="function", **tool["function"])],
             "tool_choice": {"type": "function", "name": "get_weather"},
             "reasoning": {"effort": "low"}, "store": False}),
        (5, {"model": "m", "max_tokens": 16, "system": "Be brief.", "stream": True,
             "messages": [{"role": "user", "content": "Hi"}], "stop_sequences": ["\n"],
             "thinking": {"type": "disabled"}}),
        (5, {"max_tokens": 64, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "P"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                          "content": "sunny"}]}],
             "tools": [{"name": "get_weather", "input_schema": tool["function"]["parameters"]}],
             "tool_choice": {"type": "tool", "name": "get_weather"}}),
        # /v1/embeddings (first byte 240 and above; 248 and above: /pooling).
        (240, {"model": "m", "input": ["a", "b"], "encoding_format": "base64",
               "embed_dtype": "bfloat16", "endianness": "big", "dimensions": 8}),
        (241, {"input": [[1, 2], [3]], "truncate_prompt_tokens": 4, "truncation_side": "right",
               "use_activation": False, "user": "u"}),
        (242, {"messages": [[{"role": "user", "content": "a"}],
                            [{"role": "system", "content": "b"}]],
               "chat_template_kwargs": {"enable_thinking": False}}),
        (248, {"input": "x", "task": "embed", "use_activation": True}),
        # /score (224-229), /rerank (230-235), /classify (236-239).
        (224, {"model": "m", "queries": "q", "documents": ["a", "b"], "max_tokens_per_doc": 4,
               "truncate_prompt_tokens": 8, "use_activation": True}),
        (225, {"text_1": ["q1", "q2"], "text_2": ["a", "b"], "instruction": "i",
               "chat_template_kwargs": {"instruction": "j"}}),
        (230, {"query": "q", "documents": ["a", "b", "c"], "top_n": 2, "priority": 1}),
        (236, {"input": ["a", "b"], "use_activation": False, "add_special_tokens": True}),
    ]
    for ep, b in bodies:
        put("request", bytes([ep]) + json.dumps(b).encode())


def templates():
    gdir = os.path.join(REPO, "tests", "golden", "chat_template")
    for name in sorted(os.listdir(gdir)):
        if not name.endswith(".json"):
            continue
        g = json.load(open(os.path.join(gdir, name)))
        if "template" in g:
            for c in g["cases"][:3]:
                put("chat_template", g["template"].encode() + b"\0" + json.dumps(c["context"]).encode())
        else:
            for c in g["cases"]:
                put("chat_template",
                    c["template"].encode() + b"\0" + json.dumps(c.get("context", {})).encode())


def tokenizer_json():
    t = json.load(open(os.path.join(QWEN, "tokenizer.json")))
    cfg = open(os.path.join(QWEN, "tokenizer_config.json"), "rb").read()
    keep = {k: v for k, v in t["model"]["vocab"].items() if v < 400}
    merges = []
    for m in t["model"]["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        if a in keep and b in keep and a + b in keep:
            merges.append(m)
    t["model"]["vocab"] = keep
    t["model"]["merges"] = merges
    t["added_tokens"] = t["added_tokens"][:4]
    for at in t["added_tokens"]:
        at["id"] = 400 + t["added_tokens"].index(at)
    small = json.dumps(t, ensure_ascii=False).encode()
    put("tokenizer_json", small + b"\0" + cfg)
    put("tokenizer_json", small)
    # SentencePiece-style (BPE with byte_fallback): Llama 2's first 400 pieces (control
    # tokens, the 256 byte tokens, the first merges) in both forms of
    # tools/make_spm_tokenizer_json.py.
    sys.path.insert(0, os.path.join(REPO, "tools"))
    import make_spm_tokenizer_json as tj
    vocab = os.path.expanduser(os.environ.get(
        "VLLM_SPM_VOCAB", "~/.cache/vllm-cpp/vocab/ggml-vocab-llama-spm.gguf"))
    tokens, scores, types = tj.read_vocab(vocab)
    for form in ("legacy", "metaspace"):
        t = tj.tokenizer_json(tokens[:400], scores[:400], types[:400], form)
        put("tokenizer_json", json.dumps(t, ensure_ascii=False).encode())


def bpe():
    for name in ("qwen3.jsonl", "smollm2.jsonl"):
        with open(os.path.join(REPO, "tests", "golden", "tokenizer", name)) as f:
            for i, line in enumerate(f):
                if i % 8 == 0:
                    put("bpe", json.loads(line)["text"])


def spm():
    with open(os.path.join(REPO, "tests", "golden", "tokenizer", "llama_spm.jsonl")) as f:
        for i, line in enumerate(f):
            if i % 8 == 0:
                put("spm", json.loads(line)["text"])


SMOLLM2 = os.path.expanduser(os.environ.get(
    "VLLM_TEST_GGUF", "~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf"))


def smollm2_vocab(n):
    """SmolLM2's first n tokens, their types and the merges among them, its chat template."""
    import gguf
    r = gguf.GGUFReader(SMOLLM2)

    def strings(key):
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    tokens = strings("tokenizer.ggml.tokens")[:n]
    f = r.fields["tokenizer.ggml.token_type"]
    types = [int(f.parts[i][0]) for i in f.data][:n]
    keep = set(tokens)
    merges = [m for m in strings("tokenizer.ggml.merges")
              if m.split(" ", 1)[0] in keep and m.split(" ", 1)[-1] in keep
              and m.replace(" ", "", 1) in keep]
    f = r.fields["tokenizer.chat_template"]
    tmpl = bytes(f.parts[f.data[0]]).decode()
    return tokens, types, merges, tmpl


def gguf_files():
    """Tiny Llama-architecture GGUFs (hidden 32, 1 layer, 128 tokens of SmolLM2's vocabulary) with
    the real metadata keys, one per weight type the engine reads, so mutations start from files
    that load all the way."""
    import gguf
    import numpy as np
    tokens, types, merges, tmpl = smollm2_vocab(128)
    rng = np.random.default_rng(0)
    hidden, ffn, heads, kv_heads, vocab = 32, 64, 4, 2, len(tokens)
    hd = hidden // heads
    # (weight type, architecture): one file per type the engine reads, then the F32 file as the
    # llama-architecture Mixtral (stacked experts), SmolLM3 and Granite (their keys).
    variants = [(q, "llama") for q in ("F32", "F16", "Q8_0", "Q4_0", "Q4_1", "Q4_K", "Q6_K")]
    variants += [("F32", "mixtral"), ("F32", "smollm3"), ("F32", "granite")]
    for qtype, kind in variants:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.gguf")
            arch = {"mixtral": "llama"}.get(kind, kind)
            w = gguf.GGUFWriter(path, arch)
            if kind == "mixtral":
                w.add_expert_count(2)
                w.add_expert_used_count(1)
            if kind == "granite":
                w.add_embedding_scale(12.0)
                w.add_attention_scale(0.125)
                w.add_residual_scale(0.22)
                w.add_logit_scale(8.0)
            w.add_context_length(256)
            w.add_embedding_length(hidden)
            w.add_block_count(1)
            big = qtype in ("Q4_K", "Q6_K")  # 256-element super-blocks: rows of 256
            w.add_feed_forward_length(256 if big else ffn)
            w.add_head_count(heads)
            w.add_head_count_kv(kv_heads)
            w.add_rope_freq_base(10000.0)
            w.add_layer_norm_rms_eps(1e-5)
            w.add_rope_dimension_count(hd)
            w.add_vocab_size(vocab)
            w.add_tokenizer_model("gpt2")
            w.add_tokenizer_pre("smollm")
            w.add_token_list(tokens)
            w.add_token_types(types)
            w.add_token_merges(merges)
            w.add_bos_token_id(1)
            w.add_eos_token_id(2)
            w.add_add_bos_token(False)
            w.add_chat_template(tmpl[:600])
            h = 256 if big else hidden

            def t(name, shape, quant=True):
                a = rng.standard_normal(shape).astype(np.float32) * 0.05
                if qtype == "F32" or (not quant and len(shape) == 1):
                    w.add_tensor(name, a)
                elif not quant or shape[-1] % (256 if big else 32):
                    w.add_tensor(name, a.astype(np.float16))
                elif qtype == "F16":
                    w.add_tensor(name, a.astype(np.float16))
                elif big:  # gguf's numpy quants cannot quantize K-types: random blocks
                    qt = getattr(gguf.GGMLQuantizationType, qtype)
                    bs, ts = gguf.GGML_QUANT_SIZES[qt]
                    raw = rng.integers(0, 256, (shape[0], shape[1] // bs * ts), dtype=np.uint8)
                    w.add_tensor(name, raw, raw_dtype=qt)
                else:
                    qt = getattr(gguf.GGMLQuantizationType, qtype)
                    w.add_tensor(name, gguf.quants.quantize(a, qt), raw_dtype=qt)

            if big:  # keep the file small: K-quants only on the one matrix whose rows are 256
                hidden_k = 256
                t("token_embd.weight", (vocab, hidden), quant=False)
                t("blk.0.ffn_down.weight", (hidden, hidden_k))
            else:
                t("token_embd.weight", (vocab, hidden))
                t("blk.0.ffn_down.weight", (hidden, ffn))
            t("output_norm.weight", (hidden,), quant=False)
            t("blk.0.attn_norm.weight", (hidden,), quant=False)
            t("blk.0.ffn_norm.weight", (hidden,), quant=False)
            t("blk.0.attn_q.weight", (heads * hd, hidden))
            t("blk.0.attn_k.weight", (kv_heads * hd, hidden))
            t("blk.0.attn_v.weight", (kv_heads * hd, hidden))
            t("blk.0.attn_output.weight", (hidden, heads * hd))
            if kind == "mixtral":  # the dense down projection above stays, unread
                t("blk.0.ffn_gate_inp.weight", (2, hidden))
                t("blk.0.ffn_gate_exps.weight", (2, ffn, hidden))
                t("blk.0.ffn_up_exps.weight", (2, ffn, hidden))
                t("blk.0.ffn_down_exps.weight", (2, hidden, ffn))
            else:
                t("blk.0.ffn_gate.weight", (h if big else ffn, hidden))
                t("blk.0.ffn_up.weight", (h if big else ffn, hidden))
            w.write_header_to_file()
            w.write_kv_data_to_file()
            w.write_tensors_to_file()
            w.close()
            data = open(path, "rb").read()
        put("gguf", data)


def safetensors_files():
    """config.json, a NUL byte, then a tiny checkpoint of each supported architecture."""
    import numpy as np
    from safetensors.numpy import save
    rng = np.random.default_rng(1)
    hidden, ffn, heads, kv_heads, vocab = 32, 64, 4, 2, 96
    hd = hidden // heads
    for arch, extra in (("LlamaForCausalLM", {}), ("Qwen2ForCausalLM", {"bias": True}),
                        ("Qwen3ForCausalLM", {"qk_norm": True}),
                        ("Qwen3MoeForCausalLM", {"qk_norm": True, "moe": True}),
                        ("MixtralForCausalLM", {"mixtral": True}),
                        ("SmolLM3ForCausalLM", {"no_rope_layers": [0]}),
                        ("GraniteForCausalLM", {"granite": True}),
                        ("Qwen2_5_VLForConditionalGeneration", {"bias": True, "mrope": True}),
                        ("Mistral3ForConditionalGeneration", {"text_config": "language_model."}),
                        ("Qwen3VLForConditionalGeneration",
                         {"qk_norm": True, "text_config": "model.language_model.",
                          "mrope": True}),
                        ("LlamaForCausalLM", {"longrope": True}),
                        ("Olmo2ForCausalLM", {"olmo2": True}),
                        ("Qwen2ForCausalLM", {"bias": True, "yarn": True}),
                        ("Phi3ForCausalLM", {"phi4_mini": True}),
                        ("Glm4ForCausalLM", {"bias": True, "glm4": True}),
                        ("Qwen3ForCausalLM", {"qk_norm": True, "v5": True}),
                        ("CohereForCausalLM", {"cohere": True}),
                        ("Cohere2ForCausalLM", {"cohere": True}),
                        ("Exaone4ForCausalLM", {"qk_norm": True, "exaone4": True}),
                        ("GptOssForCausalLM", {"bias": True, "gpt_oss": "mxfp4"}),
                        ("GptOssForCausalLM", {"bias": True, "gpt_oss": "plain"}),
                        ("Qwen2MoeForCausalLM", {"bias": True, "moe": True, "shared": True}),
                        ("OlmoeForCausalLM", {"moe": True, "olmoe": True}),
                        ("GraniteMoeForCausalLM", {"granite": True, "granitemoe": True}),
                        ("Glm4MoeForCausalLM", {"bias": True, "qk_norm": True, "glm4_moe": True}),
                        ("MiniMaxM2ForCausalLM", {"minimax_m2": True}),
                        ("Ernie4_5_MoeForCausalLM", {"ernie_moe": True}),
                        ("ArceeForCausalLM", {"arcee": True})):
        cfg = {"architectures": [arch], "hidden_size": hidden, "intermediate_size": ffn,
               "num_hidden_layers": 1, "num_attention_heads": heads,
               "num_key_value_heads": kv_heads, "head_dim": hd, "vocab_size": vocab,
               "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
               "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
        if extra.get("moe"):
            cfg.update({"num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 32,
                        "decoder_sparse_step": 1, "norm_topk_prob": True})
        if extra.get("olmoe"):  # MHA (its k_norm spans the whole projection), expert width
            cfg.update({"num_key_value_heads": heads, "intermediate_size": 32})
        if extra.get("granitemoe"):  # 2 experts of width 32, fused gate | up
            cfg.update({"num_local_experts": 2, "num_experts_per_tok": 1, "intermediate_size": 32})
        if extra.get("glm4_moe"):  # sigmoid router with its correction bias, a shared expert
            cfg.update({"n_routed_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 32,
                        "first_k_dense_replace": 0, "n_shared_experts": 1, "n_group": 1,
                        "topk_group": 1, "routed_scaling_factor": 2.5, "use_qk_norm": True,
                        "attention_bias": True, "partial_rotary_factor": 0.5})
        if extra.get("minimax_m2"):  # 2 experts of width 32, sigmoid router, rotary_dim
            cfg.update({"num_local_experts": 2, "num_experts_per_tok": 1, "intermediate_size": 32,
                        "rotary_dim": hd // 2, "use_qk_norm": True, "qk_norm_type": "per_layer",
                        "scoring_func": "sigmoid", "use_routing_bias": True,
                        "attn_type_list": [1]})
        if extra.get("ernie_moe"):  # softmax router with its correction bias, a shared expert
            cfg.update({"moe_num_experts": 2, "moe_k": 1, "moe_intermediate_size": 32,
                        "moe_num_shared_experts": 1, "moe_layer_start_index": 0,
                        "moe_layer_interval": 1, "use_bias": False})
        if extra.get("arcee"):  # the ungated relu2 MLP
            cfg["hidden_act"] = "relu2"
        if extra.get("shared"):  # Qwen2-MoE's shared expert
            cfg["shared_expert_intermediate_size"] = 48
        if extra.get("mixtral"):
            cfg.update({"num_local_experts": 2, "num_experts_per_tok": 1, "intermediate_size": 32})
        if "no_rope_layers" in extra:
            cfg["no_rope_layers"] = extra["no_rope_layers"]
        if extra.get("granite"):
            cfg.update({"embedding_multiplier": 12.0, "attention_multiplier": 0.125,
                        "residual_multiplier": 0.22, "logits_scaling": 8.0})
        if extra.get("longrope"):
            cfg.update({"max_position_embeddings": 1024, "original_max_position_embeddings": 256,
                        "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0],
                                         "long_factor": [4.0, 6.0, 8.0, 12.0]}})
        if extra.get("yarn"):
            cfg["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0,
                                   "original_max_position_embeddings": 64}
        if extra.get("mrope"):
            cfg["rope_scaling"] = {"type": "mrope", "mrope_section": [1, 1, 2]}
        if extra.get("phi4_mini"):  # partial rotary (6 of 8 dims) with longrope per rotated pair
            cfg.update({"partial_rotary_factor": 0.75, "max_position_embeddings": 1024,
                        "original_max_position_embeddings": 256,
                        "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.5, 2.0],
                                         "long_factor": [4.0, 6.0, 8.0]}})
        if extra.get("cohere"):  # LayerNorm + parallel block; Cohere2's window on 3 of 4
            cfg.update({"layer_norm_eps": 1e-5, "logit_scale": 0.0625, "sliding_window": 64,
                        "num_hidden_layers": 1})
        if extra.get("exaone4"):  # one sliding layer of an "LG"-style pattern
            cfg.update({"sliding_window": 64, "sliding_window_pattern": "L"})
        if extra.get("gpt_oss"):  # sinks, biases, 2 experts of width 32, a sliding layer, YaRN
            cfg.update({"num_local_experts": 2, "num_experts_per_tok": 1, "intermediate_size": 32,
                        "sliding_window": 64, "layer_types": ["sliding_attention"],
                        "swiglu_limit": 7.0,
                        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "beta_fast": 32.0,
                                         "beta_slow": 1.0, "truncate": False,
                                         "original_max_position_embeddings": 64}})
            if extra["gpt_oss"] == "mxfp4":
                cfg["quantization_config"] = {"quant_method": "mxfp4"}
        if extra.get("v5"):  # transformers 5's form: rope_parameters, no rope_theta
            del cfg["rope_theta"]
            cfg["rope_parameters"] = {"rope_type": "yarn", "factor": 2.0, "rope_theta": 1e6,
                                      "original_max_position_embeddings": 128}
        prefix = extra.get("text_config")
        if prefix:  # the text model under text_config, the weights under the multimodal names
            text = {k: v for k, v in cfg.items() if k != "architectures"}
            cfg = {"architectures": [arch], "text_config": text,
                   "vision_config": {"hidden_size": 16}, "tie_word_embeddings": True}
        ts = {}

        def t(name, shape, dt=np.float16):
            ts[name] = (rng.standard_normal(shape) * 0.05).astype(dt)

        t("model.embed_tokens.weight", (vocab, hidden))
        t("model.norm.weight", (hidden,))
        pre = "model.layers.0."
        t(pre + "input_layernorm.weight", (hidden,))
        t(pre + "post_attention_layernorm.weight", (hidden,))
        kvh = heads if extra.get("olmoe") else kv_heads
        for n, rows in (("q", heads * hd), ("k", kvh * hd), ("v", kvh * hd)):
            t(pre + f"self_attn.{n}_proj.weight", (rows, hidden))
            if extra.get("bias"):
                t(pre + f"self_attn.{n}_proj.bias", (rows,))
        t(pre + "self_attn.o_proj.weight", (hidden, heads * hd))
        if extra.get("qk_norm"):
            t(pre + "self_attn.q_norm.weight", (hd,))
            t(pre + "self_attn.k_norm.weight", (hd,))
        if extra.get("minimax_m2"):  # whole-projection q/k norms beside the input norms
            t(pre + "self_attn.q_norm.weight", (heads * hd,))
            t(pre + "self_attn.k_norm.weight", (kv_heads * hd,))
        if extra.get("olmoe"):  # whole-projection q/k norms beside the input norms
            t(pre + "self_attn.q_norm.weight", (heads * hd,))
            t(pre + "self_attn.k_norm.weight", (heads * hd,))
        if extra.get("olmo2"):  # output norms, whole-projection q/k norms, no input norms
            del ts[pre + "input_layernorm.weight"]
            t(pre + "post_feedforward_layernorm.weight", (hidden,))
            t(pre + "self_attn.q_norm.weight", (heads * hd,))
            t(pre + "self_attn.k_norm.weight", (kv_heads * hd,))
        if extra.get("cohere"):  # one norm per layer
            del ts[pre + "post_attention_layernorm.weight"]
        if extra.get("exaone4"):  # output norms only
            del ts[pre + "input_layernorm.weight"]
            t(pre + "post_feedforward_layernorm.weight", (hidden,))
        if extra.get("glm4"):  # post-attention / post-MLP norms
            t(pre + "post_self_attn_layernorm.weight", (hidden,))
            t(pre + "post_mlp_layernorm.weight", (hidden,))
        if extra.get("phi4_mini"):  # q, k, v fused in qkv_proj
            qkv = [ts.pop(pre + f"self_attn.{n}_proj.weight") for n in "qkv"]
            ts[pre + "self_attn.qkv_proj.weight"] = np.concatenate(qkv)
        if extra.get("phi4_mini") or extra.get("glm4"):  # gate and up fused in gate_up_proj
            t(pre + "mlp.gate_up_proj.weight", (2 * ffn, hidden))
            t(pre + "mlp.down_proj.weight", (hidden, ffn))
        elif extra.get("moe"):
            t(pre + "mlp.gate.weight", (2, hidden))
            for e in range(2):
                t(pre + f"mlp.experts.{e}.gate_proj.weight", (32, hidden))
                t(pre + f"mlp.experts.{e}.up_proj.weight", (32, hidden))
                t(pre + f"mlp.experts.{e}.down_proj.weight", (hidden, 32))
            if extra.get("shared"):
                t(pre + "mlp.shared_expert.gate_proj.weight", (48, hidden))
                t(pre + "mlp.shared_expert.up_proj.weight", (48, hidden))
                t(pre + "mlp.shared_expert.down_proj.weight", (hidden, 48))
                t(pre + "mlp.shared_expert_gate.weight", (1, hidden))
        elif extra.get("glm4_moe"):
            t(pre + "mlp.gate.weight", (2, hidden))
            t(pre + "mlp.gate.e_score_correction_bias", (2,))
            for e in range(2):
                t(pre + f"mlp.experts.{e}.gate_proj.weight", (32, hidden))
                t(pre + f"mlp.experts.{e}.up_proj.weight", (32, hidden))
                t(pre + f"mlp.experts.{e}.down_proj.weight", (hidden, 32))
            for n, shape in (("gate", (32, hidden)), ("up", (32, hidden)), ("down", (hidden, 32))):
                t(pre + f"mlp.shared_experts.{n}_proj.weight", shape)
        elif extra.get("granitemoe"):  # the hub's fused experts and router
            t(pre + "block_sparse_moe.router.layer.weight", (2, hidden))
            t(pre + "block_sparse_moe.input_linear.weight", (2, 64, hidden))
            t(pre + "block_sparse_moe.output_linear.weight", (2, hidden, 32))
        elif extra.get("gpt_oss"):
            t(pre + "self_attn.o_proj.bias", (hidden,))
            t(pre + "self_attn.sinks", (heads,))
            t(pre + "mlp.router.weight", (2, hidden))
            t(pre + "mlp.router.bias", (2,))
            t(pre + "mlp.experts.gate_up_proj_bias", (2, 64))
            t(pre + "mlp.experts.down_proj_bias", (2, hidden))
            if extra["gpt_oss"] == "mxfp4":  # U8 codes and exponents (2^-5 .. 2^-3)
                ts[pre + "mlp.experts.gate_up_proj_blocks"] = rng.integers(
                    0, 256, (2, 64, hidden // 32, 16), dtype=np.uint8)
                ts[pre + "mlp.experts.gate_up_proj_scales"] = rng.integers(
                    122, 125, (2, 64, hidden // 32), dtype=np.uint8)
                ts[pre + "mlp.experts.down_proj_blocks"] = rng.integers(
                    0, 256, (2, hidden, 1, 16), dtype=np.uint8)
                ts[pre + "mlp.experts.down_proj_scales"] = rng.integers(
                    122, 125, (2, hidden, 1), dtype=np.uint8)
            else:  # an unquantized export: input dimension first
                t(pre + "mlp.experts.gate_up_proj", (2, hidden, 64))
                t(pre + "mlp.experts.down_proj", (2, 32, hidden))
        elif extra.get("minimax_m2"):  # Mixtral's names, the bias beside the router
            t(pre + "block_sparse_moe.gate.weight", (2, hidden))
            t(pre + "block_sparse_moe.e_score_correction_bias", (2,))
            for e in range(2):
                t(pre + f"block_sparse_moe.experts.{e}.w1.weight", (32, hidden))
                t(pre + f"block_sparse_moe.experts.{e}.w3.weight", (32, hidden))
                t(pre + f"block_sparse_moe.experts.{e}.w2.weight", (hidden, 32))
        elif extra.get("ernie_moe"):
            t(pre + "mlp.gate.weight", (2, hidden))
            t(pre + "mlp.moe_statics.e_score_correction_bias", (1, 2))
            for e in range(2):
                t(pre + f"mlp.experts.{e}.gate_proj.weight", (32, hidden))
                t(pre + f"mlp.experts.{e}.up_proj.weight", (32, hidden))
                t(pre + f"mlp.experts.{e}.down_proj.weight", (hidden, 32))
            for n, shape in (("gate", (32, hidden)), ("up", (32, hidden)), ("down", (hidden, 32))):
                t(pre + f"mlp.shared_experts.{n}_proj.weight", shape)
        elif extra.get("arcee"):  # up and down projections only
            t(pre + "mlp.up_proj.weight", (ffn, hidden))
            t(pre + "mlp.down_proj.weight", (hidden, ffn))
        elif extra.get("mixtral"):
            t(pre + "block_sparse_moe.gate.weight", (2, hidden))
            for e in range(2):
                t(pre + f"block_sparse_moe.experts.{e}.w1.weight", (32, hidden))
                t(pre + f"block_sparse_moe.experts.{e}.w3.weight", (32, hidden))
                t(pre + f"block_sparse_moe.experts.{e}.w2.weight", (hidden, 32))
        else:
            t(pre + "mlp.gate_proj.weight", (ffn, hidden))
            t(pre + "mlp.up_proj.weight", (ffn, hidden))
            t(pre + "mlp.down_proj.weight", (hidden, ffn))
        if prefix:
            ts = {(prefix + "model." + k[len("model."):] if prefix == "language_model." else
                   prefix + k[len("model."):]): v for k, v in ts.items()}
        put("safetensors", json.dumps(cfg).encode() + b"\0" + save(ts))
        f32 = {k: v if v.dtype == np.uint8 else v.astype(np.float32) for k, v in ts.items()}
        cfg32 = dict(cfg, torch_dtype="float32")
        put("safetensors", json.dumps(cfg32).encode() + b"\0" + save(f32))
    # An FP8 block-quantized Qwen3 (quantization_config fp8): F8_E4M3 codes (no NaN code) with F32
    # scales over 16 x 16 blocks, the rest F16; written by hand (numpy has no float8).
    cfg = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": hidden, "intermediate_size": ffn,
           "num_hidden_layers": 1, "num_attention_heads": heads, "num_key_value_heads": kv_heads,
           "head_dim": hd, "vocab_size": vocab, "max_position_embeddings": 256,
           "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "tie_word_embeddings": True,
           "torch_dtype": "bfloat16",
           "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                   "activation_scheme": "dynamic", "weight_block_size": [16, 16]}}
    pre = "model.layers.0."
    ts = {}
    for n, shape in (("model.embed_tokens.weight", (vocab, hidden)), ("model.norm.weight", (hidden,)),
                     (pre + "input_layernorm.weight", (hidden,)),
                     (pre + "post_attention_layernorm.weight", (hidden,)),
                     (pre + "self_attn.q_norm.weight", (hd,)), (pre + "self_attn.k_norm.weight", (hd,))):
        ts[n] = ("F16", (rng.standard_normal(shape) * 0.05).astype("<f2"))
    for n, shape in (("self_attn.q_proj", (heads * hd, hidden)), ("self_attn.k_proj", (kv_heads * hd, hidden)),
                     ("self_attn.v_proj", (kv_heads * hd, hidden)), ("self_attn.o_proj", (hidden, heads * hd)),
                     ("mlp.gate_proj", (ffn, hidden)), ("mlp.up_proj", (ffn, hidden)),
                     ("mlp.down_proj", (hidden, ffn))):
        codes = rng.integers(0, 0x7E, shape, dtype=np.uint8) | (rng.integers(0, 2, shape, dtype=np.uint8) << 7)
        ts[pre + n + ".weight"] = ("F8_E4M3", codes)
        grid = (-(-shape[0] // 16), -(-shape[1] // 16))
        ts[pre + n + ".weight_scale_inv"] = ("F32", (rng.random(grid) * 0.01).astype("<f4"))
    header, blobs, off = {}, [], 0
    for n in sorted(ts):
        dt, a = ts[n]
        b = np.ascontiguousarray(a).tobytes()
        header[n] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    put("safetensors", json.dumps(cfg).encode() + b"\0" + struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    makers = {"request": requests, "chat_template": templates, "tokenizer_json": tokenizer_json,
              "bpe": bpe, "spm": spm, "gguf": gguf_files, "safetensors": safetensors_files}
    for name in sys.argv[1:] or list(makers):
        makers[name]()
    for t in sorted(os.listdir(OUT)):
        print(t, len(os.listdir(os.path.join(OUT, t))))


if __name__ == "__main__":
    main()
