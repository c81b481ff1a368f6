#!/usr/bin/env python3
"""Goldens for MiniMax-M2's parsers: what vLLM 0.33 itself returns for MiniMax-M2 output under
`--tool-call-parser minimax_m2` and `--reasoning-parser minimax_m2 | minimax_m2_append_think`
(alone and together), whole (the chat serving's Parser.parse + assemble_chat_message_fields, and
with a reasoning parser the usage's reasoning_tokens from its count_reasoning_tokens) and
streamed one token per delta (its ChatStreamProcessor over Parser.parse_delta).

vLLM runs from an extracted wheel (pure Python; it is never imported into vllm.cpp):

    python3 -m pip download --no-deps vllm==0.33.0 -d /tmp/vllm033
    (cd /tmp/vllm033 && mkdir -p src && cd src && unzip -q ../vllm-*.whl 'vllm/*')
    python3 -m pip install msgspec   # vLLM's sampling params need it; torch may be absent
    python3 tools/make_minimax_m2_parser_goldens.py --vllm-src /tmp/vllm033/src

Third-party modules the parsers never call (xgrammar, zmq, PIL, ...) are replaced by inert
stand-ins when missing. The tokenizer is a stand-in too: MiniMax-M2's four tags (<think>,
</think>, <minimax:tool_call>, </minimax:tool_call>) are single tokens, as in its vocabulary,
every other character is a token of its own, and no token is special (vLLM's engine would drop
the text of special tokens it does not know). The prompt ends as MiniMax-M2's template ends it,
with "]~b]ai\\n<think>\\n".

Writes tests/golden/tool_parsers/minimax_m2.json; tests/api/minimax_parsers_test.cpp reads it.
"""
import argparse
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- Loading vLLM's parsers without its serving dependencies. ----

class _Stand(type):
    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _stand(name)

    def __getitem__(cls, key):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())


def _any_schema(cls, source, handler):
    from pydantic_core import core_schema
    return core_schema.any_schema()


def _stand(name):
    return _Stand(name, (), {"__get_pydantic_core_schema__": classmethod(_any_schema)})


class _StandModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stand(name)
        setattr(self, name, value)
        return value


class _StandFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self):
        self.roots = set()

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StandModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def _import_parsers():
    from vllm.parser.parser_manager import ParserManager
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.message_assembly import (
        assemble_chat_message_fields)
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    import vllm.reasoning.minimax_m2_reasoning_parser  # noqa: F401
    import vllm.tool_parsers.minimax_m2_tool_parser  # noqa: F401
    return ParserManager, ChatCompletionRequest, assemble_chat_message_fields, ChatStreamProcessor


def load_vllm(src, stand_ins):
    sys.path.insert(0, src)
    finder = _StandFinder()
    finder.roots = set(stand_ins)
    sys.meta_path.insert(0, finder)
    # The Mistral parser needs mistral_common's tokenizers at class creation; MiniMax's never
    # touches it.
    mistral = types.ModuleType("vllm.parser.mistral")
    mistral.MistralParser = type("MistralParser", (), {})
    sys.modules["vllm.parser.mistral"] = mistral
    return _import_parsers()


def find_stand_ins(src):
    """The missing third-party modules, found by importing in child processes (a failed import
    leaves half-registered state behind)."""
    import subprocess
    roots = []
    for _ in range(64):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--vllm-src", src,
                            "--probe", ",".join(roots)], capture_output=True, text=True)
        if r.returncode == 0:
            return roots
        missing = [ln for ln in r.stdout.splitlines() if ln.startswith("MISSING ")]
        if not missing:
            sys.stderr.write(r.stderr)
            raise RuntimeError("could not import vLLM's parsers")
        roots.append(missing[0].split()[1])
    raise RuntimeError("too many missing modules")


