// Mutation robustness: thousands of deterministic byte and field mutations of real model files
// (the SmolLM2 GGUF header, the tiny Hugging Face llama checkpoint, a tokenizer.json and a real
// tokenizer_config.json). Every load must either succeed or throw LoadError: never another
// exception type, never a crash, and never take more than a few seconds.
//
// VLLM_MUTATIONS scales the counts (default 1.0; 0.1 for a quick run, 10 for a long soak).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "gguf_walker.h"
#include "model/causal_lm.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/tokenizer_loader.h"
#include "test_files.h"
#include "test_paths.h"

namespace vllm::testing {
namespace {

using model::LoadError;
using nlohmann::json;

// splitmix64: a fixed, portable sequence (the standard distributions differ across libraries).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
};

int scaled(int n) {
  const char* s = std::getenv("VLLM_MUTATIONS");
  const double f = s ? std::atof(s) : 1.0;
  return std::max(1, static_cast<int>(n * (f > 0 ? f : 1.0)));
}

// clang-format off
const uint64_t kInteresting[] = {
    0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, 1023, 1024, 1025, 4096, 65535, 65536,
    0x7fffffffull, 0x80000000ull, 0xffffffffull, 0x100000000ull, 1ull << 40, 1ull << 48,
    1ull << 53, 1ull << 62, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull};
// clang-format on

// A value of `width` bytes: an interesting constant, a neighbour of the old value, or noise.
uint64_t mutate_value(Rng& r, uint64_t old, int width) {
  switch (r.below(4)) {
    case 0:
      return kInteresting[r.below(std::size(kInteresting))];
    case 1:
      return old + r.below(5) - 2;
    case 2:
      return r.chance(50) ? old * 2 : old / 2;
    default:
      return r.next() >> (r.below(64));
  }
  (void)width;
}

// A float that stresses a validator: non-finite, signed zero, tiny, huge, negative.
double mutate_float(Rng& r, double old) {
  const double v[] = {0.0,
                      -0.0,
                      -1.0,
                      1e-30,
                      1e30,
                      1e300,
                      -1e300,
                      std::numeric_limits<double>::infinity(),
                      -std::numeric_limits<double>::infinity(),
                      std::numeric_limits<double>::quiet_NaN(),
                      std::numeric_limits<float>::max(),
                      old * 2,
                      old / 1e6};
  return v[r.below(std::size(v))];
}

// Runs one load; returns "" when it succeeded or threw LoadError, else what went wrong.
struct Outcome {
  int loaded = 0, refused = 0;
  double max_ms = 0;
  std::string slowest;
  std::vector<std::string> failures;
};

void run_one(Outcome& o, const std::string& what, const std::function<void()>& load) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    load();
    ++o.loaded;
  } catch (const LoadError&) {
    ++o.refused;
  } catch (const std::exception& e) {
    if (o.failures.size() < 20)
      o.failures.push_back(what + ": threw " + typeid(e).name() + ": " + e.what());
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (ms > o.max_ms) {
    o.max_ms = ms;
    o.slowest = what;
  }
  if (ms > 5000 && o.failures.size() < 20)
    o.failures.push_back(what + ": took " + std::to_string(ms) + " ms");
}

void report(const char* name, const Outcome& o) {
  std::printf("[%s] %d loaded, %d refused with LoadError, slowest %.1f ms (%s)\n", name, o.loaded,
              o.refused, o.max_ms, o.slowest.c_str());
  EXPECT_TRUE(o.failures.empty()) << [&] {
    std::string s;
    for (const auto& f : o.failures) s += f + "\n";
    return s;
  }();
  EXPECT_GT(o.refused, 0) << "no mutation was refused: the mutations miss the header";
}

// ---- GGUF --------------------------------------------------------------------------------

