// AUTO CDC (SDP's apply_changes) as one DuckDB query over the full change log
// seen so far. Recompute mode runs it after every trigger; it is also the
// definition the incremental mode is tested against.
//
// Input: a relation of change rows with the source's columns plus an arrival
// ordinal column (strictly increasing in arrival order, across triggers).
// Semantics (docs/streaming.md, "Change data capture"):
//  * Changes are applied per key in (sequence_by, arrival) order; arrival
//    only breaks ties between equal sequence values (the later arrival wins:
//    of several changes to one key with the same sequence value, only the
//    last-arrived one takes effect, the others are as if never received).
//    Rows with a NULL key column or NULL sequence are ignored and counted.
//  * A row matching `apply_as_deletes` deletes the key (SCD1: the row goes;
//    SCD2: the open version is closed at the delete's sequence). A predicate
//    that evaluates to NULL is not a delete. A delete of a key with no live
//    row / open version is a no-op. The predicate may read any change column,
//    including except_columns.
//  * SCD1: one row per live key, the values of its latest upsert.
//  * SCD2: one row per version; __START_AT = the sequence of the change that
//    opened it, __END_AT = the sequence of the next change of that key that
//    opens a version or deletes (NULL while open). The tracked values are the
//    output columns other than the keys and the sequence column; an upsert
//    whose tracked values equal the open version's (NULL equal to NULL) does
//    not open a new version (the open version keeps its values, including its
//    sequence column). A change after a delete re-inserts the key (a new open
//    version). With track_history (track_history_except), only those columns
//    (all but those) among the tracked values count: a change of the others
//    alone does not open a version, and the open version keeps its values.
//  * Output columns: the change columns minus except_columns, or only those
//    in `columns` when listed (and minus the arrival column), in source order; SCD2 appends __START_AT and __END_AT
//    (the sequence column's type).
//  * Column names match case-insensitively (as DuckDB identifiers do); output
//    uses the spelling of `columns`.
#pragma once

#include <arrow/result.h>

#include <string>
#include <vector>

#include "thund/ir.h"

namespace thund::engine::stream {

struct CdcQuery {
  std::string sql;  // SELECT ... producing the target table
  // SELECT count(*) of change rows ignored (NULL key or sequence); one BIGINT
  // column named "ignored".
  std::string ignored_count_sql;
};

// `changes` is a DuckDB relation name (quoted by the caller if needed);
// `columns` its columns in order (including `arrival_column`);
// `apply_as_deletes` in cdc is DuckDB SQL already (translated by the caller).
// Invalid when a key, sequence or except column is not among `columns`, when
// keys are empty or listed in except_columns, when scd_type is not 1 or 2,
// when `arrival_column` is not among `columns`, or (SCD2) when an output
// column is already named __START_AT / __END_AT.
// The SQL is only generated here: errors in `apply_as_deletes` surface when
// it runs.
arrow::Result<CdcQuery> MakeCdcQuery(const Cdc& cdc, const std::string& changes,
                                     const std::vector<std::string>& columns,
                                     const std::string& arrival_column);

}  // namespace thund::engine::stream
