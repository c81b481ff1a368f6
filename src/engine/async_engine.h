// AsyncEngine: one engine thread owns an LLMEngine and loops step() while work exists; other
// threads (HTTP handlers, C API callers) submit requests and read per-request output streams.
// The engine thread never waits on a reader: each stream is an unbounded queue it only pushes
// to, so a slow client cannot stall the others. Aborts and submissions are applied at the next
// step boundary.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/llm_engine.h"
#include "engine/outputs.h"
#include "engine/sampling_params.h"

namespace vllm::engine {

// Thrown by AsyncEngine::add_request when the waiting queue is full (HTTP 503).
class EngineOverloaded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by AsyncEngine::add_request after shutdown() began.
class EngineStopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The output channel of one request. The engine thread pushes; one reader pops.
class RequestStream {
 public:
  enum class PopResult { kOutput, kTimeout, kClosed };

  explicit RequestStream(std::string id) : id_(std::move(id)) {}
  const std::string& request_id() const { return id_; }

  // Blocks until the engine thread has validated the request (or rejected it). Returns the
  // rejection message; empty when the request was admitted.
  std::string wait_admitted();
  // Next output, waiting up to `timeout` so the caller can check its client in between.
  // kClosed once the final output has been popped (or the request was rejected / aborted
  // without one).
  PopResult pop(RequestOutput& out, std::chrono::milliseconds timeout);
  bool finished() const;

  // Engine-thread side.
  void admit(std::string error);
  void push(RequestOutput out);
  void close();

 private:
  std::string id_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool admitted_ = false;
  std::string error_;
  std::deque<RequestOutput> queue_;
  bool closed_ = false;
};

// Engine-side timing hooks (TTFT, inter-token latency, e2e) for /metrics. Called on the engine
// thread; implementations must be thread-safe against their own readers and cheap.
class EngineStatsObserver {
 public:
  virtual ~EngineStatsObserver() = default;
  virtual void on_first_token(double ttft_s) = 0;
  virtual void on_inter_token(double itl_s) = 0;
  virtual void on_finished(const RequestOutput& final_out, double e2e_s) = 0;
  virtual void on_rejected() {}
  // check_admission refused a request; `reason` is vLLM's label (max_num_queued_reqs or
  // max_num_queued_tokens). Called on the refused caller's thread.
  virtual void on_admission_rejected(const char* /*reason*/) {}
};

struct AsyncEngineOptions {
  // Requests queued but not yet running above which add_request throws EngineOverloaded.
  int64_t max_waiting_requests = 1024;
  // vLLM's --max-num-queued-reqs: unfinished requests (waiting + running, a choice of n > 1
  // each) past which check_admission refuses.
  std::optional<int64_t> max_num_queued_reqs;
  // vLLM's --max-num-queued-tokens: prompt tokens of requests still in prefill (their whole
  // prompt until their first token, as vLLM counts them) at which check_admission refuses.
  std::optional<int64_t> max_num_queued_tokens;
};

class AsyncEngine {
 public:
  // `engine` must outlive this object; after construction only the engine thread touches it.
  explicit AsyncEngine(LLMEngine& engine, AsyncEngineOptions opts = {},
                       EngineStatsObserver* observer = nullptr);
  ~AsyncEngine();
  AsyncEngine(const AsyncEngine&) = delete;
  AsyncEngine& operator=(const AsyncEngine&) = delete;

  // Queues a request. Throws EngineOverloaded / EngineStopped at once; validation errors come
  // back through stream->wait_admitted().
  std::shared_ptr<RequestStream> add_request(const std::string& request_id,
                                             std::vector<int32_t> prompt_token_ids,
                                             const SamplingParams& params, int64_t priority = 0);
  // Aborts at the next step boundary (frees its KV blocks then); the stream is closed with a
  // final "abort" output. Unknown or finished ids are ignored.
  void abort(const std::string& request_id);

  // The engine's counters as of the last step (no lock on the engine itself).
  EngineMetrics metrics() const;
  // Requests submitted and not finished (queued, waiting or running).
  int64_t num_unfinished() const { return num_unfinished_.load(); }
  // Prompt tokens of the requests submitted that have not made their first token yet.
  int64_t num_queued_tokens() const { return queued_tokens_.load(); }

  // vLLM's admission check for a request of `n` sequences, before its add_request calls:
  // throws EngineOverloaded with vLLM's message when --max-num-queued-reqs or
  // --max-num-queued-tokens would be exceeded (HTTP 503, so a client retries elsewhere).
  void check_admission(int64_t n) const;

  // Graceful stop (vLLM's --shutdown-timeout): new requests are refused with EngineStopped
  // from now on, and the requests already submitted run on until they finish or `grace` has
  // passed. Returns how many were still unfinished then (shutdown() aborts them).
  int64_t drain(std::chrono::milliseconds grace);
  const EngineConfig& config() const { return config_; }

  // Finishes: aborts everything still running, closes every stream, joins the thread.
  void shutdown();

 private:
  struct Submission {
    std::string id;
    std::vector<int32_t> prompt;
    SamplingParams params;
    int64_t priority = 0;
    std::shared_ptr<RequestStream> stream;
    std::chrono::steady_clock::time_point arrival;
  };
  struct Live {
    std::shared_ptr<RequestStream> stream;
    std::chrono::steady_clock::time_point arrival;
    std::chrono::steady_clock::time_point last_token;
    bool got_first = false;
    int64_t queued_tokens = 0;  // its share of queued_tokens_ until its first token
  };

  void loop();
  void admit(Submission& s);
  void apply_abort(const std::string& id);
  void deliver(RequestOutput& out, std::chrono::steady_clock::time_point now);
  void fail_all(const std::string& why);
  void release_queued(Live& l);

  LLMEngine& engine_;
  const EngineConfig config_;
  AsyncEngineOptions opts_;
  EngineStatsObserver* observer_;

  std::mutex mu_;  // guards the inbox fields below
  std::condition_variable cv_;
  std::vector<Submission> submits_;
  std::vector<std::string> aborts_;
  bool stop_ = false;
  bool draining_ = false;

  mutable std::mutex metrics_mu_;
  EngineMetrics metrics_;
  std::atomic<int64_t> num_unfinished_{0};
  std::atomic<int64_t> queued_tokens_{0};

  // Engine-thread only.
  std::unordered_map<std::string, Live> live_;

  std::thread thread_;
};

}  // namespace vllm::engine
