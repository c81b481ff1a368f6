// AsyncEngine: the engine thread, its inbox (submissions, aborts) and the per-request streams.
#include "engine/async_engine.h"

#include <cstdio>
#include <exception>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace vllm::engine {

using Clock = std::chrono::steady_clock;

std::string RequestStream::wait_admitted() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return admitted_ || closed_; });
  if (!admitted_) return error_.empty() ? "the engine stopped" : error_;
  return error_;
}

RequestStream::PopResult RequestStream::pop(RequestOutput& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mu_);
  if (!cv_.wait_for(lk, timeout, [&] { return !queue_.empty() || closed_; }))
    return PopResult::kTimeout;
  if (queue_.empty()) return PopResult::kClosed;
  out = std::move(queue_.front());
  queue_.pop_front();
  return PopResult::kOutput;
}

bool RequestStream::finished() const {
  std::lock_guard<std::mutex> lk(mu_);
  return closed_ && queue_.empty();
}

void RequestStream::admit(std::string error) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    admitted_ = true;
    error_ = std::move(error);
    if (!error_.empty()) closed_ = true;
  }
  cv_.notify_all();
}

void RequestStream::push(RequestOutput out) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (closed_) return;
    if (out.finished) closed_ = true;
    queue_.push_back(std::move(out));
  }
  cv_.notify_all();
}

void RequestStream::close() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

AsyncEngine::AsyncEngine(LLMEngine& engine, AsyncEngineOptions opts, EngineStatsObserver* observer)
    : engine_(engine), config_(engine.config()), opts_(opts), observer_(observer) {
  metrics_ = engine_.metrics();
  thread_ = std::thread([this] { loop(); });
}

AsyncEngine::~AsyncEngine() { shutdown(); }

std::shared_ptr<RequestStream> AsyncEngine::add_request(const std::string& request_id,
                                                        std::vector<int32_t> prompt_token_ids,
                                                        const SamplingParams& params,
                                                        int64_t priority) {
  auto stream = std::make_shared<RequestStream>(request_id);
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_) throw EngineStopped("the engine is shutting down");
    if (draining_) throw EngineStopped("the server is shutting down");
    int64_t running;
    {
      std::lock_guard<std::mutex> mlk(metrics_mu_);
      running = metrics_.num_requests_running;
    }
    if (num_unfinished_.load() - running >= opts_.max_waiting_requests)
      throw EngineOverloaded(
          "The server is overloaded: " + std::to_string(opts_.max_waiting_requests) +
          " requests are already waiting. Retry later.");
    ++num_unfinished_;
    queued_tokens_ += static_cast<int64_t>(prompt_token_ids.size());
    submits_.push_back(Submission{request_id, std::move(prompt_token_ids), params, priority, stream,
                                  Clock::now()});
  }
  cv_.notify_one();
  return stream;
}

void AsyncEngine::check_admission(int64_t n) const {
  // The messages and the order of the two checks are vLLM's (AsyncLLM.check_admission).
  if (opts_.max_num_queued_reqs && num_unfinished_.load() + n > *opts_.max_num_queued_reqs) {
    if (observer_) observer_->on_admission_rejected("max_num_queued_reqs");
    throw EngineOverloaded(
        "The engine is currently busy and cannot accept new requests. Please try again later "
        "or on a different instance.");
  }
  if (opts_.max_num_queued_tokens && queued_tokens_.load() >= *opts_.max_num_queued_tokens) {
    if (observer_) observer_->on_admission_rejected("max_num_queued_tokens");
    throw EngineOverloaded(
        "The engine has reached its prefill token backlog limit. Please try again later or on "
        "a different instance.");
  }
}

int64_t AsyncEngine::drain(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    draining_ = true;
  }
  const auto deadline = Clock::now() + grace;
  while (num_unfinished_.load() > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return num_unfinished_.load();
}

void AsyncEngine::release_queued(Live& l) {
  if (l.queued_tokens == 0) return;  // released already: no atomic write per later token
  queued_tokens_ -= l.queued_tokens;
  l.queued_tokens = 0;
}

void AsyncEngine::abort(const std::string& request_id) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stop_) return;
    aborts_.push_back(request_id);
  }
  cv_.notify_one();
}

EngineMetrics AsyncEngine::metrics() const {
  EngineMetrics m;
  {
    std::lock_guard<std::mutex> lk(metrics_mu_);
    m = metrics_;
  }
  // Asked here, in the caller's thread: a page walk is too dear for every step.
  m.kv_cache_resident_bytes = engine_.kv_cache_resident_bytes();
  return m;
}

