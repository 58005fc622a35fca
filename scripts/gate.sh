#!/usr/bin/env bash
# Behaviour gate for refactors that must not change results: runs a dcsim binary on the
# calibration inputs of all seven schemes (imported from the reference configs) and on the
# 12 ms paper fat tree (1 and 4 threads), writing each run's fct.csv and counters.csv under
# OUT. Compare the fct.csv and counters.csv of two OUT folders with `cmp` (a newer binary may
# write more files, e.g. the pfc.csv an import asks for).
#
#   scripts/gate.sh BINARY OUT [SHARED]     (SHARED defaults to ../shared beside the checkout)
set -euo pipefail
bin=$(realpath "$1"); out=$2; shared=${3:-$(dirname "$0")/../../shared}
cal=$(realpath "$shared/reference/calibration/small-ws30")
mkdir -p "$out"
out=$(realpath "$out")
for scheme in hpcc dcqcn timely dctcp hpcc-pint dcqcn-w timely-w; do
    "$bin" import-ns3 "$cal/config-$scheme.txt" --out "$out/$scheme.toml" > /dev/null
    # Keep exact serialization (imports write the reference's "ns3" timing since 2026-11-23)
    # and the run's ECMP seeding (imports write the reference's since 2026-11-29), so that
    # binaries from before and after those changes run the same model.
    sed -i -e 's/^serialization = "ns3"/serialization = "exact"/' \
        -e 's/^ecmp_seed = "node"/ecmp_seed = "run"/' \
        -e 's/^flow_start = "after-queued"/flow_start = "first"/' "$out/$scheme.toml"
    "$bin" run "$out/$scheme.toml" --out "$out/cal-$scheme" > "$out/cal-$scheme.log"
    rm -f "$out/cal-$scheme"/*.png "$out/cal-$scheme"/*.svg
done
root=$(dirname "$0")/..
for t in 1 4; do
    "$bin" run "$root/examples/perf/fattree-12ms.toml" --threads "$t" --out "$out/fattree-t$t" > "$out/fattree-t$t.log"
done
grep -h "wall" "$out"/*.log || true
