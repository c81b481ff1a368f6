// The OpenAI server's replies, shared by its handler files (openai_server.cpp,
// openai_server_responses.cpp): a JSON body, and SSE streams.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/server/http_server.h"

namespace vllm::api {

class Generation;

void send_json(http::Response& res, const nlohmann::json& j);
// An SSE reply's content type and headers (the body is res.stream's).
void start_sse(http::Response& res);
// Streams a generation as SSE: each chat event through `translate` (none: as it is), after
// the events of `first`. The client hanging up aborts the generation.
void stream_generation(http::Response& res, std::shared_ptr<Generation> gen,
                       std::function<std::vector<std::string>(const std::string&)> translate = {},
                       std::vector<std::string> first = {});

}  // namespace vllm::api
