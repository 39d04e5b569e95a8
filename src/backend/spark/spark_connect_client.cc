#include "backend/spark/spark_connect_client.h"

#include <chrono>
#include <random>

#include <arrow/buffer.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/reader.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "spark_connect.grpc.pb.h"
#include "spark_connect.pb.h"

namespace thund::spark {
namespace {

namespace pb = ::spark::connect;

std::string RandomUuid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t a = gen(), b = gen();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 1
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xffff, b >> 48, b & 0xffffffffffffULL);
}

pb::OutputType ToProto(OutputDefinition::Kind k) {
  switch (k) {
    case OutputDefinition::Kind::kMaterializedView:
      return pb::MATERIALIZED_VIEW;
    case OutputDefinition::Kind::kTable:
      return pb::TABLE;
    case OutputDefinition::Kind::kTemporaryView:
      return pb::TEMPORARY_VIEW;
    case OutputDefinition::Kind::kSink:
      return pb::SINK;
  }
  return pb::OUTPUT_TYPE_UNSPECIFIED;
}

}  // namespace

std::string SparkRemote::ToString() const { return fmt::format("sc://{}:{}", host, port); }

arrow::Result<SparkRemote> ParseSparkRemote(std::string_view url) {
  constexpr std::string_view kScheme = "sc://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return arrow::Status::Invalid("Spark remote '", url,
                                  "' must look like sc://host:port (Spark Connect's URL)");
  }
  std::string_view rest = url.substr(kScheme.size());
  rest = rest.substr(0, rest.find_first_of("/;"));
  SparkRemote r;
  const size_t colon = rest.rfind(':');
  r.host = std::string(rest.substr(0, colon));
  if (colon != std::string_view::npos) {
    const std::string port(rest.substr(colon + 1));
    char* end = nullptr;
    const long v = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || v <= 0 || v > 65535) {
      return arrow::Status::Invalid("Spark remote '", url, "': '", port, "' is not a port");
    }
    r.port = static_cast<int>(v);
  }
  if (r.host.empty()) return arrow::Status::Invalid("Spark remote '", url, "' names no host");
  return r;
}

struct SparkConnectClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::SparkConnectService::Stub> stub;
  std::string session_id = RandomUuid();

  pb::ExecutePlanRequest Request() const {
    pb::ExecutePlanRequest req;
    req.set_session_id(session_id);
    req.mutable_user_context()->set_user_id(SparkConnectClient::kUser);
    req.mutable_user_context()->set_user_name(SparkConnectClient::kUser);
    req.set_client_type("thund");
    req.set_operation_id(RandomUuid());
    return req;
  }

  // Sends `req` and hands every response to `each` (which may stop the
  // stream by returning an error).
  arrow::Status Execute(const pb::ExecutePlanRequest& req,
                        const std::function<arrow::Status(const pb::ExecutePlanResponse&)>& each,
                        const SparkRemote& remote) {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReader<pb::ExecutePlanResponse>> reader =
        stub->ExecutePlan(&ctx, req);
    pb::ExecutePlanResponse resp;
    arrow::Status first;
    while (reader->Read(&resp)) {
      if (first.ok()) first = each(resp);
      if (!first.ok()) ctx.TryCancel();
    }
    grpc::Status st = reader->Finish();
    if (!first.ok()) return first;
    if (st.ok()) return arrow::Status::OK();
    if (st.error_code() == grpc::StatusCode::UNAVAILABLE) {
      return arrow::Status::IOError("no Spark Connect server at ", remote.ToString(), " (",
                                    st.error_message(), ")");
    }
    if (st.error_message().find("http2 header") != std::string::npos ||
        st.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return arrow::Status::IOError("what answers at ", remote.ToString(),
                                    " is not a Spark Connect server (", st.error_message(), ")");
    }
    return arrow::Status::IOError("Spark: ", st.error_message());
  }

  arrow::Status Command(const pb::Command& cmd, const SparkRemote& remote,
                        pb::PipelineCommandResult* result = nullptr) {
    pb::ExecutePlanRequest req = Request();
    *req.mutable_plan()->mutable_command() = cmd;
    return Execute(
        req,
        [&](const pb::ExecutePlanResponse& r) {
          if (result && r.has_pipeline_command_result()) *result = r.pipeline_command_result();
          return arrow::Status::OK();
        },
        remote);
  }
};

SparkConnectClient::SparkConnectClient(SparkRemote remote, std::unique_ptr<Impl> impl)
    : remote_(std::move(remote)), impl_(std::move(impl)) {}
