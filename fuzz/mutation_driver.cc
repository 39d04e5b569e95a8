// A mutation fuzzer for the targets in fuzz/targets/ that needs no compiler
// support (no coverage feedback): it mutates the seed corpus at random, with
// a fixed seed, and runs the target on each result for a given time.
//
//   fuzz_<name> [--seconds S] [--cpu-seconds S] [--runs N] [--seed N]
//               [--timeout S] [--crash-dir DIR] CORPUS_DIR_OR_FILE...
//
// --seconds bounds the wall time, --cpu-seconds the CPU time this process
// uses (for niced runs beside other work, where wall time says little).
//
// Mutations, one to four stacked: flip a bit, set a byte, insert random bytes
// or a sequence that is not UTF-8, delete or duplicate a range, splice with
// another input, insert a word seen in the corpus, replace a number with an
// extreme one, insert a bracket, quote or separator. When every seed is UTF-8
// text, new bytes are printable ASCII except in one mutation in 16 (else
// nearly every input would stop at the UTF-8 check). One mutated input in 64
// joins the pool (in text mode only if it is UTF-8), so mutations compound.
//
// A crash is a signal (segfault, abort: a FuzzCheck, std::terminate), an
// exception escaping the target, or one input running past --timeout. The
// input is written to --crash-dir (default: the working directory) as
// crash-<target>-<pid>-<n> (or timeout-...). Exceptions are counted and the run
// goes on; signals end the process after saving the input.
//
// Last line on stdout: "<target>: execs=N cpu_seconds=X crashes=N pool=N";
// exit code 0 when there were no crashes.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_target.h"

#ifndef THUND_FUZZ_TARGET_NAME
#define THUND_FUZZ_TARGET_NAME "target"
#endif

namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

// What the signal handlers may touch: the input being run and where to save it.
const char* g_input_data = nullptr;
size_t g_input_size = 0;
char g_crash_prefix[4096];

int g_saved = 0;  // inputs saved by this process

void WriteCurrentInput(const char* kind) {
  char path[4200];
  std::snprintf(path, sizeof(path), "%s%s-%s-%d-%d", g_crash_prefix, kind, THUND_FUZZ_TARGET_NAME,
                static_cast<int>(::getpid()), g_saved++);
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_input_size) {
      const ssize_t n = ::write(fd, g_input_data + done, g_input_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  const char* msg = "\n*** fuzz: input saved to ";
  (void)!::write(2, msg, std::strlen(msg));
  (void)!::write(2, path, std::strlen(path));
  (void)!::write(2, "\n", 1);
}

void OnCrashSignal(int sig) {
  WriteCurrentInput(sig == SIGALRM ? "timeout" : "crash");
  ::signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
  ::raise(sig == SIGALRM ? SIGABRT : sig);
}

double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Options {
  double seconds = 5;
  double cpu_seconds = -1;  // < 0: no CPU bound
  long long runs = -1;
  uint64_t seed = 1;
  int timeout = 20;
  std::string crash_dir = ".";
  std::vector<std::string> corpus;
};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--seconds") {
      o->seconds = std::stod(value());
    } else if (a == "--cpu-seconds") {
      o->cpu_seconds = std::stod(value());
    } else if (a == "--runs") {
      o->runs = std::stoll(value());
    } else if (a == "--seed") {
      o->seed = std::stoull(value());
    } else if (a == "--timeout") {
      o->timeout = std::stoi(value());
    } else if (a == "--crash-dir") {
      o->crash_dir = value();
    } else if (a.rfind("--", 0) == 0) {
      return false;
    } else {
      o->corpus.push_back(a);
    }
  }
  return !o->corpus.empty();
}

