// HttpServer on libmicrohttpd (see http_server.h for what it guarantees).
//
// Threads and ownership. MHD's polling threads call on_access (request headers, body pieces,
// end of body), Outbox::read (a streamed body's next bytes) and the two notification callbacks.
// A complete request that is not inline is handed to a worker with its connection suspended:
// MHD neither reads nor closes a suspended connection, so the worker may use it until it
// queues the response and resumes it. A streamed body lives in an Outbox the worker fills and
// Outbox::read drains; when it finds the Outbox empty it suspends the connection, and the
// worker resumes it after the next write. Both sides decide under the Outbox mutex, so a resume
// always follows a suspend. The connection may close only while it is not suspended, and the
// completion callback then marks the Outbox closed (under the same mutex), after which the
// worker never touches the connection again.
#include "api/server/http_server.h"

#include <microhttpd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "api/server/http_listener.h"
#include "api/server/http_outbox.h"
#include "api/server/http_policy.h"

namespace vllm::api::http {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// MHD's buffer for one chunk of a streamed body.
constexpr size_t kStreamBlock = 32 * 1024;

// The whole-request deadline of one connection.
struct ConnInfo {
  int fd = -1;
  Clock::time_point deadline;
  bool busy = false;  // a complete request is being handled: no deadline
  bool reaped = false;
};

struct Route {
  std::map<std::string, std::pair<Handler, bool>> methods;  // method -> (handler, inline)
};

}  // namespace

struct Exchange {
  MHD_Connection* conn = nullptr;
  ConnInfo* ci = nullptr;
  Request req;
  const Route* route = nullptr;
  bool too_large = false;
  bool started = false;  // the full request was dispatched
  std::mutex mu;
  std::shared_ptr<Outbox> outbox;  // set by the worker before it resumes the connection
};

struct Server::Impl {
  Options opts;
  ErrorBody error_body;
  std::unordered_map<std::string, Route> routes;
  MHD_Daemon* daemon = nullptr;
  int listen_fd = -1;

  mutable std::mutex conns_mu;
  std::unordered_set<ConnInfo*> conns;

  mutable std::mutex work_mu;
  std::condition_variable work_cv, idle_cv;
  std::deque<std::shared_ptr<Exchange>> jobs;
  std::vector<std::thread> threads;
  size_t running = 0;  // handlers reserved, queued or running
  size_t spawn_failures = 0;
  bool stopping = false;                       // no new streams; live ones are closed
  bool stopping_workers = false;               // idle workers exit
  std::set<std::shared_ptr<Outbox>> outboxes;  // live streams, closed on drain

  std::thread reaper;
  std::mutex reaper_mu;
  std::condition_variable reaper_cv;
  bool reaper_stop = false;

  std::mutex state_mu;
  std::condition_variable state_cv;
  bool finished = false;
  std::atomic<bool> accepting{true};

