// Text and JSON forms of RunEvent and RunSummary (declared in thund/backend.h).
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "thund/backend.h"
#include "thund/json_text.h"

namespace thund {
namespace {

std::string Seconds(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

std::string FlowLabel(const RunEvent& e) {
  std::string s = "flow '" + e.flow + "'";
  if (!e.dataset.empty() && e.dataset != e.flow) s += " -> " + e.dataset;
  return s;
}

}  // namespace

const char* Name(RunPhase p) {
  switch (p) {
    case RunPhase::kStarting: return "starting";
    case RunPhase::kPlanning: return "planning";
    case RunPhase::kRunning: return "running";
    case RunPhase::kCompleted: return "completed";
    case RunPhase::kFailed: return "failed";
    case RunPhase::kCanceled: return "canceled";
  }
  return "?";
}

namespace {

constexpr std::pair<DatasetStatus, const char*> kDatasetStatuses[] = {
    {DatasetStatus::kComputed, "computed"},
    {DatasetStatus::kUpToDate, "up_to_date"},
    {DatasetStatus::kFailed, "failed"},
    {DatasetStatus::kSkipped, "skipped"}};

}  // namespace

const char* Name(DatasetStatus s) {
  for (const auto& [value, name] : kDatasetStatuses) {
    if (value == s) return name;
  }
  return "?";
}

std::optional<DatasetStatus> ParseDatasetStatus(std::string_view s) {
  for (const auto& [value, name] : kDatasetStatuses) {
    if (s == name) return value;
  }
  return std::nullopt;
}

const char* RunEvent::KindName(Kind k) {
  switch (k) {
    case Kind::kPhase: return "phase";
    case Kind::kFlowStarted: return "flow_started";
    case Kind::kFlowProgress: return "flow_progress";
    case Kind::kFlowFinished: return "flow_finished";
    case Kind::kFlowSkipped: return "flow_skipped";
    case Kind::kFlowFailed: return "flow_failed";
    case Kind::kExpectation: return "expectation";
    case Kind::kFallback: return "fallback";
    case Kind::kTrigger: return "trigger";
    case Kind::kLateRows: return "late_rows";
    case Kind::kCheckpoint: return "checkpoint";
    case Kind::kRecovery: return "recovery";
    case Kind::kMessage: return "message";
  }
  return "?";
}

std::string RunEvent::ToString() const {
  switch (kind) {
    case Kind::kPhase: return std::string("phase: ") + Name(phase) + (message.empty() ? "" : " (" + message + ")");
    case Kind::kFlowStarted: return FlowLabel(*this) + ": started";
    case Kind::kFlowProgress:
      return FlowLabel(*this) + ": " + std::to_string(rows_in) + " rows in, " +
             std::to_string(rows_out) + " out (" + Seconds(elapsed_ms) + ")";
    case Kind::kFlowFinished:
      return FlowLabel(*this) + ": done, " + std::to_string(rows_in) + " rows in, " +
             std::to_string(rows_out) + " written (" + Seconds(elapsed_ms) + ")" +
             (message.empty() ? "" : "; " + message);
    case Kind::kFlowSkipped: return FlowLabel(*this) + ": skipped (" + message + ")";
    case Kind::kFlowFailed: return FlowLabel(*this) + ": FAILED: " + message;
    case Kind::kExpectation:
      return "expectation '" + name + "' on " + dataset + " (" + action + "): " +
             std::to_string(count) + " of " + std::to_string(rows_in) + " rows violate it";
    case Kind::kFallback: return FlowLabel(*this) + ": fallback: " + message;
    case Kind::kTrigger: {
      std::string out = FlowLabel(*this) + ": trigger " + std::to_string(trigger) + ", " +
                        std::to_string(rows_in) + " rows in, " + std::to_string(rows_out) +
                        " out (" + Seconds(elapsed_ms) + ")";
      for (const auto& [source, position] : positions) out += ", " + source + " at " + position;
      return out + (message.empty() ? "" : "; " + message);
    }
    case Kind::kLateRows:
      return FlowLabel(*this) + ": " + std::to_string(count) +
             (message.empty() ? " late rows dropped" : " " + message);
    case Kind::kCheckpoint:
      return (flow.empty() ? std::string("pipeline") : FlowLabel(*this)) + ": checkpoint epoch " +
             std::to_string(epoch) + (message.empty() ? "" : " (" + message + ")");
    case Kind::kRecovery: return "recovery: " + message;
    case Kind::kMessage: return (flow.empty() ? std::string() : FlowLabel(*this) + ": ") + message;
  }
  return message;
}

std::string RunEvent::ToJson() const {
  nlohmann::ordered_json j;
  j["event"] = KindName(kind);
  j["time_ms"] = time_ms;
  if (kind == Kind::kPhase) j["phase"] = Name(phase);
  if (!flow.empty()) j["flow"] = flow;
  if (!dataset.empty()) j["dataset"] = dataset;
  if (!name.empty()) j["name"] = name;
  if (!action.empty()) j["action"] = action;
  if (rows_in || kind == Kind::kFlowFinished || kind == Kind::kExpectation) j["rows_in"] = rows_in;
  if (rows_out || kind == Kind::kFlowFinished) j["rows_out"] = rows_out;
  if (count || kind == Kind::kExpectation) j["count"] = count;
  if (elapsed_ms || kind == Kind::kFlowFinished) j["elapsed_ms"] = elapsed_ms;
  if (kind == Kind::kTrigger) j["trigger"] = trigger;
  if (kind == Kind::kCheckpoint || kind == Kind::kRecovery) j["epoch"] = epoch;
  if (!positions.empty()) j["positions"] = positions;
  if (!message.empty()) j["message"] = message;
  return JsonText(j);
}

std::string RunSummary::ToString() const {
  std::string out = "run " + run_id + " of pipeline '" + pipeline + "': " + Name(status) +
                    " in " + Seconds(duration_ms) + (mode.empty() ? "" : " (" + mode + ")") + "\n";
  size_t width = 7;
  for (const auto& d : datasets) width = std::max(width, d.dataset.size());
  char line[512];
  std::snprintf(line, sizeof(line), "  %-*s  %-10s  %10s  %s\n", static_cast<int>(width),
                "dataset", "status", "rows", "why");
  out += line;
  for (const auto& d : datasets) {
    std::string rows = d.status == DatasetStatus::kComputed ? std::to_string(d.rows_written) : "-";
    std::snprintf(line, sizeof(line), "  %-*s  %-10s  %10s  ", static_cast<int>(width),
                  d.dataset.c_str(), Name(d.status), rows.c_str());
    out += line + d.reason + "\n";
    for (const auto& [name, count] : d.expectation_violations) {
      out += "  " + std::string(width, ' ') + "    expectation '" + name + "': " +
             std::to_string(count) + " violating rows\n";
    }
    if (d.native && d.native->bad_rows > 0) {
      out += "  " + std::string(width, ' ') + "    " + std::to_string(d.native->bad_rows) +
             " malformed input rows skipped\n";
    }
  }
  for (const auto& n : notes) out += "note: " + n + "\n";
  if (!error.empty()) out += "error: " + error + "\n";
  return out;
}

}  // namespace thund
