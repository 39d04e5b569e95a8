#!/usr/bin/env bash
# Crash soak of streaming checkpoints: real SIGKILLs of `thund run` at random
# points of six incremental pipelines (windowed aggregation, stream-stream
# join, deduplication, AUTO CDC over a file drop, file sinks, merge sinks),
# each rerun resuming from the newest good epoch, then one run to completion;
# every dataset and sink must then equal an uninterrupted reference run as a
# multiset (nothing lost, nothing twice).
#
# Usage: scripts/checkpoint_soak.sh [KILLS=1000] [SEED=random] [--keep]
#   THUND=path/to/thund   the binary to drive (default build/thund)
#   --keep                keep the scratch directory (printed) after the run
#   SOAK_PIPELINES=a,b    only these of window, join, dedup, cdc, sink, merge
# Needs a release build (scripts/build.sh release) and python3 (standard
# library only). Comparisons run in DuckDB through `thund query` (read_parquet
# / read_csv over both roots, EXCEPT ALL both ways). Kill points: a delay of
# 0-60 ms, 0-2 ms after the run's first recovery event (recovery under way), a
# delay over the run's estimated time left, a new epoch directory (mid-commit),
# 0-3 ms after an epoch's manifest (publishing), a new dataset version or sink
# file (staged). Prints one table: per pipeline the rounds (a fresh root,
# kills, a run to completion, a comparison), kills sent, kills that landed (the
# run died of SIGKILL), runs that resumed from an epoch (a "recovery" run
# event), other recovery actions (datasets re-pointed, uncommitted sink files
# or damaged epochs removed), the rows of the reference, and the rows lost /
# duplicated (multiset differences over every dataset and sink; a dataset is
# read at the version its `_current` names), and stale links: datasets whose
# `current` symlink still names an older version after the run to completion
# (a kill between the two renames; readers of `{dataset}/current/` then miss
# rows; reported, with the round kept, but not a failure). Exits 1 when a row
# is lost or duplicated, or a run fails.
# The same pipelines are checked, with fewer kills, by
# tests/backend/checkpoint_kill_test.cc.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
THUND="${THUND:-$ROOT/build/thund}"
if [[ ! -x "$THUND" ]]; then
  echo "no thund binary at $THUND (run scripts/build.sh release, or set THUND=...)" >&2
  exit 2
fi
exec python3 - "$THUND" "$@" <<'PY'
import os, random, shutil, signal, subprocess, sys, tempfile, time

thund = sys.argv[1]
args = [a for a in sys.argv[2:] if a != "--keep"]
keep = "--keep" in sys.argv[2:]
kills_wanted = int(args[0]) if len(args) > 0 else 1000
seed = int(args[1]) if len(args) > 1 else random.SystemRandom().randrange(1 << 31)
rng = random.Random(seed)
work = tempfile.mkdtemp(prefix="thund-soak-")
print(f"checkpoint soak: {kills_wanted} kills, seed {seed}, scratch {work}", flush=True)

GEN = ("CREATE STREAMING TABLE {t} AS SELECT * FROM STREAM read_generator(\n"
       "  kind => '{kind}', seed => {seed}, rows_per_batch => {batch}, total_rows => {total},\n"
       "  events_per_second => 2000, out_of_orderness => '1s');\n")

def gen(t, kind, s, batch=2000, total=60000):
    return GEN.format(t=t, kind=kind, seed=s, batch=batch, total=total)

# The CDC feed: a file drop of the CSV files write_changes() makes, 4 per trigger.
CHANGES = ("CREATE STREAMING TABLE changes (id BIGINT, name STRING, amount BIGINT, seq BIGINT,"
           " op STRING,\n  n BIGINT)\nAS SELECT * FROM STREAM read_files('{data}',"
           " format => 'csv', max_files_per_trigger => 4);\n")

