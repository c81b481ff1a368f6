// JSON Schema -> grammar IR. Each $ref target, property value and array item gets its own
// rule (so recursion works and the same string/number rules are shared); everything else is
// inline. A keyword that would change which documents are valid and that we cannot honour
// is an error naming it and where it is; annotations are ignored.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "engine/structured_output/json_parts.h"

namespace vllm::engine::so {
namespace {

using ojson = nlohmann::ordered_json;
namespace jp = json_parts;

const std::set<std::string> kAnnotations = {
    "title", "description", "examples", "default", "$comment", "$schema", "$id", "id", "deprecated",
    "readOnly", "writeOnly", "$anchor", "$defs", "definitions", "contentMediaType",
    "contentEncoding", "discriminator", "$vocabulary", "example", "externalDocs", "xml",
    // OpenAPI's `nullable` is not JSON Schema; validators ignore it, and so do we.
    "nullable"};
const std::set<std::string> kUnsupported = {"not",
                                            "if",
                                            "then",
                                            "else",
                                            "patternProperties",
                                            "dependentSchemas",
                                            "dependentRequired",
                                            "dependencies",
                                            "multipleOf",
                                            "minProperties",
                                            "maxProperties",
                                            "propertyNames",
                                            "contains",
                                            "minContains",
                                            "maxContains",
                                            "unevaluatedProperties",
                                            "unevaluatedItems",
                                            "$dynamicRef",
                                            "$recursiveRef",
                                            "$dynamicAnchor",
                                            "$recursiveAnchor"};
const std::set<std::string> kObjectKeys = {"properties", "required", "additionalProperties"};
const std::set<std::string> kArrayKeys = {"items",    "prefixItems", "additionalItems",
                                          "minItems", "maxItems",    "uniqueItems"};
const std::set<std::string> kStringKeys = {"minLength", "maxLength", "pattern", "format"};
const std::set<std::string> kNumberKeys = {"minimum", "maximum", "exclusiveMinimum",
                                           "exclusiveMaximum"};

class SchemaCompiler {
 public:
  SchemaCompiler(const ojson& root, const JsonOptions& o) : root_(root), o_(o) {}

  Grammar run() {
    const int32_t r = g_.add_rule("root", empty());
    g_.define(r, compile(root_, "#", 0));
    g_.root = r;
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw GrammarError("JSON schema at " + path + ": " + msg);
  }

  Expr ws() const { return jp::ws(o_); }
  Expr sep() const { return seq({ws(), lit(","), ws()}); }
  Expr any_value() { return ref(jp::any_json_rules(g_, o_, any_).value); }
  Expr any_string() { return ref(jp::any_json_rules(g_, o_, any_).string); }

  int32_t new_rule(const std::string& hint) {
    if (static_cast<int32_t>(g_.rules.size()) >= o_.max_rules)
      throw GrammarError("JSON schema too large: more than " + std::to_string(o_.max_rules) +
                         " grammar rules (limit)");
    return g_.add_rule(hint, empty());
  }

  // The schema at `s` as its own rule.
  Expr as_rule(const ojson& s, const std::string& path, int depth, const std::string& hint) {
    if (s.is_boolean() && s.get<bool>()) return any_value();
    const int32_t r = new_rule(hint);
    g_.define(r, compile(s, path, depth + 1));
    return ref(r);
  }

