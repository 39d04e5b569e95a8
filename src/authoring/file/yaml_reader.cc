#include "authoring/file/yaml_reader.h"

#include <cctype>
#include <charconv>
#include <limits>

#include "authoring/file/did_you_mean.h"
#include "thund/duration.h"
#include "thund/utf8.h"

namespace thund::file {
namespace {

bool IsInteger(std::string_view s) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

template <typename T>
std::optional<T> ParseInteger(std::string_view s) {
  if (!IsInteger(s)) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  T v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

SourceLocation Reader::Location(const YAML::Mark& mark) const {
  SourceLocation loc;
  loc.file = file_;
  if (!mark.is_null() && mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

void Reader::Error(const YAML::Mark& at, std::string path, std::string code, std::string message,
                   std::string hint) {
  Diagnostic d;
  d.severity = Severity::kError;
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.location = Location(at);
  d.field_path = std::move(path);
  d.dataset = dataset;
  d.flow = flow;
  d.code = std::move(code);
  out_->push_back(std::move(d));
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: {
      std::string s = node.Scalar();
      if (s.size() > 40) {
        size_t cut = 37;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
          --cut;  // keep UTF-8 whole
        s = s.substr(0, cut) + "...";
      }
      return "a scalar ('" + s + "')";
    }
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

std::string Child(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return std::string(path) + "." + std::string(key);
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

// yaml-cpp 0.7 decodes the escapes \_, \N and \xNN of double-quoted strings to
// one byte each (0xA0, 0x85, 0xNN) instead of the UTF-8 of U+00A0, U+0085 and
// U+00NN (fuzz_pipeline_file: such a value was written back as a file that
// does not read). The file is valid UTF-8 (checked before parsing), so a byte
// of a decoded scalar that starts no UTF-8 character came from such an escape:
// it is re-encoded as the code point YAML means.
std::string YamlScalarUtf8(std::string s) {
  if (IsValidUtf8(s)) return s;
  std::string out;
  std::string_view rest(s);
  while (!rest.empty()) {
    const size_t bad = InvalidUtf8Offset(rest);
    if (bad == std::string_view::npos) {
      out.append(rest);
      break;
    }
    out.append(rest.substr(0, bad));
    const auto b = static_cast<unsigned char>(rest[bad]);
    out.push_back(static_cast<char>(0xC0 | (b >> 6)));
    out.push_back(static_cast<char>(0x80 | (b & 0x3F)));
    rest.remove_prefix(bad + 1);
  }
  return out;
}

std::optional<std::string> ScalarText(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                      const std::string& path, std::string_view what) {
  if (node.IsScalar()) return YamlScalarUtf8(node.Scalar());
  r.Error(at, path, "wrong-type", "expected " + std::string(what) + ", got " + Describe(node));
  return std::nullopt;
}

std::string PeekScalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsMap()) return "";
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;  // copies: `it->` returns a temporary proxy
    const YAML::Node v = it->second;
    if (k.IsScalar() && k.Scalar() == key && v.IsScalar()) return YamlScalarUtf8(v.Scalar());
  }
  return "";
}

YAML::Mark Entry::mark() const {
  if (value.IsNull() || value.Mark().is_null()) return key_mark;
  return value.Mark();
}

MapView::MapView(Reader& r, const YAML::Node& node, const YAML::Mark& at, std::string path,
                 std::string_view noun, std::vector<std::string_view> allowed)
    : r_(r),
      path_(std::move(path)),
      noun_(noun),
      mark_(node.Mark().is_null() || node.IsNull() ? at : node.Mark()) {
  if (!node.IsMap()) {
    r_.Error(mark_, path_, "wrong-type", "expected a " + noun_ + " mapping, got " + Describe(node),
             "valid keys: " + JoinNames(allowed));
    return;
  }
  ok_ = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` returns a temporary proxy
    if (!k.IsScalar()) {
      r_.Error(k.Mark(), path_, "wrong-type", "expected a key name, got " + Describe(k));
      continue;
    }
    Entry e{k.Scalar(), k.Mark(), it->second};
    if (const Entry* first = Find(e.key)) {
      r_.Error(e.key_mark, PathOf(e.key), "duplicate-key",
               "duplicate key '" + e.key + "' in " + noun_,
               "the first '" + e.key + "' is at line " + std::to_string(first->key_mark.line + 1) +
                   "; keep one");
      continue;
    }
    bool known = false;
    for (std::string_view a : allowed) known = known || a == e.key;
    if (!known) {
      r_.Error(e.key_mark, PathOf(e.key), "unknown-key", "unknown key '" + e.key + "' in " + noun_,
               SuggestHint(e.key, allowed, "valid keys"));
      continue;
    }
    entries_.push_back(std::move(e));
  }
}

const Entry* MapView::Find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

const Entry* MapView::Require(std::string_view key) {
  const Entry* e = Find(key);
  if (e != nullptr && !e->value.IsNull()) return e;
  if (!ok_) return nullptr;  // the shape error was reported already
  if (e == nullptr) {
    r_.Error(mark_, PathOf(key), "missing-key",
             "missing required key '" + std::string(key) + "' in " + noun_);
  } else {
    r_.Error(e->mark(), PathOf(key), "missing-key",
             "required key '" + std::string(key) + "' has no value in " + noun_);
  }
  return nullptr;
}

void MapView::String(std::string_view key, std::string* out, bool required) {
  const Entry* e = required ? Require(key) : Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  if (auto s = ScalarText(r_, e->value, e->mark(), PathOf(key), "a string")) *out = std::move(*s);
}

void MapView::Int(std::string_view key, int64_t* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  auto s = ScalarText(r_, e->value, e->mark(), PathOf(key), "an integer");
  if (!s) return;
  if (auto v = ParseInteger<int64_t>(*s)) {
    *out = *v;
  } else {
    r_.Error(e->mark(), PathOf(key), "bad-value", "expected an integer, got '" + *s + "'");
  }
}

void MapView::Int(std::string_view key, int* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  int64_t v = *out;
  Int(key, &v);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    r_.Error(e->mark(), PathOf(key), "bad-value",
             "integer " + std::to_string(v) + " is out of range");
    return;
  }
  *out = static_cast<int>(v);
}

void MapView::UInt(std::string_view key, uint64_t* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  auto s = ScalarText(r_, e->value, e->mark(), PathOf(key), "a non-negative integer");
  if (!s) return;
  if (auto v = (!s->empty() && s->front() != '-') ? ParseInteger<uint64_t>(*s) : std::nullopt) {
    *out = *v;
  } else {
    r_.Error(e->mark(), PathOf(key), "bad-value",
             "expected a non-negative integer, got '" + *s + "'");
  }
}

void MapView::Bool(std::string_view key, bool* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  auto s = ScalarText(r_, e->value, e->mark(), PathOf(key), "true or false");
  if (!s) return;
  const std::string v = Lower(*s);
  if (v == "true" || v == "yes") {
    *out = true;
  } else if (v == "false" || v == "no") {
    *out = false;
  } else {
    r_.Error(e->mark(), PathOf(key), "bad-value", "expected true or false, got '" + *s + "'");
  }
}

std::optional<int64_t> ReadDuration(Reader& r, const YAML::Node& node, const YAML::Mark& at,
                                    const std::string& path) {
  auto s = ScalarText(r, node, at, path, "a duration such as \"10s\"");
  if (!s) return std::nullopt;
  if (IsInteger(*s)) {
    if (auto v = ParseInteger<int64_t>(*s)) return v;  // plain milliseconds, full int64 range
  }
  auto parsed = ParseDuration(*s);
  if (!parsed.ok()) {
    r.Error(at, path, "bad-duration", "bad duration: " + parsed.status().message());
    return std::nullopt;
  }
  return *parsed;
}

void MapView::Duration(std::string_view key, int64_t* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  if (auto v = ReadDuration(r_, e->value, e->mark(), PathOf(key))) *out = *v;
}

void MapView::OptDuration(std::string_view key, std::optional<int64_t>* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  if (auto v = ReadDuration(r_, e->value, e->mark(), PathOf(key))) *out = *v;
}

void MapView::StringList(std::string_view key, std::vector<std::string>* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  std::vector<std::string> items;
  ForEachItem(r_, e->value, e->mark(), PathOf(key), "a list of names such as [a, b]",
              [&](const YAML::Node& item, const YAML::Mark& at, const std::string& path, size_t) {
                if (auto s = ScalarText(r_, item, at, path, "a name"))
                  items.push_back(std::move(*s));
              });
  if (e->value.IsSequence()) *out = std::move(items);
}

void MapView::StringMap(std::string_view key, thund::StringMap* out) {
  const Entry* e = Find(key);
  if (e == nullptr || e->value.IsNull()) return;
  const std::string path = PathOf(key);
  if (!e->value.IsMap()) {
    r_.Error(e->mark(), path, "wrong-type",
             "expected a mapping of names to string values, got " + Describe(e->value));
    return;
  }
  thund::StringMap result;
  for (auto it = e->value.begin(); it != e->value.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: `it->` returns a temporary proxy
    const YAML::Node v = it->second;
    if (!k.IsScalar()) {
      r_.Error(k.Mark(), path, "wrong-type", "expected a key name, got " + Describe(k));
      continue;
    }
    const std::string item_path = Child(path, k.Scalar());
    const YAML::Mark at = v.IsNull() ? k.Mark() : v.Mark();
    if (result.count(k.Scalar())) {
      r_.Error(k.Mark(), item_path, "duplicate-key", "duplicate key '" + k.Scalar() + "'");
      continue;
    }
    if (v.IsNull()) {
      r_.Error(at, item_path, "wrong-type", "expected a string value, got null",
               "write \"\" for an empty value");
      continue;
    }
    if (auto s = ScalarText(r_, v, at, item_path, "a string value"))
      result[k.Scalar()] = std::move(*s);
  }
  *out = std::move(result);
}

std::optional<std::string> MapView::ParseEnumValue(const Entry& e,
                                                   const std::vector<std::string_view>& names,
                                                   std::string_view what) {
  auto s = ScalarText(r_, e.value, e.mark(), PathOf(e.key), "one of: " + JoinNames(names));
  if (!s) return std::nullopt;
  for (std::string_view n : names) {
    if (n == *s) return s;
  }
  std::string hint = "allowed: " + JoinNames(names);
  if (auto m = ClosestMatch(*s, names)) hint = "did you mean '" + *m + "'? " + hint;
  r_.Error(e.mark(), PathOf(e.key), "bad-enum", "unknown " + std::string(what) + " '" + *s + "'",
           hint);
  return std::nullopt;
}

void ForEachItem(Reader& r, const YAML::Node& node, const YAML::Mark& at, const std::string& path,
                 std::string_view what,
                 const std::function<void(const YAML::Node&, const YAML::Mark&, const std::string&,
                                          size_t)>& fn) {
  if (!node.IsSequence()) {
    r.Error(at, path, "wrong-type", "expected " + std::string(what) + ", got " + Describe(node));
    return;
  }
  size_t i = 0;
  for (auto it = node.begin(); it != node.end(); ++it, ++i) {
    const YAML::Node item = *it;
    const YAML::Mark m = item.Mark().is_null() ? at : item.Mark();
    fn(item, m, Index(path, i), i);
  }
}

}  // namespace thund::file
