"""Python expectations (`dp.expect*`, docs/python.md) on the Spark backend.

Open-source SDP has no expectations, so `from pyspark import pipelines as dp;
@dp.expect_or_drop(...)` fails on Spark. thund runs them as it runs SQL
expectations there (docs/spark.md): `drop` is a WHERE on the predicate,
`fail` an `assert_true` on it (the flow fails at the first violating row),
`warn` is not checked. install() adds the decorators to pyspark's pipelines
module and wraps each query function with the filters of its dataset.

Expectation decorators may sit below the dataset decorator (applied first) or
above it (applied after pyspark registered the function): flows are therefore
held back until the whole file is imported (DeferredFlows), so every
decorator has run when a query function is called.
"""

import functools

from pyspark import pipelines as dp
from pyspark.sql import functions as F

_ACTIONS = {"expect": "warn", "expect_or_drop": "drop", "expect_or_fail": "fail"}
_BY_TARGET = {}  # streaming table -> expectations of dp.create_streaming_table


def _sql_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def apply(df, expectations):
    """df with the drop and fail expectations applied (warn is not checked)."""
    for name, predicate, action in expectations:
        if action == "drop":
            df = df.where(F.expr(f"({predicate})"))
        elif action == "fail":
            message = _sql_string(f"expectation '{name}' failed: {predicate}")
            df = df.where(F.expr(f"assert_true(coalesce(({predicate}), false), {message}) IS NULL"))
    return df


def _checked(fn, target=None):
    @functools.wraps(fn)
    def query():
        found = list(getattr(fn, "_thund_expectations", []))
        if target is not None:
            found += _BY_TARGET.get(target, [])
        return apply(fn(), found)
    return query


def _dataset(original):
    def decorator(query_function=None, **kw):
        if query_function is not None and callable(query_function):
            original(_checked(query_function))
            return query_function
        outer = original(**kw)

        def wrap(fn):
            outer(_checked(fn))
            return fn
        return wrap
    return decorator


def _append_flow(original):
    def decorator(*, target, **kw):
        outer = original(target=target, **kw)

        def wrap(fn):
            outer(_checked(fn, target))
            return fn
        return wrap
    return decorator


def _create_streaming_table(original):
    def create(name, *args, expect_all=None, expect_all_or_drop=None, expect_all_or_fail=None,
               **kw):
        for action, pairs in (("warn", expect_all), ("drop", expect_all_or_drop),
                              ("fail", expect_all_or_fail)):
            for ename, predicate in (pairs or {}).items():
                _BY_TARGET.setdefault(name, []).append((ename, predicate, action))
        return original(name, *args, **kw)
    return create


def _expect(kind, many):
    action = _ACTIONS[kind]

    def decorator(*args, **kw):
        if many:
            pairs = list((args[0] if args else kw["expectations"]).items())
        else:
            pairs = [(args[0] if args else kw["name"],
                      args[1] if len(args) > 1 else kw["constraint"])]

        def wrap(fn):
            fn._thund_expectations = getattr(fn, "_thund_expectations", []) + [
                (name, predicate, action) for name, predicate in pairs]
            return fn
        return wrap
    return decorator


class DeferredFlows:
    """A registry that holds flows back until flush(); the rest goes through."""

    def __init__(self, registry):
        self._registry = registry
        self._flows = []

    def register_flow(self, flow):
        self._flows.append(flow)

    def flush(self):
        flows, self._flows = self._flows, []
        for flow in flows:
            self._registry.register_flow(flow)

    def __getattr__(self, name):
        return getattr(self._registry, name)


def install():
    for name in ("table", "materialized_view", "temporary_view"):
        setattr(dp, name, _dataset(getattr(dp, name)))
    dp.append_flow = _append_flow(dp.append_flow)
    dp.create_streaming_table = _create_streaming_table(dp.create_streaming_table)
    for kind in _ACTIONS:
        setattr(dp, kind, _expect(kind, many=False))
        setattr(dp, kind.replace("expect", "expect_all"), _expect(kind, many=True))