SparkConnectClient::~SparkConnectClient() = default;

const std::string& SparkConnectClient::session_id() const { return impl_->session_id; }

arrow::Result<std::unique_ptr<SparkConnectClient>> SparkConnectClient::Connect(
    const SparkRemote& remote, int64_t connect_timeout_ms) {
  auto impl = std::make_unique<Impl>();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // Arrow batches can be large
  impl->channel = grpc::CreateCustomChannel(fmt::format("{}:{}", remote.host, remote.port),
                                            grpc::InsecureChannelCredentials(), args);
  const auto deadline =
      std::chrono::system_clock::now() + std::chrono::milliseconds(connect_timeout_ms);
  // Ready, or the first failed attempt (refused, unreachable): no retrying
  // until the deadline when nothing listens.
  for (grpc_connectivity_state st = impl->channel->GetState(/*try_to_connect=*/true);
       st != GRPC_CHANNEL_READY; st = impl->channel->GetState(true)) {
    if (st == GRPC_CHANNEL_TRANSIENT_FAILURE || st == GRPC_CHANNEL_SHUTDOWN ||
        !impl->channel->WaitForStateChange(st, deadline)) {
      return arrow::Status::IOError(
          "no Spark Connect server at ", remote.ToString(),
          st == GRPC_CHANNEL_TRANSIENT_FAILURE ? " (the connection failed)"
                                               : " (nothing answered within " +
                                                     std::to_string(connect_timeout_ms) + " ms)",
          "; start one (docs/spark.md) or pass --remote");
    }
  }
  impl->stub = pb::SparkConnectService::NewStub(impl->channel);
  return std::unique_ptr<SparkConnectClient>(new SparkConnectClient(remote, std::move(impl)));
}

arrow::Status SparkConnectClient::ExecuteSql(const std::string& sql) {
  pb::Command cmd;
  cmd.mutable_sql_command()->mutable_input()->mutable_sql()->set_query(sql);
  return impl_->Command(cmd, remote_);
}

arrow::Result<std::shared_ptr<arrow::Table>> SparkConnectClient::Query(const std::string& sql) {
  pb::ExecutePlanRequest req = impl_->Request();
  req.mutable_plan()->mutable_root()->mutable_sql()->set_query(sql);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::shared_ptr<arrow::Schema> schema;
  std::string pending;  // chunks of one batch
  auto decode = [&](std::string bytes) -> arrow::Status {
    auto buffer = arrow::Buffer::FromString(std::move(bytes));
    auto input = std::make_shared<arrow::io::BufferReader>(buffer);
    ARROW_ASSIGN_OR_RAISE(auto reader, arrow::ipc::RecordBatchStreamReader::Open(input));
    if (!schema) schema = reader->schema();
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto batch, reader->Next());
      if (!batch) break;
      batches.push_back(std::move(batch));
    }
    return arrow::Status::OK();
  };
  ARROW_RETURN_NOT_OK(impl_->Execute(
      req,
      [&](const pb::ExecutePlanResponse& r) -> arrow::Status {
        if (!r.has_arrow_batch()) return arrow::Status::OK();
        const auto& b = r.arrow_batch();
        const int64_t chunks = b.has_num_chunks_in_batch() ? b.num_chunks_in_batch() : 1;
        if (chunks <= 1) return decode(b.data());
        pending += b.data();
        if (b.chunk_index() + 1 < chunks) return arrow::Status::OK();
        return decode(std::exchange(pending, {}));
      },
      remote_));
  if (!schema) {
    // No rows and no schema: ask for the schema alone (LIMIT 0 still sends one batch).
    return arrow::Status::IOError("Spark sent no result for: ", sql);
  }
  return arrow::Table::FromRecordBatches(schema, batches);
}

arrow::Result<std::string> SparkConnectClient::CreateDataflowGraph(
    const std::string& default_catalog, const std::string& default_database,
    const std::map<std::string, std::string>& sql_conf) {
  pb::Command cmd;
  auto* c = cmd.mutable_pipeline_command()->mutable_create_dataflow_graph();
  if (!default_catalog.empty()) c->set_default_catalog(default_catalog);
  if (!default_database.empty()) c->set_default_database(default_database);
  for (const auto& [k, v] : sql_conf) (*c->mutable_sql_conf())[k] = v;
  pb::PipelineCommandResult result;
  ARROW_RETURN_NOT_OK(impl_->Command(cmd, remote_, &result));
  if (!result.has_create_dataflow_graph_result() ||
      result.create_dataflow_graph_result().dataflow_graph_id().empty()) {
    return arrow::Status::IOError("Spark at ", remote_.ToString(),
                                  " created no dataflow graph: is it Spark 4.1 or later?");
  }
  return result.create_dataflow_graph_result().dataflow_graph_id();
}

