#include "cli/progress_line.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace thund::cli {

bool ShouldShowProgress(bool quiet) {
  if (quiet || ::isatty(STDERR_FILENO) != 1) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string HumanCount(double n) {
  char buf[32];
  if (n < 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  } else if (n < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  } else if (n < 1e9) {
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2fG", n / 1e9);
  }
  return buf;
}

std::string HumanBytes(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else if (b < 1024.0 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KB", b / 1024);
  } else if (b < 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MB", b / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GB", b / (1024.0 * 1024 * 1024));
  }
  return buf;
}

std::string HumanDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>((s % 3600) / 60));
  }
  return buf;
}

ProgressLine::ProgressLine(std::ostream& out, bool enabled, int64_t min_interval_ms)
    : out_(out),
      enabled_(enabled),
      interval_(min_interval_ms),
      start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { Clear(); }

double ProgressLine::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::Update(const std::string& text, bool force) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (ever_ && !force && now - last_draw_ < interval_) return;
  last_draw_ = now;
  ever_ = true;
  drawn_ = true;
  out_ << "\r\033[K" << text << std::flush;
}

void ProgressLine::Clear() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!drawn_) return;
  drawn_ = false;
  out_ << "\r\033[K" << std::flush;
}

}  // namespace thund::cli
