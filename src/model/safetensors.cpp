// Hugging Face safetensors reader: an 8-byte header length, a JSON header, raw data.
// The header is untrusted: sizes, offsets and dtypes are all checked against the file.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The format's own cap on the JSON header (the reference reader refuses larger ones).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;
constexpr size_t kMaxDims = 8;
// model.safetensors.index.json: ~100 bytes per tensor name.
constexpr size_t kMaxIndexBytes = 64 << 20;
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr uint64_t kMaxElements = uint64_t{1} << 48;

struct DtypeName {
  const char* name;
  vt::DType dtype;
  int bytes;
  bool supported;
};
const DtypeName kDtypes[] = {
    {"F32", vt::DType::F32, 4, true},      {"F16", vt::DType::F16, 2, true},
    {"BF16", vt::DType::BF16, 2, true},    {"I32", vt::DType::I32, 4, true},
    {"F64", vt::DType::F32, 8, false},     {"I64", vt::DType::I32, 8, false},
    {"I16", vt::DType::I32, 2, false},     {"I8", vt::DType::I32, 1, false},
    {"U8", vt::DType::I32, 1, false},      {"BOOL", vt::DType::I32, 1, false},
    {"F8_E4M3", vt::DType::I32, 1, false}, {"F8_E5M2", vt::DType::I32, 1, false},
};

}  // namespace

void load_safetensors_bytes(const std::string& path, const uint8_t* data, size_t size,
                            WeightStore& store) {
  if (size < 8) throw LoadError(path, "truncated safetensors file (no header length)");
  uint64_t header_len;
  std::memcpy(&header_len, data, 8);
  if (header_len > kMaxSafetensorsHeader)
    throw LoadError(path, "safetensors header length " + std::to_string(header_len) +
                              " is over the format's limit of " +
                              std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (header_len > size - 8)
    throw LoadError(path, "safetensors header length " + std::to_string(header_len) +
                              " runs past the end of the file (truncated?)");
  json header;
  try {
    header = json::parse(data + 8, data + 8 + header_len);
  } catch (const json::exception& e) {
    throw LoadError(path, std::string("safetensors header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw LoadError(path, "safetensors header is not a JSON object");
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string field = "tensor '" + name + "'";
    try {
      if (!info.is_object()) throw LoadError(path, field + " header entry is not an object");
      TensorRef t;
      t.name = name;
      t.file = path;
      std::string dt = info.at("dtype").get<std::string>();
      const DtypeName* d = nullptr;
      for (const auto& k : kDtypes)
        if (dt == k.name) d = &k;
      if (!d) throw LoadError(path, field + " has unknown dtype '" + dt + "'");
      const json& shape = info.at("shape");
      if (!shape.is_array() || shape.size() > kMaxDims)
        throw LoadError(path, field + " shape is not a list of at most " +
                                  std::to_string(kMaxDims) + " dimensions");
      uint64_t n_elems = 1;
      for (const auto& s : shape) {
        const int64_t v = tok::json_int(s, name + ".shape", 0, kMaxDim);
        if (v > 0 && n_elems > kMaxElements / static_cast<uint64_t>(v))
          throw LoadError(path, field + " shape " + shape.dump() + " has more than 2^48 elements");
        t.shape.push_back(v);
        n_elems *= static_cast<uint64_t>(v);
      }
      const auto& off = info.at("data_offsets");
      if (!off.is_array() || off.size() != 2)
        throw LoadError(path, field + " has malformed data_offsets");
      const uint64_t begin = tok::json_int(off[0], name + ".data_offsets[0]", 0, INT64_MAX);
      const uint64_t end = tok::json_int(off[1], name + ".data_offsets[1]", 0, INT64_MAX);
      if (begin > end || end > data_size)
        throw LoadError(path, field + " data [" + std::to_string(begin) + ", " +
                                  std::to_string(end) +
                                  ") runs past the end of the file (truncated?)");
      if (end - begin != n_elems * d->bytes)
        throw LoadError(path, field + " has " + std::to_string(end - begin) +
                                  " bytes but its shape and dtype need " +
                                  std::to_string(n_elems * d->bytes));
      t.dtype = d->dtype;
      if (!d->supported) t.unsupported_type = dt;
      t.data = data + data_start + begin;
      t.n_bytes = end - begin;
      // Kernels read elements in place through typed pointers, so each must sit at an address
      // of its own size. Writers pad the header to 8 bytes for this; a tensor of a file whose
      // writer did not is copied to aligned memory rather than read misaligned.
      if (reinterpret_cast<uintptr_t>(t.data) % d->bytes != 0) {
        auto copy = std::make_shared<std::vector<uint8_t>>(
            static_cast<const uint8_t*>(t.data), static_cast<const uint8_t*>(t.data) + t.n_bytes);
        t.data = copy->data();
        store.keep_alive(std::move(copy));
      }
      if (end > begin) ranges.push_back({begin, end, name});
      store.add(std::move(t));
    } catch (const tok::JsonFieldError& e) {
      throw LoadError(path, std::string("safetensors header: ") + e.what());
    } catch (const json::exception& e) {
      throw LoadError(path, field + " header entry is malformed: " + e.what());
    }
  }
  // Two tensors sharing bytes would be silently aliased weights.
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i - 1].end > ranges[i].begin)
      throw LoadError(path, "tensor '" + ranges[i].name + "' data [" +
                                std::to_string(ranges[i].begin) + ", " +
                                std::to_string(ranges[i].end) + ") overlaps tensor '" +
                                ranges[i - 1].name + "' [" + std::to_string(ranges[i - 1].begin) +
                                ", " + std::to_string(ranges[i - 1].end) + ")");
}

void load_safetensors_file(const std::string& path, WeightStore& store) {
  auto file = std::make_shared<MappedFile>(path);
  load_safetensors_bytes(path, file->data(), file->size(), store);
  store.keep_file(file);
}

void load_safetensors_dir(const std::string& dir, WeightStore& store) {
  fs::path single = fs::path(dir) / "model.safetensors";
  fs::path index = fs::path(dir) / "model.safetensors.index.json";
  store.set_source(dir);
  if (fs::exists(single)) {
    load_safetensors_file(single.string(), store);
    return;
  }
  if (!fs::exists(index))
    throw LoadError(dir, "no model.safetensors or model.safetensors.index.json in the folder");
  json j;
  try {
    j = json::parse(read_text_file(index.string(), kMaxIndexBytes));
  } catch (const json::exception& e) {
    throw LoadError(index.string(), std::string("not valid JSON: ") + e.what());
  }
  if (!j.contains("weight_map") || !j["weight_map"].is_object())
    throw LoadError(index.string(), "missing 'weight_map'");
  std::set<std::string> shards;
  for (auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) throw LoadError(index.string(), "weight_map entry is not a string");
    std::string f = file.get<std::string>();
    if (f.find('/') != std::string::npos || f.find("..") != std::string::npos)
      throw LoadError(index.string(), "shard name '" + f + "' is not a plain file name");
    shards.insert(f);
  }
  for (const auto& s : shards) load_safetensors_file((fs::path(dir) / s).string(), store);
  for (auto& [name, file] : j["weight_map"].items()) {
    const TensorRef* t = store.find(name);
    if (!t)
      throw LoadError((fs::path(dir) / file.get<std::string>()).string(),
                      "tensor '" + name + "' listed in the index is not in its shard");
  }
}

}  // namespace vllm::model