std::vector<Bytes> LoadCorpus(const std::vector<std::string>& roots) {
  std::vector<fs::path> files;
  for (const auto& r : roots) {
    if (fs::is_directory(r)) {
      for (const auto& e : fs::recursive_directory_iterator(r)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(r)) {
      files.push_back(r);
    }
  }
  std::sort(files.begin(), files.end());  // a fixed order: runs repeat
  std::vector<Bytes> out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

// Words (letters, digits, '_') of 3..24 characters seen in the corpus.
std::vector<Bytes> Dictionary(const std::vector<Bytes>& corpus) {
  std::set<Bytes> words;
  for (const auto& c : corpus) {
    Bytes w;
    for (char ch : c + " ") {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
        w += ch;
      } else {
        if (w.size() >= 3 && w.size() <= 24) words.insert(w);
        w.clear();
      }
    }
  }
  return {words.begin(), words.end()};
}

class Mutator {
 public:
  // `text`: the corpus is UTF-8 text; new bytes are then printable ASCII
  // except in one mutation in 16, which adds bytes that are not UTF-8.
  Mutator(uint64_t seed, const std::vector<Bytes>* pool, std::vector<Bytes> dict, size_t max_len,
          bool text)
      : rng_(seed), pool_(pool), dict_(std::move(dict)), max_len_(max_len), text_(text) {}

  Bytes Mutate(Bytes in) {
    const int n = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < n; ++i) MutateOnce(&in);
    if (in.size() > max_len_) in.resize(max_len_);
    return in;
  }

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

 private:
  size_t Pos(const Bytes& b) { return static_cast<size_t>(Below(b.size() + 1)); }

  // A new byte: any, or in text mode printable ASCII, tab or newline.
  char NewByte() {
    if (!text_) return static_cast<char>(Below(256));
    const uint64_t r = Below(97);
    return r == 95 ? '\n' : r == 96 ? '\t' : static_cast<char>(' ' + r);
  }

  void MutateOnce(Bytes* b) {
    static const char* kNotUtf8[] = {"\xff", "\xfe", "\xc0\x80", "\xed\xa0\x80", "\xe2\x82",
                                     "\x80", "\xf4\x90\x80\x80", "\xc3"};
    static const char* kNumbers[] = {"0", "-1", "255", "65536", "2147483648", "-2147483649",
                                     "9223372036854775807", "-9223372036854775808",
                                     "99999999999999999999999", "1e308", "NaN", "0.0000001"};
    // In text mode, bytes that are not UTF-8 come from one mutation in 16.
    const bool raw = !text_ || Below(16) == 0;
    switch (Below(10)) {
      case 0:
        if (!b->empty()) {
          char& c = (*b)[Below(b->size())];
          c ^= static_cast<char>(1u << Below(raw ? 8 : 7));
          if (!raw && static_cast<unsigned char>(c) >= 0x80) c = NewByte();
        }
        break;
      case 1:
        if (!b->empty()) {
          (*b)[Below(b->size())] =
              raw ? static_cast<char>(Below(2) ? 0x80 + Below(128) : Below(256)) : NewByte();
        }
        break;
      case 2: {
        Bytes ins(1 + Below(8), '\0');
        for (char& c : ins) c = raw ? static_cast<char>(Below(256)) : NewByte();
        b->insert(Pos(*b), ins);
        break;
      }
      case 3:
        if (raw) {
          b->insert(Pos(*b), kNotUtf8[Below(std::size(kNotUtf8))]);
        } else {
          b->insert(Pos(*b), 1, NewByte());
        }
        break;
      case 4:
        if (!b->empty()) {
          const size_t at = Below(b->size());
          b->erase(at, 1 + Below(std::min<size_t>(b->size() - at, 32)));
        }
        break;
      case 5:
        if (!b->empty()) {
          const size_t at = Below(b->size());
          const Bytes part = b->substr(at, 1 + Below(64));
          b->insert(Pos(*b), part);
        }
        break;
      case 6:
        if (!pool_->empty()) {
          const Bytes& other = (*pool_)[Below(pool_->size())];
          const size_t from = Below(other.size() + 1);
          b->insert(Pos(*b), other.substr(from, Below(256)));
        }
        break;
      case 7:
        if (!dict_.empty()) b->insert(Pos(*b), dict_[Below(dict_.size())]);
        break;
      case 8: {
        // Replace a run of digits with an extreme number.
        const size_t at = b->find_first_of("0123456789", Pos(*b));
        const Bytes num = kNumbers[Below(std::size(kNumbers))];
        if (at == Bytes::npos) {
          b->insert(Pos(*b), num);
        } else {
          size_t end = at;
          while (end < b->size() && std::isdigit(static_cast<unsigned char>((*b)[end]))) ++end;
          b->replace(at, end - at, num);
        }
        break;
      }
      default:
        // Structure characters: brackets, quotes, separators, newlines.
        b->insert(Pos(*b), 1, "{}[]()'\"`,;:\n\t -#&*!|>"[Below(23)]);
        break;
    }
  }

  std::mt19937_64 rng_;
  const std::vector<Bytes>* pool_;
  std::vector<Bytes> dict_;
  size_t max_len_;
  bool text_;
};

