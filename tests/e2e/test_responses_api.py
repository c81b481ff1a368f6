"""The OpenAI Responses API (POST /v1/responses) with the official openai client, against the
same server's chat completions: a Responses request is the chat request vLLM builds from it
(instructions as the system message, input items as messages, flat function tools), so greedy
outputs must be equal, whole and streamed; what cannot be honoured is a 400 (or vLLM's 404 for
previous_response_id, since nothing is stored) naming the field. With the store on
(VLLM_ENABLE_RESPONSES_API_STORE=1): previous_response_id, GET /v1/responses/{id}, and the
background mode (polling, cancel, resumable streams)."""
import json
import os
import time

import jsonschema
import openai
import pytest

from conftest import MODEL_NAME, Server, hermes_tool_server, openai_client
from test_openai_api import post

GREEDY = {"temperature": 0}
WEATHER = {"type": "function", "name": "get_weather", "description": "Current weather in a city",
           "parameters": {"type": "object",
                          "properties": {"city": {"type": "string", "maxLength": 20},
                                         "unit": {"type": "string",
                                                  "enum": ["celsius", "fahrenheit"]}},
                          "required": ["city", "unit"]}}
CHAT_WEATHER = {"type": "function",
                "function": {k: v for k, v in WEATHER.items() if k != "type"}}


def _chat_text(client, messages, max_tokens, **kw):
    r = client.chat.completions.create(model=MODEL_NAME, messages=messages, max_tokens=max_tokens,
                                       **GREEDY, **kw)
    return r.choices[0].message.content, r


def test_text_input_equals_chat_completion(client):
    text, chat = _chat_text(client, [{"role": "user", "content": "Name three colors."}], 24)
    r = client.responses.create(model=MODEL_NAME, input="Name three colors.",
                                max_output_tokens=24, **GREEDY)
    assert r.object == "response" and r.id.startswith("resp_") and r.model == MODEL_NAME
    assert r.output_text == text
    assert [o.type for o in r.output] == ["message"]
    assert r.output[0].role == "assistant" and r.output[0].content[0].type == "output_text"
    assert r.usage.input_tokens == chat.usage.prompt_tokens
    assert r.usage.output_tokens == chat.usage.completion_tokens
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens
    # 24 tokens cut the answer: vLLM's "incomplete" with the reason.
    if chat.choices[0].finish_reason == "length":
        assert r.status == "incomplete" and r.incomplete_details.reason == "max_output_tokens"
    else:
        assert r.status == "completed" and r.incomplete_details is None
    assert r.max_output_tokens == 24 and r.temperature == 0 and r.tools == []


