// Read-only memory mapping of a whole file, and bounded reading of small text files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace vllm::model {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);  // throws LoadError
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Tells the kernel a range will not be read again (pages can be dropped).
  void release(size_t offset, size_t length) const;
  // The same, for a small range just read: widened to the 2 MiB around it, since the page
  // cache's large folios map whole (reading 4 KiB can make 2 MiB resident). Pages are clean
  // and re-read on demand, so dropping a neighbour's costs only a fault.
  void release_around(size_t offset, size_t length) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// The whole of a small text file (config.json and the like). Throws LoadError when it is not a
// regular file (a FIFO or /dev/zero would never end) or is larger than max_bytes.
std::string read_text_file(const std::string& path, size_t max_bytes);

}  // namespace vllm::model
