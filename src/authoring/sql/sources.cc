// Source reads written as table functions:
//   [STREAM] read_files('path', format => 'json', <option> => 'v', ...)
//   STREAM read_generator(kind => 'keyed_events', seed => 7, ...)
//   STREAM read_memory('name')
//   STREAM read_kafka(bootstrap_servers => 'host:9092', topic => 't', ...)
// Named arguments that are not fields of the source are its options; an
// option whose key is also a field name goes into options => map('k', 'v').
#include <charconv>

#include "authoring/enum_values.h"
#include "authoring/sql/sql_internal.h"

namespace thund::sqlp {
namespace {

using sql::IsOp;
using sql::IsWord;

struct Arg {
  std::string key;  // lower case; "" for positional
  std::string value;
  std::optional<StringMap> map;  // options => map(...)
  size_t at = 0;
};

// A literal argument value: string, number (with sign), true/false.
arrow::Result<std::string> LiteralValue(const std::vector<Token>& t, size_t a, size_t b) {
  if (b == a + 1 && sql::IsStringToken(t[a])) return sql::StringValue(t[a]);
  if (b == a + 1 && (IsWord(t[a], "true") || IsWord(t[a], "false"))) return sql::ToLower(t[a].text);
  if (b == a + 1 && t[a].kind == TokKind::kNumber) return std::string(t[a].text);
  if (b == a + 2 && (IsOp(t[a], "-") || IsOp(t[a], "+")) && t[a + 1].kind == TokKind::kNumber) {
    return (IsOp(t[a], "-") ? "-" : "") + std::string(t[a + 1].text);
  }
  return arrow::Status::Invalid("expected a literal value (a string, number, true or false)");
}

arrow::Result<std::vector<Arg>> ParseArgs(std::string_view text, const std::vector<Token>& t,
                                          size_t fn, size_t close, size_t* at) {
  std::vector<Arg> out;
  for (auto [a, b] : sql::SplitArgs(t, fn + 1, close)) {
    Arg arg;
    arg.at = a;
    *at = a;
    if (a >= b) return arrow::Status::Invalid("empty argument");
    size_t v = a;
    for (size_t k = a + 2; k + 1 < b; ++k) {
      if (IsOp(t[k], "=>")) {
        return arrow::Status::Invalid("write the option name in back quotes: `",
                                      sql::TextOf(text, t, a, k), "` => ...");
      }
      if (IsOp(t[k], "(")) break;
    }
    if (b >= a + 3 && sql::IsIdentifier(t[a]) && IsOp(t[a + 1], "=>")) {
      arg.key = sql::ToLower(sql::IdentifierName(t[a]));
      if (t[a].kind != TokKind::kIdent) arg.key = sql::IdentifierName(t[a]);  // quoted: exact
      v = a + 2;
    }
    if (arg.key == "options" && b > v + 2 && IsWord(t[v], "map") && IsOp(t[v + 1], "(")) {
      size_t mclose = sql::MatchingClose(t, v + 1);
      StringMap m;
      auto parts = sql::SplitArgs(t, v + 1, mclose);
      if (parts.size() % 2 != 0)
        return arrow::Status::Invalid("options => map(...) needs key, value pairs");
      for (size_t k = 0; k < parts.size(); k += 2) {
        *at = parts[k].first;
        ARROW_ASSIGN_OR_RAISE(auto key, LiteralValue(t, parts[k].first, parts[k].second));
        ARROW_ASSIGN_OR_RAISE(auto val, LiteralValue(t, parts[k + 1].first, parts[k + 1].second));
        m[key] = val;
      }
      arg.map = std::move(m);
    } else {
      *at = v;
      ARROW_ASSIGN_OR_RAISE(arg.value, LiteralValue(t, v, b));
    }
    out.push_back(std::move(arg));
  }
  return out;
}

template <typename T>
arrow::Result<T> Number(const std::string& s, std::string_view what) {
  T v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return arrow::Status::Invalid(what, " must be a whole number, not '", s, "'");
  }
  return v;
}

// Keys the Databricks spelling of read_kafka uses.
std::string KafkaKey(const std::string& k) {
  if (k == "bootstrapservers") return "bootstrap_servers";
  if (k == "subscribe") return "topic";
  if (k == "startingoffsets") return "starting_offsets";
  return k;
}

void AddOption(StringMap* options, const Arg& a) { (*options)[a.key] = a.value; }

// The parsed value of an enum-valued argument, or its problem as one message.
template <typename T>
arrow::Result<T> Value(authoring::ParsedValue<T> parsed) {
  if (const auto* bad = std::get_if<authoring::BadValue>(&parsed)) {
    return arrow::Status::Invalid(bad->message, "; ", bad->hint);
  }
  return std::get<T>(std::move(parsed));
}

}  // namespace

