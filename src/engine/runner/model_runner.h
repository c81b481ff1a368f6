// ModelRunner: turns a SchedulerOutput into one ForwardBatch over all scheduled tokens
// (prefill chunks and decodes together), runs the ModelExecutor and hands back one logits row
// per request whose chunk reached its last known token (partial prefill chunks get none), plus
// the rows of the prompt positions whose logprobs a request asked for (prompt_logprobs).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/model_executor.h"
#include "engine/runner/decode_graph.h"
#include "engine/runner/input_batch.h"
#include "engine/scheduler.h"

namespace vllm::engine {

// Logits of consecutive prompt positions of one request, for its prompt logprobs.
struct PromptLogitsRows {
  Request* request = nullptr;
  int64_t first_position = 0;  // equals request->num_prompt_logprobs when produced
  int64_t num_rows = 0;
  const float* logits = nullptr;  // [num_rows][vocab_size]
};

// Final hidden states of consecutive prompt positions of one pooling request.
struct PooledRows {
  Request* request = nullptr;
  int64_t first_position = 0;
  int64_t num_rows = 0;
  const float* hidden = nullptr;  // [num_rows][hidden_size]
};

struct RunnerOutput {
  std::vector<Request*> requests;   // requests to sample, in logits row order
  const float* logits = nullptr;    // [requests.size()][vocab_size]
  const int32_t* argmax = nullptr;  // per row, when the step computed it (decode graphs)
  int32_t vocab_size = 0;
  std::vector<PromptLogitsRows> prompt_rows;
  // Pooling requests (Request::is_pooling): the rows their pooling type reads (every prompt
  // position for MEAN, the first for CLS, the last for LAST) and, after those, the requests
  // whose whole prompt has now run.
  std::vector<PooledRows> pooled_rows;
  std::vector<Request*> pooled_done;
  int32_t hidden_size = 0;
};

class ModelRunner {
 public:
  ModelRunner(ModelExecutor& executor, int32_t max_num_seqs, int32_t max_model_len, int block_size,
              int64_t max_num_batched_tokens,
              const DecodeGraphOptions& graph = DecodeGraphOptions{false});
  ~ModelRunner();

  // The returned view is valid until the next call.
  const RunnerOutput& execute(const SchedulerOutput& so);

  const InputBatch& input_batch() const { return batch_; }

  // After sampling: the chosen token of each logits row (feeds the decode graph's state).
  void commit_sampled(const std::vector<int32_t>& tokens);
  // Sees every step's logits rows (tests compare eager and captured runs bit for bit).
  using LogitsObserver =
      std::function<void(const std::vector<Request*>&, const float* logits, int32_t vocab)>;
  void set_logits_observer(LogitsObserver f) { observer_ = std::move(f); }
  // nullptr when decode graphs are off (--enforce-eager, VT_DECODE_GRAPH=0, or a fake model).
  const DecodeGraphDriver* graph_driver() const { return graph_.get(); }
  // Wall seconds spent in forward passes (eager or graph replay) and how many ran.
  double forward_seconds() const { return forward_seconds_; }
  int64_t forward_calls() const { return forward_calls_; }

 private:
  void update_states(const SchedulerOutput& so);
  bool is_decode_only(const SchedulerOutput& so) const;
  void dump_top2(const float* logits);

  ModelExecutor& executor_;
  int block_size_;
  InputBatch batch_;
  // Flat per-step arrays, sized once for the token budget.
  std::vector<int32_t> token_ids_, positions_, seq_of_token_, logits_indices_, prompt_indices_;
  std::vector<int64_t> slot_mapping_;
  std::vector<int32_t> lora_ids_;  // per token: its request's LoRA adapter (0: none)
  std::vector<int32_t> hidden_indices_;
  std::vector<float> logits_, hidden_;
  RunnerOutput out_;
  std::unique_ptr<DecodeGraphDriver> graph_;
  bool graph_ran_ = false;
  std::vector<DecodeRow> rows_;
  LogitsObserver observer_;
  bool dump_top2_ = false;
  int64_t step_ = 0;
  double forward_seconds_ = 0;
  int64_t forward_calls_ = 0;
};

}  // namespace vllm::engine
