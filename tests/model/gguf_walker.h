// Test-side map of a valid GGUF header: where each structural field (counts, lengths, types,
// dims, offsets, scalar values) sits, so mutation tests can aim at fields rather than at
// vocabulary text. Also rewrites a header with a shortened vocabulary, keeping the tensor data
// where it was. Assumes a well-formed file (it is only run on the unmutated original).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace vllm::testing {

struct GgufField {
  size_t at;  // byte offset in the file
  int width;  // 4 or 8
  bool is_float;
  bool in_metadata;  // metadata key/value (else header count or tensor info)
  std::string what;  // for messages: "kv 'llama.block_count' value"
};

struct GgufKvSpan {
  std::string key;
  size_t begin, end;  // the whole key/value's bytes
};

struct GgufLayout {
  size_t metadata_end = 0, tensor_infos_start = 0, tensor_infos_end = 0, data_start = 0;
  uint64_t n_tensors = 0, n_kv = 0;
  std::vector<GgufField> fields;
  std::vector<GgufKvSpan> kvs;
};

inline GgufLayout walk_gguf(const uint8_t* p, size_t size) {
  GgufLayout l;
  size_t pos = 0;
  auto need = [&](size_t n) {
    if (n > size - pos) throw std::runtime_error("walk_gguf: truncated at " + std::to_string(pos));
  };
  auto u32 = [&] {
    need(4);
    uint32_t v;
    std::memcpy(&v, p + pos, 4);
    pos += 4;
    return v;
  };
  auto u64 = [&] {
    need(8);
    uint64_t v;
    std::memcpy(&v, p + pos, 8);
    pos += 8;
    return v;
  };
  auto field = [&](int width, bool is_float, bool meta, std::string what) {
    l.fields.push_back({pos, width, is_float, meta, std::move(what)});
  };
  auto str = [&](bool meta, const std::string& what) {
    field(8, false, meta, what + " length");
    const uint64_t n = u64();
    need(n);
    std::string s(reinterpret_cast<const char*>(p + pos), n);
    pos += n;
    return s;
  };
  auto scalar_width = [](uint32_t t) -> int {
    switch (t) {
      case 0:
      case 1:
      case 7:
        return 1;
      case 2:
      case 3:
        return 2;
      case 4:
      case 5:
      case 6:
        return 4;
      case 10:
      case 11:
      case 12:
        return 8;
      default:
        return 0;
    }
  };
  pos = 8;
  field(8, false, false, "tensor count");
  l.n_tensors = u64();
  field(8, false, false, "metadata count");
  l.n_kv = u64();
  for (uint64_t i = 0; i < l.n_kv; ++i) {
    const size_t begin = pos;
    const std::string key = str(true, "kv key");
    const std::string k = "kv '" + key + "'";
    field(4, false, true, k + " type");
    const uint32_t type = u32();
    if (type == 8) {
      str(true, k);
    } else if (type == 9) {
      field(4, false, true, k + " element type");
      const uint32_t et = u32();
      field(8, false, true, k + " count");
      const uint64_t n = u64();
      for (uint64_t j = 0; j < n; ++j) {
        if (et == 8) {
          if (j < 4) {
            str(true, k + "[" + std::to_string(j) + "]");
          } else {
            need(8);
            uint64_t len;
            std::memcpy(&len, p + pos, 8);
            pos += 8;
            need(len);
            pos += len;
          }
        } else {
          const int w = scalar_width(et);
          if (w == 0) throw std::runtime_error("walk_gguf: array of type " + std::to_string(et));
          if (j < 4 && w >= 4)
            field(w, et == 6 || et == 12, true, k + "[" + std::to_string(j) + "]");
          need(w);
          pos += w;
        }
      }
    } else {
      const int w = scalar_width(type);
      if (w == 0) throw std::runtime_error("walk_gguf: value of type " + std::to_string(type));
      if (w >= 4) field(w, type == 6 || type == 12, true, k + " value");
      need(w);
      pos += w;
    }
    l.kvs.push_back({key, begin, pos});
  }
  l.metadata_end = l.tensor_infos_start = pos;
  for (uint64_t i = 0; i < l.n_tensors; ++i) {
    const std::string name = str(false, "tensor name");
    const std::string t = "tensor '" + name + "'";
    field(4, false, false, t + " n_dims");
    const uint32_t n_dims = u32();
    for (uint32_t d = 0; d < n_dims; ++d) {
      field(8, false, false, t + " dim " + std::to_string(d));
      u64();
    }
    field(4, false, false, t + " type");
    u32();
    field(8, false, false, t + " offset");
    u64();
  }
  l.tensor_infos_end = pos;
  l.data_start = (pos + 31) / 32 * 32;  // the files walked use the default alignment
  return l;
}

