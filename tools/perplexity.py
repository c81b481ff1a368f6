#!/usr/bin/env python3
"""Perplexity of a text through an OpenAI-compatible completions API (`vllm serve`).

The text is tokenized by the server (/tokenize), cut into lm-evaluation-harness's rolling
windows (each window scores up to --max-length tokens, the first one after a single
end-of-text token, later ones with up to --max-length - 1 tokens of left context), and every
window is one /v1/completions request with echo=true, logprobs=1, max_tokens=1: the prompt's
own token logprobs come back in choices[0].logprobs.token_logprobs. Standard library only.

    python3 tools/perplexity.py --url http://127.0.0.1:8000 --file text.txt [--max-length 1024]

Prints the token count, the total negative log-likelihood (nats), and the perplexity; --json
prints them as one JSON object.
"""
import argparse
import json
import math
import sys
import urllib.request


def post(url, path, body, api_key=None):
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = "Bearer " + api_key
    req = urllib.request.Request(url.rstrip("/") + path, data=json.dumps(body).encode(),
                                 headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def rolling_windows(tokens, prefix_token, max_length):
    """(context, continuation) pairs that score every token exactly once, as
    lm-evaluation-harness's loglikelihood_rolling builds them (context_len=1, disjoint).

    Every request (context + continuation) holds at most max_length tokens. The first window
    predicts the first max_length - 1 tokens from the prefix token alone; each later window
    predicts the next (up to) max_length - 1 tokens, with the tokens right before them as
    context to fill the request."""
    out = []
    if not tokens:
        return out
    step = max_length - 1
    first = min(step, len(tokens))
    out.append(([prefix_token], tokens[:first]))
    done = first
    while done < len(tokens):
        n = min(len(tokens) - done, step)
        end = done + n
        out.append((tokens[end - max_length:done], tokens[done:end]))
        done = end
    return out


def score(url, model, pairs, max_length, api_key=None):
    """Sum of continuation logprobs per (context, continuation) pair, as lm-eval reads them."""
    total = []
    for context, continuation in pairs:
        inp = (context + continuation)[-max_length:]
        ctxlen = len(context) - max(0, len(context) + len(continuation) - max_length)
        body = {"model": model, "prompt": [inp], "temperature": 0, "max_tokens": 1,
                "logprobs": 1, "seed": 1234, "echo": True}
        r = post(url, "/v1/completions", body, api_key)
        lps = r["choices"][0]["logprobs"]["token_logprobs"]
        total.append(sum(lps[ctxlen:-1]))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", help="served model name (default: the first of /v1/models)")
    ap.add_argument("--file", help="text file (default: stdin)")
    ap.add_argument("--max-length", type=int, default=1024,
                    help="tokens per request (at most the server's max_model_len - 1)")
    ap.add_argument("--prefix-token", type=int,
                    help="token id before the first window (default: the model's eos id, "
                         "taken from /tokenize of its end-of-text text when not given)")
    ap.add_argument("--api-key")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    text = open(a.file, encoding="utf-8").read() if a.file else sys.stdin.read()
    model = a.model
    if not model:
        req = urllib.request.Request(a.url.rstrip("/") + "/v1/models")
        if a.api_key:
            req.add_header("Authorization", "Bearer " + a.api_key)
        with urllib.request.urlopen(req, timeout=60) as r:
            model = json.loads(r.read())["data"][0]["id"]
    tokens = post(a.url, "/tokenize", {"model": model, "prompt": text,
                                       "add_special_tokens": False}, a.api_key)["tokens"]
    prefix = a.prefix_token
    if prefix is None:
        # The first token of the text scored after nothing is not defined; lm-eval puts the
        # end-of-text token in front. Without a tokenizer here, ask the server for the id of
        # the most common spellings.
        for eot in ("<|endoftext|>", "</s>", "<|im_end|>"):
            ids = post(a.url, "/tokenize", {"model": model, "prompt": eot,
                                            "add_special_tokens": False}, a.api_key)["tokens"]
            if len(ids) == 1:
                prefix = ids[0]
                break
        if prefix is None:
            sys.exit("cannot find an end-of-text token id: pass --prefix-token ID")
    pairs = rolling_windows(tokens, prefix, a.max_length)
    nll = -sum(score(a.url, model, pairs, a.max_length, a.api_key))
    result = {"tokens": len(tokens), "windows": len(pairs), "nll": nll,
              "perplexity": math.exp(nll / len(tokens)) if tokens else float("nan")}
    if a.json:
        print(json.dumps(result))
    else:
        print(f"{len(tokens)} tokens in {len(pairs)} windows: NLL {nll:.4f} nats, "
              f"perplexity {result['perplexity']:.4f}")


if __name__ == "__main__":
    main()
