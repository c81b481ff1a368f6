// GGUF parsing. The header is untrusted: every read is bounds-checked and every count
// is checked against the bytes that remain before anything is allocated for it.
#include "model/gguf.h"

#include <cstring>
#include <limits>

namespace vllm::model {

namespace {

enum GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

size_t scalar_size(uint32_t t) {
  switch (t) {
    case kU8:
    case kI8:
    case kBool:
      return 1;
    case kU16:
    case kI16:
      return 2;
    case kU32:
    case kI32:
    case kF32:
      return 4;
    case kU64:
    case kI64:
    case kF64:
      return 8;
    case kString:
      return 8;  // at least the length prefix
    default:
      return 0;
  }
}

class Reader {
 public:
  Reader(const std::string& path, const uint8_t* data, size_t size)
      : path_(path), data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw LoadError(path_, "invalid GGUF at byte " + std::to_string(pos_) + ": " + what);
  }
  void need(size_t n, const char* what) const {
    if (n > remaining())
      fail(std::string("truncated file (") + what + " needs " + std::to_string(n) + " bytes, " +
           std::to_string(remaining()) + " left)");
  }
  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(const char* what) {
    uint64_t n = read<uint64_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  std::string path_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

int64_t read_int(Reader& r, uint32_t t) {
  switch (t) {
    case kU8:
      return r.read<uint8_t>("u8");
    case kI8:
      return r.read<int8_t>("i8");
    case kU16:
      return r.read<uint16_t>("u16");
    case kI16:
      return r.read<int16_t>("i16");
    case kU32:
      return r.read<uint32_t>("u32");
    case kI32:
      return r.read<int32_t>("i32");
    case kI64:
      return r.read<int64_t>("i64");
    case kU64: {
      uint64_t v = r.read<uint64_t>("u64");
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) r.fail("u64 too large");
      return static_cast<int64_t>(v);
    }
    case kBool:
      return r.read<uint8_t>("bool");
    default:
      r.fail("not an integer type " + std::to_string(t));
  }
}

void read_value(Reader& r, uint32_t type, GgufValue& v, const std::string& key) {
  switch (type) {
    case kU8:
    case kU16:
    case kU32:
    case kU64:
      v.kind = GgufValue::Kind::kUint;
      v.i = read_int(r, type);
      v.u = static_cast<uint64_t>(v.i);
      return;
    case kI8:
    case kI16:
    case kI32:
    case kI64:
      v.kind = GgufValue::Kind::kInt;
      v.i = read_int(r, type);
      return;
    case kF32:
      v.kind = GgufValue::Kind::kFloat;
      v.f = r.read<float>("f32");
      return;
    case kF64:
      v.kind = GgufValue::Kind::kFloat;
      v.f = r.read<double>("f64");
      return;
    case kBool:
      v.kind = GgufValue::Kind::kBool;
      v.b = r.read<uint8_t>("bool") != 0;
      return;
    case kString:
      v.kind = GgufValue::Kind::kString;
      v.s = r.read_string("string");
      return;
    case kArray: {
      uint32_t et = r.read<uint32_t>("array type");
      uint64_t n = r.read<uint64_t>("array length");
      size_t es = scalar_size(et);
      if (es == 0)
        r.fail("key '" + key + "': unsupported array element type " + std::to_string(et));
      if (n > r.remaining() / es)
        r.fail("key '" + key + "': array length " + std::to_string(n) + " exceeds the file");
      if (et == kString) {
        v.kind = GgufValue::Kind::kStringArray;
        v.strings.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.strings.push_back(r.read_string("array string"));
      } else if (et == kF32 || et == kF64) {
        v.kind = GgufValue::Kind::kFloatArray;
        v.floats.reserve(n);
        for (uint64_t i = 0; i < n; ++i)
          v.floats.push_back(et == kF32 ? r.read<float>("f32") : r.read<double>("f64"));
      } else {
        v.kind = GgufValue::Kind::kIntArray;
        v.ints.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.ints.push_back(read_int(r, et));
      }
      return;
    }
    default:
      r.fail("key '" + key + "': unknown value type " + std::to_string(type));
  }
}

const char* kind_name(GgufValue::Kind k) {
  switch (k) {
    case GgufValue::Kind::kInt:
      return "int";
    case GgufValue::Kind::kUint:
      return "uint";
    case GgufValue::Kind::kFloat:
      return "float";
    case GgufValue::Kind::kBool:
      return "bool";
    case GgufValue::Kind::kString:
      return "string";
    case GgufValue::Kind::kIntArray:
      return "int array";
    case GgufValue::Kind::kFloatArray:
      return "float array";
    case GgufValue::Kind::kStringArray:
      return "string array";
  }
  return "?";
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  auto g = std::unique_ptr<GgufFile>(new GgufFile());
  g->path_ = path;
  g->file_ = std::make_unique<MappedFile>(path);
  Reader r(path, g->file_->data(), g->file_->size());

  uint32_t magic = r.read<uint32_t>("magic");
  if (magic != 0x46554747u) throw LoadError(path, "not a GGUF file (bad magic)");
  g->version_ = r.read<uint32_t>("version");
  if (g->version_ < 2 || g->version_ > 3)
    throw LoadError(path,
                    "unsupported GGUF version " + std::to_string(g->version_) + " (need 2 or 3)");
  uint64_t n_tensors = r.read<uint64_t>("tensor count");
  uint64_t n_kv = r.read<uint64_t>("metadata count");
  // Each key/value takes at least 8 (key length) + 4 (type) + 1 bytes; each tensor info 8+4+8+4+8.
  if (n_kv > r.remaining() / 13)
    r.fail("metadata count " + std::to_string(n_kv) + " exceeds the file (truncated or corrupt)");
  if (n_tensors > r.remaining() / 32)
    r.fail("tensor count " + std::to_string(n_tensors) +
           " exceeds the file (truncated or corrupt)");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = r.read_string("metadata key");
    uint32_t type = r.read<uint32_t>("metadata type");
    GgufValue v;
    read_value(r, type, v, key);
    if (!g->kv_.emplace(key, std::move(v)).second) r.fail("duplicate metadata key '" + key + "'");
  }

