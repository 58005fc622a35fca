//! Paths through the routed network and the quantities derived from them: the reference's
//! per-pair base RTT and BDP (spec §6.1), and the exact ideal FCT of a lone flow.

use crate::config::Serialization;
use crate::ids::{NodeId, PortNo};
use crate::network::{Network, RoutingTable};
use crate::units::{BitsPerSec, Duration};

/// One directed hop of a path: leaving `node` through `port`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Hop {
    /// The transmitting node.
    pub node: NodeId,
    /// Its egress port.
    pub port: PortNo,
    /// Link rate.
    pub rate: BitsPerSec,
    /// Propagation delay.
    pub delay: Duration,
}

/// Walks from host `src` to host `dst`, choosing among equal-cost next hops with `choose`
/// (given the node and its candidate ports, returns an index into the candidates).
/// Returns `None` if some node on the way has no route or the walk exceeds the node count.
pub fn walk(
    net: &Network,
    routes: &RoutingTable,
    src: NodeId,
    dst: NodeId,
    mut choose: impl FnMut(NodeId, &[PortNo]) -> usize,
) -> Option<Vec<Hop>> {
    let dst_idx = net.host_index(dst)?;
    let mut hops = Vec::new();
    let mut node = src;
    while node != dst {
        if hops.len() > net.node_count() {
            return None;
        }
        let port = if net.is_host(node) {
            PortNo(0)
        } else {
            let cands = routes.next_hops(node, dst_idx);
            if cands.is_empty() {
                return None;
            }
            cands[choose(node, cands) % cands.len()]
        };
        let p = net.port(node, port);
        hops.push(Hop { node, port, rate: p.rate, delay: p.delay });
        node = p.peer;
    }
    Some(hops)
}

/// Base RTT and BDP of a host pair as the reference computes them (spec §6.1), on the path
/// that always takes the first (lowest neighbour id) next hop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PairMetrics {
    /// Sum of one-way propagation delays.
    pub delay: Duration,
    /// Sum over hops of the serialization time of one full payload (`mtu` bytes, no headers).
    pub tx_delay: Duration,
    /// Bottleneck (minimum) link rate.
    pub bottleneck: BitsPerSec,
    /// `2 * delay + tx_delay`.
    pub rtt: Duration,
    /// `rtt * bottleneck / 8`, in bytes (rounded down).
    pub bdp: u64,
}

/// Computes [`PairMetrics`] for `src -> dst` with `mtu` payload bytes, or `None` without a route.
pub fn pair_metrics(
    net: &Network,
    routes: &RoutingTable,
    src: NodeId,
    dst: NodeId,
    mtu: u64,
) -> Option<PairMetrics> {
    let hops = walk(net, routes, src, dst, |_, _| 0)?;
    Some(metrics_of(&hops, mtu))
}

/// Partial path metrics from a node to the current destination.
#[derive(Clone, Copy)]
struct Suffix {
    delay: Duration,
    tx: Duration,
    bottleneck: BitsPerSec,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Unknown,
    OnStack,
    Done,
    NoRoute,
}

/// The maximum base RTT and maximum BDP over all ordered pairs of distinct hosts (the
/// reference's `maxRtt` / `maxBdp`, spec §6.1): the maximum of [`pair_metrics`] over the pairs,
/// with the same integer arithmetic (the two maxima may come from different pairs).
///
/// Rather than walking every pair's path, it walks each destination's first-next-hop tree once,
/// memoizing each node's remaining delay, serialization time and bottleneck: O(hosts × nodes).
/// Pairs without a route are skipped; with no routed pair the result is zero.
pub fn max_pair_metrics(net: &Network, routes: &RoutingTable, mtu: u64) -> (Duration, u64) {
    let n = net.node_count();
    let hosts = net.hosts();
    let (mut max_rtt, mut max_bdp) = (Duration::ZERO, 0u64);
    let mut state = vec![State::Unknown; n];
    let mut suffix =
        vec![
            Suffix { delay: Duration::ZERO, tx: Duration::ZERO, bottleneck: BitsPerSec(u64::MAX) };
            n
        ];
    let mut stack: Vec<(NodeId, PortNo)> = Vec::new();
    for (di, &dst) in hosts.iter().enumerate() {
        state.fill(State::Unknown);
        state[dst.idx()] = State::Done;
        suffix[dst.idx()] =
            Suffix { delay: Duration::ZERO, tx: Duration::ZERO, bottleneck: BitsPerSec(u64::MAX) };
        for &src in hosts {
            if src == dst {
                continue;
            }
            // Walk forward until a node whose suffix is known (or known to have no route).
            stack.clear();
            let mut x = src;
            let end = loop {
                match state[x.idx()] {
                    State::Done => break State::Done,
                    State::NoRoute | State::OnStack => break State::NoRoute,
                    State::Unknown => {}
                }
                let port = if net.is_host(x) {
                    Some(PortNo(0))
                } else {
                    routes.next_hops(x, di).first().copied()
                };
                let Some(port) = port.filter(|p| p.idx() < net.ports(x).len()) else {
                    state[x.idx()] = State::NoRoute;
                    break State::NoRoute;
                };
                state[x.idx()] = State::OnStack;
                stack.push((x, port));
                x = net.port(x, port).peer;
            };
            // Unwind, filling in suffixes from the known end backwards.
            while let Some((node, port)) = stack.pop() {
                if end == State::NoRoute {
                    state[node.idx()] = State::NoRoute;
                    continue;
                }
                let p = net.port(node, port);
                let next = suffix[p.peer.idx()];
                suffix[node.idx()] = Suffix {
                    delay: next.delay + p.delay,
                    tx: next.tx + p.rate.tx_time(mtu),
                    bottleneck: next.bottleneck.min(p.rate),
                };
                state[node.idx()] = State::Done;
            }
            if state[src.idx()] == State::Done {
                let s = suffix[src.idx()];
                let rtt = s.delay * 2 + s.tx;
                max_rtt = max_rtt.max(rtt);
                max_bdp = max_bdp.max(s.bottleneck.bytes_in(rtt));
            }
        }
    }
    (max_rtt, max_bdp)
}

