// Writes the engine's full next-token log-probability rows over a fixed token sequence, for
// tools/kl_divergence.py (our distributions vs llama.cpp's on the same file).
//
//   dump_prompt_logprobs MODEL IDS.i32 OUT.f32
//
// IDS.i32: the prompt as little-endian int32 token ids (n of them). OUT.f32: (n - 1) rows of
// vocabulary-size float32 log-probabilities in token-id order; row i is the distribution the
// model gives for token i + 1 after tokens 0..i (vLLM's prompt_logprobs with the whole
// vocabulary). The engine runs with its defaults (KV cache dtype `auto`, chunked prefill).
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "api/llm.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL IDS.i32 OUT.f32\n", argv[0]);
    return 2;
  }
  try {
    std::ifstream in(argv[2], std::ios::binary);
    std::vector<int32_t> ids;
    for (int32_t t; in.read(reinterpret_cast<char*>(&t), sizeof t);) ids.push_back(t);
    if (ids.size() < 2) throw std::runtime_error("need at least two token ids");
    vllm::engine::EngineConfig cfg;
    cfg.max_model_len = static_cast<int32_t>(ids.size()) + 16;
    cfg.max_logprobs = -1;
    cfg.max_num_seqs = 1;
    auto llm = vllm::api::LLM::load(argv[1], cfg);
    vllm::engine::SamplingParams p;
    p.temperature = 0;
    p.max_tokens = 1;
    p.prompt_logprobs = -1;
    auto& eng = llm->engine();
    eng.add_request("kl", ids, p);
    std::vector<vllm::engine::TokenLogprobs> rows;
    while (eng.has_unfinished_requests())
      for (auto& o : eng.step()) {
        if (!o.error.empty()) throw std::runtime_error(o.error);
        if (!o.prompt_logprobs.empty()) rows = std::move(o.prompt_logprobs);
      }
    if (rows.size() != ids.size() - 1) throw std::runtime_error("prompt_logprobs: wrong count");
    const size_t vocab = rows.front().top.size();
    std::vector<float> row(vocab);
    std::ofstream out(argv[3], std::ios::binary);
    for (const auto& r : rows) {
      if (r.top.size() != vocab) throw std::runtime_error("prompt_logprobs: ragged rows");
      for (const auto& [id, lp] : r.top) row.at(static_cast<size_t>(id)) = lp;
      out.write(reinterpret_cast<const char*>(row.data()),
                static_cast<std::streamsize>(vocab * sizeof(float)));
    }
    std::fprintf(stderr, "%zu rows x %zu\n", rows.size(), vocab);
    return out ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dump_prompt_logprobs: %s\n", e.what());
    return 1;
  }
}
