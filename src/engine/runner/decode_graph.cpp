// DecodeGraphDriver: entries per padded size, seeding, width changes, capture and replay.
#include "engine/runner/decode_graph.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "vt/decode_state.h"

namespace vllm::engine {

struct DecodeGraphDriver::Entry {
  int32_t padded = 0;
  std::unique_ptr<vt::DecodeState> state;  // ids, positions, seq lens, slots, table, logits
  vt::GraphId graph = 0;
  bool warmed = false;
  uint64_t seeded_gen = 0;
  int64_t replays_since_capture = 0;
  std::vector<int32_t> blocks_written;
  // Whether the graph was recorded with the adapter ops (the executor had LoRA adapters then):
  // a graph without them must not replay a row that has one.
  bool lora_ops = false;
};

namespace {
int32_t pow2_at_least(int32_t n) {
  int32_t w = 1;
  while (w < n) w *= 2;
  return w;
}
}  // namespace

std::vector<int32_t> DecodeGraphDriver::capture_sizes(int32_t max_num_seqs) {
  std::vector<int32_t> s;
  for (int32_t v : {1, 2, 4})
    if (v <= max_num_seqs) s.push_back(v);
  for (int32_t v = 8; v <= max_num_seqs; v += 8) s.push_back(v);
  if (s.empty() || s.back() < max_num_seqs) s.push_back(max_num_seqs);
  return s;
}

DecodeGraphDriver::DecodeGraphDriver(ModelExecutor& exec, vt::Backend& backend,
                                     const DecodeGraphOptions& opts, int block_size,
                                     int32_t max_num_seqs, int32_t max_blocks_per_req,
                                     int64_t max_tokens_per_step)
    : exec_(exec),
      backend_(backend),
      opts_(opts),
      block_size_(block_size),
      vocab_(exec.vocab_size()),
      max_blocks_per_req_(max_blocks_per_req),
      max_tokens_per_step_(max_tokens_per_step) {
  if (!exec.supports_graphs()) opts_.enabled = false;
  sizes_ = capture_sizes(std::min(max_num_seqs, opts_.max_capture_size));
  if (opts_.enabled) backend_.set_strict(opts_.strict);
}

DecodeGraphDriver::~DecodeGraphDriver() {
  for (auto& [p, e] : entries_) {
    try {
      if (e->graph) backend_.destroy(e->graph);
    } catch (const std::exception&) {
      // Already reported when the invariant broke; the graph is gone either way.
    }
    delete e;
  }
}

bool DecodeGraphDriver::handles(int32_t n) const {
  return opts_.enabled && n >= 1 && n <= sizes_.back();
}

DecodeGraphDriver::Entry& DecodeGraphDriver::entry_for(int32_t padded) {
  auto it = entries_.find(padded);
  if (it != entries_.end()) return *it->second;
  // Graphs point into the model's scratch: size it for every step it will ever see (eager
  // steps of up to the token budget included) before the first capture, then pin it.
  if (entries_.empty())
    exec_.prepare_graphs(std::max<int64_t>(max_tokens_per_step_, sizes_.back()));
  auto* e = new Entry();
  e->padded = padded;
  const size_t p = static_cast<size_t>(padded);
  e->state = backend_.make_decode_state(padded, vocab_, block_size_);
  e->blocks_written.assign(p, 0);
  entries_[padded] = e;
  return *e;
}

void DecodeGraphDriver::destroy_graph(Entry& e) {
  if (e.graph) backend_.destroy(e.graph);
  e.graph = 0;
  e.replays_since_capture = 0;
}

void DecodeGraphDriver::alloc_block_table(Entry& e, int32_t width) {
  // A graph is bound to the old table: the state retires it (freed once no graph references
  // it) and the graph is re-captured; the mutation frees it while the graph still holds it.
  if (e.state->set_width(width, opts_.mutate_free_not_retire)) {
    destroy_graph(e);
    ++stats_.width_changes;
  }
  e.seeded_gen = 0;  // the new table holds nothing yet
}

void DecodeGraphDriver::seed(Entry& e, const std::vector<DecodeRow>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size());
  std::vector<vt::DecodeSeedRow> seed(rows.size());
  for (int32_t i = 0; i < n; ++i) {
    seed[i] = {rows[i].token, rows[i].position, rows[i].blocks, rows[i].num_blocks,
               rows[i].lora_id};
    e.blocks_written[i] = std::min(rows[i].num_blocks, e.state->width());
  }
  e.state->seed(seed);
  for (int32_t i = n; i < e.padded; ++i) e.blocks_written[i] = 0;
  ++stats_.seeds;
}

