#include "engine/stream/memory_source.h"

#include <nlohmann/json.hpp>
#include "thund/json_text.h"

namespace thund::engine::stream {

arrow::Result<std::unique_ptr<StreamSource>> MemoryStreamSource::Make(
    const MemorySource& spec, const StreamSourceContext& ctx) {
  const std::string flow = ctx.flow != nullptr ? ctx.flow->name : std::string("?");
  if (ctx.memory_batches == nullptr) {
    return arrow::Status::Invalid("flow '", flow, "': memory source '", spec.name,
                                  "' has no batches; pass them as RunOptions::memory_streams[\"",
                                  spec.name, "\"] when running the pipeline");
  }
  const auto& batches = *ctx.memory_batches;
  std::shared_ptr<arrow::Schema> schema;
  for (size_t i = 0; i < batches.size(); ++i) {
    if (batches[i] == nullptr) {
      return arrow::Status::Invalid("flow '", flow, "': memory source '", spec.name, "': batch ", i,
                                    " is null; pass non-null record batches");
    }
    if (schema == nullptr) {
      schema = batches[i]->schema();
    } else if (!batches[i]->schema()->Equals(*schema, /*check_metadata=*/false)) {
      return arrow::Status::Invalid("flow '", flow, "': memory source '", spec.name, "': batch ", i,
                                    " has columns ", batches[i]->schema()->ToString(),
                                    " but batch 0 has ", schema->ToString(),
                                    "; every batch of a stream must have the same schema");
    }
  }
  if (schema == nullptr && ctx.target != nullptr) schema = ctx.target->schema.arrow;
  return std::unique_ptr<StreamSource>(new MemoryStreamSource(flow, schema, batches));
}

arrow::Result<std::optional<SourceBatch>> MemoryStreamSource::Next(const TriggerLimit& limit) {
  if (next_ >= batches_.size()) return std::nullopt;
  const size_t end = limit.take_all ? batches_.size() : next_ + 1;
  std::vector<std::shared_ptr<arrow::RecordBatch>> taken(batches_.begin() + next_,
                                                         batches_.begin() + end);
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, taken));
  next_ = end;
  SourceBatch out;
  out.rows = std::move(table);
  out.position_summary = "batch=" + std::to_string(next_) + "/" + std::to_string(batches_.size());
  return out;
}

std::string MemoryStreamSource::Position() const {
  if (next_ == 0) return "";
  return JsonText(nlohmann::json{{"batch", next_}});
}

arrow::Status MemoryStreamSource::Restore(const std::string& position) {
  if (position.empty()) {
    next_ = 0;
    return arrow::Status::OK();
  }
  auto doc = nlohmann::json::parse(position, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("batch") ||
      !doc["batch"].is_number_unsigned()) {
    return arrow::Status::Invalid("flow '", flow_, "': '", position,
                                  "' is not a memory-source position (expected {\"batch\": N}); "
                                  "the checkpoint belongs to another kind of source");
  }
  next_ = doc["batch"].get<size_t>();
  return arrow::Status::OK();
}

}  // namespace thund::engine::stream
