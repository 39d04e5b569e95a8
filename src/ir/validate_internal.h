// Internal to validate / topo order / capabilities: the parsed facts about a
// flow's SQL, the validation context, and small diagnostic helpers.
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund::internal {

// ------------------------------------------------------------ SQL facts ----

// One relation a query reads: its name parts as written ([catalog,] [schema,]
// table; empty parts dropped) and the offset of its first occurrence.
struct TableRef {
  std::vector<std::string> parts;
  uint64_t position = std::numeric_limits<uint64_t>::max();
  int line = 0, column = 0;  // where it is written in the flow's SQL (0: unknown)

  std::string Joined() const;  // "db.t"
};

// What the SQL frontend (src/sql/) found in one flow's query. The IR rules
// read these facts; they never look at SQL text themselves.
struct SqlFacts {
  std::vector<TableRef> inputs;  // deduplicated (case-insensitively), first-seen order
  bool aggregates = false;       // the row path of the query groups or aggregates
  bool windowed = false;         // that aggregation groups by a time window of the query
  bool reads_stream = false;     // FROM STREAM(x) or a streaming source function
};

// The pipeline-relative name of `ref`: a qualifier equal to the pipeline's
// database (optionally preceded by its catalog) or "live" is dropped; a bare
// name that matches no dataset exactly but exactly one case-insensitively
// resolves to that dataset's spelling. Anything else is ref.Joined(), marked
// `qualified` (it names a table outside the pipeline).
struct ResolvedInput {
  std::string name;
  bool qualified = false;
  int line = 0, column = 0;  // where it is written in the flow's SQL (0: unknown)
};
ResolvedInput ResolveInput(const Pipeline& p, const TableRef& ref);

// ----------------------------------------------------------- context ------

struct FlowFacts {
  bool has_sql = false;
  arrow::Status parse_status;         // OK unless has_sql and the SQL is bad
  std::vector<ResolvedInput> inputs;  // resolved, deduplicated, first-seen order
  bool aggregates = false;
  bool windowed = false;
  bool reads_stream = false;
};

// Everything the rules need that comes from SQL, computed by the frontend.
struct PipelineFacts {
  std::vector<arrow::Result<SqlFacts>> flows;  // parallel to p.flows (OK/empty w/o SQL)
  // Per dataset, per expectation: does the predicate parse as one expression.
  std::vector<std::vector<arrow::Status>> predicates;
};

struct ValidateContext {
  const Pipeline& p;
  std::map<std::string, size_t, std::less<>> dataset_index;  // first occurrence
  std::vector<FlowFacts> flows;                              // parallel to p.flows
  std::vector<std::vector<arrow::Status>> predicates;        // parallel to p.datasets

  ValidateContext(const Pipeline& pipeline, PipelineFacts facts);
  const Dataset* Find(std::string_view name) const;
  const arrow::Status& PredicateStatus(size_t dataset, size_t expectation) const;
};

// Every rule group over `ctx`: errors first (in rule order), then warnings.
Diagnostics RunRules(const ValidateContext& ctx);

// IsStreamingFlow (validate.h) given whether the flow's SQL reads a stream.
bool IsStreamingFlowGiven(const Pipeline& p, const Flow& flow, bool reads_stream);

// TopoOrder (validate.h) given each flow's resolved inputs (parallel to p.flows).
arrow::Result<std::vector<const Flow*>> TopoOrderGiven(
    const Pipeline& p, const std::vector<std::vector<std::string>>& inputs);

// RequiredCapabilities (validate.h) given whether the flow is streaming.
std::vector<std::string> RequiredCapabilitiesGiven(const Pipeline& p, const Flow& flow,
                                                   bool streaming);

// --------------------------------------------------------- rule groups ----
// Each appends its findings to `out`; all run on every pipeline.

void CheckNames(const ValidateContext& ctx, Diagnostics* out);       // validate_names.cc
void CheckGraph(const ValidateContext& ctx, Diagnostics* out);       // validate_graph.cc
void CheckFlowBodies(const ValidateContext& ctx, Diagnostics* out);  // validate_flows.cc
void CheckStreaming(const ValidateContext& ctx, Diagnostics* out);   // validate_streaming.cc
void CheckLateRows(const ValidateContext& ctx, Diagnostics* out);    // validate_late_rows.cc
void CheckCdc(const ValidateContext& ctx, Diagnostics* out);         // validate_cdc.cc
void CheckDatasets(const ValidateContext& ctx, Diagnostics* out);    // validate_datasets.cc

// ------------------------------------------------------------ helpers -----

// A diagnostic about flow `p.flows[index]` / dataset `p.datasets[index]`, with
// its location and a field path rooted at "flows[i]" / "datasets[i]" (`field`
// is appended after a '.', may be empty).
Diagnostic FlowDiag(const Pipeline& p, size_t index, Severity sev, std::string code,
                    std::string field, std::string message, std::string hint);
Diagnostic DatasetDiag(const Pipeline& p, size_t index, Severity sev, std::string code,
                       std::string field, std::string message, std::string hint);

// The candidate closest to `name` by edit distance (case-insensitive), if it
// is close enough to be a plausible typo.
std::optional<std::string> ClosestName(std::string_view name,
                                       const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);
// The names of p.datasets, in order (candidates for DidYouMean).
std::vector<std::string> DatasetNames(const Pipeline& p);

std::string Lower(std::string_view s);
std::string Quote(std::string_view s);  // 'name'
std::string JoinNames(const std::vector<std::string>& names, std::string_view sep);

// Directed graph cycles: each strongly connected component with more than one
// node, or a node with an edge to itself, as one cycle path a -> b -> ... -> a
// starting at the component's smallest node (shortest cycle through it).
// Components with nodes beyond that path list them in `others`. Sorted by the
// first node. Deterministic.
struct Cycle {
  std::vector<std::string> path;  // without the repeated first node
  std::vector<std::string> others;
  std::string ToString() const;  // "a -> b -> a"
};
std::vector<Cycle> FindCycles(const std::map<std::string, std::vector<std::string>>& edges);

}  // namespace thund::internal