# Each pipeline: SQL (with {out}: a directory next to the storage root for
# sinks, {data}: the pipeline's input files), and what to compare: dataset
# names (their committed version), (name, glob under {out}) for file sinks,
# (name, "") for merge sinks (at {out}/name, versioned like a dataset).
PIPELINES = {
    "window": dict(
        sql="CREATE PIPELINE ck_window;\n" + gen("bids", "nexmark_bid", 11) +
        "CREATE STREAMING TABLE late_bids;\n"
        "CREATE STREAMING TABLE per_window WITH (mode = 'incremental', late_rows = 'late_bids')"
        " AS\nSELECT window.start AS ws, channel, count(*) AS n, sum(price) AS total,"
        " max(price) AS top\nFROM STREAM bids WATERMARK date_time DELAY OF INTERVAL 500"
        " MILLISECONDS\nGROUP BY window(date_time, '1 second'), channel;\n"
        "CREATE STREAMING TABLE per_auction WITH (mode = 'incremental', watermark = 'date_time',"
        "\n  allowed_lateness = '1 second') AS\n"
        "SELECT window_start, window_end, auction, count(*) AS n, min(price) AS low\n"
        "FROM TUMBLE(TABLE STREAM bids, DESCRIPTOR(date_time), INTERVAL '3' SECONDS)\n"
        "GROUP BY window_start, window_end, auction;\n",
        datasets=["bids", "late_bids", "per_window", "per_auction"]),
    "join": dict(
        sql="CREATE PIPELINE ck_join;\n" + gen("persons", "nexmark_person", 7) +
        gen("auctions", "nexmark_auction", 7) + gen("bids", "nexmark_bid", 7) +
        "CREATE STREAMING TABLE early_bids WITH (mode = 'incremental', watermark = 'date_time',"
        "\n  allowed_lateness = '2 seconds') AS\n"
        "SELECT a.id AS auction, a.category, b.bidder, b.price, b.date_time\n"
        "FROM STREAM(auctions) AS a JOIN STREAM(bids) AS b\n  ON a.id = b.auction AND"
        " b.date_time BETWEEN a.date_time AND a.date_time + INTERVAL 3 SECONDS;\n"
        "CREATE STREAMING TABLE new_sellers WITH (mode = 'incremental', watermark = 'date_time',"
        "\n  allowed_lateness = '2 seconds') AS\n"
        "SELECT p.window_start, p.id, p.name, count(*) AS auctions\n"
        "FROM TUMBLE(TABLE persons, DESCRIPTOR(date_time), INTERVAL '5' SECONDS) AS p\n"
        "JOIN TUMBLE(TABLE auctions, DESCRIPTOR(date_time), INTERVAL '5' SECONDS) AS a\n"
        "  ON p.window_start = a.window_start AND p.id = a.seller\n"
        "GROUP BY p.window_start, p.id, p.name;\n",
        datasets=["persons", "auctions", "bids", "early_bids", "new_sellers"]),
    "dedup": dict(
        sql="CREATE PIPELINE ck_dedup;\n" + gen("bids", "nexmark_bid", 5) +
        "CREATE STREAMING TABLE first_bids WITH (mode = 'incremental', watermark = 'date_time',"
        "\n  allowed_lateness = '1 second') AS\n"
        "SELECT bidder, auction, price, date_time FROM (\n"
        "  SELECT *, row_number() OVER (PARTITION BY bidder ORDER BY date_time) AS rn"
        " FROM STREAM(bids)\n) AS ranked WHERE rn = 1;\n"
        "CREATE STREAMING TABLE last_bids WITH (mode = 'incremental') AS\n"
        "SELECT bidder, auction, price, date_time FROM (\n"
        "  SELECT *, row_number() OVER (PARTITION BY bidder ORDER BY date_time DESC) AS rn"
        " FROM STREAM(bids)\n) AS ranked WHERE rn = 1;\n"
        "CREATE STREAMING TABLE pairs WITH (mode = 'incremental') AS\n"
        "SELECT DISTINCT auction, channel FROM STREAM(bids);\n",
        datasets=["bids", "first_bids", "last_bids", "pairs"]),
    "cdc": dict(
        sql="CREATE PIPELINE ck_cdc;\n" + CHANGES +
        "CREATE STREAMING TABLE scd1;\n"
        "CREATE FLOW scd1_cdc WITH (mode = 'incremental') AS AUTO CDC INTO scd1"
        " FROM STREAM(changes)\nKEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq"
        " COLUMNS * EXCEPT (op, n);\n"
        "CREATE STREAMING TABLE scd2;\n"
        "CREATE FLOW scd2_cdc WITH (mode = 'incremental') AS AUTO CDC INTO scd2\n"
        "FROM (SELECT id, name, amount, seq, op, n FROM STREAM(changes) WHERE amount >= 0)\n"
        "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, n)\n"
        "STORED AS SCD TYPE 2;\n",
        datasets=["changes", "scd1", "scd2"]),
    "sink": dict(
        sql="CREATE PIPELINE ck_sink;\n" + gen("bids", "nexmark_bid", 9, batch=1500) +
        "CREATE SINK cheap USING parquet LOCATION '{out}/cheap';\n"
        "CREATE FLOW to_cheap WITH (mode = 'incremental', output_mode = 'append') AS\n"
        "INSERT INTO cheap BY NAME\n"
        "SELECT auction, bidder, price, channel, date_time FROM STREAM(bids)"
        " WHERE price % 3 = 0;\n"
        "CREATE SINK partner USING csv LOCATION '{out}/partner';\n"
        "CREATE FLOW to_partner WITH (mode = 'incremental', output_mode = 'append') AS\n"
        "INSERT INTO partner BY NAME\n"
        "SELECT auction, bidder, price FROM STREAM(bids) WHERE channel = 'partner';\n",
        datasets=["bids", ("cheap", "cheap/*.parquet"), ("partner", "partner/*.csv")]),
    # Merge sinks (upserts tagged with the epoch) fed by AUTO CDC and by an Update
    # aggregation.
    "merge": dict(
        sql="CREATE PIPELINE ck_merge;\n" + CHANGES +
        "CREATE SINK live USING parquet LOCATION '{out}/live'\n"
        "WITH (write_mode = 'merge', merge_keys = (id));\n"
        "CREATE FLOW live_cdc WITH (mode = 'incremental') AS AUTO CDC INTO live"
        " FROM STREAM(changes)\nKEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq"
        " COLUMNS * EXCEPT (op, n);\n"
        "CREATE SINK per_id USING parquet LOCATION '{out}/per_id'\n"
        "WITH (write_mode = 'merge', merge_keys = (id));\n"
        "CREATE FLOW to_per_id WITH (mode = 'incremental', output_mode = 'update') AS\n"
        "INSERT INTO per_id BY NAME\n"
        "SELECT id, count(*) AS changes, sum(amount) AS amount FROM STREAM(changes)"
        " GROUP BY id;\n",
        datasets=["changes", ("live", ""), ("per_id", "")]),
}

