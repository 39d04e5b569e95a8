// Names, equality and print forms of the IR value types.
#include "thund/ir.h"
#include "ir/validate_internal.h"

#include <algorithm>
#include <sstream>

#include <arrow/type.h>

#include "thund/duration.h"
#include "thund/type_names.h"

namespace thund {
namespace {

template <typename E, size_t N>
std::optional<E> ParseEnum(std::string_view s, const std::pair<E, const char*> (&table)[N]) {
  for (const auto& [value, name] : table) {
    if (s == name) return value;
  }
  return std::nullopt;
}

template <typename E, size_t N>
const char* EnumName(E v, const std::pair<E, const char*> (&table)[N]) {
  for (const auto& [value, name] : table) {
    if (value == v) return name;
  }
  return "?";
}

constexpr std::pair<DatasetKind, const char*> kDatasetKinds[] = {
    {DatasetKind::kTable, "table"},
    {DatasetKind::kStreamingTable, "streaming_table"},
    {DatasetKind::kMaterializedView, "materialized_view"},
    {DatasetKind::kView, "view"},
    {DatasetKind::kTemporaryView, "temporary_view"},
    {DatasetKind::kSink, "sink"}};
constexpr std::pair<Materialization, const char*> kMaterializations[] = {
    {Materialization::kFull, "full"}, {Materialization::kIncremental, "incremental"}};
constexpr std::pair<ExpectationAction, const char*> kActions[] = {
    {ExpectationAction::kWarn, "warn"},
    {ExpectationAction::kDrop, "drop"},
    {ExpectationAction::kFail, "fail"}};
constexpr std::pair<StreamingMode, const char*> kModes[] = {
    {StreamingMode::kRecompute, "recompute"}, {StreamingMode::kIncremental, "incremental"}};
constexpr std::pair<OutputMode, const char*> kOutputModes[] = {
    {OutputMode::kAppend, "append"},
    {OutputMode::kUpdate, "update"},
    {OutputMode::kComplete, "complete"}};
constexpr std::pair<TriggerKind, const char*> kTriggers[] = {
    {TriggerKind::kOnce, "once"},
    {TriggerKind::kAvailableNow, "available_now"},
    {TriggerKind::kProcessingTime, "processing_time"}};
constexpr std::pair<WindowKind, const char*> kWindows[] = {
    {WindowKind::kTumbling, "tumbling"},
    {WindowKind::kHopping, "hopping"},
    {WindowKind::kSession, "session"}};
constexpr std::pair<FileFormat, const char*> kFileFormats[] = {
    {FileFormat::kParquet, "parquet"},
    {FileFormat::kCsv, "csv"},
    {FileFormat::kJson, "json"},
    {FileFormat::kNoop, "noop"}};
constexpr std::pair<WriteMode, const char*> kWriteModes[] = {
    {WriteMode::kAppend, "append"},
    {WriteMode::kOverwrite, "overwrite"},
    {WriteMode::kMerge, "merge"}};
constexpr std::pair<DuplicateKeys, const char*> kDuplicateKeys[] = {
    {DuplicateKeys::kFirst, "first"}, {DuplicateKeys::kAll, "all"}};
constexpr std::pair<NullKeys, const char*> kNullKeys[] = {{NullKeys::kError, "error"},
                                                          {NullKeys::kDrop, "drop"}};
constexpr std::pair<KeyMatch, const char*> kKeyMatches[] = {{KeyMatch::kExact, "exact"},
                                                            {KeyMatch::kHash, "hash"}};
constexpr std::pair<KeyIndex, const char*> kKeyIndexes[] = {{KeyIndex::kRows, "rows"},
                                                            {KeyIndex::kTable, "table"}};
constexpr std::pair<GeneratorKind, const char*> kGeneratorKinds[] = {
    {GeneratorKind::kKeyedEvents, "keyed_events"},
    {GeneratorKind::kNexmarkPerson, "nexmark_person"},
    {GeneratorKind::kNexmarkAuction, "nexmark_auction"},
    {GeneratorKind::kNexmarkBid, "nexmark_bid"},
    {GeneratorKind::kNexmark, "nexmark"}};
constexpr std::pair<StartingOffsets, const char*> kStartingOffsets[] = {
    {StartingOffsets::kEarliest, "earliest"}, {StartingOffsets::kLatest, "latest"}};


std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

std::string MapToString(const StringMap& m) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ", ";
    first = false;
    out += k + "=" + v;
  }
  return out + "}";
}

}  // namespace

