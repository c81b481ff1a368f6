"""Fixtures for the end-to-end tests: a real `vllm serve` on the SmolLM2 GGUF.

The binary is $VLLM_BIN (default: <repo>/build/vllm); the model is $VLLM_TEST_GGUF (default:
~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf). A missing model fails the tests.
$VLLM_E2E_SERVER_ARGS adds flags to every server started here.
"""
import os
import re
import socket
import subprocess
import time
import urllib.request

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_NAME = "smollm2"
API_KEY = "test-key-123"
MAX_MODEL_LEN = 512


def _binary():
    return os.environ.get("VLLM_BIN", os.path.join(REPO, "build", "vllm"))


def _model():
    return os.environ.get(
        "VLLM_TEST_GGUF",
        os.path.expanduser("~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf"))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape_metrics(url):
    """GET url/metrics as {"name{labels}": value}."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r'^([a-zA-Z_:]+)(\{[^}]*\})? ([0-9.eE+-]+|NaN|[+-]Inf)$', line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


class Server:
    def __init__(self, extra_args, binary=None, model=None, preexec_fn=None, env=None):
        binary, model = binary or _binary(), model or _model()
        assert os.path.exists(binary), f"build the server first: {binary} is missing"
        assert os.path.exists(model), f"test model missing: {model} (scripts/fetch_models.sh)"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join("/tmp", f"vllm_e2e_{self.port}.log"), "w+")
        self.proc = subprocess.Popen(
            [binary, "serve", model, "--host", "127.0.0.1", "--port", str(self.port),
             "--served-model-name", MODEL_NAME, "--max-model-len", str(MAX_MODEL_LEN),
             "--max-num-seqs", "64", "--kv-cache-memory", str(256 << 20)]
            + os.environ.get("VLLM_E2E_SERVER_ARGS", "").split() + extra_args,
            stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=preexec_fn, env=env)
        deadline = time.time() + 120
        while time.time() < deadline:
            assert self.proc.poll() is None, f"server exited early:\n{self.output()}"
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"server did not become healthy:\n{self.output()}")

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-5000:]

    def metrics(self):
        return scrape_metrics(self.url)

    def stop(self):
        alive = self.proc.poll() is None
        if alive:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return alive


def hermes_tool_server(tmp_dir, parser="hermes"):
    """A server with --enable-auto-tool-choice --tool-call-parser hermes (or `parser`) and the
    Qwen2.5 chat template (SmolLM2's own has no tool section), written into tmp_dir."""
    import json
    with open(os.path.join(REPO, "tests", "golden", "chat_template", "qwen25.json")) as f:
        template = json.load(f)["template"]
    path = os.path.join(str(tmp_dir), "qwen25.jinja")
    with open(path, "w") as f:
        f.write(template)
    return Server(["--enable-auto-tool-choice", "--tool-call-parser", parser,
                   "--chat-template", path])


def openai_client(srv):
    """The official client on a test server: no retries, two minutes a request."""
    import openai
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def hermes_server(tmp_path_factory):
    """hermes_tool_server for one test module."""
    s = hermes_tool_server(tmp_path_factory.mktemp("tpl"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def hermes_client(hermes_server):
    return openai_client(hermes_server)


@pytest.fixture(scope="session")
def server():
    s = Server([])
    yield s
    assert s.stop(), f"the server died during the tests:\n{s.output()}"


@pytest.fixture(scope="session")
def keyed_server():
    s = Server(["--api-key", API_KEY])
    yield s
    s.stop()


@pytest.fixture(scope="session")
def client(server):
    return openai_client(server)


def kv_idle(server, timeout=30):
    """Waits until no request runs and the KV cache is empty; returns the last metrics."""
    deadline = time.time() + timeout
    m = {}
    while time.time() < deadline:
        m = server.metrics()
        lbl = f'{{model_name="{MODEL_NAME}"}}'
        if (m.get("vllm:kv_cache_usage_perc" + lbl) == 0.0
                and m.get("vllm:num_requests_running" + lbl) == 0.0
                and m.get("vllm:num_requests_waiting" + lbl) == 0.0):
            return m
        time.sleep(0.2)
    raise AssertionError(f"KV cache not released: {m}")
