// Seqs and GraphDecoder (see harness.h).
#include "harness.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>

#include "../model/test_files.h"
#include "../model/test_paths.h"
#include "engine/runner/decode_graph.h"
#include "vt/cpu/kernels.h"
#include "vt/cuda/cuda_check.h"
#include "vt/cuda/index_math.h"
#include "vt/cuda/kernels.h"

namespace vllm::cuda_testing {

std::string default_gguf() { return vllm::testing::default_gguf(); }
std::string tiny_models_dir() { return vllm::testing::tiny_models_dir(); }
std::string golden_dir() { return vllm::testing::golden_dir(); }

std::string synthetic_gguf() {
  static const std::string path = [] {
    const int64_t E = 256, F = 512, V = 2048, kvd = 64, layers = 4;
    vllm::testing::GgufSpec g;
    g.strs = {{"general.architecture", "llama"}};
    g.u32s = {{"llama.block_count", static_cast<uint32_t>(layers)},
              {"llama.embedding_length", static_cast<uint32_t>(E)},
              {"llama.feed_forward_length", static_cast<uint32_t>(F)},
              {"llama.attention.head_count", 8},
              {"llama.attention.head_count_kv", 2},
              {"llama.context_length", 1024}};
    g.f32s = {{"llama.attention.layer_norm_rms_epsilon", 1e-5f},
              {"llama.rope.freq_base", 100000.f}};
    std::vector<std::string> toks;
    for (int64_t i = 0; i < V; ++i) toks.push_back("t" + std::to_string(i));
    g.str_arrays = {{"tokenizer.ggml.tokens", toks}};
    std::mt19937 rng(20240611);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    // GGML type ids: F32 0, Q4_0 2, Q4_1 3, Q8_0 8, Q4_K 12, Q6_K 14.
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, vt::DType t,
                      uint32_t ggml, float scale) {
      std::vector<float> x(cols);
      std::vector<uint8_t> data(vt::row_bytes(t, cols) * rows);
      for (int64_t r = 0; r < rows; ++r) {
        for (auto& v : x) v = scale * nd(rng);
        vt::cpu::quantize_row(t, x.data(), data.data() + r * vt::row_bytes(t, cols), cols);
      }
      g.tensors.push_back({name,
                           {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)},
                           ggml,
                           std::move(data)});
    };
    auto norm = [&](const std::string& name) {
      std::vector<float> w(E);
      for (auto& v : w) v = 1.0f + 0.1f * nd(rng);
      std::vector<uint8_t> data(E * 4);
      std::memcpy(data.data(), w.data(), data.size());
      g.tensors.push_back({name, {static_cast<uint64_t>(E)}, 0, std::move(data)});
    };
    matrix("token_embd.weight", E, V, vt::DType::Q8_0, 8, 0.05f);
    norm("output_norm.weight");
    for (int64_t l = 0; l < layers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      norm(b + "attn_norm.weight");
      matrix(b + "attn_q.weight", E, E, vt::DType::Q4_1, 3, 0.08f);
      matrix(b + "attn_k.weight", E, kvd, vt::DType::Q4_K, 12, 0.08f);
      matrix(b + "attn_v.weight", E, kvd, vt::DType::Q6_K, 14, 0.08f);
      matrix(b + "attn_output.weight", E, E, vt::DType::Q4_0, 2, 0.1f);
      norm(b + "ffn_norm.weight");
      matrix(b + "ffn_gate.weight", E, F, vt::DType::Q4_1, 3, 0.06f);
      matrix(b + "ffn_up.weight", E, F, vt::DType::Q8_0, 8, 0.06f);
      matrix(b + "ffn_down.weight", F, E, vt::DType::Q4_K, 12, 0.1f);
    }
    const std::string out =
        vllm::testing::temp_dir("cuda_synthetic") + "/synthetic-llama-mixed-quants.gguf";
    g.write(out);
    return out;
  }();
  return path;
}

uint64_t hash_bits(const float* x, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(x);
  for (int64_t i = 0; i < n * 4; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int32_t host_argmax(const float* x, int64_t n) {
  return static_cast<int32_t>(std::max_element(x, x + n) - x);
}

// ---- Seqs ----

Seqs::Seqs(vllm::engine::ModelExecutor& ex, int64_t num_blocks, int block_size, uint32_t seed)
    : ex_(ex), block_size_(block_size) {
  for (int64_t b = 0; b < num_blocks; ++b) free_.push_back(static_cast<int32_t>(b));
  std::mt19937 rng(seed);
  std::shuffle(free_.begin(), free_.end(), rng);
}

int Seqs::add() {
  seqs_[next_] = Seq{};
  return next_++;
}

void Seqs::release(int seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  free_.insert(free_.end(), it->second.blocks.rbegin(), it->second.blocks.rend());
  seqs_.erase(it);
}

void Seqs::ensure(int seq, int32_t len) {
  Seq& s = seqs_.at(seq);
  while (static_cast<int32_t>(s.blocks.size()) * block_size_ < len) {
    if (free_.empty()) throw std::runtime_error("test harness: out of KV blocks");
    s.blocks.push_back(free_.back());
    free_.pop_back();
  }
}

void Seqs::advance(int seq, int32_t n) {
  ensure(seq, length(seq) + n);
  seqs_.at(seq).len += n;
}

const std::vector<float>& Seqs::run(const std::vector<Part>& parts) {
  ids_.clear();
  pos_.clear();
  seq_of_.clear();
  rows_.clear();
  slots_.clear();
  size_t width = 1;
  for (const Part& p : parts) {
    ensure(p.seq, length(p.seq) + static_cast<int32_t>(p.tokens.size()));
    width = std::max(width, blocks(p.seq).size());
  }
  bt_.assign(parts.size() * width, 0);
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    Seq& s = seqs_.at(p.seq);
    std::copy(s.blocks.begin(), s.blocks.end(), bt_.begin() + i * width);
    for (size_t k = 0; k < p.tokens.size(); ++k) {
      const int32_t pos = s.len++;
      if (p.all_logits || k + 1 == p.tokens.size())
        rows_.push_back(static_cast<int32_t>(ids_.size()));
      ids_.push_back(p.tokens[k]);
      pos_.push_back(pos);
      seq_of_.push_back(static_cast<int32_t>(i));
      slots_.push_back(vt::cuda::slot_of(s.blocks.data(), pos, block_size_));
    }
  }
  vllm::model::ForwardBatch b;
  b.n_tok = static_cast<int64_t>(ids_.size());
  b.token_ids = ids_.data();
  b.positions = pos_.data();
  b.seq_of_token = seq_of_.data();
  b.slot_mapping = slots_.data();
  b.block_tables = bt_.data();
  b.bt_stride = static_cast<int64_t>(width);
  b.n_seqs = static_cast<int64_t>(parts.size());
  b.logits_indices = rows_.data();
  b.n_logits = static_cast<int64_t>(rows_.size());
  if (target_) {
    logits_.clear();
    ex_.execute(b, target_);
    return logits_;
  }
  logits_.resize(rows_.size() * static_cast<size_t>(ex_.vocab_size()));
  ex_.execute(b, logits_.data());
  return logits_;
}

const std::vector<float>& Seqs::prefill(int seq, const std::vector<int32_t>& ids, bool all_logits) {
  return run({Part{seq, ids, all_logits}});
}

const std::vector<float>& Seqs::decode(const std::vector<int>& seqs,
                                       const std::vector<int32_t>& tokens) {
  std::vector<Part> parts;
  for (size_t i = 0; i < seqs.size(); ++i) parts.push_back(Part{seqs[i], {tokens[i]}, false});
  return run(parts);
}

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
