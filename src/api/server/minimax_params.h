// The arguments of a MiniMax-M2 tool call, <parameter name="K">V</parameter> tags, read as vLLM
// 0.33's regexes in vllm/parser/minimax_m2.py read them (_PARAM_RE, _PARTIAL_PARAM_RE,
// _PARAM_VALUE_END_RE), by hand: `<\s*parameter\s+name\s*=\s*` then a name in double quotes,
// single quotes or bare (`[^>\s]+`), `\s*>`, and a value running (lazily) to the first
// `<\s*/\s*parameter\s*>` or to the next `<\s*parameter\s+name\s*=`. \s is the `regex`
// module's (Unicode White_Space); names are str.strip()ped and empty ones skipped; values are
// kept verbatim.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vllm::api {

struct MinimaxParams {
  // The closed parameters in the order written (empty names left out).
  std::vector<std::pair<std::string, std::string>> closed;
  // partial: the parameter still open at the end (_PARTIAL_PARAM_RE over the text left once
  // the closed ones are cut out).
  bool open = false;
  std::string open_name, open_value;
  // The open value is a suffix of the raw text and nothing before it can re-read its opener
  // (vLLM's _minimax_m2_arg_value_extender conditions): later text only extends it until a
  // value end appears.
  bool open_extends = false;
};

// finditer(_PARAM_RE) over `s`; with `partial`, also the parameter still open at the end.
MinimaxParams parse_minimax_params(std::string_view s, bool partial);

// _PARAM_VALUE_END_RE.search over s[from, to): a closing tag or a next opener.
bool minimax_has_value_end(std::string_view s, size_t from, size_t to);

// Length of the tail of a value, from its last '<', that may still grow into a value end
// (vLLM's _value_end_window); 0 when none.
size_t minimax_value_end_window(std::string_view v);

// `"name"\s*:\s*"([^"]*)"`: the first such name in a call's body, when not empty (vLLM's
// _try_extract_name).
std::string minimax_name_in_body(std::string_view s);

}  // namespace vllm::api
