// Scheduler policy: token budget, chunked prefill, FCFS, max_num_seqs, preemption of the newest
// running request, and requests that can never fit.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "engine/scheduler.h"

namespace vllm::engine {
namespace {

std::unique_ptr<Request> make_req(const std::string& id, int prompt_len, int max_tokens = 100,
                                  int first_token = 0) {
  std::vector<int32_t> prompt(prompt_len);
  std::iota(prompt.begin(), prompt.end(), first_token);
  return std::make_unique<Request>(id, prompt, SamplingParams{}, max_tokens, std::nullopt, 0, 0);
}

// One engine step without a model: every request whose chunk completes its tokens "samples"
// token 1. Returns {id -> scheduled tokens}.
std::map<std::string, int64_t> step(Scheduler& s, SchedulerOutput* out = nullptr) {
  SchedulerOutput so = s.schedule();
  s.update_after_execute(so);
  std::map<std::string, int64_t> m;
  for (auto& r : so.scheduled) {
    m[r.request->request_id] = r.num_scheduled_tokens;
    if (r.request->num_computed_tokens == r.request->num_tokens())
      r.request->append_output_token(1);
  }
  EXPECT_EQ(s.kv_cache_manager().check_consistency(), "");
  if (out) *out = std::move(so);
  return m;
}

using M = std::map<std::string, int64_t>;

TEST(Scheduler, ChunkedPrefillWithinTheTokenBudget) {
  Scheduler s({16, 8, 1024}, 64, 4, false);
  s.add_request(make_req("a", 40));
  s.add_request(make_req("b", 10, 100, 500));
  EXPECT_EQ(step(s), (M{{"a", 16}}));
  EXPECT_EQ(step(s), (M{{"a", 16}}));
  EXPECT_EQ(step(s), (M{{"a", 8}, {"b", 8}}));  // a's prompt completes, b starts chunked
  EXPECT_EQ(step(s), (M{{"a", 1}, {"b", 2}}));  // decode mixed with b's last chunk
  EXPECT_EQ(step(s), (M{{"a", 1}, {"b", 1}}));
  EXPECT_EQ(s.get_request("a")->num_output_tokens(), 3);
  EXPECT_EQ(s.get_request("b")->num_output_tokens(), 2);
}

TEST(Scheduler, WaitingRequestsAreAdmittedInArrivalOrder) {
  Scheduler s({8, 8, 1024}, 64, 4, false);
  for (const char* id : {"r0", "r1", "r2", "r3"}) s.add_request(make_req(id, 6));
  SchedulerOutput so;
  step(s, &so);
  ASSERT_EQ(so.scheduled.size(), 2u);
  EXPECT_EQ(so.scheduled[0].request->request_id, "r0");
  EXPECT_EQ(so.scheduled[1].request->request_id, "r1");  // 2 of its 6 tokens
  EXPECT_EQ(so.scheduled[1].num_scheduled_tokens, 2);
  step(s, &so);
  // Running first (r0 decode, r1's rest), then r2 with what is left; r3 still waits.
  ASSERT_EQ(so.scheduled.size(), 3u);
  EXPECT_EQ(so.scheduled[2].request->request_id, "r2");
  EXPECT_EQ(s.num_waiting(), 1u);
}

TEST(Scheduler, MaxNumSeqsCapsTheRunningSet) {
  Scheduler s({1000, 2, 1024}, 64, 4, false);
  for (const char* id : {"a", "b", "c"}) s.add_request(make_req(id, 5));
  EXPECT_EQ(step(s), (M{{"a", 5}, {"b", 5}}));
  EXPECT_EQ(step(s), (M{{"a", 1}, {"b", 1}}));
  s.finish_request("a", RequestStatus::FINISHED_STOPPED);
  SchedulerOutput so;
  EXPECT_EQ(step(s, &so), (M{{"b", 1}, {"c", 5}}));
  EXPECT_EQ(so.finished_req_ids, std::vector<std::string>{"a"});
}

// vLLM's --long-prefill-token-threshold: no chunk longer than the cap while another request
// runs or waits; a request alone takes the whole budget.
TEST(Scheduler, LongPrefillThresholdCapsChunksOnlyWithCompany) {
  SchedulerConfig c{64, 8, 1024};
  c.long_prefill_token_threshold = 8;
  Scheduler s(c, 64, 4, false);
  s.add_request(make_req("a", 40));
  EXPECT_EQ(step(s), (M{{"a", 40}}));  // alone: no cap
  s.add_request(make_req("b", 30, 100, 500));
  s.add_request(make_req("c", 5, 100, 900));
  EXPECT_EQ(step(s), (M{{"a", 1}, {"b", 8}, {"c", 5}}));  // decodes and short prompts pass
  EXPECT_EQ(step(s), (M{{"a", 1}, {"b", 8}, {"c", 1}}));
}

// The adaptive switch floors the cap at max_num_batched_tokens / (running + waiting).
TEST(Scheduler, AdaptiveLongPrefillThresholdTakesAFairShare) {
  SchedulerConfig c{64, 8, 1024};
  c.long_prefill_token_threshold = 8;
  c.long_prefill_token_threshold_adaptive = true;
  Scheduler s(c, 64, 4, false);
  s.add_request(make_req("a", 50));
  s.add_request(make_req("b", 50, 100, 500));
  EXPECT_EQ(step(s), (M{{"a", 32}, {"b", 32}}));  // max(8, 64 / 2)
  s.add_request(make_req("c", 50, 100, 900));
  s.add_request(make_req("d", 50, 100, 1300));
  EXPECT_EQ(step(s), (M{{"a", 16}, {"b", 16}, {"c", 16}, {"d", 16}}));  // max(8, 64 / 4)
}

// vLLM's --max-num-active-seqs: admission into the running set, below max_num_seqs.
TEST(Scheduler, MaxNumActiveSeqsCapsTheRunningSet) {
  SchedulerConfig c{1000, 8, 1024};
  c.max_num_active_seqs = 1;
  Scheduler s(c, 64, 4, false);
  s.add_request(make_req("a", 5, 2));
  s.add_request(make_req("b", 5, 2, 500));
  EXPECT_EQ(step(s), (M{{"a", 5}}));
  EXPECT_EQ(step(s), (M{{"a", 1}}));
  s.finish_request("a", RequestStatus::FINISHED_LENGTH_CAPPED);
  EXPECT_EQ(step(s), (M{{"b", 5}}));
}

// vLLM's --max-num-scheduled-tokens: the step's token budget when below the batch's.
TEST(Scheduler, MaxNumScheduledTokensIsTheStepBudget) {
  SchedulerConfig c{64, 8, 1024};
  c.max_num_scheduled_tokens = 10;
  Scheduler s(c, 64, 4, false);
  s.add_request(make_req("a", 25));
  EXPECT_EQ(step(s), (M{{"a", 10}}));
  EXPECT_EQ(step(s), (M{{"a", 10}}));
  EXPECT_EQ(step(s), (M{{"a", 5}}));
}

TEST(Scheduler, PreemptsTheNewestRunningRequestAndResumesIt) {
  // 4 blocks of 4 slots: a and b take 2 blocks each; growing past 8 tokens must preempt.
  Scheduler s({100, 8, 1024}, 4, 4, false);
  s.add_request(make_req("a", 7));
  s.add_request(make_req("b", 7, 100, 50));
  EXPECT_EQ(step(s), (M{{"a", 7}, {"b", 7}}));
  EXPECT_EQ(step(s), (M{{"a", 1}, {"b", 1}}));  // 8 tokens each, blocks full
  SchedulerOutput so;
  EXPECT_EQ(step(s, &so), (M{{"a", 1}}));  // a needs a 3rd block: b is preempted
  EXPECT_EQ(so.preempted_req_ids, std::vector<std::string>{"b"});
  Request* b = s.get_request("b");
  EXPECT_EQ(b->status, RequestStatus::PREEMPTED);
  EXPECT_EQ(b->num_computed_tokens, 0);
  EXPECT_EQ(b->num_output_tokens(), 2);  // its outputs stay; their K/V is recomputed
  EXPECT_EQ(s.num_preemptions(), 1);
  EXPECT_TRUE(s.kv_cache_manager().get_block_ids("b").empty());
  s.finish_request("a", RequestStatus::FINISHED_LENGTH_CAPPED);
  EXPECT_EQ(step(s, &so), (M{{"b", 9}}));  // recompute prompt + both outputs in one chunk
  EXPECT_TRUE(so.scheduled[0].is_new);
  EXPECT_EQ(b->status, RequestStatus::RUNNING);
  EXPECT_EQ(b->num_output_tokens(), 3);
}

TEST(Scheduler, ARequestPreemptsItselfWhenItIsTheNewest) {
  Scheduler s({100, 8, 1024}, 3, 4, false);
  s.add_request(make_req("a", 4));
  s.add_request(make_req("b", 8, 100, 50));
  EXPECT_EQ(step(s), (M{{"a", 4}, {"b", 8}}));
  // a needs a 2nd block (none free): b, the newest, goes; a continues.
  SchedulerOutput so;
  EXPECT_EQ(step(s, &so), (M{{"a", 1}}));
  EXPECT_EQ(so.preempted_req_ids, std::vector<std::string>{"b"});
  // No new admissions in a step that preempted.
  EXPECT_EQ(s.num_waiting(), 1u);
}

TEST(Scheduler, ARequestThatCanNeverFitIsIgnoredNotDeadlocked) {
  Scheduler s({100, 8, 1024}, 2, 4, false);
  s.add_request(make_req("huge", 20));
  s.add_request(make_req("ok", 4, 100, 50));
  SchedulerOutput so;
  EXPECT_EQ(step(s, &so), (M{{"ok", 4}}));
  EXPECT_EQ(so.ignored_req_ids, std::vector<std::string>{"huge"});
  EXPECT_EQ(s.get_request("huge"), nullptr);
}

TEST(Scheduler, BudgetIsNeverExceeded) {
  Scheduler s({7, 16, 1024}, 256, 4, true);
  for (int i = 0; i < 10; ++i) s.add_request(make_req("r" + std::to_string(i), 3 + i * 5, 4));
  for (int k = 0; k < 100 && s.has_unfinished_requests(); ++k) {
    SchedulerOutput so;
    step(s, &so);
    EXPECT_LE(so.total_num_scheduled_tokens, 7);
    EXPECT_GT(so.total_num_scheduled_tokens, 0);
    for (auto& r : so.scheduled)
      if (r.request->num_output_tokens() >= 4)
        s.finish_request(r.request->request_id, RequestStatus::FINISHED_LENGTH_CAPPED);
  }
  EXPECT_FALSE(s.has_unfinished_requests());
}

std::unique_ptr<Request> lora_req(const std::string& id, int32_t lora, int prompt_len = 4,
                                  int first_token = 0) {
  std::vector<int32_t> prompt(prompt_len);
  std::iota(prompt.begin(), prompt.end(), first_token);
  SamplingParams p;
  p.lora_id = lora;
  return std::make_unique<Request>(id, prompt, p, 100, std::nullopt, 0, 0);
}

// vLLM's max_loras: a waiting request of a third adapter waits while two are in the step; a
// later request of an adapter already in it (or of none) goes ahead of it.
TEST(Scheduler, MaxLorasKeepsOtherAdaptersWaiting) {
  SchedulerConfig c{1000, 8, 1024};
  c.max_loras = 2;
  Scheduler s(c, 64, 4, false);
  s.add_request(lora_req("a1", 1));
  s.add_request(lora_req("b2", 2));
  s.add_request(lora_req("c3", 3));
  s.add_request(lora_req("d1", 1));
  s.add_request(lora_req("e0", 0));
  EXPECT_EQ(step(s), (M{{"a1", 4}, {"b2", 4}, {"d1", 4}, {"e0", 4}}));
  EXPECT_EQ(step(s), (M{{"a1", 1}, {"b2", 1}, {"d1", 1}, {"e0", 1}}));  // c3 still waits
  ASSERT_EQ(s.get_request("c3")->status, RequestStatus::WAITING);
  // Once adapter 2 leaves, adapter 3 gets its turn.
  s.finish_request("b2", RequestStatus::FINISHED_ABORTED);
  EXPECT_EQ(step(s), (M{{"a1", 1}, {"c3", 4}, {"d1", 1}, {"e0", 1}}));
  // No limit: every adapter at once.
  Scheduler all({1000, 8, 1024}, 64, 4, false);
  for (int i = 1; i <= 4; ++i) all.add_request(lora_req("r" + std::to_string(i), i));
  EXPECT_EQ(step(all).size(), 4u);
}

// Blocks computed under one adapter are never a prefix-cache hit for another (or for none).
TEST(Scheduler, PrefixCacheKeepsAdaptersApart) {
  Scheduler s({1000, 8, 1024}, 64, 4, true);
  s.add_request(lora_req("base", 0, 9));
  step(s);
  s.add_request(lora_req("one", 1, 9));
  s.add_request(lora_req("base2", 0, 9));
  step(s);
  EXPECT_EQ(s.get_request("one")->num_cached_tokens, 0);
  EXPECT_EQ(s.get_request("base2")->num_cached_tokens, 8);  // two full blocks of the same prompt
  s.add_request(lora_req("one2", 1, 9));
  step(s);
  EXPECT_EQ(s.get_request("one2")->num_cached_tokens, 8);
}

}  // namespace
}  // namespace vllm::engine
