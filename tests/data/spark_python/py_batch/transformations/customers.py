from pyspark import pipelines as dp
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window


@dp.materialized_view(comment="orders and cents per customer")
def customer_totals() -> DataFrame:
    return (
        spark.read.table("orders")
        .groupBy("customer")
        .agg(F.count("*").alias("orders"), F.sum("cents").alias("total_cents"))
    )


@dp.materialized_view
def top_orders() -> DataFrame:
    w = Window.partitionBy("customer").orderBy(F.col("cents").desc(), F.col("id"))
    return (
        spark.read.table("orders")
        .withColumn("rank", F.row_number().over(w))
        .where(F.col("rank") <= 2)
        .select("customer", "id", "cents", "rank")
    )


@dp.temporary_view
def customers() -> DataFrame:
    return spark.read.parquet(spark.conf.get("input") + "/customers")


@dp.temporary_view
def big_customers() -> DataFrame:
    threshold = int(spark.conf.get("threshold"))
    return spark.read.table("customer_totals").where(F.col("total_cents") > threshold)


@dp.materialized_view(name="big_by_region")
def big_by_region_definition() -> DataFrame:
    return (
        spark.read.table("big_customers")
        .join(spark.read.table("customers"), on="customer")
        .groupBy("region")
        .agg(F.sum("total_cents").alias("cents"), F.count("customer").alias("customers"))
    )


@dp.materialized_view
def all_customers() -> DataFrame:
    ordered = spark.read.table("orders").select("customer")
    known = spark.read.table("customers").select("customer")
    return ordered.union(known).distinct().withColumn("name_length", F.length("customer"))
