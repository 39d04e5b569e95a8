#!/usr/bin/env python3
"""Streaming Recompute-mode benchmark (issue 5): throughput and peak RSS as the
stream grows.

The same pipeline runs over a seeded keyed-event generator at 1x, 4x and 16x
rows, with a fixed number of rows per trigger, so the 4x and 16x streams take 4x
and 16x as many triggers. Recompute re-runs every streaming query over all rows
seen, so a trigger's latency grows with the stream and the total time grows
quadratically: these figures are the baseline the incremental mode is measured
against. Each run is `thund run` in its own process on a fresh storage root;
wall time and peak RSS come from /usr/bin/time, per-trigger latency from the
run's JSON events. Rows are appended to bench/results/stream_bench.csv.
Not a test: never run in CI.

Usage: bench/stream_bench.py [BUILD_DIR] [BASE_ROWS] [ROWS_PER_TRIGGER]
       (defaults: build 100000 25000)
"""
import csv
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build")
BASE = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
PER_TRIGGER = int(sys.argv[3]) if len(sys.argv) > 3 else 25000
RESULTS = os.path.join(ROOT, "bench", "results", "stream_bench.csv")

PIPELINE = """
CREATE STREAMING TABLE events
AS SELECT * FROM STREAM read_generator(kind => 'keyed_events', seed => 7,
     rows_per_batch => {per_trigger}, total_rows => {rows}, events_per_second => 1000,
     out_of_orderness => '2s', keys => '1000');

-- Windowed aggregation, Append: windows emitted as the watermark closes them.
CREATE STREAMING TABLE per_window AS
SELECT key, window, count(*) AS n, sum(value) AS total
FROM STREAM(events) WATERMARK event_time DELAY OF INTERVAL 5 SECONDS
GROUP BY key, window(event_time, '10 seconds');

-- Running aggregate, Update: an upsert delta per trigger.
CREATE STREAMING TABLE per_key WITH (output_mode = 'update') AS
SELECT key, count(*) AS n, avg(value) AS mean FROM STREAM(events) GROUP BY key;

-- Stateless filter, Append.
CREATE STREAMING TABLE large AS SELECT * FROM STREAM(events) WHERE value >= 990;
"""


def run(scale, work):
    rows = BASE * scale
    sql = os.path.join(work, f"stream_{scale}x.sql")
    with open(sql, "w") as f:
        f.write(PIPELINE.format(rows=rows, per_trigger=PER_TRIGGER))
    store = os.path.join(work, f"store_{scale}x")
    shutil.rmtree(store, ignore_errors=True)
    rss_file = os.path.join(work, "rss")
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", rss_file, os.path.join(BUILD, "thund"), "run",
           sql, "--storage", store, "--events", "json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    seconds, rss_kb = open(rss_file).read().split()[-2:]
    latency = {}  # trigger -> sum of flow latencies (ms)
    for line in out.splitlines():
        e = json.loads(line)
        if e.get("event") == "trigger":
            latency[e["trigger"]] = latency.get(e["trigger"], 0) + e.get("elapsed_ms", 0)
    triggers = sorted(latency)
    return {
        "scale": scale,
        "rows": rows,
        "triggers": len(triggers),
        "seconds": float(seconds),
        "rows_per_s": round(rows / float(seconds)),
        "first_trigger_ms": latency[triggers[0]] if triggers else 0,
        "last_trigger_ms": latency[triggers[-1]] if triggers else 0,
        "peak_rss_mb": round(int(rss_kb) / 1024, 1),
    }


def main():
    fields = ["time_utc", "mode", "scale", "rows", "rows_per_trigger", "triggers", "seconds",
              "rows_per_s", "first_trigger_ms", "last_trigger_ms", "peak_rss_mb", "cores"]
    new = not os.path.exists(RESULTS)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with tempfile.TemporaryDirectory() as work, open(RESULTS, "a", newline="") as out:
        w = csv.DictWriter(out, fieldnames=fields)
        if new:
            w.writeheader()
        for scale in (1, 4, 16):
            r = run(scale, work)
            r.update(time_utc=now, mode="recompute", rows_per_trigger=PER_TRIGGER,
                     cores=os.cpu_count())
            w.writerow(r)
            out.flush()
            print(", ".join(f"{k}={r[k]}" for k in fields), flush=True)


if __name__ == "__main__":
    main()
