"""The client commands as vLLM ships them, against the session's `vllm serve`: `vllm chat` and
`vllm complete` (one-shot and interactive on stdin, streaming), `vllm bench serve` (random
prompts, concurrency, vLLM's report and --save-result JSON), and `vllm run-batch` (OpenAI batch
files in process, with per-line errors). Each output is checked against the same request made
with the official `openai` client."""
import json
import re
import subprocess

from conftest import MODEL_NAME, _binary, _model


def vllm(*args, stdin=None, check=True):
    r = subprocess.run([_binary(), *args], input=stdin, capture_output=True, text=True,
                       timeout=600)
    if check:
        assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_chat_quick_and_interactive_keep_the_conversation(server, client):
    url = server.url + "/v1"
    r = vllm("chat", "--url", url, "-q", "What is 2+2?", "--max-tokens", "12",
             "--temperature", "0")
    lines = r.stdout.splitlines()
    assert lines[0] == f"Using model: {MODEL_NAME}"
    want = client.chat.completions.create(
        model=MODEL_NAME, messages=[{"role": "user", "content": "What is 2+2?"}], max_tokens=12,
        temperature=0).choices[0].message.content
    assert "\n".join(lines[1:]).strip() == want.strip()
    # Interactive: two turns; the second is answered with the first in its history.
    r = vllm("chat", "--url", server.url, "--system-prompt", "Be brief.", "--max-tokens", "6",
             "--temperature", "0", stdin="Hello\nAnd you?\n")
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]
    first = client.chat.completions.create(model=MODEL_NAME, messages=msgs, max_tokens=6,
                                           temperature=0).choices[0].message.content
    msgs += [{"role": "assistant", "content": first}, {"role": "user", "content": "And you?"}]
    second = client.chat.completions.create(model=MODEL_NAME, messages=msgs, max_tokens=6,
                                            temperature=0).choices[0].message.content
    assert r.stdout.count("> ") == 3  # two prompts answered, then end of input
    assert first in r.stdout and second in r.stdout
    assert r.stdout.index(first) < r.stdout.index(second)


def test_complete_quick_streams_the_completion(server, client):
    r = vllm("complete", "--url", server.url + "/v1", "--model-name", MODEL_NAME, "-q",
             "The capital of France is", "--max-tokens", "6", "--temperature", "0")
    want = client.completions.create(model=MODEL_NAME, prompt="The capital of France is",
                                     max_tokens=6, temperature=0).choices[0].text
    assert r.stdout.split("\n", 1)[1].rstrip("\n") == want
    bad = vllm("complete", "--url", server.url, "-q", "x", "--model-name", "nope", check=False)
    assert bad.returncode != 0 and "does not exist" in bad.stderr


def test_bench_serve_reports_like_vllm(server, tmp_path):
    out = tmp_path / "result.json"
    r = vllm("bench", "serve", "--base-url", server.url, "--dataset-name", "random",
             "--random-input-len", "24", "--random-output-len", "5", "--num-prompts", "6",
             "--max-concurrency", "3", "--request-rate", "inf", "--ignore-eos", "--seed", "1",
             "--save-result", "--result-filename", str(out))
    text = r.stdout
    for key in ["Successful requests:", "Benchmark duration (s):", "Total input tokens:",
                "Total generated tokens:", "Request throughput (req/s):",
                "Output token throughput (tok/s):", "Mean TTFT (ms):", "Median TTFT (ms):",
                "P99 TTFT (ms):", "Mean TPOT (ms):", "Median TPOT (ms):", "P99 TPOT (ms):",
                "Mean ITL (ms):", "Median ITL (ms):", "P99 ITL (ms):"]:
        assert re.search(re.escape(key) + r"\s+[0-9.]+", text), (key, text)
    assert re.search(r"Successful requests:\s+6\b", text)
    assert re.search(r"Total input tokens:\s+144\b", text)   # 6 x 24, exact lengths
    assert re.search(r"Total generated tokens:\s+30\b", text)  # 6 x 5 with --ignore-eos
    res = json.load(open(out))
    assert res["completed"] == 6 and res["total_output_tokens"] == 30
    assert res["input_lens"] == [24] * 6 and res["output_lens"] == [5] * 6
    assert all(t > 0 for t in res["ttfts"]) and all(len(i) == 4 for i in res["itls"])
    assert res["mean_ttft_ms"] > 0 and res["p99_itl_ms"] >= res["median_itl_ms"]


def test_run_batch_answers_each_line_and_reports_bad_ones(client, tmp_path):
    chat_body = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Say hi"}],
                 "max_tokens": 6, "temperature": 0}
    comp_body = {"model": MODEL_NAME, "prompt": "The capital of France is", "max_tokens": 4,
                 "temperature": 0, "logprobs": 1}
    lines = [
        json.dumps({"custom_id": "chat-1", "method": "POST", "url": "/v1/chat/completions",
                    "body": chat_body}),
        json.dumps({"custom_id": "comp-1", "method": "POST", "url": "/v1/completions",
                    "body": comp_body}),
        "{this is not json",
        json.dumps({"custom_id": "bad-field", "method": "POST", "url": "/v1/completions",
                    "body": {"prompt": "x", "use_beam_search": True}}),
        json.dumps({"custom_id": "bad-url", "method": "POST", "url": "/v1/embeddings",
                    "body": {"input": "x"}}),
        json.dumps({"custom_id": "bad-model", "method": "POST", "url": "/v1/completions",
                    "body": {"model": "other", "prompt": "x"}}),
    ]
    inp, outp = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("\n".join(lines) + "\n")
    vllm("run-batch", "-i", str(inp), "-o", str(outp), "--model", _model(),
         "--served-model-name", MODEL_NAME, "--max-model-len", "512",
         "--kv-cache-memory", str(128 << 20))
    out = [json.loads(line) for line in outp.read_text().splitlines()]
    assert [o["custom_id"] for o in out] == ["chat-1", "comp-1", None, "bad-field", "bad-url",
                                             "bad-model"]
    ok = {o["custom_id"]: o for o in out[:2]}
    for o in ok.values():
        assert o["error"] is None and o["response"]["status_code"] == 200
    want_chat = client.chat.completions.create(**chat_body).choices[0].message.content
    assert ok["chat-1"]["response"]["body"]["choices"][0]["message"]["content"] == want_chat
    want = client.completions.create(**comp_body).choices[0]
    got = ok["comp-1"]["response"]["body"]["choices"][0]
    assert got["text"] == want.text
    assert got["logprobs"]["token_logprobs"] == want.logprobs.token_logprobs
    for o, status, needle in [(out[2], 400, "not JSON"), (out[3], 400, "use_beam_search"),
                              (out[4], 404, "needs a pooling model"), (out[5], 404, "other")]:
        assert o["response"]["status_code"] == status and o["response"]["body"] is None
        assert needle in o["error"]
