"""LoRA adapters served as vLLM users serve them: `vllm serve BASE --enable-lora --lora-modules
name=path ...`, a request naming an adapter as its `model` (the official openai client), the
adapters listed by /v1/models, requests of different adapters and of the base model running at
once, each answering peft's greedy tokens (tests/golden/lora/, tools/make_lora_goldens.py), and
adapters or flags that cannot work refused at start with the reason."""
import json
import os
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from conftest import _binary
from test_serve_flags import TINY, Serve

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                      "lora")


def golden(name):
    with open(os.path.join(GOLDEN, name, "index.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def lora_server(tmp_path_factory):
    lora = os.path.join(TINY, "lora")
    # A Hugging Face cache holding qwen3_all as the repo Org/Adapter (vLLM users name hub
    # adapters by repo id).
    hub = tmp_path_factory.mktemp("hub")
    repo = hub / "models--Org--Adapter"
    snap = repo / "snapshots" / "0123abc"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abc")
    for f in ("adapter_config.json", "adapter_model.safetensors"):
        (snap / f).write_bytes(open(f"{lora}/qwen3_all/{f}", "rb").read())
    # --dtype float32: the goldens are peft in float32 (fp32 activations and KV cache).
    s = Serve([os.path.join(TINY, "qwen3"), "--served-model-name", "qwen3", "--dtype", "float32",
               "--enable-lora", "--max-loras", "2", "--max-lora-rank", "16",
               "--lora-modules", f"all={lora}/qwen3_all",
               json.dumps({"name": "mlp", "path": f"{lora}/qwen3_mlp",
                           "base_model_name": "qwen3"}), "hub=Org/Adapter"],
              env={"HF_HUB_CACHE": str(hub)}, log_name="lora")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def lora_client(lora_server):
    return openai.OpenAI(base_url=lora_server.url + "/v1", api_key="x", max_retries=0,
                         timeout=120)


def greedy(client, model, ids, n=32):
    r = client.completions.create(model=model, prompt=ids, max_tokens=n, temperature=0,
                                  extra_body={"return_token_ids": True})
    assert r.model == model
    return r.choices[0].token_ids


def test_models_lists_the_adapters(lora_client):
    cards = {m.id: m for m in lora_client.models.list().data}
    assert list(cards) == ["qwen3", "all", "mlp", "hub"]
    assert cards["all"].parent == "qwen3" and cards["mlp"].parent == "qwen3"
    assert cards["all"].root.endswith("lora/qwen3_all")
    assert cards["qwen3"].parent is None


def test_each_adapter_answers_pefts_greedy_tokens(lora_client):
    for name, model in (("qwen3_all", "all"), ("qwen3_mlp", "mlp"), ("qwen3_all", "hub")):
        for p in golden(name)["prompts"]:
            assert greedy(lora_client, model, p["prompt_ids"]) == p["greedy_ids"], (name, p["text"])
    # The base model under its own name is untouched by the adapters.
    p = golden("qwen3_all")["prompts"][0]
    assert greedy(lora_client, "qwen3", p["prompt_ids"]) == p["base_greedy_ids"]


def test_adapters_and_the_base_at_once(lora_client):
    """Nine requests at once (three prompts x base, all, mlp; --max-loras 2 makes one adapter's
    requests wait their turn): each gets its own model's tokens."""
    jobs = []
    for k, p in enumerate(golden("qwen3_all")["prompts"]):
        q = golden("qwen3_mlp")["prompts"][k]
        jobs += [("qwen3", p["prompt_ids"], p["base_greedy_ids"]),
                 ("all", p["prompt_ids"], p["greedy_ids"]),
                 ("mlp", q["prompt_ids"], q["greedy_ids"])]
    with ThreadPoolExecutor(len(jobs)) as pool:
        got = list(pool.map(lambda j: greedy(lora_client, j[0], j[1]), jobs))
    for (model, _, want), g in zip(jobs, got):
        assert g == want, model


def test_chat_stream_and_errors_name_the_adapter(lora_client):
    chunks = list(lora_client.chat.completions.create(
        model="mlp", messages=[{"role": "user", "content": "hi"}], max_tokens=4, stream=True))
    assert chunks and all(c.model == "mlp" for c in chunks)
    with pytest.raises(openai.NotFoundError, match="The model `nope` does not exist"):
        lora_client.completions.create(model="nope", prompt="x", max_tokens=1)


def test_metrics_name_the_running_adapters(lora_server, lora_client):
    """vLLM's vllm:lora_requests_info: the scrape time under the running / waiting adapters."""
    def info_lines():
        with urllib.request.urlopen(lora_server.url + "/metrics", timeout=10) as r:
            return [ln for ln in r.read().decode().splitlines()
                    if ln.startswith("vllm:lora_requests_info{")]

    stream = lora_client.completions.create(model="all", prompt="x", max_tokens=400,
                                            stream=True, extra_body={"ignore_eos": True})
    next(iter(stream))
    lines = info_lines()
    stream.close()
    assert any('running_lora_adapters="all"' in ln and 'max_lora="2"' in ln for ln in lines), lines
    time.sleep(0.5)
    latest = max(info_lines(), key=lambda ln: float(ln.rsplit(" ", 1)[1]))
    assert 'running_lora_adapters=""' in latest, latest


def test_bench_throughput_lora_path():
    """`vllm bench throughput --enable-lora --max-loras 2 --lora-path P` (vLLM's flags): the
    requests run on two copies of the adapter, after the same number without one; the report
    has both rates and their ratio."""
    args = [_binary(), "bench", "throughput", "--model", os.path.join(TINY, "qwen3"),
            "--input-len", "16", "--output-len", "8", "--num-prompts", "6", "--json"]
    lora = os.path.join(TINY, "lora", "qwen3_all")
    r = subprocess.run(args + ["--enable-lora", "--max-loras", "2", "--lora-path", lora],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    assert rep["num_output_tokens"] == 48 and rep["max_loras"] == 2, rep
    assert rep["base_output_tokens_per_second"] > 0 and rep["lora_over_base"] > 0, rep
    r = subprocess.run(args + ["--lora-path", lora], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--lora-path needs --enable-lora" in r.stdout + r.stderr


def run_serve(*args):
    r = subprocess.run([_binary(), "serve", *args, "--port", "0"], capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout + r.stderr


def test_unusable_adapters_and_flags_are_refused_at_start(tmp_path):
    base = os.path.join(TINY, "qwen3")
    lora = os.path.join(TINY, "lora")
    dora = tmp_path / "dora"
    dora.mkdir()
    cfg = json.load(open(f"{lora}/qwen3_all/adapter_config.json"))
    cfg["use_dora"] = True
    (dora / "adapter_config.json").write_text(json.dumps(cfg))
    (dora / "adapter_model.safetensors").write_bytes(
        open(f"{lora}/qwen3_all/adapter_model.safetensors", "rb").read())
    for args, want in [
        (["--lora-modules", f"a={lora}/qwen3_all"], "--lora-modules needs --enable-lora"),
        (["--enable-lora", "--lora-modules", f"a={dora}"],
         "--lora-modules a: " + str(dora / "adapter_config.json") +
         ": vLLM does not yet support DoRA."),
        (["--enable-lora", "--max-lora-rank", "8", "--lora-modules", f"m={lora}/qwen3_mlp"],
         "LoRA rank 16 is greater than max_lora_rank 8"),
        (["--enable-lora", "--lora-modules", f"l={lora}/llama_all"], "does not fit the model's"),
        (["--enable-lora", "--lora-modules", '{"name": "a"}'], "name and path are required"),
        (["--enable-lora", "--lora-modules", "{bad"], "Invalid JSON format for --lora-modules"),
        (["--enable-lora", "--lora-modules", f"a={lora}/qwen3_all", f"a={lora}/qwen3_mlp"],
         "LoRA adapter name 'a' is given twice"),
        (["--enable-lora", "--max-loras", "4", "--max-cpu-loras", "2"],
         "max_cpu_loras (2) must be >= max_loras (4)"),
        (["--enable-lora", "--max-lora-rank", "7"], "--max-lora-rank"),
        (["--enable-lora", "--lora-dtype", "float64"], "--lora-dtype"),
    ]:
        code, out = run_serve(base, *args)
        assert code != 0 and want in out, (args, out)
