// ServerMetrics over prometheus-cpp's registry and text serializer.
#include "api/server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <sstream>

namespace vllm::api {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

ServerMetrics::ServerMetrics(const std::string& model_name)
    : model_(model_name), registry_(std::make_shared<prometheus::Registry>()) {
  const prometheus::Labels l = {{"model_name", model_}};
  auto& reg = *registry_;
  running_ = &BuildGauge()
                  .Name("vllm:num_requests_running")
                  .Help("Number of requests in the model execution batch.")
                  .Register(reg)
                  .Add(l);
  waiting_ = &BuildGauge()
                  .Name("vllm:num_requests_waiting")
                  .Help("Number of requests waiting to be processed.")
                  .Register(reg)
                  .Add(l);
  kv_usage_ = &BuildGauge()
                   .Name("vllm:kv_cache_usage_perc")
                   .Help("KV-cache usage. 1 means 100 percent usage.")
                   .Register(reg)
                   .Add(l);
  kv_resident_ = &BuildGauge()
                      .Name("vllmcpp:kv_cache_resident_bytes")
                      .Help(
                          "Bytes of the KV cache's pages in memory (the cache is mapped lazily, "
                          "so pages are committed as blocks are first written). Not a vLLM "
                          "metric.")
                      .Register(reg)
                      .Add(l);
  prompt_tokens_ = &BuildCounter()
                        .Name("vllm:prompt_tokens_total")
                        .Help("Number of prefill tokens processed.")
                        .Register(reg)
                        .Add(l);
  generation_tokens_ = &BuildCounter()
                            .Name("vllm:generation_tokens_total")
                            .Help("Number of generation tokens processed.")
                            .Register(reg)
                            .Add(l);
  preemptions_ = &BuildCounter()
                      .Name("vllm:num_preemptions_total")
                      .Help("Cumulative number of preemptions from the engine.")
                      .Register(reg)
                      .Add(l);
  prefix_queries_ = &BuildCounter()
                         .Name("vllm:prefix_cache_queries_total")
                         .Help("Prefix cache queries, in tokens.")
                         .Register(reg)
                         .Add(l);
  prefix_hits_ = &BuildCounter()
                      .Name("vllm:prefix_cache_hits_total")
                      .Help("Prefix cache hits, in tokens.")
                      .Register(reg)
                      .Add(l);
  success_ = &BuildCounter()
                  .Name("vllm:request_success_total")
                  .Help("Count of successfully processed requests.")
                  .Register(reg);
  for (const char* r : {"stop", "length", "abort"})
    success_->Add({{"model_name", model_}, {"finished_reason", r}});
  admission_rejections_ =
      &BuildCounter()
           .Name("vllm:admission_rejections_total")
           .Help("Number of admission attempts rejected by a queue limit, by reason.")
           .Register(reg);
  for (const char* r : {"max_num_queued_reqs", "max_num_queued_tokens"})
    admission_rejections_->Add({{"model_name", model_}, {"reason", r}});
  const prometheus::Histogram::BucketBoundaries ttft_b = {
      0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
      1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  const prometheus::Histogram::BucketBoundaries itl_b = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                                         0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                                         7.5,  10.0,  20.0, 40.0,  80.0};
  const prometheus::Histogram::BucketBoundaries e2e_b = {
      0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
      30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  ttft_ = &BuildHistogram()
               .Name("vllm:time_to_first_token_seconds")
               .Help("Histogram of time to first token in seconds.")
               .Register(reg)
               .Add(l, ttft_b);
  itl_ = &BuildHistogram()
              .Name("vllm:inter_token_latency_seconds")
              .Help("Histogram of inter-token latency in seconds.")
              .Register(reg)
              .Add(l, itl_b);
  e2e_ = &BuildHistogram()
              .Name("vllm:e2e_request_latency_seconds")
              .Help("Histogram of e2e request latency in seconds.")
              .Register(reg)
              .Add(l, e2e_b);
}

ServerMetrics::~ServerMetrics() = default;

void ServerMetrics::on_first_token(double s) { ttft_->Observe(s); }
void ServerMetrics::on_inter_token(double s) { itl_->Observe(s); }

void ServerMetrics::on_finished(const engine::RequestOutput& o, double e2e_s) {
  e2e_->Observe(e2e_s);
  success_->Add({{"model_name", model_}, {"finished_reason", o.finish_reason}}).Increment();
}

void ServerMetrics::on_admission_rejected(const char* reason) {
  admission_rejections_->Add({{"model_name", model_}, {"reason", reason}}).Increment();
}

void ServerMetrics::enable_lora_info(int32_t max_loras, std::vector<std::string> names_by_id) {
  std::lock_guard<std::mutex> lk(mu_);
  max_loras_ = std::to_string(max_loras);
  lora_names_ = std::move(names_by_id);
  lora_info_ = &prometheus::BuildGauge()
                    .Name("vllm:lora_requests_info")
                    .Help("Running stats on lora requests.")
                    .Register(*registry_);
}

std::string ServerMetrics::render(const engine::EngineMetrics& m) {
  std::lock_guard<std::mutex> lk(mu_);
  if (lora_info_) {
    auto names = [this](const std::vector<int32_t>& ids) {
      std::string s;
      for (int32_t id : ids)
        if (id > 0 && id < static_cast<int32_t>(lora_names_.size()))
          s += (s.empty() ? "" : ",") + lora_names_[id];
      return s;
    };
    lora_info_
        ->Add({{"max_lora", max_loras_},
               {"waiting_lora_adapters", names(m.waiting_loras)},
               {"running_lora_adapters", names(m.running_loras)}})
        .Set(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                 .count());
  }
  running_->Set(static_cast<double>(m.num_requests_running));
  waiting_->Set(static_cast<double>(m.num_requests_waiting));
  kv_usage_->Set(m.kv_cache_usage);
  kv_resident_->Set(static_cast<double>(m.kv_cache_resident_bytes));
  auto bump = [](prometheus::Counter* c, int64_t now, int64_t before) {
    if (now > before) c->Increment(static_cast<double>(now - before));
  };
  bump(prompt_tokens_, m.prompt_tokens_total, last_.prompt_tokens_total);
  bump(generation_tokens_, m.generation_tokens_total, last_.generation_tokens_total);
  bump(preemptions_, m.num_preemptions_total, last_.num_preemptions_total);
  bump(prefix_queries_, m.prefix_cache_queries, last_.prefix_cache_queries);
  bump(prefix_hits_, m.prefix_cache_hits, last_.prefix_cache_hits);
  last_ = m;
  std::ostringstream os;
  prometheus::TextSerializer().Serialize(os, registry_->Collect());
  return os.str();
}

}  // namespace vllm::api
