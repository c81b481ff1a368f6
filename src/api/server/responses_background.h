// vLLM's background mode for /v1/responses (`background: true`, with its response store): the
// request returns at once (its Response "queued"; streamed, its events as they come) and runs
// on without its client; GET /v1/responses/{id} polls the stored Response (with stream=true,
// replays a streamed one's events after `starting_after`), POST /v1/responses/{id}/cancel
// stops it. Each background response runs on a thread of its own until it finishes, is
// cancelled or the server stops (cancel_all).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace vllm::api {

class BackgroundJob {
 public:
  explicit BackgroundJob(bool streamed) : streamed_(streamed) {}
  bool streamed() const { return streamed_; }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

  // A streamed job's events, in order.
  void append(const std::vector<std::string>& events);
  // Writes the events from index `from` on as they come, until the job finished (true) or
  // `write` said false (the client went away: the job runs on).
  bool replay(size_t from, const std::function<bool(const std::string&)>& write);

  // The job's end and its cancellation exclude each other: what runs under `f` (storing the
  // finished Response unless cancelled, or marking it cancelled) sees one or the other.
  template <class F>
  auto locked(F&& f) {
    std::lock_guard<std::mutex> l(state_mu_);
    return f();
  }
  void set_cancelled() { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  friend class BackgroundResponses;
  const bool streamed_;
  std::atomic<bool> cancelled_{false};
  std::mutex state_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
  bool done_ = false;
};

class BackgroundResponses {
 public:
  // Finished streamed jobs kept for replay (the newest; vLLM keeps every one).
  explicit BackgroundResponses(size_t keep_finished = 1000) : keep_(keep_finished) {}
  ~BackgroundResponses();  // cancel_all

  // Runs work(job) on a new thread; the job is findable by `id` until it finishes (a streamed
  // one longer, for replay).
  std::shared_ptr<BackgroundJob> start(const std::string& id, bool streamed,
                                       std::function<void(BackgroundJob&)> work);
  std::shared_ptr<BackgroundJob> find(const std::string& id) const;
  // Cancels `id`'s job and waits for its thread to end (no-op for an unknown or finished one).
  void cancel(const std::string& id);
  // Cancels every job and waits for their threads (the server stopping).
  void cancel_all();

 private:
  void finished(const std::string& id, const std::shared_ptr<BackgroundJob>& job);

  const size_t keep_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, std::shared_ptr<BackgroundJob>> jobs_;
  std::deque<std::pair<std::string, std::shared_ptr<BackgroundJob>>> kept_;  // finished streamed
                                                                             // jobs, oldest first
  size_t running_ = 0;
};

}  // namespace vllm::api
