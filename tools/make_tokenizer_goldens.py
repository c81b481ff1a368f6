#!/usr/bin/env python3
"""Goldens for the byte-level BPE tokenizer (tests/tokenizer/), from Hugging Face `tokenizers`.

  python3 tools/make_tokenizer_goldens.py [--gguf PATH] [--qwen3 DIR] [--out tests/golden/tokenizer]
  python3 tools/make_tokenizer_goldens.py --nfc-tables src/tokenizer/unicode_nfc_data.cpp

Writes, per tokenizer (qwen3: the fixture's tokenizer.json; smollm2: a tokenizer built from the
GGUF's tokens + merges with the pre-tokenizer SmolLM2's tokenizer.json uses):
  <name>.jsonl      one case per line: {"text", "ids" (add_special_tokens=True), "decoded", "nfc"}
  <name>_big.bin    ids of the ~1 MB mixed text, uint32 little-endian
  big.json          length and sha256 of that text (the C++ test rebuilds it, see big_text())
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ----------------------------------------------------------------------------- corpus
def corpus():
    base = [
        "Hello", "Hello world", "Hello, World!", " leading space", "trailing space ", "  two leading",
        "The quick brown fox jumps over the lazy dog.", "I'm sure they'll say it's fine, don't you think?",
        "DON'T", "we'Ve", "He'LL", "she'S", "I'M", "they'RE", "it'd", "IT'D", "y'all'd've", "'s 's 'S",
        "rock'n'roll", "O'Reilly's", "Don't stop", "WON'T", "ain't", "'tis", "'''", "''", "'",
        # Scripts and languages
        "Café naïve résumé façade Ångström", "Straße und Maß", "Ελληνικά: Καλημέρα κόσμε", "Здравствуй, мир! Как дела?",
        "Україна — це Європа", "你好，世界！这是一个测试。", "日本語のテキストとカタカナ、ひらがな。", "한국어 텍스트입니다. 안녕하세요!",
        "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "ਸਤਿ ਸ੍ਰੀ ਅਕਾਲ", "வணக்கம் உலகம்", "สวัสดีชาวโลก", "Xin chào thế giới",
        "Tiếng Việt có dấu: ạ ả ã ầ ẩ ẫ ậ", "ქართული ენა", "Հայերեն լեզու", "አማርኛ ቋንቋ", "ᚠᛇᚻ᛫ᛒᛦᚦ", "Ōkami and Ǆ ǅ ǆ",
        "Türkçe İstanbul ıi", "Polski: zażółć gęślą jaźń", "Čeština: příliš žluťoučký kůň", "Íslenska: þetta er próf",
        "mixed中文and English混合", "数字123和中文", "カタカナ123ABC", "Ελληνικά123", "עברית 2024",
        # Emoji, ZWJ, flags, variation selectors
        "Emoji: 😀👍🏽🇺🇸 and ❤️", "👨‍👩‍👧‍👦 family", "🏳️‍🌈 flag", "👩🏽‍💻 coder", "🤷‍♂️", "🇯🇵🇫🇷🇩🇪", "✨🔥💯",
        "text😀text", "😀😀😀😀😀😀", "a\u200db", "zero\u200bwidth", "\ufeffBOM start", "e\u0301 combining", "A\u030a",
        "\u1100\u1161\u11a8 hangul jamo", "Å vs A\u030a", "ﬁ ligature", "Ⅻ roman", "①②③", "½ ¾ ⅞", "x² y³", "٣٤٥ arabic digits",
        "१२३ devanagari digits", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𝟘𝟙𝟚", "math ∑∫∂√∞≠≤≥", "arrows ←↑→↓↔", "box ┌─┐│└┘", "currency $€£¥₹₿",
        # Code
        "def foo(x):\n    return x ** 2\n", "int main() {\n\treturn 0;\n}\n", "if (a && b) { c++; }\r\n",
        "for i in range(10):\n\tprint(i)\n", "const x = `template ${y}`;", "<div class=\"a\">text</div>",
        "SELECT * FROM t WHERE id = 42;", "#include <stdio.h>\r\n#define N 100\r\n", "x = [1, 2, 3]  # comment",
        "fn main() -> Result<(), Box<dyn Error>> {}", "path/to/file.txt", "C:\\Windows\\System32", "https://example.com/a?b=c&d=e",
        "user@example.com", "{\"key\": [1, 2.5, null, true]}", "    indented\n        more\n", "\t\t\ttabs\t\there",
        "a\r\nb\r\nc", "\r\n\r\n", "line1\n\nline3\n\n\n\nline7", "trailing newline\n", "\n", "\n\n", "\r", "\t",
        "lambda x: x+1", "a+=1;b-=2;c*=3", "!!!???...", "---===+++", "((()))[[[]]]{{{}}}", "@#$%^&*", "~`|\\",
        # Whitespace runs
        " ", "  ", "   ", "    ", " " * 16, " " * 100, "a" + " " * 50 + "b", "\t" * 10, " \t \t ", "\n \n \n", "   \n   ",
        "word" + " " * 7 + "\n", "x \u00a0y", "nbsp\u00a0\u00a0here", "em\u2003space", "ideographic\u3000space",
        "nel\u0085char", "line\u2028sep", "para\u2029sep", "vt\x0bff\x0c", "a \n b", " \n", "\n ", "end   ",
        # Digits
        "0", "7", "12", "123", "1234", "12345", "1234567890", "3.14159", "1,000,000", "2024-01-01", "v1.2.3",
        "call 555-1234", "0x1F", "1e10", "-42", "+7", "007", "99 bottles", "abc123def", "123abc", "1st 2nd 3rd 4th",
        "９９ fullwidth", "Room 101", "$19.99", "50%", "10:30pm", "192.168.0.1",
        # Mixed punctuation
        "Punctuation!!! ??? ... --- (parens)", "«quotes» „German“ “curly” ‘single’", "dash – em — ellipsis …",
        "¿Qué? ¡Hola!", "a...b", "end.", "(a)", "[b]", "{c}", "<d>", "a/b\\c", "#hashtag @mention", "a_b_c", "CamelCaseWord",
        "snake_case_name", "UPPER CASE TEXT", "MiXeD cAsE", "ALLCAPS'S", "x'y", "'quoted'", "\"double\"",
        # Long words
        "a" * 200, "ab" * 100, "Pneumonoultramicroscopicsilicovolcanoconiosis", "supercalifragilisticexpialidocious",
        "ha" * 50, "🙂" * 20, "中" * 40, "ß" * 30,
        # Control characters
        "bell\x07char", "nul\x00byte", "esc\x1b[0m", "del\x7fchar", "ctrl\x04\x06\x13\x14\x16\x1d",
    ]
    specials_q = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
                  "<|fim_prefix|>", "<|vision_start|>"]
    specials_s = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "<file_sep>", "<jupyter_code>"]
    cases = list(base)
    for sp in specials_q + specials_s:
        cases += [sp, f"a{sp}b", f" {sp} ", f"text {sp}\nmore", f"{sp}{sp}"]
    cases += [
        "<|im_start|>user\ntell me a story<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n",
        "<think>\nLet me think.\n</think>\n\nAnswer: 42", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
        "<|im_start", "im_end|>", "<|im_start|", "<<|im_end|>>", "<think><think>", "< think>",
    ]
    # Pairwise combinations give context effects (what precedes/follows a piece).
    mix = [b for b in base if len(b) < 40]
    for i in range(0, len(mix) - 1, 3):
        cases.append(mix[i] + " " + mix[i + 1])
        cases.append(mix[i + 1] + "\n" + mix[i + 2 if i + 2 < len(mix) else 0])
    seen, out = set(), []
    for c in cases:
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def big_text(cases, target=1 << 20):
    """Deterministic ~1 MB mix; the C++ test rebuilds it the same way from the .jsonl texts."""
    parts, n, i, k = [], 0, 0, len(cases)
    while n < target:
        s = cases[(i * 7919) % k]
        sep = ["\n", " ", "\n\n", ". "][i % 4]
        parts.append(s + sep)
        n += len((s + sep).encode("utf-8"))
        i += 1
    return "".join(parts)


# ----------------------------------------------------------------------------- tokenizers
def qwen3(path):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(os.path.join(path, "tokenizer.json"))


def smollm2(gguf_path):
    from gguf import GGUFReader
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    r = GGUFReader(gguf_path)

    def strings(key):
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    def scalar(key):
        f = r.fields[key]
        return f.parts[f.data[0]][0]

    assert strings("tokenizer.ggml.model") == ["gpt2"] or True
    tokens = strings("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in strings("tokenizer.ggml.merges")]
    tt = r.fields["tokenizer.ggml.token_type"]
    types = [int(tt.parts[i][0]) for i in tt.data]
    unk = tokens[int(scalar("tokenizer.ggml.unknown_token_id"))]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, merges, unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if ty == 3])
    tok.add_tokens([AddedToken(t, special=False, normalized=False)
                    for t, ty in zip(tokens, types) if ty == 4])
    return tok


def write(out_dir, name, tok, cases, big):
    with open(os.path.join(out_dir, f"{name}.jsonl"), "w", encoding="utf-8") as f:
        for s in cases:
            ids = tok.encode(s, add_special_tokens=True).ids
            rec = {"text": s, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False),
                   "decoded_skip": tok.decode(ids, skip_special_tokens=True),
                   "nfc": unicodedata.normalize("NFC", s) == s}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    ids = tok.encode(big, add_special_tokens=True).ids
    with open(os.path.join(out_dir, f"{name}_big.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(ids)}I", *ids))
    print(f"{name}: {len(cases)} cases, big text -> {len(ids)} ids", file=sys.stderr)


# ----------------------------------------------------------------------------- NFC tables
def nfc_tables(path):
    hangul0, hangul_n = 0xAC00, 11172

    def full_decomp(cp):
        if hangul0 <= cp < hangul0 + hangul_n:
            return None
        d = unicodedata.decomposition(chr(cp))
        if not d or d.startswith("<"):
            return None
        out = []
        for part in d.split():
            c = int(part, 16)
            out.extend(full_decomp(c) or [c])
        return out

    ccc, decomp, comp = [], [], []
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        if unicodedata.combining(ch):
            ccc.append((cp, unicodedata.combining(ch)))
        fd = full_decomp(cp)
        if fd:
            decomp.append((cp, fd))
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            p = [int(x, 16) for x in d.split()]
            if len(p) == 2 and unicodedata.normalize("NFC", chr(p[0]) + chr(p[1])) == ch:
                comp.append((p[0], p[1], cp))
    lines = ["// clang-format off",
             f"// Generated by tools/make_tokenizer_goldens.py --nfc-tables from Python unicodedata "
             f"(Unicode {unicodedata.unidata_version}). Do not edit.",
             '#include "tokenizer/unicode_nfc_data.h"', "", "namespace vllm::tok::nfc_data {", "",
             f'const char* const kUnicodeVersion = "{unicodedata.unidata_version}";', "",
             "const CccEntry kCcc[] = {"]
    lines += [f"    {{0x{cp:X}, {c}}}," for cp, c in ccc]
    lines += ["};", "const size_t kCccSize = sizeof(kCcc) / sizeof(kCcc[0]);", ""]
    flat, entries = [], []
    for cp, fd in decomp:
        entries.append((cp, len(flat), len(fd)))
        flat.extend(fd)
    lines.append("const uint32_t kDecompData[] = {")
    lines += ["    " + ", ".join(f"0x{x:X}" for x in flat[i:i + 8]) + "," for i in range(0, len(flat), 8)]
    lines += ["};", "const DecompEntry kDecomp[] = {"]
    lines += [f"    {{0x{cp:X}, {o}, {n}}}," for cp, o, n in entries]
    lines += ["};", "const size_t kDecompSize = sizeof(kDecomp) / sizeof(kDecomp[0]);", "",
              "const CompEntry kComp[] = {"]
    lines += [f"    {{0x{a:X}, 0x{b:X}, 0x{c:X}}}," for a, b, c in sorted(comp)]
    lines += ["};", "const size_t kCompSize = sizeof(kComp) / sizeof(kComp[0]);", "",
              "}  // namespace vllm::tok::nfc_data", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=os.environ.get(
        "VLLM_TEST_GGUF", os.path.expanduser("~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("--qwen3", default=os.path.join(ROOT, "..", "shared", "fixtures", "qwen3-tokenizer"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden", "tokenizer"))
    ap.add_argument("--nfc-tables", metavar="CPP", help="only write the NFC table source to CPP")
    a = ap.parse_args()
    if a.nfc_tables:
        nfc_tables(a.nfc_tables)
        return
    os.makedirs(a.out, exist_ok=True)
    cases = corpus()
    assert len(cases) >= 300, len(cases)
    big = big_text(cases)
    with open(os.path.join(a.out, "big.json"), "w") as f:
        json.dump({"bytes": len(big.encode("utf-8")),
                   "sha256": hashlib.sha256(big.encode("utf-8")).hexdigest()}, f)
        f.write("\n")
    write(a.out, "qwen3", qwen3(a.qwen3), cases, big)
    write(a.out, "smollm2", smollm2(a.gguf), cases, big)


if __name__ == "__main__":
    main()
