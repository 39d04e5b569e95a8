// Arrow types <-> the type names used in pipeline files and SQL schemas.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <arrow/result.h>
#include <arrow/type_fwd.h>

namespace thund {

// Arrow type <-> the type names used in files and SQL (Spark SQL style:
// "bigint", "string", "timestamp", "decimal(10,2)", "array<int>",
// "struct<a: int, b: string>", "map<string,bigint>"). Common aliases such as
// "int64", "varchar", "text" are accepted on input.
arrow::Result<std::shared_ptr<arrow::DataType>> ParseTypeName(std::string_view text);
std::string FormatTypeName(const arrow::DataType& type);


}  // namespace thund
