"""Flattens the CTE chains sqlframe generates into one SELECT where that is an
equivalent query (docs/python.md, "Streaming windows").

sqlframe writes every DataFrame step as a CTE: `events.groupBy(F.window(...),
"k").agg(...)` reads the source through a projection CTE, and a `select`
after the aggregation puts the aggregation itself in a CTE. thund's streaming
(windows emitted when they close, incremental aggregation) needs the
aggregation in the outermost SELECT, as a Spark SQL user writes it. Two
merges, each applied only when the result is the same query:

* a plain projection CTE (one relation, no grouping, DISTINCT, ordering,
  limit, aggregate or window function) is merged into the query that reads it
  (its expressions replace the references; its WHERE joins the reader's);
* a plain projection over a CTE (one relation, no WHERE, grouping, DISTINCT,
  ordering, limit, aggregate or window function) is merged into that CTE
  (the projection's expressions, written over the CTE's).

A time window (`window(...) AS window`, `session_window(...) AS
session_window`) stays a reference to its grouping column, `window.start`,
as in Spark SQL. Each merged CTE must be read exactly once, and neither side
may call a function whose value changes per call (rand(), uuid(), ...), which
a merge could copy. Anything else is left as sqlframe wrote it.
"""

from sqlglot import exp

_TIME_WINDOWS = ("window", "session_window")
_BLOCKING = ("group", "having", "distinct", "order", "limit", "offset", "qualify", "windows",
             "joins", "laterals", "pivots", "sort", "cluster", "distribute", "prewhere")


def _key(name):
    """The argument's key in this sqlglot (`from_` / `with_` in newer ones)."""
    return name + "_" if (name + "_") in exp.Select.arg_types else name


def _arg(node, name):
    return node.args.get(_key(name))


def _set(node, name, value):
    node.set(_key(name), value)


def _single_table(select):
    """The one table a SELECT reads (no joins), or None."""
    if _arg(select, "joins") or _arg(select, "laterals"):
        return None
    source = _arg(select, "from")
    if source is None or not isinstance(source.this, exp.Table):
        return None
    return source.this


def _has_subquery(select):
    """A nested query anywhere but in the SELECT's own WITH."""
    for key, value in select.args.items():
        if key == _key("with") or value is None:
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, exp.Expression) and (
                    isinstance(v, (exp.Select, exp.Subquery)) or v.find(exp.Select, exp.Subquery)):
                return True
    return False


def _is_time_window(node):
    return isinstance(node, exp.Anonymous) and str(node.this).lower() in _TIME_WINDOWS


_VOLATILE = ("rand", "randn", "random", "uuid", "shuffle", "monotonically_increasing_id",
             "spark_partition_id", "input_file_name")


def _volatile(node):
    """Whether evaluating `node` twice may give two values (merges may copy it)."""
    for n in node.find_all(exp.Func):
        name = (n.name if isinstance(n, exp.Anonymous) else n.sql_name()).lower()
        if isinstance(n, (exp.Rand, exp.Randn, exp.Uuid)) or name in _VOLATILE:
            return True
    return False


def _plain(select, *, where_ok):
    """A SELECT that only projects: no grouping, ordering, aggregates, ..."""
    if not isinstance(select, exp.Select) or _has_subquery(select):
        return False
    if any(_arg(select, k) for k in _BLOCKING):
        return False
    if not where_ok and _arg(select, "where"):
        return False
    for e in select.expressions:
        if isinstance(e, exp.Star) or e.find(exp.Star):
            return False
        if e.find(exp.AggFunc) or e.find(exp.Window):
            return False
        if any(_is_time_window(n) for n in e.find_all(exp.Anonymous)):
            return False
    return _single_table(select) is not None


def _outputs(select):
    """{output name: expression} of a SELECT, or None when a name repeats."""
    out = {}
    for e in select.expressions:
        name = e.alias_or_name
        if not name or name in out:
            return None
        out[name] = e.this if isinstance(e, exp.Alias) else e
    return out


def _relation_names(table):
    names = {table.name}
    if table.alias:
        names.add(table.alias)
    return names


def _substitute(node, relations, outputs, keep_windows):
    """Replaces the references in `node` to the outputs of a relation named
    one of `relations` by their expressions. None when a reference is unknown."""
    failed = []

    def replace(n):
        if not isinstance(n, exp.Column):
            return n
        table = n.table
        if table and table not in relations:
            # A struct field of an output (window.start), or of the reader's own
            # grouping window.
            if table not in outputs and table.lower() in _TIME_WINDOWS:
                return n
            if table not in outputs:
                failed.append(n)
                return n
            inner = outputs[table]
            if keep_windows and _is_time_window(inner) and table.lower() in _TIME_WINDOWS:
                return n
            if isinstance(inner, exp.Column) and not inner.table and inner.name == table:
                return n
            return exp.Dot(this=inner.copy(), expression=exp.to_identifier(n.name))
        if n.name not in outputs and not table and n.name.lower() in _TIME_WINDOWS:
            return n
        if n.name not in outputs:
            failed.append(n)
            return n
        inner = outputs[n.name]
        if keep_windows and _is_time_window(inner) and n.name.lower() in _TIME_WINDOWS:
            return exp.column(n.name)
        return inner.copy()

    result = node.transform(replace)
    return None if failed else result


