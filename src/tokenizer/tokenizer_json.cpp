// Loads a Hugging Face tokenizer.json (model BPE; normalizer none/NFC; Split/Digits/ByteLevel
// pre-tokenizers; or SentencePiece-style BPE with byte_fallback and a Prepend/Replace normalizer
// or a Metaspace pre-tokenizer; ByteLevel/TemplateProcessing post-processors) plus
// tokenizer_config.json (special token names, chat template). Anything else is refused with the
// type named.
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tokenizer/bpe.h"
#include "tokenizer/json_number.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm.h"
#include "tokenizer/tokenizer.h"

namespace vllm::tok {
namespace {

using nlohmann::json;

// Real tokenizer.json files are at most a few tens of MB.
constexpr uintmax_t kMaxTokenizerFileBytes = uintmax_t{512} << 20;

std::string read_file(const std::string& path) {
  // A FIFO or a link to /dev/zero would be read without end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error("cannot open " + path + " (not a regular file)");
  if (std::filesystem::file_size(path, ec) > kMaxTokenizerFileBytes)
    throw std::runtime_error(path + " is over the limit of " +
                             std::to_string(kMaxTokenizerFileBytes) + " bytes");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Ids above this are refused outright (the vocabulary tables are indexed by id).
constexpr int64_t kMaxTokenId = 1 << 24;
// Normalizer / pre-tokenizer / post-processor nesting: real files use 2 levels; the readers
// recurse, so an adversarial file must not choose the depth.
constexpr int kMaxNesting = 16;
// StringTable keeps 32-bit offsets into one blob of all token texts (twice: vocabulary form
// and raw bytes).
constexpr uint64_t kMaxVocabBytes = uint64_t{1} << 30;

void check_nesting(const json& j, const char* what, int depth = 0) {
  if (depth > kMaxNesting)
    throw std::runtime_error(std::string("malformed tokenizer.json: ") + what +
                             " is nested more than " + std::to_string(kMaxNesting) + " levels");
  if (j.is_structured())
    for (const auto& sub : j) check_nesting(sub, what, depth + 1);
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

// tokenizer.json's SentencePiece-style BPE (Llama 2, Mistral, TinyLlama): how its spaces
// become "▁" and where one is put first.
struct SpmStyle {
  bool is = false;
  int prefix = 0;          // 0 none, 1 first segment only, 2 every segment (Tokenizer::SpacePrefix)
  bool split = false;      // Metaspace split: a cut before every "▁"
  bool metaspace = false;  // its prefix is not added to text that starts with a space
};

bool is_type(const json& j, const char* type) {
  return j.is_object() && j.value("type", "") == type;
}

SpmStyle spm_style(const json& model, const json& normalizer, const json& pre) {
  SpmStyle s;
  const bool metaspace = is_type(pre, "Metaspace");
  // Llama 2's legacy form: Sequence[Prepend("▁"), Replace(" ", "▁")], no pre-tokenizer.
  bool legacy = false;
  if (is_type(normalizer, "Sequence")) {
    const json& ns = normalizer.at("normalizers");
    legacy = ns.size() == 2 && is_type(ns[0], "Prepend") &&
             ns[0].value("prepend", "") == "\xE2\x96\x81" && is_type(ns[1], "Replace") &&
             ns[1].value("content", "") == "\xE2\x96\x81" && ns[1].contains("pattern") &&
             ns[1].at("pattern").value("String", "") == " ";
  }
  // Gemma's form: a lone Replace(" ", "▁"), no space put first; its pre-tokenizer, when there
  // is one, a Split on " " that finds none left after the normalizer.
  const bool replace_only =
      is_type(normalizer, "Replace") && normalizer.value("content", "") == "\xE2\x96\x81" &&
      normalizer.contains("pattern") && normalizer.at("pattern").value("String", "") == " ";
  s.is = model.value("byte_fallback", false) || metaspace || legacy;
  if (!s.is) return s;
  if (legacy && pre.is_null()) {
    s.prefix = 2;
    return s;
  }
  if (replace_only && (pre.is_null() || (is_type(pre, "Split") && pre.contains("pattern") &&
                                         pre.at("pattern").value("String", "") == " " &&
                                         !pre.value("invert", false)))) {
    s.prefix = 0;
    return s;
  }
  if (metaspace && normalizer.is_null()) {
    if (pre.value("replacement", "\xE2\x96\x81") != "\xE2\x96\x81")
      throw std::invalid_argument("unsupported Metaspace replacement (only U+2581)");
    const std::string scheme =
        pre.contains("prepend_scheme")
            ? pre.at("prepend_scheme").get<std::string>()
            : (pre.value("add_prefix_space", true) ? std::string("always") : std::string("never"));
    if (scheme != "first" && scheme != "always" && scheme != "never")
      throw std::invalid_argument("unsupported Metaspace prepend_scheme '" + scheme + "'");
    s.prefix = scheme == "never" ? 0 : scheme == "first" ? 1 : 2;
    s.split = pre.value("split", true);
    s.metaspace = true;
    return s;
  }
  throw std::invalid_argument(
      "unsupported SentencePiece-style tokenizer.json (byte_fallback BPE): the supported forms "
      "are a Prepend(\"\xE2\x96\x81\") + Replace(\" \", \"\xE2\x96\x81\") normalizer without a "
      "pre-tokenizer, a Replace(\" \", \"\xE2\x96\x81\") normalizer alone (Gemma), or a Metaspace "
      "pre-tokenizer without a normalizer");
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
    for (const char* k : {"normalizer", "pre_tokenizer", "post_processor"})
      if (j.contains(k)) check_nesting(j.at(k), k);
    const SpmStyle spm =
        spm_style(model, j.value("normalizer", json()), j.value("pre_tokenizer", json()));
    if (!spm.is) {
      t->nfc_ = parse_normalizer(j.value("normalizer", json()));
      t->pre_ = PreTokenizer::from_json(j.value("pre_tokenizer", json()));
    }

    const json& vocab = model.at("vocab");
    if (!vocab.is_object())
      throw std::runtime_error("malformed tokenizer.json: model.vocab is not an object");
    const json no_added = json::array();
    const json& added = j.contains("added_tokens") ? j.at("added_tokens") : no_added;
    if (!added.is_array())
      throw std::runtime_error("malformed tokenizer.json: added_tokens is not a list");
    // Ids are dense in real vocabularies; allowing twice the number of entries (plus slack for
    // a few reserved holes) still bounds the id tables by the file's size, whatever ids it names.
    const int64_t entries = static_cast<int64_t>(vocab.size() + added.size());
    const int64_t id_limit = std::min<int64_t>(kMaxTokenId, 2 * entries + 1024) - 1;
    std::vector<std::string> tokens;
    std::vector<bool> seen;
    uint64_t vocab_bytes = 0;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
      const int64_t id =
          json_int(it.value(), "model.vocab[\"" + it.key().substr(0, 40) + "\"]", 0, id_limit);
      if (static_cast<size_t>(id) >= tokens.size()) {
        tokens.resize(id + 1);
        seen.resize(id + 1);
      }
      if (seen[id])
        throw std::runtime_error("malformed tokenizer.json: id " + std::to_string(id) +
                                 " is given to both '" + tokens[id] + "' and '" + it.key() + "'");
      seen[id] = true;
      tokens[id] = it.key();
      vocab_bytes += it.key().size();
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
      if (it != vocab.end())
        unk = static_cast<int32_t>(json_int(it.value(), "unk_token", 0, id_limit));
    }
    t->unk_id_ = unk;
    if (spm.is) {
      // byte_fallback spells a character without a piece with the <0xXX> tokens.
      std::vector<bool> byte_tokens(tokens.size(), model.value("byte_fallback", false));
      t->spm_ = std::make_unique<Spm>(StringTable::of(tokens), std::vector<float>(), byte_tokens,
                                      unk, &merges, spm.split);
      t->space_prefix_ = spm.prefix == 0   ? SpacePrefix::kNone
                         : spm.prefix == 1 ? SpacePrefix::kFirst
                                           : SpacePrefix::kAlways;
      t->prefix_unless_space_ = spm.metaspace;
    } else {
      t->bpe_ = std::make_unique<Bpe>(StringTable::of(tokens), merges,
                                      model.value("ignore_merges", false), unk);
    }

    {
      for (const auto& a : added) {
        AddedToken at;
        at.id = static_cast<int32_t>(json_int(a.at("id"), "added_tokens[].id", 0, id_limit));
        at.content = a.at("content").get<std::string>();
        at.special = a.value("special", false);
        at.lstrip = a.value("lstrip", false);
        at.rstrip = a.value("rstrip", false);
        at.single_word = a.value("single_word", false);
        at.normalized = a.value("normalized", !at.special);
        vocab_bytes += at.content.size();
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
            (before ? t->prefix_ids_ : t->suffix_ids_)
                .push_back(static_cast<int32_t>(json_int(
                    id, "post_processor.special_tokens[\"" + name.substr(0, 40) + "\"].ids", 0,
                    id_limit)));
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
    if (vocab_bytes >= kMaxVocabBytes)
      throw std::runtime_error("malformed tokenizer.json: the token texts take " +
                               std::to_string(vocab_bytes) + " bytes (limit " +
                               std::to_string(kMaxVocabBytes) + ")");
    t->finalize(tokens);
    for (const auto* ids : {&t->prefix_ids_, &t->suffix_ids_})
      for (int32_t id : *ids)
        if (id >= t->vocab_size())
          throw std::runtime_error("malformed tokenizer.json: post_processor id " +
                                   std::to_string(id) + " is outside the vocabulary (size " +
                                   std::to_string(t->vocab_size()) + ")");
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
  } catch (const JsonFieldError& e) {
    throw std::runtime_error(std::string("malformed tokenizer.json: ") + e.what());
  }
  return t;
}

}  // namespace vllm::tok
