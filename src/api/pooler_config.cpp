// vLLM 0.33's pooler resolution (config/model.py _get_runner_type / _get_convert_type,
// transformers_utils/config.py get_pooling_config, config/pooler.py PoolerConfig) over what
// this engine can pool: sequence pooling of a decoder's final hidden states for embeddings.
#include "api/pooler_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "tokenizer/tokenizer.h"

namespace vllm::api {

namespace fs = std::filesystem;
using json = nlohmann::json;
using engine::PoolingType;

namespace {

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument(msg); }

std::optional<json> read_json(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream in(p);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail(p.string() + ": not JSON (" + e.what() + ")");
  }
}

// A pooling name as vLLM's parse_pooling_type reads it: pooling_mode_ dropped, the part before
// the first "_", "lasttoken" as "last", upper case (pooling_mode_mean_tokens: MEAN).
std::string parse_pooling_name(std::string n) {
  if (n.rfind("pooling_mode_", 0) == 0) n = n.substr(13);
  if (auto u = n.find('_'); u != std::string::npos) n = n.substr(0, u);
  if (n.find("lasttoken") != std::string::npos) n = "last";
  for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

PoolingType seq_type(const std::string& name, const std::string& where) {
  if (name == "LAST") return PoolingType::kLast;
  if (name == "CLS") return PoolingType::kCls;
  if (name == "MEAN") return PoolingType::kMean;
  if (name == "ALL" || name == "STEP")
    fail(where + ": token pooling (" + name +
         ") is not served: only sequence pooling (CLS, LAST, MEAN) for /v1/embeddings");
  fail(where + ": pooling type '" + name + "' is not supported (CLS, LAST or MEAN)");
}

// The Sentence Transformers settings of a folder: its Pooling module's type and whether a
// Normalize module follows (vLLM's get_pooling_config); nullopt without modules.json.
struct StPooling {
  std::optional<PoolingType> type;
  bool normalize = false;
};

std::optional<StPooling> read_sentence_transformers(const fs::path& folder) {
  const fs::path modules_file = folder / "modules.json";
  const std::optional<json> modules = read_json(modules_file);
  if (!modules) return std::nullopt;
  const std::string where = modules_file.string();
  if (!modules->is_array()) fail(where + ": not a list of modules");
  StPooling st;
  std::string pooling_path;
  bool have_pooling = false;
  for (const json& m : *modules) {
    const std::string type = m.is_object() ? m.value("type", "") : "";
    const std::string leaf =
        type.substr(type.rfind('.') == std::string::npos ? 0 : type.rfind('.') + 1);
    if (leaf == "Transformer") continue;
    if (leaf == "Pooling") {
      if (!have_pooling) pooling_path = m.value("path", "");
      have_pooling = true;
    } else if (leaf == "Normalize") {
      st.normalize = true;
    } else {
      // vLLM loads Dense projectors (and ignores the rest); neither can be honoured here.
      fail(where + ": the Sentence Transformers module '" + type +
           "' is not supported (a folder may hold Transformer, Pooling and Normalize modules)");
    }
  }
  if (!have_pooling) return st;
  const fs::path pooling_file = folder / pooling_path / "config.json";
  const std::optional<json> pc = read_json(pooling_file);
  if (!pc || !pc->is_object()) return st;
  const std::string pwhere = pooling_file.string();
  for (const auto& [key, val] : pc->items()) {
    std::string name;
    if (key == "pooling_mode" && val.is_string())
      name = val.get<std::string>();
    else if (val.is_boolean() && val.get<bool>() && key.rfind("pooling_mode", 0) == 0)
      name = key;
    else if (key == "include_prompt" && val.is_boolean() && !val.get<bool>())
      fail(pwhere + ": include_prompt false (pooling without the prompt) is not supported");
    else
      continue;
    // vLLM reads pooling_mode_mean_sqrt_len_tokens as MEAN; it divides by sqrt(n) instead.
    if (name.find("mean_sqrt_len") != std::string::npos)
      fail(pwhere + ": " + key + " is not supported (CLS, LAST or MEAN pooling)");
    // Sentence Transformers concatenates the vectors of several modes; vLLM keeps the last.
    if (st.type)
      fail(pwhere + ": more than one pooling mode (concatenated vectors) is not supported");
    st.type = seq_type(parse_pooling_name(name), pwhere + " " + key);
  }
  return st;
}

// llama.cpp's {arch}.pooling_type: 1 MEAN, 2 CLS, 3 LAST (0 NONE, 4 RANK: none).
std::optional<PoolingType> gguf_pooling(const model::CausalLM& m) {
  const model::GgufFile* g = m.gguf();
  if (!g) return std::nullopt;
  const std::string key = m.config().gguf_arch + ".pooling_type";
  const int64_t t = g->get_int_or(key, -1);
  switch (t) {
    case 1:
      return PoolingType::kMean;
    case 2:
      return PoolingType::kCls;
    case 3:
      return PoolingType::kLast;
    case -1:
    case 0:
      return std::nullopt;
    default:
      fail(m.path() + ": " + key + " " + std::to_string(t) +
           " (rank pooling) is not served: only CLS, LAST or MEAN for /v1/embeddings");
  }
}

// The activation of a classifier's config.json (vLLM's get_act_fn).
PoolerSetup::Activation classifier_activation(const json& cfg, const std::string& where) {
  using A = PoolerSetup::Activation;
  const std::string problem = cfg.value("problem_type", json()).is_string()
                                  ? cfg["problem_type"].get<std::string>()
                                  : std::string();
  if (problem == "regression") return A::kIdentity;
  if (problem == "single_label_classification") return A::kClassify;
  if (problem == "multi_label_classification") return A::kSigmoid;
  std::string fn;
  if (cfg.contains("sentence_transformers") && cfg["sentence_transformers"].is_object() &&
      cfg["sentence_transformers"].contains("activation_fn"))
    fn = cfg["sentence_transformers"]["activation_fn"].get<std::string>();
  else if (cfg.value("sbert_ce_default_activation_function", json()).is_string())
    fn = cfg["sbert_ce_default_activation_function"].get<std::string>();
  if (fn.empty()) return A::kClassify;
  if (fn.rfind("torch.nn.modules.", 0) != 0)
    fail(where + ": activation '" + fn +
         "': Loading of activation functions is restricted to torch.nn.modules for security "
         "reasons");
  const std::string leaf = fn.substr(fn.rfind('.') + 1);
  if (leaf == "Sigmoid" || leaf == "Softmax") return A::kClassify;
  if (leaf == "Identity") return A::kIdentity;
  fail(where + ": activation '" + fn + "' is not supported (Sigmoid, Softmax or Identity)");
}

// A classifier's head and labels (vLLM's as_seq_cls_model): the checkpoint's score.weight, or
// rows of the LM head named by classifier_from_token (method from_2_way_softmax: yes minus no,
// one label; no_post_processing: one label per token).
void setup_classifier(PoolerSetup& s, const json& cfg, const model::CausalLM& m,
                      const tok::Tokenizer* tok, const std::string& where) {
  std::vector<std::string> tokens;
  if (const auto it = cfg.find("classifier_from_token"); it != cfg.end() && !it->is_null()) {
    if (!it->is_array()) fail(where + " classifier_from_token: a list of tokens is wanted");
    for (const json& t : *it) {
      if (!t.is_string()) fail(where + " classifier_from_token: a list of tokens is wanted");
      tokens.push_back(t.get<std::string>());
    }
  }
  std::string method =
      cfg.value("method", json()).is_string() ? cfg["method"].get<std::string>() : std::string();
  if (cfg.value("is_original_qwen3_reranker", false) == true) {
    if (tokens.size() != 2)
      fail(where +
           " is_original_qwen3_reranker: classifier_from_token must name two tokens (\"no\", "
           "\"yes\")");
    method = "from_2_way_softmax";
  }
  const int64_t E = m.config().hidden_size;
  if (!method.empty() || !tokens.empty()) {
    if (method != "from_2_way_softmax" && method != "no_post_processing")
      fail(where + " method '" + method +
           "': a classifier from tokens needs method from_2_way_softmax or no_post_processing");
    if (tokens.empty()) fail(where + " method " + method + " needs classifier_from_token");
    if (method == "from_2_way_softmax" && tokens.size() != 2)
      fail(where + " from_2_way_softmax: classifier_from_token must name two tokens");
    if (!tok) fail(where + ": classifier_from_token needs the model's tokenizer");
    std::vector<int32_t> ids;
    for (const std::string& t : tokens) {
      const std::optional<int32_t> id = tok->token_to_id(t);
      if (!id) fail(where + " classifier_from_token: '" + t + "' is not a token of the vocabulary");
      ids.push_back(*id);
    }
    const std::vector<float> rows = m.lm_head_rows(ids);
    if (method == "from_2_way_softmax") {  // the "yes" (second) row minus the "no" (first)
      s.classifier.resize(static_cast<size_t>(E));
      for (int64_t i = 0; i < E; ++i) s.classifier[i] = rows[E + i] - rows[i];
    } else {
      s.classifier = rows;
    }
    s.num_labels = method == "from_2_way_softmax" ? 1 : static_cast<int32_t>(tokens.size());
    s.use_sep_token = false;  // an LLM as reranker: query and document as one string
  } else {
    int64_t n = 2;  // transformers' default label count
    if (cfg.contains("id2label") && cfg["id2label"].is_object())
      n = static_cast<int64_t>(cfg["id2label"].size());
    else if (cfg.value("num_labels", json()).is_number_integer())
      n = cfg["num_labels"].get<int64_t>();
    if (n < 1) fail(where + ": num_labels must be at least 1");
    if (m.gguf()) fail(m.path() + ": sequence classification needs a Hugging Face folder");
    s.classifier = m.score_head(n);
    if (s.classifier.empty())
      fail(where + ": " + m.config().architecture +
           " has no classifier head (score.weight) in its weights; an LLM becomes a classifier "
           "through --hf-overrides classifier_from_token and method");
    s.num_labels = static_cast<int32_t>(n);
    s.labels.assign(static_cast<size_t>(n), "");
    if (cfg.contains("id2label") && cfg["id2label"].is_object())
      for (const auto& [k, v] : cfg["id2label"].items()) {
        char* end = nullptr;
        const long i = std::strtol(k.c_str(), &end, 10);
        if (*end == '\0' && i >= 0 && i < n && v.is_string()) s.labels[i] = v.get<std::string>();
      }
  }
  if (s.labels.size() != static_cast<size_t>(s.num_labels)) {  // transformers' LABEL_i names
    s.labels.clear();
    for (int32_t i = 0; i < s.num_labels; ++i) s.labels.push_back("LABEL_" + std::to_string(i));
  }
  s.activation = classifier_activation(cfg, where);
  if (cfg.value("use_pad_token", json()).is_boolean())  // vLLM's deprecated spelling
    s.use_sep_token = cfg["use_pad_token"].get<bool>();
  else if (cfg.value("use_sep_token", json()).is_boolean())
    s.use_sep_token = cfg["use_sep_token"].get<bool>();
}

// vLLM's get_sentence_transformers_chat_template_kwargs: a CrossEncoder folder whose one
// Transformer module is a sequence classifier taking messages scores its pairs through a saved
// chat template; its processing_kwargs.chat_template (restore_suffix dropped), else nullopt.
std::optional<json> st_score_template(const fs::path& folder) {
  const std::optional<json> st = read_json(folder / "config_sentence_transformers.json");
  if (!st || !st->is_object() || st->value("model_type", json()) != "CrossEncoder")
    return std::nullopt;
  std::optional<json> modules = read_json(folder / "modules.json");
  const fs::path tc_file = folder / "sentence_bert_config.json";
  const std::optional<json> tc = read_json(tc_file);
  if (modules && modules->is_object()) modules = modules->value("modules", json());
  if (!modules || !modules->is_array() || modules->size() != 1 || !(*modules)[0].is_object())
    return std::nullopt;
  const json& m = (*modules)[0];
  const std::string type = m.value("type", json()).is_string() ? m["type"].get<std::string>() : "";
  if (type != "sentence_transformers.models.Transformer" &&
      type != "sentence_transformers.base.modules.transformer.Transformer")
    return std::nullopt;
  if (m.contains("path") && m["path"].is_string() && !m["path"].get<std::string>().empty())
    return std::nullopt;
  if (!tc || !tc->is_object() || tc->value("transformer_task", json()) != "sequence-classification")
    return std::nullopt;
  const json modality = tc->value("modality_config", json());
  if (!modality.is_object() || !modality.contains("message")) return std::nullopt;
  const std::string where = tc_file.string() + " processing_kwargs.chat_template";
  json pk = tc->value("processing_kwargs", json());
  json kw = pk.is_object() ? pk.value("chat_template", json()) : json();
  if (kw.is_null()) kw = json::object();
  if (!kw.is_object()) fail(where + ": a JSON object is wanted");
  kw.erase("restore_suffix");  // vLLM does not restore the template suffix after truncation
  if (kw.contains("chat_template") && !kw["chat_template"].is_string())
    fail(where + ": the chat template name must be a string");
  for (const char* k : {"tokenize", "tools"})
    if (kw.contains(k)) fail(where + ": unsupported setting '" + k + "'");
  return kw;
}

}  // namespace

