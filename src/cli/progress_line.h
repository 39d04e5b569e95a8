// A live progress line for long commands (`thund run`, `thund copy`): one line
// on stderr, redrawn in place ("\r" + erase to end of line) at most every
// 250 ms, shown only when stderr is a terminal and the user did not ask for
// quiet (-q). Thread-safe: events may arrive from worker threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

namespace thund::cli {

// True when a progress line should be drawn: not `quiet`, stderr is a
// terminal, and $TERM is not "dumb".
bool ShouldShowProgress(bool quiet);

// "950", "12.3k", "4.56M", "1.20G".
std::string HumanCount(double n);
// "512 B", "12.3 KB", "4.6 MB", "1.2 GB" (powers of 1024).
std::string HumanBytes(int64_t bytes);
// "42s", "3m05s", "1h02m".
std::string HumanDuration(double seconds);

class ProgressLine {
 public:
  // Draws on `out` only when `enabled`; `min_interval_ms` between redraws.
  ProgressLine(std::ostream& out, bool enabled, int64_t min_interval_ms = 250);
  ~ProgressLine();  // erases the line

  bool enabled() const { return enabled_; }
  // Seconds since construction.
  double Elapsed() const;
  // Redraws the line as `text`, unless the last draw was less than the
  // interval ago (`force`: draw anyway).
  void Update(const std::string& text, bool force = false);
  // Erases the line, so other output can use the terminal; the next Update
  // draws again.
  void Clear();

 private:
  std::ostream& out_;
  const bool enabled_;
  const std::chrono::milliseconds interval_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;  // the line is on the screen now
  bool ever_ = false;   // something was drawn once
};

}  // namespace thund::cli
