#include "model/weight_packing.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>

#include "vt/thread_pool.h"

namespace vllm::model {

namespace {
constexpr size_t kAlign = 64;
size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// The cached copy: this header, the key, zeros up to data_offset (a page multiple), then the
// arena's bytes.
constexpr char kMagic[8] = {'V', 'L', 'L', 'M', 'P', 'K', '0', '1'};
struct CacheHeader {
  char magic[8];
  uint64_t data_offset, data_bytes, checksum, key_bytes;
};
constexpr size_t kPage = 4096;
constexpr size_t kChunk = size_t{1} << 20;  // checksum pieces
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;
uint64_t fnv_step(uint64_t h, uint64_t x) { return (h ^ x) * 0x100000001b3ull; }

bool pread_full(int fd, void* dst, size_t n, off_t off) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, off);
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r), off += r;
  }
  return true;
}

bool write_full(int fd, const void* src, size_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  while (n > 0) {
    const ssize_t r = ::write(fd, p, std::min(n, size_t{1} << 30));
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r);
  }
  return true;
}

// Four independent multiply-xorshift chains over 64-bit words (n is a multiple of 32: arena
// sizes are multiples of kAlign), folded with the length.
uint64_t chunk_hash(const uint8_t* p, size_t n) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h[4] = {1, 2, 3, 4};
  for (size_t i = 0; i + 32 <= n; i += 32)
    for (int j = 0; j < 4; ++j) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * j, 8);
      h[j] = (h[j] ^ w) * kMul;
      h[j] ^= h[j] >> 31;
    }
  uint64_t r = n;
  for (uint64_t x : h) {
    r = (r ^ x) * kMul;
    r ^= r >> 29;
  }
  return r;
}
}  // namespace

PackedWeights::~PackedWeights() {
  wait_for_cache_write();
  cache_view_.reset();
  if (map_base_) ::munmap(map_base_, mapped_);
}

vt::Backend& PackedWeights::backend() const {
  if (!be_) throw std::logic_error("packed weights used before they were bound to a backend");
  return *be_;
}

void PackedWeights::wait_for_cache_write() {
  if (writer_.joinable()) writer_.join();
}

uint64_t PackedWeights::checksum(const uint8_t* p, size_t n, vt::ThreadPool* pool) {
  const int64_t chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
  std::vector<uint64_t> part(static_cast<size_t>(chunks));
  auto run = [&](int64_t a, int64_t b) {
    for (int64_t c = a; c < b; ++c) {
      const size_t off = static_cast<size_t>(c) * kChunk;
      part[static_cast<size_t>(c)] = chunk_hash(p + off, std::min(kChunk, n - off));
    }
  };
  if (pool)
    pool->parallel_for(chunks, run);
  else
    run(0, chunks);
  uint64_t r = kFnvBasis;
  for (uint64_t x : part) r = fnv_step(r, x);
  return r;
}

std::string PackedWeights::cache_file(const std::string& dir, const std::string& model_path) {
  std::error_code ec;
  uint64_t h = kFnvBasis;  // FNV-1a of the model's path
  for (unsigned char ch : std::filesystem::weakly_canonical(model_path, ec).string())
    h = fnv_step(h, ch);
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.packed", static_cast<unsigned long long>(h));
  return (std::filesystem::path(dir) / name).string();
}

bool PackedWeights::map_cache(const std::string& file, const std::string& key, size_t bytes,
                              const std::vector<vt::cpu::WeightView*>& views, vt::ThreadPool& pool,
                              const std::vector<const MappedFile*>& sources) {
  if (map_base_ || bytes == 0 || key.empty()) return false;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    note_ = "packing (no packed copy at " + file + " yet)";
    return false;
  }
  struct stat st {};
  CacheHeader h{};
  std::string k;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<size_t>(st.st_size) >= sizeof h && pread_full(fd, &h, sizeof h, 0) &&
            std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.data_bytes == bytes &&
            h.key_bytes == key.size() && h.data_offset % kPage == 0 &&
            h.data_offset >= sizeof h + key.size() && h.data_offset <= (uint64_t{1} << 32) &&
            static_cast<uint64_t>(st.st_size) == h.data_offset + h.data_bytes;
  if (ok) {
    k.resize(key.size());
    ok = pread_full(fd, k.data(), k.size(), sizeof h) && k == key;
  }
  void* base = MAP_FAILED;
  const size_t len = ok ? static_cast<size_t>(st.st_size) : 0;
  if (ok) base = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    note_ = "packing (the copy at " + file + " is for another file, build or layout)";
    return false;
  }
  const auto* data = static_cast<uint8_t*>(base) + h.data_offset;
  if (checksum(data, bytes, &pool) != h.checksum) {
    ::munmap(base, len);
    note_ = "packing (the copy at " + file + " fails its checksum)";
    return false;
  }
  map_base_ = base;
  mapped_ = len;
  arena_ = const_cast<uint8_t*>(data);  // read-only: pack() only hands out views
  capacity_ = bytes;
  from_cache_ = true;
  note_ = "mapped from " + file;
  cache_view_ = vt::StorageBuffer::adopt(backend(), data, bytes, vt::StorageKind::Weights, file);
  return adopt_mapping(views, sources);
}

const vt::cpu::WeightView* PackedWeights::packed_twin(const vt::cpu::WeightView& w) const {
  auto it = done_.find(w.data);
  return it != done_.end() && it->second.rows == w.rows && it->second.cols == w.cols &&
                 it->second.dtype == w.dtype
             ? &it->second
             : nullptr;
}

