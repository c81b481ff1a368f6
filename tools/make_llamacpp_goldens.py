#!/usr/bin/env python3
"""llama.cpp greedy goldens for a GGUF model (default: SmolLM2-135M-Instruct Q4_1).

Owns tests/golden/llamacpp/<name>.json: per prompt, the ids llama.cpp's tokenizer
produced and 64 greedy steps (argmax id, top-2 ids and logits per step) for the
reference gate of DESIGN.md section 4. Needs llama-cpp-python (never in CI).

  python3 tools/make_llamacpp_goldens.py \
      --model ~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf \
      --out tests/golden/llamacpp/smollm2_q4_1.json

The format is described in tests/golden/llamacpp/README.md.
"""
import argparse
import hashlib
import json
import os

import numpy as np
import llama_cpp

N_STEPS = 64
N_CTX = 1024

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chatml(*turns, system=SYSTEM):
    """ChatML as SmolLM2's template renders it with add_generation_prompt."""
    s = f"<|im_start|>system\n{system}<|im_end|>\n"
    for role, text in turns:
        s += f"<|im_start|>{role}\n{text}<|im_end|>\n"
    return s + "<|im_start|>assistant\n"


LONG = (
    "The history of computing is a story of abstraction layered on abstraction. Early machines "
    "such as the ENIAC were programmed by rewiring panels of cables and setting thousands of "
    "switches by hand, a process that could take days for a single calculation. The stored-"
    "program concept, described by John von Neumann in 1945, changed that: instructions would "
    "live in the same memory as data, so a new program meant loading new numbers rather than "
    "moving wires. Assembly languages followed, giving mnemonic names to machine operations, and "
    "in 1957 FORTRAN showed that a compiler could translate formulas into code nearly as fast as "
    "what an expert wrote by hand. Operating systems then hid the details of disks, terminals and "
    "memory behind files, processes and virtual addresses. Each layer let programmers think about "
    "bigger problems while trusting the layer below to be correct and fast. Today a single line "
    "of Python may trigger a cascade through an interpreter, a runtime library, a kernel, device "
    "drivers and finally microcode inside the processor, yet the person who wrote it rarely needs "
    "to know. The cost of this convenience is that performance problems can hide at any level, "
    "and finding them requires tools that see through the abstractions: profilers, tracers and, "
    "above all, careful measurement against a simple model of what the hardware can do. In short, "
    "the lesson of seventy years of computing is"
)

PROMPTS = [
    ("plain", "The capital of France is"),
    ("plain_single", "Hello"),
    ("chat", chatml(("user", "What is the capital of France?"))),
    ("chat_multiturn", chatml(("user", "Hi! Can you help me with math?"),
                              ("assistant", "Of course! What do you need help with?"),
                              ("user", "What is 12 times 13?"))),
    ("chat_custom_system", chatml(("user", "Write a haiku about the sea."),
                                  system="You are a poet who answers in verse.")),
    ("code", 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'),
    ("code_cpp", "#include <vector>\n\nint sum(const std::vector<int>& v) {\n  int s = 0;\n"),
    ("numbers", "1, 2, 3, 5, 8, 13, 21, 34,"),
    ("numbers_text", "In 1969, 3.14159 and 2,718 were written as 0x1F and 1e-5; the total was $42.50 and"),
    ("long", LONG),
    ("french", "Le chat est assis sur le tapis et il"),
    ("german_spanish", "Guten Morgen! ¿Cómo estás? Ich heiße Anna und"),
    ("chinese_emoji", "中国的首都是北京。我喜欢 🍜 和"),
    ("whitespace", "Items:\n\n  - apples\n  - pears\n\t- plums\n\n\nTotal:"),
    ("markdown_json", '## Config\n\n```json\n{"name": "vllm", "port": 8000, "debug":'),
]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def gguf_add_bos(model_path):
    import gguf  # the gguf package is in CI's deps; used here only to read one key
    r = gguf.GGUFReader(model_path)
    f = r.fields.get("tokenizer.ggml.add_bos_token")
    return bool(f.contents()) if f is not None else None


def greedy(llm, ids, n_steps=N_STEPS):
    llm.reset()
    llm.eval(ids)
    steps = []
    for _ in range(n_steps):
        # Llama.scores is only filled with logits_all=True (which would make llama.cpp compute
        # the output layer for every prompt token); read the last output row directly instead.
        ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        row = np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy()
        top = np.argsort(-row, kind="stable")[:2]
        nxt = int(np.argmax(row))
        assert nxt == int(top[0])
        steps.append({"id": nxt, "top2_ids": [int(top[0]), int(top[1])],
                      "top2_logits": [float(row[top[0]]), float(row[top[1]])]})
        llm.eval([nxt])  # EOS is ignored: always 64 steps
    return steps


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--out", default=os.path.join(repo, "tests", "golden", "llamacpp", "smollm2_q4_1.json"))
    args = ap.parse_args()

    llm = llama_cpp.Llama(model_path=args.model, n_ctx=N_CTX, n_batch=N_CTX, n_ubatch=N_CTX,
                          n_threads=2, n_threads_batch=2, seed=0, verbose=False)
    add_bos_meta = gguf_add_bos(args.model)
    entries = []
    for name, text in PROMPTS:
        # add_bos=True asks llama.cpp to add the special tokens the vocab wants (it honours
        # tokenizer.ggml.add_bos_token); special=True parses <|im_start|> etc. as control tokens.
        ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        assert len(ids) + N_STEPS <= N_CTX
        steps = greedy(llm, ids)
        gen = [s["id"] for s in steps]
        gaps = [s["top2_logits"][0] - s["top2_logits"][1] for s in steps]
        text_out = llm.detokenize(gen, special=True).decode("utf-8", errors="replace")
        print(f"{name}: {len(ids)} ids, min gap {min(gaps):.4f}: {text_out[:70]!r}")
        entries.append({"name": name, "text": text, "prompt_ids": ids, "steps": steps,
                        "greedy_text": text_out})
    golden = {
        "model_file": os.path.basename(args.model),
        "model_sha256": sha256_file(args.model),
        "reference": {"llama_cpp_python": llama_cpp.__version__, "n_threads": 2, "n_ctx": N_CTX,
                      "n_batch": N_CTX, "n_ubatch": N_CTX,
                      "system_info": llama_cpp.llama_print_system_info().decode().strip()},
        "tokenize": {"add_special": True, "parse_special": True, "gguf_add_bos_token": add_bos_meta},
        "n_steps": N_STEPS,
        "ignore_eos": True,
        "command": "python3 tools/make_llamacpp_goldens.py",
        "prompts": entries,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
