// Seqs and GraphDecoder (see harness.h).
#include "harness.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>

#include "../model/test_paths.h"
#include "engine/runner/decode_graph.h"
#include "vt/cuda/cuda_check.h"
#include "vt/cuda/index_math.h"
#include "vt/cuda/kernels.h"

namespace vllm::cuda_testing {

std::string default_gguf() { return vllm::testing::default_gguf(); }
std::string tiny_models_dir() { return vllm::testing::tiny_models_dir(); }
std::string golden_dir() { return vllm::testing::golden_dir(); }

// ---- GraphDecoder ----

struct GraphDecoder::Entry {
  int32_t padded = 0;
  vt::DeviceBuffer *state = nullptr, *bt = nullptr, *logits = nullptr;
  int32_t width = 0;
  int32_t *ids = nullptr, *pos = nullptr, *seq = nullptr, *rows = nullptr, *seq_lens = nullptr;
  int64_t* slots = nullptr;
  vt::GraphId graph = 0;
  bool warmed = false;
  uint64_t seeded_gen = 0;
  int64_t replays_since_capture = 0;
  std::vector<int32_t> blocks_written;
  int32_t* table() const { return static_cast<int32_t*>(bt->data); }
};

namespace {
int32_t pow2_at_least(int32_t n) {
  int32_t w = 1;
  while (w < n) w *= 2;
  return w;
}
double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

GraphDecoder::GraphDecoder(vt::cuda::CudaModelExecutor& ex, GraphOptions opts, int block_size,
                           int32_t max_batch, int32_t max_blocks_per_req,
                           int64_t max_tokens_per_step)
    : ex_(ex),
      be_(ex.backend()),
      opts_(opts),
      block_size_(block_size),
      vocab_(ex.vocab_size()),
      max_blocks_per_req_(max_blocks_per_req) {
  sizes_ = vllm::engine::DecodeGraphDriver::capture_sizes(max_batch);
  ex_.prepare_graphs(std::max<int64_t>(max_tokens_per_step, sizes_.back()));
  be_.set_strict(opts_.strict);
}

GraphDecoder::~GraphDecoder() {
  for (auto& [p, e] : entries_) {
    try {
      drop_graph(*e);
    } catch (const std::exception&) {
      // Reported when the invariant broke; the graph is gone either way.
    }
    for (vt::DeviceBuffer* b : {e->state, e->bt, e->logits})
      if (b && b->live) be_.free(b);
  }
}

GraphDecoder::Entry& GraphDecoder::entry(int32_t padded) {
  auto it = entries_.find(padded);
  if (it != entries_.end()) return *it->second;
  auto e = std::make_unique<Entry>();
  e->padded = padded;
  const size_t p = static_cast<size_t>(padded);
  e->state = be_.alloc(p * (5 * sizeof(int32_t) + sizeof(int64_t)) + 8);
  e->logits = be_.alloc(p * static_cast<size_t>(vocab_) * sizeof(float));
  auto* base = static_cast<int32_t*>(e->state->data);
  e->ids = base;
  e->pos = base + p;
  e->seq = base + 2 * p;
  e->rows = base + 3 * p;
  e->seq_lens = base + 4 * p;
  e->slots = reinterpret_cast<int64_t*>((reinterpret_cast<uintptr_t>(base + 5 * p) + 7) &
                                        ~static_cast<uintptr_t>(7));
  Entry* raw = e.get();
  be_.host_write(e->state, [raw, p] {
    for (size_t i = 0; i < p; ++i) raw->seq[i] = raw->rows[i] = static_cast<int32_t>(i);
  });
  e->blocks_written.assign(p, 0);
  return *(entries_[padded] = std::move(e));
}

void GraphDecoder::drop_graph(Entry& e) {
  const vt::GraphId g = e.graph;
  e.graph = 0;
  e.replays_since_capture = 0;
  if (g) be_.destroy(g);
}

void GraphDecoder::alloc_table(Entry& e, int32_t width) {
  vt::DeviceBuffer* old = e.bt;
  e.bt = be_.alloc(static_cast<size_t>(e.padded + 1) * width * sizeof(int32_t));
  e.width = width;
  if (old) {
    // The old graph is bound to the old table: retire it and re-capture. The mutation frees
    // it while the graph still holds it.
    if (opts_.mutate_free_not_retire)
      be_.free(old);
    else
      be_.retire(old);
    drop_graph(e);
    ++stats_.width_changes;
  }
  e.seeded_gen = 0;
}

void GraphDecoder::seed(Entry& e, const std::vector<Row>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size()), W = e.width;
  be_.host_write(e.state, [&] {
    for (int32_t i = 0; i < e.padded; ++i) {
      const bool real = i < n;
      e.ids[i] = real ? rows[i].token : 0;
      e.pos[i] = real ? rows[i].position : 0;
      e.seq_lens[i] = real ? rows[i].position + 1 : 0;
      e.slots[i] = real ? vt::cuda::slot_of(rows[i].blocks, rows[i].position, block_size_) : -1;
    }
  });
  be_.host_write(e.bt, [&] {
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

void GraphDecoder::record(Entry& e, vt::Exec& ex) {
  vllm::model::ForwardBatch fb;
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
  ex_.execute(fb, static_cast<float*>(e.logits->data), ex);
  // The step's last ops: greedy next ids, then the advance, so a replay needs no host write.
  auto dev = [this](const void* p) { return be_.device_address(p); };
  const cudaStream_t s = be_.stream();
  vt::cuda::argmax_rows(s, static_cast<const float*>(be_.device_ptr(e.logits)), e.padded, vocab_,
                        vocab_, static_cast<int32_t*>(dev(e.ids)));
  vt::cuda::decode_advance(s, e.padded, static_cast<int32_t*>(dev(e.pos)),
                           static_cast<int32_t*>(dev(e.seq_lens)),
                           static_cast<int64_t*>(dev(e.slots)),
                           static_cast<const int32_t*>(be_.device_ptr(e.bt)), e.width, block_size_);
  vt::cuda::check_launch("argmax / advance");
}

void GraphDecoder::capture(Entry& e) {
  vt::Exec ex;
  e.graph = be_.begin_capture(ex, {e.state, e.bt, e.logits});
  try {
    record(e, ex);
  } catch (...) {
    be_.abort_capture(ex);
    e.graph = 0;
    throw;
  }
  be_.end_capture(ex, e.graph);
  ++stats_.captures;
}

const std::vector<float>& GraphDecoder::step(const std::vector<Row>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size());
  if (n < 1 || n > sizes_.back())
    throw std::logic_error("graph decoder: batch of " + std::to_string(n) + " out of range");
  const int32_t padded = *std::lower_bound(sizes_.begin(), sizes_.end(), n);
  Entry& e = entry(padded);
  ++stats_.steps;
  const int64_t h2d0 = be_.transfer_stats().h2d_copies;
  bool structural = false;

  int32_t needed = 1;
  for (const Row& r : rows) needed = std::max(needed, r.num_blocks);
  needed = std::min(pow2_at_least(needed), max_blocks_per_req_);
  bool changed = last_ != &e || static_cast<int32_t>(last_rows_.size()) != n;
  for (int32_t i = 0; !changed && i < n; ++i) changed = last_rows_[i] != rows[i].request;
  if (changed) {
    ++gen_;
    last_rows_.clear();
    for (const Row& r : rows) last_rows_.push_back(r.request);
  }
  if (!e.bt || (needed > e.width && !opts_.mutate_keep_width) ||
      (changed && needed < e.width / 2)) {
    alloc_table(e, needed);
    structural = true;
  }
  const bool must_seed = opts_.mutate_skip_reseed ? !any_seeded_ : e.seeded_gen != gen_;
  if (must_seed) {
    seed(e, rows);
    e.seeded_gen = gen_;
    any_seeded_ = true;
    structural = true;
  } else if (!opts_.mutate_skip_reseed) {
    for (int32_t i = 0; i < n; ++i)
      if (e.pos[i] != rows[i].position || e.ids[i] != rows[i].token)
        throw std::logic_error("graph decoder: state of row " + std::to_string(i) +
                               " is out of sync with the caller (position " +
                               std::to_string(e.pos[i]) + " vs " +
                               std::to_string(rows[i].position) +
                               "); invariant: an unchanged batch holds the advanced state");
  }
  for (int32_t i = 0; i < n; ++i) {
    const int32_t have = e.blocks_written[i], want = std::min(rows[i].num_blocks, e.width);
    if (want <= have) continue;
    be_.host_write(e.bt, [&] {
      std::copy(rows[i].blocks + have, rows[i].blocks + want,
                e.table() + static_cast<size_t>(i) * e.width + have);
    });
    const int32_t p = rows[i].position;
    be_.host_write(e.state, [&] {
      e.slots[i] = vt::cuda::slot_of(e.table() + static_cast<size_t>(i) * e.width, p, block_size_);
    });
    e.blocks_written[i] = want;
    ++stats_.block_writes;
    structural = true;
  }

  const double t0 = now_us();
  bool replayed = false;
  if (!e.graph && !e.warmed) {
    record(e, vt::Exec::eager());  // warm-up: the same ops, eagerly, on the graph's buffers
    e.warmed = true;
    ++stats_.warmups;
  } else {
    if (!e.graph) capture(e);
    be_.replay(e.graph);
    replayed = true;
    ++stats_.replays;
    if (opts_.recapture_every > 0 && ++e.replays_since_capture >= opts_.recapture_every)
      drop_graph(e);  // re-captured at the next step
  }
  issue_us_ = now_us() - t0;
  const int64_t h2d_in_step = be_.transfer_stats().h2d_copies - h2d0;
  if (replayed && !structural) {
    ++stats_.steady_steps;
    stats_.steady_h2d += h2d_in_step;
  }

  // Results: the state (next ids, advanced positions) always; the logits when asked.
  be_.download_buffer(e.state);
  next_.assign(e.ids, e.ids + n);
  if (opts_.download_logits) {
    logits_.resize(static_cast<size_t>(n) * vocab_);
    be_.download(logits_.data(), be_.device_ptr(e.logits), logits_.size() * sizeof(float));
  } else {
    logits_.clear();
  }
  last_ = &e;
  return logits_;
}

}  // namespace vllm::cuda_testing
