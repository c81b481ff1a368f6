"""Reference membership checks for the structured-output corpus: Python's json + jsonschema
for JSON Schema, re for regexes, equality for choices, and small checkers for the recursive
GBNF grammars (ast for arithmetic). Used by make_structured_output_corpus.py and by
check_structured_outputs.py (which the C++ tests run on their random walks)."""
import ast
import json
import re

import jsonschema


def _no_dupes(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def _regex_flags(ref):
    flags = re.ASCII
    if ref.get("dotall"):
        flags |= re.DOTALL
    return flags


def check(ref, text):
    """True when `text` is in the language `ref` describes."""
    if "json_schema" in ref:
        try:
            inst = json.loads(text, object_pairs_hook=_no_dupes,
                              parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError:
            return False
        schema = ref["json_schema"]
        cls = jsonschema.validators.validator_for(schema)
        return cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(inst)
    if "regex" in ref:
        return re.fullmatch(ref["regex"], text, _regex_flags(ref)) is not None
    if "choice" in ref:
        return text in ref["choice"]
    c = ref.get("checker")
    if c == "json_object":
        try:
            return isinstance(json.loads(text), dict)
        except ValueError:
            return False
    if c == "balanced":
        if not text:
            return False
        stack = []
        for ch in text:
            if ch in "([":
                stack.append(ch)
            elif ch in ")]":
                if not stack or "([" [")]".index(ch)] != stack.pop():
                    return False
            else:
                return False
        return not stack
    if c == "arith":
        if not text or any(ch not in "0123456789+-*/()" for ch in text):
            return False
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return False
        for node in ast.walk(tree):
            if isinstance(node, ast.UnaryOp):
                return False  # the grammar has no unary minus
            if isinstance(node, ast.Constant) and (not isinstance(node.value, int) or node.value > 999):
                return False
        return True
    raise ValueError(f"unknown reference {ref}")
