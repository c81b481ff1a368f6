// /v1/embeddings: vLLM 0.33's entrypoints/pooling/embed (protocol.py, serving.py) over the
// engine's pooling requests.
#include "api/server/embeddings.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>

#include "api/llm.h"
#include "api/server/api_error.h"
#include "api/server/protocol_fields.h"
#include "api/server/request_inputs.h"
#include "api/server/serving.h"
#include "vt/dtype.h"

namespace vllm::api {

using json = nlohmann::json;

namespace {

bool is_message(const ojson& v) {
  return v.is_object() && v.contains("role") && v["role"].is_string();
}
bool is_conversation(const ojson& v) {
  return v.is_array() && !v.empty() &&
         std::all_of(v.begin(), v.end(), [](const ojson& m) { return is_message(m); });
}

// One conversation (a list of messages) or a non-empty list of them, into r.conversations;
// false when `v` is neither.
bool parse_conversations(const ojson& v, EmbeddingRequest& r) {
  if (is_conversation(v)) {
    r.conversations.push_back(detail::parse_messages(v));
    return true;
  }
  if (!v.is_array() || v.empty() ||
      !std::all_of(v.begin(), v.end(), [](const ojson& c) { return is_conversation(c); }))
    return false;
  for (const ojson& c : v) r.conversations.push_back(detail::parse_messages(c));
  return true;
}

void parse_input(const ojson& in, EmbeddingRequest& r) {
  if (in.is_string()) {
    r.texts.push_back(in.get<std::string>());
    return;
  }
  if (!in.is_array())
    detail::wrong_type("input", "a string, a list of strings or of token ids, or messages", in);
  if (in.empty()) throw bad_request("input must not be empty", "input");
  if (parse_conversations(in, r)) return;  // EmbeddingChatInputRequest / its batched form
  if (in[0].is_number()) {
    r.inputs_are_ids = true;
    std::vector<int32_t> ids;
    for (size_t i = 0; i < in.size(); ++i)
      ids.push_back(detail::token_id(in[i], detail::indexed("input", i)));
    r.token_ids.push_back(std::move(ids));
    return;
  }
  if (in[0].is_array()) {
    r.inputs_are_ids = true;
    for (size_t k = 0; k < in.size(); ++k) {
      const std::string field = detail::indexed("input", k);
      if (!in[k].is_array()) detail::wrong_type(field, "a list of token ids", in[k]);
      if (in[k].empty()) throw bad_request(field + " must not be empty", field);
      std::vector<int32_t> ids;
      for (size_t i = 0; i < in[k].size(); ++i)
        ids.push_back(detail::token_id(in[k][i], detail::indexed(field, i)));
      r.token_ids.push_back(std::move(ids));
    }
    return;
  }
  for (size_t k = 0; k < in.size(); ++k) {
    if (!in[k].is_string())
      detail::wrong_type(detail::indexed("input", k), "a string (all inputs of one kind)", in[k]);
    r.texts.push_back(in[k].get<std::string>());
  }
}

// One vector as base64 of its values in `dtype`, in `endianness` byte order (vLLM's
// encode_pooling_output: float32 as is, float16 / bfloat16 rounded to nearest even).
std::string encode_base64(const std::vector<float>& v, const std::string& dtype,
                          const std::string& endianness) {
  std::string bytes;
  const size_t width = dtype == "float32" ? 4 : 2;
  bytes.resize(v.size() * width);
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char* p = reinterpret_cast<unsigned char*>(&bytes[i * width]);
    uint32_t bits = 0;
    if (width == 4)
      std::memcpy(&bits, &v[i], 4);
    else
      bits = dtype == "float16" ? vt::fp32_to_fp16_bits(v[i]) : vt::fp32_to_bf16_bits(v[i]);
    const bool big = endianness == "big";  // native is little on the CPUs served here
    for (size_t b = 0; b < width; ++b)
      p[big ? width - 1 - b : b] = static_cast<unsigned char>(bits >> (8 * b));
  }
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t w = 0;
    for (size_t b = 0; b < 3; ++b)
      w = (w << 8) | (b < n ? static_cast<unsigned char>(bytes[i + b]) : 0u);
    for (size_t c = 0; c < 4; ++c) out += c <= n ? kAlphabet[(w >> (18 - 6 * c)) & 63] : '=';
  }
  return out;
}

