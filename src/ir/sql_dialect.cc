#include "thund/sql_dialect.h"

namespace thund {

// Placeholder: the translation tables land with the SQL authoring surface.
arrow::Result<std::string> SparkToDuckDb(std::string_view spark_sql) { return std::string(spark_sql); }

}  // namespace thund