// A private, writable copy-on-write mapping of the real file: header bytes are mutated in
// place and restored; the ~100 MB of weights are shared with the page cache.
class PrivateMapping {
 public:
  explicit PrivateMapping(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    size_ = static_cast<size_t>(f.tellg());
    const int fd = ::open(path.c_str(), O_RDONLY);
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw std::runtime_error("mmap " + path);
    data_ = static_cast<uint8_t*>(p);
  }
  ~PrivateMapping() { ::munmap(data_, size_); }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Byte edits applied to a buffer and undone afterwards.
class Edits {
 public:
  explicit Edits(uint8_t* base) : base_(base) {}
  ~Edits() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
      std::memcpy(base_ + it->first, it->second.data(), it->second.size());
  }
  void write(size_t at, const void* src, size_t n) {
    saved_.emplace_back(at, std::vector<uint8_t>(base_ + at, base_ + at + n));
    std::memcpy(base_ + at, src, n);
  }

 private:
  uint8_t* base_;
  std::vector<std::pair<size_t, std::vector<uint8_t>>> saved_;
};

// One mutation of a GGUF header in place; returns its description.
std::string mutate_gguf(Rng& r, const GgufLayout& l, Edits& e, const uint8_t* base) {
  auto put = [&](size_t at, uint64_t v, int width) { e.write(at, &v, width); };
  auto get = [&](size_t at, int width) {
    uint64_t v = 0;
    std::memcpy(&v, base + at, width);
    return v;
  };
  const int kind = static_cast<int>(r.below(100));
  if (kind < 40 && !l.fields.empty()) {
    // A structural field: counts, lengths, types, dims, offsets, scalar values. Half of them
    // in the metadata, whose fields are far fewer than the tensor infos'.
    const GgufField* pick = &l.fields[r.below(l.fields.size())];
    if (r.chance(50))
      while (!pick->in_metadata) pick = &l.fields[r.below(l.fields.size())];
    const GgufField& f = *pick;
    if (f.is_float && r.chance(70)) {
      const double old = f.width == 4 ? [&] {
        float x;
        std::memcpy(&x, base + f.at, 4);
        return static_cast<double>(x);
      }()
                                      : [&] {
                                          double x;
                                          std::memcpy(&x, base + f.at, 8);
                                          return x;
                                        }();
      const double v = mutate_float(r, old);
      if (f.width == 4) {
        const float x = static_cast<float>(std::isfinite(v) && std::fabs(v) > 3e38 ? 3e38 : v);
        e.write(f.at, &x, 4);
      } else {
        e.write(f.at, &v, 8);
      }
      return "field " + f.what + " -> " + std::to_string(v);
    }
    const uint64_t v = mutate_value(r, get(f.at, f.width), f.width);
    put(f.at, v, f.width);
    return "field " + f.what + " -> " + std::to_string(v);
  }
  // Raw bytes: mostly in the hyperparameters and tensor infos, sometimes anywhere.
  size_t at;
  if (kind < 65)
    at = r.below(std::min<size_t>(l.metadata_end, 4096));
  else if (kind < 90)
    at = l.tensor_infos_start + r.below(l.data_start - l.tensor_infos_start);
  else
    at = r.below(l.data_start);
  const int n = 1 + static_cast<int>(r.below(4));
  std::string d = "bytes at " + std::to_string(at) + ":";
  for (int i = 0; i < n && at + i < l.data_start; ++i) {
    uint8_t b = static_cast<uint8_t>(r.chance(50) ? r.next() : base[at + i] ^ (1u << r.below(8)));
    e.write(at + i, &b, 1);
    d += " " + std::to_string(b);
  }
  return d;
}

// Parses the (mutated) bytes, binds the weights without packing, and, when the mutation may
// touch the vocabulary, builds the tokenizer too.
void load_gguf_bytes(const uint8_t* data, size_t size, bool with_tokenizer) {
  auto g = model::GgufFile::parse("smollm2.gguf", data, size);
  model::LoadOptions opts;
  opts.pack_weights = false;
  auto m = model::CausalLM::from_gguf(std::move(g), vt::ThreadPool::global(), opts);
  if (with_tokenizer) model::take_tokenizer_from_gguf(*m->gguf_mut());
}

