// Fields: a typed reader over one JSON object of a request body that remembers which keys it
// consumed (the rest are the request's unknown fields). Every error is an ApiError(400) naming
// the field, worded like Pydantic's. Internal to the protocol parsers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/server/api_error.h"
#include "api/server/protocol.h"

namespace vllm::api::detail {

const char* type_name(const ojson& v);
[[noreturn]] void wrong_type(const std::string& field, const char* want, const ojson& v);
// A 400 "FIELD is not supported by this server: WHY" naming the field.
[[noreturn]] void unsupported(const std::string& field, const std::string& why);
// "field[i]", the name of a list element in errors.
std::string indexed(const std::string& field, size_t i);
// o[k] when it is a string, else "".
std::string string_or_empty(const ojson& o, const char* k);

class Fields {
 public:
  Fields(const ojson& obj, const char* what);

  // nullptr when absent or null (null means "default" in OpenAI's API).
  const ojson* get(const std::string& k);
  bool has(const std::string& k);
  // Marks a key as known without reading it.
  void mark(const std::string& k) { seen_.insert(k); }

  std::optional<bool> boolean(const std::string& k);
  std::optional<int64_t> integer(const std::string& k,
                                 int64_t lo = std::numeric_limits<int64_t>::min(),
                                 int64_t hi = std::numeric_limits<int64_t>::max());
  std::optional<double> number(const std::string& k);
  std::optional<std::string> string(const std::string& k);
  // A list of token ids (non-negative 32-bit integers).
  std::optional<std::vector<int32_t>> token_ids(const std::string& k);
  // A list of strings.
  std::optional<std::vector<std::string>> strings(const std::string& k);

  // Keys never read or marked, in body order.
  std::vector<std::string> unknown() const;

 private:
  const ojson& obj_;
  std::set<std::string> seen_;
};

// One JSON value as a token id (an integer in [0, 2^31)); field names the error.
int32_t token_id(const ojson& v, const std::string& field);

// An OpenAI message list, validated, with list contents flattened to their text parts.
// `content_parts`: each content as a list of {"type": "text", "text": ...} parts (vLLM's
// "openai" content format) instead of the parts' text joined with newlines.
ojson parse_messages(const ojson& m, bool content_parts = false);
// Adds the server's default template variables a request did not set itself.
void merge_default_kwargs(ojson& kwargs, const ojson& defaults);
// truncate_prompt_tokens (-1: max_model_len, else at least 1) and truncation_side (left / right).
void parse_truncation(Fields& f, std::optional<int64_t>& tokens, bool& left);
// chat_template_kwargs (an object; {} when absent).
ojson parse_kwargs(Fields& f);

}  // namespace vllm::api::detail
