#!/usr/bin/env bash
# Configures ./build-cuda with the CUDA backend (VLLM_BUILD_CUDA=ON: library vt_cuda, the GPU
# gates cuda_tests and the measurement cuda_bench) and builds it with all cores. Compiles and
# links only; running the GPU gates is scripts/gpu_check.sh. nvcc: CUDACXX, else /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
if [ ! -x "$nvcc" ]; then
  echo "build_cuda.sh: nvcc not found at $nvcc (set CUDACXX)" >&2
  exit 1
fi
cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DVLLM_BUILD_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DVLLM_BUILD_BENCH=OFF >/dev/null
cmake --build build-cuda -j"${VLLM_BUILD_JOBS:-$(nproc)}" "$@"
