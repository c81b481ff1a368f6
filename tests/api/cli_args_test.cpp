// vLLM's command-line forms the commands read (src/api/cli/engine_flags.h): human-readable
// integers (vllm/utils/argparse_utils.py human_readable_int; the examples are its docstring's)
// and dotted arguments (FlexibleArgumentParser.parse_args: --X.a.b V, --X.a=V, --X.a+ v1,v2).
#include <gtest/gtest.h>

#include "api/cli/engine_flags.h"

namespace vllm::cli {
namespace {

std::string hr(std::string v) {
  const std::string err = rewrite_human_readable_int(v);
  return err.empty() ? v : "error: " + err;
}

TEST(CliArgs, HumanReadableIntegersAsVllmReadsThem) {
  EXPECT_EQ(hr("1k"), "1000");
  EXPECT_EQ(hr("1K"), "1024");
  EXPECT_EQ(hr("25.6k"), "25600");
  EXPECT_EQ(hr("2M"), "2097152");
  EXPECT_EQ(hr("4G"), "4294967296");
  EXPECT_EQ(hr("80g"), "80000000000");
  EXPECT_EQ(hr("1T"), "1099511627776");
  EXPECT_EQ(hr("2048"), "2048");  // no suffix: left to the flag's own conversion
  EXPECT_EQ(hr("1.5K").rfind("error: decimals are not allowed with binary suffixes like K", 0), 0u);
  EXPECT_EQ(hr("k").rfind("error:", 0), 0u);
  EXPECT_EQ(hr("1.2.3k").rfind("error:", 0), 0u);
  EXPECT_EQ(hr("99999999999999999T").rfind("error:", 0), 0u);
}

TEST(CliArgs, DottedArgumentsMergeIntoOneJsonObjectPerFlag) {
  const std::vector<std::string> out = merge_dotted_args(
      {"model", "--compilation-config.cudagraph_mode", "FULL", "--port", "8000",
       "--compilation-config.level=3", "--compilation-config.sizes+", "1,2,4",
       "--hf-overrides.rope_scaling.factor", "4.0", "--hf-overrides.rope_scaling.type=yarn",
       "--kv.bytes", "80g", "--model=a.b", "--chat-template", "./t.jinja"});
  const std::vector<std::string> want = {
      "model",
      "--port",
      "8000",
      "--model=a.b",
      "--chat-template",
      "./t.jinja",
      "--compilation-config",
      R"({"cudagraph_mode":"FULL","level":3,"sizes":["1","2","4"]})",
      "--hf-overrides",
      R"({"rope_scaling":{"factor":4.0,"type":"yarn"}})",
      "--kv",
      R"({"bytes":80000000000})"};
  EXPECT_EQ(out, want);
  EXPECT_THROW(merge_dotted_args({"--compilation-config.level"}), std::invalid_argument);
}

}  // namespace
}  // namespace vllm::cli
