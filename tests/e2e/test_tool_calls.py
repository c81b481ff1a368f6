"""Tool calling end to end with the official openai client: `vllm serve` on SmolLM2 with
--enable-auto-tool-choice --tool-call-parser hermes and the Qwen2.5 chat template (SmolLM2's
own has no tool section). tool_choice required / named forces the calls through the grammar
engine, so the tiny model reliably makes them."""
import json
import re

import pytest

from conftest import MODEL_NAME, hermes_tool_server, openai_client
from test_openai_api import post

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "maxLength": 20},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city", "unit"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "parameters": {"type": "object",
                                       "properties": {"tz": {"type": "string", "maxLength": 10}},
                                       "required": ["tz"]}}}
TOOLS = [WEATHER, TIME]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
# Some words, then two Hermes-format calls, as Qwen2.5 writes them.
HERMES_RE = (r'[A-Z][a-z]{1,8}[.]\n<tool_call>\n\{"name": "get_weather", "arguments": '
             r'\{"city": "[A-Za-z]{1,12}", "unit": "(celsius|fahrenheit)"\}\}\n</tool_call>\n'
             r'<tool_call>\n\{"name": "get_time", "arguments": \{"tz": "[A-Z]{3}"\}\}\n</tool_call>')


def _check_call(call, names):
    assert call.type == "function" and call.id.startswith("chatcmpl-tool-")
    assert call.function.name in names
    args = json.loads(call.function.arguments)
    params = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    import jsonschema
    jsonschema.validate(args, params[call.function.name])
    return args


def test_multi_turn_tool_conversation(hermes_client):
    r = hermes_client.chat.completions.create(
        model=MODEL_NAME, messages=QUESTION, tools=TOOLS, temperature=0, max_tokens=120,
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    msg = r.choices[0].message
    assert len(msg.tool_calls) == 1
    args = _check_call(msg.tool_calls[0], {"get_weather"})
    # The call, its result, and a final answer in plain text (tool_choice auto: the model may
    # answer or call again; either way the history rendered and the reply parsed).
    history = QUESTION + [
        {"role": "assistant", "content": None,
         "tool_calls": [tc.model_dump() for tc in msg.tool_calls]},
        {"role": "tool", "tool_call_id": msg.tool_calls[0].id,
         "content": json.dumps({"city": args["city"], "temperature": 21})}]
    final = hermes_client.chat.completions.create(model=MODEL_NAME, messages=history, tools=TOOLS,
                                            temperature=0, max_tokens=60)
    c = final.choices[0]
    assert c.finish_reason in ("stop", "length", "tool_calls")
    if c.finish_reason == "tool_calls":
        for tc in c.message.tool_calls:
            _check_call(tc, {"get_weather", "get_time"})
    else:
        assert c.message.content and "<tool_call>" not in c.message.content
    # The rendered prompt holds the call (arguments as JSON) and the tool response.
    status, body = post_prompt(hermes_client, history)
    assert '<tool_call>\n{"name": "get_weather", "arguments": {' in body, body
    assert "<tool_response>" in body


def post_prompt(hermes_client, messages):
    r = hermes_client.chat.completions.create(model=MODEL_NAME, messages=messages, tools=TOOLS,
                                        max_tokens=1, tool_choice="none",
                                        extra_body={"return_prompt_text": True})
    return 200, r.model_extra.get("prompt_text", "")


def test_required_forces_valid_calls(hermes_client):
    r = hermes_client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, tools=TOOLS,
                                        tool_choice="required", temperature=0, max_tokens=150)
    c = r.choices[0]
    assert c.finish_reason == "tool_calls" and c.message.tool_calls
    for tc in c.message.tool_calls:
        _check_call(tc, {"get_weather", "get_time"})


