# Event-time windows written the way PySpark users write them: withWatermark on
# the stream, F.window / F.session_window in groupBy, window.start / window.end
# selected afterwards. Append mode: a window is written once the watermark
# passes its end.
from pyspark import pipelines as dp
from pyspark.sql import functions as F


@dp.table
def readings():
    return spark.readStream.format("parquet").load(spark.conf.get("input") + "/readings")


def watermarked():
    return spark.readStream.table("readings").withWatermark("ts", "10 seconds")


@dp.table
def per_minute():
    # The window struct itself is a column of the result.
    return watermarked().groupBy(F.window("ts", "1 minute"), "sensor").agg(
        F.count("*").alias("n"), F.sum("value").alias("total"))


@dp.table
def per_minute_bounds():
    return (
        watermarked()
        .groupBy(F.window("ts", "1 minute"), "sensor")
        .agg(F.count("*").alias("n"), F.max("value").alias("peak"))
        .select(F.col("window.start").alias("window_start"),
                F.col("window.end").alias("window_end"), "sensor", "n", "peak")
    )


@dp.table
def sliding():
    return (
        watermarked()
        .groupBy(F.window(F.col("ts"), "1 minute", "30 seconds"))
        .agg(F.count("*").alias("n"), F.min("value").alias("low"))
        .select("window.start", "n", "low")
    )


@dp.table
def sessions():
    return watermarked().groupBy(F.session_window("ts", "40 seconds"), "sensor").agg(
        F.count("*").alias("n"))
