// Checked reading of numbers from untrusted JSON (config.json, generation_config.json,
// tokenizer.json, safetensors headers). nlohmann's get<int64_t>() converts a double such as
// 1e300 with a plain cast (undefined behaviour), turns true into 1 and wraps unsigned values
// past INT64_MAX; every loader reads numbers through these helpers instead, so the range and
// the field's name are checked in one place.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vllm::tok {

// A number that is missing its type or range. what() names the field and the value; the
// caller adds the file.
class JsonFieldError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An integer in [lo, hi]. JSON integers and floats with an integral value (4096.0) are
// accepted; booleans, strings, fractions, non-finite or out-of-range values throw
// JsonFieldError naming `field`.
int64_t json_int(const nlohmann::json& v, std::string_view field, int64_t lo, int64_t hi);
// A finite number in [lo, hi] (integers accepted).
double json_float(const nlohmann::json& v, std::string_view field, double lo, double hi);
// Object members: `def` when the key is absent or null, otherwise checked as above. `obj` must
// be an object.
int64_t json_int_or(const nlohmann::json& obj, const char* key, int64_t def, int64_t lo, int64_t hi,
                    std::string_view field_prefix = "");
double json_float_or(const nlohmann::json& obj, const char* key, double def, double lo, double hi,
                     std::string_view field_prefix = "");
bool json_bool_or(const nlohmann::json& obj, const char* key, bool def,
                  std::string_view field_prefix = "");

// The value as a short string for error messages (long strings and containers are cut).
std::string json_excerpt(const nlohmann::json& v);

}  // namespace vllm::tok
