#include "backend/native/incremental_cdc.h"

#include <algorithm>
#include <string>
#include <vector>

#include <arrow/array/array_primitive.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api.h>

#include "backend/native/flow_runner.h"
#include "engine/batch/compute_init.h"
#include "engine/batch/schema_conform.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/stream/cdc_apply.h"
#include "ir/validate_internal.h"
#include "thund/sql_dialect.h"

namespace thund::native {
namespace {

using engine::QuoteIdentifier;

constexpr const char* kNew = "__thund_cdc_new";
constexpr const char* kLog = "__thund_cdc_log";
constexpr const char* kTouched = "__thund_cdc_touched";
constexpr const char* kRelevant = "__thund_cdc_relevant";
constexpr const char* kTarget = "__thund_cdc_target";


std::vector<std::string> Names(const arrow::Schema& schema) {
  std::vector<std::string> out;
  for (const auto& field : schema.fields()) out.push_back(field->name());
  return out;
}

// SQL fragments over the key and sequence columns (DuckDB resolves names
// case-insensitively, as MakeCdcQuery does).
struct KeySql {
  std::string list;   // "k1", "k2"
  std::string valid;  // no key column and no sequence is NULL
  std::string seq;
  // a.k1 IS NOT DISTINCT FROM b.k1 AND ...
  std::string Match(const std::string& a, const std::string& b) const {
    std::string out;
    for (const auto& k : keys) {
      out += (out.empty() ? "" : " AND ") + a + "." + k + " IS NOT DISTINCT FROM " + b + "." + k;
    }
    return out;
  }
  std::vector<std::string> keys;  // quoted
};

KeySql MakeKeySql(const Cdc& cdc) {
  KeySql s;
  s.seq = QuoteIdentifier(cdc.sequence_by);
  for (const auto& k : cdc.keys) {
    const std::string q = QuoteIdentifier(k);
    s.keys.push_back(q);
    s.list += (s.list.empty() ? "" : ", ") + q;
    s.valid += q + " IS NOT NULL AND ";
  }
  s.valid += s.seq + " IS NOT NULL";
  return s;
}

// One past the largest arrival ordinal of the log (0 without rows).
arrow::Result<int64_t> NextArrival(const std::shared_ptr<arrow::Table>& log) {
  if (!log || log->num_rows() == 0) return 0;
  auto column = log->GetColumnByName(kCdcArrival);
  if (!column) return arrow::Status::Invalid("the AUTO CDC change log has no arrival column");
  if (column->type()->id() != arrow::Type::INT64) {
    ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(column, arrow::int64()));
    column = cast.chunked_array();
  }
  int64_t next = 0;
  for (const auto& chunk : column->chunks()) {
    const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < values.length(); ++i) {
      if (values.IsValid(i)) next = std::max(next, values.Value(i) + 1);
    }
  }
  return next;
}


// `rows` (out of DuckDB) in the target's schema.
arrow::Result<std::shared_ptr<arrow::Table>> Conform(const std::shared_ptr<arrow::Table>& rows,
                                                     const std::shared_ptr<arrow::Schema>& target,
                                                     const DatasetStream& ds, const Flow& flow) {
  if (rows->schema()->Equals(*target, /*check_metadata=*/false)) return rows;
  ARROW_ASSIGN_OR_RAISE(auto conformer, engine::batch::SchemaConformer::Make(
                                            *rows->schema(), target,
                                            ds.dataset->schema.declared(), ds.dataset->name,
                                            flow.name));
  arrow::TableBatchReader reader(*rows);
  ARROW_ASSIGN_OR_RAISE(auto batches, reader.ToRecordBatches());
  for (auto& batch : batches) {
    ARROW_ASSIGN_OR_RAISE(batch, conformer.Conform(batch));
  }
  return arrow::Table::FromRecordBatches(target, batches);
}

// The rows still needed per touched key (see the header): SCD1 the winner,
// SCD2 the last arrival per sequence value.
std::string CompactSql(const Cdc& cdc, const KeySql& k) {
  const std::string arrival = QuoteIdentifier(kCdcArrival);
  const std::string window =
      cdc.scd_type == 2 ? "PARTITION BY " + k.list + ", " + k.seq + " ORDER BY " + arrival + " DESC"
                        : "PARTITION BY " + k.list + " ORDER BY " + k.seq + " DESC, " + arrival +
                              " DESC";
  return std::string("SELECT * FROM ") + kRelevant + " QUALIFY row_number() OVER (" + window +
         ") = 1";
}

}  // namespace

arrow::Result<Cdc> DuckDbCdc(const Flow& flow) {
  Cdc cdc = *flow.cdc;
  if (cdc.apply_as_deletes.empty()) return cdc;
  const std::string select = "SELECT ";
  auto translated = SparkToDuckDb(select + cdc.apply_as_deletes);
  if (!translated.ok()) return FlowError(flow, translated.status());
  cdc.apply_as_deletes = translated->substr(select.size());
  return cdc;
}

