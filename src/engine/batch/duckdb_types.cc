#include "engine/batch/duckdb_types.h"

#include <arrow/type.h>

#include "sql/duckdb_types.h"

namespace thund::engine::batch {

std::optional<std::string> DuckDbScalarTypeName(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::BOOL:
    case Type::INT8:
    case Type::INT16:
    case Type::INT32:
    case Type::INT64:
    case Type::UINT8:
    case Type::UINT16:
    case Type::UINT32:
    case Type::UINT64:
    case Type::FLOAT:
    case Type::DOUBLE:
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::DATE32:
    case Type::DATE64:
    case Type::TIME32:
    case Type::TIME64:
    case Type::DECIMAL128:
    case Type::TIMESTAMP:
      return sql::DuckDbTypeName(type);  // the one Arrow -> DuckDB spelling
    default:
      return std::nullopt;
  }
}

}  // namespace thund::engine::batch
