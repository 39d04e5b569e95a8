// What each Spark version's Declarative Pipelines can run. Evidence (kept in
// docs/spark.md): the pipelines protocol and pyspark.pipelines API of the
// pyspark-client 4.1.0 and 4.2.0 packages and of pyspark 4.3.0, and runs of
// SDP 4.3 on this machine.
#include <fmt/format.h>

#include "backend/spark/spark_lowering.h"

namespace thund::spark {

const char* Name(SparkVersion v) {
  switch (v) {
    case SparkVersion::k4_1:
      return "4.1";
    case SparkVersion::k4_2:
      return "4.2";
    case SparkVersion::k4_3:
      return "4.3";
  }
  return "?";
}

std::optional<SparkVersion> ParseSparkVersion(std::string_view s) {
  for (SparkVersion v : {SparkVersion::k4_1, SparkVersion::k4_2, SparkVersion::k4_3}) {
    // "4.3" and "4.3.x" both name the line.
    const std::string_view n = Name(v);
    if (s == n || (s.substr(0, n.size()) == n && s.size() > n.size() && s[n.size()] == '.')) {
      return v;
    }
  }
  return std::nullopt;
}

std::vector<std::string> SparkVersionNames() { return {"4.1", "4.2", "4.3"}; }

Capabilities SparkCapabilities(SparkVersion v) {
  (void)v;  // every capability below is in 4.1, 4.2 and 4.3
  Capabilities c;
  c.supported = {"batch-sql",
                 "streaming",
                 "streaming-sql",
                 "source:files",
                 "source:file_drop",
                 // Run differently, and reported: Spark ignores the trigger
                 // interval and thund's mode; incremental MVs are recomputed.
                 "trigger:processing_time",
                 "mode:incremental",
                 "materialization:incremental",
                 // In the query's SQL (WATERMARK clause, window()); a window or
                 // watermark given only as an option is refused by the lowering.
                 "watermark",
                 "window:tumbling",
                 "window:hopping",
                 "window:session",
                 // Lowered as a WHERE (drop) and assert_true (fail); warn is reported.
                 "expectations:warn",
                 "expectations:drop",
                 "expectations:fail",
                 "sink:parquet",
                 "sink:csv",
                 "sink:json"};
  return c;
}

std::string SparkCapabilityReason(SparkVersion v, const std::string& cap) {
  if (SparkCapabilities(v).Supports(cap)) return "";
  if (cap == "cdc:scd1" || cap == "cdc:scd2") {
    if (v == SparkVersion::k4_1) {
      return "Spark 4.1 has no AUTO CDC flows (its pipelines protocol and API have none; they "
             "came in 4.2)";
    }
    return fmt::format(
        "Spark {}'s AUTO CDC passes a dry run but fails at run time on the Parquet tables "
        "open-source SDP writes (\"does not support row-level operations\")",
        Name(v));
  }
  if (cap == "output:update" || cap == "output:complete") {
    return "SDP writes streaming tables in append mode only; a flow in " + cap.substr(7) +
           " mode would write other rows";
  }
  if (cap == "keyed-write") {
    return "Spark has no key-checkpointed writes (rows whose key is at the target are not "
           "skipped)";
  }
  if (cap == "once") {
    return "SDP has no once flows in SQL (INSERT INTO ONCE is a parse error) or Python "
           "(append_flow takes no once)";
  }
  if (cap == "source:generator" || cap == "source:memory") {
    return "Spark has no " + cap.substr(7) + " source (it is thund's own)";
  }
  if (cap == "source:kafka") {
    return "Spark reads Kafka only with the spark-sql-kafka connector on the cluster's class "
           "path; thund does not lower Kafka sources yet";
  }
  return "Spark " + std::string(Name(v)) + " cannot run '" + cap + "'";
}

}  // namespace thund::spark
