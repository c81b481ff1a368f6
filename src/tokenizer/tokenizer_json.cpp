// Loads a Hugging Face tokenizer.json (model BPE; normalizer none/NFC; Split/Digits/ByteLevel
// pre-tokenizers; ByteLevel/TemplateProcessing post-processors) plus tokenizer_config.json
// (special token names, chat template). Anything else is refused with the type named.
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tokenizer/bpe.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace vllm::tok {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Accepts null, "NFC", or a Sequence of those; returns whether NFC applies.
bool parse_normalizer(const json& j) {
  if (j.is_null()) return false;
  const std::string type = j.value("type", "");
  if (type == "NFC") return true;
  if (type == "Sequence") {
    bool nfc = false;
    for (const auto& n : j.at("normalizers")) nfc = parse_normalizer(n) || nfc;
    return nfc;
  }
  throw std::invalid_argument("unsupported normalizer type '" + type + "' (supported: NFC)");
}

// A token name in tokenizer_config.json: a string, {"content": ...}, or null.
std::string token_name(const json& cfg, const char* key) {
  if (!cfg.contains(key)) return "";
  const json& v = cfg.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v.at("content").get<std::string>();
  return "";
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_files(const std::string& tokenizer_json,
                                                 const std::string& tokenizer_config_json) {
  return from_json_text(read_file(tokenizer_json),
                        tokenizer_config_json.empty() ? "" : read_file(tokenizer_config_json));
}

std::unique_ptr<Tokenizer> Tokenizer::from_json_text(const std::string& tokenizer_json,
                                                     const std::string& tokenizer_config_json) {
  json j;
  try {
    j = json::parse(tokenizer_json);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("malformed tokenizer.json: ") + e.what());
  }
  json cfg = json::object();
  if (!tokenizer_config_json.empty()) {
    try {
      cfg = json::parse(tokenizer_config_json);
    } catch (const json::exception& e) {
      throw std::runtime_error(std::string("malformed tokenizer_config.json: ") + e.what());
    }
  }
  auto t = std::unique_ptr<Tokenizer>(new Tokenizer());
  try {
    const json& model = j.at("model");
    const std::string mtype = model.value("type", "BPE");
    if (mtype != "BPE")
      throw std::invalid_argument("unsupported tokenizer model type '" + mtype +
                                  "' (only byte-level BPE is supported)");
    for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      if (model.contains(k) && model.at(k).is_string() && !model.at(k).get<std::string>().empty())
        throw std::invalid_argument(std::string("unsupported BPE option ") + k);
    }
    t->nfc_ = parse_normalizer(j.value("normalizer", json()));
    t->pre_ = PreTokenizer::from_json(j.value("pre_tokenizer", json()));

    const json& vocab = model.at("vocab");
    std::vector<std::string> tokens;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
      const int64_t id = it.value().get<int64_t>();
      if (id < 0 || id > (1 << 24)) throw std::invalid_argument("vocab id out of range");
      if (static_cast<size_t>(id) >= tokens.size()) tokens.resize(id + 1);
      tokens[id] = it.key();
    }
    // Merges are views into the parsed JSON (array form) or into its strings ("a b" form).
    std::vector<std::pair<std::string_view, std::string_view>> merges;
    if (model.contains("merges")) {
      for (const auto& m : model.at("merges")) {
        if (m.is_array()) {
          merges.emplace_back(m.at(0).get_ref<const std::string&>(),
                              m.at(1).get_ref<const std::string&>());
        } else {
          const std::string_view s = m.get_ref<const std::string&>();
          const size_t sp = s.find(' ', 1);
          if (sp == std::string::npos)
            throw std::invalid_argument("malformed merge '" + std::string(s) + "'");
          merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
        }
      }
    }
    int32_t unk = -1;
    if (model.contains("unk_token") && model.at("unk_token").is_string()) {
      auto it = vocab.find(model.at("unk_token").get<std::string>());
      if (it != vocab.end()) unk = it.value().get<int32_t>();
    }
    t->unk_id_ = unk;
    t->bpe_ = std::make_unique<Bpe>(StringTable::of(tokens), merges,
                                    model.value("ignore_merges", false), unk);

    if (j.contains("added_tokens")) {
      for (const auto& a : j.at("added_tokens")) {
        AddedToken at;
        at.id = a.at("id").get<int32_t>();
        at.content = a.at("content").get<std::string>();
        at.special = a.value("special", false);
        at.lstrip = a.value("lstrip", false);
        at.rstrip = a.value("rstrip", false);
        at.single_word = a.value("single_word", false);
        at.normalized = a.value("normalized", !at.special);
        t->added_.push_back(std::move(at));
      }
    }

    // Special-token names: tokenizer_config.json first.
    t->bos_token_ = token_name(cfg, "bos_token");
    t->eos_token_ = token_name(cfg, "eos_token");
    const std::string pad = token_name(cfg, "pad_token");

    // Post-processor: which ids surround a single sequence.
    std::function<void(const json&)> post = [&](const json& p) {
      if (p.is_null()) return;
      const std::string type = p.value("type", "");
      if (type == "Sequence") {
        for (const auto& s : p.at("processors")) post(s);
      } else if (type == "TemplateProcessing") {
        const json& specials = p.value("special_tokens", json::object());
        bool before = true;
        for (const auto& item : p.at("single")) {
          if (item.contains("Sequence")) {
            before = false;
            continue;
          }
          const std::string name = item.at("SpecialToken").at("id").get<std::string>();
          const json& ids = specials.at(name).at("ids");
          for (const auto& id : ids)
            (before ? t->prefix_ids_ : t->suffix_ids_).push_back(id.get<int32_t>());
        }
      } else if (type != "ByteLevel") {
        throw std::invalid_argument("unsupported post-processor type '" + type + "'");
      }
    };
    post(j.value("post_processor", json()));

    if (cfg.contains("chat_template")) {
      const json& ct = cfg.at("chat_template");
      if (ct.is_string()) {
        t->chat_template_ = ct.get<std::string>();
      } else if (ct.is_array()) {
        for (const auto& e : ct) {
          if (e.value("name", "") == "default") t->chat_template_ = e.value("template", "");
        }
      }
    }
    t->finalize(tokens);
    auto id_of = [&](const std::string& name) -> int32_t {
      if (name.empty()) return -1;
      auto id = t->token_to_id(name);
      return id ? *id : -1;
    };
    t->bos_id_ = id_of(t->bos_token_);
    t->eos_id_ = id_of(t->eos_token_);
    t->pad_id_ = id_of(pad);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("malformed tokenizer.json: ") + e.what());
  }
  return t;
}

}  // namespace vllm::tok
