// Runs the hostile-template corpus (chat_template_hostile_corpus.h) with the default
// ChatTemplateLimits: every case must end in a ChatTemplateError naming the limit or the
// invalid operation (or, for the benign ones, render the expected text) within 2 s, also under
// ASan/UBSan (CPU time). Before the limits each case crashed, hung, ran out of memory or leaked.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <string>

#include "chat_template_hostile_corpus.h"
#include "tokenizer/chat_template/chat_template.h"

namespace hostile {
// gtest would otherwise print each case as a byte dump.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
}  // namespace hostile

namespace {

using vllm::tok::ChatTemplate;
using vllm::tok::ChatTemplateError;
using vllm::tok::ChatTemplateLimits;

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

class Hostile : public testing::TestWithParam<hostile::Case> {};

TEST_P(Hostile, FailsCleanlyWithinBounds) {
  const hostile::Case& c = GetParam();
  ChatTemplateLimits limits;
  if (c.max_render_ms >= 0) limits.max_render_ms = c.max_render_ms;
  nlohmann::json context;
  if (c.big_context)
    context = c.big_context();
  else
    context = c.context;
  const auto start = std::chrono::steady_clock::now();
  const int64_t cpu_start = thread_cpu_ns();
  std::string output, error;
  bool failed = false;
  try {
    ChatTemplate tpl(c.source, limits);
    output = tpl.render(context);
  } catch (const ChatTemplateError& e) {
    failed = true;
    error = e.what();
  }
  // Anything other than ChatTemplateError escapes and fails the test by itself.
  const double cpu_seconds = (thread_cpu_ns() - cpu_start) * 1e-9;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (c.error.empty()) {
    EXPECT_FALSE(failed) << "unexpected error: " << error;
    if (c.check_output) {
      EXPECT_TRUE(output == c.output)
          << "output differs (" << output.size() << " bytes vs " << c.output.size() << ")";
    }
  } else {
    ASSERT_TRUE(failed) << "rendered " << output.size() << " bytes instead of failing";
    EXPECT_NE(error.find(c.error), std::string::npos)
        << "error '" << error << "' does not mention '" << c.error << "'";
  }
  // The bound is on CPU time, which a loaded machine does not inflate; the wall-clock bound
  // only catches a case that blocks without computing.
  EXPECT_LT(cpu_seconds, 2.0) << "took " << cpu_seconds << " s of CPU (on main: " << c.on_main
                              << ")";
  EXPECT_LT(seconds, 30.0) << "took " << seconds << " s";
}

std::string case_name(const testing::TestParamInfo<hostile::Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(ChatTemplate, Hostile, testing::ValuesIn(hostile::cases()), case_name);

TEST(ChatTemplateHostileCorpus, CoversEnoughClasses) {
  // The brief asks for at least 48 classes here, on top of hostile.json's Python-checked ones.
  EXPECT_GE(hostile::cases().size(), 48u);
}

}  // namespace
