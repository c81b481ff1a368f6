#!/usr/bin/env bash
# Runs every libFuzzer target in fuzz/ for SECONDS each (default 30) from its committed seed
# corpus (fuzz/corpus/<target>/, made by tools/make_fuzz_seeds.py), under ASan + UBSan.
# New inputs go to a scratch corpus, not the committed one. Fails on the first crash, leak,
# timeout (10 s per input) or out-of-memory (2 GB); the reproducer is left in ./fuzz-artifacts/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
shift || true
[ -n "${VLLM_DEPS_DONE:-}" ] || scripts/install_deps.sh
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
dir=$(scripts/build_sanitized.sh asan "${targets[@]}")
mkdir -p fuzz-artifacts
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  scratch=$(mktemp -d)
  log=$(mktemp)
  echo "== $t: ${secs}s"
  if ! "$dir/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix=fuzz-artifacts/"$t"- \
      "$scratch" "fuzz/corpus/$name" >"$log" 2>&1; then
    tail -60 "$log"
    echo "FAIL: $t (reproducer in fuzz-artifacts/)"
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | tr '\n' ' '
  echo
  rm -rf "$scratch" "$log"
done
echo "fuzz: all ${#targets[@]} targets clean"
