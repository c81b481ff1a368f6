// Socket set-up for the HTTP server (internal to http_server.cpp): the listening socket, the
// port it got, and how many connections the open-file limit leaves room for.
#pragma once

#include <string>

namespace vllm::api::http {

// A non-blocking listening socket for host:port (an IPv4 or IPv6 name or address; "" is any),
// or -1 with *err saying why.
int open_listener(const std::string& host, int port, std::string* err);
// A non-blocking listening Unix domain socket at `path` (a stale socket file there is
// replaced; any other file is an error), or -1 with *err saying why.
int open_unix_listener(const std::string& path, std::string* err);
// The port a socket is bound to (what port 0 became), or 0.
int bound_port(int fd);
// Raises the open-file limit to its hard maximum and returns how many connections fit in it,
// at most `want`.
unsigned connection_budget(unsigned want);

}  // namespace vllm::api::http
