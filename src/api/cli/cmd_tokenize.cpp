// `vllm tokenize`: encode text to ids or decode ids to text with a model's tokenizer, so a
// user can check a tokenizer by hand.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "api/cli/commands.h"
#include "api/model_resolver.h"
#include "model/tokenizer_loader.h"

namespace vllm::cli {

int cmd_tokenize(int argc, char** argv) {
  CLI::App app{"Encode text to token ids, or decode ids to text", "vllm tokenize"};
  std::string model, text, decode;
  bool json = false, no_special = false;
  app.add_option("--model", model, "model folder, GGUF file, or folder with tokenizer.json")
      ->required();
  app.add_flag("--json", json, "print ids as a JSON array");
  app.add_flag("--no-special", no_special, "do not add BOS/EOS (add_special_tokens=False)");
  app.add_option("--decode", decode, "comma-separated ids to decode instead of encoding");
  app.add_option("text", text, "text to encode");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    auto tok = model::load_tokenizer(api::resolve_model(model).path);
    if (!decode.empty()) {
      std::vector<int32_t> ids;
      std::stringstream ss(decode);
      std::string item;
      while (std::getline(ss, item, ',')) {
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(item, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || item.find_first_not_of(" \t", used) != std::string::npos) {
          std::fprintf(stderr, "error: --decode: '%s' is not a token id\n", item.c_str());
          return 2;
        }
        ids.push_back(static_cast<int32_t>(v));
      }
      std::cout << tok->decode(ids) << "\n";
      return 0;
    }
    const auto ids = tok->encode(text, !no_special);
    std::string out = json ? "[" : "";
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += json ? ", " : " ";
      out += std::to_string(ids[i]);
    }
    if (json) out += "]";
    std::cout << out << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

}  // namespace vllm::cli