def test_instructions_and_message_items_are_the_chat_messages(client):
    msgs = [{"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "What color is the sky?"},
            {"role": "assistant", "content": "Blue."},
            {"role": "user", "content": "And grass?"}]
    text, _ = _chat_text(client, msgs, 12)
    r = client.responses.create(
        model=MODEL_NAME, instructions="Answer in one word.", max_output_tokens=12,
        input=[{"role": "user", "content": [{"type": "input_text",
                                             "text": "What color is the sky?"}]},
               {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Blue."}]},
               {"role": "user", "content": "And grass?"}], **GREEDY)
    assert r.output_text == text and r.instructions == "Answer in one word."


def test_stream_events_reassemble_the_response(client):
    whole = client.responses.create(model=MODEL_NAME, input="Count to five.",
                                    max_output_tokens=20, **GREEDY)
    events = list(client.responses.create(model=MODEL_NAME, input="Count to five.",
                                          max_output_tokens=20, stream=True, **GREEDY))
    types = [e.type for e in events]
    assert types[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert types[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done",
                          "response.incomplete" if whole.status == "incomplete"
                          else "response.completed"]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert all(d.delta for d in deltas)  # no empty deltas, as vLLM
    assert "".join(d.delta for d in deltas) == whole.output_text
    item_id = events[2].item.id
    assert item_id.startswith("msg_") and all(d.item_id == item_id for d in deltas)
    final = events[-1].response
    assert final.output_text == whole.output_text and final.output[0].id == item_id
    assert final.usage.output_tokens == whole.usage.output_tokens
    assert events[0].response.status == "in_progress" and events[0].response.output == []


def test_text_format_json_schema_is_enforced(client):
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                               "age": {"type": "integer"}},
              "required": ["name", "age"], "additionalProperties": False}
    r = client.responses.create(
        model=MODEL_NAME, input="Make up a person.", max_output_tokens=60, **GREEDY,
        text={"format": {"type": "json_schema", "name": "person", "schema": schema,
                         "strict": True}})
    jsonschema.validate(json.loads(r.output_text), schema)
    assert r.text.format.type == "json_schema"


@pytest.mark.parametrize("body,status,param", [
    ({"background": True}, 400, "background"),
    ({"previous_response_id": "resp_123"}, 404, "previous_response_id"),
    ({"tools": [{"type": "web_search"}]}, 400, "tools[0].type"),
    ({"include": ["file_search_call.results"]}, 400, "include"),
    ({"top_logprobs": 21, "include": ["message.output_text.logprobs"]}, 400, "top_logprobs"),
    ({"text": {"verbosity": "low"}}, 400, "text.verbosity"),
    ({"reasoning": {"summary": "detailed"}}, 400, "reasoning.summary"),
    ({"input": [{"type": "item_reference", "id": "x"}]}, 400, "input"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
     400, "input[0].content"),
    ({"input": None}, 400, "input"),
    ({"tool_choice": {"type": "web_search_preview"}}, 400, "tool_choice"),
])
def test_unsupported_fields_are_refused_naming_them(server, body, status, param):
    req = {"model": MODEL_NAME, "input": "hi", "max_output_tokens": 4, **body}
    if req["input"] is None:
        del req["input"]
    code, out = post(server, "/v1/responses", req)
    assert code == status, out
    assert out["error"]["param"] == param and out["error"]["message"]


def test_output_logprobs_are_the_chat_logprobs(client):
    q = "Name a fruit."
    chat = client.chat.completions.create(model=MODEL_NAME, max_tokens=8, logprobs=True,
                                          top_logprobs=2, messages=[{"role": "user", "content": q}],
                                          **GREEDY)
    want = [(t.token, t.logprob, [a.token for a in t.top_logprobs])
            for t in chat.choices[0].logprobs.content]
    kw = dict(model=MODEL_NAME, input=q, max_output_tokens=8, top_logprobs=2,
              include=["message.output_text.logprobs"], **GREEDY)
    r = client.responses.create(**kw)
    got = [(t.token, t.logprob, [a.token for a in t.top_logprobs])
           for t in r.output[0].content[0].logprobs]
    assert got == want and r.top_logprobs == 2
    events = list(client.responses.create(stream=True, **kw))
    streamed = [(t.token, t.logprob, [a.token for a in t.top_logprobs]) for e in events
                if e.type == "response.output_text.delta" for t in e.logprobs]
    assert streamed == want
    final = events[-1].response.output[0].content[0].logprobs
    assert [(t.token, t.logprob) for t in final] == [(w[0], w[1]) for w in want]
    # Without the include there are none, as in vLLM.
    plain = client.responses.create(model=MODEL_NAME, input=q, max_output_tokens=8, **GREEDY)
    assert plain.output[0].content[0].logprobs is None


def test_store_and_encrypted_reasoning_include_are_accepted(client):
    # vLLM's defaults: store is on in every request and nothing is stored; Codex-style clients
    # ask for encrypted reasoning, which comes back as plain reasoning text instead.
    r = client.responses.create(model=MODEL_NAME, input="Hi", max_output_tokens=4, store=True,
                                include=["reasoning.encrypted_content"], **GREEDY)
    assert r.status in ("completed", "incomplete") and r.output


@pytest.fixture(scope="module")
def tool_client(tmp_path_factory):
    s = hermes_tool_server(tmp_path_factory.mktemp("tpl"))
    yield openai_client(s)
    s.stop()


def test_function_call_item_then_its_output_round_trip(tool_client):
    q = "What is the weather in Paris?"
    named = {"type": "function", "name": "get_weather"}
    r = tool_client.responses.create(model=MODEL_NAME, input=q, tools=[WEATHER],
                                     tool_choice=named, max_output_tokens=80, **GREEDY)
    calls = [o for o in r.output if o.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather" and calls[0].id.startswith("fc_")
    args = json.loads(calls[0].arguments)
    jsonschema.validate(args, WEATHER["parameters"])
    # The same request through chat completions calls the same way.
    chat = tool_client.chat.completions.create(
        model=MODEL_NAME, messages=[{"role": "user", "content": q}], tools=[CHAT_WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}}, max_tokens=80,
        **GREEDY)
    assert chat.choices[0].message.tool_calls[0].function.arguments == calls[0].arguments

    # The call and its result fed back as input items: the chat messages vLLM builds.
    result = json.dumps({"city": args["city"], "temperature": 21})
    items = [{"role": "user", "content": q}, calls[0].model_dump(exclude_none=True),
             {"type": "function_call_output", "call_id": calls[0].call_id, "output": result}]
    second = tool_client.responses.create(model=MODEL_NAME, input=items, tools=[WEATHER],
                                          tool_choice="none", max_output_tokens=30, **GREEDY)
    history = [{"role": "user", "content": q},
               {"role": "assistant", "content": None,
                "tool_calls": [{"id": calls[0].call_id, "type": "function",
                                "function": {"name": "get_weather",
                                             "arguments": calls[0].arguments}}]},
               {"role": "tool", "tool_call_id": calls[0].call_id, "content": result}]
    text, _ = _chat_text(tool_client, history, 30, tools=[CHAT_WEATHER], tool_choice="none")
    assert second.output_text == text


def test_streamed_function_call(tool_client):
    events = list(tool_client.responses.create(
        model=MODEL_NAME, input="Weather in Rome?", tools=[WEATHER], tool_choice="required",
        max_output_tokens=80, stream=True, **GREEDY))
    added = [e for e in events if e.type == "response.output_item.added"
             and e.item.type == "function_call"]
    assert len(added) >= 1
    first = added[0].item.id
    deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta"
                     and e.item_id == first)
    done = [e for e in events if e.type == "response.function_call_arguments.done"
            and e.item_id == first][0]
    assert done.arguments == deltas and done.name == "get_weather"
    jsonschema.validate(json.loads(deltas), WEATHER["parameters"])
    final = events[-1].response
    assert final.status == "completed"
    assert [o.id for o in final.output if o.type == "function_call"][0] == first


