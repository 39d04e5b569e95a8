// Rules on datasets: expectations, keyed writes, merge sinks, and datasets no
// flow writes.
// (Storage format and mode are enums: their decoders report bad text.)
#include <arrow/type.h>

#include <algorithm>
#include <map>
#include <set>

#include "ir/validate_internal.h"
#include "common/text.h"

namespace thund::internal {
namespace {

using text::IsBlank;

void CheckExpectations(const ValidateContext& ctx, size_t i, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  const Dataset& d = p.datasets[i];
  std::map<std::string, size_t> seen;
  for (size_t k = 0; k < d.expectations.size(); ++k) {
    const Expectation& e = d.expectations[k];
    const std::string field = "expectations[" + std::to_string(k) + "]";
    auto diag = [&](const char* code, const std::string& sub, std::string msg, std::string hint) {
      Diagnostic dg = DatasetDiag(p, i, Severity::kError, code, field + "." + sub, std::move(msg),
                                  std::move(hint));
      if (e.location.known()) dg.location = e.location;
      out->push_back(std::move(dg));
    };
    if (IsBlank(e.name)) {
      diag("expectation-name", "name", "an expectation on " + Quote(d.name) + " has no name",
           "name it (the name appears in run reports and failure messages)");
    } else if (auto [it, inserted] = seen.emplace(e.name, k); !inserted) {
      diag("duplicate-expectation", "name",
           "expectation " + Quote(e.name) + " is declared twice on " + Quote(d.name),
           "give each expectation on a dataset a distinct name");
    }
    if (IsBlank(e.predicate)) {
      diag("expectation-predicate", "predicate",
           "expectation " + Quote(e.name) + " on " + Quote(d.name) + " has an empty predicate",
           "write the SQL condition every valid row meets, e.g. id IS NOT NULL");
    } else if (const arrow::Status& st = ctx.PredicateStatus(i, k); !st.ok()) {
      diag("expectation-predicate", "predicate",
           "the predicate of expectation " + Quote(e.name) + " on " + Quote(d.name) +
               " does not parse: " + st.message(),
           "write one SQL boolean expression over the dataset's columns, e.g. amount >= 0");
    }
  }
}

void CheckKeyedWrite(const Pipeline& p, size_t i, Diagnostics* out) {
  const Dataset& d = p.datasets[i];
  const KeyedWrite& kw = d.keyed_write;
  auto err = [&](const char* code, const std::string& field, std::string msg, std::string hint) {
    out->push_back(DatasetDiag(p, i, Severity::kError, code, "keyed_write." + field, std::move(msg),
                               std::move(hint)));
  };
  // The enum-valued options cannot be invalid here: their decoders report
  // bad text (authoring/enum_values.h).
  const KeyedWriteTuning& t = kw.tuning;
  for (auto [value, field] : {std::pair{t.buckets, "buckets"}, std::pair{t.threads, "threads"},
                              std::pair{t.batch_size, "batch_size"}}) {
    if (value < 0) {
      err("keyed-write-value", field,
          std::string("keyed_write ") + field + " must not be negative, got " +
              std::to_string(value),
          "use 0 for the default or a positive number");
    }
  }
  if (!kw.enabled()) {
    if (kw != KeyedWrite{}) {
      err("keyed-write-key", "keys", "keyed_write options are set but its keys are empty",
          "list the key columns in keyed_write.keys, or remove keyed_write");
    }
    return;
  }
  if (d.kind == DatasetKind::kSink) {
    const std::string& loc = d.storage.location;
    auto ends = [&](const std::string& ext) {
      return loc.size() >= ext.size() && loc.compare(loc.size() - ext.size(), ext.size(), ext) == 0;
    };
    if (d.storage.mode == WriteMode::kOverwrite) {
      err("keyed-write-sink", "keys",
          "keyed_write is set on sink " + Quote(d.name) +
              " with mode overwrite, which would delete the rows whose keys it skips",
          "use mode append (the default) with keyed_write");
    } else if (d.storage.mode == WriteMode::kMerge) {
      err("keyed-write-sink", "keys",
          "keyed_write is set on sink " + Quote(d.name) +
              " with mode merge, which upserts by its merge_keys already",
          "remove keyed_write (a merge sink replaces the row of a key it has; rewriting a "
          "row is harmless)");
    } else if (ends(".parquet") || ends(".csv") || ends(".json")) {
      err("keyed-write-sink", "keys",
          "keyed_write is set on sink " + Quote(d.name) + " whose location " + Quote(loc) +
              " is one file; a keyed write adds files to a directory",
          "give the sink a directory location (or none for the default)");
    }
  }
  if (d.kind == DatasetKind::kView || d.kind == DatasetKind::kTemporaryView) {
    err("keyed-write-on-view", "keys",
        "keyed_write is set on " + std::string(Name(d.kind)) + " " + Quote(d.name) +
            ", which stores no rows to check keys against",
        "move keyed_write to the stored dataset or sink that receives the rows");
  }
  std::vector<std::string> names;
  if (d.schema.declared()) {
    for (const auto& f : d.schema.arrow->fields()) names.push_back(f->name());
  }
  std::set<std::string> listed;
  for (const auto& key : kw.keys) {
    if (!key.empty() && !listed.insert(key).second) {
      err("keyed-write-key", "keys", "keyed_write key " + Quote(key) + " is listed twice",
          "list each key column once");
    }
    if (key.empty()) {
      err("keyed-write-key", "keys", "keyed_write keys contain an empty column name",
          "list the key column names");
    } else if (d.schema.declared() && !d.schema.arrow->GetFieldByName(key)) {
      err("keyed-write-key", "keys",
          "keyed_write key " + Quote(key) + " is not in the declared schema of " + Quote(d.name) +
              DidYouMean(key, names),
          "add " + Quote(key) + " to the schema, or name an existing column");
    }
  }
}

bool EndsWithFileExtension(std::string_view loc) {
  for (std::string_view ext : {".parquet", ".csv", ".json"}) {
    if (loc.ends_with(ext)) return true;
  }
  return false;
}

// Merge sinks (mode merge): a keyed Parquet table upserted by merge_keys.
void CheckMerge(const Pipeline& p, size_t i, Diagnostics* out) {
  const Dataset& d = p.datasets[i];
  const StorageSpec& s = d.storage;
  auto err = [&](const char* code, const std::string& field, std::string msg, std::string hint) {
    out->push_back(DatasetDiag(p, i, Severity::kError, code, "storage." + field, std::move(msg),
                               std::move(hint)));
  };
  if (s.mode != WriteMode::kMerge) {
    if (!s.merge_keys.empty()) {
      err("merge-keys", "merge_keys",
          "merge_keys are set on " + Quote(d.name) + ", whose mode is not merge",
          "set mode merge (on a sink), or remove merge_keys");
    }
    return;
  }
  if (d.kind != DatasetKind::kSink) {
    err("merge-sink", "mode",
        "mode merge is set on " + std::string(Name(d.kind)) + " " + Quote(d.name) +
            "; only sinks take a write mode",
        "make " + Quote(d.name) + " a sink, or remove the mode");
  } else {
    if (s.format && *s.format != FileFormat::kParquet) {
      err("merge-sink", "format",
          "sink " + Quote(d.name) + " has mode merge and format " + Name(*s.format) +
              "; a merge sink is a Parquet table",
          "use format parquet (or leave it empty), or another mode");
    }
    if (EndsWithFileExtension(s.location)) {
      err("merge-sink", "location",
          "sink " + Quote(d.name) + " has mode merge and location " + Quote(s.location) +
              ", which names one file; a merge table is a directory of versions",
          "give the sink a directory location (or none for the default)");
    }
  }
  if (s.merge_keys.empty()) {
    err("merge-keys", "merge_keys", "sink " + Quote(d.name) + " has mode merge but no merge_keys",
        "list the columns rows are upserted by, e.g. merge_keys: [id]");
    return;
  }
  std::vector<std::string> names;
  if (d.schema.declared()) {
    for (const auto& f : d.schema.arrow->fields()) names.push_back(f->name());
  }
  std::set<std::string> listed;
  for (const auto& key : s.merge_keys) {
    if (key.empty()) {
      err("merge-keys", "merge_keys", "merge_keys of " + Quote(d.name) + " contain an empty name",
          "list the key column names");
    } else if (!listed.insert(key).second) {
      err("merge-keys", "merge_keys", "merge key " + Quote(key) + " is listed twice",
          "list each key column once");
    } else if (d.schema.declared() && !d.schema.arrow->GetFieldByName(key)) {
      err("merge-keys", "merge_keys",
          "merge key " + Quote(key) + " is not in the declared schema of " + Quote(d.name) +
              DidYouMean(key, names),
          "add " + Quote(key) + " to the schema, or name an existing column");
    }
  }
}

// Noop sinks (format noop): rows are counted and discarded, so nothing about
// where or how they would be written applies.
void CheckNoop(const Pipeline& p, size_t i, Diagnostics* out) {
  const Dataset& d = p.datasets[i];
  const StorageSpec& s = d.storage;
  if (s.format != FileFormat::kNoop) return;
  auto err = [&](const std::string& field, std::string msg, std::string hint) {
    out->push_back(DatasetDiag(p, i, Severity::kError, "storage-format", "storage." + field,
                               std::move(msg), std::move(hint)));
  };
  if (d.kind != DatasetKind::kSink) {
    err("format",
        std::string(Name(d.kind)) + " " + Quote(d.name) +
            " has format noop, which discards its rows; only a sink may",
        "make " + Quote(d.name) + " a sink (CREATE SINK ... USING noop), or use parquet");
    return;
  }
  if (!s.location.empty()) {
    err("location", "noop sink " + Quote(d.name) + " has location " + Quote(s.location) +
                        ", but writes nothing",
        "remove the location, or use format parquet, csv or json to write files there");
  }
  if (!s.partition_by.empty()) {
    err("partition_by", "noop sink " + Quote(d.name) + " has partition_by, but writes nothing",
        "remove partition_by");
  }
  if (s.mode && *s.mode != WriteMode::kAppend) {
    err("mode", "noop sink " + Quote(d.name) + " has mode " + Name(*s.mode) + ", but writes nothing",
        "remove the mode");
  }
  if (!s.options.empty()) {
    err("options", "noop sink " + Quote(d.name) + " has options (" + s.options.begin()->first +
                       "), but writes nothing",
        "remove the options");
  }
  if (d.keyed_write.enabled()) {
    err("format", "noop sink " + Quote(d.name) + " has keyed_write, but keeps no keys to check",
        "remove keyed_write, or use format parquet, csv or json");
  }
}

void CheckWritten(const ValidateContext& ctx, size_t i, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  const Dataset& d = p.datasets[i];
  if (d.name.empty()) return;
  const bool written = std::any_of(p.flows.begin(), p.flows.end(),
                                   [&](const Flow& f) { return f.target == d.name; });
  // A streaming table named by some flow's late_rows receives its late rows.
  if (written || !FlowsSendingLateRowsTo(p, d.name).empty()) return;
  if (d.kind == DatasetKind::kView || d.kind == DatasetKind::kTemporaryView) {
    out->push_back(DatasetDiag(
        p, i, Severity::kError, "no-writer", "",
        std::string(Name(d.kind)) + " " + Quote(d.name) + " has no flow defining it",
        "add a flow with target " + Quote(d.name) + " (the view's query), or remove the view"));
  } else {
    out->push_back(DatasetDiag(
        p, i, Severity::kWarning, "no-writer", "",
        "no flow writes " + std::string(Name(d.kind)) + " " + Quote(d.name) + ", so it stays empty",
        "add a flow with target " + Quote(d.name) + ", or remove the dataset"));
  }
}

}  // namespace

void CheckDatasets(const ValidateContext& ctx, Diagnostics* out) {
  for (size_t i = 0; i < ctx.p.datasets.size(); ++i) {
    CheckWritten(ctx, i, out);
    CheckExpectations(ctx, i, out);
    CheckKeyedWrite(ctx.p, i, out);
    CheckMerge(ctx.p, i, out);
    CheckNoop(ctx.p, i, out);
  }
}

}  // namespace thund::internal
