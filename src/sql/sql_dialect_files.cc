// Spark's file reads in SQL: csv.`path` [WITH (options)], json.`path`,
// parquet.`path` become DuckDB's read_csv / read_json / read_parquet with the
// options mapped and Spark's defaults made explicit (docs/sql.md, "Reading
// files"). The path is passed as written: DuckDB resolves a relative path from
// the working directory, as Spark does, and reads a directory as every
// *.csv / *.json / *.parquet file below it.
#include <map>
#include <optional>

#include "sql/sql_dialect_internal.h"

namespace thund::sql {
namespace {


struct SparkOption {
  size_t key_token = 0;    // for errors
  size_t value_token = 0;  // for errors
  std::string value;       // the value as text ('true' for true, '1' for 1)
};

// Spark's property list: key [=] value, comma-separated; a key is a string or
// a (dotted) name, a value a string, number or boolean. Keys are
// case-insensitive (lower-cased here).
arrow::Status ParseOptions(const PassInput& in, size_t open, size_t close,
                           std::map<std::string, SparkOption>* out) {
  const auto& t = in.tokens;
  for (auto [a, b] : SplitArgs(t, open, close)) {
    if (a >= b) return ErrorAt(in, a, "an empty option in WITH (...)");
    SparkOption o;
    o.key_token = a;
    std::string key;
    size_t k = a;
    if (IsStringToken(t[k])) {
      key = StringValue(t[k++]);
    } else if (IsIdentifier(t[k])) {
      key = IdentifierName(t[k++]);
      while (k + 1 < b && IsOp(t[k], ".") && IsIdentifier(t[k + 1])) {
        key += "." + IdentifierName(t[k + 1]);
        k += 2;
      }
    } else {
      return ErrorAt(in, a, "an option name is a string or a name: 'header' = 'true'");
    }
    if (k < b && IsOp(t[k], "=")) ++k;
    const bool negative = k + 1 < b && IsOp(t[k], "-") && t[k + 1].kind == TokKind::kNumber;
    if (negative) ++k;
    if (k + 1 != b || !(IsStringToken(t[k]) || t[k].kind == TokKind::kNumber ||
                        IsWord(t[k], "true") || IsWord(t[k], "false"))) {
      return ErrorAt(in, k < b ? k : a,
                     "option '" + key + "' needs one value: a string, a number or true/false");
    }
    o.value_token = k;
    o.value = IsStringToken(t[k]) ? StringValue(t[k])
                                  : (negative ? "-" : "") + ToLower(t[k].text);
    (*out)[ToLower(key)] = std::move(o);
  }
  return arrow::Status::OK();
}

// The DuckDB reader arguments for one Spark file read.
struct ReaderArgs {
  std::vector<std::string> args;
  bool csv_without_header = false;
};

class OptionMapper {
 public:
  OptionMapper(const PassInput& in, std::string format, std::map<std::string, SparkOption> opts)
      : in_(in), format_(std::move(format)), opts_(std::move(opts)) {}

  // Removes and returns option `key`, if written.
  std::optional<SparkOption> Take(const std::string& key) {
    auto it = opts_.find(key);
    if (it == opts_.end()) return std::nullopt;
    SparkOption o = std::move(it->second);
    opts_.erase(it);
    return o;
  }

  arrow::Result<bool> Bool(const std::string& key, bool fallback) {
    std::optional<SparkOption> o = Take(key);
    if (!o) return fallback;
    const std::string v = ToLower(o->value);
    if (v == "true" || v == "false") return v == "true";
    return ErrorAt(in_, o->value_token,
                   format_ + " option '" + key + "' is true or false, not '" + o->value + "'");
  }

  // Maps a string option to `duckdb_name = '<value>'`.
  void String(const std::string& key, const std::string& duckdb_name, ReaderArgs* out) {
    if (std::optional<SparkOption> o = Take(key)) {
      out->args.push_back(duckdb_name + " = " + StringLiteralFor(o->value));
    }
  }