arrow::Status SparkConnectClient::DefineSqlGraphElements(const std::string& graph_id,
                                                         const std::string& path,
                                                         const std::string& sql_text) {
  pb::Command cmd;
  auto* d = cmd.mutable_pipeline_command()->mutable_define_sql_graph_elements();
  d->set_dataflow_graph_id(graph_id);
  d->set_sql_file_path(path);
  d->set_sql_text(sql_text);
  return impl_->Command(cmd, remote_);
}

arrow::Status SparkConnectClient::DefineOutput(const std::string& graph_id,
                                               const OutputDefinition& output) {
  pb::Command cmd;
  auto* d = cmd.mutable_pipeline_command()->mutable_define_output();
  d->set_dataflow_graph_id(graph_id);
  d->set_output_name(output.name);
  d->set_output_type(ToProto(output.kind));
  if (!output.comment.empty()) d->set_comment(output.comment);
  if (output.kind == OutputDefinition::Kind::kSink) {
    auto* s = d->mutable_sink_details();
    if (!output.format.empty()) s->set_format(output.format);
    for (const auto& [k, v] : output.options) (*s->mutable_options())[k] = v;
  } else if (output.kind != OutputDefinition::Kind::kTemporaryView) {
    auto* t = d->mutable_table_details();
    if (!output.format.empty()) t->set_format(output.format);
  }
  return impl_->Command(cmd, remote_);
}

arrow::Status SparkConnectClient::DefineFlow(const std::string& graph_id,
                                             const FlowDefinition& flow) {
  pb::Command cmd;
  auto* d = cmd.mutable_pipeline_command()->mutable_define_flow();
  d->set_dataflow_graph_id(graph_id);
  d->set_flow_name(flow.name);
  d->set_target_dataset_name(flow.target);
  if (flow.once) d->set_once(true);
  for (const auto& [k, v] : flow.sql_conf) (*d->mutable_sql_conf())[k] = v;
  pb::Relation* rel = d->mutable_relation_flow_details()->mutable_relation();
  if (flow.read) {
    pb::Read* read = rel->mutable_read();
    read->set_is_streaming(flow.read->streaming);
    auto* ds = read->mutable_data_source();
    ds->set_format(flow.read->format);
    if (!flow.read->schema.empty()) ds->set_schema(flow.read->schema);
    for (const auto& [k, v] : flow.read->options) (*ds->mutable_options())[k] = v;
    for (const auto& p : flow.read->paths) ds->add_paths(p);
  } else {
    rel->mutable_sql()->set_query(flow.sql);
  }
  return impl_->Command(cmd, remote_);
}

arrow::Status SparkConnectClient::StartRun(
    const std::string& graph_id, const StartRunOptions& options,
    const std::function<void(int64_t, const std::string&)>& on_event) {
  pb::ExecutePlanRequest req = impl_->Request();
  auto* s = req.mutable_plan()->mutable_command()->mutable_pipeline_command()->mutable_start_run();
  s->set_dataflow_graph_id(graph_id);
  for (const auto& d : options.full_refresh) s->add_full_refresh_selection(d);
  if (options.full_refresh_all) s->set_full_refresh_all(true);
  for (const auto& d : options.refresh) s->add_refresh_selection(d);
  if (options.dry) s->set_dry(true);
  if (!options.storage.empty()) s->set_storage(options.storage);
  return impl_->Execute(
      req,
      [&](const pb::ExecutePlanResponse& r) {
        if (r.has_pipeline_event_result() && on_event) {
          const auto& e = r.pipeline_event_result().event();
          const int64_t ms = e.timestamp().seconds() * 1000 + e.timestamp().nanos() / 1000000;
          on_event(ms, e.message());
        }
        return arrow::Status::OK();
      },
      remote_);
}

arrow::Status SparkConnectClient::DropDataflowGraph(const std::string& graph_id) {
  pb::Command cmd;
  cmd.mutable_pipeline_command()->mutable_drop_dataflow_graph()->set_dataflow_graph_id(graph_id);
  return impl_->Command(cmd, remote_);
}

}  // namespace thund::spark
