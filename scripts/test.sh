#!/usr/bin/env bash
# The whole test suite: install, build, fetch/generate test models, run ctest and the
# end-to-end tests.
#   scripts/test.sh              release build (+ the CUDA backend, compile and link, where nvcc
#                                exists): the layer check, ctest, the end-to-end tests, and a
#                                10 s smoke of every fuzzer under ASan + UBSan (what CI runs)
#   scripts/test.sh --sanitize   clang ASan + UBSan + LeakSanitizer build: the whole ctest suite
#   scripts/test.sh --tsan       clang ThreadSanitizer build: engine and API ctest suites, and
#                                the server's end-to-end tests against the TSan-built server.
#                                The real-SmolLM2 numerics gates (GraphGate, RealModelInvariance
#                                on SmolLM2, StructuredOutputInvariance) are left out: they run
#                                the threaded paths the tiny-model tests run, for 1-4 minutes
#                                each in release, hours under TSan
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
scripts/install_deps.sh
export VLLM_DEPS_DONE=1
export VLLM_TEST_GGUF=$(scripts/fetch_models.sh)
# llama.cpp's SentencePiece test vocabulary (Llama 2's pieces) and the two tokenizer.json forms
# of it (checked against the sha256 their goldens were made from), for the tokenizer tests.
export VLLM_SPM_VOCAB=$(scripts/fetch_vocabs.sh)
export VLLM_SPM_HF=$(python3 tools/make_spm_tokenizer_json.py --vocab "$VLLM_SPM_VOCAB" \
  --out "${VLLM_CPP_CACHE:-$HOME/.cache/vllm-cpp}/vocab")
# ... and a GGUF served like a Llama 2 / Mistral file (that vocabulary on SmolLM2's weights).
# ... and a Hugging Face folder (a tiny random Llama with that tokenizer.json).
export VLLM_SPM_MODEL=$(python3 tools/make_spm_test_model.py --source "$VLLM_TEST_GGUF" \
  --vocab "$VLLM_SPM_VOCAB" --out "$VLLM_SPM_HF/smollm2-llama-spm.gguf" \
  --hf-out "$VLLM_SPM_HF/tiny-llama-spm")
export VLLM_SPM_HF_MODEL="$VLLM_SPM_HF/tiny-llama-spm"
# Mistral's Tekken vocabulary as tokenizer.json and as GGUF (checked against the sha256 the
# goldens were made from).
export VLLM_TEKKEN_DIR=$(python3 tools/make_tekken_tokenizer.py \
  --tekken "$VLLM_SPM_HF/tekken_240718.json" --out "$VLLM_SPM_HF")
