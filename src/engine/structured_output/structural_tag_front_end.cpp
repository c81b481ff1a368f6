// Structural tags (xgrammar's format, as vLLM takes it in response_format / structured_outputs
// and builds it for strict tool calls) -> grammar IR. Free text that must stop at a string (a
// tag's end, a trigger, an excluded string) is the language of texts not containing those
// strings: an Aho-Corasick automaton over code points, one right-recursive rule per state
// (tail calls, so the stack does not grow with the text).
#include <algorithm>
#include <map>
#include <set>

#include "engine/structured_output/front_ends.h"

namespace vllm::engine::so {
namespace {

using ojson = nlohmann::ordered_json;

constexpr int kMaxDepth = 64;
constexpr size_t kMaxForbiddenBytes = 4096;

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) out.push_back(tok::utf8_next(s, i));
  return out;
}

class TagCompiler {
 public:
  explicit TagCompiler(const JsonOptions& o) : o_(o) {}

  Grammar run(const ojson& tag) {
    const int32_t root = g_.add_rule("root", empty());
    g_.root = root;
    g_.define(root, format(top_format(tag), "structural_tag", {}, 0));
    return std::move(g_);
  }

 private:
  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw GrammarError("structural_tag: " + path + ": " + what);
  }

  // {"type": "structural_tag", "format": F}, or the legacy {"structures": [{"begin", "schema",
  // "end"}], "triggers": [...]} (vLLM's LegacyStructuralTagResponseFormat), which is triggered
  // tags with each structure's schema as content.
  ojson top_format(const ojson& tag) {
    if (!tag.is_object()) fail("structural_tag", "must be a JSON object");
    if (tag.contains("type") && tag["type"] != "structural_tag")
      fail("structural_tag.type", "must be \"structural_tag\"");
    if (tag.contains("format")) {
      if (tag.contains("structures")) fail("structural_tag", "has both format and structures");
      return tag["format"];
    }
    if (!tag.contains("structures"))
      fail("structural_tag", "needs a format (or the legacy structures and triggers)");
    const ojson& st = tag["structures"];
    if (!st.is_array()) fail("structural_tag.structures", "must be an array");
    ojson tags = ojson::array();
    for (size_t i = 0; i < st.size(); ++i) {
      const ojson& s = st[i];
      const std::string p = "structural_tag.structures[" + std::to_string(i) + "]";
      if (!s.is_object() || !s.contains("begin") || !s.contains("end"))
        fail(p, "must be an object with begin and end");
      ojson schema = s.contains("schema") && !s["schema"].is_null() ? s["schema"] : ojson(true);
      tags.push_back({{"type", "tag"},
                      {"begin", s["begin"]},
                      {"content", {{"type", "json_schema"}, {"json_schema", schema}}},
                      {"end", s["end"]}});
    }
    if (!tag.contains("triggers")) fail("structural_tag", "structures need triggers");
    return {{"type", "triggered_tags"}, {"triggers", tag["triggers"]}, {"tags", tags}};
  }

  static std::string str(const ojson& f, const char* key, const std::string& path) {
    if (!f.contains(key) || !f[key].is_string()) fail(path + "." + key, "must be a string");
    return f[key].get<std::string>();
  }
  static bool flag(const ojson& f, const char* key, const std::string& path) {
    if (!f.contains(key) || f[key].is_null()) return false;
    if (!f[key].is_boolean()) fail(path + "." + key, "must be a boolean");
    return f[key].get<bool>();
  }
  static std::vector<std::string> strings(const ojson& f, const char* key, const std::string& path,
                                          bool nonempty_items) {
    std::vector<std::string> out;
    if (!f.contains(key) || f[key].is_null()) return out;
    if (!f[key].is_array()) fail(path + "." + key, "must be an array of strings");
    for (const auto& x : f[key]) {
      if (!x.is_string()) fail(path + "." + key, "must be an array of strings");
      if (nonempty_items && x.get<std::string>().empty())
        fail(path + "." + key, "must not hold an empty string");
      out.push_back(x.get<std::string>());
    }
    return out;
  }
  static const ojson& kids(const ojson& f, const char* key, const std::string& path) {
    if (!f.contains(key) || !f[key].is_array() || f[key].empty())
      fail(path + "." + key, "must be a non-empty array of formats");
    return f[key];
  }
  static void refuse_keys(const ojson& f, const std::string& path,
                          std::initializer_list<const char*> keys) {
    for (const char* k : keys)
      if (f.contains(k) && !f[k].is_null())
        fail(path + "." + k, "is not supported by this server's grammar engine");
  }

  // The strings a format always starts with, when that is known (so free text before it can
  // stop there); empty when it is not.
  static std::vector<std::string> first_strings(const ojson& f) {
    if (!f.is_object() || !f.contains("type") || !f["type"].is_string()) return {};
    const std::string t = f["type"].get<std::string>();
    if (t == "const_string" && f.contains("value") && f["value"].is_string() &&
        !f["value"].get<std::string>().empty())
      return {f["value"].get<std::string>()};
    if (t == "tag" && f.contains("begin") && f["begin"].is_string() &&
        !f["begin"].get<std::string>().empty())
      return {f["begin"].get<std::string>()};
    if (t == "sequence" && f.contains("elements") && f["elements"].is_array() &&
        !f["elements"].empty())
      return first_strings(f["elements"][0]);
    if (t == "or" && f.contains("elements") && f["elements"].is_array()) {
      std::vector<std::string> out;
      for (const auto& e : f["elements"]) {
        auto s = first_strings(e);
        if (s.empty()) return {};
        out.insert(out.end(), s.begin(), s.end());
      }
      return out;
    }
    return {};
  }

  Expr format(const ojson& f, const std::string& path, const std::vector<std::string>& stops,
              int depth) {
    if (depth > kMaxDepth) fail(path, "nested deeper than " + std::to_string(kMaxDepth));
    if (!f.is_object()) fail(path, "must be a format object");
    const std::string type = str(f, "type", path);
    const std::string p = path + "(" + type + ")";
    if (type == "const_string") return lit(str(f, "value", p));
    if (type == "any_text") {
      refuse_keys(f, p, {"max_tokens", "max_chars"});
      std::vector<std::string> forbid = strings(f, "excludes", p, true);
      forbid.insert(forbid.end(), stops.begin(), stops.end());
      return free_text(forbid, p);
    }
    if (type == "json_schema") {
      const std::string style =
          f.contains("style") && f["style"].is_string() ? f["style"].get<std::string>() : "json";
      const bool xml = style == "qwen_xml" || style == "glm_xml" || style == "minimax_xml";
      if (style != "json" && !xml)
        fail(p + ".style",
             "only \"json\", \"qwen_xml\", \"glm_xml\" and \"minimax_xml\" are supported by "
             "this server's grammar engine, got " +
                 f["style"].dump());
      if (flag(f, "any_order", p))
        fail(p + ".any_order", "is not supported by this server's grammar engine");
      if (!strings(f, "excludes", p, false).empty())
        fail(p + ".excludes", "is not supported by this server's grammar engine");
      if (!f.contains("json_schema")) fail(p + ".json_schema", "is missing");
      JsonOptions o = o_;
      if (f.contains("max_whitespace_cnt") && !f["max_whitespace_cnt"].is_null()) {
        if (!f["max_whitespace_cnt"].is_number_integer() || f["max_whitespace_cnt"].get<int>() < 0)
          fail(p + ".max_whitespace_cnt", "must be a non-negative integer");
        o.max_whitespace = std::min(o.max_whitespace, f["max_whitespace_cnt"].get<int32_t>());
      }
      // The same schema in the same style is one rule, however many tags hold it (a harmony
      // call is twelve spellings of one tool's arguments).
      const std::string key =
          style + "|" + std::to_string(o.max_whitespace) + "|" + f["json_schema"].dump();
      if (auto it = schema_rules_.find(key); it != schema_rules_.end()) return ref(it->second);
      try {
        Expr e = xml ? xml_object(f["json_schema"], style, o, p + ".json_schema")
                     : import(json_schema_grammar(f["json_schema"], o));
        const int32_t rule = g_.add_rule("schema" + std::to_string(schema_rules_.size()), e);
        schema_rules_.emplace(key, rule);
        return ref(rule);
      } catch (const GrammarError& e) {
        if (std::string(e.what()).rfind("structural_tag: ", 0) == 0) throw;
        fail(p + ".json_schema", e.what());
      }
    }
    if (type == "regex") {
      try {
        return regex_expr(str(f, "pattern", p));
      } catch (const GrammarError& e) {
        fail(p + ".pattern", e.what());
      }
    }
    if (type == "grammar") {
      if (f.contains("syntax") && f["syntax"] != "ebnf")
        fail(p + ".syntax", "only \"ebnf\" is supported by this server's grammar engine");
      try {
        return import(parse_gbnf(str(f, "grammar", p)));
      } catch (const GrammarError& e) {
        fail(p + ".grammar", e.what());
      }
    }
    if (type == "sequence") {
      const ojson& el = kids(f, "elements", p);
      std::vector<Expr> parts;
      for (size_t i = 0; i < el.size(); ++i) {
        std::vector<std::string> next = i + 1 < el.size() ? first_strings(el[i + 1]) : stops;
        parts.push_back(format(el[i], p + ".elements[" + std::to_string(i) + "]", next, depth + 1));
      }
      return seq(std::move(parts));
    }
    if (type == "or") {
      const ojson& el = kids(f, "elements", p);
      std::vector<Expr> parts;
      for (size_t i = 0; i < el.size(); ++i)
        parts.push_back(
            format(el[i], p + ".elements[" + std::to_string(i) + "]", stops, depth + 1));
      return alt(std::move(parts));
    }
    if (type == "optional" || type == "plus" || type == "star" || type == "repeat") {
      if (!f.contains("content")) fail(p + ".content", "is missing");
      int32_t lo = type == "plus" ? 1 : 0, hi = type == "optional" ? 1 : -1;
      if (type == "repeat") {
        if (!f.contains("min") || !f["min"].is_number_integer() || !f.contains("max") ||
            !f["max"].is_number_integer())
          fail(p, "needs integer min and max");
        const int64_t mn = f["min"].get<int64_t>(), mx = f["max"].get<int64_t>();
        if (mn < 0 || mn > 10000 || mx < -1 || mx > 10000 || (mx != -1 && mx < mn))
          fail(p, "min and max must satisfy 0 <= min <= max <= 10000 (max -1: unbounded)");
        lo = static_cast<int32_t>(mn);
        hi = static_cast<int32_t>(mx);
      }
      // Free text inside a repetition stops where the content starts again, or at what follows.
      std::vector<std::string> inner = first_strings(f["content"]);
      inner.insert(inner.end(), stops.begin(), stops.end());
      return rep(format(f["content"], p + ".content", inner, depth + 1), lo, hi);
    }
    if (type == "tag") return tag(f, p, depth);
    if (type == "triggered_tags") {
      const std::vector<std::string> triggers = strings(f, "triggers", p, true);
      if (triggers.empty()) fail(p + ".triggers", "must hold at least one trigger");
      const ojson& tl = kids(f, "tags", p);
      std::vector<Expr> tags;
      for (size_t i = 0; i < tl.size(); ++i) {
        const std::string tp = p + ".tags[" + std::to_string(i) + "]";
        if (!tl[i].is_object() || tl[i].value("type", "tag") != "tag")
          fail(tp, "must be a tag format");
        const std::string begin = str(tl[i], "begin", tp);
        if (std::none_of(triggers.begin(), triggers.end(),
                         [&](const std::string& t) { return begin.rfind(t, 0) == 0; }))
          fail(tp + ".begin", "starts with none of the triggers");
        tags.push_back(tag(tl[i], tp, depth));
      }
      std::vector<std::string> forbid = strings(f, "excludes", p, true);
      forbid.insert(forbid.end(), triggers.begin(), triggers.end());
      forbid.insert(forbid.end(), stops.begin(), stops.end());
      const Expr any_tag = alt(std::move(tags));
      const bool at_least_one = flag(f, "at_least_one", p);
      const bool first_only = flag(f, "stop_after_first", p);
      // As xgrammar: at_least_one starts with a tag; stop_after_first ends at the first tag.
      if (at_least_one && first_only) return any_tag;
      const Expr text = free_text(forbid, p);
      if (first_only) return seq({text, opt(any_tag)});
      const Expr loop = star(seq({any_tag, text}));
      return at_least_one ? seq({any_tag, text, loop}) : seq({text, loop});
    }
    if (type == "tags_with_separator") {
      const ojson& tl = kids(f, "tags", p);
      if (!f.contains("separator") || !f["separator"].is_string())
        fail(p + ".separator", "must be a string");
      std::vector<Expr> tags;
      for (size_t i = 0; i < tl.size(); ++i) {
        const std::string tp = p + ".tags[" + std::to_string(i) + "]";
        if (!tl[i].is_object() || tl[i].value("type", "tag") != "tag")
          fail(tp, "must be a tag format");
        tags.push_back(tag(tl[i], tp, depth));
      }
      const Expr any_tag = alt(std::move(tags));
      const bool at_least_one = flag(f, "at_least_one", p);
      const Expr some =
          flag(f, "stop_after_first", p)
              ? any_tag
              : seq({any_tag, star(seq({lit(f["separator"].get<std::string>()), any_tag}))});
      return at_least_one ? some : opt(some);
    }
    if (type == "token" || type == "exclude_token" || type == "any_tokens" ||
        type == "token_triggered_tags" || type == "token_dispatch" || type == "dispatch" ||
        type == "qwen_xml_parameter")
      fail(p, "format type \"" + type + "\" is not supported by this server's grammar engine");
    fail(path + ".type", "unknown format type \"" + type + "\"");
  }

  Expr tag(const ojson& f, const std::string& p, int depth) {
    if (f.contains("begin") && f["begin"].is_object())
      fail(p + ".begin", "token begins are not supported by this server's grammar engine");
    const std::string begin = str(f, "begin", p);
    std::vector<std::string> ends;
    if (f.contains("end") && f["end"].is_array()) {
      ends = strings(f, "end", p, false);
      if (ends.empty()) fail(p + ".end", "must hold at least one string");
    } else if (f.contains("end") && f["end"].is_object()) {
      fail(p + ".end", "token ends are not supported by this server's grammar engine");
    } else {
      ends.push_back(str(f, "end", p));
    }
    if (!f.contains("content")) fail(p + ".content", "is missing");
    std::vector<std::string> stops;
    for (const auto& e : ends)
      if (!e.empty()) stops.push_back(e);
    std::vector<Expr> end_alts;
    for (const auto& e : ends) end_alts.push_back(lit(e));
    return seq({lit(begin), format(f["content"], p + ".content", stops, depth + 1),
                alt(std::move(end_alts))});
  }

  // xgrammar's XML styles of tool arguments: the object as elements in the schema's order,
  // whitespace around them, each <parameter=KEY>VALUE</parameter> (qwen_xml: Qwen3-Coder /
  // Qwen3.5), <arg_key>KEY</arg_key><arg_value>VALUE</arg_value> (glm_xml: GLM-4.5 to 4.7) or
  // <parameter name="KEY">VALUE</parameter> (minimax_xml: MiniMax-M2); a plain string value is
  // raw text up to the closing tag, enum / const values raw (strings) or JSON, constrained
  // strings (length, pattern) raw text of that shape, anything else JSON.
  Expr xml_object(const ojson& schema, const std::string& style, const JsonOptions& o,
                  const std::string& p) {
    const Expr ws =
        rep(cls({{' ', ' '}, {'\t', '\t'}, {'\n', '\n'}, {'\r', '\r'}}), 0, o.max_whitespace);
    const bool glm = style == "glm_xml", minimax = style == "minimax_xml";
    const std::string open = glm ? "<arg_key>" : minimax ? "<parameter name=\"" : "<parameter=";
    const std::string close = glm ? "</arg_value>" : "</parameter>";
    auto after_key = [&] {
      return glm ? seq({lit("</arg_key>"), ws, lit("<arg_value>")}) : lit(minimax ? "\">" : ">");
    };
    const Expr raw = free_text({close}, p);
    const ojson* defs = nullptr;
    for (const char* k : {"$defs", "definitions"})
      if (schema.is_object() && schema.contains(k)) defs = &schema[k];
    auto json = [&](ojson s) {
      if (defs && s.is_object()) {
        for (const char* k : {"$defs", "definitions"})
          if (schema.contains(k) && !s.contains(k)) s[k] = schema[k];
      }
      return import(json_schema_grammar(s, o));
    };
    auto plain_string = [](const ojson& s) {
      if (!s.is_object() || s.value("type", ojson()) != "string") return false;
      for (const char* k : {"enum", "const", "pattern", "format", "minLength", "maxLength"})
        if (s.contains(k)) return false;
      return true;
    };
    auto element = [&](Expr name, Expr value) {
      return seq({ws, lit(open), std::move(name), after_key(), std::move(value), lit(close)});
    };
    const Expr name = seq({cls({{'a', 'z'}, {'A', 'Z'}, {'_', '_'}}),
                           star(cls({{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'_', '_'}}))});
    const Expr any_value =
        seq({ws, alt({raw, json(ojson{{"type", "array"}}), json(ojson{{"type", "object"}})}), ws});
    const Expr any_element = element(name, any_value);
    auto value = [&](const ojson& s, const std::string& at) -> Expr {
      if (plain_string(s)) return raw;
      if (s.is_object() && (s.contains("enum") || s.contains("const"))) {
        std::vector<Expr> alts;
        const ojson vals = s.contains("const") ? ojson::array({s["const"]}) : s["enum"];
        if (!vals.is_array()) fail(at + ".enum", "must be an array");
        for (const auto& v : vals)
          alts.push_back(lit(v.is_string() ? v.get<std::string>() : v.dump()));
        return seq({ws, alt(std::move(alts)), ws});
      }
      if (s.is_object() && s.value("type", ojson()) == "string") {
        if (s.contains("format"))
          fail(at + ".format", "is not supported in the " + style + " style");
        if (s.contains("pattern")) {
          if (!s["pattern"].is_string()) fail(at + ".pattern", "must be a string");
          return seq({ws, regex_expr(s["pattern"].get<std::string>()), ws});
        }
        const int64_t lo = s.value("minLength", int64_t{0}), hi = s.value("maxLength", int64_t{-1});
        if (lo < 0 || lo > 10000 || hi > 10000 || (hi >= 0 && hi < lo))
          fail(at, "minLength / maxLength out of range");
        return seq({ws, rep(any_char(), static_cast<int32_t>(lo), static_cast<int32_t>(hi)), ws});
      }
      // A string among other types: raw text or the other types' JSON.
      if (s.is_object() && s.contains("type") && s["type"].is_array()) {
        std::vector<Expr> alts;
        for (const auto& t : s["type"])
          alts.push_back(t == "string" ? raw : json(ojson{{"type", t}}));
        return seq({ws, alt(std::move(alts)), ws});
      }
      for (const char* k : {"anyOf", "oneOf"})
        if (s.is_object() && s.contains(k) && s[k].is_array()) {
          std::vector<Expr> alts;
          for (const auto& b : s[k]) alts.push_back(plain_string(b) ? raw : json(b));
          return seq({ws, alt(std::move(alts)), ws});
        }
      return seq({ws, json(s), ws});
    };
    const bool any_object =
        (schema.is_boolean() && schema.get<bool>()) ||
        (schema.is_object() && !schema.contains("properties") &&
         schema.value("type", ojson("object")) == "object" &&
         !(schema.contains("additionalProperties") && schema["additionalProperties"] == false));
    if (any_object) return seq({star(any_element), ws});
    if (!schema.is_object() || !schema.contains("properties") || !schema["properties"].is_object())
      fail(p, "the " + style + " style needs an object schema with properties (or true)");
    std::set<std::string> required;
    if (schema.contains("required") && schema["required"].is_array())
      for (const auto& r : schema["required"])
        if (r.is_string()) required.insert(r.get<std::string>());
    std::vector<Expr> parts;
    for (const auto& [k, s] : schema["properties"].items()) {
      Expr e = element(lit(k), value(s, p + ".properties." + k));
      parts.push_back(required.count(k) ? std::move(e) : opt(std::move(e)));
    }
    if (schema.contains("additionalProperties") && schema["additionalProperties"] == true)
      parts.push_back(star(any_element));
    else if (schema.contains("additionalProperties") &&
             !schema["additionalProperties"].is_boolean())
      fail(p + ".additionalProperties",
           "a schema there is not supported in the " + style + " style");
    parts.push_back(ws);
    return seq(std::move(parts));
  }

  // Copies a front end's grammar in; returns a reference to its root.
  Expr import(const Grammar& sub) {
    const auto base = static_cast<int32_t>(g_.rules.size());
    for (const auto& r : sub.rules) g_.add_rule("st" + std::to_string(base) + "_" + r.name, r.body);
    for (size_t i = base; i < g_.rules.size(); ++i) shift(g_.rules[i].body, base);
    return ref(base + sub.root);
  }
  static void shift(Expr& e, int32_t base) {
    if (e.kind == Expr::Kind::kRef) e.rule += base;
    for (auto& k : e.kids) shift(k, base);
  }

  // Text that contains none of `forbid` (empty: any text).
  Expr free_text(std::vector<std::string> forbid, const std::string& p) {
    std::sort(forbid.begin(), forbid.end());
    forbid.erase(std::unique(forbid.begin(), forbid.end()), forbid.end());
    forbid.erase(std::remove(forbid.begin(), forbid.end(), std::string()), forbid.end());
    if (forbid.empty()) return star(any_char());
    size_t bytes = 0;
    for (const auto& s : forbid) bytes += s.size();
    if (bytes > kMaxForbiddenBytes)
      fail(p, "the strings free text must avoid add up to over 4096 bytes");
    const std::string key = [&] {
      std::string k;
      for (const auto& s : forbid) k += std::to_string(s.size()) + ":" + s;
      return k;
    }();
    if (auto it = free_rules_.find(key); it != free_rules_.end()) return ref(it->second);
    // Aho-Corasick trie over code points.
    struct Node {
      std::map<uint32_t, int> next;
      int fail = 0;
      bool bad = false;
    };
    std::vector<Node> t(1);
    std::set<uint32_t> alphabet;
    for (const auto& s : forbid) {
      int n = 0;
      for (uint32_t c : code_points(s)) {
        alphabet.insert(c);
        auto it = t[n].next.find(c);
        if (it == t[n].next.end()) {
          t.push_back({});
          it = t[n].next.emplace(c, static_cast<int>(t.size() - 1)).first;
        }
        n = it->second;
      }
      t[n].bad = true;
    }
    std::vector<int> order{0};
    for (size_t i = 0; i < order.size(); ++i) {
      const int n = order[i];
      for (const auto& [c, m] : t[n].next) {
        if (n != 0) {
          int f = t[n].fail;
          while (f != 0 && !t[f].next.count(c)) f = t[f].fail;
          auto it = t[f].next.find(c);
          t[m].fail = it != t[f].next.end() ? it->second : 0;
        }
        t[m].bad = t[m].bad || t[t[m].fail].bad;
        order.push_back(m);
      }
    }
    auto step = [&](int n, uint32_t c) {
      while (true) {
        auto it = t[n].next.find(c);
        if (it != t[n].next.end()) return it->second;
        if (n == 0) return 0;
        n = t[n].fail;
      }
    };
    // One rule per state that is not a match.
    std::vector<int32_t> rule(t.size(), -1);
    const std::string name = "free" + std::to_string(free_rules_.size());
    for (size_t n = 0; n < t.size(); ++n)
      if (!t[n].bad) rule[n] = g_.add_rule(name + "_" + std::to_string(n), empty());
    for (size_t n = 0; n < t.size(); ++n) {
      if (t[n].bad) continue;
      // The alphabet's characters by the state they lead to (none into a match); back to the
      // start go those leading there and every character outside the forbidden strings.
      std::map<int, std::vector<CodeRange>> by_target;
      std::vector<CodeRange> not_back;
      for (uint32_t c : alphabet) {
        const int m = step(static_cast<int>(n), c);
        if (m != 0) not_back.push_back({c, c});
        if (m != 0 && !t[m].bad) by_target[m].push_back({c, c});
      }
      const Expr back = cls(not_back, true);
      std::vector<Expr> alts{empty()};
      Expr self_loop = empty();
      for (auto& [m, r] : by_target) alts.push_back(seq({cls(r), ref(rule[m])}));
      if (n == 0) {
        self_loop = star(back);
      } else {
        alts.push_back(seq({back, ref(rule[0])}));
      }
      g_.define(rule[n], seq({self_loop, alt(std::move(alts))}));
    }
    free_rules_.emplace(key, rule[0]);
    return ref(rule[0]);
  }

  const JsonOptions& o_;
  Grammar g_;
  std::map<std::string, int32_t> free_rules_;
  std::map<std::string, int32_t> schema_rules_;  // style | whitespace | schema -> rule
};

}  // namespace

Grammar structural_tag_grammar(const nlohmann::ordered_json& tag, const JsonOptions& o) {
  try {
    return TagCompiler(o).run(tag);
  } catch (const nlohmann::json::exception& e) {
    throw GrammarError(std::string("structural_tag: a field has a value of the wrong type (") +
                       e.what() + ")");
  }
}

}  // namespace vllm::engine::so
