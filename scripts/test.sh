#!/usr/bin/env bash
# The whole test suite: install, build, fetch/generate test models, run ctest and the
# end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
export VLLM_TEST_GGUF=$(scripts/fetch_models.sh)
CACHE="${VLLM_CPP_CACHE:-$HOME/.cache/vllm-cpp}"
if [ -f tools/make_tiny_models.py ]; then
  export VLLM_TINY_MODELS="$CACHE/tiny-models"
  python3 tools/make_tiny_models.py --out "$VLLM_TINY_MODELS" >/dev/null
  python3 tools/check_tiny_models.py --models "$VLLM_TINY_MODELS"
fi
# Every quantization mix and architecture of the zoo gate, written from the default model
# and checked against the sha256 its llama.cpp goldens were made from.
export VLLM_ZOO_MODELS="$CACHE/zoo"
python3 tools/make_zoo_models.py --out "$VLLM_ZOO_MODELS" --source "$VLLM_TEST_GGUF"
(cd build && ctest --output-on-failure -j"${VLLM_TEST_JOBS:-2}")
if compgen -G "tests/e2e/test_*.py" >/dev/null; then
  python3 -m pytest -q tests/e2e
fi
