"""Embedding models served as vLLM users serve them: `vllm serve` of a Sentence Transformers
folder (pooling picked from its modules.json, as vLLM's --runner auto does) or of a plain
*ForCausalLM folder with `--runner pooling --pooler-config ...`, answering /v1/embeddings to the
official openai client with sentence-transformers' vectors (tests/golden/embed/,
tools/make_embedding_goldens.py): floats and base64 (float32 / float16 / bfloat16, either byte
order), Matryoshka dimensions, token-id and chat inputs, truncation, concurrent requests; what
cannot be honoured is refused by name, at start or per request."""
import base64
import json
import os
import re
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import openai
import pytest

from conftest import _binary, _model, scrape_metrics
from test_serve_flags import TINY, Serve

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                      "embed")
EMBED = os.path.join(TINY, "embed")


def golden(name):
    with open(os.path.join(GOLDEN, name + ".json")) as f:
        return json.load(f)


def close(got, want, rel=1e-4):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    err = np.abs(got - want).max()
    assert err < rel * np.abs(want).max(), err


@pytest.fixture(scope="module")
def last_server():
    # --dtype float32: the goldens are sentence-transformers in float32. The Matryoshka sizes
    # come through --hf-overrides, as vLLM users give them for Qwen3-Embedding.
    s = Serve([os.path.join(EMBED, "qwen3_last"), "--served-model-name", "emb", "--dtype",
               "float32", "--hf-overrides", '{"matryoshka_dimensions": [32, 8]}'],
              log_name="embed_last")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def mean_server():
    # The plain tiny qwen2 (no Sentence Transformers files): pooling from the flags.
    s = Serve([os.path.join(TINY, "qwen2"), "--served-model-name", "mean", "--dtype", "float32",
               "--runner", "pooling",
               "--pooler-config", '{"pooling_type": "MEAN", "use_activation": false}'],
              log_name="embed_mean")
    yield s
    s.stop()


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=120)


def test_texts_give_sentence_transformers_embeddings(last_server):
    g = golden("qwen3_last")
    texts = [p["text"] for p in g["prompts"]]
    c = client(last_server)
    # Unasked, the openai client requests base64 (float32) and decodes it; "float" is JSON.
    for fmt in ({}, {"encoding_format": "float"}):
        r = c.embeddings.create(model="emb", input=texts, **fmt)
        assert r.model == "emb" and [d.index for d in r.data] == list(range(len(texts)))
        for d, p in zip(r.data, g["prompts"]):
            close(d.embedding, p["embedding"])
        assert r.usage.prompt_tokens == sum(len(p["ids"]) for p in g["prompts"])
        assert r.usage.total_tokens == r.usage.prompt_tokens
    # One string, and token ids (the ids already end with the appended <|endoftext|>).
    r = c.embeddings.create(model="emb", input=texts[0], encoding_format="float")
    close(r.data[0].embedding, g["prompts"][0]["embedding"])
    r = c.embeddings.create(model="emb", input=[p["ids"] for p in g["prompts"]],
                            encoding_format="float")
    for d, p in zip(r.data, g["prompts"]):
        close(d.embedding, p["embedding"])
    r = c.embeddings.create(model="emb", input=g["prompts"][1]["ids"], encoding_format="float")
    close(r.data[0].embedding, g["prompts"][1]["embedding"])


def test_mean_pooling_from_the_flags(mean_server):
    g = golden("qwen2_mean")
    c = client(mean_server)
    r = c.embeddings.create(model="mean", input=[p["text"] for p in g["prompts"]],
                            encoding_format="float")
    for d, p in zip(r.data, g["prompts"]):
        close(d.embedding, p["embedding"])
    # use_activation on a request normalizes the same vector.
    r = c.embeddings.create(model="mean", input=g["prompts"][2]["text"], encoding_format="float",
                            extra_body={"use_activation": True})
    want = np.asarray(g["prompts"][2]["embedding"])
    close(r.data[0].embedding, want / np.linalg.norm(want))


