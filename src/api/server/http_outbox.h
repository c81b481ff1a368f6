// Outbox: a streamed response body between the worker that writes it and libmicrohttpd's
// polling thread that sends it (internal to http_server.cpp).
//
// read() runs on the polling thread; when it finds nothing to send it suspends the connection,
// and the worker's next write() or finish() resumes it. Both decide under one mutex, so a
// resume always follows a suspend. close() (the connection completed, or the server stops)
// makes every later write() fail, after which the worker never touches the connection. A body
// that lost a refused write ends in an error (the connection is cut), never in the clean end of
// a chunked body, so a client cannot take a stream cut short at shutdown for a whole one.
#pragma once

#include <microhttpd.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "api/server/http_server.h"

namespace vllm::api::http {

class Outbox : public StreamWriter {
 public:
  explicit Outbox(MHD_Connection* conn) : conn_(conn) {}
  // Appends data for the client. Back-pressure: waits while more than kHigh bytes are unsent,
  // so a client that reads slowly makes its handler wait rather than the heap grow. False once
  // the connection is closed.
  bool write(std::string_view data) override;
  // The handler returned: the stream ends once what is buffered has been sent.
  void finish();
  // The connection is gone or the server is stopping: writes fail from now on.
  void close();
  // libmicrohttpd's content reader; cls points to a std::shared_ptr<Outbox>.
  static ssize_t read(void* cls, uint64_t pos, char* buf, size_t max);

  // Unsent bytes above which write() waits for the client to read.
  static constexpr size_t kHigh = size_t{4} << 20;

 private:
  void resume_if_suspended();  // with mu_ held

  std::mutex mu_;
  std::condition_variable cv_;
  std::string buf_;
  size_t off_ = 0;
  bool done_ = false;       // the handler returned
  bool closed_ = false;     // the connection is gone, or the server is stopping
  bool suspended_ = false;  // read() suspended the connection waiting for data
  bool cut_ = false;        // a write was refused: the body ends in an error, not cleanly
  MHD_Connection* conn_;
};

}  // namespace vllm::api::http
