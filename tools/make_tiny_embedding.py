#!/usr/bin/env python3
"""Write tiny embedding (pooling) models in the Sentence Transformers layout around tiny models.

Owns the model folders that the C++ embedding path (`vllm serve` of a Sentence Transformers
folder answering /v1/embeddings) and the Sentence Transformers goldens (tests/golden/embed/,
tools/make_embedding_goldens.py) share. Standard library only: CI runs this without torch or
numpy, and the output is byte-identical on every run and machine (files copied byte for byte,
JSON written with fixed key order and indentation, weights as relative symlinks whose targets
depend only on the relative position of --out and --models).

  python3 tools/make_tiny_models.py --out ~/.cache/vllm-cpp/tiny-models
  python3 tools/make_tiny_embedding.py --models ~/.cache/vllm-cpp/tiny-models \\
      --out ~/.cache/vllm-cpp/tiny-models/embed

Each variant is a folder under --out, laid out as the hub's Sentence Transformers models
(Qwen3-Embedding-0.6B's, small) are:

  config.json, generation_config.json,    copied byte for byte from the base model's folder
  tokenizer_config.json (and any other    (generation_config.json and the optional tokenizer
  tokenizer file the base has)            files only where the base has them)
  tokenizer.json                          copied, or for qwen3_last rewritten (below)
  *.safetensors (+ the shard index)       relative symlinks to the base model's files (no copy)
  modules.json                            Transformer (path "") -> Pooling (1_Pooling)
                                          [-> Normalize (2_Normalize)]
  1_Pooling/config.json                   the legacy pooling_mode_* booleans, as the hub files
                                          have them (Sentence Transformers 6 still reads them)
  sentence_bert_config.json               {"max_seq_length": 512, "do_lower_case": false}
  config_sentence_transformers.json       no "__version__" (it would tie the bytes to a
                                          release), empty prompts, similarity cosine

No 2_Normalize folder is written: Normalize has no parameters and the hub repos have no such
folder either (git keeps no empty folders); Sentence Transformers loads it without one.

  variant     base   weights          pooling    Normalize  tokenizer
  qwen3_last  qwen3  BF16, tied       last token yes        + TemplateProcessing "$A <|endoftext|>"
  qwen3_cls   qwen3  BF16, tied       first (CLS) yes       unchanged
  qwen2_mean  qwen2  F32, q/k/v bias  mean       no         unchanged
  qwen3_bare  qwen3  BF16, no lm_head last token yes        as qwen3_last

qwen3_bare is qwen3_last laid out as the real Qwen3-Embedding checkpoints are (saved from
Qwen3Model): tensor names without the "model." prefix ("embed_tokens.weight", "layers.0...."),
no lm_head, and config.json's tie_word_embeddings false (as Qwen3-Embedding-4B / 8B): a copy of
the weights with its safetensors header renamed, not a symlink. Its vectors are qwen3_last's
(same weights and tokenizer), so it has no goldens of its own.

qwen3_last's tokenizer.json appends <|endoftext|> (151643) to every sequence, as the real
Qwen3-Embedding tokenizer does (the hub file's fix of June 2025; the embedding is read at that
token). The base's post_processor (ByteLevel with trim_offsets false: offsets only, no ids) is
kept in front of it as a Sequence [ByteLevel, TemplateProcessing], which the tokenizers library
(0.23) and transformers 5 load and apply; the rest of the file is the base's, re-serialized
byte-identically (indent 2, UTF-8 unescaped).

Fails loudly (exit status non-zero, nothing half-written left in place of a good folder) when a
base folder, its config.json / tokenizer.json or its weights are missing, when the base's
post_processor is anything but ByteLevel or null, or when <|endoftext|> is not an added special
token of the base tokenizer. A stale variant folder is replaced only if it holds modules.json
(i.e. this script wrote it); any other non-empty folder in the way is an error.
"""
import argparse
import json
import os
import shutil
import sys

