// The Responses endpoints of OpenAIServer (openai_server.h): POST /v1/responses, whole,
// streamed or in the background, GET /v1/responses/{id} and POST /v1/responses/{id}/cancel
// (responses_api.h, responses_store.h, responses_background.h).
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "api/llm.h"
#include "api/server/openai_server.h"
#include "api/server/protocol.h"
#include "api/server/responses_api.h"
#include "api/server/responses_background.h"
#include "api/server/responses_store.h"
#include "api/server/server_replies.h"
#include "api/server/serving.h"

namespace vllm::api {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// vLLM's 404 for a response id the store does not hold.
ApiError response_not_found(const std::string& id) {
  return ApiError(404, "Response with id '" + id + "' not found.", "response_id");
}

// A background response's events as SSE, from index `from` on, as the job appends them (the
// client hanging up leaves the job running).
void replay_events(http::Response& res, std::shared_ptr<BackgroundJob> job, size_t from) {
  start_sse(res);
  res.stream = [job, from](http::StreamWriter& w) {
    job->replay(from, [&w](const std::string& e) { return w.write(e); });
  };
}
}  // namespace

// /v1/responses: the chat request it translates to (responses_api.h), its completion or
// stream translated back.
void OpenAIServer::handle_responses(const http::Request& req, http::Response& res) {
  ResponsesOptions ro;
  ro.auto_tools = cfg_.enable_auto_tool_choice;
  ro.store = responses_store_.get();
  auto call = std::make_shared<ResponsesCall>(responses_to_chat(parse_body(req.body), ro));
  const ojson& m = call->chat["model"];
  call->echo["model"] = m.is_string() ? m.get<std::string>() : names_.front();
  bool stream = false;
  std::shared_ptr<Generation> gen =
      start_generation(call->chat, req.header("x-request-id"), true, call->ignored, &stream);
  const int64_t created = static_cast<int64_t>(std::time(nullptr));
  TokenCounter count = [this](const std::string& s) {
    return static_cast<int64_t>(llm_.tokenizer().encode(s, false).size());
  };
  ResponsesStore* store = call->store ? responses_store_.get() : nullptr;
  if (call->background) {
    // vLLM's background mode: stored "queued" at once, run on a thread of its own whatever
    // the client does; the finished Response replaces the queued one unless it was cancelled
    // (handle_cancel_response), and a failure leaves it "failed". Streamed, this client (and
    // any GET ?stream=true) reads its events as the job appends them.
    const ojson messages = call->chat["messages"];
    const json queued = queued_response(*call, created);
    store->put(call->id, {messages, queued});
    auto finish = [store, call, messages](BackgroundJob& job, const json* done) {
      job.locked([&] {
        if (job.cancelled()) return;
        if (done) {
          store->put(call->id, {messages, *done});
        } else if (auto r = store->get(call->id)) {
          r->response["status"] = "failed";
          store->put(call->id, std::move(*r));
        }
      });
    };
    if (!stream) {
      background_->start(call->id, false, [gen, call, created, count, finish](BackgroundJob& j) {
        try {
          const json r = response_from_chat(gen->collect([&j] { return j.cancelled(); }), *call,
                                            created, count);
          finish(j, &r);
        } catch (...) {
          finish(j, nullptr);
        }
      });
      send_json(res, queued);
      return;
    }
    std::shared_ptr<BackgroundJob> job =
        background_->start(call->id, true, [gen, call, created, count, finish](BackgroundJob& j) {
          ResponsesStream rs(*call, created, count);
          try {
            j.append(rs.start());
            auto write = [&](const std::string& s) {
              j.append(rs.feed(s));
              return !j.cancelled();
            };
            while (gen->stream_step(write, 200ms)) {
            }
            gen->abort_all();  // a no-op unless cancelled
          } catch (...) {
          }
          finish(j, rs.final_response());
        });
    replay_events(res, job, 0);
    return;
  }
  if (!stream) {
    json r = response_from_chat(gen->collect([&req] { return req.client_gone(); }), *call, created,
                                count);
    if (store) store->put(call->id, {call->chat["messages"], r});
    send_json(res, r);
    return;
  }
  auto rs = std::make_shared<ResponsesStream>(*call, created, count);
  std::vector<std::string> first = rs->start();
  stream_generation(
      res, std::move(gen),
      [rs, call, store](const std::string& s) {
        std::vector<std::string> events = rs->feed(s);
        if (store && rs->final_response() && !events.empty())
          store->put(call->id, {call->chat["messages"], *rs->final_response()});
        return events;
      },
      std::move(first));
}

// GET /v1/responses/{id}: the stored Response (the store on, else 404); with ?stream=true a
// streamed background response's events after ?starting_after=N (vLLM's resumption).
void OpenAIServer::handle_get_response(const http::Request& req, http::Response& res) {
  const std::string id = req.path.substr(req.path.rfind('/') + 1);
  std::optional<StoredResponse> r = responses_store_ ? responses_store_->get(id) : std::nullopt;
  if (!r) throw response_not_found(id);
  const std::string* stream = req.query_arg("stream");
  if (!stream || *stream == "false" || *stream == "False" || *stream == "0") {
    send_json(res, r->response);
    return;
  }
  if (*stream != "true" && *stream != "True" && *stream != "1")
    throw bad_request("stream: '" + *stream + "' is not a boolean", "stream");
  int64_t after = -1;
  if (const std::string* a = req.query_arg("starting_after")) {
    char* end = nullptr;
    errno = 0;
    after = std::strtoll(a->c_str(), &end, 10);
    if (a->empty() || *end != '\0' || errno != 0 || after < -1)
      throw bad_request("starting_after: '" + *a + "' is not an event index", "starting_after");
  }
  std::shared_ptr<BackgroundJob> job = background_ ? background_->find(id) : nullptr;
  if (!job || !job->streamed()) throw bad_request("Unknown response_id: " + id, "response_id");
  replay_events(res, std::move(job), static_cast<size_t>(after + 1));
}

// POST /v1/responses/{id}/cancel: a queued background response becomes "cancelled" and its
// generation stops (vLLM's); a finished one is a 400, an unknown one a 404.
void OpenAIServer::handle_cancel_response(const http::Request& req, http::Response& res) {
  const std::string path = req.path.substr(0, req.path.rfind('/'));
  const std::string id = path.substr(path.rfind('/') + 1);
  if (!responses_store_) throw response_not_found(id);
  std::shared_ptr<BackgroundJob> job = background_->find(id);
  // Under the job's lock, so that its end (storing the finished Response) and this exclude
  // each other.
  std::optional<StoredResponse> r;
  bool cancelled = false;
  auto mark = [&] {
    r = responses_store_->get(id);
    if (!r) return;
    const json& st = r->response["status"];
    if (st != "queued" && st != "in_progress") return;
    r->response["status"] = "cancelled";
    responses_store_->put(id, *r);
    if (job) job->set_cancelled();
    cancelled = true;
  };
  if (job)
    job->locked(mark);
  else
    mark();
  if (!r) throw response_not_found(id);
  if (!cancelled) throw bad_request("Cannot cancel a synchronous response.", "response_id");
  background_->cancel(id);  // waits for the generation to stop
  send_json(res, r->response);
}

}  // namespace vllm::api
