#include "engine/keyed/keyed_events.h"

namespace thund::engine::keyed {

const char* Name(KeyedEvent::Kind k) {
  switch (k) {
    case KeyedEvent::Kind::kTargetMissing:
      return "target_missing";
    case KeyedEvent::Kind::kTargetEmpty:
      return "target_empty";
    case KeyedEvent::Kind::kTargetLoaded:
      return "target_loaded";
    case KeyedEvent::Kind::kCleanup:
      return "cleanup";
    case KeyedEvent::Kind::kPlacement:
      return "placement";
    case KeyedEvent::Kind::kSettled:
      return "settled";
    case KeyedEvent::Kind::kDeferred:
      return "deferred";
    case KeyedEvent::Kind::kCommitted:
      return "committed";
    case KeyedEvent::Kind::kFallback:
      return "fallback";
    case KeyedEvent::Kind::kTargetChanged:
      return "target_changed";
  }
  return "?";
}

std::string KeyedCounts::ToString() const {
  std::string out = "rows read " + std::to_string(rows_read) + ", skipped as already written " +
                    std::to_string(rows_skipped_existing) + ", skipped as duplicate keys " +
                    std::to_string(rows_skipped_duplicate);
  if (rows_null_key > 0) out += ", dropped for NULL keys " + std::to_string(rows_null_key);
  return out + ", written " + std::to_string(rows_written);
}

}  // namespace thund::engine::keyed
