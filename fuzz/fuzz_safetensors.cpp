// libFuzzer target: a Hugging Face checkpoint in memory: config.json, a NUL byte, then one
// safetensors file. The config is parsed and validated, the safetensors header parsed and every
// tensor checked against the file, and the model assembled from both. Malformed input must be a
// LoadError (or another std::exception with a message), never a crash, a hang or an allocation
// beyond the input.
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/weight_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vllm::model;
  const char* p = reinterpret_cast<const char*>(data);
  const char* nul = static_cast<const char*>(std::memchr(p, 0, size));
  if (!nul) return 0;
  const std::string config_json(p, nul);
  const uint8_t* st = data + (nul - p) + 1;
  const size_t st_size = size - static_cast<size_t>(nul - p) - 1;
  try {
    ModelConfig cfg = config_from_hf_json(config_json, "fuzz/config.json");
    WeightStore store;
    load_safetensors_bytes("fuzz/model.safetensors", st, st_size, store);
    LoadOptions opts;
    opts.pack_weights = false;
    auto m = CausalLM::from_weights("fuzz", std::move(cfg), std::move(store),
                                    ::vt::ThreadPool::global(), opts);
  } catch (const std::exception&) {
  }
  return 0;
}
