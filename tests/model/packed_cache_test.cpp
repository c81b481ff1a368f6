// The packed-weight cache (model/weight_packing.h): a second load maps the copy the first one
// wrote and computes the same bits; a copy that is corrupt, truncated, for another version of
// the model file, or in another layout is refused and the weights are packed again.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/causal_lm.h"
#include "model/static_batch.h"
#include "model/weight_packing.h"
#include "test_paths.h"
#include "vt/thread_pool.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::LoadOptions;
using vllm::model::PackedWeights;
using vllm::model::StaticBatch;
namespace fs = std::filesystem;

namespace {

class PackedCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vllm_packed_cache_test." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
    // A private copy of the model, so its modification time can be changed.
    model_ = (dir_ / "model.gguf").string();
    ASSERT_TRUE(fs::exists(default_gguf())) << default_gguf();
    fs::copy_file(default_gguf(), model_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<CausalLM> load(bool cached) {
    LoadOptions o;
    if (cached) o.packed_cache_dir = (dir_ / "cache").string();
    return CausalLM::load(model_, vt::ThreadPool::global(), o);
  }
  static std::vector<float> logits(CausalLM& m) {
    StaticBatch sb(m, 1, 64);
    std::vector<float> l = sb.prefill({{1, 504, 3458, 282, 4649, 314}});
    const std::vector<float>& d = sb.decode({28});
    l.insert(l.end(), d.begin(), d.end());
    return l;
  }
  std::string cache_file() const {
    for (const auto& e : fs::directory_iterator(dir_ / "cache"))
      if (e.path().extension() == ".packed") return e.path().string();
    return {};
  }
  // Writes the first cached load, checks the second maps it, and returns the reference logits.
  std::vector<float> make_cache() {
    std::vector<float> ref;
    {
      auto m = load(true);
      EXPECT_NE(m->packed_weights_note().find("writing a copy"), std::string::npos)
          << m->packed_weights_note();
      ref = logits(*m);
    }  // the destructor waits for the background write
    EXPECT_FALSE(cache_file().empty());
    return ref;
  }

  fs::path dir_;
  std::string model_;
};

struct Header {
  char magic[8];
  uint64_t data_offset, data_bytes, checksum, key_bytes;
};

Header read_header(const std::string& f) {
  Header h{};
  std::ifstream in(f, std::ios::binary);
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  return h;
}

void patch(const std::string& f, uint64_t at, const void* bytes, size_t n) {
  std::fstream io(f, std::ios::binary | std::ios::in | std::ios::out);
  io.seekp(static_cast<std::streamoff>(at));
  io.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
}

}  // namespace

TEST_F(PackedCache, SecondLoadMapsTheCopyAndComputesTheSameBits) {
  const auto plain = logits(*load(false));
  const auto ref = make_cache();
  EXPECT_EQ(ref, plain);
  auto m = load(true);
  EXPECT_EQ(m->packed_weights_note().rfind("mapped from ", 0), 0u) << m->packed_weights_note();
  EXPECT_EQ(logits(*m), plain);
}

// KiB of `path` resident in this process's mappings (/proc/self/smaps).
int64_t resident_kib(const std::string& path) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool in_file = false;
  int64_t kib = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') < line.find(' '))
      in_file = line.size() >= path.size() &&
                line.compare(line.size() - path.size(), path.size(), path) == 0;
    else if (in_file && line.rfind("Rss:", 0) == 0)
      kib += std::stoll(line.substr(4));
  }
  return kib;
}

// The norms read at load and the first-group checks of a mapped copy fault in pages of the
// model file; the page cache maps its large folios whole, so without the releases a loaded
// model kept hundreds of MB of the file resident beside the packed copy (Qwen3-0.6B-shape
// Q5_K_M: peak RSS 1.76x the file). Once loaded, every weight is read from the copy.
TEST_F(PackedCache, ALoadedModelKeepsNoPagesOfTheModelFile) {
  make_cache();
  for (bool cached : {true, false}) {
    auto m = load(cached);
    m->drop_tokenizer_metadata();  // as api::LLM does once its tokenizer is built
    const int64_t kib = resident_kib(fs::canonical(model_).string());
    EXPECT_LE(kib, 256) << (cached ? "mapped copy: " : "packed at load: ") << kib
                        << " KiB of the model file resident";
  }
}

TEST_F(PackedCache, ACorruptCopyFailsItsChecksumAndIsRepacked) {
  const auto ref = make_cache();
  const std::string f = cache_file();
  const Header h = read_header(f);
  const uint8_t junk[4] = {0xde, 0xad, 0xbe, 0xef};
  patch(f, h.data_offset + h.data_bytes / 2, junk, sizeof junk);
  auto m = load(true);
  EXPECT_NE(m->packed_weights_note().find("fails its checksum"), std::string::npos)
      << m->packed_weights_note();
  EXPECT_EQ(logits(*m), ref);
}

TEST_F(PackedCache, ATruncatedCopyIsRefused) {
  const auto ref = make_cache();
  const std::string f = cache_file();
  fs::resize_file(f, fs::file_size(f) - 4096);
  auto m = load(true);
  EXPECT_NE(m->packed_weights_note().find("is for another file"), std::string::npos)
      << m->packed_weights_note();
  EXPECT_EQ(logits(*m), ref);
}

TEST_F(PackedCache, AChangedModelFileInvalidatesTheCopy) {
  const auto ref = make_cache();
  // Same bytes, new modification time: the key (size, mtime, inode) no longer matches.
  const auto t = fs::last_write_time(model_);
  fs::last_write_time(model_, t + std::chrono::seconds(5));
  auto m = load(true);
  EXPECT_NE(m->packed_weights_note().find("is for another file"), std::string::npos)
      << m->packed_weights_note();
  EXPECT_EQ(logits(*m), ref);
  m.reset();  // rewrites the copy for the new file
  EXPECT_EQ(load(true)->packed_weights_note().rfind("mapped from ", 0), 0u);
}

TEST_F(PackedCache, ACopyInAnotherLayoutIsCaughtEvenWithAValidChecksum) {
  // What a build with a different packing layout would have written: other bytes in the first
  // matrix's first group, under a matching key and checksum.
  const auto ref = make_cache();
  const std::string f = cache_file();
  Header h = read_header(f);
  std::vector<uint8_t> data(h.data_bytes);
  {
    std::ifstream in(f, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(h.data_offset));
    in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  data[7] ^= 0x5a;
  h.checksum = PackedWeights::checksum(data.data(), data.size(), nullptr);
  patch(f, h.data_offset + 7, &data[7], 1);
  patch(f, 0, &h, sizeof h);
  auto m = load(true);
  EXPECT_NE(m->packed_weights_note().find("does not match this build's layout"), std::string::npos)
      << m->packed_weights_note();
  EXPECT_EQ(logits(*m), ref);
}

TEST_F(PackedCache, NoCacheDirectoryMeansNoFile) {
  auto m = load(false);
  EXPECT_TRUE(m->packed_weights_note().empty());
  m.reset();
  EXPECT_TRUE(cache_file().empty());
}
