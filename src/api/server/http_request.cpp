// Request's helpers (declared in http_server.h): header and query lookup by name and the
// hang-up check.
#include <poll.h>

#include "api/server/http_server.h"

namespace vllm::api::http {

std::string header_name(std::string_view name) {
  std::string o(name);
  for (char& c : o)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return o;
}

std::string Request::header(std::string_view name) const {
  const std::string n = header_name(name);
  for (const auto& [k, v] : headers)
    if (k == n) return v;
  return {};
}

const std::string* Request::query_arg(std::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return &v;
  return nullptr;
}

bool Request::client_gone() const {
  if (fd < 0) return false;
  pollfd p{fd, POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace vllm::api::http