# name -> (base model folder, pooling, normalize, append <|endoftext|>, bare weights)
VARIANTS = {
    "qwen3_last": ("qwen3", "LAST", True, True, False),
    "qwen3_cls": ("qwen3", "CLS", True, False, False),
    "qwen2_mean": ("qwen2", "MEAN", False, False, False),
    "qwen3_bare": ("qwen3", "LAST", True, True, True),
}

EOS_TEXT = "<|endoftext|>"
MAX_SEQ_LENGTH = 512
# Copied when the base has them; tokenizer.json and tokenizer_config.json are required.
OPTIONAL_FILES = ("generation_config.json", "special_tokens_map.json", "vocab.json", "merges.txt",
                  "added_tokens.json", "chat_template.jinja", "chat_template.json")
WEIGHT_INDEX = "model.safetensors.index.json"


def die(msg):
    sys.exit(f"make_tiny_embedding.py: {msg}")


def dumps(obj):
    """The JSON text of obj: keys in insertion order, indent 2, a final newline."""
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def modules_json(normalize):
    mods = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if normalize:
        mods.append({"idx": 2, "name": "2", "path": "2_Normalize",
                     "type": "sentence_transformers.models.Normalize"})
    return mods


def pooling_config(hidden, pooling):
    # The key order of the hub's 1_Pooling/config.json files.
    return {
        "word_embedding_dimension": hidden,
        "pooling_mode_cls_token": pooling == "CLS",
        "pooling_mode_mean_tokens": pooling == "MEAN",
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": pooling == "LAST",
        "include_prompt": True,
    }


def st_config():
    return {"prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"}


