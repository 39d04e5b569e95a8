// The engine tests' table comparison helpers, compiled into this test binary
// too (tests/engine/table_compare.h).
#include "engine/table_compare.cc"  // NOLINT(build/include)
