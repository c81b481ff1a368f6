// Reference gate, Hugging Face: our fp32 logits at every prompt position and 32 greedy
// tokens equal transformers' on the tiny random checkpoints of tools/make_tiny_models.py
// (goldens: tools/make_hf_goldens.py, tests/golden/hf/). The same checkpoints again with the
// config.json transformers >= 5 saves (rope_parameters instead of rope_theta / rope_scaling;
// tools/make_hf_v5_configs.py): the same goldens must hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "model/causal_lm.h"
#include "model/config.h"
#include "model/rope_scaling.h"
#include "model/static_batch.h"
#include "test_paths.h"

using namespace vllm::testing;
using vllm::model::CausalLM;
using vllm::model::StaticBatch;

namespace {

// One golden prompt (index.json's prompts or long_prompts entry) on model `m`: the logits of
// its positions from `logits_from` on (all of them by default) within 1e-4 of transformers'
// (relative to the largest), and the greedy continuation exact. Returns the relative error.
double check_prompt(CausalLM& m, const std::string& gdir, const nlohmann::json& p,
                    const std::string& what) {
  const int64_t V = m.config().vocab_size;
  const std::vector<int32_t> ids = p["prompt_ids"].get<std::vector<int32_t>>();
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t from = p.value("logits_from", int64_t{0}), kept = n - from;
  const auto gold = read_f32(gdir + "/" + p["logits_file"].get<std::string>(), kept * V);
  const std::vector<int32_t> greedy = p["greedy_ids"].get<std::vector<int32_t>>();
  // The fp32 reference gate keeps an fp32 KV cache (16-bit is the serving default).
  StaticBatch sb(m, 1, n + static_cast<int64_t>(greedy.size()) + 1, 16, vt::DType::F32);
  const std::vector<float> logits = sb.prefill_all(0, ids);
  double worst = 0;
  for (int64_t t = 0; t < kept; ++t) {
    const float* a = logits.data() + (from + t) * V;
    const float* b = gold.data() + t * V;
    double max_abs_ref = 0, max_err = 0;
    for (int64_t i = 0; i < V; ++i) {
      max_abs_ref = std::max(max_abs_ref, std::fabs(double(b[i])));
      max_err = std::max(max_err, std::fabs(double(a[i]) - double(b[i])));
    }
    worst = std::max(worst, max_err / max_abs_ref);
  }
  EXPECT_LE(worst, 1e-4) << what << ": relative max logit error";
  // Greedy continuation, exact.
  std::vector<int32_t> ours;
  int32_t next = argmax(logits.data() + (n - 1) * V, V);
  for (size_t s = 0; s < greedy.size(); ++s) {
    ours.push_back(next);
    if (s + 1 < greedy.size()) next = argmax(sb.decode({next}).data(), V);
  }
  EXPECT_EQ(ours, greedy) << what << ": greedy ids differ";
  std::printf("[%s] %lld positions, rel max err %.2e, %zu greedy tokens\n", what.c_str(),
              static_cast<long long>(n), worst, greedy.size());
  return worst;
}

// The tiny checkpoint `name` loaded from `mdir` against tests/golden/hf/<name>.
void check_against_transformers(const std::string& name, const std::string& mdir) {
  const std::string gdir = golden_dir() + "/hf/" + name;
  const auto index = read_json_file(gdir + "/index.json");
  auto m = CausalLM::load(mdir);
  ASSERT_EQ(m->config().vocab_size, index["vocab_size"].get<int64_t>());
  EXPECT_EQ(m->config().architecture, index["architecture"].get<std::string>());
  for (const auto& p : index["prompts"])
    check_prompt(*m, gdir, p, name + " prompt '" + p.value("text", std::string("ids")) + "'");
  // longrope past the original length: loaded for a longer context, every position rotates
  // with the long factors, as transformers does for a pass that long (the golden keeps the
  // last positions' logits).
  for (const auto& p : index.value("long_prompts", nlohmann::json::array())) {
    vllm::model::LoadOptions opts;
    opts.max_model_len = p["max_model_len"].get<int64_t>();
    auto lm = CausalLM::load(mdir, vt::ThreadPool::global(), opts);
    EXPECT_TRUE(lm->config().rope_scaling.use_long) << name;
    EXPECT_EQ(lm->config().max_position_embeddings, opts.max_model_len) << name;
    // Without the longer context the model stays within its original length.
    const int64_t orig = m->config().rope_scaling.original_max_position_embeddings;
    EXPECT_EQ(m->config().max_position_embeddings, orig) << name;
    ASSERT_GT(static_cast<int64_t>(p["prompt_ids"].size()), orig) << name;
    check_prompt(*lm, gdir, p, name + " long prompt (long factors)");
  }
}

class HfReference : public ::testing::TestWithParam<std::string> {};

TEST_P(HfReference, LogitsAndGreedyMatchTransformers) {
  const std::string mdir = tiny_models_dir() + "/" + GetParam();
  ASSERT_TRUE(std::filesystem::exists(mdir + "/config.json"))
      << mdir << " missing: run python3 tools/make_tiny_models.py --out " << tiny_models_dir();
  check_against_transformers(GetParam(), mdir);
}

// A folder with the checkpoint's files (links) and transformers 5's config.json.
TEST_P(HfReference, Transformers5ConfigGivesTheSameModel) {
  namespace fs = std::filesystem;
  const std::string name = GetParam();
  const fs::path src = tiny_models_dir() + "/" + name;
  ASSERT_TRUE(fs::exists(src / "config.json")) << src << " missing";
  const fs::path v5 = fs::path(golden_dir()) / "hf" / name / "config_v5.json";
  ASSERT_TRUE(fs::exists(v5)) << v5 << " missing: run tools/make_hf_v5_configs.py";
  const auto cfg = read_json_file(v5.string());
  const auto& text = cfg.contains("text_config") ? cfg["text_config"] : cfg;
  ASSERT_TRUE(text.contains("rope_parameters") && !text.contains("rope_theta") &&
              !text.contains("rope_scaling"))
      << v5;
  const fs::path dir =
      fs::temp_directory_path() / ("vllm-cpp-v5-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(src))
    if (e.path().filename() != "config.json")
      fs::create_symlink(fs::absolute(e.path()), dir / e.path().filename());
  fs::copy_file(v5, dir / "config.json");
  check_against_transformers(name, dir.string());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, HfReference, ::testing::ValuesIn(tiny_hf_models()));

}  // namespace

// longrope's context: the original length by default; a longer one with the long factors and
// the checkpoint's whole length; without long factors the cap stays, its note naming them.
TEST(Longrope, ContextAndFactorsFollowTheAskedLength) {
  using vllm::model::use_longrope_factors;
  const auto base = vllm::model::config_from_hf_dir(tiny_models_dir() + "/phi3_5");
  EXPECT_EQ(base.max_position_embeddings, 512);
  EXPECT_EQ(base.rope_scaling.long_max_position_embeddings, 4096);
  EXPECT_NE(base.max_len_note.find("long factors"), std::string::npos) << base.max_len_note;
  auto c = base;
  EXPECT_FALSE(use_longrope_factors(c, 512, true));  // within the original length
  EXPECT_FALSE(c.rope_scaling.use_long);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_TRUE(use_longrope_factors(c, 513, true));
  EXPECT_TRUE(c.rope_scaling.use_long);
  EXPECT_EQ(c.max_position_embeddings, 4096);
  EXPECT_TRUE(c.max_len_note.empty());
  // Every frequency is the long factor's, not the short one's.
  const auto shrt = base.rope_inv_freq(), lng = c.rope_inv_freq();
  ASSERT_EQ(shrt.size(), lng.size());
  for (size_t i = 0; i < lng.size(); ++i)
    EXPECT_FLOAT_EQ(lng[i] * base.rope_scaling.long_factor[i],
                    shrt[i] * base.rope_scaling.short_factor[i]);
  auto none = base;
  EXPECT_FALSE(use_longrope_factors(none, 1024, false));
  EXPECT_EQ(none.max_position_embeddings, 512);
  EXPECT_NE(none.max_len_note.find("no long factors"), std::string::npos) << none.max_len_note;
}

// Phi-3-*-128k's first configs name longrope "su" (vLLM and transformers read it as longrope).
TEST(Longrope, LegacySuTypeIsLongrope) {
  auto j = read_json_file(tiny_models_dir() + "/phi3_5/config.json");
  j["rope_scaling"]["type"] = "su";
  const auto c = vllm::model::config_from_hf_json(j.dump(), "su-config");
  EXPECT_EQ(c.rope_scaling.type, "longrope");
  EXPECT_EQ(c.rope_scaling.long_factor.size(), 8u);
  EXPECT_EQ(c.max_position_embeddings, 512);
}