TEST(LoaderMutation, SmolLM2GgufHeader) {
  const std::string path = default_gguf();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  PrivateMapping full(path);
  const GgufLayout layout = walk_gguf(full.data(), full.size());
  ASSERT_GT(layout.fields.size(), 100u);

  // The same header with the vocabulary cut to its first entries (and a padding key, so the
  // tensor data stays where it is): parsing it is ~100x cheaper, so most mutations use it.
  PrivateMapping cut(path);
  const std::vector<uint8_t> small = shrink_gguf_vocab(full.data(), layout, 600);
  std::memcpy(cut.data(), small.data(), small.size());
  const GgufLayout cut_layout = walk_gguf(cut.data(), cut.size());
  ASSERT_EQ(cut_layout.data_start, layout.data_start);
  load_gguf_bytes(cut.data(), cut.size(), true);  // the unmutated cut header loads

  Rng r{0x5eed0001};
  Outcome o;
  const int n_cut = scaled(2500), n_full = scaled(150);
  for (int i = 0; i < n_cut; ++i) {
    Edits e(cut.data());
    const std::string what =
        "cut #" + std::to_string(i) + " " + mutate_gguf(r, cut_layout, e, cut.data());
    run_one(o, what, [&] { load_gguf_bytes(cut.data(), cut.size(), true); });
  }
  for (int i = 0; i < n_full; ++i) {
    Edits e(full.data());
    const std::string what =
        "full #" + std::to_string(i) + " " + mutate_gguf(r, layout, e, full.data());
    run_one(o, what, [&] { load_gguf_bytes(full.data(), full.size(), i % 10 == 0); });
  }
  report("gguf", o);
}

// ---- Hugging Face folder -----------------------------------------------------------------

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// All paths to leaves and objects of a JSON document (for field mutations).
void json_paths(const json& j, json::json_pointer p, std::vector<json::json_pointer>& out) {
  out.push_back(p);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) json_paths(*it, p / it.key(), out);
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) json_paths(j[i], p / i, out);
}

json mutant_value(Rng& r, const json& old) {
  switch (r.below(6)) {
    case 0:
      return json(static_cast<int64_t>(kInteresting[r.below(std::size(kInteresting))]));
    case 1:
      return json(kInteresting[r.below(std::size(kInteresting))]);  // unsigned, past INT64_MAX
    case 2: {
      const double v[] = {1e300, -1e300, 0.5, -0.0, 1e-300, 2.5e9, 1e18, -1.0};
      return json(v[r.below(std::size(v))]);
    }
    case 3: {
      const json v[] = {json(true),    json(false),    json(nullptr),        json("x"),
                        json::array(), json::object(), json::array({1e300}), json(-1)};
      return v[r.below(std::size(v))];
    }
    case 4:
      if (old.is_number()) return json(old.get<double>() * (r.chance(50) ? -1 : 1e6));
      return json(0);
    default:
      return json(int64_t{-1} - static_cast<int64_t>(r.below(1000)));
  }
}

// Replaces, removes or duplicates one field of a JSON document.
std::string mutate_json(Rng& r, json& j) {
  std::vector<json::json_pointer> paths;
  json_paths(j, json::json_pointer(), paths);
  const json::json_pointer p = paths[1 + r.below(paths.size() - 1)];
  if (r.chance(10) && p.parent_pointer() != json::json_pointer() &&
      j[p.parent_pointer()].is_object()) {
    j[p.parent_pointer()].erase(p.back());
    return "remove " + p.to_string();
  }
  j[p] = mutant_value(r, j[p]);
  return "set " + p.to_string() + " = " + j[p].dump().substr(0, 40);
}

// Flips or replaces a few bytes of text in [begin, end).
std::string mutate_bytes(Rng& r, std::string& s, size_t begin, size_t end) {
  std::string d = "bytes";
  const int n = 1 + static_cast<int>(r.below(3));
  for (int i = 0; i < n; ++i) {
    const size_t at = begin + r.below(end - begin);
    const char digits[] = "0123456789-.e+[]{}\",:";
    s[at] = r.chance(50) ? digits[r.below(sizeof(digits) - 1)] : static_cast<char>(r.next());
    d += " @" + std::to_string(at);
  }
  return d;
}

