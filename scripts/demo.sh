#!/usr/bin/env bash
# The newcomer's demo: build, build a streaming pipeline with the C++ API, then
# check and plan the example pipelines with the `thund` CLI.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/build.sh" release >/dev/null
cd "$ROOT"
echo "== a streaming pipeline built in C++ (examples/streaming_builder.cc), printed as a pipeline file"
./build/examples/example_streaming_builder
for f in examples/pipelines/*.yaml; do
  echo
  echo "== thund check $f"
  ./build/thund check "$f"
  echo "== thund plan $f"
  ./build/thund plan "$f"
done
