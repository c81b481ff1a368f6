// InputBatch: the persistent per-slot state of the requests in the running batch — token ids,
// token counts and block-table rows in fixed-capacity arrays. Rows are updated incrementally
// (new tokens, new blocks) and kept dense (0..num_reqs-1), never rebuilt from scratch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace vllm::engine {

class InputBatch {
 public:
  InputBatch(int32_t max_num_reqs, int32_t max_model_len, int32_t max_blocks_per_req);

  int32_t num_reqs() const { return num_reqs_; }
  int32_t max_num_reqs() const { return max_num_reqs_; }
  int32_t max_blocks_per_req() const { return max_blocks_per_req_; }
  // Slot of a request, or -1.
  int32_t slot_of(const std::string& request_id) const;

  // Takes the first free slot; returns it.
  int32_t add_request(const std::string& request_id, std::span<const int32_t> token_ids,
                      std::span<const int32_t> block_ids);
  // Leaves a hole; condense() fills holes by moving the last rows down.
  void remove_request(const std::string& request_id);
  void condense();

  // Appends the tokens of `all_tokens` past the row's current count.
  void sync_tokens(int32_t slot, std::span<const int32_t> all_tokens);
  void append_block_ids(int32_t slot, std::span<const int32_t> block_ids);

  const int32_t* token_row(int32_t slot) const {
    return token_ids_.data() + static_cast<size_t>(slot) * max_model_len_;
  }
  int32_t num_tokens(int32_t slot) const { return num_tokens_[slot]; }
  const int32_t* block_table() const { return block_table_.data(); }
  const int32_t* block_row(int32_t slot) const {
    return block_table_.data() + static_cast<size_t>(slot) * max_blocks_per_req_;
  }
  int32_t num_blocks(int32_t slot) const { return num_blocks_[slot]; }
  const std::string& req_id(int32_t slot) const { return req_ids_[slot]; }

 private:
  void move_row(int32_t from, int32_t to);

  int32_t max_num_reqs_, max_model_len_, max_blocks_per_req_;
  int32_t num_reqs_ = 0;              // dense rows after condense(); holes may sit below it before
  std::vector<int32_t> token_ids_;    // [max_num_reqs][max_model_len]
  std::vector<int32_t> num_tokens_;   // [max_num_reqs]
  std::vector<int32_t> block_table_;  // [max_num_reqs][max_blocks_per_req]
  std::vector<int32_t> num_blocks_;   // [max_num_reqs]
  std::vector<std::string> req_ids_;  // [max_num_reqs], empty = free
  std::unordered_map<std::string, int32_t> slot_of_;
};

}  // namespace vllm::engine
