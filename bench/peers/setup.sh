#!/usr/bin/env bash
# Installs what bench/peers/run.sh needs besides thund's own build, under
# $PEERS_ENV (default .bench-data/peers-env, ignored by git):
#   venv/   Python venv: apache-flink (PyFlink, which bundles Flink's jars),
#           duckdb (preparing the event files, comparing results),
#           matplotlib and psutil (plots, process-tree sampling)
#   jars/   Flink's Parquet format: flink-sql-parquet and
#           flink-shaded-hadoop-2-uber from Maven Central
# Spark is the pyspark of .deps/spark (scripts/bootstrap.sh). Java 17 must be
# on PATH. Idempotent: a second run checks and returns.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ENV_DIR="${PEERS_ENV:-$ROOT/.bench-data/peers-env}"
FLINK_VERSION="${FLINK_VERSION:-2.3.0}"
PARQUET_JAR="flink-sql-parquet-${FLINK_VERSION}.jar"
HADOOP_JAR="flink-shaded-hadoop-2-uber-2.8.3-10.0.jar"
MAVEN="https://repo1.maven.org/maven2"

mkdir -p "$ENV_DIR/jars"
if [ ! -x "$ENV_DIR/venv/bin/python" ]; then
  python3 -m venv "$ENV_DIR/venv"
fi
PY="$ENV_DIR/venv/bin/python"
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q matplotlib psutil "duckdb==1.4.4"
if ! "$PY" -c "import pyflink" 2>/dev/null; then
  "$PY" -m pip install -q "apache-flink==${FLINK_VERSION}"
fi
fetch() {  # fetch URL FILE
  [ -s "$2" ] && return 0
  curl -fsSL -o "$2.tmp" "$1" && mv "$2.tmp" "$2"
}
fetch "$MAVEN/org/apache/flink/flink-sql-parquet/${FLINK_VERSION}/${PARQUET_JAR}" \
  "$ENV_DIR/jars/$PARQUET_JAR"
fetch "$MAVEN/org/apache/flink/flink-shaded-hadoop-2-uber/2.8.3-10.0/${HADOOP_JAR}" \
  "$ENV_DIR/jars/$HADOOP_JAR"
java -version 2>&1 | head -1
"$PY" -c "import pyflink, matplotlib, psutil, duckdb; print('pyflink', pyflink.__file__)"
"$ROOT/.deps/spark/bin/python" -c "import pyspark; print('pyspark', pyspark.__version__)"
echo "peers env ready: $ENV_DIR"
