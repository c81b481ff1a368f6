// Finds and loads a model's tokenizer: a folder with tokenizer.json (+ tokenizer_config.json,
// generation_config.json), or a .gguf file's tokenizer.ggml.* metadata.
#pragma once

#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"

namespace vllm::model {

// Throws LoadError naming the path and the problem (missing file, unsupported tokenizer).
std::unique_ptr<tok::Tokenizer> load_tokenizer(const std::string& path);

// The GGUF metadata as tok::VocabData (exposed for tests and tools).
class GgufFile;
tok::VocabData vocab_from_gguf(const GgufFile& gguf);
// Same, moving the vocabulary arrays out of `gguf` instead of copying them (peak memory).
tok::VocabData take_vocab_from_gguf(GgufFile& gguf);
// The tokenizer of a parsed GGUF, moving its vocabulary out. Every error, including the
// tokenizer's own (unsupported model or pre-tokenizer, malformed merges), is a LoadError
// naming the file.
std::unique_ptr<tok::Tokenizer> take_tokenizer_from_gguf(GgufFile& gguf);

}  // namespace vllm::model
