// Per-render accounting of ChatTemplateLimits: deadline, allocation and loop counters, the
// namespace registry, and the thread-local pointer through which value operations reach them.
#include "tokenizer/chat_template/budget.h"

#include <time.h>

#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/value.h"

namespace vllm::tok::jinja {
namespace {

thread_local Budget* t_budget = nullptr;

// Clock reads cost well under a microsecond; one per this many units keeps them negligible
// while a single unit of work stays far below a millisecond.
constexpr uint64_t kClockInterval = 4096;

// CPU time of the calling thread: the render runs on one thread, and CPU time (unlike the
// wall clock) does not run out while a loaded machine has the thread waiting, so a real
// template never fails because of other load, and a runaway one is charged only what it used.
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

std::string format_bytes(uint64_t n) {
  if (n >= (uint64_t{1} << 20) && n % (uint64_t{1} << 20) == 0)
    return std::to_string(n >> 20) + " MiB";
  if (n >= (uint64_t{1} << 10) && n % (uint64_t{1} << 10) == 0)
    return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}

void limit_exceeded(const std::string& what, const std::string& limit, const char* field) {
  throw ChatTemplateError(
      0, what + " exceeds the " + limit + " limit (ChatTemplateLimits::" + field + ")");
}

Budget::Budget(const ChatTemplateLimits& limits)
    : limits_(limits), has_deadline_(limits.max_render_ms > 0) {
  if (has_deadline_) deadline_ns_ = thread_cpu_ns() + limits.max_render_ms * 1000000;
  next_clock_check_ = kClockInterval;
}

Budget::~Budget() {
  // Empty every namespace before any is freed: a namespace's values can hold other namespaces
  // (or itself), and freeing a long chain recursively would overflow the stack.
  for (auto& ns : namespaces_) {
    Dict doomed;
    doomed.swap(*ns);
  }
}

void Budget::check_clock() {
  next_clock_check_ = ticks_ + kClockInterval;
  if (has_deadline_ && thread_cpu_ns() > deadline_ns_)
    limit_exceeded("render CPU time", std::to_string(limits_.max_render_ms) + " ms",
                   "max_render_ms");
}

void Budget::charge_alloc(uint64_t bytes) {
  allocated_ += bytes;
  if (allocated_ > limits_.max_total_bytes)
    limit_exceeded("memory allocated by the render", format_bytes(limits_.max_total_bytes),
                   "max_total_bytes");
  // Allocating and filling memory is work too: charge about one unit per 64 bytes.
  tick(1 + bytes / 64);
}

void Budget::count_iteration() {
  if (++iterations_ > limits_.max_loop_iterations)
    limit_exceeded("number of loop iterations and macro calls",
                   std::to_string(limits_.max_loop_iterations), "max_loop_iterations");
  tick();
}

void Budget::adopt_namespace(std::shared_ptr<Dict> ns) { namespaces_.push_back(std::move(ns)); }

Budget* current_budget() { return t_budget; }

const ChatTemplateLimits& current_limits() {
  static const ChatTemplateLimits kDefaults;
  return t_budget ? t_budget->limits() : kDefaults;
}

BudgetScope::BudgetScope(Budget& b) : saved_(t_budget) { t_budget = &b; }
BudgetScope::~BudgetScope() { t_budget = saved_; }

void check_value_bytes(uint64_t bytes, const char* what) {
  const ChatTemplateLimits& l = current_limits();
  if (bytes > l.max_value_bytes)
    limit_exceeded(what, format_bytes(l.max_value_bytes), "max_value_bytes");
}

void check_list_items(uint64_t items, const char* what) {
  const ChatTemplateLimits& l = current_limits();
  if (items > l.max_value_bytes / sizeof(Value))
    limit_exceeded(what, format_bytes(l.max_value_bytes), "max_value_bytes");
}

}  // namespace vllm::tok::jinja
