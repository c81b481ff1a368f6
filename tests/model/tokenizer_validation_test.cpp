// Hostile tokenizer.json and generation_config.json files, through load_tokenizer on the
// folder: every id and every nesting is checked before use, and the LoadError names the file,
// the field and the value (docs/MODEL_FILES.md). Split from hf_validation_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "load_error_util.h"
#include "model/tokenizer_loader.h"
#include "test_files.h"

namespace vllm::testing {
namespace {

using nlohmann::json;

// tokenizer.json (and generation_config.json), through load_tokenizer on the folder.
class TokenizerValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("tok_validation");
    tj_ = tiny_tokenizer_json();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string load() {
    std::ofstream(dir_ + "/tokenizer.json") << tj_.dump();
    return error_of([&] { model::load_tokenizer(dir_); });
  }
  void expect_error(const std::vector<std::string>& want) {
    std::vector<std::string> w = want;
    w.push_back(dir_ + "/tokenizer.json");
    expect_has(load(), w);
  }
  std::string dir_;
  json tj_;
};

TEST_F(TokenizerValidation, BaselineLoads) {
  EXPECT_EQ(load(), "");
  auto t = model::load_tokenizer(dir_);
  EXPECT_EQ(t->encode("ab c"), std::vector<int32_t>({8, 4, 5}));
}

// Was undefined behaviour: get<int64_t>() on the double.
TEST_F(TokenizerValidation, VocabIdHugeFloat) {
  tj_["model"]["vocab"]["x"] = 1e300;
  expect_error({"field 'model.vocab[\"x\"]': 1e+300"});
}

// Was a 16M-entry id table (~0.5 GB) for a 300-byte file.
TEST_F(TokenizerValidation, VocabIdFarPastTheEntries) {
  tj_["model"]["vocab"]["x"] = 16000000;
  expect_error({"field 'model.vocab[\"x\"]': 16000000 is not an integer in [0, 1043]"});
}

TEST_F(TokenizerValidation, VocabIdGivenTwice) {
  tj_["model"]["vocab"]["x"] = 7;
  expect_error({"id 7 is given to both"});
}

TEST_F(TokenizerValidation, AddedTokenIdHugeFloat) {
  tj_["added_tokens"][1]["id"] = 1e300;
  expect_error({"field 'added_tokens[].id': 1e+300"});
}

// Was a truncation to a negative id.
TEST_F(TokenizerValidation, AddedTokenIdPastInt32) {
  tj_["added_tokens"][1]["id"] = int64_t{1} << 31;
  expect_error({"field 'added_tokens[].id': 2147483648"});
}

TEST_F(TokenizerValidation, AddedTokenIdFarPastTheEntries) {
  tj_["added_tokens"][1]["id"] = 1000000;
  expect_error({"field 'added_tokens[].id': 1000000"});
}

TEST_F(TokenizerValidation, PostProcessorIdHugeFloat) {
  tj_["post_processor"]["special_tokens"]["<s>"]["ids"] = {1e300};
  expect_error({"field 'post_processor.special_tokens[\"<s>\"].ids': 1e+300"});
}

// Was a silent load: encode() then emitted an id outside the vocabulary.
TEST_F(TokenizerValidation, PostProcessorIdOutsideVocab) {
  tj_["post_processor"]["special_tokens"]["<s>"]["ids"] = {9};
  EXPECT_EQ(load(), "");
  tj_["post_processor"]["special_tokens"]["<s>"]["ids"] = {12};
  expect_error({"post_processor id 12 is outside the vocabulary (size 10)"});
}

// `levels` Sequence wrappers around a ByteLevel entry, as JSON text (building it as a json value
// and dumping it would itself recurse that deep).
std::string nested(const std::string& list_key, int levels) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += R"({"type": "Sequence", ")" + list_key + R"(": [)";
  s += R"({"type": "ByteLevel"})";
  for (int i = 0; i < levels; ++i) s += "]}";
  return s;
}

// Was a stack overflow: the readers recurse once per Sequence level.
TEST_F(TokenizerValidation, DeeplyNestedPostProcessor) {
  tj_["post_processor"] = "@";
  std::string text = tj_.dump();
  text.replace(text.find("\"@\""), 3, nested("processors", 100000));
  std::ofstream(dir_ + "/tokenizer.json") << text;
  expect_has(error_of([&] { model::load_tokenizer(dir_); }),
             {dir_ + "/tokenizer.json", "post_processor is nested more than 16 levels"});
}

TEST_F(TokenizerValidation, DeeplyNestedPreTokenizer) {
  tj_["pre_tokenizer"] = "@";
  std::string text = tj_.dump();
  text.replace(text.find("\"@\""), 3, nested("pretokenizers", 100000));
  std::ofstream(dir_ + "/tokenizer.json") << text;
  expect_has(error_of([&] { model::load_tokenizer(dir_); }),
             {dir_ + "/tokenizer.json", "pre_tokenizer is nested more than 16 levels"});
}

// Was a read without end (until memory ran out): tokenizer.json linked to /dev/zero.
TEST_F(TokenizerValidation, TokenizerJsonIsNotARegularFile) {
  std::filesystem::create_symlink("/dev/zero", dir_ + "/tokenizer.json");
  expect_has(error_of([&] { model::load_tokenizer(dir_); }),
             {dir_ + "/tokenizer.json", "not a regular file"});
}

// Was undefined behaviour: get<int32_t>() on the double.
TEST_F(TokenizerValidation, GenerationEosHugeFloat) {
  std::ofstream(dir_ + "/generation_config.json") << R"({"eos_token_id": [1e300]})";
  expect_has(load(), {dir_ + "/generation_config.json", "field 'eos_token_id': 1e+300"});
}

// Was a silent load: every request then carried a stop id the engine refuses.
TEST_F(TokenizerValidation, GenerationEosOutsideVocab) {
  std::ofstream(dir_ + "/generation_config.json") << R"({"eos_token_id": 5000})";
  expect_has(load(), {dir_ + "/generation_config.json", "eos_token_id 5000"});
}

}  // namespace
}  // namespace vllm::testing
