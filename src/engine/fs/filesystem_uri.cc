#include "engine/fs/filesystem_uri.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <arrow/filesystem/localfs.h>
#include <arrow/filesystem/s3fs.h>

namespace thund::engine {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The scheme of "scheme://rest" (lowercased), or nullopt for a plain path.
std::optional<std::string> SchemeOf(std::string_view location) {
  size_t sep = location.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  if (!std::isalpha(static_cast<unsigned char>(location[0]))) return std::nullopt;
  for (char c : location.substr(0, sep)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return std::nullopt;
    }
  }
  return Lower(location.substr(0, sep));
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// ------------------------------------------------------------------ local --

arrow::Result<std::string> PercentDecode(const std::string& location, std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      return arrow::Status::Invalid(location, ": bad %-escape in file:// URI",
                                    " (write '%' as %25, or pass a plain path)");
    }
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

std::string FileUri(const std::string& abs_path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : abs_path) {
    if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) !=
                               std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

arrow::Result<ResolvedLocation> ResolveLocal(const std::string& location, std::string path) {
  if (path.empty()) return arrow::Status::Invalid("empty storage location");
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) return arrow::Status::IOError(location, ": cannot make absolute: ", ec.message());
  std::string norm = abs.lexically_normal().string();
  while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
  static const auto local = std::make_shared<arrow::fs::LocalFileSystem>();
  return ResolvedLocation{local, norm, true, FileUri(norm)};
}

arrow::Result<ResolvedLocation> ResolveFileUri(const std::string& location) {
  std::string_view rest = std::string_view(location).substr(std::string_view("file://").size());
  size_t slash = rest.find('/');
  std::string host = Lower(rest.substr(0, slash));
  if (slash == std::string_view::npos || (!host.empty() && host != "localhost")) {
    return arrow::Status::Invalid(location, ": a file:// URI needs an absolute path on this ",
                                  "machine (file:///abs/path)");
  }
  ARROW_ASSIGN_OR_RAISE(std::string path, PercentDecode(location, rest.substr(slash)));
  return ResolveLocal(location, std::move(path));
}

// --------------------------------------------------------------------- S3 --

}  // namespace

std::string S3Settings::Describe() const {
  return endpoint.empty() ? "AWS S3 (region " + region + ")" : scheme + "://" + endpoint;
}

std::string S3Settings::CacheKey() const {
  return scheme + '\n' + endpoint + '\n' + region + '\n' + access_key + '\n' + secret_key +
         '\n' + session_token;
}

