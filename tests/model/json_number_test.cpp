// The checked JSON number helper every loader reads numbers through: integers in range,
// finite floats, and an error naming the field and the value for everything else.
#include "tokenizer/json_number.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace vllm::tok {
namespace {

using nlohmann::json;

// The message of the JsonFieldError f() throws ("" if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const JsonFieldError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonNumber, IntegersInRange) {
  EXPECT_EQ(json_int(json(5), "f", 0, 10), 5);
  EXPECT_EQ(json_int(json(-3), "f", -5, 10), -3);
  EXPECT_EQ(json_int(json(4096.0), "f", 0, 1 << 20), 4096);  // integral floats are integers
  EXPECT_EQ(
      json_int(json::parse("9223372036854775807"), "f", 0, std::numeric_limits<int64_t>::max()),
      std::numeric_limits<int64_t>::max());
  EXPECT_EQ(json_int(json(uint64_t{7}), "f", 0, 7), 7);
}

TEST(JsonNumber, IntegersRefused) {
  EXPECT_EQ(error_of([] { json_int(json(1e300), "vocab_size", 1, 100); }),
            "field 'vocab_size': 1e+300 is not an integer in [1, 100]");
  EXPECT_EQ(error_of([] { json_int(json(-1e300), "f", -100, 100); }),
            "field 'f': -1e+300 is not an integer in [-100, 100]");
  EXPECT_EQ(error_of([] { json_int(json(2.5), "f", 0, 10); }),
            "field 'f': 2.5 is not an integer in [0, 10]");
  EXPECT_EQ(error_of([] { json_int(json(true), "f", 0, 10); }),
            "field 'f': true is not an integer in [0, 10]");
  EXPECT_EQ(error_of([] { json_int(json("7"), "f", 0, 10); }),
            "field 'f': \"7\" is not an integer in [0, 10]");
  EXPECT_EQ(error_of([] { json_int(json(11), "f", 0, 10); }),
            "field 'f': 11 is not an integer in [0, 10]");
  EXPECT_EQ(error_of([] { json_int(json(-1), "f", 0, 10); }),
            "field 'f': -1 is not an integer in [0, 10]");
  // Past INT64_MAX: stored as unsigned, or (beyond 2^64) as a double.
  EXPECT_NE(error_of([] {
              json_int(json::parse("18446744073709551615"), "f", 0,
                       std::numeric_limits<int64_t>::max());
            }),
            "");
  EXPECT_NE(error_of([] {
              json_int(json::parse("36893488147419103232"), "f", 0,
                       std::numeric_limits<int64_t>::max());
            }),
            "");
  // Integral doubles at or past 2^53 are not exact, so they are refused too.
  EXPECT_NE(error_of([] { json_int(json(9007199254740992.0), "f", 0, int64_t{1} << 60); }), "");
  EXPECT_NE(error_of([] { json_int(json::array({1}), "f", 0, 10); }).find("an array"),
            std::string::npos);
  EXPECT_NE(error_of([] { json_int(json(nullptr), "f", 0, 10); }).find("null"), std::string::npos);
}

TEST(JsonNumber, Floats) {
  EXPECT_EQ(json_float(json(1e-6), "eps", 0, 1), 1e-6);
  EXPECT_EQ(json_float(json(3), "f", 0, 10), 3.0);
  EXPECT_EQ(error_of([] { json_float(json(1e300), "rope_theta", 0, 1e12); }),
            "field 'rope_theta': 1e+300 is not a finite number in [0, 1e+12]");
  EXPECT_NE(error_of([] { json_float(json(false), "f", 0, 1); }), "");
  EXPECT_NE(error_of([] { json_float(json("1"), "f", 0, 1); }), "");
  EXPECT_NE(error_of([] { json_float(json(-0.5), "f", 0, 1); }), "");
}

TEST(JsonNumber, ObjectMembers) {
  const json o = {{"a", 3}, {"n", nullptr}, {"b", true}, {"s", "x"}};
  EXPECT_EQ(json_int_or(o, "a", 9, 0, 10), 3);
  EXPECT_EQ(json_int_or(o, "missing", 9, 0, 10), 9);
  EXPECT_EQ(json_int_or(o, "n", 9, 0, 10), 9);  // null means "not given"
  EXPECT_EQ(json_float_or(o, "missing", 0.5, 0, 1), 0.5);
  EXPECT_TRUE(json_bool_or(o, "b", false));
  EXPECT_FALSE(json_bool_or(o, "missing", false));
  EXPECT_EQ(error_of([&] { json_bool_or(o, "a", false, "rope_scaling"); }),
            "field 'rope_scaling.a': 3 is not true or false");
  EXPECT_EQ(error_of([&] { json_int_or(o, "s", 0, 0, 10, "p"); }),
            "field 'p.s': \"x\" is not an integer in [0, 10]");
}

TEST(JsonNumber, LongValuesAreCutInMessages) {
  const std::string e = error_of([] { json_int(json(std::string(500, 'x')), "f", 0, 1); });
  EXPECT_LT(e.size(), 120u) << e;
}

}  // namespace
}  // namespace vllm::tok
