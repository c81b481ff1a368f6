// Hugging Face safetensors reader: an 8-byte header length, a JSON header, raw data.
// The header is untrusted: sizes, offsets and dtypes are all checked against the file.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "model/weight_store.h"

namespace vllm::model {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

void load_safetensors_file(const std::string& path, WeightStore& store) {
  auto file = std::make_shared<MappedFile>(path);
  const uint64_t size = file->size();
  if (size < 8) throw LoadError(path, "truncated safetensors file (no header length)");
  uint64_t header_len;
  std::memcpy(&header_len, file->data(), 8);
  if (header_len > size - 8)
    throw LoadError(path, "safetensors header length " + std::to_string(header_len) +
                              " runs past the end of the file (truncated?)");
  json header;
  try {
    header = json::parse(file->data() + 8, file->data() + 8 + header_len);
  } catch (const json::exception& e) {
    throw LoadError(path, std::string("safetensors header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw LoadError(path, "safetensors header is not a JSON object");
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  for (auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      TensorRef t;
      t.name = name;
      t.file = path;
      std::string dt = info.at("dtype").get<std::string>();
      const DtypeName* d = nullptr;
      for (const auto& k : kDtypes)
        if (dt == k.name) d = &k;
      if (!d) throw LoadError(path, "tensor '" + name + "' has unknown dtype '" + dt + "'");
      uint64_t n_elems = 1;
      for (const auto& s : info.at("shape")) {
        int64_t v = s.get<int64_t>();
        if (v < 0 || (v > 0 && n_elems > (1ull << 48) / static_cast<uint64_t>(v)))
          throw LoadError(path, "tensor '" + name + "' has an invalid shape");
        t.shape.push_back(v);
        n_elems *= static_cast<uint64_t>(v);
      }
      const auto& off = info.at("data_offsets");
      if (!off.is_array() || off.size() != 2)
        throw LoadError(path, "tensor '" + name + "' has malformed data_offsets");
      uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
      if (begin > end || end > data_size)
        throw LoadError(path, "tensor '" + name + "' data [" + std::to_string(begin) + ", " +
                                  std::to_string(end) +
                                  ") runs past the end of the file (truncated?)");
      if (end - begin != n_elems * d->bytes)
        throw LoadError(path, "tensor '" + name + "' has " + std::to_string(end - begin) +
                                  " bytes but its shape and dtype need " +
                                  std::to_string(n_elems * d->bytes));
      t.dtype = d->dtype;
      if (!d->supported) t.unsupported_type = dt;
      t.data = file->data() + data_start + begin;
      t.n_bytes = end - begin;
      store.add(std::move(t));
    } catch (const json::exception& e) {
      throw LoadError(path, "tensor '" + name + "' header entry is malformed: " + e.what());
    }
  }
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
    std::ifstream in(index);
    j = json::parse(in);
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
