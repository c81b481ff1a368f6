// Structured output (constrained decoding) for the engine: the public entry points.
//
// Interface for the sampler / scheduler / server (the engine wiring comes separately):
//   * GrammarCompiler — one per tokenizer (engine-wide). compile(kind, text) returns a
//     shared, immutable CompiledGrammar, cached by (kind, text) in a bounded LRU; it throws
//     GrammarError (-> HTTP 400) naming the unsupported keyword, the regex / grammar syntax
//     error position, or the limit exceeded. Kinds map to the OpenAI / vLLM request fields:
//       response_format json_schema, structured_outputs.json, guided_json -> kJsonSchema
//       response_format json_object, structured_outputs.json_object     -> kJsonObject
//       structured_outputs.regex, guided_regex                           -> kRegex
//       structured_outputs.choice, guided_choice (text: JSON array)      -> kChoice
//       structured_outputs.grammar, guided_grammar (GBNF / EBNF)         -> kGrammar
//       response_format / structured_outputs structural_tag, strict tools -> kStructuralTag
//     Forced tool calls compile the tool's parameter schema (wrapped by the caller) as
//     kJsonSchema.
//   * Matcher (matcher.h) — one per request: fill_mask into a caller-provided uint32 bitmask
//     row (bit i of word i/32 = token i allowed), accept(token) after sampling, rollback(k)
//     for rejected speculative tokens, reset(); it survives preemption with its request.
// Masks: per-state context-independent token sets plus a full-state LRU, both shared by all
// requests of a grammar (compiled_grammar.h); see docs/STRUCTURED_OUTPUTS.md for numbers.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/structured_output/compiled_grammar.h"
#include "engine/structured_output/front_ends.h"
#include "engine/structured_output/matcher.h"
#include "engine/structured_output/vocab_index.h"

namespace vllm::engine::so {

enum class GrammarKind : uint8_t {
  kJsonSchema,
  kJsonObject,
  kRegex,
  kChoice,
  kGrammar,
  kStructuralTag
};
const char* kind_name(GrammarKind k);

struct CompilerConfig {
  Limits limits;
  CacheLimits cache;
  JsonOptions json;
  size_t max_cached_grammars = 64;
  // vLLM's structured_outputs_config.disable_any_whitespace: JSON schema and json_object
  // grammars allow no whitespace between tokens (xgrammar's any_whitespace=False with the
  // separators "," and ":"); structural tags keep theirs, as in vLLM.
  bool compact_json = false;
  size_t shared_ci_bytes = 64u << 20;  // context-independent sets shared across grammars
};

class GrammarCompiler {
 public:
  explicit GrammarCompiler(std::shared_ptr<const VocabIndex> vocab, CompilerConfig cfg = {});

  std::shared_ptr<const CompiledGrammar> compile(GrammarKind kind, const std::string& text);
  // The front end alone (no vocabulary, no cache): for tests and error checking.
  static Grammar to_grammar(GrammarKind kind, const std::string& text, const JsonOptions& o = {});

  const VocabIndex& vocab() const { return *vocab_; }
  const std::shared_ptr<SharedCiCache>& shared_ci() const { return shared_ci_; }
  size_t cached_grammars() const;
  int64_t cache_hits() const;

 private:
  std::shared_ptr<const VocabIndex> vocab_;
  CompilerConfig cfg_;
  std::shared_ptr<SharedCiCache> shared_ci_;
  mutable std::mutex mu_;
  using Entry = std::pair<std::string, std::shared_ptr<const CompiledGrammar>>;
  std::list<Entry> lru_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  int64_t hits_ = 0;
};

}  // namespace vllm::engine::so
