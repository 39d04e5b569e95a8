#include "sql/duckdb_types.h"

#include <arrow/type.h>

namespace thund::sql {

std::string QuoteIdent(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    out.push_back(c);
    if (c == '"') out.push_back('"');
  }
  return out + "\"";
}

std::string DuckDbTypeName(const arrow::DataType& type) {
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
    case Type::HALF_FLOAT:
    case Type::FLOAT: return "FLOAT";
    case Type::DOUBLE: return "DOUBLE";
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW: return "VARCHAR";
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::FIXED_SIZE_BINARY: return "BLOB";
    case Type::DATE32:
    case Type::DATE64: return "DATE";
    case Type::TIME32:
    case Type::TIME64: return "TIME";
    case Type::DURATION:
    case Type::INTERVAL_MONTH_DAY_NANO: return "INTERVAL";
    case Type::NA: return "NULL";
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(type);
      if (!ts.timezone().empty()) return "TIMESTAMPTZ";
      switch (ts.unit()) {
        case arrow::TimeUnit::SECOND: return "TIMESTAMP_S";
        case arrow::TimeUnit::MILLI: return "TIMESTAMP_MS";
        case arrow::TimeUnit::NANO: return "TIMESTAMP_NS";
        default: return "TIMESTAMP";
      }
    }
    case Type::DECIMAL128:
    case Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::DecimalType&>(type);
      return "DECIMAL(" + std::to_string(d.precision()) + ", " + std::to_string(d.scale()) + ")";
    }
    case Type::LIST:
    case Type::LARGE_LIST:
    case Type::FIXED_SIZE_LIST:
    case Type::LIST_VIEW:
      return DuckDbTypeName(*static_cast<const arrow::BaseListType&>(type).value_type()) + "[]";
    case Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(type);
      return "MAP(" + DuckDbTypeName(*m.key_type()) + ", " + DuckDbTypeName(*m.item_type()) + ")";
    }
    case Type::STRUCT: {
      std::string out = "STRUCT(";
      for (int k = 0; k < type.num_fields(); ++k) {
        if (k) out += ", ";
        out += QuoteIdent(type.field(k)->name()) + " " + DuckDbTypeName(*type.field(k)->type());
      }
      return out + ")";
    }
    case Type::DICTIONARY:
      return DuckDbTypeName(*static_cast<const arrow::DictionaryType&>(type).value_type());
    default:
      return type.ToString();
  }
}

}  // namespace thund::sql
