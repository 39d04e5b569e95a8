// Internal: IR -> OutNode for the canonical pipeline file. Key order follows
// the k*Keys lists in decode.h; values equal to the IR default are omitted,
// except required keys (written even when empty so that every IR round-trips).
#pragma once

#include "authoring/file/yaml_out.h"
#include "thund/ir.h"

namespace thund::file {

OutNode EncodeDataset(const Dataset& d);
OutNode EncodeFlow(const Flow& f);
// A duration as "10s" (or integer milliseconds when the text form would not
// read back exactly).
OutNode EncodeDuration(int64_t ms);
OutNode EncodeStringMap(const StringMap& m);

}  // namespace thund::file
