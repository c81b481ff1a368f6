// Reading ModelConfig from config.json / generation_config.json and from GGUF metadata.
#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/gguf.h"
#include "model/load_error.h"

namespace vllm::model {

namespace fs = std::filesystem;
using nlohmann::json;

bool ModelConfig::layer_is_moe(int64_t layer) const {
  if (num_experts == 0) return false;
  if (std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) != mlp_only_layers.end())
    return false;
  return decoder_sparse_step > 0 && (layer + 1) % decoder_sparse_step == 0;
}

std::vector<float> ModelConfig::rope_inv_freq() const {
  // Same float arithmetic as transformers: base ** (arange(0, d, 2) / d) in float32.
  std::vector<float> inv(head_dim / 2);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    float expo = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    inv[i] = 1.0f / std::pow(static_cast<float>(rope_theta), expo);
  }
  if (rope_scaling.type == "linear") {
    for (auto& f : inv) f = f / static_cast<float>(rope_scaling.factor);
  } else if (rope_scaling.type == "llama3") {
    const double factor = rope_scaling.factor, lo = rope_scaling.low_freq_factor,
                 hi = rope_scaling.high_freq_factor;
    const double old_len = static_cast<double>(rope_scaling.original_max_position_embeddings);
    const double low_wavelen = old_len / lo, high_wavelen = old_len / hi;
    for (auto& f : inv) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = static_cast<float>(f / factor);
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - lo) / (hi - lo);
        f = static_cast<float>((1 - smooth) * f / factor + smooth * f);
      }
    }
  }
  return inv;
}

void ModelConfig::validate() const {
  auto bad = [&](const std::string& what) { throw LoadError(source, "invalid config: " + what); };
  if (vocab_size <= 0) bad("vocab_size must be positive");
  if (hidden_size <= 0) bad("hidden_size must be positive");
  if (num_layers <= 0) bad("num_hidden_layers must be positive");
  if (num_heads <= 0 || num_kv_heads <= 0) bad("attention head counts must be positive");
  if (num_heads % num_kv_heads != 0)
    bad("num_attention_heads is not a multiple of num_key_value_heads");
  if (head_dim <= 0 || head_dim % 2 != 0) bad("head_dim must be positive and even");
  if (intermediate_size <= 0 && num_experts == 0) bad("intermediate_size must be positive");
  if (num_experts > 0 && (num_experts_per_tok <= 0 || num_experts_per_tok > num_experts))
    bad("num_experts_per_tok must be in [1, num_experts]");
  if (num_experts > 0 && moe_intermediate_size <= 0) bad("moe_intermediate_size must be positive");
  if (max_position_embeddings <= 0) bad("max_position_embeddings must be positive");
}

namespace {

json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw LoadError(p.string(), "cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw LoadError(p.string(), std::string("not valid JSON: ") + e.what());
  }
}

void add_eos(ModelConfig& c, const json& v) {
  auto push = [&](int64_t id) {
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(id);
  };
  if (v.is_number_integer()) push(v.get<int64_t>());
  if (v.is_array())
    for (const auto& x : v)
      if (x.is_number_integer()) push(x.get<int64_t>());
}

}  // namespace

ModelConfig config_from_hf_dir(const std::string& dir) {
  fs::path cfg_path = fs::path(dir) / "config.json";
  json j = read_json(cfg_path);
  ModelConfig c;
  c.source = cfg_path.string();
  try {
    if (!j.contains("architectures") || !j["architectures"].is_array() ||
        j["architectures"].empty())
      throw LoadError(c.source, "config has no 'architectures' list");
    c.architecture = j["architectures"][0].get<std::string>();
    c.vocab_size = j.at("vocab_size").get<int64_t>();
    c.hidden_size = j.at("hidden_size").get<int64_t>();
    c.intermediate_size = j.value("intermediate_size", int64_t{0});
    c.num_layers = j.at("num_hidden_layers").get<int64_t>();
    c.num_heads = j.at("num_attention_heads").get<int64_t>();
    c.num_kv_heads = j.value("num_key_value_heads", c.num_heads);
    c.head_dim = (j.contains("head_dim") && !j["head_dim"].is_null())
                     ? j["head_dim"].get<int64_t>()
                     : (c.num_heads > 0 ? c.hidden_size / c.num_heads : 0);
    c.rms_norm_eps = j.value("rms_norm_eps", 1e-6);
    c.rope_theta = j.value("rope_theta", 10000.0);
    c.max_position_embeddings = j.value("max_position_embeddings", int64_t{2048});
    c.tie_word_embeddings = j.value("tie_word_embeddings", false);
    c.attention_bias = j.value("attention_bias", false);
    if (j.contains("rope_scaling") && j["rope_scaling"].is_object()) {
      const json& rs = j["rope_scaling"];
      std::string type = rs.value("rope_type", rs.value("type", std::string()));
      if (type != "default" && !type.empty()) {
        if (type != "llama3" && type != "linear")
          throw LoadError(c.source, "unsupported rope_scaling type '" + type + "'");
        c.rope_scaling.type = type;
        c.rope_scaling.factor = rs.value("factor", 1.0);
        c.rope_scaling.low_freq_factor = rs.value("low_freq_factor", 1.0);
        c.rope_scaling.high_freq_factor = rs.value("high_freq_factor", 4.0);
        c.rope_scaling.original_max_position_embeddings =
            rs.value("original_max_position_embeddings", int64_t{8192});
      }
    }
    c.num_experts = j.value("num_experts", int64_t{0});
    c.num_experts_per_tok = j.value("num_experts_per_tok", int64_t{0});
    c.moe_intermediate_size = j.value("moe_intermediate_size", int64_t{0});
    c.decoder_sparse_step = j.value("decoder_sparse_step", int64_t{1});
    if (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array())
      c.mlp_only_layers = j["mlp_only_layers"].get<std::vector<int64_t>>();
    c.norm_topk_prob = j.value("norm_topk_prob", false);
    if (j.contains("bos_token_id") && j["bos_token_id"].is_number_integer())
      c.bos_token_id = j["bos_token_id"].get<int64_t>();
    if (j.contains("eos_token_id")) add_eos(c, j["eos_token_id"]);
  } catch (const json::exception& e) {
    throw LoadError(c.source, std::string("missing or mistyped field: ") + e.what());
  }
  if (c.architecture == "Qwen2ForCausalLM") c.attention_bias = true;
  if (c.architecture == "Qwen3ForCausalLM" || c.architecture == "Qwen3MoeForCausalLM")
    c.qk_norm = true;
  if (c.architecture != "Qwen3MoeForCausalLM") c.num_experts = 0;
  fs::path gen = fs::path(dir) / "generation_config.json";
  if (fs::exists(gen)) {
    json g = read_json(gen);
    if (g.contains("eos_token_id")) add_eos(c, g["eos_token_id"]);
    if (c.bos_token_id < 0 && g.contains("bos_token_id") && g["bos_token_id"].is_number_integer())
      c.bos_token_id = g["bos_token_id"].get<int64_t>();
  }
  c.validate();
  return c;
}