@pytest.fixture(scope="module")
def store_client():
    s = Server([], env=dict(os.environ, VLLM_ENABLE_RESPONSES_API_STORE="1"))
    yield openai_client(s)
    s.stop()


def test_store_continues_a_previous_response(store_client):
    c = store_client
    first = c.responses.create(model=MODEL_NAME, input="My name is Ann.", instructions="Be kind.",
                               max_output_tokens=12, **GREEDY)
    assert first.store is True
    second = c.responses.create(model=MODEL_NAME, input="What is my name?",
                                previous_response_id=first.id, max_output_tokens=12, **GREEDY)
    assert second.previous_response_id == first.id
    # vLLM's construct_input_messages: the stored turn without its instructions, the previous
    # output as an assistant message, then the new input.
    text, _ = _chat_text(c, [{"role": "user", "content": "My name is Ann."},
                             {"role": "assistant", "content": first.output_text},
                             {"role": "user", "content": "What is my name?"}], 12)
    assert second.output_text == text
    got = c.responses.retrieve(first.id)
    assert got.id == first.id and got.output_text == first.output_text
    # Streamed responses are stored too; store false ones are not.
    events = list(c.responses.create(model=MODEL_NAME, input="Hi", max_output_tokens=4,
                                      stream=True, **GREEDY))
    sid = events[-1].response.id
    assert c.responses.retrieve(sid).output_text == events[-1].response.output_text
    off = c.responses.create(model=MODEL_NAME, input="Hi", max_output_tokens=4, store=False,
                             **GREEDY)
    with pytest.raises(openai.NotFoundError):
        c.responses.retrieve(off.id)
    with pytest.raises(openai.NotFoundError):
        c.responses.create(model=MODEL_NAME, input="x", previous_response_id=off.id)


