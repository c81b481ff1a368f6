// WeightStore lookups and shape checks.
#include "model/weight_store.h"

#include <sstream>

namespace vllm::model {

int64_t TensorRef::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorRef::label() const {
  std::string l = "'" + name + "'";
  if (!stored_name.empty() && stored_name != name) l += " (stored as '" + stored_name + "')";
  return l;
}

std::string TensorRef::shape_str() const {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

void WeightStore::add(TensorRef t) {
  std::string name = t.name;
  if (!tensors_.emplace(name, std::move(t)).second)
    throw LoadError(tensors_.at(name).file, "tensor '" + name + "' appears twice");
}

TensorRef WeightStore::take(const std::string& name) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw LoadError(source_, "tensor '" + name + "' not found");
  TensorRef t = std::move(it->second);
  tensors_.erase(it);
  return t;
}

void WeightStore::rename(const std::string& from, const std::string& to) {
  if (!has(from)) return;
  TensorRef t = take(from);
  if (t.stored_name.empty()) t.stored_name = from;
  t.name = to;
  add(std::move(t));
}

const MappedFile* WeightStore::file_containing(const void* p) const {
  const auto* b = static_cast<const uint8_t*>(p);
  for (const auto& f : files_)
    if (b >= f->data() && b < f->data() + f->size()) return f.get();
  return nullptr;
}

const TensorRef* WeightStore::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorRef& WeightStore::get(const std::string& name,
                                  const std::vector<int64_t>& shape) const {
  const TensorRef* t = find(name);
  if (!t) {
    const std::string stored = file_name_ ? file_name_(name) : std::string();
    throw LoadError(source_, "missing tensor '" + (stored.empty() ? name : stored) + "'" +
                                 (stored.empty() ? "" : " ('" + name + "')"));
  }
  if (!t->unsupported_type.empty())
    throw LoadError(t->file,
                    "tensor " + t->label() + " has unsupported dtype " + t->unsupported_type);
  bool ok = t->shape.size() == shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || shape[i] == t->shape[i];
  if (!ok) {
    TensorRef want;
    want.shape = shape;
    throw LoadError(t->file, "tensor " + t->label() + " has shape " + t->shape_str() +
                                 " but the config implies " + want.shape_str());
  }
  return *t;
}

namespace {

// A tensor the layers read as weights: a float or quantized type (not i32, not the internal
// activation format), whole blocks per row, and exactly the bytes its shape needs.
void check_weight(const TensorRef& t, int64_t cols) {
  const auto& info = vt::dtype_info(t.dtype);
  if (t.dtype == vt::DType::I32 || t.dtype == vt::DType::Q8_K)
    throw LoadError(t.file, "tensor " + t.label() + " has type " + std::string(info.name) +
                                ", which is not a weight type");
  if (cols % info.block_elems != 0)
    throw LoadError(t.file, "tensor " + t.label() + " row length " + std::to_string(cols) +
                                " is not a multiple of the " + std::string(info.name) +
                                " block size " + std::to_string(info.block_elems));
  const uint64_t need = static_cast<uint64_t>(t.numel()) / info.block_elems * info.block_bytes;
  if (t.n_bytes != need)
    throw LoadError(t.file, "tensor " + t.label() + " has " + std::to_string(t.n_bytes) +
                                " bytes but its shape " + t.shape_str() + " needs " +
                                std::to_string(need));
}

}  // namespace

vt::cpu::WeightView WeightStore::matrix(const std::string& name, int64_t rows, int64_t cols) const {
  const TensorRef& t = get(name, {rows, cols});
  check_weight(t, cols);
  vt::cpu::WeightView w;
  w.dtype = t.dtype;
  w.rows = rows;
  w.cols = cols;
  w.data = t.data;
  w.row_stride = vt::row_bytes(t.dtype, cols);
  return w;
}

vt::cpu::WeightView WeightStore::matrix_slice(const std::string& name, int64_t index, int64_t count,
                                              int64_t rows, int64_t cols) const {
  const TensorRef& t = get(name, {count, rows, cols});
  check_weight(t, cols);
  if (index < 0 || index >= count)
    throw LoadError(t.file, "tensor " + t.label() + " has no slice " + std::to_string(index));
  vt::cpu::WeightView w;
  w.dtype = t.dtype;
  w.rows = rows;
  w.cols = cols;
  w.row_stride = vt::row_bytes(t.dtype, cols);
  w.data = static_cast<const uint8_t*>(t.data) + index * rows * w.row_stride;
  return w;
}

size_t WeightStore::release_converted(const std::vector<const void*>& in_use) {
  size_t freed = 0;
  auto inside = [](const void* p, const std::vector<uint8_t>& b) {
    const auto* q = static_cast<const uint8_t*>(p);
    return !b.empty() && q >= b.data() && q < b.data() + b.size();
  };
  for (auto& buf : converted_) {
    if (!buf) continue;
    bool used = false;
    for (const void* p : in_use) used = used || inside(p, *buf);
    if (used) continue;
    for (auto it = tensors_.begin(); it != tensors_.end();)
      it = inside(it->second.data, *buf) ? tensors_.erase(it) : std::next(it);
    freed += buf->size();
    buf.reset();
  }
  return freed;
}

std::vector<float> WeightStore::vector_f32(const std::string& name, int64_t n) const {
  const TensorRef& t = get(name, {n});
  check_weight(t, n);
  std::vector<float> out(n);
  vt::cpu::dequantize_row(t.dtype, t.data, out.data(), n);
  return out;
}

std::vector<float> WeightStore::vector_or_row_f32(const std::string& name, int64_t n) const {
  const TensorRef* t = find(name);
  if (!t || t->shape.size() != 2) return vector_f32(name, n);
  const vt::cpu::WeightView w = matrix(name, 1, n);  // checks the shape and the type
  std::vector<float> out(static_cast<size_t>(n));
  vt::cpu::dequantize_row(w.dtype, w.data, out.data(), n);
  return out;
}

}  // namespace vllm::model