arrow::Result<std::shared_ptr<arrow::Table>> WithArrival(
    const std::shared_ptr<arrow::Table>& changes, int64_t from) {
  for (const auto& name : Names(*changes->schema())) {
    if (internal::Lower(name) == internal::Lower(kCdcArrival)) {
      return arrow::Status::Invalid("the change feed has a column ", internal::Quote(name),
                                    ", a name AUTO CDC keeps for itself: rename the column");
    }
  }
  arrow::Int64Builder b;
  ARROW_RETURN_NOT_OK(b.Reserve(changes->num_rows()));
  for (int64_t i = 0; i < changes->num_rows(); ++i) b.UnsafeAppend(from + i);
  ARROW_ASSIGN_OR_RAISE(auto arrival, b.Finish());
  return changes->AddColumn(changes->num_columns(), arrow::field(kCdcArrival, arrow::int64()),
                            std::make_shared<arrow::ChunkedArray>(arrival));
}

void PrepareIncrementalCdc(const Flow& flow, IncrementalFlow* inc) {
  if (flow.cdc) inc->definition += " AUTO CDC " + flow.cdc->ToString();
  // No watermark: no input row is ever late.
  for (auto& [name, clock] : inc->clocks) clock.column.clear();
}

arrow::Status ApplyIncrementalCdc(RunContext& ctx, DatasetStream& ds, FlowStream& f,
                                  const std::shared_ptr<arrow::Table>& changes, FlowStep* step) {
  IncrementalFlow& inc = *f.incremental;
  const Flow& flow = *f.flow;
  step->ignored_changes = inc.cdc_ignored;
  if (!changes || changes->num_rows() == 0) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(const Cdc cdc, DuckDbCdc(flow));
  const KeySql k = MakeKeySql(cdc);
  auto q = [&](const std::string& sql) { return Query(ctx, flow, sql); };

  ARROW_ASSIGN_OR_RAISE(const int64_t next, NextArrival(inc.cdc_log));
  auto fresh = WithArrival(changes, next);
  if (!fresh.ok()) return FlowError(flow, fresh.status());
  Registered r_new(ctx, kNew), r_log(ctx, kLog), r_touched(ctx, kTouched),
      r_relevant(ctx, kRelevant), r_target(ctx, kTarget);
  ARROW_RETURN_NOT_OK(r_new.Set(*fresh));
  std::shared_ptr<arrow::Table> log = inc.cdc_log;
  if (!log) {
    ARROW_ASSIGN_OR_RAISE(log, EmptyLike(*fresh));
  }
  ARROW_RETURN_NOT_OK(r_log.Set(log));
  // Checks the CDC clauses against the feed's columns before anything runs.
  auto on_new = engine::stream::MakeCdcQuery(cdc, kNew, Names(*(*fresh)->schema()), kCdcArrival);
  if (!on_new.ok()) return FlowError(flow, on_new.status());
  auto ignored = ctx.session->QueryInt64(on_new->ignored_count_sql);
  if (!ignored.ok()) return FlowError(flow, ignored.status());

  ARROW_ASSIGN_OR_RAISE(auto touched, q("SELECT DISTINCT " + k.list + " FROM " + kNew +
                                        " WHERE " + k.valid));
  ARROW_RETURN_NOT_OK(r_touched.Set(touched));
  // The touched keys' log rows and the valid new rows: everything their
  // target rows depend on.
  ARROW_ASSIGN_OR_RAISE(
      auto relevant, q(std::string("SELECT l.* FROM ") + kLog + " AS l SEMI JOIN " + kTouched +
                       " AS t ON " + k.Match("l", "t") + " UNION ALL BY NAME SELECT * FROM " +
                       kNew + " WHERE " + k.valid));
  ARROW_RETURN_NOT_OK(r_relevant.Set(relevant));
  auto apply =
      engine::stream::MakeCdcQuery(cdc, kRelevant, Names(*relevant->schema()), kCdcArrival);
  if (!apply.ok()) return FlowError(flow, apply.status());
  ARROW_ASSIGN_OR_RAISE(auto result, q(apply->sql));
  ARROW_ASSIGN_OR_RAISE(auto produced, CheckRows(ctx, ds, flow, result, step));

  std::shared_ptr<arrow::Table> target = produced;
  if (f.rows && f.rows->num_rows() > 0) {
    ARROW_RETURN_NOT_OK(r_target.Set(f.rows));
    ARROW_ASSIGN_OR_RAISE(auto untouched,
                          q(std::string("SELECT t.* FROM ") + kTarget + " AS t ANTI JOIN " +
                            kTouched + " AS k ON " + k.Match("t", "k")));
    auto conformed = Conform(untouched, produced->schema(), ds, flow);
    if (!conformed.ok()) return FlowError(flow, conformed.status());
    ARROW_ASSIGN_OR_RAISE(target, Append(*conformed, produced));
  }
  // The log: other keys' rows as they were, the touched keys' compacted.
  ARROW_ASSIGN_OR_RAISE(
      auto new_log, q(std::string("(SELECT l.* FROM ") + kLog + " AS l ANTI JOIN " + kTouched +
                      " AS t ON " + k.Match("l", "t") + ") UNION ALL BY NAME (" +
                      CompactSql(cdc, k) + ")"));
  inc.cdc_log = std::move(new_log);
  inc.cdc_ignored += *ignored;
  step->ignored_changes = inc.cdc_ignored;
  ReplaceRows(f, target, step);
  return arrow::Status::OK();
}

}  // namespace thund::native
