// The engine tests' table comparison helpers, compiled into this test binary
// too (tests/engine/table_compare.h). One copy per binary: other stream tests
// include only the header.
#include "engine/table_compare.cc"  // NOLINT(build/include)
