"""vLLM's extra request fields through the official `openai` client (extra_body), each checked
by what it changes: logit_bias, allowed_token_ids, bad_words, prompt_logprobs, echo,
return_token_ids, truncate_prompt_tokens, cached_tokens, cache_salt, chat echo and continue_final_message,
request-level chat templates; fields this server does not implement are 400s naming them.
Also CORS on the default server (vLLM's default: any origin)."""
import http.client
import json

import openai
import pytest

from conftest import MODEL_NAME
from test_openai_api import post

PROMPT = "The capital of France is"


def ids_of(server, text):
    status, tok = post(server, "/tokenize", {"prompt": text, "add_special_tokens": False})
    assert status == 200
    return tok["tokens"]


def complete(client, **kw):
    extra = kw.pop("extra_body", {})
    extra.setdefault("return_token_ids", True)
    return client.completions.create(model=MODEL_NAME, prompt=kw.pop("prompt", PROMPT),
                                     temperature=0, extra_body=extra, **kw)


def test_logit_bias_and_allowed_token_ids_change_greedy_output(client, server):
    plain = complete(client, max_tokens=4).choices[0]
    forced = ids_of(server, " banana")[0]
    assert forced not in plain.token_ids
    r = complete(client, max_tokens=4, logit_bias={str(forced): 100}).choices[0]
    assert r.token_ids == [forced] * 4
    # A strong negative bias removes the greedy first token.
    r = complete(client, max_tokens=1, logit_bias={str(plain.token_ids[0]): -100}).choices[0]
    assert r.token_ids[0] != plain.token_ids[0]
    allowed = ids_of(server, " one two three")
    r = complete(client, max_tokens=6, extra_body={"allowed_token_ids": allowed}).choices[0]
    assert set(r.token_ids) <= set(allowed)


def test_bad_words_are_never_generated(client):
    plain = complete(client, max_tokens=3).choices[0]
    assert plain.text.startswith(" Paris")
    r = complete(client, max_tokens=3, extra_body={"bad_words": ["Paris"]}).choices[0]
    assert "Paris" not in r.text