TEST(LoaderMutation, TinyHfCheckpoint) {
  const std::string src = tiny_models_dir() + "/llama";
  if (!std::filesystem::exists(src + "/config.json")) GTEST_SKIP() << "no " << src;
  const std::string dir = temp_dir("mutation_hf");
  const std::string config = slurp(src + "/config.json");
  const std::string weights = slurp(src + "/model.safetensors");
  uint64_t header_len;
  std::memcpy(&header_len, weights.data(), 8);
  const json header = json::parse(weights.substr(8, header_len));
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
  };
  write("config.json", config);
  write("model.safetensors", weights);
  model::CausalLM::load(dir);  // the unmutated checkpoint loads

  Rng r{0x5eed0002};
  Outcome o;
  const int n = scaled(2000);
  for (int i = 0; i < n; ++i) {
    std::string what = "#" + std::to_string(i) + " ";
    const int kind = static_cast<int>(r.below(4));
    std::string cfg = config, st = weights;
    if (kind == 0) {
      json j = json::parse(config);
      what += "config.json " + mutate_json(r, j);
      cfg = j.dump();
    } else if (kind == 1) {
      what += "config.json " + mutate_bytes(r, cfg, 0, cfg.size());
    } else if (kind == 2) {
      // A header field; the header keeps its length, so offsets into the data stay meaningful.
      json h = header;
      what += "safetensors header " + mutate_json(r, h);
      std::string hs = h.dump();
      const uint64_t len = hs.size();
      st =
          std::string(reinterpret_cast<const char*>(&len), 8) + hs + weights.substr(8 + header_len);
    } else {
      what += "safetensors " + mutate_bytes(r, st, 0, 8 + header_len);
    }
    write("config.json", cfg);
    write("model.safetensors", st);
    run_one(o, what, [&] { model::CausalLM::load(dir); });
  }
  std::filesystem::remove_all(dir);
  report("hf", o);
}

TEST(LoaderMutation, TokenizerFiles) {
  const std::string dir = temp_dir("mutation_tok");
  const std::string tj = tiny_tokenizer_json().dump();
  const std::string qwen_cfg = tiny_models_dir() + "/qwen3/tokenizer_config.json";
  const std::string tc = std::filesystem::exists(qwen_cfg) ? slurp(qwen_cfg) : "";
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
  };
  Rng r{0x5eed0003};
  Outcome o;
  const int n = scaled(1500);
  for (int i = 0; i < n; ++i) {
    std::string what = "#" + std::to_string(i) + " ";
    std::string t = tj, c = tc, gen = R"({"eos_token_id": [7, 8]})";
    const int kind = static_cast<int>(r.below(5));
    if (kind == 0 || kind == 1) {
      json j = json::parse(tj);
      what += "tokenizer.json " + mutate_json(r, j);
      if (kind == 1) what += ", " + mutate_json(r, j);
      t = j.dump();
    } else if (kind == 2) {
      what += "tokenizer.json " + mutate_bytes(r, t, 0, t.size());
    } else if (kind == 3 && !c.empty()) {
      json j = json::parse(tc);
      what += "tokenizer_config.json " + mutate_json(r, j);
      c = j.dump();
    } else {
      json j = json::parse(gen);
      what += "generation_config.json " + mutate_json(r, j);
      gen = j.dump();
    }
    write("tokenizer.json", t);
    write("generation_config.json", gen);
    if (!c.empty()) write("tokenizer_config.json", c);
    run_one(o, what, [&] {
      auto tok = model::load_tokenizer(dir);
      // A tokenizer that loads must also work. (Bytes its vocabulary lacks come out as the
      // unknown id, possibly -1, which the engine refuses; only real ids are decoded.)
      std::vector<int32_t> ids;
      for (int32_t id : tok->encode("ab c<s> xy<t>"))
        if (id >= 0 && id < tok->vocab_size()) ids.push_back(id);
      tok->decode(ids);
    });
  }
  std::filesystem::remove_all(dir);
  report("tokenizer", o);
}

}  // namespace
}  // namespace vllm::testing
