"""One Nexmark query on Apache Flink (PyFlink, local mini cluster), streaming mode.

Usage (the peers venv's python): flink_job.py QUERY DATA_DIR SINK OUT_DIR PARALLELISM JARS
  DATA_DIR  the `flink` layout of prepare.py: {bids,persons,auctions}/part-K.parquet
  SINK      blackhole | parquet (written under OUT_DIR) | collect (rows printed as JSON
            lines: the final table of an updating query such as q4)
Prints one line `FLINK_RESULT {"seconds": ...}`: the job's own time, from submitting
the INSERT to its end (the JVM and mini cluster start before it and are not counted).
The SQL follows the Nexmark project's Flink queries, over the same columns as
bench/nexmark/*.sql.
"""
import json
import sys
import time

from pyflink.common import RowKind
from pyflink.table import EnvironmentSettings, TableEnvironment

QUERY, DATA, SINK, OUT, PARALLELISM, JARS = sys.argv[1:7]

TABLES = {
    "bids": """CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,
        url STRING, extra STRING, dt_ms BIGINT, date_time AS TO_TIMESTAMP_LTZ(dt_ms, 3),
        WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)""",
    "persons": """CREATE TABLE persons (id BIGINT, name STRING, email_address STRING,
        credit_card STRING, city STRING, state STRING, extra STRING, dt_ms BIGINT,
        date_time AS TO_TIMESTAMP_LTZ(dt_ms, 3),
        WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)""",
    "auctions": """CREATE TABLE auctions (id BIGINT, item_name STRING, description STRING,
        initial_bid BIGINT, reserve BIGINT, seller BIGINT, category BIGINT, extra STRING,
        dt_ms BIGINT, expires_ms BIGINT, date_time AS TO_TIMESTAMP_LTZ(dt_ms, 3),
        expires AS TO_TIMESTAMP_LTZ(expires_ms, 3),
        WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)""",
}

HOP = "TABLE(HOP(TABLE bids, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"

# (tables read, output columns and types, query). Timestamps are written as
# TIMESTAMP(3) (UTC) so every engine's Parquet output compares.
QUERIES = {
    "q0": (["bids"], "auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3)",
           "SELECT auction, bidder, price, CAST(date_time AS TIMESTAMP(3)) FROM bids"),
    "q1": (["bids"], "auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), date_time TIMESTAMP(3)",
           "SELECT auction, bidder, 0.908 * price, CAST(date_time AS TIMESTAMP(3)) FROM bids"),
    "q2": (["bids"], "auction BIGINT, price BIGINT",
           "SELECT auction, price FROM bids WHERE MOD(auction, 123) = 0"),
    "q3": (["persons", "auctions"], "name STRING, city STRING, state STRING, id BIGINT",
           """SELECT P.name, P.city, P.state, A.id
              FROM auctions AS A INNER JOIN persons AS P ON A.seller = P.id
              WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')"""),
    "q4": (["auctions", "bids"], "category BIGINT, `avg` DOUBLE",
           # AVG of a BIGINT is a BIGINT in Flink: the double average, as in thund.
           """SELECT Q.category, AVG(CAST(Q.final AS DOUBLE))
              FROM (SELECT MAX(B.price) AS final, A.category
                    FROM auctions A, bids B
                    WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
                    GROUP BY A.id, A.category) Q
              GROUP BY Q.category"""),
    "q5": (["bids"], "auction BIGINT, num BIGINT",
           f"""SELECT AuctionBids.auction, AuctionBids.num
              FROM (SELECT auction, count(*) AS num, window_start AS starttime,
                           window_end AS endtime
                    FROM {HOP} GROUP BY auction, window_start, window_end) AS AuctionBids
              JOIN (SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
                    FROM (SELECT count(*) AS num, window_start AS starttime,
                                 window_end AS endtime
                          FROM {HOP} GROUP BY auction, window_start, window_end) AS CountBids
                    GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids
              ON AuctionBids.starttime = MaxBids.starttime
                 AND AuctionBids.endtime = MaxBids.endtime
                 AND AuctionBids.num >= MaxBids.maxn"""),
    "q7": (["bids"], "auction BIGINT, price BIGINT, bidder BIGINT, date_time TIMESTAMP(3)",
           """SELECT B.auction, B.price, B.bidder, CAST(B.date_time AS TIMESTAMP(3))
              FROM bids B
              JOIN (SELECT MAX(price) AS maxprice, window_end AS date_time
                    FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
                    GROUP BY window_start, window_end) B1
              ON B.price = B1.maxprice
              WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time"""),
    "q8": (["persons", "auctions"], "id BIGINT, name STRING, starttime TIMESTAMP(3)",
           """SELECT P.id, P.name, P.starttime
              FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
                    FROM TABLE(TUMBLE(TABLE persons, DESCRIPTOR(date_time), INTERVAL '10' SECOND))
                    GROUP BY id, name, window_start, window_end) P
              JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
                    FROM TABLE(TUMBLE(TABLE auctions, DESCRIPTOR(date_time),
                                      INTERVAL '10' SECOND))
                    GROUP BY seller, window_start, window_end) A
              ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime"""),
    "q11": (["bids"],
            "bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)",
            """SELECT bidder, count(*) AS bid_count, window_start AS starttime,
                      window_end AS endtime
               FROM TABLE(SESSION(TABLE bids PARTITION BY bidder, DESCRIPTOR(date_time),
                                  INTERVAL '10' SECOND))
               GROUP BY bidder, window_start, window_end"""),
}


def main():
    settings = EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    conf = t_env.get_config()
    conf.set("parallelism.default", PARALLELISM)
    conf.set("table.local-time-zone", "UTC")
    conf.set("pipeline.jars", ";".join("file://" + j for j in JARS.split(",")))
    # Memory as a small local deployment would give it; checkpoints off (as in
    # the other engines' runs of a bounded input).
    conf.set("taskmanager.memory.process.size", "2g")
    conf.set("taskmanager.numberOfTaskSlots", PARALLELISM)
    tables, columns, query = QUERIES[QUERY]
    for t in tables:
        t_env.execute_sql(TABLES[t] + f" WITH ('connector' = 'filesystem', "
                          f"'path' = '{DATA}/{t}', 'format' = 'parquet')")
    if SINK == "collect":
        start = time.time()
        result = t_env.execute_sql(query)
        rows = {}
        with result.collect() as it:
            for r in it:
                kind = r.get_row_kind()
                values = tuple(str(v) for v in r)
                if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                    rows[values] = rows.get(values, 0) + 1
                else:  # a retraction may overtake its row from another subtask
                    rows[values] = rows.get(values, 0) - 1
        seconds = time.time() - start
        for values, n in rows.items():
            for _ in range(max(n, 0)):
                print("ROW " + json.dumps(list(values)))
    else:
        options = ("'connector' = 'blackhole'" if SINK == "blackhole" else
                   f"'connector' = 'filesystem', 'path' = '{OUT}', 'format' = 'parquet'")
        t_env.execute_sql(f"CREATE TABLE out_sink ({columns}) WITH ({options})")
        start = time.time()
        t_env.execute_sql(f"INSERT INTO out_sink {query}").wait()
        seconds = time.time() - start
    print("FLINK_RESULT " + json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