// encoding_format, embed_dtype, endianness and dimensions (/v1/embeddings and /pooling).
void parse_encoding(detail::Fields& f, EmbeddingRequest& r) {
  if (auto v = f.string("encoding_format")) {
    if (*v == "bytes" || *v == "bytes_only")
      throw bad_request("encoding_format '" + *v +
                            "' is not supported by this server: the answer is JSON (float or "
                            "base64)",
                        "encoding_format");
    if (*v != "float" && *v != "base64")
      throw bad_request("encoding_format must be 'float' or 'base64'", "encoding_format");
    r.encoding_format = *v;
  }
  if (auto v = f.string("embed_dtype")) {
    if (*v == "fp8_e4m3" || *v == "fp8_e5m2")
      throw bad_request("embed_dtype '" + *v + "' is not supported by this server", "embed_dtype");
    if (*v != "float32" && *v != "float16" && *v != "bfloat16")
      throw bad_request("embed_dtype must be one of float32, float16, bfloat16", "embed_dtype");
    r.embed_dtype = *v;
  }
  if (auto v = f.string("endianness")) {
    if (*v != "native" && *v != "big" && *v != "little")
      throw bad_request("endianness must be one of native, big, little", "endianness");
    r.endianness = *v;
  }
  if (auto v = f.integer("dimensions")) {
    if (*v < 1) throw bad_request("dimensions must be at least 1", "dimensions");
    r.dimensions = static_cast<int32_t>(std::min<int64_t>(*v, INT32_MAX));
  }
}

bool is_score_route(const std::string& path) {
  for (const char* p : {"/score", "/v1/score", "/rerank", "/v1/rerank", "/v2/rerank"})
    if (path == p) return true;
  return false;
}

}  // namespace

bool is_pooling_route(const std::string& path) {
  return path == "/v1/embeddings" || path == "/pooling" || path == "/classify" ||
         is_score_route(path);
}

std::optional<ApiError> route_refusal(const std::string& path, const PoolerSetup* pooler) {
  if (!pooler) {
    if (!is_pooling_route(path)) return std::nullopt;
    return ApiError(404, path +
                             " needs a pooling model: this server generates text (start it with "
                             "--runner pooling for embeddings, or serve a classifier)");
  }
  const bool classify = pooler->task == PoolerSetup::Task::kClassify;
  const std::string served =
      classify ? std::string("/classify") + (pooler->serves_score() ? ", /score or /rerank" : "")
               : "/v1/embeddings, /score or /rerank";
  const char* model = classify ? "a classification model" : "an embedding model";
  if (path == "/pooling" || (path == "/classify" && classify) ||
      (path == "/v1/embeddings" && !classify) || (is_score_route(path) && pooler->serves_score()))
    return std::nullopt;
  if (is_score_route(path))  // vLLM's enable_scoring_api
    return ApiError(404, path +
                             " is served for embedding models and one-label classifiers; this "
                             "classifier has " +
                             std::to_string(pooler->num_labels) + " labels: use /classify");
  return ApiError(404, path + " is not served for " + model + " (--runner pooling): use " + served);
}

