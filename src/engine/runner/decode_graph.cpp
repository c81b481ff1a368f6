// DecodeGraphDriver: entries per padded size, seeding, width changes, capture and replay.
#include "engine/runner/decode_graph.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "vt/cpu/ops_extra.h"

namespace vllm::engine {

struct DecodeGraphDriver::Entry {
  int32_t padded = 0;
  vt::DeviceBuffer* state = nullptr;   // ids, positions, seq_of_token, logits rows, seq lens, slots
  vt::DeviceBuffer* bt = nullptr;      // [padded + 1][width] (one spare row keeps reads in bounds)
  vt::DeviceBuffer* logits = nullptr;  // [padded][vocab]
  int32_t width = 0;
  int32_t *ids = nullptr, *pos = nullptr, *seq = nullptr, *rows = nullptr, *seq_lens = nullptr;
  int64_t* slots = nullptr;
  vt::GraphId graph = 0;
  bool warmed = false;
  uint64_t seeded_gen = 0;
  int64_t replays_since_capture = 0;
  std::vector<int32_t> blocks_written;
  int32_t* table() const { return static_cast<int32_t*>(bt->data); }
  float* logit_data() const { return static_cast<float*>(logits->data); }
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
  e->state = backend_.alloc(p * (5 * sizeof(int32_t) + sizeof(int64_t)) + 8);
  e->logits = backend_.alloc(p * vocab_ * sizeof(float));
  auto* base = static_cast<int32_t*>(e->state->data);
  e->ids = base;
  e->pos = base + p;
  e->seq = base + 2 * p;
  e->rows = base + 3 * p;
  e->seq_lens = base + 4 * p;
  e->slots = reinterpret_cast<int64_t*>((reinterpret_cast<uintptr_t>(base + 5 * p) + 7) &
                                        ~static_cast<uintptr_t>(7));
  backend_.host_write(e->state, [e, p] {
    for (size_t i = 0; i < p; ++i) e->seq[i] = e->rows[i] = static_cast<int32_t>(i);
  });
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
  vt::DeviceBuffer* old = e.bt;
  e.bt = backend_.alloc(static_cast<size_t>(e.padded + 1) * width * sizeof(int32_t));
  e.width = width;
  if (old) {
    // The old graph is bound to the old table. Retire it (freed once no graph references
    // it) and re-capture; the mutation frees it while the graph still holds it.
    if (opts_.mutate_free_not_retire)
      backend_.free(old);
    else
      backend_.retire(old);
    destroy_graph(e);
    ++stats_.width_changes;
  }
  e.seeded_gen = 0;  // the new table holds nothing yet
}

void DecodeGraphDriver::seed(Entry& e, const std::vector<DecodeRow>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size()), W = e.width;
  backend_.host_write(e.state, [&] {
    for (int32_t i = 0; i < e.padded; ++i) {
      const bool real = i < n;
      e.ids[i] = real ? rows[i].token : 0;
      e.pos[i] = real ? rows[i].position : 0;
      e.seq_lens[i] = real ? rows[i].position + 1 : 0;
      e.slots[i] = -1;
      if (real) {
        const int32_t p = rows[i].position;
        e.slots[i] =
            static_cast<int64_t>(rows[i].blocks[p / block_size_]) * block_size_ + p % block_size_;
      }
    }
  });
  backend_.host_write(e.bt, [&] {
    int32_t* t = e.table();
    std::memset(t, 0, static_cast<size_t>(e.padded + 1) * W * sizeof(int32_t));
    for (int32_t i = 0; i < n; ++i) {
      const int32_t nb = std::min(rows[i].num_blocks, W);
      std::copy_n(rows[i].blocks, nb, t + static_cast<size_t>(i) * W);
      e.blocks_written[i] = nb;
    }
  });
  for (int32_t i = n; i < e.padded; ++i) e.blocks_written[i] = 0;
  ++stats_.seeds;
}

