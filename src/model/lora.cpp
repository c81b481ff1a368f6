// PEFT LoRA adapters: reading adapter_config.json and adapter_model.safetensors, and the
// per-token low-rank update.
#include "model/lora.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "model/load_error.h"
#include "model/weight_store.h"
#include "vt/cpu/kernels.h"
#include "vt/dtype.h"

namespace vllm::model {

namespace {

using nlohmann::json;

// PEFT's per-module rank / alpha overrides: the first key whose regex matches the module name
// as `(.*\.)?(key)$` (vLLM's PEFTHelper._match_pattern).
const json* match_pattern(const json& pattern, const std::string& module, const std::string& file) {
  for (const auto& [key, value] : pattern.items()) {
    try {
      if (std::regex_match(module, std::regex("(.*\\.)?(" + key + ")"))) return &value;
    } catch (const std::regex_error&) {
      throw LoadError(file, "rank_pattern / alpha_pattern key '" + key + "' is not a regex");
    }
  }
  return nullptr;
}

// The projection a module name adapts: its matrices in LoraLayer, or a fused one split by rows.
struct Target {
  std::vector<LoraMatrix LoraLayer::*> parts;  // in row order of B
  bool attention = false;
};

bool target_of(const std::string& module, Target& t) {
  static const std::map<std::string, Target> kTargets = {
      {"q_proj", {{&LoraLayer::q}, true}},
      {"k_proj", {{&LoraLayer::k}, true}},
      {"v_proj", {{&LoraLayer::v}, true}},
      {"o_proj", {{&LoraLayer::o}, true}},
      {"qkv_proj", {{&LoraLayer::q, &LoraLayer::k, &LoraLayer::v}, true}},
      {"gate_proj", {{&LoraLayer::gate}, false}},
      {"up_proj", {{&LoraLayer::up}, false}},
      {"down_proj", {{&LoraLayer::down}, false}},
      {"gate_up_proj", {{&LoraLayer::gate, &LoraLayer::up}, false}},
  };
  auto it = kTargets.find(module);
  if (it == kTargets.end()) return false;
  t = it->second;
  return true;
}

// The base projection a LoraLayer member adapts, for its shape.
const vt::cpu::WeightView& base_of(const LayerWeights& w, LoraMatrix LoraLayer::*m) {
  if (m == &LoraLayer::q) return w.attn.q;
  if (m == &LoraLayer::k) return w.attn.k;
  if (m == &LoraLayer::v) return w.attn.v;
  if (m == &LoraLayer::o) return w.attn.o;
  if (m == &LoraLayer::gate) return w.mlp.gate;
  if (m == &LoraLayer::up) return w.mlp.up;
  return w.mlp.down;
}

std::vector<float> read_f32(const TensorRef& t, const std::string& dtype) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  vt::cpu::dequantize_row(t.dtype, t.data, out.data(), t.numel());
  if (dtype == "bfloat16")
    for (float& v : out) v = vt::cpu::bf16_to_fp32(vt::cpu::fp32_to_bf16(v));
  else if (dtype == "float16")
    for (float& v : out) v = vt::cpu::fp16_to_fp32(vt::cpu::fp32_to_fp16(v));
  return out;
}

// llama.cpp's q / k row permutation (ModelConfig::gguf_qk_permuted) applied to B's rows.
void permute_heads(std::vector<float>& b, int64_t rank, int64_t head_dim) {
  const std::vector<float> src = b;
  const int64_t rows = static_cast<int64_t>(b.size()) / rank, half = head_dim / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = r / head_dim, w = r % head_dim;  // destination row h * D + 2i + j
    const int64_t from = h * head_dim + (w % 2) * half + w / 2;
    std::copy_n(src.begin() + from * rank, rank, b.begin() + r * rank);
  }
}

}  // namespace

