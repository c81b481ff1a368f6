// ModelRunner: persistent-batch update and ForwardBatch assembly.
#include "engine/runner/model_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "engine/runtime_env.h"

namespace vllm::engine {

ModelRunner::ModelRunner(ModelExecutor& executor, int32_t max_num_seqs, int32_t max_model_len,
                         int block_size, int64_t max_num_batched_tokens,
                         const DecodeGraphOptions& graph)
    : executor_(executor),
      block_size_(block_size),
      batch_(max_num_seqs, max_model_len, (max_model_len + block_size - 1) / block_size),
      token_ids_(max_num_batched_tokens),
      positions_(max_num_batched_tokens),
      seq_of_token_(max_num_batched_tokens),
      logits_indices_(max_num_seqs + max_num_batched_tokens),
      slot_mapping_(max_num_batched_tokens),
      lora_ids_(max_num_batched_tokens) {
  out_.vocab_size = executor.vocab_size();
  out_.hidden_size = executor.hidden_size();
  hidden_indices_.reserve(max_num_batched_tokens);
  const RuntimeEnv& env = RuntimeEnv::get();
  dump_top2_ = env.dump_top2;
  DecodeGraphOptions g = graph;
  g.enabled = g.enabled && env.decode_graph && executor.supports_graphs();
  g.strict = g.strict || env.graph_strict;
  if (env.recapture_every > 0) g.recapture_every = env.recapture_every;
  if (g.enabled) {
    graph_ = std::make_unique<DecodeGraphDriver>(executor, executor.backend(), g, block_size,
                                                 max_num_seqs, batch_.max_blocks_per_req(),
                                                 max_num_batched_tokens);
  }
}

ModelRunner::~ModelRunner() = default;

bool ModelRunner::is_decode_only(const SchedulerOutput& so) const {
  if (so.scheduled.empty()) return false;
  for (const auto& s : so.scheduled) {
    const Request& r = *s.request;
    if (s.num_scheduled_tokens != 1 || r.num_computed_tokens + 1 != r.num_tokens() ||
        r.num_output_tokens() == 0)
      return false;
  }
  return true;
}

void ModelRunner::commit_sampled(const std::vector<int32_t>& tokens) {
  if (graph_ran_) graph_->commit_tokens(tokens);
}

void ModelRunner::dump_top2(const float* logits) {
  const int32_t V = out_.vocab_size;
  for (size_t i = 0; i < out_.requests.size(); ++i) {
    const float* l = logits + i * static_cast<size_t>(V);
    int32_t a = 0, b = -1;
    for (int32_t t = 1; t < V; ++t) {
      if (l[t] > l[a]) {
        b = a;
        a = t;
      } else if (b < 0 || l[t] > l[b]) {
        b = t;
      }
    }
    std::fprintf(stderr, "top2 step=%lld req=%s argmax=%d(%.6f) second=%d(%.6f) gap=%.6f%s\n",
                 static_cast<long long>(step_), out_.requests[i]->request_id.c_str(), a, l[a], b,
                 l[b], l[a] - l[b], graph_ran_ ? " graph" : "");
  }
}

void ModelRunner::update_states(const SchedulerOutput& so) {
  for (const auto& id : so.finished_req_ids) batch_.remove_request(id);
  for (const auto& id : so.preempted_req_ids) batch_.remove_request(id);
  for (const auto& s : so.scheduled) {
    const Request& r = *s.request;
    if (s.is_new) {
      // A resumed request may still sit in its old row when it was preempted and resumed
      // between two runner calls; start it over.
      batch_.remove_request(r.request_id);
      batch_.add_request(r.request_id, r.all_token_ids(), s.new_block_ids);
    } else {
      int32_t slot = batch_.slot_of(r.request_id);
      if (slot < 0) throw std::logic_error("ModelRunner: running request has no batch row");
      batch_.sync_tokens(slot, r.all_token_ids());
      batch_.append_block_ids(slot, s.new_block_ids);
    }
  }
  batch_.condense();
}

const RunnerOutput& ModelRunner::execute(const SchedulerOutput& so) {
  update_states(so);
  ++step_;
  out_.requests.clear();
  out_.prompt_rows.clear();
  out_.pooled_rows.clear();
  out_.pooled_done.clear();
  graph_ran_ = false;
  if (graph_ && is_decode_only(so) && graph_->handles(static_cast<int32_t>(so.scheduled.size()))) {
    rows_.clear();
    for (const auto& s : so.scheduled) {
      Request* r = s.request;
      const int32_t slot = batch_.slot_of(r->request_id);
      DecodeRow row;
      row.request_id = &r->request_id;
      row.position = static_cast<int32_t>(r->num_computed_tokens);
      row.token = batch_.token_row(slot)[row.position];
      row.blocks = batch_.block_row(slot);
      row.num_blocks = batch_.num_blocks(slot);
      row.lora_id = r->sampling_params.lora_id;
      rows_.push_back(row);
      out_.requests.push_back(r);
    }
    const auto t0 = std::chrono::steady_clock::now();
    out_.logits = graph_->step(rows_);
    out_.argmax = graph_->argmax_ids();
    forward_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++forward_calls_;
    graph_ran_ = true;
    if (observer_) observer_(out_.requests, out_.logits, out_.vocab_size);
    if (dump_top2_) dump_top2(out_.logits);
    return out_;
  }
  if (graph_) graph_->invalidate();
  out_.argmax = nullptr;
  int64_t n_tok = 0;
  int64_t n_logits = 0;
  bool any_lora = false;
  prompt_indices_.clear();
  hidden_indices_.clear();
  if (so.total_num_scheduled_tokens > static_cast<int64_t>(token_ids_.size()))
    throw std::logic_error("ModelRunner: more tokens than max_num_batched_tokens");
  for (const auto& s : so.scheduled) {
    Request* r = s.request;
    const int32_t slot = batch_.slot_of(r->request_id);
    const int32_t* toks = batch_.token_row(slot);
    const int32_t* row = batch_.block_row(slot);
    const int64_t start = r->num_computed_tokens;
    const int64_t end = start + s.num_scheduled_tokens;
    if (end > batch_.num_tokens(slot) ||
        (end + block_size_ - 1) / block_size_ > batch_.num_blocks(slot))
      throw std::logic_error("ModelRunner: scheduled tokens beyond the request's tokens/blocks");
    const int64_t first_tok = n_tok;
    const int32_t lora = r->sampling_params.lora_id;
    any_lora = any_lora || lora != 0;
    for (int64_t p = start; p < end; ++p, ++n_tok) {
      lora_ids_[n_tok] = lora;
      token_ids_[n_tok] = toks[p];
      positions_[n_tok] = static_cast<int32_t>(p);
      seq_of_token_[n_tok] = slot;
      slot_mapping_[n_tok] =
          static_cast<int64_t>(row[p / block_size_]) * block_size_ + p % block_size_;
    }
    if (r->is_pooling()) {
      int64_t lo = start, hi = end;  // MEAN: every row
      switch (r->sampling_params.pooling->type) {
        case PoolingType::kLast:
          lo = end == r->num_tokens() ? end - 1 : end;
          break;
        case PoolingType::kCls:
          hi = start == 0 ? 1 : 0;
          break;
        case PoolingType::kMean:
          break;
      }
      if (lo < hi) {
        out_.pooled_rows.push_back(PooledRows{r, lo, hi - lo, nullptr});
        for (int64_t p = lo; p < hi; ++p)
          hidden_indices_.push_back(static_cast<int32_t>(first_tok + (p - start)));
      }
      if (end == r->num_tokens()) out_.pooled_done.push_back(r);
      continue;
    }
    // Prompt positions not scored yet (a recomputed prefix after preemption was scored).
    const int64_t lo = std::max(start, r->num_prompt_logprobs);
    const int64_t hi = std::min(end, r->num_prompt_logprob_positions());
    if (lo < hi) {
      out_.prompt_rows.push_back(PromptLogitsRows{r, lo, hi - lo, nullptr});
      for (int64_t p = lo; p < hi; ++p)
        prompt_indices_.push_back(static_cast<int32_t>(first_tok + (p - start)));
    }
    if (end == r->num_tokens()) {
      logits_indices_[n_logits++] = static_cast<int32_t>(n_tok - 1);
      out_.requests.push_back(r);
    }
  }
  // Prompt-logprob rows follow the sampling rows.
  const int64_t n_sample = n_logits;
  for (int32_t idx : prompt_indices_) logits_indices_[n_logits++] = idx;
  vllm::model::ForwardBatch fb;
  fb.n_tok = n_tok;
  fb.token_ids = token_ids_.data();
  fb.positions = positions_.data();
  fb.seq_of_token = seq_of_token_.data();
  fb.slot_mapping = slot_mapping_.data();
  fb.block_tables = batch_.block_table();
  fb.bt_stride = batch_.max_blocks_per_req();
  fb.n_seqs = batch_.num_reqs();
  fb.logits_indices = logits_indices_.data();
  fb.n_logits = n_logits;
  fb.lora_ids = any_lora ? lora_ids_.data() : nullptr;
  if (!hidden_indices_.empty()) {
    const size_t hneed = hidden_indices_.size() * static_cast<size_t>(out_.hidden_size);
    if (hidden_.size() < hneed) hidden_.resize(hneed);
    fb.hidden_indices = hidden_indices_.data();
    fb.n_hidden = static_cast<int64_t>(hidden_indices_.size());
    fb.hidden_out = hidden_.data();
  }
  // Grown to the largest batch seen rather than max_num_seqs rows up front: 256 rows of a
  // 150k vocabulary would be 150 MiB that a small deployment never touches.
  const size_t need = static_cast<size_t>(n_logits) * static_cast<size_t>(out_.vocab_size);
  if (logits_.size() < need) logits_.resize(need);
  if (n_tok > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    executor_.execute(fb, logits_.data());
    forward_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++forward_calls_;
  }
  out_.logits = logits_.data();
  const float* rows = logits_.data() + static_cast<size_t>(n_sample) * out_.vocab_size;
  for (PromptLogitsRows& pr : out_.prompt_rows) {
    pr.logits = rows;
    rows += static_cast<size_t>(pr.num_rows) * out_.vocab_size;
  }
  const float* hrows = hidden_.data();
  for (PooledRows& pr : out_.pooled_rows) {
    pr.hidden = hrows;
    hrows += static_cast<size_t>(pr.num_rows) * out_.hidden_size;
  }
  if (observer_ && !out_.requests.empty()) observer_(out_.requests, out_.logits, out_.vocab_size);
  if (dump_top2_) dump_top2(out_.logits);
  return out_;
}

}  // namespace vllm::engine
