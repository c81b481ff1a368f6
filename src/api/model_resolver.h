// Models by name, as vLLM users give them: a local folder or .gguf file, a Hugging Face repo id
// (ORG/NAME) already in the local Hugging Face cache, or ORG/NAME:QUANT for one GGUF file of
// such a repo. Nothing is ever downloaded: a model that is not there is an error that says
// where it was looked for.
#pragma once

#include <string>
#include <vector>

namespace vllm::api {

struct ResolvedModel {
  std::string path;    // what CausalLM::load takes: a folder or a .gguf file
  std::string folder;  // the folder holding it (generation_config.json, tokenizer files)
  std::string source;  // how it was found, for the start-up line
};

// The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
std::string hf_hub_cache_dir();

// Where packed copies of model weights are kept between starts (model/weight_packing.h):
// $VLLM_CPP_PACKED_CACHE, else `packed` under $VLLM_CPP_CACHE, $XDG_CACHE_HOME/vllm-cpp or
// ~/.cache/vllm-cpp. "" when the variable is 0, off or false (no cache).
std::string packed_weights_cache_dir();

// spec: a path; or ORG/NAME[:QUANT] looked up in hf_hub_cache_dir() at `revision` (a branch
// or tag under refs/, or a commit hash under snapshots/). gguf: with a folder (or repo) spec,
// the GGUF file inside it to load (vLLM's `--model FOLDER --gguf FILE` form). Throws
// std::invalid_argument naming what was looked for and where. model_folder false: any folder
// will do (a LoRA adapter's has no config.json).
ResolvedModel resolve_model(const std::string& spec, const std::string& revision = "main",
                            const std::string& gguf = "", bool model_folder = true);

}  // namespace vllm::api