def write_changes(data, files=80, rows=50, s=3):
    """The CDC feed: `files` small CSV files of keyed changes, out of sequence order,
    some deletes and some equal sequences (the later arrival wins)."""
    os.makedirs(data, exist_ok=True)
    r = random.Random(s)
    n = 0
    for f in range(files):
        lines = ["id,name,amount,seq,op,n"]
        for _ in range(rows):
            op = "D" if r.random() < 0.1 else "U"
            n += 1
            lines.append(f"{r.randrange(200)},n{r.randrange(5)},{r.randrange(1000)},"
                         f"{r.randrange(20000)},{op},{n}")
        with open(os.path.join(data, f"c-{f:05d}.csv"), "w") as out:
            out.write("\n".join(lines) + "\n")

class Store:
    """One storage root (plus its sink directory) of one pipeline."""
    def __init__(self, pipe, name):
        self.pipe, self.base = pipe, os.path.join(work, pipe, name)
        self.root, self.out = self.base + "/store", self.base + "/out"
        self.sql = self.base + "/p.sql"
        self.ck = f"{self.root}/_thund/checkpoints/ck_{pipe}"
        shutil.rmtree(self.base, ignore_errors=True)
        os.makedirs(self.base)
        text = PIPELINES[pipe]["sql"].replace("{out}", self.out)
        text = text.replace("{data}", os.path.join(work, "changes"))
        with open(self.sql, "w") as f:
            f.write(text)
        self.runs = 0
        self.repairs = 0

    def next_log(self):
        return f"{self.base}/run-{self.runs + 1:03d}.log"

    def args(self):
        return [thund, "run", self.sql, "--storage", self.root, "--events", "json"]

    def committed_epoch(self):
        best = 0
        for n in listdir(self.ck):
            if n.startswith("epoch=") and os.path.exists(f"{self.ck}/{n}/_manifest.json"):
                best = max(best, int(n[6:]))
        return best

def listdir(d):
    try:
        return os.listdir(d)
    except OSError:
        return []

def ino(p):
    try:
        return os.stat(p).st_ino
    except OSError:
        return None

def table_dir(st, ds):
    """Where a dataset (a name) or a merge sink ((name, "")) keeps its versions; None for
    a file sink ((name, glob))."""
    if isinstance(ds, str):
        return f"{st.root}/{ds}"
    return f"{st.out}/{ds[0]}" if not ds[1] else None

def version_dirs(st):
    out = set()
    for ds in PIPELINES[st.pipe]["datasets"]:
        t = table_dir(st, ds)
        if t:
            for n in listdir(t):
                if n.startswith("v-"):
                    out.add((t, n, ino(f"{t}/{n}")))
        else:
            d = os.path.dirname(f"{st.out}/{ds[1]}")
            for n in listdir(d):
                if n.startswith("part-stream"):
                    out.add((ds[0], n, ino(f"{d}/{n}")))
    return out

