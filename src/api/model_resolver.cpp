// Model lookup: local paths first, then the Hugging Face cache layout
// (models--ORG--NAME/refs/REV -> snapshots/HASH).
#include "api/model_resolver.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace vllm::api {

namespace fs = std::filesystem;

namespace {

std::string env(const char* k) {
  const char* v = std::getenv(k);
  return v ? std::string(v) : std::string();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A repo id as the hub writes it: ORG/NAME, each part made of [A-Za-z0-9._-].
bool is_repo_id(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() ||
      s.find('/', slash + 1) != std::string::npos)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
          c == '/'))
      return false;
  return true;
}

// Whether `needle` occurs in `name` bounded by non-alphanumerics (Q4_K must not match Q4_K_M).
bool delimited_match(const std::string& name, const std::string& needle) {
  for (size_t at = name.find(needle); at != std::string::npos; at = name.find(needle, at + 1)) {
    const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(name[at - 1]));
    const size_t end = at + needle.size();
    const bool right = end >= name.size() || name[end] == '.' ||
                       !(std::isalnum(static_cast<unsigned char>(name[end])) || name[end] == '_');
    if (left && right) return true;
  }
  return false;
}

std::string pick_gguf(const fs::path& dir, const std::string& quant, const std::string& what) {
  const std::string q = lower(quant);
  std::vector<fs::path> loose, exact;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it.depth() > 2) it.disable_recursion_pending();
    const fs::path& p = it->path();
    const std::string name = lower(p.filename().string());
    if (name.size() < 5 || name.substr(name.size() - 5) != ".gguf") continue;
    if (name.find(q) == std::string::npos) continue;
    loose.push_back(p);
    if (delimited_match(name, q)) exact.push_back(p);
  }
  const std::vector<fs::path>& c = exact.empty() ? loose : exact;
  if (c.size() == 1) return c[0].string();
  std::string list;
  for (const auto& p : c) list += "\n  " + p.lexically_relative(dir).string();
  if (c.empty()) {
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it)
      if (it->path().extension() == ".gguf")
        list += "\n  " + it->path().lexically_relative(dir).string();
    throw std::invalid_argument(what + ": no .gguf file matching '" + quant + "' in " +
                                dir.string() +
                                (list.empty() ? " (it has none)" : "; it has:" + list));
  }
  throw std::invalid_argument(what + ": '" + quant + "' matches several .gguf files in " +
                              dir.string() + ":" + list + "\nname one of them with --gguf FILE");
}

std::string read_ref(const fs::path& file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

std::string hf_hub_cache_dir() {
  if (std::string v = env("HF_HUB_CACHE"); !v.empty()) return v;
  if (std::string v = env("HUGGINGFACE_HUB_CACHE"); !v.empty()) return v;
  if (std::string v = env("HF_HOME"); !v.empty()) return (fs::path(v) / "hub").string();
  if (std::string v = env("XDG_CACHE_HOME"); !v.empty())
    return (fs::path(v) / "huggingface" / "hub").string();
  const std::string home = env("HOME");
  return (fs::path(home.empty() ? "/root" : home) / ".cache" / "huggingface" / "hub").string();
}

std::string packed_weights_cache_dir() {
  if (const char* v = std::getenv("VLLM_CPP_PACKED_CACHE")) {
    const std::string s = v;
    return s == "0" || s == "off" || s == "false" ? std::string() : s;
  }
  if (std::string v = env("VLLM_CPP_CACHE"); !v.empty()) return (fs::path(v) / "packed").string();
  if (std::string v = env("XDG_CACHE_HOME"); !v.empty())
    return (fs::path(v) / "vllm-cpp" / "packed").string();
  const std::string home = env("HOME");
  return home.empty() ? std::string()
                      : (fs::path(home) / ".cache" / "vllm-cpp" / "packed").string();
}

ResolvedModel resolve_model(const std::string& spec, const std::string& revision,
                            const std::string& gguf, bool model_folder) {
  ResolvedModel r;
  // A path that exists wins, even when it looks like ORG/NAME.
  if (fs::exists(spec)) {
    r.path = spec;
    r.folder = fs::is_directory(spec) ? spec : fs::path(spec).parent_path().string();
    r.source = "local path";
    if (!gguf.empty()) {
      if (!fs::is_directory(spec))
        throw std::invalid_argument("--gguf " + gguf +
                                    " needs --model to be a folder, got the file " + spec);
      const fs::path f = fs::path(gguf).is_absolute() ? fs::path(gguf) : fs::path(spec) / gguf;
      if (!fs::is_regular_file(f))
        throw std::invalid_argument("--gguf: " + f.string() + " does not exist");
      r.path = f.string();
    }
    return r;
  }
  std::string repo = spec, quant;
  if (const size_t colon = spec.rfind(':'); colon != std::string::npos) {
    repo = spec.substr(0, colon);
    quant = spec.substr(colon + 1);
  }
  if (!is_repo_id(repo))
    throw std::invalid_argument("model '" + spec +
                                "': no such file or folder, and not a Hugging Face repo id "
                                "(ORG/NAME or ORG/NAME:QUANT)");
  const fs::path cache = hf_hub_cache_dir();
  const size_t slash = repo.find('/');
  const fs::path repo_dir =
      cache / ("models--" + repo.substr(0, slash) + "--" + repo.substr(slash + 1));
  const std::string hint =
      "\nNothing is downloaded by this server: fetch it first, e.g. `huggingface-cli download " +
      repo + "` (or `hf download " + repo + "`), or give a local path.";
  if (!fs::is_directory(repo_dir))
    throw std::invalid_argument("model '" + spec + "' is not a local path, and " +
                                repo_dir.string() +
                                " does not exist (the Hugging Face cache: HF_HUB_CACHE, "
                                "HF_HOME/hub or ~/.cache/huggingface/hub)." +
                                hint);
  std::string commit = revision;
  if (fs::exists(repo_dir / "refs" / revision)) commit = read_ref(repo_dir / "refs" / revision);
  const fs::path snap = repo_dir / "snapshots" / commit;
  if (commit.empty() || !fs::is_directory(snap))
    throw std::invalid_argument("model '" + spec + "': no snapshot for revision '" + revision +
                                "' in " + repo_dir.string() + " (looked for refs/" + revision +
                                " and snapshots/" + (commit.empty() ? revision : commit) + ")." +
                                hint);
  r.folder = snap.string();
  r.source = "Hugging Face cache, " + repo + "@" + commit.substr(0, 12);
  if (!gguf.empty() && !quant.empty())
    throw std::invalid_argument("give the GGUF file either as " + repo +
                                ":QUANT or with --gguf, not both");
  if (!gguf.empty()) {
    const fs::path f = snap / gguf;
    if (!fs::is_regular_file(f))
      throw std::invalid_argument("--gguf: " + gguf + " is not in " + snap.string());
    r.path = f.string();
  } else if (!quant.empty()) {
    r.path = pick_gguf(snap, quant, "model '" + spec + "'");
  } else {
    if (model_folder && !fs::exists(snap / "config.json")) {
      std::string ggufs;
      for (const auto& e : fs::directory_iterator(snap))
        if (e.path().extension() == ".gguf") ggufs += "\n  " + e.path().filename().string();
      throw std::invalid_argument(
          "model '" + spec + "': " + snap.string() + " has no config.json" +
          (ggufs.empty() ? std::string(" (is the download complete?)")
                         : "; it holds GGUF files, pick one as " + repo + ":QUANT:" + ggufs));
    }
    r.path = snap.string();
  }
  return r;
}

}  // namespace vllm::api
