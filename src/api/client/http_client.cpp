// libcurl easy-interface requests for the client commands.
#include "api/client/http_client.h"

#include <curl/curl.h>

#include <memory>
#include <stdexcept>

namespace vllm::client {

namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

void ensure_global() { static CurlGlobal g; }

size_t append_cb(char* p, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(p, size * n);
  return size * n;
}

struct Stream {
  SseParser* parser;
  std::string* raw;  // the body, kept for error statuses
  long status = 0;
  CURL* curl;
};

size_t stream_cb(char* p, size_t size, size_t n, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (s->status == 0) curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &s->status);
  if (s->status >= 200 && s->status < 300)
    s->parser->feed(p, size * n);
  else
    s->raw->append(p, size * n);
  return size * n;
}

using CurlPtr = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using HeaderPtr = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

CurlPtr make(const Endpoint& ep, const std::string& path, HeaderPtr& headers, bool json) {
  ensure_global();
  CurlPtr c(curl_easy_init(), curl_easy_cleanup);
  if (!c) throw std::runtime_error("libcurl: cannot create a handle");
  const std::string url = ep.base_url + path;
  curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
  curl_slist* h = nullptr;
  if (json) h = curl_slist_append(h, "Content-Type: application/json");
  if (!ep.api_key.empty())
    h = curl_slist_append(h, ("Authorization: Bearer " + ep.api_key).c_str());
  headers.reset(h);
  if (h) curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, h);
  return c;
}

void check(CURLcode rc, const std::string& url) {
  if (rc != CURLE_OK)
    throw std::runtime_error("cannot reach " + url + ": " + curl_easy_strerror(rc));
}

}  // namespace

std::string normalize_base_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() < 3 || url.substr(url.size() - 3) != "/v1") url += "/v1";
  return url;
}

void SseParser::feed(const char* p, size_t n) {
  buf_.append(p, n);
  size_t start = 0;
  for (;;) {
    const size_t end = buf_.find("\n\n", start);
    if (end == std::string::npos) break;
    // One event: its data lines (SSE allows several, joined by newlines).
    std::string data;
    bool has = false;
    size_t line = start;
    while (line < end) {
      size_t nl = buf_.find('\n', line);
      if (nl == std::string::npos || nl > end) nl = end;
      std::string l = buf_.substr(line, nl - line);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      if (l.rfind("data:", 0) == 0) {
        std::string v = l.substr(5);
        if (!v.empty() && v[0] == ' ') v.erase(0, 1);
        if (has) data += "\n";
        data += v;
        has = true;
      }
      line = nl + 1;
    }
    if (has) on_data_(data);
    start = end + 2;
  }
  buf_.erase(0, start);
}

HttpResult http_get(const Endpoint& ep, const std::string& path) {
  HeaderPtr headers(nullptr, curl_slist_free_all);
  CurlPtr c = make(ep, path, headers, false);
  HttpResult r;
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, append_cb);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &r.body);
  check(curl_easy_perform(c.get()), ep.base_url + path);
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

HttpResult http_post_json(const Endpoint& ep, const std::string& path, const nlohmann::json& body) {
  HeaderPtr headers(nullptr, curl_slist_free_all);
  CurlPtr c = make(ep, path, headers, true);
  const std::string data = body.dump();
  HttpResult r;
  curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, data.c_str());
  curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(data.size()));
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, append_cb);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &r.body);
  check(curl_easy_perform(c.get()), ep.base_url + path);
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

long http_stream(const Endpoint& ep, const std::string& path, const nlohmann::json& body,
                 const std::function<void(const std::string&)>& on_data, std::string* error_body) {
  HeaderPtr headers(nullptr, curl_slist_free_all);
  CurlPtr c = make(ep, path, headers, true);
  const std::string data = body.dump();
  SseParser parser(on_data);
  std::string raw;
  Stream s{&parser, &raw, 0, c.get()};
  curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, data.c_str());
  curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(data.size()));
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, stream_cb);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &s);
  check(curl_easy_perform(c.get()), ep.base_url + path);
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &s.status);
  if (error_body) *error_body = raw;
  return s.status;
}

std::string error_message(const std::string& body) {
  try {
    const auto j = nlohmann::json::parse(body);
    if (j.contains("error") && j["error"].contains("message"))
      return j["error"]["message"].get<std::string>();
  } catch (const std::exception&) {
  }
  return body;
}

std::string first_model(const Endpoint& ep) {
  const HttpResult r = http_get(ep, "/models");
  if (r.status != 200)
    throw std::runtime_error("GET " + ep.base_url + "/models: HTTP " + std::to_string(r.status) +
                             ": " + error_message(r.body));
  const auto j = nlohmann::json::parse(r.body);
  if (!j.contains("data") || j["data"].empty())
    throw std::runtime_error(ep.base_url + "/models lists no model");
  return j["data"][0]["id"].get<std::string>();
}

}  // namespace vllm::client
