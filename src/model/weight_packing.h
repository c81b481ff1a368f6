// Copies of Q8_0 / Q4_0 / Q4_1 / BF16 / F16 matrices in the kernels' packed layouts
// (vt/cpu/pack.cpp, pack_half.cpp), made once at load. The mapped source pages (GGUF or
// safetensors) are released as each piece is packed, so the process holds one copy of the
// weights, not two. The copies live in one arena of backend storage (StorageKind::Weights,
// which the CPU backend asks transparent huge pages for: decode streams every weight byte
// each step, and 2 MiB pages spare the TLB walks and let the hardware prefetchers run across
// 4 KiB boundaries).
//
// Packing a 0.6B model takes a second or more of a 2-core start (most of it the kernel
// handing out and zeroing fresh pages), so the arena can also be kept as a file
// (LoadOptions::packed_cache_dir, VLLM_CPP_PACKED_CACHE): a later start maps the file (page
// cache pages, already backed) after checking its key, its checksum and each matrix's first
// group against a fresh pack of it. Nothing in the file is trusted beyond that: it holds
// quant blocks only, which the kernels read at fixed offsets.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "model/mapped_file.h"
#include "vt/cpu/kernels.h"
#include "vt/storage.h"

namespace vllm::model {

class PackedWeights {
 public:
  PackedWeights() = default;
  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  // Bytes the packed copy of w takes in the arena (0: w is not packed).
  static size_t arena_bytes(const vt::cpu::WeightView& w);
  // The backend whose storage holds the copies (before reserve, map_cache or pack).
  void bind(vt::Backend& be) { be_ = &be; }
  // Reserves the arena (on the CPU address space only; pages are committed as written).
  void reserve(size_t bytes);
  // The packed copy as a file (VLLM_CPP_PACKED_CACHE, docs/ENVIRONMENT.md), named by
  // cache_file(dir, model path). map_cache maps the copy an earlier run wrote there when its
  // key (sources, shapes, places) and checksum match and every matrix's first group packs to
  // the same bytes now; it then points each view (the caller's packing order, `bytes` their
  // arena_bytes total) at its slice. Otherwise the caller reserves and packs as usual and
  // write_cache writes the arena on a background thread (a temporary file renamed into
  // place). A cache that cannot be read or written costs only time: note() says what happened.
  static std::string cache_file(const std::string& dir, const std::string& model_path);
  bool map_cache(const std::string& file, const std::string& key, size_t bytes,
                 const std::vector<vt::cpu::WeightView*>& views, vt::ThreadPool& pool,
                 const std::vector<const MappedFile*>& sources = {});
  void write_cache(const std::string& file, const std::string& key);
  const std::string& note() const { return note_; }
  // Waits for a background write (tests; the destructor also waits).
  void wait_for_cache_write();
  // The checksum stored with a cached copy (the same for any split over threads).
  static uint64_t checksum(const uint8_t* p, size_t n, vt::ThreadPool* pool);

  // Replaces w by a packed view when its type has one; the same source matrix (tied
  // embeddings) is packed once. `file` (may be null) is the mapping w points into.
  void pack(vt::cpu::WeightView& w, const MappedFile* file, vt::ThreadPool& pool);

 private:
  uint8_t* alloc(size_t n);
  vt::Backend& backend() const;
  // The packed view already made from w's source with w's shape and type (tied embeddings).
  const vt::cpu::WeightView* packed_twin(const vt::cpu::WeightView& w) const;
  // `sources`: the mappings the views point into; the pages each first-group check reads are
  // dropped after it, so they do not sit beside the mapped copy in the peak RSS.
  bool adopt_mapping(const std::vector<vt::cpu::WeightView*>& views,
                     const std::vector<const MappedFile*>& sources);
  vt::Backend* be_ = nullptr;
  vt::StorageBuffer arena_mem_;              // the reserved arena
  std::vector<vt::StorageBuffer> overflow_;  // pieces beyond it
  vt::StorageBuffer cache_view_;             // a mapped cached copy, adopted as storage
  std::map<const void*, vt::cpu::WeightView> done_;
  uint8_t* arena_ = nullptr;
  size_t mapped_ = 0, capacity_ = 0, used_ = 0;
  void* map_base_ = nullptr;  // the cached copy's file mapping
  bool from_cache_ = false;   // the arena is a read-only mapping of a cached copy
  std::string note_;
  std::thread writer_;
};

}  // namespace vllm::model
