#!/usr/bin/env python3
"""Write tiny sequence-classification (classify / score) checkpoints around the tiny qwen3 model.

Owns the model folders that the C++ classification and scoring paths (`vllm serve` of a
*ForSequenceClassification folder answering /classify, /score, /rerank) and the transformers
goldens (tests/golden/classify/, tools/make_classify_goldens.py) share. Standard library only: CI
runs this without torch or numpy, and the output is byte-identical on every run and machine
(files copied byte for byte, JSON written with fixed key order and indentation, the base weights
as relative symlinks whose targets depend only on the relative position of --out and --models,
the head's values from an integer PRNG rounded with IEEE operations only).

  python3 tools/make_tiny_models.py --out ~/.cache/vllm-cpp/tiny-models
  python3 tools/make_tiny_classifier.py --models ~/.cache/vllm-cpp/tiny-models \\
      --out ~/.cache/vllm-cpp/tiny-models/classify

Each variant is a folder under --out, laid out as transformers' save_pretrained of a
Qwen3ForSequenceClassification writes one (a two-shard checkpoint, small):

  config.json                             the base's with architectures
                                          ["Qwen3ForSequenceClassification"], id2label /
                                          label2id, and pad_token_id (the id of the tokenizer's
                                          pad_token, <|endoftext|> 151643) where the base has
                                          none; sorted keys, indent 2, as transformers writes it
  tokenizer.json, tokenizer_config.json   copied byte for byte from the base model's folder
  (and any other tokenizer file the base  (no generation_config.json: a sequence classifier
  has)                                    cannot generate, so save_pretrained writes none)
  model-00001-of-00002.safetensors        a relative symlink to the base's model.safetensors
                                          (../../qwen3/model.safetensors): the backbone,
                                          "model.*" tensors (qwen3 is tied: no lm_head tensor)
  model-00002-of-00002.safetensors        score.weight [num_labels, hidden_size], the base's
                                          dtype (BF16), no bias
  model.safetensors.index.json            {"metadata": {"total_parameters", "total_size"},
                                          "weight_map": {tensor: shard}} for every tensor

The backbone shard is not called model.safetensors: transformers (and the C++ loader) read a
folder's model.safetensors alone and ignore the index when that file exists, and the head would
then be missing.

  variant        base   labels                          head
  qwen3_seqcls3  qwen3  negative / neutral / positive   score.weight [3, 64], softmax
  qwen3_seqcls1  qwen3  LABEL_0                         score.weight [1, 64], sigmoid (a
                                                        cross-encoder / reranker style head)

score.weight's values are uniform in [-4/sqrt(hidden), 4/sqrt(hidden)) (so logits are O(1)): a
splitmix64 stream seeded per variant, each value (u >> 11) * 2**-53 (an exact double), scaled,
rounded to float32 (struct) and then to BF16 (round to nearest, ties to even, on the float32
bits); F32 bases get the float32 values.

The original Qwen3-Reranker form (a Qwen3ForCausalLM served with --hf-overrides
'{"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"],
"is_original_qwen3_reranker": true}', vLLM then building score.weight = lm_head[yes] -
lm_head[no]) needs no folder: it is the base qwen3 folder itself, unchanged.

Fails loudly (exit status non-zero, nothing half-written left in place of a good folder) when a
base folder, its config.json / tokenizer.json / tokenizer_config.json or its weights are
missing, when the base has more than one weight file or tensors of several or unsupported dtypes
or an lm_head / score tensor, when its hidden_size is missing, or when the tokenizer's
pad_token is not an added token of tokenizer.json (or disagrees with the base's pad_token_id). A
stale variant folder is replaced only if its model.safetensors.index.json maps score.weight
(i.e. this script wrote it); any other non-empty folder in the way is an error.
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys

# name -> (base model folder, id2label values in id order, PRNG seed of score.weight)
VARIANTS = {
    "qwen3_seqcls3": ("qwen3", ("negative", "neutral", "positive"), 0x5EC1A553),
    "qwen3_seqcls1": ("qwen3", ("LABEL_0",), 0x5EC1A551),
}

ARCHITECTURES = {"qwen3": "Qwen3ForSequenceClassification"}
# Copied when the base has them; tokenizer.json and tokenizer_config.json are required.
OPTIONAL_FILES = ("special_tokens_map.json", "vocab.json", "merges.txt", "added_tokens.json",
                  "chat_template.jinja", "chat_template.json")
WEIGHT_INDEX = "model.safetensors.index.json"
BACKBONE_SHARD = "model-00001-of-00002.safetensors"
HEAD_SHARD = "model-00002-of-00002.safetensors"
HEAD_TENSOR = "score.weight"
ELEMENT_BYTES = {"BF16": 2, "F32": 4}
SCALE = 4.0  # the head's values are uniform in [-SCALE / sqrt(hidden), SCALE / sqrt(hidden))


def die(msg):
    sys.exit(f"make_tiny_classifier.py: {msg}")


def dumps(obj):
    """The JSON text of obj as transformers writes config / index files: sorted keys, indent 2,
    a final newline."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def safetensors_header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            die(f"{path}: not a safetensors file (shorter than 8 bytes)")
        n = int.from_bytes(raw, "little")
        if n > 100 << 20:
            die(f"{path}: safetensors header of {n} bytes")
        try:
            return json.loads(f.read(n))
        except ValueError as e:
            die(f"{path}: safetensors header is not JSON: {e}")


