// CORS, X-Request-Id and the root path (see http_policy.h).
#include "api/server/http_policy.h"

#include <algorithm>

namespace vllm::api::http {

namespace {

void add_cors(const Options& opts, const Request& req, Response& res) {
  if (opts.allowed_origins.empty()) return;
  const std::string origin = req.header("origin");
  if (origin.empty()) return;
  const auto& allowed = opts.allowed_origins;
  const bool any = std::find(allowed.begin(), allowed.end(), "*") != allowed.end();
  if (!any && std::find(allowed.begin(), allowed.end(), origin) == allowed.end()) return;
  // With credentials a browser needs the origin echoed, never "*".
  res.headers.emplace_back("Access-Control-Allow-Origin",
                           any && !opts.allow_credentials ? "*" : origin);
  if (!any || opts.allow_credentials) res.headers.emplace_back("Vary", "Origin");
  if (opts.allow_credentials) res.headers.emplace_back("Access-Control-Allow-Credentials", "true");
}

}  // namespace

std::string join_header_values(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& s : v) o += (o.empty() ? "" : ", ") + s;
  return o;
}

void add_response_headers(const Options& opts, const Request& req, Response& res) {
  add_cors(opts, req, res);
  if (!opts.new_request_id) return;
  std::string id = req.header("x-request-id");
  if (id.empty()) id = opts.new_request_id();
  res.headers.emplace_back("X-Request-Id", std::move(id));
}

void cors_preflight(const Options& opts, const Request& req, Response& res) {
  res.status = 200;
  res.content_type.clear();
  add_response_headers(opts, req, res);
  res.headers.emplace_back("Access-Control-Allow-Methods",
                           join_header_values(opts.allowed_methods));
  res.headers.emplace_back("Access-Control-Allow-Headers",
                           join_header_values(opts.allowed_headers));
  res.headers.emplace_back("Access-Control-Max-Age", "600");
}

void strip_root_path(const std::string& root, std::string& path) {
  if (root.empty() || path.compare(0, root.size(), root) != 0) return;
  if (path.size() == root.size())
    path = "/";
  else if (path[root.size()] == '/')
    path.erase(0, root.size());
}

}  // namespace vllm::api::http
