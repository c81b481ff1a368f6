// Logprobs JSON shapes.
#include "api/server/logprobs_json.h"

#include <cmath>

namespace vllm::api {

using nlohmann::json;

double finite_logprob(float lp) { return std::isfinite(lp) ? lp : -9999.0; }

namespace {

json byte_list(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

}  // namespace

json completion_logprobs(const std::vector<LogprobEntry>& entries, size_t& text_offset,
                         const TokenLabel& label) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (const LogprobEntry& e : entries) {
    const std::string t = label(e.token_id);
    tokens.push_back(t);
    offsets.push_back(text_offset);
    text_offset += t.size();
    if (!e.lp) {
      token_lps.push_back(nullptr);
      tops.push_back(nullptr);
      continue;
    }
    token_lps.push_back(finite_logprob(e.lp->logprob));
    json top = json::object();
    for (const auto& [tid, tlp] : e.lp->top) top[label(tid)] = finite_logprob(tlp);
    if (!top.contains(t)) top[t] = finite_logprob(e.lp->logprob);
    tops.push_back(std::move(top));
  }
  return {{"text_offset", offsets},
          {"token_logprobs", token_lps},
          {"tokens", tokens},
          {"top_logprobs", tops}};
}

json chat_logprobs(const std::vector<engine::TokenLogprobs>& lps, const TokenLabel& label) {
  json content = json::array();
  for (const auto& lp : lps) {
    const std::string t = label(lp.token_id);
    json top = json::array();
    for (const auto& [tid, tlp] : lp.top) {
      const std::string tt = label(tid);
      top.push_back({{"token", tt}, {"logprob", finite_logprob(tlp)}, {"bytes", byte_list(tt)}});
    }
    content.push_back({{"token", t},
                       {"logprob", finite_logprob(lp.logprob)},
                       {"bytes", byte_list(t)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json prompt_logprobs(const std::vector<engine::TokenLogprobs>& lps, const TokenLabel& label) {
  json out = json::array({nullptr});
  for (const auto& lp : lps) {
    json entry = json::object();
    entry[std::to_string(lp.token_id)] = {{"logprob", finite_logprob(lp.logprob)},
                                          {"rank", lp.rank},
                                          {"decoded_token", label(lp.token_id)}};
    int32_t rank = 1;
    for (const auto& [tid, tlp] : lp.top) {
      const std::string key = std::to_string(tid);
      if (!entry.contains(key))
        entry[key] = {
            {"logprob", finite_logprob(tlp)}, {"rank", rank}, {"decoded_token", label(tid)}};
      ++rank;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace vllm::api
