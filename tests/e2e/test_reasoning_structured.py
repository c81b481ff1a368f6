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
TOOL_CALL = 151657  # "<tool_call>"
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


def test_implicit_reasoning_end_the_grammar_rejects_is_masked(qwen3):
    """qwen3's reasoning also ends at <tool_call>, which is then the first content token. A
    response_format cannot start with it, so (as vLLM 0.33's _masked_reasoning_ends) it is
    masked while the model reasons: pushed hard by logit_bias, it still never appears."""
    req = body(1, -100, return_token_ids=True, max_tokens=24)
    req["logit_bias"][str(TOOL_CALL)] = 40
    code, _, out = qwen3.request("/v1/chat/completions", req)
    assert code == 200, out
    assert TOOL_CALL not in out["choices"][0]["token_ids"], out
    # The same bias without a response_format: the model writes it at once.
    req.pop("response_format")
    code, _, out = qwen3.request("/v1/chat/completions", req)
    assert code == 200 and TOOL_CALL in out["choices"][0]["token_ids"], out


def test_enable_in_reasoning_constrains_from_the_first_token():
    """--structured-outputs-config '{"enable_in_reasoning": true}' (vLLM's): the grammar does not
    wait for </think>, so the whole output (here all of it reasoning, as qwen3 reads an output
    without </think>) is the schema's JSON, and </think>, pushed as in the test below, never
    comes."""
    s = Serve([os.path.join(TINY, "qwen3"), "--reasoning-parser", "qwen3",
               "--structured-outputs-config", '{"enable_in_reasoning": true}',
               "--served-model-name", "q"], log_name="in-reasoning")
    try:
        assert "--structured-outputs-config is accepted but has no effect" not in s.output()
        for seed in range(3):
            code, _, out = s.request("/v1/chat/completions",
                                     body(seed, 14, return_token_ids=True))
            assert code == 200, out
            assert THINK_END not in out["choices"][0]["token_ids"], out
            msg = out["choices"][0]["message"]
            jsonschema.validate(json.loads((msg["reasoning"] or "") + (msg["content"] or "")),
                                SCHEMA)
    finally:
        s.stop()


def test_disable_any_whitespace_gives_compact_json():
    """--structured-outputs-config.disable_any_whitespace true (vLLM's dotted form): a
    json_schema answer has no whitespace between its tokens (here from the first token, no
    reasoning parser)."""
    s = Serve([os.path.join(TINY, "qwen3"), "--structured-outputs-config.disable_any_whitespace",
               "true", "--served-model-name", "q"], log_name="compact")
    try:
        for seed in range(3):
            req = body(seed, 0)
            req["response_format"]["json_schema"]["schema"] = dict(
                SCHEMA, properties=dict(SCHEMA["properties"], s={"type": "array",
                                                                  "items": {"type": "integer"}}),
                required=["ok", "n", "s"])
            code, _, out = s.request("/v1/chat/completions", req)
            assert code == 200, out
            text = out["choices"][0]["message"]["content"]
            doc = json.loads(text)
            assert text == json.dumps(doc, separators=(",", ":")), text
    finally:
        s.stop()


def test_grammar_applies_after_the_thinking_section(qwen3):
    thought = 0
    for bias in (13, 14):  # every seed closes its thinking with bf16 and fp32 activations
        for seed in range(4):
            code, _, out = qwen3.request("/v1/chat/completions",
                                         body(seed, bias, return_token_ids=True))
            assert code == 200, out
            msg = out["choices"][0]["message"]
            # The model closed its thinking (the bias makes </think> likely, the grammar did
            # not forbid it there); the answer after it is in the schema. An empty reasoning
            # is null (vLLM 0.33's engine-based qwen3 parser).
            ids = out["choices"][0]["token_ids"]
            assert THINK_END in ids, out
            # usage counts the tokens the parser put in the reasoning (<think> tags not).
            before = ids[:ids.index(THINK_END)]
            assert out["usage"]["completion_tokens_details"] == {
                "reasoning_tokens": sum(1 for t in before if t != THINK_END - 1)}, out["usage"]
            assert msg["reasoning"] != ""
            assert "</think>" not in (msg["reasoning"] or "") and "</think>" not in msg["content"]
            jsonschema.validate(json.loads(msg["content"]), SCHEMA)
            assert out["choices"][0]["finish_reason"] == "stop"
            thought += bool(msg["reasoning"])
            # Streaming splits the same text the same way.
            s = stream(qwen3, body(seed, bias))
            assert s["reasoning"] == msg["reasoning"]
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


def reply(client, stream=False, seed=3, **extra):
    """One chat turn through the openai client: (reasoning, content, token ids); streams joined
    (None when no delta carried text in the field: the first chunk's content is "")."""
    kw = dict(model="q", messages=[{"role": "user", "content": "hi"}], max_tokens=16,
              temperature=1.0, seed=seed, extra_body={"return_token_ids": True, **extra})
    if not stream:
        c = client.chat.completions.create(**kw).choices[0]
        return c.message.model_extra.get("reasoning"), c.message.content, c.model_extra["token_ids"]
    parts = {"reasoning": None, "content": None}
    ids = []
    for chunk in client.chat.completions.create(stream=True, **kw):
        if not chunk.choices:
            continue
        d = chunk.choices[0].delta
        for k, v in (("reasoning", d.model_extra.get("reasoning")), ("content", d.content)):
            if v:
                parts[k] = (parts[k] or "") + v
        ids += chunk.choices[0].model_extra.get("token_ids") or []
    return parts["reasoning"], parts["content"], ids


