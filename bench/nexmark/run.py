#!/usr/bin/env python3
"""Nexmark queries on thund, incremental vs Recompute, as the stream grows.

Each query of bench/nexmark/*.sql runs with `thund run` over the seeded Nexmark
bid generator at 1x, 4x and 16x BASE bids (PER_TRIGGER bids per trigger), in
its own process on a fresh storage root. Wall time and peak RSS come from
/usr/bin/time; the state the incremental operator keeps comes from the run's
flow_finished event. Rows are appended to bench/results/nexmark.csv.
Not a test: never run in CI.

Usage: bench/nexmark/run.py [BUILD_DIR=build] [BASE=100000] [PER_TRIGGER=25000]
                            [QUERIES=all] [MODES=incremental,recompute] [SCALES=1,4,16]
"""
import csv
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
args = sys.argv[1:] + [None] * 6
BUILD = os.path.abspath(args[0] or os.path.join(ROOT, "build"))
BASE = int(args[1] or 100000)
PER_TRIGGER = int(args[2] or 25000)
QUERIES = (args[3] or "q0,q1,q2,q5_hop_count,q7_tumble_max,q11").split(",")
MODES = (args[4] or "incremental,recompute").split(",")
SCALES = [int(s) for s in (args[5] or "1,4,16").split(",")]
RESULTS = os.path.join(ROOT, "bench", "results", "nexmark.csv")


def run(query, mode, scale, work):
    rows = BASE * scale
    with open(os.path.join(HERE, query + ".sql")) as f:
        sql = f.read()
    sql = (sql.replace("{rows}", str(rows)).replace("{per_trigger}", str(PER_TRIGGER))
           .replace("{mode}", mode))
    path = os.path.join(work, f"{query}_{mode}_{scale}.sql")
    with open(path, "w") as f:
        f.write(sql)
    store = os.path.join(work, "store")
    shutil.rmtree(store, ignore_errors=True)
    cmd = ["/usr/bin/time", "-f", "TIME %e %M", os.path.join(BUILD, "thund"), "run", path,
           "--storage", store, "--events", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{query} {mode} {scale}x failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    secs, rss_kb = re.search(r"TIME ([0-9.]+) ([0-9]+)", p.stderr).groups()
    bids, state_rows, state_bytes, triggers = 0, 0, 0, 0
    for line in p.stdout.splitlines() + p.stderr.splitlines():
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        if e.get("event") == "flow_finished" and e.get("flow") == "bids":
            bids = e.get("rows_out", 0)
        if e.get("event") == "trigger" and e.get("flow") == "bids":
            triggers += 1
        if e.get("event") == "flow_finished" and e.get("flow") == query:
            m = re.search(r"state ([0-9]+) rows / ([0-9]+) bytes", e.get("message", ""))
            if m:
                state_rows, state_bytes = int(m.group(1)), int(m.group(2))
    secs = float(secs)
    return {
        "date": datetime.date.today().isoformat(), "query": query, "mode": mode,
        "scale": scale, "bids": bids, "triggers": triggers, "seconds": secs,
        "events_per_s": round(bids / secs) if secs else 0,
        # DuckDB may use every core: per core divides by all of them.
        "events_per_s_per_core": round(bids / secs / os.cpu_count()) if secs else 0,
        "peak_rss_mb": round(int(rss_kb) / 1024), "state_rows": state_rows,
        "state_bytes": state_bytes, "cores": os.cpu_count(),
        "load": round(os.getloadavg()[0], 1),
    }


def main():
    work = tempfile.mkdtemp(prefix="thund_nexmark_")
    out = []
    for q in QUERIES:
        for mode in MODES:
            for scale in SCALES:
                r = run(q, mode, scale, work)
                out.append(r)
                print(json.dumps(r), flush=True)
    new = not os.path.exists(RESULTS)
    with open(RESULTS, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        if new:
            w.writeheader()
        w.writerows(out)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
