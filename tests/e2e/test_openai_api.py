"""The official `openai` client against `vllm serve`: completions and chat, streaming and not,
logprobs, usage, n, seed, stop, errors, and the auxiliary endpoints."""
import json
import math
import urllib.request

import openai
import pytest

from conftest import API_KEY, MAX_MODEL_LEN, MODEL_NAME

PROMPT = "The capital of France is"
GREEDY = dict(temperature=0, max_tokens=8)


def post(server, path, body, headers=None):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(server.url + path, data=data, method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def test_completion_greedy_and_usage(client, server):
    r = client.completions.create(model=MODEL_NAME, prompt=PROMPT,
                                  extra_body={"ignore_eos": True}, **GREEDY)
    assert r.object == "text_completion" and r.model == MODEL_NAME
    c = r.choices[0]
    assert c.finish_reason == "length" and c.text
    # Usage agrees with the tokenizer endpoint and max_tokens.
    status, tok = post(server, "/tokenize", {"prompt": PROMPT})
    assert status == 200
    assert r.usage.prompt_tokens == tok["count"] == len(tok["tokens"])
    assert r.usage.completion_tokens == 8
    assert r.usage.total_tokens == r.usage.prompt_tokens + 8
    # The same prompt given as token ids yields the same greedy text.
    r2 = client.completions.create(model=MODEL_NAME, prompt=tok["tokens"],
                                   extra_body={"ignore_eos": True}, **GREEDY)
    assert r2.choices[0].text == c.text


def test_completion_stream_matches_non_stream(client):
    full = client.completions.create(model=MODEL_NAME, prompt=PROMPT, **GREEDY)
    chunks = list(client.completions.create(model=MODEL_NAME, prompt=PROMPT, stream=True,
                                            stream_options={"include_usage": True}, **GREEDY))
    text = "".join(ch.choices[0].text for ch in chunks if ch.choices)
    assert text == full.choices[0].text
    assert len({ch.id for ch in chunks}) == 1
    finals = [ch.choices[0].finish_reason for ch in chunks if ch.choices]
    assert finals[-1] == full.choices[0].finish_reason and all(f is None for f in finals[:-1])
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == full.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == full.usage.prompt_tokens


def test_chat_stream_matches_non_stream(client):
    msgs = [{"role": "user", "content": "What is 2+2?"}]
    full = client.chat.completions.create(model=MODEL_NAME, messages=msgs, **GREEDY)
    m = full.choices[0].message
    assert full.object == "chat.completion" and m.role == "assistant" and m.content
    chunks = list(client.chat.completions.create(model=MODEL_NAME, messages=msgs, stream=True,
                                                 stream_options={"include_usage": True},
                                                 **GREEDY))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == m.content
    assert chunks[-1].usage.total_tokens == full.usage.total_tokens


@pytest.mark.parametrize("chat", [False, True])
def test_continuous_usage_stats_on_every_chunk(client, chat):
    # vLLM's stream_options.continuous_usage_stats: every chunk carries the usage so far (the
    # chat role chunk with 0 completion tokens), then the final usage chunk as include_usage.
    opts = dict(stream=True, extra_body={"ignore_eos": True},
                stream_options={"include_usage": True, "continuous_usage_stats": True}, **GREEDY)
    if chat:
        msgs = [{"role": "user", "content": "Count to ten."}]
        full = client.chat.completions.create(model=MODEL_NAME, messages=msgs,
                                              extra_body={"ignore_eos": True}, **GREEDY)
        chunks = list(client.chat.completions.create(model=MODEL_NAME, messages=msgs, **opts))
    else:
        full = client.completions.create(model=MODEL_NAME, prompt=PROMPT,
                                         extra_body={"ignore_eos": True}, **GREEDY)
        chunks = list(client.completions.create(model=MODEL_NAME, prompt=PROMPT, **opts))
    body, final = chunks[:-1], chunks[-1]
    assert body and all(ch.choices and ch.usage is not None for ch in body)
    done = [ch.usage.completion_tokens for ch in body]
    assert done == sorted(done) and done[-1] == 8 and len(set(done)) > 1
    if chat:
        assert chunks[0].choices[0].delta.role == "assistant" and done[0] == 0
    for ch in body:
        assert ch.usage.prompt_tokens == full.usage.prompt_tokens
        assert ch.usage.total_tokens == ch.usage.prompt_tokens + ch.usage.completion_tokens
    assert final.choices == [] and final.usage.completion_tokens == 8
    # Without include_usage the flag has no effect, as in vLLM.
    opts["stream_options"] = {"continuous_usage_stats": True}
    if chat:
        plain = list(client.chat.completions.create(model=MODEL_NAME, messages=msgs, **opts))
    else:
        plain = list(client.completions.create(model=MODEL_NAME, prompt=PROMPT, **opts))
    assert all(ch.usage is None for ch in plain)


def test_chat_prompt_tokens_match_template(client, server):
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]
    full = client.chat.completions.create(model=MODEL_NAME, messages=msgs, max_tokens=1)
    status, tok = post(server, "/tokenize", {"messages": msgs})
    assert status == 200 and full.usage.prompt_tokens == tok["count"]


