"""thund's reader of Python Spark Declarative Pipelines files (docs/python.md).

Runs in thund's own Python environment (.deps/venv: sqlframe over DuckDB, no
Spark, no JVM). It imports the project's .py files with thund's own
`pyspark.pipelines` module, which records datasets and flows, and a `spark`
session from sqlframe, whose DataFrames are turned into Spark SQL. DuckDB
holds empty tables with the schemas of the datasets the files read, so
sqlframe can resolve columns; nothing is executed on data.

Protocol: one JSON request on stdin
  {"files": [path, ...], "configuration": {k: v},
   "tables": {name: [[column, spark_type], ...]}}
and one JSON answer on stdout
  {"datasets": [...], "flows": [...], "errors": [{file, line, message, hint}],
   "unresolved": [{name, target, file, line, reads}]}
Datasets: {name, kind, comment, properties, file, line, format, options,
partition_cols, expectations: [{name, predicate, action, file, line}]};
flows: {name, target, sql | source (+ columns: [[name, duckdb_type]]), cdc,
file, line}. "unresolved" lists the definitions that read a dataset whose
columns were not given: thund asks again with more tables, or reports them.
"""

import builtins
import json
import os
import re
import sys
import traceback
import types

import duckdb
from sqlframe import activate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flatten import flatten  # noqa: E402

CON = duckdb.connect()
activate("duckdb", conn=CON)

from pyspark.sql import DataFrame  # noqa: E402  (sqlframe's, after activate)
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as _F  # noqa: E402

SESSION = SparkSession.builder.getOrCreate()
USER_FILES = set()
STATE = {
    "datasets": [],
    "flows": [],
    "errors": [],
    "definitions": [],  # (kind, name, function, file, line, options) in order
    "markers": {},  # marker table -> Spark SQL relation text
    "configuration": {},
    "unresolved": [],  # definitions that read a dataset of unknown columns
}


class Refused(Exception):
    """A construct thund cannot lower, raised inside a definition."""

    def __init__(self, construct, hint):
        super().__init__(construct)
        self.construct = construct
        self.hint = hint


def user_frame(tb_or_stack):
    """(file, line) of the innermost frame in a project file."""
    where = (None, 0)
    for frame in tb_or_stack:
        if os.path.abspath(frame.filename) in USER_FILES:
            where = (os.path.abspath(frame.filename), frame.lineno)
    return where


def caller():
    return user_frame(traceback.extract_stack()[:-1])


def error(file, line, message, hint=""):
    STATE["errors"].append({"file": file or "", "line": line, "message": message, "hint": hint})


# ---------------------------------------------------------------- types ----

_SIMPLE = {
    "string": "VARCHAR", "bigint": "BIGINT", "int": "INTEGER", "integer": "INTEGER",
    "smallint": "SMALLINT", "tinyint": "TINYINT", "double": "DOUBLE", "float": "FLOAT",
    "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMPTZ",
    "timestamp_ntz": "TIMESTAMP", "binary": "BLOB",
}


def duck_type(spark_type):
    t = spark_type.strip().lower()
    if t in _SIMPLE:
        return _SIMPLE[t]
    if t.startswith("decimal"):
        return t.upper()
    return "VARCHAR"  # nested types: columns resolve, types are not needed here


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def add_table(name, columns):
    cols = ", ".join(f"{quote(c)} {duck_type(t)}" for c, t in columns) or '"__empty" INTEGER'
    CON.execute(f"CREATE OR REPLACE TABLE {quote(name)} ({cols})")


def table_columns(name):
    rows = CON.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = ? ORDER BY ordinal_position", [name]).fetchall()
    return rows


def has_table(name):
    return bool(table_columns(name))


# ------------------------------------------------------- the spark session --

class _Missing(Exception):
    """A definition read a dataset whose columns are not known yet."""


def _marker(text, source_name):
    if not has_table(source_name):
        raise _Missing(source_name)
    marker = f"__thund_rel_{len(STATE['markers'])}"
    CON.execute(f"CREATE OR REPLACE TABLE {quote(marker)} AS SELECT * FROM "
                f"{quote(source_name)} LIMIT 0")
    STATE["markers"][marker] = text
    return SESSION.read.table(marker)