def pick_kill(st, t_ref, epochs):
    """A kill point: (description, predicate(seconds since start) -> kill now?). `epochs`:
    how many the reference committed (points past them would never come)."""
    c = st.committed_epoch()
    left = t_ref * max(0.15, 1 - c / epochs)  # the run's estimated time left
    kind = rng.choices(["early", "time", "recovery", "epoch", "manifest", "version"],
                       [10, 25, 10, 20, 20, 15])[0]
    if c >= epochs and kind not in ("early", "time", "recovery"):
        kind = "time"
    if kind == "recovery" and c > 0:  # while the run checks the epoch and restores state
        log, extra, seen = st.next_log(), rng.uniform(0, 0.002), []
        def in_recovery(t):
            if not seen:
                try:
                    with open(log) as f:
                        if '"event":"recovery"' in f.read():
                            seen.append(t)
                except OSError:
                    pass
            return bool(seen) and t >= seen[0] + extra
        return f"{extra*1000:.1f} ms into recovery", in_recovery
    if kind == "recovery":
        kind = "early"
    if kind in ("early", "time"):
        d = rng.uniform(0, 0.06) if kind == "early" else rng.uniform(0, 0.7 * left)
        return f"after {d*1000:.0f} ms", lambda t: t >= d
    target = c + rng.randint(1, min(4, epochs - c))
    if kind == "epoch":
        path = f"{st.ck}/epoch={target:06d}"
        stale = ino(path)  # a leftover of an earlier kill, which the rerun discards
        return (f"as epoch {target} is begun",
                lambda t: (lambda i: i is not None and i != stale)(ino(path)))
    if kind == "manifest":
        path = f"{st.ck}/epoch={target:06d}/_manifest.json"
        extra = rng.uniform(0, 0.003)
        seen = []
        def after_manifest(t):
            if not seen and os.path.exists(path):
                seen.append(t)
            return bool(seen) and t >= seen[0] + extra
        return f"{extra*1000:.1f} ms after epoch {target} commits", after_manifest
    before = version_dirs(st)
    return ("as a dataset version or sink file is staged",
            lambda t: bool(version_dirs(st) - before))

def run(st, kill_point=None):
    """One run; returns (landed, exit code or None, resumed?)."""
    log = st.next_log()
    st.runs += 1
    with open(log, "w") as f:
        p = subprocess.Popen(st.args(), stdout=f, stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        if kill_point is not None:
            while p.poll() is None:
                if kill_point(time.monotonic() - t0):
                    p.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.0003)
        rc = p.wait()
        landed = rc == -signal.SIGKILL
    resumed = repairs = 0
    with open(log) as f:
        for line in f:
            if '"event":"recovery"' in line:
                if "resumed from epoch" in line:
                    resumed = 1
                else:
                    repairs += 1  # a dataset re-pointed, a sink file or damaged epoch removed
    st.repairs += repairs
    return landed, (None if landed else rc), resumed, log

