// The /score and /rerank body parser (api/server/scoring.h): vLLM 0.33's ScoreRequest union
// (queries / documents, queries / items, data_1 / data_2, text_1 / text_2) and RerankRequest,
// its input-count rules, and what cannot be honoured refused by name.
#include <gtest/gtest.h>

#include "api/server/api_error.h"
#include "api/server/scoring.h"

namespace vllm::api {
namespace {

using Strings = std::vector<std::string>;

ScoreRequest parse(const char* body, bool rerank = false) {
  return parse_score_request(ojson::parse(body), rerank);
}

TEST(ScoreRequest, ReadsEveryPairOfFieldNames) {
  for (const char* body :
       {R"({"queries": "q", "documents": ["a", "b"]})",
        R"({"queries": ["q"], "items": ["a", "b"]})", R"({"data_1": "q", "data_2": ["a", "b"]})",
        R"({"text_1": "q", "text_2": ["a", "b"]})"}) {
    const ScoreRequest r = parse(body);
    EXPECT_EQ(r.queries, Strings{"q"}) << body;
    EXPECT_EQ(r.documents, (Strings{"a", "b"})) << body;
  }
  ScoreRequest r = parse(R"({"text_1": ["q1", "q2"], "text_2": ["a", "b"], "user": "u",
                             "max_tokens_per_doc": 3, "instruction": "be brief",
                             "truncate_prompt_tokens": 9, "whatever": 1})");
  EXPECT_EQ(r.queries, (Strings{"q1", "q2"}));
  EXPECT_EQ(r.max_tokens_per_doc, 3);
  EXPECT_EQ(r.instruction, "be brief");
  EXPECT_EQ(r.truncate_prompt_tokens, 9);
  EXPECT_EQ(r.ignored, Strings{"whatever"});
  r = parse(R"({"query": "q", "documents": "a", "top_n": 2})", true);
  EXPECT_TRUE(r.rerank);
  EXPECT_EQ(r.queries, Strings{"q"});
  EXPECT_EQ(r.documents, Strings{"a"});
  EXPECT_EQ(r.top_n, 2);
}

TEST(ScoreRequest, RefusesByName) {
  for (const auto& [body, rerank, param] : std::vector<std::tuple<const char*, bool, const char*>>{
           {R"({"queries": ["a", "b"], "documents": ["x", "y", "z"]})", false, "queries"},
           {R"({"queries": [], "documents": ["x"]})", false, "queries"},
           {R"({"queries": "q", "documents": []})", false, "documents"},
           {R"({"queries": "q"})", false, "queries"},
           {R"({"queries": "q", "documents": [{"content": [{"type": "text", "text": "t"}]}]})",
            false, "documents[0]"},
           {R"({"queries": "q", "documents": [1]})", false, "documents[0]"},
           {R"({"queries": "q", "documents": "d", "max_tokens_per_query": -1})", false,
            "max_tokens_per_query"},
           {R"({"queries": "q", "documents": "d", "normalize": true})", false, "normalize"},
           {R"({"queries": "q", "documents": "d", "padding": "max_length"})", false, "padding"},
           {R"({"queries": "q", "documents": "d", "cache_salt": ""})", false, "cache_salt"},
           {R"({"queries": "q", "documents": "d", "chat_template_kwargs": 3})", false,
            "chat_template_kwargs"},
           {R"({"query": ["q"], "documents": ["d"]})", true, "query"},
           {R"({"documents": ["d"]})", true, "query"},
           {R"({"query": "q"})", true, "documents"},
           {R"({"query": "q", "documents": ["d"], "top_n": -1})", true, "top_n"},
       }) {
    try {
      parse(body, rerank);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400) << body;
      EXPECT_EQ(e.param(), param) << body << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace vllm::api