  // ---- responses ----
  static MHD_Response* make_response(const Response& res) {
    MHD_Response* r = MHD_create_response_from_buffer(
        res.body.size(), const_cast<char*>(res.body.data()), MHD_RESPMEM_MUST_COPY);
    if (!res.content_type.empty())
      MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, res.content_type.c_str());
    for (const auto& [k, v] : res.headers) MHD_add_response_header(r, k.c_str(), v.c_str());
    return r;
  }

  void error(int status, const std::string& msg, Response& res) const {
    res = Response();
    res.status = status;
    error_body(status, msg, res);
  }

  // Runs a handler, turning an escaped exception into a 500.
  void call(const Handler& h, const Request& req, Response& res) const {
    try {
      h(req, res);
    } catch (const std::exception& e) {
      error(500, std::string("internal error: ") + e.what(), res);
    } catch (...) {
      error(500, "internal error", res);
    }
    add_response_headers(opts, req, res);
  }

  // Queues a whole response on the polling thread (inside on_access).
  static MHD_Result queue(MHD_Connection* c, const Response& res) {
    MHD_Response* r = make_response(res);
    const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(res.status), r);
    MHD_destroy_response(r);
    return ok;
  }

  // ---- routing ----
  // nullptr with *status set (404 / 405, allow filled) when the request has no handler.
  const std::pair<Handler, bool>* find(const Request& req, int* status, std::string* allow) {
    auto it = routes.find(req.path);
    // A "*" segment of a route takes one non-empty path segment: the last one
    // (/v1/responses/{id}) or the one before it (/v1/responses/{id}/cancel).
    const size_t slash = req.path.rfind('/');
    if (it == routes.end() && slash != std::string::npos && slash + 1 < req.path.size())
      it = routes.find(req.path.substr(0, slash + 1) + "*");
    if (it == routes.end() && slash != std::string::npos && slash > 0) {
      const size_t prev = req.path.rfind('/', slash - 1);
      if (prev != std::string::npos && prev + 1 < slash)
        it = routes.find(req.path.substr(0, prev + 1) + "*" + req.path.substr(slash));
    }
    if (it == routes.end()) {
      *status = 404;
      return nullptr;
    }
    const std::string m = req.method == "HEAD" ? "GET" : req.method;
    auto h = it->second.methods.find(m);
    if (h != it->second.methods.end()) return &h->second;
    std::vector<std::string> names;
    for (const auto& [k, v] : it->second.methods) names.push_back(k);
    *allow = join_header_values(names);
    *status = 405;
    return nullptr;
  }

  // ---- workers ----
  // Counts a job as running with a worker for it (one per job up to max_workers, or a burst
  // would queue behind requests that decode for minutes), or says why not for a 503: a drain
  // began, or all are busy and no thread can start (RLIMIT_NPROC, a pids cgroup: no crash).
  std::string reserve() {
    std::lock_guard<std::mutex> l(work_mu);
    if (stopping) return "the server is shutting down";
    if (running >= threads.size() && threads.size() < opts.max_workers) {
      try {
        threads.emplace_back([this] { worker(); });
      } catch (const std::exception& e) {
        const std::string why = std::string("cannot start a request handler thread: ") + e.what();
        if (spawn_failures++ % 1000 == 0) std::fprintf(stderr, "warning: %s\n", why.c_str());
        return "the server " + why + "; try again later";
      }
    }
    ++running;
    return {};
  }

  void submit(std::shared_ptr<Exchange> ex) {
    std::lock_guard<std::mutex> l(work_mu);
    jobs.push_back(std::move(ex));
    work_cv.notify_one();
  }

  void worker() {
    std::unique_lock<std::mutex> l(work_mu);
    for (;;) {
      work_cv.wait(l, [&] { return stopping_workers || !jobs.empty(); });
      if (jobs.empty()) return;  // stopping
      std::shared_ptr<Exchange> ex = std::move(jobs.front());
      jobs.pop_front();
      l.unlock();
      run(*ex);
      ex.reset();
      l.lock();
      if (--running == 0) idle_cv.notify_all();
    }
  }

  void run(Exchange& ex) {
    Response res;
    int status = 0;
    std::string allow;
    const auto* h = find(ex.req, &status, &allow);
    call(h->first, ex.req, res);
    if (!res.stream) {
      MHD_Response* r = make_response(res);
      MHD_queue_response(ex.conn, static_cast<unsigned>(res.status), r);
      MHD_destroy_response(r);
      MHD_resume_connection(ex.conn);
      return;
    }
    auto ob = std::make_shared<Outbox>(ex.conn);
    {
      std::lock_guard<std::mutex> l(ex.mu);
      ex.outbox = ob;
    }
    {
      std::lock_guard<std::mutex> l(work_mu);
      if (stopping) ob->close();
      outboxes.insert(ob);
    }
    MHD_Response* r = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, kStreamBlock, &Outbox::read, new std::shared_ptr<Outbox>(ob),
        [](void* p) { delete static_cast<std::shared_ptr<Outbox>*>(p); });
    if (!res.content_type.empty())
      MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, res.content_type.c_str());
    for (const auto& [k, v] : res.headers) MHD_add_response_header(r, k.c_str(), v.c_str());
    MHD_queue_response(ex.conn, static_cast<unsigned>(res.status), r);
    MHD_destroy_response(r);
    MHD_resume_connection(ex.conn);
    try {
      res.stream(*ob);
    } catch (...) {
      // The handler owns its errors; an escaped one just ends the stream.
    }
    ob->finish();
    std::lock_guard<std::mutex> l(work_mu);
    outboxes.erase(ob);
  }

  // ---- MHD callbacks ----
  static MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, const char* value) {
    auto* req = static_cast<Request*>(cls);
    req->headers.emplace_back(header_name(key ? key : ""), value ? value : "");
    return MHD_YES;
  }
  static MHD_Result collect_query(void* cls, MHD_ValueKind, const char* key, const char* value) {
    static_cast<Request*>(cls)->query.emplace_back(key ? key : "", value ? value : "");
    return MHD_YES;
  }

  MHD_Result on_access(MHD_Connection* c, const char* url, const char* method, const char* upload,
                       size_t* upload_size, void** req_cls) {
    auto* holder = static_cast<std::shared_ptr<Exchange>*>(*req_cls);
    if (!holder) {  // headers are in
      auto ex = std::make_shared<Exchange>();
      ex->conn = c;
      if (const MHD_ConnectionInfo* i =
              MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT))
        ex->ci = static_cast<ConnInfo*>(i->socket_context);
      if (const MHD_ConnectionInfo* i =
              MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))
        ex->req.fd = i->connect_fd;
      ex->req.method = method ? method : "";
      ex->req.path = url ? url : "";
      strip_root_path(opts.root_path, ex->req.path);
      MHD_get_connection_values(c, MHD_HEADER_KIND, &collect_header, &ex->req);
      MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &collect_query, &ex->req);
      *req_cls = new std::shared_ptr<Exchange>(ex);
      Response res;
      int status = 0;
      std::string allow;
      if (!accepting) {
        error(503, "the server is shutting down", res);
        return queue(c, res);
      }
      if (ex->req.method == "OPTIONS" && !opts.allowed_origins.empty()) {
        cors_preflight(opts, ex->req, res);
        return queue(c, res);
      }
      const auto* h = find(ex->req, &status, &allow);
      if (!h) {
        error(status, status == 404 ? "Not Found" : "Method Not Allowed", res);
        if (!allow.empty()) res.headers.emplace_back("Allow", allow);
        add_response_headers(opts, ex->req, res);
        return queue(c, res);
      }
      const std::string cl = ex->req.header("content-length");
      if (!cl.empty()) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long n = std::strtoull(cl.c_str(), &end, 10);
        if (errno != 0 || n > opts.max_body_bytes) {
          error(413,
                "Request body too large (limit " + std::to_string(opts.max_body_bytes) +
                    " bytes, --max-request-bytes)",
                res);
          add_response_headers(opts, ex->req, res);
          return queue(c, res);
        }
        ex->req.body.reserve(n);
      }
      return MHD_YES;
    }
    Exchange& ex = **holder;
    if (*upload_size > 0) {  // a piece of the body (Content-Length or chunked alike)
      if (!ex.too_large) {
        if (ex.req.body.size() + *upload_size > opts.max_body_bytes) {
          // Keep reading (and dropping) so the client gets a 413 rather than a reset; the
          // connection's deadline bounds how long that may take.
          ex.too_large = true;
          std::string().swap(ex.req.body);
        } else {
          ex.req.body.append(upload, *upload_size);
        }
      }
      *upload_size = 0;
      return MHD_YES;
    }
    if (ex.started) return MHD_YES;  // resumed after the worker queued the response
    ex.started = true;
    Response res;
    if (ex.too_large) {
      error(413,
            "Request body too large (limit " + std::to_string(opts.max_body_bytes) +
                " bytes, --max-request-bytes)",
            res);
      add_response_headers(opts, ex.req, res);
      return queue(c, res);
    }
    mark_busy(ex.ci, true);
    int status = 0;
    std::string allow;
    const auto* h = find(ex.req, &status, &allow);
    if (h->second) {
      call(h->first, ex.req, res);
      return queue(c, res);
    }
    // Before suspending: a job queued once drain() began could be left to no worker.
    if (const std::string why = reserve(); !why.empty()) {
      error(503, why, res);
      return queue(c, res);
    }
    MHD_suspend_connection(c);
    submit(*holder);
    return MHD_YES;
  }

  void on_completed(void** req_cls) {
    auto* holder = static_cast<std::shared_ptr<Exchange>*>(*req_cls);
    if (!holder) return;
    Exchange& ex = **holder;
    std::shared_ptr<Outbox> ob;
    {
      std::lock_guard<std::mutex> l(ex.mu);
      ob = ex.outbox;
    }
    if (ob) ob->close();
    mark_busy(ex.ci, false);
    delete holder;
    *req_cls = nullptr;
  }

  void mark_busy(ConnInfo* ci, bool busy) {
    if (!ci) return;
    std::lock_guard<std::mutex> l(conns_mu);
    ci->busy = busy;
    if (!busy) ci->deadline = Clock::now() + std::chrono::seconds(opts.request_timeout_s);
  }

  void on_connection(MHD_Connection* c, void** socket_context,
                     MHD_ConnectionNotificationCode code) {
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto* ci = new ConnInfo();
      if (const MHD_ConnectionInfo* i =
              MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))
        ci->fd = i->connect_fd;
      ci->deadline = Clock::now() + std::chrono::seconds(opts.request_timeout_s);
      *socket_context = ci;
      std::lock_guard<std::mutex> l(conns_mu);
      conns.insert(ci);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      // MHD closes the socket only after this returns, so the reaper never sees a reused fd.
      auto* ci = static_cast<ConnInfo*>(*socket_context);
      if (!ci) return;
      {
        std::lock_guard<std::mutex> l(conns_mu);
        conns.erase(ci);
      }
      delete ci;
      *socket_context = nullptr;
    }
  }

  // Shuts down connections that have not delivered a complete request in time.
  void reap_loop() {
    std::unique_lock<std::mutex> rl(reaper_mu);
    while (!reaper_stop) {
      reaper_cv.wait_for(rl, 250ms);
      const auto now = Clock::now();
      std::lock_guard<std::mutex> l(conns_mu);
      for (ConnInfo* ci : conns) {
        if (ci->busy || ci->reaped || now < ci->deadline) continue;
        ci->reaped = true;
        ::shutdown(ci->fd, SHUT_RDWR);  // MHD sees the end of the stream and closes it
      }
    }
  }
};

