// Internal: the incremental aggregate's partials, folded in C++.
//
// Three fast paths of the partial aggregate (incremental_flow.cc), each with
// a plain twin there, a switch in NativeRunOptions and a differential test in
// tests/backend/partial_merge_test.cc:
//
//  * MergePartials (switch `hash_merge`; twin: the SQL merge, UNION ALL of
//    the state and the partials, then GROUP BY the keys).
//    Contract:
//     - `state` (may be null) and `partial` hold the columns __g0..__g{groups-1}
//       (the grouping keys) and then the partials, with equal types. A group may
//       appear in several rows of either table (expanded panes repeat one).
//     - merge[j] ("sum", "min", "max", "bool_and" or "bool_or") folds column
//       groups + j. NULLs are skipped as SQL's aggregates skip them; a group whose
//       values are all NULL stays NULL. A sum that leaves its type is an error, as
//       the SQL merge's cast back to the partial's type is.
//     - Keys group as SQL's GROUP BY does: NULL equals NULL; a struct key (the
//       window) groups by its validity and its fields.
//     - The result has one row per group of either input: the partial's columns
//       (nullable) and `__touched`, true for the groups `partial` holds. Row order
//       is unspecified.
//     - NotImplemented when a type is outside the fast path (CanMergePartials
//       tells up front): floating-point keys (SQL groups -0.0 with 0.0), nested
//       structs, lists, maps. The caller then runs the SQL merge.
//
//  * ExpandPanes (switch `hop_panes`; twin: the dialect's hopping windows, each
//    row times size/slide windows before the partial aggregation). The partial
//    query then groups each row into its pane (the newest window that holds
//    it); ExpandPanes turns each pane row into the size/slide windows that hold
//    the pane, each start `slide` earlier than the one before. Valid only when
//    the slide divides the size (then a window holds a pane wholly or not at all)
//    and only for decomposable aggregates (the planner checks both).
//
//  * WindowClosed (switch `hash_merge` too; twin: a query of the window end
//    expression). The flag of each state row whose window end W has passed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/api.h>

namespace thund::native {

// A timestamp value of `unit` in microseconds, floored as DuckDB's epoch_us.
int64_t FloorMicros(int64_t value, arrow::TimeUnit::type unit);

arrow::Status CanMergePartials(const arrow::Schema& partial, int groups,
                               const std::vector<std::string>& merge);

// MergePartials for the partials of one schema, trigger after trigger: the
// merger keeps its grouper and buffers between merges (a run's flow holds
// one), so a steady state does not reallocate them every trigger.
struct MergerParts;
class PartialMerger {
 public:
  // NotImplemented as CanMergePartials.
  static arrow::Result<std::unique_ptr<PartialMerger>> Make(
      std::shared_ptr<arrow::Schema> partial, int groups, std::vector<std::string> merge);
  ~PartialMerger();
  // As MergePartials; `state` may carry more columns after the partials'
  // (a merged state's __touched). When `state` is the table the last Keep
  // kept, its groups are not hashed again: only `partial` is.
  arrow::Result<std::shared_ptr<arrow::Table>> Merge(const std::shared_ptr<arrow::Table>& state,
                                                     const std::shared_ptr<arrow::Table>& partial);
  // The caller keeps of `merged` (the last Merge result, or the last table
  // kept) the rows where `left` is not true (`left` null: every row), as
  // `kept`, in order; the groups of the other rows leave. Anything else
  // makes the next Merge load its state afresh.
  void Keep(const std::shared_ptr<arrow::Table>& merged,
            const std::shared_ptr<arrow::ChunkedArray>& left,
            const std::shared_ptr<arrow::Table>& kept);
  const arrow::Schema& schema() const { return *schema_; }

 private:
  PartialMerger();
  std::unique_ptr<MergerParts> m_;
  std::shared_ptr<arrow::Schema> schema_;
  int groups_ = 0;
  // The groups of the last table returned or kept: which are still in the
  // state (per group id), and each row's group id.
  // (Held, so that no other table can take its address.)
  std::shared_ptr<arrow::Table> table_;
  std::vector<uint8_t> live_;
  std::vector<uint32_t> gids_;
};

// One merge (a PartialMerger made for it).
arrow::Result<std::shared_ptr<arrow::Table>> MergePartials(
    const std::shared_ptr<arrow::Table>& state, const std::shared_ptr<arrow::Table>& partial,
    int groups, const std::vector<std::string>& merge);

// Where the window is among the grouping keys of a partials table: a
// {start, end} struct column, or start and end columns (timestamps in
// microseconds), or a start column whose end is start + size_us.
struct WindowKeys {
  int struct_key = -1;
  int start_key = -1;
  int end_key = -1;
  int64_t size_us = 0;  // for a start-only key
};

// Each row of `partial` (pane rows: window start = the pane's start) times
// `count` windows, the k-th starting k * slide_us earlier (k = 0..count-1),
// the window's end moved with it.
arrow::Result<std::shared_ptr<arrow::Table>> ExpandPanes(
    const std::shared_ptr<arrow::Table>& partial, const WindowKeys& keys, int64_t count,
    int64_t slide_us);

// `t` with a boolean column `name` appended: true where the row's window end
// is at most `w` (below `w` when `strict`: a session still takes a row at its
// end); false for a NULL end. Every row when `all` (the end of input).
// NotImplemented for a window end that is not a timestamp.
arrow::Result<std::shared_ptr<arrow::Table>> WindowClosed(const std::shared_ptr<arrow::Table>& t,
                                                          const WindowKeys& keys, int64_t w,
                                                          bool strict, bool all,
                                                          const std::string& name);

}  // namespace thund::native
