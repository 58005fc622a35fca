#!/usr/bin/env python3
"""An independent model of the reference ns-3 simulator's TIMELY on the calibration input.

    scripts/ns3_timely_model.py [--shared DIR] [--flows N] [--order reference|dcsim] [--out CSV]

A second implementation of the reference's rules, in plain Python (standard library only),
written from the reference's source (`alibaba-edu/High-Precision-Congestion-Control`:
`rdma-hw.cc`, `qbb-net-device.cc`, `switch-node.cc`, `third.cc`) for one input:
`shared/reference/calibration/small-ws30` with `config-timely.txt` (64 hosts on 4 ToRs and 2
spines, 100 Gb/s host links, 400 Gb/s uplinks, 1 us links; no PFC pause and no drop happen
there, so neither is modelled). With `--order reference` it ends every one of the 1,952 flows
at the reference's nanosecond (`fct-timely.txt`), about 7 minutes on one core: it is an
oracle for what dcsim's `ns3` mode should compute, flow by flow.

What it models, as the reference does:
- serialization times in seconds as an IEEE double, truncated to whole ns by ns-3's 64.64
  conversion; 1 us propagation; store-and-forward FIFO egress ports;
- ECMP by MurmurHash3 of (sip, dip, sport | dport << 16) seeded with the switch's node id,
  next hops in ascending node id;
- the NIC: the ACK queue first, then round robin over queue pairs from the one after the last
  served, finished ones compacted away, a pacing wake-up only when none is pending; a queue
  pair's next send time is its last send plus its packet's time at its rate;
- the receiver: one ACK (60 B) per in-order data packet, carrying the data's timestamp;
- TIMELY (`rdma-hw.cc`, `UpdateRateTimely`): per ACK past the last update's `snd_nxt`, the RTT
  gradient with alpha 0.875 over a minimum RTT of 20 us, T_low 50 us, T_high 500 us, beta 0.8,
  additive increase 100 Mb/s (500 Mb/s hyper increase after 5 rounds), at least 1 Gb/s;
- events at one instant in the order they were scheduled; a flow's queue pair created by two
  events of zero delay after its flow input, so after the events already queued for its
  nanosecond (`--order dcsim` creates it at once instead, before them: dcsim's
  `flow_start = "first"`).

Prints the flows that end at the reference's nanosecond and the slowdown percentiles of
short (< 100 KB) and long (> 1 MB) flows (fct / the reference's standalone FCT, floored at 1;
element floor(n p) of the sorted values, as `dcsim compare-ns3`). `--flows N` takes the first
N flows only (a quick check: the flows that end before the next one starts are exact).
docs/ns3.md, "Comparing with the reference", tells what it found.
"""
import argparse
import csv
import heapq
import math
from collections import deque
from fractions import Fraction
from pathlib import Path

HOSTS, TORS, SPINES = 64, 4, 2
FIRST_TOR, FIRST_SPINE = HOSTS, HOSTS + TORS
HOST_RATE, FABRIC_RATE = 100e9, 400e9
DELAY_NS = 1000
MTU, DATA_HEADER, ACK_SIZE = 1000, 56, 60
# TIMELY's parameters in the reference (rdma-hw.cc and the calibration config).
T_LOW_NS, T_HIGH_NS, MIN_RTT_NS = 50_000, 500_000, 20_000
ALPHA, BETA = 0.875, 0.8
RATE_AI, RATE_HAI, HAI_AFTER = 100e6, 500e6, 5
MIN_RATE = 1e9


def ns3_ns(seconds):
    """Seconds (a double) to whole ns by ns-3's 64.64 fixed point: truncated."""
    whole = math.floor(seconds)
    frac = math.floor((Fraction(seconds) - whole) * (1 << 64))
    return int(whole * 10**9 + (frac * 10**9 >> 64))


def tx_ns(size, rate):
    """A frame's serialization time as the reference computes it."""
    return ns3_ns(size * 8.0 / rate)


def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


