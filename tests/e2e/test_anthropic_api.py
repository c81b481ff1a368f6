"""Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens) with the official
anthropic client, against the same server's chat completions: a Messages request is the chat
request vLLM builds from it (the system prompt first, blocks as chat messages, tools as
function tools), so greedy outputs must be equal, whole and streamed; errors carry
Anthropic's body, so the client raises its own exception types."""
import json

import anthropic
import jsonschema
import pytest

from conftest import MODEL_NAME, hermes_tool_server, openai_client

WEATHER = {"name": "get_weather", "description": "Current weather in a city",
           "input_schema": {"type": "object",
                            "properties": {"city": {"type": "string", "maxLength": 20},
                                           "unit": {"type": "string",
                                                    "enum": ["celsius", "fahrenheit"]}},
                            "required": ["city", "unit"]}}
# The anthropic client (2.x) has no temperature argument any more: it goes as an extra field.
GREEDY = {"extra_body": {"temperature": 0}}
CHAT_WEATHER = {"type": "function", "function": {
    "name": WEATHER["name"], "description": WEATHER["description"],
    "parameters": WEATHER["input_schema"]}}


@pytest.fixture(scope="module")
def aclient(server):
    return anthropic.Anthropic(base_url=server.url, api_key="unused", max_retries=0, timeout=120)


def _chat(client, messages, max_tokens, **kw):
    r = client.chat.completions.create(model=MODEL_NAME, messages=messages, max_tokens=max_tokens,
                                       temperature=0, **kw)
    return r.choices[0], r.usage


def test_message_equals_chat_completion(aclient, client):
    choice, usage = _chat(client, [{"role": "system", "content": "Be kind."},
                                   {"role": "user", "content": "Say hi"}], 16)
    m = aclient.messages.create(model=MODEL_NAME, max_tokens=16, **GREEDY,
                                system="Be kind.", messages=[{"role": "user", "content": "Say hi"}])
    assert m.type == "message" and m.role == "assistant" and m.model == MODEL_NAME
    assert [b.type for b in m.content] == ["text"] and m.content[0].text == choice.message.content
    assert m.stop_reason == ("max_tokens" if choice.finish_reason == "length" else "end_turn")
    assert m.usage.output_tokens == usage.completion_tokens
    assert m.usage.input_tokens + (m.usage.cache_read_input_tokens or 0) == usage.prompt_tokens


def test_blocks_and_turns_are_the_chat_messages(aclient, client):
    choice, _ = _chat(client, [{"role": "system", "content": "Answer in one word."},
                               {"role": "user", "content": "What color is the sky?"},
                               {"role": "assistant", "content": "Blue."},
                               {"role": "user", "content": "And grass?"}], 12)
    m = aclient.messages.create(
        model=MODEL_NAME, max_tokens=12, **GREEDY,
        system=[{"type": "text", "text": "x-anthropic-billing-header: 1234"},
                {"type": "text", "text": "Answer in one word."}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "What color is the sky?"}]},
                  {"role": "assistant", "content": [{"type": "text", "text": "Blue."}]},
                  {"role": "user", "content": "And grass?"}])
    assert m.content[0].text == choice.message.content


def test_stream_equals_whole_message(aclient):
    kw = dict(model=MODEL_NAME, max_tokens=20, **GREEDY,
              messages=[{"role": "user", "content": "Count to five."}])
    whole = aclient.messages.create(**kw)
    with aclient.messages.stream(**kw) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == whole.content[0].text == final.content[0].text
    assert final.stop_reason == whole.stop_reason
    assert final.usage.output_tokens == whole.usage.output_tokens


def test_stop_sequence_is_reported(aclient):
    kw = dict(model=MODEL_NAME, max_tokens=24, **GREEDY,
              messages=[{"role": "user", "content": "Say hi"}])
    text = aclient.messages.create(**kw).content[0].text
    stop = text.split()[1]  # the second word: generation stops just before it
    m = aclient.messages.create(stop_sequences=[stop], **kw)
    assert m.stop_reason == "stop_sequence" and m.stop_sequence == stop
    assert m.content[0].text == text[:text.index(stop)]


def test_count_tokens_is_the_chat_prompt(aclient, client):
    _, usage = _chat(client, [{"role": "system", "content": "Be kind."},
                              {"role": "user", "content": "Say hi"}], 1)
    n = aclient.messages.count_tokens(model=MODEL_NAME, system="Be kind.",
                                      messages=[{"role": "user", "content": "Say hi"}])
    assert n.input_tokens == usage.prompt_tokens