@pytest.mark.parametrize("choice", ["required", "named", "auto_hermes"])
def test_streamed_deltas_reassemble_to_the_whole_response(hermes_client, choice):
    kw = dict(model=MODEL_NAME, messages=QUESTION, tools=TOOLS, temperature=0, max_tokens=150)
    if choice == "required":
        kw["tool_choice"] = "required"
    elif choice == "named":
        kw["tool_choice"] = {"type": "function", "function": {"name": "get_time"}}
    else:
        # auto: a regex makes the model write a Hermes call (with content before it), which
        # the hermes parser must find in the text.
        kw["extra_body"] = {"guided_regex": HERMES_RE}
    whole = hermes_client.chat.completions.create(**kw).choices[0]
    chunks = list(hermes_client.chat.completions.create(stream=True, **kw))
    calls, content, finish = {}, "", None
    for ch in chunks:
        if not ch.choices:
            continue
        d = ch.choices[0].delta
        content += d.content or ""
        for tc in d.tool_calls or []:
            if tc.id:
                assert tc.index not in calls and tc.function.arguments == ""
                calls[tc.index] = {"id": tc.id, "name": tc.function.name, "arguments": ""}
            else:
                calls[tc.index]["arguments"] += tc.function.arguments or ""
        finish = ch.choices[0].finish_reason or finish
    assert finish == whole.finish_reason
    want = [{"name": t.function.name, "arguments": t.function.arguments}
            for t in whole.message.tool_calls or []]
    got = [{"name": c["name"], "arguments": c["arguments"]} for _, c in sorted(calls.items())]
    assert got == want
    assert want, whole


def test_auto_parses_hermes_calls_out_of_the_text(hermes_client):
    r = hermes_client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, tools=TOOLS,
                                        temperature=0, max_tokens=150,
                                        extra_body={"guided_regex": HERMES_RE})
    c = r.choices[0]
    assert c.finish_reason == "tool_calls", c
    assert [t.function.name for t in c.message.tool_calls] == ["get_weather", "get_time"]
    for tc in c.message.tool_calls:
        _check_call(tc, {"get_weather", "get_time"})
    # Content is the text before the first tag (vLLM's hermes parser).
    assert c.message.content and "<tool_call>" not in c.message.content
    # parallel_tool_calls false keeps only the first call.
    r = hermes_client.chat.completions.create(model=MODEL_NAME, messages=QUESTION, tools=TOOLS,
                                        temperature=0, max_tokens=150, parallel_tool_calls=False,
                                        extra_body={"guided_regex": HERMES_RE})
    assert [t.function.name for t in r.choices[0].message.tool_calls] == ["get_weather"]


def test_tool_errors_are_400s_naming_the_field(hermes_server, server):
    base = {"model": MODEL_NAME, "messages": QUESTION, "max_tokens": 5}
    cases = [
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
         "tool_choice"),
        ({"tools": [{"type": "function", "function": {"description": "no name"}}]}, "tools"),
        ({"tools": {"a": 1}}, "tools"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tools": TOOLS, "tool_choice": "required", "response_format": {"type": "json_object"}},
         "response_format"),
    ]
    for extra, param in cases:
        status, r = post(hermes_server, "/v1/chat/completions", {**base, **extra})
        assert status == 400 and r["error"]["param"] == param, (extra, r)
    # Without --enable-auto-tool-choice, tools with auto is vLLM's 400.
    status, r = post(server, "/v1/chat/completions", {**base, "tools": TOOLS})
    assert status == 400 and r["error"]["message"] == (
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
    # A tool-use history renders on the plain server too (content null + tool_calls, tool).
    status, r = post(server, "/v1/chat/completions", {**base, "messages": QUESTION + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]})
    assert status == 200, r


