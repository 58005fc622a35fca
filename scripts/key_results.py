#!/usr/bin/env python3
"""Tables for docs/key-results.md from the output of examples/paper/key-results.toml.

    scripts/key_results.py OUT_DIR            (OUT_DIR: the sweep's --out folder)

For every workload x load, the FCT slowdown (dcsim's `slowdown` column: FCT over the ideal FCT
of the flow alone with base headers, the seed's definition) at p50/p95/p99 of three size
groups per scheme variant: short flows (< 200 KB, the page's "short"), long flows (> 1 MB) and
very long flows (> 6 MB, the page's 70% remark), plus the ToR-downlink queue p50/p99 from
qlen_summary.csv. Percentile p of n sorted values is element floor(n * p), as in the
reference analysis. Then the claims of the page, each with the numbers it rests on.
Standard library only.
"""
import csv
import math
import sys
from pathlib import Path

GROUPS = [("< 200 KB", lambda s: s < 200_000), ("> 1 MB", lambda s: s > 1_000_000),
          ("> 6 MB", lambda s: s > 6_000_000)]
PCTS = [0.5, 0.95, 0.99]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(math.floor(len(v) * p)))] if v else float("nan")


def load(out):
    cells = {}
    with open(out / "cells.csv") as f:
        for r in csv.DictReader(f):
            cells[r["cell"]] = r
    queues = {}
    q = out / "qlen_summary.csv"
    if q.exists():
        with open(q) as f:
            for r in csv.DictReader(f):
                queues[r["cell"]] = r
    data = {}
    for name, c in cells.items():
        sizes = []
        with open(out / "cells" / name / "fct.csv") as f:
            for r in csv.DictReader(f):
                sizes.append((int(r["size_bytes"]), float(r["slowdown"])))
        stats = {}
        for g, keep in GROUPS:
            v = [sd for s, sd in sizes if keep(s)]
            stats[g] = (len(v), [pct(v, p) for p in PCTS])
        key = (c["workload"], float(c["load"]), c["variant"])
        data[key] = (stats, queues.get(name))
    return data


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    data = load(out)
    workloads = sorted({k[0] for k in data}, key=lambda w: (w != "websearch", w))
    loads = sorted({k[1] for k in data})
    variants = []
    for k in data:
        if k[2] not in variants:
            variants.append(k[2])
    for w in workloads:
        for ld in loads:
            print(f"\n#### {w}, {int(ld * 100)}% load\n")
            head = "| variant | " + " | ".join(
                f"{g} (n={data[(w, ld, variants[0])][0][g][0]}) p50 / p95 / p99" for g, _ in GROUPS)
            print(head + " | ToR-down queue p50 / p99 (KB) |")
            print("|---" * (len(GROUPS) + 2) + "|")
            for v in variants:
                stats, q = data[(w, ld, v)]
                cols = [" / ".join(f"{x:.2f}" for x in stats[g][1]) for g, _ in GROUPS]
                qs = (f"{int(q['p50_bytes']) / 1e3:.1f} / {int(q['p99_bytes']) / 1e3:.1f}"
                      if q else "-")
                print(f"| {v} | " + " | ".join(cols) + f" | {qs} |")
    # The claims, as ratios: HPCC-INT (eta .99) against the best of the others.
    others = [v for v in variants if not v.startswith("hpcc")]

    def get(w, ld, v, g, i):
        return data[(w, ld, v)][0][g][1][i]

    print("\n#### Short flows (< 200 KB): HPCC-INT / best other scheme\n")
    print("| workload | load | p50 | p95 | p99 |")
    print("|---|---|---|---|---|")
    for w in workloads:
        for ld in loads:
            r = [get(w, ld, "hpcc-int", "< 200 KB", i) /
                 min(get(w, ld, o, "< 200 KB", i) for o in others) for i in range(3)]
            print(f"| {w} | {int(ld * 100)}% | " + " | ".join(f"{x:.2f}" for x in r) + " |")
    print("\n#### Long flows: HPCC-INT and HPCC-PINT / median of the other schemes (p50)\n")
    print("| workload | load | INT > 1 MB | PINT > 1 MB | INT > 6 MB | PINT > 6 MB |")
    print("|---|---|---|---|---|---|")
    for w in workloads:
        for ld in loads:
            row = []
            for g in ["> 1 MB", "> 6 MB"]:
                med = sorted(get(w, ld, o, g, 0) for o in others)[len(others) // 2]
                row += [get(w, ld, "hpcc-int", g, 0) / med, get(w, ld, "hpcc-pint", g, 0) / med]
            print(f"| {w} | {int(ld * 100)}% | " + " | ".join(f"{x:.2f}" for x in row) + " |")
    if "hpcc-int-eta0.95" in variants:
        print("\n#### Effect of eta: slowdown at eta 0.99 / at eta 0.95 (p50, p99)\n")
        print("| workload | load | INT < 200 KB | INT > 1 MB | PINT < 200 KB | PINT > 1 MB |")
        print("|---|---|---|---|---|---|")
        for w in workloads:
            for ld in loads:
                row = []
                for a, b in [("hpcc-int", "hpcc-int-eta0.95"), ("hpcc-pint", "hpcc-pint-eta0.95")]:
                    for g in ["< 200 KB", "> 1 MB"]:
                        row.append(" / ".join(
                            f"{get(w, ld, a, g, i) / get(w, ld, b, g, i):.3f}" for i in (0, 2)))
                print(f"| {w} | {int(ld * 100)}% | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
