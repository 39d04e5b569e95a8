#!/usr/bin/env python3
"""Plots and a Markdown summary of bench/results/peers/bench_runs.csv.

  render.py [--since 2026-12-04T00:00:00Z]
Per event count, sink kind (noop / Parquet) and query: the median over the ok
runs of each engine (for thund, of its newest commit that ran). Writes bench/results/peers/{throughput,memory,cpu}_<N>.png
and summary.md (the tables docs/benchmarks.md quotes).
"""
import argparse
import collections
import csv
import os
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench", "results", "peers")
CSV = os.path.join(RESULTS, "bench_runs.csv")
# "thund-view": thund reading its input through a stream view (not stored).
ENGINES = ["thund", "thund-view", "flink", "spark"]
COLORS = {"thund": "#d95f02", "thund-view": "#e6ab02", "flink": "#1b9e77", "spark": "#7570b3"}
QUERY_ORDER = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q11"]
SINK_KIND = {"noop": "noop", "blackhole": "noop", "parquet": "parquet", "collect": "parquet"}


def read_rows(since):
    with open(CSV, newline="") as f:
        return [r for r in csv.DictReader(f) if r["time_utc"] >= since]


def load(since):
    """The Nexmark rows' medians per (events, sink kind, query, engine), and
    the status of keys with no ok run."""
    groups = collections.defaultdict(list)
    status = {}
    for r in read_rows(since):
        if r["sink"].startswith("check-") or r["query"] not in QUERY_ORDER:
            continue
        key = (int(r["events"]), SINK_KIND.get(r["sink"], r["sink"]), r["query"], r["engine"])
        if r["status"] == "ok":
            groups[key].append(r)
        else:
            status[key] = r["status"]
    med = {}
    for key, rs in groups.items():
        if key[3].startswith("thund"):
            # thund's figures are of its newest commit that ran (older runs
            # measured other code); the peers' code does not change.
            rs = [r for r in rs if r["git_commit"] == rs[-1]["git_commit"]]
        med[key] = {
            "events_per_s": statistics.median(float(r["events_per_s"]) for r in rs),
            "events_per_s_per_core": statistics.median(float(r["events_per_s_per_core"])
                                                       for r in rs),
            "cpu_s": statistics.median(float(r["cpu_s"]) for r in rs),
            "events_per_cpu_s": statistics.median(float(r["events_per_cpu_s"]) for r in rs),
            "peak_rss_mb": statistics.median(float(r["peak_rss_mb"]) for r in rs),
            "seconds": statistics.median(float(r["seconds"]) for r in rs),
            "load": statistics.median(float(r["load_1m"]) for r in rs),
            "n": len(rs),
            "check": rs[-1]["check"],
        }
    return med, status


def bars(med, status, events, sink, metric, ylabel, title, path, log=True):
    queries = [q for q in QUERY_ORDER if any((events, sink, q, e) in med for e in ENGINES)]
    if not queries:
        return False
    fig, ax = plt.subplots(figsize=(10, 4.2))
    width = 0.8 / len(ENGINES)
    for i, e in enumerate(ENGINES):
        xs, ys = [], []
        for j, q in enumerate(queries):
            x = j + (i - (len(ENGINES) - 1) / 2) * width
            v = med.get((events, sink, q, e))
            if v:
                xs.append(x)
                ys.append(v[metric])
            elif (events, sink, q, e) in status:
                ax.text(x, 0.02, status[(events, sink, q, e)][:11], rotation=90, fontsize=7,
                        ha="center", va="bottom", transform=ax.get_xaxis_transform())
        ax.bar(xs, ys, width, label=e, color=COLORS[e])
    ax.set_xticks(range(len(queries)))
    ax.set_xticklabels(queries)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def summary(med, status, since):
    lines = []
    for events in sorted({k[0] for k in list(med) + list(status)}):
        for sink in ("noop", "parquet"):
            qs = [q for q in QUERY_ORDER
                  if any((events, sink, q, e) in med or (events, sink, q, e) in status
                         for e in ENGINES)]
            if not qs:
                continue
            lines.append(f"\n**{events:,} events, {sink} sink**: events per CPU-second (events/s "
                         "per core by wall time; peak RSS), and thund's ratio in events per "
                         "CPU-second\n")
            lines.append("| query | thund | thund, stream view | Flink | Spark | thund / Flink "
                         "| thund / Spark | view / Flink | view / Spark |")
            lines.append("|---|---|---|---|---|---|---|---|---|")
            for q in qs:
                cells, rate = [], {}
                for e in ENGINES:
                    v = med.get((events, sink, q, e))
                    if v:
                        rate[e] = v["events_per_cpu_s"]
                        cells.append(f"**{v['events_per_cpu_s']:,.0f}** "
                                     f"({v['events_per_s_per_core']:,.0f}; "
                                     f"{v['peak_rss_mb']:,.0f} MB)")
                    else:
                        cells.append(status.get((events, sink, q, e), "—"))
                ratios = [f"{rate[t] / rate[e]:.1f}x" if t in rate and e in rate else "—"
                          for t in ("thund", "thund-view") for e in ("flink", "spark")]
                lines.append(f"| {q} | " + " | ".join(cells + ratios) + " |")
    lines += marginal(med, "noop")
    lines += marginal(med, "parquet")
    lines += others(since)
    return "\n".join(lines) + "\n"


