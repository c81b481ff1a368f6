// Request status names and the Request constructor (RNG seeding).
#include "engine/request.h"

#include "engine/kv_cache/block_pool.h"
#include "engine/structured_output/matcher.h"

namespace vllm::engine {

const char* to_string(RequestStatus s) {
  switch (s) {
    case RequestStatus::WAITING:
      return "WAITING";
    case RequestStatus::RUNNING:
      return "RUNNING";
    case RequestStatus::PREEMPTED:
      return "PREEMPTED";
    case RequestStatus::FINISHED_STOPPED:
      return "FINISHED_STOPPED";
    case RequestStatus::FINISHED_LENGTH_CAPPED:
      return "FINISHED_LENGTH_CAPPED";
    case RequestStatus::FINISHED_ABORTED:
      return "FINISHED_ABORTED";
    case RequestStatus::FINISHED_IGNORED:
      return "FINISHED_IGNORED";
  }
  return "?";
}

bool is_finished(RequestStatus s) {
  return s != RequestStatus::WAITING && s != RequestStatus::RUNNING &&
         s != RequestStatus::PREEMPTED;
}

const char* finish_reason(RequestStatus s) {
  switch (s) {
    case RequestStatus::FINISHED_STOPPED:
      return "stop";
    case RequestStatus::FINISHED_LENGTH_CAPPED:
    case RequestStatus::FINISHED_IGNORED:
      return "length";
    case RequestStatus::FINISHED_ABORTED:
      return "abort";
    default:
      return nullptr;
  }
}

namespace {
// The first block's parent hash for a cache salt: the salt's bytes hashed as one "block" under
// the root, so equal salts meet and different ones (or none) never share a block.
// A LoRA adapter id is folded in the same way, after the salt: blocks computed under one
// adapter are never served to a request of another (or of none), as vLLM's lora extra key.
uint64_t salted_root(const std::string& salt, int32_t lora_id) {
  if (salt.empty() && lora_id == 0) return kRootBlockHash;
  std::vector<int32_t> bytes;
  for (const char c : salt) bytes.push_back(static_cast<unsigned char>(c));
  bytes.push_back(-1);  // never a token id: a salted root is not the hash of any real block
  if (lora_id != 0) {
    bytes.push_back(-2);
    bytes.push_back(lora_id);
  }
  return hash_block_tokens(kRootBlockHash, bytes);
}
}  // namespace

Request::Request(std::string request_id, std::vector<int32_t> prompt_token_ids,
                 SamplingParams params, int32_t max_tokens_resolved,
                 std::optional<int32_t> eos_token_id, uint64_t default_seed, int64_t arrival_index,
                 int64_t priority)
    : request_id(std::move(request_id)),
      sampling_params(std::move(params)),
      max_tokens(max_tokens_resolved),
      eos_token_id(eos_token_id),
      arrival_index(arrival_index),
      priority(priority),
      block_hash_root(salted_root(sampling_params.cache_salt, sampling_params.lora_id)),
      generator(sampling_params.seed.value_or(default_seed)),
      all_token_ids_(std::move(prompt_token_ids)),
      num_prompt_tokens_(static_cast<int64_t>(all_token_ids_.size())) {
  all_token_ids_.reserve(all_token_ids_.size() + static_cast<size_t>(max_tokens));
}

Request::~Request() = default;

}  // namespace vllm::engine
