// JSON text re-serialized the way vLLM's Python tool parsers write tool-call arguments:
// json.dumps(json.loads(text), ensure_ascii=False) — ", " and ": " separators, strings with
// only '"', '\\' and control characters escaped, integers as written (-0 becomes 0), floats
// as Python's repr (shortest round trip; 1e+16, 1e-05, 100.0), 1e400 as Infinity.
//
// JsonCanonicalizer works on a stream of text: it emits the canonical form of whatever part
// of the value can no longer change (string contents character by character, a number only
// once a delimiter ends it), so the pieces of a streamed tool call concatenate to exactly
// the non-streamed arguments string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::api {

class JsonCanonicalizer {
 public:
  enum class Step {
    kMore,         // consumed; the value is not finished
    kDone,         // consumed the value's last character
    kDoneNotUsed,  // the value (a number or a top-level literal) ended before this character,
                   // which was not consumed
    kError,        // not JSON (the character was not consumed)
  };

  // Feeds one character; canonical text is appended to `out`. Leading whitespace is skipped.
  Step feed(char c, std::string& out);
  // End of input: finishes a number or literal that the text ends with.
  Step finish(std::string& out);
  bool done() const { return done_; }
  bool failed() const { return failed_; }
  bool started() const { return started_; }
  // The value was a string: its decoded UTF-8 contents (for names and object keys).
  const std::string& string_value() const { return str_; }
  bool is_string() const { return top_is_string_; }

 private:
  enum class Ctx : uint8_t {
    kObjKeyOrEnd,
    kObjKey,
    kObjColon,
    kObjValue,
    kObjCommaOrEnd,
    kArrValueOrEnd,
    kArrValue,
    kArrCommaOrEnd
  };
  enum class Tok : uint8_t { kNone, kString, kNumber, kLiteral };
  Step value_start(char c, std::string& out);
  Step value_end(std::string& out);  // a scalar or container closed
  Step string_char(char c, std::string& out);
  Step end_number(std::string& out);
  void emit_code_point(uint32_t cp, std::string& out);
  Step fail();

  std::vector<Ctx> stack_;
  Tok tok_ = Tok::kNone;
  bool in_key_ = false;
  std::string lex_;  // number or literal lexeme; escape sequence in a string
  std::string str_;  // decoded top-level string / key
  uint32_t high_surrogate_ = 0;
  bool started_ = false, done_ = false, failed_ = false, top_is_string_ = false;
  bool escape_ = false;
};

// The whole conversion at once (same code); false when `text` is not one JSON value.
bool py_json_dumps(std::string_view text, std::string& out);
// Python's repr() of a float, as json.dumps writes it.
std::string py_float_repr(double d);
// json.dumps(s, ensure_ascii=False) of a str given as UTF-8: quoted, '"', '\\' and control
// characters escaped, everything else as is.
std::string py_json_quote(std::string_view s);

}  // namespace vllm::api
