"""--reasoning-parser qwen3 with structured outputs, through `vllm serve` on the tiny Qwen3
checkpoint (random weights, the real Qwen3 tokenizer and template): the thinking section is
free, the grammar constrains only the answer after </think>, and the reply carries
`reasoning` and `content` as current vLLM splits them. A logit bias on </think> makes the random
model close its thinking after a few tokens; the answer must then validate against the schema.
With enable_thinking false the template closes the thinking section in the prompt, so the
grammar applies from the first token and everything is content."""
import json
import os

import jsonschema
import pytest

from test_serve_flags import TINY, Serve

THINK_END = 151668  # "</think>" in the Qwen3 vocabulary
SCHEMA = {"type": "object",
          "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}},
          "required": ["ok", "n"], "additionalProperties": False}


@pytest.fixture(scope="module")
def qwen3():
    src = os.path.join(TINY, "qwen3")
    assert os.path.exists(os.path.join(src, "config.json")), f"{src} missing"
    s = Serve([src, "--reasoning-parser", "qwen3", "--served-model-name", "q"],
              log_name="reasoning")
    yield s
    s.stop()


def body(seed, bias, **extra):
    return {"model": "q", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 120,
            "temperature": 1.0, "seed": seed, "logit_bias": {str(THINK_END): bias},
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "answer", "schema": SCHEMA}},
            **extra}


def stream(server, req):
    """The streamed reasoning and content, each joined (None when no delta carried it)."""
    import urllib.request
    r = urllib.request.Request(server.url + "/v1/chat/completions",
                               data=json.dumps({**req, "stream": True}).encode(),
                               headers={"Content-Type": "application/json"})
    parts = {"reasoning": None, "content": None}
    with urllib.request.urlopen(r, timeout=120) as resp:
        for line in resp.read().decode().split("\n"):
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"]
            for k in parts:
                if delta.get(k) is not None:
                    parts[k] = (parts[k] or "") + delta[k]
    return parts


def test_grammar_applies_after_the_thinking_section(qwen3):
    thought = 0
    for bias in (13, 14):  # every seed closes its thinking with bf16 and fp32 activations
        for seed in range(4):
            code, _, out = qwen3.request("/v1/chat/completions", body(seed, bias))
            assert code == 200, out
            msg = out["choices"][0]["message"]
            # The model closed its thinking (the bias makes </think> likely, the grammar did
            # not forbid it there); the answer after it is in the schema.
            assert msg["reasoning"] is not None, msg
            assert "</think>" not in msg["reasoning"] and "</think>" not in msg["content"]
            jsonschema.validate(json.loads(msg["content"]), SCHEMA)
            assert out["choices"][0]["finish_reason"] == "stop"
            thought += bool(msg["reasoning"])
            # Streaming splits the same text the same way.
            s = stream(qwen3, body(seed, bias))
            assert (s["reasoning"] or "") == msg["reasoning"]
            assert s["content"] == msg["content"]
    # Some outputs thought before answering: free text the JSON grammar would have refused.
    assert thought >= 2


def test_thinking_disabled_constrains_from_the_first_token(qwen3):
    for seed in range(3):
        req = body(seed, 0, chat_template_kwargs={"enable_thinking": False})
        code, _, out = qwen3.request("/v1/chat/completions", req)
        assert code == 200, out
        msg = out["choices"][0]["message"]
        assert msg["reasoning"] is None
        jsonschema.validate(json.loads(msg["content"]), SCHEMA)
        s = stream(qwen3, req)
        assert s["reasoning"] is None and s["content"] == msg["content"]



def test_thinking_token_budget_forces_the_end_of_the_reasoning(qwen3):
    """vLLM's thinking_token_budget: after N tokens inside <think>, </think> is forced. The
    bias keeps the random model from closing its thinking by itself."""
    prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"

    def complete(**extra):
        st, _, r = qwen3.request("/v1/completions", {
            "model": "q", "prompt": prompt, "max_tokens": 12, "temperature": 0,
            "logit_bias": {str(THINK_END): -100}, "return_token_ids": True, **extra})
        assert st == 200, r
        return r["choices"][0]["token_ids"]

    assert THINK_END not in complete()  # no budget: the bias holds the thinking open
    for budget in (0, 1, 5):
        ids = complete(thinking_token_budget=budget)
        assert ids.index(THINK_END) == budget, (budget, ids)
    assert THINK_END not in complete(thinking_token_budget=-1)  # -1: no budget, as null
    # A prompt whose reasoning is closed (enable_thinking false) is past the budget's reach.
    assert THINK_END not in complete(prompt=prompt + "\n</think>\n\n", thinking_token_budget=0)
    # Through chat with the reasoning parser: the forced </think> ends `reasoning`.
    st, _, r = qwen3.request("/v1/chat/completions", {
        "model": "q", "messages": [{"role": "user", "content": "hi"},
                                   {"role": "assistant", "content": "<think>\n"}],
        "add_generation_prompt": False, "continue_final_message": True, "max_tokens": 10,
        "temperature": 0, "logit_bias": {str(THINK_END): -100}, "thinking_token_budget": 4,
        "return_token_ids": True})
    assert st == 200, r
    c = r["choices"][0]
    assert c["token_ids"].index(THINK_END) == 4, c
    assert c["message"]["reasoning"], c
    st, _, r = qwen3.request("/v1/completions", {"model": "q", "prompt": prompt,
                                                 "thinking_token_budget": -2})
    assert st == 400 and r["error"]["param"] == "thinking_token_budget"
