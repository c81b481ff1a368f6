// ReasoningStreamSplitter (reasoning_parser.h): each parser's reasoning split of a stream, one
// delta at a time, a tag split across deltas held back.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "api/server/py_str.h"
#include "api/server/reasoning_parser.h"
#include "api/server/reasoning_tags.h"
#include "api/server/tag_scan.h"

namespace vllm::api {

using namespace reasoning_tags;

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_glm(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  // glm45's reasoning text goes out but its trailing whitespace waits: it is dropped if the
  // reasoning ends there (qwen3 keeps it).
  auto add_reasoning = [&](std::string_view t) {
    if (kind_ == ReasoningParserKind::kQwen3 || kind_ == ReasoningParserKind::kSeedOss)
      reasoning += t;
    else
      release_before_trailing_space(held_ws_, t, reasoning);
  };
  const EngineTags& tags = engine_tags(kind_);
  while (state_ == State::kReasoning) {
    std::string_view tag;
    const size_t at = find_tag(pending_, 0, tags, tag);
    if (at == std::string::npos) {
      size_t hold = 0;
      for (std::string_view t : tags) hold = std::max(hold, partial_tag_suffix(pending_, t));
      add_reasoning(std::string_view(pending_).substr(0, pending_.size() - hold));
      pending_.erase(0, pending_.size() - hold);
      return {reasoning, content};
    }
    add_reasoning(std::string_view(pending_).substr(0, at));
    // <think> is dropped; </think> is dropped and ends; <tool_call> ends and stays.
    pending_.erase(0, tag == tags[2] ? at : at + tag.size());
    if (tag != tags[0]) {
      state_ = State::kAfter;
      held_ws_.clear();
    }
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_minimax(
    const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  auto add_reasoning = [&](std::string_view t) {
    release_before_trailing_space(held_ws_, t, reasoning);
  };
  auto add_text = [&](std::string_view t) {
    if (state_ == State::kReasoning)
      add_reasoning(t);
    else
      content += t;
  };
  // Where each tag next occurs (searched again only once passed).
  constexpr size_t n = std::size(kMinimaxWholeTags);
  size_t next[n];
  for (size_t i = 0; i < n; ++i) next[i] = pending_.find(kMinimaxWholeTags[i]);
  size_t pos = 0;
  for (;;) {
    size_t at = std::string::npos, which = 0;
    for (size_t i = 0; i < n; ++i) {
      if (next[i] != std::string::npos && next[i] < pos)
        next[i] = pending_.find(kMinimaxWholeTags[i], pos);
      if (next[i] < at) {
        at = next[i];
        which = i;
      }
    }
    if (at == std::string::npos) break;
    add_text(std::string_view(pending_).substr(pos, at - pos));
    const std::string_view tag = kMinimaxWholeTags[which];
    pos = at + tag.size();
    if (state_ == State::kReasoning) {
      // <think> is dropped; </think> is dropped and ends; <minimax:tool_call> ends and stays.
      if (tag == kEnd || tag == kMinimaxCall) {
        state_ = State::kAfter;
        held_ws_.clear();
        if (tag == kMinimaxCall) {
          span_ = true;
          content += tag;
        }
      } else if (tag != kStart) {
        if (tag == kMinimaxCallEnd) span_ = false;
        add_reasoning(tag);
      }
      continue;
    }
    // After the reasoning (vLLM's engine with tool parsing skipped): tool markup is text, but a
    // </minimax:tool_call> that no opener began is a stray closer (dropped), and so is </think>.
    if (tag == kEnd) continue;
    if (tag == kMinimaxCallEnd) {
      if (!span_) continue;
      span_ = false;
    } else if (tag == kMinimaxCall || tag == kMinimaxInvoke) {
      span_ = true;
    }
    content += tag;
  }
  size_t hold = 0;
  for (std::string_view t : kMinimaxWholeTags)
    hold = std::max(hold, partial_tag_suffix(pending_, t));
  hold = std::min(hold, pending_.size() - pos);
  add_text(std::string_view(pending_).substr(pos, pending_.size() - pos - hold));
  pending_.erase(0, pending_.size() - hold);
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_kimi(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  size_t pos = 0;
  for (;;) {
    std::string_view tag;
    const size_t at = find_tag(pending_, pos, kKimiTags, tag);
    if (at == std::string::npos) break;
    const std::string_view text = std::string_view(pending_).substr(pos, at - pos);
    pos = at + tag.size();
    if (state_ == State::kAfter) {
      content += text;  // </think> is dropped, the rest is content
      if (tag != kEnd) content += tag;
      continue;
    }
    release_before_trailing_space(held_ws_, text, reasoning);
    if (tag == kStart) continue;  // dropped
    state_ = State::kAfter;       // </think> (dropped) or the tool section (kept)
    held_ws_.clear();
    if (tag == kKimiSection) content += tag;
  }
  size_t hold = 0;
  for (std::string_view t : kKimiTags) hold = std::max(hold, partial_tag_suffix(pending_, t));
  hold = std::min(hold, pending_.size() - pos);
  const std::string_view text =
      std::string_view(pending_).substr(pos, pending_.size() - pos - hold);
  if (state_ == State::kAfter)
    content += text;
  else
    release_before_trailing_space(held_ws_, text, reasoning);
  pending_.erase(0, pending_.size() - hold);
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed(const std::string& delta) {
  if (kind_ == ReasoningParserKind::kGlm45 || kind_ == ReasoningParserKind::kQwen3 ||
      kind_ == ReasoningParserKind::kSeedOss)
    return feed_glm(delta);
  if (kind_ == ReasoningParserKind::kMinimaxM2) return feed_minimax(delta);
  if (kind_ == ReasoningParserKind::kGranite) return feed_granite(delta);
  if (kind_ == ReasoningParserKind::kKimiK2) return feed_kimi(delta);
  if (kind_ == ReasoningParserKind::kMinimaxM2AppendThink) {
    // Nothing is reasoning: "<think>" goes first unless the prompt closed the reasoning.
    std::string content = state_ == State::kReasoning && !start_seen_ ? std::string(kStart) : "";
    start_seen_ = true;
    return {"", content + delta};
  }
  if (kind_ == ReasoningParserKind::kErnie45) {
    // deepseek_r1's split, then the content's <response> wrapper.
    auto [r, t] = feed_think(delta);
    return {std::move(r), ernie_content(t, false)};
  }
  return feed_think(delta);
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_think(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  while (state_ == State::kReasoning) {
    const size_t end = pending_.find(kEnd);
    const size_t start = pending_.find(kStart);
    if (start != std::string::npos && start < end) {  // every <think> in the reasoning is dropped
      reasoning += pending_.substr(0, start);
      pending_.erase(0, start + kStart.size());
      continue;
    }
    if (end != std::string::npos) {
      reasoning += pending_.substr(0, end);
      pending_.erase(0, end + kEnd.size());
      state_ = State::kAfter;
      break;
    }
    const size_t hold =
        std::max(partial_tag_suffix(pending_, kEnd), partial_tag_suffix(pending_, kStart));
    reasoning += pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return {reasoning, content};
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_granite(
    const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  if (state_ == State::kReasoning && !start_seen_) {
    // The reasoning opens only with a thought phrase at the very start of the output.
    bool may_open = false;
    for (std::string_view p : kGraniteThink) {
      if (pending_.compare(0, p.size(), p) == 0) {
        pending_.erase(0, p.size());
        start_seen_ = true;
        break;
      }
      may_open = may_open || p.compare(0, pending_.size(), pending_) == 0;
    }
    if (!start_seen_) {
      if (may_open) return {"", ""};
      start_seen_ = true;
      state_ = State::kAfter;
    }
  }
  if (state_ == State::kReasoning) {
    size_t at = std::string::npos, len = 0;
    for (std::string_view p : kGraniteResponse)
      if (const size_t f = pending_.find(p); f < at) at = f, len = p.size();
    if (at == std::string::npos) {
      size_t hold = 0;
      for (std::string_view p : kGraniteResponse)
        hold = std::max(hold, partial_tag_suffix(pending_, p));
      reasoning = pending_.substr(0, pending_.size() - hold);
      pending_.erase(0, pending_.size() - hold);
      return {reasoning, content};
    }
    reasoning = pending_.substr(0, at);
    pending_.erase(0, at + len);
    state_ = State::kAfter;
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::string ReasoningStreamSplitter::ernie_content(const std::string& text, bool end) {
  std::string out;
  if (resp_mode_ == 0) {
    // Before the content's first word: whitespace and the start of a <response> wait.
    held_ws_ += text;
    const size_t word = space_run(held_ws_, 0);
    const std::string_view rest = std::string_view(held_ws_).substr(word);
    if (rest.substr(0, kResponse.size()) == kResponse) {
      const std::string after(rest.substr(kResponse.size()));
      held_ws_.clear();
      resp_mode_ = 1;
      return ernie_content(after, end);
    }
    if (!end && (rest.empty() || kResponse.substr(0, rest.size()) == rest)) return out;
    out.swap(held_ws_);
    resp_mode_ = 2;
    return out;
  }
  if (resp_mode_ == 1) {
    // Inside the <response>: sent as it comes until a </response>.
    std::string p = held_ws_ + text;
    held_ws_.clear();
    const size_t e = p.find(kResponseEnd);
    if (e != std::string::npos) {
      out = p.substr(0, e);
      resp_tail_ = p.substr(e);
      resp_mode_ = 3;
    } else {
      const size_t hold = end ? 0 : partial_tag_suffix(p, kResponseEnd);
      out = p.substr(0, p.size() - hold);
      held_ws_ = p.substr(p.size() - hold);
      return out;
    }
  } else if (resp_mode_ == 3) {
    resp_tail_ += text;
  } else {
    return text;
  }
  if (end && resp_mode_ == 3) {
    // The answer runs to the last </response>: earlier ones and the text between them are in.
    out += resp_tail_.substr(0, resp_tail_.rfind(kResponseEnd));
    resp_tail_.clear();
  }
  return out;
}

std::pair<std::string, std::string> ReasoningStreamSplitter::finish() {
  std::string rest;
  rest.swap(pending_);
  if (kind_ == ReasoningParserKind::kErnie45 && state_ == State::kAfter)
    return {"", ernie_content(rest, true)};
  // granite: an output too short to tell whether a thought phrase opened it is content.
  if (kind_ == ReasoningParserKind::kGranite && !start_seen_) return {"", rest};
  if (kind_ == ReasoningParserKind::kMinimaxM2AppendThink) {
    std::string content = state_ == State::kReasoning && !start_seen_ ? std::string(kStart) : "";
    start_seen_ = true;
    return {"", content};
  }
  const bool glm = kind_ == ReasoningParserKind::kGlm45 ||
                   kind_ == ReasoningParserKind::kMinimaxM2 ||
                   kind_ == ReasoningParserKind::kKimiK2;
  if (glm && state_ == State::kReasoning) {
    // A tag cut off by the end is text; trailing whitespace is dropped.
    held_ws_ += rest;
    std::string r = held_ws_.substr(0, py_rstrip_end(held_ws_));
    held_ws_.clear();
    return {r, ""};
  }
  if (state_ == State::kReasoning) return {rest, ""};
  return {"", rest};
}

}  // namespace vllm::api
