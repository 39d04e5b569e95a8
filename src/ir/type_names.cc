// Spark-SQL-style type names for Arrow types, with a small recursive-descent
// parser for the nested forms (array<...>, struct<...>, map<...>).
#include "thund/type_names.h"

#include <charconv>
#include <cctype>
#include <string>
#include <utility>

#include <arrow/type.h>

namespace thund {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::shared_ptr<arrow::DataType> Simple(const std::string& n) {
  using namespace arrow;
  if (n == "boolean" || n == "bool") return boolean();
  if (n == "tinyint" || n == "byte" || n == "int8") return int8();
  if (n == "smallint" || n == "short" || n == "int16") return int16();
  if (n == "int" || n == "integer" || n == "int32") return int32();
  if (n == "bigint" || n == "long" || n == "int64") return int64();
  if (n == "uint8" || n == "utinyint") return uint8();
  if (n == "uint16" || n == "usmallint") return uint16();
  if (n == "uint32" || n == "uinteger") return uint32();
  if (n == "uint64" || n == "ubigint") return uint64();
  if (n == "float" || n == "real" || n == "float32") return float32();
  if (n == "double" || n == "float64") return float64();
  if (n == "string" || n == "varchar" || n == "text" || n == "utf8") return utf8();
  if (n == "large_string") return large_utf8();
  if (n == "binary" || n == "blob" || n == "bytea") return binary();
  if (n == "date" || n == "date32") return date32();
  if (n == "timestamp" || n == "timestamp_ntz" || n == "datetime") return timestamp(TimeUnit::MICRO);
  if (n == "timestamp_ltz" || n == "timestamptz") return timestamp(TimeUnit::MICRO, "UTC");
  if (n == "time") return time64(TimeUnit::MICRO);
  if (n == "null" || n == "void") return null();
  return nullptr;
}

class TypeParser {
 public:
  explicit TypeParser(std::string_view text) : text_(text) {}

  arrow::Result<std::shared_ptr<arrow::DataType>> ParseAll() {
    auto t = ParseType();
    if (!t.ok()) return t;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the type");
    return t;
  }

 private:
  arrow::Status Error(const std::string& what) const {
    return arrow::Status::Invalid("bad type '", std::string(text_), "' at character ", pos_ + 1,
                                  ": ", what,
                                  "; use e.g. bigint, string, double, timestamp, date, "
                                  "decimal(10,2), array<int>, struct<a: int>, map<string,int>");
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  // A field name in struct<...>: a word or a `backquoted` name.
  arrow::Result<std::string> FieldName() {
    SkipSpace();
    if (Eat('`')) {
      size_t end = text_.find('`', pos_);
      if (end == std::string_view::npos) return Error("unterminated `name`");
      std::string n(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return n;
    }
    std::string w = Word();
    if (w.empty()) return Error("expected a field name");
    return w;
  }
  arrow::Result<int64_t> Number() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_) return Error("expected a number");
    int64_t n = 0;
    const char* first = text_.data() + start;
    const auto [end, ec] = std::from_chars(first, text_.data() + pos_, n);
    if (ec != std::errc() || end != text_.data() + pos_) return Error("number too large");
    return n;
  }

