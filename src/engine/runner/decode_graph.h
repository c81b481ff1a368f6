// DecodeGraphDriver: runs decode-only steps through captured step graphs (DESIGN.md,
// "Decode step graph").
//
// Per padded batch size P (1, 2, 4, 8, 16, 24, 32, ...) an entry holds a vt::DecodeState
// made by the backend (vt/decode_state.h): it owns the graph's inputs (token ids, positions,
// seq lens, slot mapping, block-table rows, LoRA adapter ids, logits) at fixed device addresses,
// and every host write to them or read of them is one of its calls. Its first step runs eagerly
// (warm), the second is captured, later ones replay. The graph ends with an in-graph argmax (the
// next token ids) and an advance (positions += 1, seq lens += 1, slots recomputed from the block
// table), so a steady-state greedy step needs no host write. The host writes only when the batch
// changes (seeding, decided per entry), when a request crosses into a block its row lacks, or
// when a sampled (non-greedy) token differs from the in-graph argmax.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/model_executor.h"
#include "vt/graph.h"

namespace vllm::engine {

struct DecodeGraphOptions {
  bool enabled = true;          // --enforce-eager / VT_DECODE_GRAPH=0 turn it off
  bool strict = false;          // VT_GRAPH_STRICT=1: graph state write-protected from the host
  int64_t recapture_every = 0;  // VT_RECAPTURE_EVERY=N: destroy and re-capture every N replays
  int32_t max_capture_size = 256;
  // Test-only mutations; each must turn the graph gate red.
  bool mutate_skip_reseed = false;       // (a) one process-wide "seeded" flag instead of per entry
  bool mutate_keep_width = false;        // (b) never grow the captured block-table width
  bool mutate_free_not_retire = false;   // (c) free a superseded buffer instead of retiring it
  bool mutate_skip_token_write = false;  // (d) keep the in-graph argmax where the host sampled
};

// One request of a decode-only step: its last token and where it goes.
struct DecodeRow {
  const std::string* request_id = nullptr;
  int32_t token = 0;                // the token to feed (last sampled)
  int32_t position = 0;             // its position (== num_computed_tokens)
  const int32_t* blocks = nullptr;  // the request's block ids
  int32_t num_blocks = 0;
  int32_t lora_id = 0;  // its LoRA adapter (0: none)
};

class DecodeGraphDriver {
 public:
  DecodeGraphDriver(ModelExecutor& exec, vt::Backend& backend, const DecodeGraphOptions& opts,
                    int block_size, int32_t max_num_seqs, int32_t max_blocks_per_req,
                    int64_t max_tokens_per_step);
  ~DecodeGraphDriver();

  bool enabled() const { return opts_.enabled; }
  // Whether a decode-only batch of n requests can run here (n <= the largest capture size).
  bool handles(int32_t n) const;
  // Runs one decode step; returns logits [rows.size()][vocab], valid until the next call.
  const float* step(const std::vector<DecodeRow>& rows);
  // The in-graph argmax of each row of the last step's logits (the next greedy tokens).
  const int32_t* argmax_ids() const;
  // The tokens the sampler chose, in row order. Rows where the in-graph argmax already
  // holds the chosen token need no write.
  void commit_tokens(const std::vector<int32_t>& sampled);
  // An eager step ran (mixed prefill/decode, or too large): graph state is stale everywhere.
  void invalidate();

  struct Stats {
    int64_t steps = 0, eager_warmups = 0, captures = 0, replays = 0, seeds = 0;
    int64_t block_writes = 0, token_writes = 0, width_changes = 0;
    int64_t steady_replays = 0;  // replays with no host write at all before them
  };
  const Stats& stats() const { return stats_; }
  const vt::Backend& backend() const { return backend_; }
  static std::vector<int32_t> capture_sizes(int32_t max_num_seqs);

 private:
  struct Entry;
  Entry& entry_for(int32_t padded);
  void alloc_block_table(Entry& e, int32_t width);
  void seed(Entry& e, const std::vector<DecodeRow>& rows);
  void capture(Entry& e);
  void record_step(Entry& e, vt::Exec& ex);
  void destroy_graph(Entry& e);

  ModelExecutor& exec_;
  vt::Backend& backend_;
  DecodeGraphOptions opts_;
  int block_size_;
  int32_t vocab_;
  int32_t max_blocks_per_req_;
  int64_t max_tokens_per_step_;
  std::vector<int32_t> sizes_;
  std::map<int32_t, Entry*> entries_;
  Entry* last_ = nullptr;
  int32_t last_n_ = 0;
  bool any_seeded_ = false;  // used only by mutate_skip_reseed
  uint64_t batch_gen_ = 1;   // bumped whenever the batch's rows change
  std::vector<std::string> prev_ids_;
  Stats stats_;
};

}  // namespace vllm::engine
