#!/usr/bin/env python3
"""A GGUF served the way a Llama 2 / Mistral file is: SmolLM2-135M's weights (the default test
model) with llama.cpp's SentencePiece test vocabulary (tokenizer.ggml.model "llama", Llama 2's
32000 pieces, scores and token types) and the Mistral chat template of the chat-template
goldens. The weights do not know that vocabulary, so the text is noise; what the end-to-end
test checks is the path a SentencePiece file takes: loading, tokenizing, chat, streaming and
detokenizing. With --hf-out, also a Hugging Face folder the same way: a tiny random Llama
(tools/make_tiny_models.py's shapes, vocabulary 32000) with the legacy tokenizer.json of that
vocabulary (tools/make_spm_tokenizer_json.py) and the same template in tokenizer_config.json.
Deterministic; needs `gguf`, numpy and safetensors.

  python3 tools/make_spm_test_model.py --source SmolLM2.gguf --vocab ggml-vocab-llama-spm.gguf \
      --out FILE [--hf-out DIR]
"""
import argparse
import json
import os

import gguf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def copy_fields(reader, writer, keep):
    for name, f in reader.fields.items():
        if not keep(name):
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            sub = f.types[1]
            if sub == gguf.GGUFValueType.STRING:
                writer.add_array(name, [bytes(f.parts[i]).decode("utf-8") for i in f.data])
            else:
                writer.add_key_value(name, [f.parts[i].tolist()[0] for i in f.data], t,
                                     sub_type=sub)
        elif t == gguf.GGUFValueType.STRING:
            writer.add_string(name, bytes(f.parts[f.data[0]]).decode("utf-8"))
        else:
            writer.add_key_value(name, f.parts[f.data[0]].tolist()[0], t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hf-out", help="also write the Hugging Face folder here")
    a = ap.parse_args()
    src = gguf.GGUFReader(a.source)
    voc = gguf.GGUFReader(a.vocab)
    with open(os.path.join(REPO, "tests/golden/chat_template/mistral.json")) as f:
        template = json.load(f)["template"]
    tmp = a.out + ".tmp"
    w = gguf.GGUFWriter(tmp, "llama")
    copy_fields(src, w, lambda n: not n.startswith(("tokenizer.", "GGUF.", "general.architecture",
                                                    "general.name")))
    w.add_name("SmolLM2 weights with a SentencePiece vocabulary (test)")
    copy_fields(voc, w, lambda n: n.startswith("tokenizer.") and n != "tokenizer.chat_template")
    w.add_chat_template(template)
    for t in src.tensors:
        w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, a.out)
    if a.hf_out:
        write_hf(a.vocab, template, a.hf_out)
    print(a.out)


def write_hf(vocab, template, out):
    import sys
    sys.path.insert(0, os.path.join(REPO, "tools"))
    import make_spm_tokenizer_json as tj
    import make_tiny_models as tm
    cfg = tm.llama_config()
    cfg["vocab_size"] = 32000
    mlp = lambda i, p: tm.dense_mlp("llama-spm", p, cfg["hidden_size"], cfg["intermediate_size"])
    root, name = os.path.split(os.path.abspath(out))
    import contextlib
    with contextlib.redirect_stdout(sys.stderr):  # stdout: only the GGUF's path
        tm.write_model(name, cfg, tm.decoder("llama-spm", cfg, mlp), "F16", root, None)
    tokens, scores, types = tj.read_vocab(vocab)
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj.tokenizer_json(tokens, scores, types, "legacy"), f, ensure_ascii=False)
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
                   "eos_token": "</s>", "unk_token": "<unk>", "chat_template": template,
                   "tokenizer_class": "LlamaTokenizer"}, f)


if __name__ == "__main__":
    main()
