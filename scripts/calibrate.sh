#!/usr/bin/env bash
# Runs the reference calibration (../shared/reference/calibration/small-ws30) through dcsim for
# every scheme and compares FCT slowdowns with the reference's outputs.
#
#   scripts/calibrate.sh [OUT_DIR] [SCHEME...]      (default: target/calibration, all schemes)
#
# For each scheme: `dcsim import-ns3` converts the reference config, `dcsim run` simulates it,
# `dcsim compare-ns3` prints the p50/p95/p99 table against the reference FCT file.
set -euo pipefail
cd "$(dirname "$0")/.."
cal=../shared/reference/calibration/small-ws30
out=${1:-target/calibration}
shift || true
schemes=("$@")
[ ${#schemes[@]} -gt 0 ] || schemes=(hpcc hpcc-pint dcqcn dcqcn-w timely timely-w dctcp)
[ -d "$cal" ] || { echo "no calibration data at $cal" >&2; exit 2; }
cargo build --release --quiet -p dcsim-cli
dcsim=target/release/dcsim
mkdir -p "$out"
for s in "${schemes[@]}"; do
    echo "=== $s"
    "$dcsim" import-ns3 "$cal/config-$s.txt" --out "$out/$s.toml" 2>/dev/null
    "$dcsim" run "$out/$s.toml" --out "$out/$s" | grep -E "wall time"
    "$dcsim" compare-ns3 "$cal/fct-$s.txt" "$out/$s/fct.csv" --csv "$out/$s/compare.csv"
done
