// The JSON tool-call bodies of the hermes, llama3_json, mistral and required formats, read
// one character at a time: TagScanner finds a tag in a stream, CallReader reads one
// {"name": ..., <arguments key>: ...} object into its name and the arguments' canonical text,
// CallEmitter turns a call being read into the deltas a parser reports.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/server/py_json.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {

// Finds `tag` in a stream: text before it is released (to `out`, or dropped when out is
// null), a possible beginning of the tag at the end is held back.
class TagScanner {
 public:
  explicit TagScanner(std::string_view tag) : tag_(tag) {}
  // True when the tag was completed by c.
  bool feed(char c, std::string* out);
  std::string take() {
    std::string s;
    s.swap(pending_);
    return s;
  }

 private:
  std::string_view tag_;
  std::string pending_;
};

// One call object {"name": "...", <args key>: <value>, ...}: reports the name once known and
// the arguments' canonical text as it comes (held until the name is known).
class CallReader {
 public:
  enum class R { kMore, kDone, kError };
  CallReader(std::vector<std::string_view> args_keys, bool skip_leading_ws)
      : args_keys_(std::move(args_keys)), skip_ws_(skip_leading_ws) {}

  R feed(char c);
  bool name_known() const { return name_known_; }
  const std::string& name() const { return name_; }
  std::string take_args() {
    std::string s;
    s.swap(args_);
    return s;
  }

 private:
  enum class St {
    kStart,
    kKeyOrEnd,
    kKey,
    kInKey,
    kColon,
    kValueStart,
    kInValue,
    kCommaOrEnd,
    kDone
  };
  enum class Target { kName, kArgs, kOther };
  R end_object() {
    if (!name_known_ || !args_seen_) return R::kError;  // vLLM: a KeyError
    st_ = St::kDone;
    return R::kDone;
  }

  std::vector<std::string_view> args_keys_;
  bool skip_ws_;
  St st_ = St::kStart;
  Target target_ = Target::kOther;
  JsonCanonicalizer key_, value_;
  std::string name_, args_;
  bool name_known_ = false, args_seen_ = false;
};

// Shared by the parsers: the current call's reader and the deltas it reports.
class CallEmitter {
 public:
  CallEmitter(ToolParserKind kind, std::vector<std::string_view> args_keys, bool skip_ws)
      : kind_(kind), args_keys_(std::move(args_keys)), skip_ws_(skip_ws) {}
  void begin() {
    reader_ = std::make_unique<CallReader>(args_keys_, skip_ws_);
    header_sent_ = false;
  }
  CallReader::R feed(char c, ParsedDelta& out, int& num_calls);

 private:
  ToolParserKind kind_;
  std::vector<std::string_view> args_keys_;
  bool skip_ws_;
  std::unique_ptr<CallReader> reader_;
  bool header_sent_ = false;
};

}  // namespace vllm::api