EmbeddingRequest parse_embedding_request(const ojson& body, PoolingApi api) {
  if (!body.is_object()) throw bad_request("the request body must be a JSON object");
  detail::Fields f(body, api == PoolingApi::kPooling    ? "pooling request"
                         : api == PoolingApi::kClassify ? "classification request"
                                                        : "embeddings request");
  EmbeddingRequest r;
  r.api = api;
  if (api == PoolingApi::kPooling) r.task = f.string("task");
  if (f.has("normalize"))
    throw bad_request("Parameter `normalize` was removed; use `use_activation` instead.",
                      "normalize");
  r.model = f.string("model");
  const ojson* input = f.get("input");
  const ojson* messages = f.get("messages");
  if (input && messages) throw bad_request("give either input or messages, not both", "messages");
  if (messages) {
    if (!parse_conversations(*messages, r))
      detail::wrong_type("messages", "a list of messages (or of conversations)", *messages);
  } else if (input) {
    parse_input(*input, r);
  } else {
    throw bad_request("Field required: input", "input");
  }
  if (!r.conversations.empty()) {
    r.chat_template = f.string("chat_template");
    r.chat_template_kwargs = detail::parse_kwargs(f);
    r.add_generation_prompt = f.boolean("add_generation_prompt").value_or(false);
    r.continue_final_message = f.boolean("continue_final_message").value_or(false);
    if (r.add_generation_prompt && r.continue_final_message)
      throw bad_request(
          "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
          "continue_final_message");
  }
  r.add_special_tokens = f.boolean("add_special_tokens");
  // ClassificationRequest has no encoding fields (unknown ones are logged, as vLLM does).
  if (api != PoolingApi::kClassify) parse_encoding(f, r);
  if (f.has("media_io_kwargs"))
    detail::unsupported("media_io_kwargs", "there are no multimodal inputs");
  parse_pooling_base(f, r);
  r.ignored = f.unknown();
  return r;
}

void parse_pooling_base(detail::Fields& f, PoolingRequestBase& r) {
  r.use_activation = f.boolean("use_activation");
  detail::parse_truncation(f, r.truncate_prompt_tokens, r.truncate_left);
  if (auto v = f.string("padding")) {
    if (*v == "max_length")
      throw bad_request("padding 'max_length' is not supported by this server", "padding");
    if (*v != "do_not_pad")
      throw bad_request("padding must be 'max_length' or 'do_not_pad'", "padding");
  }
  if (f.has("mm_processor_kwargs"))
    detail::unsupported("mm_processor_kwargs", "there are no multimodal inputs");
  if (auto v = f.integer("priority")) r.priority = *v;
  r.request_id = f.string("request_id");
  if (auto v = f.string("cache_salt")) {
    if (v->empty())
      throw bad_request("Parameter 'cache_salt' must be a non-empty string if provided.",
                        "cache_salt");
    r.cache_salt = *v;
  }
  f.string("user");  // OpenAI's end-user id: nothing to do with it
}

json pooling_list_response(const std::string& id, const std::string& model, json data,
                           int64_t prompt_tokens) {
  return json{{"id", id},
              {"object", "list"},
              {"created", static_cast<int64_t>(std::time(nullptr))},
              {"model", model},
              {"data", std::move(data)},
              {"usage",
               {{"prompt_tokens", prompt_tokens},
                {"total_tokens", prompt_tokens},
                {"completion_tokens", 0},
                {"prompt_tokens_details", nullptr}}}};
}

