"""vLLM's score API served by an embedding model (a bi-encoder): /score (and /v1/score) and
/rerank (and /v1/rerank, /v2/rerank) embed every query and document alone and score a pair by the
cosine similarity of their vectors, checked against sentence-transformers' vectors
(tests/golden/embed/, tools/make_embedding_goldens.py); per-document truncation, top_n, run-batch
score lines, and what cannot be honoured refused by name."""
import json
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import _binary
from test_embeddings import EMBED, golden
from test_serve_flags import TINY, Serve


@pytest.fixture(scope="module")
def server():
    s = Serve([os.path.join(EMBED, "qwen3_last"), "--served-model-name", "emb", "--dtype",
               "float32", "--max-model-len", "256"], log_name="score")
    yield s
    s.stop()


def cos(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def prompts():
    return golden("qwen3_last")["prompts"]


def test_score_is_the_cosine_of_reference_vectors(server):
    p = prompts()
    q, docs = p[0], p[1:]
    want = [cos(q["embedding"], d["embedding"]) for d in docs]
    texts = [d["text"] for d in docs]
    for path, body in [("/score", {"queries": q["text"], "documents": texts}),
                       ("/v1/score", {"text_1": q["text"], "text_2": texts}),
                       ("/score", {"data_1": [q["text"]], "data_2": texts, "model": "emb"}),
                       ("/score", {"queries": q["text"], "items": texts, "request_id": "abc"})]:
        code, _, r = server.request(path, body)
        assert code == 200, r
        assert r["object"] == "list" and r["model"] == "emb" and r["id"].startswith("score-")
        assert [d["index"] for d in r["data"]] == list(range(len(docs)))
        assert all(d["object"] == "score" for d in r["data"])
        np.testing.assert_allclose([d["score"] for d in r["data"]], want, atol=2e-4)
        # Every text once: the query is embedded once for all its documents.
        assert r["usage"]["prompt_tokens"] == len(q["ids"]) + sum(len(d["ids"]) for d in docs)
        assert r["usage"]["total_tokens"] == r["usage"]["prompt_tokens"]
    assert r["id"] == "score-abc"
    # N:N pairs the i-th query with the i-th document.
    code, _, r = server.request("/score", {"queries": [p[0]["text"], p[1]["text"]],
                                           "documents": [p[2]["text"], p[3]["text"]]})
    assert code == 200, r
    np.testing.assert_allclose([d["score"] for d in r["data"]],
                               [cos(p[0]["embedding"], p[2]["embedding"]),
                                cos(p[1]["embedding"], p[3]["embedding"])], atol=2e-4)


def test_rerank_sorts_by_relevance(server):
    p = prompts()
    q, docs = p[0], p[1:]
    want = [cos(q["embedding"], d["embedding"]) for d in docs]
    order = sorted(range(len(docs)), key=lambda k: -want[k])
    for path in ("/rerank", "/v1/rerank", "/v2/rerank"):
        code, _, r = server.request(path, {"query": q["text"], "documents": [d["text"] for d in docs],
                                           "model": "emb"})
        assert code == 200, r
        assert r["model"] == "emb" and r["id"].startswith("score-")
        assert [x["index"] for x in r["results"]] == order
        for x in r["results"]:
            assert x["document"] == {"text": docs[x["index"]]["text"], "multi_modal": None}
            assert abs(x["relevance_score"] - want[x["index"]]) < 2e-4
        assert r["usage"] == {"prompt_tokens": len(q["ids"]) + sum(len(d["ids"]) for d in docs),
                              "total_tokens": len(q["ids"]) + sum(len(d["ids"]) for d in docs)}
    code, _, r = server.request("/rerank", {"query": q["text"], "top_n": 2,
                                            "documents": [d["text"] for d in docs]})
    assert code == 200 and [x["index"] for x in r["results"]] == order[:2], r


def test_max_tokens_per_doc_keeps_the_first_tokens(server):
    # The document cut to its first 4 tokens is embedded as those 4 tokens (and the appended
    # <|endoftext|>): the same vector /v1/embeddings gives for those ids.
    p = prompts()
    doc = p[1]
    cut = doc["ids"][:4] + [doc["ids"][-1]]
    code, _, e = server.request("/v1/embeddings", {"input": [p[0]["ids"], cut],
                                                   "encoding_format": "float"})
    assert code == 200, e
    want = cos(e["data"][0]["embedding"], e["data"][1]["embedding"])
    code, _, r = server.request("/score", {"queries": p[0]["text"], "documents": doc["text"],
                                           "max_tokens_per_doc": 4})
    assert code == 200, r
    assert abs(r["data"][0]["score"] - want) < 1e-5
    assert r["usage"]["prompt_tokens"] == len(p[0]["ids"]) + len(cut)
    code, _, r = server.request("/score", {"queries": p[0]["text"], "documents": doc["text"]})
    assert abs(r["data"][0]["score"] - want) > 1e-3  # the cut mattered


def test_bad_score_requests_are_refused_by_name(server):
    for path, body, status, want in [
        ("/score", {"queries": ["a", "b"], "documents": ["x", "y", "z"]}, 400,
         "Input lengths must be either 1:1, 1:N or N:N"),
        ("/score", {"queries": "a", "documents": []}, 400,
         "At least one text_pair element must be given"),
        ("/score", {"queries": "a", "documents": [{"content": [{"type": "image_url"}]}]}, 400,
         "multimodal"),
        ("/score", {"queries": "a", "documents": "b", "instruction": "x"}, 400, "instruction"),
        ("/score", {"queries": "a", "documents": "b", "max_tokens_per_query": 256}, 400,
         "max_tokens_per_query (256) must be less than max_model_len (256)."),
        ("/score", {"queries": "a", "documents": "b", "model": "nope"}, 404,
         "The model `nope` does not exist."),
        ("/rerank", {"query": "a", "documents": ["b"], "top_n": -1}, 400, "top_n"),
        ("/rerank", {"documents": ["b"]}, 400, "query"),
        ("/score", {"queries": "a", "documents": ["b", "x " * 300]}, 400,
         "the maximum model length is 256"),
    ]:
        code, _, r = server.request(path, body)
        assert code == status and want in r["error"]["message"], (body, r)
    # Still serving.
    code, _, r = server.request("/score", {"queries": "a", "documents": "b"})
    assert code == 200, r


def test_bench_serve_rerank_backend(server, tmp_path):
    # vLLM's reranker benchmark: one query and --random-batch-size documents per /rerank request.
    out = tmp_path / "r.json"
    r = subprocess.run([_binary(), "bench", "serve", "--base-url", server.url, "--backend",
                        "vllm-rerank", "--endpoint", "/v1/rerank", "--dataset-name",
                        "random-rerank", "--random-input-len", "32", "--random-batch-size", "4",
                        "--num-prompts", "10", "--seed", "1", "--save-result",
                        "--result-filename", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"Successful requests:\s+3\b", r.stdout), r.stdout  # 4 + 4 + 2 documents
    for key in ["Total input tokens:", "Input throughput (inputs/s):", "Mean E2EL (ms):"]:
        assert re.search(re.escape(key) + r"\s+[0-9.]+", r.stdout), (key, r.stdout)
    res = json.loads(out.read_text())
    assert res["completed"] == 3 and res["total_input_sequences"] == 10
    # The usage's prompt tokens: every document and, once, the query.
    assert res["total_input_tokens"] > 10 * 10
    for args, want in [(["--backend", "vllm-rerank", "--endpoint", "/v1/embeddings",
                         "--dataset-name", "random-rerank"], "must end with one of: {'rerank'}"),
                       (["--backend", "vllm-rerank", "--endpoint", "/rerank"], "go together")]:
        r = subprocess.run([_binary(), "bench", "serve", "--base-url", server.url, *args,
                            "--num-prompts", "1"], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and want in r.stdout + r.stderr, (args, r.stdout + r.stderr)


def test_a_generation_model_has_no_score_api():
    s = Serve([os.path.join(TINY, "qwen3")], log_name="score_gen")
    try:
        for path in ("/score", "/v1/rerank"):
            code, _, r = s.request(path, {"queries": "a", "documents": "b"})
            assert code == 404 and "needs a pooling model" in r["error"]["message"], r
    finally:
        s.stop()


def test_run_batch_score_and_rerank(tmp_path):
    p = prompts()
    q, docs = p[0], p[1:4]
    want = [cos(q["embedding"], d["embedding"]) for d in docs]
    lines = [
        {"custom_id": "s", "url": "/score",
         "body": {"queries": q["text"], "documents": [d["text"] for d in docs]}},
        {"custom_id": "r", "url": "/v1/rerank",
         "body": {"query": q["text"], "documents": [d["text"] for d in docs], "top_n": 1}},
    ]
    inp, outp = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps({"method": "POST", **x}) + "\n" for x in lines))
    r = subprocess.run([_binary(), "run-batch", "-i", str(inp), "-o", str(outp), "--model",
                        os.path.join(EMBED, "qwen3_last"), "--dtype", "float32",
                        "--max-model-len", "512", "--kv-cache-memory", str(128 << 20)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = {o["custom_id"]: o for o in map(json.loads, outp.read_text().splitlines())}
    s = out["s"]["response"]["body"]
    np.testing.assert_allclose([d["score"] for d in s["data"]], want, atol=2e-4)
    best = max(range(len(docs)), key=lambda k: want[k])
    assert [x["index"] for x in out["r"]["response"]["body"]["results"]] == [best]
