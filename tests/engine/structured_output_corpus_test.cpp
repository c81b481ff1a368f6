// The structured-output corpus (tests/golden/structured_output/corpus.json, made by
// tools/make_structured_output_corpus.py) on the real SmolLM2 and Qwen3 vocabularies:
//  (a) random walks (a random allowed token each step, then the shortest completion) whose
//      outputs Python's references (jsonschema, re, ...) must accept
//      (tools/check_structured_outputs.py);
//  (b) reference-valid documents, tokenized, accepted token by token (each token also in
//      the mask before it) and complete; reference-invalid ones rejected;
//  (c) masks equal to a brute-force re-check of every token from a copied matcher;
//  (d) unsupported keywords, bad regexes and grammar syntax errors named in the error.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "structured_output_test_util.h"

namespace vllm::engine::so {
namespace {

using namespace testing;

const nlohmann::json& corpus() {
  static nlohmann::json c = nlohmann::json::parse(
      read_file(source_dir() + "/tests/golden/structured_output/corpus.json"));
  return c;
}

struct Vocab {
  const char* name;
  const tok::Tokenizer& tok;
  GrammarCompiler& compiler;
};

std::vector<Vocab> vocabs() {
  return {{"smollm2", smollm2_tok(), smollm2_compiler()}, {"qwen3", qwen3_tok(), qwen3_compiler()}};
}

void fill(Matcher& m, std::vector<uint32_t>& w) {
  w.assign(m.mask_words(), 0);
  m.fill_mask(w);
}

// One random walk: random allowed tokens, then (after a random point, at the latest at step
// 40) the tokens spelling a shortest completion; returns the decoded text.
std::string random_walk(Matcher& m, const Vocab& v, std::mt19937_64& rng, bool check_brute,
                        int& brute_checks) {
  std::vector<uint32_t> w;
  std::vector<int32_t> out;
  const int32_t stop = v.compiler.vocab().stop_ids().front();
  std::string c;
  bool have_completion = false, finishing = false;
  for (int step = 0; step < 400; ++step) {
    fill(m, w);
    auto ids = allowed(w);
    EXPECT_FALSE(ids.empty()) << "dead end at step " << step;
    if (ids.empty()) return {};
    if (check_brute && step == 3) {
      EXPECT_EQ(w, brute_force_mask(m, v.tok.vocab_size())) << v.name << " step " << step;
      ++brute_checks;
    }
    finishing = finishing || step >= 40 || (step >= 12 && rng() % 8 == 0);
    if (m.is_complete() && (finishing || m.can_only_stop() || rng() % 4 == 0)) {
      EXPECT_TRUE(bit(w, stop));
      EXPECT_TRUE(m.accept(stop));
      EXPECT_TRUE(m.is_terminated());
      return v.tok.decode(out);
    }
    int32_t t = ids[rng() % ids.size()];
    if (finishing) {
      // The rest of a completion stays a completion: search once, then follow it.
      if (!have_completion) {
        EXPECT_TRUE(m.shortest_completion(c, 2000));
        have_completion = true;
      }
      size_t best = 0;
      for (int32_t id : ids) {
        if (v.tok.is_special(id)) continue;
        const auto b = v.tok.token_bytes(id);
        if (b.size() > best && c.compare(0, b.size(), b) == 0) {
          best = b.size();
          t = id;
        }
      }
      EXPECT_GT(best, 0u) << "no allowed token starts the completion " << c;
      c.erase(0, best);
    }
    EXPECT_TRUE(m.accept(t)) << "token " << t << " was in the mask";
    if (m.is_terminated()) return v.tok.decode(out);  // a stop token drawn at random
    out.push_back(t);
  }
  ADD_FAILURE() << "walk did not finish";
  return {};
}

TEST(StructuredOutputCorpus, Has100Entries) { EXPECT_GE(corpus()["entries"].size(), 100u); }

TEST(StructuredOutputCorpus, RandomWalksAreValidAndMasksMatchBruteForce) {
  nlohmann::json samples = nlohmann::json::array();
  int brute = 0, walks = 0;
  for (const Vocab& v : vocabs()) {
    std::mt19937_64 rng(v.name[0]);
    int idx = 0;
    for (const auto& e : corpus()["entries"]) {
      const std::string name = e["name"];
      auto g = v.compiler.compile(kind_of(e["kind"]), e["text"]);
      const bool qwen = std::string(v.name) == "qwen3";
      const int n = qwen ? 1 : 3;
      for (int k = 0; k < n; ++k) {
        Matcher m(g);
        // Brute force on every entry's first walk for SmolLM2, every 4th entry for Qwen3.
        const bool do_brute = k == 0 && (!qwen || idx % 4 == 0);
        const std::string text = random_walk(m, v, rng, do_brute, brute);
        ++walks;
        samples.push_back({{"name", name}, {"text", text}, {"vocab", v.name}});
      }
      ++idx;
    }
  }
  const std::string path = std::string(VLLM_BINARY_DIR) + "/structured_output_samples.json";
  {
    std::ofstream f(path);
    f << samples.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const std::string cmd = "python3 " + source_dir() +
                          "/tools/check_structured_outputs.py --corpus " + source_dir() +
                          "/tests/golden/structured_output/corpus.json --samples " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::printf("%d walks, %d brute-force mask checks\n", walks, brute);
  EXPECT_GE(brute, 100);
}

TEST(StructuredOutputCorpus, ValidDocumentsAcceptedInvalidRejected) {
  int nvalid = 0, ninvalid = 0;
  for (const Vocab& v : vocabs()) {
    for (const auto& e : corpus()["entries"]) {
      auto g = v.compiler.compile(kind_of(e["kind"]), e["text"]);
      for (const auto& d : e["valid"]) {
        const std::string doc = d;
        Matcher m(g);
        std::vector<uint32_t> w;
        bool ok = true;
        for (int32_t t : v.tok.encode(doc, false)) {
          fill(m, w);
          if (!bit(w, t) || !m.accept(t)) {
            ok = false;
            break;
          }
        }
        EXPECT_TRUE(ok && m.is_complete()) << v.name << " " << e["name"] << ": " << doc;
        ++nvalid;
      }
      for (const auto& d : e["invalid"]) {
        const std::string doc = d;
        Matcher m(g);
        bool ok = true;
        for (int32_t t : v.tok.encode(doc, false)) ok = ok && m.accept(t);
        EXPECT_FALSE(ok && m.is_complete()) << v.name << " " << e["name"] << " accepted: " << doc;
        ++ninvalid;
      }
    }
  }
  EXPECT_GE(nvalid, 1000);
  EXPECT_GE(ninvalid, 1000);
}

TEST(StructuredOutputCorpus, ErrorsNameTheProblem) {
  for (const auto& e : corpus()["errors"]) {
    const std::string text = e["text"], expect = e["expect"];
    try {
      smollm2_compiler().compile(kind_of(e["kind"]), text);
      ADD_FAILURE() << "no error for " << e["kind"] << " " << text;
    } catch (const GrammarError& err) {
      EXPECT_NE(std::string(err.what()).find(expect), std::string::npos)
          << "error for " << text << " was: " << err.what() << "\nexpected to contain: " << expect;
    }
  }
}

}  // namespace
}  // namespace vllm::engine::so
