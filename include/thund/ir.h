// The pipeline IR: plain value types, Arrow-typed. The IR *is* the C++ builder:
// there is no second model. Every authoring surface (C++, pipeline file, SQL)
// lowers to a `Pipeline`, and every backend consumes one.
//
// Conventions:
//  * All types are regular values: copyable, comparable with ==, printable with
//    ToString(). Equality compares every field that the pipeline file stores
//    (source locations are *not* part of equality: they say where a thing was
//    written, not what it is).
//  * Durations are int64 milliseconds (see duration.h).
//  * Builder methods (`WithX`) mutate and return *this, so they chain on
//    temporaries: Dataset::MaterializedView("x").WithComment("...").
//  * Nothing here validates; call Validate(pipeline) (validate.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <arrow/type_fwd.h>

#include "thund/diagnostic.h"

namespace thund {

// ---------------------------------------------------------------- enums ----

enum class DatasetKind {
  kTable,             // batch table, stored
  kStreamingTable,    // append-oriented table fed by streaming flows, stored
  kMaterializedView,  // batch result of exactly one flow, stored
  kView,              // not stored; a named query
  kTemporaryView,     // not stored; lives for one run
  kSink,              // external write target (files, later Kafka); never read
};
enum class Materialization { kFull, kIncremental };
enum class ExpectationAction { kWarn, kDrop, kFail };
enum class StreamingMode { kRecompute, kIncremental };
enum class OutputMode { kAppend, kUpdate, kComplete };
enum class TriggerKind { kOnce, kAvailableNow, kProcessingTime };
enum class WindowKind { kTumbling, kHopping, kSession };
// Files read or written. kNoop is for sinks only: rows are counted and discarded
// (a benchmark's sink, like Flink's blackhole and Spark's noop).
enum class FileFormat { kParquet, kCsv, kJson, kNoop };
// How a sink writes: add files, replace them, or upsert a keyed Parquet table
// (kMerge: StorageSpec::merge_keys; docs/storage.md, "Merge sinks").
enum class WriteMode { kAppend, kOverwrite, kMerge };
// Keyed writes: rows whose key repeats among the rows being written.
enum class DuplicateKeys {
  kFirst,  // write the first row per key (in output order); count the rest as skipped
  kAll,    // write every row of the key
};
// Keyed writes: rows with a NULL in any key column.
enum class NullKeys {
  kError,  // fail the write, naming the input and row
  kDrop,   // drop the row and count it
};
// Keyed writes: how keys are compared.
enum class KeyMatch {
  kExact,  // by value: never wrong
  kHash,   // by 128-bit hash: less memory; a hash collision skips a new row
};
// Keyed writes: how the target's keys are held (a fast-path switch).
enum class KeyIndex {
  kRows,   // row numbers behind a Bloom filter where that applies (the fast path)
  kTable,  // the keys' bytes in a hash table (its plain twin)
};
enum class GeneratorKind { kKeyedEvents, kNexmarkPerson, kNexmarkAuction, kNexmarkBid, kNexmark };
enum class StartingOffsets { kEarliest, kLatest };  // Kafka

// Canonical lower_snake names used by the pipeline file, CLI and docs
// ("materialized_view", "available_now", ...), and their inverses.
const char* Name(DatasetKind v);
const char* Name(Materialization v);
const char* Name(ExpectationAction v);
const char* Name(StreamingMode v);
const char* Name(OutputMode v);
const char* Name(TriggerKind v);
const char* Name(WindowKind v);
const char* Name(FileFormat v);       // "parquet" | "csv" | "json" | "noop"
const char* Name(WriteMode v);        // "append" | "overwrite" | "merge"
const char* Name(DuplicateKeys v);    // "first" | "all"
const char* Name(NullKeys v);         // "error" | "drop"
const char* Name(KeyMatch v);         // "exact" | "hash"
const char* Name(KeyIndex v);         // "rows" | "table"
const char* Name(GeneratorKind v);    // "keyed_events" | "nexmark_person" | ... | "nexmark"
const char* Name(StartingOffsets v);  // "earliest" | "latest"
std::optional<DatasetKind> ParseDatasetKind(std::string_view s);
std::optional<Materialization> ParseMaterialization(std::string_view s);
std::optional<ExpectationAction> ParseExpectationAction(std::string_view s);
std::optional<StreamingMode> ParseStreamingMode(std::string_view s);
std::optional<OutputMode> ParseOutputMode(std::string_view s);
std::optional<TriggerKind> ParseTriggerKind(std::string_view s);
std::optional<WindowKind> ParseWindowKind(std::string_view s);
std::optional<FileFormat> ParseFileFormat(std::string_view s);
std::optional<WriteMode> ParseWriteMode(std::string_view s);
std::optional<DuplicateKeys> ParseDuplicateKeys(std::string_view s);
std::optional<NullKeys> ParseNullKeys(std::string_view s);
std::optional<KeyMatch> ParseKeyMatch(std::string_view s);
std::optional<KeyIndex> ParseKeyIndex(std::string_view s);
std::optional<GeneratorKind> ParseGeneratorKind(std::string_view s);
std::optional<StartingOffsets> ParseStartingOffsets(std::string_view s);

// True for kinds whose rows are stored by thund (table, streaming table, MV).
bool IsStored(DatasetKind k);
// True for kinds that a flow may read (everything but kSink).
bool IsReadable(DatasetKind k);

using StringMap = std::map<std::string, std::string>;

// ------------------------------------------------------------- schema ------

// An optional Arrow schema. Null means "not declared" (inferred at run time).
// Column comments live in field metadata under the key "comment".
// Equality compares field names, types, nullability and metadata.
struct Schema {
  std::shared_ptr<arrow::Schema> arrow;

