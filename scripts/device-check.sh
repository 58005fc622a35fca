#!/usr/bin/env bash
# Issue 14's measurements on a lent many-core machine, as one prepared command: one core
# against the filing commit (part 1) and the thread scaling of the 12 ms fat tree (part 2).
# The machine has no Rust toolchain, so the binaries are built here and carried there; the
# device's time is short (minutes), so everything runs from one call.
#
#   scripts/device-check.sh kit KIT [SHARED]   (here) builds the kit: stripped release binaries
#                                              of HEAD and of the filing commit 373ce04 (in a
#                                              worktree under /tmp), and the calibration inputs
#   scripts/device-check.sh run KIT OUT [ROUNDS] [THREADS...]
#                                              (there) runs them, writes OUT/part1.csv,
#                                              OUT/scaling.csv and OUT/summary.md (and
#                                              OUT/bench.csv with BENCH_ROUNDS=N set;
#                                              EXTRA, TRACE and PART2: below)
#
# KIT must be a path the device run carries (an ignored folder of the checkout, e.g.
# `target/kit`, named in `carry`; the whole kit is about 28 MiB). On the device, e.g.
# (carry ["target/kit"], a timeout of about 500 s: on the 16-core Xeon of earlier leases
# this takes about four minutes, half of it the bench's ten runs of each binary):
#   SIBLINGS=1 BENCH_ROUNDS=1 TRACE=1 EXTRA="--threads 2 --shards 2;--threads 16 --shards 64" \
#       scripts/device-check.sh run target/kit "$OUT" 2 1 2 4 8 16
#
# Part 1 times `dcsim run` on the HPCC calibration import (one thread, pinned to one core,
# the two binaries alternated; each binary imports the reference config itself, with exact
# serialization, no PFC log, the run's ECMP seeding and flow starts first, as `cargo bench
# --bench reference`'s `calibration_hpcc` does, so that both run the same model). The
# summary's folder also gets topology.txt: `lscpu` and the thread-sibling lists, and with
# SIBLINGS=1 a probe that times a one-core run beside a copy on another CPU (about 10 s).
# Part 2 runs `examples/perf/fattree-12ms.toml` at each thread count (all cores free to
# the run), ROUNDS times, the counts in rotated order, and checks that every run's fct.csv
# and counters.csv are identical. Wall times are the runs' own summaries (the simulation only,
# as the bench). PART2=0 leaves part 2 out: e.g. `PART2=0 BENCH_ROUNDS=2 scripts/device-check.sh
# run target/kit "$OUT" 0` runs only the issue's bench, two rounds, where little device time
# is left. One round took about three minutes on the forty-second session's lease (the filing
# commit's ten samples of about 8 s each, then HEAD's): give it at least 240 s; that session's
# two calls (docs/performance.md, "Forty-second session") fit a 15-minute lease.
set -euo pipefail

FILING=373ce04

