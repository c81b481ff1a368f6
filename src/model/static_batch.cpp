// StaticBatch: contiguous pages per sequence, flat token batches.
#include "model/static_batch.h"

#include <algorithm>
#include <stdexcept>

namespace vllm::model {

StaticBatch::StaticBatch(CausalLM& m, int64_t n_seqs, int64_t max_len, int block_size,
                         std::optional<vt::DType> kv)
    : m_(m), n_seqs_(n_seqs), max_len_(max_len), block_size_(block_size) {
  blocks_per_seq_ = (max_len + block_size - 1) / block_size;
  m_.init_kv_cache(n_seqs * blocks_per_seq_, block_size, kv.value_or(m.default_kv_dtype()));
  block_tables_.resize(n_seqs * blocks_per_seq_);
  for (int64_t i = 0; i < n_seqs * blocks_per_seq_; ++i) block_tables_[i] = static_cast<int32_t>(i);
  lens_.assign(n_seqs, 0);
}

void StaticBatch::set_lora(int64_t s, int32_t id) {
  seq_lora_.resize(static_cast<size_t>(n_seqs_), 0);
  seq_lora_.at(static_cast<size_t>(s)) = id;
}

void StaticBatch::run(const std::vector<int32_t>& ids, const std::vector<int32_t>& seq,
                      const std::vector<int32_t>& logit_rows) {
  const int64_t n = static_cast<int64_t>(ids.size());
  pos_.resize(n);
  slots_.resize(n);
  lora_ids_.assign(static_cast<size_t>(n), 0);
  bool lora = false;
  for (int64_t t = 0; t < n; ++t) {
    if (!seq_lora_.empty()) lora |= (lora_ids_[t] = seq_lora_[seq[t]]) != 0;
    const int64_t s = seq[t], p = lens_[s]++;
    if (p >= max_len_) throw std::runtime_error("sequence longer than the reserved context");
    pos_[t] = static_cast<int32_t>(p);
    slots_[t] =
        static_cast<int64_t>(block_tables_[s * blocks_per_seq_ + p / block_size_]) * block_size_ +
        p % block_size_;
  }
  ForwardBatch b;
  b.n_tok = n;
  b.token_ids = ids.data();
  b.positions = pos_.data();
  b.seq_of_token = seq.data();
  b.slot_mapping = slots_.data();
  b.block_tables = block_tables_.data();
  b.bt_stride = blocks_per_seq_;
  b.n_seqs = n_seqs_;
  b.logits_indices = logit_rows.data();
  b.n_logits = static_cast<int64_t>(logit_rows.size());
  b.lora_ids = lora ? lora_ids_.data() : nullptr;
  logits_.resize(static_cast<size_t>(b.n_logits * m_.config().vocab_size));
  m_.forward(b, logits_.data());
}

const std::vector<float>& StaticBatch::prefill(const std::vector<std::vector<int32_t>>& tokens,
                                               int64_t chunk) {
  const int64_t V = m_.config().vocab_size;
  std::vector<float> last(n_seqs_ * V, 0.0f);
  std::vector<size_t> done(n_seqs_, 0);
  for (;;) {
    std::vector<int32_t> ids, seq, rows, row_seq;
    for (int64_t s = 0; s < n_seqs_; ++s) {
      const auto& t = tokens[s];
      const size_t before = done[s];
      while (done[s] < t.size() && static_cast<int64_t>(ids.size()) < chunk) {
        ids.push_back(t[done[s]++]);
        seq.push_back(static_cast<int32_t>(s));
      }
      if (done[s] > before && done[s] == t.size()) {  // this chunk holds the last token
        rows.push_back(static_cast<int32_t>(ids.size() - 1));
        row_seq.push_back(static_cast<int32_t>(s));
      }
    }
    if (ids.empty()) break;
    run(ids, seq, rows);
    for (size_t r = 0; r < rows.size(); ++r)
      std::copy_n(logits_.data() + r * V, V, last.data() + row_seq[r] * V);
  }
  logits_ = std::move(last);
  return logits_;
}

const std::vector<float>& StaticBatch::prefill_all(int64_t seq, const std::vector<int32_t>& ids) {
  std::vector<int32_t> seqs(ids.size(), static_cast<int32_t>(seq)), rows(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) rows[i] = static_cast<int32_t>(i);
  run(ids, seqs, rows);
  return logits_;
}

const std::vector<float>& StaticBatch::decode(const std::vector<int32_t>& token) {
  std::vector<int32_t> seq(n_seqs_), rows(n_seqs_);
  for (int64_t s = 0; s < n_seqs_; ++s) seq[s] = rows[s] = static_cast<int32_t>(s);
  run(token, seq, rows);
  return logits_;
}

}  // namespace vllm::model
