// Flow bodies are stored in the IR exactly as the user wrote them (Spark SQL as
// SDP users write it, plus thund's extensions). Before DuckDB sees a body —
// to infer inputs, to check it, to run it — it goes through this translation.
#pragma once

#include <string>
#include <string_view>

#include <arrow/result.h>

namespace thund {

// Rewrites the Spark-SQL forms DuckDB does not accept into DuckDB SQL
// (`STREAM(x)` / `STREAM x` -> `x`, ...; the full list is in docs/sql.md).
// Text that is already DuckDB SQL comes back unchanged. Idempotent.
// Thread-safe.
arrow::Result<std::string> SparkToDuckDb(std::string_view spark_sql);

}  // namespace thund