def others(since):
    """The batch (thund against DuckDB) and keyed-write (thund, DuckDB's
    anti-join, Daft) rows the same command records: the newest per workload
    and engine."""
    newest = {}
    for r in read_rows(since):
        if r["query"].startswith(("batch:", "keyed:")) and r["status"] == "ok":
            newest[(r["query"], r["engine"])] = r
    if not newest:
        return []
    out = ["\n**Batch queries and keyed writes** (newest run of each; `--with-batch`, "
           "`--with-keyed`): seconds (rows/s; peak RSS), and thund's time over the others'\n",
           "| workload | rows | thund | DuckDB | Daft | thund / DuckDB | thund / Daft |",
           "|---|---|---|---|---|---|---|"]
    for q in sorted({k[0] for k in newest}):
        cells, secs = [], {}
        for e in ("thund", "duckdb", "daft"):
            r = newest.get((q, e))
            if r:
                secs[e] = float(r["seconds"])
                cells.append(f"{secs[e]:.3g} s ({float(r['events_per_s']):,.0f}; "
                             f"{float(r['peak_rss_mb']):,.0f} MB)")
            else:
                cells.append("—")
        ratio = [f"{secs['thund'] / secs[e]:.3g}x" if "thund" in secs and e in secs else "—"
                 for e in ("duckdb", "daft")]
        rows = next(r for (qq, _), r in newest.items() if qq == q)["events"]
        out.append(f"| {q} | {int(rows):,} | " + " | ".join(cells + ratio) + " |")
    return out


def marginal(med, sink):
    """Per further event, without start-up: for each two successive event
    counts of the sink, the events between them over the CPU time between."""
    counts = sorted({k[0] for k in med if k[1] == sink})
    out = []
    for lo, hi in zip(counts, counts[1:]):
        out += marginal_table(med, sink, lo, hi)
    return out


def marginal_table(med, sink, lo, hi):
    out = [f"\n**Per event after start-up** ({sink} sink): events per CPU-second between the "
           f"{lo:,} and {hi:,} event runs, (events {hi} - {lo}) / (CPU-s {hi} - {lo}), and "
           "thund's ratio\n",
           "| query | thund | thund, stream view | Flink | Spark | view / Flink | view / Spark |",
           "|---|---|---|---|---|---|---|"]
    rows = 0
    for q in QUERY_ORDER:
        rate = {}
        for e in ENGINES:
            a, b = med.get((lo, sink, q, e)), med.get((hi, sink, q, e))
            if a and b and b["cpu_s"] > a["cpu_s"]:
                rate[e] = (hi - lo) / (b["cpu_s"] - a["cpu_s"])
        if not rate:
            continue
        rows += 1
        cells = [f"{rate[e] / 1e6:.2f}M" if e in rate else "—" for e in ENGINES]
        ratios = [f"{rate['thund-view'] / rate[e]:.1f}x" if "thund-view" in rate and e in rate
                  else "—" for e in ("flink", "spark")]
        out.append(f"| {q} | " + " | ".join(cells + ratios) + " |")
    return out if rows else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--since", default="")
    args = ap.parse_args()
    med, status = load(args.since)
    for events in sorted({k[0] for k in med}):
        label = f"{events / 1e6:g}M" if events >= 1e6 else f"{events / 1e3:g}K"
        for sink in ("noop", "parquet"):
            bars(med, status, events, sink, "events_per_cpu_s", "events per CPU-second (log)",
                 f"Nexmark, {label} events, {sink} sink: events per CPU-second of the process tree",
                 os.path.join(RESULTS, f"cpu_rate_{sink}_{label}.png"))
            bars(med, status, events, sink, "events_per_s_per_core",
                 "events/s per core, wall (log)",
                 f"Nexmark, {label} events, {sink} sink: events/s per core by wall time (2 cores, "
                 "shared machine)", os.path.join(RESULTS, f"throughput_{sink}_{label}.png"))
        bars(med, status, events, "noop", "peak_rss_mb", "peak RSS, MB (log)",
             f"Nexmark, {label} events, noop sink: peak RSS of the process tree",
             os.path.join(RESULTS, f"memory_{label}.png"))
        bars(med, status, events, "noop", "cpu_s", "CPU seconds (log)",
             f"Nexmark, {label} events, noop sink: CPU time of the process tree",
             os.path.join(RESULTS, f"cpu_{label}.png"))
    text = summary(med, status, args.since)
    with open(os.path.join(RESULTS, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