def test_deepseek_r1_and_v3_reasoning_parsers():
    """--reasoning-parser deepseek_r1 (DeepSeek-R1 and its distills) and deepseek_v3 (V3.1: thinking
    only when chat_template_kwargs asks) on the tiny Qwen3, whose vocabulary has the tags. vLLM
    0.33's own answers for every tag pattern are tests/golden/tool_parsers/think.json (api_tests
    ThinkParsersGolden); this checks that the server wires them up."""
    import openai
    src = os.path.join(TINY, "qwen3")
    for parser in ("deepseek_r1", "deepseek_v3"):
        s = Serve([src, "--reasoning-parser", parser, "--served-model-name", "q"],
                  log_name="reasoning-" + parser)
        try:
            c = openai.OpenAI(base_url=s.url + "/v1", api_key="x", max_retries=0)
            think = {"chat_template_kwargs": {"thinking": True}} if parser == "deepseek_v3" else {}
            whole = {}
            for stream in (False, True):
                # </think> banned: the whole output is reasoning, the content null.
                r, content, ids = reply(c, stream, logit_bias={str(THINK_END): -100}, **think)
                assert content is None and r and THINK_END not in ids, (parser, r, content)
                # </think> made likely: reasoning before it, content after it (where a later
                # </think> stays text).
                split = 0
                for seed in range(6):
                    r, content, ids = reply(c, stream, seed, logit_bias={str(THINK_END): 14},
                                            **think)
                    # A stream carries every token's id, even where the parser sent no text.
                    got = (r or "", content or "", ids)
                    if stream:
                        assert got == whole[seed]
                    whole[seed] = got
                    if THINK_END not in ids:
                        assert content is None and r, (r, content)
                        continue
                    at = ids.index(THINK_END)
                    assert "</think>" not in (r or "") and bool(r) == (at > 0), (r, ids)
                    assert bool(content) == (at < len(ids) - 1), (content, ids)
                    split += 0 < at < len(ids) - 1
                assert split >= 2, (parser, stream)
            if parser == "deepseek_v3":
                # Without thinking nothing is split: the tags stay in the content.
                r, content, ids = reply(c, logit_bias={str(THINK_END): 14})
                assert r is None and THINK_END in ids and "</think>" in content, (r, content)
        finally:
            s.stop()


@pytest.mark.parametrize("parser", ["kimi_k2", "ernie45"])
def test_kimi_and_ernie_parsers_are_served(parser):
    """--reasoning-parser and --tool-call-parser kimi_k2 (Kimi K2 / K2-Thinking) and ernie45
    (ERNIE 4.5) on the tiny Qwen3, whose vocabulary has <think> / </think>. vLLM 0.33's own answers
    for their markup are tests/golden/tool_parsers/kimi_k2.json and ernie45.json (api_tests
    KimiK2Golden, Ernie45Golden); this checks the server wires both parsers up: reasoning until
    </think> (never holding it), content after it, streamed and whole alike, and for kimi_k2
    nothing split with chat_template_kwargs thinking false (Kimi's calls under its structural tag
    are in test_structural_tags.py)."""
    import openai
    src = os.path.join(TINY, "qwen3")
    s = Serve([src, "--reasoning-parser", parser, "--enable-auto-tool-choice",
               "--tool-call-parser", parser, "--served-model-name", "q"], log_name=parser)
    tool = {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}
    try:
        c = openai.OpenAI(base_url=s.url + "/v1", api_key="x", max_retries=0)
        whole = {}
        for stream in (False, True):
            r, content, ids = reply(c, stream, logit_bias={str(THINK_END): -100}, tools=[tool])
            assert content is None and r and THINK_END not in ids, (r, content)
            split = 0
            for seed in range(6):
                r, content, ids = reply(c, stream, seed, logit_bias={str(THINK_END): 14},
                                        tools=[tool])
                got = (r or "", content or "", ids)
                if stream:
                    assert got == whole[seed]
                whole[seed] = got
                if THINK_END not in ids:
                    continue
                # kimi_k2 also drops a later </think> from the content.
                shown = (r or "") + (content or "" if parser == "kimi_k2" else "")
                assert "</think>" not in shown, (r, content)
                split += 0 < ids.index(THINK_END) < len(ids) - 1 and bool(r) and bool(content)
            assert split >= 2, stream
        if parser == "kimi_k2":
            r, content, ids = reply(c, logit_bias={str(THINK_END): 14},
                                    chat_template_kwargs={"thinking": False})
            assert r is None and THINK_END in ids and "</think>" in content, (r, content)
    finally:
        s.stop()