  // dateFormat / timestampFormat: Java patterns as strftime patterns.
  arrow::Status Pattern(const std::string& key, const std::string& duckdb_name,
                        ReaderArgs* out) {
    std::optional<SparkOption> o = Take(key);
    if (!o) return arrow::Status::OK();
    auto f = JavaToStrftime(o->value);
    if (!f.ok()) {
      return ErrorAt(in_, o->value_token, format_ + " option '" + key + "': " +
                                              f.status().message());
    }
    out->args.push_back(duckdb_name + " = " + StringLiteralFor(*f));
    return arrow::Status::OK();
  }

  // mode: FAILFAST and PERMISSIVE read as DuckDB does (a malformed row fails
  // the read); DROPMALFORMED skips malformed rows.
  arrow::Status Mode(ReaderArgs* out) {
    std::optional<SparkOption> o = Take("mode");
    if (!o) return arrow::Status::OK();
    const std::string v = ToLower(o->value);
    if (v == "dropmalformed") {
      out->args.push_back("ignore_errors = true");
    } else if (v != "failfast" && v != "permissive") {
      return ErrorAt(in_, o->value_token,
                     format_ + " option 'mode' is PERMISSIVE, DROPMALFORMED or FAILFAST, not '" +
                         o->value + "'");
    }
    return arrow::Status::OK();
  }

  // Fails on the first option nothing took, naming it and the known ones.
  arrow::Status NoneLeft(const std::string& known) const {
    if (opts_.empty()) return arrow::Status::OK();
    const auto& [key, o] = *opts_.begin();
    return ErrorAt(in_, o.key_token,
                   format_ + " option '" + key + "' is not supported by thund (it reads " +
                       known + ")");
  }

