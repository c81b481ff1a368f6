// `vllm chat` and `vllm complete`: interactive clients of a running server, as vLLM ships them
// (--url, --model-name, --api-key, chat's --system-prompt, -q/--quick for one message). Replies
// are streamed as they arrive; chat keeps the conversation, complete sends each line alone.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "api/client/client_commands.h"
#include "api/client/http_client.h"

namespace vllm::client {

namespace {

using nlohmann::json;

struct Common {
  std::string url = "http://localhost:8000/v1";
  std::string model;
  std::string api_key;
  std::string quick;
  std::optional<int> max_tokens;
  std::optional<double> temperature;

  void add(CLI::App& app) {
    app.add_option("--url", url, "the running OpenAI-compatible server (default " + url + ")");
    app.add_option("--model-name", model, "model to use (default: the first of /v1/models)");
    app.add_option("--api-key", api_key, "API key (default: $OPENAI_API_KEY)");
    app.add_option("-q,--quick", quick, "send this one message, print the reply and exit");
    app.add_option("--max-tokens", max_tokens, "most tokens per reply");
    app.add_option("--temperature", temperature, "sampling temperature (default: the server's)");
  }

  Endpoint endpoint() const {
    Endpoint ep{normalize_base_url(url), api_key};
    if (ep.api_key.empty())
      if (const char* k = std::getenv("OPENAI_API_KEY")) ep.api_key = k;
    if (ep.api_key.empty()) ep.api_key = "EMPTY";
    return ep;
  }

  void fill(json& body) const {
    body["stream"] = true;
    if (max_tokens) body["max_tokens"] = *max_tokens;
    if (temperature) body["temperature"] = *temperature;
  }
};

// Streams one request, printing each text delta; returns the whole text, or nullopt after
// printing the server's error.
std::optional<std::string> stream_reply(const Endpoint& ep, const std::string& path,
                                        const json& body, bool chat) {
  std::string text, stream_error;
  auto on_data = [&](const std::string& data) {
    if (data == "[DONE]") return;
    json j;
    try {
      j = json::parse(data);
    } catch (const std::exception&) {
      return;
    }
    if (j.contains("error")) {
      stream_error = j["error"].value("message", j["error"].dump());
      return;
    }
    if (!j.contains("choices") || j["choices"].empty()) return;
    const json& c = j["choices"][0];
    const json* piece = nullptr;
    if (chat && c.contains("delta") && c["delta"].contains("content"))
      piece = &c["delta"]["content"];
    else if (!chat && c.contains("text"))
      piece = &c["text"];
    if (piece && piece->is_string()) {
      const std::string s = piece->get<std::string>();
      text += s;
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
    }
  };
  std::string err;
  const long status = http_stream(ep, path, body, on_data, &err);
  if (status < 200 || status >= 300) {
    std::fprintf(stderr, "error: HTTP %ld: %s\n", status, error_message(err).c_str());
    return std::nullopt;
  }
  std::printf("\n");
  std::fflush(stdout);
  if (!stream_error.empty()) {
    std::fprintf(stderr, "error: %s\n", stream_error.c_str());
    return std::nullopt;
  }
  return text;
}

bool read_line(std::string& line) {
  std::printf("> ");
  std::fflush(stdout);
  return static_cast<bool>(std::getline(std::cin, line));
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  CLI::App app{"vllm chat: chat with a running server"};
  Common c;
  std::string system_prompt;
  c.add(app);
  app.add_option("--system-prompt", system_prompt, "a system message to start with");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const Endpoint ep = c.endpoint();
  const std::string model = c.model.empty() ? first_model(ep) : c.model;
  std::printf("Using model: %s\n", model.c_str());
  json messages = json::array();
  if (!system_prompt.empty()) messages.push_back({{"role", "system"}, {"content", system_prompt}});
  auto turn = [&](const std::string& user) -> bool {
    messages.push_back({{"role", "user"}, {"content", user}});
    json body = {{"model", model}, {"messages", messages}};
    c.fill(body);
    const auto reply = stream_reply(ep, "/chat/completions", body, true);
    if (!reply) {
      messages.erase(messages.end() - 1);  // the turn did not happen
      return false;
    }
    messages.push_back({{"role", "assistant"}, {"content", *reply}});
    return true;
  };
  if (!c.quick.empty()) return turn(c.quick) ? 0 : 1;
  std::string line;
  while (read_line(line)) turn(line);
  std::printf("\n");
  return 0;
}

int cmd_complete(int argc, char** argv) {
  CLI::App app{"vllm complete: complete prompts with a running server"};
  Common c;
  c.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const Endpoint ep = c.endpoint();
  const std::string model = c.model.empty() ? first_model(ep) : c.model;
  std::printf("Using model: %s\n", model.c_str());
  auto once = [&](const std::string& prompt) {
    json body = {{"model", model}, {"prompt", prompt}};
    c.fill(body);
    return stream_reply(ep, "/completions", body, false).has_value();
  };
  if (!c.quick.empty()) return once(c.quick) ? 0 : 1;
  std::string line;
  while (read_line(line)) once(line);
  std::printf("\n");
  return 0;
}

}  // namespace vllm::client