namespace {

MHD_Result access_cb(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                     const char* upload, size_t* upload_size, void** req_cls) {
  return static_cast<Server::Impl*>(cls)->on_access(c, url, method, upload, upload_size, req_cls);
}

void completed_cb(void* cls, MHD_Connection*, void** req_cls, MHD_RequestTerminationCode) {
  static_cast<Server::Impl*>(cls)->on_completed(req_cls);
}

void connection_cb(void* cls, MHD_Connection* c, void** socket_context,
                   MHD_ConnectionNotificationCode code) {
  static_cast<Server::Impl*>(cls)->on_connection(c, socket_context, code);
}

// MHD's messages are printed while the daemon starts (a bad TLS key, say) and dropped after:
// then they are about clients (resets, malformed requests), not ours to log.
std::atomic<bool> g_log_startup{false};
void log_cb(void*, const char* fmt, va_list ap) {
  if (!g_log_startup) return;
  std::fputs("http: ", stderr);
  std::vfprintf(stderr, fmt, ap);
}

}  // namespace

Server::Server(Options opts, ErrorBody error_body) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(opts);
  impl_->error_body = std::move(error_body);
}

Server::~Server() {
  if (impl_->daemon) {
    stop_accepting();
    drain();
  }
}

void Server::route(const std::string& method, const std::string& path, Handler h,
                   bool inline_handler) {
  impl_->routes[path].methods[method] = {std::move(h), inline_handler};
}