const char* Name(DatasetKind v) { return EnumName(v, kDatasetKinds); }
const char* Name(Materialization v) { return EnumName(v, kMaterializations); }
const char* Name(ExpectationAction v) { return EnumName(v, kActions); }
const char* Name(StreamingMode v) { return EnumName(v, kModes); }
const char* Name(OutputMode v) { return EnumName(v, kOutputModes); }
const char* Name(TriggerKind v) { return EnumName(v, kTriggers); }
const char* Name(WindowKind v) { return EnumName(v, kWindows); }
const char* Name(FileFormat v) { return EnumName(v, kFileFormats); }
const char* Name(WriteMode v) { return EnumName(v, kWriteModes); }
const char* Name(DuplicateKeys v) { return EnumName(v, kDuplicateKeys); }
const char* Name(NullKeys v) { return EnumName(v, kNullKeys); }
const char* Name(KeyMatch v) { return EnumName(v, kKeyMatches); }
const char* Name(KeyIndex v) { return EnumName(v, kKeyIndexes); }
const char* Name(GeneratorKind v) { return EnumName(v, kGeneratorKinds); }
const char* Name(StartingOffsets v) { return EnumName(v, kStartingOffsets); }
std::optional<DatasetKind> ParseDatasetKind(std::string_view s) { return ParseEnum(s, kDatasetKinds); }
std::optional<Materialization> ParseMaterialization(std::string_view s) {
  return ParseEnum(s, kMaterializations);
}
std::optional<ExpectationAction> ParseExpectationAction(std::string_view s) {
  return ParseEnum(s, kActions);
}
std::optional<StreamingMode> ParseStreamingMode(std::string_view s) { return ParseEnum(s, kModes); }
std::optional<OutputMode> ParseOutputMode(std::string_view s) { return ParseEnum(s, kOutputModes); }
std::optional<TriggerKind> ParseTriggerKind(std::string_view s) { return ParseEnum(s, kTriggers); }
std::optional<WindowKind> ParseWindowKind(std::string_view s) { return ParseEnum(s, kWindows); }
std::optional<FileFormat> ParseFileFormat(std::string_view s) { return ParseEnum(s, kFileFormats); }
std::optional<WriteMode> ParseWriteMode(std::string_view s) { return ParseEnum(s, kWriteModes); }
std::optional<DuplicateKeys> ParseDuplicateKeys(std::string_view s) {
  return ParseEnum(s, kDuplicateKeys);
}
std::optional<NullKeys> ParseNullKeys(std::string_view s) { return ParseEnum(s, kNullKeys); }
std::optional<KeyMatch> ParseKeyMatch(std::string_view s) { return ParseEnum(s, kKeyMatches); }
std::optional<KeyIndex> ParseKeyIndex(std::string_view s) { return ParseEnum(s, kKeyIndexes); }
std::optional<GeneratorKind> ParseGeneratorKind(std::string_view s) {
  return ParseEnum(s, kGeneratorKinds);
}
std::optional<StartingOffsets> ParseStartingOffsets(std::string_view s) {
  return ParseEnum(s, kStartingOffsets);
}

bool IsStored(DatasetKind k) {
  return k == DatasetKind::kTable || k == DatasetKind::kStreamingTable ||
         k == DatasetKind::kMaterializedView;
}
bool IsReadable(DatasetKind k) { return k != DatasetKind::kSink; }

// --------------------------------------------------------------- Schema

