#!/usr/bin/env python3
"""Times several dcsim binaries on one scenario, alternated, and compares each with the first.

    scripts/abtime.py SCENARIO ROUNDS BASE OTHER... [--cpu N] [-- RUN ARGS...]

Each round runs every binary once (`BINARY run SCENARIO --out TMP RUN ARGS...`, pinned to one
CPU with `taskset`, CPU 1 unless `--cpu` says otherwise). The order rotates from round to round
and every other round is reversed, so that no binary always follows the same one. For each
binary the script prints the median, mean and least wall time of its runs, and its times
divided by BASE's of the same round: their median, mean and geometric mean. A ratio below 1
means faster than BASE.

Why paired rounds: on a shared VM the same run's time can change by a quarter from one run to
the next (docs/performance.md, "One core, fifteenth session"), while two runs a second apart
see much the same machine. The spread of the paired ratios says how far to trust a difference:
with ratios spread by +-0.15, a hundred rounds put the mean within about +-0.015.

Outputs go to a temporary folder per binary, so that the runs' own outputs can be compared
afterwards with `cmp`. Python 3 standard library only.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        i = args.index("--")
        args, extra = args[:i], args[i + 1:]
    cpu = "1"
    if "--cpu" in args:
        i = args.index("--cpu")
        cpu = args[i + 1]
        del args[i:i + 2]
    if len(args) < 4:
        sys.exit(__doc__)
    scenario, rounds, bins = args[0], int(args[1]), args[2:]
    out = tempfile.mkdtemp(prefix="abtime-")
    dirs = {b: os.path.join(out, f"{i}-{os.path.basename(b)}") for i, b in enumerate(bins)}

    def run(b):
        began = time.perf_counter()
        subprocess.run(["taskset", "-c", cpu, b, "run", scenario, "--out", dirs[b], *extra],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - began

    times = {b: [] for b in bins}
    for r in range(rounds):
        k = r % len(bins)
        order = bins[k:] + bins[:k]
        if r % 2:
            order.reverse()
        for b in order:
            times[b].append(run(b))
    base = times[bins[0]]
    for b in bins:
        ratios = [x / y for x, y in zip(times[b], base)]
        print(f"{b}: median {statistics.median(times[b]):.3f} s, mean {statistics.mean(times[b]):.3f} s, "
              f"least {min(times[b]):.3f} s; against {os.path.basename(bins[0])}: median "
              f"{statistics.median(ratios):.3f}, mean {statistics.mean(ratios):.3f}, geometric mean "
              f"{statistics.geometric_mean(ratios):.3f}")
    print(f"outputs under {out}")


if __name__ == "__main__":
    main()
