#include "model/weight_packing.h"

#include <algorithm>
#include <new>

namespace vllm::model {

void PackedWeights::pack(vt::cpu::WeightView& w, const MappedFile* file, vt::ThreadPool& pool) {
  if (w.packed || !vt::cpu::packable(w.dtype) || w.rows == 0) return;
  if (auto it = done_.find(w.data); it != done_.end() && it->second.rows == w.rows &&
                                    it->second.cols == w.cols && it->second.dtype == w.dtype) {
    w = it->second;
    return;
  }
  const size_t n = vt::cpu::packed_bytes(w);
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64));
  if (!p) throw std::bad_alloc();
  buffers_.emplace_back(p);
  bytes_ += n;
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