bool Schema::operator==(const Schema& o) const {
  if (!arrow || !o.arrow) return !arrow && !o.arrow;
  return arrow->Equals(*o.arrow, /*check_metadata=*/true);
}

std::string Schema::ToString() const {
  if (!arrow) return "(undeclared)";
  std::string out = "(";
  for (int i = 0; i < arrow->num_fields(); ++i) {
    const auto& f = arrow->field(i);
    if (i) out += ", ";
    out += f->name() + " " + FormatTypeName(*f->type());
    if (!f->nullable()) out += " not null";
  }
  return out + ")";
}

// ---------------------------------------------------------- Expectation

bool Expectation::operator==(const Expectation& o) const {
  return name == o.name && predicate == o.predicate && action == o.action;
}

std::string Expectation::ToString() const {
  return "expect " + name + " (" + predicate + ") on violation " + Name(action);
}

// ---------------------------------------------------- Storage, KeyedWrite

bool StorageSpec::empty() const {
  return !format && location.empty() && !mode && partition_by.empty() && options.empty() &&
         merge_keys.empty();
}

std::string StorageSpec::ToString() const {
  std::vector<std::string> parts;
  if (format) parts.push_back(std::string("format=") + Name(*format));
  if (!location.empty()) parts.push_back("location=" + location);
  if (mode) parts.push_back(std::string("mode=") + Name(*mode));
  if (!partition_by.empty()) parts.push_back("partition_by=[" + Join(partition_by) + "]");
  if (!options.empty()) parts.push_back("options=" + MapToString(options));
  if (!merge_keys.empty()) parts.push_back("merge_keys=[" + Join(merge_keys) + "]");
  return "storage{" + Join(parts) + "}";
}

std::string KeyedWrite::ToString() const {
  if (!enabled()) return "keyed_write{off}";
  std::string out = "keyed_write{keys=[" + Join(keys) + "]";
  if (tuning.buckets) out += ", buckets=" + std::to_string(tuning.buckets);
  if (tuning.threads) out += ", threads=" + std::to_string(tuning.threads);
  if (tuning.batch_size) out += ", batch_size=" + std::to_string(tuning.batch_size);
  if (duplicates != DuplicateKeys::kFirst) out += std::string(", duplicates=") + Name(duplicates);
  if (null_keys != NullKeys::kError) out += std::string(", null_keys=") + Name(null_keys);
  if (key_match != KeyMatch::kExact) out += std::string(", key_match=") + Name(key_match);
  for (auto [on, name] : {std::pair{tuning.settle, "settle"},
                          std::pair{tuning.passthrough, "passthrough"},
                          std::pair{tuning.join, "join"}, std::pair{tuning.direct_io, "direct_io"}}) {
    if (!on) out += std::string(", ") + name + "=false";
  }
  if (tuning.key_index != KeyIndex::kRows) {
    out += std::string(", key_index=") + Name(tuning.key_index);
  }
  if (!tuning.memory_pool) out += ", memory_pool=false";
  if (!tuning.huge_pages) out += ", huge_pages=false";
  if (tuning.plain) out += ", plain=true";
  return out + "}";
}

// -------------------------------------------------------------- Dataset

bool Dataset::operator==(const Dataset& o) const {
  return name == o.name && kind == o.kind && schema == o.schema &&
         materialization == o.materialization && expectations == o.expectations &&
         storage == o.storage && keyed_write == o.keyed_write && comment == o.comment &&
         properties == o.properties;
}

std::string Dataset::ToString() const {
  std::string out = std::string(Name(kind)) + " " + name;
  if (schema.declared()) out += " " + schema.ToString();
  if (materialization != Materialization::kFull) out += " materialization=" + std::string(Name(materialization));
  if (!storage.empty()) out += " " + storage.ToString();
  if (keyed_write.enabled()) out += " " + keyed_write.ToString();
  for (const auto& e : expectations) out += "; " + e.ToString();
  if (!properties.empty()) out += " properties=" + MapToString(properties);
  if (!comment.empty()) out += " -- " + comment;
  return out;
}

