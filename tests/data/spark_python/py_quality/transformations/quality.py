# Expectations as Databricks users write them, below or above the dataset
# decorator. On Spark (no expectations in open-source SDP) thund runs drop as
# a WHERE and fail as assert_true, as for SQL expectations.
from pyspark import pipelines as dp
from pyspark.sql import functions as F


@dp.materialized_view
def raw_readings():
    return spark.read.csv(spark.conf.get("input") + "/readings.csv", header=True,
                          inferSchema=True)


@dp.materialized_view
@dp.expect_or_drop("has_sensor", "sensor IS NOT NULL")
@dp.expect("positive", "value > 0")
def valid_readings():
    return spark.read.table("raw_readings")


@dp.expect_all_or_drop({"in_range": "value BETWEEN -50 AND 150", "known": "id IS NOT NULL"})
@dp.materialized_view
def in_range():
    return spark.read.table("valid_readings").select("id", "sensor", "value")


@dp.materialized_view
@dp.expect_all({"small": "n < 100"})
@dp.expect_or_fail("has_rows", "n > 0")
def sensor_stats():
    return spark.read.table("in_range").groupBy("sensor").agg(F.count("*").alias("n"))
