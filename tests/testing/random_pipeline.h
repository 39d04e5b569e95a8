// A deterministic random generator of pipeline IR, for property tests.
//
// Every IR type, enum value and source variant is produced, optional fields are
// present or absent, schemas use nested types (array/struct/map/decimal,
// timestamps with units and time zones) and column comments/metadata, and
// strings are drawn from a pool of awkward cases (YAML look-alikes such as
// "true", "123", "~"; quotes, '#', ": ", leading/trailing spaces, newlines,
// tabs, unicode).
//
// The pipelines are *structurally* arbitrary, not valid: names may collide,
// targets may be unknown, SQL is not SQL. Set `tricky_strings = false` for
// identifier-like names and simple SELECTs.
//
// Arrow types are limited to what the type-name syntax (type_names.h) can
// express: nested struct fields are nullable and carry no metadata.
//
// Header-only; deterministic for a given seed on every platform (only
// std::mt19937_64 output is used, never std::*_distribution).
#pragma once

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "thund/ir.h"

namespace thund::testing {

struct RandomPipelineOptions {
  bool tricky_strings = true;
  int max_datasets = 6;
  int max_flows = 8;
  int max_type_depth = 3;
};

class RandomPipelineGenerator {
 public:
  explicit RandomPipelineGenerator(uint64_t seed, RandomPipelineOptions options = {})
      : rng_(seed), opt_(options) {}

  Pipeline Next() {
    Pipeline p(Name());
    if (Chance(2)) p.storage = Text();
    if (Chance(3)) p.catalog = Name();
    if (Chance(3)) p.database = Name();
    p.configuration = Map(3);
    const int datasets = Uniform(0, opt_.max_datasets);
    for (int i = 0; i < datasets; ++i) p.datasets.push_back(NextDataset());
    const int flows = Uniform(0, opt_.max_flows);
    for (int i = 0; i < flows; ++i) p.flows.push_back(NextFlow(p));
    return p;
  }

  Dataset NextDataset() {
    Dataset d(Name(), Pick<DatasetKind>({DatasetKind::kTable, DatasetKind::kStreamingTable,
                                         DatasetKind::kMaterializedView, DatasetKind::kView,
                                         DatasetKind::kTemporaryView, DatasetKind::kSink}));
    if (Chance(2)) d.schema.arrow = NextSchema();
    if (Chance(3)) d.materialization = Materialization::kIncremental;
    const int expectations = Uniform(0, 3);
    for (int i = 0; i < expectations; ++i) {
      Expectation e;
      e.name = Name();
      e.predicate = Chance(2) ? "id IS NOT NULL" : Text();
      e.action = Pick<ExpectationAction>(
          {ExpectationAction::kWarn, ExpectationAction::kDrop, ExpectationAction::kFail});
      d.expectations.push_back(e);
    }
    if (Chance(3)) {
      if (Chance(2)) {
        d.storage.format =
            Pick<FileFormat>({FileFormat::kParquet, FileFormat::kCsv, FileFormat::kJson});
      }
      if (Chance(2)) d.storage.location = Pick<std::string>({"s3://bucket/x/", "/tmp/out", Text()});
      if (Chance(2)) {
        d.storage.mode =
            Pick<WriteMode>({WriteMode::kAppend, WriteMode::kOverwrite, WriteMode::kMerge});
      }
      d.storage.partition_by = Names(3);
      d.storage.options = Map(3);
      if (Chance(2)) d.storage.merge_keys = Names(3);
    }
    if (Chance(3)) {
      d.keyed_write.keys = Names(3);
      if (Chance(2)) d.keyed_write.tuning.buckets = Int();
      if (Chance(2)) d.keyed_write.tuning.threads = Int();
      if (Chance(2)) d.keyed_write.tuning.batch_size = Int();
      if (Chance(2)) {
        d.keyed_write.duplicates =
            Pick<DuplicateKeys>({DuplicateKeys::kFirst, DuplicateKeys::kAll});
      }
      if (Chance(2)) d.keyed_write.null_keys = Pick<NullKeys>({NullKeys::kError, NullKeys::kDrop});
      if (Chance(2)) d.keyed_write.key_match = Pick<KeyMatch>({KeyMatch::kExact, KeyMatch::kHash});
      if (Chance(2)) {  // the fast-path switches, each off now and then
        KeyedWriteTuning& t = d.keyed_write.tuning;
        for (bool* on : {&t.settle, &t.passthrough, &t.join, &t.direct_io, &t.memory_pool,
                         &t.huge_pages}) {
          if (Chance(3)) *on = false;
        }
        if (Chance(3)) t.key_index = KeyIndex::kTable;
        if (Chance(4)) t.plain = true;
      }
    }
    if (Chance(2)) d.comment = Text();
    d.properties = Map(3);
    return d;
  }

