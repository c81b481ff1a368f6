// LoRA adapters (model/lora.h) against peft: the tiny PEFT adapters of tools/make_tiny_lora.py
// on their tiny base models give peft's fp32 logits at every prompt position and its 32 greedy
// tokens (goldens: tools/make_lora_goldens.py, tests/golden/lora/); requests of different
// adapters (and none) share one batch, each token taking its own; and every adapter the loader
// cannot run is refused naming the file and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "model/causal_lm.h"
#include "model/load_error.h"
#include "model/static_batch.h"
#include "test_paths.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::LoadError;
using vllm::model::LoraLoadOptions;
using vllm::model::StaticBatch;
namespace fs = std::filesystem;

namespace {

std::string lora_dir(const std::string& name) { return tiny_models_dir() + "/lora/" + name; }

std::string sha256_of(const std::string& path) {
  const std::string cmd = "sha256sum '" + path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[65] = {};
  const size_t n = p ? fread(buf, 1, 64, p) : 0;
  if (p) pclose(p);
  return std::string(buf, n);
}

// The goldens were made from these exact files (tools/make_tiny_lora.py is deterministic).
void expect_made_from(const nlohmann::json& index, const std::string& adapter,
                      const std::string& base) {
  const auto& sha = index["weights_sha256"];
  EXPECT_EQ(sha256_of(lora_dir(adapter) + "/adapter_model.safetensors"),
            sha["adapter_model.safetensors"].get<std::string>())
      << adapter << ": regenerate the adapters (tools/make_tiny_lora.py) or the goldens";
  EXPECT_EQ(sha256_of(tiny_models_dir() + "/" + base + "/model.safetensors"),
            sha["model.safetensors"].get<std::string>());
}

class LoraReference : public ::testing::TestWithParam<std::string> {};

TEST_P(LoraReference, LogitsAndGreedyMatchPeft) {
  const std::string name = GetParam();
  const std::string gdir = golden_dir() + "/lora/" + name;
  const auto index = read_json_file(gdir + "/index.json");
  const std::string base = index["base_model"].get<std::string>();
  expect_made_from(index, name, base);
  auto m = CausalLM::load(tiny_models_dir() + "/" + base);
  m->add_lora(1, name, lora_dir(name), LoraLoadOptions{});
  const int64_t V = m->config().vocab_size;
  for (const auto& p : index["prompts"]) {
    const std::vector<int32_t> ids = p["prompt_ids"].get<std::vector<int32_t>>();
    const std::vector<int32_t> greedy = p["greedy_ids"].get<std::vector<int32_t>>();
    const int64_t n = static_cast<int64_t>(ids.size());
    StaticBatch sb(*m, 1, n + static_cast<int64_t>(greedy.size()) + 1, 16, vt::DType::F32);
    sb.set_lora(0, 1);
    const std::vector<float> logits = sb.prefill_all(0, ids);
    if (p.contains("logits_file")) {
      const auto gold = read_f32(gdir + "/" + p["logits_file"].get<std::string>(), n * V);
      double max_ref = 0, max_err = 0;
      for (int64_t i = 0; i < n * V; ++i) {
        max_ref = std::max(max_ref, std::fabs(double(gold[i])));
        max_err = std::max(max_err, std::fabs(double(logits[i]) - double(gold[i])));
      }
      EXPECT_LE(max_err / max_ref, 1e-4) << name << ": relative max logit error";
    }
    std::vector<int32_t> ours;
    int32_t next = argmax(logits.data() + (n - 1) * V, V);
    for (size_t s = 0; s < greedy.size(); ++s) {
      ours.push_back(next);
      if (s + 1 < greedy.size()) next = argmax(sb.decode({next}).data(), V);
    }
    EXPECT_EQ(ours, greedy) << name << ": greedy ids differ from peft's";
    EXPECT_NE(ours, p["base_greedy_ids"].get<std::vector<int32_t>>()) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(TinyAdapters, LoraReference,
                         ::testing::Values("llama_all", "llama_qv_rslora", "qwen3_all",
                                           "phi3_fused", "qwen3_mlp"));

// One batch, three sequences: the base model, adapter 1 and adapter 2 on the same prompt, in
// one forward per step (prefill and every decode). Each follows its own golden, so each token
// took its own request's adapter and no other.
TEST(Lora, AdaptersAndTheBaseShareABatch) {
  const auto all = read_json_file(golden_dir() + "/lora/qwen3_all/index.json");
  const auto mlp = read_json_file(golden_dir() + "/lora/qwen3_mlp/index.json");
  auto m = CausalLM::load(tiny_models_dir() + "/qwen3");
  m->add_lora(1, "all", lora_dir("qwen3_all"), LoraLoadOptions{});
  m->add_lora(2, "mlp", lora_dir("qwen3_mlp"), LoraLoadOptions{});
  const int64_t V = m->config().vocab_size;
  for (size_t k = 0; k < all["prompts"].size(); ++k) {
    const std::vector<int32_t> ids = all["prompts"][k]["prompt_ids"].get<std::vector<int32_t>>();
    const std::vector<std::vector<int32_t>> want = {
        all["prompts"][k]["base_greedy_ids"].get<std::vector<int32_t>>(),
        all["prompts"][k]["greedy_ids"].get<std::vector<int32_t>>(),
        mlp["prompts"][k]["greedy_ids"].get<std::vector<int32_t>>()};
    StaticBatch sb(*m, 3, static_cast<int64_t>(ids.size()) + 40, 16, vt::DType::F32);
    sb.set_lora(1, 1);
    sb.set_lora(2, 2);
    std::vector<float> logits = sb.prefill({ids, ids, ids});
    std::vector<std::vector<int32_t>> got(3);
    for (size_t s = 0; s < 32; ++s) {
      std::vector<int32_t> next(3);
      for (int r = 0; r < 3; ++r) got[r].push_back(next[r] = argmax(logits.data() + r * V, V));
      if (s + 1 < 32) logits = sb.decode(next);
    }
    EXPECT_EQ(got[0], want[0]) << "base, prompt " << k;
    EXPECT_EQ(got[1], want[1]) << "qwen3_all, prompt " << k;
    EXPECT_EQ(got[2], want[2]) << "qwen3_mlp, prompt " << k;
  }
}

// --lora-dtype bfloat16 rounds an F32 adapter's values once: the output moves off the fp32
// goldens' logits but stays close; auto keeps them.
TEST(Lora, DtypeRoundsTheAdapterValues) {
  auto m = CausalLM::load(tiny_models_dir() + "/llama");
  LoraLoadOptions bf16;
  bf16.dtype = "bfloat16";
  m->add_lora(1, "auto", lora_dir("llama_all"), LoraLoadOptions{});
  m->add_lora(2, "bf16", lora_dir("llama_all"), bf16);
  const auto& a = m->lora(1)->layers[0].q;
  const auto& b = m->lora(2)->layers[0].q;
  ASSERT_EQ(a.a.size(), b.a.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.a.size(); ++i) {
    differ += a.a[i] != b.a[i];
    uint32_t bits;
    std::memcpy(&bits, &b.a[i], 4);
    EXPECT_EQ(bits & 0xffffu, 0u) << "not a bfloat16 value";
  }
  EXPECT_GT(differ, a.a.size() / 2);
}

// A Hugging Face adapter on the GGUF twin of its base (llama.cpp's converter permuted the q / k
// rows for its interleaved rope): the adapter's q rows are permuted to fit, so the GGUF with the
// adapter gives the folder-with-adapter's logits. Granite's q / v shapes are the tiny llama's.
TEST(Lora, AHuggingFaceAdapterFitsTheGgufTwin) {
  const std::vector<int32_t> ids = {1, 15, 300, 1999, 7, 42, 512, 880, 881};
  const int64_t n = static_cast<int64_t>(ids.size());
  auto logits_of = [&](const std::string& path, bool adapted) {
    auto m = CausalLM::load(path);
    m->add_lora(1, "qv", lora_dir("llama_qv_rslora"), LoraLoadOptions{});
    StaticBatch sb(*m, 1, n + 1, 16, vt::DType::F32);
    if (adapted) sb.set_lora(0, 1);
    return sb.prefill_all(0, ids);
  };
  const auto hf = logits_of(tiny_models_dir() + "/granite", true);
  const auto gguf = logits_of(tiny_models_dir() + "/granite.gguf", true);
  const auto base = logits_of(tiny_models_dir() + "/granite.gguf", false);
  double max_ref = 0, err = 0, moved = 0;
  for (size_t i = 0; i < hf.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(double(hf[i])));
    err = std::max(err, std::fabs(double(hf[i]) - double(gguf[i])));
    moved = std::max(moved, std::fabs(double(hf[i]) - double(base[i])));
  }
  EXPECT_LE(err / max_ref, 1e-4);
  EXPECT_GT(moved / max_ref, 0.05);  // the adapter matters
}

// A scratch copy of an adapter folder whose adapter_config.json `edit` changes.
std::string edited_copy(const std::string& from, const std::string& tag,
                        const std::function<void(nlohmann::json&)>& edit) {
  const fs::path dir =
      fs::temp_directory_path() / ("vllm-lora-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(lora_dir(from) + "/adapter_model.safetensors", dir / "adapter_model.safetensors");
  nlohmann::json cfg = read_json_file(lora_dir(from) + "/adapter_config.json");
  edit(cfg);
  std::ofstream(dir / "adapter_config.json") << cfg.dump();
  return dir.string();
}

// One F32 tensor of zeros per name, as a safetensors file.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, std::vector<int64_t>>>& ts) {
  nlohmann::json h = nlohmann::json::object();
  size_t off = 0;
  for (const auto& [n, shape] : ts) {
    size_t bytes = 4;
    for (int64_t d : shape) bytes *= static_cast<size_t>(d);
    h[n] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {off, off + bytes}}};
    off += bytes;
  }
  std::string hs = h.dump();
  while (hs.size() % 8) hs += ' ';
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = hs.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << hs;
  out << std::string(off, '\0');
}

