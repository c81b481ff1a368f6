#!/usr/bin/env python3
"""Writes tests/golden/structured_output/corpus.json: every schema / regex / choice / grammar
of so_corpus_defs.py with valid documents (random instances and strings, kept only when the
Python reference accepts them) and invalid ones (mutations the reference rejects), plus the
error cases. The C++ tests feed the documents token by token through the matcher.

    python3 tools/make_structured_output_corpus.py   # deterministic (seeded)
"""
import json
import os
import random
import re
import sys
import uuid
from re import _parser as sre_parse  # Python 3.11+
from re import _constants as sre_c

sys.path.insert(0, os.path.dirname(__file__))
import so_corpus_defs as defs  # noqa: E402
from so_reference import check  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "structured_output", "corpus.json")
rng = random.Random(20261130)

ALPHABET = list("abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789-_.,:;!?'\"\\/\n\tçéαβ日本😀")


# ---------------------------------------------------------------- regex sampler
def sample_regex(pattern, flags=re.ASCII):
    parsed = sre_parse.parse(pattern, flags)

    def pick_in(items):
        negate = any(op == sre_c.NEGATE for op, _ in items)
        pool = [chr(c) for c in range(32, 127)] + list("éαβγ日本😀\t")
        rx = re.compile("[" + ("^" if False else "") + "]") if False else None
        del rx
        cands = []
        for ch in pool:
            ok = False
            for op, av in items:
                if op == sre_c.LITERAL and ord(ch) == av:
                    ok = True
                elif op == sre_c.RANGE and av[0] <= ord(ch) <= av[1]:
                    ok = True
                elif op == sre_c.CATEGORY:
                    m = {sre_c.CATEGORY_DIGIT: ch.isascii() and ch.isdigit(),
                         sre_c.CATEGORY_NOT_DIGIT: not (ch.isascii() and ch.isdigit()),
                         sre_c.CATEGORY_WORD: ch.isascii() and (ch.isalnum() or ch == "_"),
                         sre_c.CATEGORY_NOT_WORD: not (ch.isascii() and (ch.isalnum() or ch == "_")),
                         sre_c.CATEGORY_SPACE: ch in " \t\n\r\f\v",
                         sre_c.CATEGORY_NOT_SPACE: ch not in " \t\n\r\f\v"}
                    ok = m.get(av, False)
            if ok != negate:
                cands.append(ch)
        # Explicit ranges outside the pool (e.g. Greek, Cyrillic).
        if not negate:
            for op, av in items:
                if op == sre_c.RANGE:
                    cands.append(chr(rng.randint(av[0], av[1])))
                elif op == sre_c.LITERAL:
                    cands.append(chr(av))
        return rng.choice(cands)

    def gen(seq):
        out = []
        for op, av in seq:
            if op == sre_c.LITERAL:
                out.append(chr(av))
            elif op == sre_c.NOT_LITERAL:
                out.append(rng.choice([c for c in "abcXYZ019 é" if ord(c) != av]))
            elif op == sre_c.ANY:
                out.append(rng.choice("abcXYZ019 é日😀-"))
            elif op == sre_c.IN:
                out.append(pick_in(av))
            elif op == sre_c.BRANCH:
                out.append(gen(rng.choice(av[1])))
            elif op == sre_c.SUBPATTERN:
                out.append(gen(av[-1]))
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
                lo, hi, sub = av
                hi = min(hi, lo + 4) if hi != sre_c.MAXREPEAT else lo + rng.randint(0, 4)
                out.append("".join(gen(sub) for _ in range(rng.randint(lo, hi))))
            elif op == sre_c.AT:
                pass
            else:
                raise ValueError(f"sampler: {op}")
        return "".join(out)

    return gen(parsed)


def regex_strings(pattern, ref, n=6):
    out = []
    for _ in range(60):
        s = sample_regex(pattern, re.ASCII | (re.DOTALL if ref.get("dotall") else 0))
        if check(ref, s) and s not in out:
            out.append(s)
        if len(out) >= n:
            break
    return out


# ---------------------------------------------------------------- schema instances
def resolve(root, ref):
    cur = root
    for part in ref[2:].split("/") if ref != "#" else []:
        cur = cur[part.replace("~1", "/").replace("~0", "~")]
    return cur


