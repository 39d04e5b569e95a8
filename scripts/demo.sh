#!/usr/bin/env bash
# The newcomer's demo: build, build a streaming pipeline with the C++ API, then
# check and plan the example pipelines with the `thund` CLI, then run the batch
# example (examples/batch/) and preview its outputs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Only what the demo runs (the CLI and one example), not the tests and benchmarks.
echo "== building thund and the example (the first time takes minutes: README.md has the figures)"
THUND_BOOTSTRAP_ARGS=--no-spark "$ROOT/scripts/build.sh" release thund example_streaming_builder \
  >/dev/null  # the demo needs no Spark
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

echo
echo "== a batch pipeline run natively (examples/batch/shop.yaml)"
examples/batch/generate_data.sh
rm -rf .thund/shop .thund/shop-out   # start from nothing, so every dataset is computed
./build/thund run examples/batch/shop.yaml
echo
echo "== preview: thund show customer_revenue"
./build/thund show customer_revenue examples/batch/shop.yaml --limit 5
echo "== preview: thund query (daily revenue per category)"
./build/thund query examples/batch/shop.yaml \
  "SELECT category, sum(orders) AS orders, round(sum(revenue), 2) AS revenue FROM daily_revenue GROUP BY category ORDER BY revenue DESC"
echo "== preview: the malformed input line, kept with file and line"
./build/thund show raw_orders__dead_letter examples/batch/shop.yaml
echo "== a second run: nothing changed, nothing is recomputed"
./build/thund run examples/batch/shop.yaml --events none
echo "== thund runs"
./build/thund runs examples/batch/shop.yaml

echo
echo "== a streaming pipeline (examples/streaming/auctions.sql): Nexmark bids from a seeded generator,"
echo "== one line per flow per trigger (rows in/out, latency, source position, watermark)"
rm -rf .thund/auctions
./build/thund run examples/streaming/auctions.sql
echo "== preview: the busiest auction windows (emitted once the watermark closed them)"
./build/thund query examples/streaming/auctions.sql \
  "SELECT auction, window.start AS window_start, window.end AS window_end, bids, top_price FROM bids_per_window ORDER BY bids DESC, auction LIMIT 5"
echo "== preview: running totals per channel (Update mode)"
./build/thund show channel_totals examples/streaming/auctions.sql

echo
echo "== joins and deduplication in the incremental mode (examples/streaming/joins.sql)"
rm -rf .thund/joins
./build/thund run examples/streaming/joins.sql --events none
echo "== how the interval join runs, and the state it kept at the last commit"
./build/thund explain examples/streaming/joins.sql early_bids | sed -n '/incremental operators/,$p'
echo "== preview: sellers who registered and opened an auction in the same 5-second window"
./build/thund query examples/streaming/joins.sql \
  "SELECT window_start, id, name, auctions FROM new_sellers ORDER BY auctions DESC, id LIMIT 5"