void DecodeGraphDriver::record_step(Entry& e, vt::Exec& ex) {
  const vt::DecodeInputs in = e.state->inputs();
  model::ForwardBatch fb;
  fb.n_tok = e.padded;
  fb.token_ids = in.token_ids;
  fb.positions = in.positions;
  fb.seq_of_token = in.seq_of_token;
  fb.slot_mapping = in.slot_mapping;
  fb.block_tables = in.block_table;
  fb.bt_stride = in.bt_stride;
  fb.n_seqs = e.padded;
  fb.logits_indices = in.logits_indices;
  fb.n_logits = e.padded;
  // With adapters loaded, every graph carries the adapter ops, reading the rows' ids from the
  // state (all 0: they add nothing).
  e.lora_ops = exec_.has_loras();
  fb.lora_ids = e.lora_ops ? in.lora_ids : nullptr;
  exec_.execute(fb, in.logits, ex);
  // The graph's last ops: next token ids (greedy), then advance positions, seq lens and
  // slots, so the next replay needs no host write.
  e.state->record_argmax_advance(ex);
}

void DecodeGraphDriver::capture(Entry& e) {
  vt::Exec ex;
  e.graph = backend_.begin_capture(ex, e.state->bound());
  record_step(e, ex);
  backend_.end_capture(ex, e.graph);
  ++stats_.captures;
}

const float* DecodeGraphDriver::step(const std::vector<DecodeRow>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size());
  if (!handles(n))
    throw std::logic_error("decode graph: batch of " + std::to_string(n) +
                           " is larger than the largest capture size");
  const int32_t padded = *std::lower_bound(sizes_.begin(), sizes_.end(), n);
  Entry& e = entry_for(padded);
  ++stats_.steps;
  const int64_t writes_before = backend_.stats().host_writes;

  int32_t needed = 1;
  for (const auto& r : rows) needed = std::max(needed, r.num_blocks);
  needed = std::min(pow2_at_least(needed), max_blocks_per_req_);
  bool batch_changed = last_ != &e || last_n_ != n;
  if (!batch_changed)
    for (int32_t i = 0; i < n; ++i) batch_changed |= prev_ids_[i] != *rows[i].request_id;
  if (batch_changed) {
    ++batch_gen_;
    prev_ids_.clear();
    for (const auto& r : rows) prev_ids_.push_back(*r.request_id);
  }
  if (e.state->width() == 0) {
    alloc_block_table(e, needed);
  } else if (needed > e.state->width() && !opts_.mutate_keep_width) {
    alloc_block_table(e, needed);
  } else if (batch_changed && needed < e.state->width() / 2) {
    alloc_block_table(e, needed);  // the longest request left: shrink
  }

  const bool must_seed = opts_.mutate_skip_reseed ? !any_seeded_ : e.seeded_gen != batch_gen_;
  if (must_seed) {
    seed(e, rows);
    e.seeded_gen = batch_gen_;
    any_seeded_ = true;
  } else if (!opts_.mutate_skip_reseed) {
    const int32_t* ids = e.state->read_token_ids(n);
    const int32_t* pos = e.state->read_positions(n);
    for (int32_t i = 0; i < n; ++i)
      if (pos[i] != rows[i].position || ids[i] != rows[i].token)
        throw std::logic_error(
            "decode graph: state of row " + std::to_string(i) + " (" + *rows[i].request_id +
            ") is out of sync with the scheduler (position " + std::to_string(pos[i]) + " vs " +
            std::to_string(rows[i].position) +
            "); invariant: an entry whose batch is unchanged holds the advanced state");
  }
  // Blocks the rows gained since they were written (a request crossed a block boundary).
  for (int32_t i = 0; i < n; ++i) {
    const int32_t have = e.blocks_written[i], want = std::min(rows[i].num_blocks, e.state->width());
    if (want <= have) continue;
    e.state->patch_blocks(i, have, rows[i].blocks + have, want - have, rows[i].position);
    e.blocks_written[i] = want;
    ++stats_.block_writes;
  }

  // Adapters loaded after this entry's graph was recorded: record it again, with their ops.
  if (e.graph && !e.lora_ops && exec_.has_loras()) destroy_graph(e);
  if (!e.graph && !e.warmed) {
    // Warm-up: the same ops, run eagerly on the graph's own buffers.
    e.state->run_eager([&] { record_step(e, vt::Exec::eager()); });
    e.warmed = true;
    ++stats_.eager_warmups;
  } else {
    if (!e.graph) capture(e);
    if (backend_.stats().host_writes == writes_before) ++stats_.steady_replays;
    backend_.replay(e.graph);
    ++stats_.replays;
    if (opts_.recapture_every > 0 && ++e.replays_since_capture >= opts_.recapture_every)
      destroy_graph(e);  // re-captured at the next step
  }
  last_ = &e;
  last_n_ = n;
  return e.state->read_logits(n);
}

const int32_t* DecodeGraphDriver::argmax_ids() const {
  return last_ ? last_->state->read_token_ids(last_n_) : nullptr;
}

void DecodeGraphDriver::commit_tokens(const std::vector<int32_t>& sampled) {
  Entry& e = *last_;
  const int32_t* ids = e.state->read_token_ids(static_cast<int32_t>(sampled.size()));
  for (size_t i = 0; i < sampled.size(); ++i) {
    if (ids[i] == sampled[i] || opts_.mutate_skip_token_write) continue;
    e.state->set_token(static_cast<int32_t>(i), sampled[i]);
    ++stats_.token_writes;
  }
}

void DecodeGraphDriver::invalidate() { ++batch_gen_; }

}  // namespace vllm::engine
