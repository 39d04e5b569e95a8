#!/usr/bin/env bash
# Runs every fuzz target (fuzz/targets/, built by scripts/build.sh into
# build/fuzz/) for a given time each and reports, per target, the CPU time it
# used, how many inputs it ran and the crashes it found (docs/fuzzing.md).
#
#   scripts/fuzz.sh [-t DURATION | -c DURATION] [-j JOBS] [-s SEED] [-b BUILD_DIR] [TARGET...]
#     -t  wall time per target: seconds, or with m / h (default 1h)
#     -c  CPU time per target instead (same units): for runs beside other
#         work, where a niced target's wall time says little of its work
#     -j  targets run at once (default 1); each runs at nice 19
#     -s  first seed (default 1); each chunk of a run takes the next one
#     TARGET  sql_parser pipeline_file check_json drop_reader thrift_footer
#             (default: all)
#
# One input running past 120 s of wall time counts as a hang (runs are niced,
# so wall time is generous). A target runs in chunks of at most 10 minutes,
# each with a new seed, so a
# crash (which ends the driver after saving the input) costs one chunk. Crash
# inputs go to BUILD_DIR/fuzz/crashes/. Exit code 1 when anything crashed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
duration=1h jobs=1 seed=1 build="$ROOT/build" budget=wall
while getopts "t:c:j:s:b:" opt; do
  case "$opt" in
    t) duration=$OPTARG budget=wall ;;
    c) duration=$OPTARG budget=cpu ;;
    j) jobs=$OPTARG ;;
    s) seed=$OPTARG ;;
    b) build=$OPTARG ;;
    *) sed -n '2,18p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(sql_parser pipeline_file check_json drop_reader thrift_footer)

case "$duration" in
  *h) seconds=$(( ${duration%h} * 3600 )) ;;
  *m) seconds=$(( ${duration%m} * 60 )) ;;
  *) seconds=$duration ;;
esac

corpus_of() {
  case "$1" in
    check_json) echo "$ROOT/fuzz/corpus/pipeline_file $ROOT/fuzz/corpus/sql_parser" ;;
    *) echo "$ROOT/fuzz/corpus/$1" ;;
  esac
}

crashes_dir="$build/fuzz/crashes"
logs="$build/fuzz/logs"
mkdir -p "$crashes_dir" "$logs"

# CPU of the driver runs so far (user + system), as /usr/bin/time measured them.
cpu_used() { awk '/^[0-9.]+ [0-9.]+$/ {s += $1 + $2} END {printf "%.0f", s}' "$1"; }

# One target: chunks until its time is up; prints "name cpu execs crashes".
run_target() {
  local name=$1 bin="$build/fuzz/fuzz_$1" end=$((SECONDS + seconds)) s=$seed
  local execs=0 crashes=0 chunk line rc cpu_file="$logs/$1.cpu"
  : >"$cpu_file"
  [[ -x "$bin" ]] || { echo "$name: $bin is not built (scripts/build.sh release)" >&2; return 1; }
  local limit
  while :; do
    if [[ $budget == wall ]]; then
      chunk=$(( end - SECONDS )); (( chunk > 600 )) && chunk=600
      limit=(--seconds "$chunk")
    else
      # CPU used so far by this run's finished chunks; chunks of 300 CPU-s.
      chunk=$(( seconds - $(cpu_used "$cpu_file") )); (( chunk > 300 )) && chunk=300
      limit=(--seconds 1000000 --cpu-seconds "$chunk")
    fi
    (( chunk > 0 )) || break
    # shellcheck disable=SC2046
    line=$(/usr/bin/time -f "%U %S" -a -o "$cpu_file" \
             nice -n 19 "$bin" "${limit[@]}" --seed "$s" --timeout 120 --crash-dir "$crashes_dir" \
             $(corpus_of "$name") 2>>"$logs/$name.log" | tail -n 1)
    rc=$?
    if [[ "$line" =~ execs=([0-9]+).*crashes=([0-9]+) ]]; then
      execs=$((execs + BASH_REMATCH[1])); crashes=$((crashes + BASH_REMATCH[2]))
    else
      crashes=$((crashes + 1))  # died on a signal (its input is saved)
      echo "$name: seed $s ended with status $rc" >>"$logs/$name.log"
    fi
    s=$((s + 1))
  done
  local cpu; cpu=$(cpu_used "$cpu_file")
  echo "$name cpu_seconds=$cpu execs=$execs crashes=$crashes"
}

echo "fuzz: ${#targets[@]} targets x ${seconds}s $budget, $jobs at a time, seeds from $seed ($(date -u +%FT%TZ))"
results=$(mktemp)
running=0
for t in "${targets[@]}"; do
  ( run_target "$t" >>"$results" ) &
  running=$((running + 1))
  if (( running >= jobs )); then wait -n; running=$((running - 1)); fi
done
wait
sort "$results"
status=0
grep -q "crashes=[1-9]" "$results" && status=1
ls "$crashes_dir" 2>/dev/null | sed 's/^/crash input: /'
rm -f "$results"
exit $status
