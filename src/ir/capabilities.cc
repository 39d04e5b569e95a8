// RequiredCapabilities: what a backend must support to run one flow. The
// vocabulary is documented in thund/validate.h.
#include <set>

#include "ir/validate_internal.h"

namespace thund::internal {

std::vector<std::string> RequiredCapabilitiesGiven(const Pipeline& p, const Flow& flow,
                                                   bool streaming) {
  std::set<std::string> caps;
  if (streaming) caps.insert("streaming");
  if (!flow.sql.empty() && !streaming) caps.insert("batch-sql");
  if (!flow.sql.empty() && streaming) caps.insert("streaming-sql");
  if (flow.source) caps.insert("source:" + SourceKindName(*flow.source));
  if (flow.once) caps.insert("once");
  if (flow.streaming) {
    const StreamingSpec& s = *flow.streaming;
    // Only a mode the flow sets itself: the run-wide default is not known here.
    if (s.mode == StreamingMode::kIncremental) caps.insert("mode:incremental");
    if (s.trigger.kind == TriggerKind::kProcessingTime) caps.insert("trigger:processing_time");
    if (s.output_mode != OutputMode::kAppend) {
      caps.insert(std::string("output:") + Name(s.output_mode));
    }
    if (s.watermark) caps.insert("watermark");
    if (s.window) caps.insert(std::string("window:") + Name(s.window->kind));
  }
  if (flow.cdc) caps.insert(flow.cdc->scd_type == 2 ? "cdc:scd2" : "cdc:scd1");
  if (const Dataset* target = p.FindDataset(flow.target)) {
    for (const auto& e : target->expectations) {
      caps.insert(std::string("expectations:") + Name(e.action));
    }
    if (target->keyed_write.enabled()) caps.insert("keyed-write");
    if (target->materialization == Materialization::kIncremental &&
        target->kind == DatasetKind::kMaterializedView) {
      caps.insert("materialization:incremental");
    }
    if (target->kind == DatasetKind::kSink) {
      caps.insert(std::string("sink:") +
                  Name(target->storage.format.value_or(FileFormat::kParquet)));
    }
  }
  return {caps.begin(), caps.end()};
}

}  // namespace thund::internal
