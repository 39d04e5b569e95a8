#include "authoring/file/yaml_out.h"

#include <cctype>
#include <cstdio>
#include <cstring>

namespace thund::file {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// True when a YAML 1.1 or 1.2 reader could resolve the plain scalar `s` to
// something other than a string: null, booleans (incl. yes/no/on/off), numbers
// in any base, sexagesimals, dates, .inf/.nan, merge/value keys. Deliberately
// broad: quoting a harmless string costs two characters.
bool ResolvesToNonString(std::string_view s) {
  for (std::string_view w :
       {"~", "null", "true", "false", "yes", "no", "y", "n", "on", "off", "=", "<<"}) {
    if (IEquals(s, w)) return true;
  }
  std::string_view body = s;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) body.remove_prefix(1);
  if (IEquals(body, ".inf") || IEquals(body, ".nan")) return true;
  if (body.size() > 2 && body[0] == '0' && std::strchr("xXoObB", body[1]) != nullptr) {
    bool alnum = true;
    for (char c : body.substr(2))
      alnum = alnum && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (alnum) return true;
  }
  auto is_digit = [&](size_t i) {
    return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
  };
  if (is_digit(0) && is_digit(1) && is_digit(2) && is_digit(3) && s.size() > 5 && s[4] == '-' &&
      is_digit(5)) {
    return true;  // a YAML 1.1 timestamp ("2024-01-01T10:00:00Z")
  }
  bool digit = false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digit = true;
    } else if (std::strchr("_.:eE+- ", c) == nullptr) {
      return false;
    }
  }
  return digit;
}

bool PlainOk(std::string_view s, bool in_flow) {
  if (s.empty()) return false;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f) return false;  // controls, tabs, DEL and non-ASCII get quoted
    // Inside [..] / {..} only a conservative alphabet stays plain.
    if (in_flow && !std::isalnum(c) && std::strchr("_./-<>()=+ ", ch) == nullptr) return false;
  }
  if (std::strchr("-?:,[]{}#&*!|>'\"%@` ", s.front()) != nullptr) return false;
  if (s.back() == ' ' || s.back() == ':') return false;
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos)
    return false;
  if (s.substr(0, 3) == "...") return false;
  return !ResolvesToNonString(s);
}

// Length of the UTF-8 sequence starting with byte `c`, or 0 when `c` cannot start one.
size_t Utf8Length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 0;
}

// Code points that some YAML readers treat as line breaks or byte-order marks.
bool IsSpecialCodePoint(std::string_view seq) {
  return seq == "\xC2\x85" || seq == "\xE2\x80\xA8" || seq == "\xE2\x80\xA9" ||
         seq == "\xEF\xBB\xBF";
}

bool LiteralOk(std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return false;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t n = Utf8Length(c);
    if (n == 0 || i + n > s.size() || IsSpecialCodePoint(s.substr(i, n))) return false;
    i += n;
  }
  // The first line with content fixes the block's indentation, so it must not
  // start with white space, and only truly empty lines may come before it.
  size_t first = s.find_first_not_of('\n');
  if (first == std::string_view::npos) return false;
  return s[first] != ' ' && s[first] != '\t';
}

void AppendEscaped(unsigned char c, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02X", c);
  *out += buf;
}

std::string Spaces(int n) { return std::string(static_cast<size_t>(n), ' '); }

std::string Key(const std::string& k) {
  return ChooseStyle(k, /*in_flow=*/false) == ScalarStyle::kPlain ? k : DoubleQuote(k);
}

std::string FlowScalarOrCollection(const OutNode& v);

std::string FlowText(const OutNode& n) {
  std::string out;
  if (n.kind == OutNode::Kind::kMap) {
    out = "{";
    for (size_t i = 0; i < n.entries.size(); ++i) {
      if (i) out += ", ";
      const std::string& k = n.entries[i].first;
      out += ChooseStyle(k, true) == ScalarStyle::kPlain ? k : DoubleQuote(k);
      out += ": " + FlowScalarOrCollection(n.entries[i].second);
    }
    return out + "}";
  }
  out = "[";
  for (size_t i = 0; i < n.items.size(); ++i) {
    if (i) out += ", ";
    out += FlowScalarOrCollection(n.items[i]);
  }
  return out + "]";
}

std::string FlowScalarOrCollection(const OutNode& v) {
  switch (v.kind) {
    case OutNode::Kind::kString:
      return ChooseStyle(v.text, true) == ScalarStyle::kPlain ? v.text : DoubleQuote(v.text);
    case OutNode::Kind::kRaw:
      return v.text;
    default:
      return FlowText(v);
  }
}

void LiteralBlock(const std::string& s, int indent, std::string* out) {
  size_t end = s.size();
  while (end > 0 && s[end - 1] == '\n') --end;
  const size_t trailing = s.size() - end;
  *out += trailing == 0 ? "|-\n" : trailing == 1 ? "|\n" : "|+\n";
  size_t start = 0;
  while (start <= end) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos || nl > end) nl = end;
    if (nl > start) *out += Spaces(indent) + s.substr(start, nl - start);
    *out += "\n";
    start = nl + 1;
  }
  for (size_t i = 1; i < trailing; ++i) *out += "\n";
}