  bool declared() const { return arrow != nullptr; }
  bool operator==(const Schema& o) const;
  std::string ToString() const;  // "(id bigint not null, ts timestamp)" or "(undeclared)"
};

// ------------------------------------------------------- expectations ------

// A data-quality rule on a dataset: `predicate` is a SQL boolean expression
// evaluated per row. A row violates it when the predicate is false (NULL counts
// as a violation, as in SDP).
struct Expectation {
  std::string name;
  std::string predicate;
  ExpectationAction action = ExpectationAction::kWarn;
  SourceLocation location;  // not part of equality

  bool operator==(const Expectation& o) const;
  std::string ToString() const;
};

// ------------------------------------------------------------ storage ------

// Where and how a stored dataset or sink keeps its rows. Empty fields mean the
// backend's default (Parquet under the pipeline's storage root).
struct StorageSpec {
  std::optional<FileFormat> format;  // unset = the default (Parquet)
  std::string location;              // path or URI (s3://...), "" = default layout
  std::optional<WriteMode> mode;     // sinks; unset = the default (append)
  std::vector<std::string> partition_by;
  StringMap options;     // format/writer options
  // Sinks with mode merge: the columns a row is upserted by (a row replaces
  // the row with its key). Required by, and only allowed with, kMerge.
  std::vector<std::string> merge_keys;

  bool empty() const;
  bool operator==(const StorageSpec&) const = default;
  std::string ToString() const;
};

// How a keyed write runs, not what it writes: tuning that never changes which
// rows land. 0 = the engine's default.
struct KeyedWriteTuning {
  int64_t buckets = 0;     // 0 = derived from threads
  int64_t threads = 0;     // 0 = machine cores
  int64_t batch_size = 0;  // 0 = engine default
  // Fast-path switches, one per `thund copy` switch (--no-settle, ...,
  // --key-index, --plain; docs/keyed-writes.md "Fast paths and their
  // switches"). Each fast path has a plain twin that lands the same rows.
  // Defaults: every fast path on. `plain` turns all of them off, whatever the
  // fields before it say. settle, passthrough, join and direct_io concern
  // whole source files committed unchanged, which only `thund copy` does
  // today; `thund run` carries them (KeyedWriteOptions / OutputOptions).
  bool settle = true;
  bool passthrough = true;
  bool join = true;
  bool direct_io = true;
  KeyIndex key_index = KeyIndex::kRows;
  bool memory_pool = true;
  bool huge_pages = true;
  bool plain = false;

