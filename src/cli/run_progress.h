// The progress line of `thund run` (cli/progress_line.h), fed by the run's
// events: flows done of all (batch), triggers done (of --max-triggers when
// given), rows written and their rate, checkpoint bytes written, and the time
// left when it can be known (a capped streaming run). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "cli/progress_line.h"
#include "thund/backend.h"

namespace thund::cli {

class RunProgress {
 public:
  // `line` must outlive this. `flows_total`: the pipeline's flows;
  // `max_triggers`: 0 = uncapped.
  RunProgress(ProgressLine* line, int64_t flows_total, int64_t max_triggers);

  // Counts `e` and redraws the line (rate-limited by the ProgressLine).
  void OnEvent(const RunEvent& e);
  // The line as it would be drawn now.
  std::string Text();

 private:
  std::string TextLocked() const;

  ProgressLine* line_;
  const int64_t flows_total_;
  const int64_t max_triggers_;
  std::mutex mu_;
  int64_t flows_done_ = 0;
  int64_t rows_done_ = 0;     // rows of finished flows and of triggers
  int64_t rows_current_ = 0;  // rows of the batch flow running now
  int64_t triggers_ = 0;      // highest trigger index seen + 1
  int64_t bytes_ = 0;         // checkpoint bytes written
  std::set<std::string> streaming_flows_;  // flows that reported triggers
};

}  // namespace thund::cli
