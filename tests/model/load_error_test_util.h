// What the loader-error tests share: the message a load fails with, and a fixture that gives
// each test a scratch folder.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "model/causal_lm.h"
#include "model/load_error.h"
#include "test_files.h"

namespace vllm::testing {

// Loads `path` and returns the LoadError's message ("" when it loaded).
inline std::string load_error(const std::string& path) {
  try {
    vllm::model::CausalLM::load(path);
  } catch (const vllm::model::LoadError& e) {
    return e.what();
  }
  return "";
}

// A scratch folder per test, removed after it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

}  // namespace vllm::testing
