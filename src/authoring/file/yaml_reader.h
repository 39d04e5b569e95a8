// Decoding helpers over a parsed yaml-cpp tree that track the field path of
// every node ("flows[2].streaming.window.size") and turn every structural
// problem into a Diagnostic with file:line:col, instead of stopping at the first.
//
// Conventions for the typed readers (MapView::String, ::Int, ...):
//  * an absent key, or a key whose value is YAML null (`key:` / `key: ~`),
//    leaves the output untouched (the IR default);
//  * a value of the wrong shape or an unparsable value adds one error and
//    leaves the output untouched, so decoding continues.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "authoring/enum_values.h"
#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund::file {

// Collects diagnostics for one file. `dataset` / `flow` name the IR object being
// decoded; they are copied into every diagnostic raised meanwhile.
class Reader {
 public:
  Reader(std::string file_name, Diagnostics* out) : file_(std::move(file_name)), out_(out) {}

  const std::string& file() const { return file_; }
  SourceLocation Location(const YAML::Mark& mark) const;
  SourceLocation Location(const YAML::Node& node) const { return Location(node.Mark()); }

  void Error(const YAML::Mark& at, std::string path, std::string code, std::string message,
             std::string hint = "");

  std::string dataset;
  std::string flow;
  std::string_view text;  // the file's text, when known (for positions inside scalars)

 private:
  std::string file_;
  Diagnostics* out_;
};

// "a scalar ('abc')", "a list", "a mapping", "null" — for "expected X, got Y".
std::string Describe(const YAML::Node& node);

// Joins a parent path and a key / index: Child("flows[2]", "sql") = "flows[2].sql".
std::string Child(std::string_view path, std::string_view key);
std::string Index(std::string_view path, size_t i);

// A scalar as text; reports "expected <what>, got ..." for maps and lists.
// Null is reported too (callers skip null values before calling).
std::optional<std::string> ScalarText(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                      const std::string& path, std::string_view what);

// The text of `map[key]` when `node` is a mapping and that value is a scalar,
// else "" (no diagnostics). Used to name a dataset/flow before decoding it.
std::string PeekScalar(const YAML::Node& node, std::string_view key);

// One key/value of a mapping, with the key's position (null values have no
// reliable position of their own).
struct Entry {
  std::string key;
  YAML::Mark key_mark;
  YAML::Node value;
  // Where to point at the value: the value itself, or its key when it is null.
  YAML::Mark mark() const;
};

// A YAML mapping being decoded into one IR object. Construction checks the keys:
// duplicates and keys outside `allowed` are errors (with a "did you mean" hint).
class MapView {
 public:
  // `node` must be a mapping, else one "expected a <noun> mapping" error is
  // raised and the view is empty (ok() == false). `at` locates `node` when it
  // is null. `noun` names the object in messages ("dataset", "window").
  MapView(Reader& r, const YAML::Node& node, const YAML::Mark& at, std::string path,
          std::string_view noun, std::vector<std::string_view> allowed);

  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }
  const YAML::Mark& mark() const { return mark_; }
  Reader& reader() const { return r_; }
  std::string PathOf(std::string_view key) const { return Child(path_, key); }

  // The entry for `key` (null values included), or nullptr.
  const Entry* Find(std::string_view key) const;
  // Like Find, but a missing key (or a null value) is a "missing required key" error.
  const Entry* Require(std::string_view key);

  // Typed readers; see the file comment. `required` keys raise "missing" errors.
  void String(std::string_view key, std::string* out, bool required = false);
  void Int(std::string_view key, int64_t* out);
  void Int(std::string_view key, int* out);
  void UInt(std::string_view key, uint64_t* out);
  void Bool(std::string_view key, bool* out);
  void Duration(std::string_view key, int64_t* out);
  void OptDuration(std::string_view key, std::optional<int64_t>* out);
  void StringList(std::string_view key, std::vector<std::string>* out);
  void StringMap(std::string_view key, thund::StringMap* out);

  // An enum written by name. `parse` maps a name to a value; `names` are all
  // the accepted names, listed in the error for anything else.
  template <typename E>
  void Enum(std::string_view key, E* out, std::optional<E> (*parse)(std::string_view),
            std::initializer_list<E> all, std::string_view what) {
    if (auto v = EnumOf(key, parse, all, what)) *out = *v;
  }
  // The same for an optional field: an absent key leaves it unset.
  template <typename E>
  void Enum(std::string_view key, std::optional<E>* out,
            std::optional<E> (*parse)(std::string_view), std::initializer_list<E> all,
            std::string_view what) {
    if (auto v = EnumOf(key, parse, all, what)) *out = *v;
  }

  // A scalar parsed by `parse` (authoring/enum_values.h); bad text is an error
  // with the parser's code, message and hint, and leaves `out` untouched.
  template <typename T>
  void Value(std::string_view key, T* out,
             authoring::ParsedValue<T> (*parse)(std::string_view)) {
    const Entry* e = Find(key);
    if (e == nullptr || e->value.IsNull()) return;
    auto text = ScalarText(r_, e->value, e->mark(), PathOf(key), "a string");
    if (!text) return;
    auto parsed = parse(*text);
    if (auto* bad = std::get_if<authoring::BadValue>(&parsed)) {
      r_.Error(e->mark(), PathOf(key), bad->code, bad->message, bad->hint);
      return;
    }
    *out = std::get<T>(std::move(parsed));
  }

 private:
  template <typename E>
  std::optional<E> EnumOf(std::string_view key, std::optional<E> (*parse)(std::string_view),
                          std::initializer_list<E> all, std::string_view what) {
    const Entry* e = Find(key);
    if (e == nullptr || e->value.IsNull()) return std::nullopt;
    std::vector<std::string_view> names;
    for (E v : all) names.emplace_back(Name(v));
    auto text = ParseEnumValue(*e, names, what);
    return text ? parse(*text) : std::nullopt;
  }
  std::optional<std::string> ParseEnumValue(const Entry& e,
                                            const std::vector<std::string_view>& names,
                                            std::string_view what);

  Reader& r_;
  std::string path_;
  std::string noun_;
  YAML::Mark mark_;
  std::vector<Entry> entries_;
  bool ok_ = false;
};

// Calls fn(item, item_mark, item_path, index) for each element of a list;
// anything but a list is an "expected <what>" error.
void ForEachItem(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path,
                 std::string_view what,
                 const std::function<void(const YAML::Node&, const YAML::Mark&, const std::string&,
                                          size_t)>& fn);

// A duration scalar: "10s" style (ParseDuration) or an integer of milliseconds.
std::optional<int64_t> ReadDuration(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                    const std::string& path);

}  // namespace thund::file
