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
