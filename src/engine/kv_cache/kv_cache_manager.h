// KVCacheManager: which blocks each request holds (its block-table row), how many slots it may
// still write, and the prefix-cache lookup. It never touches K/V data: the model executor owns
// the storage, addressed by slot = block_ids[pos / block_size] * block_size + pos % block_size.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/kv_cache/block_pool.h"
#include "engine/request.h"

namespace vllm::engine {

struct PrefixCacheStats {
  int64_t queries = 0;  // prompt tokens looked up on admission
  int64_t hits = 0;     // of those, served from cached blocks
};

// Longest cached prefix of a request: whole blocks only.
struct ComputedBlocks {
  std::vector<int32_t> block_ids;
  int64_t num_tokens = 0;
};

class KVCacheManager {
 public:
  KVCacheManager(int64_t num_blocks, int block_size, bool enable_caching);

  int block_size() const { return pool_.block_size(); }
  int64_t num_blocks() const { return pool_.num_blocks(); }
  int64_t num_free_blocks() const { return pool_.num_free_blocks(); }
  float usage() const { return pool_.usage(); }
  bool enable_caching() const { return enable_caching_; }
  const PrefixCacheStats& prefix_cache_stats() const { return stats_; }
  BlockPool& pool() { return pool_; }

  // The longest run of cached full blocks matching the request's tokens. It never covers the
  // last token: that one is always recomputed so the step has logits to sample from.
  ComputedBlocks get_computed_blocks(Request& req);

  // Reserves blocks for num_new_tokens tokens after the request's computed ones (plus
  // new_computed, a prefix hit being admitted with it). Returns false, changing nothing, when
  // the free blocks do not suffice.
  bool allocate_slots(Request& req, int64_t num_new_tokens,
                      const ComputedBlocks* new_computed = nullptr);

  // Publishes the request's blocks made full by its first num_computed_tokens tokens (their
  // K/V is written) in the prefix cache.
  void cache_blocks(Request& req, int64_t num_computed_tokens);

  // Releases every block of the request; cached ones stay reusable until evicted.
  void free(Request& req);

  // The request's block ids in position order (empty if it holds none).
  const std::vector<int32_t>& get_block_ids(const std::string& request_id) const;

  // Empty when every block is owned as many times as its ref count says, nothing leaked and
  // the pool is consistent; otherwise a description of what is wrong.
  std::string check_consistency() const;

 private:
  struct ReqBlocks {
    std::vector<int32_t> blocks;
    int64_t num_cached_blocks = 0;  // leading blocks already published in the cache
  };
  // Extends req.block_hashes to every full block of its known tokens.
  void update_block_hashes(Request& req) const;

  BlockPool pool_;
  bool enable_caching_;
  std::unordered_map<std::string, ReqBlocks> req_blocks_;
  PrefixCacheStats stats_;
  std::vector<int32_t> scratch_;
};

}  // namespace vllm::engine
