// `vllm bench serve`: the online benchmark of a running server, as vLLM's: random prompts
// (--dataset-name random, exact token lengths), sent as streaming completions (or, with
// --backend openai-embeddings, as /v1/embeddings requests timed end to end; with
// --backend vllm-rerank and --dataset-name random-rerank, as /rerank requests of one query and
// --random-batch-size documents) at
// --request-rate (a Poisson process, or a gamma one with --burstiness) with at most
// --max-concurrency in flight; reports request and token throughput and TTFT / TPOT / ITL
// mean, median and percentiles in vLLM's layout. All transfers run on one thread through
// libcurl's multi interface, so every chunk's arrival is timed where it lands.
#include <curl/curl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "api/client/client_commands.h"
#include "api/client/http_client.h"

namespace vllm::client {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Text whose tokens make the pool random prompts are drawn from (valid ids for any model).
constexpr const char* kPoolText =
    "The history of science is the study of the development of science and scientific "
    "knowledge, including both the natural and social sciences. Science is a body of empirical, "
    "theoretical, and practical knowledge about the natural world, produced by scientists who "
    "emphasize the observation, explanation, and prediction of real-world phenomena. Rivers, "
    "mountains, cities and oceans; numbers 0 1 2 3 4 5 6 7 8 9; music, painting, poetry, "
    "mathematics, chemistry, biology, physics, astronomy, geology, medicine and engineering all "
    "grew over thousands of years in many places around the world.";

struct Request {
  std::vector<int32_t> prompt;
  std::vector<std::string> rerank;  // random-rerank: the query, then the documents
  int output_len = 0;
  double send_at = 0;  // seconds after the start
};

struct Outcome {
  bool ok = false;
  std::string error;
  int prompt_len = 0;
  int output_tokens = 0;
  double ttft = 0, latency = 0;
  std::vector<double> itl;
};

struct Transfer {
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;
  std::string body, raw;
  std::unique_ptr<SseParser> sse;
  Clock::time_point start, last;
  bool got_first = false;
  bool pooling = false;  // a pooling request: the whole body is read, not streamed
  int chunks = 0;
  size_t index = 0;
  Outcome out;
};

size_t on_bytes(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300 && !t->pooling)
    t->sse->feed(p, size * n);
  else
    t->raw.append(p, size * n);
  return size * n;
}

// numpy.percentile's default (linear interpolation between closest ranks).
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * double(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

std::string fmt_num(double v) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.2f", v);
  return b;
}

void line(const std::string& k, const std::string& v) {
  std::printf("%-40s %-10s\n", k.c_str(), v.c_str());
}

void header(const std::string& title, char fill) {
  const int width = 50;
  const int pad = width - static_cast<int>(title.size());
  const int left = pad / 2, right = pad - left;
  std::printf("%s%s%s\n", std::string(std::max(left, 0), fill).c_str(), title.c_str(),
              std::string(std::max(right, 0), fill).c_str());
}

}  // namespace