LoraAdapter load_lora_adapter(const std::string& name, const std::string& dir, const ModelConfig& c,
                              const std::vector<LayerWeights>& layers,
                              const LoraLoadOptions& opts) {
  namespace fs = std::filesystem;
  const std::string cfg_path = (fs::path(dir) / "adapter_config.json").string();
  const std::string st_path = (fs::path(dir) / "adapter_model.safetensors").string();
  if (!fs::is_directory(dir))
    throw LoadError(dir, "LoRA adapter '" + name +
                             "': not a folder (a PEFT adapter folder with "
                             "adapter_config.json and adapter_model.safetensors is expected)");
  if (!fs::exists(cfg_path)) throw LoadError(cfg_path, "missing (LoRA adapter '" + name + "')");
  if (!fs::exists(st_path)) {
    const bool bin = fs::exists(fs::path(dir) / "adapter_model.bin");
    throw LoadError(st_path, std::string("missing (LoRA adapter '") + name + "')" +
                                 (bin ? ": adapter_model.bin (a pickle) is not read; save the "
                                        "adapter as safetensors"
                                      : ""));
  }
  json cfg;
  {
    std::ifstream in(cfg_path);
    std::stringstream ss;
    ss << in.rdbuf();
    cfg = json::parse(ss.str(), nullptr, false);
  }
  if (!cfg.is_object()) throw LoadError(cfg_path, "not a JSON object");
  auto field = [&](const char* k) -> const json* {
    auto it = cfg.find(k);
    return it == cfg.end() || it->is_null() ? nullptr : &*it;
  };
  if (const json* p = field("peft_type"); p && *p != "LORA")
    throw LoadError(cfg_path, "peft_type " + p->dump() + " is not a LoRA adapter");
  for (const char* k : {"r", "lora_alpha", "target_modules"})
    if (!field(k)) throw LoadError(cfg_path, std::string("missing required field '") + k + "'");
  if (!field("r")->is_number_integer() || field("r")->get<int64_t>() <= 0)
    throw LoadError(cfg_path,
                    "LoRA rank `r` must be a positive integer, got " + field("r")->dump());
  if (!field("lora_alpha")->is_number())
    throw LoadError(cfg_path, "lora_alpha must be a number, got " + field("lora_alpha")->dump());
  // vLLM's PEFTHelper refusals, in its words.
  std::vector<std::string> errs;
  if (const json* m = field("modules_to_save"); m && m->is_array() && !m->empty())
    errs.push_back(
        "vLLM only supports modules_to_save being either None or [\"classifier\", "
        "\"score\"] for classification models. Unsupported modules_to_save: " +
        m->dump());
  auto truthy = [&](const char* k) {
    const json* v = field(k);
    return v && !(v->is_boolean() && !v->get<bool>()) && !(v->is_array() && v->empty()) &&
           !(v->is_object() && v->empty());
  };
  if (truthy("use_dora")) errs.push_back("vLLM does not yet support DoRA.");
  if (truthy("lora_bias")) errs.push_back("vLLM does not support LoRA bias (lora_bias).");
  if (truthy("alora_invocation_tokens"))
    errs.push_back("vLLM does not support Activated LoRA (aLoRA).");
  if (truthy("layer_replication")) errs.push_back("vLLM does not support layer_replication.");
  if (truthy("use_bdlora")) errs.push_back("vLLM does not support block-diagonal LoRA (BD-LoRA).");
  if (truthy("use_qalora")) errs.push_back("vLLM does not support QALoRA.");
  if (const json* i = field("init_lora_weights"); i && i->is_string()) {
    std::string s = i->get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), ::tolower);
    if (s != "gaussian" && s != "eva" && s != "orthogonal" && s != "mica" && s != "lora_ga")
      errs.push_back("vLLM does not support init_lora_weights=" + i->dump() +
                     ": such inits modify the base model weights when PEFT loads the adapter");
  }
  if (const json* b = field("bias"); b && *b != "none")
    errs.push_back("Adapter bias is not supported.");
  // Per-layer adaptation subsets (layers_to_transform) are not read here.
  if (truthy("layers_to_transform"))
    errs.push_back(
        "layers_to_transform is not supported (adapt every layer or save the "
        "adapter without it)");
  if (!errs.empty()) {
    std::string all;
    for (const auto& e : errs) all += (all.empty() ? "" : " ") + e;
    throw LoadError(cfg_path, all);
  }
  const bool rslora =
      field("use_rslora") && field("use_rslora")->is_boolean() && field("use_rslora")->get<bool>();
  const json empty = json::object();
  const json& rank_pattern = field("rank_pattern") ? *field("rank_pattern") : empty;
  const json& alpha_pattern = field("alpha_pattern") ? *field("alpha_pattern") : empty;
  const int64_t r_default = field("r")->get<int64_t>();
  const double alpha_default = field("lora_alpha")->get<double>();
  int64_t max_rank = r_default;
  for (const auto& [k, v] : rank_pattern.items()) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0)
      throw LoadError(cfg_path, "LoRA rank for `" + k +
                                    "` in `rank_pattern` must be a positive integer, got " +
                                    v.dump());
    max_rank = std::max(max_rank, v.get<int64_t>());
  }
  if (max_rank > opts.max_lora_rank)
    throw LoadError(cfg_path, "LoRA rank " + std::to_string(max_rank) +
                                  " is greater than max_lora_rank " +
                                  std::to_string(opts.max_lora_rank) + " (raise --max-lora-rank)");

  LoraAdapter a;
  a.name = name;
  a.path = dir;
  a.max_rank = max_rank;
  if (const json* t = field("target_modules")) {
    if (t->is_string())
      a.target_modules.push_back(t->get<std::string>());
    else if (t->is_array())
      for (const auto& m : *t)
        if (m.is_string()) a.target_modules.push_back(m.get<std::string>());
  }
  a.layers.resize(layers.size());

  WeightStore store;
  load_safetensors_file(st_path, store);
  // Pairs by module: "model.layers.N.self_attn.q_proj" -> (A, B).
  std::map<std::string, std::pair<const TensorRef*, const TensorRef*>> pairs;
  static const std::string kPrefix = "base_model.model.";
  for (const auto& [tname, t] : store.all()) {
    std::string n = tname;
    if (n.rfind(kPrefix, 0) == 0) n = n.substr(kPrefix.size());
    const bool is_a = n.size() > 14 && n.compare(n.size() - 14, 14, ".lora_A.weight") == 0;
    const bool is_b = n.size() > 14 && n.compare(n.size() - 14, 14, ".lora_B.weight") == 0;
    if (!is_a && !is_b)
      throw LoadError(st_path, "tensor '" + tname +
                                   "' is not a LoRA A / B weight (embedding and lm_head "
                                   "adapters, and trained modules_to_save, are not supported)");
    auto& p = pairs[n.substr(0, n.size() - 14)];
    (is_a ? p.first : p.second) = &t;
  }
  if (pairs.empty()) throw LoadError(st_path, "holds no LoRA weights");
  static const std::regex kModule(R"(model\.layers\.(\d+)\.(self_attn|mlp)\.([a-z_]+))");
  for (const auto& [module, ab] : pairs) {
    const std::string shown = kPrefix + module;
    if (!ab.first || !ab.second)
      throw LoadError(st_path, "'" + shown + "' has a lora_" + (ab.first ? "A" : "B") +
                                   " weight without its lora_" + (ab.first ? "B" : "A"));
    std::smatch m;
    Target tg;
    if (!std::regex_match(module, m, kModule) || !target_of(m[3].str(), tg) ||
        tg.attention != (m[2].str() == "self_attn"))
      throw LoadError(st_path,
                      "'" + shown +
                          "': this module cannot carry a LoRA here (supported: the decoder "
                          "layers' self_attn q_proj / k_proj / v_proj / o_proj / qkv_proj and mlp "
                          "gate_proj / up_proj / down_proj / gate_up_proj)");
    const int64_t li = std::stoll(m[1].str());
    if (li < 0 || li >= static_cast<int64_t>(layers.size()))
      throw LoadError(
          st_path, "'" + shown + "': the model has " + std::to_string(layers.size()) + " layers");
    const LayerWeights& lw = layers[li];
    if (tg.attention && c.mla)
      throw LoadError(st_path,
                      "'" + shown + "': LoRA on multi-head latent attention is not supported");
    if (!tg.attention && lw.moe)
      throw LoadError(st_path, "'" + shown + "': layer " + std::to_string(li) +
                                   " is a mixture-of-experts layer; LoRA on experts is not "
                                   "supported");
    const TensorRef& ta = *ab.first;
    const TensorRef& tb = *ab.second;
    for (const TensorRef* t : {&ta, &tb})
      if (t->dtype != vt::DType::F32 && t->dtype != vt::DType::F16 && t->dtype != vt::DType::BF16)
        throw LoadError(st_path, "'" + t->name + "' is " + std::string(vt::dtype_name(t->dtype)) +
                                     " (F32, F16 or BF16 expected)");
    if (ta.shape.size() != 2 || tb.shape.size() != 2 || ta.shape[0] != tb.shape[1])
      throw LoadError(st_path, "'" + shown + "': lora_A " + ta.shape_str() + " and lora_B " +
                                   tb.shape_str() + " are not [r, in] and [out, r]");
    const int64_t rank = ta.shape[0], in = ta.shape[1];
    const std::string pname = module;  // PEFT matches patterns on this name
    const json* rp = match_pattern(rank_pattern, pname, cfg_path);
    const json* ap = match_pattern(alpha_pattern, pname, cfg_path);
    const int64_t want_rank = rp ? rp->get<int64_t>() : r_default;
    if (rank != want_rank)
      throw LoadError(st_path, "'" + shown + "' has rank " + std::to_string(rank) +
                                   " where adapter_config.json gives " + std::to_string(want_rank));
    const double alpha = ap && ap->is_number() ? ap->get<double>() : alpha_default;
    const double scale =
        rslora ? alpha / std::sqrt(static_cast<double>(rank)) : alpha / static_cast<double>(rank);
    const std::vector<float> av = read_f32(ta, opts.dtype);
    const std::vector<float> bv = read_f32(tb, opts.dtype);
    int64_t row = 0;
    for (auto part : tg.parts) {
      const vt::cpu::WeightView& base = base_of(lw, part);
      if (base.rows == 0)
        throw LoadError(st_path, "'" + shown + "': the model's layer " + std::to_string(li) +
                                     " has no such projection");
      if (in != base.cols)
        throw LoadError(st_path, "'" + shown + "': lora_A " + ta.shape_str() +
                                     " does not fit the model's input width " +
                                     std::to_string(base.cols));
      LoraMatrix& lm = a.layers[li].*part;
      if (!lm.empty()) throw LoadError(st_path, "'" + shown + "' adapts a projection twice");
      lm.rank = rank;
      lm.in = in;
      lm.out = base.rows;
      lm.a = av;
      if (row + base.rows > tb.shape[0]) break;  // checked below
      lm.b.assign(bv.begin() + row * rank, bv.begin() + (row + base.rows) * rank);
      for (float& v : lm.b) v = static_cast<float>(v * scale);
      if (c.gguf_qk_permuted && (part == &LoraLayer::q || part == &LoraLayer::k))
        permute_heads(lm.b, rank, c.head_dim);
      row += base.rows;
    }
    if (row != tb.shape[0])
      throw LoadError(st_path, "'" + shown + "': lora_B " + tb.shape_str() +
                                   " does not fit the model's output width");
  }
  return a;
}

