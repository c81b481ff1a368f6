"""vLLM's serving-operations and scheduler flags on a real server, through the official
`openai` client: admission limits (--max-num-queued-reqs / --max-num-queued-tokens answer 503
with vLLM's messages and count vllm:admission_rejections_total), a graceful stop
(--shutdown-timeout lets the requests already taken finish after SIGTERM, then exits),
--log-level, --sse-keep-alive-interval, --fingerprint-mode, and the scheduler knobs
--max-num-active-seqs, --long-prefill-token-threshold and --max-num-scheduled-tokens."""
import json
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import openai
import pytest

from conftest import MODEL_NAME, Server, _binary, _model, openai_client

BUSY = ("The engine is currently busy and cannot accept new requests. Please try again later "
        "or on a different instance.")
BACKLOG = ("The engine has reached its prefill token backlog limit. Please try again later or "
           "on a different instance.")


def _client(srv):
    return openai_client(srv)


def _rejections(srv, reason):
    return srv.metrics()['vllm:admission_rejections_total{model_name="%s",reason="%s"}'
                         % (MODEL_NAME, reason)]


def _first_chunk_then_rest(stream):
    """Reads a completions stream: the first text chunk, then the rest (text, finish reason)."""
    it = iter(stream)
    text, finish = "", None
    for chunk in it:
        if chunk.choices and chunk.choices[0].text:
            text += chunk.choices[0].text
            break
    yield
    for chunk in it:
        if chunk.choices:
            text += chunk.choices[0].text or ""
            finish = chunk.choices[0].finish_reason or finish
    yield text, finish


def test_max_num_queued_reqs_answers_503_and_counts_the_rejection():
    srv = Server(["--max-num-queued-reqs", "2"])
    try:
        c = _client(srv)
        # One request of n=2 fills the limit; while it streams, any other is refused.
        stream = c.completions.create(model=MODEL_NAME, prompt="Once upon a time", n=2,
                                      max_tokens=200, temperature=0, stream=True,
                                      extra_body={"ignore_eos": True})
        reader = _first_chunk_then_rest(stream)
        next(reader)
        with pytest.raises(openai.APIStatusError) as e:
            c.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2)
        assert e.value.status_code == 503
        assert e.value.body["message"] == BUSY
        with pytest.raises(openai.APIStatusError) as e:
            c.chat.completions.create(model=MODEL_NAME, max_tokens=2,
                                      messages=[{"role": "user", "content": "Hi"}])
        assert e.value.status_code == 503
        text, finish = next(reader)
        assert finish == "length"
        # Once the first request is done, a request of n=2 fits again, and one of n=3 never.
        r = c.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2, n=2)
        assert len(r.choices) == 2
        with pytest.raises(openai.APIStatusError) as e:
            c.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2, n=3)
        assert e.value.status_code == 503
        assert _rejections(srv, "max_num_queued_reqs") == 3
        assert _rejections(srv, "max_num_queued_tokens") == 0
    finally:
        srv.stop()


def test_max_num_queued_tokens_answers_503_with_vllms_message():
    # vLLM refuses once the prompts still in prefill reach the limit: 0 refuses every request
    # (the counting itself is checked in api_tests' AsyncEngine.AdmissionCounts* tests).
    srv = Server(["--max-num-queued-tokens", "0"])
    try:
        c = _client(srv)
        with pytest.raises(openai.APIStatusError) as e:
            c.chat.completions.create(model=MODEL_NAME, max_tokens=2,
                                      messages=[{"role": "user", "content": "Hi"}])
        assert e.value.status_code == 503
        assert e.value.body["message"] == BACKLOG
        assert _rejections(srv, "max_num_queued_tokens") == 1
    finally:
        srv.stop()
    srv = Server(["--max-num-queued-tokens", "100000"])
    try:
        r = _client(srv).completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=3)
        assert r.usage.completion_tokens == 3
    finally:
        srv.stop()


