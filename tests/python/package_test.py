"""The installed thund package (run by package_test.sh inside a fresh venv).

Oracles: pyarrow reading the committed Parquet files directly (the layout
docs/storage.md describes: {root}/{dataset}/current/), and plain Python sets
for the keyed writes."""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

import thund

SRC = os.environ["THUND_SOURCE_DIR"]
failures = []
passed = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    (passed if cond else failures).append(what)


def current_files(root, dataset):
    # The commit point names the version (docs/storage.md).
    with open(os.path.join(root, dataset, "_current")) as f:
        version = f.read().strip()
    return sorted(glob.glob(os.path.join(root, dataset, version, "**", "*.parquet"),
                            recursive=True))


PIPELINE = """name: pyshop
datasets:
  - name: orders
    kind: materialized_view
  - name: customer_revenue
    kind: materialized_view
flows:
  - name: orders
    target: orders
    sql: SELECT i AS id, i % 13 AS customer, (i * 7) % 100 AS cents FROM generate_series(1, 5000) AS t(i)
  - name: customer_revenue
    target: customer_revenue
    sql: SELECT customer, count(*) AS orders, sum(cents) AS cents FROM orders GROUP BY customer
"""


work = tempfile.mkdtemp(prefix="thund-pytest-")
try:
    # The package is the venv's, with the binary inside it.
    check(thund.__file__.startswith(sys.prefix), f"thund imported from the venv ({thund.__file__})")
    check(os.path.isfile(thund.binary()) and os.access(thund.binary(), os.X_OK),
          "the bundled binary is there")
    check(thund.binary().startswith(sys.prefix), "the binary lives in the venv")
    version = subprocess.run([os.path.join(sys.prefix, "bin", "thund"), "--version"],
                             capture_output=True, text=True)
    check(version.returncode == 0 and version.stdout.startswith("thund "),
          "the `thund` console script runs the binary")

    # thund.run on a two-flow batch pipeline.
    proj = os.path.join(work, "batch")
    os.makedirs(proj)
    with open(os.path.join(proj, "shop.yaml"), "w") as f:
        f.write(PIPELINE)
    store = os.path.join(work, "store")
    summary = thund.run(os.path.join(proj, "shop.yaml"), storage=store)
    check(summary["status"] == "completed", f"run completed ({summary['status']})")
    by_name = {d["dataset"]: d for d in summary["datasets"]}
    check("customer_revenue" in by_name, "the summary lists customer_revenue")

    # thund.read against pyarrow over the committed files.
    table = thund.read("customer_revenue", os.path.join(proj, "shop.yaml"), storage=store)
    check(isinstance(table, pa.Table), "read returns a pyarrow.Table")
    files = current_files(store, "customer_revenue")
    check(bool(files), "the dataset has committed Parquet files")
    oracle = pa.concat_tables([pq.read_table(f) for f in files]) if files else None
    if oracle is not None:
        def rows(t):
            return sorted(tuple(r.values()) for r in t.to_pylist())
        check(table.num_rows == oracle.num_rows == 13,
              f"row count {table.num_rows} == {oracle.num_rows}")
        check(rows(table) == rows(oracle.select(table.column_names)),
              "read gives the committed rows")
        check(by_name["customer_revenue"]["rows_written"] == oracle.num_rows,
              "summary rows_written == committed rows")
    check(thund.read("customer_revenue", os.path.join(proj, "shop.yaml"), storage=store,
                     limit=2).num_rows == min(2, table.num_rows), "read(limit=2)")

    # A second run: nothing changed, nothing recomputed.
    again = thund.run(os.path.join(proj, "shop.yaml"), storage=store)
    check(all(d["status"] == "up_to_date" for d in again["datasets"]),
          "second run: every dataset up to date")

    # Errors: a broken pipeline raises ThundError with thund's message.
    bad = os.path.join(work, "bad.yaml")
    with open(bad, "w") as f:
        f.write("name: bad\ndatasets:\n  - name: a\n    kind: materialized_view\n"
                "flows:\n  - name: a\n    target: nowhere\n    sql: SELECT 1\n")
    try:
        thund.run(bad, storage=store)
        check(False, "an invalid pipeline raises")
    except thund.ThundError as e:
        check(e.returncode == 1 and "nowhere" in str(e), f"ThundError names the problem ({e})")

    # write_parquet: keyed writes, the second skipping the keys already there.
    dst = os.path.join(work, "keyed")
    first = pa.table({"id": [1, 2, 3, 4], "v": ["a", "b", "c", "d"]})
    r1 = thund.write_parquet(first, dst, checkpoint_keys=["id"])
    check(r1["rows_written"] == 4, f"first write: 4 rows ({r1['rows_written']})")
    second = pa.table({"id": [3, 4, 5, 6, 6], "v": ["x", "y", "e", "f", "g"]})
    r2 = thund.write_parquet(second, dst, checkpoint_keys="id")
    check(r2["rows_skipped_existing"] == 2 and r2["rows_written"] == 2 and
          r2["rows_skipped_duplicate"] == 1, f"second write skips 3 and 4, one 6 ({r2})")
    written = pa.concat_tables(
        [pq.read_table(f) for f in sorted(glob.glob(os.path.join(dst, "**", "*.parquet"),
                                                    recursive=True))])
    got = sorted(zip(written.column("id").to_pylist(), written.column("v").to_pylist()))
    expected_ids = {1, 2, 3, 4, 5, 6}
    check(sorted(i for i, _ in got) == sorted(expected_ids), f"each key once: {got}")
    check(dict(got)[3] == "c" and dict(got)[5] == "e" and dict(got)[6] == "f",
          "existing keys keep their first rows; first duplicate wins")
    # From a path, with a transform.
    csv = os.path.join(work, "more.csv")
    with open(csv, "w") as f:
        f.write("id,v\n6,z\n7,g\n8,h\n")
    r3 = thund.write_parquet(csv, dst, checkpoint_keys=["id"],
                             transform="SELECT id, upper(v) AS v FROM src")
    check(r3["rows_written"] == 2 and r3["rows_skipped_existing"] == 1, f"path source ({r3})")
    try:
        thund.write_parquet(first, dst, checkpoint_keys=["nope"])
        check(False, "an unknown key column raises")
    except thund.ThundError as e:
        check("nope" in str(e), f"unknown key column named ({e})")
finally:
    shutil.rmtree(work, ignore_errors=True)

print(f"python package: {len(passed)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
