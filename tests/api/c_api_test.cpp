// The C API: runs tests/api/c_api_smoke.c (a C program linked against libvllm.so) on the real
// model, and checks from C++ that the ABI guards hold (versioned structs, NULL handling).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "vllm.h"

namespace {

std::string test_gguf() {
  if (const char* p = std::getenv("VLLM_TEST_GGUF")) return p;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf";
}

TEST(CApi, SmokeProgramLinkedAgainstLibvllmRunsACompletion) {
  const std::string model = test_gguf();
  ASSERT_TRUE(std::filesystem::exists(model)) << "missing test model " << model;
  const std::string exe = std::string(VLLM_BINARY_DIR) + "/c_api_smoke";
  ASSERT_TRUE(std::filesystem::exists(exe)) << exe;
  const std::string cmd = exe + " '" + model + "' 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  std::array<char, 512> buf;
  while (fgets(buf.data(), buf.size(), f)) out += buf.data();
  const int rc = pclose(f);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ALL OK"), std::string::npos) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
}

TEST(CApi, NullsAndBadInputsAreErrorsNotCrashes) {
  EXPECT_EQ(vllm_abi_version(), VLLM_ABI_VERSION);
  EXPECT_EQ(vllm_engine_load(nullptr, nullptr), nullptr);
  EXPECT_NE(std::string(vllm_last_error()).find("NULL"), std::string::npos);
  vllm_completion c;
  vllm_completion_init(&c);
  EXPECT_EQ(vllm_complete(nullptr, "x", nullptr, &c), VLLM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(vllm_request_wait(nullptr, 0, &c), VLLM_ERROR_INVALID_ARGUMENT);
  vllm_request_free(nullptr);
  vllm_engine_free(nullptr);
  vllm_request_cancel(nullptr);
}

TEST(CApi, InitFillsDefaultsAndVersionsTheStruct) {
  vllm_sampling_params p;
  std::memset(&p, 0xab, sizeof(p));
  vllm_sampling_params_init(&p);
  EXPECT_EQ(p.struct_size, sizeof(p));
  EXPECT_EQ(p.max_tokens, 16);
  EXPECT_EQ(p.temperature, 1.0f);
  EXPECT_EQ(p.top_p, 1.0f);
  EXPECT_EQ(p.stop, nullptr);
  vllm_engine_options o;
  vllm_engine_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(o));
  EXPECT_EQ(o.enable_prefix_caching, 1);
}

}  // namespace
