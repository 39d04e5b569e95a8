#!/usr/bin/env bash
# Runs every test: the release build, then the same suite under ASan + UBSan.
# Usage: scripts/test.sh [--quick]   (--quick skips the sanitizer pass)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0; [[ "${1:-}" == "--quick" ]] && quick=1

"$ROOT/scripts/build.sh" release
echo "== tests (release)"
ctest --test-dir "$ROOT/build" --output-on-failure -j"$(nproc)"

if ((quick == 0)); then
  "$ROOT/scripts/build.sh" asan
  echo "== tests (asan + ubsan)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$ROOT/build-asan" --output-on-failure -j"$(nproc)"
fi
