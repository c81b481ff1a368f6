// StringTable, StringIndex and MergeTable (see string_table.h).
#include "tokenizer/string_table.h"

#include <functional>
#include <stdexcept>

namespace vllm::tok {

StringTable StringTable::of(const std::vector<std::string>& strings) {
  size_t bytes = 0;
  for (const auto& s : strings) bytes += s.size();
  StringTable table;
  table.reserve(strings.size(), bytes);
  for (const auto& s : strings) table.push_back(s);
  return table;
}

void StringTable::push_back(std::string_view s) {
  if (blob_.size() + s.size() > UINT32_MAX) throw std::length_error("vocabulary over 4 GiB");
  blob_.append(s);
  off_.push_back(static_cast<uint32_t>(blob_.size()));
}

namespace {
size_t hash_of(std::string_view s) { return std::hash<std::string_view>{}(s); }
size_t table_size_for(size_t n) {
  size_t cap = 16;
  while (cap < n + n / 3 + 1) cap <<= 1;  // load factor at most 3/4
  return cap;
}
}  // namespace

void StringIndex::build(const StringTable& t) {
  slots_.assign(table_size_for(t.size()), -1);
  mask_ = slots_.size() - 1;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string_view s = t[i];
    if (s.empty()) continue;
    for (size_t h = hash_of(s) & mask_;; h = (h + 1) & mask_) {
      if (slots_[h] < 0) {
        slots_[h] = static_cast<int32_t>(i);
        break;
      }
      if (t[static_cast<size_t>(slots_[h])] == s) break;  // duplicate: the first id wins
    }
  }
}

int32_t StringIndex::find(const StringTable& t, std::string_view s) const {
  if (slots_.empty() || s.empty()) return -1;
  for (size_t h = hash_of(s) & mask_;; h = (h + 1) & mask_) {
    const int32_t id = slots_[h];
    if (id < 0) return -1;
    if (t[static_cast<size_t>(id)] == s) return id;
  }
}

void MergeTable::reserve(size_t n) {
  if (table_size_for(n) <= slots_.size()) return;
  std::vector<Entry> old = std::move(slots_);
  slots_.assign(table_size_for(n), Entry{kEmpty, 0, 0});
  mask_ = slots_.size() - 1;
  size_ = 0;
  for (const Entry& e : old)
    if (e.key != kEmpty)
      insert(static_cast<int32_t>(e.key >> 32), static_cast<int32_t>(e.key), e.rank, e.id);
}

bool MergeTable::insert(int32_t a, int32_t b, int32_t rank, int32_t id) {
  if (table_size_for(size_ + 1) > slots_.size()) reserve(size_ + 1);
  const uint64_t k = key(a, b);
  for (size_t h = slot(k);; h = (h + 1) & mask_) {
    if (slots_[h].key == k) return false;
    if (slots_[h].key == kEmpty) {
      slots_[h] = Entry{k, rank, id};
      ++size_;
      return true;
    }
  }
}

const MergeTable::Entry* MergeTable::find(int32_t a, int32_t b) const {
  if (slots_.empty()) return nullptr;
  const uint64_t k = key(a, b);
  for (size_t h = slot(k);; h = (h + 1) & mask_) {
    if (slots_[h].key == k) return &slots_[h];
    if (slots_[h].key == kEmpty) return nullptr;
  }
}

}  // namespace vllm::tok
