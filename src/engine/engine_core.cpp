// EngineCore::step and the per-token stop logic (vLLM's check_stop + detokenizer stop strings).
#include "engine/engine_core.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "engine/structured_output/matcher.h"

namespace vllm::engine {

EngineCore::EngineCore(const SchedulerConfig& sched, int64_t num_blocks, int block_size,
                       bool enable_prefix_caching, ModelExecutor& executor,
                       const DecodeGraphOptions& graph)
    : scheduler_(sched, num_blocks, block_size, enable_prefix_caching),
      runner_(executor, sched.max_num_seqs, sched.max_model_len, block_size,
              sched.max_num_batched_tokens, graph),
      sampler_(executor.vocab_size()),
      mask_((executor.vocab_size() + 31) / 32) {}

void EngineCore::add_request(std::unique_ptr<Request> req) {
  scheduler_.add_request(std::move(req));
}

static RequestOutput make_output(const Request& req) {
  RequestOutput o;
  o.request_id = req.request_id;
  o.num_prompt_tokens = req.num_prompt_tokens();
  o.num_output_tokens = req.num_output_tokens();
  o.num_cached_tokens = std::max<int64_t>(0, req.num_cached_tokens);
  return o;
}

bool EngineCore::abort_request(const std::string& request_id) {
  Request* req = scheduler_.get_request(request_id);
  if (!req) return false;
  RequestOutput o = make_output(*req);
  o.finished = true;
  o.finish_reason = "abort";
  pending_.push_back(std::move(o));
  scheduler_.finish_request(request_id, RequestStatus::FINISHED_ABORTED);
  ++m_.num_requests_finished;
  return true;
}

void EngineCore::take_text_delta(Request& req, RequestOutput& out) {
  // While running, hold back what could still turn out to be the start of a stop string.
  size_t hold = 0;
  const SamplingParams& p = req.sampling_params;
  if (!req.is_finished() && !p.include_stop_str_in_output)
    for (const auto& s : p.stop) hold = std::max(hold, s.size() - 1);
  const size_t end = req.output_text.size() > hold ? req.output_text.size() - hold : 0;
  if (end > req.text_sent) {
    out.text_delta = req.output_text.substr(req.text_sent, end - req.text_sent);
    req.text_sent = end;
  }
}

void EngineCore::check_stop_strings(Request& req, size_t new_chars, RequestOutput& out) {
  const SamplingParams& p = req.sampling_params;
  std::string& text = req.output_text;
  for (const std::string& stop : p.stop) {
    const size_t window = new_chars + stop.size() - 1;
    const size_t from = text.size() > window ? text.size() - window : 0;
    size_t at = text.find(stop, from);
    if (at == std::string::npos) continue;
    if (p.include_stop_str_in_output) at += stop.size();
    if (at < text.size()) text.resize(at);
    req.status = RequestStatus::FINISHED_STOPPED;
    req.stop_reason = stop;
    return;
  }
}

bool EngineCore::advance_grammar(Request& req, int32_t token) {
  if (!req.matcher) return true;
  if (!req.grammar_active) {
    // An implicit reasoning end is the grammar's first token (those it rejects are masked).
    const std::vector<int32_t>& implicit = req.sampling_params.grammar_implicit_starts;
    if (std::find(implicit.begin(), implicit.end(), token) != implicit.end()) {
      req.grammar_active = true;
      return req.matcher->accept(token);
    }
    // A start sequence ends with this token (the output so far holds the ones before it).
    for (const std::vector<int32_t>& seq : req.sampling_params.grammar_start_sequences) {
      const int64_t n = static_cast<int64_t>(seq.size());
      if (n == 0 || seq.back() != token || req.num_output_tokens() < n - 1) continue;
      const int32_t* out = req.output_token_ids() + req.num_output_tokens() - (n - 1);
      if (std::equal(seq.begin(), seq.end() - 1, out)) req.grammar_active = true;
    }
    return true;
  }
  return req.matcher->accept(token);
}

void EngineCore::update_from_output(Request& req, int32_t token, RequestOutput& out) {
  const SamplingParams& p = req.sampling_params;
  req.append_output_token(token);
  if (p.thinking_budget) {
    if (token == p.think_start_token) {
      req.in_thinking = true;
      req.thinking_tokens = 0;
    } else if (token == p.think_end_token) {
      req.in_thinking = false;
    } else if (req.in_thinking) {
      ++req.thinking_tokens;
    }
  }
  out.new_token_ids.push_back(token);
  bool stopped_by_token = false;
  // The grammar accepted a stop token: the output is complete even when this request would
  // not stop on that token (ignore_eos), since the grammar allows nothing after it.
  const bool grammar_done = req.constrained_now() && req.matcher->is_terminated();
  if (req.num_output_tokens() >= p.min_tokens) {
    if (!p.ignore_eos && req.eos_token_id && token == *req.eos_token_id) {
      req.status = RequestStatus::FINISHED_STOPPED;
      stopped_by_token = true;
    } else if (std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), token) !=
               p.stop_token_ids.end()) {
      req.status = RequestStatus::FINISHED_STOPPED;
      req.stop_reason = token;
      stopped_by_token = true;
    }
  }
  if (!req.is_finished() && grammar_done) {
    req.status = RequestStatus::FINISHED_STOPPED;
    stopped_by_token = true;
  }
  if (!req.is_finished() && (req.num_output_tokens() >= req.max_tokens))
    req.status = RequestStatus::FINISHED_LENGTH_CAPPED;
  if (req.text_stream && !(stopped_by_token && !p.include_stop_str_in_output)) {
    std::string piece = req.text_stream->append(token);
    req.output_text += piece;
    if (!stopped_by_token && !p.stop.empty() && req.num_output_tokens() > p.min_tokens)
      check_stop_strings(req, piece.size(), out);
  }
  take_text_delta(req, out);
  if (req.is_finished()) {
    out.finished = true;
    out.finish_reason = finish_reason(req.status);
    out.stop_reason = req.stop_reason;
  }
  out.num_output_tokens = req.num_output_tokens();
}