bool PackedWeights::adopt_mapping(const std::vector<vt::cpu::WeightView*>& views,
                                  const std::vector<const MappedFile*>& sources) {
  // pack()'s allocation order replayed: each distinct matrix gets the next kAlign-rounded
  // slice. Views are replaced only once every slice has checked out.
  std::vector<std::pair<vt::cpu::WeightView*, vt::cpu::WeightView>> plan;
  std::vector<uint8_t> group;
  size_t off = 0;
  bool ok = true;
  for (auto* w : views) {
    if (arena_bytes(*w) == 0) continue;
    if (const vt::cpu::WeightView* twin = packed_twin(*w)) {
      plan.emplace_back(w, *twin);
      continue;
    }
    const size_t bytes = vt::cpu::packed_bytes(*w);
    if (off + bytes > capacity_) {
      ok = false;
      break;
    }
    // The first group packed now must equal the cached one: a copy made by code with another
    // layout is caught here, whatever its key said.
    group.assign(bytes / static_cast<size_t>(vt::cpu::pack_group_count(*w)), 0);
    vt::cpu::pack_groups(*w, 0, 1, group.data());
    const auto* src = static_cast<const uint8_t*>(w->data);
    for (const MappedFile* f : sources)
      if (f && src >= f->data() && src < f->data() + f->size())
        f->release_around(static_cast<size_t>(src - f->data()),
                          vt::cpu::kPackRows * static_cast<size_t>(w->row_stride));
    if (std::memcmp(group.data(), arena_ + off, group.size()) != 0) {
      ok = false;
      break;
    }
    const vt::cpu::WeightView packed = vt::cpu::packed_view(*w, arena_ + off);
    done_[w->data] = packed;
    plan.emplace_back(w, packed);
    off += round_up(bytes, kAlign);
  }
  if (!ok || off != capacity_) {
    cache_view_.reset();
    ::munmap(map_base_, mapped_);
    map_base_ = nullptr;
    arena_ = nullptr;
    mapped_ = capacity_ = used_ = 0;
    from_cache_ = false;
    done_.clear();
    note_ = "packing (the cached copy does not match this build's layout)";
    return false;
  }
  for (auto& [w, packed] : plan) *w = packed;
  used_ = off;
  return true;
}

void PackedWeights::write_cache(const std::string& file, const std::string& key) {
  if (from_cache_ || !arena_ || !overflow_.empty() || used_ == 0 || key.empty() ||
      writer_.joinable())
    return;
  note_ = (note_.empty() ? std::string("packed") : note_) + "; writing a copy to " + file +
          " for the next start";
  const uint8_t* data = arena_;
  const size_t n = used_;
  writer_ = std::thread([file, key, data, n] {
    // Behind the serving threads: this only saves the next start some time.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
    const std::string tmp = file + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    CacheHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.key_bytes = key.size();
    h.data_offset = round_up(sizeof h + key.size(), kPage);
    h.data_bytes = n;
    h.checksum = checksum(data, n, nullptr);
    std::vector<uint8_t> head(h.data_offset, 0);
    std::memcpy(head.data(), &h, sizeof h);
    std::memcpy(head.data() + sizeof h, key.data(), key.size());
    bool ok = write_full(fd, head.data(), head.size()) && write_full(fd, data, n);
    // Written, the copy sits in the page cache as the small folios of the writes, which a
    // later start maps 4 KiB at a time. Dropped once on disk, the next start reads it back
    // through readahead's large folios, which map 2 MiB at a time where the kernel can:
    // decode streams every weight byte per token, and on a 2-core Zen 4 VM the bf16
    // Qwen3-0.6B-shape folder decoded at 22.7-31.1 tok/s from the written pages against
    // 31.1-38.6 from read-back ones (FilePmdMapped 86 MB vs 1.16 GB of 1.19 GB).
    if (ok && ::fdatasync(fd) == 0) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) ::unlink(tmp.c_str());
  });
}

size_t PackedWeights::arena_bytes(const vt::cpu::WeightView& w) {
  if (w.packed || !vt::cpu::packable(w.dtype) || w.rows == 0) return 0;
  return round_up(vt::cpu::packed_bytes(w), kAlign);
}

void PackedWeights::reserve(size_t bytes) {
  if (map_base_ || arena_ || bytes == 0) return;
  try {
    arena_mem_ = vt::StorageBuffer(backend(), bytes, vt::StorageKind::Weights, "packed weights");
  } catch (const std::runtime_error&) {
    return;  // no room for one arena: alloc() asks for each piece on its own
  }
  arena_ = arena_mem_.as<uint8_t>();
  capacity_ = bytes;
}

uint8_t* PackedWeights::alloc(size_t n) {
  n = round_up(n, kAlign);
  if (arena_ && used_ + n <= capacity_) {
    uint8_t* p = arena_ + used_;
    used_ += n;
    return p;
  }
  overflow_.emplace_back(backend(), n, vt::StorageKind::Weights, "packed weights");
  return overflow_.back().as<uint8_t>();
}

void PackedWeights::pack(vt::cpu::WeightView& w, const MappedFile* file, vt::ThreadPool& pool) {
  if (arena_bytes(w) == 0) return;
  if (const vt::cpu::WeightView* twin = packed_twin(w)) {
    w = *twin;
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
