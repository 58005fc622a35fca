#!/usr/bin/env python3
"""Analyses the window trace of a run on several shards (`dcsim run ... --window-trace`).

    scripts/window_trace.py DIR [--threads T]
                                      (DIR holds the run's windows.csv and barriers.csv)

Prints where a parallel run's time went: the threads' time in shards and at the barriers,
the barrier's own latency, the cost per event, the balance the engine's claiming reached (by
events and by time), and the balance other claiming rules would have reached with the same
shard times, replayed window by window (docs/performance.md, "A window trace"), among them
`dcsim run --rebalance 16` and `64` (shards dealt to threads by measured time). The replays
assume that a shard's window takes as long on whichever thread runs it, which is optimistic
for rules that move shards between cores. `--threads T` replays the claiming rules for T
threads instead of the run's own count: a trace of `--threads 1 --shards 32` taken on any
machine then gives sixteen threads' balance (with one core's shard times, so without the
differences between cores' speeds that a many-core machine adds). Python 3 standard library
only.
"""
import collections
import csv
import heapq
import sys
from pathlib import Path



# The engine's claiming replayed with fixed owners, as with `--rebalance 0` (the default
# deals the owners out every 16 windows: see the `--rebalance` rules).
FIXED = "engine's claiming with fixed owners (--rebalance 0: own first, shard i on thread i % threads)"

def load(directory):
    """The trace's shard windows, grouped by window, and its barrier waits."""
    windows = collections.defaultdict(dict)
    runs = []
    with open(Path(directory) / "windows.csv", newline="") as f:
        for r in csv.DictReader(f):
            rec = (
                r["window_end_ns"],
                int(r["shard"]),
                int(r["thread"]),
                int(r["start_ns"]),
                int(r["took_ns"]),
                int(r["events"]),
                int(r["crossings_in"]),
            )
            runs.append(rec)
            windows[rec[0]][rec[1]] = rec
    barriers = collections.defaultdict(dict)
    with open(Path(directory) / "barriers.csv", newline="") as f:
        for r in csv.DictReader(f):
            barriers[r["window_end_ns"]][int(r["thread"])] = (int(r["arrived_ns"]), int(r["left_ns"]))
    return windows, runs, barriers


def list_schedule(order, took, threads):
    """The busiest thread's time when `order`'s shards go, one by one, to the first thread free."""
    heap = [(0, t) for t in range(threads)]
    for s in order:
        load, t = heapq.heappop(heap)
        heapq.heappush(heap, (load + took[s], t))
    return max(load for load, _ in heap)


def own_first(owner, took, threads, n, key=None):
    """The engine's claiming: each thread takes its own shards, then any other not yet taken,
    in index order from the shard after its own index on; or, given `key` (the previous
    window's times or events), both heaviest first by it. Returns the busiest thread's time."""
    if key is None:
        own = [[s for s in range(n) if owner[s] == t] for t in range(threads)]
        rest = [[(t + i) % n for i in range(1, n + 1) if owner[(t + i) % n] != t]
                for t in range(threads)]
    else:
        by_key = sorted(range(n), key=lambda s: (-key[s], s))
        own = [[s for s in by_key if owner[s] == t] for t in range(threads)]
        rest = [[s for s in by_key if owner[s] != t] for t in range(threads)]
    taken, clock = set(), [0] * threads
    free = [(0, t) for t in range(threads)]
    while free:
        now, t = heapq.heappop(free)
        nxt = next((s for s in own[t] + rest[t] if s not in taken), None)
        if nxt is None:
            clock[t] = now
            continue
        taken.add(nxt)
        heapq.heappush(free, (now + took[nxt], t))
    return max(clock)


def deal(load, threads, n, now=None):
    """Owners by load, longest first, each shard to the least-loaded thread (of tied threads,
    its owner in `now` if given and among them, as `dcsim run --rebalance` deals)."""
    total, owner = [0] * threads, [0] * n
    for s in sorted(range(n), key=lambda s: (-load[s], s)):
        t = min(range(threads), key=lambda t: (total[t], now is not None and t != now[s], t))
        total[t] += load[s]
        owner[s] = t
    return owner


