#!/usr/bin/env python3
"""Soak test: many concurrent clients against a running `vllm serve`, for a long time.

Each client loops until the deadline over a random mix: streaming and non-streaming
completions and chat completions with random prompts and random max_tokens; a share of them
(--disconnect-frac) hang up mid-request; a share (--bad-frac) are malformed or invalid requests
(bad JSON, wrong types, deep nesting, huge numbers, prompts over the context, out-of-range
token ids) that must get a 4xx. At the end the server must be idle with an empty KV cache.

Reports completed / errored requests, p50 / p99 latency, the server's RSS at start (after a
warm-up, with the clients paused and the server drained), middle (under load) and end (drained
again), and the KV cache usage after the run. Exit status 1 when any server
error happened (5xx, a dropped connection we did not cause, a 4xx on a valid request), when the
KV cache did not return to empty, or when RSS grew more than --max-rss-growth. RSS growth is
judged net of the KV cache's resident pages (the cache is mapped lazily, so pages are committed
as blocks are first written; /metrics reports the resident bytes, counted with mincore).

  python3 tools/soak.py --url http://127.0.0.1:8000 --pid $(pgrep -f 'vllm serve') \
      --clients 64 --duration 3600 --json soak.json
"""
import argparse
import http.client
import json
import random
import re
import statistics
import sys
import threading
import time
import urllib.parse
import urllib.request

WORDS = ("the of and to in is was for on that with as by at from his her an were which are this "
         "be has had not but they one their it all she been he would there more when can said "
         "river mountain engine token cache paged kernel batch queue scheduler stream model "
         "Paris Tokyo Berlin océan 東京 Ünïcödé 🙂 12345 x=y+1 {braces} [brackets] \"quotes\"").split()


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def metrics(base, headers):
    req = urllib.request.Request(base + "/metrics", headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r'^([a-zA-Z_:]+)(\{[^}]*\})? ([0-9.eE+-]+|NaN|[+-]Inf)$', line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
    return out


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = 0
        self.disconnected = 0
        self.bad_refused = 0
        self.server_errors = []
        self.latencies = []
        # Clients start a new request only while `go` is set; `busy` counts requests in flight.
        self.go = threading.Event()
        self.go.set()
        self.busy = 0

    def error(self, what):
        with self.lock:
            self.server_errors.append(what)


def stream_error(data):
    """The first SSE event that is not a well-formed chunk (or that is an error event), or None.
    Every event is parsed: a token whose text is `error` must not read as an error. Comment
    lines (`: keep-alive`) are allowed."""
    for block in data.decode("utf-8", "replace").split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln and not ln.startswith(":")]
        if not lines:
            continue
        if len(lines) != 1 or not lines[0].startswith("data: "):
            return block
        payload = lines[0][len("data: "):]
        if payload == "[DONE]":
            continue
        try:
            event = json.loads(payload)
        except ValueError:
            return block
        if not isinstance(event, dict) or "error" in event or "choices" not in event:
            return block
    return None


def random_prompt(rng, max_words):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, max_words)))


def bad_request(rng, model, max_model_len):
    k = rng.randrange(8)
    if k == 0:
        return "/v1/completions", b'{"prompt": "x", "max_tokens": '
    if k == 1:
        return "/v1/completions", json.dumps({"prompt": "x", "max_tokens": "ten"}).encode()
    if k == 2:
        d = rng.choice([200, 5000, 50000])
        return "/v1/chat/completions", (
            '{"messages": [{"role": "user", "content": "hi", "x": %s}]}' % ("[" * d + "]" * d)).encode()
    if k == 3:
        return "/v1/completions", b'{"prompt": "x", "temperature": 1e400}'
    if k == 4:
        return "/v1/completions", json.dumps(
            {"prompt": "word " * (max_model_len * 2), "max_tokens": 4}).encode()
    if k == 5:
        return "/v1/completions", json.dumps({"prompt": [[-5, 10**12]], "max_tokens": 4}).encode()
    if k == 6:
        return "/v1/chat/completions", json.dumps({"messages": []}).encode()
    return "/v1/completions", json.dumps({"model": "no-such-model", "prompt": "x"}).encode()


