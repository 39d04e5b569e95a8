#include "engine/fs/link_or_copy.h"

#include <unistd.h>

namespace thund::engine {

arrow::Status LinkOrCopy(arrow::fs::FileSystem& fs, const std::string& from,
                         const std::string& to) {
  if (fs.type_name() == "local" && ::link(from.c_str(), to.c_str()) == 0) {
    return arrow::Status::OK();
  }
  return fs.CopyFile(from, to);
}

}  // namespace thund::engine
