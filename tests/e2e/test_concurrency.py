"""64 concurrent streaming clients for 200 requests: every request completes, no stream mixes
tokens of another, and greedy outputs equal those of the same prompts run one at a time."""
import concurrent.futures as cf

from conftest import MODEL_NAME, kv_idle

NUM_PROMPTS = 25
NUM_REQUESTS = 200
CONCURRENCY = 64
MAX_TOKENS = 8


def prompts():
    subjects = ["cats", "the sea", "Paris", "winter", "robots", "music", "gardens", "trains",
                "coffee", "the moon", "history", "chess", "rivers", "bread", "mountains",
                "friendship", "rain", "libraries", "bicycles", "stars", "honey", "clocks",
                "forests", "bridges", "snow"]
    return [f"Write one sentence about {s} number {i}:" for i, s in enumerate(subjects)]


def run_stream(client, prompt):
    stream = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=MAX_TOKENS,
                                       temperature=0, stream=True,
                                       stream_options={"include_usage": True},
                                       extra_body={"ignore_eos": True})
    ids, text, usage, finish = set(), [], None, None
    for ch in stream:
        ids.add(ch.id)
        if ch.usage is not None:
            usage = ch.usage
        for c in ch.choices:
            assert c.index == 0
            text.append(c.text)
            finish = c.finish_reason or finish
    return ids, "".join(text), usage, finish


def test_64_concurrent_streams_match_sequential(client, server):
    ps = prompts()
    reference = {}
    for p in ps:  # one at a time
        r = client.completions.create(model=MODEL_NAME, prompt=p, max_tokens=MAX_TOKENS,
                                      temperature=0, extra_body={"ignore_eos": True})
        reference[p] = r.choices[0].text
    work = [ps[i % NUM_PROMPTS] for i in range(NUM_REQUESTS)]
    with cf.ThreadPoolExecutor(CONCURRENCY) as pool:
        results = list(pool.map(lambda p: run_stream(client, p), work))
    seen_ids = set()
    for p, (ids, text, usage, finish) in zip(work, results):
        assert len(ids) == 1, "a stream carried chunks of several requests"
        assert not (ids & seen_ids), "two streams share a request id"
        seen_ids |= ids
        assert finish == "length"
        assert usage is not None and usage.completion_tokens == MAX_TOKENS
        assert text == reference[p], f"batched output differs for {p!r}"
    kv_idle(server)
