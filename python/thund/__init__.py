"""thund from Python: run a pipeline, read a dataset as a pyarrow.Table, and
write rows keyed by checkpoint columns (rows whose key the target already
holds are skipped).

Each call runs the bundled `thund` binary (site-packages/thund/bin/thund, or
$THUND_BINARY) in a subprocess; see docs/install.md.

    import thund
    summary = thund.run("examples/batch/shop.yaml")          # the run summary (dict)
    table = thund.read("customer_revenue", "examples/batch/shop.yaml")
    thund.write_parquet(table, "out/revenue", checkpoint_keys=["customer"])
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

__all__ = ["ThundError", "binary", "run", "read", "write_parquet", "__version__"]
__version__ = "0.1.0"

PathLike = Union[str, os.PathLike]


class ThundError(RuntimeError):
    """A thund command failed. `returncode` is its exit code (1: invalid input or a
    failed flow, 2: usage error), `stderr` what it printed, `summary` the run
    summary when a run got that far."""

    def __init__(self, message: str, returncode: int, stderr: str = "",
                 summary: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.summary = summary


def binary() -> str:
    """The thund executable this package runs: $THUND_BINARY, else the bundled one."""
    env = os.environ.get("THUND_BINARY")
    if env:
        return env
    return str(Path(__file__).resolve().parent / "bin" / "thund")


def _binary_env() -> Dict[str, str]:
    env = dict(os.environ)
    # Python SDP files are read by a Python with sqlframe and duckdb (`pip install
    # thund[sdp]`): this interpreter, when it has them.
    if "THUND_PYTHON" not in env and importlib.util.find_spec("sqlframe") is not None:
        env["THUND_PYTHON"] = sys.executable
    return env


def _thund(args: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), *args], capture_output=True, text=True, env=_binary_env())


def _fail(what: str, p: subprocess.CompletedProcess,
          summary: Optional[Dict[str, Any]] = None) -> ThundError:
    detail = (p.stderr.strip() or p.stdout.strip())[-4000:]
    return ThundError(f"thund {what} failed (exit {p.returncode}): {detail}", p.returncode,
                      p.stderr, summary)


def _names(value: Union[None, str, Sequence[str]]) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return ",".join(value)


def run(path: PathLike, *, storage: Optional[PathLike] = None,
        full_refresh: Union[None, str, Sequence[str]] = None, full_refresh_all: bool = False,
        refresh: Union[None, str, Sequence[str]] = None, max_triggers: Optional[int] = None,
        streaming_mode: Optional[str] = None, threads: Optional[int] = None) -> Dict[str, Any]:
    """Runs the pipeline at `path` (a pipeline file, .sql file or SDP project) like
    `thund run` and returns its summary: run_id, pipeline, status, duration_ms, mode,
    datasets (dataset, status, reason, rows_written, version, ...), notes, error.
    Raises ThundError when the pipeline is invalid or the run does not complete."""
    with tempfile.TemporaryDirectory(prefix="thund-py-") as tmp:
        summary_path = os.path.join(tmp, "summary.json")
        args = ["run", os.fspath(path), "-q", "--summary-json", summary_path]
        if storage is not None:
            args += ["--storage", os.fspath(storage)]
        if full_refresh is not None:
            args += ["--full-refresh", _names(full_refresh)]
        if full_refresh_all:
            args.append("--full-refresh-all")
        if refresh is not None:
            args += ["--refresh", _names(refresh)]
        if max_triggers is not None:
            args += ["--max-triggers", str(max_triggers)]
        if streaming_mode is not None:
            args += ["--streaming-mode", streaming_mode]
        if threads is not None:
            args += ["--threads", str(threads)]
        p = _thund(args)
        summary = None
        if os.path.exists(summary_path):
            with open(summary_path, encoding="utf-8") as f:
                summary = json.load(f)
    if p.returncode != 0:
        raise _fail("run", p, summary)
    return summary


def read(dataset: str, path: Optional[PathLike] = None, *, storage: Optional[PathLike] = None,
         limit: Optional[int] = None):
    """The committed content of `dataset` as a pyarrow.Table. `path` is the pipeline
    (its storage root is used), or give `storage` (a directory or s3://bucket/prefix)."""
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory(prefix="thund-py-") as tmp:
        out = os.path.join(tmp, "dataset.parquet")
        args = ["show", dataset]
        if path is not None:
            args.append(os.fspath(path))
        if storage is not None:
            args += ["--storage", os.fspath(storage)]
        if limit is not None:
            args += ["--limit", str(limit)]
        args += ["--format", "parquet", "--output", out]
        p = _thund(args)
        if p.returncode != 0:
            raise _fail("show", p)
        return pq.read_table(out)


def write_parquet(data, dst: PathLike, *, checkpoint_keys: Union[str, Sequence[str]],
                  transform: Optional[str] = None, duplicates: str = "first",
                  null_keys: str = "error", rows_per_file: Optional[int] = None,
                  threads: Optional[int] = None) -> Dict[str, Any]:
    """Appends `data`'s rows to the Parquet directory `dst`, skipping every row whose
    `checkpoint_keys` value `dst` already holds (so rerunning after a crash, or with
    overlapping input, writes each key once). `data` is a pyarrow.Table or
    RecordBatch, or a path (Parquet/CSV/JSON file, directory or glob). `transform`
    is a DuckDB SELECT over `src`. Returns the counts of `thund copy --json`
    (rows_read, rows_skipped_existing, rows_written, files_written, ...)."""
    keys = _names(checkpoint_keys)
    if not keys:
        raise ValueError("checkpoint_keys must name at least one column")
    with tempfile.TemporaryDirectory(prefix="thund-py-") as tmp:
        if isinstance(data, (str, os.PathLike)):
            src = os.fspath(data)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            if isinstance(data, pa.RecordBatch):
                data = pa.Table.from_batches([data])
            if not isinstance(data, pa.Table):
                raise TypeError("data must be a pyarrow.Table, a pyarrow.RecordBatch or a path, "
                                f"not {type(data).__name__}")
            src = os.path.join(tmp, "input.parquet")
            pq.write_table(data, src)
        args = ["copy", src, os.fspath(dst), "--checkpoint-keys", keys, "--format", "parquet",
                "--duplicates", duplicates, "--null-keys", null_keys, "--json", "-q"]
        if transform is not None:
            args += ["--transform", transform]
        if rows_per_file is not None:
            args += ["--rows-per-file", str(rows_per_file)]
        if threads is not None:
            args += ["--threads", str(threads)]
        p = _thund(args)
        if p.returncode != 0:
            raise _fail("copy", p)
        return json.loads(p.stdout.strip().splitlines()[-1])
