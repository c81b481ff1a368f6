// What the HTTP server adds around every handler (internal to http_server.cpp): CORS headers
// and preflights for the allowed origins, X-Request-Id, and the root path a proxy leaves on
// request paths.
#pragma once

#include <string>
#include <vector>

#include "api/server/http_server.h"

namespace vllm::api::http {

// "a, b, c": an Allow or Access-Control-Allow-* header value.
std::string join_header_values(const std::vector<std::string>& v);
// The headers every response carries besides the handler's own: CORS for an allowed Origin,
// and X-Request-Id (the request's own, else a new one) when opts.new_request_id is set.
void add_response_headers(const Options& opts, const Request& req, Response& res);
// The answer to an OPTIONS preflight (only when some origin is allowed).
void cors_preflight(const Options& opts, const Request& req, Response& res);
// Starlette's rule for a root path: a path that starts with it is routed without it.
void strip_root_path(const std::string& root, std::string& path);

}  // namespace vllm::api::http