bool IsSourceFunction(std::string_view name) {
  for (std::string_view f : {"read_files", "read_kafka", "read_generator", "read_memory"}) {
    if (sql::EqualsIgnoreCase(name, f)) return true;
  }
  return false;
}

arrow::Result<SourceSpec> ParseSourceCall(std::string_view text, const std::vector<Token>& t,
                                          size_t fn, size_t close, bool stream, size_t* at) {
  *at = fn;
  const std::string name = sql::ToLower(t[fn].text);
  ARROW_ASSIGN_OR_RAISE(auto args, ParseArgs(text, t, fn, close, at));
  auto positional_first = [&](std::string_view what) -> arrow::Result<std::string> {
    if (args.empty() || !args[0].key.empty()) {
      *at = fn;
      return arrow::Status::Invalid(name, "() needs the ", what, " as its first argument");
    }
    return args[0].value;
  };
  if (name == "read_files") {
    FileSource f;
    f.file_drop = stream;
    ARROW_ASSIGN_OR_RAISE(f.path, positional_first("path"));
    for (size_t k = 1; k < args.size(); ++k) {
      const Arg& a = args[k];
      *at = a.at;
      if (a.key.empty())
        return arrow::Status::Invalid("read_files options are written name => value");
      if (a.map) {
        for (const auto& [mk, mv] : *a.map) f.options[mk] = mv;
      } else if (a.key == "format") {
        ARROW_ASSIGN_OR_RAISE(f.format, Value(authoring::ParseSourceFormat(a.value)));
      } else {
        AddOption(&f.options, a);
      }
    }
    return SourceSpec{f};
  }
  if (name == "read_memory") {
    MemorySource m;
    if (!args.empty() && args[0].key == "name") {
      m.name = args[0].value;
    } else {
      ARROW_ASSIGN_OR_RAISE(m.name, positional_first("stream name"));
    }
    if (args.size() > 1) {
      *at = args[1].at;
      return arrow::Status::Invalid("read_memory() takes one argument, the stream name");
    }
    return SourceSpec{m};
  }
  if (name == "read_generator") {
    GeneratorSource g;
    for (const Arg& a : args) {
      *at = a.at;
      if (a.key.empty())
        return arrow::Status::Invalid("read_generator() arguments are written name => value");
      if (a.map) {
        for (const auto& [mk, mv] : *a.map) g.options[mk] = mv;
      } else if (a.key == "kind") {
        ARROW_ASSIGN_OR_RAISE(g.kind, Value(authoring::ParseSourceGeneratorKind(a.value)));
      } else if (a.key == "seed") {
        ARROW_ASSIGN_OR_RAISE(g.seed, Number<uint64_t>(a.value, "seed"));
      } else if (a.key == "rows_per_batch") {
        ARROW_ASSIGN_OR_RAISE(g.rows_per_batch, Number<int64_t>(a.value, "rows_per_batch"));
      } else if (a.key == "total_rows") {
        ARROW_ASSIGN_OR_RAISE(g.total_rows, Number<int64_t>(a.value, "total_rows"));
      } else if (a.key == "events_per_second") {
        ARROW_ASSIGN_OR_RAISE(g.events_per_second, Number<int64_t>(a.value, "events_per_second"));
      } else if (a.key == "out_of_orderness") {
        ARROW_ASSIGN_OR_RAISE(g.out_of_orderness_ms, ParseDurationText(a.value));
      } else {
        AddOption(&g.options, a);
      }
    }
    return SourceSpec{g};
  }
  if (name == "read_kafka") {
    KafkaSource k;
    for (const Arg& a0 : args) {
      *at = a0.at;
      if (a0.key.empty())
        return arrow::Status::Invalid("read_kafka() arguments are written name => value");
      Arg a = a0;
      a.key = KafkaKey(a.key);
      if (a.map) {
        for (const auto& [mk, mv] : *a.map) k.options[mk] = mv;
      } else if (a.key == "bootstrap_servers") {
        k.bootstrap_servers = a.value;
      } else if (a.key == "topic") {
        k.topic = a.value;
      } else if (a.key == "format") {
        k.format = a.value;
      } else if (a.key == "starting_offsets") {
        ARROW_ASSIGN_OR_RAISE(k.starting_offsets,
                              Value(authoring::ParseSourceStartingOffsets(a.value)));
      } else {
        AddOption(&k.options, a);
      }
    }
    return SourceSpec{k};
  }
  return arrow::Status::Invalid(name, " is not a source function");
}

