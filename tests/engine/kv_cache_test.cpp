// BlockPool and KVCacheManager: free-queue order, ref counts, prefix-cache hits and misses;
// the KV storage's resident-page count.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "engine/kv_cache/block_pool.h"
#include "engine/kv_cache/kv_cache_manager.h"
#include "model/kv_cache.h"

namespace vllm::engine {
namespace {

std::vector<int32_t> iota(int n, int start = 0) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

std::unique_ptr<Request> make_req(const std::string& id, std::vector<int32_t> prompt,
                                  std::string cache_salt = {}) {
  SamplingParams p;
  p.cache_salt = std::move(cache_salt);
  return std::make_unique<Request>(id, std::move(prompt), p, 16, std::nullopt, 0, 0);
}

TEST(BlockPool, HandsOutInOrderAndReturnsFreedToTheTail) {
  BlockPool pool(4, 2, true);
  std::vector<int32_t> got;
  pool.get_new_blocks(3, got);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(pool.num_free_blocks(), 1);
  std::vector<int32_t> order = {2, 0};
  pool.free_blocks(order);
  got.clear();
  pool.get_new_blocks(3, got);
  EXPECT_EQ(got, (std::vector<int32_t>{3, 2, 0}));  // never-used first, then LRU order
  EXPECT_THROW(pool.get_new_blocks(2, got), std::logic_error);
}

// The storage behind the pool is mapped lazily: only pages written are resident, and the
// server reports them (vllmcpp:kv_cache_resident_bytes) so a soak can judge RSS net of them.
TEST(KvCacheStorage, ResidentBytesFollowWrites) {
  auto be = ::vt::make_cpu_backend();
  vllm::model::KvCache kv;
  EXPECT_EQ(kv.resident_bytes(), 0);  // nothing mapped yet
  const int64_t layers = 2, blocks = 64;
  const int bs = 16, heads = 2, dim = 64;
  kv.init(*be, layers, blocks, bs, heads, dim, ::vt::DType::F32);
  EXPECT_EQ(kv.resident_bytes(), 0);
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  // One token of V in block 10 of layer 1: [block][slot][head][dim] floats, one page.
  auto v = kv.layer(1);
  float* tok = reinterpret_cast<float*>(v.v) + (10 * bs + 3) * heads * dim;
  std::fill(tok, tok + heads * dim, 1.0f);
  EXPECT_EQ(kv.resident_bytes(), page);
  const int64_t total =
      layers * blocks * vllm::model::KvCache::bytes_per_block(1, bs, heads, dim, ::vt::DType::F32);
  const size_t half = static_cast<size_t>(total / (2 * layers));  // K or V of one layer
  for (int64_t l = 0; l < layers; ++l) {
    std::memset(kv.layer(l).k, 0, half);
    std::memset(kv.layer(l).v, 0, half);
  }
  EXPECT_EQ(kv.resident_bytes(), total);
}

// prefault(n) commits blocks [0, n) of every layer's K and V halves (what a fresh engine
// hands out first), leaves block n onward lazy, and keeps what the blocks already hold.
TEST(KvCacheStorage, PrefaultCommitsTheFirstBlocksAndKeepsTheirContents) {
  auto be = ::vt::make_cpu_backend();
  vllm::model::KvCache kv;
  const int64_t layers = 3, blocks = 64;
  const int bs = 16, heads = 2, dim = 64;  // 8 KiB per block and half (F32): two pages
  kv.init(*be, layers, blocks, bs, heads, dim, ::vt::DType::F32);
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t half_block = bs * heads * dim * 4;
  ASSERT_EQ(half_block % page, 0);
  float* k1 = reinterpret_cast<float*>(kv.layer(1).k) + 5;  // block 0 of layer 1's K half
  *k1 = 42.0f;
  ASSERT_EQ(kv.resident_bytes(), page);
  const int64_t got = kv.prefault(4);
  if (got < 0) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux < 5.14)";
  EXPECT_EQ(got, 2 * layers * 4 * half_block);
  EXPECT_EQ(kv.resident_bytes(), 2 * layers * 4 * half_block);
  EXPECT_EQ(*k1, 42.0f);
  // Past the cache's end it stops at the last block.
  EXPECT_EQ(kv.prefault(blocks + 10), 2 * layers * blocks * half_block);
  EXPECT_EQ(kv.resident_bytes(), 2 * layers * blocks * half_block);
  EXPECT_EQ(kv.prefault(0), 0);
}

// The pages are the backend's storage: it accounts for them while the cache holds them and
// has none left once the cache is re-sized or gone.
TEST(KvCacheStorage, PagesAreBackendStorage) {
  auto be = ::vt::make_cpu_backend();
  const auto kv_bytes = [&] {
    return be->stats().storage_bytes[static_cast<int>(::vt::StorageKind::KvCache)];
  };
  const int64_t per_block = vllm::model::KvCache::bytes_per_block(3, 16, 2, 64, ::vt::DType::F16);
  {
    vllm::model::KvCache kv;
    kv.init(*be, 3, 10, 16, 2, 64, ::vt::DType::F16);
    EXPECT_EQ(kv_bytes(), 10 * per_block);
    EXPECT_EQ(be->stats().storage_buffers, 1);
    kv.init(*be, 3, 4, 16, 2, 64, ::vt::DType::F16);  // re-sized: the old pages are freed
    EXPECT_EQ(kv_bytes(), 4 * per_block);
    EXPECT_EQ(be->stats().storage_buffers, 1);
  }
  EXPECT_EQ(kv_bytes(), 0);
  EXPECT_EQ(be->stats().storage_buffers, 0);
}

TEST(BlockPool, DoubleFreeIsCaught) {
  BlockPool pool(2, 2, true);
  std::vector<int32_t> got;
  pool.get_new_blocks(1, got);
  pool.free_blocks(got);
  EXPECT_THROW(pool.free_blocks(got), std::logic_error);
}

TEST(BlockPool, CachedBlockSurvivesFreeUntilEvicted) {
  BlockPool pool(2, 2, true);
  std::vector<int32_t> got;
  pool.get_new_blocks(1, got);
  std::vector<int32_t> toks = {5, 6};
  uint64_t h = hash_block_tokens(kRootBlockHash, toks);
  pool.cache_full_block(got[0], h, kRootBlockHash, toks);
  pool.free_blocks(got);
  EXPECT_EQ(pool.get_cached_block(h, kRootBlockHash, toks), got[0]);
  // Touching a free cached block takes it out of the free queue.
  std::vector<int32_t> hit = {got[0]};
  pool.touch(hit);
  EXPECT_EQ(pool.num_free_blocks(), 1);
  EXPECT_EQ(pool.block(got[0]).ref_cnt, 1);
  pool.free_blocks(hit);
  // Allocating both blocks evicts the cached one (it was freed last, so it goes last).
  std::vector<int32_t> all;
  pool.get_new_blocks(2, all);
  EXPECT_EQ(all.back(), got[0]);
  EXPECT_EQ(pool.get_cached_block(h, kRootBlockHash, toks), -1);
  EXPECT_EQ(pool.num_cached_blocks(), 0);
}

TEST(BlockPool, HashHitIsVerifiedAgainstTokensAndParent) {
  BlockPool pool(2, 2, true);
  std::vector<int32_t> got;
  pool.get_new_blocks(1, got);
  std::vector<int32_t> toks = {5, 6}, other = {5, 7};
  const uint64_t h = 42;  // a forced "collision": any content may claim this hash
  pool.cache_full_block(got[0], h, kRootBlockHash, toks);
  EXPECT_EQ(pool.get_cached_block(h, kRootBlockHash, toks), got[0]);
  EXPECT_EQ(pool.get_cached_block(h, kRootBlockHash, other), -1);
  EXPECT_EQ(pool.get_cached_block(h, 7, toks), -1);
}

TEST(BlockPool, HashDependsOnParentAndEveryToken) {
  std::vector<int32_t> a = iota(16), b = iota(16);
  b[15] = 99;
  EXPECT_NE(hash_block_tokens(1, a), hash_block_tokens(2, a));
  EXPECT_NE(hash_block_tokens(1, a), hash_block_tokens(1, b));
  EXPECT_EQ(hash_block_tokens(1, a), hash_block_tokens(1, iota(16)));
}

TEST(BlockPool, ConsistencyCheckSeesWrongOwnerCounts) {
  BlockPool pool(3, 2, true);
  std::vector<int32_t> got;
  pool.get_new_blocks(1, got);
  EXPECT_EQ(pool.check_consistency({1, 0, 0}), "");
  EXPECT_NE(pool.check_consistency({0, 0, 0}), "");  // leaked block
  EXPECT_NE(pool.check_consistency({1, 1, 0}), "");  // owner of a free block
}

TEST(KVCacheManager, AllocatesWholeBlocksAndFailsWithoutSideEffects) {
  KVCacheManager kv(4, 4, true);
  auto a = make_req("a", iota(10));
  ASSERT_TRUE(kv.allocate_slots(*a, 10));
  EXPECT_EQ(kv.get_block_ids("a").size(), 3u);
  auto b = make_req("b", iota(8, 100));
  EXPECT_FALSE(kv.allocate_slots(*b, 8));  // needs 2, one free
  EXPECT_EQ(kv.num_free_blocks(), 1);
  EXPECT_TRUE(kv.get_block_ids("b").empty());
  EXPECT_EQ(kv.check_consistency(), "");
  a->num_computed_tokens = 10;
  ASSERT_TRUE(kv.allocate_slots(*a, 2));  // 12 tokens still fit 3 blocks
  EXPECT_EQ(kv.num_free_blocks(), 1);
  kv.free(*a);
  EXPECT_EQ(kv.num_free_blocks(), 4);
  EXPECT_EQ(kv.check_consistency(), "");
}

TEST(KVCacheManager, PrefixHitReusesFullBlocksButRecomputesTheLastToken) {
  KVCacheManager kv(16, 4, true);
  auto a = make_req("a", iota(12));
  ASSERT_TRUE(kv.allocate_slots(*a, 12));
  a->num_computed_tokens = 12;
  kv.cache_blocks(*a, 12);
  const auto a_blocks = kv.get_block_ids("a");

  // Same 12 tokens: only 2 blocks hit, the third holds the last token, which is recomputed.
  auto b = make_req("b", iota(12));
  ComputedBlocks hit = kv.get_computed_blocks(*b);
  EXPECT_EQ(hit.num_tokens, 8);
  EXPECT_EQ(hit.block_ids, (std::vector<int32_t>{a_blocks[0], a_blocks[1]}));

  // Shares 9 tokens: two blocks hit; diverging inside block 3 stops the match.
  auto prompt_c = iota(14);
  prompt_c[9] = 77;
  auto c = make_req("c", prompt_c);
  hit = kv.get_computed_blocks(*c);
  EXPECT_EQ(hit.num_tokens, 8);
  ASSERT_TRUE(kv.allocate_slots(*c, 14 - 8, &hit));
  EXPECT_EQ(kv.get_block_ids("c")[0], a_blocks[0]);
  EXPECT_EQ(kv.pool().block(a_blocks[0]).ref_cnt, 2);
  EXPECT_EQ(kv.prefix_cache_stats().hits, 8);
  EXPECT_EQ(kv.prefix_cache_stats().queries, 14);
  EXPECT_EQ(kv.check_consistency(), "");

  // Different first block: no hit at all.
  auto d = make_req("d", iota(12, 1));
  EXPECT_EQ(kv.get_computed_blocks(*d).num_tokens, 0);

  // After freeing, the blocks stay cached and hit again.
  kv.free(*a);
  kv.free(*c);
  EXPECT_EQ(kv.get_computed_blocks(*b).num_tokens, 8);
  EXPECT_EQ(kv.check_consistency(), "");
}

TEST(KVCacheManager, CacheSaltSharesBlocksOnlyWithTheSameSalt) {
  KVCacheManager kv(32, 4, true);
  auto fill = [&](Request& r) {
    ASSERT_TRUE(kv.allocate_slots(r, 12));
    r.num_computed_tokens = 12;
    kv.cache_blocks(r, 12);
  };
  auto plain = make_req("plain", iota(12));
  fill(*plain);
  auto alice = make_req("alice", iota(12), "alice");
  EXPECT_EQ(kv.get_computed_blocks(*alice).num_tokens, 0);  // unsalted blocks are not hers
  fill(*alice);
  // Bob's salt, no salt and a salt that only extends hers all miss; her own salt hits.
  EXPECT_EQ(kv.get_computed_blocks(*make_req("bob", iota(12), "bob")).num_tokens, 0);
  EXPECT_EQ(kv.get_computed_blocks(*make_req("alicex", iota(12), "alicex")).num_tokens, 0);
  EXPECT_EQ(kv.get_computed_blocks(*make_req("again", iota(12), "alice")).num_tokens, 8);
  EXPECT_EQ(kv.get_computed_blocks(*make_req("none", iota(12))).num_tokens, 8);
  const auto plain_blocks = kv.get_block_ids("plain");
  const auto alice_blocks = kv.get_block_ids("alice");
  for (size_t i = 0; i < plain_blocks.size(); ++i)
    EXPECT_NE(plain_blocks[i], alice_blocks[i]) << "block " << i;
  EXPECT_EQ(kv.check_consistency(), "");
}

TEST(KVCacheManager, HitOnFreeBlocksCountsAgainstFreeSpace) {
  KVCacheManager kv(3, 4, true);
  auto a = make_req("a", iota(9));
  ASSERT_TRUE(kv.allocate_slots(*a, 9));
  a->num_computed_tokens = 9;
  kv.cache_blocks(*a, 9);
  kv.free(*a);
  auto b = make_req("b", iota(13));  // hits 2 free blocks, needs 2 more: only 1 left
  ComputedBlocks hit = kv.get_computed_blocks(*b);
  EXPECT_EQ(hit.num_tokens, 8);
  EXPECT_FALSE(kv.allocate_slots(*b, 5, &hit));
  EXPECT_EQ(kv.num_free_blocks(), 3);
  EXPECT_EQ(kv.check_consistency(), "");
}

TEST(KVCacheManager, CachingOffNeverHits) {
  KVCacheManager kv(8, 4, false);
  auto a = make_req("a", iota(12));
  ASSERT_TRUE(kv.allocate_slots(*a, 12));
  kv.cache_blocks(*a, 12);
  kv.free(*a);
  auto b = make_req("b", iota(12));
  EXPECT_EQ(kv.get_computed_blocks(*b).num_tokens, 0);
}

}  // namespace
}  // namespace vllm::engine
