// Scheduler::schedule and the bookkeeping around it.
#include "engine/scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace vllm::engine {

Scheduler::Scheduler(const SchedulerConfig& config, int64_t num_blocks, int block_size,
                     bool enable_prefix_caching)
    : config_(config), kv_(num_blocks, block_size, enable_prefix_caching) {
  if (config_.max_num_batched_tokens < 1 || config_.max_num_seqs < 1 || config_.max_model_len < 1)
    throw std::invalid_argument(
        "max_num_batched_tokens, max_num_seqs and max_model_len must be positive");
}

void Scheduler::add_request(std::unique_ptr<Request> req) {
  Request* r = req.get();
  if (!requests_.emplace(r->request_id, std::move(req)).second)
    throw std::invalid_argument("request id '" + r->request_id + "' is already in use");
  enqueue_waiting(r, false);
}

void Scheduler::enqueue_waiting(Request* req, bool front) {
  if (config_.policy == SchedulingPolicy::kFcfs) {
    // A preempted request resumes before everything that arrived after it.
    if (front)
      waiting_.push_front(req);
    else
      waiting_.push_back(req);
    return;
  }
  auto before = [](const Request* a, const Request* b) {
    return a->priority != b->priority ? a->priority < b->priority
                                      : a->arrival_index < b->arrival_index;
  };
  waiting_.insert(std::upper_bound(waiting_.begin(), waiting_.end(), req, before), req);
}

int64_t Scheduler::fit_prompt_logprob_rows(const Request& req, int64_t n, int64_t* rows_left) {
  if (!req.wants_prompt_logprobs()) return n;
  const int64_t from = req.num_computed_tokens;
  const int64_t lo = std::max(from, req.num_prompt_logprobs);
  const int64_t hi = std::min(from + n, req.num_prompt_logprob_positions());
  if (lo >= hi) return n;
  const int64_t rows = std::min(hi - lo, *rows_left);
  *rows_left -= rows;
  return rows < hi - lo ? lo + rows - from : n;
}

Request* Scheduler::get_request(const std::string& request_id) {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : it->second.get();
}

