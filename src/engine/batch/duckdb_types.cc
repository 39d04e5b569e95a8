#include "engine/batch/duckdb_types.h"

#include <arrow/type.h>

namespace thund::engine::batch {

std::optional<std::string> DuckDbScalarTypeName(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::BOOL: return "BOOLEAN";
    case Type::INT8: return "TINYINT";
    case Type::INT16: return "SMALLINT";
    case Type::INT32: return "INTEGER";
    case Type::INT64: return "BIGINT";
    case Type::UINT8: return "UTINYINT";
    case Type::UINT16: return "USMALLINT";
    case Type::UINT32: return "UINTEGER";
    case Type::UINT64: return "UBIGINT";
    case Type::FLOAT: return "FLOAT";
    case Type::DOUBLE: return "DOUBLE";
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW: return "VARCHAR";
    case Type::BINARY:
    case Type::LARGE_BINARY: return "BLOB";
    case Type::DATE32:
    case Type::DATE64: return "DATE";
    case Type::TIME32:
    case Type::TIME64: return "TIME";
    case Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Type&>(type);
      return "DECIMAL(" + std::to_string(d.precision()) + "," + std::to_string(d.scale()) + ")";
    }
    case Type::TIMESTAMP: {
      const auto& t = static_cast<const arrow::TimestampType&>(type);
      if (!t.timezone().empty()) return "TIMESTAMPTZ";
      switch (t.unit()) {
        case arrow::TimeUnit::SECOND: return "TIMESTAMP_S";
        case arrow::TimeUnit::MILLI: return "TIMESTAMP_MS";
        case arrow::TimeUnit::MICRO: return "TIMESTAMP";
        case arrow::TimeUnit::NANO: return "TIMESTAMP_NS";
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace thund::engine::batch