FORMATS = {
    "date": lambda: f"{rng.randint(1900, 2099):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
    "time": lambda: f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}" + rng.choice(["Z", "+02:00", ".5Z", "-07:30"]),
    "date-time": lambda: FORMATS["date"]() + "T" + FORMATS["time"](),
    "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128))),
    "email": lambda: rng.choice(["a.b", "x", "john_doe+tag"]) + "@" + rng.choice(["example.com", "mail.co.uk", "x-y.org"]),
    "ipv4": lambda: ".".join(str(rng.randint(0, 255)) for _ in range(4)),
    "ipv6": lambda: ":".join(f"{rng.randint(0, 65535):x}" for _ in range(8)),
    "hostname": lambda: rng.choice(["localhost", "example.com", "a-b.c.io"]),
    "uri": lambda: rng.choice(["https://example.com/a?b=c#d", "mailto:x@y.z", "urn:isbn:0451450523", "http://h/%20x"]),
}


def rand_string(lo=0, hi=None):
    hi = lo + 8 if hi is None else min(hi, lo + 8)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(lo, hi)))


def gen_instance(s, root, depth=0):
    if s is True:
        return rng.choice([1, "x", None, [1, "a"], {"k": False}, 2.5, True])
    if "$ref" in s:
        return gen_instance(resolve(root, s["$ref"]), root, depth + 1)
    for comb in ("anyOf", "oneOf"):
        if comb in s:
            branches = s[comb]
            if depth > 6:  # prefer the non-recursive way out
                branches = [b for b in branches if "$ref" not in json.dumps(b)] or branches
            return gen_instance(rng.choice(branches), root, depth + 1)
    if "allOf" in s:
        return gen_instance(s["allOf"][0], root, depth + 1)
    if "const" in s:
        return s["const"]
    if "enum" in s:
        return rng.choice(s["enum"])
    t = s.get("type")
    if isinstance(t, list):
        t = rng.choice(t)
    if t is None:
        if "properties" in s or "required" in s or "additionalProperties" in s:
            t = "object"
        elif "minLength" in s or "pattern" in s or "format" in s:
            t = "string"
        elif "minimum" in s or "maximum" in s:
            t = "number"
        else:
            return gen_instance(True, root)
    if s.get("nullable") and rng.random() < 0.3:
        return None
    if t == "object":
        out = {}
        req = set(s.get("required", []))
        props = s.get("properties", {})
        for k, v in props.items():
            if v is False:
                continue
            if k in req or (depth < 5 and rng.random() < 0.5):
                out[k] = gen_instance(v, root, depth + 1)
        for k in req:
            if k not in out:
                out[k] = gen_instance(True, root)
        ap = s.get("additionalProperties", None if props else True)
        if ap not in (None, False) and rng.random() < 0.5:
            for i in range(rng.randint(1, 2)):
                out[f"extra_{i}"] = gen_instance(ap, root, depth + 1)
        return out
    if t == "array":
        prefix = s.get("prefixItems")
        items = s.get("items", True)
        extra = items
        if isinstance(items, list):
            prefix, extra = items, s.get("additionalItems", True)
        prefix = prefix or []
        lo = s.get("minItems", 0)
        hi = s.get("maxItems", lo + 3)
        if extra is False:
            hi = min(hi, len(prefix))
        if depth > 4:
            hi = min(hi, max(lo, 1))
        n = rng.randint(lo, max(lo, min(hi, lo + 3)))
        return [gen_instance(prefix[i] if i < len(prefix) else extra, root, depth + 1) for i in range(n)]
    if t == "string":
        if "pattern" in s:
            return sample_regex(s["pattern"], 0)
        if "format" in s:
            return FORMATS[s["format"]]()
        return rand_string(s.get("minLength", 0), s.get("maxLength"))
    if t in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", -1000))
        hi = s.get("maximum", s.get("exclusiveMaximum", 1000))
        if isinstance(lo, bool):
            lo = s.get("minimum", -1000)
        if isinstance(hi, bool):
            hi = s.get("maximum", 1000)
        if t == "integer":
            return rng.randint(int(lo), int(hi))
        v = round(rng.uniform(lo, hi), rng.choice([0, 1, 2, 3]))
        return v if "e" not in repr(v) else float(int(v))
    if t == "boolean":
        return rng.random() < 0.5
    if t == "null":
        return None
    raise ValueError(t)


def dumps_variants(inst):
    return [json.dumps(inst, ensure_ascii=False, separators=(",", ":")),
            json.dumps(inst, ensure_ascii=False),
            json.dumps(inst, ensure_ascii=False, indent=2)]


def schema_docs(schema, ref, n=6):
    out = []
    for _ in range(80):
        inst = gen_instance(schema, schema)
        for d in dumps_variants(inst):
            if check(ref, d) and d not in out:
                out.append(d)
        if len(out) >= n:
            break
    return out[:n + 2]