namespace {

// Options whose keys name no field go as `key => 'v'`, the rest in map(...).
std::string OptionArgs(const StringMap& options, std::initializer_list<std::string_view> fields) {
  std::string out, clash;
  for (const auto& [k, v] : options) {
    bool is_field = k == "options";
    for (auto f : fields) is_field = is_field || k == f;
    std::string lower = sql::ToLower(k);
    bool plain = IsPlainIdentifier(k) && lower == k;
    if (is_field || !plain) {
      clash += (clash.empty() ? "" : ", ") + Literal(k) + ", " + Literal(v);
    } else {
      out += ", " + QuoteIdent(k) + " => " + Literal(v);
    }
  }
  if (!clash.empty()) out += ", options => map(" + clash + ")";
  return out;
}

}  // namespace

std::string FormatSourceCall(const SourceSpec& s) {
  struct V {
    std::string operator()(const FileSource& f) const {
      std::string out = std::string(f.file_drop ? "STREAM " : "") + "read_files(" + Literal(f.path);
      if (f.format) out += ", format => " + Literal(Name(*f.format));
      return out + OptionArgs(f.options, {"format"}) + ")";
    }
    std::string operator()(const GeneratorSource& g) const {
      std::vector<std::string> args;
      const GeneratorSource d;
      if (g.kind != d.kind) args.push_back("kind => " + Literal(Name(g.kind)));
      if (g.seed != d.seed) args.push_back("seed => " + std::to_string(g.seed));
      if (g.rows_per_batch != d.rows_per_batch)
        args.push_back("rows_per_batch => " + std::to_string(g.rows_per_batch));
      if (g.total_rows != d.total_rows)
        args.push_back("total_rows => " + std::to_string(g.total_rows));
      if (g.events_per_second != d.events_per_second) {
        args.push_back("events_per_second => " + std::to_string(g.events_per_second));
      }
      if (g.out_of_orderness_ms != d.out_of_orderness_ms) {
        args.push_back("out_of_orderness => " + Literal(DurationText(g.out_of_orderness_ms)));
      }
      std::string out = "STREAM read_generator(";
      for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
      std::string opts = OptionArgs(g.options, {"kind", "seed", "rows_per_batch", "total_rows",
                                                "events_per_second", "out_of_orderness"});
      if (args.empty() && !opts.empty()) opts = opts.substr(2);
      return out + opts + ")";
    }
    std::string operator()(const MemorySource& m) const {
      return "STREAM read_memory(" + Literal(m.name) + ")";
    }
    std::string operator()(const KafkaSource& k) const {
      std::vector<std::string> args;
      const KafkaSource d;
      args.push_back("bootstrap_servers => " + Literal(k.bootstrap_servers));
      args.push_back("topic => " + Literal(k.topic));
      if (k.format != d.format) args.push_back("format => " + Literal(k.format));
      if (k.starting_offsets != d.starting_offsets) {
        args.push_back("starting_offsets => " + Literal(Name(k.starting_offsets)));
      }
      std::string out = "STREAM read_kafka(";
      for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
      return out +
             OptionArgs(k.options, {"bootstrap_servers", "topic", "format", "starting_offsets",
                                    "bootstrapservers", "subscribe", "startingoffsets"}) +
             ")";
    }
  };
  return std::visit(V{}, s);
}

}  // namespace thund::sqlp