def splitmix64(seed):
    state = seed & 0xFFFFFFFFFFFFFFFF
    while True:
        state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        yield z ^ (z >> 31)


def f32_bits(x):
    """The IEEE float32 bits of the double x, rounded to nearest even (struct's conversion)."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16_bits(bits):
    """float32 bits -> BF16 bits, round to nearest, ties to even (finite values only)."""
    if (bits >> 23) & 0xFF == 0xFF:
        die("a head value is not finite")
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def head_bytes(num_labels, hidden, dtype, seed):
    """score.weight [num_labels, hidden] row-major, little-endian, in dtype."""
    bound = SCALE / math.sqrt(hidden)
    rng = splitmix64(seed)
    out = bytearray()
    for _ in range(num_labels * hidden):
        u = (next(rng) >> 11) * (1.0 / (1 << 53))  # exact: a 53-bit integer times 2**-53
        bits = f32_bits((2.0 * u - 1.0) * bound)
        if dtype == "BF16":
            out += struct.pack("<H", bf16_bits(bits))
        else:
            out += struct.pack("<I", bits)
    return bytes(out)


def write_head(path, num_labels, hidden, dtype, seed):
    data = head_bytes(num_labels, hidden, dtype, seed)
    header = {"__metadata__": {"format": "pt"},
              HEAD_TENSOR: {"dtype": dtype, "shape": [num_labels, hidden], "data_offsets": [0, len(data)]}}
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        f.write(data)
    return len(data)


def pad_token_id(base):
    """The id of tokenizer_config.json's pad_token among tokenizer.json's added tokens."""
    with open(os.path.join(base, "tokenizer_config.json"), encoding="utf-8") as f:
        pad = json.load(f).get("pad_token")
    if isinstance(pad, dict):  # the older AddedToken form
        pad = pad.get("content")
    if not isinstance(pad, str):
        die(f"{base}/tokenizer_config.json has no pad_token")
    with open(os.path.join(base, "tokenizer.json"), encoding="utf-8") as f:
        added = json.load(f).get("added_tokens", [])
    ids = [a["id"] for a in added if a.get("content") == pad]
    if len(ids) != 1:
        die(f"{base}/tokenizer.json: pad_token {pad!r} is not exactly one added token")
    return ids[0]


def check_replaceable(out):
    """Fail unless out is absent, empty, or a folder this script wrote (its index maps score.weight)."""
    if not os.path.lexists(out):
        return
    if not os.path.isdir(out) or os.path.islink(out):
        die(f"{out} exists and is not a folder")
    if not os.listdir(out):
        return
    try:
        with open(os.path.join(out, WEIGHT_INDEX), encoding="utf-8") as f:
            ours = HEAD_TENSOR in json.load(f).get("weight_map", {})
    except (OSError, ValueError, AttributeError):
        ours = False
    if not ours:
        die(f"{out} is not empty and its {WEIGHT_INDEX} maps no {HEAD_TENSOR}: not written by "
            "this script, not removing it")


def make_variant(name, models, out_root):
    base_name, labels, seed = VARIANTS[name]
    base = os.path.join(models, base_name)
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"):
        if not os.path.isfile(os.path.join(base, f)):
            die(f"{os.path.join(base, f)} not found: run tools/make_tiny_models.py --out {models} "
                f"(the {base_name} model with its tokenizer)")
    weights = sorted(f for f in os.listdir(base) if f.endswith(".safetensors"))
    if weights != ["model.safetensors"] or os.path.exists(os.path.join(base, WEIGHT_INDEX)):
        die(f"{base}: expected one model.safetensors and no index, found {weights}")
    with open(os.path.join(base, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    hidden = cfg.get("hidden_size")
    if not isinstance(hidden, int) or isinstance(hidden, bool) or hidden <= 0:
        die(f"{base}/config.json has no positive integer hidden_size")
    if cfg.get("model_type") not in ARCHITECTURES:
        die(f"{base}/config.json: model_type {cfg.get('model_type')!r} (known: {', '.join(ARCHITECTURES)})")

    header = safetensors_header(os.path.join(base, "model.safetensors"))
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    dtypes = sorted({v["dtype"] for v in tensors.values()})
    if len(dtypes) != 1 or dtypes[0] not in ELEMENT_BYTES:
        die(f"{base}/model.safetensors: tensor dtypes {dtypes} (one of {', '.join(ELEMENT_BYTES)} wanted)")
    dtype = dtypes[0]
    for k in tensors:
        if not k.startswith("model."):
            die(f"{base}/model.safetensors: {k}: only backbone (model.*) tensors expected "
                "(a seq-cls checkpoint has no lm_head, and the head is written here)")

    pad_id = pad_token_id(base)
    if cfg.get("pad_token_id") is not None and cfg["pad_token_id"] != pad_id:
        die(f"{base}/config.json: pad_token_id {cfg['pad_token_id']} but the tokenizer's pad is {pad_id}")
    cfg["architectures"] = [ARCHITECTURES[cfg["model_type"]]]
    cfg["id2label"] = {str(i): label for i, label in enumerate(labels)}
    cfg["label2id"] = {label: i for i, label in enumerate(labels)}
    cfg["pad_token_id"] = pad_id

    # Build next to the destination, then swap in: a failure leaves no half-written variant.
    out = os.path.join(out_root, name)
    check_replaceable(out)
    tmp = out + ".tmp"
    if os.path.lexists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    try:
        write_text(os.path.join(tmp, "config.json"), dumps(cfg))
        for f in ("tokenizer.json", "tokenizer_config.json") + OPTIONAL_FILES:
            if os.path.isfile(os.path.join(base, f)):
                shutil.copyfile(os.path.join(base, f), os.path.join(tmp, f))
        # Relative to the final folder (the same depth as tmp's).
        os.symlink(os.path.relpath(os.path.join(base, "model.safetensors"), out),
                   os.path.join(tmp, BACKBONE_SHARD))
        head_size = write_head(os.path.join(tmp, HEAD_SHARD), len(labels), hidden, dtype, seed)
        weight_map = {k: BACKBONE_SHARD for k in tensors}
        weight_map[HEAD_TENSOR] = HEAD_SHARD
        numel = sum(math.prod(v["shape"]) for v in tensors.values()) + len(labels) * hidden
        size = sum(v["data_offsets"][1] - v["data_offsets"][0] for v in tensors.values()) + head_size
        if size != numel * ELEMENT_BYTES[dtype]:
            die(f"{base}/model.safetensors: data offsets disagree with the shapes")
        write_text(os.path.join(tmp, WEIGHT_INDEX),
                   dumps({"metadata": {"total_parameters": numel, "total_size": size},
                          "weight_map": weight_map}))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if os.path.lexists(out):
        shutil.rmtree(out)
    os.rename(tmp, out)
    if not os.path.isfile(os.path.join(out, BACKBONE_SHARD)):
        die(f"{out}/{BACKBONE_SHARD}: the symlink does not resolve")
    print(f"{name}: {base_name}, {cfg['architectures'][0]}, {len(labels)} label(s) "
          f"{'/'.join(labels)}, pad {pad_id}, hidden {hidden}, {dtype}, "
          f"{BACKBONE_SHARD} -> {os.readlink(os.path.join(out, BACKBONE_SHARD))}, "
          f"{HEAD_SHARD}: {HEAD_TENSOR} [{len(labels)}, {hidden}]")


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
