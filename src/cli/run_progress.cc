#include "cli/run_progress.h"

#include <algorithm>

namespace thund::cli {

RunProgress::RunProgress(ProgressLine* line, int64_t flows_total, int64_t max_triggers)
    : line_(line), flows_total_(flows_total), max_triggers_(max_triggers) {}

void RunProgress::OnEvent(const RunEvent& e) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(mu_);
    switch (e.kind) {
      case RunEvent::Kind::kFlowStarted:
        rows_current_ = 0;
        break;
      case RunEvent::Kind::kFlowProgress:
        rows_current_ = e.rows_out;
        break;
      case RunEvent::Kind::kFlowFinished:
        ++flows_done_;
        // A streaming flow's rows were counted per trigger.
        if (!streaming_flows_.count(e.flow)) rows_done_ += e.rows_out;
        rows_current_ = 0;
        break;
      case RunEvent::Kind::kFlowSkipped:
      case RunEvent::Kind::kFlowFailed:
        ++flows_done_;
        rows_current_ = 0;
        break;
      case RunEvent::Kind::kTrigger:
        streaming_flows_.insert(e.flow);
        triggers_ = std::max(triggers_, e.trigger + 1);
        rows_done_ += e.rows_out;
        break;
      case RunEvent::Kind::kCheckpoint:
        bytes_ += e.count;
        break;
      default:
        break;
    }
    text = TextLocked();
  }
  line_->Update(text);
}

std::string RunProgress::Text() {
  std::lock_guard<std::mutex> lock(mu_);
  return TextLocked();
}

std::string RunProgress::TextLocked() const {
  const double elapsed = std::max(line_->Elapsed(), 1e-3);
  const int64_t rows = rows_done_ + rows_current_;
  std::string s = "thund run: ";
  if (triggers_ > 0) {
    s += "trigger " + std::to_string(triggers_);
    if (max_triggers_ > 0) s += "/" + std::to_string(max_triggers_);
  } else {
    s += std::to_string(std::min(flows_done_, flows_total_)) + "/" +
         std::to_string(flows_total_) + " flows";
  }
  s += " | " + HumanCount(static_cast<double>(rows)) + " rows (" +
       HumanCount(static_cast<double>(rows) / elapsed) + " rows/s)";
  if (bytes_ > 0) s += " | " + HumanBytes(bytes_) + " written";
  s += " | " + HumanDuration(elapsed);
  if (max_triggers_ > 0 && triggers_ > 0 && triggers_ < max_triggers_) {
    const double left = elapsed / static_cast<double>(triggers_) *
                        static_cast<double>(max_triggers_ - triggers_);
    s += " | ~" + HumanDuration(left) + " left";
  }
  return s;
}

}  // namespace thund::cli
