#!/usr/bin/env python3
"""Nexmark queries on thund, incremental vs Recompute, as the stream grows.

Each query of bench/nexmark/*.sql runs with `thund run` at 1x, 4x and 16x
BASE bids (PER_TRIGGER bids per trigger), in its own process on a fresh storage
root, with the bids coming from
  * generator: the seeded Nexmark bid generator (as the .sql files say), or
  * parquet:   pre-generated bids (the generator's output, one Parquet file per
               trigger) read by a file drop, one file per trigger.
Wall time and peak RSS come from /usr/bin/time; per-trigger latency and the
largest state the incremental operator held come from the run's JSON events.
Runs are pinned to CORES cores (env THUND_BENCH_CORES, default 1: taskset to
core 0 and one DuckDB thread), so "per core" is measured, not divided.
Rows are appended to bench/results/nexmark.csv. Not a test: never run in CI.

Usage: bench/nexmark/run.py [BUILD_DIR=build] [BASE=100000] [PER_TRIGGER=25000]
                            [QUERIES=all] [MODES=incremental,recompute] [SCALES=1,4,16]
                            [SOURCES=generator,parquet]
"""
import csv
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
args = sys.argv[1:] + [None] * 7
BUILD = os.path.abspath(args[0] or os.path.join(ROOT, "build"))
BASE = int(args[1] or 100000)
PER_TRIGGER = int(args[2] or 25000)
ALL = "q0,q1,q2,q3,q4,q5,q5_hop_count,q7,q7_tumble_max,q8,q11"
QUERIES = (ALL if args[3] in (None, "all") else args[3]).split(",")
MODES = (args[4] or "incremental,recompute").split(",")
SCALES = [int(s) for s in (args[5] or "1,4,16").split(",")]
SOURCES = (args[6] or "generator,parquet").split(",")
SOURCES_TABLES = ("bids", "persons", "auctions")
BIDS = re.compile(r"CREATE STREAMING TABLE bids AS .*?;\n", re.S)


CORES = int(os.environ.get("THUND_BENCH_CORES", "1"))
# Extra `thund run` flags, e.g. "--no-hash-merge --no-hop-panes" (the plain twins).
FLAGS = os.environ.get("THUND_BENCH_FLAGS", "").split()


def thund(*argv):
    pin = ["taskset", "-c", ",".join(str(c) for c in range(CORES))]
    cmd = ["/usr/bin/time", "-f", "TIME %e %M", *pin, os.path.join(BUILD, "thund"), *argv,
           "--threads", str(CORES)]
    # Output goes to files, not pipes: a harness reading a pipe during the run
    # would wake on the pinned core and slow the run it measures.
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        code = subprocess.run(cmd, stdout=out, stderr=err).returncode
        out.seek(0)
        err.seek(0)
        p = subprocess.CompletedProcess(cmd, code, out.read(), err.read())
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def pregenerate(scale, work):
    """The bids of `scale`, one Parquet file per trigger, in a drop directory."""
    drop = os.path.join(work, f"bids_{scale}x")
    if os.path.isdir(drop):
        return drop
    with open(os.path.join(HERE, "q0.sql")) as f:
        sql = f.read()
    sql = sql[:BIDS.search(sql).end()]
    sql = sql.replace("{rows}", str(BASE * scale)).replace("{per_trigger}", str(PER_TRIGGER))
    path = os.path.join(work, f"gen_{scale}.sql")
    with open(path, "w") as f:
        f.write(sql)
    store = os.path.join(work, "gen_store")
    shutil.rmtree(store, ignore_errors=True)
    thund("run", path, "--storage", store, "--events", "none")
    os.makedirs(drop)
    parts = sorted(glob.glob(os.path.join(store, "bids", "current", "*.parquet")))
    for i, part in enumerate(parts):
        shutil.copy(part, os.path.join(drop, f"bids-{i:06d}.parquet"))
    shutil.rmtree(store, ignore_errors=True)
    return drop