ModelConfig config_from_gguf(const GgufFile& g) {
  ModelConfig c;
  c.source = g.path();
  c.from_gguf = true;
  const std::string arch = g.get_str("general.architecture");
  const std::string p = arch + ".";
  if (arch == "llama") {
    c.architecture = "LlamaForCausalLM";
    c.rope_style = vt::cpu::RopeStyle::kInterleaved;  // converter permuted the q/k rows
  } else if (arch == "qwen2") {
    c.architecture = "Qwen2ForCausalLM";
    c.attention_bias = true;
  } else if (arch == "qwen3") {
    c.architecture = "Qwen3ForCausalLM";
    c.qk_norm = true;
  } else if (arch == "qwen3moe") {
    c.architecture = "Qwen3MoeForCausalLM";
    c.qk_norm = true;
  } else {
    throw LoadError(g.path(), "unsupported architecture '" + arch +
                                  "' (supported: llama, qwen2, qwen3, qwen3moe)");
  }
  c.hidden_size = g.get_int(p + "embedding_length");
  c.num_layers = g.get_int(p + "block_count");
  c.num_heads = g.get_int(p + "attention.head_count");
  c.num_kv_heads = g.get_int_or(p + "attention.head_count_kv", c.num_heads);
  c.head_dim = g.get_int_or(p + "attention.key_length", c.hidden_size / c.num_heads);
  c.intermediate_size = g.get_int_or(p + "feed_forward_length", 0);
  c.rms_norm_eps = g.get_float(p + "attention.layer_norm_rms_epsilon");
  c.rope_theta = g.get_float_or(p + "rope.freq_base", 10000.0);
  c.max_position_embeddings = g.get_int_or(p + "context_length", 2048);
  if (g.has("tokenizer.ggml.tokens"))
    c.vocab_size = static_cast<int64_t>(g.get_str_array("tokenizer.ggml.tokens").size());
  c.vocab_size = g.get_int_or(p + "vocab_size", c.vocab_size);
  std::string scaling = g.get_str_or(p + "rope.scaling.type", "");
  if (scaling == "linear") {
    c.rope_scaling.type = "linear";
    c.rope_scaling.factor = g.get_float(p + "rope.scaling.factor");
  } else if (!scaling.empty() && scaling != "none") {
    throw LoadError(g.path(), "unsupported rope scaling type '" + scaling + "'");
  }
  if (arch == "qwen3moe") {
    c.num_experts = g.get_int(p + "expert_count");
    c.num_experts_per_tok = g.get_int(p + "expert_used_count");
    c.moe_intermediate_size = g.get_int(p + "expert_feed_forward_length");
    c.norm_topk_prob = true;  // llama.cpp always renormalizes for qwen3moe
  }
  c.tie_word_embeddings = g.find_tensor("output.weight") == nullptr;
  c.bos_token_id = g.get_int_or("tokenizer.ggml.bos_token_id", -1);
  if (g.has("tokenizer.ggml.eos_token_id"))
    c.eos_token_ids.push_back(g.get_int("tokenizer.ggml.eos_token_id"));
  if (g.has("tokenizer.ggml.eot_token_id")) {
    int64_t eot = g.get_int("tokenizer.ggml.eot_token_id");
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), eot) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(eot);
  }
  c.validate();
  return c;
}

}  // namespace vllm::model
