"""The `vllm` command line on real files: tokenize against the committed tokenizer goldens,
generate against the llama.cpp goldens, and clear errors with a non-zero exit on bad input."""
import json
import os
import subprocess

from conftest import REPO, _binary, _model

GOLDEN = os.path.join(REPO, "tests", "golden")
QWEN_TOK = os.path.join(os.path.dirname(REPO), "shared", "fixtures", "qwen3-tokenizer")


def vllm(*args, check=True):
    r = subprocess.run([_binary(), *args], capture_output=True, text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def golden_lines(name, n):
    with open(os.path.join(GOLDEN, "tokenizer", name), encoding="utf-8") as f:
        return [json.loads(line) for line in f][:n]


def test_tokenize_gguf_and_tokenizer_folder_match_hf_goldens():
    for path, name in ((_model(), "smollm2.jsonl"), (QWEN_TOK, "qwen3.jsonl")):
        for case in golden_lines(name, 25):
            if case["text"].startswith("-") or not case["text"]:
                continue  # not expressible as a plain CLI argument
            out = vllm("tokenize", "--model", path, "--json", case["text"]).stdout
            assert json.loads(out) == case["ids"], case["text"]
            ids = ",".join(str(i) for i in case["ids"])
            text = vllm("tokenize", "--model", path, "--decode", ids).stdout
            assert text.rstrip("\n") == case["decoded"].rstrip("\n") or text == case["decoded"]


def test_tokenize_decode_out_of_range_is_an_error():
    r = vllm("tokenize", "--model", _model(), "--decode", "1,999999", check=False)
    assert r.returncode != 0 and "999999" in r.stderr


def test_generate_json_matches_llamacpp_greedy_prefix():
    gold = json.load(open(os.path.join(GOLDEN, "llamacpp", "smollm2_q4_1.json")))
    case = gold["prompts"][0]
    ids = ",".join(str(i) for i in case["prompt_ids"])
    out = json.loads(vllm("generate", "--model", _model(), "--prompt-ids", ids, "--max-tokens",
                          "8", "--ignore-eos", "--json").stdout)
    assert out["prompt_token_ids"] == case["prompt_ids"]
    assert out["token_ids"] == [s["id"] for s in case["steps"][:8]]


def test_generate_prompts_file_runs_one_batch(tmp_path):
    f = tmp_path / "prompts.jsonl"
    f.write_text('"The capital of France is"\n{"prompt": "1, 2, 3,"}\n', encoding="utf-8")
    r = vllm("generate", "--model", _model(), "--prompts-file", str(f), "--max-tokens", "6",
             "--json")
    outs = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(outs) == 2 and all(len(o["token_ids"]) >= 1 for o in outs)
    # Each equals the same prompt run alone (batch invariance through the CLI).
    alone = json.loads(vllm("generate", "--model", _model(), "--prompt", "1, 2, 3,",
                            "--max-tokens", "6", "--json").stdout)
    assert outs[1]["token_ids"] == alone["token_ids"]


def test_generate_with_fp16_kv_cache_keeps_the_greedy_prefix():
    gold = json.load(open(os.path.join(GOLDEN, "llamacpp", "smollm2_q4_1.json")))
    case = gold["prompts"][0]
    ids = ",".join(str(i) for i in case["prompt_ids"])
    out = json.loads(vllm("generate", "--model", _model(), "--prompt-ids", ids, "--max-tokens",
                          "4", "--ignore-eos", "--kv-cache-dtype", "float16", "--json").stdout)
    # llama.cpp itself keeps K/V in fp16: its greedy tokens are the reference here too.
    assert out["token_ids"] == [s["id"] for s in case["steps"][:4]]


def test_bad_input_gives_clear_errors():
    cases = [
        (["generate", "--model", _model(), "--prompt", "hi", "--max-tokens", "0"], "max-tokens"),
        (["generate", "--model", _model(), "--prompt", "hi", "--max-tokens", "-3"], "max-tokens"),
        (["generate", "--model", _model(), "--prompt", "hi", "--temperature", "-1"], "temperature"),
        (["generate", "--model", _model(), "--prompt", "hi " * 600, "--max-model-len", "256"],
         "too long"),
        (["generate", "--model", "/nonexistent.gguf", "--prompt", "hi"], "nonexistent"),
        (["bench", "latency", "--model", _model(), "--input-len", "0"], "input-len"),
        (["generate", "--model", _model(), "--prompt", "hi", "--kv-cache-dtype", "int3"],
         "kv-cache-dtype"),
    ]
    for args, word in cases:
        r = vllm(*args, check=False)
        assert r.returncode != 0, args
        assert word.lower() in r.stderr.lower(), (args, r.stderr)


def test_serve_without_server_module_says_what_is_missing(tmp_path):
    # `vllm` carries no HTTP stack itself; a copy of it alone (no libvllm_server.so beside it
    # or on the library path) must say so instead of crashing.
    lone = tmp_path / "vllm"
    lone.write_bytes(open(_binary(), "rb").read())
    lone.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run([str(lone), "serve", _model()], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 1
    assert "libvllm_server.so" in r.stderr


def test_generate_does_not_load_the_http_stack():
    # The server module (and GnuTLS through libmicrohttpd) is loaded only by `serve`.
    out = subprocess.run(["ldd", _binary()], capture_output=True, text=True).stdout
    for lib in ("libmicrohttpd", "libgnutls", "libssl", "libcrypto", "libvllm_server"):
        assert lib not in out, out


def test_dtype_sets_the_bf16_products_activations():
    """--dtype on a bf16 checkpoint: auto and bfloat16 round the BF16 products' activations to
    bf16 (vLLM's bf16 compute, vdpbf16ps where the CPU has it), float32 keeps them fp32 (the
    transformers fp32 reference), and VT_BF16_ACTIVATIONS still decides under auto. The KV
    cache is fp32 in every run so that only the products differ."""
    tiny = os.environ.get("VLLM_TINY_MODELS", os.path.expanduser("~/.cache/vllm-cpp/tiny-models"))
    model = os.path.join(tiny, "qwen3")
    assert json.load(open(os.path.join(model, "config.json")))["torch_dtype"] == "bfloat16"

    def run(dtype, env=None):
        r = subprocess.run([_binary(), "generate", "--model", model, "--prompt",
                            "Hello world, this is", "--max-tokens", "4", "--prompt-logprobs", "1",
                            "--kv-cache-dtype", "float32", "--dtype", dtype, "--json"],
                           capture_output=True, text=True, timeout=300, env={
                               **{k: v for k, v in os.environ.items()
                                  if k != "VT_BF16_ACTIVATIONS"}, **(env or {})})
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        return [p["logprob"] for p in out["prompt_logprobs"][1:]], out["token_ids"]

    auto, bf16, fp32 = run("auto"), run("bfloat16"), run("float32")
    assert auto == bf16
    assert auto[0] != fp32[0]  # the rounding reaches the products
    assert run("auto", {"VT_BF16_ACTIVATIONS": "fp32"}) == fp32
