#!/usr/bin/env bash
# Configures and builds a sanitizer tree with clang: `asan` (AddressSanitizer + UBSan +
# LeakSanitizer, plus the libFuzzer targets of fuzz/) into ./build-asan, or `tsan`
# (ThreadSanitizer) into ./build-tsan. Prints the build folder. Further arguments name the
# targets to build (default: all), e.g. `scripts/build_sanitized.sh asan fuzz_gguf`.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-asan}"
shift || true
case "$kind" in
  asan) dir=build-asan; extra=(-DVLLM_SANITIZE="address;undefined" -DVLLM_BUILD_FUZZERS=ON) ;;
  tsan) dir=build-tsan; extra=(-DVLLM_SANITIZE=thread) ;;
  *) echo "usage: $0 asan|tsan" >&2; exit 2 ;;
esac
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVLLM_BUILD_BENCH=OFF "${extra[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j"${VLLM_BUILD_JOBS:-$(nproc)}" "${targets[@]}" >&2
echo "$dir"