// The header [0, tensor_infos_end) with tokenizer.ggml.{tokens,merges,token_type,scores} cut
// to `keep` entries, <arch>.vocab_size set to the original token count (so the embedding shape
// still agrees), and a padding string key sized so the tensor infos end where they did.
inline std::vector<uint8_t> shrink_gguf_vocab(const uint8_t* p, const GgufLayout& l,
                                              uint64_t keep) {
  std::vector<uint8_t> out(p, p + 24);
  auto put = [&](const void* v, size_t n) {
    const auto* c = static_cast<const uint8_t*>(v);
    out.insert(out.end(), c, c + n);
  };
  auto put_str = [&](const std::string& s) {
    const uint64_t n = s.size();
    put(&n, 8);
    put(s.data(), s.size());
  };
  std::string arch;
  uint64_t n_tokens = 0;
  uint64_t n_kv = 0;
  for (const auto& kv : l.kvs) {
    const uint8_t* v = p + kv.begin + 8 + kv.key.size();  // at the type
    uint32_t type;
    std::memcpy(&type, v, 4);
    if (kv.key == "general.architecture") {
      uint64_t n;
      std::memcpy(&n, v + 4, 8);
      arch.assign(reinterpret_cast<const char*>(v + 12), n);
    }
    const bool cut =
        type == 9 && (kv.key == "tokenizer.ggml.tokens" || kv.key == "tokenizer.ggml.merges" ||
                      kv.key == "tokenizer.ggml.token_type" || kv.key == "tokenizer.ggml.scores");
    if (kv.key.size() > 11 && kv.key.compare(kv.key.size() - 11, 11, ".vocab_size") == 0)
      continue;  // rewritten below
    ++n_kv;
    if (!cut) {
      put(p + kv.begin, kv.end - kv.begin);
      continue;
    }
    uint32_t et;
    uint64_t n;
    std::memcpy(&et, v + 4, 4);
    std::memcpy(&n, v + 8, 8);
    if (kv.key == "tokenizer.ggml.tokens") n_tokens = n;
    const uint64_t m = std::min(n, keep);
    // Copy the key, type, element type, then the new count and the first m elements.
    put(p + kv.begin, 8 + kv.key.size() + 8);
    put(&m, 8);
    const uint8_t* e = v + 16;
    for (uint64_t j = 0; j < m; ++j) {
      size_t len;
      if (et == 8) {
        uint64_t sl;
        std::memcpy(&sl, e, 8);
        len = 8 + sl;
      } else {
        len = et == 4 || et == 5 || et == 6 ? 4 : et == 10 || et == 11 || et == 12 ? 8 : 1;
      }
      put(e, len);
      e += len;
    }
  }
  put_str(arch + ".vocab_size");
  const uint32_t t_u32 = 4;
  put(&t_u32, 4);
  const uint32_t vocab = static_cast<uint32_t>(n_tokens);
  put(&vocab, 4);
  ++n_kv;
  // Padding key: 8 (key length) + key + 4 (type) + 8 (string length) + the string.
  const std::string pad_key = "vllm.test.padding";
  const size_t fixed = 8 + pad_key.size() + 4 + 8;
  if (out.size() + fixed > l.tensor_infos_start)
    throw std::runtime_error("shrink_gguf_vocab: the cut header is not shorter");
  put_str(pad_key);
  const uint32_t t_str = 8;
  put(&t_str, 4);
  put_str(std::string(l.tensor_infos_start - out.size() - 8, ' '));
  ++n_kv;
  std::memcpy(out.data() + 16, &n_kv, 8);
  put(p + l.tensor_infos_start, l.tensor_infos_end - l.tensor_infos_start);
  return out;
}

}  // namespace vllm::testing
