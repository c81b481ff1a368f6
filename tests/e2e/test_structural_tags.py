"""Structural tags and strict tool calls end to end, with the official openai client against
`vllm serve` on SmolLM2:

  * response_format {"type": "structural_tag"} (xgrammar's format and the legacy structures /
    triggers) and structured_outputs.structural_tag shape the output, streamed or not;
  * under --tool-call-parser hermes a strict tool's call is constrained where the model writes
    one (tool_choice auto, vLLM 0.33's default VLLM_ENFORCE_STRICT_TOOL_CALLING): the tokens
    of "<tool_call>" are pushed by logit_bias, so the model writes the call opener, and the
    grammar must then finish it as a valid call (and, with parallel_tool_calls false, stop);
  * under llama3_json the same in Llama 3's {"name": ..., "parameters": ...} calls;
  * required / named calls in each XML format and Kimi K2's;
  * gpt-oss (harmony): constraints shape harmony's messages, never the output's first tokens;
  * what cannot be honoured is refused by name: an unsupported format, a bad
    --tool-strict-level."""
import json
import os
import re

import jsonschema
import pytest

from conftest import MODEL_NAME, _model, hermes_tool_server, openai_client
from test_openai_api import post
from test_serve_flags import TINY, Serve, run_serve

ANSWER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                                           "sunny": {"type": "boolean"}},
          "required": ["city", "sunny"], "additionalProperties": False}
TAG = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
    {"type": "const_string", "value": "Answer: "},
    {"type": "tag", "begin": "<json>", "content": {"type": "json_schema", "json_schema": ANSWER},
     "end": "</json>"}]}}
MSG = [{"role": "user", "content": "Is it sunny in Paris? Answer in JSON."}]


def _check_answer(text):
    m = re.fullmatch(r"Answer: <json>(.*)</json>", text, re.S)
    assert m, text
    jsonschema.validate(json.loads(m.group(1)), ANSWER)


def test_response_format_structural_tag(client):
    r = client.chat.completions.create(model=MODEL_NAME, messages=MSG, max_tokens=80,
                                       temperature=0, response_format=TAG)
    _check_answer(r.choices[0].message.content)
    assert r.choices[0].finish_reason == "stop"
    chunks = client.chat.completions.create(model=MODEL_NAME, messages=MSG, max_tokens=80,
                                            temperature=0, response_format=TAG, stream=True)
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == r.choices[0].message.content


def test_structured_outputs_structural_tag_and_legacy(client):
    r = client.completions.create(model=MODEL_NAME, prompt="The weather in Paris:",
                                  max_tokens=80, temperature=0,
                                  extra_body={"structured_outputs": {
                                      "structural_tag": json.dumps(TAG)}})
    _check_answer(r.choices[0].text)
    # The legacy form: free text, and any "<json" must open one of the structures.
    legacy = {"type": "structural_tag", "triggers": ["<json"],
              "structures": [{"begin": "<json>", "schema": ANSWER, "end": "</json>"}]}
    bias = {str(t): 30 for t in _ids(client, "<json>")[:2]}
    r = client.chat.completions.create(model=MODEL_NAME, messages=MSG, max_tokens=60,
                                       temperature=0, response_format=legacy, logit_bias=bias)
    text = r.choices[0].message.content
    bodies = re.findall(r"<json>(.*?)</json>", text, re.S)
    assert bodies, text
    for body in bodies:
        jsonschema.validate(json.loads(body), ANSWER)
    if r.choices[0].finish_reason == "stop":  # every "<json" opened a whole structure
        assert "<json" not in re.sub(r"<json>.*?</json>", "", text, flags=re.S), text


def test_unsupported_structural_tags_are_named(server):
    base = {"model": MODEL_NAME, "messages": MSG, "max_tokens": 5}
    code, body = post(server, "/v1/chat/completions", dict(base, response_format={
        "type": "structural_tag", "format": {"type": "token", "token": 5}}))
    assert code == 400 and body["error"]["param"] == "response_format", body
    assert 'format type \\"token\\" is not supported' in json.dumps(body), body
    code, body = post(server, "/v1/chat/completions", dict(base, response_format={
        "type": "structural_tag"}))
    assert code == 400 and "structural_tag" in body["error"]["message"], body
    code, body = post(server, "/v1/chat/completions", dict(base, structured_outputs={
        "structural_tag": "{not json"}))
    assert code == 400 and body["error"]["param"] == "structured_outputs", body
    assert server.proc.poll() is None