json serve_embeddings(ServingContext& ctx, const EmbeddingRequest& r, const PoolingServeOptions& o,
                      const std::function<bool()>& client_gone) {
  const PoolerSetup& pooler = *o.pooler;
  const bool classify = pooler.task == PoolerSetup::Task::kClassify;
  const char* task = classify ? "classify" : "embed";
  if (r.task && *r.task != task)  // vLLM's /pooling: the model's task, or an error naming it
    throw bad_request("task '" + *r.task +
                          "' is not supported by this server: the model serves the " + task +
                          " task",
                      "task");
  engine::PoolingParams pp;
  pp.type = pooler.type;
  // A classifier pools the raw hidden state: its head and activation come after.
  pp.normalize = !classify && r.use_activation.value_or(pooler.normalize);
  pp.dimensions = classify ? 0 : r.dimensions > 0 ? r.dimensions : pooler.dimensions;
  if (r.dimensions > 0 && classify)
    throw bad_request("dimensions: a classification model has no embedding dimensions",
                      "dimensions");
  if (r.dimensions > 0) {  // vLLM's PoolingParams._set_default_parameters, in its words
    const std::string name = o.model_name;
    if (!pooler.is_matryoshka)
      throw bad_request("Model '" + name +
                            "' does not support Matryoshka embeddings; dimensions must be unset "
                            "(received dimensions=" +
                            std::to_string(r.dimensions) + ").",
                        "dimensions");
    if (r.dimensions > pooler.hidden_size)
      throw bad_request("Model '" + name + "' only supports dimensions in range [1, " +
                            std::to_string(pooler.hidden_size) + "], got " +
                            std::to_string(r.dimensions) + ".",
                        "dimensions");
    const auto& mds = pooler.matryoshka_dimensions;
    if (!mds.empty() && std::find(mds.begin(), mds.end(), r.dimensions) == mds.end()) {
      std::string list;
      for (int32_t d : mds) list += (list.empty() ? "" : ", ") + std::to_string(d);
      throw bad_request("Model '" + name + "' only supports Matryoshka dimensions [" + list +
                            "], got " + std::to_string(r.dimensions) + ".",
                        "dimensions");
    }
  }

  // Tokenize every input first: a bad one is a 400 before anything runs.
  const LLM& llm = ctx.llm;
  const int32_t max_len = o.max_model_len;
  GenerationRequest trunc;  // request_inputs' truncation rules, shared with generation
  trunc.truncate_prompt_tokens = r.truncate_prompt_tokens;
  trunc.truncate_left = r.truncate_left;
  std::vector<std::vector<int32_t>> prompts;
  if (!r.conversations.empty()) {
    for (const ojson& conv : r.conversations) {
      const std::string text =
          render_chat(llm, conv, ojson(), r.add_generation_prompt, r.chat_template_kwargs,
                      r.chat_template, o.trust_request_chat_template, r.continue_final_message);
      prompts.push_back(encode_truncatable(llm, text, r.add_special_tokens.value_or(false), trunc,
                                           max_len, "messages"));
    }
  } else if (r.inputs_are_ids) {
    prompts = r.token_ids;
  } else {
    for (const std::string& t : r.texts)
      prompts.push_back(
          encode_truncatable(llm, t, r.add_special_tokens.value_or(true), trunc, max_len, "input"));
  }
  const int64_t prompt_tokens = check_pooling_prompts(prompts, trunc, max_len, "input");

  engine::SamplingParams sp;
  sp.pooling = pp;
  sp.cache_salt = r.cache_salt;
  sp.lora_id = o.lora_id;
  const std::string id_prefix = r.api == PoolingApi::kPooling    ? "pool-"
                                : r.api == PoolingApi::kClassify ? "classify-"
                                                                 : "embd-";
  const std::string prefix = random_id(id_prefix);
  std::vector<std::vector<float>> vectors =
      run_pooling(ctx, prompts, sp, r.priority, prefix, client_gone);
  if (classify)  // the head and its activation (vLLM's ClassifierPooler)
    for (auto& v : vectors) v = pooler.classify(v, r.use_activation.value_or(pooler.normalize));

  json data = json::array();
  for (size_t k = 0; k < vectors.size(); ++k) {
    if (r.api == PoolingApi::kClassify) {  // vLLM's ClassificationData
      const auto& p = vectors[k];
      const size_t best = std::max_element(p.begin(), p.end()) - p.begin();
      data.push_back({{"index", k},
                      {"label", pooler.labels[best].empty() ? json() : json(pooler.labels[best])},
                      {"probs", p},
                      {"num_classes", p.size()}});
      continue;
    }
    json e = r.encoding_format == "base64"
                 ? json(encode_base64(vectors[k], r.embed_dtype, r.endianness))
                 : json(vectors[k]);
    if (r.api == PoolingApi::kPooling)
      data.push_back({{"index", k}, {"object", "pooling"}, {"data", std::move(e)}});
    else
      data.push_back({{"index", k}, {"object", "embedding"}, {"embedding", std::move(e)}});
  }
  return pooling_list_response(r.request_id ? id_prefix + *r.request_id : prefix, o.model_name,
                               std::move(data), prompt_tokens);
}

