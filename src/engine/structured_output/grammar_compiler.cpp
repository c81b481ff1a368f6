// Front-end dispatch and the (kind, text) compile cache.
#include <nlohmann/json.hpp>

#include "engine/structured_output/structured_output.h"

namespace vllm::engine::so {

const char* kind_name(GrammarKind k) {
  switch (k) {
    case GrammarKind::kJsonSchema:
      return "json_schema";
    case GrammarKind::kJsonObject:
      return "json_object";
    case GrammarKind::kRegex:
      return "regex";
    case GrammarKind::kChoice:
      return "choice";
    case GrammarKind::kGrammar:
      return "grammar";
    case GrammarKind::kStructuralTag:
      return "structural_tag";
  }
  return "?";
}

GrammarCompiler::GrammarCompiler(std::shared_ptr<const VocabIndex> vocab, CompilerConfig cfg)
    : vocab_(std::move(vocab)),
      cfg_(cfg),
      shared_ci_(std::make_shared<SharedCiCache>(cfg.shared_ci_bytes)) {}

namespace {

nlohmann::ordered_json parse_json_text(const std::string& text, const char* what) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw GrammarError(std::string(what) + " is not valid JSON: " + e.what());
  }
}

}  // namespace

Grammar GrammarCompiler::to_grammar(GrammarKind kind, const std::string& text,
                                    const JsonOptions& o) {
  switch (kind) {
    case GrammarKind::kJsonSchema:
      return json_schema_grammar(parse_json_text(text, "JSON schema"), o);
    case GrammarKind::kJsonObject:
      return json_object_grammar(o);
    case GrammarKind::kRegex:
      return regex_grammar(text);
    case GrammarKind::kChoice: {
      const nlohmann::ordered_json j = parse_json_text(text, "choice list");
      if (!j.is_array()) throw GrammarError("choice must be a JSON array of strings");
      std::vector<std::string> c;
      for (const auto& x : j) {
        if (!x.is_string()) throw GrammarError("choice must be a JSON array of strings");
        c.push_back(x.get<std::string>());
      }
      return choice_grammar(c);
    }
    case GrammarKind::kGrammar:
      return parse_gbnf(text);
    case GrammarKind::kStructuralTag:
      return structural_tag_grammar(parse_json_text(text, "structural_tag"), o);
  }
  throw GrammarError("unknown grammar kind");
}

std::shared_ptr<const CompiledGrammar> GrammarCompiler::compile(GrammarKind kind,
                                                                const std::string& text) {
  std::string key = std::string(1, static_cast<char>(kind)) + text;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  JsonOptions json = cfg_.json;
  if (cfg_.compact_json && (kind == GrammarKind::kJsonSchema || kind == GrammarKind::kJsonObject))
    json.max_whitespace = 0;
  const Grammar g = to_grammar(kind, text, json);
  auto cg = std::make_shared<const CompiledGrammar>(compile_fsm(g, cfg_.limits), vocab_,
                                                    static_cast<int32_t>(g.rules.size()),
                                                    cfg_.cache, shared_ci_);
  std::lock_guard<std::mutex> l(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;
  lru_.emplace_front(key, cg);
  index_.emplace(std::move(key), lru_.begin());
  while (lru_.size() > cfg_.max_cached_grammars) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return cg;
}

size_t GrammarCompiler::cached_grammars() const {
  std::lock_guard<std::mutex> l(mu_);
  return lru_.size();
}

int64_t GrammarCompiler::cache_hits() const {
  std::lock_guard<std::mutex> l(mu_);
  return hits_;
}

}  // namespace vllm::engine::so