  Flow NextFlow(const Pipeline& p) {
    Flow f;
    f.target =
        !p.datasets.empty() && Chance(4, 3) ? p.datasets[Index(p.datasets.size())].name : Name();
    const int naming = Uniform(0, 2);
    f.name = naming == 0 ? f.target : naming == 1 ? Name() : "";
    const int body = Uniform(0, 9);  // mostly exactly one of sql / source
    if (body <= 4 || body == 8) f.sql = Sql();
    if (body >= 5) f.source = NextSource();
    if (Chance(4)) f.once = true;
    if (Chance(2)) f.streaming = NextStreaming();
    if (Chance(3)) f.cdc = NextCdc();
    if (Chance(2)) f.comment = Text();
    return f;
  }

  SourceSpec NextSource() {
    switch (Uniform(0, 4)) {
      case 0:
      case 1: {
        FileSource s;
        s.path = Pick<std::string>({"data/*.parquet", "/landing/orders/", Text()});
        if (Chance(4, 3)) {
          s.format = Pick<FileFormat>({FileFormat::kParquet, FileFormat::kCsv, FileFormat::kJson});
        }
        s.file_drop = Chance(2);
        s.options = Map(3);
        return s;
      }
      case 2: {
        GeneratorSource g;
        if (Chance(2)) {
          g.kind = Pick<GeneratorKind>({GeneratorKind::kKeyedEvents, GeneratorKind::kNexmarkPerson,
                                        GeneratorKind::kNexmarkAuction, GeneratorKind::kNexmarkBid,
                                        GeneratorKind::kNexmark});
        }
        if (Chance(2)) g.seed = rng_();
        if (Chance(2)) g.rows_per_batch = Int();
        if (Chance(2)) g.total_rows = Int();
        if (Chance(2)) g.events_per_second = Int();
        if (Chance(2)) g.out_of_orderness_ms = Duration();
        g.options = Map(2);
        return g;
      }
      case 3:
        return MemorySource{Name()};
      default: {
        KafkaSource k;
        k.bootstrap_servers = Pick<std::string>({"localhost:9092", "a:1,b:2", Text()});
        k.topic = Name();
        if (Chance(2)) k.format = Pick<std::string>({"json", "avro", "csv", Text()});
        if (Chance(2)) {
          k.starting_offsets =
              Pick<StartingOffsets>({StartingOffsets::kEarliest, StartingOffsets::kLatest});
        }
        k.options = Map(2);
        return k;
      }
    }
  }

  StreamingSpec NextStreaming() {
    StreamingSpec s;
    if (!Chance(3)) {  // unset a third of the time: the run-wide default applies
      s.mode = Pick<StreamingMode>({StreamingMode::kRecompute, StreamingMode::kIncremental});
    }
    switch (Uniform(0, 2)) {
      case 0:
        s.trigger = Trigger::Once();
        break;
      case 1:
        s.trigger = Trigger::AvailableNow();
        break;
      default:
        s.trigger = Trigger::ProcessingTime(Duration());
        break;
    }
    s.output_mode =
        Pick<OutputMode>({OutputMode::kAppend, OutputMode::kUpdate, OutputMode::kComplete});
    if (Chance(2)) {
      Watermark w;
      w.event_time_column = Name();
      if (Chance(2)) w.allowed_lateness_ms = Duration();
      if (Chance(2)) w.idle_timeout_ms = Duration();
      s.watermark = w;
    }
    if (Chance(2)) {
      switch (Uniform(0, 3)) {
        case 0:
          s.window = WindowSpec::Tumbling(Name(), Duration());
          break;
        case 1:
          s.window = WindowSpec::Hopping(Name(), Duration(), Duration());
          break;
        case 2:
          s.window = WindowSpec::Session(Name(), Duration());
          break;
        default:  // every field set, whatever the kind: the file must keep them all
          s.window = WindowSpec{WindowKind::kHopping, Name(), Duration(), Duration(), Duration()};
      }
    }
    if (Chance(3)) s.late_rows = Name();
    return s;
  }

  Cdc NextCdc() {
    Cdc c;
    c.keys = Names(3);
    if (Chance(4, 3)) c.sequence_by = Name();
    if (Chance(2)) c.apply_as_deletes = Chance(2) ? "op = 'DELETE'" : Text();
    c.except_columns = Names(2);
    c.scd_type = Chance(8, 7) ? Uniform(1, 2) : static_cast<int>(Int() % 1000);
    return c;
  }

