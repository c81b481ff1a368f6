// /score and /rerank: vLLM 0.33's entrypoints/pooling/scoring (protocol.py, serving.py, the
// bi-encoder io_processor) over the engine's pooling requests.
#include "api/server/scoring.h"

#include <algorithm>
#include <cmath>

#include "api/llm.h"
#include "api/server/api_error.h"
#include "api/server/embeddings.h"
#include "api/server/protocol_fields.h"
#include "api/server/request_inputs.h"
#include "api/server/serving.h"
#include "tokenizer/tokenizer.h"

namespace vllm::api {

using json = nlohmann::json;

namespace {

// vLLM's ScoreInput (a string, or a multimodal {"content": [...]} object) or a list of them.
std::vector<std::string> parse_score_inputs(const ojson& v, const std::string& field,
                                            bool list_ok) {
  auto one = [](const ojson& x, const std::string& name) {
    if (x.is_string()) return x.get<std::string>();
    if (x.is_object() && x.contains("content"))
      throw bad_request(name +
                            ": multimodal score inputs ({\"content\": [...]}) are not supported: "
                            "this model takes text",
                        name);
    detail::wrong_type(name, "a string", x);
    return std::string();
  };
  std::vector<std::string> out;
  if (v.is_array() && list_ok) {
    for (size_t i = 0; i < v.size(); ++i) out.push_back(one(v[i], detail::indexed(field, i)));
  } else {
    out.push_back(one(v, field));
  }
  return out;
}

// vLLM's truncate_text_to_tokens: the text of the first `n` tokens (special tokens not added).
std::string first_tokens(const LLM& llm, const std::string& text, int64_t n) {
  const std::vector<int32_t> ids = llm.tokenizer().encode(text, false);
  if (static_cast<int64_t>(ids.size()) <= n) return text;
  return llm.tokenizer().decode(std::vector<int32_t>(ids.begin(), ids.begin() + n));
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  // torch's cosine_similarity: each norm clamped at eps 1e-8.
  return ab / (std::max(std::sqrt(aa), 1e-8) * std::max(std::sqrt(bb), 1e-8));
}

}  // namespace

ScoreRequest parse_score_request(const ojson& body, bool rerank) {
  if (!body.is_object()) throw bad_request("the request body must be a JSON object");
  detail::Fields f(body, rerank ? "rerank request" : "score request");
  ScoreRequest r;
  r.rerank = rerank;
  if (f.has("normalize"))
    throw bad_request("Parameter `normalize` was removed; use `use_activation` instead.",
                      "normalize");
  r.model = f.string("model");
  if (rerank) {
    const ojson* q = f.get("query");
    if (!q) throw bad_request("Field required: query", "query");
    r.queries = parse_score_inputs(*q, "query", false);
    const ojson* d = f.get("documents");
    if (!d) throw bad_request("Field required: documents", "documents");
    r.documents = parse_score_inputs(*d, "documents", true);
    if (auto v = f.integer("top_n", 0)) r.top_n = *v;
  } else {
    // vLLM's ScoreRequest union, in its order: queries / documents, queries / items,
    // data_1 / data_2, text_1 / text_2.
    static const char* kPairs[][2] = {
        {"queries", "documents"}, {"queries", "items"}, {"data_1", "data_2"}, {"text_1", "text_2"}};
    bool found = false;
    for (const auto& p : kPairs) {
      const ojson* a = f.get(p[0]);
      const ojson* b = f.get(p[1]);
      if (!a || !b) continue;
      r.queries = parse_score_inputs(*a, p[0], true);
      r.documents = parse_score_inputs(*b, p[1], true);
      found = true;
      break;
    }
    if (!found)
      throw bad_request(
          "Field required: queries and documents (or queries / items, data_1 / data_2, "
          "text_1 / text_2)",
          "queries");
  }
  // vLLM's _validate_score_input_lens, in its words.
  if (r.queries.size() > 1 && r.queries.size() != r.documents.size())
    throw bad_request("Input lengths must be either 1:1, 1:N or N:N", rerank ? "query" : "queries");
  if (r.queries.empty())
    throw bad_request("At least one text element must be given", rerank ? "query" : "queries");
  if (r.documents.empty())
    throw bad_request("At least one text_pair element must be given", "documents");
  for (const char* k : {"max_tokens_per_query", "max_tokens_per_doc"})
    if (auto v = f.integer(k)) {
      if (*v < 0) throw bad_request(std::string(k) + " must be a non-negative integer", k);
      (std::string(k) == "max_tokens_per_query" ? r.max_tokens_per_query : r.max_tokens_per_doc) =
          *v;
    }
  r.instruction = f.string("instruction");
  if (const ojson* k = f.get("chat_template_kwargs")) {
    if (!k->is_object()) detail::wrong_type("chat_template_kwargs", "an object", *k);
    r.chat_template_kwargs = *k;
  }
  parse_pooling_base(f, r);
  r.ignored = f.unknown();
  return r;
}

json serve_score(ServingContext& ctx, const ScoreRequest& r, const PoolingServeOptions& o,
                 const std::function<bool()>& client_gone) {
  const PoolerSetup& pooler = *o.pooler;
  const int32_t max_len = o.max_model_len;
  for (auto [v, k] : {std::pair{r.max_tokens_per_query, "max_tokens_per_query"},
                      std::pair{r.max_tokens_per_doc, "max_tokens_per_doc"}})
    if (v >= max_len)
      throw bad_request(std::string(k) + " (" + std::to_string(v) +
                            ") must be less than max_model_len (" + std::to_string(max_len) + ").",
                        k);
  const bool cross = pooler.task == PoolerSetup::Task::kClassify;
  // A cross-encoder's score template: --chat-template, else a Sentence Transformers
  // CrossEncoder's saved one (with its saved kwargs). Only a template reads an instruction: a
  // bi-encoder embeds each text alone, and vLLM renders no template it was not given.
  const bool saved = cross && !o.score_template && pooler.saved_score_template;
  const bool templated = cross && (o.score_template || saved);
  const char* no_template = cross ? "this server has no score template (--chat-template)"
                                  : "an embedding model scores by cosine similarity, with no "
                                    "score template";
  if (r.instruction && !templated) detail::unsupported("instruction", no_template);
  if (!r.chat_template_kwargs.is_null() && !templated)
    detail::unsupported("chat_template_kwargs", no_template);

  const LLM& llm = ctx.llm;
  GenerationRequest trunc;
  trunc.truncate_prompt_tokens = r.truncate_prompt_tokens;
  trunc.truncate_left = r.truncate_left;
  std::vector<std::vector<int32_t>> prompts;
  auto query_text = [&](const std::string& q) {
    return r.max_tokens_per_query > 0 ? first_tokens(llm, q, r.max_tokens_per_query) : q;
  };
  auto doc_text = [&](const std::string& d) {
    return r.max_tokens_per_doc > 0 ? first_tokens(llm, d, r.max_tokens_per_doc) : d;
  };
  if (cross) {
    // One prompt per pair (vLLM's cross-encoder io_processor).
    ojson request_kwargs =
        r.chat_template_kwargs.is_null() ? ojson::object() : r.chat_template_kwargs;
    if (r.instruction && !request_kwargs.contains("instruction"))
      request_kwargs["instruction"] = *r.instruction;
    // The saved kwargs under the request's (vLLM's merge_kwargs).
    ojson kwargs = saved ? pooler.saved_score_kwargs : ojson::object();
    for (auto it = request_kwargs.begin(); it != request_kwargs.end(); ++it)
      kwargs[it.key()] = it.value();
    for (const char* k : {"chat_template", "tools", "tokenize"})
      if (kwargs.contains(k))
        throw bad_request(std::string("chat_template_kwargs contains reserved keys that conflict "
                                      "with fixed scorer arguments: ") +
                              k,
                          "chat_template_kwargs");
    // add_generation_prompt is a keyword of the template call, not a template variable.
    const bool gen_prompt =
        kwargs.contains("add_generation_prompt") && kwargs["add_generation_prompt"] == true;
    kwargs.erase("add_generation_prompt");
    const tok::Tokenizer& tk = llm.tokenizer();
    for (size_t k = 0; k < r.documents.size(); ++k) {
      const std::string q = query_text(r.queries[r.queries.size() == 1 ? 0 : k]);
      const std::string d = doc_text(r.documents[k]);
      if (templated) {
        ojson msgs = ojson::array();
        msgs.push_back({{"role", "query"}, {"content", q}});
        msgs.push_back({{"role", "document"}, {"content", d}});
        const std::string text = llm.apply_chat_template(msgs, ojson(), gen_prompt, kwargs);
        prompts.push_back(encode_truncatable(llm, text, true, trunc, max_len, "documents"));
      } else if (pooler.use_sep_token) {
        // The tokenizer's pair encoding: both texts' tokens, with the special tokens of its pair
        // template; only a tokenizer that adds none (Qwen's) is served.
        if (!tk.encode("", true).empty())
          throw bad_request(
              "scoring a (query, document) pair through the tokenizer's pair template is not "
              "supported for a tokenizer that adds special tokens; give a score template "
              "(--chat-template) or --hf-overrides '{\"use_sep_token\": false}'",
              "queries");
        std::vector<int32_t> ids = tk.encode(q, false);
        const std::vector<int32_t> di = tk.encode(d, false);
        ids.insert(ids.end(), di.begin(), di.end());
        prompts.push_back(std::move(ids));
      } else {  // an LLM as reranker: the two texts as one string
        prompts.push_back(encode_truncatable(llm, q + d, true, trunc, max_len, "documents"));
      }
    }
  } else {  // every query and document once, queries first (vLLM's bi-encoder io_processor)
    for (const std::string& q : r.queries)
      prompts.push_back(encode_truncatable(llm, query_text(q), true, trunc, max_len, "query"));
    for (const std::string& d : r.documents)
      prompts.push_back(encode_truncatable(llm, doc_text(d), true, trunc, max_len, "documents"));
  }
  const int64_t prompt_tokens = check_pooling_prompts(prompts, trunc, max_len, "input");

  engine::SamplingParams sp;
  engine::PoolingParams pp;
  pp.type = pooler.type;
  pp.normalize = !cross && r.use_activation.value_or(pooler.normalize);
  sp.pooling = pp;
  sp.cache_salt = r.cache_salt;
  sp.lora_id = o.lora_id;
  const std::string prefix = random_id("score-");
  const std::vector<std::vector<float>> v =
      run_pooling(ctx, prompts, sp, r.priority, prefix, client_gone);

  const size_t nq = r.queries.size();
  std::vector<double> scores;
  for (size_t k = 0; k < r.documents.size(); ++k)
    scores.push_back(cross ? pooler.classify(v[k], r.use_activation.value_or(pooler.normalize))[0]
                           : cosine(v[nq == 1 ? 0 : k], v[nq + k]));

  const std::string id = r.request_id ? "score-" + *r.request_id : prefix;
  if (r.rerank) {
    std::vector<size_t> order(scores.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    if (r.top_n > 0 && static_cast<size_t>(r.top_n) < order.size()) order.resize(r.top_n);
    json results = json::array();
    for (size_t k : order)
      results.push_back({{"index", k},
                         {"document", {{"text", r.documents[k]}, {"multi_modal", nullptr}}},
                         {"relevance_score", scores[k]}});
    return json{{"id", id},
                {"model", o.model_name},
                {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}},
                {"results", std::move(results)}};
  }
  json data = json::array();
  for (size_t k = 0; k < scores.size(); ++k)
    data.push_back({{"index", k}, {"object", "score"}, {"score", scores[k]}});
  return pooling_list_response(id, o.model_name, std::move(data), prompt_tokens);
}

}  // namespace vllm::api