// True when `s` is valid UTF-8 (the driver's own check: it links no thund code).
bool IsUtf8(const Bytes& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Runs the target on one input; false when an exception escaped it.
bool RunOne(const Bytes& input, long long* crashes, const Options& o) {
  g_input_data = input.data();
  g_input_size = input.size();
  itimerval t{};
  t.it_value.tv_sec = o.timeout;
  ::setitimer(ITIMER_REAL, &t, nullptr);
  bool ok = true;
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  } catch (const std::exception& e) {
    std::cerr << "*** fuzz: exception escaped the target: " << e.what() << "\n";
    ok = false;
  } catch (...) {
    std::cerr << "*** fuzz: exception of unknown type escaped the target\n";
    ok = false;
  }
  t.it_value.tv_sec = 0;
  ::setitimer(ITIMER_REAL, &t, nullptr);
  if (!ok) {
    WriteCurrentInput("crash");
    ++*crashes;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    std::cerr << "usage: " << argv[0]
              << " [--seconds S] [--cpu-seconds S] [--runs N] [--seed N] [--timeout S] [--crash-dir DIR] "
                 "CORPUS_DIR_OR_FILE...\n";
    return 2;
  }
  std::snprintf(g_crash_prefix, sizeof(g_crash_prefix), "%s/", o.crash_dir.c_str());
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM}) ::signal(sig, OnCrashSignal);

  std::vector<Bytes> pool = LoadCorpus(o.corpus);
  if (pool.empty()) pool.push_back("");
  size_t max_len = 4096;
  for (const auto& p : pool) max_len = std::max(max_len, p.size() * 2);
  const size_t seeds = pool.size();
  // Text corpora (every seed UTF-8) are mutated mostly within ASCII, and only
  // UTF-8 inputs join the pool, so most inputs get past the UTF-8 check.
  bool text = true;
  for (const auto& p : pool) text = text && IsUtf8(p);
  Mutator mutator(o.seed, &pool, Dictionary(pool), max_len, text);

  const double cpu0 = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  long long execs = 0, crashes = 0;
  // Every seed as it is first, then mutations until the time or runs are used.
  for (size_t i = 0; i < seeds; ++i, ++execs) RunOne(pool[i], &crashes, o);
  for (;;) {
    if (o.runs >= 0 && execs >= o.runs) break;
    if ((execs & 15) == 0) {
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (wall >= o.seconds) break;
      if (o.cpu_seconds >= 0 && CpuSeconds() - cpu0 >= o.cpu_seconds) break;
    }
    Bytes input = mutator.Mutate(pool[mutator.Below(pool.size())]);
    const bool ok = RunOne(input, &crashes, o);
    ++execs;
    if (ok && mutator.Below(64) == 0 && pool.size() < 4096 && (!text || IsUtf8(input))) {
      pool.push_back(std::move(input));
    }
  }
  std::cout << THUND_FUZZ_TARGET_NAME << ": execs=" << execs << " cpu_seconds=" << (CpuSeconds() - cpu0)
            << " crashes=" << crashes << " pool=" << pool.size() << std::endl;
  return crashes == 0 ? 0 : 1;
}
