// Version strings shared by the CLI, the server and the C API.
#pragma once

namespace vllm::api {
inline constexpr const char* kVersion = "0.1.0";
// The --device values this build can run: "cpu", or "cpu, cuda" in a CUDA build.
const char* devices();
}  // namespace vllm::api
