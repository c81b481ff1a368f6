// GGUF v2/v3 reader: memory-maps the file and parses the header as untrusted input.
// Every failure throws vllm::model::LoadError naming the file and the problem.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/load_error.h"
#include "model/mapped_file.h"
#include "vt/dtype.h"

namespace vllm::model {

// One metadata value. Arrays of strings and of numbers are kept apart so that huge
// vocabularies are stored compactly.
struct GgufValue {
  enum class Kind { kInt, kUint, kFloat, kBool, kString, kIntArray, kFloatArray, kStringArray };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  uint64_t u = 0;  // kUint: the value (i holds it too when it fits in int64)
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> shape;  // GGUF order reversed to row-major: shape.back() is contiguous
  uint32_t ggml_type = 0;
  vt::DType dtype = vt::DType::F32;  // valid only when supported
  bool supported = false;
  uint64_t offset = 0;  // absolute file offset of the data
  uint64_t n_bytes = 0;
  const void* data = nullptr;
};

class GgufFile {
 public:
  // Header limits (docs/MODEL_FILES.md): real files have ~50 keys and 32-byte alignment.
  static constexpr uint64_t kMaxMetadataKeys = 1 << 16;
  static constexpr int64_t kMaxAlignment = 1 << 20;
  static constexpr uint64_t kMaxDim = uint64_t{1} << 40;
  static constexpr uint64_t kMaxElements = uint64_t{1} << 48;

  // Maps the file and parses its header.
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses a whole GGUF file held in memory (header and tensor data; `name` stands for the file
  // in errors). The bytes must outlive the result: tensor data points into them. No file is
  // opened, which makes this the entry point for fuzzing the header parser.
  static std::unique_ptr<GgufFile> parse(const std::string& name, const uint8_t* data, size_t size);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  bool has(const std::string& key) const { return kv_.count(key) != 0; }
  const GgufValue* find(const std::string& key) const;

  // Typed getters: throw LoadError when the key is missing or has another type.
  std::string get_str(const std::string& key) const;
  int64_t get_int(const std::string& key) const;   // any integer kind
  double get_float(const std::string& key) const;  // float or integer kinds
  bool get_bool(const std::string& key) const;
  const std::vector<std::string>& get_str_array(const std::string& key) const;
  const std::vector<int64_t>& get_int_array(const std::string& key) const;
  const std::vector<double>& get_float_array(const std::string& key) const;
  // With defaults when the key is absent (wrong type still throws).
  std::string get_str_or(const std::string& key, const std::string& def) const;
  int64_t get_int_or(const std::string& key, int64_t def) const;
  double get_float_or(const std::string& key, double def) const;
  bool get_bool_or(const std::string& key, bool def) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  // The mapping behind open(); null for parse().
  const MappedFile* mapped() const { return file_.get(); }
  // Where tensor data begins; everything before it is header (metadata, tensor infos).
  uint64_t data_start() const { return data_start_; }
  // Where the tensor infos begin (after the metadata).
  uint64_t tensor_infos_start() const { return tensor_infos_start_; }
  void drop(const std::string& key) { kv_.erase(key); }
  // Moves a string array out (the key is then absent); empty when missing.
  std::vector<std::string> take_str_array(const std::string& key) {
    std::vector<std::string> out;
    if (auto it = kv_.find(key); it != kv_.end()) {
      out = std::move(it->second.strings);
      kv_.erase(it);
    }
    return out;
  }

 private:
  void parse_header(const std::string& path, const uint8_t* data, size_t size);

  std::string path_;
  uint32_t version_ = 0;
  uint64_t data_start_ = 0;
  uint64_t tensor_infos_start_ = 0;
  std::unique_ptr<MappedFile> file_;
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace vllm::model