std::vector<RequestOutput> EngineCore::step() {
  std::vector<RequestOutput> outs;
  outs.swap(pending_);
  if (!scheduler_.has_unfinished_requests()) return outs;
  last_so_ = scheduler_.schedule();
  ++m_.num_steps;
  for (const auto& id : last_so_.ignored_req_ids) {
    RequestOutput o;
    o.request_id = id;
    o.finished = true;
    o.finish_reason = "length";
    o.error = "request does not fit in the KV cache even with every other request evicted";
    outs.push_back(std::move(o));
    ++m_.num_requests_finished;
  }
  const RunnerOutput& ro = runner_.execute(last_so_);
  scheduler_.update_after_execute(last_so_);
  score_prompt(ro);
  pool(ro, outs);
  sampled_.clear();
  bool masked_step = false;
  for (size_t i = 0; i < ro.requests.size(); ++i) {
    Request& req = *ro.requests[i];
    const float* row = ro.logits + i * static_cast<size_t>(ro.vocab_size);
    RequestOutput o = make_output(req);
    TokenLogprobs lp;
    const bool constrained = req.constrained_now();
    const auto t0 =
        constrained ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    if (constrained) req.matcher->fill_mask(mask_);
    const int32_t tok =
        sampler_.sample(req, row, req.sampling_params.logprobs ? &lp : nullptr,
                        ro.argmax ? ro.argmax[i] : -1, constrained ? mask_.data() : nullptr);
    sampled_.push_back(tok);
    const bool grammar_ok = advance_grammar(req, tok);
    if (constrained) {
      m_.structured_output_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++m_.structured_output_rows;
      masked_step = true;
    }
    if (req.num_output_tokens() == 0) m_.prompt_tokens_total += req.num_prompt_tokens();
    ++m_.generation_tokens_total;
    if (!grammar_ok) {
      // Another constraint (allowed_token_ids, min_tokens, bad_words) masked every token the
      // grammar allows: finish with an error rather than emit text that breaks the grammar.
      o.finished = true;
      o.finish_reason = "abort";
      o.error =
          "structured output: no token satisfies both the grammar and the request's "
          "other constraints (allowed_token_ids, bad_words, min_tokens, logit_bias)";
      scheduler_.finish_request(req.request_id, RequestStatus::FINISHED_ABORTED);
      ++m_.num_requests_finished;
      outs.push_back(std::move(o));
      continue;
    }
    update_from_output(req, tok, o);
    if (req.wants_prompt_logprobs() && req.num_output_tokens() == 1)
      o.prompt_logprobs = std::move(req.prompt_logprobs);
    if (req.sampling_params.logprobs) {
      req.logprobs.push_back(lp);
      o.logprobs.push_back(std::move(lp));
    }
    if (req.is_finished()) {
      scheduler_.finish_request(req.request_id, req.status);
      ++m_.num_requests_finished;
    }
    outs.push_back(std::move(o));
  }
  if (masked_step) ++m_.structured_output_steps;
  runner_.commit_sampled(sampled_);
  return outs;
}

