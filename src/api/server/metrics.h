// Prometheus metrics for /metrics, named as vLLM's vllm:* metrics: request counts by finish
// reason, running/waiting requests, KV cache usage, prompt/generation token counters, TTFT,
// inter-token and end-to-end latency histograms. Latencies arrive from the engine thread
// (EngineStatsObserver); gauges and counters are refreshed from the engine snapshot per scrape.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/async_engine.h"

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace vllm::api {

class ServerMetrics : public engine::EngineStatsObserver {
 public:
  explicit ServerMetrics(const std::string& model_name);
  ~ServerMetrics() override;

  void on_first_token(double ttft_s) override;
  void on_inter_token(double itl_s) override;
  void on_finished(const engine::RequestOutput& final_out, double e2e_s) override;
  void on_admission_rejected(const char* reason) override;

  // vLLM's vllm:lora_requests_info (with --enable-lora): at each scrape, the current time under
  // the labels max_lora, running_lora_adapters and waiting_lora_adapters (names joined by
  // commas). names_by_id[id] names adapter id.
  void enable_lora_info(int32_t max_loras, std::vector<std::string> names_by_id);

  // Prometheus text exposition, after folding in the engine's current counters.
  std::string render(const engine::EngineMetrics& m);

 private:
  std::mutex mu_;  // serializes renders (the counter deltas below)
  std::string model_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* running_;
  prometheus::Gauge* waiting_;
  prometheus::Gauge* kv_usage_;
  prometheus::Gauge* kv_resident_;
  prometheus::Counter* prompt_tokens_;
  prometheus::Counter* generation_tokens_;
  prometheus::Counter* preemptions_;
  prometheus::Counter* prefix_queries_;
  prometheus::Counter* prefix_hits_;
  prometheus::Family<prometheus::Counter>* success_;
  prometheus::Family<prometheus::Counter>* admission_rejections_;
  prometheus::Histogram* ttft_;
  prometheus::Histogram* itl_;
  prometheus::Histogram* e2e_;
  engine::EngineMetrics last_;
  prometheus::Family<prometheus::Gauge>* lora_info_ = nullptr;
  std::string max_loras_;
  std::vector<std::string> lora_names_;
};

}  // namespace vllm::api