void Scheduler::preempt(Request* req) {
  kv_.free(*req);
  req->status = RequestStatus::PREEMPTED;
  req->num_computed_tokens = 0;
  ++req->num_preemptions;
  ++num_preemptions_;
  enqueue_waiting(req, true);
}

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput out;
  out.finished_req_ids.swap(finished_since_last_);
  int64_t budget = config_.max_num_batched_tokens;
  if (config_.max_num_scheduled_tokens > 0)
    budget = std::min(budget, config_.max_num_scheduled_tokens);
  int64_t logprob_rows = config_.max_prompt_logprob_rows;
  // vLLM's long-prefill cap, counted once per step: a lone request is starving nobody.
  const auto eligible = static_cast<int64_t>(running_.size() + waiting_.size());
  int64_t long_cap = eligible > 1 ? config_.long_prefill_token_threshold : 0;
  if (long_cap > 0 && config_.long_prefill_token_threshold_adaptive)
    long_cap = std::max(long_cap, config_.max_num_batched_tokens / eligible);
  auto capped = [long_cap](int64_t n) { return long_cap > 0 && long_cap < n ? long_cap : n; };
  const size_t max_active = config_.max_num_active_seqs > 0
                                ? static_cast<size_t>(config_.max_num_active_seqs)
                                : static_cast<size_t>(config_.max_num_seqs);

  // Running requests, oldest first; the newest one gives way when blocks run out.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request* req = running_[i];
    int64_t n = std::min(capped(req->num_tokens() - req->num_computed_tokens), budget);
    n = fit_prompt_logprob_rows(*req, n, &logprob_rows);
    if (n <= 0) {
      ++i;
      continue;
    }
    const size_t had_blocks = kv_.get_block_ids(req->request_id).size();
    bool scheduled = true;
    while (!kv_.allocate_slots(*req, n)) {
      // FCFS: the newest. Priority: the lowest priority (then newest) among those not yet
      // scheduled this step (vLLM also un-schedules earlier ones; here they keep their turn).
      auto victim_it = running_.end() - 1;
      if (config_.policy == SchedulingPolicy::kPriority)
        for (auto it = running_.begin() + static_cast<ptrdiff_t>(i); it != running_.end(); ++it)
          if ((*it)->priority > (*victim_it)->priority ||
              ((*it)->priority == (*victim_it)->priority &&
               (*it)->arrival_index > (*victim_it)->arrival_index))
            victim_it = it;
      Request* victim = *victim_it;
      running_.erase(victim_it);
      preempt(victim);
      out.preempted_req_ids.push_back(victim->request_id);
      if (victim == req) {
        scheduled = false;
        break;
      }
    }
    // It was erased at i: running_[i] is now the next one (none under FCFS, whose victim is
    // always the last).
    if (!scheduled) continue;
    const auto& blocks = kv_.get_block_ids(req->request_id);
    ScheduledRequest s{req, n, false, {}};
    s.new_block_ids.assign(blocks.begin() + static_cast<ptrdiff_t>(had_blocks), blocks.end());
    out.scheduled.push_back(std::move(s));
    budget -= n;
    ++i;
  }

  // vLLM's max_loras: the adapters already in the step.
  std::vector<int32_t> loras;
  auto note_lora = [&loras](const Request& r) {
    const int32_t id = r.sampling_params.lora_id;
    if (id > 0 && std::find(loras.begin(), loras.end(), id) == loras.end()) loras.push_back(id);
  };
  for (const auto& s : out.scheduled) note_lora(*s.request);

  // Waiting requests in arrival order, unless this step already had to preempt.
  if (out.preempted_req_ids.empty()) {
    for (size_t wi = 0; wi < waiting_.size() && budget > 0 && running_.size() < max_active;) {
      Request* req = waiting_[wi];
      const int32_t lora = req->sampling_params.lora_id;
      if (config_.max_loras > 0 && lora > 0 &&
          static_cast<int32_t>(loras.size()) >= config_.max_loras &&
          std::find(loras.begin(), loras.end(), lora) == loras.end()) {
        ++wi;  // another adapter's turn first; it keeps its place in the queue
        continue;
      }
      // Prompt logprobs need the logits of every prompt position, MEAN / CLS pooling the
      // hidden states of every (the first) one: no prefix-cache hit (as vLLM), though the
      // blocks such a request computes are published for others.
      ComputedBlocks hit =
          req->wants_prompt_logprobs() ||
                  (req->is_pooling() && req->sampling_params.pooling->skips_prefix_cache())
              ? ComputedBlocks{}
              : kv_.get_computed_blocks(*req);
      int64_t n = std::min(capped(req->num_tokens() - hit.num_tokens), budget);
      n = fit_prompt_logprob_rows(*req, n, &logprob_rows);
      if (n <= 0) break;
      if (!kv_.allocate_slots(*req, n, &hit)) {
        if (running_.empty()) {
          // Every block is free or evictable and it still does not fit: it never will.
          out.ignored_req_ids.push_back(req->request_id);
          finish_request(req->request_id, RequestStatus::FINISHED_IGNORED);
          continue;
        }
        break;
      }
      waiting_.erase(waiting_.begin() + static_cast<ptrdiff_t>(wi));
      note_lora(*req);
      req->num_computed_tokens = hit.num_tokens;
      if (req->num_cached_tokens < 0) req->num_cached_tokens = hit.num_tokens;
      req->status = RequestStatus::RUNNING;
      running_.push_back(req);
      const auto& blocks = kv_.get_block_ids(req->request_id);
      out.scheduled.push_back(ScheduledRequest{req, n, true, blocks});
      budget -= n;
    }
  }
  for (const auto& s : out.scheduled) out.total_num_scheduled_tokens += s.num_scheduled_tokens;
  return out;
}

void Scheduler::lora_ids(std::vector<int32_t>& running, std::vector<int32_t>& waiting) const {
  auto collect = [](const auto& reqs, std::vector<int32_t>& ids) {
    ids.clear();
    for (const Request* r : reqs)
      if (r->sampling_params.lora_id > 0) ids.push_back(r->sampling_params.lora_id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  };
  collect(running_, running);
  collect(waiting_, waiting);
}

void Scheduler::update_after_execute(const SchedulerOutput& out) {
  for (const auto& s : out.scheduled) {
    Request* req = s.request;
    req->num_computed_tokens += s.num_scheduled_tokens;
    kv_.cache_blocks(*req, req->num_computed_tokens);
  }
}

void Scheduler::finish_request(const std::string& request_id, RequestStatus status) {
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  Request* req = it->second.get();
  // The caller may already have set a finished status, so look in both queues.
  if (auto r = std::find(running_.begin(), running_.end(), req); r != running_.end()) {
    running_.erase(r);
    finished_since_last_.push_back(request_id);
  } else if (auto w = std::find(waiting_.begin(), waiting_.end(), req); w != waiting_.end()) {
    waiting_.erase(w);
  }
  kv_.free(*req);
  req->status = status;
  requests_.erase(it);
}

}  // namespace vllm::engine