// ------------------------------------------------------------ streaming

std::string Trigger::ToString() const {
  if (kind == TriggerKind::kProcessingTime) {
    return std::string("processing_time(") + FormatDuration(interval_ms) + ")";
  }
  return Name(kind);
}

std::string Watermark::ToString() const {
  std::string out = "watermark(" + event_time_column + ", lateness " + FormatDuration(allowed_lateness_ms);
  if (idle_timeout_ms) out += ", idle " + FormatDuration(*idle_timeout_ms);
  return out + ")";
}

std::string WindowSpec::ToString() const {
  switch (kind) {
    case WindowKind::kTumbling:
      return "tumbling(" + time_column + ", " + FormatDuration(size_ms) + ")";
    case WindowKind::kHopping:
      return "hopping(" + time_column + ", " + FormatDuration(size_ms) + ", slide " +
             FormatDuration(slide_ms) + ")";
    case WindowKind::kSession:
      return "session(" + time_column + ", gap " + FormatDuration(gap_ms) + ")";
  }
  return "?";
}

std::string StreamingSpec::ToString() const {
  std::string out = "streaming{";
  if (mode) out += std::string("mode=") + Name(*mode) + ", ";
  out += "trigger=" + trigger.ToString() + ", output=" + Name(output_mode);
  if (watermark) out += ", " + watermark->ToString();
  if (window) out += ", " + window->ToString();
  if (!late_rows.empty()) out += ", late_rows=" + late_rows;
  if (state_ttl_ms) out += ", state_ttl=" + FormatDuration(*state_ttl_ms);
  return out + "}";
}

std::string Cdc::ToString() const {
  std::string out = "cdc{keys=[" + Join(keys) + "], sequence_by=" + sequence_by;
  if (!apply_as_deletes.empty()) out += ", delete when (" + apply_as_deletes + ")";
  if (!except_columns.empty()) out += ", except=[" + Join(except_columns) + "]";
  if (!columns.empty()) out += ", columns=[" + Join(columns) + "]";
  out += ", scd" + std::to_string(scd_type);
  if (!track_history.empty()) out += ", track=[" + Join(track_history) + "]";
  if (!track_history_except.empty()) out += ", track_except=[" + Join(track_history_except) + "]";
  return out + "}";
}

// -------------------------------------------------------------- sources

std::string SourceKindName(const SourceSpec& s) {
  struct V {
    std::string operator()(const FileSource& f) const { return f.file_drop ? "file_drop" : "files"; }
    std::string operator()(const GeneratorSource&) const { return "generator"; }
    std::string operator()(const MemorySource&) const { return "memory"; }
    std::string operator()(const KafkaSource&) const { return "kafka"; }
  };
  return std::visit(V{}, s);
}

bool IsStreamingSource(const SourceSpec& s) {
  if (const auto* f = std::get_if<FileSource>(&s)) return f->file_drop;
  return true;
}

std::string ToString(const SourceSpec& s) {
  struct V {
    std::string operator()(const FileSource& f) const {
      std::string out = std::string(f.file_drop ? "file_drop" : "files") + "(" + f.path + ", " +
                        (f.format ? Name(*f.format) : "");
      if (!f.options.empty()) out += ", " + MapToString(f.options);
      return out + ")";
    }
    std::string operator()(const GeneratorSource& g) const {
      return std::string("generator(") + Name(g.kind) + ", seed=" + std::to_string(g.seed) +
             ", rows_per_batch=" + std::to_string(g.rows_per_batch) +
             ", total_rows=" + std::to_string(g.total_rows) + ")";
    }
    std::string operator()(const MemorySource& m) const { return "memory(" + m.name + ")"; }
    std::string operator()(const KafkaSource& k) const {
      return "kafka(" + k.bootstrap_servers + ", " + k.topic + ", " + k.format + ")";
    }
  };
  return std::visit(V{}, s);
}