# SmolLM2's vocabulary under other GGUF pre-tokenizer names (DeepSeek, Falcon 3, Smaug).
python3 tools/make_pre_vocabs.py --source "$VLLM_TEST_GGUF" --out "$VLLM_SPM_HF" >/dev/null
CACHE="${VLLM_CPP_CACHE:-$HOME/.cache/vllm-cpp}"
if [ -f tools/make_tiny_models.py ]; then
  export VLLM_TINY_MODELS="$CACHE/tiny-models"
  python3 tools/make_tiny_models.py --out "$VLLM_TINY_MODELS" >/dev/null
  # PEFT LoRA adapters for the tiny qwen3 / llama (tests/golden/lora/).
  python3 tools/make_tiny_lora.py --models "$VLLM_TINY_MODELS" --out "$VLLM_TINY_MODELS/lora" >/dev/null
  # Sentence Transformers embedding folders around the tiny qwen3 / qwen2 (tests/golden/embed/).
  python3 tools/make_tiny_embedding.py --models "$VLLM_TINY_MODELS" --out "$VLLM_TINY_MODELS/embed" >/dev/null
  # Sequence classifiers (score.weight heads) around the tiny qwen3 (tests/golden/classify/).
  python3 tools/make_tiny_classifier.py --models "$VLLM_TINY_MODELS" --out "$VLLM_TINY_MODELS/classify" >/dev/null
  python3 tools/check_tiny_models.py --models "$VLLM_TINY_MODELS"
  # The tiny Gemma, Gemma 2, Gemma 3, Phi-3, Mixtral, SmolLM3, Granite, Qwen2.5-VL (text), OLMo 2, GLM-4,
  # Cohere, Cohere2, EXAONE 4.0, gpt-oss (MXFP4 experts), Qwen2-MoE, OLMoE, GraniteMoE, GLM-4.5, MiniMax-M2, ERNIE 4.5, Seed-OSS, Arcee, Hunyuan, StableLM, Phi-2, StarCoder2, DeepSeek V2 / V3 and Ministral 3 as
  # llama.cpp's converter writes them (checked against the sha256 their llama.cpp goldens were
  # made from).
  for g in gemma gemma2 gemma3; do
    python3 tools/make_gemma_gguf.py --hf "$VLLM_TINY_MODELS/$g" \
      --out "$VLLM_TINY_MODELS/$g.gguf" >/dev/null
  done
  for g in phi3 phi3_5 phi4_mini; do
    python3 tools/make_phi3_gguf.py --hf "$VLLM_TINY_MODELS/$g" \
      --out "$VLLM_TINY_MODELS/$g.gguf" >/dev/null
  done
  for g in mixtral smollm3 granite qwen2_5_vl olmo2 glm4 cohere cohere2 exaone4 gpt_oss qwen2_moe olmoe \
           granitemoe glm4_moe minimax_m2 ernie4_5 ernie4_5_moe seed_oss arcee hunyuan_dense stablelm \
           phi starcoder2 deepseek_v2 deepseek_v3 ministral3; do
    python3 tools/make_llama_gguf.py --hf "$VLLM_TINY_MODELS/$g" \
      --out "$VLLM_TINY_MODELS/$g.gguf" >/dev/null
  done
  # DeepSeek-V2's GGUF in the attn_kv_b form converters wrote before llama.cpp's MLA.
  python3 -c "import sys; sys.path.insert(0, 'tools'); import make_llama_gguf as m; \
m.write_deepseek2_file('$VLLM_TINY_MODELS/deepseek_v2', '$VLLM_TINY_MODELS/deepseek_v2.kv_b.gguf', mqa=False)"
fi
# Every quantization mix and architecture of the zoo gate, written from the default model
# and checked against the sha256 its llama.cpp goldens were made from.
export VLLM_ZOO_MODELS="$CACHE/zoo"
python3 tools/make_zoo_models.py --out "$VLLM_ZOO_MODELS" --source "$VLLM_TEST_GGUF"
case "$mode" in
  "")
    python3 scripts/check_layers.py
    nvcc="${CUDACXX:-/usr/local/cuda/bin/nvcc}"
    if [ -x "$nvcc" ]; then
      export VLLM_CMAKE_ARGS="-DVLLM_BUILD_CUDA=ON -DCMAKE_CUDA_COMPILER=$nvcc"
    else
      echo "test.sh: no nvcc at $nvcc: the CUDA backend is not built" >&2
    fi
    scripts/build.sh
    (cd build && ctest --output-on-failure -j"${VLLM_TEST_JOBS:-2}")
    if compgen -G "tests/e2e/test_*.py" >/dev/null; then
      python3 -m pytest -q tests/e2e
    fi
    scripts/fuzz.sh "${VLLM_FUZZ_SECONDS:-10}"
    ;;
  --sanitize)
    dir=$(scripts/build_sanitized.sh asan)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    (cd "$dir" && ctest --output-on-failure -j"${VLLM_TEST_JOBS:-2}" --timeout 3600)
    ;;
  --tsan)
    dir=$(scripts/build_sanitized.sh tsan)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
    "$dir/engine_tests" \
      --gtest_filter='-GraphGate.*:RealModelInvariance.SmolLM2*:StructuredOutputInvariance.*'
    "$dir/api_tests"
    VLLM_BIN="$PWD/$dir/vllm" python3 -m pytest -q tests/e2e/test_openai_api.py \
      tests/e2e/test_hostile_clients.py tests/e2e/test_bad_input.py
    ;;
  *)
    echo "usage: $0 [--sanitize|--tsan]" >&2
    exit 2
    ;;
esac