  bool operator==(const KeyedWriteTuning&) const = default;
};

// Key-checkpointed writes (seed 004; docs/keyed-writes.md): rows whose key
// already exists at the target are skipped. Unset (`keys` empty) = off.
struct KeyedWrite {
  std::vector<std::string> keys;
  DuplicateKeys duplicates = DuplicateKeys::kFirst;
  NullKeys null_keys = NullKeys::kError;
  KeyMatch key_match = KeyMatch::kExact;
  KeyedWriteTuning tuning{};

  bool enabled() const { return !keys.empty(); }
  bool operator==(const KeyedWrite&) const = default;
  std::string ToString() const;
};

// ------------------------------------------------------------ dataset ------

struct Dataset {
  std::string name;
  DatasetKind kind = DatasetKind::kMaterializedView;
  Schema schema;
  Materialization materialization = Materialization::kFull;
  std::vector<Expectation> expectations;
  StorageSpec storage;
  KeyedWrite keyed_write;
  std::string comment;
  StringMap properties;  // TBLPROPERTIES and the like, kept verbatim
  SourceLocation location;  // not part of equality

  Dataset() = default;
  Dataset(std::string name, DatasetKind kind) : name(std::move(name)), kind(kind) {}
  static Dataset Table(std::string name) { return {std::move(name), DatasetKind::kTable}; }
  static Dataset StreamingTable(std::string name) {
    return {std::move(name), DatasetKind::kStreamingTable};
  }
  static Dataset MaterializedView(std::string name) {
    return {std::move(name), DatasetKind::kMaterializedView};
  }
  static Dataset View(std::string name) { return {std::move(name), DatasetKind::kView}; }
  static Dataset TemporaryView(std::string name) {
    return {std::move(name), DatasetKind::kTemporaryView};
  }
  static Dataset Sink(std::string name) { return {std::move(name), DatasetKind::kSink}; }

  Dataset& WithSchema(std::shared_ptr<arrow::Schema> s) { schema.arrow = std::move(s); return *this; }
  Dataset& WithMaterialization(Materialization m) { materialization = m; return *this; }
  Dataset& WithExpectation(Expectation e) { expectations.push_back(std::move(e)); return *this; }
  Dataset& WithStorage(StorageSpec s) { storage = std::move(s); return *this; }
  Dataset& WithKeyedWrite(KeyedWrite k) { keyed_write = std::move(k); return *this; }
  Dataset& WithComment(std::string c) { comment = std::move(c); return *this; }
  Dataset& WithProperty(std::string k, std::string v) { properties[std::move(k)] = std::move(v); return *this; }

  bool operator==(const Dataset& o) const;
  std::string ToString() const;
};

// ---------------------------------------------------------- streaming ------

struct Trigger {
  TriggerKind kind = TriggerKind::kAvailableNow;
  int64_t interval_ms = 0;  // kProcessingTime only

  static Trigger Once() { return {TriggerKind::kOnce, 0}; }
  static Trigger AvailableNow() { return {TriggerKind::kAvailableNow, 0}; }
  static Trigger ProcessingTime(int64_t ms) { return {TriggerKind::kProcessingTime, ms}; }
  bool operator==(const Trigger&) const = default;
  std::string ToString() const;  // "once" | "available_now" | "processing_time(10s)"
};

struct Watermark {
  std::string event_time_column;
  int64_t allowed_lateness_ms = 0;
  std::optional<int64_t> idle_timeout_ms;

  bool operator==(const Watermark&) const = default;
  std::string ToString() const;
};

struct WindowSpec {
  WindowKind kind = WindowKind::kTumbling;
  std::string time_column;
  int64_t size_ms = 0;   // tumbling + hopping
  int64_t slide_ms = 0;  // hopping only
  int64_t gap_ms = 0;    // session only

