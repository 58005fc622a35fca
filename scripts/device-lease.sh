#!/usr/bin/env bash
# Issue 14's device measurements for one lease, as ONE call: a lent machine stays warm only
# about 30 s after a call, and a task's device time is 15 minutes, start included, so the
# forty-second session's two calls (docs/performance.md, "Forty-second session") are here one
# command that keeps within a time budget and packs what it measured into few files.
#
#   scripts/device-lease.sh KIT OUT [BUDGET_S]   (there; KIT made here by
#                                                 `scripts/device-check.sh kit target/kit`)
#
# e.g. run(command: 'bash scripts/device-lease.sh target/kit "$OUT" 540', carry:
# ["target/kit"], timeout_s: 590). In order, each step under `timeout` with what is left of
# BUDGET_S (default 540 s):
#   1. part 2: the 12 ms fat tree at 1, 2, 4, 8 and 16 threads, two rounds, outputs compared;
#      once each `--threads 16 --pin-threads`, `--threads 2 --pin-threads`, `--threads 16
#      --rebalance 0`; a window trace at 16 threads (scripts/device-check.sh, TRACE=1) — about
#      170 s on the forty-second session's lease;
#   2. part 1: one round of the issue's bench (`calibration_hpcc`, filing commit then HEAD,
#      ten samples each) — about 180 s there;
#   3. with at least 100 s left, two more rounds of 1, 16 and 2 threads.
# OUT gets summary.md (every step's summary, in order), trace.txt (the trace's analysis) and
# lease.tgz (every CSV, log and the compressed trace): three files, within what a call brings
# back. A step cut short by the budget has its CSV rows so far in summary.md and lease.tgz.
set -uo pipefail
kit=$1 out=$2 budget=${3:-540}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
t0=$(date +%s)
left() { echo $(( budget - ($(date +%s) - t0) )); }
step() { # NAME MIN_S CAP_S ENV... -- ARGS...: runs device-check.sh within the budget
    local name=$1 min=$2 cap=$3; shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local l; l=$(left)
    if [ "$l" -lt "$min" ]; then
        echo "## $name: skipped ($l s left of $budget)" >> "$out/summary.md"
        return
    fi
    [ "$l" -gt "$cap" ] && l=$cap
    echo "== $name (up to $l s)"
    timeout "$l" env "${envs[@]}" bash "$here/device-check.sh" run "$kit" "$work/$name" "$@" \
        > "$work/$name.log" 2>&1
    local rc=$?
    { echo; echo "# step $name (exit $rc$([ $rc = 124 ] && echo ': cut short by the budget'))"
      cat "$work/$name/summary.md" 2> /dev/null || tail -n 20 "$work/$name.log"
      # A step cut short wrote no tables: its rows so far.
      if [ $rc != 0 ]; then
          for f in "$work/$name"/{part1,bench,scaling,extra}.csv; do
              [ -f "$f" ] && { echo; echo "$(basename "$f"):"; cat "$f"; }
          done
      fi; } >> "$out/summary.md"
}
: > "$out/summary.md"
step part2 120 330 BENCH_ROUNDS=0 TRACE=1 \
    "EXTRA=--threads 16 --pin-threads;--threads 2 --pin-threads;--threads 16 --rebalance 0" \
    -- 2 1 2 4 8 16
step bench 150 260 PART2=0 BENCH_ROUNDS=1 -- 0
step more 100 200 BENCH_ROUNDS=0 -- 2 1 16 2
cp "$work/part2/trace-16-threads.txt" "$out/trace.txt" 2> /dev/null || true
tar -C "$work" -czf "$out/lease.tgz" . 2> /dev/null
rm -rf "$work"
echo "device-lease: $(( $(date +%s) - t0 )) s of $budget"
cat "$out/summary.md"