def murmur3(words, seed):
    """MurmurHash3 (x86, 32 bits) of 32-bit words."""
    h = seed
    for w in words:
        k = rotl((w * 0xCC9E2D51) & 0xFFFFFFFF, 15)
        h ^= (k * 0x1B873593) & 0xFFFFFFFF
        h = (rotl(h, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF
    h ^= 4 * len(words)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def ip(node):
    """A host's address in the reference (11.0.x.1, x its node id in two bytes)."""
    return 0x0B000001 + ((node // 256) << 16) + ((node % 256) << 8)


def tor_of(host):
    return FIRST_TOR + host // (HOSTS // TORS)


class Events:
    """Events in time order, ties in the order they were scheduled (ns-3's)."""

    def __init__(self):
        self.queue, self.count, self.now = [], 0, 0

    def at(self, t, fn, *args):
        self.count += 1
        heapq.heappush(self.queue, (t, self.count, fn, args))

    def run(self):
        while self.queue:
            self.now, _, fn, args = heapq.heappop(self.queue)
            fn(*args)


class Port:
    """An egress port (a host's NIC or a switch port) towards node `peer`."""

    def __init__(self, net, node, peer, rate):
        self.net, self.node, self.peer, self.rate = net, node, peer, rate
        self.busy, self.fifo = False, deque()

    def transmit(self, pkt):
        ev = self.net.ev
        self.busy = True
        t = tx_ns(pkt["size"], self.rate)
        ev.at(ev.now + t, self.done)
        ev.at(ev.now + t + DELAY_NS, self.net.nodes[self.peer].receive, pkt)

    def done(self):
        self.busy = False
        self.net.nodes[self.node].dequeue(self)


class Switch:
    def __init__(self, net, node):
        self.net, self.id, self.ports = net, node, {}

    def next_hop(self, pkt):
        dst = pkt["dst"]
        if self.id >= FIRST_SPINE:
            return tor_of(dst)
        if tor_of(dst) == self.id:
            return dst
        key = [ip(pkt["src"]), ip(dst), pkt["sport"] | (pkt["dport"] << 16)]
        spines = list(range(FIRST_SPINE, FIRST_SPINE + SPINES))
        return spines[murmur3(key, self.id) % SPINES]

    def receive(self, pkt):
        port = self.ports[self.next_hop(pkt)]
        port.fifo.append(pkt)
        self.dequeue(port)

    def dequeue(self, port):
        if not port.busy and port.fifo:
            port.transmit(port.fifo.popleft())


class QueuePair:
    def __init__(self, flow, src, dst, size, sport, start):
        self.flow, self.src, self.dst, self.size, self.sport = flow, src, dst, size, sport
        self.start, self.snd_nxt, self.snd_una = start, 0, 0
        self.rate = self.current = HOST_RATE
        self.next_avail = 0
        self.last_update, self.last_rtt, self.rtt_diff, self.increases = 0, 0, 0.0, 0

    def finished(self):
        return self.snd_una >= self.size

    def left(self):
        return self.size - self.snd_nxt


class Host:
    def __init__(self, net, node):
        self.net, self.id = net, node
        self.qps, self.rr_last, self.acks, self.wake = [], 0, deque(), None
        self.expected, self.by_key, self.port = {}, {}, None

    def receive(self, pkt):
        if pkt["kind"] == "data":
            key = (pkt["src"], pkt["sport"])
            expected = self.expected.get(key, 0)
            assert pkt["seq"] == expected, "no loss on this input: data arrives in order"
            expected += pkt["payload"]
            self.expected[key] = expected
            self.acks.append(dict(kind="ack", src=self.id, dst=pkt["src"], sport=pkt["dport"],
                                  dport=pkt["sport"], seq=expected, ts=pkt["ts"], size=ACK_SIZE))
            self.dequeue(self.port)
            return
        qp = self.by_key.get((pkt["src"], pkt["dport"]))
        if qp is None:
            return
        qp.snd_una = max(qp.snd_una, pkt["seq"])
        if qp.finished():
            self.net.fct[qp.flow] = self.net.ev.now - qp.start
            del self.by_key[(pkt["src"], pkt["dport"])]
        self.timely(qp, pkt)
        self.dequeue(self.port)

    def timely(self, qp, ack):
        if ack["seq"] <= qp.last_update:
            return
        rtt = self.net.ev.now - ack["ts"]
        if qp.last_update != 0:
            diff = (1 - ALPHA) * qp.rtt_diff + ALPHA * (rtt - qp.last_rtt)
            gradient = diff / MIN_RTT_NS
            if rtt < T_LOW_NS or (rtt <= T_HIGH_NS and gradient <= 0):
                step = RATE_AI if qp.increases < HAI_AFTER else RATE_HAI
                qp.rate = qp.current = min(HOST_RATE, qp.current + step)
                qp.increases += 1
            else:
                factor = (1 - BETA * (1 - T_HIGH_NS / rtt)) if rtt > T_HIGH_NS \
                    else max(0, 1 - BETA * gradient)
                qp.rate = qp.current = max(MIN_RATE, int(qp.current * factor))
                qp.increases = 0
            qp.rtt_diff = diff
        if qp.snd_nxt > qp.last_update:
            qp.last_update, qp.last_rtt = qp.snd_nxt, rtt

    def add(self, qp):
        self.qps.append(qp)
        self.by_key[(qp.dst, qp.sport)] = qp
        qp.next_avail = self.net.ev.now
        self.dequeue(self.port)

    def dequeue(self, port):
        ev = self.net.ev
        if port.busy:
            return
        if self.acks:
            port.transmit(self.acks.popleft())
            return
        n, chosen, first_done = len(self.qps), None, None
        for k in range(1, n + 1):
            i = (k + self.rr_last) % n
            qp = self.qps[i]
            if qp.left() > 0:
                if qp.next_avail <= ev.now:
                    chosen = i
                    break
            elif qp.finished():
                first_done = i if first_done is None else min(first_done, i)
        if first_done is not None:
            # Finished queue pairs are compacted away; the chosen one keeps its place in order.
            kept, at = self.qps[:first_done], first_done
            for i in range(first_done + 1, n):
                if not self.qps[i].finished():
                    if i == chosen:
                        chosen = at
                    kept.append(self.qps[i])
                    at += 1
            self.qps = kept
        if chosen is not None:
            qp = self.qps[chosen]
            self.rr_last = chosen
            payload = min(MTU, qp.left())
            pkt = dict(kind="data", src=self.id, dst=qp.dst, sport=qp.sport, dport=100,
                       seq=qp.snd_nxt, payload=payload, size=payload + DATA_HEADER, ts=ev.now)
            qp.snd_nxt += payload
            port.transmit(pkt)
            qp.next_avail = ev.now + tx_ns(pkt["size"], qp.rate)
            return
        due = [qp.next_avail for qp in self.qps if qp.left() > 0]
        t = min(due) if due else None
        if (self.wake is None or self.wake <= ev.now) and t is not None and t > ev.now:
            self.wake = t
            ev.at(t, self.dequeue, self.port)


class Network:
    def __init__(self):
        self.ev, self.nodes, self.fct = Events(), {}, {}
        for h in range(HOSTS):
            self.nodes[h] = Host(self, h)
        for s in range(FIRST_TOR, FIRST_SPINE + SPINES):
            self.nodes[s] = Switch(self, s)
        for h in range(HOSTS):
            self.nodes[h].port = Port(self, h, tor_of(h), HOST_RATE)
            self.nodes[tor_of(h)].ports[h] = Port(self, tor_of(h), h, HOST_RATE)
        for t in range(FIRST_TOR, FIRST_SPINE):
            for s in range(FIRST_SPINE, FIRST_SPINE + SPINES):
                self.nodes[t].ports[s] = Port(self, t, s, FABRIC_RATE)
                self.nodes[s].ports[t] = Port(self, s, t, FABRIC_RATE)


def read_flows(path):
    """flow.txt: (src, dst, size, sport, start ns) by flow id; sports from 10000 per pair."""
    flows, sports = [], {}
    for line in path.read_text().split("\n")[1:]:
        if not line.strip():
            continue
        f = line.split()
        src, dst, size = int(f[0]), int(f[1]), int(f[4])
        sport = sports.get((src, dst), 10000)
        sports[(src, dst)] = sport + 1
        flows.append((src, dst, size, sport, ns3_ns(float(f[5]))))
    return flows


def read_reference(path):
    """fct-timely.txt: (fct ns, standalone ns) by (src, dst, start ns)."""
    ref = {}
    for line in path.read_text().split("\n"):
        f = line.split()
        if f:
            host = lambda h: (int(h, 16) >> 8) & 0xFFFF
            ref[(host(f[0]), host(f[1]), int(f[5]))] = (int(f[6]), int(f[7]))
    return ref


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=here.parent.parent / "shared")
    ap.add_argument("--flows", type=int, default=None, help="only the first N flows")
    ap.add_argument("--order", choices=["reference", "dcsim"], default="reference")
    ap.add_argument("--out", type=Path, help="write flow_id,fct_ns here")
    a = ap.parse_args()
    cal = a.shared / "reference" / "calibration" / "small-ws30"
    flows = read_flows(cal / "flow.txt")[: a.flows]
    ref = read_reference(cal / "fct-timely.txt")
    net = Network()
    ev = net.ev

    def create(i):
        src, dst, size, sport, start = flows[i]
        net.nodes[src].add(QueuePair(i, src, dst, size, sport, start))

    def flow_input(i):
        # The next flow's input is scheduled when this one runs, as third.cc does.
        if i + 1 < len(flows):
            ev.at(flows[i + 1][4], flow_input, i + 1)
        if a.order == "dcsim":
            create(i)
        else:
            ev.at(ev.now, lambda: ev.at(ev.now, create, i))

    ev.at(flows[0][4], flow_input, 0)
    ev.run()
    exact = 0
    short, long_ = [], []
    for i, (src, dst, size, _, start) in enumerate(flows):
        rfct, standalone = ref[(src, dst, start)]
        fct = net.fct.get(i)
        exact += fct == rfct
        if fct is not None:
            (short if size < 100_000 else long_ if size > 1_000_000 else []).append(
                max(1.0, fct / standalone))
    print(f"{len(net.fct)} of {len(flows)} flows done; {exact} end at the reference's ns")
    for name, v in [("< 100 KB", short), ("> 1 MB", long_)]:
        print(f"{name}: p50 {percentile(v, 0.5):.3f}, p95 {percentile(v, 0.95):.3f}, "
              f"p99 {percentile(v, 0.99):.3f} ({len(v)} flows)")
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["flow_id", "fct_ns"])
            for i in sorted(net.fct):
                w.writerow([i, net.fct[i]])


if __name__ == "__main__":
    main()
