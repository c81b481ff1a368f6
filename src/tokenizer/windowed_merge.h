// Merging a long piece a window at a time, shared by the byte-level BPE and the SentencePiece
// models: the merge loop runs over the next `window` bytes (ending on a character boundary)
// and the tokens ending within its first `commit` bytes are kept (at least one, so the loop
// advances); the next window starts where the last kept token ends. The rest, at most
// `window` bytes, is merged whole. A window identical to the previous one (a run of one
// repeated character) reuses its result. Stops once out holds more than `limit` ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace vllm::tok {

// merge(bytes, ids, ends): appends the ids of `bytes` merged whole to ids and, when ends is
// not null, where each ends in `bytes`. ids / ends: scratch.
template <typename Merge>
void merge_in_windows(std::string_view piece, std::vector<int32_t>& out, size_t limit,
                      size_t window, size_t commit, std::vector<int32_t>& ids,
                      std::vector<uint32_t>& ends, Merge&& merge) {
  std::string_view last;
  size_t commit_count = 0, commit_bytes = 0;
  size_t s = 0;
  while (piece.size() - s > window && out.size() <= limit) {
    size_t end = s + window;
    // Windows end on a character boundary, so no window merges half a character's bytes.
    while (end > s + commit && (static_cast<uint8_t>(piece[end]) & 0xC0) == 0x80) --end;
    const std::string_view w = piece.substr(s, end - s);
    if (w != last) {
      last = w;
      ids.clear();
      ends.clear();
      merge(w, ids, &ends);
      commit_count = 0;
      while (commit_count < ids.size() && ends[commit_count] <= commit) ++commit_count;
      if (commit_count == 0 && !ids.empty()) commit_count = 1;
      // A window with no ids at all consisted of dropped bytes: all of it is consumed.
      commit_bytes = commit_count ? ends[commit_count - 1] : w.size();
    }
    out.insert(out.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(commit_count));
    s += commit_bytes;
  }
  if (out.size() <= limit) merge(piece.substr(s), out, nullptr);
}

}  // namespace vllm::tok