// ----------------------------------------------------------------- Flow

bool Flow::operator==(const Flow& o) const {
  return name == o.name && target == o.target && sql == o.sql && source == o.source &&
         once == o.once && streaming == o.streaming && cdc == o.cdc && comment == o.comment;
}

std::string Flow::ToString() const {
  std::string out = "flow " + name + " -> " + target;
  if (once) out += " once";
  if (source) out += " from " + thund::ToString(*source);
  if (!sql.empty()) out += " as (" + sql + ")";
  if (streaming) out += " " + streaming->ToString();
  if (cdc) out += " " + cdc->ToString();
  return out;
}

SourceLocation Flow::SqlPosition(int line, int column) const {
  if (!sql_location.known() || line <= 0) return location;
  SourceLocation loc = sql_location;
  loc.line = sql_location.line + line - 1;
  loc.column = line == 1 ? sql_location.column + column - 1 : sql_indent + column;
  return loc;
}

StreamingMode EffectiveStreamingMode(const Flow& f, std::optional<StreamingMode> run_default) {
  if (f.streaming && f.streaming->mode) return *f.streaming->mode;
  return run_default.value_or(StreamingMode::kRecompute);
}

// ------------------------------------------------------------- Pipeline

Pipeline& Pipeline::AddQuery(Dataset d, std::string sql) {
  Flow f(d.name, d.name, std::move(sql));
  datasets.push_back(std::move(d));
  flows.push_back(std::move(f));
  return *this;
}

const Dataset* Pipeline::FindDataset(std::string_view n) const {
  for (const auto& d : datasets) {
    if (d.name == n) return &d;
  }
  return nullptr;
}

const Flow* Pipeline::FindFlow(std::string_view n) const {
  for (const auto& f : flows) {
    if (f.name == n) return &f;
  }
  return nullptr;
}

std::vector<const Flow*> Pipeline::FlowsInto(std::string_view dataset) const {
  std::vector<const Flow*> out;
  for (const auto& f : flows) {
    if (f.target == dataset) out.push_back(&f);
  }
  return out;
}

std::vector<const Flow*> FlowsSendingLateRowsTo(const Pipeline& p, const std::string& dataset) {
  std::vector<const Flow*> out;
  if (dataset.empty()) return out;
  for (const auto& f : p.flows) {
    if (f.streaming && f.streaming->late_rows == dataset) out.push_back(&f);
  }
  return out;
}

bool Pipeline::operator==(const Pipeline& o) const {
  return name == o.name && storage == o.storage && catalog == o.catalog &&
         database == o.database && configuration == o.configuration && datasets == o.datasets &&
         flows == o.flows;
}

std::string Pipeline::ToString() const {
  std::ostringstream out;
  out << "pipeline " << name;
  if (!storage.empty()) out << " storage=" << storage;
  if (!catalog.empty()) out << " catalog=" << catalog;
  if (!database.empty()) out << " database=" << database;
  if (!configuration.empty()) out << " configuration=" << MapToString(configuration);
  out << "\n";
  for (const auto& d : datasets) out << "  " << d.ToString() << "\n";
  for (const auto& f : flows) out << "  " << f.ToString() << "\n";
  return out.str();
}

bool IsStreamView(const Pipeline& p, const Dataset& d) {
  if (d.kind != DatasetKind::kTemporaryView) return false;
  for (const auto& f : p.flows) {
    if (f.target == d.name && f.source && IsStreamingSource(*f.source)) return true;
  }
  return false;
}

bool internal::IsStreamingFlowGiven(const Pipeline& p, const Flow& flow, bool reads_stream) {
  if (flow.streaming || flow.cdc) return true;
  if (flow.source && IsStreamingSource(*flow.source)) return true;
  if (!flow.sql.empty() && reads_stream) return true;
  const Dataset* target = p.FindDataset(flow.target);
  return target && target->kind == DatasetKind::kStreamingTable;
}

}  // namespace thund