arrow::Result<S3Settings> ReadS3Settings(const std::string& location, const StringMap& options) {
  auto pick = [&](const char* key, std::initializer_list<const char*> vars) {
    if (auto it = options.find(key); it != options.end()) return it->second;
    for (const char* v : vars) {
      if (std::string s = Getenv(v); !s.empty()) return s;
    }
    return std::string();
  };
  S3Settings s;
  const std::string given = pick("endpoint", {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"});
  std::string endpoint = given;
  std::optional<bool> allow_http;
  if (auto it = options.find("allow_http"); it != options.end()) {
    std::string v = Lower(it->second);
    if (v != "true" && v != "false") {
      return arrow::Status::Invalid(location, ": storage option allow_http must be 'true' or ",
                                    "'false', got '", it->second, "'");
    }
    allow_http = v == "true";
  }
  std::string lowered = Lower(endpoint);
  if (lowered.starts_with("http://")) {
    if (allow_http == false) {
      return arrow::Status::Invalid(location, ": endpoint ", endpoint, " is plain http but ",
                                    "allow_http is 'false' (use https:// or allow_http 'true')");
    }
    s.scheme = "http";
    endpoint = endpoint.substr(7);
  } else if (lowered.starts_with("https://")) {
    endpoint = endpoint.substr(8);
  } else if (!endpoint.empty() && allow_http == true) {
    s.scheme = "http";
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (endpoint.find('/') != std::string::npos || endpoint.find("://") != std::string::npos) {
    return arrow::Status::Invalid(location, ": endpoint '", given, "' must look ",
                                  "like http://host:port or https://host (no path)");
  }
  s.endpoint = endpoint;
  s.region = pick("region", {"AWS_REGION", "AWS_DEFAULT_REGION"});
  if (s.region.empty()) s.region = "us-east-1";
  s.access_key = pick("access_key_id", {"AWS_ACCESS_KEY_ID"});
  s.secret_key = pick("secret_access_key", {"AWS_SECRET_ACCESS_KEY"});
  if (s.access_key.empty() != s.secret_key.empty()) {
    return arrow::Status::Invalid(
        location, ": ", s.access_key.empty() ? "secret_access_key" : "access_key_id",
        " is set but ", s.access_key.empty() ? "access_key_id" : "secret_access_key",
        " is not: set both (storage options or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY),",
        " or neither to use the default AWS credential chain");
  }
  if (!s.access_key.empty()) s.session_token = pick("session_token", {"AWS_SESSION_TOKEN"});
  if (s.access_key.empty() && options.count("session_token")) {
    return arrow::Status::Invalid(location, ": storage option session_token needs ",
                                  "access_key_id and secret_access_key");
  }
  return s;
}

namespace {

// Process-wide S3 state. Constructed before ShutdownObjectStorage is registered
// with atexit, hence destroyed after that handler runs.
struct ObjectStorage {
  std::mutex mu;
  bool atexit_registered = false;
  std::map<std::string, std::shared_ptr<arrow::fs::FileSystem>> filesystems;
  std::set<std::string> probed;  // CacheKey() + '\n' + bucket, known to exist
};

ObjectStorage& Storage() {
  static ObjectStorage storage;
  return storage;
}

void ShutdownAtExit() { ShutdownObjectStorage(); }

arrow::Result<std::shared_ptr<arrow::fs::FileSystem>> S3FileSystemFor(const std::string& location,
                                                                      const S3Settings& s) {
  ObjectStorage& st = Storage();
  std::lock_guard<std::mutex> lock(st.mu);
  if (auto it = st.filesystems.find(s.CacheKey()); it != st.filesystems.end()) return it->second;
  if (arrow::fs::IsS3Finalized()) {
    return arrow::Status::Invalid(location, ": object storage was already shut down in this ",
                                  "process (ShutdownObjectStorage)");
  }
  arrow::Status init = arrow::fs::EnsureS3Initialized();
  if (!init.ok()) return init.WithMessage(location, ": cannot initialize S3: ", init.message());
  auto opts = s.access_key.empty()
                  ? arrow::fs::S3Options::Defaults()
                  : arrow::fs::S3Options::FromAccessKey(s.access_key, s.secret_key,
                                                        s.session_token);
  opts.region = s.region;
  opts.endpoint_override = s.endpoint;
  opts.scheme = s.scheme;
  opts.force_virtual_addressing = false;  // path-style whenever an endpoint is given
  auto made = arrow::fs::S3FileSystem::Make(opts);
  if (!made.ok()) {
    return made.status().WithMessage(location, ": cannot set up S3 for ", s.Describe(), ": ",
                                     made.status().message());
  }
  // Registered only now: Arrow builds some of the static state that FinalizeS3
  // uses (its client finalizer) with the first client, and statics built after
  // an atexit registration are destroyed before that handler runs.
  if (!st.atexit_registered) {
    std::atexit(ShutdownAtExit);
    st.atexit_registered = true;
  }
  st.filesystems.emplace(s.CacheKey(), *made);
  return *made;
}

arrow::Status ProbeBucket(const std::string& location, const S3Settings& s,
                          arrow::fs::FileSystem& fs, const std::string& bucket) {
  const std::string key = s.CacheKey() + '\n' + bucket;
  {
    std::lock_guard<std::mutex> lock(Storage().mu);
    if (Storage().probed.count(key)) return arrow::Status::OK();
  }
  auto info = fs.GetFileInfo(bucket);
  if (!info.ok()) {
    const std::string& msg = info.status().message();
    if (msg.find("NETWORK_CONNECTION") != std::string::npos ||
        msg.find("curlCode") != std::string::npos) {
      return arrow::Status::IOError(
          location, ": could not reach endpoint ", s.Describe(),
          " (set AWS_ENDPOINT_URL or the storage option 'endpoint' to a running S3 endpoint): ",
          msg);
    }
    return arrow::Status::IOError(location, ": cannot access bucket '", bucket, "' at ",
                                  s.Describe(), " (check the credentials: AWS_ACCESS_KEY_ID / ",
                                  "AWS_SECRET_ACCESS_KEY or the storage options): ", msg);
  }
  if (info->type() == arrow::fs::FileType::NotFound) {
    return arrow::Status::IOError(location, ": bucket '", bucket, "' does not exist at ",
                                  s.Describe(), " (create it first; thund never creates buckets)");
  }
  std::lock_guard<std::mutex> lock(Storage().mu);
  Storage().probed.insert(key);
  return arrow::Status::OK();
}

arrow::Result<ResolvedLocation> ResolveS3(const std::string& location, const StringMap& options) {
  std::string path = location.substr(location.find("://") + 3);
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string bucket = path.substr(0, path.find('/'));
  if (bucket.empty()) {
    return arrow::Status::Invalid(location, ": no bucket (write s3://bucket/prefix)");
  }
  if (path.find('?') != std::string::npos || path.find('#') != std::string::npos) {
    return arrow::Status::Invalid(location, ": query strings are not supported in s3:// ",
                                  "locations (pass settings as storage options)");
  }
  if (path.find("//") != std::string::npos) {
    return arrow::Status::Invalid(location, ": empty path segment ('//')");
  }
  ARROW_ASSIGN_OR_RAISE(S3Settings settings, ReadS3Settings(location, options));
  ARROW_ASSIGN_OR_RAISE(auto fs, S3FileSystemFor(location, settings));
  ARROW_RETURN_NOT_OK(ProbeBucket(location, settings, *fs, bucket));
  return ResolvedLocation{std::move(fs), path, false, "s3://" + path};
}

const std::set<std::string>& KnownOptionKeys() {
  static const std::set<std::string> keys = {"endpoint",          "region",
                                             "access_key_id",     "secret_access_key",
                                             "session_token",     "allow_http"};
  return keys;
}

}  // namespace

arrow::Result<ResolvedLocation> ResolveLocation(const std::string& location,
                                                const StringMap& options) {
  for (const auto& [key, value] : options) {
    if (!KnownOptionKeys().count(key)) {
      return arrow::Status::Invalid(location, ": unknown storage option '", key, "' (known: ",
                                    "endpoint, region, access_key_id, secret_access_key, ",
                                    "session_token, allow_http)");
    }
  }
  std::optional<std::string> scheme = SchemeOf(location);
  if (!scheme) return ResolveLocal(location, location);
  if (*scheme == "file") return ResolveFileUri(location);
  if (IsObjectStoreUri(location)) return ResolveS3(location, options);
  return arrow::Status::Invalid(location, ": unsupported storage scheme '", *scheme,
                                "://' (supported: s3:// (also s3a://, s3n://), file://, or a ",
                                "local path)");
}

bool IsS3OptionKey(std::string_view key) { return KnownOptionKeys().count(std::string(key)) > 0; }

bool IsObjectStoreUri(std::string_view location) {
  std::optional<std::string> scheme = SchemeOf(location);
  return scheme && (*scheme == "s3" || *scheme == "s3a" || *scheme == "s3n");
}

std::string ObjectStoreUri(std::string_view location) {
  if (!IsObjectStoreUri(location)) return std::string(location);
  return "s3://" + std::string(location.substr(location.find("://") + 3));
}

void ShutdownObjectStorage() {
  ObjectStorage& st = Storage();
  std::lock_guard<std::mutex> lock(st.mu);
  st.filesystems.clear();
  st.probed.clear();
  if (arrow::fs::IsS3Initialized()) (void)arrow::fs::EnsureS3Finalized();
}

}  // namespace thund::engine
