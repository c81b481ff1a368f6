#!/usr/bin/env bash
# One command for a newcomer: install, build, fetch the default model, generate.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
GGUF=$(scripts/fetch_models.sh)
./build/vllm generate --model "$GGUF" --prompt "${1:-The capital of France is}" --max-tokens 32 --temperature 0