def test_base64_dtypes_and_byte_orders(last_server):
    g = golden("qwen3_last")
    want = np.asarray(g["prompts"][0]["embedding"], np.float32)
    for dtype, endianness, np_type in (("float32", "big", ">f4"), ("float16", "native", "<f2"),
                                       ("float16", "big", ">f2"), ("bfloat16", "little", "<u2")):
        code, _, body = last_server.request("/v1/embeddings", {
            "input": g["prompts"][0]["text"], "encoding_format": "base64",
            "embed_dtype": dtype, "endianness": endianness})
        assert code == 200, body
        raw = np.frombuffer(base64.b64decode(body["data"][0]["embedding"]), np_type)
        if dtype == "bfloat16":  # the top 16 bits of the float32
            got = (raw.astype(np.uint32) << 16).view(np.float32)
            tol = 2 ** -8
        else:
            got = raw.astype(np.float32)
            tol = 2 ** -11 if dtype == "float16" else 1e-6
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= tol * np.abs(want).max() + 1e-4, (dtype, endianness)


def test_matryoshka_dimensions(last_server):
    g = golden("qwen3_last")
    c = client(last_server)
    for t in g["truncated"]:
        r = c.embeddings.create(model="emb", input=g["prompts"][t["prompt"]]["text"],
                                dimensions=t["dimensions"], encoding_format="float")
        assert len(r.data[0].embedding) == t["dimensions"]
        close(r.data[0].embedding, t["embedding"])
    with pytest.raises(openai.BadRequestError) as e:
        c.embeddings.create(model="emb", input="x", dimensions=16)
    assert "only supports Matryoshka dimensions [32, 8], got 16" in str(e.value)


def test_vllms_pooling_route(last_server):
    g = golden("qwen3_last")
    for task in ({}, {"task": "embed"}):
        code, _, r = last_server.request("/pooling", {"input": [p["text"] for p in g["prompts"]],
                                                      **task})
        assert code == 200, r
        assert r["object"] == "list" and r["id"].startswith("pool-")
        for d, p in zip(r["data"], g["prompts"]):
            assert d["object"] == "pooling"
            close(d["data"], p["embedding"])
    code, _, r = last_server.request("/pooling", {"input": "x", "task": "token_embed"})
    assert code == 400 and r["error"]["param"] == "task", r


def test_chat_input_is_rendered_by_the_template(last_server):
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    # Embedding chats default to no generation prompt (vLLM's EmbeddingChatRequest).
    code, _, tok = last_server.request("/tokenize", {"messages": msgs,
                                                     "add_generation_prompt": False})
    assert code == 200, tok
    code, _, by_ids = last_server.request("/v1/embeddings", {
        "input": tok["tokens"], "encoding_format": "float"})
    assert code == 200, by_ids
    for body in ({"messages": msgs}, {"input": msgs}):
        code, _, r = last_server.request("/v1/embeddings", {**body, "encoding_format": "float"})
        assert code == 200, r
        assert r["usage"]["prompt_tokens"] == len(tok["tokens"])
        assert r["data"][0]["embedding"] == by_ids["data"][0]["embedding"]


def test_truncation_and_long_inputs(last_server):
    ids = [(7 * i) % 5000 + 100 for i in range(600)]  # past --max-model-len 512
    code, _, body = last_server.request("/v1/embeddings", {"input": ids})
    assert code == 400 and "maximum context length is 512" in body["error"]["message"], body
    code, _, cut = last_server.request("/v1/embeddings", {
        "input": ids, "truncate_prompt_tokens": 100, "encoding_format": "float"})
    assert code == 200 and cut["usage"]["prompt_tokens"] == 100, cut
    code, _, tail = last_server.request("/v1/embeddings", {
        "input": ids[-100:], "encoding_format": "float"})
    assert cut["data"][0]["embedding"] == tail["data"][0]["embedding"]
    code, _, body = last_server.request("/v1/embeddings", {"input": "x" * 20000})
    assert code == 400 and body["error"]["param"] == "input", body


