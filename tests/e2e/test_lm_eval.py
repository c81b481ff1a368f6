"""lm-evaluation-harness through `vllm serve`: its `local-completions` model sends, for every
log-likelihood request, {"prompt": [[token ids]...], "echo": true, "logprobs": 1,
"max_tokens": 1, "temperature": 0, "seed": 1234} and reads choices[i].logprobs:
sum(token_logprobs[ctxlen:-1]) is the continuation's log-likelihood, and it is greedy when each
of those equals the max of its top_logprobs. Rolling log-likelihood (perplexity) cuts a text
into windows of such requests (tools/perplexity.py).

The reference for every number is the engine itself without the HTTP layer: `vllm generate
--prompt-logprobs 1 --json` on the same token ids (the engine's prompt logprobs are checked
against transformers' logits in tests/engine/prompt_logprobs_test.cpp)."""
import json
import math
import os
import subprocess
import sys

from conftest import REPO, MODEL_NAME, _binary, _model
from test_openai_api import post

sys.path.insert(0, os.path.join(REPO, "tools"))
import perplexity  # noqa: E402

TEXT = ("The quick brown fox jumps over the lazy dog. Paris is the capital of France, and "
        "Berlin is the capital of Germany. Water boils at one hundred degrees Celsius at sea "
        "level, and it freezes at zero degrees.")


def lm_eval_payload(prompts):
    """LocalCompletionsAPI._create_payload(generate=False)."""
    return {"model": MODEL_NAME, "prompt": prompts, "temperature": 0, "max_tokens": 1,
            "logprobs": 1, "seed": 1234, "echo": True}


def lm_eval_parse(response, ctxlens):
    """LocalCompletionsAPI.parse_logprobs: (log-likelihood, is_greedy) per choice."""
    out = []
    for choice, ctxlen in zip(sorted(response["choices"], key=lambda c: c["index"]), ctxlens):
        lps = choice["logprobs"]["token_logprobs"][ctxlen:-1]
        tops = choice["logprobs"]["top_logprobs"][ctxlen:-1]
        out.append((sum(lps), all(lp == max(top.values()) for lp, top in zip(lps, tops))))
    return out


def engine_prompt_logprobs(prompts):
    """Per prompt: the engine's prompt logprobs entries ([None, {...}, ...]) via the CLI."""
    path = os.path.join("/tmp", f"vllm_lm_eval_prompts_{os.getpid()}.jsonl")
    with open(path, "w") as f:
        for p in prompts:
            f.write(json.dumps({"prompt_token_ids": p}) + "\n")
    r = subprocess.run([_binary(), "generate", "--model", _model(), "--prompts-file", path,
                        "--max-tokens", "1", "--prompt-logprobs", "1", "--json",
                        "--kv-cache-memory", str(256 << 20)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return [json.loads(line)["prompt_logprobs"] for line in r.stdout.splitlines()]


def tokenize(server, text):
    status, tok = post(server, "/tokenize", {"prompt": text, "add_special_tokens": False})
    assert status == 200
    return tok["tokens"]


def test_loglikelihood_requests_match_the_engine(server):
    ids = tokenize(server, TEXT)
    # (context, continuation) pairs as a multiple-choice task would make them.
    cut = [5, 12, 20, len(ids) - 3]
    requests = [(ids[:c], ids[c:c + 4]) for c in cut]
    prompts = [ctx + cont for ctx, cont in requests]
    ctxlens = [len(ctx) for ctx, _ in requests]
    status, body = post(server, "/v1/completions", lm_eval_payload(prompts))
    assert status == 200, body
    assert len(body["choices"]) == len(prompts)
    got = lm_eval_parse(body, ctxlens)
    ref = engine_prompt_logprobs(prompts)
    for (ll, greedy), p, entries, ctxlen in zip(got, prompts, ref, ctxlens):
        choice = next(c for c in body["choices"] if c["index"] == prompts.index(p))
        lp = choice["logprobs"]
        # Echo: one entry per prompt token plus the generated one; the first is unscored.
        assert len(lp["tokens"]) == len(p) + 1
        assert lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
        assert choice["text"].startswith(lp["tokens"][0])
        want = sum(e["logprob"] for e in entries[ctxlen:])
        assert abs(ll - want) < 1e-4, (ll, want)
        assert greedy == all(e["rank"] == 1 for e in entries[ctxlen:])
        # text_offset: each token starts where the previous one ended.
        offs = lp["text_offset"]
        assert offs[0] == 0
        assert all(offs[i + 1] == offs[i] + len(lp["tokens"][i]) for i in range(len(offs) - 1))


def test_loglikelihood_greedy_flag_is_true_for_the_models_own_continuation(client, server):
    ids = tokenize(server, "The capital of France is")
    gen = client.completions.create(model=MODEL_NAME, prompt=ids, max_tokens=4, temperature=0,
                                    extra_body={"return_token_ids": True})
    cont = gen.choices[0].token_ids
    status, body = post(server, "/v1/completions", lm_eval_payload([ids + cont]))
    assert status == 200
    (ll, greedy), = lm_eval_parse(body, [len(ids)])
    assert greedy and ll < 0


def test_rolling_loglikelihood_and_perplexity_tool(server):
    ids = tokenize(server, TEXT)
    max_length = 16  # several windows over the text
    pairs = perplexity.rolling_windows(ids, 0, max_length)
    # Every token is scored exactly once, in order, after the tokens right before it.
    assert [t for _, cont in pairs for t in cont] == ids
    for ctx, cont in pairs:
        assert len(ctx) + len(cont) <= max_length and ctx
    # The tool's windows, through the API, equal the engine's prompt logprobs on them.
    got = perplexity.score(server.url, MODEL_NAME, pairs, max_length)
    prompts = [(ctx + cont)[-max_length:] for ctx, cont in pairs]
    ref = engine_prompt_logprobs(prompts)
    for g, (ctx, cont), entries in zip(got, pairs, ref):
        want = sum(e["logprob"] for e in entries[len(entries) - len(cont):])
        assert abs(g - want) < 1e-4
    # The command line: the same total, as a perplexity.
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "perplexity.py"),
                        "--url", server.url, "--max-length", str(max_length), "--prefix-token",
                        "0", "--json"], input=TEXT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["tokens"] == len(ids) and out["windows"] == len(pairs)
    assert abs(out["nll"] + sum(got)) < 1e-6
    assert abs(out["perplexity"] - math.exp(-sum(got) / len(ids))) < 1e-6
    assert 1.0 < out["perplexity"] < 1000.0
