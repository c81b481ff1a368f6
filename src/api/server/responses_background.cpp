// Background /v1/responses jobs (responses_background.h).
#include "api/server/responses_background.h"

#include <chrono>
#include <thread>
#include <utility>

namespace vllm::api {

void BackgroundJob::append(const std::vector<std::string>& events) {
  if (events.empty()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    events_.insert(events_.end(), events.begin(), events.end());
  }
  cv_.notify_all();
}

bool BackgroundJob::replay(size_t from, const std::function<bool(const std::string&)>& write) {
  size_t next = from;
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    while (next < events_.size()) {
      const std::string e = events_[next++];
      l.unlock();
      if (!write(e)) return false;
      l.lock();
    }
    if (done_) return true;
    cv_.wait_for(l, std::chrono::milliseconds(500));
  }
}

BackgroundResponses::~BackgroundResponses() { cancel_all(); }

std::shared_ptr<BackgroundJob> BackgroundResponses::start(
    const std::string& id, bool streamed, std::function<void(BackgroundJob&)> work) {
  auto job = std::make_shared<BackgroundJob>(streamed);
  {
    std::lock_guard<std::mutex> l(mu_);
    jobs_[id] = job;
    ++running_;
  }
  std::thread([this, id, job, work = std::move(work)] {
    try {
      work(*job);
    } catch (...) {
      // work stores its own outcome; nothing may escape a thread
    }
    finished(id, job);
  }).detach();
  return job;
}

void BackgroundResponses::finished(const std::string& id,
                                   const std::shared_ptr<BackgroundJob>& job) {
  {
    std::lock_guard<std::mutex> l(job->mu_);
    job->done_ = true;
  }
  job->cv_.notify_all();
  std::lock_guard<std::mutex> l(mu_);
  auto it = jobs_.find(id);
  if (it != jobs_.end() && it->second == job) {
    if (job->streamed()) {
      kept_.emplace_back(id, job);
      while (kept_.size() > keep_) {
        auto old = jobs_.find(kept_.front().first);
        if (old != jobs_.end() && old->second == kept_.front().second) jobs_.erase(old);
        kept_.pop_front();
      }
    } else {
      jobs_.erase(it);
    }
  }
  --running_;
  cv_.notify_all();
}

std::shared_ptr<BackgroundJob> BackgroundResponses::find(const std::string& id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

void BackgroundResponses::cancel(const std::string& id) {
  std::shared_ptr<BackgroundJob> job = find(id);
  if (!job) return;
  job->set_cancelled();
  std::unique_lock<std::mutex> l(job->mu_);
  job->cv_.wait(l, [&] { return job->done_; });
}

void BackgroundResponses::cancel_all() {
  std::unique_lock<std::mutex> l(mu_);
  for (auto& [id, job] : jobs_) job->set_cancelled();
  cv_.wait(l, [&] { return running_ == 0; });
}

}  // namespace vllm::api
