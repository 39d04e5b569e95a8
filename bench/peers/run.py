#!/usr/bin/env python3
"""Nexmark side by side: thund (incremental mode), Apache Flink and Spark
Structured Streaming, on the same machine and the same events.

Run through bench/peers/run.sh (which installs the peers venv first). Steps:
  1. the events (prepare.py): thund's Nexmark generator written to Parquet, laid
     out time-ordered for each engine;
  2. a check run (--check-events, Parquet sinks): every engine's result must equal
     thund's, compared by DuckDB without the sentinel rows;
  3. timed runs per event count, query, engine and sink (noop / blackhole, and
     Parquet), interleaved by engine so that each query's runs see similar load;
  4. rows appended to bench/results/peers/bench_runs.csv; render.py draws the plots.
Not a test: never run in CI.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys

import duckdb
import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import measure  # noqa: E402
import prepare  # noqa: E402

RESULTS = os.path.join(ROOT, "bench", "results", "peers")
CSV = os.path.join(RESULTS, "bench_runs.csv")
# The latest check verdict per engine and query (with its time and event count),
# kept across invocations: a timed run's `check` column is its engine's verdict.
CHECKS = os.path.join(RESULTS, "checks.json")
ENV_DIR = os.environ.get("PEERS_ENV", os.path.join(ROOT, ".bench-data", "peers-env"))
VENV_PY = os.path.join(ENV_DIR, "venv", "bin", "python")
SPARK_PY = os.path.join(ROOT, ".deps", "spark", "bin", "python")
JARS = [os.path.join(ENV_DIR, "jars", "flink-sql-parquet-2.3.0.jar"),
        os.path.join(ENV_DIR, "jars", "flink-shaded-hadoop-2-uber-2.8.3-10.0.jar")]
ALL_QUERIES = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11"]
TABLES = {"q3": ["persons", "auctions"], "q4": ["auctions", "bids"], "q8": ["persons", "auctions"]}

# How each query's result is compared: its columns in one form for every
# engine, and the filter that leaves out the sentinel rows' own results.
COMPARE = {
    "q0": ("auction, bidder, price, epoch_ms(date_time)", "auction <> -1"),
    "q1": ("auction, bidder, round(price::DOUBLE, 3), epoch_ms(date_time)", "auction <> -1"),
    "q2": ("auction, price", "auction <> -1"),
    "q3": ("name, city, state, id", "id <> -1"),
    "q4": ("category, round(avg::DOUBLE, 3)", "category <> -1"),
    "q5": ("auction, num", "auction <> -1"),
    "q7": ("auction, price, bidder, epoch_ms(date_time)", "auction <> -1"),
    "q8": ("id, name, epoch_ms(starttime)", "id <> -1"),
    "q11": ("bidder, bid_count, epoch_ms(starttime), epoch_ms(endtime)", "bidder <> -1"),
}
Q4_COLUMNS = ["category", "avg"]

SOURCE = re.compile(r"CREATE STREAMING TABLE (bids|persons|auctions) AS SELECT \* FROM STREAM "
                    r"read_generator\(.*?\);\n", re.S)
TARGET = re.compile(r"CREATE STREAMING TABLE (q\w+) WITH \((.*?)\) AS\n", re.S)


def parse_count(text):
    m = re.fullmatch(r"([0-9.]+)([KkMm]?)", text.strip())
    if not m:
        raise SystemExit(f"bad event count '{text}': use e.g. 100K, 1M, 10M")
    return int(float(m.group(1)) * {"": 1, "k": 1000, "m": 1000000}[m.group(2).lower()])


def thund_sql(query, data_dir, sink, out_dir, input_kind="table"):
    """bench/nexmark/QUERY.sql with its generator replaced by a file drop over the
    prepared chunks (one file per trigger) and its target by a sink. With
    input_kind "table" the source feeds a streaming table, which thund stores
    (every run also writes its input as Parquet); with "view" it feeds a stream
    view (a temporary view over the source), which is not stored, as Flink's
    and Spark's jobs do not store their input."""
    with open(os.path.join(ROOT, "bench", "nexmark", query + ".sql")) as f:
        sql = f.read()

    def source(m):
        t = m.group(1)
        kind = "TEMPORARY VIEW" if input_kind == "view" else "STREAMING TABLE"
        return (f"CREATE {kind} {t} AS SELECT * FROM STREAM read_files('{data_dir}/{t}', "
                f"format => 'parquet', max_files_per_trigger => '1');\n")

    def target(m):
        q, opts = m.group(1), m.group(2).replace("{mode}", "incremental")
        using = ("USING noop" if sink == "noop" else f"USING parquet LOCATION '{out_dir}'")
        return (f"CREATE SINK {q}_out {using};\n"
                f"CREATE FLOW {q} WITH ({opts}) AS INSERT INTO {q}_out BY NAME\n")

    sql = SOURCE.sub(source, sql)
    sql, n = TARGET.subn(target, sql)
    assert n == 1, query
    return sql


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def versions():
    v = {"thund": git_commit()}
    try:
        v["flink"] = subprocess.run([VENV_PY, "-c", "import importlib.metadata as m; "
                                     "print(m.version('apache-flink'))"], capture_output=True,
                                    text=True).stdout.strip()
    except FileNotFoundError:
        v["flink"] = ""
    try:
        v["spark"] = subprocess.run([SPARK_PY, "-c", "import pyspark; print(pyspark.__version__)"],
                                    capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        v["spark"] = ""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    v["java"] = (java.splitlines() or [""])[0]
    return v


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.thund = os.path.join(self.build, "thund")
        self.work = os.path.abspath(args.work)
        self.versions = versions()
        self.machine = {
            "machine": f"{platform.node()} / {cpu_model()}",
            "cores": os.cpu_count(),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        }
        # (engine, query) -> "equal (N rows)" | "differs: ..." | "unsupported: ..." | ...
        self.checks = {}
        if os.path.exists(CHECKS):
            with open(CHECKS) as f:
                for key, v in json.load(f).items():
                    engine, query = key.split("/")
                    self.checks[(engine, query)] = (f"{v['verdict']} (check of {v['time_utc']}, "
                                                    f"{v['events']} events)")

    # ------------------------------------------------------------- engines --

    def run_thund(self, query, data, sink, out):
        work = os.path.join(self.work, "thund_run")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        path = os.path.join(work, f"{query}.sql")
        with open(path, "w") as f:
            f.write(thund_sql(query, os.path.join(data, "chunks"), sink, out,
                              self.args.thund_input))
        m = measure.run([self.thund, "run", path, "--storage", os.path.join(work, "store"),
                         "--events", "json", "--threads", str(self.args.parallelism)],
                        timeout=self.args.timeout)
        res = {"m": m, "seconds": m.wall_s, "output_rows": "", "input_rows": 0, "note": ""}
        if m.returncode != 0:
            refused = re.search(r"it runs in Recompute mode, which rereads all of its input every "
                                r"trigger, but it reads '\w+', a temporary view", m.stdout + m.stderr)
            if refused and self.args.thund_input == "view":
                # q4 falls back to Recompute, which cannot read a stream view:
                # thund refuses the pipeline before it runs, saying so.
                res["unsupported"] = "over a stream view: " + refused.group(0)
            else:
                res["error"] = (m.stdout + m.stderr)[-1500:]
            return res
        fallback = ""
        phase = {"sources": 0, "query": 0}  # trigger steps' time, from the run events
        for line in m.stdout.splitlines():
            if not line.startswith("{"):
                continue
            e = json.loads(line)
            if e.get("event") == "trigger":
                key = "query" if e.get("flow") == query else "sources"
                phase[key] += e.get("elapsed_ms", 0)
            if e.get("event") == "flow_finished" and e.get("flow") == query:
                res["output_rows"] = e.get("rows_out", "")
                if "Recompute" in e.get("message", ""):
                    fallback = "Recompute (incremental falls back)"
            if e.get("event") == "flow_finished" and e.get("flow") in ("bids", "persons",
                                                                       "auctions"):
                res["input_rows"] += e.get("rows_out", 0)
        res["note"] = (f"{fallback}; " if fallback else "") + (
            "input: stream view (not stored); " if self.args.thund_input == "view" else "") + (
            f"trigger steps: sources (read, store) {phase['sources']} ms, "
            f"query {phase['query']} ms")
        return res

    def run_flink(self, query, data, sink, out):
        cmd = [VENV_PY, os.path.join(HERE, "flink_job.py"), query, os.path.join(data, "flink"),
               sink, out, str(self.args.parallelism), ",".join(JARS)]
        m = measure.run(cmd, env=self.jvm_env(), timeout=self.args.timeout)
        res = {"m": m, "output_rows": "", "note": ""}
        r = re.search(r"FLINK_RESULT (\{.*\})", m.stdout)
        if m.returncode != 0 or not r:
            res["error"] = (m.stdout + m.stderr)[-1500:]
            return res
        res["seconds"] = json.loads(r.group(1))["seconds"]
        res["rows"] = [json.loads(line[4:]) for line in m.stdout.splitlines()
                       if line.startswith("ROW ")]
        return res

    def run_spark(self, query, data, sink, out):
        cmd = [SPARK_PY, os.path.join(HERE, "spark_job.py"), query, os.path.join(data, "chunks"),
               sink, out, str(self.args.parallelism)]
        shutil.rmtree(out + "_checkpoint", ignore_errors=True)
        m = measure.run(cmd, env=self.jvm_env(), timeout=self.args.timeout)
        res = {"m": m, "output_rows": "", "note": ""}
        u = re.search(r"SPARK_UNSUPPORTED (.*)", m.stdout)
        if u:
            res["unsupported"] = u.group(1)
            return res
        r = re.search(r"SPARK_RESULT (\{.*\})", m.stdout)
        if m.returncode != 0 or not r:
            res["error"] = (m.stdout + m.stderr)[-1500:]
            return res
        res["seconds"] = json.loads(r.group(1))["seconds"]
        return res

    def tmp_dir(self):
        # One per harness process: two harnesses sharing one emptied each other's
        # JVM files mid-run (Flink q7 / q11 and Spark q3 / q5 failures of 2026-12-04).
        return os.path.join(self.work, f"tmp-{os.getpid()}")

    def jvm_env(self):
        """The JVMs' temporary files (Spark's block manager, Flink's jars and mini
        cluster) under the work directory, emptied after every run."""
        tmp = self.tmp_dir()
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        return dict(os.environ, TMPDIR=tmp, JAVA_TOOL_OPTIONS=f"-Djava.io.tmpdir={tmp}")

    def run_engine(self, engine, query, data, sink, out):
        shutil.rmtree(out, ignore_errors=True)
        fn = {"thund": self.run_thund, "flink": self.run_flink, "spark": self.run_spark}[engine]
        engine_sink = sink
        if sink == "noop":
            engine_sink = {"thund": "noop", "flink": "blackhole", "spark": "noop"}[engine]
        if engine == "flink" and query == "q4" and sink == "parquet":
            engine_sink = "collect"  # an updating result: Flink's file sink takes inserts only
        res = fn(query, data, engine_sink, out)
        res["sink"] = engine_sink
        shutil.rmtree(self.tmp_dir(), ignore_errors=True)
        return res

    # --------------------------------------------------------------- check --

    def output_table(self, con, name, engine, query, out, res):
        cols, _ = COMPARE[query]
        if engine == "flink" and query == "q4":
            con.execute(f"CREATE OR REPLACE TABLE {name} (category BIGINT, avg DOUBLE)")
            for category, avg in res.get("rows", []):
                con.execute(f"INSERT INTO {name} VALUES (?, ?)", [int(category), float(avg)])
            return
        pattern = {"flink": "part-*", "spark": "*.parquet", "thund": "*.parquet"}[engine]
        files = [f for f in os.listdir(out) if re.fullmatch(pattern.replace("*", ".*"), f)] \
            if os.path.isdir(out) else []
        if not files:
            # No rows at all: an empty table of the compared columns.
            con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT {cols} FROM "
                        f"(SELECT NULL::BIGINT AS x) WHERE false")
            return
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM "
                    f"read_parquet('{out}/{pattern}')")

    def check(self, data):
        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        for query in self.args.check_queries or self.args.queries:
            outs = {}
            for engine in ["thund"] + [e for e in self.args.engines if e != "thund"]:
                out = os.path.join(self.work, "check", f"{engine}_{query}")
                res = self.run_engine(engine, query, data, "parquet", out)
                self.record(engine, query, "check-" + res["sink"], self.args.check_events, res,
                            out)
                if "unsupported" in res:
                    self.checks[(engine, query)] = "unsupported: " + res["unsupported"]
                    continue
                if "error" in res:
                    self.checks[(engine, query)] = "failed"
                    print(f"  {engine} {query}: FAILED\n{res['error']}", flush=True)
                    continue
                try:
                    self.output_table(con, f"{engine}_{query}", engine, query, out, res)
                    outs[engine] = f"{engine}_{query}"
                except duckdb.Error as e:
                    self.checks[(engine, query)] = f"unreadable: {e}"
            if "thund" not in outs:
                continue
            cols, keep = COMPARE[query]
            base = f"SELECT {cols} FROM thund_{query} WHERE {keep}"
            n = con.sql(f"SELECT count(*) FROM ({base})").fetchone()[0]
            self.checks[("thund", query)] = f"reference ({n} rows)"
            for engine, table in outs.items():
                if engine == "thund":
                    continue
                other = f"SELECT {cols} FROM {table} WHERE {keep}"
                missing = con.sql(f"SELECT count(*) FROM ({base} EXCEPT ALL {other})").fetchone()[0]
                extra = con.sql(f"SELECT count(*) FROM ({other} EXCEPT ALL {base})").fetchone()[0]
                self.checks[(engine, query)] = (
                    f"equal ({n} rows)" if missing == 0 and extra == 0 else
                    f"differs: {missing} of thund's {n} rows missing, {extra} extra")
            saved = {}
            if os.path.exists(CHECKS):
                with open(CHECKS) as f:
                    saved = json.load(f)
            now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
            for engine in self.args.engines:
                verdict = self.checks.get((engine, query), "-")
                print(f"  check {query} {engine}: {verdict}", flush=True)
                saved[f"{engine}/{query}"] = {"verdict": verdict, "time_utc": now,
                                              "events": self.args.check_events,
                                              "git_commit": self.versions["thund"]}
                self.checks[(engine, query)] = f"{verdict} (check of {now})"
            os.makedirs(RESULTS, exist_ok=True)
            with open(CHECKS, "w") as f:
                json.dump(saved, f, indent=1, sort_keys=True)

    # ---------------------------------------------------------------- runs --

    def record(self, engine, query, sink, events, res, out):
        m = res["m"]
        seconds = res.get("seconds")
        status = ("unsupported" if "unsupported" in res else
                  f"timeout ({self.args.timeout:g} s)" if m.returncode == -9 else
                  "failed" if "error" in res else "ok")
        output_rows = res.get("output_rows", "")
        if status == "ok" and output_rows == "" and sink.endswith("parquet") and os.path.isdir(out):
            try:
                output_rows = duckdb.sql(
                    f"SELECT count(*) FROM read_parquet('{out}/{'part-*' if engine == 'flink' else '*.parquet'}')"
                ).fetchone()[0]
            except duckdb.Error:
                pass
        cores = self.args.parallelism
        row = {
            "time_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "git_commit": self.versions["thund"], **self.machine,
            # thund over a stream view is its own series ("thund-view").
            "engine": ("thund-view" if engine == "thund" and self.args.thund_input == "view"
                       else engine),
            "engine_version": self.versions.get(engine, ""),
            "java": self.versions["java"] if engine != "thund" else "",
            "query": query, "sink": sink, "events": events,
            "input_rows": res.get("input_rows", ""), "output_rows": output_rows,
            "status": status,
            "seconds": round(seconds, 3) if seconds else "",
            "process_seconds": round(m.wall_s, 3),
            "events_per_s": round(events / seconds) if seconds else "",
            "events_per_s_per_core": round(events / seconds / cores) if seconds else "",
            "cpu_s": round(m.cpu_s, 2),
            "events_per_cpu_s": round(events / m.cpu_s) if status == "ok" and m.cpu_s else "",
            "peak_rss_mb": round(m.peak_rss_mb),
            "parallelism": cores,
            "load_1m": round(os.getloadavg()[0], 2),
            "check": self.checks.get((engine, query), ""),
            "note": "; ".join(x for x in (
                res.get("note", ""), res.get("unsupported", ""),
                " ".join(res.get("error", "")[-600:].split()) if status == "failed" else "") if x),
        }
        write_rows([row])
        print(json.dumps({k: row[k] for k in ("engine", "query", "sink", "events", "status",
                                              "seconds", "events_per_s", "cpu_s", "peak_rss_mb",
                                              "load_1m")}), flush=True)
        return row

    def timed(self, events, data):
        for query in self.args.queries:
            for rep in range(self.args.repeat):
                for engine in self.args.engines:
                    for sink in self.args.sinks:
                        out = os.path.join(self.work, "out", f"{engine}_{query}")
                        load = os.getloadavg()[0]
                        res = self.run_engine(engine, query, data, sink, out)
                        res.setdefault("note", "")
                        res["note"] = (res["note"] + f" load before {load:.2f}" +
                                       (f"; {self.args.note}" if self.args.note else "")).strip()
                        self.record(engine, query, res["sink"], events, res, out)
                        shutil.rmtree(out, ignore_errors=True)

    # ----------------------------------------- batch and keyed writes, as is --

    def existing(self, name, cmd, env, convert):
        """Runs one of the existing benchmarks (bench/README.md) and copies the rows
        it appended to its own CSV into bench_runs."""
        path = os.path.join(ROOT, "bench", "results", name)
        before = 0
        if os.path.exists(path):
            with open(path, newline="") as f:
                before = len(list(csv.DictReader(f)))
        print("running " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, env=dict(os.environ, **env), cwd=ROOT)
        if p.returncode != 0:
            print(f"{cmd[0]} failed ({p.returncode}); its rows are not copied", flush=True)
            return
        with open(path, newline="") as f:
            new = list(csv.DictReader(f))[before:]
        rows = []
        for r in new:
            row = {k: "" for k in FIELDS}
            row.update({"git_commit": self.versions["thund"], **self.machine, "status": "ok",
                        "parallelism": os.cpu_count()})
            row.update(convert(r))
            rows.append(row)
        write_rows(rows)
        print(f"copied {len(rows)} rows of bench/results/{name}", flush=True)

    def batch(self):
        def convert(r):
            secs = float(r["seconds"])
            rows = int(r["input_rows"])
            return {"time_utc": r["time_utc"], "engine": r["engine"],
                    "engine_version": "1.4.4" if r["engine"] == "duckdb" else self.versions["thund"],
                    "query": "batch:" + r["workload"], "sink": "parquet", "events": rows,
                    "input_rows": rows, "output_rows": r["output_rows"], "seconds": secs,
                    "process_seconds": secs, "events_per_s": round(rows / secs),
                    "events_per_s_per_core": round(rows / secs / int(r["threads"] or 1)),
                    "peak_rss_mb": r["peak_rss_mb"], "parallelism": r["threads"],
                    "load_1m": round(os.getloadavg()[0], 2),
                    "note": "bench/batch_bench (median of its repetitions)"}
        self.existing("batch_bench.csv",
                      [os.path.join(self.build, "bench", "batch_bench"), str(self.args.with_batch),
                       "3", os.path.join(ROOT, ".bench-data", "batch"), "all", "duckdb,thund"],
                      {}, convert)

    def keyed(self):
        def convert(r):
            secs = float(r["seconds"])
            rows = int(r["rows"])
            cpu = float(r["user_s"] or 0) + float(r["sys_s"] or 0)
            return {"time_utc": r["time_utc"], "engine": r["engine"],
                    "engine_version": self.versions["thund"] if r["engine"].startswith("thund")
                    else "", "query": f"keyed:{r['scenario']}/{r['files']} files",
                    "sink": "parquet", "events": rows, "input_rows": rows,
                    "output_rows": r["rows_written"], "seconds": secs, "process_seconds": secs,
                    "events_per_s": round(rows / secs) if secs else "",
                    "events_per_s_per_core": round(rows / secs / int(r["threads"] or 1))
                    if secs else "", "cpu_s": round(cpu, 2),
                    "events_per_cpu_s": round(rows / cpu) if cpu else "",
                    "peak_rss_mb": r["peak_rss_mb"], "parallelism": r["threads"],
                    "load_1m": r["load_avg"],
                    "note": ("bench/keyed_write_bench.sh " + r["note"]).strip()}
        self.existing("keyed_write.csv",
                      [os.path.join(ROOT, "bench", "keyed_write_bench.sh"), self.build],
                      {"SIZES": str(self.args.with_keyed), "LAYOUTS": "100",
                       "SCENARIOS": "all half_first", "REPEATS": "1",
                       "ENGINES": os.environ.get("KEYED_ENGINES", "thund duckdb daft")}, convert)

    def main(self):
        os.makedirs(self.work, exist_ok=True)
        if self.args.with_batch:
            self.batch()
        if self.args.with_keyed:
            self.keyed()
        if self.args.check_events and not self.args.no_check:
            n = self.args.check_events
            print(f"check run: {n} events", flush=True)
            data = prepare.prepare(self.thund, n, min(self.args.per_chunk, max(n // 4, 1)),
                                   self.args.parallelism,
                                   os.path.join(self.work, f"events-{n}"))
            self.check(data)
        for events in self.args.events:
            print(f"timed runs: {events} events", flush=True)
            data = prepare.prepare(self.thund, events, self.args.per_chunk, self.args.parallelism,
                                   os.path.join(self.work, f"events-{events}"))
            self.timed(events, data)


FIELDS = ["time_utc", "git_commit", "machine", "cores", "memory_gb", "engine", "engine_version",
          "java", "query", "sink", "events", "input_rows", "output_rows", "status", "seconds",
          "process_seconds", "events_per_s", "events_per_s_per_core", "cpu_s", "events_per_cpu_s",
          "peak_rss_mb", "parallelism", "load_1m", "check", "note"]


def write_rows(rows):
    os.makedirs(RESULTS, exist_ok=True)
    new = not os.path.exists(CSV)
    with open(CSV, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
        if new:
            w.writeheader()
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", default="1M", help="event counts, e.g. 1M,10M")
    ap.add_argument("--queries", default=",".join(ALL_QUERIES))
    ap.add_argument("--engines", default="thund,flink,spark")
    ap.add_argument("--sinks", default="noop,parquet",
                    help="noop (Flink: blackhole) and/or parquet")
    ap.add_argument("--check-events", default="100K", help="events of the check run")
    ap.add_argument("--no-check", action="store_true",
                    help="no check run: timed rows carry the verdicts in checks.json")
    ap.add_argument("--check-queries", default="",
                    help="check only these queries (default: --queries)")
    ap.add_argument("--per-chunk", default="250K", help="events per thund trigger (file)")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--thund-input", choices=["table", "view"], default="table",
                    help="thund's input: a stored streaming table, or a stream view "
                         "(a temporary view over the source, not stored)")
    ap.add_argument("--note", default="", help="text added to every timed row's note "
                    "(e.g. what else ran on the machine)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, ".bench-data", "peers"))
    ap.add_argument("--with-batch", default="", metavar="ROWS",
                    help="also run bench/batch_bench (thund against DuckDB) over ROWS rows")
    ap.add_argument("--with-keyed", default="", metavar="ROWS",
                    help="also run bench/keyed_write_bench.sh (thund, DuckDB's anti-join, Daft) "
                         "over ROWS rows, 100 files, targets all / half_first")
    args = ap.parse_args()
    args.with_batch = parse_count(args.with_batch) if args.with_batch else 0
    args.with_keyed = parse_count(args.with_keyed) if args.with_keyed else 0
    args.events = [parse_count(e) for e in args.events.split(",") if e]
    args.queries = [q for q in args.queries.split(",") if q]
    args.engines = [e for e in args.engines.split(",") if e]
    args.sinks = [s for s in args.sinks.split(",") if s]
    args.check_queries = [q for q in args.check_queries.split(",") if q]
    args.check_events = parse_count(args.check_events) if args.check_events else 0
    args.per_chunk = parse_count(args.per_chunk)
    for q in args.queries:
        if q not in COMPARE:
            raise SystemExit(f"unknown query {q}; known: {', '.join(ALL_QUERIES)}")
    Bench(args).main()


if __name__ == "__main__":
    main()