  std::shared_ptr<arrow::Schema> NextSchema() {
    arrow::FieldVector fields;
    const int n = Uniform(0, 6);
    for (int i = 0; i < n; ++i) {
      std::shared_ptr<arrow::KeyValueMetadata> md;
      if (Chance(2)) {
        md = std::make_shared<arrow::KeyValueMetadata>();
        const int extra = Uniform(0, 2);
        const int comment_at = Chance(2) ? Uniform(0, extra) : -1;
        for (int k = 0; k <= extra; ++k) {
          if (k == comment_at) md->Append("comment", Text());
          if (k < extra) md->Append("k" + std::to_string(k) + Name(), Text());
        }
      }
      fields.push_back(arrow::field(Name(), Type(opt_.max_type_depth), Chance(3, 2), md));
    }
    std::shared_ptr<arrow::KeyValueMetadata> schema_md;
    if (Chance(6)) {
      schema_md = std::make_shared<arrow::KeyValueMetadata>();
      const int n = Uniform(0, 2);  // 0: empty metadata, which Arrow equates with none
      for (int k = 0; k < n; ++k) schema_md->Append("m" + std::to_string(k) + Name(), Text());
    }
    return arrow::schema(fields, schema_md);
  }

  std::shared_ptr<arrow::DataType> Type(int depth) {
    const int choice = Uniform(0, depth > 0 ? 24 : 19);
    switch (choice) {
      case 0:
        return arrow::boolean();
      case 1:
        return arrow::int8();
      case 2:
        return arrow::int16();
      case 3:
        return arrow::int32();
      case 4:
        return arrow::int64();
      case 5:
        return arrow::uint8();
      case 6:
        return arrow::uint16();
      case 7:
        return arrow::uint32();
      case 8:
        return arrow::uint64();
      case 9:
        return arrow::float32();
      case 10:
        return arrow::float64();
      case 11:
        return arrow::utf8();
      case 12:
        return arrow::large_utf8();
      case 13:
        return arrow::binary();
      case 14:
        return arrow::date32();
      case 15:
        return arrow::time64(arrow::TimeUnit::MICRO);
      case 16:
        return arrow::null();
      case 17: {
        const auto unit =
            Pick<arrow::TimeUnit::type>({arrow::TimeUnit::SECOND, arrow::TimeUnit::MILLI,
                                         arrow::TimeUnit::MICRO, arrow::TimeUnit::NANO});
        return arrow::timestamp(
            unit, Pick<std::string>({"", "UTC", "Europe/Oslo", "+05:30", "America/New_York"}));
      }
      case 18: {
        const int precision = Uniform(1, 38);
        return arrow::decimal128(precision, Uniform(0, precision));
      }
      case 19: {
        const int precision = Uniform(39, 76);
        return arrow::decimal256(precision, Uniform(0, precision));
      }
      case 20:
      case 21:
        return arrow::list(Type(depth - 1));
      case 22:
        return arrow::map(Type(0), Type(depth - 1));
      default: {
        arrow::FieldVector fields;
        const int n = Uniform(0, 3);
        for (int i = 0; i < n; ++i) {
          std::string name =
              Pick<std::string>({"a", "b_2", "Mixed", "with space", "dash-ed", "é", ""});
          fields.push_back(arrow::field(name + std::to_string(i), Type(depth - 1)));
        }
        return arrow::struct_(fields);
      }
    }
  }

  // ------------------------------------------------------------ strings --

  // Awkward strings for YAML; each must survive a round trip.
  static const std::vector<std::string>& TrickyStrings() {
    static const std::vector<std::string> kPool = {
        "",
        " ",
        "true",
        "False",
        "TRUE",
        "yes",
        "No",
        "on",
        "OFF",
        "y",
        "n",
        "null",
        "Null",
        "NULL",
        "~",
        "123",
        "-1",
        "+7",
        "007",
        "0x1F",
        "0o17",
        "0b101",
        "1e3",
        "1.5",
        "-2.5e-3",
        ".5",
        ".inf",
        "-.Inf",
        ".nan",
        "1_000",
        "1:30",
        "2024-01-01",
        "2024-01-01T10:00:00Z",
        "=",
        "<<",
        "#",
        "# not a comment",
        "a #b",
        "a#b",
        "a: b",
        "key:",
        ":",
        "::",
        "x::int",
        "-",
        "- item",
        "--",
        "---",
        "...",
        "? q",
        "?",
        "[x]",
        "{y}",
        "a, b",
        "a,b",
        "*alias",
        "&anchor",
        "!tag",
        "!!str",
        "|",
        ">",
        "%YAML",
        "@at",
        "`tick`",
        "'single'",
        "\"double\"",
        "it's",
        "say \"hi\"",
        "back\\slash",
        "\\n literally",
        " leading",
        "trailing ",
        "  both  ",
        "tab\there",
        "\ttab first",
        "line1\nline2",
        "line1\nline2\n",
        "line1\nline2\n\n",
        "line1\n\nline3",
        "\nleading newline",
        "\n\nx",
        "  indented\nsecond",
        "x\n  more indented\nback",
        "trailing space \nline",
        "line\n  \nwhitespace-only middle line",
        "\n",
        "\n\n",
        " \n",
        "a\n ",
        "unicode: é ü 日本 🚀",
        "日本語",
        "nbsp\xC2\xA0x",
        "ls\xE2\x80\xA8sep",
        "ps\xE2\x80\xA9sep",
        "nel\xC2\x85x",
        "bom\xEF\xBB\xBF",
        "ctrl\x01"
        "char",
        "bell\a",
        "esc\x1b[0m",
        "del\x7f",
        "cr\r\nlf",
        "lone\rcr",
        "nul",
        "SELECT a, b FROM t WHERE x = 'a: b' -- c",
        "SELECT *\nFROM orders\n  WHERE amount > 10 # big\n",
        "SELECT 1;\n\n-- trailing\n",
        "WITH x AS (\n  SELECT 1 AS a\n)\nSELECT a FROM x",
        "{\"json\": [1, 2]}",
        "[1, 2]",
        "@",
        "%",
        "a\tb\n\tc",
        "x\n---\ny",
        "x\n...\ny",
        "#!/bin/sh\nexit 0",
        std::string("embedded\0nul", 12)};
    return kPool;
  }