std::vector<float> PoolerSetup::classify(const std::vector<float>& pooled, bool activate) const {
  const size_t H = pooled.size();
  std::vector<float> out(static_cast<size_t>(num_labels));
  for (size_t l = 0; l < out.size(); ++l) {
    double acc = 0;
    for (size_t i = 0; i < H; ++i) acc += double(classifier[l * H + i]) * pooled[i];
    out[l] = static_cast<float>(acc);
  }
  if (!activate || activation == Activation::kIdentity) return out;
  if (activation == Activation::kSigmoid || out.size() < 2) {
    for (float& x : out) x = static_cast<float>(1.0 / (1.0 + std::exp(-double(x))));
    return out;
  }
  const float mx = *std::max_element(out.begin(), out.end());
  double sum = 0;
  for (float& x : out) sum += (x = static_cast<float>(std::exp(double(x) - mx)));
  for (float& x : out) x = static_cast<float>(x / sum);
  return out;
}

void refuse_pooling_flags(const PoolerFlags& f, const char* command) {
  const bool asks = f.runner == "pooling" || f.convert == "embed" || f.convert == "classify" ||
                    f.task == "embed" || f.task == "embedding" || f.task == "classify" ||
                    f.task == "score" || !f.pooler_config.empty();
  if (asks)
    fail(std::string(command) +
         ": embedding (pooling) models are served by `vllm serve` (/v1/embeddings); --runner / "
         "--convert / --task / --pooler-config ask for one");
}

