#!/usr/bin/env bash
# One prepared command for a machine with a GPU (an H200-class lent machine, 16 cores):
# builds the CUDA tree with all cores, gets the test models, runs the GPU gates
# (build-cuda/cuda_tests) and the decode measurement (build-cuda/cuda_bench), and prints a
# short summary. Exit status 0 only if every gate passed and the measurement ran.
#
# Models: SmolLM2-135M-Instruct Q4_1 from scripts/fetch_models.sh (needs the network once;
# offline, put the file in the cache or point VLLM_TEST_GGUF at it), the tiny checkpoints
# from tools/make_tiny_models.py (numpy, offline; a stub tokenizer stands in when the Qwen3
# fixture beside the repository is absent: the gates never tokenize), and a synthetic GGUF
# the gates write themselves. The cache is $VLLM_CPP_CACHE, else ./.cache/vllm-cpp when the
# repository carries one (git-ignored), else ~/.cache/vllm-cpp.
#   scripts/gpu_check.sh             everything
#   scripts/gpu_check.sh --no-bench  gates only
set -uo pipefail
cd "$(dirname "$0")/.."
bench=1
[ "${1:-}" = "--no-bench" ] && bench=0
jobs=$(nproc)
if [ -n "${VLLM_CPP_CACHE:-}" ]; then
  CACHE="$VLLM_CPP_CACHE"
elif [ -d .cache/vllm-cpp ]; then
  CACHE="$PWD/.cache/vllm-cpp"
else
  CACHE="$HOME/.cache/vllm-cpp"
fi
export VLLM_CPP_CACHE="$CACHE"
logs=$(mktemp -d /tmp/gpu_check.XXXXXX)
t0=$(date +%s)

echo "== build: build-cuda, $jobs jobs (log $logs/build.log)"
if ! VLLM_BUILD_JOBS=$jobs scripts/build_cuda.sh --target cuda_tests cuda_bench vllm \
    >"$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
  echo "gpu_check: build failed"
  exit 1
fi
echo "   built in $(($(date +%s) - t0)) s"

echo "== models"
if [ -n "${VLLM_TEST_GGUF:-}" ] && [ -f "$VLLM_TEST_GGUF" ]; then
  gguf="$VLLM_TEST_GGUF"
elif gguf=$(scripts/fetch_models.sh 2>"$logs/fetch.log"); then
  :
else
  gguf="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"
  echo "   fetch_models.sh failed (offline?): the SmolLM2 gates will fail; see $logs/fetch.log"
fi
export VLLM_TEST_GGUF="$gguf"
export VLLM_TINY_MODELS="$CACHE/tiny-models"
tok=../shared/fixtures/qwen3-tokenizer
if [ ! -f "$tok/tokenizer.json" ]; then
  tok="$logs/stub-tokenizer"
  mkdir -p "$tok"
  echo '{}' >"$tok/tokenizer.json"
  echo '{}' >"$tok/tokenizer_config.json"
fi
if ! python3 tools/make_tiny_models.py --out "$VLLM_TINY_MODELS" --tokenizer-dir "$tok" \
    >"$logs/tiny.log" 2>&1; then
  echo "   make_tiny_models.py failed (numpy?): the tiny-model gates will fail; see $logs/tiny.log"
fi
echo "   $gguf; tiny models in $VLLM_TINY_MODELS"

echo "== GPU gates: build-cuda/cuda_tests (log $logs/gates.log)"
build-cuda/cuda_tests 2>&1 | tee "$logs/gates.log" |
  grep -E '^\[ +(OK|FAILED) \]|graph gate|llama.cpp gate|rel max err|strict:|no CUDA device'
gates=${PIPESTATUS[0]}

bench_rc=0
if [ $bench -eq 1 ]; then
  echo "== decode measurement: build-cuda/cuda_bench (log $logs/bench.log)"
  build-cuda/cuda_bench --model "$gguf" --batch 1,32 --input-len 128 --output-len 128 \
    --iters 3 --json 2>&1 | tee "$logs/bench.log" | grep -v '^{'
  bench_rc=${PIPESTATUS[0]}
fi

echo "== the engine on the GPU: vllm generate --device cuda vs --device cpu (greedy, 32 tokens)"
gen=(generate --model "$gguf" --prompt "The three primary colors are" --max-tokens 32
  --temperature 0 --json)
build-cuda/vllm "${gen[@]}" --device cpu >"$logs/gen_cpu.json" 2>/dev/null
engine_rc=0
for mode in graphs eager; do
  extra=()
  [ $mode = eager ] && extra=(--enforce-eager)
  build-cuda/vllm "${gen[@]}" --device cuda "${extra[@]}" >"$logs/gen_$mode.json" \
    2>"$logs/gen_$mode.err"
  rc=$?
  [ $rc -ne 0 ] && engine_rc=$rc && tail -3 "$logs/gen_$mode.err"
  if [ $rc -eq 0 ] && cmp -s "$logs/gen_$mode.json" "$logs/gen_cpu.json"; then
    echo "   $mode: same text as the CPU"
  else
    echo "   $mode: exit $rc, differs from the CPU (near ties allowed; check $logs/gen_$mode.json)"
  fi
done

echo "== summary"
passed=$(grep -c '^\[       OK \]' "$logs/gates.log")
failed=$(grep -c '^\[  FAILED  \] .*ms)$' "$logs/gates.log")
echo "gates: $passed passed, $failed failed (cuda_tests exit $gates)"
grep -E '^\[  FAILED  \] .*ms\)$' "$logs/gates.log"
[ $bench -eq 1 ] && echo "measurement: exit $bench_rc; JSON lines in $logs/bench.log"
echo "total $(($(date +%s) - t0)) s; logs in $logs"
echo "engine --device cuda: exit $engine_rc (informational: its first run on a GPU, docs/CUDA.md)"
[ "$gates" -eq 0 ] && [ "$bench_rc" -eq 0 ]
