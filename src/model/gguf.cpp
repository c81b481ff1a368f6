// GGUF parsing. The header is untrusted: every read is bounds-checked and every count
// is checked against the bytes that remain before anything is allocated for it.
#include "model/gguf.h"

#include <algorithm>
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

// Metadata arrays: real vocabularies and merge lists have at most a few hundred thousand
// entries. Without a cap, a count that only has to fit in the file (tensor data included)
// could make the parser build ~12M strings for a 100 MB file.
constexpr uint64_t kMaxArrayLength = uint64_t{1} << 22;

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
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        r.fail("u64 array element " + std::to_string(v) + " is past INT64_MAX");
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
      v.kind = GgufValue::Kind::kUint;
      v.i = read_int(r, type);
      v.u = static_cast<uint64_t>(v.i);
      return;
    case kU64:
      // Kept whole: a value past INT64_MAX is an error only if a reader asks for it.
      v.kind = GgufValue::Kind::kUint;
      v.u = r.read<uint64_t>("u64");
      v.i = v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                ? std::numeric_limits<int64_t>::max()
                : static_cast<int64_t>(v.u);
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
      if (n > r.remaining() / es || n > kMaxArrayLength)
        r.fail("key '" + key + "': array length " + std::to_string(n) +
               " exceeds the file or the limit of " + std::to_string(kMaxArrayLength));
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
  g->file_ = std::make_unique<MappedFile>(path);
  g->parse_header(path, g->file_->data(), g->file_->size());
  return g;
}

std::unique_ptr<GgufFile> GgufFile::parse(const std::string& name, const uint8_t* data,
                                          size_t size) {
  // Tensor offsets are multiples of general.alignment (>= 8) from the start of the bytes.
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0)
    throw LoadError(name, "GGUF bytes in memory must start at an 8-byte aligned address");
  auto g = std::unique_ptr<GgufFile>(new GgufFile());
  g->parse_header(name, data, size);
  return g;
}

void GgufFile::parse_header(const std::string& path, const uint8_t* data, size_t size) {
  path_ = path;
  Reader r(path, data, size);

  uint32_t magic = r.read<uint32_t>("magic");
  if (magic != 0x46554747u) throw LoadError(path, "not a GGUF file (bad magic)");
  version_ = r.read<uint32_t>("version");
  if (version_ < 2 || version_ > 3)
    throw LoadError(path,
                    "unsupported GGUF version " + std::to_string(version_) + " (need 2 or 3)");
  uint64_t n_tensors = r.read<uint64_t>("tensor count");
  uint64_t n_kv = r.read<uint64_t>("metadata count");
  // Each key/value takes at least 8 (key length) + 4 (type) + 1 bytes; each tensor info
  // 8 (name length) + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 (offset).
  if (n_kv > kMaxMetadataKeys || n_kv > r.remaining() / 13)
    r.fail("metadata count " + std::to_string(n_kv) +
           " exceeds the file (truncated or corrupt) or the limit of " +
           std::to_string(kMaxMetadataKeys) + " keys");
  if (n_tensors > r.remaining() / 32)
    r.fail("tensor count " + std::to_string(n_tensors) +
           " exceeds the file (truncated or corrupt)");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = r.read_string("metadata key");
    uint32_t type = r.read<uint32_t>("metadata type");
    GgufValue v;
    read_value(r, type, v, key);
    if (!kv_.emplace(key, std::move(v)).second) r.fail("duplicate metadata key '" + key + "'");
  }

  // The spec asks for a multiple of 8; being a power of two also keeps the rounding below exact,
  // and 8-byte alignment keeps every f32/f16 element naturally aligned in the mapping.
  const int64_t alignment = get_int_or("general.alignment", 32);
  if (alignment < 8 || alignment > kMaxAlignment || (alignment & (alignment - 1)) != 0)
    throw LoadError(path, "general.alignment = " + std::to_string(alignment) +
                              " is not a power of two in [8, " + std::to_string(kMaxAlignment) +
                              "]");

  tensor_infos_start_ = r.pos();
  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = r.read_string("tensor name");
    uint32_t n_dims = r.read<uint32_t>("tensor dims");
    if (n_dims == 0 || n_dims > 4)
      r.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (need 1-4)");
    std::vector<int64_t> ne(n_dims);
    uint64_t n_elems = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = r.read<uint64_t>("tensor dim");
      if (dim == 0 || dim > kMaxDim || n_elems > kMaxElements / dim)
        r.fail("tensor '" + t.name + "' dimension " + std::to_string(d) + " = " +
               std::to_string(dim) + " is zero or makes more than 2^48 elements");
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
               " is not a multiple of the " + std::string(info.name) + " block size " +
               std::to_string(info.block_elems));
      t.n_bytes = n_elems / info.block_elems * info.block_bytes;
    } else if (vt::ggml_type_name(t.ggml_type) == "unknown") {
      // Not a GGML type at all: the tensor's size cannot even be known. (Known types we cannot
      // run are refused only if a model asks for the tensor.)
      r.fail("tensor '" + t.name + "' has unknown GGML type " + std::to_string(t.ggml_type));
    }
    if (!tensor_index_.emplace(t.name, tensors_.size()).second)
      r.fail("duplicate tensor '" + t.name + "'");
    tensors_.push_back(std::move(t));
  }

  const uint64_t ualign = static_cast<uint64_t>(alignment);
  data_start_ = (r.pos() + ualign - 1) / ualign * ualign;
  const uint64_t file_size = size;
  for (auto& t : tensors_) {
    if (t.offset % ualign != 0)
      throw LoadError(path,
                      "tensor '" + t.name + "' data offset " + std::to_string(t.offset) +
                          " is not a multiple of general.alignment = " + std::to_string(alignment));
    if (!t.supported) continue;  // reported when (and only if) a model asks for it
    if (t.offset > file_size || data_start_ > file_size - t.offset ||
        t.n_bytes > file_size - data_start_ - t.offset)
      throw LoadError(path, "tensor '" + t.name + "' data (offset " + std::to_string(t.offset) +
                                ", " + std::to_string(t.n_bytes) +
                                " bytes) runs past the end of the file (truncated?)");
    t.offset += data_start_;
    t.data = data + t.offset;
  }
  // Two tensors sharing bytes would make one's quantization blocks the other's floats.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const auto& t : tensors_)
    if (t.supported) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensorInfo& a = *by_offset[i - 1];
    const GgufTensorInfo& b = *by_offset[i];
    if (a.offset + a.n_bytes > b.offset)
      throw LoadError(path, "tensor '" + b.name + "' data (offset " +
                                std::to_string(b.offset - data_start_) + ") overlaps tensor '" +
                                a.name + "' (offset " + std::to_string(a.offset - data_start_) +
                                ", " + std::to_string(a.n_bytes) + " bytes)");
  }
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
  if (v->kind == GgufValue::Kind::kUint &&
      v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw LoadError(path_, "metadata '" + key + "' = " + std::to_string(v->u) + " is too large");
  return v->i;
}
double GgufFile::get_float(const std::string& key) const {
  GGUF_REQUIRE(key);
  if (v->kind == GgufValue::Kind::kFloat) return v->f;
  if (v->kind == GgufValue::Kind::kInt) return static_cast<double>(v->i);
  if (v->kind == GgufValue::Kind::kUint) return static_cast<double>(v->u);
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
