// A Spark Connect client with what the Spark backend needs: run SQL, read a
// query's result as Arrow, and drive a Spark Declarative Pipelines dataflow
// graph (create it, define its SQL files, outputs and flows, start a run and
// follow its events). gRPC over the protocol in proto/spark_connect.proto.
//
// Contract:
//  * One client is one Spark Connect session (a random session id), so
//    temporary state (SET, temporary views) is shared by its calls. The
//    catalog, and so the tables a pipeline run wrote, is the server's.
//  * Every call is blocking and returns once the server's response stream has
//    ended. StartRun reports each pipeline event through `on_event` as it
//    arrives, on the calling thread.
//  * Errors: a server that cannot be reached is an IOError naming the address
//    ("no Spark Connect server at sc://..."); an error the server answers with
//    (analysis, parse, execution) is an IOError "Spark: <its message>".
//  * Not thread-safe: one call at a time per client.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/result.h>
#include <arrow/status.h>
#include <arrow/type_fwd.h>

namespace thund::spark {

// "sc://host:port[/;param=value...]" (Spark's remote URL). Port defaults to
// 15002, as in Spark's clients.
struct SparkRemote {
  std::string host;
  int port = 15002;
  std::string ToString() const;  // "sc://host:port"
};
arrow::Result<SparkRemote> ParseSparkRemote(std::string_view url);

// One dataset or sink of a dataflow graph defined outside SQL files.
struct OutputDefinition {
  enum class Kind { kMaterializedView, kTable, kTemporaryView, kSink };
  std::string name;
  Kind kind = Kind::kTemporaryView;
  std::string comment;
  std::string format;                  // sinks: "parquet", ...; tables: "" = Spark's
  std::map<std::string, std::string> options;  // sinks: writer options ("path")
};

// One flow defined outside SQL files: its query is either Spark SQL or a
// read of files (DataFrameReader / DataStreamReader).
struct FlowDefinition {
  std::string name;
  std::string target;
  bool once = false;
  std::string sql;  // set for a SQL query
  struct FileRead {
    std::string format;  // "parquet" | "csv" | "json"
    std::vector<std::string> paths;
    std::map<std::string, std::string> options;
    std::string schema;  // DDL, "" = inferred
    bool streaming = false;
  };
  std::optional<FileRead> read;  // set for a file read (then sql is empty)
  std::map<std::string, std::string> sql_conf;
};

struct StartRunOptions {
  std::vector<std::string> full_refresh;
  bool full_refresh_all = false;
  std::vector<std::string> refresh;
  bool dry = false;
  std::string storage;  // checkpoints root (a URI Spark can write)
};

class SparkConnectClient {
 public:
  // Connects to `remote`, waiting at most connect_timeout_ms for the channel.
  static arrow::Result<std::unique_ptr<SparkConnectClient>> Connect(
      const SparkRemote& remote, int64_t connect_timeout_ms = 10000);
  ~SparkConnectClient();
  SparkConnectClient(const SparkConnectClient&) = delete;
  SparkConnectClient& operator=(const SparkConnectClient&) = delete;

  const SparkRemote& remote() const { return remote_; }
  // The session this client speaks in (a process joining it with the same
  // user and session id sees the same dataflow graphs).
  const std::string& session_id() const;
  static constexpr const char* kUser = "thund";

  // Runs one SQL statement for its effect (DDL, SET).
  arrow::Status ExecuteSql(const std::string& sql);
  // Runs a query and returns its rows (Spark sends them as Arrow IPC).
  arrow::Result<std::shared_ptr<arrow::Table>> Query(const std::string& sql);

  // ---- Spark Declarative Pipelines ----
  arrow::Result<std::string> CreateDataflowGraph(
      const std::string& default_catalog, const std::string& default_database,
      const std::map<std::string, std::string>& sql_conf);
  arrow::Status DefineSqlGraphElements(const std::string& graph_id, const std::string& path,
                                       const std::string& sql_text);
  arrow::Status DefineOutput(const std::string& graph_id, const OutputDefinition& output);
  arrow::Status DefineFlow(const std::string& graph_id, const FlowDefinition& flow);
  // Starts a run and returns when it ends. Each event's wall time (ms since
  // the Unix epoch) and message go to on_event. An error Status is the
  // server's error for the run as a whole (a graph that does not resolve);
  // a flow that fails is only an event (Spark keeps running the others).
  arrow::Status StartRun(const std::string& graph_id, const StartRunOptions& options,
                         const std::function<void(int64_t, const std::string&)>& on_event);
  arrow::Status DropDataflowGraph(const std::string& graph_id);

 private:
  struct Impl;
  SparkConnectClient(SparkRemote remote, std::unique_ptr<Impl> impl);
  SparkRemote remote_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace thund::spark
