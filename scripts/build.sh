#!/usr/bin/env bash
# Configures and builds into ./build (Release, Ninja, ccache). Extra CMake arguments come from
# $VLLM_CMAKE_ARGS (scripts/test.sh adds -DVLLM_BUILD_CUDA=ON where nvcc exists).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2086
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${VLLM_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"${VLLM_BUILD_JOBS:-$(nproc)}"
