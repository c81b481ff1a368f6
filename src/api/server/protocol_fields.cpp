// The typed field reader of the protocol parsers.
#include "api/server/protocol_fields.h"

namespace vllm::api::detail {

const char* type_name(const ojson& v) {
  switch (v.type()) {
    case ojson::value_t::null:
      return "null";
    case ojson::value_t::boolean:
      return "boolean";
    case ojson::value_t::string:
      return "string";
    case ojson::value_t::array:
      return "array";
    case ojson::value_t::object:
      return "object";
    case ojson::value_t::number_float:
      return "number";
    default:
      return "integer";
  }
}

void unsupported(const std::string& field, const std::string& why) {
  throw bad_request(field + " is not supported by this server: " + why, field);
}

std::string indexed(const std::string& field, size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

std::string string_or_empty(const ojson& o, const char* k) {
  auto it = o.find(k);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void wrong_type(const std::string& field, const char* want, const ojson& v) {
  throw bad_request(field + ": expected " + want + ", got " + type_name(v), field);
}

Fields::Fields(const ojson& obj, const char* what) : obj_(obj) {
  if (!obj.is_object())
    throw bad_request(std::string("the request body must be a JSON object (") + what + ")");
}

const ojson* Fields::get(const std::string& k) {
  seen_.insert(k);
  auto it = obj_.find(k);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool Fields::has(const std::string& k) {
  seen_.insert(k);
  return obj_.contains(k);
}

std::optional<bool> Fields::boolean(const std::string& k) {
  const ojson* v = get(k);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(k, "a boolean", *v);
  return v->get<bool>();
}

std::optional<int64_t> Fields::integer(const std::string& k, int64_t lo, int64_t hi) {
  const ojson* v = get(k);
  if (!v) return std::nullopt;
  int64_t x;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      throw bad_request(k + ": integer out of range", k);
    x = v->get<int64_t>();
  } else if (v->is_number_float()) {
    // Pydantic accepts 5.0 for an int field, not 5.5.
    const double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18)
      throw bad_request(k + ": expected an integer, got " + v->dump(), k);
    x = static_cast<int64_t>(d);
  } else {
    wrong_type(k, "an integer", *v);
  }
  if (x < lo || x > hi)
    throw bad_request(k + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                          "], got " + std::to_string(x),
                      k);
  return x;
}

std::optional<double> Fields::number(const std::string& k) {
  const ojson* v = get(k);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(k, "a number", *v);
  const double d = v->get<double>();
  // 1e400 parses as infinity: out of range for every field.
  if (!std::isfinite(d)) throw bad_request(k + ": number out of range", k);
  return d;
}

std::optional<std::string> Fields::string(const std::string& k) {
  const ojson* v = get(k);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(k, "a string", *v);
  return v->get<std::string>();
}

int32_t token_id(const ojson& e, const std::string& field) {
  if (!e.is_number_integer()) wrong_type(field, "a list of token ids", e);
  if (e.is_number_unsigned()
          ? e.get<uint64_t>() > uint64_t(std::numeric_limits<int32_t>::max())
          : (e.get<int64_t>() < 0 || e.get<int64_t>() > std::numeric_limits<int32_t>::max()))
    throw bad_request(field + ": " + e.dump() + " is not a token id", field);
  return static_cast<int32_t>(e.get<int64_t>());
}

std::optional<std::vector<int32_t>> Fields::token_ids(const std::string& k) {
  const ojson* v = get(k);
  if (!v) return std::nullopt;
  if (!v->is_array()) wrong_type(k, "a list of token ids", *v);
  std::vector<int32_t> ids;
  ids.reserve(v->size());
  for (const auto& e : *v) ids.push_back(token_id(e, k));
  return ids;
}

std::optional<std::vector<std::string>> Fields::strings(const std::string& k) {
  const ojson* v = get(k);
  if (!v) return std::nullopt;
  if (!v->is_array()) wrong_type(k, "a list of strings", *v);
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) wrong_type(k, "a list of strings", e);
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<std::string> Fields::unknown() const {
  std::vector<std::string> out;
  for (auto it = obj_.begin(); it != obj_.end(); ++it)
    if (!seen_.count(it.key())) out.push_back(it.key());
  return out;
}

void parse_truncation(Fields& f, std::optional<int64_t>& tokens, bool& left) {
  if (auto v = f.integer("truncate_prompt_tokens", -1)) {
    if (*v == 0)
      throw bad_request("truncate_prompt_tokens must be -1 (max_model_len) or at least 1",
                        "truncate_prompt_tokens");
    tokens = *v;
  }
  if (auto v = f.string("truncation_side")) {
    if (*v != "left" && *v != "right")
      throw bad_request("truncation_side must be 'left' or 'right'", "truncation_side");
    left = *v == "left";
  }
}

}  // namespace vllm::api::detail
