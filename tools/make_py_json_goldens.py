#!/usr/bin/env python3
"""Writes tests/golden/tool_calls/py_json.json: JSON texts and json.dumps(json.loads(text),
ensure_ascii=False), the form in which vLLM's tool parsers return tool-call arguments
(src/api/server/py_json.h must reproduce it).

Usage: python3 tools/make_py_json_goldens.py [--out tests/golden/tool_calls/py_json.json]"""
import argparse
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = [
    '{"city":"Paris"}', '{ "a" : 1 , "b" : [ 1 , 2.0 , -0 , 3e2 ] }', '{"x": 1.50, "y": 1E-5}',
    '{"u": "caf\\u00e9 \\ud83d\\ude00 \\n\\t\\"q\\" \\/"}', '{"big": 1e16, "small": 0.0001}',
    '{"n": null, "t": true, "f": false, "e": {}, "l": []}', '{"f": 123456789012345678901234}',
    '{"d": 0.1, "g": 2.5e-7, "h": 1234567.125, "i": -1.0e10}', '"just a string"', '[1, "two", {"3": 4}]',
    '{"nested": {"deep": [{"a": [1, [2, [3]]]}]}}', '{"uni": "日本語 — ü"}', '{"ctl": "\\u0001\\u001f"}',
    '{"neg": -12, "exp": 5E+3, "zero": 0.0}', '{"inf": 1e400}',
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/golden/tool_calls/py_json.json"))
    a = ap.parse_args()
    cases = [{"input": t, "expected": json.dumps(json.loads(t), ensure_ascii=False)} for t in INPUTS]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"generated_by": "python3 tools/make_py_json_goldens.py", "cases": cases}, f,
                  ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
