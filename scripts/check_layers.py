#!/usr/bin/env python3
"""Include-graph check: every `#include "..."` edge under src/ must follow the layer table.

Layers (DESIGN.md section 2), bottom first:
    vt        may include: vt (vt/cpu included)
    tokenizer may include: tokenizer (nothing else of ours)
    model     may include: model, vt, tokenizer (tokenizer_loader builds a Tokenizer from GGUF
              metadata; the JSON number parser is shared). No cycle: tokenizer needs nothing.
    engine    may include: engine, model, tokenizer, vt (public headers only)
    api       may include: api, engine, plus the documented exceptions below
    vt/cuda   (the vt_cuda library, linked on top) may include: vt, model, engine: its
              CudaModelExecutor implements engine::ModelExecutor over a loaded model, so it is
              the CUDA executor's backend factory, not a part of vt's core.

Private sub-layers: src/vt/cpu and src/vt/cuda are private to vt. Files under src/vt may
include them; so may src/model, whose forward pass *is* the CPU implementation (its layers
call the CPU kernels directly; moving them behind Backend is the unfinished part of issue 14
part A6), and the files in PRIVATE_OK. The engine, tokenizer and api reach vt only through
its public headers (vt/graph.h, vt/decode_state.h, vt/ops.h, vt/dtype.h, ...).

api -> model / tokenizer / vt edges: the api layer builds the engine from a loaded model and
tokenizer (LLM::load) and the CLI reports kernel/ISA facts, so those edges are allowed and
listed here explicitly rather than silently; api never includes vt/cpu (the ISA name comes
from vt/ops.h).

Exit status 1 and one line per broken edge: `file:line: layer -> target (why)`.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

ALLOWED = {
    "vt": {"vt"},
    "vt/cuda": {"vt", "model", "engine"},
    "tokenizer": {"tokenizer"},
    "model": {"model", "vt", "tokenizer"},
    "engine": {"engine", "model", "tokenizer", "vt"},
    "api": {"api", "engine", "model", "tokenizer", "vt"},
}
# Files outside src/vt allowed to include vt/cpu or vt/cuda (path relative to src/).
# api/llm.cpp builds the executor --device names; in CUDA builds that includes
# vt/cuda/executor_factory.h (the CUDA executor's one public entry point).
PRIVATE_OK: set = {"api/llm.cpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


PRIVATE_USERS = {"vt", "vt/cuda", "model"}


def layer_of(rel: str) -> str:
    if rel.startswith("vt/cuda/"):
        return "vt/cuda"
    return rel.split("/", 1)[0]


def main() -> int:
    broken = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".cu", ".cuh"}:
            continue
        rel = path.relative_to(SRC).as_posix()
        src_layer = layer_of(rel)
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if not (SRC / target).exists():
                # Relative or generated includes resolve inside the same folder.
                if (path.parent / target).exists():
                    continue
                continue
            dst_layer = layer_of(target)
            if dst_layer == "vt/cuda":
                dst_layer = "vt"
            if dst_layer not in ALLOWED:
                continue
            if src_layer in ALLOWED and dst_layer not in ALLOWED[src_layer]:
                broken.append(f"src/{rel}:{lineno}: {src_layer} -> {target} "
                              f"({src_layer} may include only {sorted(ALLOWED[src_layer])})")
                continue
            private = target.startswith(("vt/cpu/", "vt/cuda/"))
            if private and src_layer not in PRIVATE_USERS and rel not in PRIVATE_OK:
                broken.append(f"src/{rel}:{lineno}: {src_layer} -> {target} "
                              "(vt/cpu and vt/cuda are private to vt and model; use a vt public header)")
    for b in broken:
        print(b)
    if broken:
        print(f"check_layers: {len(broken)} include edge(s) break the layer table", file=sys.stderr)
        return 1
    print("check_layers: include graph follows the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
