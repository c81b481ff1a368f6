"""The architectures whose GGUF llama.cpp's converter lays out its own way, through `vllm serve`
and the official `openai` client: the tiny GGUF twins (tools/make_gemma_gguf.py,
make_phi3_gguf.py, make_llama_gguf.py, in VLLM_TINY_MODELS: Gemma 3's sliding-window layer of 8
positions beside a full one, Gemma 2's soft-capping, Phi-3's fused matrices, Mixtral's 8 experts
as llama.cpp's `llama` with stacked expert tensors, SmolLM3's layer without rotary embedding,
Granite's four multipliers, Qwen2.5-VL's text model as `qwen2vl`, OLMo 2's output and
whole-projection q/k norms, Phi-3.5's longrope (short and long factors), gpt-oss's MXFP4
experts, attention sinks and YaRN) continue each
golden prompt with llama.cpp's greedy tokens (tests/golden/<arch>/greedy.json) from token-id
prompts, alone and as concurrent requests (paged KV, decode graphs, batches of several
sequences). `--disable-sliding-window` caps the context at the window as vLLM does;
`--hf-overrides` with Qwen's YaRN recipe serves the longer context (a Hugging Face folder;
refused for a GGUF)."""
import concurrent.futures
import json
import os

import openai
import pytest

from test_serve_flags import Serve, run_serve

TINY = os.environ.get("VLLM_TINY_MODELS", os.path.expanduser("~/.cache/vllm-cpp/tiny-models"))
MODEL = os.path.join(TINY, "gemma3.gguf")
GOLDENS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")


@pytest.fixture(scope="module", params=["gemma3", "gemma2", "gemma", "phi3", "mixtral", "smollm3",
                                        "granite", "qwen2_5_vl", "olmo2", "phi3_5", "phi4_mini",
                                        "glm4", "cohere", "cohere2", "exaone4", "gpt_oss", "qwen2_moe",
                                        "olmoe", "granitemoe", "glm4_moe", "minimax_m2", "ernie4_5",
                                        "ernie4_5_moe", "seed_oss", "arcee", "hunyuan_dense",
                                        "stablelm", "phi", "starcoder2", "deepseek_v3",
                                        "ministral3"])
def gemma(request):
    path = os.path.join(TINY, request.param + ".gguf")
    assert os.path.exists(path), f"{path} missing (scripts/test.sh makes it)"
    # The MoE twins' goldens ran llama.cpp with an F32 cache (their READMEs).
    extra = ["--kv-cache-dtype", "float32"] if request.param in (
        "gpt_oss", "qwen2_moe", "olmoe", "granitemoe", "glm4_moe", "minimax_m2", "ernie4_5",
        "ernie4_5_moe", "seed_oss", "arcee", "hunyuan_dense") else []
    s = Serve([path, "--served-model-name", "gemma"] + extra, log_name=request.param)
    s.arch = request.param
    yield s
    s.stop()


def near_tie_prefix(ours, steps):
    """Steps of `ours` equal to llama.cpp's, up to a first difference that must be a near-tie
    (llama.cpp's top-2 gap under 0.5)."""
    for k, (a, s) in enumerate(zip(ours, steps)):
        if a != s["id"]:
            gap = s["top2_logits"][0] - s["top2_logits"][1]
            assert gap < 0.5, f"step {k}: ours {a}, llama.cpp {s['id']} (gap {gap})"
            return k
    return len(steps)


def complete(client, ids, n):
    r = client.completions.create(model="gemma", prompt=ids, max_tokens=n, temperature=0,
                                  extra_body={"ignore_eos": True, "return_token_ids": True})
    return r.choices[0].model_extra["token_ids"]


def test_greedy_tokens_match_llama_cpp_alone_and_batched(gemma):
    gold = json.load(open(os.path.join(GOLDENS, gemma.arch, "greedy.json")))
    client = openai.OpenAI(base_url=gemma.url + "/v1", api_key="none", max_retries=0)
    agreed = total = 0
    for p in gold["prompts"]:
        ours = complete(client, p["prompt_ids"], len(p["steps"]))
        agreed += near_tie_prefix(ours, p["steps"])
        total += len(p["steps"])
    assert agreed >= total * 3 // 4, f"{agreed}/{total} steps agree"
    # The same prompts as concurrent requests give the same tokens as alone.
    alone = [complete(client, p["prompt_ids"], 24) for p in gold["prompts"]]
    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        batched = list(ex.map(lambda p: complete(client, p["prompt_ids"], 24),
                              gold["prompts"] * 2))
    assert batched == alone * 2


def test_longrope_long_factors_past_its_original_length():
    # Phi-3.5's longrope rotates with its short factors within the original 512 positions (the
    # default context); a longer --max-model-len selects the long factors for every position,
    # as vLLM does, and as llama.cpp does at a context past the original length: its greedy
    # tokens (rope_factors_long, n_ctx 1024) for a 600-token prompt, every step. Past the
    # checkpoint's own 4096 positions the context is refused.
    path = os.path.join(TINY, "phi3_5.gguf")
    gold = json.load(open(os.path.join(GOLDENS, "phi3_5", "greedy.json")))["long_prompts"][0]
    s = Serve([path, "--served-model-name", "gemma", "--max-model-len", str(gold["n_ctx"])],
              log_name="phi3_5_long")
    try:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="none", max_retries=0)
        ours = complete(client, gold["prompt_ids"], len(gold["steps"]))
        assert ours == [st["id"] for st in gold["steps"]]
    finally:
        s.stop()
    code, out = run_serve(path, "--max-model-len", "8192")
    assert code != 0 and "maximum length of 4096" in out, out


def test_disable_sliding_window_caps_the_context():
    code, out = run_serve(MODEL, "--disable-sliding-window", "--max-model-len", "512")
    assert code != 0 and "larger than the model's maximum length of 8" in out, out


def test_hf_overrides_yarn_serves_the_longer_context():
    # Qwen's long-context recipe as vLLM users paste it: YaRN through --hf-overrides, the context
    # original_max_position_embeddings x factor (the tiny Qwen3: 32768 x 4 = 131072, past its own
    # 40960). Without the override the same --max-model-len is refused.
    model = os.path.join(TINY, "qwen3")
    yarn = json.dumps({"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                        "original_max_position_embeddings": 32768}})
    code, out = run_serve(model, "--max-model-len", "131072")
    assert code != 0 and "maximum length of 40960" in out, out
    s = Serve([model, "--served-model-name", "q", "--max-model-len", "131072",
               "--hf-overrides", yarn], log_name="yarn")
    try:
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="none", max_retries=0)
        r = client.completions.create(model="q", prompt="Hello", max_tokens=4, temperature=0)
        assert r.usage.completion_tokens == 4
    finally:
        s.stop()
    code, out = run_serve(model, "--hf-overrides", "[1, 2]")
    assert code != 0 and "--hf-overrides" in out and "JSON object" in out, out
    code, out = run_serve(os.path.join(TINY, "phi3.gguf"), "--hf-overrides", yarn)
    assert code != 0 and "--hf-overrides" in out and "GGUF" in out, out
