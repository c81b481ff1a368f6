// A name -> tensor map over mapped files, with the checks every loader needs.
// GGUF files are presented under Hugging Face tensor names, so the layers read one
// naming scheme whatever the file format.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/load_error.h"
#include "model/mapped_file.h"
#include "vt/cpu/kernels.h"
#include "vt/dtype.h"

namespace vllm::model {

struct TensorRef {
  std::string name;
  vt::DType dtype = vt::DType::F32;
  std::vector<int64_t> shape;  // row-major, shape.back() contiguous
  const void* data = nullptr;
  size_t n_bytes = 0;
  std::string file;
  std::string stored_name;       // the name inside the file when it differs (GGUF)
  std::string unsupported_type;  // non-empty: stored in a type we cannot run

  int64_t numel() const;
  std::string label() const;  // for messages: "'hf.name'" or "'hf.name' (stored as 'x')"
  std::string shape_str() const;
};

class WeightStore {
 public:
  void add(TensorRef t);
  // Keeps a mapped file alive as long as the store; file_containing(p) finds the one p
  // points into (null if none), so a packed copy can release its source pages.
  void keep_file(std::shared_ptr<MappedFile> f) { files_.push_back(std::move(f)); }
  const MappedFile* file_containing(const void* p) const;
  const std::vector<std::shared_ptr<MappedFile>>& files() const { return files_; }
  // Keeps any other memory tensors point into alive as long as the store (a buffer a file was
  // read into, an aligned copy of a misaligned tensor).
  void keep_alive(std::shared_ptr<void> owner) { owners_.push_back(std::move(owner)); }
  // A buffer a family rewrote weights into (gpt-oss's MXFP4 experts), kept until
  // release_converted: once packing has copied every weight out of it, it can go, so the
  // model holds one copy of them, not two.
  void keep_converted(std::shared_ptr<std::vector<uint8_t>> buf) {
    converted_.push_back(std::move(buf));
  }
  // Frees each converted buffer none of `in_use` points into, and drops the tensors that did
  // (nothing reads them after the weights are bound). Returns the bytes freed.
  size_t release_converted(const std::vector<const void*>& in_use);
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  // Removes a tensor and hands it back (a family renaming or splitting its weights).
  TensorRef take(const std::string& name);
  // Gives a tensor a new name, messages still naming the stored one; no-op when absent.
  void rename(const std::string& from, const std::string& to);
  const TensorRef* find(const std::string& name) const;
  // Throws LoadError when the tensor is missing, has an unsupported type, or its shape
  // differs from `shape` (-1 entries match anything).
  const TensorRef& get(const std::string& name, const std::vector<int64_t>& shape) const;
  // A 2-D weight as a kernel view; `slice` selects one matrix of a stacked 3-D tensor.
  vt::cpu::WeightView matrix(const std::string& name, int64_t rows, int64_t cols) const;
  vt::cpu::WeightView matrix_slice(const std::string& name, int64_t index, int64_t count,
                                   int64_t rows, int64_t cols) const;
  // A 1-D tensor converted to f32 (norm weights, biases).
  std::vector<float> vector_f32(const std::string& name, int64_t n) const;
  // The same from an [n] vector or a [1, n] matrix (a checkpoint's one-row gate or bias, which
  // a GGUF keeps as a vector).
  std::vector<float> vector_or_row_f32(const std::string& name, int64_t n) const;
  const std::map<std::string, TensorRef>& all() const { return tensors_; }
  std::string describe_source() const { return source_; }
  void set_source(std::string s) { source_ = std::move(s); }
  // The name the file format gives a shared name ("" when it has none), for naming a missing
  // tensor as the user's file would (GGUF's blk.N.*).
  void set_file_name(std::function<std::string(const std::string&)> f) {
    file_name_ = std::move(f);
  }

 private:
  std::map<std::string, TensorRef> tensors_;
  std::vector<std::shared_ptr<MappedFile>> files_;
  std::vector<std::shared_ptr<void>> owners_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> converted_;
  std::string source_;
  std::function<std::string(const std::string&)> file_name_;
};

// Hugging Face safetensors: a single model.safetensors or a sharded index.
void load_safetensors_dir(const std::string& dir, WeightStore& store);
void load_safetensors_file(const std::string& path, WeightStore& store);
// One safetensors file held in memory (`path` names it in errors). The bytes must outlive the
// store: tensors point into them. The entry point for fuzzing the header parser.
void load_safetensors_bytes(const std::string& path, const uint8_t* data, size_t size,
                            WeightStore& store);

}  // namespace vllm::model
