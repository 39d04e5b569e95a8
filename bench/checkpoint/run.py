#!/usr/bin/env python3
"""Checkpoint cost: throughput with a checkpoint every trigger against none,
checkpoint time against state size, and the recovery read rate.

Queries: Nexmark q3, q5, q7, q8 (bench/nexmark/*.sql, incremental mode) and
bench/checkpoint/large_state.sql. Each runs with `thund run`, pinned to one
core (taskset, one DuckDB thread), on a fresh storage root, in four settings:
  every      a checkpoint epoch every trigger (the default)
  every10    one epoch every 10 triggers (thund.checkpoint.interval = 10)
  full       every trigger, full state images (thund.checkpoint.incremental = false)
  none       one epoch at the end only (interval = 10^9): the baseline
Then recovery: a run stopped after half its triggers, and a rerun whose
`recovery` event says how many state bytes it read, checked and decoded, in
how long, and how large the restored tables are in memory. The query
`recovery_state` (bench/checkpoint/recovery_state.sql, ~1.5M state rows) is
only run for recovery. A checkpoint's cost is a fixed part per epoch (files
created, flushed and renamed) plus a part that follows the change, so
`every` and `none` are also run at each of SWEEP (events per trigger).
Rows go to bench/results/checkpoint.csv. Not a test: never run in CI.

Usage: bench/checkpoint/run.py [BUILD_DIR=build] [EVENTS=1000000] [PER_TRIGGER=25000]
                               [QUERIES=q3,q5,q7,q8,large_state] [REPEAT=3]
                               [SWEEP=100000,250000]
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
EVENTS = int(args[1] or 1000000)
PER_TRIGGER = int(args[2] or 25000)
QUERIES = (args[3] or "q3,q5,q7,q8,large_state").split(",")
REPEAT = int(args[4] or 3)
SWEEP = [int(x) for x in (args[5] or "100000,250000").split(",") if x]
SETTINGS = {
    "every": {"thund.checkpoint.interval": "1"},
    "every10": {"thund.checkpoint.interval": "10"},
    "full": {"thund.checkpoint.interval": "1", "thund.checkpoint.incremental": "false"},
    "none": {"thund.checkpoint.interval": "1000000000"},
}


def sql_for(query, settings, per_trigger=PER_TRIGGER):
    local = query in ("large_state", "recovery_state")
    path = os.path.join(HERE if local else os.path.join(ROOT, "bench/nexmark"), query + ".sql")
    text = open(path).read()
    text = (text.replace("{rows}", str(EVENTS)).replace("{per_trigger}", str(per_trigger))
            .replace("{mode}", "incremental"))
    head = "".join(f"SET {k} = {v};\n" for k, v in settings.items())
    return head + text


def run(sql_path, store, extra=()):
    cmd = ["/usr/bin/time", "-f", "TIME %e %M", "taskset", "-c", "0",
           os.path.join(BUILD, "thund"), "run", sql_path, "--storage", store, "--threads", "1",
           "--events", "json", *extra]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        code = subprocess.run(cmd, stdout=out, stderr=err).returncode
        out.seek(0)
        err.seek(0)
        events = [json.loads(l) for l in out if l.startswith("{")]
        tail = err.read()
    if code != 0:
        sys.exit(f"{sql_path}: exit {code}\n{tail[-2000:]}")
    m = re.search(r"TIME ([0-9.]+) ([0-9]+)", tail)
    return events, float(m.group(1)), int(m.group(2))


def measure(work, q, name, settings, per_trigger):
    sql_path = os.path.join(work, f"{q}-{name}-{per_trigger}.sql")
    open(sql_path, "w").write(sql_for(q, settings, per_trigger))
    best = None
    for _ in range(REPEAT):
        store = os.path.join(work, "store")
        shutil.rmtree(store, ignore_errors=True)
        events, secs, rss = run(sql_path, store)
        if best is None or secs < best[1]:
            best = (events, secs, rss)
    events, secs, rss = best
    cks = [e for e in events if e["event"] == "checkpoint"]
    state = [int(re.match(r"(\d+) state rows", e.get("message", "0 state rows")).group(1))
             for e in cks]
    row = {"query": q, "setting": name, "events": EVENTS, "per_trigger": per_trigger,
           "seconds": secs, "events_per_s": round(EVENTS / secs), "peak_rss_kb": rss,
           "epochs": len(cks), "checkpoint_ms": sum(e.get("elapsed_ms", 0) for e in cks),
           "checkpoint_bytes": sum(e.get("count", 0) for e in cks),
           "max_state_rows": max(state, default=0)}
    print(f"{q:12} {name:8} {per_trigger:7} {secs:6.2f} s  {row['events_per_s']:>9} ev/s  "
          f"{row['epochs']:3} epochs  ckpt {row['checkpoint_ms']:6} ms  "
          f"{row['checkpoint_bytes'] / 1e6:8.1f} MB  state<= {row['max_state_rows']}",
          flush=True)
    return row


def recovery(work, q):
    """Stops a run half-way, resumes it, and returns the restore figures."""
    per_trigger = 500000 if q == "recovery_state" else PER_TRIGGER
    sql_path = os.path.join(work, f"{q}-recovery.sql")
    open(sql_path, "w").write(sql_for(q, SETTINGS["every"], per_trigger))
    best = None
    for _ in range(REPEAT):
        store = os.path.join(work, "store")
        shutil.rmtree(store, ignore_errors=True)
        half = max(1, EVENTS // per_trigger // 2) if q != "recovery_state" else 3
        run(sql_path, store, ["--max-triggers", str(half)])
        events, _, _ = run(sql_path, store, ["--max-triggers", "1"])
        rec = [e for e in events if e["event"] == "recovery" and
               e.get("message", "").startswith("state restored")]
        if rec and (best is None or rec[-1].get("elapsed_ms", 0) < best.get("elapsed_ms", 0)):
            best = rec[-1]
    if best is None:
        return None
    e = best
    mb = e.get("count", 0) / 1e6
    m = re.search(r"\((\d+) bytes in memory\)", e.get("message", ""))
    mem = int(m.group(1)) if m else 0
    ms = max(e.get("elapsed_ms", 0), 1)
    print(f"{q:12} recovery {mb:8.1f} MB of files ({mem / 1e6:.1f} MB in memory), "
          f"{e.get('rows_out', 0)} rows, {ms} ms: {mb / ms * 1000:7.1f} MB/s of files, "
          f"{mem / 1e6 / ms * 1000:7.1f} MB/s restored", flush=True)
    return {"query": q, "setting": "recovery", "events": EVENTS, "per_trigger": per_trigger,
            "seconds": ms / 1000, "checkpoint_bytes": e.get("count", 0),
            "memory_bytes": mem, "max_state_rows": e.get("rows_out", 0)}


FIELDS = ["time", "commit", "query", "setting", "events", "per_trigger", "seconds",
          "events_per_s", "peak_rss_kb", "epochs", "checkpoint_ms", "checkpoint_bytes",
          "max_state_rows", "memory_bytes"]


def append_rows(rows):
    out = os.path.join(ROOT, "bench/results/checkpoint.csv")
    old = []
    if os.path.exists(out):
        with open(out, newline="") as f:
            old = list(csv.DictReader(f))
    with open(out, "w", newline="") as f:  # rewritten: the header may have grown
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in old + rows:
            w.writerow({k: r.get(k, "") or "" for k in FIELDS})


def main():
    rows = []
    work = tempfile.mkdtemp(prefix="thund-ckbench-")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    try:
        for q in QUERIES:
            for name, settings in SETTINGS.items():
                rows.append(measure(work, q, name, settings, PER_TRIGGER))
            for per_trigger in SWEEP:
                for name in ("every", "none"):
                    rows.append(measure(work, q, name, SETTINGS[name], per_trigger))
            rec = recovery(work, q)
            if rec:
                rows.append(rec)
        rec = recovery(work, "recovery_state")
        if rec:
            rows.append(rec)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in rows:
        r.update({"time": stamp, "commit": commit})
    append_rows(rows)


if __name__ == "__main__":
    main()
