// Structured outputs and tool calling at the API boundary: the ONE place that decides what a
// request asking for constrained output gets. Until the grammar engine
// (src/engine/structured_output/) hooks into the sampler's logits-processors step, every such
// request is refused with a 400 naming the field; replace this file's body when it lands.
#pragma once

#include <string>
#include <vector>

#include "api/server/protocol.h"

namespace vllm::api {

// The request-body fields handled here (so the parsers never report them as unknown).
const std::vector<std::string>& structured_output_fields();

// Throws ApiError(400) "... is not supported yet" naming the first field that asks for
// constrained output: guided_json / guided_regex / guided_choice / guided_grammar /
// structural_tag / structured_outputs, response_format other than {"type": "text"}, or
// tool_choice other than "none" / "auto". `chat`: the body is a chat completion request.
void refuse_structured_outputs(const ojson& body, bool chat);

}  // namespace vllm::api
