// KVCacheManager: per-request block lists over the BlockPool, block hashing and prefix hits.
#include "engine/kv_cache/kv_cache_manager.h"

#include <algorithm>
#include <sstream>

namespace vllm::engine {
namespace {
const std::vector<int32_t> kNoBlocks;

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

KVCacheManager::KVCacheManager(int64_t num_blocks, int block_size, bool enable_caching)
    : pool_(num_blocks, block_size, enable_caching), enable_caching_(enable_caching) {}

void KVCacheManager::update_block_hashes(Request& req) const {
  const int64_t bs = block_size();
  const int64_t n_full = req.num_tokens() / bs;
  const auto& toks = req.all_token_ids();
  for (int64_t i = static_cast<int64_t>(req.block_hashes.size()); i < n_full; ++i) {
    uint64_t parent = i == 0 ? req.block_hash_root : req.block_hashes[i - 1];
    req.block_hashes.push_back(
        hash_block_tokens(parent, std::span<const int32_t>(toks.data() + i * bs, bs)));
  }
}

ComputedBlocks KVCacheManager::get_computed_blocks(Request& req) {
  ComputedBlocks out;
  if (!enable_caching_) return out;
  update_block_hashes(req);
  const int64_t bs = block_size();
  const int64_t max_blocks = (req.num_tokens() - 1) / bs;
  const auto& toks = req.all_token_ids();
  for (int64_t i = 0; i < max_blocks && i < static_cast<int64_t>(req.block_hashes.size()); ++i) {
    uint64_t parent = i == 0 ? req.block_hash_root : req.block_hashes[i - 1];
    int32_t id = pool_.get_cached_block(req.block_hashes[i], parent,
                                        std::span<const int32_t>(toks.data() + i * bs, bs));
    if (id < 0) break;
    out.block_ids.push_back(id);
  }
  out.num_tokens = static_cast<int64_t>(out.block_ids.size()) * bs;
  return out;
}

bool KVCacheManager::allocate_slots(Request& req, int64_t num_new_tokens,
                                    const ComputedBlocks* new_computed) {
  ReqBlocks& rb = req_blocks_[req.request_id];
  const int64_t n_hit_blocks =
      new_computed ? static_cast<int64_t>(new_computed->block_ids.size()) : 0;
  const int64_t n_hit_tokens = new_computed ? new_computed->num_tokens : 0;
  const int64_t total = req.num_computed_tokens + n_hit_tokens + num_new_tokens;
  const int64_t have = static_cast<int64_t>(rb.blocks.size()) + n_hit_blocks;
  const int64_t need = std::max<int64_t>(0, cdiv(total, block_size()) - have);
  // A hit on a free (evictable) block takes it out of the free queue.
  int64_t hits_in_free = 0;
  if (new_computed)
    for (int32_t id : new_computed->block_ids) hits_in_free += pool_.block(id).ref_cnt == 0;
  if (need > pool_.num_free_blocks() - hits_in_free) {
    if (rb.blocks.empty()) req_blocks_.erase(req.request_id);
    return false;
  }
  if (new_computed) {
    pool_.touch(new_computed->block_ids);
    rb.blocks.insert(rb.blocks.end(), new_computed->block_ids.begin(),
                     new_computed->block_ids.end());
    rb.num_cached_blocks = n_hit_blocks;
    stats_.queries += req.num_tokens();
    stats_.hits += n_hit_tokens;
  }
  pool_.get_new_blocks(need, rb.blocks);
  return true;
}

void KVCacheManager::cache_blocks(Request& req, int64_t num_computed_tokens) {
  if (!enable_caching_) return;
  auto it = req_blocks_.find(req.request_id);
  if (it == req_blocks_.end()) return;
  ReqBlocks& rb = it->second;
  update_block_hashes(req);
  const int64_t bs = block_size();
  const int64_t n_full = std::min<int64_t>(std::min(num_computed_tokens, req.num_tokens()) / bs,
                                           static_cast<int64_t>(rb.blocks.size()));
  const auto& toks = req.all_token_ids();
  for (int64_t i = rb.num_cached_blocks; i < n_full; ++i) {
    uint64_t parent = i == 0 ? req.block_hash_root : req.block_hashes[i - 1];
    pool_.cache_full_block(rb.blocks[i], req.block_hashes[i], parent,
                           std::span<const int32_t>(toks.data() + i * bs, bs));
  }
  rb.num_cached_blocks = std::max(rb.num_cached_blocks, n_full);
}

void KVCacheManager::free(Request& req) {
  auto it = req_blocks_.find(req.request_id);
  if (it == req_blocks_.end()) return;
  // Tail blocks first: they are the least likely to be shared, so evict them first.
  scratch_.assign(it->second.blocks.rbegin(), it->second.blocks.rend());
  pool_.free_blocks(scratch_);
  req_blocks_.erase(it);
}

const std::vector<int32_t>& KVCacheManager::get_block_ids(const std::string& request_id) const {
  auto it = req_blocks_.find(request_id);
  return it == req_blocks_.end() ? kNoBlocks : it->second.blocks;
}

std::string KVCacheManager::check_consistency() const {
  std::vector<int32_t> refs(static_cast<size_t>(num_blocks()), 0);
  std::ostringstream err;
  for (const auto& [id, rb] : req_blocks_) {
    std::vector<int32_t> sorted = rb.blocks;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      err << "request " << id << " holds a block twice; ";
    for (int32_t b : rb.blocks) {
      if (b < 0 || b >= num_blocks())
        err << "request " << id << " holds bad block " << b << "; ";
      else
        ++refs[b];
    }
  }
  err << pool_.check_consistency(refs);
  return err.str();
}

}  // namespace vllm::engine
