#include "engine/duckdb/object_storage.h"

#include <cstdlib>
#include <filesystem>

#include "engine/duckdb/sql_quote.h"
#include "ir/installed_files.h"

#ifndef THUND_DUCKDB_EXTENSION_DIR
#define THUND_DUCKDB_EXTENSION_DIR ""
#endif

namespace thund::engine {

std::string DuckDbExtensionDir() {
  if (const char* dir = std::getenv("THUND_DUCKDB_EXTENSION_DIR"); dir && *dir) return dir;
  // An installed prefix carries the extension in lib/thund/duckdb/extensions.
  return InstalledFileOr("lib/thund/duckdb/extensions", THUND_DUCKDB_EXTENSION_DIR);
}

arrow::Status EnableObjectStorage(DuckDbSession& session, const S3Settings& settings) {
  const std::string dir = DuckDbExtensionDir();
  const std::string path = dir + "/v1.4.4/linux_amd64/httpfs.duckdb_extension";
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_regular_file(path, ec)) {
    return arrow::Status::IOError(
        "reading object storage through DuckDB needs its httpfs extension, which is not at ",
        dir.empty() ? std::string("(no directory configured)") : path,
        " (run scripts/bootstrap.sh, or set THUND_DUCKDB_EXTENSION_DIR to the directory ",
        "holding v1.4.4/linux_amd64/httpfs.duckdb_extension)");
  }
  arrow::Status loaded = session.Execute("LOAD " + QuoteString(path));
  if (!loaded.ok()) {
    return loaded.WithMessage("cannot load DuckDB's httpfs extension from ", path, ": ",
                              loaded.message());
  }
  std::string secret = "CREATE OR REPLACE TEMPORARY SECRET thund_s3 (TYPE s3, REGION " +
                       QuoteString(settings.region);
  if (!settings.access_key.empty()) {
    secret += ", KEY_ID " + QuoteString(settings.access_key) + ", SECRET " +
              QuoteString(settings.secret_key);
    if (!settings.session_token.empty()) {
      secret += ", SESSION_TOKEN " + QuoteString(settings.session_token);
    }
  }
  if (!settings.endpoint.empty()) {
    // A custom endpoint (MinIO, moto, ...): path-style addressing, as Arrow's
    // filesystem uses for it.
    secret += ", ENDPOINT " + QuoteString(settings.endpoint) + ", URL_STYLE 'path'";
  }
  secret += std::string(", USE_SSL ") + (settings.scheme == "https" ? "true" : "false") + ")";
  arrow::Status made = session.Execute(secret);
  if (!made.ok()) {
    return made.WithMessage("cannot set DuckDB's S3 settings for ", settings.Describe(), ": ",
                            made.message());
  }
  return arrow::Status::OK();
}

arrow::Status EnableObjectStorage(DuckDbSession& session, const std::string& location) {
  ARROW_ASSIGN_OR_RAISE(S3Settings settings, ReadS3Settings(location));
  return EnableObjectStorage(session, settings);
}

}  // namespace thund::engine
