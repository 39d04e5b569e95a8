#!/usr/bin/env bash
# Installs everything thund needs on a fresh Debian 12 machine. Idempotent: when
# everything is present it finishes in about a second and downloads nothing.
#
#   scripts/bootstrap.sh            # Debian packages, Arrow C++ (pyarrow wheel), DuckDB,
#                                   # moto (S3-compatible server for the tests), Spark
#   scripts/bootstrap.sh --no-spark # the same without Spark (the native engine only)
#
# Layout (all project-local, ignored by git):
#   .deps/venv/        Python venv holding pyarrow==26.0.1 (Arrow C++ headers + libs),
#                      moto[server]==5.2.5 (bin/moto_server: the tests' S3 endpoint), and
#                      sqlframe + duckdb (thund's reader of Python SDP files)
#   .deps/duckdb/      libduckdb.so + duckdb.h (DuckDB 1.4.4, from npm, no scripts run),
#                      extensions/.../httpfs.duckdb_extension (PyPI duckdb-extension-httpfs)
#   .deps/spark/       Python venv holding pyspark[pipelines]==4.3.0 (Spark + its JVM jars,
#                      spark-submit, spark-pipelines): the Spark backend's tests start a
#                      Spark Connect server from it (scripts/spark_server.sh; Java 17)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$ROOT/.deps"
PYARROW_VERSION="26.0.1"
MOTO_VERSION="5.2.5"
DUCKDB_LIB_PKG="@duckdb/node-bindings-linux-x64@1.4.4-r.4"
DUCKDB_SRC_PKG="duckdb@1.4.4"
PYSPARK_VERSION="4.3.0"
with_spark=1; [[ "${1:-}" == "--no-spark" ]] && with_spark=0
# libgrpc++-dev, protobuf-compiler(-grpc): the Spark backend's Spark Connect client.
# openjdk-17-jre-headless: Spark's JVM (already on most machines).
DEB_PACKAGES=(build-essential cmake ninja-build ccache pkg-config python3-venv
  libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev nlohmann-json3-dev
  libcli11-dev libfmt-dev libxxhash-dev libgrpc++-dev libprotobuf-dev protobuf-compiler
  protobuf-compiler-grpc)
((with_spark)) && ! command -v java >/dev/null && DEB_PACKAGES+=(openjdk-17-jre-headless)

log() { printf '[bootstrap] %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- Arrow C++ from the pyarrow wheel --------------------------------------
VENV="$DEPS/venv"
PY="${THUND_PYTHON:-python3}"
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating venv $VENV"
  "$PY" -m venv "$VENV"
fi
if [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pyarrow"))' 2>/dev/null)" != "$PYARROW_VERSION" ]]; then
  log "installing pyarrow==$PYARROW_VERSION"
  "$VENV/bin/pip" install -q --disable-pip-version-check "pyarrow==$PYARROW_VERSION"
fi

# --- moto: a real S3-compatible server on loopback, for the object-storage tests --
moto_version() {
  "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))' 2>/dev/null
}
if [[ ! -x "$VENV/bin/moto_server" || "$(moto_version)" != "$MOTO_VERSION" ]]; then
  log "installing moto[server]==$MOTO_VERSION"
  "$VENV/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION"
fi

# --- sqlframe + DuckDB for Python: thund reads Python SDP files with them --------
# (python/thund_sdp/loader.py: the PySpark DataFrame API turned into Spark SQL)
SQLFRAME_VERSION="4.10.0"
DUCKDB_PY_VERSION="1.4.4"
py_version() {
  "$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null
}
if [[ "$(py_version sqlframe)" != "$SQLFRAME_VERSION" || "$(py_version duckdb)" != "$DUCKDB_PY_VERSION" ]]; then
  log "installing sqlframe==$SQLFRAME_VERSION duckdb==$DUCKDB_PY_VERSION"
  "$VENV/bin/pip" install -q --disable-pip-version-check "sqlframe==$SQLFRAME_VERSION" \
    "duckdb==$DUCKDB_PY_VERSION"
fi

# --- DuckDB 1.4.4 C API from npm (npm pack: no install scripts run) ---------
DUCK="$DEPS/duckdb"
if [[ ! -f "$DUCK/libduckdb.so" || ! -f "$DUCK/include/duckdb.h" || ! -f "$DUCK/.version-1.4.4" ]]; then
  log "fetching DuckDB 1.4.4 ($DUCKDB_LIB_PKG, $DUCKDB_SRC_PKG)"
  tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$DUCKDB_LIB_PKG" "$DUCKDB_SRC_PKG" >/dev/null)
  mkdir -p "$DUCK/include"
  tar xzf "$tmp"/duckdb-node-bindings-linux-x64-*.tgz -C "$tmp" package/libduckdb.so
  mv "$tmp/package/libduckdb.so" "$DUCK/libduckdb.so"
  tar xzf "$tmp"/duckdb-1.4.4.tgz -C "$tmp" package/src/duckdb/src/include/duckdb.h
  mv "$tmp/package/src/duckdb/src/include/duckdb.h" "$DUCK/include/duckdb.h"
  touch "$DUCK/.version-1.4.4"
fi
# DuckDB's httpfs extension (s3:// reads and writes in DuckDB), signed by DuckDB
# and published on PyPI; thund loads it from here and never downloads at run time.
HTTPFS="$DUCK/extensions/v1.4.4/linux_amd64/httpfs.duckdb_extension"
if [[ ! -f "$HTTPFS" ]]; then
  log "fetching DuckDB's httpfs extension (duckdb-extension-httpfs==1.4.4)"
  tmp_ext="$(mktemp -d)"
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp_ext" \
    "duckdb-extension-httpfs==1.4.4"
  "$VENV/bin/python" - "$tmp_ext" "$HTTPFS" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
name = "duckdb_extension_httpfs/extensions/v1.4.4/httpfs.duckdb_extension"
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
with zipfile.ZipFile(wheel) as z, open(sys.argv[2] + ".tmp", "wb") as out:
    out.write(z.read(name))
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
  rm -rf "$tmp_ext"
fi
# --- Spark (pyspark wheel: Spark's jars and launchers) for the Spark backend --
SPARK_VENV="$DEPS/spark"
spark_version() {
  "$SPARK_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pyspark"))' \
    2>/dev/null
}
if ((with_spark)) && [[ ! -x "$SPARK_VENV/bin/spark-pipelines" || "$(spark_version)" != "$PYSPARK_VERSION" ]]; then
  log "installing pyspark[pipelines]==$PYSPARK_VERSION (about 1 GB, a few minutes)"
  [[ -x "$SPARK_VENV/bin/python" ]] || "$PY" -m venv "$SPARK_VENV"
  "$SPARK_VENV/bin/pip" install -q --disable-pip-version-check \
    "pyspark[pipelines]==$PYSPARK_VERSION" "pandas<3"
fi
log "ok (arrow + moto: $VENV, duckdb + httpfs: $DUCK$( ((with_spark)) && echo ", spark: $SPARK_VENV"))"