int cmd_bench_serve(int argc, char** argv) {
  CLI::App app{"vllm bench serve: online benchmark of a running OpenAI-compatible server"};
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string base_url, host = "127.0.0.1", endpoint = "/v1/completions", model, api_key;
  std::string backend = "vllm", dataset = "random", result_file, result_dir;
  std::string percentile_metrics, metric_percentiles = "99", request_rate_s;
  int port = 8000, num_prompts = 1000, input_len = 1024, output_len = 128, prefix_len = 0;
  int max_concurrency = 0;
  double range_ratio = 0.0, burstiness = 1.0;
  uint64_t seed = 0;
  bool ignore_eos = false, save_result = false, disable_tqdm = false, no_reranker = false;
  int batch_size = 1;
  app.add_option("--backend", backend,
                 "vllm or openai (both: /v1/completions), openai-embeddings (/v1/embeddings), or "
                 "vllm-rerank (/rerank)")
      ->check(CLI::IsMember({"vllm", "openai", "openai-embeddings", "vllm-rerank"}));
  app.add_option("--base-url", base_url, "server URL (default http://HOST:PORT)");
  app.add_option("--host", host, "server host");
  app.add_option("--port", port, "server port");
  app.add_option("--endpoint", endpoint, "the API path")
      ->check(CLI::IsMember(
          {"/v1/completions", "/v1/embeddings", "/rerank", "/v1/rerank", "/v2/rerank"}));
  app.add_option("--model", model, "model name (default: the first of /v1/models)");
  app.add_option("--api-key", api_key, "API key (default: $OPENAI_API_KEY)");
  app.add_option("--dataset-name", dataset, "prompt source (random-rerank: for vllm-rerank)")
      ->check(CLI::IsMember({"random", "random-rerank"}));
  app.add_option("--random-batch-size", batch_size, "random-rerank: documents per request")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-reranker", no_reranker,
               "random-rerank: the model is not a reranker (no separator tokens counted)");
  app.add_option("--random-input-len", input_len, "prompt tokens per request");
  app.add_option("--random-output-len", output_len, "max_tokens per request");
  app.add_option("--random-range-ratio", range_ratio,
                 "lengths drawn uniformly within +-ratio of the above");
  app.add_option("--random-prefix-len", prefix_len, "tokens of a prefix every prompt shares");
  app.add_option("--num-prompts", num_prompts, "requests to send")->check(CLI::PositiveNumber);
  app.add_option("--max-concurrency", max_concurrency, "most requests in flight (0: no limit)");
  app.add_option("--request-rate", request_rate_s, "requests per second (inf: all at once)");
  app.add_option("--burstiness", burstiness, "gamma shape of the arrival process (1: Poisson)");
  app.add_option("--seed", seed, "seed of the prompts and arrival times");
  app.add_flag("--ignore-eos", ignore_eos, "generate --random-output-len tokens every time");
  app.add_option("--percentile-metrics", percentile_metrics,
                 "comma list of ttft,tpot,itl,e2el (default: ttft,tpot,itl; embeddings: e2el)");
  app.add_option("--metric-percentiles", metric_percentiles, "comma list of percentiles");
  app.add_flag("--save-result", save_result, "write the results as JSON");
  app.add_option("--result-dir", result_dir, "folder for --save-result");
  app.add_option("--result-filename", result_file, "file name for --save-result");
  app.add_flag("--disable-tqdm", disable_tqdm, "accepted (there is no progress bar)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // vLLM's pooling backends: end-to-end latency only, its URL checks in its words.
  const bool rerank = backend == "vllm-rerank";
  const bool pooling = backend == "openai-embeddings" || rerank;
  const bool rerank_url = endpoint.find("rerank") != std::string::npos;
  if (backend == "openai-embeddings" && endpoint != "/v1/embeddings")
    throw std::invalid_argument("OpenAI Embeddings API URL must end with 'embeddings'.");
  if (rerank && !rerank_url)
    throw std::invalid_argument("vLLM score API URL must end with one of: {'rerank'}.");
  if (!pooling && (endpoint == "/v1/embeddings" || rerank_url))
    throw std::invalid_argument(
        "OpenAI Completions API URL must end with 'completions' or 'profile'.");
  if (rerank != (dataset == "random-rerank"))
    throw std::invalid_argument(
        "--backend vllm-rerank and --dataset-name random-rerank go together (a request is one "
        "query and its documents)");
  if (percentile_metrics.empty()) percentile_metrics = pooling ? "e2el" : "ttft,tpot,itl";
  double request_rate = std::numeric_limits<double>::infinity();
  if (!request_rate_s.empty() && request_rate_s != "inf") request_rate = std::stod(request_rate_s);
  if (!(request_rate > 0)) throw std::invalid_argument("--request-rate must be > 0 or inf");
  if (!(burstiness > 0)) throw std::invalid_argument("--burstiness must be > 0");
  if (range_ratio < 0 || range_ratio >= 1)
    throw std::invalid_argument("--random-range-ratio must be in [0, 1)");
  if (base_url.empty()) base_url = "http://" + host + ":" + std::to_string(port);
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  if (base_url.size() >= 3 && base_url.substr(base_url.size() - 3) == "/v1")
    base_url.resize(base_url.size() - 3);
  if (api_key.empty())
    if (const char* k = std::getenv("OPENAI_API_KEY")) api_key = k;
  const Endpoint v1{base_url + "/v1", api_key}, root{base_url, api_key};
  if (model.empty()) model = first_model(v1);

  // The token pool: the server's own tokenization of kPoolText.
  const HttpResult tok = http_post_json(
      root, "/tokenize", {{"model", model}, {"prompt", kPoolText}, {"add_special_tokens", false}});
  if (tok.status != 200)
    throw std::runtime_error("POST /tokenize: HTTP " + std::to_string(tok.status) + ": " +
                             error_message(tok.body));
  std::vector<int32_t> pool = json::parse(tok.body)["tokens"].get<std::vector<int32_t>>();
  std::sort(pool.begin(), pool.end());
  pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
  if (pool.empty()) throw std::runtime_error("/tokenize returned no tokens");

  std::mt19937_64 rng(seed);
  auto draw_len = [&](int n) {
    const int lo = static_cast<int>(std::floor(n * (1.0 - range_ratio)));
    const int hi = static_cast<int>(std::ceil(n * (1.0 + range_ratio)));
    return std::max(1, lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  };
  std::vector<int32_t> prefix(prefix_len);
  for (auto& t : prefix) t = pool[rng() % pool.size()];
  std::vector<Request> reqs(rerank ? (num_prompts + batch_size - 1) / batch_size : num_prompts);
  double t = 0;
  std::gamma_distribution<double> gap(burstiness, 1.0 / (request_rate * burstiness));
  for (Request& r : reqs) {
    r.prompt = prefix;
    const int n = draw_len(input_len);
    for (int i = 0; i < n; ++i) r.prompt.push_back(pool[rng() % pool.size()]);
    r.output_len = draw_len(output_len);
    r.send_at = t;
    if (std::isfinite(request_rate)) t += gap(rng);
  }
  if (rerank) {
    // vLLM's RandomDatasetForReranking: one query of about half --random-input-len (less a
    // separator token for a reranker), and --num-prompts documents of the rest, --random-batch-
    // size of them per request; as text (the server's detokenization of random ids).
    auto text = [&](int n) {
      std::vector<int32_t> ids(static_cast<size_t>(std::max(n, 1)));
      for (auto& id : ids) id = pool[rng() % pool.size()];
      const HttpResult d = http_post_json(root, "/detokenize", {{"model", model}, {"tokens", ids}});
      if (d.status != 200)
        throw std::runtime_error("POST /detokenize: HTTP " + std::to_string(d.status) + ": " +
                                 error_message(d.body));
      return json::parse(d.body).value("prompt", std::string());
    };
    const int sep = no_reranker ? 0 : 1;
    const int query_len = draw_len(std::max(1, input_len / 2 - sep));
    const std::string query = text(query_len);
    for (int k = 0; k < num_prompts; ++k) {
      Request& r = reqs[k / batch_size];
      if (r.rerank.empty()) r.rerank.push_back(query);
      r.rerank.push_back(text(draw_len(std::max(1, input_len - query_len - sep))));
    }
  }

  std::printf("Traffic request rate: %s\n",
              std::isfinite(request_rate) ? fmt_num(request_rate).c_str() : "inf");
  std::printf("Burstiness factor: %s (%s)\n", fmt_num(burstiness).c_str(),
              burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
  std::printf("Maximum request concurrency: %s\n",
              max_concurrency > 0 ? std::to_string(max_concurrency).c_str() : "None");
  std::fflush(stdout);

  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURLM* multi = curl_multi_init();
  std::vector<std::unique_ptr<Transfer>> transfers(reqs.size());
  std::vector<Outcome> outcomes(reqs.size());
  const std::string url = base_url + endpoint;
  const Clock::time_point t0 = Clock::now();
  auto since = [&](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  size_t next = 0, active = 0, done = 0;
  auto launch = [&](size_t i) {
    auto tr = std::make_unique<Transfer>();
    Transfer* x = tr.get();
    x->index = i;
    x->out.prompt_len = static_cast<int>(reqs[i].prompt.size());
    x->pooling = pooling;
    // vLLM's pooling requests: truncate_prompt_tokens -1 so a short context drops nothing.
    const auto& rr = reqs[i].rerank;
    json body =
        rerank ? json{{"model", model},
                      {"query", rr.front()},
                      {"documents", std::vector<std::string>(rr.begin() + 1, rr.end())},
                      {"truncate_prompt_tokens", -1}}
        : pooling
            ? json{{"model", model}, {"input", reqs[i].prompt}, {"truncate_prompt_tokens", -1}}
            : json{{"model", model},
                   {"prompt", reqs[i].prompt},
                   {"max_tokens", reqs[i].output_len},
                   {"temperature", 0.0},
                   {"stream", true},
                   {"stream_options", {{"include_usage", true}}},
                   {"ignore_eos", ignore_eos}};
    x->body = body.dump();
    x->sse = std::make_unique<SseParser>([x](const std::string& data) {
      if (data == "[DONE]") return;
      json j;
      try {
        j = json::parse(data);
      } catch (const std::exception&) {
        return;
      }
      if (j.contains("error")) {
        x->out.error = j["error"].value("message", std::string("error event"));
        return;
      }
      if (j.contains("usage") && j["usage"].is_object())
        x->out.output_tokens = j["usage"].value("completion_tokens", 0);
      if (!j.contains("choices") || j["choices"].empty()) return;
      const std::string text = j["choices"][0].value("text", std::string());
      if (text.empty()) return;
      const Clock::time_point now = Clock::now();
      if (!x->got_first) {
        x->out.ttft = std::chrono::duration<double>(now - x->start).count();
        x->got_first = true;
      } else {
        x->out.itl.push_back(std::chrono::duration<double>(now - x->last).count());
      }
      x->last = now;
      ++x->chunks;
    });
    x->curl = curl_easy_init();
    x->headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (!api_key.empty())
      x->headers = curl_slist_append(x->headers, ("Authorization: Bearer " + api_key).c_str());
    curl_easy_setopt(x->curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(x->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->curl, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(x->curl, CURLOPT_POSTFIELDS, x->body.c_str());
    curl_easy_setopt(x->curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(x->body.size()));
    curl_easy_setopt(x->curl, CURLOPT_WRITEFUNCTION, on_bytes);
    curl_easy_setopt(x->curl, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->curl, CURLOPT_PRIVATE, x);
    x->start = Clock::now();
    curl_multi_add_handle(multi, x->curl);
    transfers[i] = std::move(tr);
    ++active;
  };
  Clock::time_point last_done = t0;
  while (done < reqs.size()) {
    const double now = since(t0, Clock::now());
    while (next < reqs.size() && reqs[next].send_at <= now &&
           (max_concurrency <= 0 || active < static_cast<size_t>(max_concurrency)))
      launch(next++);
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Transfer* x = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &x);
      long status = 0;
      curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &status);
      Outcome& o = x->out;
      o.latency = since(x->start, Clock::now());
      if (m->data.result != CURLE_OK)
        o.error = curl_easy_strerror(m->data.result);
      else if (status < 200 || status >= 300)
        o.error = "HTTP " + std::to_string(status) + ": " + error_message(x->raw);
      else if (x->pooling) {  // the answer's usage counts the prompt tokens; no output tokens
        o.ttft = o.latency;
        try {
          o.prompt_len = json::parse(x->raw)["usage"].value("prompt_tokens", 0);
        } catch (const std::exception& e) {
          o.error = std::string("unreadable pooling response: ") + e.what();
        }
      } else if (!x->got_first && o.error.empty())
        o.error = "no tokens in the response";
      if (o.output_tokens == 0 && !x->pooling) o.output_tokens = x->chunks;
      o.ok = o.error.empty();
      outcomes[x->index] = o;
      curl_multi_remove_handle(multi, x->curl);
      curl_easy_cleanup(x->curl);
      curl_slist_free_all(x->headers);
      transfers[x->index].reset();
      --active;
      ++done;
      last_done = Clock::now();
    }
    // Sleep until a transfer has data or the next request is due.
    int wait_ms = 50;
    if (next < reqs.size() && (max_concurrency <= 0 || active < size_t(max_concurrency)))
      wait_ms =
          std::clamp(static_cast<int>((reqs[next].send_at - since(t0, Clock::now())) * 1e3), 0, 50);
    if (active > 0)
      curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
    else if (wait_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
  curl_multi_cleanup(multi);
  curl_global_cleanup();

  const double duration = since(t0, last_done);
  int completed = 0;
  int64_t inputs = 0;  // pooling: the sequences encoded (a rerank request's documents)
  int64_t total_in = 0, total_out = 0;
  std::vector<double> ttfts, tpots, itls, e2els;
  std::vector<std::string> errors;
  for (const Outcome& o : outcomes) {
    if (!o.ok) {
      errors.push_back(o.error);
      continue;
    }
    ++completed;
    inputs += rerank ? static_cast<int64_t>(reqs[&o - outcomes.data()].rerank.size()) - 1 : 1;
    total_in += o.prompt_len;
    total_out += o.output_tokens;
    ttfts.push_back(o.ttft * 1e3);
    e2els.push_back(o.latency * 1e3);
    if (o.output_tokens > 1) tpots.push_back((o.latency - o.ttft) / (o.output_tokens - 1) * 1e3);
    for (double v : o.itl) itls.push_back(v * 1e3);
  }
  std::vector<double> pcts;
  {
    std::stringstream ss(metric_percentiles);
    std::string item;
    while (std::getline(ss, item, ',')) pcts.push_back(std::stod(item));
  }
  std::set<std::string> shown;
  {
    std::stringstream ss(percentile_metrics);
    std::string item;
    while (std::getline(ss, item, ',')) shown.insert(item);
  }
  if (!errors.empty())
    std::fprintf(stderr, "%zu of %zu requests failed; first error: %s\n", errors.size(),
                 reqs.size(), errors[0].c_str());
  header(" Serving Benchmark Result ", '=');
  line("Successful requests:", std::to_string(completed));
  if (max_concurrency > 0) line("Maximum request concurrency:", std::to_string(max_concurrency));
  if (std::isfinite(request_rate)) line("Request rate configured (RPS):", fmt_num(request_rate));
  line("Benchmark duration (s):", fmt_num(duration));
  line("Total input tokens:", std::to_string(total_in));
  if (!pooling) line("Total generated tokens:", std::to_string(total_out));
  const double req_tp = duration > 0 ? completed / duration : 0;
  const double out_tp = duration > 0 ? double(total_out) / duration : 0;
  const double tot_tp = duration > 0 ? double(total_in + total_out) / duration : 0;
  line("Request throughput (req/s):", fmt_num(req_tp));
  // vLLM's pooling report: an embeddings request is one input, a rerank request its documents.
  const double in_tp = duration > 0 ? double(inputs) / duration : 0;
  if (pooling) line("Input throughput (inputs/s):", fmt_num(in_tp));
  if (!pooling) line("Output token throughput (tok/s):", fmt_num(out_tp));
  line("Total Token throughput (tok/s):", fmt_num(tot_tp));
  json result = {{"date", std::time(nullptr)},
                 {"backend", backend},
                 {"model_id", model},
                 {"num_prompts", num_prompts},
                 {"request_rate", std::isfinite(request_rate) ? json(request_rate) : json("inf")},
                 {"burstiness", burstiness},
                 {"max_concurrency", max_concurrency > 0 ? json(max_concurrency) : json(nullptr)},
                 {"duration", duration},
                 {"completed", completed},
                 {"total_input_tokens", total_in},
                 {"total_output_tokens", total_out},
                 {"request_throughput", req_tp},
                 {"output_throughput", out_tp},
                 {"total_token_throughput", tot_tp},
                 {"errors", errors}};
  if (pooling) {
    result["total_input_sequences"] = inputs;
    result["input_sequence_throughput"] = in_tp;
  }
  struct Metric {
    const char* key;
    const char* title;
    const char* name;
    const std::vector<double>* v;
  };
  for (const Metric& m : {Metric{"ttft", "Time to First Token", "TTFT", &ttfts},
                          Metric{"tpot", "Time per Output Token (excl. 1st token)", "TPOT", &tpots},
                          Metric{"itl", "Inter-token Latency", "ITL", &itls},
                          Metric{"e2el", "End-to-end Latency", "E2EL", &e2els}}) {
    const std::string k = m.key;
    result["mean_" + k + "_ms"] = mean(*m.v);
    result["median_" + k + "_ms"] = percentile(*m.v, 50);
    for (double p : pcts) {
      char pk[32];
      std::snprintf(pk, sizeof(pk), "%g", p);
      result["p" + std::string(pk) + "_" + k + "_ms"] = percentile(*m.v, p);
    }
    if (!shown.count(k)) continue;
    header(m.title, '-');
    line(std::string("Mean ") + m.name + " (ms):", fmt_num(mean(*m.v)));
    line(std::string("Median ") + m.name + " (ms):", fmt_num(percentile(*m.v, 50)));
    for (double p : pcts) {
      char pk[32];
      std::snprintf(pk, sizeof(pk), "%g", p);
      line("P" + std::string(pk) + " " + m.name + " (ms):", fmt_num(percentile(*m.v, p)));
    }
  }
  header("", '=');
  std::fflush(stdout);
  if (save_result || !result_file.empty()) {
    std::string name = result_file;
    if (name.empty()) {
      char b[64];
      std::time_t now = std::time(nullptr);
      std::strftime(b, sizeof(b), "%Y%m%d-%H%M%S", std::localtime(&now));
      name = backend + "-inf-" + b + ".json";
    }
    if (!result_dir.empty()) name = result_dir + "/" + name;
    result["input_lens"] = json::array();
    result["output_lens"] = json::array();
    result["ttfts"] = json::array();
    result["itls"] = json::array();
    for (const Outcome& o : outcomes) {
      result["input_lens"].push_back(o.prompt_len);
      result["output_lens"].push_back(o.output_tokens);
      result["ttfts"].push_back(o.ttft);
      result["itls"].push_back(o.itl);
    }
    std::ofstream(name) << result.dump(2) << "\n";
  }
  return errors.empty() ? 0 : 1;
}

}  // namespace vllm::client
