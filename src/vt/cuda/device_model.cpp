// DeviceModel: the checks, then one arena sized for everything, then the copies.
#include "vt/cuda/device_model.h"
#include "vt/cuda/cuda_check.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "model/load_error.h"
#include "vt/cuda/device_checks.h"

namespace vt::cuda {

namespace {

using vllm::model::LoadError;
using WeightView = vt::cpu::WeightView;

std::string layer_name(size_t l, const char* rest) {
  return "model.layers." + std::to_string(l) + "." + rest;
}

size_t matrix_bytes(const WeightView& w) {
  return row_bytes(w.dtype, w.cols) * static_cast<size_t>(w.rows);
}

// Copies w's rows in GGUF block layout to dst (packed views are unpacked row by row).
void copy_matrix(CudaBackend& be, const WeightView& w, void* dst) {
  const size_t rb = row_bytes(w.dtype, w.cols);
  auto* d = static_cast<uint8_t*>(dst);
  if (!w.packed && w.row_stride == rb) {
    be.upload(d, w.data, rb * static_cast<size_t>(w.rows));
    return;
  }
  const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>((size_t{16} << 20) / rb));
  std::vector<uint8_t> rows;
  for (int64_t r0 = 0; r0 < w.rows; r0 += chunk) {
    const int64_t n = std::min(chunk, w.rows - r0);
    rows.resize(rb * static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      uint8_t* out = rows.data() + rb * static_cast<size_t>(r);
      if (w.packed)
        vt::cpu::unpack_row(w, r0 + r, out);
      else
        std::memcpy(out, static_cast<const uint8_t*>(w.data) + (r0 + r) * w.row_stride, rb);
    }
    be.upload(d + rb * static_cast<size_t>(r0), rows.data(), rows.size());
  }
}

}  // namespace

DeviceModel::DeviceModel(const vllm::model::CausalLM& m, CudaBackend& backend, size_t reserve)
    : config_(m.config()) {
  const auto& c = config_;
  if (c.num_experts > 0)
    throw LoadError(c.source, c.architecture +
                                  " has mixture-of-experts layers, which the CUDA backend does "
                                  "not support yet (run it on the CPU backend)");
  if (!c.no_rope.empty())
    throw LoadError(c.source, c.architecture +
                                  " has layers without rotary embedding (no_rope_layers), which "
                                  "the CUDA backend does not support yet (run it on the CPU "
                                  "backend)");
  if (c.head_dim > kMaxHeadDim || c.head_dim % 2 != 0)
    throw LoadError(c.source,
                    "head_dim " + std::to_string(c.head_dim) +
                        " is not supported by the CUDA attention kernels (even, at most " +
                        std::to_string(kMaxHeadDim) + ")");
  if (c.num_heads % c.num_kv_heads != 0)
    throw LoadError(c.source, "num_heads is not a multiple of num_kv_heads");

  // Every matrix to copy, named as in the checkpoint; tied matrices are copied once.
  struct Item {
    std::string name;
    const WeightView* w;
  };
  std::vector<Item> items = {{"model.embed_tokens.weight", &m.embed_weight()}};
  const bool tied = m.lm_head_weight().data == m.embed_weight().data;
  if (!tied) items.push_back({"lm_head.weight", &m.lm_head_weight()});
  const auto& layers = m.layers();
  all_bf16_ = true;
  for (size_t l = 0; l < layers.size(); ++l) {
    const auto& lw = layers[l];
    if (!lw.attn.post_norm.empty() || !lw.mlp.post_norm.empty() || lw.attn.norm.empty() ||
        lw.mlp.norm.empty())
      throw LoadError(c.source, c.architecture +
                                    " normalizes its blocks' outputs (or not their inputs), which "
                                    "the CUDA backend does not support yet (run it on the CPU "
                                    "backend)");
    const std::pair<const char*, const WeightView*> mats[] = {
        {"self_attn.q_proj.weight", &lw.attn.q}, {"self_attn.k_proj.weight", &lw.attn.k},
        {"self_attn.v_proj.weight", &lw.attn.v}, {"self_attn.o_proj.weight", &lw.attn.o},
        {"mlp.gate_proj.weight", &lw.mlp.gate},  {"mlp.up_proj.weight", &lw.mlp.up},
        {"mlp.down_proj.weight", &lw.mlp.down}};
    for (const auto& [rest, w] : mats) {
      items.push_back({layer_name(l, rest), w});
      all_bf16_ &= w->dtype == DType::BF16;
    }
  }
  size_t total = 0;
  for (const Item& it : items) {
    const std::string problem = weight_problem(it.name, it.w->dtype, it.w->rows, it.w->cols);
    if (!problem.empty()) throw LoadError(c.source, problem);
    total += DeviceArena::round(matrix_bytes(*it.w));
  }
  auto vec_bytes = [](const std::vector<float>& v) {
    return DeviceArena::round(v.size() * sizeof(float));
  };
  total += vec_bytes(m.final_norm_weight()) + vec_bytes(m.rope_inv_freq());
  for (const auto& lw : layers)
    for (const auto* v : {&lw.attn.norm, &lw.mlp.norm, &lw.attn.q_bias, &lw.attn.k_bias,
                          &lw.attn.v_bias, &lw.attn.q_norm, &lw.attn.k_norm})
      total += vec_bytes(*v);

  const DeviceFacts f = query_device(backend.device());
  const std::string mem = weights_memory_problem(c.source, total, f.free_bytes, reserve);
  if (!mem.empty()) throw std::runtime_error(mem);
  arena_.reset(StorageBuffer(backend, total, StorageKind::Weights, "the weights of " + c.source));

  std::map<const void*, DevWeight> copied;
  auto matrix = [&](const WeightView& w) {
    auto it = copied.find(w.data);
    if (it != copied.end()) return it->second;
    DevWeight d;
    d.dtype = w.dtype;
    d.rows = w.rows;
    d.cols = w.cols;
    d.row_stride = row_bytes(w.dtype, w.cols);
    void* dst = arena_.take(matrix_bytes(w));
    copy_matrix(backend, w, dst);
    d.data = dst;
    return copied[w.data] = d;
  };
  auto vec = [&](const std::vector<float>& v) -> const float* {
    if (v.empty()) return nullptr;
    void* dst = arena_.take(v.size() * sizeof(float));
    backend.upload(dst, v.data(), v.size() * sizeof(float));
    return static_cast<const float*>(dst);
  };
  embed_ = matrix(m.embed_weight());
  lm_head_ = matrix(m.lm_head_weight());
  final_norm_ = vec(m.final_norm_weight());
  inv_freq_ = vec(m.rope_inv_freq());
  for (const auto& lw : layers) {
    DevLayer d;
    d.q = matrix(lw.attn.q);
    d.k = matrix(lw.attn.k);
    d.v = matrix(lw.attn.v);
    d.o = matrix(lw.attn.o);
    d.gate = matrix(lw.mlp.gate);
    d.up = matrix(lw.mlp.up);
    d.down = matrix(lw.mlp.down);
    d.attn_norm = vec(lw.attn.norm);
    d.mlp_norm = vec(lw.mlp.norm);
    d.q_bias = vec(lw.attn.q_bias);
    d.k_bias = vec(lw.attn.k_bias);
    d.v_bias = vec(lw.attn.v_bias);
    d.q_norm = vec(lw.attn.q_norm);
    d.k_norm = vec(lw.attn.k_norm);
    layers_.push_back(d);
  }
  backend.synchronize();  // the host sources may go away after construction
}

}  // namespace vt::cuda
