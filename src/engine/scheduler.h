// Scheduler: vLLM V1's policy. One token budget per step; running requests first (decodes and
// unfinished prefill chunks), then waiting ones in FCFS order (or by (priority, arrival) under
// the priority policy); a chunk is min(remaining, the long-prefill cap, budget). When blocks run
// out the newest running request (the lowest-priority one under the priority policy) is preempted
// (blocks freed, all of its tokens recomputed later). It owns the Requests and the KVCacheManager.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/kv_cache/kv_cache_manager.h"
#include "engine/request.h"

namespace vllm::engine {

// --scheduling-policy: fcfs (arrival order) or priority (lower `priority` first, then arrival).
enum class SchedulingPolicy { kFcfs, kPriority };

struct SchedulerConfig {
  int64_t max_num_batched_tokens = 2048;
  int32_t max_num_seqs = 256;
  int32_t max_model_len = 2048;
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  // Prompt positions per step whose logits are kept for prompt_logprobs: each is a full
  // vocabulary row, so this bounds the step's logits buffer (256 rows of a 152k vocabulary are
  // 155 MiB). Requests asking for prompt logprobs get shorter prefill chunks instead.
  int64_t max_prompt_logprob_rows = 256;
  // vLLM's --long-prefill-token-threshold: while more than one request is running or waiting,
  // no request gets a chunk longer than this (0: no cap). With the adaptive switch the cap is
  // raised to max_num_batched_tokens / (running + waiting) when that is larger.
  int64_t long_prefill_token_threshold = 0;
  bool long_prefill_token_threshold_adaptive = false;
  // vLLM's --max-num-active-seqs: waiting requests are admitted while fewer than this many run
  // (default max_num_seqs).
  int32_t max_num_active_seqs = 0;  // 0: max_num_seqs
  // vLLM's --max-num-scheduled-tokens: tokens issued per step (default and at most
  // max_num_batched_tokens here, where no step appends speculative tokens).
  int64_t max_num_scheduled_tokens = 0;  // 0: max_num_batched_tokens
  // vLLM's --max-loras: distinct LoRA adapters per step. A waiting request of another adapter
  // waits (later ones may go first) while this many are scheduled. 0: no limit.
  int32_t max_loras = 0;
};

struct ScheduledRequest {
  Request* request = nullptr;
  int64_t num_scheduled_tokens = 0;
  // New or resumed after preemption: the runner (re)builds its row from scratch.
  bool is_new = false;
  // New: every block id of the request. Otherwise: the blocks appended this step.
  std::vector<int32_t> new_block_ids;
};

struct SchedulerOutput {
  std::vector<ScheduledRequest> scheduled;  // running first, then newly admitted
  int64_t total_num_scheduled_tokens = 0;
  // Requests that left the batch since the last step (finished or aborted), and those
  // preempted in this one: the runner drops their rows.
  std::vector<std::string> finished_req_ids;
  std::vector<std::string> preempted_req_ids;
  // Requests that can never be scheduled (finished FINISHED_IGNORED in this step).
  std::vector<std::string> ignored_req_ids;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, int64_t num_blocks, int block_size,
            bool enable_prefix_caching);

  void add_request(std::unique_ptr<Request> req);
  SchedulerOutput schedule();
  // After the forward pass: the scheduled tokens' K/V is written.
  void update_after_execute(const SchedulerOutput& out);
  // Removes a request from its queue, frees its blocks and drops it.
  void finish_request(const std::string& request_id, RequestStatus status);

  Request* get_request(const std::string& request_id);
  bool has_unfinished_requests() const { return !waiting_.empty() || !running_.empty(); }
  size_t num_running() const { return running_.size(); }
  size_t num_waiting() const { return waiting_.size(); }
  // The distinct LoRA adapter ids of the running and of the waiting requests, ascending.
  void lora_ids(std::vector<int32_t>& running, std::vector<int32_t>& waiting) const;
  int64_t num_preemptions() const { return num_preemptions_; }
  KVCacheManager& kv_cache_manager() { return kv_; }
  const KVCacheManager& kv_cache_manager() const { return kv_; }
  const SchedulerConfig& config() const { return config_; }

 private:
  void preempt(Request* req);
  // Puts a request into the waiting queue at its place under the policy.
  void enqueue_waiting(Request* req, bool front);
  // Shortens a chunk of n tokens from req's computed ones so that its prompt-logprob rows fit
  // in *rows_left, and takes them from it. 0: nothing can be scheduled for it this step.
  static int64_t fit_prompt_logprob_rows(const Request& req, int64_t n, int64_t* rows_left);

  SchedulerConfig config_;
  KVCacheManager kv_;
  std::unordered_map<std::string, std::unique_ptr<Request>> requests_;
  std::deque<Request*> waiting_;
  std::vector<Request*> running_;
  std::vector<std::string> finished_since_last_;
  int64_t num_preemptions_ = 0;
};

}  // namespace vllm::engine
