"""Sequence classifiers and cross-encoder rerankers served as vLLM users serve them: a
*ForSequenceClassification folder (its score.weight head) answering /classify, and, with one
label, /score and /rerank as a cross-encoder; a plain Qwen3ForCausalLM made a reranker the way
Qwen3-Reranker is served (--hf-overrides architectures / classifier_from_token /
is_original_qwen3_reranker), with and without vLLM's score template (--chat-template). Checked
against transformers' logits (tests/golden/classify/, tools/make_classify_goldens.py)."""
import hashlib
import json
import os

import numpy as np
import pytest

from test_serve_flags import TINY, Serve

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                      "classify")
CLASSIFY = os.path.join(TINY, "classify")


def golden(name):
    with open(os.path.join(GOLDEN, name + ".json")) as f:
        g = json.load(f)
    # The goldens hold for the files they were made from: a regenerated model fails here.
    folder = os.path.join(TINY, g["folder"]) if g["variant"] == "qwen3_reranker" else \
        os.path.join(CLASSIFY, g["variant"])
    for name, want in g["sha256"].items():
        with open(os.path.join(folder, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == want, (folder, name)
    return g


def serve(folder, *args, log):
    # --dtype float32: the goldens are transformers in float32.
    return Serve([folder, "--served-model-name", "cls", "--dtype", "float32", *args],
                 log_name=log)


@pytest.fixture(scope="module")
def three_labels():
    s = serve(os.path.join(CLASSIFY, "qwen3_seqcls3"), log="cls3")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def one_label():
    s = serve(os.path.join(CLASSIFY, "qwen3_seqcls1"), log="cls1")
    yield s
    s.stop()


def test_classify_gives_transformers_probabilities(three_labels):
    g = golden("qwen3_seqcls3")
    cases = g["classify"]
    code, _, r = three_labels.request("/classify", {"model": "cls",
                                                    "input": [c["text"] for c in cases]})
    assert code == 200, r
    assert r["object"] == "list" and r["id"].startswith("classify-") and r["model"] == "cls"
    for d, c in zip(r["data"], cases):
        assert d["num_classes"] == 3 and d["label"] == c["label"]
        np.testing.assert_allclose(d["probs"], c["probs"], atol=2e-5)
    assert r["usage"]["prompt_tokens"] == sum(len(c["input_ids"]) for c in cases)
    # use_activation false: the raw logits; token ids in, the same answer.
    code, _, r = three_labels.request("/classify", {"input": [c["input_ids"] for c in cases],
                                                    "use_activation": False})
    assert code == 200, r
    for d, c in zip(r["data"], cases):
        np.testing.assert_allclose(d["probs"], c["logits"], atol=1e-4)
    # vLLM's /pooling with the classify task: the probabilities as "pooling" items.
    for task in ({}, {"task": "classify"}):
        code, _, r = three_labels.request("/pooling", {"input": cases[0]["text"], **task})
        assert code == 200 and r["data"][0]["object"] == "pooling", r
        np.testing.assert_allclose(r["data"][0]["data"], cases[0]["probs"], atol=2e-5)


def test_a_classifier_serves_only_its_routes(three_labels):
    for path, body, want in [
        ("/v1/embeddings", {"input": "x"}, "not served for a classification model"),
        ("/v1/completions", {"prompt": "x"}, "use /classify"),
        ("/score", {"queries": "a", "documents": "b"}, "this classifier has 3 labels"),
        ("/rerank", {"query": "a", "documents": ["b"]}, "use /classify"),
    ]:
        code, _, r = three_labels.request(path, body)
        assert code == 404 and want in r["error"]["message"], (path, r)
    for body, param in [({"input": "x", "task": "embed"}, "task"),
                        ({"input": "x", "dimensions": 4}, "dimensions")]:
        code, _, r = three_labels.request("/pooling", body)
        assert code == 400 and r["error"]["param"] == param, r


def test_one_label_cross_encoder_scores_pairs(one_label):
    g = golden("qwen3_seqcls1")
    code, _, r = one_label.request("/classify", {"input": [c["text"] for c in g["classify"]]})
    assert code == 200, r
    for d, c in zip(r["data"], g["classify"]):
        assert d["num_classes"] == 1
        np.testing.assert_allclose(d["probs"], c["probs"], atol=2e-5)
    # A score head without classifier_from_token tokenizes each pair as a pair (use_sep_token).
    pairs = [s for s in g["score"] if s["form"] == "pair"]
    assert len({s["query"] for s in pairs[:3]}) == 1
    q = pairs[0]["query"]
    code, _, r = one_label.request("/score", {"queries": q,
                                              "documents": [s["document"] for s in pairs[:3]]})
    assert code == 200, r
    np.testing.assert_allclose([d["score"] for d in r["data"]], [s["score"] for s in pairs[:3]],
                               atol=2e-5)
    assert r["usage"]["prompt_tokens"] == sum(len(s["input_ids"]) for s in pairs[:3])
    # The query with a trailing space: the pair's ids differ from the joined text's.
    code, _, r = one_label.request("/score", {"queries": pairs[3]["query"],
                                              "documents": pairs[3]["document"],
                                              "use_activation": False})
    assert code == 200, r
    np.testing.assert_allclose(r["data"][0]["score"], pairs[3]["logits"][0], atol=1e-4)
    code, _, r = one_label.request("/rerank", {"query": q, "top_n": 2,
                                               "documents": [s["document"] for s in pairs[:3]]})
    assert code == 200, r
    order = sorted(range(3), key=lambda k: -pairs[k]["score"])[:2]
    assert [x["index"] for x in r["results"]] == order
    code, _, r = one_label.request("/score", {"queries": q, "documents": "d", "instruction": "i"})
    assert code == 400 and r["error"]["param"] == "instruction", r


RERANKER_OVERRIDES = json.dumps({"architectures": ["Qwen3ForSequenceClassification"],
                                 "classifier_from_token": ["no", "yes"],
                                 "is_original_qwen3_reranker": True})


def test_qwen3_reranker_from_its_lm_head():
    g = golden("qwen3_reranker")
    assert json.loads(RERANKER_OVERRIDES) == g["hf_overrides"]
    s = serve(os.path.join(TINY, g["folder"]), "--hf-overrides", RERANKER_OVERRIDES,
              log="reranker")
    try:
        cases = [c for c in g["score"] if c["form"] == "concat"]
        # The score is sigmoid(logit(yes) - logit(no)): compare the logit, the score saturates.
        for c in cases:
            code, _, r = s.request("/score", {"queries": c["query"], "documents": c["document"],
                                              "use_activation": False})
            assert code == 200, r
            np.testing.assert_allclose(r["data"][0]["score"], c["logits"][0], atol=2e-4)
        code, _, r = s.request("/v2/rerank", {"query": cases[0]["query"],
                                              "documents": [c["document"] for c in cases[:3]]})
        assert code == 200, r
        want = [c["score"] for c in cases[:3]]
        assert [x["index"] for x in r["results"]] == sorted(range(3), key=lambda k: -want[k])
        for x in r["results"]:
            assert abs(x["relevance_score"] - want[x["index"]]) < 1e-5
    finally:
        s.stop()


def test_qwen3_reranker_with_vllms_score_template(tmp_path):
    g = golden("qwen3_reranker")
    template = tmp_path / "qwen3_reranker.jinja"
    template.write_text(g["template"]["text"])
    s = serve(os.path.join(TINY, g["folder"]), "--hf-overrides", RERANKER_OVERRIDES,
              "--chat-template", str(template), log="reranker_tmpl")
    try:
        for c in g["template_score"]:
            code, _, r = s.request("/score", {"queries": c["query"], "documents": c["document"],
                                              "use_activation": False})
            assert code == 200, r
            np.testing.assert_allclose(r["data"][0]["score"], c["logits"][0], atol=2e-4)
            assert r["usage"]["prompt_tokens"] == len(c["input_ids"])
        # The template reads `instruction` (the request field, or chat_template_kwargs').
        c = g["template_score"][0]
        base = {"queries": c["query"], "documents": c["document"], "use_activation": False}
        scores = []
        for extra in ({"instruction": "Judge the spelling"},
                      {"chat_template_kwargs": {"instruction": "Judge the spelling"}},
                      {"instruction": "other", "chat_template_kwargs": {"instruction":
                                                                       "Judge the spelling"}}):
            code, _, r = s.request("/score", {**base, **extra})
            assert code == 200, r
            scores.append(r["data"][0]["score"])
        assert scores[0] == scores[1] == scores[2]
        assert abs(scores[0] - c["logits"][0]) > 1e-3
        code, _, r = s.request("/score", {**base, "chat_template_kwargs": {"tools": []}})
        assert code == 400 and "reserved keys" in r["error"]["message"], r
    finally:
        s.stop()


def st_cross_encoder(tmp_path, template, processing):
    """The tiny qwen3 laid out as a Sentence Transformers CrossEncoder whose Transformer module
    takes messages: its pairs go through the tokenizer's chat template (here vLLM's Qwen3
    reranker template) with the saved processing kwargs."""
    d = tmp_path / "st_cross_encoder"
    d.mkdir()
    src = os.path.join(TINY, "qwen3")
    for f in os.listdir(src):
        if f != "tokenizer_config.json":
            os.symlink(os.path.realpath(os.path.join(src, f)), d / f)
    tc = json.load(open(os.path.join(src, "tokenizer_config.json")))
    tc["chat_template"] = template
    (d / "tokenizer_config.json").write_text(json.dumps(tc))
    (d / "config_sentence_transformers.json").write_text(json.dumps({"model_type": "CrossEncoder"}))
    (d / "modules.json").write_text(json.dumps([{
        "idx": 0, "name": "0", "path": "",
        "type": "sentence_transformers.base.modules.transformer.Transformer"}]))
    (d / "sentence_bert_config.json").write_text(json.dumps({
        "transformer_task": "sequence-classification",
        "modality_config": {"message": {"method": "forward", "method_output_name": "logits"}},
        "processing_kwargs": {"chat_template": processing}}))
    return str(d)


def test_sentence_transformers_cross_encoder_scores_through_its_saved_template(tmp_path):
    g = golden("qwen3_reranker")
    default_instruction = ("Given a web search query, retrieve relevant passages that answer "
                           "the query")
    folder = st_cross_encoder(tmp_path, g["template"]["text"],
                              {"chat_template": "default", "restore_suffix": True,
                               "instruction": "Judge the spelling"})
    s = serve(folder, "--hf-overrides", RERANKER_OVERRIDES, log="st_cross_encoder")
    try:
        c = g["template_score"][0]
        base = {"queries": c["query"], "documents": c["document"], "use_activation": False}
        # The saved instruction is used...
        code, _, r = s.request("/score", base)
        assert code == 200, r
        assert abs(r["data"][0]["score"] - c["logits"][0]) > 1e-3
        # ... and a request's own wins over it: the template's default text gives the golden.
        for extra in ({"instruction": default_instruction},
                      {"chat_template_kwargs": {"instruction": default_instruction}}):
            code, _, r = s.request("/score", {**base, **extra})
            assert code == 200, r
            np.testing.assert_allclose(r["data"][0]["score"], c["logits"][0], atol=2e-4)
            assert r["usage"]["prompt_tokens"] == len(c["input_ids"])
    finally:
        s.stop()


def test_classifier_refusals(tmp_path):
    import subprocess
    from conftest import _binary

    def run(*args):
        r = subprocess.run([_binary(), "serve", *args, "--port", "0"], capture_output=True,
                           text=True, timeout=120)
        return r.returncode, r.stdout + r.stderr

    qwen3 = os.path.join(TINY, "qwen3")
    r = subprocess.run([_binary(), "generate", "--model", os.path.join(CLASSIFY, "qwen3_seqcls1"),
                        "--prompt", "hi"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "is a sequence classifier, served by `vllm serve`" in \
        r.stdout + r.stderr, r.stdout + r.stderr
    named = st_cross_encoder(tmp_path, "{{ messages }}", {"chat_template": "rag"})
    for args, want in [
        ([named, "--hf-overrides", RERANKER_OVERRIDES], "the named chat template 'rag'"),
        ([os.path.join(CLASSIFY, "qwen3_seqcls3"), "--runner", "generate"],
         "is a sequence classifier (a pooling model)"),
        ([qwen3, "--hf-overrides", '{"architectures": ["Qwen3ForSequenceClassification"]}'],
         "has no classifier head (score.weight)"),
        ([qwen3, "--convert", "classify", "--hf-overrides",
          '{"classifier_from_token": ["no", "yes"]}'], "needs method"),
    ]:
        code, out = run(*args)
        assert code != 0 and want in out, (args, out)