def query(st, sql):
    r = subprocess.run([thund, "query", st.sql, "--storage", st.root, "--format", "csv", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"thund query failed: {r.stderr}\n{sql}")
    lines = r.stdout.strip().splitlines()
    return [int(x) for x in lines[1].split(",")]

def committed_version(table):
    try:
        with open(f"{table}/_current") as f:
            return f.read().strip()
    except OSError:
        return ""

def stale_links(st):
    """Datasets whose `current` symlink names another version than `_current`."""
    out = []
    for ds in PIPELINES[st.pipe]["datasets"]:
        t = table_dir(st, ds)
        if t:
            v = committed_version(t)
            try:
                link = os.readlink(f"{t}/current")
            except OSError:
                link = ""
            if v and os.path.basename(link) != v:
                out.append(f"{os.path.basename(t)}: _current {v}, current -> {link}")
    return out

def relation(st, ds, like=None):
    t = table_dir(st, ds)
    if t:
        # The version the commit point names (the `current` symlink may lag: stale_links)
        v = committed_version(t)
        glob, reader = f"{t}/{v}/*.parquet", "read_parquet"
        present = bool(v) and os.path.isdir(f"{t}/{v}")
    else:
        glob = f"{st.out}/{ds[1]}"
        reader = "read_csv" if glob.endswith(".csv") else "read_parquet"
        present = any(n.endswith(glob[glob.rindex("."):])
                      for n in listdir(os.path.dirname(glob)))
    if present:
        return f"(SELECT * FROM {reader}('{glob}'))"
    assert like is not None, f"the reference has no {ds}"
    return f"(SELECT * FROM {like} LIMIT 0)"

def compare(a, b):
    """Per pipeline: (rows of the reference, rows lost, rows duplicated), summed."""
    parts = []
    for ds in PIPELINES[a.pipe]["datasets"]:
        ra = relation(a, ds)
        rb = relation(b, ds, like=ra)
        parts.append(f"(SELECT count(*) FROM {ra})")
        parts.append(f"(SELECT count(*) FROM ({ra} EXCEPT ALL {rb}))")
        parts.append(f"(SELECT count(*) FROM ({rb} EXCEPT ALL {ra}))")
    v = query(a, "SELECT " + ", ".join(parts))
    per = {}
    for i, ds in enumerate(PIPELINES[a.pipe]["datasets"]):
        per[ds if isinstance(ds, str) else ds[0]] = v[3 * i:3 * i + 3]
    return per

stats = {p: dict(kills=0, landed=0, recoveries=0, repairs=0, rounds=0, expected=0, lost=0,
                 dup=0, failures=0, stale=0) for p in PIPELINES}
notes = []
refs = {}
write_changes(os.path.join(work, "changes"))
only = os.environ.get("SOAK_PIPELINES")
if only:
    PIPELINES = {p: PIPELINES[p] for p in only.split(",")}
for pipe in PIPELINES:
    ref = Store(pipe, "reference")
    t0 = time.monotonic()
    landed, rc, _, log = run(ref)
    t_ref = time.monotonic() - t0
    if rc != 0:
        print(f"{pipe}: the reference run failed (exit {rc}), see {log}")
        sys.exit(1)
    refs[pipe] = (ref, t_ref, ref.committed_epoch())
    print(f"  reference {pipe}: {t_ref:.2f} s, {refs[pipe][2]} epochs", flush=True)

failed = []
kills_done = 0
t_start = time.monotonic()
names = list(PIPELINES)
round_no = 0
while kills_done < kills_wanted:
    pipe = names[round_no % len(names)]
    round_no += 1
    ref, t_ref, epochs = refs[pipe]
    st = Store(pipe, f"round-{round_no:04d}")
    s = stats[pipe]
    s["rounds"] += 1
    k = min(rng.randint(4, 14), -(-kills_wanted // len(names)), kills_wanted - kills_done)
    for _ in range(k):
        what, point = pick_kill(st, t_ref, epochs)
        landed, rc, resumed, log = run(st, point)
        kills_done += 1
        s["kills"] += 1
        s["landed"] += landed
        s["recoveries"] += resumed
        if not landed and rc != 0:
            failed.append(f"{pipe} round {round_no}: a run killed {what} exited {rc}: {log}")
            s["failures"] += 1
        if not landed:
            break  # the run completed before the kill: nothing left to do
    landed, rc, resumed, log = run(st)
    s["recoveries"] += resumed
    if rc != 0:
        failed.append(f"{pipe} round {round_no}: the final run exited {rc}: {log}")
        s["failures"] += 1
    s["repairs"] += st.repairs
    for link in stale_links(st):
        s["stale"] += 1
        notes.append(f"{pipe} round {round_no}: stale current link, {link} ({st.base})")
    per = compare(ref, st)
    bad = {d: v for d, v in per.items() if v[1] or v[2]}
    s["expected"] += sum(v[0] for v in per.values())
    s["lost"] += sum(v[1] for v in per.values())
    s["dup"] += sum(v[2] for v in per.values())
    if bad:
        failed.append(f"{pipe} round {round_no}: {bad} (rows, lost, duplicated) in {st.base}")
    elif not keep and not stale_links(st):
        shutil.rmtree(st.base, ignore_errors=True)
    print(f"  round {round_no} {pipe}: {st.runs - 1} kills, "
          f"{'DIFFERS ' + str(bad) if bad else 'equal'} ({kills_done}/{kills_wanted})",
          flush=True)

elapsed = time.monotonic() - t_start
hdr = ("pipeline", "rounds", "kills", "landed", "recoveries", "repairs", "rows expected",
       "rows lost", "rows duplicated", "failed runs", "stale links")
rows = [(p, s["rounds"], s["kills"], s["landed"], s["recoveries"], s["repairs"], s["expected"],
         s["lost"], s["dup"], s["failures"], s["stale"]) for p, s in stats.items()]
rows.append(("total",) + tuple(sum(r[i] for r in rows) for i in range(1, len(hdr))))
w = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
print(f"\n{kills_done} kills in {elapsed:.0f} s (seed {seed})")
for r in [hdr] + rows:
    print("  ".join(str(x).rjust(w[i]) if i else str(x).ljust(w[i]) for i, x in enumerate(r)))
for n in notes:
    print("NOTE:", n)
for f in failed:
    print("FAILED:", f)
if not keep and not failed and not notes:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failed else 0)
PY
