// Drivers for the GPU gates and the decode measurement, over CudaModelExecutor: model paths,
// Seqs (seqs.h, eager steps), the synthetic model (synthetic_model.h), and
//
// GraphDecoder: decode-only steps through captured CUDA graphs, the CUDA counterpart of
// engine::DecodeGraphDriver (per padded batch size: warm-up, capture, replay; in-graph
// argmax and advance; seeding decided per entry by a generation counter; block-table width
// changes retire the old table; optional forced re-capture; the same three test mutations).
// It exists because the engine's driver still runs its argmax and advance as host ops over
// host-visible state; the integrator's backend seam will replace both with this pattern.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/causal_lm.h"
#include "seqs.h"
#include "synthetic_model.h"
#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/cuda_model_executor.h"

namespace vllm::cuda_testing {

std::string default_gguf();
std::string tiny_models_dir();
std::string golden_dir();
struct GraphOptions {
  int64_t recapture_every = 0;
  bool strict = false;
  bool download_logits = true;  // else only the next ids come back (the measurement)
  bool mutate_skip_reseed = false;
  bool mutate_keep_width = false;
  bool mutate_free_not_retire = false;
};

class GraphDecoder {
 public:
  GraphDecoder(vt::cuda::CudaModelExecutor& ex, GraphOptions opts, int block_size,
               int32_t max_batch, int32_t max_blocks_per_req, int64_t max_tokens_per_step);
  ~GraphDecoder();

  struct Row {
    uint64_t request = 0;  // identity: a change of rows is a batch change
    int32_t token = 0;
    int32_t position = 0;
    const int32_t* blocks = nullptr;
    int32_t num_blocks = 0;
  };
  // One decode step. Returns logits [rows][vocab] (empty without download_logits); the
  // in-graph argmax of each row is next_ids().
  const std::vector<float>& step(const std::vector<Row>& rows);
  const std::vector<int32_t>& next_ids() const { return next_; }
  // An eager step ran between graph steps: every entry must re-seed.
  void invalidate() { ++gen_; }
  // Host time of the last step until its work was queued (before waiting for results).
  double last_issue_us() const { return issue_us_; }

  struct Stats {
    int64_t steps = 0, warmups = 0, captures = 0, replays = 0, seeds = 0, block_writes = 0;
    int64_t width_changes = 0;
    int64_t steady_steps = 0;  // replays with no seed, block write, capture or width change
    int64_t steady_h2d = 0;    // host-to-device copies issued during steady steps (gate: 0)
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Entry;
  Entry& entry(int32_t padded);
  void alloc_table(Entry& e, int32_t width);
  void seed(Entry& e, const std::vector<Row>& rows);
  void record(Entry& e, vt::Exec& ex);
  void capture(Entry& e);
  void drop_graph(Entry& e);

  vt::cuda::CudaModelExecutor& ex_;
  vt::cuda::CudaBackend& be_;
  GraphOptions opts_;
  int block_size_;
  int32_t vocab_, max_blocks_per_req_;
  std::vector<int32_t> sizes_;
  std::map<int32_t, std::unique_ptr<Entry>> entries_;
  Entry* last_ = nullptr;
  std::vector<uint64_t> last_rows_;
  uint64_t gen_ = 1;
  bool any_seeded_ = false;
  std::vector<float> logits_;
  std::vector<int32_t> next_;
  double issue_us_ = 0;
  Stats stats_;
};

}  // namespace vllm::cuda_testing
