// Writers for small, deliberately valid or broken model files used by the loader tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace vllm::testing {

inline std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("vllm_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

// A GGUF writer: metadata (strings, u32, f32, string arrays, or any value as raw bytes) and
// tensors (raw bytes).
struct GgufSpec {
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;  // GGUF order: ne[0] contiguous
    uint32_t type = 0;         // GGML type id
    std::vector<uint8_t> data;
    // Written instead of the computed offset (relative to the data section) when set.
    std::optional<uint64_t> offset;
  };
  // A metadata value of any GGUF type: `type` id and its encoded bytes.
  struct Raw {
    std::string key;
    uint32_t type;
    std::vector<uint8_t> value;
  };
  std::vector<std::pair<std::string, std::string>> strs;
  std::vector<std::pair<std::string, uint32_t>> u32s;
  std::vector<std::pair<std::string, float>> f32s;
  std::vector<std::pair<std::string, std::vector<std::string>>> str_arrays;
  std::vector<Raw> raws;
  std::vector<Tensor> tensors;
  uint64_t alignment = 32;  // padding used when writing; say it with general.alignment too

  // Removes `key` wherever it is.
  void erase(const std::string& key) {
    auto drop = [&](auto& v) {
      v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& e) { return e.first == key; }),
              v.end());
    };
    drop(strs);
    drop(u32s);
    drop(f32s);
    drop(str_arrays);
    raws.erase(std::remove_if(raws.begin(), raws.end(), [&](const Raw& r) { return r.key == key; }),
               raws.end());
  }
  void set_u32(const std::string& key, uint32_t v) {
    erase(key);
    u32s.emplace_back(key, v);
  }
  void set_f32(const std::string& key, float v) {
    erase(key);
    f32s.emplace_back(key, v);
  }
  // Any scalar: T's bytes under GGUF type id `type` (4 u32, 5 i32, 6 f32, 7 bool, 10 u64,
  // 11 i64, 12 f64).
  template <class T>
  void set_scalar(const std::string& key, uint32_t type, T v) {
    erase(key);
    Raw r{key, type, std::vector<uint8_t>(sizeof(T))};
    std::memcpy(r.value.data(), &v, sizeof(T));
    raws.push_back(std::move(r));
  }
  // An array of T under GGUF element type `elem_type`.
  template <class T>
  void set_array(const std::string& key, uint32_t elem_type, const std::vector<T>& v) {
    erase(key);
    Raw r{key, 9, std::vector<uint8_t>(12 + v.size() * sizeof(T))};
    const uint64_t n = v.size();
    std::memcpy(r.value.data(), &elem_type, 4);
    std::memcpy(r.value.data() + 4, &n, 8);
    if (!v.empty()) std::memcpy(r.value.data() + 12, v.data(), v.size() * sizeof(T));
    raws.push_back(std::move(r));
  }
  Tensor* tensor(const std::string& name) {
    for (auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }

  void add_f32(const std::string& name, std::vector<uint64_t> ne, float scale = 0.02f) {
    uint64_t n = 1;
    for (auto d : ne) n *= d;
    std::vector<float> v(n);
    uint32_t s = static_cast<uint32_t>(std::hash<std::string>{}(name));
    for (auto& x : v) {
      s = s * 1664525u + 1013904223u;
      x = scale * (static_cast<float>(s >> 8) / 16777216.0f - 0.5f);
    }
    Tensor t{name, ne, 0, std::vector<uint8_t>(n * 4), std::nullopt};
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
    u64(strs.size() + u32s.size() + f32s.size() + str_arrays.size() + raws.size());
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
    for (auto& r : raws) {
      str(r.key);
      u32(r.type);
      put(r.value.data(), r.value.size());
    }
    const uint64_t a = alignment;
    uint64_t off = 0;
    for (auto& t : tensors) {
      str(t.name);
      u32(static_cast<uint32_t>(t.ne.size()));
      for (auto d : t.ne) u64(d);
      u32(t.type);
      u64(t.offset ? *t.offset : off);
      off += (t.data.size() + a - 1) / a * a;
    }
    while (b.size() % a) b.push_back(0);
    for (auto& t : tensors) {
      put(t.data.data(), t.data.size());
      while (b.size() % a) b.push_back(0);
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
// The file for an explicit header (any JSON, e.g. with a mutated field) and data section.
inline std::vector<uint8_t> safetensors_bytes(const nlohmann::json& header,
                                              const std::vector<uint8_t>& data) {
  const std::string hs = header.dump();
  const uint64_t n = hs.size();
  std::vector<uint8_t> b(8 + hs.size() + data.size());
  std::memcpy(b.data(), &n, 8);
  std::memcpy(b.data() + 8, hs.data(), hs.size());
  if (!data.empty()) std::memcpy(b.data() + 8 + hs.size(), data.data(), data.size());
  return b;
}

inline std::vector<uint8_t> safetensors_bytes(const std::vector<SafetensorsEntry>& entries) {
  nlohmann::json h = nlohmann::json::object();
  uint64_t off = 0;
  for (auto& e : entries) {
    h[e.name] = {
        {"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {off, off + e.data.size()}}};
    off += e.data.size();
  }
  std::vector<uint8_t> data;
  for (auto& e : entries) data.insert(data.end(), e.data.begin(), e.data.end());
  return safetensors_bytes(h, data);
}

// A tiny Hugging Face llama folder: config.json and one model.safetensors of zero f32 weights
// (E=32, 1 layer, 2 heads / 1 kv head, ff 64, vocab 64, tied embeddings).
struct HfSpec {
  nlohmann::json config;
  std::vector<SafetensorsEntry> entries;
  SafetensorsEntry* entry(const std::string& name) {
    for (auto& e : entries)
      if (e.name == name) return &e;
    return nullptr;
  }
  void write(const std::string& dir) const {
    std::ofstream(dir + "/config.json") << config.dump();
    write_file(dir + "/model.safetensors", safetensors_bytes(entries));
  }
};

inline HfSpec tiny_llama_hf() {
  HfSpec h;
  h.config = {{"architectures", {"LlamaForCausalLM"}},
              {"vocab_size", 64},
              {"hidden_size", 32},
              {"intermediate_size", 64},
              {"num_hidden_layers", 1},
              {"num_attention_heads", 2},
              {"num_key_value_heads", 1},
              {"rms_norm_eps", 1e-5},
              {"tie_word_embeddings", true}};
  auto f32 = [](std::string n, std::vector<int64_t> shape) {
    int64_t k = 1;
    for (auto d : shape) k *= d;
    return SafetensorsEntry{n, "F32", shape, std::vector<uint8_t>(k * 4, 0)};
  };
  const std::string p = "model.layers.0.";
  h.entries = {f32("model.embed_tokens.weight", {64, 32}),
               f32("model.norm.weight", {32}),
               f32(p + "input_layernorm.weight", {32}),
               f32(p + "self_attn.q_proj.weight", {32, 32}),
               f32(p + "self_attn.k_proj.weight", {16, 32}),
               f32(p + "self_attn.v_proj.weight", {16, 32}),
               f32(p + "self_attn.o_proj.weight", {32, 32}),
               f32(p + "post_attention_layernorm.weight", {32}),
               f32(p + "mlp.gate_proj.weight", {64, 32}),
               f32(p + "mlp.up_proj.weight", {64, 32}),
               f32(p + "mlp.down_proj.weight", {32, 64})};
  return h;
}

// A small byte-level BPE tokenizer.json: 8 vocabulary entries, 2 merges, added tokens <s> (8,
// special) and <t> (9), and a TemplateProcessing post-processor that prepends <s>.
inline nlohmann::json tiny_tokenizer_json() {
  using nlohmann::json;
  json added = json::array();
  added.push_back({{"id", 8}, {"content", "<s>"}, {"special", true}});
  added.push_back({{"id", 9}, {"content", "<t>"}, {"special", false}});
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                    {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
            {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {8}}, {"tokens", {"<s>"}}}}}}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"},
            {"vocab",
             {{"a", 0},
              {"b", 1},
              {"\xC4\xA0", 2},
              {"c", 3},
              {"ab", 4},
              {"\xC4\xA0"
               "c",
               5},
              {"x", 6},
              {"y", 7}}},
            {"merges", {"a b", "\xC4\xA0 c"}}}}};
}

}  // namespace vllm::testing
