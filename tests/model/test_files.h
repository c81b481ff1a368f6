// Writers for small, deliberately valid or broken model files used by the loader tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vllm::testing {

inline std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("vllm_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// A GGUF writer: metadata (strings, u32, f32, string arrays) and tensors (raw bytes).
struct GgufSpec {
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;  // GGUF order: ne[0] contiguous
    uint32_t type = 0;         // GGML type id
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, std::string>> strs;
  std::vector<std::pair<std::string, uint32_t>> u32s;
  std::vector<std::pair<std::string, float>> f32s;
  std::vector<std::pair<std::string, std::vector<std::string>>> str_arrays;
  std::vector<Tensor> tensors;

  void add_f32(const std::string& name, std::vector<uint64_t> ne, float scale = 0.02f) {
    uint64_t n = 1;
    for (auto d : ne) n *= d;
    std::vector<float> v(n);
    uint32_t s = static_cast<uint32_t>(std::hash<std::string>{}(name));
    for (auto& x : v) {
      s = s * 1664525u + 1013904223u;
      x = scale * (static_cast<float>(s >> 8) / 16777216.0f - 0.5f);
    }
    Tensor t{name, ne, 0, std::vector<uint8_t>(n * 4)};
    std::memcpy(t.data.data(), v.data(), n * 4);
    tensors.push_back(std::move(t));
  }

  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> b;
    auto put = [&](const void* p, size_t n) {
      const uint8_t* c = static_cast<const uint8_t*>(p);
      b.insert(b.end(), c, c + n);
    };
    auto u32 = [&](uint32_t v) { put(&v, 4); };
    auto u64 = [&](uint64_t v) { put(&v, 8); };
    auto str = [&](const std::string& s) {
      u64(s.size());
      put(s.data(), s.size());
    };
    u32(0x46554747u);
    u32(3);
    u64(tensors.size());
    u64(strs.size() + u32s.size() + f32s.size() + str_arrays.size());
    for (auto& [k, v] : strs) {
      str(k);
      u32(8);
      str(v);
    }
    for (auto& [k, v] : u32s) {
      str(k);
      u32(4);
      u32(v);
    }
    for (auto& [k, v] : f32s) {
      str(k);
      u32(6);
      put(&v, 4);
    }
    for (auto& [k, v] : str_arrays) {
      str(k);
      u32(9);
      u32(8);
      u64(v.size());
      for (auto& s : v) str(s);
    }
    uint64_t off = 0;
    std::vector<uint64_t> offsets;
    for (auto& t : tensors) {
      str(t.name);
      u32(static_cast<uint32_t>(t.ne.size()));
      for (auto d : t.ne) u64(d);
      u32(t.type);
      u64(off);
      offsets.push_back(off);
      off += (t.data.size() + 31) / 32 * 32;
    }
    while (b.size() % 32) b.push_back(0);
    for (auto& t : tensors) {
      put(t.data.data(), t.data.size());
      while (b.size() % 32) b.push_back(0);
    }
    return b;
  }
  void write(const std::string& path) const {
    auto b = bytes();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  }
};

// A tiny llama GGUF with random f32 weights: E=32, 1 layer, 2 heads (1 kv), ff 64, vocab 64.
inline GgufSpec tiny_llama_gguf() {
  GgufSpec g;
  g.strs = {{"general.architecture", "llama"}};
  g.u32s = {{"llama.block_count", 1},
            {"llama.embedding_length", 32},
            {"llama.feed_forward_length", 64},
            {"llama.attention.head_count", 2},
            {"llama.attention.head_count_kv", 1},
            {"llama.context_length", 128}};
  g.f32s = {{"llama.attention.layer_norm_rms_epsilon", 1e-5f}, {"llama.rope.freq_base", 10000.f}};
  std::vector<std::string> toks;
  for (int i = 0; i < 64; ++i) toks.push_back("t" + std::to_string(i));
  g.str_arrays = {{"tokenizer.ggml.tokens", toks}};
  g.add_f32("token_embd.weight", {32, 64}, 1.0f);
  g.add_f32("output_norm.weight", {32}, 0.1f);
  g.add_f32("blk.0.attn_norm.weight", {32}, 0.1f);
  g.add_f32("blk.0.attn_q.weight", {32, 32});
  g.add_f32("blk.0.attn_k.weight", {32, 16});
  g.add_f32("blk.0.attn_v.weight", {32, 16});
  g.add_f32("blk.0.attn_output.weight", {32, 32});
  g.add_f32("blk.0.ffn_norm.weight", {32}, 0.1f);
  g.add_f32("blk.0.ffn_gate.weight", {32, 64});
  g.add_f32("blk.0.ffn_up.weight", {32, 64});
  g.add_f32("blk.0.ffn_down.weight", {64, 32});
  return g;
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

// A safetensors file from (name, dtype, shape, bytes) entries.
struct SafetensorsEntry {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};
inline std::vector<uint8_t> safetensors_bytes(const std::vector<SafetensorsEntry>& entries) {
  nlohmann::json h = nlohmann::json::object();
  uint64_t off = 0;
  for (auto& e : entries) {
    h[e.name] = {
        {"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {off, off + e.data.size()}}};
    off += e.data.size();
  }
  std::string hs = h.dump();
  std::vector<uint8_t> b(8);
  uint64_t n = hs.size();
  std::memcpy(b.data(), &n, 8);
  b.insert(b.end(), hs.begin(), hs.end());
  for (auto& e : entries) b.insert(b.end(), e.data.begin(), e.data.end());
  return b;
}

}  // namespace vllm::testing