  arrow::Result<std::shared_ptr<arrow::DataType>> ParseType() {
    std::string w = Lower(Word());
    if (w.empty()) return Error("expected a type name");
    if (w == "decimal" || w == "numeric" || w == "dec") {
      int64_t precision = 10, scale = 0;  // Spark's default
      if (Eat('(')) {
        ARROW_ASSIGN_OR_RAISE(precision, Number());
        if (Eat(',')) {
          ARROW_ASSIGN_OR_RAISE(scale, Number());
        }
        if (!Eat(')')) return Error("expected ')'");
      }
      if (precision < 1 || precision > 76 || scale > precision) {
        return Error("decimal precision must be 1..76 and scale <= precision");
      }
      if (precision <= 38) return arrow::decimal128(static_cast<int32_t>(precision), static_cast<int32_t>(scale));
      return arrow::decimal256(static_cast<int32_t>(precision), static_cast<int32_t>(scale));
    }
    if (w == "timestamp" && Eat('(')) {
      // timestamp(unit[, tz=Zone])
      std::string unit = Lower(Word());
      arrow::TimeUnit::type u;
      if (unit == "s") u = arrow::TimeUnit::SECOND;
      else if (unit == "ms") u = arrow::TimeUnit::MILLI;
      else if (unit == "us") u = arrow::TimeUnit::MICRO;
      else if (unit == "ns") u = arrow::TimeUnit::NANO;
      else return Error("timestamp unit must be s, ms, us or ns");
      std::string tz;
      if (Eat(',')) {
        if (Lower(Word()) != "tz" || !Eat('=')) return Error("expected tz=<zone>");
        SkipSpace();
        size_t start = pos_;
        while (pos_ < text_.size() && text_[pos_] != ')') ++pos_;
        tz = std::string(text_.substr(start, pos_ - start));
        while (!tz.empty() && std::isspace(static_cast<unsigned char>(tz.back()))) tz.pop_back();
      }
      if (!Eat(')')) return Error("expected ')'");
      return arrow::timestamp(u, tz);
    }
    if (w == "array" || w == "list") {
      if (!Eat('<')) return Error("expected '<' after array");
      ARROW_ASSIGN_OR_RAISE(auto item, ParseType());
      if (!Eat('>')) return Error("expected '>' to close array<...>");
      return arrow::list(item);
    }
    if (w == "map") {
      if (!Eat('<')) return Error("expected '<' after map");
      ARROW_ASSIGN_OR_RAISE(auto key, ParseType());
      if (!Eat(',')) return Error("expected ',' between map key and value types");
      ARROW_ASSIGN_OR_RAISE(auto value, ParseType());
      if (!Eat('>')) return Error("expected '>' to close map<...>");
      return arrow::map(key, value);
    }
    if (w == "struct") {
      if (!Eat('<')) return Error("expected '<' after struct");
      arrow::FieldVector fields;
      if (!Eat('>')) {
        do {
          ARROW_ASSIGN_OR_RAISE(auto name, FieldName());
          Eat(':');  // Spark accepts both "a: int" and "a int"
          ARROW_ASSIGN_OR_RAISE(auto t, ParseType());
          fields.push_back(arrow::field(name, t));
        } while (Eat(','));
        if (!Eat('>')) return Error("expected '>' to close struct<...>");
      }
      return arrow::struct_(fields);
    }
    if (auto t = Simple(w)) return t;
    return Error("unknown type '" + w + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string UnitName(arrow::TimeUnit::type u) {
  switch (u) {
    case arrow::TimeUnit::SECOND: return "s";
    case arrow::TimeUnit::MILLI: return "ms";
    case arrow::TimeUnit::MICRO: return "us";
    case arrow::TimeUnit::NANO: return "ns";
  }
  return "us";
}

bool NeedsQuotes(const std::string& name) {
  if (name.empty()) return true;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return true;
  }
  return false;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::DataType>> ParseTypeName(std::string_view text) {
  return TypeParser(text).ParseAll();
}

std::string FormatTypeName(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::NA: return "null";
    case Type::BOOL: return "boolean";
    case Type::INT8: return "tinyint";
    case Type::INT16: return "smallint";
    case Type::INT32: return "int";
    case Type::INT64: return "bigint";
    case Type::UINT8: return "uint8";
    case Type::UINT16: return "uint16";
    case Type::UINT32: return "uint32";
    case Type::UINT64: return "uint64";
    case Type::FLOAT: return "float";
    case Type::DOUBLE: return "double";
    case Type::STRING: return "string";
    case Type::LARGE_STRING: return "large_string";
    case Type::BINARY: return "binary";
    case Type::DATE32: return "date";
    case Type::TIME64:
      if (static_cast<const arrow::Time64Type&>(type).unit() == arrow::TimeUnit::MICRO) return "time";
      break;
    case Type::TIMESTAMP: {
      const auto& t = static_cast<const arrow::TimestampType&>(type);
      if (t.unit() == arrow::TimeUnit::MICRO && t.timezone().empty()) return "timestamp";
      if (t.unit() == arrow::TimeUnit::MICRO && t.timezone() == "UTC") return "timestamp_ltz";
      std::string out = "timestamp(" + UnitName(t.unit());
      if (!t.timezone().empty()) out += ", tz=" + t.timezone();
      return out + ")";
    }
    case Type::DECIMAL128:
    case Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::DecimalType&>(type);
      return "decimal(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")";
    }
    case Type::LIST:
      return "array<" + FormatTypeName(*static_cast<const arrow::ListType&>(type).value_type()) + ">";
    case Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(type);
      return "map<" + FormatTypeName(*m.key_type()) + "," + FormatTypeName(*m.item_type()) + ">";
    }
    case Type::STRUCT: {
      std::string out = "struct<";
      for (int i = 0; i < type.num_fields(); ++i) {
        const auto& f = type.field(i);
        if (i) out += ", ";
        out += NeedsQuotes(f->name()) ? "`" + f->name() + "`" : f->name();
        out += ": " + FormatTypeName(*f->type());
      }
      return out + ">";
    }
    default:
      break;
  }
  return type.ToString();  // not round-trippable; ParseTypeName rejects it with a message
}

}  // namespace thund
