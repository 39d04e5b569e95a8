# py -> sql -> py -> sql -> py: each language reads the other's datasets.
from pyspark import pipelines as dp
from pyspark.sql import functions as F


@dp.materialized_view
def numbers():
    return spark.range(1, 25).withColumn("bucket", F.col("id") % 4)


@dp.materialized_view
def bucket_stats():
    # Reads doubled (SQL), which reads numbers (Python).
    return (
        spark.read.table("doubled")
        .groupBy("bucket")
        .agg(F.sum("twice").alias("total"), F.count("*").alias("n"))
    )


@dp.materialized_view
def top_buckets():
    # Reads ranked (SQL), which reads bucket_stats (Python).
    return spark.read.table("ranked").where(F.col("position") <= 2).select("bucket", "total")
