#!/usr/bin/env bash
# Puts llama.cpp's SentencePiece test vocabulary (models/ggml-vocab-llama-spm.gguf: Llama 2's
# 32000 pieces and scores, no weights) and its test inputs in the cache folder, taken from the
# llama-cpp-python 0.3.36 source package on PyPI, which vendors llama.cpp. Prints the .gguf
# path. Also puts Mistral's tekken_240718.json beside it (below). Idempotent; used by the
# tokenizer tests (VLLM_SPM_VOCAB, VLLM_TEKKEN_DIR) and the goldens tools.
set -euo pipefail
CACHE="${VLLM_CPP_CACHE:-$HOME/.cache/vllm-cpp}"
DIR="$CACHE/vocab"
VOCAB="$DIR/ggml-vocab-llama-spm.gguf"
SHA=16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69
INP_SHA=be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0
# And its Phi-3 vocabulary (Phi-3-mini's 32064 pieces; general.name "Phi3").
PHI3_SHA=967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326
ok() { echo "$SHA  $VOCAB" | sha256sum -c --quiet - >/dev/null 2>&1 &&
       echo "$INP_SHA  $VOCAB.inp" | sha256sum -c --quiet - >/dev/null 2>&1 &&
       echo "$PHI3_SHA  $DIR/ggml-vocab-phi-3.gguf" | sha256sum -c --quiet - >/dev/null 2>&1; }
if ! ok; then
  mkdir -p "$DIR"
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d "$tmp"
  python3 - "$tmp" "$DIR" <<'PY'
import glob, os, sys, tarfile
src, out = sys.argv[1], sys.argv[2]
t = tarfile.open(glob.glob(src + "/llama_cpp_python-0.3.36.tar.gz")[0])
for suffix in ("models/ggml-vocab-llama-spm.gguf", "models/ggml-vocab-llama-spm.gguf.inp",
               "models/ggml-vocab-phi-3.gguf"):
    m = [n for n in t.getnames() if n.endswith("vendor/llama.cpp/" + suffix)][0]
    with open(os.path.join(out, os.path.basename(suffix)), "wb") as f:
        f.write(t.extractfile(m).read())
PY
  rm -rf "$tmp"
  ok || { echo "fetch_vocabs.sh: checksum mismatch in $DIR" >&2; exit 1; }
fi
# Mistral's Tekken vocabulary (Mistral Nemo's tekken.json, 2024-07-18), as mistral_common
# 1.13.1 ships it (a 6.6 MB wheel on PyPI); tools/make_tekken_tokenizer.py writes its
# tokenizer.json and GGUF forms from it.
TEKKEN="$DIR/tekken_240718.json"
TEKKEN_SHA=eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516
tekken_ok() { echo "$TEKKEN_SHA  $TEKKEN" | sha256sum -c --quiet - >/dev/null 2>&1; }
if ! tekken_ok; then
  mkdir -p "$DIR"
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps mistral-common==1.13.1 -d "$tmp"
  python3 - "$tmp" "$DIR" <<'PY'
import glob, os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(glob.glob(src + "/mistral_common-1.13.1-*.whl")[0])
with open(os.path.join(out, "tekken_240718.json"), "wb") as f:
    f.write(z.read("mistral_common/data/tekken_240718.json"))
PY
  rm -rf "$tmp"
  tekken_ok || { echo "fetch_vocabs.sh: checksum mismatch for $TEKKEN" >&2; exit 1; }
fi
echo "$VOCAB"