def _named(expression, original):
    """`expression` under the output name `original` had."""
    if isinstance(original, exp.Alias):
        return expression
    name = original.alias_or_name
    if isinstance(expression, exp.Column) and expression.name == name:
        return expression
    return exp.alias_(expression, name, quoted=True)


def _cte_uses(query, name):
    return sum(1 for t in query.find_all(exp.Table) if t.name == name and not t.db)


def _merge_projection_into_reader(query, reader, cte):
    """Merge 1: `cte` (a plain projection) into `reader`, which reads it alone."""
    inner = cte.this
    outputs = _outputs(inner)
    if outputs is None:
        return False
    relations = _relation_names(_single_table(reader))
    new_exprs = []
    for e in reader.expressions:
        s = _substitute(e, relations, outputs, keep_windows=False)
        if s is None:
            return False
        new_exprs.append(_named(s, e) if not isinstance(e, exp.Alias) else s)
    parts = {}
    for key in ("where", "group", "having", "order", "qualify"):
        part = _arg(reader, key)
        if part is not None:
            s = _substitute(part, relations, outputs, keep_windows=False)
            if s is None:
                return False
            parts[key] = s
    reader.set("expressions", new_exprs)
    for key, part in parts.items():
        _set(reader, key, part)
    _set(reader, "from", _arg(inner, "from").copy())
    inner_where = _arg(inner, "where")
    if inner_where is not None:
        if _arg(reader, "where") is not None:
            _set(reader, "where", exp.Where(this=exp.and_(inner_where.this.copy(),
                                                        _arg(reader, "where").this)))
        else:
            _set(reader, "where", inner_where.copy())
    return True


def _merge_reader_into_cte(query, reader, cte):
    """Merge 2: `reader` (a plain projection of `cte` alone) into `cte`."""
    inner = cte.this
    if not isinstance(inner, exp.Select) or _has_subquery(inner):
        return None
    if any(_arg(inner, k) for k in ("order", "limit", "offset", "distinct")):
        return None
    outputs = _outputs(inner)
    if outputs is None:
        return None
    relations = _relation_names(_single_table(reader))
    new_exprs = []
    for e in reader.expressions:
        s = _substitute(e, relations, outputs, keep_windows=True)
        if s is None:
            return None
        new_exprs.append(_named(s, e) if not isinstance(e, exp.Alias) else s)
    # A time window that is referenced must be a grouping column of that name.
    merged = inner.copy()
    merged.set("expressions", new_exprs)
    return merged


def _step(query):
    """One merge at the outermost SELECT or in a CTE; True when one was made."""
    with_ = _arg(query, "with")
    if with_ is None:
        return False
    ctes = {c.alias: c for c in with_.expressions}
    readers = [query] + [c.this for c in with_.expressions]
    for reader in readers:
        if not isinstance(reader, exp.Select):
            continue
        table = _single_table(reader)
        if table is None or table.db or table.name not in ctes:
            continue
        cte = ctes[table.name]
        if _cte_uses(query, table.name) != 1 or _has_subquery(reader):
            continue
        if _volatile(cte.this) or _volatile(reader):
            continue  # a merge may evaluate rand() & co. twice
        if _plain(cte.this, where_ok=True) and _merge_projection_into_reader(query, reader, cte):
            cte.pop()
            return True
        if reader is query and _plain(reader, where_ok=False):
            merged = _merge_reader_into_cte(query, reader, cte)
            if merged is None:
                continue
            cte.pop()
            rest = [c for c in with_.expressions]
            if rest:
                _set(merged, "with", exp.With(expressions=[c.copy() for c in rest]))
            query.replace(merged)
            return merged
    return False


def _bare_time_windows(select):
    """`window(ts, ...) AS window` in a grouped SELECT is the grouping column
    `window`, which is how Spark SQL and thund both read it."""
    group = _arg(select, "group")
    if group is None:
        return
    keys = {k.sql() for k in group.expressions}
    for i, e in enumerate(select.expressions):
        if (isinstance(e, exp.Alias) and _is_time_window(e.this) and e.this.sql() in keys
                and e.alias.lower() == str(e.this.this).lower()):
            e.replace(exp.column(e.alias, quoted=True))


def _spark_field_names(select):
    """`df.select("window.start")` is named `start` in Spark (sqlframe: `window.start`)."""
    for e in select.expressions:
        if isinstance(e, exp.Alias) and isinstance(e.this, exp.Column) and e.this.table:
            if e.alias == f"{e.this.table}.{e.this.name}":
                e.set("alias", exp.to_identifier(e.this.name, quoted=True))


def flatten(query):
    """The query with sqlframe's CTE chain merged where equivalent (a copy)."""
    query = query.copy()
    for _ in range(100):
        result = _step(query)
        if result is False:
            break
        if isinstance(result, exp.Select):
            query = result
        with_ = _arg(query, "with")
        if with_ is not None and not with_.expressions:
            _set(query, "with", None)
    if isinstance(query, exp.Select):
        _spark_field_names(query)
        _bare_time_windows(query)
    return query
