#!/usr/bin/env bash
# The keyed-write benchmark (issue 6; seed 004's table, reproduced on this machine).
#
# Rows with URL-like string keys in N Parquet files; a target already holding
# some of them; then the rows not yet in the target are written:
#   thund   `thund copy SRC TARGET --checkpoint-keys url` (appends to a copy of
#           the target made of hard links, so every run starts from the same state)
#   thund_hash  the same with --key-match hash (opt-in 128-bit key hashes)
#   thund_plain the same with --plain: every fast path off (what each buys)
#   copy_floor  DuckDB writing just the new rows, picked by a predicate known in
#           advance: what writing them costs without any key check (a floor)
#   duckdb  the anti-join of the same files in DuckDB, written out the same way:
#           COPY (SELECT s.* FROM src s ANTI JOIN target t USING (url)) TO ...
#   daft    Daft's own key-skipping write on a local Ray, when the package installs
#           (into .deps/bench-venv, created here) and has such an API.
# Scenarios: all (the target holds every row: everything is skipped),
# half_first (the first half of the files, as an interrupted run leaves it),
# half_even (every other row: no file or row group is skipped whole).
# The all and half_first targets hold the source's files themselves (hard
# links), byte for byte what a rerun of thund finds. Optional scenarios with a
# target another writer made (DuckDB, other row groups; its layout): all_rewritten
# and half_rewritten (the first half of the rows).
# Each run is its own process; wall time and peak RSS come from /usr/bin/time.
# Rows are appended to bench/results/keyed_write.csv. Not a test: never run in CI.
#
# Usage: bench/keyed_write_bench.sh [BUILD_DIR]      (default: build)
# Environment: SIZES="18900000" LAYOUTS="100 1890" SCENARIOS="all half_first half_even"
#   ENGINES="thund duckdb daft" (also: thund_hash thund_plain copy_floor) REPEATS=3 THREADS=$(nproc) ANTIJOIN_TIMEOUT=3600 (also daft)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
THUND=$BUILD/thund
HELPER=$BUILD/bench/keyed_write_bench
DATA=$ROOT/.bench-data/keyed
RESULTS=$ROOT/bench/results/keyed_write.csv
SIZES=${SIZES:-18900000}
LAYOUTS=${LAYOUTS:-"100 1890"}
SCENARIOS=${SCENARIOS:-"all half_first half_even"}
ENGINES=${ENGINES:-"thund duckdb daft"}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-$(nproc)}
ANTIJOIN_TIMEOUT=${ANTIJOIN_TIMEOUT:-3600}
VENV=$ROOT/.deps/bench-venv

for tool in "$THUND" "$HELPER" /usr/bin/time; do
  [ -x "$tool" ] || { echo "missing $tool (build with -DTHUND_BUILD_BENCH=ON)" >&2; exit 2; }
done
mkdir -p "$DATA" "$(dirname "$RESULTS")"
[ -f "$RESULTS" ] || echo "time_utc,rows,files,scenario,engine,threads,seconds,peak_rss_mb,user_s,sys_s,rows_written,load_avg,note" >"$RESULTS"

# Disk: the sources are ~33 bytes/row compressed, written twice (two layouts),
# plus the half_even target and one run's output; inputs made earlier are
# reused, so then only a run's output (and DuckDB's spill) needs room.
for size in $SIZES; do
  copies=4
  [ -d "$DATA/tgt_half_even_$size" ] && copies=1
  need_gb=$(( size * 33 * copies / 1000000000 + 1 ))
  free_gb=$(df -BG --output=avail "$DATA" | tail -1 | tr -dc '0-9')
  if [ "$free_gb" -lt "$need_gb" ]; then
    echo "not enough disk for $size rows: need ~${need_gb} GB, have ${free_gb} GB" >&2; exit 2
  fi
done

log() { echo "[keyed_write_bench] $*" >&2; }

record() {  # rows files scenario engine seconds rss_kb user sys written note
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  echo "$(date -u +%FT%TZ),$1,$2,$3,$4,$THREADS,$5,$(( $6 / 1024 )),$7,$8,$9,$load,${10}" >>"$RESULTS"
  log "$3 $1 rows/$2 files $4: ${5}s, $(( $6 / 1024 )) MB, written $9 ${10}"
}

# Runs "$@" under /usr/bin/time; sets T_WALL T_RSS T_USER T_SYS T_RC and leaves
# the command's stdout in $TMP_OUT.
TMP_OUT=$(mktemp); TMP_TIME=$(mktemp); trap 'rm -f "$TMP_OUT" "$TMP_TIME"' EXIT
measure() {
  set +e
  /usr/bin/time -f "%e %M %U %S" -o "$TMP_TIME" "$@" >"$TMP_OUT" 2>"$TMP_OUT.err"
  T_RC=$?
  set -e
  read -r T_WALL T_RSS T_USER T_SYS < <(tail -1 "$TMP_TIME")
}

