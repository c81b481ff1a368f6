#!/usr/bin/env bash
# Run a command and report its peak resident memory (max RSS) in MiB on stderr.
# Owns nothing else: the command's stdout/stderr and exit status pass through unchanged.
#   tools/peak_rss.sh build/vllm generate --model m.gguf --prompt hi
# Needs GNU time (/usr/bin/time, Debian package "time").
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "peak_rss.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 2
fi
report=$(mktemp)
trap 'rm -f "$report"' EXIT
rc=0
/usr/bin/time -v -o "$report" "$@" || rc=$?
kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$report")
if [ -z "$kb" ]; then
  cat "$report" >&2
  exit "$rc"
fi
awk -v kb="$kb" 'BEGIN { printf "peak_rss_mib: %.1f\n", kb / 1024 }' >&2
exit "$rc"