def test_shutdown_timeout_lets_running_requests_finish_after_sigterm():
    srv = Server(["--shutdown-timeout", "60"])
    try:
        c = _client(srv)
        reference = c.completions.create(model=MODEL_NAME, prompt="The history of Rome",
                                         max_tokens=120, temperature=0,
                                         extra_body={"ignore_eos": True}).choices[0].text
        stream = c.completions.create(model=MODEL_NAME, prompt="The history of Rome",
                                      max_tokens=120, temperature=0, stream=True,
                                      extra_body={"ignore_eos": True})
        reader = _first_chunk_then_rest(stream)
        next(reader)
        srv.proc.send_signal(signal.SIGTERM)
        # New connections are refused from now on (the listener is closed).
        deadline = time.time() + 10
        refused = False
        while time.time() < deadline and not refused:
            try:
                with urllib.request.urlopen(srv.url + "/health", timeout=2):
                    time.sleep(0.05)
            except OSError:
                refused = True
        assert refused, "the server kept taking connections after SIGTERM"
        text, finish = next(reader)
        assert finish == "length"
        assert text == reference  # the whole request, as it runs without a stop
        assert srv.proc.wait(timeout=60) == 0
        assert "draining 1 in-flight requests (--shutdown-timeout 60 s)" in srv.output()
    finally:
        srv.stop()


def test_without_shutdown_timeout_sigterm_aborts_running_requests():
    srv = Server([])
    try:
        stream = _client(srv).completions.create(model=MODEL_NAME, prompt="The history of Rome",
                                                 max_tokens=400, temperature=0, stream=True,
                                                 extra_body={"ignore_eos": True})
        reader = _first_chunk_then_rest(stream)
        next(reader)
        t0 = time.time()
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=30) == 0
        assert time.time() - t0 < 10
        try:
            text, finish = next(reader)
            assert finish != "length"
        except (openai.APIError, StopIteration):
            pass  # the stream ended with an error event or a cut connection: aborted either way
    finally:
        srv.stop()


def test_shutdown_timeout_aborts_what_outlasts_it():
    srv = Server(["--shutdown-timeout", "1", "--max-model-len", "4096"])
    try:
        stream = _client(srv).completions.create(model=MODEL_NAME, prompt="The history of Rome",
                                                 max_tokens=4000, temperature=0, stream=True,
                                                 extra_body={"ignore_eos": True})
        reader = _first_chunk_then_rest(stream)
        next(reader)
        t0 = time.time()
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=30) == 0
        assert time.time() - t0 < 15
        assert "aborting 1 requests still running at the timeout" in srv.output()
    finally:
        srv.stop()


