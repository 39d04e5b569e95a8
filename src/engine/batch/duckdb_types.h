// Arrow types as DuckDB type names (for read_csv `types=`, json_transform, CAST).
#pragma once

#include <optional>
#include <string>

#include <arrow/type_fwd.h>

namespace thund::engine::batch {

// "BIGINT", "DECIMAL(12,2)", "TIMESTAMP", ... for scalar types DuckDB reads
// from text; nullopt for nested and exotic types.
std::optional<std::string> DuckDbScalarTypeName(const arrow::DataType& type);

}  // namespace thund::engine::batch
