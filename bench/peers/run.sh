#!/usr/bin/env bash
# Nexmark on thund, Flink and Spark, same machine and events (bench/peers/README.md).
#   bench/peers/run.sh [--events 1M,10M] [--queries q0,q5] [--engines thund,flink,spark]
#                      [--sinks noop,parquet] [--check-events 100K] [--build build] ...
#                      [--since 2026-12-05T00:00:00Z]
# Installs the peers venv first (setup.sh, idempotent), then runs run.py in it
# and redraws the plots and summary (render.py) from the CSV's rows since
# `--since` (default: every row; rows of other days measured other machines'
# loads). `--plots [--since T]` only redraws.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ENV_DIR="${PEERS_ENV:-$HERE/../../.bench-data/peers-env}"
"$HERE/setup.sh" >/dev/null
render=()   # render.py's arguments
run=()      # run.py's
plots_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --plots) plots_only=1 ;;
    --since) render+=(--since "${2:?--since needs a time, e.g. 2026-12-05T00:00:00Z}"); shift ;;
    --since=*) render+=(--since "${1#--since=}") ;;
    *) run+=("$1") ;;
  esac
  shift
done
if [ "$plots_only" = 0 ]; then
  "$ENV_DIR/venv/bin/python" "$HERE/run.py" "${run[@]}"
fi
exec "$ENV_DIR/venv/bin/python" "$HERE/render.py" "${render[@]}"