def test_concurrent_requests_each_get_their_vector(last_server):
    g = golden("qwen3_last")
    c = client(last_server)

    def one(k):
        p = g["prompts"][k % len(g["prompts"])]
        r = c.embeddings.create(model="emb", input=p["text"], encoding_format="float")
        return k, r.data[0].embedding

    with ThreadPoolExecutor(16) as ex:
        for k, e in ex.map(one, range(32)):
            close(e, g["prompts"][k % len(g["prompts"])]["embedding"])


def test_bad_requests_are_refused_by_name(last_server):
    for body, status, want in [
        ({"input": []}, 400, "input must not be empty"),
        ({}, 400, "input"),
        ({"input": "x", "normalize": True}, 400, "Parameter `normalize` was removed"),
        ({"input": "x", "encoding_format": "bytes"}, 400, "encoding_format 'bytes'"),
        ({"input": "x", "embed_dtype": "fp8_e4m3"}, 400, "embed_dtype 'fp8_e4m3'"),
        ({"input": "x", "padding": "max_length"}, 400, "padding 'max_length'"),
        ({"input": [1, -2]}, 400, "input[1]"),
        ({"input": [999999999]}, 400, "outside the vocabulary"),
        ({"input": "x", "model": "nope"}, 404, "The model `nope` does not exist."),
        ({"input": "x", "dimensions": 0}, 400, "dimensions"),
    ]:
        code, _, r = last_server.request("/v1/embeddings", body)
        assert code == status and want in r["error"]["message"], (body, r)
    # An embedding model generates nothing.
    for path, body in (("/v1/completions", {"prompt": "hi"}),
                       ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})):
        code, _, r = last_server.request(path, body)
        assert code == 404 and "use /v1/embeddings" in r["error"]["message"], r


