#!/usr/bin/env bash
# Runs the reference calibrations through dcsim and compares FCT slowdowns with the
# reference's outputs: ../shared/reference/calibration/small-ws30 (seven schemes, 30% load) and
# small-ws50-dcqcn (DCQCN, 50% load), in one or both serialization modes.
#
#   scripts/calibrate.sh [OUT_DIR] [SCHEME...]      (default: target/calibration, all schemes)
#   MODES="exact ns3" scripts/calibrate.sh ...      (default: both modes)
#
# For each scheme and mode: `dcsim import-ns3` converts the reference config (it writes
# serialization = "ns3"; the exact runs switch it back), `dcsim run` simulates it, and
# `dcsim compare-ns3` prints the p50/p95/p99 table against the reference FCT file. The scheme
# `dcqcn-ws50` is the 50%-load calibration.
set -euo pipefail
cd "$(dirname "$0")/.."
root=../shared/reference/calibration
out=${1:-target/calibration}
shift || true
schemes=("$@")
[ ${#schemes[@]} -gt 0 ] || schemes=(hpcc hpcc-pint dcqcn dcqcn-w timely timely-w dctcp dcqcn-ws50)
modes=${MODES:-exact ns3}
[ -d "$root/small-ws30" ] || { echo "no calibration data at $root" >&2; exit 2; }
cargo build --release --quiet -p dcsim-cli
dcsim=target/release/dcsim
mkdir -p "$out"
for s in "${schemes[@]}"; do
    if [ "$s" = dcqcn-ws50 ]; then
        config=$root/small-ws50-dcqcn/config.txt ref=$root/small-ws50-dcqcn/fct.txt
    else
        config=$root/small-ws30/config-$s.txt ref=$root/small-ws30/fct-$s.txt
    fi
    for m in $modes; do
        echo "=== $s ($m)"
        "$dcsim" import-ns3 "$config" --out "$out/$s-$m.toml" 2>/dev/null
        sed -i "s/^serialization = \"ns3\"/serialization = \"$m\"/" "$out/$s-$m.toml"
        "$dcsim" run "$out/$s-$m.toml" --out "$out/$s-$m" | grep -E "wall time"
        "$dcsim" compare-ns3 "$ref" "$out/$s-$m/fct.csv" --csv "$out/$s-$m/compare.csv"
    done
done