 private:
  const PassInput& in_;
  std::string format_;
  std::map<std::string, SparkOption> opts_;
};

arrow::Result<ReaderArgs> CsvArgs(OptionMapper& m, const PassInput& in) {
  ReaderArgs r;
  ARROW_ASSIGN_OR_RAISE(bool header, m.Bool("header", false));
  ARROW_ASSIGN_OR_RAISE(bool infer, m.Bool("inferschema", false));
  r.args.push_back(std::string("header = ") + (header ? "true" : "false"));
  r.csv_without_header = !header;
  // Spark reads every column as a string unless asked to infer types.
  if (!infer) r.args.push_back("all_varchar = true");
  auto sep = m.Take("sep");
  auto delimiter = m.Take("delimiter");
  if (sep && delimiter && sep->value != delimiter->value) {
    return ErrorAt(in, delimiter->key_token, "csv options 'sep' and 'delimiter' disagree");
  }
  auto d = sep ? sep : delimiter;
  r.args.push_back("delim = " + StringLiteralFor(d ? d->value : ","));
  auto quote = m.Take("quote");
  r.args.push_back("quote = " + StringLiteralFor(quote ? quote->value : "\""));
  m.String("escape", "escape", &r);
  m.String("nullvalue", "nullstr", &r);
  m.String("comment", "comment", &r);
  ARROW_RETURN_NOT_OK(m.Pattern("dateformat", "dateformat", &r));
  ARROW_RETURN_NOT_OK(m.Pattern("timestampformat", "timestampformat", &r));
  for (const char* key : {"encoding", "charset"}) {
    if (auto o = m.Take(key)) {
      const std::string v = ToLower(o->value);
      std::string e = v == "utf-8" || v == "utf8"                            ? "utf-8"
                      : v == "utf-16" || v == "utf16"                        ? "utf-16"
                      : v == "iso-8859-1" || v == "latin1" || v == "latin-1" ? "latin-1"
                                                                             : "";
      if (e.empty()) {
        return ErrorAt(in, o->value_token,
                       "csv encoding '" + o->value +
                           "' is not supported (UTF-8, UTF-16, ISO-8859-1)");
      }
      r.args.push_back("encoding = '" + e + "'");
    }
  }
  // DuckDB always reads quoted line breaks, which is what multiLine turns on.
  ARROW_RETURN_NOT_OK(m.Bool("multiline", false).status());
  ARROW_RETURN_NOT_OK(m.Mode(&r));
  ARROW_RETURN_NOT_OK(m.NoneLeft(
      "header, inferSchema, sep / delimiter, quote, escape, nullValue, comment, dateFormat, "
      "timestampFormat, encoding / charset, multiLine and mode"));
  return r;
}

arrow::Result<ReaderArgs> JsonArgs(OptionMapper& m) {
  ReaderArgs r;
  // Spark reads JSON Lines unless multiLine is on (then a file is one JSON
  // value: an object or an array of objects).
  ARROW_ASSIGN_OR_RAISE(bool multiline, m.Bool("multiline", false));
  r.args.push_back(multiline ? "format = 'auto'" : "format = 'newline_delimited'");
  ARROW_RETURN_NOT_OK(m.Pattern("dateformat", "dateformat", &r));
  ARROW_RETURN_NOT_OK(m.Pattern("timestampformat", "timestampformat", &r));
  ARROW_RETURN_NOT_OK(m.Mode(&r));
  ARROW_RETURN_NOT_OK(m.NoneLeft("multiLine, dateFormat, timestampFormat and mode"));
  return r;
}

arrow::Result<ReaderArgs> ParquetArgs(OptionMapper& m) {
  ReaderArgs r;
  ARROW_ASSIGN_OR_RAISE(bool merge, m.Bool("mergeschema", false));
  if (merge) r.args.push_back("union_by_name = true");
  ARROW_RETURN_NOT_OK(m.NoneLeft("mergeSchema"));
  return r;
}

}  // namespace

arrow::Status FileReadPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].kind != TokKind::kIdent || !IsOp(t[i + 1], ".") ||
        t[i + 2].kind != TokKind::kBacktick || !AtRelationStart(in, i)) {
      continue;
    }
    if (i + 3 < t.size() && IsOp(t[i + 3], ".")) continue;  // a three-part name
    const std::string format = ToLower(t[i].text);
    const std::string path = IdentifierName(t[i + 2]);
    if (format == "orc" || format == "avro" || format == "text" || format == "delta" ||
        format == "binaryfile") {
      if (path.find('/') == std::string::npos) continue;  // a table in a schema of that name
      return ErrorAt(in, i,
                     "thund reads csv.`path`, json.`path` and parquet.`path` files; " + format +
                         " files are not supported");
    }
    if (format != "csv" && format != "json" && format != "parquet") continue;
    size_t end = i + 2;  // last token replaced
    std::map<std::string, SparkOption> opts;
    if (i + 4 < t.size() && IsWord(t[i + 3], "with") && IsOp(t[i + 4], "(")) {
      const size_t close = MatchingClose(t, i + 4);
      if (close >= t.size()) return ErrorAt(in, i + 4, "WITH ( is not closed");
      ARROW_RETURN_NOT_OK(ParseOptions(in, i + 4, close, &opts));
      end = close;
    }
    OptionMapper mapper(in, format, std::move(opts));
    ReaderArgs args;
    if (format == "csv") {
      ARROW_ASSIGN_OR_RAISE(args, CsvArgs(mapper, in));
    } else if (format == "json") {
      ARROW_ASSIGN_OR_RAISE(args, JsonArgs(mapper));
    } else {
      ARROW_ASSIGN_OR_RAISE(args, ParquetArgs(mapper));
    }
    std::string call = "read_" + format + "(" + StringLiteralFor(path);
    for (const auto& a : args.args) call += ", " + a;
    call += ")";
    // Without a header Spark names the columns _c0, _c1, ...; DuckDB names
    // them column0 (column00 from ten columns on). The E'' string keeps the
    // backslash of the regex group away from Spark's escapes.
    if (args.csv_without_header) {
      call = "(SELECT COLUMNS('^column0*([0-9]+)$') AS E'_c\\\\1' FROM " + call + ")";
    }
    out->push_back({t[i].begin, t[end].end, call});
  }
  return arrow::Status::OK();
}

}  // namespace thund::sql
