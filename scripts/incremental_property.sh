#!/usr/bin/env bash
# Runs the incremental-mode property test (random streams x random queries,
# each checked against the batch query and Recompute mode) for many cases.
# Usage: scripts/incremental_property.sh [CASES=10000] [SEED=1]
# Needs a release build (scripts/build.sh release). Prints the case count and
# any mismatch (the test stops after five).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cases="${1:-10000}"
seed="${2:-1}"
echo "incremental property test: $cases cases, seed $seed"
# Both grammars (filters / unions / aggregations, and joins / nested windows /
# deduplication) and as many random AUTO CDC change streams.
THUND_PROPERTY_CASES="$cases" THUND_CDC_CASES="$cases" THUND_PROPERTY_SEED="$seed" \
  "$ROOT/build/tests/thund_backend_tests" \
  --gtest_filter='IncrementalPropertyTest.*:StreamIncrementalCdcTest.RandomChangeStreams*'
