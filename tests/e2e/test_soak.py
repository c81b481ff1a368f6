"""A short soak: tools/soak.py (the hour-long run, with its RSS bound, is in the README) with
16 clients for 20 s: random prompts and max_tokens, streaming and not, 10% hanging up
mid-request, 20% malformed. No server error, every bad request a 4xx, and the KV cache back to
empty afterwards. (RSS is not bounded here: 20 s is mostly the cache's pages being committed.)"""
import json
import os
import subprocess
import sys

from conftest import MODEL_NAME, REPO


def test_short_soak(server, tmp_path):
    out = tmp_path / "soak.json"
    r = subprocess.run(
        [sys.executable, os.path.join(REPO, "tools", "soak.py"), "--url", server.url,
         "--pid", str(server.proc.pid), "--model", MODEL_NAME, "--clients", "16",
         "--duration", "20", "--max-tokens", "16", "--max-prompt-words", "60",
         "--bad-frac", "0.2", "--max-rss-growth", "100", "--json", str(out)],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    assert rep["server_errors"] == 0
    assert rep["completed"] > 0 and rep["bad_requests_refused"] > 0
    assert rep["disconnected_on_purpose"] > 0
    assert rep["kv_cache_usage_after"] == 0
