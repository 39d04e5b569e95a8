"""`spark.readStream.table(name).withWatermark(col, delay)` on the Spark backend.

Spark 4.3's Connect planner analyzes the input of withWatermark while the
flow is registered, before the pipeline has created `name`: the flow fails
with TABLE_OR_VIEW_NOT_FOUND (the stock `spark-pipelines run` too). Spark
SQL's own form, `SELECT * FROM STREAM(name) WATERMARK col DELAY OF INTERVAL
delay`, is resolved when the graph is, like every other read of a pipeline
dataset. install() makes the Python form send that SQL, which is the query
thund's native reader makes of it too (docs/python.md).
"""

from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.connect.streaming.readwriter import DataStreamReader


def install():
    read_table = DataStreamReader.table
    with_watermark = DataFrame.withWatermark

    def table(self, tableName):
        df = read_table(self, tableName)
        df._thund_stream = tableName
        return df

    def watermark(self, eventTime, delayThreshold):
        name = getattr(self, "_thund_stream", None)
        if name is None:
            return with_watermark(self, eventTime, delayThreshold)
        return self.sparkSession.sql(
            f"SELECT * FROM STREAM({name}) WATERMARK {eventTime} "
            f"DELAY OF INTERVAL {delayThreshold}")

    DataStreamReader.table = table
    DataFrame.withWatermark = watermark
