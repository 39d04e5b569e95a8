#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [release|asan] [TARGET...]
#   release -> build/       (optimized, no debug info, unity-built src/, warnings are errors)
#   asan    -> build-asan/  (ASan + UBSan, file by file, warnings are errors)
# TARGETs: build only these (scripts/demo.sh: thund example_streaming_builder);
# none = everything (every test binary and benchmark).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flavor="${1:-release}"
targets=("${@:2}")
case "$flavor" in
  release) dir="$ROOT/build"; extra=(-DCMAKE_BUILD_TYPE=Release -DTHUND_UNITY=ON) ;;
  asan) dir="$ROOT/build-asan"; extra=(-DCMAKE_BUILD_TYPE=Debug -DTHUND_SANITIZE=ON -DTHUND_BUILD_BENCH=OFF) ;;
  *) echo "usage: scripts/build.sh [release|asan]" >&2; exit 2 ;;
esac
# THUND_BOOTSTRAP_ARGS=--no-spark (scripts/demo.sh) skips installing Spark.
"$ROOT/scripts/bootstrap.sh" ${THUND_BOOTSTRAP_ARGS:-}
# Let ccache share objects between clones of the tree (paths made relative).
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S "$ROOT" -B "$dir" -G Ninja -DTHUND_WERROR=ON "${extra[@]}" >/dev/null
fi
ninja -C "$dir" -j"$(nproc)" "${targets[@]}"