source_dir() { echo "$DATA/src_$1_$2"; }

# Reads the run's input files into the page cache before each measured run, so
# every engine starts warm: at 189M rows the inputs (~12 GB) do not survive an
# anti-join's 11-20 GB, and whichever engine ran first used to read from disk.
warm() {  # directories
  local d
  for d in "$@"; do find "$d" -maxdepth 1 -name '*.parquet' -print0 | xargs -0 -r cat >/dev/null; done
}

prepare() {  # size files
  local src; src=$(source_dir "$1" "$2")
  if [ ! -f "$src/.complete" ]; then
    log "generating $1 rows in $2 files"
    rm -rf "$src"
    "$HELPER" gen "$1" "$2" "$src"
    touch "$src/.complete"
  fi
  # Targets made of hard links (no copy): every row, and the first half of the files.
  if [ ! -d "$DATA/tgt_all_$1_$2" ]; then
    rm -rf "$DATA/tgt_all_$1_$2.tmp"; mkdir -p "$DATA/tgt_all_$1_$2.tmp"
    ln "$src"/*.parquet "$DATA/tgt_all_$1_$2.tmp/"
    mv "$DATA/tgt_all_$1_$2.tmp" "$DATA/tgt_all_$1_$2"
  fi
  if [ ! -d "$DATA/tgt_half_first_$1_$2" ]; then
    rm -rf "$DATA/tgt_half_first_$1_$2.tmp"; mkdir -p "$DATA/tgt_half_first_$1_$2.tmp"
    local files=("$src"/*.parquet)  # sorted by name, like thund reads them
    ln "${files[@]:0:$(( $2 / 2 ))}" "$DATA/tgt_half_first_$1_$2.tmp/"
    mv "$DATA/tgt_half_first_$1_$2.tmp" "$DATA/tgt_half_first_$1_$2"
  fi
  rewritten half_even "id % 2 = 0" "$1" "$src"
  case " $SCENARIOS " in *" all_rewritten "*) rewritten all_rewritten "true" "$1" "$src" ;; esac
  case " $SCENARIOS " in
    *" half_rewritten "*) rewritten half_rewritten "id < $(( $1 / 2 ))" "$1" "$src" ;;
  esac
}

# scenario where size src: a target of src's rows matching `where`, written by
# DuckDB (the same for every layout of that size).
rewritten() {
  if [ ! -d "$DATA/tgt_$1_$3" ]; then
    rm -rf "$DATA/tgt_$1_$3.tmp"
    "$HELPER" rewrite "$4" "$DATA/tgt_$1_$3.tmp" "$2"
    mv "$DATA/tgt_$1_$3.tmp" "$DATA/tgt_$1_$3"
  fi
}

target_dir() {  # scenario size files
  case $1 in
    all) echo "$DATA/tgt_all_$2_$3" ;;
    half_first) echo "$DATA/tgt_half_first_$2_$3" ;;
    half_even | all_rewritten | half_rewritten) echo "$DATA/tgt_$1_$2" ;;
  esac
}

run_thund() {  # size files scenario [engine name] [extra thund options...]
  local src target run engine=${4:-thund}; src=$(source_dir "$1" "$2"); target=$(target_dir "$3" "$1" "$2")
  run=$DATA/run_thund
  rm -rf "$run"; cp -al "$target" "$run"
  warm "$src" "$target"
  measure "$THUND" copy "$src" "$run" --checkpoint-keys url --threads "$THREADS" --json -q "${@:5}"
  local written note=""
  if [ "$T_RC" -eq 0 ]; then
    written=$(grep -o '"rows_written":[0-9]*' "$TMP_OUT" | cut -d: -f2)
    note="key_set_bytes=$(grep -o '"key_set_bytes":[0-9]*' "$TMP_OUT" | cut -d: -f2)"
  else
    written=-1; note="failed: $(tr '\n,' '  ' <"$TMP_OUT.err" | cut -c1-200)"
  fi
  record "$1" "$2" "$3" "$engine" "$T_WALL" "$T_RSS" "$T_USER" "$T_SYS" "$written" "$note"
  rm -rf "$run"
}

# The same with --key-match hash (128-bit key hashes: less memory, opt-in).
run_thund_hash() { run_thund "$1" "$2" "$3" thund_hash --key-match hash; }
# The same with --plain (docs/keyed-writes.md "Fast paths and their switches").
run_thund_plain() { run_thund "$1" "$2" "$3" thund_plain --plain; }

run_duckdb() {
  local src target out; src=$(source_dir "$1" "$2"); target=$(target_dir "$3" "$1" "$2")
  out=$DATA/run_duckdb
  rm -rf "$out"
  warm "$src" "$target"
  measure timeout "$ANTIJOIN_TIMEOUT" "$HELPER" antijoin "$src" "$target" "$out" "$THREADS"
  local written note=""
  if [ "$T_RC" -eq 0 ]; then
    written=$(grep -o 'rows=[0-9]*' "$TMP_OUT" | cut -d= -f2)
  elif [ "$T_RC" -eq 124 ]; then
    written=-1; note="timeout after ${ANTIJOIN_TIMEOUT}s"
  else
    written=-1; note="failed (exit $T_RC): $(tr '\n,' '  ' <"$TMP_OUT.err" | cut -c1-200)"
  fi
  record "$1" "$2" "$3" duckdb "$T_WALL" "$T_RSS" "$T_USER" "$T_SYS" "$written" "$note"
  rm -rf "$out" "$out.spill"
}

# The floor: DuckDB writing exactly the new rows, selected by a predicate known
# in advance (no key check at all). No engine can write them faster than this.
run_copy_floor() {
  local src where; src=$(source_dir "$1" "$2")
  case $3 in
    all) where="false" ;;
    half_first) where="id >= $(( $1 / $2 * ($2 / 2) ))" ;;
    half_even) where="id % 2 = 1" ;;
    all_rewritten) where="false" ;;
    half_rewritten) where="id >= $(( $1 / 2 ))" ;;
  esac
  rm -rf "$DATA/run_floor"
  warm "$src"
  measure "$HELPER" copy "$src" "$DATA/run_floor" "$where" "$THREADS"
  local written=-1; [ "$T_RC" -eq 0 ] && written=$(grep -o 'rows=[0-9]*' "$TMP_OUT" | cut -d= -f2)
  record "$1" "$2" "$3" copy_floor "$T_WALL" "$T_RSS" "$T_USER" "$T_SYS" "$written" "where $where"
  rm -rf "$DATA/run_floor"
}

DAFT_STATE=""  # "" = not tried yet, "ok", or why not
daft_setup() {
  [ -n "$DAFT_STATE" ] && return
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV and installing daft[ray]"
    python3 -m venv "$VENV" || { DAFT_STATE="venv creation failed"; return; }
  fi
  if ! "$VENV/bin/python" -c "import daft, ray" 2>/dev/null; then
    if ! "$VENV/bin/pip" install -q "daft[ray]" >"$DATA/daft-install.log" 2>&1; then
      DAFT_STATE="pip install daft[ray] failed: $(tail -1 "$DATA/daft-install.log" | tr ',' ' ' | cut -c1-150)"
      return
    fi
  fi
  DAFT_STATE=$("$VENV/bin/python" "$ROOT/bench/keyed_write_daft.py" --probe 2>&1 | tail -1)
}

run_daft() {
  daft_setup
  if [ "$DAFT_STATE" != "ok" ]; then
    record "$1" "$2" "$3" daft 0 0 0 0 -1 "not run: $DAFT_STATE"
    return
  fi
  local src target run; src=$(source_dir "$1" "$2"); target=$(target_dir "$3" "$1" "$2")
  run=$DATA/run_daft
  rm -rf "$run"; cp -al "$target" "$run"
  warm "$src" "$target"
  measure timeout "$ANTIJOIN_TIMEOUT" "$VENV/bin/python" "$ROOT/bench/keyed_write_daft.py" "$src" "$run" "$THREADS"
  local written note="peak RSS: the driver process only (Ray workers are not its children)"
  if [ "$T_RC" -eq 0 ]; then
    written=$(grep -o 'rows=[0-9]*' "$TMP_OUT" | cut -d= -f2)
  elif [ "$T_RC" -eq 124 ]; then
    written=-1; note="timeout after ${ANTIJOIN_TIMEOUT}s"
  else
    written=-1; note="failed: $(tail -3 "$TMP_OUT.err" | tr '\n,' '  ' | cut -c1-200)"
  fi
  record "$1" "$2" "$3" daft "$T_WALL" "$T_RSS" "$T_USER" "$T_SYS" "$written" "$note"
  rm -rf "$run"
}

for size in $SIZES; do
  for files in $LAYOUTS; do
    prepare "$size" "$files"
    for scenario in $SCENARIOS; do
      for ((r = 0; r < REPEATS; ++r)); do
        for engine in $ENGINES; do  # engines alternate, so load changes hit both
          "run_$engine" "$size" "$files" "$scenario"
        done
      done
    done
  done
done