def test_prompt_logprobs_and_echo_with_logprobs(client, server):
    ids = ids_of(server, PROMPT)
    r = complete(client, max_tokens=2, extra_body={"prompt_logprobs": 2})
    pl = r.choices[0].model_extra["prompt_logprobs"]
    assert pl[0] is None and len(pl) == len(ids)
    for tok, entry in zip(ids[1:], pl[1:]):
        assert str(tok) in entry and 2 <= len(entry) <= 3
        ranks = sorted(v["rank"] for v in entry.values())
        assert 1 in ranks
    # echo + logprobs: the prompt's tokens and logprobs come first, the same numbers.
    e = client.completions.create(model=MODEL_NAME, prompt=PROMPT, max_tokens=2, temperature=0,
                                  echo=True, logprobs=2).choices[0]
    assert e.text == PROMPT + r.choices[0].text
    assert len(e.logprobs.tokens) == len(ids) + 2
    assert e.logprobs.token_logprobs[0] is None
    for k in range(1, len(ids)):
        assert e.logprobs.token_logprobs[k] == pytest.approx(pl[k][str(ids[k])]["logprob"], 1e-6)
    # echo with max_tokens 0: the prompt alone.
    z = client.completions.create(model=MODEL_NAME, prompt=PROMPT, max_tokens=0, echo=True,
                                  logprobs=0, temperature=0).choices[0]
    assert z.text == PROMPT and len(z.logprobs.tokens) == len(ids)
    # Streamed echo: the same text and logprobs.
    chunks = list(client.completions.create(model=MODEL_NAME, prompt=PROMPT, max_tokens=2,
                                            temperature=0, echo=True, logprobs=2, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == e.text
    streamed = [lp for c in chunks if c.choices[0].logprobs
                for lp in c.choices[0].logprobs.token_logprobs]
    assert streamed == e.logprobs.token_logprobs


def test_return_token_ids_truncation_and_cached_tokens(client, server):
    long_prompt = " ".join(["alpha beta gamma delta"] * 20)
    ids = ids_of(server, long_prompt)
    assert len(ids) > 48
    r = complete(client, prompt=long_prompt, max_tokens=3)
    c = r.choices[0]
    assert c.model_extra["prompt_token_ids"] == ids and len(c.token_ids) == 3
    # The same prompt again: its full blocks come from the prefix cache.
    again = complete(client, prompt=long_prompt, max_tokens=3)
    assert again.usage.prompt_tokens_details.cached_tokens >= 32
    assert again.choices[0].token_ids == c.token_ids
    # truncate_prompt_tokens keeps the last k tokens (vLLM's left truncation).
    t = complete(client, prompt=long_prompt, max_tokens=2,
                 extra_body={"truncate_prompt_tokens": 10})
    assert t.usage.prompt_tokens == 10
    assert t.choices[0].model_extra["prompt_token_ids"] == ids[-10:]


def test_cache_salt_keeps_prefix_cache_hits_within_one_salt(client):
    prompt = " ".join(["salted prefix words"] * 20)
    cached = lambda r: r.usage.prompt_tokens_details.cached_tokens

    def run(salt=None):
        return complete(client, prompt=prompt, max_tokens=2,
                        extra_body={"cache_salt": salt} if salt else {})

    plain = run()
    assert cached(run()) >= 32  # unsalted requests share as before
    first = run("tenant-a")
    assert cached(first) == 0  # nothing cached under this salt yet
    assert cached(run("tenant-a")) >= 32
    assert cached(run("tenant-b")) == 0
    assert first.choices[0].token_ids == plain.choices[0].token_ids  # same tokens either way


def test_chat_echo_continue_final_message_and_prompt_text(client):
    msgs = [{"role": "user", "content": "Name a colour."},
            {"role": "assistant", "content": "My favourite colour is"}]
    r = client.chat.completions.create(
        model=MODEL_NAME, messages=msgs, max_tokens=4, temperature=0,
        extra_body={"continue_final_message": True, "add_generation_prompt": False,
                    "echo": True, "return_prompt_text": True})
    prompt_text = r.model_extra["prompt_text"]
    # The assistant turn is left open: the prompt ends with its content.
    assert prompt_text.endswith("My favourite colour is")
    assert r.choices[0].message.content.startswith("My favourite colour is")
    plain = client.chat.completions.create(
        model=MODEL_NAME, messages=msgs, max_tokens=4, temperature=0,
        extra_body={"continue_final_message": True, "return_prompt_text": True})
    assert not plain.choices[0].message.content.startswith("My favourite colour is")
    assert r.choices[0].message.content == "My favourite colour is" + \
        plain.choices[0].message.content
    # Streamed, the echo comes first, then the same reply.
    chunks = list(client.chat.completions.create(
        model=MODEL_NAME, messages=msgs, max_tokens=4, temperature=0, stream=True,
        extra_body={"continue_final_message": True, "echo": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
        r.choices[0].message.content
    # Without continue_final_message the template closes the turn.
    closed = client.chat.completions.create(model=MODEL_NAME, messages=msgs, max_tokens=1,
                                            extra_body={"return_prompt_text": True})
    assert not closed.model_extra["prompt_text"].endswith("My favourite colour is")


def test_request_chat_template_needs_trust(server):
    status, body = post(server, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "x"}], "max_tokens": 1,
        "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"})
    assert status == 400 and body["error"]["param"] == "chat_template"
    assert "--trust-request-chat-template" in body["error"]["message"]


@pytest.mark.parametrize("field,value", [
    ("use_beam_search", True), ("length_penalty", 0.5), ("cache_salt", ""),
    ("logits_processors", ["x.y"]), ("prompt_logprobs", 99), ("priority", 5),
])
def test_unimplemented_fields_are_400s_naming_them(client, field, value):
    with pytest.raises(openai.BadRequestError) as e:
        complete(client, max_tokens=1, extra_body={field: value})
    assert e.value.body["param"] == field, e.value.body


def test_unknown_fields_are_ignored(client):
    r = complete(client, max_tokens=2, extra_body={"no_such_vllm_field": {"a": 1}})
    assert len(r.choices[0].token_ids) == 2


def test_cors_headers_and_preflight(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("OPTIONS", "/v1/completions", headers={
        "Origin": "http://example.test", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,authorization"})
    r = conn.getresponse()
    r.read()
    assert r.status in (200, 204)
    assert r.getheader("Access-Control-Allow-Origin") == "*"
    assert "POST" in r.getheader("Access-Control-Allow-Methods", "") or \
        r.getheader("Access-Control-Allow-Methods") == "*"
    conn.request("POST", "/v1/completions",
                  body=json.dumps({"prompt": "x", "max_tokens": 1}),
                  headers={"Origin": "http://example.test", "Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    assert r.status == 200 and r.getheader("Access-Control-Allow-Origin") == "*"
    conn.close()