bool Server::bind() {
  Impl& m = *impl_;
  std::string err;
  const bool uds = !m.opts.unix_socket.empty();
  m.listen_fd = uds ? open_unix_listener(m.opts.unix_socket, &err)
                    : open_listener(m.opts.host, m.opts.port, &err);
  if (m.listen_fd < 0) {
    if (uds)
      std::fprintf(stderr, "error: cannot listen on %s: %s\n", m.opts.unix_socket.c_str(),
                   err.c_str());
    else
      std::fprintf(stderr, "error: cannot bind %s:%d: %s\n", m.opts.host.c_str(), m.opts.port,
                   err.c_str());
    return false;
  }
  port_ = bound_port(m.listen_fd);
  const bool tls = !m.opts.tls_key_pem.empty();
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG;
  if (tls) flags |= MHD_USE_TLS;
  const unsigned max_conn = connection_budget(m.opts.max_connections);
  // The logger first: MHD complains (through its default logger) when it is not.
  std::vector<MHD_OptionItem> o = {
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&log_cb), nullptr},
      {MHD_OPTION_LISTEN_SOCKET, m.listen_fd, nullptr},
      {MHD_OPTION_THREAD_POOL_SIZE, std::max(1u, m.opts.io_threads), nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, max_conn, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(m.opts.request_timeout_s), nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, nullptr},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&completed_cb), &m},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&connection_cb), &m},
  };
  if (tls) {
    o.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(m.opts.tls_key_pem.c_str())});
    o.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(m.opts.tls_cert_pem.c_str())});
  }
  o.push_back({MHD_OPTION_END, 0, nullptr});
  g_log_startup = true;
  m.daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &access_cb, &m, MHD_OPTION_ARRAY,
                              o.data(), MHD_OPTION_END);
  g_log_startup = false;
  if (!m.daemon) {
    std::fprintf(stderr, "error: cannot start the HTTP server on %s:%d%s\n", m.opts.host.c_str(),
                 port_, tls ? " (check the TLS key and certificate)" : "");
    ::close(m.listen_fd);
    m.listen_fd = -1;
    return false;
  }
  m.reaper = std::thread([&m] { m.reap_loop(); });
  return true;
}

