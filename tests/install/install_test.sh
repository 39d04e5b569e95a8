#!/usr/bin/env bash
# An installed thund runs from anywhere: `cmake --install BUILD --prefix P`,
# then P is moved elsewhere, and the moved binary must
#   * load its libraries from the prefix only (RUNPATH $ORIGIN/../lib; ldd shows
#     no library from the build's .deps),
#   * check and run a batch pipeline, whose result DuckDB (thund query) confirms,
#     check every example pipeline and run the streaming example,
#   * read a Python SDP project with the loader installed in P/share (proven by
#     swapping in a loader that refuses: its message must come back),
#   * ship completion scripts that bash can source.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"; src="$(cd "$2" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/thund-install-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/p" >/dev/null
mv "$work/p" "$work/moved"
P="$work/moved"
thund="$P/bin/thund"
[[ -x "$thund" ]] || fail "no $thund"
for lib in libarrow.so.2600 libarrow_compute.so.2600 libparquet.so.2600 libarrow_dataset.so.2600 \
           libarrow_acero.so.2600 libarrow_s3.so.2600 libduckdb.so; do
  [[ -f "$P/lib/$lib" ]] || fail "$lib not installed"
done
[[ -f "$P/share/thund/python/thund_sdp/loader.py" ]] || fail "loader.py not installed"
runpath="$(readelf -d "$thund" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')"
[[ "$runpath" == '$ORIGIN/../lib' ]] || fail "RUNPATH is '$runpath', want \$ORIGIN/../lib"
ldd_out="$(ldd "$thund")"
for lib in libarrow.so.2600 libparquet.so.2600 libduckdb.so; do
  grep -q "$lib => $P/bin/../lib/$lib" <<<"$ldd_out" || fail "$lib not taken from the prefix: $ldd_out"
done
! grep -q "\.deps" <<<"$ldd_out" || fail "a library comes from .deps: $ldd_out"

# A batch pipeline, from a directory that is neither the source nor the build tree.
mkdir -p "$work/proj"
cat >"$work/proj/p.yaml" <<'YAML'
name: installed
datasets:
  - name: numbers
    kind: materialized_view
  - name: per_k
    kind: materialized_view
flows:
  - name: numbers
    target: numbers
    sql: SELECT i AS id, i % 5 AS k FROM generate_series(1, 1000) AS t(i)
  - name: per_k
    target: per_k
    sql: SELECT k, count(*) AS n FROM numbers GROUP BY k
YAML
cd "$work/proj"
"$thund" check p.yaml >/dev/null || fail "thund check failed"
"$thund" run p.yaml --storage "$work/store" -q >"$work/run.txt" || fail "thund run failed: $(cat "$work/run.txt")"
got="$("$thund" query p.yaml --storage "$work/store" "SELECT sum(n) AS s, count(*) AS c FROM per_k" --format csv)"
grep -q "^1000,5" <<<"$got" || fail "per_k is wrong: $got"

# The repository's examples: every pipeline checks, and the streaming one runs.
for f in "$src"/examples/pipelines/*.yaml "$src"/examples/streaming/*.sql; do
  "$thund" check "$f" >/dev/null || fail "thund check $f failed"
done
"$thund" run "$src/examples/streaming/auctions.sql" --storage "$work/auctions" --max-triggers 3 \
  --events none >"$work/auctions.txt" || fail "auctions run failed: $(cat "$work/auctions.txt")"
bids="$("$thund" query "$src/examples/streaming/auctions.sql" --storage "$work/auctions" \
  "SELECT count(*) > 0 AS any FROM bids" --format csv)"
grep -q "^true" <<<"$bids" || fail "auctions wrote no bids: $bids"

# A Python SDP project: the loader in P/share reads it ...
mkdir -p "$work/sdp/t"
cat >"$work/sdp/spark-pipeline.yml" <<'YAML'
name: pyproj
storage: store
libraries:
  - glob:
      include: t/**
YAML
echo "CREATE MATERIALIZED VIEW a AS SELECT i AS x FROM generate_series(0, 2) AS t(i);" >"$work/sdp/t/a.sql"
cat >"$work/sdp/t/b.py" <<'PY'
from pyspark import pipelines as dp


@dp.materialized_view
def b():
    return spark.read.table("a").where("x > 0")
PY
"$thund" check "$work/sdp" >"$work/check.txt" 2>&1 || fail "Python SDP check failed: $(cat "$work/check.txt")"
# ... and it is that copy which runs: one that refuses is heard.
cp "$P/share/thund/python/thund_sdp/loader.py" "$work/loader.orig"
echo 'raise SystemExit("the installed loader ran")' >"$P/share/thund/python/thund_sdp/loader.py"
if "$thund" check "$work/sdp" >"$work/check2.txt" 2>&1; then fail "the refusing loader was not used"; fi
grep -q "the installed loader ran" "$work/check2.txt" || fail "unexpected: $(cat "$work/check2.txt")"
cp "$work/loader.orig" "$P/share/thund/python/thund_sdp/loader.py"

# Completion scripts.
[[ -f "$P/share/bash-completion/completions/thund" ]] || fail "no bash completion installed"
[[ -f "$P/share/zsh/site-functions/_thund" ]] || fail "no zsh completion installed"
[[ -f "$P/share/fish/vendor_completions.d/thund.fish" ]] || fail "no fish completion installed"
words="$(bash -c 'source "$1"; COMP_WORDS=(thund pl); COMP_CWORD=1; _thund; echo "${COMPREPLY[*]}"' _ \
  "$P/share/bash-completion/completions/thund")"
[[ "$words" == "plan" ]] || fail "bash completion of 'pl' gave '$words'"
echo "install test: ok (prefix moved to $P)"
