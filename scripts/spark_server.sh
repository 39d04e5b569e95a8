#!/usr/bin/env bash
# A local Spark Connect server on loopback, from the pyspark wheel that
# scripts/bootstrap.sh installs in .deps/spark (Java 17).
#
#   scripts/spark_server.sh start DIR [PORT]   # start; DIR/remote holds sc://127.0.0.1:PORT
#   scripts/spark_server.sh stop DIR           # stop the server started with DIR
#
# DIR also holds the server's log and its warehouse (the Parquet files of the
# tables a run writes). Local settings: 4 shuffle partitions (Spark's 200 make
# every stateful micro-batch slow on a small machine), no UI. The catalog is
# in memory: tables are gone when the server stops. Start waits until the
# server listens (at most 120 s).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPARK_VENV="${THUND_SPARK_VENV:-$ROOT/.deps/spark}"
cmd="${1:-}"; dir="${2:-}"
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2; }
mkdir -p "$dir"; dir="$(cd "$dir" && pwd)"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

case "$cmd" in
  start)
    if [[ ! -x "$SPARK_VENV/bin/spark-submit" ]]; then
      echo "no Spark at $SPARK_VENV: run scripts/bootstrap.sh (it installs pyspark)" >&2; exit 1
    fi
    port="${3:-$(free_port)}"
    rm -f "$dir/remote"
    # The catalog lives in the server's memory: tables an earlier server left
    # in the warehouse are orphans, and Spark refuses to create a table over
    # one (LOCATION_ALREADY_EXISTS). Start from an empty warehouse.
    rm -rf "$dir/warehouse" "$dir/metastore_db"
    (
      unset SPARK_HOME
      export PATH="$SPARK_VENV/bin:$PATH"
      exec setsid "$SPARK_VENV/bin/spark-submit" \
        --class org.apache.spark.sql.connect.service.SparkConnectServer \
        --master 'local[2]' \
        --conf spark.connect.grpc.binding.address=127.0.0.1 \
        --conf spark.connect.grpc.binding.port="$port" \
        --conf spark.sql.warehouse.dir="$dir/warehouse" \
        --conf spark.ui.enabled=false \
        --conf spark.sql.shuffle.partitions=4 \
        --driver-java-options "-Dderby.system.home=$dir" \
        >"$dir/server.log" 2>&1 </dev/null
    ) &
    echo $! >"$dir/pid"
    for _ in $(seq 1 240); do
      if grep -q "Spark Connect server started at" "$dir/server.log" 2>/dev/null; then
        echo "sc://127.0.0.1:$port" >"$dir/remote"
        cat "$dir/remote"
        exit 0
      fi
      if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
        echo "Spark Connect server exited during startup; log:" >&2; tail -30 "$dir/server.log" >&2
        exit 1
      fi
      sleep 0.5
    done
    echo "Spark Connect server did not start within 120 s; log: $dir/server.log" >&2
    exit 1
    ;;
  stop)
    if [[ -f "$dir/pid" ]]; then
      pid="$(cat "$dir/pid")"
      kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -9 -- -"$pid" 2>/dev/null || true
      rm -f "$dir/pid" "$dir/remote"
    fi
    ;;
  *) echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2 ;;
esac
