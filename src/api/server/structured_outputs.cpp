// Structured-output fields: refused until the grammar engine lands (see the header).
#include "api/server/structured_outputs.h"

#include "api/server/api_error.h"

namespace vllm::api {

namespace {

[[noreturn]] void not_yet(const std::string& field, const std::string& what) {
  throw bad_request(field + ": " + what +
                        " is not supported yet by this server (structured outputs are in "
                        "progress); remove the field to generate unconstrained text",
                    field);
}

bool present(const ojson& body, const char* k) {
  auto it = body.find(k);
  return it != body.end() && !it->is_null();
}

}  // namespace

const std::vector<std::string>& structured_output_fields() {
  static const std::vector<std::string> f = {"guided_json",
                                             "guided_regex",
                                             "guided_choice",
                                             "guided_grammar",
                                             "structural_tag",
                                             "structured_outputs",
                                             "guided_decoding_backend",
                                             "guided_whitespace_pattern",
                                             "response_format",
                                             "tool_choice"};
  return f;
}

void refuse_structured_outputs(const ojson& body, bool chat) {
  if (!body.is_object()) return;
  for (const char* k : {"guided_json", "guided_regex", "guided_choice", "guided_grammar",
                        "structural_tag", "structured_outputs"})
    if (present(body, k)) not_yet(k, std::string("'") + k + "' (guided decoding)");
  // Backend knobs only mean something together with one of the above.
  if (present(body, "response_format")) {
    const ojson& rf = body["response_format"];
    if (!rf.is_object())
      throw bad_request("response_format: expected an object", "response_format");
    auto t = rf.find("type");
    if (t == rf.end() || !t->is_string())
      throw bad_request("response_format.type must be a string", "response_format");
    const std::string type = t->get<std::string>();
    if (type != "text") not_yet("response_format", "response_format type '" + type + "'");
  }
  if (chat && present(body, "tool_choice")) {
    const ojson& tc = body["tool_choice"];
    if (!(tc.is_string() && (tc == "none" || tc == "auto"))) {
      const std::string shown = tc.is_string() ? "'" + tc.get<std::string>() + "'" : tc.dump();
      throw bad_request("tool_choice: " + shown +
                            " is not supported yet by this server (forced tool calls need "
                            "structured outputs, in progress); use 'none' or 'auto'",
                        "tool_choice");
    }
  }
}

}  // namespace vllm::api
