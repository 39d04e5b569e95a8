"""One Nexmark query on Spark Structured Streaming, local[PARALLELISM].

Usage (.deps/spark's python): spark_job.py QUERY DATA_DIR SINK OUT_DIR PARALLELISM
  DATA_DIR  the `chunks` layout of prepare.py: {bids,persons,auctions}/chunk-N.parquet
  SINK      noop | parquet (written under OUT_DIR)
The input is read as a stream with trigger availableNow and a 2 s watermark on
date_time (the queries' allowed lateness in thund). availableNow does not close
windows still open at the end of the input; prepare.py's sentinel rows, an hour
after the last event, close every real window.
Prints `SPARK_RESULT {"seconds": ...}` (from starting the query to its end; the
session's start is not counted), `SPARK_UNSUPPORTED <message>` when Spark
refuses the query (e.g. two streaming aggregations in a row), or `SPARK_FAILED
<message>` (exit 1) when it takes the query and then fails running it.
"""
import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.utils import AnalysisException

QUERY, DATA, SINK, OUT, PARALLELISM = sys.argv[1:6]

spark = (SparkSession.builder.master(f"local[{PARALLELISM}]")
         .appName(f"nexmark-{QUERY}")
         .config("spark.sql.shuffle.partitions", PARALLELISM)
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.memory", "2g")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")


def stream(table):
    schema = spark.read.parquet(os.path.join(DATA, table)).schema
    return (spark.readStream.schema(schema).parquet(os.path.join(DATA, table))
            .withWatermark("date_time", "2 seconds"))


def q0():
    return stream("bids").select("auction", "bidder", "price", "date_time")


def q1():
    return stream("bids").select("auction", "bidder",
                                 (F.lit(0.908).cast("decimal(4,3)") * F.col("price")).alias("price"),
                                 "date_time")


def q2():
    return stream("bids").where(F.col("auction") % 123 == 0).select("auction", "price")


def q3():
    a = stream("auctions").where(F.col("category") == 10).alias("A")
    p = stream("persons").where(F.col("state").isin("OR", "ID", "CA")).alias("P")
    return a.join(p, F.col("A.seller") == F.col("P.id")).select("P.name", "P.city", "P.state",
                                                                  "A.id")


def q4():
    a = stream("auctions").alias("A")
    b = stream("bids").alias("B")
    q = (a.join(b, (F.col("A.id") == F.col("B.auction")) &
                F.col("B.date_time").between(F.col("A.date_time"), F.col("A.expires")))
         .groupBy("A.id", "A.category").agg(F.max("B.price").alias("final")))
    return q.groupBy("category").agg(F.avg("final").alias("avg"))


def counts_per_window():
    return (stream("bids").groupBy(F.window("date_time", "10 seconds", "2 seconds"), "auction")
            .agg(F.count("*").alias("num")))


def q5():
    auction_bids = counts_per_window().alias("AB")
    max_bids = (counts_per_window().groupBy("window").agg(F.max("num").alias("maxn"))
                .alias("MB"))
    return (auction_bids.join(max_bids, (F.col("AB.window") == F.col("MB.window")) &
                              (F.col("AB.num") >= F.col("MB.maxn")))
            .select("AB.auction", "AB.num"))


def q7():
    b = stream("bids").alias("B")
    b1 = (stream("bids").groupBy(F.window("date_time", "10 seconds"))
          .agg(F.max("price").alias("maxprice"))
          .select("maxprice", F.col("window.end").alias("date_time")).alias("B1"))
    return (b.join(b1, (F.col("B.price") == F.col("B1.maxprice")) &
                   F.col("B.date_time").between(F.col("B1.date_time") - F.expr("INTERVAL 10 SECONDS"),
                                                F.col("B1.date_time")))
            .select("B.auction", "B.price", "B.bidder", "B.date_time"))


def q8():
    p = (stream("persons").groupBy("id", "name", F.window("date_time", "10 seconds"))
         .agg(F.count("*").alias("n")).alias("P"))
    a = (stream("auctions").groupBy("seller", F.window("date_time", "10 seconds"))
         .agg(F.count("*").alias("n")).alias("A"))
    return (p.join(a, (F.col("P.id") == F.col("A.seller")) & (F.col("P.window") == F.col("A.window")))
            .select("P.id", "P.name", F.col("P.window.start").alias("starttime")))


def q11():
    s = F.session_window("date_time", "10 seconds")
    return (stream("bids").groupBy("bidder", s).agg(F.count("*").alias("bid_count"))
            .select("bidder", "bid_count", F.col("session_window.start").alias("starttime"),
                    F.col("session_window.end").alias("endtime")))


def main():
    try:
        df = globals()[QUERY]()
        writer = df.writeStream.outputMode("complete" if QUERY == "q4" else "append")
        if SINK == "parquet" and QUERY == "q4":
            # Spark's file sink takes appends only: each batch's complete result
            # replaces the files.
            writer = (writer.foreachBatch(lambda df, _: df.write.mode("overwrite").parquet(OUT))
                      .option("checkpointLocation", OUT + "_checkpoint"))
        elif SINK == "parquet":
            writer = (writer.format("parquet").option("path", OUT)
                      .option("checkpointLocation", OUT + "_checkpoint"))
        else:
            writer = writer.format("noop").option("checkpointLocation", OUT + "_checkpoint")
        start = time.time()
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
        seconds = time.time() - start
    except AnalysisException as e:
        print("SPARK_UNSUPPORTED " + " ".join(str(e).split())[:400], flush=True)
        return
    except Exception as e:  # a query Spark accepts but then fails (state, memory, the JVM)
        print("SPARK_FAILED " + " ".join(str(e).split())[:400], flush=True)
        sys.exit(1)
    print("SPARK_RESULT " + json.dumps({"seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
