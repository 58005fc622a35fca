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
#                                              EXTRA and TRACE: below)
#
# KIT must be a path the device run carries (an ignored folder of the checkout, e.g.
# `target/kit`, named in `carry`; the whole kit is about 28 MiB). On the device, e.g.
# (carry ["target/kit"], a timeout of about 500 s: on the 16-core Xeon of earlier leases
# this takes about four minutes, half of it the bench's ten runs of each binary):
#   BENCH_ROUNDS=1 TRACE=1 EXTRA="--threads 2 --shards 2;--threads 16 --shards 64" \
#       scripts/device-check.sh run target/kit "$OUT" 2 1 2 4 8 16
#
# Part 1 times `dcsim run` on the HPCC calibration import (one thread, pinned to one core,
# the two binaries alternated; each binary imports the reference config itself, with exact
# serialization and no PFC log, as `cargo bench --bench reference`'s `calibration_hpcc`
# does). Part 2 runs `examples/perf/fattree-12ms.toml` at each thread count (all cores free to
# the run), ROUNDS times, the counts in rotated order, and checks that every run's fct.csv
# and counters.csv are identical. Wall times are the runs' own summaries (the simulation only,
# as the bench).
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
    cp "$cal/config-hpcc.txt" "$cal/topology.txt" "$cal/flow.txt" "$kit/cal/"
    cp "$cal"/config-*.txt "$cal/topology.txt" "$cal/flow.txt" \
        "$kit/shared/reference/calibration/small-ws30/"
    cp "$root/examples/perf/fattree-12ms.toml" "$kit/"
    du -sh "$kit"
}