kit() {
    local kit=$1 shared=${2:-$(dirname "$0")/../../shared}
    local root; root=$(cd "$(dirname "$0")/.." && pwd)
    local cal; cal=$(cd "$shared/reference/calibration/small-ws30" && pwd)
    mkdir -p "$kit"
    kit=$(cd "$kit" && pwd)
    (cd "$root" && cargo build --release -p dcsim-cli)
    strip -o "$kit/dcsim-head" "$root/target/release/dcsim"
    # Figures are quoted for a commit: say so when the build is not the commit's.
    if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
        echo "$(git -C "$root" rev-parse HEAD)+uncommitted changes" > "$kit/head-commit"
        echo "warning: the working tree differs from HEAD; the kit's head build is not HEAD's" >&2
    else
        git -C "$root" rev-parse HEAD > "$kit/head-commit"
    fi
    local wt=/tmp/dcsim-filing-$FILING
    if [ ! -x "$wt/target/release/dcsim" ]; then
        git -C "$root" worktree add -f "$wt" "$FILING" > /dev/null 2>&1 || true
        (cd "$wt" && CARGO_TARGET_DIR="$wt/target" cargo build --release -p dcsim-cli)
    fi
    strip -o "$kit/dcsim-filing" "$wt/target/release/dcsim"
    # The reference bench of both commits (`cargo bench --bench reference`'s binary), for
    # the issue's own measure (BENCH_ROUNDS on the device).
    local b
    for b in "$root:head" "$wt:filing"; do
        local dir=${b%:*} name=${b#*:}
        local exe
        exe=$(cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo bench --bench reference --no-run \
            --message-format=json 2> /dev/null | sed -n 's/.*"executable":"\([^"]*reference-[^"]*\)".*/\1/p' | tail -1)
        strip -o "$kit/bench-$name" "$exe"
    done
    mkdir -p "$kit/cal" "$kit/shared/reference/calibration/small-ws30"
    cp -f "$cal/config-hpcc.txt" "$cal/topology.txt" "$cal/flow.txt" "$kit/cal/"
    cp -f "$cal"/config-*.txt "$cal/topology.txt" "$cal/flow.txt" \
        "$kit/shared/reference/calibration/small-ws30/"
    cp -f "$root/examples/perf/fattree-12ms.toml" "$kit/"
    du -sh "$kit"
}

# The run's own wall time (seconds) from a `dcsim run` summary on stdin.
wall_of() {
    sed -n 's/.*wall time: \([0-9.]*\) s.*/\1/p' | head -1
}

# The shards a run used, from its summary on stdin.
shards_of() {
    sed -n 's/.*shards: \([0-9]*\),.*/\1/p' | head -1
}

# The first 12 hex digits of the md5 of a run's fct.csv and counters.csv.
outputs_of() {
    cat "$1/fct.csv" "$1/counters.csv" | md5sum | cut -c1-12
}

# The CPU topology as the guest reports it, into FILE.
topology() {
    {
        lscpu 2> /dev/null || true
        echo
        echo "thread siblings (each CPU's list, distinct ones; '0-1' or '0,8' means two threads of one core):"
        cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list 2> /dev/null | sort -u | paste -sd '|' || true
        echo
    } > "$1"
}

# Whether CPUs share a core in fact, whatever the guest reports: the calibration cut (one
# thread, about half a second) alone on CPU 2, then on CPU 2 while a copy runs on CPU c, for
# c in 3, 4, n/2 + 2 and n - 1. A copy on a sibling thread slows it by a quarter or more; one on
# another core by a few per cent (the shared L3 and memory).
siblings() {
    local kit=$1 work=$2 n; n=$(nproc)
    [ "$n" -ge 6 ] || { echo "siblings: too few CPUs ($n)"; return 0; }
    "$kit/dcsim-head" import-ns3 "$kit/cal/config-hpcc.txt" --out "$work/sib.toml" > /dev/null 2>&1 \
        || { echo "siblings: the import failed"; return 0; }
    sed -i -e 's/^serialization = "ns3"/serialization = "exact"/' -e 's/^pfc_log = true/pfc_log = false/' \
        -e 's/^ecmp_seed = "node"/ecmp_seed = "run"/' -e 's/^flow_start = "after-queued"/flow_start = "first"/' \
        "$work/sib.toml"
    # The copy beside runs the whole calibration (five times as long), so that it overlaps
    # all of the timed run.
    sed -e 's/^stop_time = .*/stop_time = "2.003s"/' "$work/sib.toml" > "$work/sib-cut.toml"
    local one=(run "$work/sib-cut.toml")
    echo
    echo "sibling probe (the calibration cut on CPU 2, wall s; alone, then beside a copy on CPU c):"
    local c alone
    alone=$(taskset -c 2 "$kit/dcsim-head" "${one[@]}" --out "$work/sib-a" 2>&1 | wall_of)
    echo "alone: $alone"
    for c in 3 4 $(( n / 2 + 2 )) $(( n - 1 )); do
        taskset -c "$c" "$kit/dcsim-head" run "$work/sib.toml" --out "$work/sib-b" > /dev/null 2>&1 &
        local bg=$!
        local with
        with=$(taskset -c 2 "$kit/dcsim-head" "${one[@]}" --out "$work/sib-c" 2>&1 | wall_of)
        wait "$bg" || true
        echo "beside CPU $c: $with"
    done
}

run() {
    local kit=$1 out=$2 rounds=${3:-2}
    shift $(( $# < 3 ? $# : 3 ))
    local threads=("$@")
    [ ${#threads[@]} -gt 0 ] || threads=(1 2 4 8 16)
    kit=$(cd "$kit" && pwd)
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    local work; work=$(mktemp -d)
    # A failure says where, with the end of the runs' logs (they stay outside OUT); `-E`
    # carries the trap into the helpers.
    set -E
    # shellcheck disable=SC2064 # `work` is fixed now
    trap "echo \"device-check: failed at line \$LINENO: \$BASH_COMMAND\" >&2; tail -n 5 $work/*.log >&2" ERR
    # Part 1 on one core other than the first (interrupts), where `taskset` can pin there.
    local pin=() cpu=$(( $(nproc) > 2 ? 2 : 0 ))
    if command -v taskset > /dev/null && taskset -c "$cpu" true 2> /dev/null; then
        pin=(taskset -c "$cpu")
    fi
    {
        echo "# issue 14 on $(uname -n): $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
        echo "head $(cat "$kit/head-commit"), filing $FILING; $(date -u +%FT%TZ); part 1 pinned: ${pin[*]:-no}"
    } > "$out/summary.md"
    # What the guest says of its CPUs: whether two of them are threads of one core (their
    # scaling then says little of the engine's) and how big the caches are.
    topology "$out/topology.txt"
    if [ "${SIBLINGS:-0}" = 1 ]; then
        siblings "$kit" "$work" >> "$out/topology.txt"
    fi

    # Part 1: one core, the filing commit against HEAD, alternated.
    echo "round,binary,wall_s,frames" > "$out/part1.csv"
    for b in head filing; do
        "$kit/dcsim-$b" import-ns3 "$kit/cal/config-hpcc.txt" --out "$work/$b.toml" > "$work/import-$b.log" 2>&1
        sed -i -e 's/^serialization = "ns3"/serialization = "exact"/' \
            -e 's/^pfc_log = true/pfc_log = false/' -e 's/^ecmp_seed = "node"/ecmp_seed = "run"/' \
            -e 's/^flow_start = "after-queued"/flow_start = "first"/' "$work/$b.toml"
    done
    for r in $(seq 1 "$rounds"); do
        local order="head filing"
        [ $((r % 2)) -eq 0 ] && order="filing head"
        for b in $order; do
            local log="$work/p1-$b-$r.log"
            "${pin[@]}" "$kit/dcsim-$b" run "$work/$b.toml" --out "$work/p1-$b" > "$log" 2>&1
            local frames
            frames=$(sed -n 's/^frames_transmitted,//p' "$work/p1-$b/counters.csv")
            echo "$r,$b,$(wall_of < "$log"),$frames" >> "$out/part1.csv"
            echo "part 1, round $r, $b: $(wall_of < "$log") s"
        done
    done

    # Part 1 by the issue's own measure, if asked for (each round takes about ten runs of
    # each binary): `reference_events/calibration_hpcc`. Criterion prints its point estimate,
    # which for iterations this long (flat sampling) is the mean of its samples; the median
    # comes from its estimates.json.
    echo "round,binary,mean_s,median_s" > "$out/bench.csv"
    for r in $(seq 1 "${BENCH_ROUNDS:-0}"); do
        local order="head filing"
        [ $((r % 2)) -eq 0 ] && order="filing head"
        for b in $order; do
            local t mean median=""
            local est="$work/target/criterion/reference_events/calibration_hpcc/new/estimates.json"
            rm -f "$est"
            t=$(cd "$work" && DCSIM_SHARED="$kit/shared" "${pin[@]}" "$kit/bench-$b" --bench \
                --noplot 'reference_events/calibration_hpcc$' 2> "$work/bench-$b-$r.log" \
                | awk '/time:/ && !seen { seen = 1; print $4, $5 }' || true)
            if [ -s "$est" ]; then
                median=$(grep -o '"median":{"confidence_interval":{[^}]*},"point_estimate":[0-9.e+-]*' "$est" \
                    | sed 's/.*"point_estimate"://' | awk '{ print $1 / 1e9 }' || true)
            fi
            mean=$(echo "$t" | awk '{ print (($2 == "ms") ? $1 / 1000 : $1) }')
            echo "$r,$b,$mean,$median" >> "$out/bench.csv"
            echo "bench, round $r, $b: mean ${mean:-?} s, median ${median:-?} s"
        done
    done

    # Part 2: thread scaling, every count's outputs compared with the first run's.
    echo "round,threads,shards,wall_s,events,identical" > "$out/scaling.csv"
    echo "args,shards,wall_s,identical" > "$out/extra.csv"
    local first="" part2_rounds=$rounds
    [ "${PART2:-1}" = 1 ] || part2_rounds=0
    for r in $(seq 1 "$part2_rounds"); do
        local n=${#threads[@]} k
        for k in $(seq 0 $((n - 1))); do
            local t=${threads[$(( (k + r - 1) % n ))]}
            local dir="$work/ft-$t"
            local log="$work/ft-$t-$r.log"
            "$kit/dcsim-head" run "$kit/fattree-12ms.toml" --threads "$t" --out "$dir" > "$log" 2>&1
            local sum events
            sum=$(outputs_of "$dir")
            [ -n "$first" ] || first=$sum
            events=$(sed -n 's/.*events: \([0-9]*\),.*/\1/p' "$log" | head -1)
            echo "$r,$t,$(shards_of < "$log"),$(wall_of < "$log"),$events,$([ "$sum" = "$first" ] && echo yes || echo "NO ($sum)")" \
                >> "$out/scaling.csv"
            echo "part 2, round $r, $t threads: $(wall_of < "$log") s"
        done
    done

    # Part 2's extra runs, once each (all optional, and a failed one does not end the
    # check): EXTRA holds `dcsim run` argument sets separated by `;` (e.g. "--threads 2
    # --shards 2;--threads 16 --shards 64"), each compared with the plain runs' outputs;
    # TRACE=1 traces the windows of the largest thread count (`--window-trace`), analysed by
    # scripts/window_trace.py where python3 is, the trace itself kept compressed.
    local IFS_was=$IFS args
    IFS=';'
    # shellcheck disable=SC2206 # split on `;` only
    local extras=()
    [ "${PART2:-1}" = 1 ] && extras=(${EXTRA:-})
    IFS=$IFS_was
    for args in "${extras[@]}"; do
        local dir="$work/extra" log="$work/extra.log"
        # shellcheck disable=SC2086 # the set's words are separate arguments
        if "$kit/dcsim-head" run "$kit/fattree-12ms.toml" $args --out "$dir" > "$log" 2>&1; then
            local sum
            sum=$(outputs_of "$dir")
            echo "$args,$(shards_of < "$log"),$(wall_of < "$log"),$([ "$sum" = "$first" ] && echo yes || echo "NO ($sum)")" \
                >> "$out/extra.csv"
        else
            echo "$args,,,FAILED: $(tail -n 1 "$log" | tr ',' ' ')" >> "$out/extra.csv"
        fi
        echo "extra run ($args): $(wall_of < "$log") s"
    done
    if [ "${TRACE:-0}" = 1 ] && [ "${PART2:-1}" = 1 ]; then
        local most=${threads[0]} t
        for t in "${threads[@]}"; do [ "$t" -gt "$most" ] && most=$t; done
        if "$kit/dcsim-head" run "$kit/fattree-12ms.toml" --threads "$most" --window-trace \
            --out "$work/trace" > "$work/trace.log" 2>&1; then
            grep -E 'wall time|parallel' "$work/trace.log" > "$out/trace-$most-threads.txt" || true
            python3 "$(dirname "$0")/window_trace.py" "$work/trace" >> "$out/trace-$most-threads.txt" 2>&1 || true
            tar -C "$work/trace" -czf "$out/trace-$most-threads.tar.gz" windows.csv barriers.csv
        else
            tail -n 5 "$work/trace.log" > "$out/trace-$most-threads.txt"
        fi
        echo "traced run, $most threads: $(wall_of < "$work/trace.log") s"
    fi
    trap - ERR

    python3 - "$out" >> "$out/summary.md" <<'EOF' || cat "$out/part1.csv" "$out/bench.csv" "$out/scaling.csv" "$out/extra.csv" >> "$out/summary.md"
import csv, statistics, sys
out = sys.argv[1]


def num(text):
    """A figure from a CSV cell, None where the run gave none."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def rounds(path, column):
    """{round: {binary: figure}} from part1.csv or bench.csv, rounds without both left out."""
    by = {}
    for row in csv.DictReader(open(path)):
        v = num(row[column])
        if v:
            by.setdefault(row["round"], {})[row["binary"]] = v
    return {r: v for r, v in by.items() if "filing" in v and "head" in v}


def table(title, by):
    print(f"\n## {title}\n")
    print("| round | filing s | head s | head against filing |\n|---|---|---|---|")
    for r, v in by.items():
        print(f"| {r} | {v['filing']:.3f} | {v['head']:.3f} | {v['filing'] / v['head']:.2f}x |")
    if by:
        ratios = [v["filing"] / v["head"] for v in by.values()]
        print(f"\nmedian {statistics.median(ratios):.2f}x over {len(ratios)} rounds")


table("Part 1: one core, calibration HPCC (`dcsim run`, the simulation's wall time)",
      rounds(f"{out}/part1.csv", "wall_s"))
for column, what in [("mean_s", "criterion's point estimate: the mean of its samples"),
                     ("median_s", "the median of its samples")]:
    by = rounds(f"{out}/bench.csv", column)
    if by:
        table(f"Part 1 by `cargo bench --bench reference` (`calibration_hpcc`, {what})", by)
sc = list(csv.DictReader(open(f"{out}/scaling.csv")))
if not sc:
    sys.exit(0)
walls = {}
for row in sc:
    if num(row["wall_s"]):
        walls.setdefault(int(row["threads"]), []).append(num(row["wall_s"]))
print("\n## Part 2: the 12 ms fat tree (`dcsim run --threads T`, median of the rounds)\n")
print("| threads | wall s | against 1 thread |\n|---|---|---|")
one = statistics.median(walls[1]) if 1 in walls else None
for t in sorted(walls):
    w = statistics.median(walls[t])
    print(f"| {t} | {w:.2f} | {one / w:.2f}x |" if one else f"| {t} | {w:.2f} | |")
print("\noutputs identical at every count:", all(r["identical"] == "yes" for r in sc))
extra = list(csv.DictReader(open(f"{out}/extra.csv")))
if extra:
    print("\n## Part 2, extra runs\n\n| arguments | shards | wall s | outputs identical |\n|---|---|---|---|")
    for r in extra:
        print(f"| `{r['args']}` | {r['shards']} | {r['wall_s']} | {r['identical']} |")
EOF
    rm -rf "$work"
    cat "$out/summary.md"
}

case "${1:-}" in
    kit) shift; kit "$@" ;;
    run) shift; run "$@" ;;
    *) sed -n '2,/^set /{/^#/p}' "$0"; exit 2 ;;
esac