def test_completion_logprobs(client):
    r = client.completions.create(model=MODEL_NAME, prompt=PROMPT, logprobs=3, **GREEDY)
    c = r.choices[0]
    lp = c.logprobs
    assert "".join(lp.tokens) == c.text
    assert len(lp.token_logprobs) == len(lp.tokens) == len(lp.top_logprobs)
    for tok, l, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert l <= 0.0
        assert 3 <= len(top) <= 4
        # Greedy: the chosen token is the most likely one.
        assert math.isclose(max(top.values()), l, abs_tol=1e-5)
        assert top[tok] == pytest.approx(l, abs=1e-5)
    assert lp.text_offset == sorted(lp.text_offset) and lp.text_offset[0] == 0


def test_chat_logprobs(client):
    r = client.chat.completions.create(model=MODEL_NAME,
                                       messages=[{"role": "user", "content": "Hi"}],
                                       logprobs=True, top_logprobs=2, **GREEDY)
    content = r.choices[0].logprobs.content
    assert "".join(t.token for t in content) == r.choices[0].message.content
    for t in content:
        assert len(t.top_logprobs) == 2
        assert t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob
        assert t.top_logprobs[0].token == t.token
        assert bytes(t.bytes).decode("utf-8", "replace") == t.token


def test_n_seed_and_stop(client):
    r = client.completions.create(model=MODEL_NAME, prompt=PROMPT, n=3, temperature=1.0,
                                  seed=1234, max_tokens=6)
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    again = client.completions.create(model=MODEL_NAME, prompt=PROMPT, n=3, temperature=1.0,
                                      seed=1234, max_tokens=6)
    assert [c.text for c in r.choices] == [c.text for c in again.choices]
    assert 3 <= r.usage.completion_tokens <= 18  # counted over all choices
    assert r.usage.prompt_tokens == again.usage.prompt_tokens  # the prompt counts once
    greedy = client.completions.create(model=MODEL_NAME, prompt=PROMPT, temperature=0,
                                       max_tokens=8, extra_body={"ignore_eos": True})
    text = greedy.choices[0].text
    word = text.strip().split()[1] if len(text.strip().split()) > 1 else text.strip()[:2]
    s = client.completions.create(model=MODEL_NAME, prompt=PROMPT, temperature=0, max_tokens=8,
                                  stop=[word])
    assert s.choices[0].finish_reason == "stop"
    assert s.choices[0].stop_reason == word
    assert s.choices[0].text == text[:text.index(word)]


def test_penalties_and_sampling_knobs_are_accepted(client):
    r = client.completions.create(model=MODEL_NAME, prompt=PROMPT, max_tokens=4,
                                  temperature=0.7, top_p=0.9, presence_penalty=0.5,
                                  frequency_penalty=0.5, seed=7,
                                  extra_body={"top_k": 20, "min_p": 0.05,
                                              "repetition_penalty": 1.1})
    assert r.choices[0].finish_reason in ("stop", "length")


def test_errors_through_the_client(client):
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model=MODEL_NAME, prompt=PROMPT, temperature=-1)
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="no-such-model", prompt=PROMPT)
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=MODEL_NAME, prompt=PROMPT, max_tokens=10**6)
    assert "maximum context length" in str(e.value)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=MODEL_NAME, messages=[])


def test_api_key(keyed_server):
    ok = openai.OpenAI(base_url=keyed_server.url + "/v1", api_key=API_KEY, max_retries=0)
    assert ok.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=1).choices
    bad = openai.OpenAI(base_url=keyed_server.url + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=1)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()
    # /health is outside /v1 and needs no key, like vLLM.
    with urllib.request.urlopen(keyed_server.url + "/health") as r:
        assert r.status == 200


def test_models_version_tokenize_detokenize_metrics(client, server):
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL_NAME]
    with urllib.request.urlopen(server.url + "/version") as r:
        assert json.loads(r.read())["version"]
    status, tok = post(server, "/tokenize", {"prompt": "Hello world", "add_special_tokens": False})
    assert status == 200 and tok["max_model_len"] == MAX_MODEL_LEN
    status, det = post(server, "/detokenize", {"tokens": tok["tokens"]})
    assert status == 200 and det["prompt"] == "Hello world"
    status, err = post(server, "/detokenize", {"tokens": [10**8]})
    assert status == 400 and err["error"]["code"] == 400
    m = server.metrics()
    lbl = f'{{model_name="{MODEL_NAME}"}}'
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting",
                 "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total",
                 "vllm:generation_tokens_total", "vllm:time_to_first_token_seconds_count",
                 "vllm:inter_token_latency_seconds_count"):
        assert name + lbl in m, name
    assert m["vllm:generation_tokens_total" + lbl] > 0
    assert m["vllm:time_to_first_token_seconds_count" + lbl] > 0
