"""Summarizes bench/results/keyed_write.csv as the Markdown table of
bench/README.md: per (rows, files, scenario) the median wall time and peak RSS of
each engine, and thund's speed-up over the DuckDB anti-join: the median of the
per-repetition ratios (the engines alternate, so a repetition's two runs saw
about the same machine load). --since / --until TIME_UTC and --rows N select runs."""
import argparse
import csv
import statistics
from collections import defaultdict

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("csv", nargs="?", default="bench/results/keyed_write.csv")
parser.add_argument("--since", default="", help="keep runs at or after this UTC time")
parser.add_argument("--until", default="~", help="keep runs before this UTC time")
parser.add_argument("--rows", type=int, action="append",
                    help="keep runs of this many rows (repeatable)")
options = parser.parse_args()
runs = defaultdict(list)
for row in csv.DictReader(open(options.csv)):
    if row["rows_written"] == "-1":
        continue  # failed or not run: listed in the CSV's note column
    if not options.since <= row["time_utc"] < options.until:
        continue
    if options.rows and int(row["rows"]) not in options.rows:
        continue
    runs[(int(row["rows"]), int(row["files"]), row["scenario"], row["engine"])].append(row)

def cell(key):
    rs = runs.get(key)
    if not rs:
        return None, "—"
    t = statistics.median(float(r["seconds"]) for r in rs)
    m = statistics.median(int(r["peak_rss_mb"]) for r in rs)
    return t, f"{t:.1f} s / {m / 1024:.1f} GB" if m >= 1024 else f"{t:.1f} s / {m:.0f} MB"

engines = ["thund", "thund_plain", "thund_hash", "duckdb", "copy_floor", "daft"]
print("| rows | files | target holds | " + " | ".join(engines) +
      " | thund vs duckdb | thund vs thund_plain |")
print("|---" * (len(engines) + 5) + "|")
order = {"all": 0, "half_first": 1, "half_even": 2, "all_rewritten": 3, "half_rewritten": 4}
for rows, files, scenario in sorted({k[:3] for k in runs}, key=lambda k: (k[0], k[1], order[k[2]])):
    cells = [cell((rows, files, scenario, e)) for e in engines]
    th = runs.get((rows, files, scenario, "thund"), [])
    du = runs.get((rows, files, scenario, "duckdb"), [])
    pairs = [float(d["seconds"]) / float(t["seconds"]) for t, d in zip(th, du)]
    ratio = f"{statistics.median(pairs):.2f}x" if pairs else "—"
    n = len(pairs)
    pl = runs.get((rows, files, scenario, "thund_plain"), [])
    plain_pairs = [float(p["seconds"]) / float(t["seconds"]) for t, p in zip(th, pl)]
    plain = (f"{statistics.median(plain_pairs):.2f}x (n={len(plain_pairs)})"
             if plain_pairs else "—")
    print(f"| {rows:,} | {files} | {scenario} | " + " | ".join(c[1] for c in cells) +
          f" | {ratio} (n={n}) | {plain} |")
