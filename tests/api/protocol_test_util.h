// Helpers the protocol tests share: a JSON literal and the ApiError a parse throws.
#pragma once

#include "api/server/protocol.h"

namespace vllm::api {

inline ojson J(const char* s) { return ojson::parse(s); }

// The ApiError f throws (status 0 when it does not throw).
template <typename F>
ApiError error_of(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  }
  return ApiError(0, "");
}

}  // namespace vllm::api
