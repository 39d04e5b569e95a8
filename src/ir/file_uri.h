// Internal: `file:` URIs as local paths. `spark-pipelines init` writes the
// storage root as `file:///abs/path`, and Spark projects name files that way,
// so wherever thund takes a local path it also takes the URI. Not public API.
#pragma once

#include <string>
#include <string_view>

#include <arrow/result.h>

namespace thund::internal {

// True when `location` starts with the scheme `file:` (any case).
bool IsFileUri(std::string_view location);

// The local path `location` names: for a `file:` URI (file:///abs,
// file://localhost/abs, file:/abs) the absolute path with %XX escapes decoded;
// anything else comes back unchanged. Invalid for a `file:` URI that names
// another host (file://server/x), has no absolute path (file:x) or carries a
// malformed %-escape.
arrow::Result<std::string> LocalPathOf(std::string_view location);

}  // namespace thund::internal
