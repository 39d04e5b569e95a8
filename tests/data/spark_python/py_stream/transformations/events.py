from pyspark import pipelines as dp
from pyspark.sql import functions as F


@dp.table
def events():
    return spark.readStream.format("parquet").load(spark.conf.get("input") + "/events")


@dp.table(comment="clicks only")
def clicks():
    return (
        spark.readStream.table("events")
        .where(F.col("kind") == "click")
        .select("id", "user_id", "page")
    )


dp.create_streaming_table("activity")


@dp.append_flow(target="activity")
def activity_from_events():
    return spark.readStream.table("events").select("user_id", F.col("kind").alias("source"))


@dp.materialized_view
def per_kind():
    return (
        spark.read.table("events")
        .groupBy("kind")
        .agg(F.count("*").alias("n"), F.countDistinct("user_id").alias("users"))
    )


dp.create_sink(
    "click_export", format="parquet",
    options={"path": spark.conf.get("output") + "/click_export"},
)


@dp.append_flow(target="click_export")
def export_clicks():
    return spark.readStream.table("clicks").select("id", "page")
