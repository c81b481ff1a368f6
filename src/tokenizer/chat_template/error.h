// ChatTemplateError: every failure of the chat-template engine (syntax, unsupported construct,
// runtime type error, raise_exception()) surfaces as this one type, with the template line.
#pragma once

#include <stdexcept>
#include <string>

namespace vllm::tok {

class ChatTemplateError : public std::runtime_error {
 public:
  ChatTemplateError(int line, const std::string& message)
      : std::runtime_error(line > 0 ? "chat template line " + std::to_string(line) + ": " + message
                                    : "chat template: " + message),
        line_(line),
        message_(message) {}

  int line() const { return line_; }
  // The message without the "chat template line N: " prefix (for raise_exception this is
  // exactly the template's text, which servers return to the client).
  const std::string& message() const { return message_; }

 private:
  int line_;
  std::string message_;
};

}  // namespace vllm::tok