void BlockMap(const OutNode& m, int indent, std::string* out);
void BlockSeq(const OutNode& s, int indent, std::string* out);

// Writes a value that follows "key:" or "- " (the caller wrote those); `indent`
// is the indentation of nested content.
void ValueAfterIndicator(const OutNode& v, int indent, std::string* out) {
  switch (v.kind) {
    case OutNode::Kind::kString:
      switch (ChooseStyle(v.text, false)) {
        case ScalarStyle::kPlain:
          *out += " " + v.text + "\n";
          return;
        case ScalarStyle::kDoubleQuoted:
          *out += " " + DoubleQuote(v.text) + "\n";
          return;
        case ScalarStyle::kLiteral:
          *out += " ";
          LiteralBlock(v.text, indent, out);
          return;
      }
      return;
    case OutNode::Kind::kRaw:
      *out += " " + v.text + "\n";
      return;
    case OutNode::Kind::kMap:
      if (v.flow || v.entries.empty()) {
        *out += " " + FlowText(v) + "\n";
      } else {
        *out += "\n";
        BlockMap(v, indent, out);
      }
      return;
    case OutNode::Kind::kSeq:
      if (v.flow || v.items.empty()) {
        *out += " " + FlowText(v) + "\n";
      } else {
        *out += "\n";
        BlockSeq(v, indent, out);
      }
      return;
  }
}

void BlockMap(const OutNode& m, int indent, std::string* out) {
  for (const auto& [k, v] : m.entries) {
    *out += Spaces(indent) + Key(k) + ":";
    ValueAfterIndicator(v, indent + 2, out);
  }
}

void BlockSeq(const OutNode& s, int indent, std::string* out) {
  for (const OutNode& item : s.items) {
    if (item.kind == OutNode::Kind::kMap && !item.flow && !item.entries.empty()) {
      // "- first: x" then the other keys aligned under "first".
      std::string body;
      BlockMap(item, indent + 2, &body);
      *out += Spaces(indent) + "- " + body.substr(static_cast<size_t>(indent) + 2);
    } else if (item.kind == OutNode::Kind::kSeq && !item.flow && !item.items.empty()) {
      *out += Spaces(indent) + "-\n";
      BlockSeq(item, indent + 2, out);
    } else {
      *out += Spaces(indent) + "-";
      ValueAfterIndicator(item, indent + 2, out);
    }
  }
}

}  // namespace

OutNode OutNode::Str(std::string s) {
  OutNode n;
  n.kind = Kind::kString;
  n.text = std::move(s);
  return n;
}
OutNode OutNode::Raw(std::string yaml) {
  OutNode n;
  n.kind = Kind::kRaw;
  n.text = std::move(yaml);
  return n;
}
OutNode OutNode::Int(int64_t v) { return Raw(std::to_string(v)); }
OutNode OutNode::UInt(uint64_t v) { return Raw(std::to_string(v)); }
OutNode OutNode::Bool(bool v) { return Raw(v ? "true" : "false"); }
OutNode OutNode::Map(bool flow) {
  OutNode n;
  n.kind = Kind::kMap;
  n.flow = flow;
  return n;
}
OutNode OutNode::Seq(bool flow) {
  OutNode n;
  n.kind = Kind::kSeq;
  n.flow = flow;
  return n;
}
OutNode OutNode::StrList(const std::vector<std::string>& v) {
  OutNode n = Seq(/*flow=*/true);
  for (const auto& s : v) n.items.push_back(Str(s));
  return n;
}

OutNode& OutNode::Add(std::string key, OutNode value) {
  entries.emplace_back(std::move(key), std::move(value));
  return entries.back().second;
}

ScalarStyle ChooseStyle(std::string_view s, bool in_flow) {
  if (PlainOk(s, in_flow)) return ScalarStyle::kPlain;
  if (!in_flow && LiteralOk(s)) return ScalarStyle::kLiteral;
  return ScalarStyle::kDoubleQuoted;
}

std::string DoubleQuote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = Utf8Length(c);
      const std::string_view seq = s.substr(i, n == 0 ? 1 : n);
      if (seq == "\xC2\x85")
        out += "\\u0085";  // not \\N: yaml-cpp decodes that to a lone byte
      else if (seq == "\xE2\x80\xA8")
        out += "\\u2028";
      else if (seq == "\xE2\x80\xA9")
        out += "\\u2029";
      else if (seq == "\xEF\xBB\xBF")
        out += "\\uFEFF";
      else
        out += seq;  // other UTF-8 is written as is
      i += seq.size();
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          AppendEscaped(c, &out);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string Render(const OutNode& root) {
  std::string out;
  BlockMap(root, 0, &out);
  return out;
}

}  // namespace thund::file
