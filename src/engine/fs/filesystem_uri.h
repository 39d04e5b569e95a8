// Turning a storage location (a dataset root, a sink path, a checkpoint dir)
// into the arrow::fs::FileSystem that holds it.
//
// Accepted locations:
//   s3://bucket[/prefix]  Arrow's S3FileSystem; path "bucket/prefix" (no
//                         trailing '/'). No query string: use storage options.
//                         s3a:// and s3n:// (Hadoop's spellings, which Spark
//                         users write) are the same location as s3://.
//   file:///abs/path      the local filesystem; path "/abs/path" (%XX decoded;
//                         host empty or "localhost").
//   /abs/path, rel/path   the local filesystem; path made absolute against the
//                         current directory and lexically normalized.
// Any other "scheme://" is an error naming the scheme.
//
// S3 settings, each storage option overriding its environment variable:
//   endpoint           AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL. Default: AWS
//                      itself. "http://host:port" -> plain http; "https://..." or
//                      a bare "host:port" -> https. With an endpoint, buckets are
//                      addressed path-style (host/bucket/key), as MinIO and moto
//                      expect.
//   region             AWS_REGION, then AWS_DEFAULT_REGION. Default: us-east-1.
//   access_key_id      AWS_ACCESS_KEY_ID      } both or neither; when neither is
//   secret_access_key  AWS_SECRET_ACCESS_KEY  } set, Arrow's default AWS chain
//   session_token      AWS_SESSION_TOKEN      } (profile, instance role, ...).
//   allow_http         "true" | "false". true: a bare "host:port" endpoint is
//                      reached over http. false: an http:// endpoint is refused.
//                      Unset: the endpoint's own scheme decides.
// Any other option key is an error naming it. For local locations the keys
// above are accepted and ignored (the same options may travel with either).
//
// Probing: the first ResolveLocation of an s3:// bucket (per settings, per
// process) asks the endpoint whether the bucket exists (one HEAD request), so
// an unreachable endpoint, bad credentials or a missing bucket are reported
// here, naming the location and what to do, rather than at the first write.
// thund never creates buckets.
//
// Lifecycle: the first s3:// location initializes Arrow's S3 support (once per
// process) and registers ShutdownObjectStorage() with std::atexit, so a process
// that used S3 exits cleanly. One S3FileSystem is kept per (endpoint, region,
// credentials) and shared by every location that uses those settings.
//
// Thread-safety: every function here may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include "thund/ir.h"

namespace thund::engine {

struct ResolvedLocation {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string path;  // the location inside `fs` ("bucket/prefix" or "/abs/path")
  bool local = false;
  std::string uri;  // canonical form: "s3://bucket/prefix" or "file:///abs/path"
};

// The S3 settings of a location (see above), for the code that reaches the
// same objects by other means (DuckDB's httpfs: engine/duckdb/object_storage.h).
struct S3Settings {
  std::string scheme = "https";  // of the endpoint: "http" or "https"
  std::string endpoint;          // host[:port]; empty: AWS itself
  std::string region;
  std::string access_key, secret_key, session_token;  // empty: default chain

  std::string Describe() const;
  std::string CacheKey() const;
};
arrow::Result<S3Settings> ReadS3Settings(const std::string& location,
                                         const StringMap& options = {});

// True for the storage option keys above (endpoint, region, ...).
bool IsS3OptionKey(std::string_view key);

// Resolves `location` (see the top of this file). `options`: storage options
// only. Errors name the location.
arrow::Result<ResolvedLocation> ResolveLocation(const std::string& location,
                                                const StringMap& options = {});

// True when `location` starts with an object-store scheme ("s3://", "s3a://"
// or "s3n://", case-insensitive). Purely syntactic; does no I/O.
bool IsObjectStoreUri(std::string_view location);
// An object-store location spelled "s3://..." (anything else unchanged).
std::string ObjectStoreUri(std::string_view location);

// Drops the cached S3 filesystems and finalizes Arrow's S3 support. Called at
// exit automatically; call it earlier to shut down deterministically (e.g.
// before other static destructors run). Idempotent. Afterwards s3:// locations
// no longer resolve (Arrow cannot re-initialize S3 in the same process).
// REQUIRES: no S3 operation is in flight.
void ShutdownObjectStorage();

}  // namespace thund::engine
