// Drivers for the GPU gates and the decode measurement, over CudaModelExecutor.
//
// Seqs: sequences over a paged KV cache (blocks handed out from a shuffled free list, so
// block tables are scattered), run through execute() with host arrays: eager steps of any
// mix of prefill chunks and decodes.
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
#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/cuda_model_executor.h"

namespace vllm::cuda_testing {

std::string default_gguf();
std::string tiny_models_dir();
std::string golden_dir();
// A small random-weight Llama GGUF written on first use (no network, no Python): 4 layers,
// hidden 256, 8 heads / 2 KV heads, SmolLM2's layout (tied Q8_0 embedding, interleaved RoPE)
// with every quantized type the CUDA kernels read (Q8_0, Q4_0, Q4_1, Q4_K, Q6_K).
std::string synthetic_gguf();

// FNV-1a over the bits of n floats.
uint64_t hash_bits(const float* x, int64_t n);
// The first index of the largest value (what a greedy engine picks).
int32_t host_argmax(const float* x, int64_t n);

class Seqs {
 public:
  Seqs(vllm::engine::ModelExecutor& ex, int64_t num_blocks, int block_size, uint32_t seed = 1);

  int add();  // a new empty sequence
  void release(int seq);
  int32_t length(int seq) const { return seqs_.at(seq).len; }
  const std::vector<int32_t>& blocks(int seq) const { return seqs_.at(seq).blocks; }
  // Holds blocks for positions < len.
  void ensure(int seq, int32_t len);
  // Length bookkeeping for tokens another driver fed (GraphDecoder).
  void advance(int seq, int32_t n);

  struct Part {
    int seq;
    std::vector<int32_t> tokens;
    bool all_logits = false;  // logits of every token (else of the last)
  };
  // One forward over all parts' tokens (prefill chunks and decodes mixed). Returns logits
  // rows in part order ([all tokens] or [last token] per part), [rows][vocab].
  const std::vector<float>& run(const std::vector<Part>& parts);
  // With a target (a CudaBackend state buffer's host view), run() writes the logits there on
  // the device and returns an empty vector: no download, no wait (the measurement).
  void set_logits_target(float* p) { target_ = p; }
  // Shorthands.
  const std::vector<float>& prefill(int seq, const std::vector<int32_t>& ids,
                                    bool all_logits = false);
  const std::vector<float>& decode(const std::vector<int>& seqs,
                                   const std::vector<int32_t>& tokens);

 private:
  struct Seq {
    int32_t len = 0;
    std::vector<int32_t> blocks;
  };
  vllm::engine::ModelExecutor& ex_;
  int block_size_;
  std::vector<int32_t> free_;
  std::map<int, Seq> seqs_;
  int next_ = 0;
  std::vector<int32_t> ids_, pos_, seq_of_, bt_, rows_;
  std::vector<int64_t> slots_;
  std::vector<float> logits_;
  float* target_ = nullptr;
};

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