  static WindowSpec Tumbling(std::string col, int64_t size) {
    return {WindowKind::kTumbling, std::move(col), size, 0, 0};
  }
  static WindowSpec Hopping(std::string col, int64_t size, int64_t slide) {
    return {WindowKind::kHopping, std::move(col), size, slide, 0};
  }
  static WindowSpec Session(std::string col, int64_t gap) {
    return {WindowKind::kSession, std::move(col), 0, 0, gap};
  }
  bool operator==(const WindowSpec&) const = default;
  std::string ToString() const;
};

// Streaming knobs of one flow. Present only on streaming flows.
struct StreamingSpec {
  // nullopt: the flow sets no mode, so the run-wide default applies
  // (RunOptions::streaming_mode; see EffectiveStreamingMode).
  std::optional<StreamingMode> mode;
  Trigger trigger;
  OutputMode output_mode = OutputMode::kAppend;
  std::optional<Watermark> watermark;
  std::optional<WindowSpec> window;
  // The streaming table that receives this flow's late rows (event time below
  // the watermark at arrival; incremental mode only), with the columns
  // `__flow` and `__watermark` added. "" = none: late rows are only counted.
  std::string late_rows;
  // Incremental mode: how long (event time, behind the watermark) a join of
  // two streams without a time bound keeps a row (nullopt = for ever).
  std::optional<int64_t> state_ttl_ms;

  bool operator==(const StreamingSpec&) const = default;
  std::string ToString() const;
};

// Change data capture (SDP's AUTO CDC / apply_changes).
struct Cdc {
  std::vector<std::string> keys;
  std::string sequence_by;
  std::string apply_as_deletes;  // SQL predicate, "" = none
  std::vector<std::string> except_columns;
  int scd_type = 1;  // 1 or 2
  // (The fields below default to {}: positional Cdc{...} initializers of the
  // first five fields stay warning-free.)
  // The target's columns, when listed (SQL `COLUMNS (a, b)`, Python
  // column_list): only these, in source order; empty = all but except_columns.
  // At most one of columns and except_columns is set.
  std::vector<std::string> columns{};
  // SCD type 2 only: the columns whose changes open a new version (SQL `TRACK
  // HISTORY ON (a, b)`, Python track_history_column_list), or those whose
  // changes do not (`TRACK HISTORY ON * EXCEPT (a, b)`,
  // track_history_except_column_list). Both empty = every non-key column other
  // than the sequence column is tracked. At most one is set.
  std::vector<std::string> track_history{};
  std::vector<std::string> track_history_except{};

  bool operator==(const Cdc&) const = default;
  std::string ToString() const;
};

// ------------------------------------------------------------ sources ------

// A directory or glob of files read once (batch) or as they arrive (file drop).
struct FileSource {
  std::string path;                  // file, directory or glob
  std::optional<FileFormat> format;  // required (Validate reports it unset)
  bool file_drop = false;  // true: streaming, take new files per trigger
  StringMap options;    // format options (header, delimiter, bad_rows, ...)
  bool operator==(const FileSource&) const = default;
};

// A deterministic, seedable generator.
struct GeneratorSource {
  GeneratorKind kind = GeneratorKind::kKeyedEvents;
  uint64_t seed = 0;
  int64_t rows_per_batch = 1000;
  int64_t total_rows = 0;           // 0 = unbounded
  int64_t events_per_second = 0;    // event-time rate, 0 = generator default
  int64_t out_of_orderness_ms = 0;
  StringMap options;
  bool operator==(const GeneratorSource&) const = default;
};

// Batches handed in through the C++ API at run time, one per trigger, under
// `name` (see the backend's run options).
struct MemorySource {
  std::string name;
  bool operator==(const MemorySource&) const = default;
};

struct KafkaSource {
  std::string bootstrap_servers;
  std::string topic;
  std::string format = "json";
  StartingOffsets starting_offsets = StartingOffsets::kEarliest;
  StringMap options;
  bool operator==(const KafkaSource&) const = default;
};

using SourceSpec = std::variant<FileSource, GeneratorSource, MemorySource, KafkaSource>;

// "files" | "file_drop" | "generator" | "memory" | "kafka"
std::string SourceKindName(const SourceSpec& s);
bool IsStreamingSource(const SourceSpec& s);  // everything but a plain FileSource
std::string ToString(const SourceSpec& s);

// --------------------------------------------------------------- flow ------

// How one dataset is computed: either a SQL query over other datasets (and
// table functions such as read_parquet), or a source read as-is.
struct Flow {
  std::string name;
  std::string target;
  std::string sql;                   // SELECT ...; empty when `source` is set
  std::optional<SourceSpec> source;  // exactly one of sql / source
  bool once = false;                 // backfill: run once, not per trigger
  std::optional<StreamingSpec> streaming;
  std::optional<Cdc> cdc;
  std::string comment;
  SourceLocation location;  // not part of equality
  // Where `sql` starts in its file, so a problem inside the query is reported
  // where it is written: set when the file holds the text line for line (a
  // SQL file; a YAML literal block or one-line scalar). Lines after the first
  // start at column sql_indent + 1 (0 for SQL files; a YAML block's
  // indentation). Not part of equality.
  SourceLocation sql_location;
  int sql_indent = 0;

