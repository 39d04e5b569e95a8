// The SQL authoring surface: Spark Declarative Pipelines (SDP) SQL, unchanged,
// plus thund's streaming extensions. Reference: docs/sql.md.
//
// Lowering rules (the contract between SQL and the IR):
//  * `CREATE <kind> x ... AS <query>` declares dataset x and a flow named x
//    (target x) whose `sql` is <query> exactly as written (Spark dialect; the
//    engine translates it with SparkToDuckDb). Without AS only the dataset is
//    declared; flows come from `CREATE FLOW f AS INSERT INTO x BY NAME ...`.
//  * A query that is exactly `SELECT * FROM [STREAM] read_files(...) |
//    read_kafka(...) | read_generator(...) | read_memory(...)` becomes a source
//    flow (Flow::source) instead of SQL.
//  * A WATERMARK clause, and a window (window(), session_window(), TUMBLE, HOP,
//    SESSION) in a query that reads a STREAM, become the flow's StreamingSpec;
//    WITH (...) options on the statement override or complete it.
//  * SET k = v -> Pipeline::configuration; USE CATALOG/SCHEMA -> the
//    pipeline's catalog/database when written before any definition, else the
//    qualifier of the names defined after it.
// Source locations: datasets point at their name, flows at their name (the
// dataset name for `CREATE <kind> x AS ...`), expectations at CONSTRAINT.
#pragma once

#include <string>

#include "thund/diagnostic.h"
#include "thund/ir.h"
#include "thund/pipeline_file.h"

namespace thund {

struct SqlParseOptions {
  // False: a standalone .sql file. CREATE PIPELINE sets the pipeline's name
  // and storage; USE written before the first definition sets its catalog and
  // database. True: a library file of an SDP project (spark-pipeline.yml sets
  // those; CREATE PIPELINE is refused). In both, SET adds to the
  // configuration and a USE after a definition qualifies later names.
  bool project_library = false;
  // The catalog / database in effect at the top of the file (an SDP project
  // passes the spec's), used to qualify names after a USE.
  std::string catalog;
  std::string database;
};

// Parses the text of one .sql file. Every statement is parsed even when an
// earlier one has errors (parsing resumes after the next ';'). Diagnostics
// carry file:line:column (use RenderDiagnostic for the caret excerpt) and a
// stable code. Errors: "sql-lex" (unterminated string or comment),
// "sql-syntax", "sql-unsupported" (a form thund does not support),
// "sdp-refused" (a form SDP refuses too), "sql-option" (WITH options),
// "sql-body" (the query: source reads, WATERMARK, window arguments).
// Warnings: "sql-ignored" (CLUSTER BY, IF NOT EXISTS), "sql-set-override",
// "sql-body". Never fails: `pipeline` holds everything that parsed.
// Thread-safe (no shared state).
ParseResult ParseSql(const std::string& text, const std::string& file_name = "<input>",
                     const SqlParseOptions& options = {});

// Reads and parses a standalone .sql file. A file without CREATE PIPELINE gets
// the file's stem as the pipeline name.
ParseResult LoadSqlFile(const std::string& path);

// The SDP spec file (spark-pipeline.yml, then spark-pipeline.yaml) in `dir` or
// the nearest of its parents, as the spark-pipelines CLI finds it. Empty when
// there is none; an error diagnostic in `*problem` when a directory holds both.
std::string FindSdpSpec(const std::string& dir, Diagnostics* problem = nullptr);

// Loads an SDP project from its spec file, or from a directory that holds one
// (or whose parents do): name, storage, catalog, database (alias schema),
// configuration, and the .sql files matched by `libraries: - glob: {include:
// ...}` (relative to the spec's directory; files in sorted path order, each
// once). A matched .py file is an error naming it (Python definitions are not
// supported); other extensions too. Before a file is parsed, `${key}` in
// it is replaced by `key`'s value in the spec's configuration, as Spark does
// (docs/sql.md, "Configuration variables"): the IR holds the substituted SQL,
// and locations point into the file as written. Codes: "sdp-spec" (the spec
// file), "sdp-glob" (warnings: a glob Spark refuses, a glob matching
// nothing), "sql-variable" (an undefined key: an error in code, a warning in
// a string literal), "python-library", "sdp-library", "io", plus ParseSql's
// per file.
ParseResult LoadSdpProject(const std::string& spec_or_dir);

// True when `text` (YAML) looks like an SDP spec rather than a pipeline file:
// a mapping with a `libraries` key and no `datasets` / `flows` keys.
bool LooksLikeSdpSpec(const std::string& text);

// IR -> SQL in thund's dialect (SDP SQL plus the extensions in docs/sql.md).
// Lossless for every Pipeline: ParseSql(FormatSql(p)).pipeline == p.
// Deterministic; statements follow the order of p.datasets and p.flows.
std::string FormatSql(const Pipeline& p);

// Check-time: for every SQL flow (and every expectation predicate), the
// functions DuckDB does not have after SparkToDuckDb, one error per function
// naming it and the flow, located in the source file when it can be read.
// Bodies that do not translate or parse are skipped (Validate reports those).
// Code "unknown-function". Run it after Validate in `thund check`.
Diagnostics CheckSqlFunctions(const Pipeline& p);

}  // namespace thund
