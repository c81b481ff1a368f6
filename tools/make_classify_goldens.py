#!/usr/bin/env python3
"""transformers goldens for the tiny classifiers of make_tiny_classifier.py and the Qwen3-Reranker form.

Owns tests/golden/classify/<variant>.json: per case the text(s), the exact input_ids fed to the
model (batch size 1, no padding), the raw float32 logits from transformers (float32, eager
attention, CPU) and the activated values vLLM 0.33 returns (num_labels 1: sigmoid, else
softmax; problem_type unset). Needs torch and transformers (never present in CI: the C++ tests
read only the committed files).

  python3 tools/make_tiny_models.py --out DIR
  python3 tools/make_tiny_classifier.py --models DIR --out DIR/classify
  python3 tools/make_classify_goldens.py --models DIR --classify DIR/classify

Variants:
  qwen3_seqcls3   DIR/classify/qwen3_seqcls3, AutoModelForSequenceClassification, 3 labels:
                  "classify" cases (softmax)
  qwen3_seqcls1   DIR/classify/qwen3_seqcls1, 1 label: "classify" cases and "score" cases
                  (sigmoid); a score pair as vLLM 0.33 forms it for this folder (its config has
                  no use_sep_token, so vLLM's default true: tokenizer(text=query,
                  text_pair=document)) and, for comparison, as query + document (the form with
                  use_sep_token false, as for the reranker)
  qwen3_reranker  DIR/qwen3 itself (Qwen3ForCausalLM, no folder of its own) served with
                  --hf-overrides HF_OVERRIDES below: score = sigmoid(logit[yes] - logit[no]) at
                  the last position of AutoModelForCausalLM; "score" cases (query + document:
                  vLLM sets use_sep_token false for classifier_from_token models) and
                  "template_score" cases rendered through vLLM 0.33's
                  examples/pooling/score/template/qwen3_reranker.jinja (its text is
                  QWEN3_RERANKER_TEMPLATE below, recorded in the golden)

Checks before anything is written (the script fails loudly otherwise):
  - every seq-cls folder loads as Qwen3ForSequenceClassification, float32, eager, with no
    missing, unexpected or mismatched weights, num_labels as its id2label, problem_type unset,
    pad_token_id 151643; the causal model loads from the base folder with no missing weights;
  - the ids of every prompt are the same from transformers.AutoTokenizer and from
    tokenizers.Tokenizer on the folder's tokenizer.json (the library the C++ tokenizer mirrors),
    and hold no pad token (so transformers' "last non-pad token" is the last token);
  - every logit equals an independent computation: transformers.AutoModel on the base folder
    (no head, fp32, eager), the last position's hidden state times score.weight (read from the
    head shard; for the reranker lm_head[yes] - lm_head[no] of the tied embedding) in float64,
    to within 1e-5 of max(1, max |value|);
  - for the reranker sigmoid(yes - no) equals softmax([no, yes])[1] (1e-12), the rendered
    template equals transformers' apply_chat_template and a plain jinja2 render, and equals the
    official Qwen3-Reranker prompt format less its final newline (Jinja drops the file's
    trailing newline);
  - the two score forms give different ids for the boundary case (the query ending in a space)
    and the same ids for the others.

The format is described in tests/golden/classify/README.md.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import jinja2
import numpy as np
import tokenizers
import torch
import transformers
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import Tokenizer
from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_classifier as tc  # noqa: E402
from make_hf_goldens import sha256_file  # noqa: E402

TOL = 1e-5
PAD_ID = 151643
COMMAND = ("python3 tools/make_classify_goldens.py --models ~/.cache/vllm-cpp/tiny-models "
           "--classify ~/.cache/vllm-cpp/tiny-models/classify")

CLASSIFY_TEXTS = [
    "I absolutely loved this movie, the acting was wonderful!",
    "The package arrived on time.",
    "This is the worst customer service I have ever experienced.",
    "hello",  # one token
]

QUERY = "What is the capital of France?"
DOCUMENTS = [
    "Paris is the capital of France.",
    "The Eiffel Tower is in Paris.",
    "Bananas are rich in potassium.",
]
# The query ending in a space: query + document merges " Paris" into one token, the
# text / text_pair form keeps them apart (ids differ); with the pairs above both forms agree.
BOUNDARY = ("What is the capital of France? ", "Paris is the capital of France.")
PAIRS = [(QUERY, d) for d in DOCUMENTS] + [BOUNDARY]
TEMPLATE_PAIRS = [(QUERY, DOCUMENTS[0]), (QUERY, DOCUMENTS[2])]

HF_OVERRIDES = {"architectures": ["Qwen3ForSequenceClassification"],
                "classifier_from_token": ["no", "yes"], "is_original_qwen3_reranker": True}

# vLLM 0.33.0's examples/pooling/score/template/qwen3_reranker.jinja, byte for byte (from the
# vllm-0.33.0.tar.gz sdist on PyPI; the wheel has no examples/).
QWEN3_RERANKER_TEMPLATE_PATH = "examples/pooling/score/template/qwen3_reranker.jinja"
QWEN3_RERANKER_TEMPLATE = (
    '<|im_start|>system\n'
    'Judge whether the Document meets the requirements based on the Query and the Instruct '
    'provided. Note that the answer can only be "yes" or "no".<|im_end|>\n'
    '<|im_start|>user\n'
    '<Instruct>: {{ instruction | default(instruct | default(messages | selectattr("role", "eq", '
    '"system") | map(attribute="content") | first | default("Given a web search query, retrieve '
    'relevant passages that answer the query", true), true), true) }}\n'
    '<Query>: {{ messages | selectattr("role", "eq", "query") | map(attribute="content") | first }}\n'
    '<Document>: {{ messages | selectattr("role", "eq", "document") | map(attribute="content") '
    '| first }}<|im_end|>\n'
    '<|im_start|>assistant\n'
    '<think>\n'
    '\n'
    '</think>\n'
    '\n')
QWEN3_RERANKER_TEMPLATE_SHA256 = "e1ee98e69aab7b2da366edf1c50efcef37e34b4a0c50fb816336213e68d9047a"

# The official Qwen3-Reranker prompt (the model card's prefix / suffix).
OFFICIAL_PREFIX = ('<|im_start|>system\nJudge whether the Document meets the requirements based on '
                   'the Query and the Instruct provided. Note that the answer can only be "yes" or '
                   '"no".<|im_end|>\n<|im_start|>user\n')
OFFICIAL_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
DEFAULT_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"


def fail(msg):
    sys.exit(f"make_classify_goldens.py: FAILED: {msg}")


def dump(obj, level=0):
    """indent 1 like the other goldens, but lists of numbers on one line."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {dump(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in obj):
            return "[" + ", ".join(json.dumps(x) for x in obj) + "]"
        return "[\n" + ",\n".join(inner + dump(x, level + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def f32(x):
    """A float32 value as the Python float (exact: parsing it and rounding to float32 gives it back)."""
    return float(np.float32(x))


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def softmax(xs):
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = sum(e)
    return [v / s for v in e]


def check_close(what, got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    d = float(np.max(np.abs(got - ref)))
    if d > TOL * max(1.0, float(np.max(np.abs(ref)))):
        fail(f"{what}: {got.tolist()} vs the independent {ref.tolist()} (max |diff| {d:.3g})")
    return d


class Tokens:
    """AutoTokenizer and tokenizers.Tokenizer on one folder; every encoding checked on both."""

    def __init__(self, folder):
        self.auto = AutoTokenizer.from_pretrained(folder)
        self.raw = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))

    def single(self, text):
        ids = self.auto(text, add_special_tokens=True)["input_ids"]
        if ids != self.raw.encode(text, add_special_tokens=True).ids:
            fail(f"{text!r}: AutoTokenizer and tokenizers ids differ")
        return self.check(ids, text)

    def pair(self, a, b):
        ids = self.auto(text=a, text_pair=b, add_special_tokens=True)["input_ids"]
        if ids != self.raw.encode(a, b, add_special_tokens=True).ids:
            fail(f"({a!r}, {b!r}): AutoTokenizer and tokenizers pair ids differ")
        return self.check(ids, (a, b))

    @staticmethod
    def check(ids, what):
        if not ids or PAD_ID in ids:
            fail(f"{what!r}: ids {ids} are empty or hold the pad token {PAD_ID}")
        return ids


class Backbone:
    """transformers.AutoModel on the base folder: the last position's hidden state in float64."""

    def __init__(self, base_dir):
        model, info = AutoModel.from_pretrained(base_dir, dtype=torch.float32, attn_implementation="eager",
                                                output_loading_info=True)
        if info["missing_keys"] or info.get("mismatched_keys"):
            fail(f"{base_dir}: AutoModel missing {info['missing_keys']} "
                 f"mismatched {info.get('mismatched_keys')}")
        self.model = model.eval()

    def last(self, ids):
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
        return out.last_hidden_state[0, -1].to(torch.float64).numpy()


def read_head(folder):
    """score.weight from the head shard, float64 (BF16 / F32 decoded by hand from the bytes)."""
    path = os.path.join(folder, tc.HEAD_SHARD)
    header = tc.safetensors_header(path)
    meta = header[tc.HEAD_TENSOR]
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        f.seek(8 + n + meta["data_offsets"][0])
        raw = f.read(meta["data_offsets"][1] - meta["data_offsets"][0])
    if meta["dtype"] == "BF16":
        vals = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        vals = vals.view(np.float32)
    elif meta["dtype"] == "F32":
        vals = np.frombuffer(raw, dtype="<f4")
    else:
        fail(f"{path}: {meta['dtype']}")
    return vals.astype(np.float64).reshape(meta["shape"]), meta["dtype"]


def load_seqcls(folder, labels):
    model, info = AutoModelForSequenceClassification.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    bad = {k: v for k, v in info.items() if v}
    if bad:
        fail(f"{folder}: loading info {bad}")
    cfg = model.config
    if type(model).__name__ != "Qwen3ForSequenceClassification":
        fail(f"{folder}: loaded as {type(model).__name__}")
    if cfg.num_labels != len(labels) or [cfg.id2label[i] for i in range(len(labels))] != list(labels):
        fail(f"{folder}: num_labels {cfg.num_labels} id2label {cfg.id2label}")
    if cfg.problem_type is not None:
        fail(f"{folder}: problem_type {cfg.problem_type!r} (vLLM's activation would change)")
    if cfg.pad_token_id != PAD_ID:
        fail(f"{folder}: pad_token_id {cfg.pad_token_id}")
    if any(p.dtype != torch.float32 for p in model.parameters()):
        fail(f"{folder}: not float32")
    if cfg._attn_implementation != "eager":
        fail(f"{folder}: attention {cfg._attn_implementation!r}")
    return model.eval()


def seqcls_logits(model, ids):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
    return out.logits[0].to(torch.float32).numpy()


def activate(logits):
    x = [float(v) for v in logits]
    return [sigmoid(x[0])] if len(x) == 1 else softmax(x)


def seqcls_golden(name, models, classify, with_score):
    base_name, labels, _seed = tc.VARIANTS[name]
    folder = os.path.join(classify, name)
    base_dir = os.path.join(models, base_name)
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        hidden = json.load(f)["hidden_size"]
    model = load_seqcls(folder, labels)
    tok = Tokens(folder)
    backbone = Backbone(base_dir)
    head, head_dtype = read_head(folder)
    diffs = []

    def case(ids, what):
        logits = seqcls_logits(model, ids)
        # Independent: the base model's last hidden state times score.weight (transformers'
        # own head pools the last non-pad token; there is no pad token in ids).
        diffs.append(check_close(f"{name} {what}", logits, head @ backbone.last(ids)))
        return [f32(v) for v in logits]

    cases = []
    for text in CLASSIFY_TEXTS:
        ids = tok.single(text)
        logits = case(ids, repr(text))
        probs = activate(logits)
        cases.append({"text": text, "input_ids": ids, "logits": logits, "probs": probs,
                      "label": labels[int(np.argmax(logits))]})
    if len({tuple(c["logits"]) for c in cases}) != len(cases):
        fail(f"{name}: two texts have the same logits")

    score = []
    if with_score:
        for q, d in PAIRS:
            pair_ids = tok.pair(q, d)
            concat_ids = tok.single(q + d)
            if (pair_ids == concat_ids) != ((q, d) != BOUNDARY):
                fail(f"{name} ({q!r}, {d!r}): pair ids {pair_ids} vs concat ids {concat_ids}")
            for form, ids, prompt in (("pair", pair_ids, tok.auto.decode(pair_ids)),
                                      ("concat", concat_ids, q + d)):
                logits = case(ids, f"{form} ({q!r}, {d!r})")
                score.append({"query": q, "document": d, "form": form, "prompt": prompt,
                              "input_ids": ids, "logits": logits, "score": sigmoid(logits[0])})

    weights = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    out = {
        "variant": name,
        "source": None,  # filled in by main
        "folder": f"classify/{name}",
        "base_model": base_name,
        "architecture": "Qwen3ForSequenceClassification",
        "num_labels": len(labels),
        "id2label": {str(i): label for i, label in enumerate(labels)},
        "activation": "sigmoid" if len(labels) == 1 else "softmax",
        "pooling": "LAST",
        "pad_token_id": PAD_ID,
        "hidden_size": hidden,
        "head_dtype": head_dtype,
        "sha256": {f: sha256_file(os.path.join(folder, f)) for f in weights + ["tokenizer.json"]},
        "classify": cases,
    }
    if with_score:
        out["use_sep_token"] = True
        out["score"] = score
    return out, max(diffs)


def render_template(tok, messages):
    """The prompt vLLM renders (tokenizer.apply_chat_template with the file's text), checked
    against a plain jinja2 render (HF's environment options) and the official format."""
    rendered = tok.apply_chat_template(messages, chat_template=QWEN3_RERANKER_TEMPLATE, tokenize=False)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    plain = env.from_string(QWEN3_RERANKER_TEMPLATE).render(messages=messages)
    if rendered != plain:
        fail(f"apply_chat_template {rendered!r} vs jinja2 {plain!r}")
    q, d = messages[0]["content"], messages[1]["content"]
    official = (f"{OFFICIAL_PREFIX}<Instruct>: {DEFAULT_INSTRUCTION}\n<Query>: {q}\n<Document>: {d}"
                f"{OFFICIAL_SUFFIX}")
    if rendered + "\n" != official:
        fail(f"rendered {rendered!r} is not the official prompt less its final newline")
    return rendered, official


def reranker_golden(models):
    base_dir = os.path.join(models, "qwen3")
    model, info = AutoModelForCausalLM.from_pretrained(
        base_dir, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    if info["missing_keys"] or info.get("mismatched_keys") or info.get("unexpected_keys"):
        fail(f"{base_dir}: loading info {info}")
    if type(model).__name__ != "Qwen3ForCausalLM" or not model.config.tie_word_embeddings:
        fail(f"{base_dir}: {type(model).__name__}, tie_word_embeddings {model.config.tie_word_embeddings}")
    model.eval()
    tok = Tokens(base_dir)
    yes_id = tok.auto.convert_tokens_to_ids("yes")
    no_id = tok.auto.convert_tokens_to_ids("no")
    if tok.raw.token_to_id("yes") != yes_id or tok.raw.token_to_id("no") != no_id:
        fail("tokenizers and AutoTokenizer disagree on the ids of yes / no")
    backbone = Backbone(base_dir)
    lm_head = model.get_output_embeddings().weight.detach().to(torch.float64).numpy()
    score_w = lm_head[yes_id] - lm_head[no_id]  # vLLM: lm_head[yes] - lm_head[no] in float32
    with open(os.path.join(base_dir, "config.json"), encoding="utf-8") as f:
        hidden = json.load(f)["hidden_size"]
    diffs = []

    def case(ids, what):
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
        last = out.logits[0, -1].to(torch.float32).numpy()
        yes, no = f32(last[yes_id]), f32(last[no_id])
        logit = yes - no  # float64 difference of the two float32 logits
        diffs.append(check_close(f"reranker {what}", [logit], [score_w @ backbone.last(ids)]))
        s, p = sigmoid(logit), softmax([no, yes])[1]
        if abs(s - p) > 1e-12:
            fail(f"reranker {what}: sigmoid {s} vs 2-way softmax {p}")
        return {"logit_yes": yes, "logit_no": no, "logits": [logit], "score": s, "p_yes_softmax": p}

    score = []
    for q, d in PAIRS:
        ids = tok.single(q + d)
        score.append({"query": q, "document": d, "form": "concat", "prompt": q + d, "input_ids": ids,
                      **case(ids, f"({q!r}, {d!r})")})

    template_score = []
    for q, d in TEMPLATE_PAIRS:
        messages = [{"role": "query", "content": q}, {"role": "document", "content": d}]
        prompt, official = render_template(tok.auto, messages)
        ids = tok.single(prompt)
        official_ids = tok.single(official)
        if official_ids[:-1] != ids[:-1] or ids[-1] == official_ids[-1]:
            fail(f"template ({q!r}, {d!r}): ids {ids[-3:]} vs the official {official_ids[-3:]}")
        template_score.append({"query": q, "document": d, "messages": messages, "prompt": prompt,
                               "input_ids": ids, **case(ids, f"template ({q!r}, {d!r})"),
                               "official_prompt": official, "official_input_ids": official_ids,
                               "official": case(official_ids, f"official ({q!r}, {d!r})")})

    weights = sorted(f for f in os.listdir(base_dir) if f.endswith(".safetensors"))
    return {
        "variant": "qwen3_reranker",
        "source": None,
        "folder": "qwen3",
        "base_model": "qwen3",
        "architecture": "Qwen3ForCausalLM",
        "hf_overrides": HF_OVERRIDES,
        "num_labels": 1,
        "activation": "sigmoid",
        "pooling": "LAST",
        "hidden_size": hidden,
        "yes_token_id": yes_id,
        "no_token_id": no_id,
        "use_sep_token": False,
        "sha256": {f: sha256_file(os.path.join(base_dir, f)) for f in weights + ["tokenizer.json"]},
        "score": score,
        "template": {"path": QWEN3_RERANKER_TEMPLATE_PATH, "vllm_version": "0.33.0",
                     "sha256": QWEN3_RERANKER_TEMPLATE_SHA256, "text": QWEN3_RERANKER_TEMPLATE},
        "template_score": template_score,
    }, max(diffs)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py --out")
    ap.add_argument("--classify", required=True, help="folder written by make_tiny_classifier.py --out")
    ap.add_argument("--out", default=os.path.join(repo, "tests", "golden", "classify"))
    ap.add_argument("--template", help="vLLM 0.33.0's qwen3_reranker.jinja, to check against the copy here")
    args = ap.parse_args()
    transformers.logging.set_verbosity_error()  # the loaders' reports: the checks read loading info
    transformers.logging.disable_progress_bar()
    torch.manual_seed(0)
    if hashlib.sha256(QWEN3_RERANKER_TEMPLATE.encode()).hexdigest() != QWEN3_RERANKER_TEMPLATE_SHA256:
        fail("QWEN3_RERANKER_TEMPLATE does not match its sha256")
    if args.template:
        with open(args.template, "rb") as f:
            if f.read() != QWEN3_RERANKER_TEMPLATE.encode():
                fail(f"{args.template} differs from QWEN3_RERANKER_TEMPLATE")
    versions = (f"torch {torch.__version__}, transformers {transformers.__version__}, "
                f"tokenizers {tokenizers.__version__}, jinja2 {jinja2.__version__}")
    print(versions)

    results = {}
    for name, with_score in (("qwen3_seqcls3", False), ("qwen3_seqcls1", True)):
        results[name] = seqcls_golden(name, args.models, args.classify, with_score)
    results["qwen3_reranker"] = reranker_golden(args.models)
    # Every check passed for every variant: only now write.
    os.makedirs(args.out, exist_ok=True)
    for name, (g, diff) in results.items():
        g["source"] = f"{COMMAND} ({versions})"
        for c in g.get("classify", []):
            print(f"{name} classify {c['text'][:24]!r}: {len(c['input_ids'])} ids, logits "
                  f"{[round(x, 4) for x in c['logits']]} -> {c['label'] if 'label' in c else ''}")
        for c in g.get("score", []) + g.get("template_score", []):
            print(f"{name} score {c.get('form', 'template')} {c['document'][:20]!r}: "
                  f"{len(c['input_ids'])} ids, score {c['score']:.6f}")
        print(f"{name}: max |diff| vs the independent computation {diff:.2e}")
        path = os.path.join(args.out, f"{name}.json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(dump(g) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
