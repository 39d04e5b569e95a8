// A tiny YAML document model for *writing* canonical pipeline files, and its
// renderer. We render by hand (not with YAML::Emitter) because the canonical
// form needs exact control: fixed key order, literal blocks with the right
// chomping indicator for multi-line SQL, flow style for short records, and
// quoting of every string a YAML reader would not read back as the same string
// ("true", "123", "null", "~", leading spaces, ": ", " #", ...).
//
// Contract: for every string s (valid UTF-8), a document containing
// OutNode::Str(s) re-parses (with yaml-cpp, and with any YAML 1.1/1.2 reader)
// to the string s.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace thund::file {

struct OutNode {
  enum class Kind { kString, kRaw, kMap, kSeq };

  Kind kind = Kind::kMap;
  std::string text;  // kString: the value; kRaw: YAML text written verbatim (numbers, booleans)
  std::vector<std::pair<std::string, OutNode>> entries;  // kMap, in output order
  std::vector<OutNode> items;                            // kSeq
  bool flow = false;  // kMap/kSeq: write as {a: 1} / [a, b] (children must be scalars)

  static OutNode Str(std::string s);
  static OutNode Raw(std::string yaml);
  static OutNode Int(int64_t v);
  static OutNode UInt(uint64_t v);
  static OutNode Bool(bool v);
  static OutNode Map(bool flow = false);
  static OutNode Seq(bool flow = false);
  static OutNode StrList(const std::vector<std::string>& v);  // flow sequence of strings

  // kMap only: appends an entry and returns the added value (valid until the
  // next Add on this map).
  OutNode& Add(std::string key, OutNode value);
};

// How a string is written.
enum class ScalarStyle { kPlain, kDoubleQuoted, kLiteral };

// The style Render uses for `s` as a value in block context (`in_flow` false) or
// inside a flow collection (`in_flow` true; literal blocks are not allowed there).
ScalarStyle ChooseStyle(std::string_view s, bool in_flow);

// `s` as a YAML double-quoted scalar, with escapes.
std::string DoubleQuote(std::string_view s);

// The whole document (a block mapping at the top), ending with a newline.
std::string Render(const OutNode& root);

}  // namespace thund::file
