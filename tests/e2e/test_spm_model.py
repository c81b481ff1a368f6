"""A SentencePiece GGUF (tokenizer.ggml.model "llama": Llama 2, Mistral 7B, TinyLlama files)
through `vllm serve` and the official `openai` client: tools/make_spm_test_model.py puts Llama
2's vocabulary on SmolLM2's weights (VLLM_SPM_MODEL; the text is noise, the path is real).
/tokenize gives llama.cpp's ids (the SentencePiece goldens), /detokenize its text, the Mistral
template renders [INST] turns over BOS, and streamed text equals the whole reply. The same
for a Hugging Face folder (VLLM_SPM_HF_MODEL: a tiny random Llama with the vocabulary as a
legacy tokenizer.json), against Hugging Face `tokenizers`' ids."""
import json
import os

import openai
import pytest

from test_serve_flags import Serve

MODEL = os.environ.get("VLLM_SPM_MODEL",
                       os.path.expanduser("~/.cache/vllm-cpp/vocab/smollm2-llama-spm.gguf"))
HF_MODEL = os.environ.get("VLLM_SPM_HF_MODEL",
                          os.path.expanduser("~/.cache/vllm-cpp/vocab/tiny-llama-spm"))
GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "golden", "tokenizer", "llama_spm.jsonl")


@pytest.fixture(scope="module")
def spm():
    assert os.path.exists(MODEL), f"{MODEL} missing (scripts/test.sh makes it)"
    s = Serve([MODEL, "--served-model-name", "spm"], log_name="spm")
    yield s
    s.stop()


def test_tokenize_and_detokenize_match_llama_cpp(spm):
    with open(GOLDEN, encoding="utf-8") as f:
        cases = [json.loads(line) for line in f]
    checked = 0
    for c in cases[::7]:
        if "\0" in c["text"] or len(c["ids"]) > 500:  # --max-model-len 512
            continue
        st, _, r = spm.request("/tokenize", {"prompt": c["text"]})
        assert st == 200 and r["tokens"] == c["ids"], c["text"]
        st, _, r = spm.request("/detokenize", {"tokens": c["ids"]})
        assert st == 200 and r["prompt"] == c["decoded"], c["text"]
        checked += 1
    assert checked >= 50


def test_chat_template_streaming_and_decoding(spm):
    client = openai.OpenAI(base_url=spm.url + "/v1", api_key="none")
    msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "Tell me more"}]
    r = client.chat.completions.create(model="spm", messages=msgs, max_tokens=12, temperature=0,
                                       extra_body={"return_prompt_text": True,
                                                   "return_token_ids": True})
    prompt = r.model_extra["prompt_text"]
    assert prompt == "<s> [INST] Hi [/INST] Hello</s> [INST] Tell me more [/INST]", prompt
    ids = r.model_extra["prompt_token_ids"]
    assert ids[0] == 1 and ids.count(1) == 1  # one BOS, from the template, none added
    whole = r.choices[0].message.content
    assert len(r.choices[0].model_extra["token_ids"]) == r.usage.completion_tokens > 0
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="spm", messages=msgs, max_tokens=12, temperature=0, stream=True) if c.choices)
    assert streamed == whole
    # Completions: the text is the token ids' bytes; /detokenize (Hugging Face's decode) drops
    # a leading space, and shows a trailing unfinished character as U+FFFD where the reply
    # (as vLLM's) leaves it out.
    c = client.completions.create(model="spm", prompt="The capital of France is", max_tokens=8,
                                  temperature=0, extra_body={"return_token_ids": True})
    text = c.choices[0].text
    st, _, d = spm.request("/detokenize", {"tokens": c.choices[0].model_extra["token_ids"]})
    assert st == 200 and d["prompt"].rstrip("\ufffd") in (text, text[1:]), (d, text)


def test_hugging_face_folder_with_a_sentencepiece_tokenizer_json():
    assert os.path.exists(os.path.join(HF_MODEL, "tokenizer.json")), HF_MODEL
    s = Serve([HF_MODEL, "--served-model-name", "spm-hf"], log_name="spm_hf")
    try:
        with open(GOLDEN.replace("llama_spm.jsonl", "hf_llama_legacy.jsonl"),
                  encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        for c in cases[::11]:
            if "\0" in c["text"] or len(c["ids"]) > 500:
                continue
            st, _, r = s.request("/tokenize", {"prompt": c["text"]})
            assert st == 200 and r["tokens"] == c["ids"], c["text"]
            st, _, r = s.request("/detokenize", {"tokens": c["ids"]})
            assert st == 200 and r["prompt"] == c["decoded"], c["text"]
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="none")
        msgs = [{"role": "user", "content": "Hi there"}]
        r = client.chat.completions.create(model="spm-hf", messages=msgs, max_tokens=6,
                                           temperature=0, extra_body={"return_prompt_text": True,
                                                                      "return_token_ids": True})
        assert r.model_extra["prompt_text"] == "<s> [INST] Hi there [/INST]"
        assert r.model_extra["prompt_token_ids"].count(1) == 1
        streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
            model="spm-hf", messages=msgs, max_tokens=6, temperature=0, stream=True) if c.choices)
        assert streamed == r.choices[0].message.content
    finally:
        s.stop()