def test_include_reasoning_false_hides_metadata_where_the_server_composes_a_parser(
        hermes_server, server):
    """vLLM hides logprobs and token ids under include_reasoning false whenever the server
    composes a parser (here --enable-auto-tool-choice --tool-call-parser hermes), whatever the
    request's tool_choice, and not on a server without one, even for tool_choice required."""
    base = {"model": MODEL_NAME, "messages": QUESTION, "max_tokens": 5, "logprobs": True,
            "include_reasoning": False, "return_token_ids": True}
    status, r = post(hermes_server, "/v1/chat/completions", base)  # no tools: tool_choice none
    assert status == 200, r
    assert r["choices"][0]["logprobs"] is None and r["choices"][0]["token_ids"] is None, r
    status, r = post(server, "/v1/chat/completions",
                     {**base, "tools": TOOLS, "tool_choice": "required", "max_tokens": 60})
    assert status == 200, r
    assert r["choices"][0]["logprobs"]["content"] and r["choices"][0]["token_ids"], r


def streamed(client, kw):
    """A streamed chat response reassembled: its content and its calls as [name, arguments]."""
    calls, content = {}, ""
    for ch in client.chat.completions.create(stream=True, **kw):
        if not ch.choices:
            continue
        d = ch.choices[0].delta
        content += d.content or ""
        for tc in d.tool_calls or []:
            if tc.id:
                calls[tc.index] = [tc.function.name, ""]
            else:
                calls[tc.index][1] += tc.function.arguments or ""
    return content, [calls[i] for i in sorted(calls)]


# Qwen3-Coder's XML calls (--tool-call-parser qwen3_coder): some words, then two calls, as
# Qwen3-Coder writes them.
CODER_RE = (r'[A-Z][a-z]{1,8}[.]\n<tool_call>\n<function=get_weather>\n<parameter=city>\n'
            r'[A-Za-z]{1,12}\n</parameter>\n<parameter=unit>\n(celsius|fahrenheit)\n</parameter>\n'
            r'</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\n'
            r'[A-Z]{3}\n</parameter>\n</function>\n</tool_call>')
# Pythonic calls (--tool-call-parser pythonic: Llama 3.2 / Gemma 3 with vLLM's pythonic
# templates): the whole output is a Python list of calls.
PYTHONIC_RE = (r"\[get_weather\(city='[A-Za-z]{1,12}', unit=\"(celsius|fahrenheit)\"\), "
               r"get_time\(tz='[A-Z]{3}'\)\]")


OLMO3_RE = (r"<function_calls>get_weather\(city='[A-Za-z]{1,12}', unit=\"(celsius|fahrenheit)\"\)\n"
            r"get_time\(tz='[A-Z]{3}'\)</function_calls>")
PHI4_RE = (r'functools\[\{"name": "get_weather", "arguments": \{"city": "[A-Za-z]{1,12}", '
           r'"unit": "(celsius|fahrenheit)"\}\}, \{"name": "get_time", "arguments": '
           r'\{"tz": "[A-Z]{3}"\}\}\]')
GRANITE_RE = (r'[A-Z][a-z]{1,8}[.] <tool_call>\[\{"name": "get_weather", "arguments": '
              r'\{"city": "[A-Za-z]{1,12}", "unit": "(celsius|fahrenheit)"\}\}, '
              r'\{"name": "get_time", "arguments": \{"tz": "[A-Z]{3}"\}\}\]')
# Parsers that read the whole output as the call list (content null) and leave the text as
# written under tool_choice "none".
WHOLE_LIST_PARSERS = ("pythonic", "olmo3", "phi4_mini_json")


@pytest.mark.parametrize("parser,regex", [("qwen3_coder", CODER_RE), ("pythonic", PYTHONIC_RE),
                                          ("olmo3", OLMO3_RE), ("phi4_mini_json", PHI4_RE),
                                          ("granite", GRANITE_RE)])