  Flow() = default;
  Flow(std::string name, std::string target, std::string sql)
      : name(std::move(name)), target(std::move(target)), sql(std::move(sql)) {}
  static Flow FromSource(std::string name, std::string target, SourceSpec src) {
    Flow f(std::move(name), std::move(target), "");
    f.source = std::move(src);
    return f;
  }

  // Where line:column (1-based) of `sql` is in its file; `location` when
  // sql_location is unknown.
  SourceLocation SqlPosition(int line, int column) const;

  Flow& WithOnce(bool v = true) { once = v; return *this; }
  Flow& WithStreaming(StreamingSpec s) { streaming = std::move(s); return *this; }
  Flow& WithCdc(Cdc c) { cdc = std::move(c); return *this; }
  Flow& WithComment(std::string c) { comment = std::move(c); return *this; }

  bool operator==(const Flow& o) const;
  std::string ToString() const;
};

// The mode `f` runs in: its own streaming.mode when set, else `run_default`,
// else kRecompute. A flow without a streaming spec takes the same fallbacks.
StreamingMode EffectiveStreamingMode(const Flow& f, std::optional<StreamingMode> run_default);

// ----------------------------------------------------------- pipeline ------

struct Pipeline {
  std::string name;
  std::string storage;  // storage root; "" = backend default
  std::string catalog;
  std::string database;
  StringMap configuration;
  std::vector<Dataset> datasets;
  std::vector<Flow> flows;
  SourceLocation location;  // the file it came from; not part of equality

  Pipeline() = default;
  explicit Pipeline(std::string name) : name(std::move(name)) {}

  Pipeline& WithStorage(std::string s) { storage = std::move(s); return *this; }
  Pipeline& WithConfiguration(std::string k, std::string v) {
    configuration[std::move(k)] = std::move(v);
    return *this;
  }
  Pipeline& Add(Dataset d) { datasets.push_back(std::move(d)); return *this; }
  Pipeline& Add(Flow f) { flows.push_back(std::move(f)); return *this; }
  // Declares `d` and a flow of the same name computing it with `sql`.
  Pipeline& AddQuery(Dataset d, std::string sql);

  const Dataset* FindDataset(std::string_view name) const;
  const Flow* FindFlow(std::string_view name) const;
  std::vector<const Flow*> FlowsInto(std::string_view dataset) const;

  bool operator==(const Pipeline& o) const;
  // A multi-line, human-readable outline (not the pipeline file; see
  // authoring/pipeline_file.h for that).
  std::string ToString() const;
};

// The flows whose streaming.late_rows names `dataset`, in pipeline order
// (pointers into p.flows). Such a dataset counts as written by these flows:
// validation does not report it unwritten, and TopoOrder runs its readers
// after them.
std::vector<const Flow*> FlowsSendingLateRowsTo(const Pipeline& p, const std::string& dataset);

// A stream view: a temporary view written by a flow with a streaming source
// (SDP's temporary view over readStream, or in SQL
// CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files(...)). Its rows
// go to the streaming flows that read it, trigger by trigger, and are never
// stored; its source's position is checkpointed with those flows, so a
// restart reads on after the last committed trigger. Only streaming flows
// into streaming tables or sinks may read it (validation), and they run in
// the incremental mode (a Recompute flow rereads all its input every
// trigger, which a stream view does not keep).
bool IsStreamView(const Pipeline& p, const Dataset& d);

}  // namespace thund
