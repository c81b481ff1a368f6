// The compact vocabulary tables behind Bpe and Tokenizer, against std::unordered_map.
#include "tokenizer/string_table.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

using vllm::tok::MergeTable;
using vllm::tok::StringIndex;
using vllm::tok::StringTable;

TEST(StringTable, IndexFindsFirstIdAndSkipsHoles) {
  std::vector<std::string> v = {"a", "", "bc", "a", "", "\xC4\xA0the", "bc"};
  StringTable t = StringTable::of(v);
  ASSERT_EQ(t.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(t[i], v[i]);
  StringIndex idx;
  idx.build(t);
  EXPECT_EQ(idx.find(t, "a"), 0);  // duplicates: the first id wins, as in the old map
  EXPECT_EQ(idx.find(t, "bc"), 2);
  EXPECT_EQ(idx.find(t, "\xC4\xA0the"), 5);
  EXPECT_EQ(idx.find(t, ""), -1);  // holes are not tokens
  EXPECT_EQ(idx.find(t, "b"), -1);
  EXPECT_EQ(idx.find(t, "abc"), -1);
}

TEST(StringTable, RandomVocabularyMatchesUnorderedMap) {
  std::mt19937 rng(7);
  std::vector<std::string> v;
  std::unordered_map<std::string, int32_t> ref;
  for (int i = 0; i < 20000; ++i) {
    std::string s(1 + rng() % 12, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 6);
    ref.emplace(s, static_cast<int32_t>(v.size()));
    v.push_back(s);
  }
  StringTable t = StringTable::of(v);
  StringIndex idx;
  idx.build(t);
  for (const auto& [s, id] : ref) ASSERT_EQ(idx.find(t, s), id) << s;
  for (int i = 0; i < 2000; ++i) {
    std::string s(13 + rng() % 4, 'z');
    EXPECT_EQ(idx.find(t, s), -1);
  }
}

TEST(MergeTable, GrowsAndKeepsTheFirstInsert) {
  MergeTable m;  // no reserve: exercises growth
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> ref;
  std::mt19937 rng(3);
  for (int r = 0; r < 50000; ++r) {
    const int32_t a = static_cast<int32_t>(rng() % 3000), b = static_cast<int32_t>(rng() % 3000);
    const bool fresh = ref.emplace(MergeTable::key(a, b), std::make_pair(r, r + 7)).second;
    EXPECT_EQ(m.insert(a, b, r, r + 7), fresh);
  }
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    const auto* e = m.find(static_cast<int32_t>(k >> 32), static_cast<int32_t>(k & 0xffffffffu));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->rank, v.first);
    EXPECT_EQ(e->id, v.second);
  }
  EXPECT_EQ(m.find(5000, 5000), nullptr);
}
