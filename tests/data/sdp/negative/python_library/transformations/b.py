from pyspark import pipelines as dp
from pyspark.sql import functions as F


@dp.materialized_view
def b():
    shout = F.udf(lambda s: s.upper())
    return spark.read.table("a").select(shout("x"))
