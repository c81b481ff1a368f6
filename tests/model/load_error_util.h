// The message of a load that must fail with a LoadError, and the check that it names what it
// should: shared by the hostile-file tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "model/load_error.h"

namespace vllm::testing {

// The LoadError message of f(); "" when it did not throw, "NOT A LoadError: ..." for any other
// exception.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const model::LoadError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A LoadError: ") + e.what();
  }
  return "";
}

inline void expect_has(const std::string& e, const std::vector<std::string>& want) {
  ASSERT_NE(e, "") << "loaded without error";
  EXPECT_EQ(e.rfind("NOT A", 0), std::string::npos) << e;
  for (const auto& w : want)
    EXPECT_NE(e.find(w), std::string::npos) << "want '" << w << "' in " << e;
}

}  // namespace vllm::testing