def run_case(vllm, cls, tok, request, text, prompt, auto, kwargs=None, reasoning_tokens=False,
             with_ids=False):
    """vLLM's whole response to `text` (its chat serving's Parser.parse +
    assemble_chat_message_fields) and its stream of one token per delta (ChatStreamProcessor).
    `vllm` is what load_vllm returns; `prompt` the prompt's token ids. `with_ids`: each call is
    [name, arguments, id] (Kimi K2's ids are the model's own)."""
    _, _, assemble, StreamProcessor = vllm
    ids = tok.encode(text)
    parser = cls(tok, request.tools, chat_template_kwargs=dict(kwargs or {}))
    parser.set_prompt_token_ids(prompt)
    r, c, calls = parser.parse(text, request, enable_auto_tools=auto, model_output_token_ids=ids)
    f = assemble(request, r, c, calls, enable_auto_tools=auto, parser_cls=cls)
    whole = {"reasoning": f.reasoning, "content": f.content}
    if reasoning_tokens:
        whole["reasoning_tokens"] = parser.count_reasoning_tokens(ids)
    whole["tool_calls"] = [[t.function.name, t.function.arguments] + ([t.id] if with_ids else [])
                           for t in f.tool_calls]
    try:
        stream = run_stream(vllm, cls, tok, request, ids, prompt, auto, kwargs, with_ids)
    except Exception as e:  # noqa: BLE001 - e.g. a parser needing a package not installed here
        stream = {"raises": type(e).__name__}
    return whole, stream


def run_stream(vllm, cls, tok, request, ids, prompt, auto, kwargs, with_ids=False):
    """vLLM's stream of one token per delta, reassembled."""
    StreamProcessor = vllm[3]
    sp = StreamProcessor(request, cls(tok, request.tools, chat_template_kwargs=dict(kwargs or {})),
                         enable_auto_tools=auto, parser_cls=cls)
    reasoning, content, streamed = "", "", {}
    steps = [[t] for t in ids] or [[]]
    for k, step in enumerate(steps):
        d = sp.step(tok.decode(step), step, "stop" if k + 1 == len(steps) else None,
                    prompt).delta
        if d is None:
            continue
        reasoning += d.reasoning or ""
        content += d.content or ""
        for t in d.tool_calls or []:
            entry = streamed.setdefault(t.index, ["", ""] + ([""] if with_ids else []))
            if with_ids and t.id:
                entry[2] = t.id
            if t.function and t.function.name:
                entry[0] = t.function.name
            if t.function and t.function.arguments:
                entry[1] += t.function.arguments
    return {"reasoning": reasoning, "content": content,
            "tool_calls": [streamed[i] for i in sorted(streamed)]}


