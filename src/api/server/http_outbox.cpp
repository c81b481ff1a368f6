// Outbox (see http_outbox.h).
#include "api/server/http_outbox.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

namespace vllm::api::http {

using namespace std::chrono_literals;

void Outbox::resume_if_suspended() {
  if (!suspended_) return;
  suspended_ = false;
  MHD_resume_connection(conn_);
}

bool Outbox::write(std::string_view data) {
  std::unique_lock<std::mutex> l(mu_);
  while (!closed_ && buf_.size() - off_ > kHigh) cv_.wait_for(l, 100ms);
  if (closed_) {
    cut_ = true;
    return false;
  }
  if (off_ > kHigh) {
    buf_.erase(0, off_);
    off_ = 0;
  }
  buf_.append(data);
  resume_if_suspended();
  return true;
}

void Outbox::finish() {
  std::lock_guard<std::mutex> l(mu_);
  done_ = true;
  resume_if_suspended();
}

void Outbox::close() {
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  cv_.notify_all();
}

ssize_t Outbox::read(void* cls, uint64_t, char* buf, size_t max) {
  Outbox& ob = **static_cast<std::shared_ptr<Outbox>*>(cls);
  std::lock_guard<std::mutex> l(ob.mu_);
  const size_t avail = ob.buf_.size() - ob.off_;
  if (avail > 0) {
    const size_t n = std::min(avail, max);
    std::memcpy(buf, ob.buf_.data() + ob.off_, n);
    ob.off_ += n;
    if (ob.off_ == ob.buf_.size()) {
      ob.buf_.clear();
      ob.off_ = 0;
    }
    ob.cv_.notify_all();
    return static_cast<ssize_t>(n);
  }
  // Closed while the handler still runs, or after it lost a write: the body is incomplete.
  if (ob.cut_ || (ob.closed_ && !ob.done_)) return MHD_CONTENT_READER_END_WITH_ERROR;
  if (ob.done_ || ob.closed_) return MHD_CONTENT_READER_END_OF_STREAM;
  ob.suspended_ = true;
  MHD_suspend_connection(ob.conn_);
  return 0;
}

}  // namespace vllm::api::http
