// DuckDB's access to object storage.
//
// Paths DuckDB reads or writes itself — s3:// (s3a://, s3n://) in
// read_parquet / read_csv / read_json and their globs, a stored dataset's
// version glob on an s3:// storage root, COPY ... TO — go through DuckDB's
// httpfs extension. thund never downloads it at run time: the bootstrap puts
// the signed httpfs build of DuckDB 1.4.4 (the PyPI package
// duckdb-extension-httpfs) under .deps/duckdb/extensions, the build records
// that directory, an installed thund carries it in P/lib/thund/duckdb/extensions
// (found next to the binary), and THUND_DUCKDB_EXTENSION_DIR overrides both.
//
// EnableObjectStorage loads the extension into a session and creates one S3
// secret from the same S3Settings Arrow's S3 filesystem uses
// (engine/fs/filesystem_uri.h): DuckDB and Arrow see the same endpoint,
// region and credentials, hence the same objects. Without keys the secret
// carries no credentials (public buckets; DuckDB has no AWS default chain
// without its aws extension).
#pragma once

#include <string>

#include <arrow/status.h>

#include "engine/duckdb/duckdb_session.h"
#include "engine/fs/filesystem_uri.h"

namespace thund::engine {

// The directory holding v1.4.4/linux_amd64/httpfs.duckdb_extension.
std::string DuckDbExtensionDir();

// Loads httpfs into `session` (once per session) and (re)creates its S3
// secret. Errors say where the extension was looked for and what to run.
arrow::Status EnableObjectStorage(DuckDbSession& session, const S3Settings& settings);
// The same with the settings of `location` (the AWS_* variables).
arrow::Status EnableObjectStorage(DuckDbSession& session, const std::string& location);

}  // namespace thund::engine