def save_cases(out, parser, tags, tools, cases):
    """Writes a golden file of `cases` (as the kimi_k2 / ernie45 scripts make them) and prints
    how many vLLM raised on and how many of its streams differ from its whole responses."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"vllm": "0.33.0", "parser": parser, "tags": tags, "tools": tools,
                   "cases": cases}, fh, ensure_ascii=False, indent=1)
    read = [c for c in cases if "raises" not in c["whole"] and "raises" not in c["stream"]]
    differ = sum(1 for c in read if c["whole"]["tool_calls"] != c["stream"]["tool_calls"] or
                 (c["whole"]["content"] or "") != c["stream"]["content"] or
                 (c["whole"]["reasoning"] or "") != c["stream"]["reasoning"])
    print(f"{len(cases)} cases, {len(cases) - len(read)} raised; vLLM's stream differs from its "
          f"whole response in {differ}")


# ---- The stand-in tokenizer. ----

TAGS = {"<think>": 200050, "</think>": 200051, "<minimax:tool_call>": 200052,
        "</minimax:tool_call>": 200053}


class Tokenizer:
    """`tags` (text -> id) are single tokens; every other character is a token of its own (id
    1000 + its code point); no token is special."""
    all_special_tokens = []
    all_special_ids = []

    def __init__(self, tags=None):
        self.tags = dict(TAGS if tags is None else tags)
        self.vocab = dict(self.tags)
        self.text = {v: k for k, v in self.tags.items()}

    def get_vocab(self):
        return self.vocab

    def encode(self, text):
        ids, i = [], 0
        while i < len(text):
            for tag, tid in self.tags.items():
                if text.startswith(tag, i):
                    ids.append(tid)
                    i += len(tag)
                    break
            else:
                tid = 1000 + ord(text[i])
                self.text[tid] = text[i]
                ids.append(tid)
                i += 1
        return ids

    def decode(self, ids, **kwargs):
        return "".join(self.text[i] for i in ids)


# ---- Cases. ----

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
     "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                    "metric": {"type": "boolean"}, "temp": {"type": "number"},
                    "opts": {"type": "object"}, "tags": {"type": "array"},
                    "note": {"type": ["string", "null"]}, "unit": {"enum": ["c", "f"]}}}}},
    {"type": "function", "function": {"name": "now",
     "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
     "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}},
]

B, E = "<minimax:tool_call>", "</minimax:tool_call>"


def inv(name, *params, quote='"', close=True):
    body = "".join(f'\n<parameter name="{k}">{v}</parameter>' for k, v in params)
    return f"<invoke name={quote}{name}{quote}>{body}\n" + ("</invoke>" if close else "")


TEXTS = [
    ("simple", "Let me check.\n" + B + "\n" + inv("get_weather", ("city", "Seattle"), ("days", "3"))
     + "\n" + E),
    ("typed_two_calls", B + "\n" + inv(
        "get_weather", ("city", "Paris"), ("days", "3"), ("metric", "True"), ("temp", "21.50"),
        ("opts", '{"a": [1, 2.0], "b":"\\u00e9"}'), ("tags", '["x","y"]'), ("note", "null"),
        ("unit", "c")) + "\n" + inv("now") + "\n" + E),
    ("no_call", "Just text.\n"),
    ("empty", ""),
    ("whitespace_only", " \n"),
    ("unknown_name", "Hi " + B + inv("unknown", ("a", "1")) + E + " bye"),
    ("dropped_then_kept", "Ok. " + B + inv("nope") + inv("now") + E + " y"),
    ("invoke_outside_block", "Text " + inv("get_weather", ("city", "Oslo")) + " after"),
    ("quotes_and_bare", B + "<invoke name='get_weather'><parameter name='city'>Rome</parameter>"
     "<parameter name=days>2</parameter></invoke><invoke name=now></invoke>" + E),
    ("unclosed_parameter", B + '<invoke name="get_weather"><parameter name="city">Rome'
     '<parameter name="days">2</invoke>' + E),
    ("missing_invoke_end", B + inv("get_weather", ("city", "A"), close=False) + E
     + "\nMore <invoke name=\"now\"></invoke> text"),
    ("cut_in_value", B + "\n" + '<invoke name="get_weather">\n<parameter name="days">2</parameter>'
     '\n<parameter name="city">Ber'),
    ("cut_in_name", B + '\n<invoke name="get_weath'),
    ("cut_after_block_start", "Sure.\n" + B + "\n"),
    ("cut_in_tag", "Sure.\n<minimax:tool_c"),
    ("spaced_tags", B + '<invoke name="get_weather">< parameter  name = "city" >Lima'
     '< / parameter ><parameter name="days" >4</parameter ></invoke>' + E),
    ("repeated_key", B + inv("get_weather", ("city", "A"), ("days", "2"), ("city", "B")) + E),
    ("repeated_last_key", B + inv("get_weather", ("city", "A"), ("city", "B")) + E),
    ("escapes_unicode", "Let me see." + B + inv(
        "get_weather", ("city", '  S\u00e3o "Paulo" \\ \n'), ("note", "\u65e5\u672c \U0001F680"))
     + E),
    ("name_in_body", B + '<invoke name="">{"name": "now"}</invoke>' + E),
    ("name_with_spaces", B + '<invoke name=" get_weather "><parameter name="city">X</parameter>'
     "</invoke>" + E),
    ("stray_closers", "a</minimax:tool_call>b</invoke>c</parameter>d>e"),
    ("think_tags_in_content", "a<think>b</think>c" + B + inv("now") + E),
    ("empty_block", "A " + B + "\n" + E + " B"),
    ("text_after_call", B + inv("now") + E + "\nDone."),
    ("whitespace_around_dropped", "\n" + B + inv("nope") + E + "\n"),
    ("schema_strings_and_extras", B + inv("get_weather", ("city", "42"), ("extra", "7"),
                                         ("days", "007"), ("temp", "2.0"), ("metric", "yes"))
     + E),
    ("lt_inside_value", B + inv("write_file", ("path", "a.py"),
                                ("content", "if x < y and a<b:\n    print('<p>')\n")) + E),
    ("false_starts_in_value", B + inv("write_file", ("content", '<param> <parameter x "hi">there'
                                                                 " </ invoke> </think>")) + E),
    ("gt_in_name", B + '<invoke name="get>weather"><parameter name="city">Q</parameter></invoke>'
     + E),
    ("leading_whitespace", "\n\nSure.\n" + B + "\n" + inv("now") + "\n" + E),
    ("bad_json_for_object", B + inv("get_weather", ("opts", "not json"), ("tags", "[1e400]"),
                                    ("note", "Null")) + E),
    ("two_blocks", B + inv("get_weather", ("city", "A")) + E + "\nthen\n" + B
     + inv("get_weather", ("city", "B")) + E),
    ("empty_parameter_name", B + inv("get_weather", ("", "x"), ("city", "C")) + E),
    ("untyped_function", B + inv("now", ("n", "5"), ("flag", "true")) + E),
    ("reasoning_then_call", "Need the weather.\n</think>\n\nSure.\n" + B + "\n"
     + inv("get_weather", ("city", "Seattle")) + "\n" + E),
    ("reasoning_only", "Still thinking about it..."),
    ("reasoning_then_answer", "Think.\n</think>\n\nThe answer is 4."),
    ("think_written_anyway", "<think>\nplan\n</think>\n\nAnswer"),
    ("call_ends_reasoning", "plan  \n" + B + inv("now") + E),
    ("after_reasoning_markup", "a</think>b<think>c</think>d</minimax:tool_call>e"),
    ("reasoning_trailing_space", "plan  \n\n</think>x"),
    ("end_tag_only", "</think>"),
    ("call_inside_reasoning", "plan " + B + inv("get_weather", ("city", "Z")) + E
     + "</think>done"),
    ("long_string_value", "Writing.\n" + B + "\n" + inv(
        "write_file", ("path", "/tmp/x.txt"), ("content", "line\n" * 40 + "end")) + "\n" + E),
]

CONFIGS = [
    (None, "minimax_m2"),
    ("minimax_m2", "minimax_m2"),
    ("minimax_m2_append_think", "minimax_m2"),
    ("minimax_m2", None),
    ("minimax_m2_append_think", None),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src",
                    help="an extracted vllm-0.33.0 wheel (the folder holding vllm/)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/golden/tool_parsers/minimax_m2.json"))
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe is not None:
        try:
            load_vllm(args.vllm_src, [r for r in args.probe.split(",") if r])
        except ModuleNotFoundError as e:
            root = (e.name or "").split(".")[0]
            if root and root != "vllm":
                print("MISSING", root)
            sys.exit(1)
        return
    vllm = load_vllm(args.vllm_src, find_stand_ins(args.vllm_src))
    ParserManager, Request = vllm[0], vllm[1]
    tok = Tokenizer()
    prompt = tok.encode("]~b]ai\n<think>\n")
    cases = []
    for rp, tp in CONFIGS:
        auto = tp is not None
        cls = ParserManager.get_parser(tool_parser_name=tp, reasoning_parser_name=rp,
                                       enable_auto_tools=auto, model_name="m", tokenizer=tok)
        for name, text in TEXTS:
            request = Request(model="m", messages=[{"role": "user", "content": "hi"}],
                              tools=TOOLS, tool_choice="auto")
            whole, stream = run_case(vllm, cls, tok, request, text, prompt, auto,
                                     reasoning_tokens=rp is not None)
            cases.append({"name": name, "reasoning_parser": rp, "tool_parser": tp, "text": text,
                          "whole": whole, "stream": stream})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"vllm": "0.33.0", "prompt": "]~b]ai\n<think>\n", "tags": TAGS,
                   "tools": TOOLS,
                   "cases": cases}, fh, ensure_ascii=False, indent=1)
    differ = sum(1 for c in cases if c["whole"]["tool_calls"] != c["stream"]["tool_calls"] or
                 (c["whole"]["content"] or "") != c["stream"]["content"])
    print(f"{len(cases)} cases; vLLM's stream differs from its whole response in {differ}")


if __name__ == "__main__":
    main()
