#!/usr/bin/env bash
# Thread pinning and rebalancing on a lent many-core machine, as one prepared command (the
# twenty-seventh session's second device call, docs/performance.md):
#
#   scripts/device-pin.sh KIT OUT [R16] [R2]
#
# KIT holds `dcsim-pin` (a stripped release build of the commit measured), the scenarios
# `fattree-12ms.toml` and `fattree-2ms.toml` (copies of examples/perf/), carried to the machine
# (e.g. as `target/pinkit`, made here with `cargo build --release -p dcsim-cli && mkdir -p
# target/pinkit && strip -o target/pinkit/dcsim-pin target/release/dcsim && cp
# examples/perf/fattree-12ms.toml examples/perf/fattree-2ms.toml target/pinkit/`). Writes OUT/pin.csv (round, case, wall s, a digest of fct.csv and
# counters.csv: every run's must agree) and OUT/pin-lines.txt (each run's pinned CPUs and
# barrier waits). R16 rounds (default 3) of the 12 ms fat tree on 16 threads: plain,
# `--pin-threads`, `--pin-threads --rebalance 16`, alternated (`--rebalance 0` is the plain
# case's setting: the default deals every 16 windows since); R2 rounds (default 3) of the
# 2 ms fat tree on one thread (on CPU 2), on two threads plain and pinned, and on two threads
# confined by `taskset` to CPUs 2+3, 2+10 and 2+9 (a pair of host SMT siblings would run
# slower than the others). About two minutes on the Xeon guest.
set -uo pipefail
kit=$1 out=$2 r16=${3:-3} r2=${4:-3}
b=$kit/dcsim-pin w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$out"
: > "$out/pin-lines.txt"
wall() { sed -n 's/.*wall time: \([0-9.]*\) s.*/\1/p' "$w/log" | head -1; }
sum() { cat "$w/o/fct.csv" "$w/o/counters.csv" | md5sum | cut -c1-12; }
echo "round,case,wall_s,outputs" > "$out/pin.csv"
# go ROUND LABEL CPUS SCENARIO ARGS...   (CPUS: a taskset list, or - for none)
go() {
    local r=$1 label=$2 cpus=$3 sc=$4; shift 4
    local pre=(); [ "$cpus" = - ] || pre=(taskset -c "$cpus")
    rm -rf "$w/o"; ${pre[@]+"${pre[@]}"} "$b" run "$kit/$sc" --out "$w/o" "$@" > "$w/log" 2>&1
    echo "$r,$label,$(wall),$(sum)" | tee -a "$out/pin.csv"
    { echo "$r $label:"; grep -o "threads pinned to CPUs [0-9,]*\|barrier waits.*" "$w/log"; } >> "$out/pin-lines.txt"
}
[ "$r16" -gt 0 ] && go 0 one - fattree-12ms.toml --threads 1
for r in $(seq 1 "$r16"); do
    go $r plain16 - fattree-12ms.toml --threads 16 --rebalance 0
    go $r rebal16 - fattree-12ms.toml --threads 16
    go $r pin16 - fattree-12ms.toml --threads 16 --pin-threads --rebalance 0
    go $r pinrebal16 - fattree-12ms.toml --threads 16 --pin-threads --rebalance 16
done
for r in $(seq 1 "$r2"); do
    go $r one-cpu2 2 fattree-2ms.toml --threads 1
    go $r two - fattree-2ms.toml --threads 2 --rebalance 0
    go $r two-pin - fattree-2ms.toml --threads 2 --pin-threads --rebalance 0
    go $r two-cpus2+3 2,3 fattree-2ms.toml --threads 2 --rebalance 0
    go $r two-cpus2+10 2,10 fattree-2ms.toml --threads 2 --rebalance 0
    go $r two-cpus2+9 2,9 fattree-2ms.toml --threads 2 --rebalance 0
done
