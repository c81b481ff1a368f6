// libFuzzer target: a GGUF file in memory. Header parse, metadata -> ModelConfig, every tensor's
// geometry, type and placement checked and the model assembled on the stored layout, then the
// tokenizer built from its vocabulary. A malformed file must be a LoadError (or another
// std::exception with a message), never a crash, a hang or an allocation beyond the input.
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "model/causal_lm.h"
#include "model/gguf.h"
#include "model/tokenizer_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vllm::model;
  try {
    auto g = GgufFile::parse("fuzz.gguf", data, size);
    try {
      (void)take_tokenizer_from_gguf(*g);
    } catch (const std::exception&) {
    }
    LoadOptions opts;
    opts.pack_weights = false;
    auto m = CausalLM::from_gguf(std::move(g), ::vt::ThreadPool::global(), opts);
  } catch (const std::exception&) {
  }
  return 0;
}