void refuse_classifier(const char* command, const model::CausalLM& m) {
  const std::string& arch = m.config().architecture;
  if (model::is_sequence_classifier(arch))
    fail(std::string(command) + ": " + arch +
         " is a sequence classifier, served by `vllm serve` (/classify, /score, /rerank); it "
         "generates no text");
}

std::optional<PoolerSetup> resolve_pooler(const PoolerFlags& flags, const std::string& folder,
                                          const model::CausalLM& m, const tok::Tokenizer* tok) {
  std::string runner = flags.runner, convert = flags.convert;
  if (flags.task == "embed" || flags.task == "embedding" || flags.task == "classify" ||
      flags.task == "score") {  // vLLM's older spelling (score: a cross-encoder, classify)
    if (runner == "generate") fail("--task " + flags.task + " contradicts --runner generate");
    runner = "pooling";
    if (convert == "auto")
      convert = flags.task == "embed" || flags.task == "embedding" ? "embed" : "classify";
  } else if (!flags.task.empty() && flags.task != "auto" && flags.task != "generate") {
    fail("--task " + flags.task + " is not supported (auto, generate, embed, classify, score)");
  }
  if (convert != "auto" && convert != "none" && convert != "embed" && convert != "classify")
    fail("--convert " + convert + " is not supported (auto, none, embed, classify)");
  const fs::path dir(folder);
  const bool is_folder = m.gguf() == nullptr;
  const std::optional<StPooling> st = is_folder ? read_sentence_transformers(dir) : std::nullopt;
  // The architecture after --hf-overrides (the loader applied them to config.json).
  const std::string& arch = m.config().architecture;
  const bool seq_cls = model::is_sequence_classifier(arch);
  if (runner == "auto") {
    if (convert == "embed" || convert == "classify" || seq_cls)
      runner = "pooling";
    else if (st)  // "Some Sentence Transformers models use *ForCausalLM archs"
      runner = "pooling";
    else
      runner = "generate";
  }
  if (runner == "generate") {
    if (convert == "embed" || convert == "classify")
      fail("--convert " + convert + " needs --runner pooling (or auto)");
    if (seq_cls)
      fail(arch + " is a sequence classifier (a pooling model): --runner generate cannot serve it");
    if (!flags.pooler_config.empty())
      std::fprintf(stderr, "vllm.cpp: --pooler-config has no effect on a generation model\n");
    return std::nullopt;
  }
  if (runner != "pooling")
    fail("--runner " + runner + " is not supported (auto, generate, pooling)");
  // A *ForCausalLM (or *ForConditionalGeneration) decoder: vLLM's --convert auto turns it into
  // an embedding model ("embed"); "none" would keep a generation model under the pooling
  // runner. A *ForSequenceClassification checkpoint is a classifier already.
  if (convert == "none" && !seq_cls)
    fail("--runner pooling --convert none: " + (arch.empty() ? std::string("the model") : arch) +
         " is not a pooling model; use --convert embed (or auto)");
  if (convert == "embed" && seq_cls)
    fail("--convert embed: " + arch + " is a sequence classifier (its task is classify)");
  const bool classify = seq_cls || convert == "classify";

  PoolerSetup s;
  s.task = classify ? PoolerSetup::Task::kClassify : PoolerSetup::Task::kEmbed;
  const char* task_name = classify ? "classify" : "embed";
  s.hidden_size = static_cast<int32_t>(m.config().hidden_size);
  std::optional<PoolingType> type;
  std::optional<bool> normalize;
  std::string type_src, norm_src;
  if (!flags.pooler_config.empty()) {
    json pc;
    try {
      pc = json::parse(flags.pooler_config);
    } catch (const json::exception& e) {
      fail(std::string("--pooler-config: not JSON (") + e.what() + ")");
    }
    if (!pc.is_object()) fail("--pooler-config: a JSON object is wanted");
    if (pc.contains("normalize"))
      fail("--pooler-config: Parameter `normalize` was removed; use `use_activation` instead.");
    for (const auto& [k, v] : pc.items()) {
      const std::string f = "--pooler-config " + k;
      if (v.is_null()) continue;
      if (k == "task") {
        if (v != task_name)
          fail(f + ": this model's task is " + task_name + " (" + v.dump() + " is not served)");
      } else if (k == "pooling_type" || k == "seq_pooling_type") {
        if (!v.is_string()) fail(f + ": a string (CLS, LAST or MEAN) is wanted");
        if (type) fail("--pooler-config: Cannot set both `pooling_type` and `seq_pooling_type`");
        type = seq_type(v.get<std::string>(), f);
        type_src = "--pooler-config";
      } else if (k == "tok_pooling_type") {
        fail(f + ": token pooling (ALL, STEP) is not served");
      } else if (k == "use_activation") {
        if (!v.is_boolean()) fail(f + ": true or false is wanted");
        normalize = v.get<bool>();
        norm_src = "--pooler-config";
      } else if (k == "dimensions") {
        if (classify) fail(f + ": a classifier has no embedding dimensions");
        if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > s.hidden_size)
          fail(f + ": an integer in [1, " + std::to_string(s.hidden_size) + "] is wanted");
        s.dimensions = v.get<int32_t>();
      } else if (k == "enable_chunked_processing") {
        if (!v.is_boolean()) fail(f + ": true or false is wanted");
        if (v.get<bool>())
          fail(f + ": chunked processing of inputs longer than max_model_len is not implemented");
      } else if (k == "enable_flash_late_interaction") {
        if (!v.is_boolean()) fail(f + ": true or false is wanted");  // no late interaction here
      } else if (k == "max_embed_len") {
        fail(f + ": inputs longer than max_model_len are not implemented (raise --max-model-len)");
      } else if (k == "logit_mean" || k == "logit_sigma") {
        fail(f + ": logit normalization of a classifier is not implemented");
      } else if (k == "step_tag_id" || k == "returned_token_ids") {
        fail(f + ": a reward-model setting (token pooling); reward models are not served");
      } else {
        fail(f + ": unknown field");
      }
    }
  }
  if (st && !classify) {
    if (!type && st->type) {
      type = st->type;
      type_src = "sentence_transformers";
    }
    if (!normalize) {
      normalize = st->normalize;
      norm_src = "sentence_transformers";
    }
  }
  if (!type)
    if (auto g = gguf_pooling(m)) {
      type = g;
      type_src = "GGUF pooling_type";
    }
  s.type = type.value_or(PoolingType::kLast);
  s.normalize = normalize.value_or(true);
  s.source = std::string("pooling ") + engine::to_string(s.type) + " (" +
             (type_src.empty() ? "model default" : type_src) + "), " +
             (classify ? (s.normalize ? "activated" : "raw logits")
                       : (s.normalize ? "normalized" : "not normalized")) +
             " (" + (norm_src.empty() ? "pooler default" : norm_src) + ")";

  // config.json, --hf-overrides' fields first: Matryoshka sizes, a classifier's labels.
  json cfg = json::object();
  if (is_folder)
    if (auto c = read_json(dir / "config.json"); c && c->is_object()) cfg = *c;
  if (!flags.hf_overrides.empty()) {
    try {
      json o = json::parse(flags.hf_overrides);
      if (o.is_object())
        for (const auto& [k, v] : o.items()) cfg[k] = v;
    } catch (const json::exception&) {  // the model loader already refused it
    }
  }
  if (cfg.contains("matryoshka_dimensions") && cfg["matryoshka_dimensions"].is_array()) {
    for (const json& d : cfg["matryoshka_dimensions"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > s.hidden_size)
        fail("config.json matryoshka_dimensions: " + d.dump() + " is not in [1, " +
             std::to_string(s.hidden_size) + "]");
      s.matryoshka_dimensions.push_back(d.get<int32_t>());
    }
    s.is_matryoshka = !s.matryoshka_dimensions.empty();
  }
  if (cfg.value("is_matryoshka", false) == true) s.is_matryoshka = true;
  if (classify) {
    setup_classifier(s, cfg, m, tok, (dir / "config.json").string());
    if (is_folder)
      if (std::optional<json> kw = st_score_template(dir)) {
        const std::string name = kw->value("chat_template", std::string());
        kw->erase("chat_template");
        if (!name.empty() && name != "default")
          fail((dir / "sentence_bert_config.json").string() + ": the named chat template '" + name +
               "' is not supported (the tokenizer's default one is)");
        if (!tok || tok->chat_template().empty())
          fail((dir / "sentence_bert_config.json").string() +
               ": The Sentence Transformers config declares message inputs, but the checkpoint "
               "has no 'default' chat template.");
        s.saved_score_template = true;
        s.saved_score_kwargs = nlohmann::ordered_json::parse(kw->dump());
        s.source += ", pairs through the saved chat template (Sentence Transformers)";
      }
    s.source += ", " + std::to_string(s.num_labels) + " label" + (s.num_labels == 1 ? "" : "s");
  }
  return s;
}

}  // namespace vllm::api