class _StreamReader:
    def table(self, name):
        df = _marker(f"STREAM({name})", name)
        df._thund_stream = name
        return df

    def format(self, fmt):
        return _FileReader(fmt, streaming=True)

    def __getattr__(self, attr):
        raise Refused(f"spark.readStream.{attr}",
                      "read a dataset (spark.readStream.table) or files "
                      "(spark.readStream.format(...).load(path)) as the whole query")


class _FileReader:
    def __init__(self, fmt, streaming):
        self.fmt = fmt
        self.streaming = streaming
        self.opts = {}

    def option(self, key, value):
        self.opts[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def options(self, **kw):
        for k, v in kw.items():
            self.option(k, v)
        return self

    def load(self, path):
        if self.streaming:
            return _FileRead(self.fmt, path, self.opts, self.streaming)
        # A batch read is Spark SQL's own file read, usable like a table.
        fmt = self.fmt or "parquet"
        relation = f"{fmt}.`{path}`"
        if self.opts:
            relation += " WITH (" + ", ".join(
                f"'{k}' = '{v}'" for k, v in sorted(self.opts.items())) + ")"
        files = f"__thund_files_{len(STATE['markers'])}"
        _file_columns(files, {"format": fmt, "path": path, "options": self.opts})
        if not has_table(files):
            raise Refused(f"reading {path}", "the files must exist when the pipeline is read "
                          "(thund takes their columns from them)")
        return _marker(relation, files)

    def parquet(self, path):
        self.fmt = "parquet"
        return self.load(path)

    def csv(self, path, **kw):
        self.fmt = "csv"
        self.options(**kw)
        return self.load(path)

    def json(self, path, **kw):
        self.fmt = "json"
        self.options(**kw)
        return self.load(path)


class _FileRead:
    """Files read as a flow's whole query (a thund file source)."""

    def __init__(self, fmt, path, opts, streaming):
        self.fmt, self.path, self.opts, self.streaming = fmt, path, opts, streaming

    def __getattr__(self, attr):
        raise Refused(
            f"a DataFrame method ({attr}) on files read with spark.read(Stream)",
            "return the file read alone from its own dataset, and transform that dataset "
            "in another one (spark.read.table)")


class _Reader:
    def table(self, name):
        return _marker(name, name)

    def format(self, fmt):
        return _FileReader(fmt, streaming=False)

    def option(self, key, value):
        return _FileReader(None, False).option(key, value)

    def parquet(self, path):
        return _FileReader("parquet", False).load(path)

    def csv(self, path, **kw):
        return _FileReader("csv", False).csv(path, **kw)

    def json(self, path, **kw):
        return _FileReader("json", False).json(path, **kw)


class _Conf:
    def get(self, key, default=None):
        if key in STATE["configuration"]:
            return STATE["configuration"][key]
        if default is not None:
            return default
        raise Refused(f"spark.conf.get('{key}')",
                      f"define {key} in the spec's configuration, or pass a default")

    def set(self, key, value):
        raise Refused("spark.conf.set", "set configuration in the spec's configuration")


class _Spark:
    """The `spark` a definition sees: sqlframe's session with SDP's readers."""

    read = _Reader()
    readStream = _StreamReader()
    conf = _Conf()

    def table(self, name):
        return _marker(name, name)

    def range(self, start, end=None, step=1, numPartitions=None):
        # Spark SQL's range() table function (column id), not sqlframe's VALUES
        # list of every number.
        if end is None:
            start, end = 0, start
        for v in (start, end, step):
            if not isinstance(v, int) or isinstance(v, bool):
                raise Refused(f"spark.range with {type(v).__name__} arguments",
                              "pass integers")
        if step == 0:
            raise Refused("spark.range with step 0", "use a non-zero step")
        name = f"__thund_range_{len(STATE['markers'])}"
        CON.execute(f'CREATE OR REPLACE TABLE {quote(name)} ("id" BIGINT)')
        return _marker(f"range({int(start)}, {int(end)}, {int(step)})", name)

    def sql(self, text, *args, **kw):
        if re.search(r"\bSTREAM\b", text, re.IGNORECASE):
            raise Refused("spark.sql with STREAM",
                          "write the streaming query in a .sql file, or use "
                          "spark.readStream.table")
        return SESSION.sql(text, *args, **kw)

    def createDataFrame(self, *args, **kw):
        return SESSION.createDataFrame(*args, **kw)

    def __getattr__(self, attr):
        raise Refused(f"spark.{attr}", "only spark.read, readStream, table, range, sql, "
                      "createDataFrame and conf.get are supported in definitions")


SPARK = _Spark()
builtins.spark = SPARK


def _active(*args, **kw):
    return SPARK


SparkSession.active = staticmethod(_active)
SparkSession.getActiveSession = staticmethod(_active)

# What a definition may not do: run actions or Python code per row.
for _action in ("collect", "toPandas", "show", "count", "first", "head", "take", "toLocalIterator",
                "foreach", "foreachPartition", "write", "writeStream", "cache", "persist"):
    def _refuse(self, *a, _name=_action, **kw):
        raise Refused(f"DataFrame.{_name}()",
                      "a definition returns a DataFrame; thund runs it, nothing runs while "
                      "the pipeline is defined")
    setattr(DataFrame, _action, property(_refuse) if _action in ("write", "writeStream")
            else _refuse)


def _udf(*a, **kw):
    raise Refused("a Python UDF", "use SQL functions (pyspark.sql.functions); thund runs no "
                  "Python per row")


for _mod in (_F, sys.modules.get("pyspark.sql.functions")):
    if _mod is not None:
        _mod.udf = _udf
        _mod.pandas_udf = _udf


def _with_watermark(self, column, delay):
    name = getattr(self, "_thund_stream", None)
    if name is None:
        raise Refused("withWatermark on a DataFrame that is not spark.readStream.table(...)",
                      "call withWatermark right on spark.readStream.table(name)")
    df = _marker(f"STREAM({name}) WATERMARK {column} DELAY OF INTERVAL {delay}", name)
    return df


DataFrame.withWatermark = _with_watermark

if not hasattr(_F, "window"):
    def _window(column, duration, slide=None, start=None):
        col = column if isinstance(column, str) else column.alias_or_name
        args = f"{col}, '{duration}'" + (f", '{slide}'" if slide else "")
        return _F.expr(f"window({args})").alias("window")
    _F.window = _window

if not hasattr(_F, "session_window"):
    def _session_window(column, gap):
        col = column if isinstance(column, str) else _sql_of(column)
        return _F.expr(f"session_window({col}, '{gap}')").alias("session_window")
    _F.session_window = _session_window
    if sys.modules.get("pyspark.sql.functions") is not None:
        sys.modules["pyspark.sql.functions"].session_window = _session_window

# ----------------------------------------------------- pyspark.pipelines ----


def _define(kind, name, fn, options):
    file, line = caller()
    if fn is not None and name is None:
        name = fn.__name__
    d = {"kind": kind, "name": name, "function": fn, "file": file, "line": line,
         "options": options, "expectations": []}
    if fn is not None:
        # Expectation decorators written below the dataset decorator ran first.
        d["expectations"].extend(reversed(getattr(fn, "_thund_expectations", [])))
        fn._thund_definition = d
    STATE["definitions"].append(d)


_ACTIONS = {"expect": "warn", "expect_or_drop": "drop", "expect_or_fail": "fail"}


def _expectation_decorator(kind, many):
    """dp.expect* (one name and constraint) and dp.expect_all* (a dict of them).
    Stacked below @dp.table / @dp.materialized_view (as Databricks documents it)
    or above it; either way they belong to that dataset."""
    action = _ACTIONS[kind]
    api = kind.replace("expect", "expect_all") if many else kind

    def decorator(*args, **kw):
        file, line = caller()
        if many:
            pairs = args[0] if args else kw.get("expectations")
            if not isinstance(pairs, dict) or not pairs:
                raise Refused(f"dp.{api} without a dict of name: constraint",
                              f"pass {{'name': 'SQL predicate', ...}} to dp.{api}")
            pairs = list(pairs.items())
        else:
            name = args[0] if args else kw.get("name")
            constraint = args[1] if len(args) > 1 else kw.get("constraint")
            pairs = [(name, constraint)]
        found = []
        for name, constraint in pairs:
            if not isinstance(name, str) or not isinstance(constraint, str) or not constraint:
                raise Refused(f"dp.{api} with a non-string name or constraint",
                              "give each expectation a name and a SQL predicate as strings")
            found.append({"name": name, "predicate": constraint, "action": action,
                          "file": file, "line": line})

        def wrap(target):
            if not callable(target):
                raise Refused(f"dp.{api} on something that is not a query function",
                              "stack it right above or below @dp.table / "
                              "@dp.materialized_view / @dp.temporary_view")
            d = getattr(target, "_thund_definition", None)
            if d is not None:
                d["expectations"][0:0] = found  # above it: the outer ones first
            else:
                # Decorators apply bottom-up: keep source order when read later.
                target._thund_expectations = getattr(target, "_thund_expectations", []) + \
                    list(reversed(found))
            return target
        return wrap
    return decorator


def _dataset_decorator(kind):
    def decorator(query_function=None, *, name=None, comment=None, spark_conf=None,
                  table_properties=None, partition_cols=None, cluster_by=None, schema=None,
                  format=None, **rest):
        opts = {"comment": comment, "properties": table_properties or {},
                "partition_cols": partition_cols or [], "format": format, "schema": schema}

        def wrap(fn):
            _define(kind, name, fn, opts)
            return fn
        if query_function is not None and callable(query_function):
            return wrap(query_function)
        return wrap
    return decorator


def _append_flow(*, target, name=None, spark_conf=None, comment=None, **rest):
    def wrap(fn):
        _define("flow", name or fn.__name__, fn, {"target": target})
        return fn
    return wrap


def _create_streaming_table(name, *, comment=None, table_properties=None, partition_cols=None,
                            schema=None, format=None, expect_all=None, expect_all_or_drop=None,
                            expect_all_or_fail=None, **rest):
    _define("streaming_table_decl", name, None,
            {"comment": comment, "properties": table_properties or {},
             "partition_cols": partition_cols or [], "format": format, "schema": schema})
    d = STATE["definitions"][-1]
    for action, pairs in (("warn", expect_all), ("drop", expect_all_or_drop),
                          ("fail", expect_all_or_fail)):
        for ename, constraint in (pairs or {}).items():
            d["expectations"].append({"name": ename, "predicate": constraint, "action": action,
                                      "file": d["file"], "line": d["line"]})


def _create_sink(name, format, options=None):
    _define("sink", name, None, {"format": format, "options": dict(options or {})})


def _sql_of(value):
    """A column name or Column as Spark SQL text."""
    if isinstance(value, str):
        return value
    expression = getattr(value, "expression", None)
    if expression is None:
        raise Refused(f"a {type(value).__name__} where a column is expected",
                      "pass a column name or a pyspark.sql.functions column")
    return expression.sql(dialect="spark")


def _create_auto_cdc_flow(target, source, keys, sequence_by, apply_as_deletes=None,
                          column_list=None, except_column_list=None, stored_as_scd_type=None,
                          name=None, *, track_history_column_list=None,
                          track_history_except_column_list=None, spark_conf=None):
    file, line = caller()
    if column_list and except_column_list:
        error(file, line, "create_auto_cdc_flow with both column_list and except_column_list",
              "give one of them")
        return
    if track_history_column_list and track_history_except_column_list:
        error(file, line, "create_auto_cdc_flow with both track_history_column_list and "
              "track_history_except_column_list", "give one of them")
        return
    try:
        cdc = {"keys": [_sql_of(k) for k in keys], "sequence_by": _sql_of(sequence_by),
               "apply_as_deletes": _sql_of(apply_as_deletes) if apply_as_deletes is not None
               else "",
               "except_columns": [_sql_of(c) for c in (except_column_list or [])],
               "columns": [_sql_of(c) for c in (column_list or [])],
               "scd_type": int(stored_as_scd_type or 1),
               "track_history": [_sql_of(c) for c in (track_history_column_list or [])],
               "track_history_except": [_sql_of(c) for c in
                                        (track_history_except_column_list or [])]}
    except Refused as r:
        error(file, line, f"{r.construct} is not supported in create_auto_cdc_flow", r.hint)
        return
    except (TypeError, ValueError) as e:
        error(file, line, f"create_auto_cdc_flow: {type(e).__name__}: {e}",
              "keys and column lists are lists of column names or Columns; "
              "stored_as_scd_type is 1 or 2")
        return
    STATE["definitions"].append({"kind": "cdc", "name": name or target, "function": None,
                                 "file": file, "line": line,
                                 "options": {"target": target, "source": source, "cdc": cdc}})


pipelines = types.ModuleType("pyspark.pipelines")
pipelines.materialized_view = _dataset_decorator("materialized_view")
pipelines.table = _dataset_decorator("streaming_table")
pipelines.temporary_view = _dataset_decorator("temporary_view")
pipelines.append_flow = _append_flow
pipelines.create_streaming_table = _create_streaming_table
pipelines.create_sink = _create_sink
pipelines.create_auto_cdc_flow = _create_auto_cdc_flow
for _kind in _ACTIONS:
    setattr(pipelines, _kind, _expectation_decorator(_kind, many=False))
    setattr(pipelines, _kind.replace("expect", "expect_all"),
            _expectation_decorator(_kind, many=True))
sys.modules["pyspark.pipelines"] = pipelines
sys.modules["pyspark"].pipelines = pipelines

# ----------------------------------------------------------- resolution ----


def spark_sql(df):
    query = flatten(df._get_expressions(optimize=False)[-1])
    text = query.sql(dialect="spark", pretty=True, identify=True)
    for marker, relation in STATE["markers"].items():
        text = re.sub(r"`" + marker + r"`(\s+AS\s+`[^`]+`)?",
                      lambda m: relation + (m.group(1) or ""), text)
    return text


def evaluate(d):
    """The flow's query for definition d: ("sql", text, columns) or ("source", {...})."""
    result = d["function"]()
    if isinstance(result, _FileRead):
        return ("source", {"format": result.fmt, "path": result.path, "options": result.opts,
                           "file_drop": result.streaming})
    if not isinstance(result, DataFrame):
        raise Refused(f"a definition returning {type(result).__name__}",
                      "return a DataFrame")
    return ("sql", spark_sql(result), result)


def add_table_of(name, df):
    """An empty table `name` with df's columns, typed by DuckDB (Spark types where
    DuckDB's differ: sum() of BIGINT is HUGEINT in DuckDB, BIGINT in Spark)."""
    try:
        rows = CON.execute("DESCRIBE " + df.sql(dialect="duckdb", optimize=False)).fetchall()
    except duckdb.Error:
        # Spark-only SQL (window(), ...): the names are what later reads need.
        rows = [(c, "VARCHAR") for c in df.columns]
    fixes = {"HUGEINT": "BIGINT", "UHUGEINT": "BIGINT", "UBIGINT": "BIGINT"}
    cols = ", ".join(f"{quote(r[0])} {fixes.get(r[1], r[1])}" for r in rows)
    CON.execute(f"CREATE OR REPLACE TABLE {quote(name)} ({cols})")


def resolve():
    defs = STATE["definitions"]
    pending = [d for d in defs if d["function"] is not None]
    done = set()
    for _ in range(len(pending) + 1):
        progress = False
        for d in pending:
            if id(d) in done:
                continue
            try:
                kind, body, df = (evaluate(d) + (None,))[:3]
            except _Missing as m:
                d["missing"] = m.args[0]
                continue
            except Refused as r:
                file, line = user_frame(traceback.extract_tb(sys.exc_info()[2]))
                error(file or d["file"], line or d["line"],
                      f"{r.construct} is not supported in a pipeline definition", r.hint)
                done.add(id(d))
                continue
            except Exception as e:  # the user's code failed
                file, line = user_frame(traceback.extract_tb(sys.exc_info()[2]))
                error(file or d["file"], line or d["line"],
                      f"{type(e).__name__}: {e}", "fix the definition")
                done.add(id(d))
                continue
            done.add(id(d))
            progress = True
            d["result"] = (kind, body)
            target = d["options"]["target"] if d["kind"] == "flow" else d["name"]
            try:
                if kind == "sql" and not has_table(target):
                    add_table_of(target, df)
                elif kind == "source" and not has_table(target):
                    _file_columns(target, body)
            except Exception as e:
                error(d["file"], d["line"], f"the columns of '{target}' cannot be worked out: "
                      f"{type(e).__name__}: {e}", "simplify the definition")
        if not progress:
            break
    # thund reads the files again once it knows more (a SQL dataset over these
    # definitions): what is still unresolved then is reported by thund.
    for d in pending:
        if id(d) not in done:
            target = d["options"]["target"] if d["kind"] == "flow" else d["name"]
            STATE["unresolved"].append({"name": d["name"], "target": target, "file": d["file"],
                                        "line": d["line"], "reads": d.get("missing", "")})


def _file_columns(target, src):
    reader = {"parquet": "read_parquet", "csv": "read_csv_auto", "json": "read_json_auto"}
    fn = reader.get(src["format"] or "parquet", "read_parquet")
    path = src["path"].rstrip("/")
    if os.path.isdir(path):
        path = path + "/**/*." + (src["format"] or "parquet")
    header = str(src.get("options", {}).get("header", "true")).lower()
    args = f", header = {header}" if fn == "read_csv_auto" else ""
    try:
        CON.execute(f"CREATE OR REPLACE TABLE {quote(target)} AS SELECT * FROM "
                    f"{fn}('{path}'{args}) LIMIT 0")
    except Exception:
        pass  # no files yet: readers of it resolve when it is declared


def answer():
    datasets, flows = [], []
    for d in STATE["definitions"]:
        o = d["options"]
        if d["kind"] in ("flow", "cdc"):
            continue
        kind = {"streaming_table_decl": "streaming_table"}.get(d["kind"], d["kind"])
        ds = {"name": d["name"], "kind": kind, "file": d["file"], "line": d["line"],
              "comment": o.get("comment") or "", "properties": o.get("properties") or {},
              "partition_cols": o.get("partition_cols") or [],
              "expectations": d.get("expectations", [])}
        if ds["expectations"] and kind not in ("materialized_view", "streaming_table",
                                               "temporary_view"):
            error(d["file"], d["line"], f"expectations on '{d['name']}' ({kind})",
                  "put expectations on a table, materialized view or view")
        if kind == "sink":
            ds["format"] = o["format"]
            ds["options"] = o["options"]
        datasets.append(ds)
    for d in STATE["definitions"]:
        if d["kind"] == "flow" and d.get("expectations"):
            error(d["file"], d["line"], f"expectations on the append flow '{d['name']}'",
                  "put them on the dataset the flow writes (dp.create_streaming_table "
                  "takes expect_all, expect_all_or_drop, expect_all_or_fail)")
        if d["kind"] == "cdc":
            o = d["options"]
            flows.append({"name": d["name"], "target": o["target"], "file": d["file"],
                          "line": d["line"], "sql": f"SELECT * FROM STREAM({o['source']})",
                          "cdc": o["cdc"]})
            continue
        if "result" not in d:
            continue
        kind, body = d["result"]
        target = d["options"]["target"] if d["kind"] == "flow" else d["name"]
        f = {"name": d["name"], "target": target, "file": d["file"], "line": d["line"]}
        f["sql" if kind == "sql" else "source"] = body
        if kind == "source":
            # The columns of the files, for SQL datasets that read this one.
            f["columns"] = [list(c) for c in table_columns(target)]
        flows.append(f)
    return {"datasets": datasets, "flows": flows, "errors": STATE["errors"],
            "unresolved": STATE["unresolved"]}


def main():
    req = json.load(sys.stdin)
    STATE["configuration"] = req.get("configuration", {})
    for name, cols in req.get("tables", {}).items():
        add_table(name, cols)
    for path in req["files"]:
        USER_FILES.add(os.path.abspath(path))
    for path in req["files"]:
        path = os.path.abspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                code = compile(f.read(), path, "exec")
            exec(code, {"__name__": os.path.splitext(os.path.basename(path))[0],
                        "__file__": path, "spark": SPARK})
        except SyntaxError as e:
            error(path, e.lineno or 0, f"Python syntax error: {e.msg}", "fix the file")
        except Refused as r:
            file, line = user_frame(traceback.extract_tb(sys.exc_info()[2]))
            error(file or path, line, f"{r.construct} is not supported in a pipeline file",
                  r.hint)
        except Exception as e:
            file, line = user_frame(traceback.extract_tb(sys.exc_info()[2]))
            error(file or path, line, f"importing the file failed: {type(e).__name__}: {e}",
                  "fix the file")
    resolve()
    json.dump(answer(), sys.stdout)


if __name__ == "__main__":
    main()
