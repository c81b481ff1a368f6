// ApiError: an HTTP error with OpenAI's error body {"error": {"message", "type", "param",
// "code"}}. Handlers throw it; the router turns it into the response.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace vllm::api {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {})
      : std::runtime_error(message), status_(status), param_(std::move(param)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }

  // The error type vLLM puts in its body for this status.
  static const char* type_for(int status) {
    switch (status) {
      case 400:
        return "BadRequestError";
      case 401:
        return "AuthenticationError";
      case 404:
        return "NotFoundError";
      case 413:
        return "RequestEntityTooLarge";
      case 503:
        return "ServiceUnavailableError";
      default:
        return status >= 500 ? "InternalServerError" : "BadRequestError";
    }
  }

  nlohmann::json body() const { return error_body(status_, what(), param_); }

  static nlohmann::json error_body(int status, const std::string& message,
                                   const std::string& param = {}) {
    nlohmann::json e = {{"message", message},
                        {"type", type_for(status)},
                        {"param", param.empty() ? nlohmann::json() : nlohmann::json(param)},
                        {"code", status}};
    return {{"error", e}};
  }

 private:
  int status_;
  std::string param_;
};

inline ApiError bad_request(std::string message, std::string param = {}) {
  return ApiError(400, std::move(message), std::move(param));
}

}  // namespace vllm::api