def busiest(owner, load, threads):
    """The largest load of a thread under `owner`."""
    total = [0] * threads
    for s, t in enumerate(owner):
        total[t] += load[s]
    return max(total)


class Rebalance:
    """`dcsim run --rebalance EVERY`: before window k > 0, each shard's decaying sum of times
    takes in window k - 1's; on every EVERY-th window the shards are dealt out again, and the
    new owners kept if they lower the busiest thread's load by 10% or more."""

    def __init__(self, every, threads, n):
        self.every, self.threads = every, threads
        self.owner, self.avg, self.moves = [s % threads for s in range(n)], [0] * n, 0

    def before(self, k, prev_took):
        if k == 0:
            return
        self.avg = [a - a // self.every + t for a, t in zip(self.avg, prev_took)]
        if k % self.every == 0:
            dealt = deal(self.avg, self.threads, len(self.avg), self.owner)
            if busiest(dealt, self.avg, self.threads) * 100 <= busiest(self.owner, self.avg, self.threads) * 90:
                self.moves += sum(1 for a, b in zip(self.owner, dealt) if a != b)
                self.owner = dealt


def main():
    args = sys.argv[1:]
    replay = None
    if len(args) == 3 and args[1] == "--threads" and args[2].isdigit() and int(args[2]) > 0:
        replay = int(args[2])
        args = args[:1]
    if len(args) != 1:
        sys.exit(__doc__)
    windows, runs, barriers = load(args[0])
    if not runs:
        sys.exit("no windows: the run had one shard")
    n = max(r[1] for r in runs) + 1
    threads = max(max(r[2] for r in runs) + 1, max((t for b in barriers.values() for t in b), default=0) + 1)
    ran = threads
    events = sum(r[5] for r in runs)
    busy = sum(r[4] for r in runs)
    steals = sum(1 for r in runs if r[1] % threads != r[2])
    print(f"{threads} threads, {n} shards, {len(windows)} windows, {events} events, "
          f"{sum(r[6] for r in runs)} crossings taken in")
    print(f"time in shards: {busy / 1e9:.3f} thread-s, {busy / max(events, 1):.1f} ns per event; "
          f"shards run by another thread than i % threads (their first owner; with rebalancing, "
          f"the default, also by their dealt owner): {100 * steals / len(runs):.1f}%")
    if barriers:
        waits = sum(left - arr for b in barriers.values() for arr, left in b.values())
        latency = sorted(max(l for _, l in b.values()) - max(a for a, _ in b.values())
                         for b in barriers.values() if len(b) == threads)
        if latency:
            print(f"barrier waits: {waits / 1e9:.3f} thread-s; last arrival to last departure: median "
                  f"{latency[len(latency) // 2]} ns, 99th percentile {latency[int(0.99 * (len(latency) - 1))]} ns, "
                  f"{sum(latency) / 1e9:.3f} s in all")

        ends = sorted(windows, key=float)
        gaps = sorted(
            min(r[3] for r in windows[b].values() if r[2] == t) - barriers[a][t][1]
            for a, b in zip(ends, ends[1:])
            for t in {r[2] for r in windows[b].values()}
            if t in barriers.get(a, {})
        )
        if gaps:
            print(f"from a barrier to the thread's first shard: median {gaps[len(gaps) // 2]} ns, 99th "
                  f"percentile {gaps[int(0.99 * (len(gaps) - 1))]} ns, {sum(gaps) / threads / 1e9:.3f} s per thread")

    # What a move costs: a shard's window on another thread than its previous window's (its
    # state then comes from another core's caches) against the others, windows of 200 events
    # or more.
    moved_cost = {True: [0, 0, 0], False: [0, 0, 0]}
    last = {}
    for w in (windows[k] for k in sorted(windows, key=float)):
        for s, r in sorted(w.items()):
            moved = s in last and last[s] != r[2]
            last[s] = r[2]
            if r[5] >= 200:
                c = moved_cost[moved]
                c[0], c[1], c[2] = c[0] + r[4], c[1] + r[5], c[2] + 1
    if moved_cost[True][1] and moved_cost[False][1]:
        m, k = moved_cost[True], moved_cost[False]
        print(f"a shard's window on another thread than its previous one: {m[2]} windows, "
              f"{m[0] / m[1]:.1f} ns per event, against {k[0] / k[1]:.1f} ns for the other "
              f"{k[2]} (windows of 200 events or more)")

    if replay is not None:
        threads = replay
        print(f"claiming rules replayed for {threads} threads (the run had {ran})")
    ordered = [windows[k] for k in sorted(windows, key=float) if len(windows[k]) == n]
    rules = collections.OrderedDict((name, 0) for name in [
        "engine's claiming, by events",
        FIXED,
        "shard i on thread i % threads only",
        "owners dealt by time every 16 windows, then own first",
        "--rebalance 16",
        "--rebalance 64",
        "--rebalance 16, own and others heaviest first (previous window's times)",
        "--rebalance 16, own and others heaviest first (previous window's events)",
        "first thread free, heaviest in the previous window first (events)",
        "first thread free, heaviest in the previous window first (time)",
        "first thread free, heaviest first (this window's times: an oracle)",
    ])
    static = [s % threads for s in range(n)]
    owner, avg = list(static), [0] * n
    rebalance = {every: Rebalance(every, threads, n) for every in (16, 64)}
    prev_ev, prev_took = [0] * n, [0] * n
    actual = 0
    for i, w in enumerate(ordered):
        took = [w[s][4] for s in range(n)]
        ev = [w[s][5] for s in range(n)]
        per_thread = collections.Counter()
        for s in range(n):
            per_thread[w[s][2]] += ev[s]
        rules["engine's claiming, by events"] += max(per_thread.values())
        actual += max(per_thread_time(w, n).values())
        rules[FIXED] += own_first(static, took, threads, n)
        rules["shard i on thread i % threads only"] += max(sum(took[s] for s in range(t, n, threads)) for t in range(threads))
        rules["owners dealt by time every 16 windows, then own first"] += own_first(owner, took, threads, n)
        for every, rb in rebalance.items():
            rb.before(i, prev_took)
            rules[f"--rebalance {every}"] += own_first(rb.owner, took, threads, n)
        rb16 = rebalance[16].owner
        rules["--rebalance 16, own and others heaviest first (previous window's times)"] += (
            own_first(rb16, took, threads, n, prev_took))
        rules["--rebalance 16, own and others heaviest first (previous window's events)"] += (
            own_first(rb16, took, threads, n, prev_ev))
        rules["first thread free, heaviest in the previous window first (events)"] += list_schedule(
            sorted(range(n), key=lambda s: (-prev_ev[s], s)), took, threads)
        rules["first thread free, heaviest in the previous window first (time)"] += list_schedule(
            sorted(range(n), key=lambda s: (-prev_took[s], s)), took, threads)
        rules["first thread free, heaviest first (this window's times: an oracle)"] += list_schedule(
            sorted(range(n), key=lambda s: -took[s]), took, threads)
        avg = [a - a // 16 + t for a, t in zip(avg, took)]
        if i % 16 == 15:
            owner = deal(avg, threads, n)
        prev_ev, prev_took = ev, took
    total_took = sum(sum(w[s][4] for s in range(n)) for w in ordered)
    if threads == ran:
        print(f"windows' busiest thread in shards, summed: {actual / 1e9:.3f} s (mean thread "
              f"{total_took / threads / 1e9:.3f} s)")
    print("bounds over the busiest thread of each window (x one thread's work; "
          f"{threads} is perfect balance):")
    for name, crit in rules.items():
        if name == "engine's claiming, by events" and threads != ran:
            continue  # what the run's own threads did: not a replay
        work = events if name.endswith("by events") else total_took
        extra = ""
        if name.startswith("--rebalance") and "," not in name:
            rb = rebalance[int(name.split()[1])]
            extra = f" ({rb.moves / max(len(ordered), 1):.2f} shard moves per window)"
        print(f"  {name}: {work / max(crit, 1):.2f}x{extra}")


def per_thread_time(w, n):
    """Each thread's time in shards in window `w`."""
    c = collections.Counter()
    for s in range(n):
        c[w[s][2]] += w[s][4]
    return c


if __name__ == "__main__":
    main()
