#!/usr/bin/env python3
"""Mean goodput (size * 8 / fct) of flows larger than a threshold, per sweep cell.

    scripts/long_flow_goodput.py SWEEP_OUT_DIR [--min-bytes 1000000]
                                 [--start-from MS] [--start-until MS]

Reads SWEEP_OUT_DIR/cells/*/fct.csv (dcsim's FCT format) and prints, per cell, the number of
long flows, their mean goodput in Gb/s and their p50/p95 slowdown. --start-from/--start-until
keep only flows that started in that window (ms), e.g. to leave out the warm-up and the
flows that run on after the arrivals stop (the reference's fct_analysis.py filters by start
time the same way). Flows that did not complete (unfinished.csv) are counted and left out. Used for the PINT paper's
long-flow goodput comparison (HPCC-PINT vs HPCC-INT). Python 3 standard library only.
"""
import argparse
import csv
import glob
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--min-bytes", type=int, default=1_000_000)
    ap.add_argument("--start-from", type=float, default=0.0, help="ms")
    ap.add_argument("--start-until", type=float, default=float("inf"), help="ms")
    a = ap.parse_args()
    lo, hi = a.start_from * 1e6, a.start_until * 1e6
    print(f"{'cell':40s} {'flows':>6s} {'goodput Gb/s':>13s} {'p50':>7s} {'p95':>7s}")
    for d in sorted(glob.glob(os.path.join(a.out, "cells", "*"))):
        with open(os.path.join(d, "fct.csv")) as f:
            rows = [r for r in csv.DictReader(f)
                    if int(r["size_bytes"]) > a.min_bytes and lo <= float(r["start_ns"]) < hi]
        unfinished = 0
        path = os.path.join(d, "unfinished.csv")
        if os.path.exists(path):
            with open(path) as f:
                unfinished = sum(1 for r in csv.DictReader(f)
                                 if int(r["size_bytes"]) > a.min_bytes
                                 and lo <= float(r["start_ns"]) < hi)
        if unfinished:
            print(f"{os.path.basename(d)}: {unfinished} long flows did not complete (left out)")
        if not rows:
            continue
        gp = [int(r["size_bytes"]) * 8 / float(r["fct_ns"]) for r in rows]
        sd = sorted(max(1.0, float(r["fct_ns"]) / float(r["ideal_fct_ns"])) for r in rows)
        pick = lambda p: sd[min(len(sd) - 1, int(len(sd) * p))]
        print(f"{os.path.basename(d):40s} {len(rows):6d} {sum(gp) / len(gp):13.2f} "
              f"{pick(0.5):7.3f} {pick(0.95):7.3f}")


if __name__ == "__main__":
    main()
