// BlockPool: free queue (intrusive doubly linked list, LRU at the head), ref counts and the
// hash -> block map of the prefix cache.
#include "engine/kv_cache/block_pool.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace vllm::engine {
namespace {

inline uint64_t mum(uint64_t a, uint64_t b) {
  unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

constexpr uint64_t kP0 = 0xa0761d6478bd642full;
constexpr uint64_t kP1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kP2 = 0x8ebc6af09c88c6e3ull;
constexpr uint64_t kP3 = 0x589965cc75374cc3ull;

}  // namespace

uint64_t hash_block_tokens(uint64_t parent_hash, std::span<const int32_t> tokens) {
  uint64_t h = mum(parent_hash ^ kP0, kP1 ^ tokens.size());
  size_t i = 0;
  for (; i + 2 <= tokens.size(); i += 2) {
    uint64_t pair = static_cast<uint32_t>(tokens[i]) |
                    (static_cast<uint64_t>(static_cast<uint32_t>(tokens[i + 1])) << 32);
    h = mum(h ^ pair ^ kP2, kP1);
  }
  if (i < tokens.size()) h = mum(h ^ static_cast<uint32_t>(tokens[i]) ^ kP3, kP1);
  return mum(h ^ kP0, kP3);
}

BlockPool::BlockPool(int64_t num_blocks, int block_size, bool enable_caching)
    : block_size_(block_size), enable_caching_(enable_caching) {
  if (num_blocks < 1 || block_size < 1)
    throw std::invalid_argument("BlockPool needs at least one block of at least one slot");
  blocks_.resize(static_cast<size_t>(num_blocks));
  if (enable_caching_) block_tokens_.resize(static_cast<size_t>(num_blocks * block_size));
  for (int64_t i = 0; i < num_blocks; ++i) push_free_back(static_cast<int32_t>(i));
}

float BlockPool::usage() const {
  return 1.0f - static_cast<float>(num_free_) / static_cast<float>(blocks_.size());
}

void BlockPool::push_free_back(int32_t id) {
  KVCacheBlock& b = blocks_[id];
  b.prev_free = free_tail_;
  b.next_free = -1;
  if (free_tail_ >= 0)
    blocks_[free_tail_].next_free = id;
  else
    free_head_ = id;
  free_tail_ = id;
  b.in_free_queue = true;
  ++num_free_;
}

void BlockPool::remove_free(int32_t id) {
  KVCacheBlock& b = blocks_[id];
  if (b.prev_free >= 0)
    blocks_[b.prev_free].next_free = b.next_free;
  else
    free_head_ = b.next_free;
  if (b.next_free >= 0)
    blocks_[b.next_free].prev_free = b.prev_free;
  else
    free_tail_ = b.prev_free;
  b.prev_free = b.next_free = -1;
  b.in_free_queue = false;
  --num_free_;
}

void BlockPool::drop_hash(int32_t id) {
  KVCacheBlock& b = blocks_[id];
  if (!b.has_hash) return;
  auto it = cached_.find(b.block_hash);
  if (it != cached_.end() && it->second == id) cached_.erase(it);
  b.has_hash = false;
}

void BlockPool::get_new_blocks(int64_t n, std::vector<int32_t>& out) {
  if (n > num_free_) throw std::logic_error("BlockPool::get_new_blocks: not enough free blocks");
  for (int64_t i = 0; i < n; ++i) {
    int32_t id = free_head_;
    remove_free(id);
    drop_hash(id);
    blocks_[id].ref_cnt = 1;
    out.push_back(id);
  }
}

int32_t BlockPool::get_cached_block(uint64_t hash, uint64_t parent_hash,
                                    std::span<const int32_t> tokens) const {
  if (!enable_caching_) return -1;
  auto it = cached_.find(hash);
  if (it == cached_.end()) return -1;
  const KVCacheBlock& b = blocks_[it->second];
  if (b.parent_hash != parent_hash || tokens.size() != static_cast<size_t>(block_size_)) return -1;
  const int32_t* stored = block_tokens_.data() + static_cast<size_t>(it->second) * block_size_;
  if (std::memcmp(stored, tokens.data(), tokens.size() * sizeof(int32_t)) != 0) return -1;
  return it->second;
}

void BlockPool::touch(std::span<const int32_t> block_ids) {
  for (int32_t id : block_ids) {
    if (blocks_[id].ref_cnt == 0) remove_free(id);
    ++blocks_[id].ref_cnt;
  }
}

void BlockPool::free_blocks(std::span<const int32_t> ordered_block_ids) {
  for (int32_t id : ordered_block_ids) {
    KVCacheBlock& b = blocks_[id];
    if (b.ref_cnt <= 0) throw std::logic_error("BlockPool::free_blocks: block freed twice");
    if (--b.ref_cnt == 0) push_free_back(id);
  }
}

void BlockPool::cache_full_block(int32_t block_id, uint64_t hash, uint64_t parent_hash,
                                 std::span<const int32_t> tokens) {
  if (!enable_caching_) return;
  KVCacheBlock& b = blocks_[block_id];
  if (b.has_hash) return;
  if (!cached_.emplace(hash, block_id).second) return;  // same content already has a block
  b.has_hash = true;
  b.block_hash = hash;
  b.parent_hash = parent_hash;
  std::copy(tokens.begin(), tokens.end(),
            block_tokens_.begin() + static_cast<ptrdiff_t>(block_id) * block_size_);
}

void BlockPool::reset_prefix_cache() {
  for (size_t i = 0; i < blocks_.size(); ++i)
    if (blocks_[i].ref_cnt == 0) drop_hash(static_cast<int32_t>(i));
}

std::string BlockPool::check_consistency(const std::vector<int32_t>& expected_refs) const {
  std::ostringstream err;
  int64_t n_in_queue = 0;
  int32_t prev = -1;
  for (int32_t id = free_head_; id >= 0; id = blocks_[id].next_free) {
    if (++n_in_queue > num_blocks()) {
      err << "free queue has a cycle; ";
      break;
    }
    if (blocks_[id].prev_free != prev) err << "block " << id << " has a broken prev link; ";
    if (!blocks_[id].in_free_queue) err << "block " << id << " in queue but not flagged; ";
    prev = id;
  }
  if (prev != free_tail_) err << "free queue tail mismatch; ";
  if (n_in_queue != num_free_)
    err << "num_free " << num_free_ << " != queue " << n_in_queue << "; ";
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const KVCacheBlock& b = blocks_[i];
    int32_t want = i < expected_refs.size() ? expected_refs[i] : 0;
    if (b.ref_cnt != want)
      err << "block " << i << " ref_cnt " << b.ref_cnt << " != owners " << want << "; ";
    if ((b.ref_cnt == 0) != b.in_free_queue)
      err << "block " << i << " ref_cnt " << b.ref_cnt << " but in_free_queue=" << b.in_free_queue
          << "; ";
    if (b.ref_cnt > 1 && !b.has_hash)
      err << "block " << i << " shared by " << b.ref_cnt << " requests but not a cached block; ";
    if (b.has_hash) {
      auto it = cached_.find(b.block_hash);
      if (it == cached_.end() || it->second != static_cast<int32_t>(i))
        err << "block " << i << " hashed but not in the map; ";
    }
  }
  for (const auto& [h, id] : cached_)
    if (!blocks_[id].has_hash || blocks_[id].block_hash != h)
      err << "map entry for block " << id << " is stale; ";
  return err.str();
}

}  // namespace vllm::engine