  const ojson& resolve(const std::string& ref, const std::string& path) {
    if (ref.empty() || ref[0] != '#')
      fail(path, "$ref '" + ref + "' is not supported (only references within the schema, '#...')");
    const ojson* cur = &root_;
    size_t i = 1;
    if (i < ref.size() && ref[i] != '/')
      fail(path, "$ref '" + ref + "': anchors are not supported, use a JSON pointer");
    while (i < ref.size()) {
      ++i;  // '/'
      std::string tok;
      while (i < ref.size() && ref[i] != '/') {
        if (ref[i] == '~' && i + 1 < ref.size()) {
          tok += ref[i + 1] == '1' ? '/' : '~';
          i += 2;
        } else if (ref[i] == '%' && i + 2 < ref.size() &&
                   isxdigit(static_cast<unsigned char>(ref[i + 1])) &&
                   isxdigit(static_cast<unsigned char>(ref[i + 2]))) {
          tok += static_cast<char>(std::stoi(ref.substr(i + 1, 2), nullptr, 16));
          i += 3;
        } else {
          tok += ref[i++];
        }
      }
      if (cur->is_object() && cur->contains(tok)) {
        cur = &(*cur)[tok];
      } else if (cur->is_array() && !tok.empty() && tok.size() < 10 &&
                 std::all_of(tok.begin(), tok.end(), ::isdigit) && std::stoul(tok) < cur->size()) {
        cur = &(*cur)[std::stoul(tok)];
      } else {
        fail(path, "$ref '" + ref + "' does not resolve (no '" + tok + "')");
      }
    }
    return *cur;
  }

  Expr compile(const ojson& s, const std::string& path, int depth) {
    if (depth > 200) fail(path, "schema nested deeper than 200 levels (limit)");
    if (s.is_boolean()) return s.get<bool>() ? any_value() : alt({});
    if (!s.is_object()) fail(path, "a schema must be an object or a boolean");
    std::set<std::string> seen;
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& k = it.key();
      if (kUnsupported.count(k)) {
        if (k == "propertyNames" || k == "unevaluatedProperties" || k == "unevaluatedItems")
          if (it.value().is_boolean() && it.value().get<bool>()) continue;
        fail(path, "keyword '" + k + "' is not supported");
      }
      if (k == "uniqueItems" && it.value().is_boolean() && it.value().get<bool>())
        fail(path, "keyword 'uniqueItems': true is not supported");
      if (!kAnnotations.count(k) && k.rfind("x-", 0) != 0) seen.insert(k);
    }
    if (seen.count("$ref")) {
      for (const auto& k : seen)
        if (k != "$ref") fail(path, "keyword '" + k + "' next to '$ref' is not supported");
      const std::string r = s["$ref"].get<std::string>();
      auto it = refs_.find(r);
      if (it != refs_.end()) return ref(it->second);
      const int32_t id = new_rule("ref");
      refs_[r] = id;
      const ojson& target = resolve(r, path);
      g_.define(id, compile(target, r, depth + 1));
      return ref(id);
    }
    for (const char* comb : {"anyOf", "oneOf", "allOf"}) {
      if (!seen.count(comb)) continue;
      for (const auto& k : seen)
        if (k != comb) fail(path, "keyword '" + k + "' next to '" + comb + "' is not supported");
      const ojson& list = s[comb];
      if (!list.is_array() || list.empty())
        fail(path, std::string(comb) + " must be a non-empty array");
      if (std::string(comb) == "allOf") {
        if (list.size() != 1) fail(path, "allOf with more than one subschema is not supported");
        return compile(list[0], path + "/allOf/0", depth + 1);
      }
      // oneOf is compiled as anyOf: an output matching two branches is not excluded.
      std::vector<Expr> alts;
      for (size_t i = 0; i < list.size(); ++i)
        alts.push_back(compile(list[i], path + "/" + comb + "/" + std::to_string(i), depth + 1));
      return alt(std::move(alts));
    }
    if (s.contains("const")) return jp::literal_value(s["const"], o_);
    if (s.contains("enum")) {
      const ojson& e = s["enum"];
      if (!e.is_array() || e.empty()) fail(path, "enum must be a non-empty array");
      if (static_cast<int32_t>(e.size()) > o_.max_enum_values)
        fail(path, "enum has " + std::to_string(e.size()) + " values, over the limit of " +
                       std::to_string(o_.max_enum_values));
      std::vector<Expr> alts;
      for (const auto& v : e) alts.push_back(jp::literal_value(v, o_));
      return alt(std::move(alts));
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const ojson& t = s["type"];
      if (t.is_string()) {
        types.push_back(t.get<std::string>());
      } else if (t.is_array()) {
        for (const auto& x : t) types.push_back(x.get<std::string>());
      } else {
        fail(path, "type must be a string or an array of strings");
      }
    } else {
      auto any_of = [&](const std::set<std::string>& ks) {
        return std::any_of(ks.begin(), ks.end(),
                           [&](const std::string& k) { return seen.count(k) > 0; });
      };
      if (any_of(kObjectKeys)) types.push_back("object");
      if (any_of(kArrayKeys)) types.push_back("array");
      if (any_of(kStringKeys)) types.push_back("string");
      if (any_of(kNumberKeys)) types.push_back("number");
      if (types.empty()) return any_value();
    }
    std::vector<Expr> alts;
    for (const auto& t : types) {
      if (t == "object") {
        alts.push_back(object(s, path, depth));
      } else if (t == "array") {
        alts.push_back(array(s, path, depth));
      } else if (t == "string") {
        alts.push_back(string(s, path));
      } else if (t == "integer") {
        alts.push_back(number(s, path, true));
      } else if (t == "number") {
        alts.push_back(number(s, path, false));
      } else if (t == "boolean") {
        alts.push_back(alt({lit("true"), lit("false")}));
      } else if (t == "null") {
        alts.push_back(lit("null"));
      } else {
        fail(path, "unknown type '" + t + "'");
      }
    }
    return alt(std::move(alts));
  }