def test_log_level_flag():
    srv = Server(["--log-level", "WARNING", "--enable-log-requests"])
    try:
        r = _client(srv).completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2)
        assert r.usage.completion_tokens == 2
        out = srv.output()
        assert "vllm.cpp serving" not in out  # the startup lines are INFO
        assert "INFO vllm.cpp" not in out  # nor the --enable-log-requests lines
    finally:
        srv.stop()
    srv = Server(["--log-level", "debug", "--enable-log-requests"])
    try:
        _client(srv).completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2,
                                        extra_body={"no_such_field": 1})
        time.sleep(0.2)
        out = srv.output()
        assert "vllm.cpp serving" in out
        assert "fields ignored (unknown): no_such_field" in out
        assert "INFO vllm.cpp: completion request: 1 prompt(s)" in out
    finally:
        srv.stop()
    bad = subprocess.run([_binary(), "serve", _model(), "--log-level", "verbose"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0
    assert "--log-level" in bad.stderr + bad.stdout


def test_sse_keep_alive_interval_is_met_by_the_idle_comments():
    """vLLM's --sse-keep-alive-interval N: an idle stream gets ': keep-alive' at least every N
    seconds. Here every stream gets one after 1 s idle (it also tells a hung-up client), so any
    N is met: hold the engine in a long prefill-free stretch by streaming behind a busy request
    and read the raw SSE."""
    srv = Server(["--sse-keep-alive-interval", "2", "--max-num-seqs", "1",
                  "--max-model-len", "4096"])
    try:
        c = _client(srv)
        # A long request occupies the only sequence slot; the streamed one waits in the queue.
        busy = threading.Thread(target=lambda: c.completions.create(
            model=MODEL_NAME, prompt="Count", max_tokens=1500, temperature=0,
            extra_body={"ignore_eos": True}))
        busy.start()
        time.sleep(0.3)
        body = json.dumps({"model": MODEL_NAME, "prompt": "Hi", "max_tokens": 2,
                           "stream": True}).encode()
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        data = b""
        while b"[DONE]" not in data:
            chunk = s.recv(65536)
            assert chunk, data
            data += chunk
        s.close()
        busy.join()
        assert b": keep-alive\n\n" in data
        # The comments came before the first event: the request was queued, not failed.
        assert data.index(b": keep-alive") < data.index(b"data: {")
    finally:
        srv.stop()


def test_scheduler_flags_keep_the_tokens_and_bound_the_running_set():
    """--max-num-active-seqs bounds the running set (seen on /metrics while four requests run);
    --long-prefill-token-threshold and --max-num-scheduled-tokens only reshape the chunks, so
    greedy tokens equal a default server's."""
    prompts = ["The capital of France is " * k for k in (1, 30, 60, 90)]

    def run_all(srv):
        c = _client(srv)
        out = [None] * len(prompts)

        def one(i):
            out[i] = c.completions.create(model=MODEL_NAME, prompt=prompts[i], max_tokens=24,
                                          temperature=0,
                                          extra_body={"ignore_eos": True}).choices[0].text
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(prompts))]
        for t in threads:
            t.start()
        peak_running, peak_waiting = 0, 0
        while any(t.is_alive() for t in threads):
            m = srv.metrics()
            peak_running = max(peak_running, m.get(
                'vllm:num_requests_running{model_name="%s"}' % MODEL_NAME, 0))
            peak_waiting = max(peak_waiting, m.get(
                'vllm:num_requests_waiting{model_name="%s"}' % MODEL_NAME, 0))
            time.sleep(0.01)
        for t in threads:
            t.join()
        return out, peak_running, peak_waiting

    srv = Server([])
    try:
        reference, _, _ = run_all(srv)
    finally:
        srv.stop()
    srv = Server(["--max-num-active-seqs", "1", "--long-prefill-token-threshold", "64",
                  "--long-prefill-token-threshold-adaptive", "--max-num-scheduled-tokens", "256"])
    try:
        got, peak_running, peak_waiting = run_all(srv)
        assert got == reference
        assert peak_running == 1
        assert peak_waiting >= 1
    finally:
        srv.stop()
    for flags, message in (
            (["--max-num-seqs", "4", "--max-num-active-seqs", "8"],
             "max_num_active_seqs (8) cannot be greater than max_num_seqs (4)."),
            (["--long-prefill-token-threshold", "100000"],
             "long_prefill_token_threshold (100000) cannot be greater than the max_model_len"),
            (["--max-num-batched-tokens", "512", "--max-num-scheduled-tokens", "1024"],
             "max_num_scheduled_tokens (1024) cannot be greater than max_num_batched_tokens")):
        bad = subprocess.run([_binary(), "serve", _model(), "--max-model-len", "512"] + flags,
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode != 0
        assert message in bad.stderr, bad.stderr


def test_system_fingerprint_modes():
    """vLLM 0.33's system_fingerprint: on every chat / completions response and on the final
    chunk of a stream (the usage chunk when one follows); --fingerprint-mode none / custom."""
    import re
    srv = Server([])
    try:
        c = _client(srv)
        msgs = [{"role": "user", "content": "Hi"}]
        a = c.chat.completions.create(model=MODEL_NAME, messages=msgs, max_tokens=2)
        b = c.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2)
        assert re.fullmatch(r"vllm\.cpp-[0-9.]+-[0-9a-f]{8}", a.system_fingerprint)
        assert b.system_fingerprint == a.system_fingerprint
        chunks = list(c.chat.completions.create(model=MODEL_NAME, messages=msgs, max_tokens=3,
                                                stream=True))
        stamped = [ch for ch in chunks if ch.system_fingerprint]
        assert len(stamped) == 1 and stamped[0] is chunks[-1]
        assert stamped[0].choices[0].finish_reason == "length"
        chunks = list(c.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=3,
                                           stream=True,
                                           stream_options={"include_usage": True}))
        stamped = [ch for ch in chunks if ch.system_fingerprint]
        assert len(stamped) == 1 and stamped[0] is chunks[-1] and stamped[0].usage is not None
    finally:
        srv.stop()
    srv = Server(["--fingerprint-mode", "none"])
    try:
        r = _client(srv).chat.completions.create(model=MODEL_NAME, max_tokens=2,
                                                 messages=[{"role": "user", "content": "Hi"}])
        assert r.system_fingerprint is None
    finally:
        srv.stop()
    srv = Server(["--fingerprint-mode", "custom", "--fingerprint-value", "fp-blue-7"])
    try:
        r = _client(srv).completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=2)
        assert r.system_fingerprint == "fp-blue-7"
    finally:
        srv.stop()
    bad = subprocess.run([_binary(), "serve", _model(), "--fingerprint-mode", "custom"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0
    assert "--fingerprint-mode custom needs --fingerprint-value" in bad.stderr