void expect_refused(CausalLM& m, const std::string& dir, const std::string& needle,
                    LoraLoadOptions o = {}) {
  try {
    m.add_lora(1, "x", dir, o);
    ADD_FAILURE() << "loaded " << dir << ", expected an error with '" << needle << "'";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_EQ(m.lora(1), nullptr);
}

TEST(Lora, UnusableAdaptersAreRefusedByName) {
  auto m = CausalLM::load(tiny_models_dir() + "/qwen3");
  using J = nlohmann::json;
  expect_refused(*m, "/nonexistent/adapter", "not a folder");
  expect_refused(*m, edited_copy("qwen3_all", "dora", [](J& c) { c["use_dora"] = true; }),
                 "vLLM does not yet support DoRA.");
  expect_refused(*m, edited_copy("qwen3_all", "bias", [](J& c) { c["bias"] = "all"; }),
                 "Adapter bias is not supported.");
  expect_refused(
      *m,
      edited_copy("qwen3_all", "save", [](J& c) { c["modules_to_save"] = J::array({"lm_head"}); }),
      "Unsupported modules_to_save");
  expect_refused(*m,
                 edited_copy("qwen3_all", "pissa", [](J& c) { c["init_lora_weights"] = "pissa"; }),
                 "init_lora_weights");
  expect_refused(*m, edited_copy("qwen3_all", "r", [](J& c) { c["r"] = 4; }),
                 "where adapter_config.json gives 4");
  expect_refused(*m, edited_copy("qwen3_all", "noalpha", [](J& c) { c.erase("lora_alpha"); }),
                 "missing required field 'lora_alpha'");
  LoraLoadOptions small;
  small.max_lora_rank = 8;
  expect_refused(*m, lora_dir("qwen3_mlp"), "LoRA rank 16 is greater than max_lora_rank 8", small);
  // Another model's adapter: its shapes do not fit.
  expect_refused(*m, lora_dir("llama_all"), "does not fit the model's");
  // A module the loader cannot adapt, and an A without its B.
  const std::string odd = edited_copy("qwen3_all", "module", [](J&) {});
  write_safetensors(odd + "/adapter_model.safetensors",
                    {{"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", {8, 64}},
                     {"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", {128, 8}},
                     {"base_model.model.model.embed_tokens.lora_embedding_A", {8, 151936}}});
  expect_refused(*m, odd, "is not a LoRA A / B weight");
  write_safetensors(odd + "/adapter_model.safetensors",
                    {{"base_model.model.model.layers.0.self_attn.rotary.lora_A.weight", {8, 64}},
                     {"base_model.model.model.layers.0.self_attn.rotary.lora_B.weight", {8, 8}}});
  expect_refused(*m, odd, "cannot carry a LoRA here");
  write_safetensors(odd + "/adapter_model.safetensors",
                    {{"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", {8, 64}}});
  expect_refused(*m, odd, "without its lora_B");
  write_safetensors(odd + "/adapter_model.safetensors",
                    {{"base_model.model.model.layers.7.self_attn.q_proj.lora_A.weight", {8, 64}},
                     {"base_model.model.model.layers.7.self_attn.q_proj.lora_B.weight", {128, 8}}});
  expect_refused(*m, odd, "the model has 2 layers");
  // MoE layers' experts are not adapted.
  auto moe = CausalLM::load(tiny_models_dir() + "/qwen3_moe");
  expect_refused(*moe, lora_dir("qwen3_mlp"), "mixture-of-experts");
  // The good adapter still loads after all that.
  m->add_lora(1, "ok", lora_dir("qwen3_all"), LoraLoadOptions{});
  EXPECT_NE(m->lora(1), nullptr);
  EXPECT_EQ(m->lora(1)->max_rank, 8);
}

}  // namespace
