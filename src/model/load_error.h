// The exception every loader throws: one message naming the file and the problem.
#pragma once

#include <stdexcept>
#include <string>

namespace vllm::model {

class LoadError : public std::runtime_error {
 public:
  LoadError(const std::string& file, const std::string& problem)
      : std::runtime_error(file + ": " + problem) {}
};

}  // namespace vllm::model