@pytest.mark.parametrize("kw,error,fragment", [
    ({"messages": [{"role": "user", "content": [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": "AA=="}}]}]},
     anthropic.BadRequestError, "image"),
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
     anthropic.BadRequestError, "tools[0].type"),
    ({"model": "no-such-model"}, anthropic.NotFoundError, "no-such-model"),
    ({"thinking": {"type": "sometimes"}}, anthropic.BadRequestError, "thinking.type"),
])
def test_errors_use_anthropic_types(aclient, kw, error, fragment):
    args = dict(model=MODEL_NAME, max_tokens=4, messages=[{"role": "user", "content": "hi"}])
    args.update(kw)
    with pytest.raises(error) as e:
        aclient.messages.create(**args)
    body = e.value.body
    assert body["type"] == "error" and fragment in body["error"]["message"]
    assert body["error"]["type"] == ("not_found_error" if error is anthropic.NotFoundError
                                     else "invalid_request_error")


def test_missing_max_tokens_is_a_400(server):
    import urllib.request
    req = urllib.request.Request(server.url + "/v1/messages", method="POST",
                                 data=json.dumps({"messages": [{"role": "user",
                                                                "content": "hi"}]}).encode(),
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 400
    assert json.loads(e.value.read())["error"]["message"] == "max_tokens is required"


@pytest.fixture(scope="module")
def tool_clients(tmp_path_factory):
    s = hermes_tool_server(tmp_path_factory.mktemp("tpl"))
    yield (anthropic.Anthropic(base_url=s.url, api_key="unused", max_retries=0, timeout=120),
           openai_client(s))
    s.stop()


def test_tool_use_and_tool_result_round_trip(tool_clients):
    ac, oc = tool_clients
    q = [{"role": "user", "content": "What is the weather in Paris?"}]
    m = ac.messages.create(model=MODEL_NAME, max_tokens=80, **GREEDY, messages=q,
                           tools=[WEATHER], tool_choice={"type": "tool", "name": "get_weather"})
    uses = [b for b in m.content if b.type == "tool_use"]
    assert len(uses) == 1 and uses[0].name == "get_weather" and m.stop_reason == "tool_use"
    jsonschema.validate(uses[0].input, WEATHER["input_schema"])
    chat, _ = _chat(oc, q, 80, tools=[CHAT_WEATHER],
                    tool_choice={"type": "function", "function": {"name": "get_weather"}})
    assert json.loads(chat.message.tool_calls[0].function.arguments) == uses[0].input

    # The call and its result sent back: the chat messages vLLM builds from them.
    result = json.dumps({"city": uses[0].input["city"], "temperature": 21})
    second = ac.messages.create(
        model=MODEL_NAME, max_tokens=30, **GREEDY, tools=[WEATHER],
        tool_choice={"type": "none"},
        messages=q + [{"role": "assistant", "content": [b.model_dump() for b in m.content]},
                      {"role": "user", "content": [{"type": "tool_result",
                                                    "tool_use_id": uses[0].id,
                                                    "content": result}]}])
    history = q + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": uses[0].id, "type": "function",
         "function": {"name": "get_weather", "arguments": json.dumps(uses[0].input)}}]},
        {"role": "tool", "tool_call_id": uses[0].id, "content": result}]
    chat2, _ = _chat(oc, history, 30, tools=[CHAT_WEATHER], tool_choice="none")
    assert second.content[0].text == chat2.message.content


def test_streamed_tool_use(tool_clients):
    ac, _ = tool_clients
    with ac.messages.stream(model=MODEL_NAME, max_tokens=80, **GREEDY, tools=[WEATHER],
                            tool_choice={"type": "any"},
                            messages=[{"role": "user", "content": "Weather in Rome?"}]) as s:
        events = list(s)
        final = s.get_final_message()
    uses = [b for b in final.content if b.type == "tool_use"]
    assert uses and uses[0].name == "get_weather" and final.stop_reason == "tool_use"
    jsonschema.validate(uses[0].input, WEATHER["input_schema"])
    partial = "".join(e.delta.partial_json for e in events if e.type == "content_block_delta"
                      and e.delta.type == "input_json_delta" and e.index == final.content.index(
                          uses[0]))
    assert json.loads(partial) == uses[0].input