void Server::wait() {
  std::unique_lock<std::mutex> l(impl_->state_mu);
  impl_->state_cv.wait(l, [&] { return impl_->finished; });
}

void Server::stop_accepting() {
  Impl& m = *impl_;
  m.accepting = false;
  if (m.daemon) {
    const MHD_socket s = MHD_quiesce_daemon(m.daemon);
    if (s != MHD_INVALID_SOCKET) ::close(s);
  }
  if (!m.opts.unix_socket.empty() && m.listen_fd >= 0) ::unlink(m.opts.unix_socket.c_str());
}

void Server::drain() {
  Impl& m = *impl_;
  if (!m.daemon) return;
  {
    // Wake every streaming handler (its next write fails) and wait for all handlers.
    std::unique_lock<std::mutex> l(m.work_mu);
    m.stopping = true;
    for (const auto& ob : m.outboxes) ob->close();
    // Handlers end once the engine behind them has shut down; one that does not within a
    // minute keeps its connection, so the daemon is left running rather than freed under it.
    if (!m.idle_cv.wait_for(l, 60s, [&] { return m.running == 0; })) {
      std::fprintf(stderr, "warning: %zu HTTP handlers still running at shutdown\n", m.running);
      return;
    }
    m.stopping_workers = true;
    m.work_cv.notify_all();
  }
  for (auto& t : m.threads) t.join();
  m.threads.clear();
  MHD_stop_daemon(m.daemon);
  m.daemon = nullptr;
  {
    std::lock_guard<std::mutex> l(m.reaper_mu);
    m.reaper_stop = true;
  }
  m.reaper_cv.notify_all();
  if (m.reaper.joinable()) m.reaper.join();
  std::lock_guard<std::mutex> l(m.state_mu);
  m.finished = true;
  m.state_cv.notify_all();
}

size_t Server::open_connections() const {
  std::lock_guard<std::mutex> l(impl_->conns_mu);
  return impl_->conns.size();
}

size_t Server::running_handlers() const {
  std::lock_guard<std::mutex> l(impl_->work_mu);
  return impl_->running;
}

}  // namespace vllm::api::http
