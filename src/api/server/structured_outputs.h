// Structured outputs and tool choice at the API boundary: the request fields that ask for
// constrained output, read strictly, and compiled against the model's tokenizer before the
// request is queued (so a schema the grammar engine cannot honour is a 400, never an
// unconstrained answer).
//
//   response_format {"type": "json_object" | "json_schema" (json_schema.schema) | "text"}
//   structured_outputs {json | regex | choice | grammar | json_object}   (vLLM)
//   guided_json | guided_regex | guided_choice | guided_grammar          (older vLLM)
//   tool_choice "required" / {"type": "function", "function": {"name"}} (chat)
// At most one constraint per request. guided_decoding_backend and
// structured_outputs.disable_fallback / disable_additional_properties are accepted (the
// latter is this engine's default); whitespace_pattern, disable_any_whitespace and structural
// tags are refused naming the field.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/server/protocol.h"

namespace vllm::api {

class LLM;

namespace detail {
class Fields;
}

// The request-body fields handled here (so the parsers never report them as unknown).
const std::vector<std::string>& structured_output_fields();

// Reads the constraint fields of either endpoint into r.constraint; throws ApiError(400).
void parse_structured_outputs(detail::Fields& f, GenerationRequest& r);
// Reads tools, tool_choice and parallel_tool_calls (chat) with vLLM's validation; throws 400.
void parse_tool_fields(detail::Fields& f, ChatRequest& r);

// tool_choice "required" or a named function: the constraint that forces a valid call, in
// vLLM's formats (the arguments object itself for a named function; for "required" a JSON
// array of {"name", "parameters"}). nullopt for none / auto.
std::optional<OutputConstraint> tool_call_constraint(const ChatRequest& r);

// Compiles a constraint with the model's grammar compiler (cached by text). Throws
// ApiError(400) naming the field and what the grammar engine could not honour.
std::shared_ptr<const engine::so::CompiledGrammar> compile_constraint(const LLM& llm,
                                                                      const OutputConstraint& c);

}  // namespace vllm::api
