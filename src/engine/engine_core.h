// EngineCore: the step loop — schedule, execute, sample, then update_from_output (append the
// token, detokenize, check stop tokens / eos / min_tokens / max_tokens / stop strings, finish
// requests). Single-threaded: one engine thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/model_executor.h"
#include "engine/outputs.h"
#include "engine/runner/model_runner.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/text_stream.h"

namespace vllm::engine {

class EngineCore {
 public:
  EngineCore(const SchedulerConfig& sched, int64_t num_blocks, int block_size,
             bool enable_prefix_caching, ModelExecutor& executor,
             const DecodeGraphOptions& graph = DecodeGraphOptions{false});

  void add_request(std::unique_ptr<Request> req);
  std::vector<RequestOutput> step();
  // Finishes the request as aborted; its final output comes with the next step(). False when
  // the id is unknown (already finished).
  bool abort_request(const std::string& request_id);
  bool has_unfinished_requests() const {
    return scheduler_.has_unfinished_requests() || !pending_.empty();
  }

  EngineMetrics metrics() const;
  Scheduler& scheduler() { return scheduler_; }
  const Scheduler& scheduler() const { return scheduler_; }
  const ModelRunner& model_runner() const { return runner_; }
  ModelRunner& model_runner_mut() { return runner_; }
  // The last step's scheduling decision (tests inspect batches, chunks and preemptions).
  const SchedulerOutput& last_scheduler_output() const { return last_so_; }

 private:
  // Appends `token` and decides whether the request is done; fills its output.
  void update_from_output(Request& req, int32_t token, RequestOutput& out);
  // Advances the request's grammar with its new token (or activates it after the start
  // token). False: the token breaks the grammar, which only happens when another constraint
  // left nothing the grammar allows.
  bool advance_grammar(Request& req, int32_t token);
  void check_stop_strings(Request& req, size_t new_chars, RequestOutput& out);
  void take_text_delta(Request& req, RequestOutput& out);
  // Turns this step's prompt-position logits into the requests' prompt logprobs.
  void score_prompt(const RunnerOutput& ro);
  // Adds this step's hidden-state rows to the pooling requests' pooled vectors and finishes
  // those whose prompt is done, each with its embedding.
  void pool(const RunnerOutput& ro, std::vector<RequestOutput>& outs);

  Scheduler scheduler_;
  ModelRunner runner_;
  Sampler sampler_;
  SchedulerOutput last_so_;
  std::vector<RequestOutput> pending_;
  std::vector<int32_t> sampled_;  // this step's tokens, in logits row order
  std::vector<uint32_t> mask_;    // one grammar bitmask row, ceil(vocab / 32) words
  EngineMetrics m_;
};

}  // namespace vllm::engine
