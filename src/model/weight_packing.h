// Copies of Q8_0 / Q4_0 / Q4_1 matrices in the kernels' packed layout (vt/cpu/pack.cpp),
// made once at load. The mapped source pages are released as each piece is packed, so
// the process holds one copy of the weights, not two.
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
  // Replaces w by a packed view when its type has one; the same source matrix (tied
  // embeddings) is packed once. `file` (may be null) is the mapping w points into.
  void pack(vt::cpu::WeightView& w, const MappedFile* file, vt::ThreadPool& pool);
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<uint8_t, Free>> buffers_;
  std::map<const void*, vt::cpu::WeightView> done_;
  size_t bytes_ = 0;
};

}  // namespace vllm::model