def client(idx, args, deadline, stats, headers, max_model_len):
    rng = random.Random(args.seed * 1000 + idx)
    u = urllib.parse.urlparse(args.url)
    while time.time() < deadline[0]:
        stats.go.wait()
        with stats.lock:
            stats.busy += 1
        r = rng.random()
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=args.request_timeout)
        try:
            if r < args.bad_frac:
                path, body = bad_request(rng, args.model, max_model_len)
                conn.request("POST", path, body=body, headers=headers)
                resp = conn.getresponse()
                resp.read()
                if 400 <= resp.status < 500:
                    with stats.lock:
                        stats.bad_refused += 1
                else:
                    stats.error(f"bad request {path} got {resp.status}")
                continue
            chat = rng.random() < 0.5
            stream = rng.random() < 0.5
            max_tokens = rng.randint(1, args.max_tokens)
            prompt = random_prompt(rng, args.max_prompt_words)
            req = {"max_tokens": max_tokens, "stream": stream, "temperature": rng.choice([0, 0.8]),
                   "seed": rng.randrange(1 << 30)}
            if args.model:
                req["model"] = args.model
            if chat:
                req["messages"] = [{"role": "user", "content": prompt}]
                path = "/v1/chat/completions"
            else:
                req["prompt"] = prompt
                path = "/v1/completions"
            hang_up = r < args.bad_frac + args.disconnect_frac
            t0 = time.time()
            conn.request("POST", path, body=json.dumps(req).encode(), headers=headers)
            if hang_up:
                time.sleep(rng.uniform(0.05, 1.0))
                conn.sock.close()
                with stats.lock:
                    stats.disconnected += 1
                continue
            resp = conn.getresponse()
            data = resp.read()
            if resp.status != 200:
                stats.error(f"{path} -> {resp.status}: {data[:200]!r}")
                continue
            if stream:
                if not data.rstrip().endswith(b"data: [DONE]"):
                    stats.error(f"{path} stream did not end with [DONE]: {data[-200:]!r}")
                    continue
                bad = stream_error(data)
                if bad:
                    stats.error(f"{path} stream carried an error: {bad[:300]!r}")
                    continue
            else:
                json.loads(data)
            with stats.lock:
                stats.ok += 1
                stats.latencies.append(time.time() - t0)
        except (OSError, http.client.HTTPException, ValueError) as e:
            stats.error(f"client {idx}: {type(e).__name__}: {e}")
        finally:
            conn.close()
            with stats.lock:
                stats.busy -= 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--pid", type=int, help="server process, for RSS")
    ap.add_argument("--api-key", default="")
    ap.add_argument("--model", default="", help="model name to send (default: none)")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=60, help="seconds")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds before the start RSS sample (default: 10%% of the duration)")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--max-prompt-words", type=int, default=200)
    ap.add_argument("--disconnect-frac", type=float, default=0.10)
    ap.add_argument("--bad-frac", type=float, default=0.05)
    ap.add_argument("--max-rss-growth", type=float, default=0.05)
    ap.add_argument("--request-timeout", type=float, default=300,
                    help="seconds a client waits for a reply before counting an error")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the report here too")
    args = ap.parse_args()

    headers = {"Content-Type": "application/json"}
    if args.api_key:
        headers["Authorization"] = "Bearer " + args.api_key
    with urllib.request.urlopen(urllib.request.Request(args.url + "/v1/models", headers=headers),
                                timeout=30) as r:
        max_model_len = json.loads(r.read())["data"][0]["max_model_len"]

    stats = Stats()
    t_start = time.time()
    deadline = [t_start + args.duration]  # a list: the warm-up pause moves it
    threads = [threading.Thread(target=client, args=(i, args, deadline, stats, headers, max_model_len),
                                daemon=True) for i in range(args.clients)]
    for t in threads:
        t.start()
    warmup = args.warmup if args.warmup is not None else 0.1 * args.duration
    rss, kv_kb = {}, {}

    def sample(name):
        rss[name] = rss_kb(args.pid) if args.pid else None
        kv_kb[name] = metrics(args.url, headers).get("vllmcpp:kv_cache_resident_bytes", 0) // 1024

    def drained(limit_s):
        """Waits until the server runs and queues nothing and holds no KV blocks."""
        m = {}
        until = time.time() + limit_s
        while time.time() < until:
            m = metrics(args.url, headers)
            if (m.get("vllm:num_requests_running", 1) == 0
                    and m.get("vllm:num_requests_waiting", 1) == 0
                    and m.get("vllm:kv_cache_usage_perc", 1) == 0):
                break
            time.sleep(0.5)
        return m

    # RSS is compared at two idle points: after the warm-up (clients paused, the server
    # drained) and after the run (drained again). Under load RSS swings with what is in
    # flight; at idle what remains is what the server kept.
    time.sleep(max(0.0, t_start + warmup - time.time()))
    stats.go.clear()
    pause_t0 = time.time()
    while time.time() < pause_t0 + args.request_timeout:
        with stats.lock:
            if stats.busy == 0:
                break
        time.sleep(0.2)
    drained(120)
    time.sleep(1.0)
    sample("start")
    paused = time.time() - pause_t0
    # The pause does not count against the run: every client's deadline moves with it.
    deadline[0] += paused
    stats.go.set()
    time.sleep(max(0.0, t_start + paused + args.duration / 2 - time.time()))
    sample("middle")
    for t in threads:
        t.join()
    # Everything we sent has ended (or hung up): the engine must drain to an empty cache.
    m = drained(120)
    time.sleep(1.0)
    sample("end")
    lat = sorted(stats.latencies)
    report = {
        "clients": args.clients,
        "duration_s": round(time.time() - t_start, 1),
        "completed": stats.ok,
        "disconnected_on_purpose": stats.disconnected,
        "bad_requests_refused": stats.bad_refused,
        "server_errors": len(stats.server_errors),
        "first_errors": stats.server_errors[:10],
        "latency_p50_s": round(statistics.median(lat), 3) if lat else None,
        "latency_p99_s": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 3) if lat else None,
        "rss_kb": rss,
        # The KV cache is mapped lazily: its pages are committed as blocks are first written
        # (up to the cache's size). RSS growth is judged without them.
        "kv_resident_kb": kv_kb,
        "kv_cache_usage_after": m.get("vllm:kv_cache_usage_perc"),
        "requests_running_after": m.get("vllm:num_requests_running"),
        "requests_waiting_after": m.get("vllm:num_requests_waiting"),
    }
    growth = None
    if rss.get("start") and rss.get("end"):
        report["rss_growth_raw"] = round(rss["end"] / rss["start"] - 1, 4)
        growth = (rss["end"] - kv_kb["end"]) / (rss["start"] - kv_kb["start"]) - 1
        report["rss_growth"] = round(growth, 4)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2, ensure_ascii=False)
    failed = (stats.server_errors or report["kv_cache_usage_after"] != 0
              or report["requests_running_after"] != 0 or stats.ok == 0
              or (growth is not None and growth > args.max_rss_growth))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