# The run's own wall time (seconds) from a `dcsim run` summary on stdin.
wall_of() {
    sed -n 's/.*wall time: \([0-9.]*\) s.*/\1/p' | head -1
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
    # Part 1 on one core other than the first (interrupts), where `taskset` is there.
    local pin=()
    if command -v taskset > /dev/null; then
        pin=(taskset -c "$(( $(nproc) > 2 ? 2 : 0 ))")
    fi
    {
        echo "# issue 14 on $(uname -n): $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
        echo "head $(cat "$kit/head-commit"), filing $FILING; $(date -u +%FT%TZ)"
    } > "$out/summary.md"

    # Part 1: one core, the filing commit against HEAD, alternated.
    echo "round,binary,wall_s,frames" > "$out/part1.csv"
    for b in head filing; do
        "$kit/dcsim-$b" import-ns3 "$kit/cal/config-hpcc.txt" --out "$work/$b.toml" > /dev/null 2>&1
        sed -i -e 's/^serialization = "ns3"/serialization = "exact"/' \
            -e 's/^pfc_log = true/pfc_log = false/' "$work/$b.toml"
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
        done
    done

    # Part 1 by the issue's own measure, if asked for (each round takes about ten runs of
    # each binary): `reference_events/calibration_hpcc`, criterion's median.
    echo "round,binary,median_s" > "$out/bench.csv"
    for r in $(seq 1 "${BENCH_ROUNDS:-0}"); do
        local order="head filing"
        [ $((r % 2)) -eq 0 ] && order="filing head"
        for b in $order; do
            local t
            t=$(cd "$work" && DCSIM_SHARED="$kit/shared" "${pin[@]}" "$kit/bench-$b" --bench \
                --noplot 'reference_events/calibration_hpcc$' 2> /dev/null \
                | awk '/time:/ && !seen { seen = 1; print $4, $5 }' || true)
            echo "$r,$b,$(echo "$t" | awk '{ print ($2 == "ms") ? $1 / 1000 : $1 }')" >> "$out/bench.csv"
        done
    done

    # Part 2: thread scaling, every count's outputs compared with the first run's.
    echo "round,threads,wall_s,events,identical" > "$out/scaling.csv"
    local first=""
    for r in $(seq 1 "$rounds"); do
        local n=${#threads[@]} k
        for k in $(seq 0 $((n - 1))); do
            local t=${threads[$(( (k + r - 1) % n ))]}
            local dir="$work/ft-$t"
            local log="$work/ft-$t-$r.log"
            "$kit/dcsim-head" run "$kit/fattree-12ms.toml" --threads "$t" --out "$dir" > "$log" 2>&1
            local sum
            sum=$(cat "$dir/fct.csv" "$dir/counters.csv" | md5sum | cut -c1-12)
            [ -n "$first" ] || first=$sum
            local events
            events=$(sed -n 's/.*events: \([0-9]*\),.*/\1/p' "$log" | head -1)
            echo "$r,$t,$(wall_of < "$log"),$events,$([ "$sum" = "$first" ] && echo yes || echo "NO ($sum)")" \
                >> "$out/scaling.csv"
        done
    done

    # Part 2's extra runs, once each (all optional): EXTRA holds `dcsim run` argument sets
    # separated by `;` (e.g. "--threads 2 --shards 2;--threads 16 --shards 64"), each
    # compared with the plain runs' outputs; TRACE=1 traces the windows of the largest thread
    # count (`--window-trace`), analysed by scripts/window_trace.py where python3 is, the
    # trace itself kept compressed.
    echo "args,wall_s,identical" > "$out/extra.csv"
    local IFS_was=$IFS args
    IFS=';'
    local extras=(${EXTRA:-})
    IFS=$IFS_was
    for args in "${extras[@]}"; do
        local dir="$work/extra" log="$work/extra.log"
        # shellcheck disable=SC2086 # the set's words are separate arguments
        "$kit/dcsim-head" run "$kit/fattree-12ms.toml" $args --out "$dir" > "$log" 2>&1
        local sum
        sum=$(cat "$dir/fct.csv" "$dir/counters.csv" | md5sum | cut -c1-12)
        echo "$args,$(wall_of < "$log"),$([ "$sum" = "$first" ] && echo yes || echo "NO ($sum)")" \
            >> "$out/extra.csv"
    done
    if [ "${TRACE:-0}" = 1 ]; then
        local most=${threads[0]} t
        for t in "${threads[@]}"; do [ "$t" -gt "$most" ] && most=$t; done
        "$kit/dcsim-head" run "$kit/fattree-12ms.toml" --threads "$most" --window-trace \
            --out "$work/trace" > "$work/trace.log" 2>&1
        grep -E 'wall time|parallel' "$work/trace.log" > "$out/trace-$most-threads.txt" || true
        python3 "$(dirname "$0")/window_trace.py" "$work/trace" >> "$out/trace-$most-threads.txt" 2>&1 || true
        tar -C "$work/trace" -czf "$out/trace-$most-threads.tar.gz" windows.csv barriers.csv
    fi

    python3 - "$out" >> "$out/summary.md" <<'EOF' || cat "$out/part1.csv" "$out/scaling.csv" >> "$out/summary.md"
import csv, statistics, sys
out = sys.argv[1]
p1 = list(csv.DictReader(open(f"{out}/part1.csv")))
by = {}
for row in p1:
    by.setdefault(row["round"], {})[row["binary"]] = float(row["wall_s"])
ratios = [v["filing"] / v["head"] for v in by.values() if "filing" in v and "head" in v]
print("\n## Part 1: one core, calibration HPCC (`dcsim run`, the simulation's wall time)\n")
print("| round | filing s | head s | head against filing |\n|---|---|---|---|")
for r, v in by.items():
    print(f"| {r} | {v['filing']:.3f} | {v['head']:.3f} | {v['filing'] / v['head']:.2f}x |")
if ratios:
    print(f"\nmedian {statistics.median(ratios):.2f}x over {len(ratios)} rounds")
bench = list(csv.DictReader(open(f"{out}/bench.csv")))
if bench:
    bb = {}
    for row in bench:
        bb.setdefault(row["round"], {})[row["binary"]] = float(row["median_s"])
    print("\n## Part 1 by `cargo bench --bench reference` (`calibration_hpcc`, criterion's median)\n")
    print("| round | filing s | head s | head against filing |\n|---|---|---|---|")
    for r, v in bb.items():
        if "filing" in v and "head" in v:
            print(f"| {r} | {v['filing']:.3f} | {v['head']:.3f} | {v['filing'] / v['head']:.2f}x |")
sc = list(csv.DictReader(open(f"{out}/scaling.csv")))
walls = {}
for row in sc:
    walls.setdefault(int(row["threads"]), []).append(float(row["wall_s"]))
print("\n## Part 2: the 12 ms fat tree (`dcsim run --threads T`, median of the rounds)\n")
print("| threads | wall s | against 1 thread |\n|---|---|---|")
one = statistics.median(walls[1]) if 1 in walls else None
for t in sorted(walls):
    w = statistics.median(walls[t])
    print(f"| {t} | {w:.2f} | {one / w:.2f}x |" if one else f"| {t} | {w:.2f} | |")
print("\noutputs identical at every count:", all(r["identical"] == "yes" for r in sc))
extra = list(csv.DictReader(open(f"{out}/extra.csv")))
if extra:
    print("\n## Part 2, extra runs\n\n| arguments | wall s | outputs identical |\n|---|---|---|")
    for r in extra:
        print(f"| `{r['args']}` | {float(r['wall_s']):.2f} | {r['identical']} |")
EOF
    rm -rf "$work"
    cat "$out/summary.md"
}

case "${1:-}" in
    kit) shift; kit "$@" ;;
    run) shift; run "$@" ;;
    *) sed -n '2,/^set /{/^#/p}' "$0"; exit 2 ;;
esac
