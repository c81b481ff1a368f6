// HttpServer: the connection layer of `vllm serve`, on GNU libmicrohttpd (Debian
// libmicrohttpd-dev). Event-driven: a couple of polling threads read every connection, so a
// slow or idle client costs a socket and a small buffer, never a thread, and /health answers
// while thousands of clients trickle bytes. Only a complete request reaches a handler.
//
// What a hostile client meets here:
//  * a whole-request deadline: a connection must deliver each complete request (headers and
//    body) within `request_timeout_s` of connecting or of its previous response, or it is shut
//    down (slowloris);
//  * one body limit for Content-Length and chunked bodies alike (413);
//  * a cap on open connections, and headers bounded by a per-connection memory pool;
//  * a request handled on a worker learns that its client hung up (Request::client_gone), and
//    a streaming handler's write fails once the client is gone, so the work can be aborted.
//
// Handlers marked `inline` run on the polling thread (cheap, never blocking: /health, /metrics);
// the rest run on a worker pool that grows on demand. A handler either fills a whole response,
// or sets Response::stream, which then runs on the same worker writing chunks as they come.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vllm::api::http {

struct Request {
  std::string method;  // upper case as sent; HEAD is routed as GET
  std::string path;    // without the query string
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // The query string's arguments (?name=value&...), decoded, in order.
  std::vector<std::pair<std::string, std::string>> query;
  // The header's value, or "" when absent (names compare case-insensitively).
  std::string header(std::string_view name) const;
  // The first query argument named `name`, or null.
  const std::string* query_arg(std::string_view name) const;
  // True once the client has closed its end of the connection (checked on the socket). Valid
  // on workers while the handler runs; inline handlers never need it.
  bool client_gone() const;

  int fd = -1;  // the connection's socket, for client_gone()
};

// A header name as Request stores it: ASCII lower case.
std::string header_name(std::string_view name);

// Writes a streamed body; write() returns false once the client is gone or the server stops.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  virtual bool write(std::string_view data) = 0;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body is produced by this function after the headers went out (chunked
  // transfer encoding); `body` is ignored.
  std::function<void(StreamWriter&)> stream;
};

using Handler = std::function<void(const Request&, Response&)>;
// Fills the body of a response the layer itself produces (404, 405, 413, 500...).
using ErrorBody = std::function<void(int status, const std::string& message, Response&)>;

struct Options {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port
  size_t max_body_bytes = size_t{8} << 20;
  int request_timeout_s = 30;       // whole request, and keep-alive idle time
  unsigned max_connections = 8192;  // lowered to what RLIMIT_NOFILE allows
  unsigned io_threads = 2;
  unsigned max_workers = 4096;  // handlers running at once (streams hold one each)
  // CORS: origins allowed ("*" for any); empty: no CORS headers, OPTIONS gets 405.
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_methods = {"*"};
  std::vector<std::string> allowed_headers = {"*"};
  bool allow_credentials = false;
  // TLS: PEM text of the key and certificate (both or neither).
  std::string tls_key_pem, tls_cert_pem;
  // When set, every response carries X-Request-Id: the request's own, else one from this.
  std::function<std::string()> new_request_id;
  // A path prefix a proxy may leave on requests ("/api": /api/v1/models routes as
  // /v1/models; paths without it route as they are).
  std::string root_path;
  // Listen on this Unix domain socket instead of host:port (removed again at shutdown).
  std::string unix_socket;
};

class Server {
 public:
  Server(Options opts, ErrorBody error_body);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Routes are fixed before bind(). `inline_handler`: run on the polling thread. A path ending
  // in "/*" matches any one further segment ("/v1/responses/*": /v1/responses/resp_1).
  void route(const std::string& method, const std::string& path, Handler h,
             bool inline_handler = false);

  // Opens the listening socket and starts the polling threads; false (message on stderr) when
  // the address cannot be bound.
  bool bind();
  int port() const { return port_; }
  // Blocks until stop_accepting() and drain() have both run.
  void wait();
  // Stops taking new connections and requests (in-flight ones continue).
  void stop_accepting();
  // Waits for every running handler to return (after whatever feeds them has been shut
  // down), then closes every connection. Ends wait(). A request read in full once it began
  // gets a 503; a stream cut short by it ends in an error, never as a complete body.
  void drain();

  // Counters for tests and /metrics.
  size_t open_connections() const;
  size_t running_handlers() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace vllm::api::http