  uint64_t alignment = static_cast<uint64_t>(g->get_int_or("general.alignment", 32));
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw LoadError(path,
                    "general.alignment " + std::to_string(alignment) + " is not a power of 2");

  g->tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = r.read_string("tensor name");
    uint32_t n_dims = r.read<uint32_t>("tensor dims");
    if (n_dims == 0 || n_dims > 4)
      r.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions");
    std::vector<int64_t> ne(n_dims);
    uint64_t n_elems = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = r.read<uint64_t>("tensor dim");
      if (dim == 0 || dim > (1ull << 40) || n_elems > (1ull << 48) / dim)
        r.fail("tensor '" + t.name + "' has an invalid dimension " + std::to_string(dim));
      ne[d] = static_cast<int64_t>(dim);
      n_elems *= dim;
    }
    t.shape.assign(ne.rbegin(), ne.rend());
    t.ggml_type = r.read<uint32_t>("tensor type");
    t.offset = r.read<uint64_t>("tensor offset");
    if (auto dt = vt::dtype_from_ggml(t.ggml_type)) {
      t.dtype = *dt;
      t.supported = true;
      const auto& info = vt::dtype_info(t.dtype);
      if (ne[0] % info.block_elems != 0)
        r.fail("tensor '" + t.name + "': row length " + std::to_string(ne[0]) +
               " is not a multiple of the " + std::string(info.name) + " block size");
      t.n_bytes = n_elems / info.block_elems * info.block_bytes;
    }
    if (!g->tensor_index_.emplace(t.name, g->tensors_.size()).second)
      r.fail("duplicate tensor '" + t.name + "'");
    g->tensors_.push_back(std::move(t));
  }

  uint64_t data_start = (r.pos() + alignment - 1) / alignment * alignment;
  g->data_start_ = data_start;
  const uint64_t file_size = g->file_->size();
  for (auto& t : g->tensors_) {
    if (t.offset % alignment != 0)
      throw LoadError(path, "tensor '" + t.name + "' data offset is not aligned");
    if (!t.supported) continue;  // reported when (and only if) a model asks for it
    if (t.offset > file_size || data_start > file_size - t.offset ||
        t.n_bytes > file_size - data_start - t.offset)
      throw LoadError(path, "tensor '" + t.name + "' data (offset " + std::to_string(t.offset) +
                                ", " + std::to_string(t.n_bytes) +
                                " bytes) runs past the end of the file (truncated?)");
    t.offset += data_start;
    t.data = g->file_->data() + t.offset;
  }
  return g;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
[[noreturn]] void wrong_type(const std::string& path, const std::string& key, const GgufValue& v,
                             const char* want) {
  throw LoadError(path, "metadata '" + key + "' is a " + kind_name(v.kind) + ", expected " + want);
}
}  // namespace

#define GGUF_REQUIRE(key)         \
  const GgufValue* v = find(key); \
  if (!v) throw LoadError(path_, "missing metadata key '" + (key) + "'");

std::string GgufFile::get_str(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind != GgufValue::Kind::kString) wrong_type(path_, key, *v, "string");
  return v->s;
}
int64_t GgufFile::get_int(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind != GgufValue::Kind::kInt && v->kind != GgufValue::Kind::kUint)
    wrong_type(path_, key, *v, "integer");
  return v->i;
}
double GgufFile::get_float(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind == GgufValue::Kind::kFloat) return v->f;
  if (v->kind == GgufValue::Kind::kInt || v->kind == GgufValue::Kind::kUint)
    return static_cast<double>(v->i);
  wrong_type(path_, key, *v, "number");
}
bool GgufFile::get_bool(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind != GgufValue::Kind::kBool) wrong_type(path_, key, *v, "bool");
  return v->b;
}
const std::vector<std::string>& GgufFile::get_str_array(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind != GgufValue::Kind::kStringArray) wrong_type(path_, key, *v, "string array");
  return v->strings;
}
const std::vector<int64_t>& GgufFile::get_int_array(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind != GgufValue::Kind::kIntArray) wrong_type(path_, key, *v, "int array");
  return v->ints;
}
const std::vector<double>& GgufFile::get_float_array(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind != GgufValue::Kind::kFloatArray) wrong_type(path_, key, *v, "float array");
  return v->floats;
}
#undef GGUF_REQUIRE

std::string GgufFile::get_str_or(const std::string& key, const std::string& def) const {
  return has(key) ? get_str(key) : def;
}
int64_t GgufFile::get_int_or(const std::string& key, int64_t def) const {
  return has(key) ? get_int(key) : def;
}
double GgufFile::get_float_or(const std::string& key, double def) const {
  return has(key) ? get_float(key) : def;
}
bool GgufFile::get_bool_or(const std::string& key, bool def) const {
  return has(key) ? get_bool(key) : def;
}

}  // namespace vllm::model