  std::string Text() {
    if (!opt_.tricky_strings) return Identifier();
    const auto& pool = TrickyStrings();
    switch (Uniform(0, 5)) {
      case 0:
        return Identifier();
      case 1:
        return pool[Index(pool.size())] + pool[Index(pool.size())];
      case 2: {  // random characters from an alphabet of troublemakers
        static const std::string kAlphabet = "ab09 :#-?,[]{}&*!|>'\"%@`\\\n\t.~=<";
        std::string s;
        const int n = Uniform(1, 12);
        for (int i = 0; i < n; ++i) s += kAlphabet[Index(kAlphabet.size())];
        return s;
      }
      default:
        return pool[Index(pool.size())];
    }
  }

  std::string Name() { return Chance(3, 2) ? Identifier() : Text(); }

  std::string Identifier() {
    static const char* kWords[] = {"orders", "customers", "events",  "clicks", "revenue", "id",
                                   "ts",     "amount",    "user_id", "region", "daily",   "raw"};
    std::string s = kWords[Index(std::size(kWords))];
    if (Chance(2)) s += "_" + std::to_string(Uniform(0, 99));
    return s;
  }

  std::string Sql() {
    if (!opt_.tricky_strings || Chance(2)) {
      return Pick<std::string>(
          {"SELECT * FROM orders", "SELECT id, sum(amount) AS total FROM orders GROUP BY id",
           "SELECT *\nFROM read_parquet('data/*.parquet')\nWHERE amount > 0\n"});
    }
    return Text();
  }

  // ------------------------------------------------------------- numbers --

  int64_t Duration() {
    switch (Uniform(0, 9)) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return 1500;
      case 3:
        return 60'000;
      case 4:
        return 3'600'000;
      case 5:
        return 86'400'000;
      case 6:
        return -5'000;
      case 7:
        return Pick<int64_t>({std::numeric_limits<int64_t>::max(),
                              std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::min() + 1});
      case 8:
        return static_cast<int64_t>(rng_() % 1'000'000'000'000ULL);
      default:
        return static_cast<int64_t>(Uniform(1, 600)) * 1000;
    }
  }

  int64_t Int() {
    switch (Uniform(0, 4)) {
      case 0:
        return Uniform(1, 64);
      case 1:
        return -static_cast<int64_t>(Uniform(1, 100));
      case 2:
        return static_cast<int64_t>(rng_());  // full range, incl. negatives
      default:
        return Uniform(1, 100'000);
    }
  }

  // ------------------------------------------------------------- helpers --

  std::vector<std::string> Names(int max) {
    std::vector<std::string> out;
    const int n = Uniform(0, max);
    for (int i = 0; i < n; ++i) out.push_back(Name());
    return out;
  }

  StringMap Map(int max) {
    StringMap out;
    const int n = Uniform(0, max);
    for (int i = 0; i < n; ++i) out[Name()] = Text();
    return out;
  }

  // Uniform in [lo, hi]; modulo bias is irrelevant here.
  int Uniform(int lo, int hi) {
    return lo + static_cast<int>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  size_t Index(size_t n) { return static_cast<size_t>(rng_() % n); }
  // True with probability k/n (default 1/n).
  bool Chance(int n, int k = 1) { return Uniform(1, n) <= k; }
  template <typename T>
  T Pick(std::initializer_list<T> options) {
    return *(options.begin() + Index(options.size()));
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  RandomPipelineOptions opt_;
};

}  // namespace thund::testing
