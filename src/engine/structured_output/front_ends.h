// Front ends: text in a user's request -> grammar IR. Each throws GrammarError with a message
// naming what is wrong (position in the text, unsupported construct or keyword, limit).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/structured_output/grammar.h"

namespace vllm::engine::so {

// GBNF (llama.cpp) / EBNF (vLLM-xgrammar): `name ::= alternatives`, "literals" with escapes,
// [character classes] (^ negation, ranges, escapes), `.`, ( groups ), * + ? {m} {m,} {m,n},
// # comments. Rules may continue over several lines. Errors say "line L, column C: ...".
Grammar parse_gbnf(std::string_view text, const std::string& root = "root");

// Maps a code-point class (or a single code point, lo == hi) of a regex to the bytes that
// spell it; the default spells it as UTF-8, the JSON one as JSON string content.
using CharMapper = std::function<Expr(const std::vector<CodeRange>&)>;
Expr plain_chars(const std::vector<CodeRange>& r);
Expr json_string_chars(const std::vector<CodeRange>& r);

// The regex subset JSON Schema `pattern` and guided_regex users write (see
// docs/STRUCTURED_OUTPUTS.md). Matching is of the whole text (^ and $ are accepted at the
// ends and change nothing). `what` names the source in errors ("regex", "pattern").
Expr regex_expr(std::string_view pattern, const CharMapper& chars = plain_chars,
                const std::string& what = "regex");
Grammar regex_grammar(std::string_view pattern);

// One of the strings, verbatim.
Grammar choice_grammar(const std::vector<std::string>& choices);

struct JsonOptions {
  // Whitespace allowed between JSON tokens: at most this many of space, tab, newline, CR at
  // each place (compact JSON needs 0; json.dumps(indent=4) of depth-6 data needs 25).
  int32_t max_whitespace = 32;
  // additionalProperties when a schema with `properties` does not say (xgrammar/vLLM strict
  // default: false).
  bool strict_additional_properties = true;
  int32_t max_enum_values = 4096;
  int32_t max_rules = 20000;
};

// json_object: any JSON object (values any JSON).
Grammar json_object_grammar(const JsonOptions& o = {});
// JSON Schema (drafts 4 through 2020-12, the subset in docs/STRUCTURED_OUTPUTS.md).
Grammar json_schema_grammar(const nlohmann::ordered_json& schema, const JsonOptions& o = {});

// xgrammar's structural tag ({"type": "structural_tag", "format": ...} or the legacy
// {"structures", "triggers"}): const_string, json_schema (style json), any_text (excludes),
// regex, grammar (ebnf), sequence, or, tag, triggered_tags, tags_with_separator, optional,
// plus, star, repeat. Token formats, other JSON styles and token budgets are refused by name.
Grammar structural_tag_grammar(const nlohmann::ordered_json& tag, const JsonOptions& o = {});

}  // namespace vllm::engine::so
