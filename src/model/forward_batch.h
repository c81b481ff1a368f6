// What one forward pass receives: a flat list of tokens from any number of sequences
// (prefill chunks and decodes mixed), with the paged-KV addressing for each.
#pragma once

#include <cstdint>

namespace vllm::model {

struct ForwardBatch {
  int64_t n_tok = 0;
  const int32_t* token_ids = nullptr;     // [n_tok]
  const int32_t* positions = nullptr;     // [n_tok] absolute position in its sequence
  const int32_t* seq_of_token = nullptr;  // [n_tok] row of block_tables
  const int64_t* slot_mapping = nullptr;  // [n_tok] KV slot (block * block_size + offset), <0 = pad
  const int32_t* block_tables = nullptr;  // [n_seqs][bt_stride] block ids
  int64_t bt_stride = 0;
  int64_t n_seqs = 0;
  // Rows whose logits are wanted (usually each sequence's last scheduled token).
  const int32_t* logits_indices = nullptr;  // [n_logits] indices into the n_tok tokens
  int64_t n_logits = 0;
  // The LoRA adapter of each token's request (model/lora.h; 0: the base model alone), or null
  // when no request of the batch has one.
  const int32_t* lora_ids = nullptr;  // [n_tok]
  // Rows whose final hidden states (after the final norm, before the LM head) are wanted: the
  // pooling requests' tokens (an embedding model's). Written to hidden_out
  // [n_hidden][hidden_size]; rows wanted here only never reach the LM head.
  const int32_t* hidden_indices = nullptr;  // [n_hidden] indices into the n_tok tokens
  int64_t n_hidden = 0;
  float* hidden_out = nullptr;
};

}  // namespace vllm::model