def _ids(client, text):
    import urllib.request
    url = str(client.base_url).rstrip("/").removesuffix("/v1") + "/tokenize"
    req = urllib.request.Request(url, data=json.dumps({"model": MODEL_NAME, "prompt": text,
                                                       "add_special_tokens": False}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["tokens"]


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "maxLength": 10},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city", "unit"], "additionalProperties": False}}}


def test_strict_tool_call_is_constrained_under_auto(hermes_client):
    strict = dict(WEATHER, function=dict(WEATHER["function"], strict=True))
    # Push the tokens of the call opener: the model writes "<tool_call>", and from there the
    # grammar must make it a valid call of get_weather, then stop (one call allowed).
    bias = {str(t): 40 for t in _ids(hermes_client, "<tool_call>")}
    r = hermes_client.chat.completions.create(
        model=MODEL_NAME, messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[strict], tool_choice="auto", parallel_tool_calls=False, max_tokens=80,
        temperature=0, logit_bias=bias)
    msg = r.choices[0].message
    assert msg.tool_calls and len(msg.tool_calls) == 1, msg
    assert msg.tool_calls[0].function.name == "get_weather"
    jsonschema.validate(json.loads(msg.tool_calls[0].function.arguments),
                        WEATHER["function"]["parameters"])
    assert r.choices[0].finish_reason == "tool_calls"
    # The control: the same request without strict is not constrained, and the pushed
    # tokens do not make a valid call.
    r = hermes_client.chat.completions.create(
        model=MODEL_NAME, messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[WEATHER], tool_choice="auto", parallel_tool_calls=False, max_tokens=80,
        temperature=0, logit_bias=bias)
    assert not r.choices[0].message.tool_calls, r.choices[0].message


def test_required_calls_use_hermes_format_streamed(hermes_client):
    kw = dict(model=MODEL_NAME, messages=[{"role": "user", "content": "Weather in Paris?"}],
              tools=[WEATHER], tool_choice="required", max_tokens=120, temperature=0)
    r = hermes_client.chat.completions.create(**kw)
    calls = r.choices[0].message.tool_calls
    assert calls and all(c.function.name == "get_weather" for c in calls)
    for c in calls:
        jsonschema.validate(json.loads(c.function.arguments), WEATHER["function"]["parameters"])
    args = {}
    for ch in hermes_client.chat.completions.create(stream=True, **kw):
        for tc in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
            args[tc.index] = args.get(tc.index, "") + (tc.function.arguments or "")
    assert [json.loads(args[i]) for i in sorted(args)] == \
        [json.loads(c.function.arguments) for c in calls]


def test_llama3_json_required_and_named_calls(tmp_path):
    """--tool-call-parser llama3_json: xgrammar's builtin "llama" tag, {"name": ..., "parameters":
    ...} calls read by the llama3_json parser."""
    s = hermes_tool_server(tmp_path, parser="llama3_json")
    try:
        c = openai_client(s)
        msgs = [{"role": "user", "content": "Weather in Paris?"}]
        # One call, then the end (with more allowed the tiny model writes code after it, whose
        # braces make vLLM's whole-response reader give up on the calls, as here).
        r = c.chat.completions.create(model=MODEL_NAME, messages=msgs, tools=[WEATHER],
                                      tool_choice="required", parallel_tool_calls=False,
                                      max_tokens=120, temperature=0)
        calls = r.choices[0].message.tool_calls
        assert calls and calls[0].function.name == "get_weather", r.choices[0].message
        for call in calls:
            jsonschema.validate(json.loads(call.function.arguments),
                                WEATHER["function"]["parameters"])
        # Named: the one call, streamed.
        args = ""
        for ch in c.chat.completions.create(
                model=MODEL_NAME, messages=msgs, tools=[WEATHER], max_tokens=120, temperature=0,
                tool_choice={"type": "function", "function": {"name": "get_weather"}},
                stream=True):
            for tc in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
                assert tc.index == 0
                args += tc.function.arguments or ""
        jsonschema.validate(json.loads(args), WEATHER["function"]["parameters"])
    finally:
        s.stop()


@pytest.mark.parametrize("parser", ["qwen3_coder", "minimax_m2", "glm47", "kimi_k2"])
def test_xml_required_and_named_calls(tmp_path, parser):
    """--tool-call-parser qwen3_coder (xgrammar's builtin "qwen_3_coder" tag, <parameter=K>
    elements), minimax_m2 (vLLM's "minimax" tag, <invoke name=...> with <parameter name=K>
    elements) and glm47 (xgrammar's builtin "glm_4_7", <arg_key>K</arg_key><arg_value>V
    </arg_value>): strings raw, the rest JSON, typed back by the parser. kimi_k2 (xgrammar's
    "kimi": JSON arguments after <|tool_call_begin|>functions.NAME:N): the call's id is that
    header, as vLLM's parser keeps it."""
    s = hermes_tool_server(tmp_path, parser=parser)
    try:
        c = openai_client(s)
        msgs = [{"role": "user", "content": "Weather in Paris?"}]
        extra = {}
        if parser == "kimi_k2":
            # The call index is any number of digits (\d+): "<" pushed ends it after one.
            _, t = post(s, "/tokenize", {"model": MODEL_NAME, "prompt": "<"})
            extra = {"logit_bias": {str(t["tokens"][-1]): 30}}
        for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
            r = c.chat.completions.create(model=MODEL_NAME, messages=msgs, tools=[WEATHER],
                                          tool_choice=choice, parallel_tool_calls=False,
                                          max_tokens=120, temperature=0, extra_body=extra)
            calls = r.choices[0].message.tool_calls
            assert calls and len(calls) == 1, r.choices[0].message
            assert calls[0].function.name == "get_weather"
            if parser == "kimi_k2":
                assert re.fullmatch(r"functions\.get_weather:\d+", calls[0].id), calls[0].id
            args = json.loads(calls[0].function.arguments)
            # The grammar allows whitespace around a value, as xgrammar's; MiniMax's parser
            # keeps it, as vLLM's does (Qwen3-Coder's strips the newlines).
            args = {k: v.strip() if isinstance(v, str) else v for k, v in args.items()}
            jsonschema.validate(args, WEATHER["function"]["parameters"])
    finally:
        s.stop()


def test_gpt_oss_constraints_keep_harmony_channels():
    """gpt-oss (the tiny GGUF, --tool-call-parser openai): a response_format, a structured output
    and a strict tool are constrained inside harmony's messages, as vLLM 0.33's HarmonyParser
    and "harmony" tag have them (an optional analysis message, then the final message or the
    call), so the model's first tokens are a channel, never the JSON itself."""
    gpt_oss = os.path.join(TINY, "gpt_oss.gguf")
    s = Serve([gpt_oss, "--enable-auto-tool-choice", "--tool-call-parser", "openai",
               "--tool-strict-level", "function", "--served-model-name", MODEL_NAME],
              log_name="harmony-constraints")
    rf = {"type": "json_schema", "json_schema": {"name": "a", "schema": ANSWER}}
    strict = dict(WEATHER, function=dict(WEATHER["function"], strict=True))
    try:
        for extra in ({"response_format": rf}, {"structured_outputs": {"choice": ["yes", "no"]}},
                      {"tools": [strict]}, {"tools": [WEATHER], "tool_choice": "required"},
                      {"tools": [strict], "response_format": rf}):
            code, body = post(s, "/v1/chat/completions", {
                "model": MODEL_NAME, "messages": MSG, "max_tokens": 12, "temperature": 1,
                "seed": 1, "return_token_ids": True, **extra})
            assert code == 200, body
            _, text = post(s, "/detokenize", {"model": MODEL_NAME,
                                              "tokens": body["choices"][0]["token_ids"]})
            assert text["prompt"].startswith(("<|channel|>", " to=")), (extra, text)
    finally:
        s.stop()
    code, out = run_serve(_model(), "--tool-strict-level", "strict")
    assert code != 0 and "--tool-strict-level" in out, out