def eos_tokenizer_json(path):
    """The base tokenizer.json's text with <|endoftext|> appended by a TemplateProcessing."""
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    tok = json.loads(raw)
    if json.dumps(tok, indent=2, ensure_ascii=False) != raw.rstrip("\n"):
        die(f"{path} does not re-serialize byte-identically (indent 2, ensure_ascii false); "
            "refusing to rewrite it")
    eos = [a for a in tok.get("added_tokens", []) if a.get("content") == EOS_TEXT]
    if len(eos) != 1 or not eos[0].get("special"):
        die(f"{path}: {EOS_TEXT} is not exactly one added special token")
    eos_id = eos[0]["id"]
    template = {
        "type": "TemplateProcessing",
        "single": [{"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": EOS_TEXT, "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": EOS_TEXT, "type_id": 0}},
                 {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": EOS_TEXT, "type_id": 1}}],
        "special_tokens": {EOS_TEXT: {"id": EOS_TEXT, "ids": [eos_id], "tokens": [EOS_TEXT]}},
    }
    old = tok.get("post_processor")
    if old is None:
        tok["post_processor"] = template
    elif old.get("type") == "ByteLevel":
        tok["post_processor"] = {"type": "Sequence", "processors": [old, template]}
    else:
        die(f"{path}: post_processor type {old.get('type')!r} (only ByteLevel or null is handled)")
    return json.dumps(tok, indent=2, ensure_ascii=False)  # no final newline, as the base file


def bare_safetensors(src, dst):
    """src's safetensors with every tensor name's "model." prefix dropped (as a checkpoint saved
    from Qwen3Model: Qwen3-Embedding's "embed_tokens.weight", "layers.0..."); the data bytes are
    copied unchanged (offsets are relative to the data, so only the header changes)."""
    with open(src, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k in sorted(header):
        v = header[k]
        if k != "__metadata__" and k.startswith("lm_head."):
            die(f"{src}: {k}: the bare variant wants a tied base model")
        out[k[len("model."):] if k.startswith("model.") else k] = v
    text = json.dumps(out, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(dst, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        f.write(data)


def check_replaceable(out):
    """Fail unless out is absent, empty, or a folder this script wrote (it holds modules.json)."""
    if not os.path.lexists(out):
        return
    if not os.path.isdir(out) or os.path.islink(out):
        die(f"{out} exists and is not a folder")
    if os.listdir(out) and not os.path.isfile(os.path.join(out, "modules.json")):
        die(f"{out} is not empty and holds no modules.json: not written by this script, "
            "not removing it")


def make_variant(name, models, out_root):
    base_name, pooling, normalize, append_eos, bare = VARIANTS[name]
    base = os.path.join(models, base_name)
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        if not os.path.isfile(os.path.join(base, f)):
            die(f"{os.path.join(base, f)} not found: run tools/make_tiny_models.py --out {models} "
                f"(the {base_name} model with its tokenizer)")
    with open(os.path.join(base, "config.json"), encoding="utf-8") as f:
        hidden = json.load(f).get("hidden_size")
    if not isinstance(hidden, int) or hidden <= 0:
        die(f"{base}/config.json has no positive integer hidden_size")
    weights = sorted(f for f in os.listdir(base) if f.endswith(".safetensors"))
    if not weights:
        die(f"{base} holds no *.safetensors")
    if len(weights) > 1 and not os.path.isfile(os.path.join(base, WEIGHT_INDEX)):
        die(f"{base} has {len(weights)} shards and no {WEIGHT_INDEX}")
    if os.path.isfile(os.path.join(base, WEIGHT_INDEX)):
        weights.append(WEIGHT_INDEX)

    # Build next to the destination, then swap in: a failure leaves no half-written variant.
    out = os.path.join(out_root, name)
    check_replaceable(out)
    tmp = out + ".tmp"
    if os.path.lexists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    try:
        for f in ("config.json", "tokenizer_config.json") + OPTIONAL_FILES:
            if os.path.isfile(os.path.join(base, f)):
                shutil.copyfile(os.path.join(base, f), os.path.join(tmp, f))
        if append_eos:
            write_text(os.path.join(tmp, "tokenizer.json"),
                       eos_tokenizer_json(os.path.join(base, "tokenizer.json")))
        else:
            shutil.copyfile(os.path.join(base, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"))
        if bare:  # Qwen3-Embedding's layout: no "model." prefix, no lm_head, untied (8B)
            if weights != ["model.safetensors"]:
                die(f"{base}: the bare variant wants one model.safetensors")
            bare_safetensors(os.path.join(base, weights[0]), os.path.join(tmp, weights[0]))
            with open(os.path.join(base, "config.json"), encoding="utf-8") as f:
                cfg = json.load(f)
            cfg["tie_word_embeddings"] = False
            write_text(os.path.join(tmp, "config.json"), dumps(cfg))
        for f in weights if not bare else []:
            # Relative to the final folder (the same depth as tmp's).
            target = os.path.relpath(os.path.join(base, f), out)
            os.symlink(target, os.path.join(tmp, f))
        write_text(os.path.join(tmp, "modules.json"), dumps(modules_json(normalize)))
        os.makedirs(os.path.join(tmp, "1_Pooling"))
        write_text(os.path.join(tmp, "1_Pooling", "config.json"), dumps(pooling_config(hidden, pooling)))
        write_text(os.path.join(tmp, "sentence_bert_config.json"),
                   dumps({"max_seq_length": MAX_SEQ_LENGTH, "do_lower_case": False}))
        write_text(os.path.join(tmp, "config_sentence_transformers.json"), dumps(st_config()))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if os.path.lexists(out):
        shutil.rmtree(out)
    os.rename(tmp, out)
    for f in weights:
        if not os.path.isfile(os.path.join(out, f)):
            die(f"{out}/{f}: the symlink does not resolve")
    link = os.path.join(out, weights[0])
    print(f"{name}: {base_name}, pooling {pooling}, normalize {str(normalize).lower()}, "
          f"hidden {hidden}, weights {', '.join(weights)} -> "
          f"{os.readlink(link) if os.path.islink(link) else 'renamed copy'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py --out")
    ap.add_argument("--out", required=True, help="output folder (one subfolder per variant)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated subset to write")
    args = ap.parse_args()
    want = args.variants.split(",")
    for name in want:
        if name not in VARIANTS:
            die(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    os.makedirs(args.out, exist_ok=True)
    for name in want:
        make_variant(name, args.models, args.out)


if __name__ == "__main__":
    main()
