// InputBatch: slot allocation, incremental row updates and condensing.
#include "engine/runner/input_batch.h"

#include <algorithm>
#include <stdexcept>

namespace vllm::engine {

InputBatch::InputBatch(int32_t max_num_reqs, int32_t max_model_len, int32_t max_blocks_per_req)
    : max_num_reqs_(max_num_reqs),
      max_model_len_(max_model_len),
      max_blocks_per_req_(max_blocks_per_req),
      token_ids_(static_cast<size_t>(max_num_reqs) * max_model_len, 0),
      num_tokens_(max_num_reqs, 0),
      block_table_(static_cast<size_t>(max_num_reqs) * max_blocks_per_req, 0),
      num_blocks_(max_num_reqs, 0),
      req_ids_(max_num_reqs) {}

int32_t InputBatch::slot_of(const std::string& request_id) const {
  auto it = slot_of_.find(request_id);
  return it == slot_of_.end() ? -1 : it->second;
}

int32_t InputBatch::add_request(const std::string& request_id, std::span<const int32_t> token_ids,
                                std::span<const int32_t> block_ids) {
  if (slot_of_.count(request_id)) throw std::logic_error("InputBatch: request added twice");
  int32_t slot = 0;
  while (slot < max_num_reqs_ && !req_ids_[slot].empty()) ++slot;
  if (slot == max_num_reqs_) throw std::logic_error("InputBatch: more requests than max_num_seqs");
  req_ids_[slot] = request_id;
  slot_of_[request_id] = slot;
  num_tokens_[slot] = 0;
  num_blocks_[slot] = 0;
  sync_tokens(slot, token_ids);
  append_block_ids(slot, block_ids);
  num_reqs_ = std::max(num_reqs_, slot + 1);
  return slot;
}

void InputBatch::remove_request(const std::string& request_id) {
  auto it = slot_of_.find(request_id);
  if (it == slot_of_.end()) return;
  req_ids_[it->second].clear();
  slot_of_.erase(it);
}

void InputBatch::move_row(int32_t from, int32_t to) {
  std::copy_n(token_row(from), num_tokens_[from],
              token_ids_.begin() + static_cast<ptrdiff_t>(to) * max_model_len_);
  std::copy_n(block_row(from), num_blocks_[from],
              block_table_.begin() + static_cast<ptrdiff_t>(to) * max_blocks_per_req_);
  num_tokens_[to] = num_tokens_[from];
  num_blocks_[to] = num_blocks_[from];
  req_ids_[to] = std::move(req_ids_[from]);
  req_ids_[from].clear();
  slot_of_[req_ids_[to]] = to;
}

void InputBatch::condense() {
  int32_t hi = num_reqs_ - 1;
  for (int32_t lo = 0; lo < num_reqs_; ++lo) {
    if (!req_ids_[lo].empty()) continue;
    while (hi > lo && req_ids_[hi].empty()) --hi;
    if (hi <= lo) break;
    move_row(hi, lo);
  }
  num_reqs_ = static_cast<int32_t>(slot_of_.size());
}

void InputBatch::sync_tokens(int32_t slot, std::span<const int32_t> all_tokens) {
  const int32_t have = num_tokens_[slot];
  const auto n = static_cast<int32_t>(all_tokens.size());
  if (n > max_model_len_) throw std::logic_error("InputBatch: request longer than max_model_len");
  std::copy(all_tokens.begin() + have, all_tokens.end(),
            token_ids_.begin() + static_cast<ptrdiff_t>(slot) * max_model_len_ + have);
  num_tokens_[slot] = std::max(have, n);
}

void InputBatch::append_block_ids(int32_t slot, std::span<const int32_t> block_ids) {
  if (num_blocks_[slot] + static_cast<int32_t>(block_ids.size()) > max_blocks_per_req_)
    throw std::logic_error("InputBatch: block table row overflow");
  std::copy(block_ids.begin(), block_ids.end(),
            block_table_.begin() + static_cast<ptrdiff_t>(slot) * max_blocks_per_req_ +
                num_blocks_[slot]);
  num_blocks_[slot] += static_cast<int32_t>(block_ids.size());
}

}  // namespace vllm::engine