void lora_apply(const LoraRefs& r, LoraMatrix LoraLayer::*which, const float* x, int64_t ldx,
                float* y, int64_t ldy, int64_t n, vt::ThreadPool& pool) {
  // The tokens of one adapter go together through two F32 products (U = X A^T, D = U B^T), so
  // each of its A and B rows is read once per step, not once per token, by the same SIMD
  // kernels as any F32 weight (batch-invariant, the same bits on every ISA). Small products
  // stay on the calling thread. Grow-only scratch, per thread (the engine thread calls this).
  thread_local std::vector<int32_t> tokens;
  thread_local std::vector<float> xs, u, d;
  static vt::ThreadPool solo(1);
  constexpr int64_t kParallelMacs = 1 << 16;
  if (static_cast<int64_t>(tokens.size()) < n) tokens.resize(static_cast<size_t>(n));
  auto grow = [](std::vector<float>& v, int64_t size) {
    if (static_cast<int64_t>(v.size()) < size) v.resize(static_cast<size_t>(size));
    return v.data();
  };
  for (int32_t id = 1; id < r.n_ids; ++id) {
    if (!r.by_id[id]) continue;
    const LoraMatrix& m = r.by_id[id]->*which;
    if (m.empty()) continue;
    int64_t nt = 0;
    for (int64_t t = 0; t < n; ++t)
      if (r.ids[t] == id) tokens[nt++] = static_cast<int32_t>(t);
    if (nt == 0) continue;
    // The whole batch is this adapter's: read x in place.
    const float* xin = x;
    int64_t ldxin = ldx;
    if (nt != n) {
      float* g = grow(xs, nt * m.in);
      for (int64_t j = 0; j < nt; ++j) std::copy_n(x + tokens[j] * ldx, m.in, g + j * m.in);
      xin = g;
      ldxin = m.in;
    }
    vt::cpu::WeightView a{vt::DType::F32, m.rank, m.in, m.a.data(),
                          static_cast<size_t>(m.in) * sizeof(float)};
    vt::cpu::WeightView b{vt::DType::F32, m.out, m.rank, m.b.data(),
                          static_cast<size_t>(m.rank) * sizeof(float)};
    float* ut = grow(u, nt * m.rank);
    float* dt = grow(d, nt * m.out);
    vt::cpu::matmul(a, xin, ldxin, nt, ut, m.rank,
                    nt * m.rank * m.in >= kParallelMacs ? pool : solo);
    vt::cpu::matmul(b, ut, m.rank, nt, dt, m.out,
                    nt * m.rank * m.out >= kParallelMacs ? pool : solo);
    for (int64_t j = 0; j < nt; ++j) {
      float* yt = y + tokens[j] * ldy;
      const float* dj = dt + j * m.out;
      for (int64_t o = 0; o < m.out; ++o) yt[o] += dj[o];
    }
  }
}

}  // namespace vllm::model
