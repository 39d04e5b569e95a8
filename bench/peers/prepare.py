"""The events every engine reads: thund's seeded Nexmark generator, written once
as Parquet files by `thund run`, then laid out by DuckDB in two ways.

  chunks/{bids,persons,auctions}/chunk-NNNNNN.parquet
      time-ordered chunks of `per_chunk` combined events each (a time range of
      per_chunk / 10,000 s): thund takes one per trigger (a file drop), Spark
      reads the directory.
  flink/{bids,persons,auctions}/part-K.parquet
      one time-ordered file per Flink source subtask (rows dealt round-robin):
      Flink's file source hands whole local files to readers in listing order,
      so each reader must get its own time-ordered file or it drops rows as late.

Times are cut to milliseconds (Flink's rowtime is TIMESTAMP(3)); `dt_ms` (and
`expires_ms` for auctions) carry the same instants as epoch milliseconds, which
Flink turns into its rowtime. Each entity ends with one sentinel row an hour
after the last event (ids -1, seller -2, category -1, state 'ZZ', so no query
result row comes from it): it moves every engine's watermark past all real
windows, since neither thund's file drop nor Spark's availableNow closes the
windows still open when the input ends. Results are compared without it.
"""
import os
import shutil
import subprocess

import duckdb

EVENTS_PER_SECOND = 10000
SEED = 11
SENTINEL_AFTER = "1 hour"

GEN = """
CREATE STREAMING TABLE {t} AS SELECT * FROM STREAM read_generator(kind => 'nexmark_{kind}',
  seed => {seed}, rows_per_batch => {batch}, total_rows => {events},
  events_per_second => {eps}, out_of_orderness => '1s');
"""

ENTITIES = {"bids": "bid", "persons": "person", "auctions": "auction"}

SENTINEL = {
    "bids": "SELECT -1::BIGINT AS auction, -1::BIGINT AS bidder, 0::BIGINT AS price, "
            "'sentinel' AS channel, '' AS url, {t} AS date_time, '' AS extra",
    "persons": "SELECT -1::BIGINT AS id, 'sentinel' AS name, '' AS email_address, "
               "'' AS credit_card, '' AS city, 'ZZ' AS state, {t} AS date_time, '' AS extra",
    "auctions": "SELECT -1::BIGINT AS id, 'sentinel' AS item_name, '' AS description, "
                "0::BIGINT AS initial_bid, 0::BIGINT AS reserve, {t} AS date_time, "
                "{t} + INTERVAL 10 SECONDS AS expires, -2::BIGINT AS seller, "
                "-1::BIGINT AS category, '' AS extra",
}


def prepare(thund_bin, events, per_chunk, subtasks, out_dir):
    """Writes the layouts under out_dir (once: a `done` marker says it is complete)."""
    if os.path.exists(os.path.join(out_dir, "done")):
        return out_dir
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    store = os.path.join(out_dir, "gen_store")
    sql = "".join(GEN.format(t=t, kind=k, seed=SEED, batch=min(events, 1_000_000), events=events,
                             eps=EVENTS_PER_SECOND) for t, k in ENTITIES.items())
    path = os.path.join(out_dir, "gen.sql")
    with open(path, "w") as f:
        f.write(sql)
    subprocess.run([thund_bin, "run", path, "--storage", store, "--events", "none"], check=True,
                   stdout=subprocess.DEVNULL)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    t0 = con.sql("SELECT min(date_time) FROM read_parquet('%s/bids/current/*.parquet')"
                 % store).fetchone()[0]
    chunk_s = per_chunk / EVENTS_PER_SECOND
    for table in ENTITIES:
        src = f"read_parquet('{store}/{table}/current/*.parquet')"
        cols = [r[0] for r in con.sql(f"DESCRIBE SELECT * FROM {src}").fetchall()]
        sel = ", ".join(f"date_trunc('millisecond', {c}) AS {c}" if c in ("date_time", "expires")
                        else c for c in cols)
        con.execute(f"CREATE OR REPLACE TEMP TABLE real AS SELECT {sel} FROM {src}")
        last = con.sql("SELECT max(date_time) FROM real").fetchone()[0]
        sentinel = SENTINEL[table].format(
            t=f"(TIMESTAMPTZ '{last.isoformat()}' + INTERVAL {SENTINEL_AFTER})")
        extra = ", epoch_ms(date_time) AS dt_ms"
        if table == "auctions":
            extra += ", epoch_ms(expires) AS expires_ms"
        con.execute(f"""CREATE OR REPLACE TEMP TABLE ev AS
            SELECT *{extra}, row_number() OVER (ORDER BY date_time, sentinel_last) AS rn,
                   least(floor(epoch(date_time - TIMESTAMPTZ '{t0.isoformat()}') / {chunk_s}),
                         {max(0, (events - 1) // per_chunk)})::BIGINT AS chunk
            FROM (SELECT *, 0 AS sentinel_last FROM real
                  UNION ALL BY NAME SELECT *, 1 AS sentinel_last FROM ({sentinel}))""")
        chunk_dir = os.path.join(out_dir, "chunks", table)
        flink_dir = os.path.join(out_dir, "flink", table)
        os.makedirs(chunk_dir)
        os.makedirs(flink_dir)
        keep = ", ".join(cols) + ", dt_ms" + (", expires_ms" if table == "auctions" else "")
        chunks = con.sql("SELECT DISTINCT greatest(chunk, 0) FROM ev ORDER BY 1").fetchall()
        for (c,) in chunks:
            con.execute(f"COPY (SELECT {keep} FROM ev WHERE greatest(chunk, 0) = {c} ORDER BY rn) "
                        f"TO '{chunk_dir}/chunk-{c:06d}.parquet' (FORMAT parquet)")
        for k in range(subtasks):
            con.execute(f"COPY (SELECT {keep} FROM ev WHERE rn % {subtasks} = {k} ORDER BY rn) "
                        f"TO '{flink_dir}/part-{k}.parquet' (FORMAT parquet)")
    shutil.rmtree(store)
    with open(os.path.join(out_dir, "done"), "w") as f:
        f.write(f"events={events} per_chunk={per_chunk} subtasks={subtasks}\n")
    return out_dir