void EngineCore::score_prompt(const RunnerOutput& ro) {
  for (const PromptLogitsRows& pr : ro.prompt_rows) {
    Request& req = *pr.request;
    if (pr.first_position != req.num_prompt_logprobs)
      throw std::logic_error("EngineCore: prompt logprob rows out of order for request " +
                             req.request_id);
    const int32_t* ids = req.prompt_token_ids();
    for (int64_t r = 0; r < pr.num_rows; ++r) {
      const int64_t pos = pr.first_position + r;
      TokenLogprobs lp;
      sampler_.compute_logprobs(pr.logits + r * static_cast<size_t>(ro.vocab_size), ids[pos + 1],
                                *req.sampling_params.prompt_logprobs, &lp);
      req.prompt_logprobs.push_back(std::move(lp));
    }
    req.num_prompt_logprobs += pr.num_rows;
  }
}

void EngineCore::pool(const RunnerOutput& ro, std::vector<RequestOutput>& outs) {
  const size_t H = static_cast<size_t>(ro.hidden_size);
  for (const PooledRows& pr : ro.pooled_rows) {
    Request& req = *pr.request;
    if (req.sampling_params.pooling->type != PoolingType::kMean) {  // the one row it reads
      req.pooled.assign(pr.hidden, pr.hidden + H);
      continue;
    }
    // A prompt started over (preemption) sums from zero again. Row by row, in position
    // order, so that the sum does not depend on how the prompt was chunked.
    if (pr.first_position == 0 || req.pooled.empty()) req.pooled.assign(H, 0.0f);
    for (int64_t r = 0; r < pr.num_rows; ++r) {
      const float* row = pr.hidden + r * H;
      for (size_t i = 0; i < H; ++i) req.pooled[i] += row[i];
    }
  }
  for (Request* rp : ro.pooled_done) {
    Request& req = *rp;
    const PoolingParams& pp = *req.sampling_params.pooling;
    std::vector<float> v = std::move(req.pooled);
    if (v.size() != H)
      throw std::logic_error("EngineCore: pooling request " + req.request_id +
                             " finished without its hidden-state rows");
    if (pp.type == PoolingType::kMean) {
      const float inv = 1.0f / static_cast<float>(req.num_prompt_tokens());
      for (float& x : v) x *= inv;
    }
    if (pp.dimensions > 0 && static_cast<size_t>(pp.dimensions) < v.size())
      v.resize(static_cast<size_t>(pp.dimensions));
    if (pp.normalize) {  // torch's F.normalize: x / max(||x||, 1e-12)
      double ss = 0;
      for (float x : v) ss += static_cast<double>(x) * x;
      const float inv = static_cast<float>(1.0 / std::max(std::sqrt(ss), 1e-12));
      for (float& x : v) x *= inv;
    }
    RequestOutput o = make_output(req);
    o.embedding = std::move(v);
    o.finished = true;
    o.finish_reason = "stop";
    m_.prompt_tokens_total += req.num_prompt_tokens();
    scheduler_.finish_request(req.request_id, RequestStatus::FINISHED_STOPPED);
    ++m_.num_requests_finished;
    outs.push_back(std::move(o));
  }
}

EngineMetrics EngineCore::metrics() const {
  EngineMetrics m = m_;
  m.num_requests_running = static_cast<int64_t>(scheduler_.num_running());
  m.num_requests_waiting = static_cast<int64_t>(scheduler_.num_waiting());
  m.kv_cache_usage = scheduler_.kv_cache_manager().usage();
  m.prefix_cache_queries = scheduler_.kv_cache_manager().prefix_cache_stats().queries;
  m.prefix_cache_hits = scheduler_.kv_cache_manager().prefix_cache_stats().hits;
  m.num_preemptions_total = scheduler_.num_preemptions();
  scheduler_.lora_ids(m.running_loras, m.waiting_loras);
  return m;
}

}  // namespace vllm::engine
