// A small random-weight Llama GGUF written on first use (no network, no Python): 4 layers,
// hidden 256, 8 heads / 2 KV heads, SmolLM2's layout (tied Q8_0 embedding, interleaved RoPE)
// with every quantized type the CUDA kernels read (Q8_0, Q4_0, Q4_1, Q4_K, Q6_K). Header-only
// and CUDA-free, like seqs.h.
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../model/test_files.h"
#include "vt/cpu/kernels.h"

namespace vllm::cuda_testing {

inline std::string synthetic_gguf() {
  static const std::string path = [] {
    const int64_t E = 256, F = 512, V = 2048, kvd = 64, layers = 4;
    vllm::testing::GgufSpec g;
    g.strs = {{"general.architecture", "llama"}};
    g.u32s = {{"llama.block_count", static_cast<uint32_t>(layers)},
              {"llama.embedding_length", static_cast<uint32_t>(E)},
              {"llama.feed_forward_length", static_cast<uint32_t>(F)},
              {"llama.attention.head_count", 8},
              {"llama.attention.head_count_kv", 2},
              {"llama.context_length", 1024}};
    g.f32s = {{"llama.attention.layer_norm_rms_epsilon", 1e-5f},
              {"llama.rope.freq_base", 100000.f}};
    std::vector<std::string> toks;
    for (int64_t i = 0; i < V; ++i) toks.push_back("t" + std::to_string(i));
    g.str_arrays = {{"tokenizer.ggml.tokens", toks}};
    std::mt19937 rng(20240611);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    // GGML type ids: F32 0, Q4_0 2, Q4_1 3, Q8_0 8, Q4_K 12, Q6_K 14.
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, vt::DType t,
                      uint32_t ggml, float scale) {
      std::vector<float> x(cols);
      std::vector<uint8_t> data(vt::row_bytes(t, cols) * rows);
      for (int64_t r = 0; r < rows; ++r) {
        for (auto& v : x) v = scale * nd(rng);
        vt::cpu::quantize_row(t, x.data(), data.data() + r * vt::row_bytes(t, cols), cols);
      }
      g.tensors.push_back({name,
                           {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)},
                           ggml,
                           std::move(data)});
    };
    auto norm = [&](const std::string& name) {
      std::vector<float> w(E);
      for (auto& v : w) v = 1.0f + 0.1f * nd(rng);
      std::vector<uint8_t> data(E * 4);
      std::memcpy(data.data(), w.data(), data.size());
      g.tensors.push_back({name, {static_cast<uint64_t>(E)}, 0, std::move(data)});
    };
    matrix("token_embd.weight", E, V, vt::DType::Q8_0, 8, 0.05f);
    norm("output_norm.weight");
    for (int64_t l = 0; l < layers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      norm(b + "attn_norm.weight");
      matrix(b + "attn_q.weight", E, E, vt::DType::Q4_1, 3, 0.08f);
      matrix(b + "attn_k.weight", E, kvd, vt::DType::Q4_K, 12, 0.08f);
      matrix(b + "attn_v.weight", E, kvd, vt::DType::Q6_K, 14, 0.08f);
      matrix(b + "attn_output.weight", E, E, vt::DType::Q4_0, 2, 0.1f);
      norm(b + "ffn_norm.weight");
      matrix(b + "ffn_gate.weight", E, F, vt::DType::Q4_1, 3, 0.06f);
      matrix(b + "ffn_up.weight", E, F, vt::DType::Q8_0, 8, 0.06f);
      matrix(b + "ffn_down.weight", F, E, vt::DType::Q4_K, 12, 0.1f);
    }
    const std::string out =
        vllm::testing::temp_dir("cuda_synthetic") + "/synthetic-llama-mixed-quants.gguf";
    g.write(out);
    return out;
  }();
  return path;
}

}  // namespace vllm::cuda_testing
