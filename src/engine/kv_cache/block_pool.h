// BlockPool: the KV cache's blocks as bookkeeping — ref counts, an LRU free queue, and the
// prefix-cache map from block hash to a block whose K/V holds exactly those tokens. A freed
// block keeps its hash (and stays reusable) until the free queue hands it out again.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace vllm::engine {

// Parent hash of a request's first block.
inline constexpr uint64_t kRootBlockHash = 0x6a09e667f3bcc908ull;

// hash(parent hash, token ids of one full block): 64-bit, well mixed. Hits are still verified
// against the stored tokens, so a collision costs a miss, never a wrong prefix.
uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens);

struct KVCacheBlock {
  int32_t ref_cnt = 0;
  bool has_hash = false;
  uint64_t block_hash = 0;
  uint64_t parent_hash = 0;
  // Intrusive links of the free queue (-1: none); in_free_queue tells membership.
  int32_t prev_free = -1;
  int32_t next_free = -1;
  bool in_free_queue = false;
};

class BlockPool {
 public:
  BlockPool(int64_t num_blocks, int block_size, bool enable_caching);

  int64_t num_blocks() const { return static_cast<int64_t>(blocks_.size()); }
  int block_size() const { return block_size_; }
  int64_t num_free_blocks() const { return num_free_; }
  // Fraction of blocks held by requests (cached-but-free blocks count as free).
  float usage() const;

  // Pops n blocks from the LRU end of the free queue with ref_cnt 1, dropping any cached hash
  // they carried. The caller has checked num_free_blocks() >= n.
  void get_new_blocks(int64_t n, std::vector<int32_t>& out);
  // The cached block holding exactly `tokens` after the prefix hashed as parent_hash, or -1.
  int32_t get_cached_block(uint64_t hash, uint64_t parent_hash,
                           std::span<const int32_t> tokens) const;
  // One more owner for each block (a prefix hit); free blocks leave the free queue.
  void touch(std::span<const int32_t> block_ids);
  // One owner fewer; blocks reaching 0 join the free queue in the given order, so the first
  // listed is evicted first.
  void free_blocks(std::span<const int32_t> ordered_block_ids);
  // Registers a full block with its hash; a no-op when that hash already has a block.
  void cache_full_block(int32_t block_id, uint64_t hash, uint64_t parent_hash,
                        std::span<const int32_t> tokens);
  // Drops every hash of a free block (tests, and a server's /reset_prefix_cache).
  void reset_prefix_cache();

  const KVCacheBlock& block(int32_t id) const { return blocks_[static_cast<size_t>(id)]; }
  int64_t num_cached_blocks() const { return static_cast<int64_t>(cached_.size()); }
  // Empty when the free queue, ref counts and hash map agree; otherwise what is wrong.
  // expected_refs[b] is the number of requests holding block b.
  std::string check_consistency(const std::vector<int32_t>& expected_refs) const;

 private:
  void push_free_back(int32_t id);
  void remove_free(int32_t id);
  void drop_hash(int32_t id);

  int block_size_;
  bool enable_caching_;
  std::vector<KVCacheBlock> blocks_;
  std::vector<int32_t> block_tokens_;  // [num_blocks][block_size], valid for hashed blocks
  std::unordered_map<uint64_t, int32_t> cached_;
  int32_t free_head_ = -1;
  int32_t free_tail_ = -1;
  int64_t num_free_ = 0;
};

}  // namespace vllm::engine
