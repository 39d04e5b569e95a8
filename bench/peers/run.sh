#!/usr/bin/env bash
# Nexmark on thund, Flink and Spark, same machine and events (bench/peers/README.md).
#   bench/peers/run.sh [--events 1M,10M] [--queries q0,q5] [--engines thund,flink,spark]
#                      [--sinks noop,parquet] [--check-events 100K] [--build build] ...
# Installs the peers venv first (setup.sh, idempotent), then runs run.py in it;
# `--plots` only redraws bench/results/peers/*.png from the CSV.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ENV_DIR="${PEERS_ENV:-$HERE/../../.bench-data/peers-env}"
"$HERE/setup.sh" >/dev/null
if [ "${1:-}" = "--plots" ]; then
  exec "$ENV_DIR/venv/bin/python" "$HERE/render.py"
fi
"$ENV_DIR/venv/bin/python" "$HERE/run.py" "$@"
exec "$ENV_DIR/venv/bin/python" "$HERE/render.py"