void DecodeGraphDriver::record_step(Entry& e, vt::Exec& ex) {
  model::ForwardBatch fb;
  fb.n_tok = e.padded;
  fb.token_ids = e.ids;
  fb.positions = e.pos;
  fb.seq_of_token = e.seq;
  fb.slot_mapping = e.slots;
  fb.block_tables = e.table();
  fb.bt_stride = e.width;
  fb.n_seqs = e.padded;
  fb.logits_indices = e.rows;
  fb.n_logits = e.padded;
  float* logits = e.logit_data();
  exec_.execute(fb, logits, ex);
  // The graph's last ops: next token ids (greedy), then advance positions, seq lens and
  // slots, so the next replay needs no host write.
  int32_t *ids = e.ids, *pos = e.pos, *seq_lens = e.seq_lens, *bt = e.table();
  int64_t* slots = e.slots;
  const int32_t P = e.padded, V = vocab_, W = e.width, bs = block_size_;
  ex.op([=] {
    for (int32_t i = 0; i < P; ++i)
      ids[i] = static_cast<int32_t>(vt::cpu::argmax(logits + static_cast<int64_t>(i) * V, V));
  });
  ex.op([=] {
    for (int32_t i = 0; i < P; ++i) {
      if (seq_lens[i] == 0) continue;  // padding row
      const int32_t p = ++pos[i];
      ++seq_lens[i];
      slots[i] = static_cast<int64_t>(bt[i * W + p / bs]) * bs + p % bs;
    }
  });
}

void DecodeGraphDriver::capture(Entry& e) {
  vt::Exec ex;
  e.graph = backend_.begin_capture(ex, {e.state, e.bt, e.logits});
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
  if (!e.bt) {
    alloc_block_table(e, needed);
  } else if (needed > e.width && !opts_.mutate_keep_width) {
    alloc_block_table(e, needed);
  } else if (batch_changed && needed < e.width / 2) {
    alloc_block_table(e, needed);  // the longest request left: shrink
  }

  const bool must_seed = opts_.mutate_skip_reseed ? !any_seeded_ : e.seeded_gen != batch_gen_;
  if (must_seed) {
    seed(e, rows);
    e.seeded_gen = batch_gen_;
    any_seeded_ = true;
  } else if (!opts_.mutate_skip_reseed) {
    for (int32_t i = 0; i < n; ++i)
      if (e.pos[i] != rows[i].position || e.ids[i] != rows[i].token)
        throw std::logic_error(
            "decode graph: state of row " + std::to_string(i) + " (" + *rows[i].request_id +
            ") is out of sync with the scheduler (position " + std::to_string(e.pos[i]) + " vs " +
            std::to_string(rows[i].position) +
            "); invariant: an entry whose batch is unchanged holds the advanced state");
  }
  // Blocks the rows gained since they were written (a request crossed a block boundary).
  for (int32_t i = 0; i < n; ++i) {
    const int32_t have = e.blocks_written[i], want = std::min(rows[i].num_blocks, e.width);
    if (want <= have) continue;
    backend_.host_write(e.bt, [&] {
      std::copy(rows[i].blocks + have, rows[i].blocks + want,
                e.table() + static_cast<size_t>(i) * e.width + have);
    });
    const int32_t p = rows[i].position;
    backend_.host_write(e.state, [&] {
      e.slots[i] = static_cast<int64_t>(e.table()[i * e.width + p / block_size_]) * block_size_ +
                   p % block_size_;
    });
    e.blocks_written[i] = want;
    ++stats_.block_writes;
  }

  if (!e.graph && !e.warmed) {
    // Warm-up: the same ops, run eagerly on the graph's own buffers.
    backend_.host_write(e.state, [&] {
      backend_.host_write(
          e.bt, [&] { backend_.host_write(e.logits, [&] { record_step(e, vt::Exec::eager()); }); });
    });
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
  return e.logit_data();
}

const int32_t* DecodeGraphDriver::argmax_ids() const { return last_ ? last_->ids : nullptr; }

void DecodeGraphDriver::commit_tokens(const std::vector<int32_t>& sampled) {
  Entry& e = *last_;
  for (size_t i = 0; i < sampled.size(); ++i) {
    if (e.ids[i] == sampled[i]) continue;
    backend_.host_write(e.state, [&] { e.ids[i] = sampled[i]; });
    ++stats_.token_writes;
  }
}

void DecodeGraphDriver::invalidate() { ++batch_gen_; }

}  // namespace vllm::engine