def test_bench_serve_embeddings_backend(last_server, tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run([_binary(), "bench", "serve", "--base-url", last_server.url, "--backend",
                        "openai-embeddings", "--endpoint", "/v1/embeddings", "--random-input-len",
                        "24", "--num-prompts", "6", "--max-concurrency", "3", "--seed", "1",
                        "--save-result", "--result-filename", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for key in ["Successful requests:", "Total input tokens:", "Request throughput (req/s):",
                "Input throughput (inputs/s):", "Total Token throughput (tok/s):",
                "Mean E2EL (ms):", "P99 E2EL (ms):"]:
        assert re.search(re.escape(key) + r"\s+[0-9.]+", r.stdout), (key, r.stdout)
    assert re.search(r"Successful requests:\s+6\b", r.stdout)
    assert re.search(r"Total input tokens:\s+144\b", r.stdout)  # 6 x 24, from the usage
    assert "TTFT" not in r.stdout and "generated tokens" not in r.stdout
    res = json.loads(out.read_text())
    assert res["completed"] == 6 and res["total_input_sequences"] == 6
    r = subprocess.run([_binary(), "bench", "serve", "--base-url", last_server.url, "--backend",
                        "openai-embeddings", "--num-prompts", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "URL must end with 'embeddings'" in r.stdout + r.stderr


def test_a_client_that_hangs_up_has_its_embeddings_aborted():
    # SmolLM2 as an embedding model, 48 inputs of 500 tokens: many seconds of prefill on a CPU.
    s = Serve([_model(), "--runner", "pooling", "--served-model-name", "e",
               "--max-num-batched-tokens", "512"], log_name="embed_hangup")
    try:
        lbl = '{model_name="e"}'
        body = json.dumps({"input": [[(97 * i + k) % 4000 + 100 for i in range(500)]
                                     for k in range(48)]}).encode()
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: " + str(len(body)).encode() +
                     b"\r\n\r\n" + body)
        deadline = time.time() + 60
        while scrape_metrics(s.url).get("vllm:num_requests_running" + lbl, 0) == 0:
            assert time.time() < deadline, "the embeddings never reached the engine"
            time.sleep(0.02)
        sock.close()
        # Aborted, the engine empties at once (running on would take many seconds).
        deadline = time.time() + 5
        while True:
            m = scrape_metrics(s.url)
            if (m.get("vllm:num_requests_running" + lbl) == 0.0
                    and m.get("vllm:num_requests_waiting" + lbl) == 0.0
                    and m.get("vllm:kv_cache_usage_perc" + lbl) == 0.0):
                break
            assert time.time() < deadline, f"not aborted: {m}"
            time.sleep(0.1)
        # Those done before the hang-up was seen (a step or two) finished; the rest were aborted.
        aborted = m.get('vllm:request_success_total{finished_reason="abort",model_name="e"}', 0)
        done = m.get('vllm:request_success_total{finished_reason="stop",model_name="e"}', 0)
        assert aborted + done == 48 and aborted >= 40, m
        code, _, r = s.request("/v1/embeddings", {"input": "still serving"})
        assert code == 200 and len(r["data"]) == 1, r
    finally:
        s.stop()


def test_run_batch_embeddings(tmp_path):
    g = golden("qwen3_last")
    lines = [json.dumps({"custom_id": f"e{k}", "method": "POST", "url": "/v1/embeddings",
                         "body": {"input": p["text"], "encoding_format": "float"}})
             for k, p in enumerate(g["prompts"][:3])]
    lines.append(json.dumps({"custom_id": "gen", "method": "POST", "url": "/v1/completions",
                             "body": {"prompt": "x"}}))
    inp, outp = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("\n".join(lines) + "\n")
    r = subprocess.run([_binary(), "run-batch", "-i", str(inp), "-o", str(outp), "--model",
                        os.path.join(EMBED, "qwen3_last"), "--dtype", "float32",
                        "--max-model-len", "512", "--kv-cache-memory", str(128 << 20)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in outp.read_text().splitlines()]
    assert [o["custom_id"] for o in out] == ["e0", "e1", "e2", "gen"]
    for o, p in zip(out[:3], g["prompts"]):
        assert o["error"] is None and o["response"]["status_code"] == 200
        close(o["response"]["body"]["data"][0]["embedding"], p["embedding"])
    assert out[3]["response"]["status_code"] == 404 and "use /v1/embeddings" in out[3]["error"]


def run_serve(*args):
    r = subprocess.run([_binary(), "serve", *args, "--port", "0"], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout + r.stderr


def test_generation_models_and_unusable_poolers(tmp_path):
    # A generation model has no /v1/embeddings.
    s = Serve([os.path.join(TINY, "qwen3")], log_name="embed_gen")
    try:
        code, _, r = s.request("/v1/embeddings", {"input": "hi"})
        assert code == 404 and "--runner pooling" in r["error"]["message"], r
    finally:
        s.stop()
    dense = tmp_path / "dense"
    dense.mkdir()
    src = os.path.join(EMBED, "qwen3_last")
    for f in os.listdir(src):
        if os.path.isfile(os.path.join(src, f)) and f != "modules.json":
            os.symlink(os.path.realpath(os.path.join(src, f)), dense / f)
    os.symlink(os.path.join(src, "1_Pooling"), dense / "1_Pooling")
    modules = json.load(open(os.path.join(src, "modules.json")))
    modules.append({"idx": 3, "name": "3", "path": "3_Dense",
                    "type": "sentence_transformers.models.Dense"})
    (dense / "modules.json").write_text(json.dumps(modules))
    qwen3 = os.path.join(TINY, "qwen3")
    for args, want in [
        ([qwen3, "--convert", "classify"], "has no classifier head (score.weight)"),
        ([qwen3, "--runner", "pooling", "--pooler-config", '{"pooling_type": "ALL"}'],
         "token pooling (ALL)"),
        ([qwen3, "--runner", "pooling", "--pooler-config", '{"normalize": true}'],
         "Parameter `normalize` was removed"),
        ([qwen3, "--runner", "pooling", "--pooler-config", '{"max_embed_len": 9000}'],
         "--pooler-config max_embed_len"),
        ([qwen3, "--runner", "pooling", "--convert", "none"], "is not a pooling model"),
        ([str(dense)], "sentence_transformers.models.Dense' is not supported"),
    ]:
        code, out = run_serve(*args)
        assert code != 0 and want in out, (args, out)
    r = subprocess.run([_binary(), "generate", "--model", qwen3, "--runner", "pooling",
                        "--prompt", "hi"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "served by `vllm serve`" in r.stdout + r.stderr