RESULTS = os.path.join(ROOT, "bench", "results", "nexmark.csv")


def run(query, mode, scale, source, work):
    rows = BASE * scale
    with open(os.path.join(HERE, query + ".sql")) as f:
        sql = f.read()
    if source == "parquet":
        drop = pregenerate(scale, work)
        sql = BIDS.sub(lambda _: "CREATE STREAMING TABLE bids AS SELECT * FROM STREAM read_files("
                       f"'{drop}', format => 'parquet', max_files_per_trigger => '1');\n", sql)
    sql = (sql.replace("{rows}", str(rows)).replace("{per_trigger}", str(PER_TRIGGER))
           .replace("{mode}", mode))
    path = os.path.join(work, f"{query}_{mode}_{scale}.sql")
    with open(path, "w") as f:
        f.write(sql)
    first_source = next(t for t in SOURCES_TABLES if f"CREATE STREAMING TABLE {t} " in sql)
    store = os.path.join(work, "store")
    shutil.rmtree(store, ignore_errors=True)
    p = thund("run", path, "--storage", store, "--events", "json", *FLAGS)
    secs, rss_kb = re.search(r"TIME ([0-9.]+) ([0-9]+)", p.stderr).groups()
    bids, state_rows, state_bytes, triggers, last_ms, query_ms = 0, 0, 0, 0, 0, 0
    for line in p.stdout.splitlines():
        if not line.startswith("{"):
            continue
        e = json.loads(line)
        # The rows the sources handed out (bids; persons and auctions for the
        # joins: the generator cuts them from one combined event sequence).
        if e.get("event") == "flow_finished" and e.get("flow") in SOURCES_TABLES:
            bids += e.get("rows_out", 0)
        if e.get("event") == "trigger" and e.get("flow") == first_source:
            triggers += 1
        if e.get("event") == "trigger" and e.get("flow") == query:
            last_ms = e.get("elapsed_ms", 0)
            query_ms += e.get("elapsed_ms", 0)
            m = re.search(r"state ([0-9]+) rows / ([0-9]+) bytes", e.get("message", ""))
            if m:
                state_rows = max(state_rows, int(m.group(1)))
                state_bytes = max(state_bytes, int(m.group(2)))
    secs = float(secs)
    cores = CORES
    return {
        "date": datetime.date.today().isoformat(), "query": query, "mode": mode,
        # `bids` holds the rows of every source table (persons and auctions
        # for q3 and q8); `events` the combined Nexmark events they are cut from.
        "source": source, "scale": scale, "bids": bids, "events": rows, "triggers": triggers,
        "seconds": secs, "events_per_s": round(bids / secs) if secs else 0,
        # The run is pinned to `cores` cores (one by default).
        "events_per_s_per_core": round(bids / secs / cores) if secs else 0,
        # The flow's own steps (its queries and state), without the source and commits.
        "query_events_per_s": round(bids / (query_ms / 1000)) if query_ms else 0,
        "last_trigger_ms": last_ms, "peak_rss_mb": round(int(rss_kb) / 1024),
        "max_state_rows": state_rows, "max_state_bytes": state_bytes, "cores": cores,
        "load": round(os.getloadavg()[0], 1), "flags": " ".join(FLAGS),
    }


def main():
    work = tempfile.mkdtemp(prefix="thund_nexmark_")
    out = []
    for source in SOURCES:
        for q in QUERIES:
            with open(os.path.join(HERE, q + ".sql")) as f:
                if source == "parquet" and not BIDS.search(f.read()):
                    continue  # pre-generated rows are bids only
            for mode in MODES:
                for scale in SCALES:
                    r = run(q, mode, scale, source, work)
                    out.append(r)
                    print(json.dumps(r), flush=True)
    # Earlier rows keep their values; a column they lack stays empty.
    rows = []
    if os.path.exists(RESULTS):
        with open(RESULTS, newline="") as f:
            rows = list(csv.DictReader(f))
    fields = list(out[0].keys())
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(RESULTS, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows + out)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