/// [`PairMetrics`] of an explicit path.
pub fn metrics_of(hops: &[Hop], mtu: u64) -> PairMetrics {
    let mut delay = Duration::ZERO;
    let mut tx_delay = Duration::ZERO;
    let mut bottleneck = BitsPerSec(u64::MAX);
    for h in hops {
        delay += h.delay;
        tx_delay += h.rate.tx_time(mtu);
        bottleneck = bottleneck.min(h.rate);
    }
    let rtt = delay * 2 + tx_delay;
    let bdp = bottleneck.bytes_in(rtt);
    PairMetrics { delay, tx_delay, bottleneck, rtt, bdp }
}

/// The exact completion time of a flow of `npkts` packets, all of `full` wire bytes except the
/// last of `last` wire bytes, sent back to back through the store-and-forward `hops` of an
/// otherwise idle network: the time from the first bit leaving the source until the last
/// packet is fully received at the destination. Serialization times follow `ser`.
///
/// In a tandem of store-and-forward links the last departure is the longest monotone lattice
/// path through the (packet, hop) grid of service times. With equal packets except the last,
/// the longest path takes packet 1 through hops `..j`, all but the last packet on hop `j`,
/// packet `n-1` on to hop `j'`, then the last packet from `j'` to the end.
pub fn pipeline_time(
    hops: &[Hop],
    npkts: u64,
    full: u64,
    last: u64,
    ser: Serialization,
) -> Duration {
    let props: Duration = hops.iter().fold(Duration::ZERO, |a, h| a + h.delay);
    if hops.is_empty() || npkts == 0 {
        return props;
    }
    let t_full: Vec<Duration> = hops.iter().map(|h| ser.tx_time(h.rate, full)).collect();
    let t_last: Vec<Duration> = hops.iter().map(|h| ser.tx_time(h.rate, last)).collect();
    if npkts == 1 {
        return props + t_last.iter().fold(Duration::ZERO, |a, &t| a + t);
    }
    let h = hops.len();
    let mut best = Duration::ZERO;
    for j in 0..h {
        let before: Duration = t_full[..j].iter().fold(Duration::ZERO, |a, &t| a + t);
        let column = t_full[j] * (npkts - 1);
        for jp in j..h {
            let mid: Duration = t_full[j + 1..=jp].iter().fold(Duration::ZERO, |a, &t| a + t);
            let tail: Duration = t_last[jp..].iter().fold(Duration::ZERO, |a, &t| a + t);
            let total = before + column + mid + tail;
            if total > best {
                best = total;
            }
        }
    }
    props + best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(gbps: u64, ns: u64) -> Hop {
        Hop {
            node: NodeId(0),
            port: PortNo(0),
            rate: BitsPerSec::gbps(gbps),
            delay: Duration::from_ns(ns),
        }
    }

    /// Brute-force tandem recursion D(i,j) = max(D(i-1,j), D(i,j-1)) + s(i,j).
    fn brute(hops: &[Hop], n: u64, full: u64, last: u64) -> Duration {
        let h = hops.len();
        let mut d = vec![vec![0u64; h + 1]; n as usize + 1];
        for i in 1..=n as usize {
            for j in 1..=h {
                let sz = if i as u64 == n { last } else { full };
                let s = hops[j - 1].rate.tx_time(sz).as_ps();
                d[i][j] = d[i - 1][j].max(d[i][j - 1]) + s;
            }
        }
        let props: u64 = hops.iter().map(|x| x.delay.as_ps()).sum();
        Duration(d[n as usize][h] + props)
    }

    #[test]
    fn pipeline_matches_tandem_recursion() {
        let paths = [
            vec![hop(100, 1000)],
            vec![hop(100, 1000), hop(100, 1000)],
            vec![hop(100, 1000), hop(400, 1000), hop(400, 1000), hop(100, 1000)],
            vec![hop(400, 10), hop(25, 1000), hop(100, 7)],
        ];
        for p in &paths {
            for (n, full, last) in [(1, 1048, 49), (2, 1048, 1048), (7, 1048, 60), (40, 1048, 1000)]
            {
                assert_eq!(
                    pipeline_time(p, n, full, last, Serialization::Exact),
                    brute(p, n, full, last),
                    "{p:?} {n}"
                );
            }
        }
    }
}
