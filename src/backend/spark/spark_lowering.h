// Lowering a thund pipeline onto Apache Spark Declarative Pipelines (SDP).
//
// The result is one SDP dataflow graph in two equal forms: SQL files (Spark
// SQL; the bodies of SQL-surface flows exactly as the user wrote them) plus
// the elements Spark SQL cannot say (file reads, sinks, once flows), which
// the Connect driver defines directly and `thund lower --to spark` writes as
// a Python file of `pyspark.pipelines` calls. Docs: docs/spark.md.
//
// Rules (what a Spark user would write by hand):
//  * materialized view / table with one batch flow -> CREATE MATERIALIZED VIEW;
//    streaming table -> CREATE STREAMING TABLE (+ CREATE FLOW ... INSERT INTO
//    ... BY NAME per flow); view -> CREATE VIEW; temporary view -> CREATE
//    TEMPORARY VIEW; sink -> a Spark sink (parquet/csv/json files) fed by
//    streaming append flows.
//  * A flow reading files (read_files, a file drop) reads them through a
//    temporary view `<flow>__files` (spark.read / spark.readStream).
//  * Several streaming flows into one streaming table become one flow, the
//    UNION ALL of their queries by column name (Spark 4.3 runs flows into one
//    Parquet table concurrently, and one can lose the other's rows).
//  * Expectations: drop -> a WHERE on the predicate; fail -> assert_true on
//    it (the run fails at the first violating row); warn -> not run (Spark has
//    no expectations: reported).
//  * Refused (errors, code "spark-unsupported"): what Spark would run with
//    other results or not at all: update/complete output modes, CDC, keyed
//    writes, late-row tables, generator/memory/Kafka sources, windows or
//    watermarks given only as options, sinks fed by batch flows, merge or
//    overwrite sinks, a once flow next to other flows into one table, and
//    every capability the chosen Spark version lacks.
//  * Reported (SparkReport): every knob Spark ignores or runs differently,
//    per flow, with what Spark does instead and that the native backend
//    runs it as declared.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/spark/spark_connect_client.h"
#include "thund/backend.h"
#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund::spark {

enum class SparkVersion { k4_1, k4_2, k4_3 };
constexpr SparkVersion kDefaultSparkVersion = SparkVersion::k4_3;
const char* Name(SparkVersion v);  // "4.1" | "4.2" | "4.3"
std::optional<SparkVersion> ParseSparkVersion(std::string_view s);
std::vector<std::string> SparkVersionNames();

// What SDP of version `v` can run, in validate.h's capability vocabulary.
// Capabilities not listed are refused (see SparkCapabilityReason).
Capabilities SparkCapabilities(SparkVersion v);
// Why `capability` cannot run on Spark `v`, in one sentence (what Spark
// lacks or does instead); "" when it can.
std::string SparkCapabilityReason(SparkVersion v, const std::string& capability);

// One knob Spark ignores or runs differently.
struct SparkReportItem {
  std::string flow;     // "" for a dataset-level item
  std::string dataset;
  std::string knob;     // "trigger", "mode", "expectation", "watermark", ...
  std::string value;    // the knob's value in the pipeline
  std::string spark;    // what Spark does with it
  bool native_runs_it = true;  // the native backend runs it as declared
};

struct SparkLowerOptions {
  SparkVersion version = kDefaultSparkVersion;
  // Where Spark keeps streaming checkpoints (the spec's `storage`): a path or
  // URI the Spark cluster can write. "" = "<pipeline storage>/spark", else
  // ".thund-spark" under the working directory.
  std::string storage;
};

struct SparkProject {
  std::string name;
  std::string catalog;
  std::string database;
  std::string storage;  // as a URI (file:///abs/path for local paths)
  std::map<std::string, std::string> configuration;  // the spec's, for every flow
  // Spark SQL files, by path relative to the project root
  // ("transformations/<file>.sql").
  std::map<std::string, std::string> sql_files;
  // Elements defined outside SQL, in definition order.
  std::vector<OutputDefinition> outputs;
  std::vector<FlowDefinition> flows;
  std::vector<SparkReportItem> report;
  std::vector<std::string> stored_datasets;  // materialized views and streaming tables
  // The project's Python SDP files (absolute paths): they go to Spark as they
  // are, so the datasets and flows they define are not lowered from the IR.
  std::vector<std::string> python_files;
};

struct SparkLowering {
  SparkProject project;
  Diagnostics diagnostics;  // errors: what Spark cannot run; warnings: none yet
};

// Lowers a validated pipeline. Never fails: problems are diagnostics.
SparkLowering LowerToSpark(const Pipeline& p, const SparkLowerOptions& options = {});

// `dataset` as Spark names it in the project's catalog and schema, each part
// back-quoted: `db`.`t`. A name with its own qualifier ("db.t") keeps it.
std::string QualifiedName(const SparkProject& project, const std::string& dataset);
// "t" or "db.t" as back-quoted Spark SQL identifier parts.
std::string BackQuotedName(const std::string& name);

// The project as files: spark-pipeline.yml, the SQL files, the project's own
// Python files (unchanged, under transformations/) and, when there are
// elements outside SQL, transformations/thund_definitions.py. Keys are paths
// relative to the project root.
std::map<std::string, std::string> ProjectFiles(const SparkProject& project);

// The report, one line per item ("flow 'f': trigger processing_time(10s): ..."),
// and as JSON ({"items":[{flow,dataset,knob,value,spark,native_runs_it}]}).
std::string ReportText(const std::vector<SparkReportItem>& report);
// One item without who it is about: "<knob> <value>: <what Spark does>[ (...)]".
std::string ReportLine(const SparkReportItem& item);
std::string ReportJson(const std::vector<SparkReportItem>& report, const Diagnostics& refusals);

}  // namespace thund::spark