def test_xml_and_pythonic_calls_are_parsed_whole_and_streamed(tmp_path, parser, regex):
    """vLLM 0.33's qwen3_coder, pythonic, olmo3, phi4_mini_json and granite parsers
    (tests/golden/tool_parsers/ holds their own answers; api_tests Qwen3CoderGolden,
    PythonicGolden, Olmo3ToolGolden, Phi4MiniJsonToolGolden and GraniteToolGolden check them): a regex makes the
    model write two calls, the server must return them as OpenAI tool_calls, whole and
    streamed."""
    s = hermes_tool_server(tmp_path, parser=parser)
    try:
        c = openai_client(s)
        kw = dict(model=MODEL_NAME, messages=QUESTION, tools=TOOLS, temperature=0,
                  max_tokens=150, extra_body={"guided_regex": regex})
        whole = c.chat.completions.create(**kw).choices[0]
        assert whole.finish_reason == "tool_calls", whole
        assert [t.function.name for t in whole.message.tool_calls] == ["get_weather", "get_time"]
        for tc in whole.message.tool_calls:
            _check_call(tc, {"get_weather", "get_time"})
        if parser in WHOLE_LIST_PARSERS:  # the whole output is the call list
            assert whole.message.content is None
        else:  # the words before the calls
            assert whole.message.content and "<" not in whole.message.content
        content, calls = streamed(c, kw)
        assert calls == [[t.function.name, t.function.arguments]
                         for t in whole.message.tool_calls]
        assert content == (whole.message.content or "")
        # tool_choice "none", given or the default without tools (api_tests ToolChoiceNoneGolden
        # holds vLLM's answers): the engine-based qwen3_coder still reads the output and drops
        # (and granite) the calls with their markup; the others leave the text as written.
        for none in (dict(tools=TOOLS, tool_choice="none"), {}):
            kn = dict(model=MODEL_NAME, messages=QUESTION, temperature=0, max_tokens=210,
                      extra_body={"guided_regex": regex}, **none)
            r = c.chat.completions.create(**kn).choices[0]
            assert r.finish_reason == "stop" and not r.message.tool_calls, r
            if parser in WHOLE_LIST_PARSERS:
                assert re.fullmatch(regex, r.message.content), r
            else:
                assert "<" not in r.message.content and r.message.content.strip(), r
            assert streamed(c, kn) == (r.message.content, [])
        if parser == "pythonic":
            # Text that is not a call list is content.
            r = c.chat.completions.create(model=MODEL_NAME, messages=QUESTION, tools=TOOLS,
                                          temperature=0, max_tokens=20,
                                          extra_body={"guided_regex": r"\[[a-z]{1,8}\]\(x\) ok"})
            assert r.choices[0].message.tool_calls in (None, [])
            assert r.choices[0].message.content
    finally:
        s.stop()


INTERNLM_RE = (r'Checking[.]<\|action_start\|><\|plugin\|>\n\{"name": "get_weather", "parameters": '
               r'\{"city": "[A-Za-z]{1,12}", "unit": "(celsius|fahrenheit)"\}\}<\|action_end\|>')


def test_internlm_call_is_parsed_whole_and_streamed(tmp_path):
    """vLLM 0.33's internlm parser (InternLM2 / 2.5; api_tests InternlmToolGolden holds its own
    answers): one call after <|action_start|><|plugin|>, the words before it the content."""
    s = hermes_tool_server(tmp_path, parser="internlm")
    try:
        c = openai_client(s)
        kw = dict(model=MODEL_NAME, messages=QUESTION, tools=TOOLS, temperature=0,
                  max_tokens=100, extra_body={"guided_regex": INTERNLM_RE})
        whole = c.chat.completions.create(**kw).choices[0]
        assert whole.finish_reason == "tool_calls", whole
        assert [t.function.name for t in whole.message.tool_calls] == ["get_weather"]
        _check_call(whole.message.tool_calls[0], {"get_weather"})
        assert whole.message.content == "Checking."
        assert streamed(c, kw) == ("Checking.", [[t.function.name, t.function.arguments]
                                                 for t in whole.message.tool_calls])
    finally:
        s.stop()
