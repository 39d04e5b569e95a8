// A fuzz target: one function that takes any bytes and must neither crash,
// hang, nor let an exception out. Built two ways (fuzz/CMakeLists.txt):
//  * with the mutation driver (mutation_driver.cc, any compiler): the suite
//    runs each target for a few seconds, scripts/fuzz.sh for hours;
//  * with libFuzzer (THUND_FUZZ=ON, clang): coverage-guided.
// A target reports a broken invariant with FuzzCheck, which aborts (a crash
// to either driver) after printing what broke.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace thund::fuzz {

inline void FuzzCheck(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace thund::fuzz