int64_t check_pooling_prompts(std::vector<std::vector<int32_t>>& prompts,
                              const GenerationRequest& trunc, int32_t max_len, const char* field) {
  int64_t prompt_tokens = 0;
  for (auto& ids : prompts) {
    truncate_prompt(ids, trunc, max_len);
    if (ids.empty()) throw bad_request(std::string("an ") + field + " has no tokens", field);
    if (static_cast<int64_t>(ids.size()) > max_len)
      throw bad_request("This model's maximum context length is " + std::to_string(max_len) +
                            " tokens. However, you requested " + std::to_string(ids.size()) +
                            " tokens in the input for embedding generation. Please reduce the "
                            "length of the input.",
                        field);
    prompt_tokens += static_cast<int64_t>(ids.size());
  }
  return prompt_tokens;
}

std::vector<std::vector<float>> run_pooling(ServingContext& ctx,
                                            const std::vector<std::vector<int32_t>>& prompts,
                                            const engine::SamplingParams& sp, int64_t priority,
                                            const std::string& prefix,
                                            const std::function<bool()>& client_gone) {
  // Submit, wait for admission, collect; whatever is left running is aborted on the way out.
  struct Job {
    std::string id;
    std::shared_ptr<engine::RequestStream> stream;
    std::vector<float> embedding;
    bool done = false;
  };
  std::vector<Job> jobs(prompts.size());
  struct Aborter {
    ServingContext& ctx;
    std::vector<Job>& jobs;
    ~Aborter() {
      for (Job& j : jobs)
        if (j.stream && !j.done) ctx.engine.abort(j.id);
    }
  } aborter{ctx, jobs};
  for (size_t k = 0; k < prompts.size(); ++k) {
    jobs[k].id = prefix + "-" + std::to_string(k);
    try {
      ctx.engine.check_admission(1);
      jobs[k].stream = ctx.engine.add_request(jobs[k].id, prompts[k], sp, priority);
    } catch (const engine::EngineOverloaded& e) {
      throw ApiError(503, e.what());
    } catch (const engine::EngineStopped& e) {
      throw ApiError(503, e.what());
    }
  }
  for (Job& j : jobs) {
    const std::string err = j.stream->wait_admitted();
    if (!err.empty()) {
      j.done = true;
      throw bad_request(err);
    }
  }
  for (Job& j : jobs) {
    engine::RequestOutput out;
    while (!j.done) {
      if (client_gone && client_gone()) throw ApiError(499, "client closed the connection");
      const auto res = j.stream->pop(out, std::chrono::milliseconds(100));
      if (res == engine::RequestStream::PopResult::kClosed) {
        j.done = true;
        throw ApiError(500, "the engine closed an embedding request without a result");
      }
      if (res != engine::RequestStream::PopResult::kOutput) continue;
      if (!out.error.empty()) {
        j.done = true;
        throw ApiError(500, out.error);
      }
      if (out.finished) {
        j.done = true;
        if (out.finish_reason == "abort") throw ApiError(500, "embedding request aborted");
        j.embedding = std::move(out.embedding);
      }
    }
  }
  std::vector<std::vector<float>> vectors;
  vectors.reserve(jobs.size());
  for (Job& j : jobs) vectors.push_back(std::move(j.embedding));
  return vectors;
}

}  // namespace vllm::api
