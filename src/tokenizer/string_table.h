// Compact vocabulary storage. A vocabulary of ~150k short strings kept as std::string objects
// and hash-map nodes costs ~100 bytes per entry; here it is one byte blob with 32-bit offsets
// plus an open-addressing index of ids (~15 bytes per entry), which matters when the model
// file itself is only ~100 MB.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::tok {

class StringTable {
 public:
  StringTable() : off_{0} {}
  static StringTable of(const std::vector<std::string>& strings);
  void reserve(size_t n, size_t bytes) {
    off_.reserve(n + 1);
    blob_.reserve(bytes);
  }
  void push_back(std::string_view s);
  std::string_view operator[](size_t i) const {
    return {blob_.data() + off_[i], static_cast<size_t>(off_[i + 1] - off_[i])};
  }
  size_t size() const { return off_.size() - 1; }
  void shrink_to_fit() {
    blob_.shrink_to_fit();
    off_.shrink_to_fit();
  }

 private:
  std::string blob_;
  std::vector<uint32_t> off_;
};

// String -> lowest id holding it, over a StringTable it does not own. Empty strings are not
// indexed (they mark holes in a vocabulary).
class StringIndex {
 public:
  void build(const StringTable& t);
  int32_t find(const StringTable& t, std::string_view s) const;  // -1 when absent

 private:
  std::vector<int32_t> slots_;  // -1: empty
  size_t mask_ = 0;
};

// (left id, right id) -> (rank, merged id), open addressing on a 64-bit key.
class MergeTable {
 public:
  struct Entry {
    uint64_t key;
    int32_t rank;
    int32_t id;
  };
  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  void reserve(size_t n);
  bool insert(int32_t a, int32_t b, int32_t rank, int32_t id);  // false: pair already present
  const Entry* find(int32_t a, int32_t b) const;
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  // The left id is folded into the low half before multiplying: bits 17.. of a plain product
  // saw only two bits of it, so every merge into the same right token shared ~4 slots and
  // lookups probed long clusters (3 us per byte on random letters with SmolLM2's merges).
  size_t slot(uint64_t k) const {
    return static_cast<size_t>(((k ^ (k >> 31)) * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  std::vector<Entry> slots_;
  size_t mask_ = 0, size_ = 0;
};

}  // namespace vllm::tok
