// Copies of Q8_0 / Q4_0 / Q4_1 / BF16 / F16 matrices in the kernels' packed layouts
// (vt/cpu/pack.cpp, pack_half.cpp), made once at load. The mapped source pages (GGUF or
// safetensors) are released as each piece is packed, so the process holds one copy of the
// weights, not two. The copies live in one arena asked for transparent huge pages: decode
// streams every weight byte each step, and 2 MiB pages spare the TLB walks and let the
// hardware prefetchers run across 4 KiB boundaries.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include "model/mapped_file.h"
#include "vt/cpu/kernels.h"

namespace vllm::model {

class PackedWeights {
 public:
  PackedWeights() = default;
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  // Bytes the packed copy of w takes in the arena (0: w is not packed).
  static size_t arena_bytes(const vt::cpu::WeightView& w);
  // Reserves the arena (address space only; pages are committed as they are written).
  void reserve(size_t bytes);
  // Replaces w by a packed view when its type has one; the same source matrix (tied
  // embeddings) is packed once. `file` (may be null) is the mapping w points into.
  void pack(vt::cpu::WeightView& w, const MappedFile* file, vt::ThreadPool& pool);

 private:
  uint8_t* alloc(size_t n);
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<uint8_t, Free>> overflow_;  // beyond the reserved arena
  std::map<const void*, vt::cpu::WeightView> done_;
  uint8_t* arena_ = nullptr;
  size_t mapped_ = 0, capacity_ = 0, used_ = 0;
  void* map_base_ = nullptr;
};

}  // namespace vllm::model
