// Tokenizer loading glue between model files and vllm::tok. generation_config.json's
// eos_token_id (int or list) becomes extra stop ids, as vLLM does.
#include "model/tokenizer_loader.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/gguf.h"
#include "model/load_error.h"

namespace vllm::model {
namespace fs = std::filesystem;

tok::VocabData vocab_from_gguf(const GgufFile& g) {
  tok::VocabData v;
  v.model = g.get_str_or("tokenizer.ggml.model", "");
  if (v.model.empty()) throw LoadError(g.path(), "no tokenizer.ggml.model in GGUF metadata");
  v.pre = g.get_str_or("tokenizer.ggml.pre", "default");
  if (g.has("tokenizer.ggml.tokens")) v.tokens = g.get_str_array("tokenizer.ggml.tokens");
  if (g.has("tokenizer.ggml.token_type")) {
    for (int64_t t : g.get_int_array("tokenizer.ggml.token_type"))
      v.token_types.push_back(static_cast<int32_t>(t));
  }
  if (g.has("tokenizer.ggml.merges")) v.merges = g.get_str_array("tokenizer.ggml.merges");
  auto id = [&](const char* key) { return static_cast<int32_t>(g.get_int_or(key, -1)); };
  v.bos_id = id("tokenizer.ggml.bos_token_id");
  v.eos_id = id("tokenizer.ggml.eos_token_id");
  v.pad_id = id("tokenizer.ggml.padding_token_id");
  v.unk_id = id("tokenizer.ggml.unknown_token_id");
  v.add_bos = g.get_bool_or("tokenizer.ggml.add_bos_token", false);
  v.add_eos = g.get_bool_or("tokenizer.ggml.add_eos_token", false);
  v.chat_template = g.get_str_or("tokenizer.chat_template", "");
  return v;
}

tok::VocabData take_vocab_from_gguf(GgufFile& g) {
  std::vector<std::string> tokens = g.take_str_array("tokenizer.ggml.tokens");
  std::vector<std::string> merges = g.take_str_array("tokenizer.ggml.merges");
  tok::VocabData v = vocab_from_gguf(g);  // the remaining small fields
  v.tokens = std::move(tokens);
  v.merges = std::move(merges);
  return v;
}

namespace {

std::vector<int32_t> generation_eos_ids(const fs::path& file) {
  std::vector<int32_t> ids;
  std::ifstream f(file);
  if (!f) return ids;
  try {
    const auto j = nlohmann::json::parse(f);
    if (!j.contains("eos_token_id")) return ids;
    const auto& e = j.at("eos_token_id");
    if (e.is_number_integer()) ids.push_back(e.get<int32_t>());
    if (e.is_array()) {
      for (const auto& x : e) ids.push_back(x.get<int32_t>());
    }
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(file.string(), std::string("malformed JSON: ") + e.what());
  }
  return ids;
}

}  // namespace

std::unique_ptr<tok::Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  try {
    if (fs::is_directory(p, ec)) {
      const fs::path tj = p / "tokenizer.json";
      if (!fs::exists(tj)) {
        // A folder holding only a GGUF file is accepted too.
        for (const auto& e : fs::directory_iterator(p)) {
          if (e.path().extension() == ".gguf") return load_tokenizer(e.path().string());
        }
        throw LoadError(path, "no tokenizer.json (or .gguf file) in this folder");
      }
      const fs::path tc = p / "tokenizer_config.json";
      auto t = tok::Tokenizer::from_files(tj.string(), fs::exists(tc) ? tc.string() : "");
      auto eos = generation_eos_ids(p / "generation_config.json");
      if (!eos.empty()) t->set_generation_eos_ids(std::move(eos));
      return t;
    }
    if (!fs::exists(p, ec)) throw LoadError(path, "no such file or folder");
    if (p.filename() == "tokenizer.json") {
      const fs::path tc = p.parent_path() / "tokenizer_config.json";
      return tok::Tokenizer::from_files(p.string(), fs::exists(tc) ? tc.string() : "");
    }
    auto g = GgufFile::open(path);
    return tok::Tokenizer::from_vocab(vocab_from_gguf(*g));
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(path, e.what());
  }
}

}  // namespace vllm::model