# ---------------------------------------------------------------- checker languages
def gen_balanced(d=0):
    return "".join(rng.choice(["(%s)", "[%s]"]) % (gen_balanced(d + 1) if d < 3 and rng.random() < 0.6 else "")
                   for _ in range(rng.randint(1, 3)))


def gen_arith(d=0):
    def factor():
        if d < 2 and rng.random() < 0.3:
            return "(" + gen_arith(d + 1) + ")"
        return str(rng.randint(0, 999))
    s = factor()
    for _ in range(rng.randint(0, 3)):
        s += rng.choice("+-*/") + factor()
    return s


def checker_docs(ref, n=6):
    c = ref["checker"]
    out = []
    for _ in range(50):
        if c == "balanced":
            s = gen_balanced()
        elif c == "arith":
            s = gen_arith()
        else:
            s = json.dumps(gen_instance({"type": "object"}, {}), ensure_ascii=False, separators=(",", ":"))
        if check(ref, s) and s not in out:
            out.append(s)
        if len(out) >= n:
            break
    return out


# ---------------------------------------------------------------- invalid documents
def mutations(docs, ref, n=5):
    out = []
    for _ in range(200):
        if not docs:
            break
        d = rng.choice(docs)
        k = rng.randint(0, max(0, len(d) - 1))
        m = rng.choice([
            lambda: d[:k],
            lambda: d + rng.choice(["x", "}", "0", " ", "\"", "]"]),
            lambda: d[:k] + rng.choice(["x", "\"", "{", "9", "é"]) + d[k + 1:],
            lambda: d[:k] + d[k + 1:],
            lambda: d.replace("\"", "'", 1),
            lambda: d.replace(":", "=", 1),
        ])()
        if m and not check(ref, m) and m not in out:
            out.append(m)
        if len(out) >= n:
            break
    return out


def main():
    entries = []
    for name, schema in defs.SCHEMAS.items():
        ref = {"json_schema": schema}
        valid = schema_docs(schema, ref)
        entries.append({"name": name, "kind": "json_schema", "text": json.dumps(schema, ensure_ascii=False),
                        "reference": ref, "valid": valid, "invalid": mutations(valid, ref)})
    for name, pattern in defs.REGEXES.items():
        ref = {"regex": pattern}
        valid = regex_strings(pattern, ref)
        entries.append({"name": "re_" + name, "kind": "regex", "text": pattern, "reference": ref,
                        "valid": valid, "invalid": mutations(valid, ref)})
    for name, choices in defs.CHOICES.items():
        ref = {"choice": choices}
        valid = rng.sample(choices, min(len(choices), 6))
        entries.append({"name": "choice_" + name, "kind": "choice", "text": json.dumps(choices, ensure_ascii=False),
                        "reference": ref, "valid": valid, "invalid": mutations(valid, ref)})
    for name, (text, ref) in defs.GRAMMARS.items():
        if "regex" in ref:
            valid = regex_strings(ref["regex"], ref)
        elif "json_schema" in ref:
            # The grammar spells names with letters and spaces only, one space after ':' and ','.
            valid = []
            for _ in range(6):
                inst = {"name": "".join(rng.choice("abcXYZ ") for _ in range(rng.randint(0, 8))),
                        "age": rng.randint(0, 999)}
                d = json.dumps(inst, separators=(", ", ": "))
                if check(ref, d):
                    valid.append(d)
        else:
            valid = checker_docs(ref)
        entries.append({"name": name, "kind": "grammar", "text": text, "reference": ref,
                        "valid": valid, "invalid": mutations(valid, ref)})
    ref = {"checker": "json_object"}
    valid = checker_docs(ref)
    entries.append({"name": "json_object", "kind": "json_object", "text": "", "reference": ref,
                    "valid": valid, "invalid": mutations(valid, ref)})
    for e in entries:
        if not e["valid"]:
            print(f"warning: no valid documents for {e['name']}", file=sys.stderr)
    errors = [{"kind": k, "text": t, "expect": x} for k, t, x in defs.ERRORS]
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"generated_by": "python3 tools/make_structured_output_corpus.py",
                   "entries": entries, "errors": errors}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(entries)} entries, {sum(len(e['valid']) for e in entries)} valid and "
          f"{sum(len(e['invalid']) for e in entries)} invalid documents, {len(errors)} error cases -> {OUT}")


if __name__ == "__main__":
    main()