void AsyncEngine::shutdown() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void AsyncEngine::admit(Submission& s) {
  const auto n_prompt = static_cast<int64_t>(s.prompt.size());  // s.prompt is moved below
  try {
    engine_.add_request(s.id, std::move(s.prompt), s.params, s.priority);
  } catch (const std::exception& e) {
    s.stream->admit(e.what());
    queued_tokens_ -= n_prompt;
    --num_unfinished_;
    if (observer_) observer_->on_rejected();
    return;
  }
  s.stream->admit({});
  live_[s.id] = Live{s.stream, s.arrival, s.arrival, false, n_prompt};
}

void AsyncEngine::apply_abort(const std::string& id) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  engine_.abort_request(id);
  // The engine reports the abort with its next step; the reader learns it now.
  RequestOutput out;
  out.request_id = id;
  out.finished = true;
  out.finish_reason = "abort";
  if (observer_)
    observer_->on_finished(
        out, std::chrono::duration<double>(Clock::now() - it->second.arrival).count());
  // Count the request finished before its reader can learn it: a client that sends its next
  // request the moment this one ends must find the admission room free.
  release_queued(it->second);
  auto stream = std::move(it->second.stream);
  live_.erase(it);
  --num_unfinished_;
  stream->push(std::move(out));
}

void AsyncEngine::deliver(RequestOutput& out, Clock::time_point now) {
  auto it = live_.find(out.request_id);
  if (it == live_.end()) return;  // aborted earlier: its stream is already closed
  Live& l = it->second;
  if (observer_ && !out.new_token_ids.empty()) {
    if (!l.got_first) {
      observer_->on_first_token(std::chrono::duration<double>(now - l.arrival).count());
      l.got_first = true;
    } else {
      observer_->on_inter_token(std::chrono::duration<double>(now - l.last_token).count());
    }
    l.last_token = now;
  }
  if (!out.new_token_ids.empty() || out.finished) release_queued(l);
  const bool finished = out.finished;
  if (finished && observer_)
    observer_->on_finished(out, std::chrono::duration<double>(now - l.arrival).count());
  if (!finished) {
    l.stream->push(std::move(out));
    return;
  }
  // As in apply_abort: the admission room is free before the reader learns the end.
  auto stream = std::move(l.stream);
  live_.erase(it);
  --num_unfinished_;
  stream->push(std::move(out));
}

void AsyncEngine::fail_all(const std::string& why) {
  for (auto& [id, l] : live_) {
    engine_.abort_request(id);
    RequestOutput out;
    out.request_id = id;
    out.finished = true;
    out.finish_reason = "abort";
    out.error = why;
    release_queued(l);
    --num_unfinished_;
    l.stream->push(std::move(out));
  }
  live_.clear();
}

void AsyncEngine::loop() {
  std::vector<Submission> submits;
  std::vector<std::string> aborts;
  for (;;) {
    bool stopping;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] {
        return stop_ || !submits_.empty() || !aborts_.empty() || engine_.has_unfinished_requests();
      });
      stopping = stop_;
      submits.swap(submits_);
      aborts.swap(aborts_);
    }
    if (stopping) {
      for (auto& s : submits) {
        s.stream->admit("the engine is shutting down");
        queued_tokens_ -= static_cast<int64_t>(s.prompt.size());
        --num_unfinished_;
      }
      fail_all("the engine is shutting down");
      // Drain the engine so its KV blocks return and nothing is left half-done.
      try {
        while (engine_.has_unfinished_requests()) engine_.step();
      } catch (const std::exception&) {
      }
      return;
    }
    for (auto& s : submits) admit(s);
    submits.clear();
    for (const auto& id : aborts) apply_abort(id);
    aborts.clear();
    if (!engine_.has_unfinished_requests()) {
      std::lock_guard<std::mutex> lk(metrics_mu_);
      metrics_ = engine_.metrics();
      continue;
    }
    std::vector<RequestOutput> outs;
    try {
      outs = engine_.step();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "engine step failed: %s; aborting all requests\n", e.what());
      fail_all(std::string("internal engine error: ") + e.what());
      try {
        while (engine_.has_unfinished_requests()) engine_.step();
      } catch (const std::exception&) {
      }
    }
    const auto now = Clock::now();
    for (auto& o : outs) deliver(o, now);
    outs.clear();  // freed before the trim below can hand its pages back
#if defined(__GLIBC__)
    // The engine just went idle: hand the heap's free pages back (glibc keeps what a burst of
    // requests freed in its arenas otherwise, so an idle server would sit at its peak heap).
    // Only at the busy -> idle edge, never between steps under load.
    if (!engine_.has_unfinished_requests()) malloc_trim(0);
#endif
    std::lock_guard<std::mutex> lk(metrics_mu_);
    metrics_ = engine_.metrics();
  }
}

}  // namespace vllm::engine
