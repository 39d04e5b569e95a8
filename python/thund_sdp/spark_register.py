"""Registers a project's Python SDP files, unchanged, into a dataflow graph
that thund created on a Spark Connect server (the Spark backend, docs/spark.md).

Runs in the pyspark environment (.deps/spark). It joins thund's Spark Connect
session (same user and session id, so the graph is visible), imports each
file as `spark-pipelines run` does (pyspark's own pipelines registry, the
file's directory as working directory, `spark` in its globals), with thund's
expectation decorators added (spark_expectations.py) and withWatermark on a
stream read sent as Spark SQL's WATERMARK clause (spark_watermarks.py), and exits
without closing the session: thund starts the run.

  python spark_register.py sc://host:port USER SESSION_ID GRAPH_ID FILE.py...
"""

import importlib.util
import os
import sys
from pathlib import Path

from pyspark.pipelines.add_pipeline_analysis_context import add_pipeline_analysis_context
from pyspark.pipelines.block_session_mutations import block_session_mutations
from pyspark.pipelines.graph_element_registry import graph_element_registration_context
from pyspark.pipelines.spark_connect_graph_element_registry import (
    SparkConnectGraphElementRegistry,
)
from pyspark.sql import SparkSession

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_expectations  # noqa: E402
import spark_watermarks  # noqa: E402


def main():
    remote, user, session_id, graph_id = sys.argv[1:5]
    files = sys.argv[5:]
    spark = (SparkSession.builder
             .remote(f"{remote}/;user_id={user};session_id={session_id}")
             .getOrCreate())
    spark_expectations.install()
    spark_watermarks.install()
    registry = spark_expectations.DeferredFlows(SparkConnectGraphElementRegistry(spark, graph_id))
    with graph_element_registration_context(registry):
        for file in files:
            path = Path(file).resolve()
            os.chdir(path.parent)
            module_spec = importlib.util.spec_from_file_location(path.stem, str(path))
            module = importlib.util.module_from_spec(module_spec)
            module.__dict__["spark"] = spark
            with add_pipeline_analysis_context(spark=spark, dataflow_graph_id=graph_id,
                                               flow_name=None):
                with block_session_mutations():
                    module_spec.loader.exec_module(module)
                    registry.flush()
    # The session stays open for the run thund starts: no spark.stop().
    os._exit(0)


if __name__ == "__main__":
    main()
