from pyspark import pipelines as dp


@dp.materialized_view
def b():
    return spark.range(10)
