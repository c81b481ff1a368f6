"""Reasoning parsers whose markers are plain text, through `vllm serve` and the openai client on
the SmolLM2 GGUF.

--reasoning-parser olmo3 (Olmo 3 Think): SmolLM2's byte-level vocabulary writes "</think>" as
Olmo's does ("</", "think", ">"). api_tests Olmo3ReasoningGolden holds vLLM 0.33's own answers
for the split; here the server must apply it, and start a grammar only after those three tokens
(vLLM's is_reasoning_end): from the first token when the prompt already holds a "</think>",
never while the model is still inside its reasoning.

--reasoning-parser granite (Granite 3.2): "Here is my thought process:" / "Here is my
response:" split the output (api_tests GraniteReasoningGolden); a grammar cannot wait for a
phrase, so a thinking request's constraint is refused by name."""
import re

import openai
import pytest

from conftest import MODEL_NAME, Server, openai_client

REGEX = r"Answer: [a-z]{2,8}\."


def _client(parser):
    s = Server(["--reasoning-parser", parser])
    try:
        yield openai_client(s)
    finally:
        s.stop()


@pytest.fixture(scope="module")
def client():
    yield from _client("olmo3")


@pytest.fixture(scope="module")
def granite():
    yield from _client("granite")


def split(c, stream, **kw):
    """(reasoning, content) of one chat turn, whole or streamed and joined."""
    if not stream:
        m = c.chat.completions.create(model=MODEL_NAME, temperature=0, **kw).choices[0].message
        return getattr(m, "reasoning", None), m.content
    r, t = None, None
    for ch in c.chat.completions.create(model=MODEL_NAME, temperature=0, stream=True, **kw):
        if not ch.choices:
            continue
        d = ch.choices[0].delta
        if getattr(d, "reasoning", None):
            r = (r or "") + d.reasoning
        if d.content:
            t = (t or "") + d.content
    return r, t


def test_output_without_an_end_is_content_whole_and_reasoning_streamed(client):
    kw = dict(messages=[{"role": "user", "content": "Say hi"}], max_tokens=12)
    reasoning, content = split(client, False, **kw)
    # No "</think>": vLLM's regex reads the whole output as content...
    assert reasoning is None and content
    # ... while its stream starts inside the reasoning.
    assert split(client, True, **kw) == (content, None)


def test_grammar_waits_for_the_three_token_end(client):
    # The prompt does not hold "</think>": the model is inside its reasoning, which stays free
    # (this model never writes the end here), so the output is not forced into the regex.
    kw = dict(messages=[{"role": "user", "content": "Say hi"}], max_tokens=12,
              extra_body={"guided_regex": REGEX})
    reasoning, content = split(client, False, **kw)
    assert reasoning is None and not re.fullmatch(REGEX, content)
    # The prompt ends its reasoning (an assistant turn continued after "</think>"): the grammar
    # holds from the first token and a stream is all content.
    closed = dict(messages=[{"role": "user", "content": "Say hi"},
                            {"role": "assistant", "content": "<think>plan</think>"}],
                  max_tokens=12,
                  extra_body={"guided_regex": REGEX, "continue_final_message": True,
                              "add_generation_prompt": False})
    reasoning, content = split(client, False, **closed)
    assert reasoning is None and re.fullmatch(REGEX, content), content
    assert split(client, True, **closed) == (None, content)


GRANITE_RE = r"Here is my thought process: [a-z]{3,12}\. Here is my response: [A-Z][a-z]{2,8}\."


def test_granite_phrases_split_whole_and_streamed(granite):
    kw = dict(messages=[{"role": "user", "content": "Say hi"}], max_tokens=40,
              extra_body={"guided_regex": GRANITE_RE})
    reasoning, content = split(granite, False, **kw)
    assert re.fullmatch(r" [a-z]{3,12}\. ", reasoning), reasoning
    assert re.fullmatch(r" [A-Z][a-z]{2,8}\.", content), content
    assert split(granite, True, **kw) == (reasoning, content)
    # Text without the phrases is content.
    plain = dict(messages=[{"role": "user", "content": "Say hi"}], max_tokens=8)
    reasoning, content = split(granite, False, **plain)
    assert reasoning is None and content
    assert split(granite, True, **plain) == (None, content)


def test_granite_thinking_request_with_a_grammar_is_refused(granite):
    with pytest.raises(openai.BadRequestError) as e:
        granite.chat.completions.create(
            model=MODEL_NAME, messages=[{"role": "user", "content": "Say hi"}], max_tokens=8,
            extra_body={"guided_regex": GRANITE_RE,
                        "chat_template_kwargs": {"thinking": True}})
    assert "guided_regex" in str(e.value) and "granite" in str(e.value), e.value
