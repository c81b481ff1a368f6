#include "model/weight_packing.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace vllm::model {

namespace {
constexpr size_t kHuge = size_t{2} << 20;
constexpr size_t kAlign = 64;
size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }
}  // namespace

PackedWeights::~PackedWeights() {
  if (map_base_) ::munmap(map_base_, mapped_);
}

size_t PackedWeights::arena_bytes(const vt::cpu::WeightView& w) {
  if (w.packed || !vt::cpu::packable(w.dtype) || w.rows == 0) return 0;
  return round_up(vt::cpu::packed_bytes(w), kAlign);
}

void PackedWeights::reserve(size_t bytes) {
  if (map_base_ || bytes == 0) return;
  // 2 MiB-aligned start inside an over-sized anonymous mapping.
  mapped_ = round_up(bytes, kHuge) + kHuge;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    mapped_ = 0;
    return;  // pack() falls back to the heap
  }
  map_base_ = p;
  arena_ = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(p), kHuge));
  capacity_ = round_up(bytes, kHuge);
  ::madvise(arena_, capacity_, MADV_HUGEPAGE);  // a hint: without THP it is 4 KiB pages
}

uint8_t* PackedWeights::alloc(size_t n) {
  n = round_up(n, kAlign);
  if (arena_ && used_ + n <= capacity_) {
    uint8_t* p = arena_ + used_;
    used_ += n;
    return p;
  }
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kAlign, n));
  if (!p) throw std::bad_alloc();
  overflow_.emplace_back(p);
  return p;
}

void PackedWeights::pack(vt::cpu::WeightView& w, const MappedFile* file, vt::ThreadPool& pool) {
  if (arena_bytes(w) == 0) return;
  if (auto it = done_.find(w.data); it != done_.end() && it->second.rows == w.rows &&
                                    it->second.cols == w.cols && it->second.dtype == w.dtype) {
    w = it->second;
    return;
  }
  uint8_t* p = alloc(vt::cpu::packed_bytes(w));
  // Pieces of ~1 MiB: pack them (over the pool), then drop the source pages behind them.
  const int64_t groups = vt::cpu::pack_group_count(w);
  const int64_t group_src = vt::cpu::kPackRows * static_cast<int64_t>(w.row_stride);
  const int64_t step = std::max<int64_t>(1, (int64_t{1} << 20) / group_src);
  const auto* src = static_cast<const uint8_t*>(w.data);
  const bool mapped = file && src >= file->data() && src < file->data() + file->size();
  for (int64_t g0 = 0; g0 < groups; g0 += step) {
    const int64_t g1 = std::min(groups, g0 + step);
    pool.parallel_for(g1 - g0,
                      [&](int64_t a, int64_t b) { vt::cpu::pack_groups(w, g0 + a, g0 + b, p); });
    if (mapped) {
      const int64_t end = std::min<int64_t>(g1 * group_src, w.rows * w.row_stride);
      file->release(static_cast<size_t>(src - file->data()) + g0 * group_src,
                    static_cast<size_t>(end - g0 * group_src));
    }
  }
  const vt::cpu::WeightView packed = vt::cpu::packed_view(w, p);
  done_[w.data] = packed;
  w = packed;
}

}  // namespace vllm::model
