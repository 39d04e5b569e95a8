#include "engine/duckdb/duckdb_status.h"

#include <cstring>

#include <nlohmann/json.hpp>

namespace thund::engine {
namespace {

arrow::StatusCode CodeFor(duckdb_error_type type) {
  switch (type) {
    case DUCKDB_ERROR_IO:
    case DUCKDB_ERROR_HTTP:
    case DUCKDB_ERROR_NETWORK:
    case DUCKDB_ERROR_PERMISSION:
      return arrow::StatusCode::IOError;
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return arrow::StatusCode::OutOfMemory;
    case DUCKDB_ERROR_INTERRUPT:
      return arrow::StatusCode::Cancelled;
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return arrow::StatusCode::NotImplemented;
    case DUCKDB_ERROR_INTERNAL:
    case DUCKDB_ERROR_FATAL:
      return arrow::StatusCode::UnknownError;
    default:
      return arrow::StatusCode::Invalid;
  }
}

const char* TypeName(duckdb_error_type type) {
  switch (type) {
    case DUCKDB_ERROR_PARSER:
      return "parser";
    case DUCKDB_ERROR_SYNTAX:
      return "syntax";
    case DUCKDB_ERROR_BINDER:
      return "binder";
    case DUCKDB_ERROR_CATALOG:
      return "catalog";
    case DUCKDB_ERROR_CONVERSION:
      return "conversion";
    case DUCKDB_ERROR_CONSTRAINT:
      return "constraint";
    case DUCKDB_ERROR_INVALID_INPUT:
      return "invalid input";
    case DUCKDB_ERROR_OUT_OF_RANGE:
      return "out of range";
    case DUCKDB_ERROR_IO:
      return "io";
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case DUCKDB_ERROR_INTERRUPT:
      return "interrupt";
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return "not implemented";
    case DUCKDB_ERROR_INTERNAL:
      return "internal";
    default:
      return nullptr;
  }
}

// The string member `key` of `doc`, or "" when it is missing or not a string.
std::string StringMember(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string ReadableDuckDbMessage(std::string_view message) {
  if (message.empty() || message.front() != '{') return std::string(message);
  // Parsed without exceptions: text that is not a JSON object comes back as is.
  const nlohmann::json doc = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::string(message);
  std::string text = StringMember(doc, "exception_message");
  if (text.empty()) return std::string(message);
  std::string type = StringMember(doc, "exception_type");
  return type.empty() ? text : type + ": " + text;
}

std::string DuckDbErrorDetail::ToString() const {
  const char* name = TypeName(type_);
  return std::string("duckdb error type ") +
         (name != nullptr ? name : std::to_string(static_cast<int>(type_)));
}

const DuckDbErrorDetail* GetDuckDbErrorDetail(const arrow::Status& st) {
  const auto& detail = st.detail();
  if (detail == nullptr || std::strcmp(detail->type_id(), DuckDbErrorDetail::kTypeId) != 0) {
    return nullptr;
  }
  return static_cast<const DuckDbErrorDetail*>(detail.get());
}

arrow::Status DuckDbError(duckdb_error_type type, std::string_view message,
                          std::string_view context) {
  std::string text(context);
  if (!text.empty()) text += ": ";
  text += message.empty() ? std::string("unknown DuckDB error") : ReadableDuckDbMessage(message);
  return arrow::Status(CodeFor(type), std::move(text),
                       std::make_shared<DuckDbErrorDetail>(type, std::string(message)));
}

arrow::Status ConsumeErrorData(duckdb_error_data error, std::string_view context) {
  if (error == nullptr) return arrow::Status::OK();
  arrow::Status st = arrow::Status::OK();
  if (duckdb_error_data_has_error(error)) {
    const char* msg = duckdb_error_data_message(error);
    st = DuckDbError(duckdb_error_data_error_type(error), msg == nullptr ? "" : msg, context);
  }
  duckdb_destroy_error_data(&error);
  return st;
}

}  // namespace thund::engine