def test_without_the_store_nothing_is_retrievable(client):
    r = client.responses.create(model=MODEL_NAME, input="Hi", max_output_tokens=2, **GREEDY)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(r.id)


def _wait_done(c, rid, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = c.responses.retrieve(rid)
        if r.status not in ("queued", "in_progress"):
            return r
        time.sleep(0.05)
    raise AssertionError(f"{rid} still {r.status}")


def test_background_response_runs_on_and_is_polled(store_client):
    # vLLM's background mode (with its store): the create call returns the queued Response at
    # once, GET polls it until it is the Response a foreground request gives.
    c = store_client
    fg = c.responses.create(model=MODEL_NAME, input="Name three colors.", max_output_tokens=24,
                            **GREEDY)
    bg = c.responses.create(model=MODEL_NAME, input="Name three colors.", max_output_tokens=24,
                            background=True, **GREEDY)
    assert bg.background is True and bg.status == "queued" and bg.output == []
    assert bg.usage is None
    done = _wait_done(c, bg.id)
    assert done.status == fg.status and done.output_text == fg.output_text
    assert done.usage.output_tokens == fg.usage.output_tokens and done.background is True
    # A finished response cannot be cancelled; an unknown one is a 404.
    with pytest.raises(openai.BadRequestError, match="Cannot cancel a synchronous response"):
        c.responses.cancel(bg.id)
    with pytest.raises(openai.NotFoundError):
        c.responses.cancel("resp_unknown")
    # background needs store: true (vLLM's check).
    with pytest.raises(openai.BadRequestError, match="`store` is true"):
        c.responses.create(model=MODEL_NAME, input="x", background=True, store=False)


def test_background_response_cancel_stops_it(store_client):
    c = store_client
    bg = c.responses.create(model=MODEL_NAME, input="Write a long story about a dragon.",
                            max_output_tokens=400, background=True, **GREEDY)
    t0 = time.time()
    r = c.responses.cancel(bg.id)
    assert r.id == bg.id and r.status == "cancelled"
    # The cancel returns once the generation stopped: far sooner than 400 tokens, and the
    # response stays cancelled (its generation never completes it).
    assert time.time() - t0 < 5
    time.sleep(0.3)
    assert c.responses.retrieve(bg.id).status == "cancelled"
    with pytest.raises(openai.BadRequestError):
        c.responses.cancel(bg.id)
    # The server serves on.
    assert c.responses.create(model=MODEL_NAME, input="Hi", max_output_tokens=2,
                              **GREEDY).status in ("completed", "incomplete")


def test_background_stream_is_resumable(store_client):
    # Streamed in the background: the events of a foreground stream; GET ?stream=true with
    # starting_after replays the events after that sequence number (vLLM's resumption), even
    # after the first reader is gone.
    c = store_client
    fg = list(c.responses.create(model=MODEL_NAME, input="Name a fruit.", max_output_tokens=12,
                                 stream=True, **GREEDY))
    events = list(c.responses.create(model=MODEL_NAME, input="Name a fruit.",
                                     max_output_tokens=12, stream=True, background=True,
                                     **GREEDY))
    assert [e.type for e in events] == [e.type for e in fg]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    assert final.output_text == fg[-1].response.output_text and final.background is True
    again = list(c.responses.retrieve(final.id, stream=True, starting_after=2))
    assert [e.model_dump() for e in again] == [e.model_dump() for e in events[3:]]
    assert _wait_done(c, final.id).output_text == final.output_text
    # A reader that leaves early does not stop it.
    s = c.responses.create(model=MODEL_NAME, input="Name a color.", max_output_tokens=12,
                           stream=True, background=True, **GREEDY)
    first = next(iter(s))
    s.close()
    done = _wait_done(c, first.response.id)
    assert done.status in ("completed", "incomplete") and done.output_text
    # A response that was not streamed has no events to replay.
    plain = c.responses.create(model=MODEL_NAME, input="Hi", max_output_tokens=2, **GREEDY)
    with pytest.raises(openai.BadRequestError, match="Unknown response_id"):
        list(c.responses.retrieve(plain.id, stream=True))