  int64_t get_count(const ojson& s, const char* k, const std::string& path, int64_t dflt) {
    if (!s.contains(k)) return dflt;
    const ojson& v = s[k];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>()))
      fail(path, std::string(k) + " must be a non-negative integer");
    const double d = v.get<double>();
    if (d > 10000 && !(std::string(k) == "maxLength" || std::string(k) == "maxItems"))
      fail(path, std::string(k) + " = " + v.dump() + " exceeds the limit of 10000");
    // A large maximum changes nothing a model will reach; treat it as unbounded.
    if (d > 10000) return -1;
    return static_cast<int64_t>(d);
  }

  Expr string(const ojson& s, const std::string& path) {
    const bool has_len = s.contains("minLength") || s.contains("maxLength");
    if (s.contains("pattern")) {
      if (has_len || s.contains("format"))
        fail(path, "'pattern' together with 'minLength'/'maxLength'/'format' is not supported");
      return seq({lit("\""),
                  regex_expr(s["pattern"].get<std::string>(), json_string_chars, "pattern"),
                  lit("\"")});
    }
    if (s.contains("format")) {
      const std::string f = s["format"].get<std::string>();
      if (has_len) fail(path, "'format' together with 'minLength'/'maxLength' is not supported");
      auto e = jp::format_content(f);
      if (!e)
        fail(path,
             "format '" + f + "' is not supported (supported: " + jp::supported_formats() + ")");
      return seq({lit("\""), std::move(*e), lit("\"")});
    }
    if (!has_len) return any_string();
    const int64_t lo = get_count(s, "minLength", path, 0);
    const int64_t hi = get_count(s, "maxLength", path, -1);
    if (hi >= 0 && hi < lo) fail(path, "maxLength < minLength");
    return seq({lit("\""),
                rep(jp::string_char(), static_cast<int32_t>(lo), static_cast<int32_t>(hi)),
                lit("\"")});
  }

  std::optional<int64_t> int_bound(const ojson& v, const char* k, const std::string& path,
                                   bool integer, bool up) {
    if (!v.is_number()) fail(path, std::string(k) + " must be a number");
    const double d = v.get<double>();
    if (std::abs(d) > 9e15) fail(path, std::string(k) + " = " + v.dump() + " is too large");
    if (d != std::floor(d)) {
      if (!integer)
        fail(path,
             std::string(k) + " = " + v.dump() + " on a number: only integer bounds are supported");
      // An integer bound equivalent to a fractional one.
      return static_cast<int64_t>(up ? std::floor(d) : std::ceil(d));
    }
    return static_cast<int64_t>(d);
  }

  Expr number(const ojson& s, const std::string& path, bool integer) {
    std::optional<int64_t> lo, hi;
    bool lo_x = false, hi_x = false;
    if (s.contains("minimum")) lo = int_bound(s["minimum"], "minimum", path, integer, false);
    if (s.contains("maximum")) hi = int_bound(s["maximum"], "maximum", path, integer, true);
    auto excl = [&](const char* k, std::optional<int64_t>& b, bool& bx, bool up) {
      if (!s.contains(k)) return;
      const ojson& v = s[k];
      if (v.is_boolean()) {  // draft 4: modifies minimum / maximum
        if (v.get<bool>() && b) bx = true;
        return;
      }
      auto nb = int_bound(v, k, path, integer, up);
      const double d = v.get<double>();
      const bool frac = d != std::floor(d);
      // Keep the tighter of the two bounds.
      if (!b || (up ? *nb < *b || (*nb == *b) : *nb > *b || (*nb == *b))) {
        b = nb;
        bx = !frac;
      }
    };
    excl("exclusiveMinimum", lo, lo_x, false);
    excl("exclusiveMaximum", hi, hi_x, true);
    if (integer) {
      if (lo && lo_x) *lo += 1;
      if (hi && hi_x) *hi -= 1;
      if (lo && hi && *lo > *hi) fail(path, "the integer range is empty");
      if (!lo && !hi) return ref(int_rule());
      return jp::integer_range(lo, hi);
    }
    if (!lo && !hi) return ref(jp::any_json_rules(g_, o_, any_).number);
    return jp::number_range(lo, lo_x, hi, hi_x);
  }

  int32_t int_rule() {
    if (int_rule_ < 0) int_rule_ = g_.add_rule("json_integer", jp::integer_range({}, {}));
    return int_rule_;
  }

  // Keys of additional properties: strings without escapes that are none of `names`.
  Expr other_key(const std::vector<std::string>& names) {
    struct Node {
      std::map<uint32_t, int> kids;
      bool end = false;
    };
    std::vector<Node> trie(1);
    for (const auto& n : names) {
      int cur = 0;
      for (size_t i = 0; i < n.size();) {
        uint32_t cp = static_cast<unsigned char>(n[i]);
        int len = cp < 0x80 ? 1 : cp < 0xE0 ? 2 : cp < 0xF0 ? 3 : 4;
        if (len > 1) {
          cp &= (0x7F >> len);
          for (int k = 1; k < len && i + k < n.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(n[i + k]) & 0x3F);
        }
        i += len;
        auto it = trie[cur].kids.find(cp);
        if (it == trie[cur].kids.end()) {
          trie.push_back({});
          it = trie[cur].kids.emplace(cp, static_cast<int>(trie.size() - 1)).first;
        }
        cur = it->second;
      }
      trie[cur].end = true;
    }
    const std::vector<CodeRange> safe =
        normalize_ranges({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true);
    std::function<Expr(int)> build = [&](int n) -> Expr {
      std::vector<Expr> alts;
      if (!trie[n].end) alts.push_back(empty());
      std::vector<CodeRange> other = safe, used;
      for (const auto& [cp, child] : trie[n].kids) {
        std::string s;
        utf8_append(s, cp);
        alts.push_back(seq({lit(s), build(child)}));
        used.push_back({cp, cp});
      }
      // Any character not continuing a name, then anything.
      std::vector<CodeRange> rest;
      const auto u = normalize_ranges(used, true);
      for (const auto& a : safe)
        for (const auto& b : u) {
          const uint32_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
          if (lo <= hi) rest.push_back({lo, hi});
        }
      if (!rest.empty()) alts.push_back(seq({cls(rest), star(cls(safe))}));
      return alt(std::move(alts));
    };
    return seq({lit("\""), build(0), lit("\"")});
  }

  Expr object(const ojson& s, const std::string& path, int depth) {
    struct Prop {
      std::string name;
      Expr member;
      bool required;
    };
    std::vector<Prop> props;
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) fail(path, "required must be an array");
      for (const auto& r : s["required"]) required.insert(r.get<std::string>());
    }
    std::vector<std::string> names;
    const bool has_props = s.contains("properties");
    if (has_props) {
      const ojson& ps = s["properties"];
      if (!ps.is_object()) fail(path, "properties must be an object");
      for (auto it = ps.begin(); it != ps.end(); ++it) {
        names.push_back(it.key());
        const bool req = required.count(it.key()) > 0;
        if (it.value().is_boolean() && !it.value().get<bool>()) {
          if (req) fail(path, "property '" + it.key() + "' is required but its schema is false");
          continue;
        }
        Expr v = as_rule(it.value(), path + "/properties/" + it.key(), depth, "prop");
        props.push_back({it.key(),
                         seq({lit(jp::dump_string(it.key())), ws(), lit(":"), ws(), std::move(v)}),
                         req});
      }
    }
    for (const auto& r : required)
      if (std::find(names.begin(), names.end(), r) == names.end()) {
        // Required but not described: any value.
        names.push_back(r);
        props.push_back(
            {r, seq({lit(jp::dump_string(r)), ws(), lit(":"), ws(), any_value()}), true});
      }
    // Additional properties: absent means any when nothing is declared, else the strict
    // default (false, as xgrammar/vLLM do).
    std::optional<Expr> extra_value;
    if (s.contains("additionalProperties")) {
      const ojson& a = s["additionalProperties"];
      if (!(a.is_boolean() && !a.get<bool>()))
        extra_value = as_rule(a, path + "/additionalProperties", depth, "extra");
    } else if (!has_props || !o_.strict_additional_properties) {
      extra_value = any_value();
    }
    std::optional<Expr> extra;
    if (extra_value) extra = seq({other_key(names), ws(), lit(":"), ws(), std::move(*extra_value)});

    // Declared properties in order, optional ones skippable: one alternative per possible
    // first property (those up to the first required one), then the rest with commas.
    size_t first_req = props.size();
    for (size_t i = 0; i < props.size(); ++i)
      if (props[i].required) {
        first_req = i;
        break;
      }
    // Up to 8 properties: inline (one automaton, one configuration per state). Beyond, the
    // alternatives would repeat the tails quadratically, so each tail "properties i.. with
    // commas" is its own rule ending in a tail call to the next: linear in size, and the
    // stack stays flat.
    const bool chain = props.size() > 8;
    std::vector<int32_t> tail_rule(props.size() + 1, -1);
    auto extras_tail = [&] { return extra ? star(seq({sep(), *extra})) : empty(); };
    if (chain) {
      for (size_t i = 0; i <= props.size(); ++i) tail_rule[i] = new_rule("tail");
      for (size_t i = props.size() + 1; i-- > 0;) {
        if (i == props.size()) {
          g_.define(tail_rule[i], extras_tail());
          continue;
        }
        Expr m = seq({sep(), props[i].member});
        g_.define(tail_rule[i], seq({props[i].required ? std::move(m) : opt(std::move(m)),
                                     ref(tail_rule[i + 1])}));
      }
    }
    auto rest_from = [&](size_t i) {
      if (chain) return ref(tail_rule[i]);
      std::vector<Expr> items;
      for (size_t j = i; j < props.size(); ++j) {
        Expr m = seq({sep(), props[j].member});
        items.push_back(props[j].required ? std::move(m) : opt(std::move(m)));
      }
      items.push_back(extras_tail());
      return seq(std::move(items));
    };
    std::vector<Expr> firsts;
    for (size_t i = 0; i < props.size() && i <= first_req; ++i)
      firsts.push_back(seq({props[i].member, rest_from(i + 1)}));
    if (first_req == props.size() && extra)
      firsts.push_back(seq({*extra, star(seq({sep(), *extra}))}));
    Expr body = alt(std::move(firsts));
    if (first_req == props.size()) body = opt(std::move(body));
    if (props.empty() && !extra) body = empty();
    return seq({lit("{"), ws(), std::move(body), ws(), lit("}")});
  }

  Expr array(const ojson& s, const std::string& path, int depth) {
    std::vector<Expr> prefix;
    const ojson* items = s.contains("items") ? &s["items"] : nullptr;
    const ojson* rest = items;
    if (s.contains("prefixItems")) {
      const ojson& p = s["prefixItems"];
      if (!p.is_array()) fail(path, "prefixItems must be an array");
      for (size_t i = 0; i < p.size(); ++i)
        prefix.push_back(as_rule(p[i], path + "/prefixItems/" + std::to_string(i), depth, "item"));
    } else if (items && items->is_array()) {  // draft 4-7 tuple form
      for (size_t i = 0; i < items->size(); ++i)
        prefix.push_back(as_rule((*items)[i], path + "/items/" + std::to_string(i), depth, "item"));
      rest = s.contains("additionalItems") ? &s["additionalItems"] : nullptr;
    }
    const bool rest_allowed = !(rest && rest->is_boolean() && !rest->get<bool>());
    std::optional<Expr> item;
    if (rest_allowed) item = rest ? as_rule(*rest, path + "/items", depth, "item") : any_value();
    const int64_t lo = get_count(s, "minItems", path, 0);
    int64_t hi = get_count(s, "maxItems", path, -1);
    const auto k = static_cast<int64_t>(prefix.size());
    if (!item) hi = hi < 0 ? k : std::min(hi, k);
    if (hi >= 0 && hi < lo) fail(path, "maxItems < minItems (or more items required than allowed)");
    // Elements from position i on, each after a comma; position i-1 was written.
    std::function<Expr(int64_t)> tail = [&](int64_t i) -> Expr {
      if (hi >= 0 && i >= hi) return empty();
      if (i >= k) {
        const int64_t need = std::max<int64_t>(0, lo - i);
        return rep(seq({sep(), *item}), static_cast<int32_t>(need),
                   hi < 0 ? -1 : static_cast<int32_t>(hi - i));
      }
      Expr e = seq({sep(), prefix[i], tail(i + 1)});
      return i >= lo ? opt(std::move(e)) : e;
    };
    Expr body;
    if (hi != 0) {
      Expr first = k > 0 ? prefix[0] : *item;
      body = seq({std::move(first), tail(1)});
      if (lo == 0) body = opt(std::move(body));
    }
    return seq({lit("["), ws(), std::move(body), ws(), lit("]")});
  }

  const ojson& root_;
  const JsonOptions& o_;
  Grammar g_;
  jp::AnyJson any_;
  int32_t int_rule_ = -1;
  std::unordered_map<std::string, int32_t> refs_;
};

}  // namespace

Grammar json_schema_grammar(const nlohmann::ordered_json& schema, const JsonOptions& o) {
  try {
    return SchemaCompiler(schema, o).run();
  } catch (const nlohmann::json::exception& e) {
    // A keyword whose value has the wrong JSON type ("required": "a", "$ref": 3, ...).
    throw GrammarError(std::string("JSON schema: a keyword has a value of the wrong type (") +
                       e.what() + ")");
  }
}

Grammar json_object_grammar(const JsonOptions& o) {
  Grammar g;
  json_parts::AnyJson any;
  const int32_t r = g.add_rule("root", empty());
  const auto rules = json_parts::any_json_rules(g, o, any);
  g.define(r, ref(rules.object));
  g.root = r;
  return g;
}

}  // namespace vllm::engine::so
