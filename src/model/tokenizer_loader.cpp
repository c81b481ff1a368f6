// Tokenizer loading glue between model files and vllm::tok. generation_config.json's
// eos_token_id (int or list) becomes extra stop ids, as vLLM does.
#include "model/tokenizer_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/gguf.h"
#include "model/load_error.h"
#include "model/mapped_file.h"
#include "tokenizer/json_number.h"

namespace vllm::model {
namespace fs = std::filesystem;

namespace {
// Same bounds as the tokenizer.json reader: ids index tables, token texts share one blob with
// 32-bit offsets.
constexpr int64_t kMaxGgufVocab = int64_t{1} << 24;
constexpr uint64_t kMaxVocabBytes = uint64_t{1} << 30;
}  // namespace

namespace {

// Every field but the tokens and merges, checked against the vocabulary already in v.tokens.
void read_vocab_fields(const GgufFile& g, tok::VocabData& v) {
  v.model = g.get_str_or("tokenizer.ggml.model", "");
  if (v.model.empty()) throw LoadError(g.path(), "no tokenizer.ggml.model in GGUF metadata");
  v.pre = g.get_str_or("tokenizer.ggml.pre", "default");
  // llama.cpp keys Phi-3's special-token rstrip on the model's name.
  std::string name = g.get_str_or("general.name", "");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  v.phi3_rstrip = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
  const int64_t n = static_cast<int64_t>(v.tokens.size());
  if (n > kMaxGgufVocab)
    throw LoadError(g.path(), "tokenizer.ggml.tokens has " + std::to_string(n) +
                                  " entries (limit " + std::to_string(kMaxGgufVocab) + ")");
  uint64_t bytes = 0;
  for (const auto& t : v.tokens) bytes += t.size();
  if (bytes >= kMaxVocabBytes)
    throw LoadError(g.path(), "tokenizer.ggml.tokens holds " + std::to_string(bytes) +
                                  " bytes of text (limit " + std::to_string(kMaxVocabBytes) + ")");
  if (g.has("tokenizer.ggml.token_type")) {
    const auto& types = g.get_int_array("tokenizer.ggml.token_type");
    if (static_cast<int64_t>(types.size()) != n)
      throw LoadError(g.path(), "tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                                    " entries but tokenizer.ggml.tokens has " + std::to_string(n));
    v.token_types.reserve(types.size());
    for (int64_t t : types) {
      // 1 normal .. 6 byte (llama.cpp's llama_token_type); 0 is "undefined".
      if (t < 0 || t > 6)
        throw LoadError(g.path(), "tokenizer.ggml.token_type value " + std::to_string(t) +
                                      " is not a token type (0-6)");
      v.token_types.push_back(static_cast<int32_t>(t));
    }
  }
  // -1 (absent) or an id inside the vocabulary.
  auto id = [&](const char* key) -> int32_t {
    if (!g.has(key)) return -1;
    const int64_t x = g.get_int(key);
    if (x < 0 || x >= n)
      throw LoadError(g.path(), std::string(key) + " = " + std::to_string(x) +
                                    " is outside the vocabulary [0, " + std::to_string(n) + ")");
    return static_cast<int32_t>(x);
  };
  v.bos_id = id("tokenizer.ggml.bos_token_id");
  v.eos_id = id("tokenizer.ggml.eos_token_id");
  v.pad_id = id("tokenizer.ggml.padding_token_id");
  v.unk_id = id("tokenizer.ggml.unknown_token_id");
  // llama.cpp's defaults when the keys are absent: SentencePiece vocabularies add BOS and put
  // a space before the text; byte-level BPE adds BOS only under the Llama 3 and Tekken
  // pre-tokenizer names.
  const bool spm = v.model == "llama";
  const bool bpe_bos =
      v.model == "gpt2" &&
      (v.pre == "llama-bpe" || v.pre == "llama3" || v.pre == "llama-v3" || v.pre == "falcon3" ||
       v.pre == "pixtral" || v.pre == "midm-2.0" || v.pre == "tekken");
  v.add_bos = g.get_bool_or("tokenizer.ggml.add_bos_token", spm || bpe_bos);
  v.add_space_prefix = g.get_bool_or("tokenizer.ggml.add_space_prefix", spm);
  if (g.has("tokenizer.ggml.scores")) {
    const auto& scores = g.get_float_array("tokenizer.ggml.scores");
    if (static_cast<int64_t>(scores.size()) != n)
      throw LoadError(g.path(), "tokenizer.ggml.scores has " + std::to_string(scores.size()) +
                                    " entries but tokenizer.ggml.tokens has " + std::to_string(n));
    v.scores.assign(scores.begin(), scores.end());
  }
  v.add_eos = g.get_bool_or("tokenizer.ggml.add_eos_token", false);
  v.chat_template = g.get_str_or("tokenizer.chat_template", "");
}

}  // namespace

tok::VocabData vocab_from_gguf(const GgufFile& g) {
  tok::VocabData v;
  if (g.has("tokenizer.ggml.tokens")) v.tokens = g.get_str_array("tokenizer.ggml.tokens");
  if (g.has("tokenizer.ggml.merges")) v.merges = g.get_str_array("tokenizer.ggml.merges");
  read_vocab_fields(g, v);
  return v;
}

tok::VocabData take_vocab_from_gguf(GgufFile& g) {
  tok::VocabData v;
  // get_str_array first, so a key of another type is an error rather than an empty list.
  for (const char* k : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"})
    if (g.has(k)) g.get_str_array(k);
  v.tokens = g.take_str_array("tokenizer.ggml.tokens");
  v.merges = g.take_str_array("tokenizer.ggml.merges");
  read_vocab_fields(g, v);
  return v;
}

std::unique_ptr<tok::Tokenizer> take_tokenizer_from_gguf(GgufFile& g) {
  tok::VocabData v = take_vocab_from_gguf(g);
  std::unique_ptr<tok::Tokenizer> t;
  try {
    t = tok::Tokenizer::from_vocab(v);
  } catch (const std::exception& e) {
    throw LoadError(g.path(), e.what());
  }
  if (!t->chat_template().empty())
    t->set_chat_template(t->chat_template(), "GGUF metadata tokenizer.chat_template");
  return t;
}

namespace {

// The chat template files beside tokenizer_config.json, as transformers and vLLM read them:
// chat_template.jinja (what transformers >= 4.56 saves) replaces tokenizer_config.json's
// template; chat_template.json ({"chat_template": "..."}, a multimodal processor's) is used
// when the tokenizer has none.
void read_chat_template_files(const fs::path& dir, tok::Tokenizer& t) {
  const fs::path jinja = dir / "chat_template.jinja";
  if (fs::exists(jinja)) {
    t.set_chat_template(read_text_file(jinja.string(), 16 << 20), "chat_template.jinja");
    return;
  }
  const fs::path js = dir / "chat_template.json";
  if (!t.chat_template().empty() || !fs::exists(js)) return;
  const std::string text = read_text_file(js.string(), 16 << 20);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(js.string(), std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("chat_template") || !j["chat_template"].is_string())
    throw LoadError(js.string(), "no \"chat_template\" string in this file");
  t.set_chat_template(j["chat_template"].get<std::string>(), "chat_template.json");
}

std::vector<int32_t> generation_eos_ids(const fs::path& file) {
  std::vector<int32_t> ids;
  if (!fs::exists(file)) return ids;
  const std::string text = read_text_file(file.string(), 16 << 20);
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("eos_token_id")) return ids;
    const auto& e = j.at("eos_token_id");
    auto push = [&](const nlohmann::json& x) {
      ids.push_back(static_cast<int32_t>(tok::json_int(x, "eos_token_id", 0, kMaxGgufVocab - 1)));
    };
    if (e.is_number()) push(e);
    if (e.is_array()) {
      for (const auto& x : e) push(x);
    }
  } catch (const nlohmann::json::exception& e) {
    throw LoadError(file.string(), std::string("malformed JSON: ") + e.what());
  } catch (const tok::JsonFieldError& e) {
    throw LoadError(file.string(), e.what());
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
      std::unique_ptr<tok::Tokenizer> t;
      try {
        t = tok::Tokenizer::from_files(tj.string(), fs::exists(tc) ? tc.string() : "");
      } catch (const std::exception& e) {
        throw LoadError(tj.string(), e.what());  // the message says which of the two files
      }
      if (!t->chat_template().empty())
        t->set_chat_template(t->chat_template(), "tokenizer_config.json chat_template");
      read_chat_template_files(p, *t);
      auto eos = generation_eos_ids(p / "generation_config.json");
      for (int32_t id : eos)
        if (id >= t->vocab_size())
          throw LoadError((p / "generation_config.json").string(),
                          "eos_token_id " + std::to_string(id) +
                              " is outside the tokenizer's vocabulary (size " +
                              std::to_string(t->vocab_size()) + ")");
      if (!eos.empty()) t->set_generation_eos_ids(std::move(eos));
      return t;
    }
    if (!fs::exists(p, ec)) throw LoadError(path, "no such file or folder");
    if (p.filename() == "tokenizer.json") {
      const fs::path tc = p.parent_path() / "tokenizer_config.json";
      auto t = tok::Tokenizer::from_files(p.string(), fs::exists(tc) ? tc.string() : "");
      if (!t->chat_template().empty())
        t->set_chat_template(t->chat_template(), "tokenizer_config.json chat_template");
      return t;
    }
    auto g = GgufFile::open(path);
    return take_tokenizer_from_gguf(*g);
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(path, e.what());
  }
}

}  // namespace vllm::model
