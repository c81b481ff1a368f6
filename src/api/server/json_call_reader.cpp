// The JSON tool-call readers of json_call_reader.h.
#include "api/server/json_call_reader.h"

#include "api/server/tag_scan.h"

namespace vllm::api {

bool TagScanner::feed(char c, std::string* out) {
  pending_ += c;
  if (pending_.size() >= tag_.size() &&
      std::string_view(pending_).substr(pending_.size() - tag_.size()) == tag_) {
    if (out) out->append(pending_, 0, pending_.size() - tag_.size());
    pending_.clear();
    return true;
  }
  const size_t hold = partial_tag_suffix(pending_, tag_);
  if (out) out->append(pending_, 0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return false;
}

CallReader::R CallReader::feed(char c) {
  for (;;) {
    switch (st_) {
      case St::kStart:
        if (skip_ws_ && is_json_ws(c)) return R::kMore;
        if (c != '{') return R::kError;
        st_ = St::kKeyOrEnd;
        return R::kMore;
      case St::kKeyOrEnd:
      case St::kKey:
        if (is_json_ws(c)) return R::kMore;
        if (c == '}' && st_ == St::kKeyOrEnd) return end_object();
        if (c != '"') return R::kError;
        key_ = JsonCanonicalizer();
        st_ = St::kInKey;
        break;  // the quote goes to the key's reader
      case St::kInKey: {
        std::string sink;
        const auto s = key_.feed(c, sink);
        if (s == JsonCanonicalizer::Step::kError) return R::kError;
        if (s == JsonCanonicalizer::Step::kDone) st_ = St::kColon;
        return R::kMore;
      }
      case St::kColon:
        if (is_json_ws(c)) return R::kMore;
        if (c != ':') return R::kError;
        st_ = St::kValueStart;
        return R::kMore;
      case St::kValueStart: {
        if (is_json_ws(c)) return R::kMore;
        const std::string& k = key_.string_value();
        target_ = Target::kOther;
        if (k == "name") {
          if (name_known_) return R::kError;
          target_ = Target::kName;
        } else {
          for (std::string_view a : args_keys_)
            if (k == a) target_ = Target::kArgs;
          // Python keeps the last of duplicate keys; a stream cannot, so refuse them.
          if (target_ == Target::kArgs && args_seen_) return R::kError;
          if (target_ == Target::kArgs) args_seen_ = true;
        }
        value_ = JsonCanonicalizer();
        st_ = St::kInValue;
        break;
      }
      case St::kInValue: {
        std::string piece;
        const auto s = value_.feed(c, piece);
        if (target_ == Target::kArgs) args_ += piece;
        if (s == JsonCanonicalizer::Step::kError) return R::kError;
        if (s == JsonCanonicalizer::Step::kMore) return R::kMore;
        if (target_ == Target::kName) {
          if (!value_.is_string()) return R::kError;
          name_ = value_.string_value();
          name_known_ = true;
        }
        st_ = St::kCommaOrEnd;
        if (s == JsonCanonicalizer::Step::kDone) return R::kMore;
        break;  // a number ended before c: c is the delimiter
      }
      case St::kCommaOrEnd:
        if (is_json_ws(c)) return R::kMore;
        if (c == ',') {
          st_ = St::kKey;
          return R::kMore;
        }
        if (c == '}') return end_object();
        return R::kError;
      case St::kDone:
        return R::kError;
    }
  }
}

CallReader::R CallEmitter::feed(char c, ParsedDelta& out, int& num_calls) {
  const auto r = reader_->feed(c);
  if (r == CallReader::R::kError) return r;
  if (!header_sent_ && reader_->name_known()) {
    ToolCallDelta h;
    h.index = num_calls++;
    h.header = true;
    h.id = make_tool_call_id(kind_);
    h.name = reader_->name();
    out.calls.push_back(std::move(h));
    header_sent_ = true;
  }
  if (header_sent_) {
    std::string a = reader_->take_args();
    if (!a.empty()) {
      if (!out.calls.empty() && !out.calls.back().header &&
          out.calls.back().index == num_calls - 1) {
        out.calls.back().arguments += a;
      } else {
        ToolCallDelta f;
        f.index = num_calls - 1;
        f.arguments = std::move(a);
        out.calls.push_back(std::move(f));
      }
    }
  }
  return r;
}

}  // namespace vllm::api
