// Budget: the per-render (and per-parse) accounting behind ChatTemplateLimits. The interpreter
// installs one for the duration of a render; value operations deep below it (building a
// string, comparing two lists, json.dumps) charge it through current_budget() rather than a
// parameter, because those operations mirror Python's and are reached from dozens of places
// whose signatures should not all carry the render state. Outside a render the functions fall
// back to the default limits and nothing is charged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/chat_template/limits.h"

namespace vllm::tok::jinja {

struct Value;
using Dict = std::vector<std::pair<Value, Value>>;

// "16 MiB", "512 KiB", "1000 bytes": how limits are spelled in error messages.
std::string format_bytes(uint64_t n);

// Throws ChatTemplateError "<what> exceeds the <limit> limit (<field>)".
[[noreturn]] void limit_exceeded(const std::string& what, const std::string& limit,
                                 const char* field);

class Budget {
 public:
  explicit Budget(const ChatTemplateLimits& limits);
  ~Budget();
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;

  const ChatTemplateLimits& limits() const { return limits_; }

  // Work done by a primitive (a comparison, a dict probe, a json node...). Checks the
  // CPU-time budget every few thousand units, so the check stays off the fast path.
  void tick(uint64_t units = 1) {
    ticks_ += units;
    if (ticks_ >= next_clock_check_) check_clock();
  }
  // A fresh allocation of `bytes` for a string, list or dict.
  void charge_alloc(uint64_t bytes);
  // One loop iteration (or loop-filter probe) or one macro / caller() call: recursion that
  // fans out (a macro calling itself twice) is as much a loop as {% for %} is.
  void count_iteration();

  // Namespaces are the one mutable object a template holds, so they can form cycles
  // (ns.self = ns) and arbitrarily long chains; the budget owns them all and empties them when
  // the render ends, which frees cycles and keeps destruction iterative.
  void adopt_namespace(std::shared_ptr<Dict> ns);

  // Current nesting of interpreter frames and macro calls.
  int eval_depth = 0;
  int call_depth = 0;

 private:
  void check_clock();

  const ChatTemplateLimits limits_;
  int64_t deadline_ns_ = 0;  // on this thread's CPU clock
  bool has_deadline_;
  uint64_t ticks_ = 0;
  uint64_t next_clock_check_ = 0;
  uint64_t allocated_ = 0;
  int64_t iterations_ = 0;
  std::vector<std::shared_ptr<Dict>> namespaces_;
};

// The budget of the render or parse running on this thread, or nullptr.
Budget* current_budget();
// Limits of the running render/parse, or the defaults.
const ChatTemplateLimits& current_limits();

inline void tick(uint64_t units = 1) {
  if (Budget* b = current_budget()) b->tick(units);
}

// Scans over a string are charged as they go (one unit per 256 bytes, every 64 KiB), so the
// render's CPU-time limit is checked inside a long scan, not only after it.
class ScanCharge {
 public:
  // The scan has reached byte k.
  void at(size_t k) {
    if (k - charged_ >= kChunk) done(k);
  }
  // Charges what was scanned up to byte k since the last charge.
  void done(size_t k) {
    tick(1 + (k - charged_) / 256);
    charged_ = k;
  }

 private:
  static constexpr size_t kChunk = size_t{64} << 10;
  size_t charged_ = 0;
};

// Installs `b` as this thread's budget for the lifetime of the scope (restoring the previous
// one after, so nested use is safe).
class BudgetScope {
 public:
  explicit BudgetScope(Budget& b);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  Budget* saved_;
};

// Size guards for producers: call before building a string of `bytes` bytes / a list of
// `items` items so that an over-limit result is refused before it is allocated.
void check_value_bytes(uint64_t bytes, const char* what);
void check_list_items(uint64_t items, const char* what);

}  // namespace vllm::tok::jinja
