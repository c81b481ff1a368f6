#!/usr/bin/env bash
# Installs the Debian packages the build needs and the PyPI packages the tests use
# (test clients and model generators; the program itself never needs Python).
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
APT_PKGS="build-essential cmake ninja-build ccache clang-format pkg-config python3-pip \
  nlohmann-json3-dev libpcre2-dev libmicrohttpd-dev libcli11-dev prometheus-cpp-dev \
  libgtest-dev libbenchmark-dev libcurl4-openssl-dev openssl time clang libclang-rt-14-dev"
missing=""
for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
# gguf (pinned: tools/make_zoo_models.py must write byte-identical test files) reads and
# writes the GGUF test models.
PY_PKGS="numpy safetensors openai anthropic pytest jsonschema gguf==0.19.0"
# Debian's own python3 refuses system-wide pip installs (PEP 668); these are test tools only.
python3 -c "import numpy, safetensors, openai, anthropic, pytest, jsonschema, gguf" 2>/dev/null ||
  python3 -m pip install -q $PY_PKGS 2>/dev/null ||
  python3 -m pip install -q --break-system-packages $PY_PKGS
