//! Paths through the routed network and the quantities derived from them: the reference's
//! per-pair base RTT and BDP (spec §6.1), the exact ideal FCT of a lone flow, and the extremes
//! over every routed path ([`path_extremes`]) that a front end needs to bound those.
//!
//! Sums and products of times here saturate at `u64::MAX` picoseconds (about 213 days) rather
//! than wrap. A front end that keeps each input below [`crate::units::TIME_LIMIT`] and checks
//! the bounds of [`path_extremes`] never reaches the saturation; the `dcsim` command line
//! does both.

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
/// memoizing each node's remaining delay, serialization time and bottleneck. On a table built
/// by [`RoutingTable::shortest_paths`] with every host on a switch, the walk is once per
/// destination *switch* and the hosts enter through their link classes (delay and rate):
/// O(roots × (nodes + switches with hosts × classes²)); otherwise once per destination host,
/// O(hosts × nodes). Pairs without a route are skipped; with no routed pair the result is
/// zero.
pub fn max_pair_metrics(net: &Network, routes: &RoutingTable, mtu: u64) -> (Duration, u64) {
    match Attached::of(net, routes) {
        Some(at) => max_pair_metrics_grouped(net, routes, mtu, &at),
        None => max_pair_metrics_per_destination(net, routes, mtu),
    }
}

/// [`max_pair_metrics`] one destination at a time: O(hosts × nodes) time, for any table.
fn max_pair_metrics_per_destination(
    net: &Network,
    routes: &RoutingTable,
    mtu: u64,
) -> (Duration, u64) {
    let (mut max_rtt, mut max_bdp) = (Duration::ZERO, 0u64);
    let mut walk = SuffixWalk::new(net.node_count());
    for (di, &dst) in net.hosts().iter().enumerate() {
        walk.reset(dst);
        let first = |x: NodeId| {
            if net.is_host(x) {
                Some(PortNo(0))
            } else {
                routes.next_hops(x, di).first().copied()
            }
        };
        for &src in net.hosts() {
            if src == dst {
                continue;
            }
            if let Some(s) = walk.resolve(net, src, mtu, first) {
                let rtt = s.delay.saturating_mul(2).saturating_add(s.tx);
                max_rtt = max_rtt.max(rtt);
                max_bdp = max_bdp.max(s.bottleneck.bytes_in(rtt));
            }
        }
    }
    (max_rtt, max_bdp)
}

/// The memoized suffixes of one destination's first-next-hop tree (spec §6.1's path).
struct SuffixWalk {
    state: Vec<State>,
    suffix: Vec<Suffix>,
    stack: Vec<(NodeId, PortNo)>,
}

impl SuffixWalk {
    /// The suffix at the destination itself.
    const ZERO: Suffix =
        Suffix { delay: Duration::ZERO, tx: Duration::ZERO, bottleneck: BitsPerSec(u64::MAX) };

    fn new(nodes: usize) -> SuffixWalk {
        SuffixWalk {
            state: vec![State::Unknown; nodes],
            suffix: vec![Self::ZERO; nodes],
            stack: Vec::new(),
        }
    }

    /// Forgets everything; `dst` is the new destination.
    fn reset(&mut self, dst: NodeId) {
        self.state.fill(State::Unknown);
        self.state[dst.idx()] = State::Done;
        self.suffix[dst.idx()] = Self::ZERO;
    }

    /// The suffix from `start`, `first(x)` giving each node's first next hop: walks forward
    /// until a node whose suffix is known (or known to have no route), then fills in the
    /// suffixes backwards. `None` without a route (a missing next hop, or a loop).
    fn resolve(
        &mut self,
        net: &Network,
        start: NodeId,
        mtu: u64,
        first: impl Fn(NodeId) -> Option<PortNo>,
    ) -> Option<Suffix> {
        self.stack.clear();
        let mut x = start;
        let end = loop {
            match self.state[x.idx()] {
                State::Done => break State::Done,
                State::NoRoute | State::OnStack => break State::NoRoute,
                State::Unknown => {}
            }
            let Some(port) = first(x).filter(|p| p.idx() < net.ports(x).len()) else {
                self.state[x.idx()] = State::NoRoute;
                break State::NoRoute;
            };
            self.state[x.idx()] = State::OnStack;
            self.stack.push((x, port));
            x = net.port(x, port).peer;
        };
        while let Some((node, port)) = self.stack.pop() {
            if end == State::NoRoute {
                self.state[node.idx()] = State::NoRoute;
                continue;
            }
            let p = net.port(node, port);
            let next = self.suffix[p.peer.idx()];
            self.suffix[node.idx()] = Suffix {
                delay: next.delay.saturating_add(p.delay),
                tx: next.tx.saturating_add(p.rate.tx_time(mtu)),
                bottleneck: next.bottleneck.min(p.rate),
            };
            self.state[node.idx()] = State::Done;
        }
        (self.state[start.idx()] == State::Done).then(|| self.suffix[start.idx()])
    }
}

/// [`PairMetrics`] of an explicit path.
pub fn metrics_of(hops: &[Hop], mtu: u64) -> PairMetrics {
    let mut delay = Duration::ZERO;
    let mut tx_delay = Duration::ZERO;
    let mut bottleneck = BitsPerSec(u64::MAX);
    for h in hops {
        delay = delay.saturating_add(h.delay);
        tx_delay = tx_delay.saturating_add(h.rate.tx_time(mtu));
        bottleneck = bottleneck.min(h.rate);
    }
    let rtt = delay.saturating_mul(2).saturating_add(tx_delay);
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
    let sum = |ts: &[Duration]| ts.iter().fold(Duration::ZERO, |a, &t| a.saturating_add(t));
    let props: Duration = hops.iter().fold(Duration::ZERO, |a, h| a.saturating_add(h.delay));
    if hops.is_empty() || npkts == 0 {
        return props;
    }
    let t_full: Vec<Duration> = hops.iter().map(|h| ser.tx_time(h.rate, full)).collect();
    let t_last: Vec<Duration> = hops.iter().map(|h| ser.tx_time(h.rate, last)).collect();
    if npkts == 1 {
        return props.saturating_add(sum(&t_last));
    }
    let h = hops.len();
    let mut best = Duration::ZERO;
    for j in 0..h {
        let before = sum(&t_full[..j]);
        let column = t_full[j].saturating_mul(npkts - 1);
        for jp in j..h {
            let mid = sum(&t_full[j + 1..=jp]);
            let tail = sum(&t_last[jp..]);
            let total = before.saturating_add(column).saturating_add(mid).saturating_add(tail);
            if total > best {
                best = total;
            }
        }
    }
    props.saturating_add(best)
}

/// The extremes over every path a packet can take between two distinct hosts (every
/// equal-cost choice of the routing table), each maximized or minimized on its own, so that
/// together they bound any path's quantities from the safe side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PathExtremes {
    /// The most links on a path.
    pub hops: usize,
    /// The longest one-way propagation delay of a path (saturating).
    pub delay: Duration,
    /// The slowest link on any path (`u64::MAX` bit/s when no pair is routed).
    pub slowest: BitsPerSec,
}

/// [`PathExtremes`] of the routed network: one memoized walk of each destination's
/// equal-cost next-hop graph (a DAG, since every next hop is one step closer); like
/// [`max_pair_metrics`], once per destination switch on a table built by
/// [`RoutingTable::shortest_paths`] with every host on a switch, otherwise once per
/// destination host. Pairs without a route are skipped.
pub fn path_extremes(net: &Network, routes: &RoutingTable) -> PathExtremes {
    match Attached::of(net, routes) {
        Some(at) => path_extremes_grouped(net, routes, &at),
        None => path_extremes_per_destination(net, routes),
    }
}

/// [`path_extremes`] one destination host at a time, for any table.
fn path_extremes_per_destination(net: &Network, routes: &RoutingTable) -> PathExtremes {
    const HOST_PORT: [PortNo; 1] = [PortNo(0)];
    let mut out = PathExtremes { hops: 0, delay: Duration::ZERO, slowest: BitsPerSec(u64::MAX) };
    let mut walk = ExtremesWalk::new(net.node_count());
    for (di, &dst) in net.hosts().iter().enumerate() {
        walk.reset(dst);
        let cands =
            |x: NodeId| if net.is_host(x) { &HOST_PORT[..] } else { routes.next_hops(x, di) };
        for &src in net.hosts() {
            if src == dst {
                continue;
            }
            if let Some(a) = walk.resolve(net, src, cands) {
                out.hops = out.hops.max(a.hops);
                out.delay = out.delay.max(a.delay);
                out.slowest = out.slowest.min(a.slowest);
            }
        }
    }
    out
}

/// The extremes over every path from a node to the current destination.
#[derive(Clone, Copy)]
struct Acc {
    routed: bool,
    hops: usize,
    delay: Duration,
    slowest: BitsPerSec,
}

/// The memoized extremes of one destination's equal-cost next-hop graph (a DAG, since every
/// next hop is one step closer), explored depth first.
struct ExtremesWalk {
    state: Vec<State>,
    acc: Vec<Acc>,
    /// (node, next candidate to look at).
    stack: Vec<(NodeId, usize)>,
    /// The parent and port that led to a node.
    via: Vec<Option<(NodeId, PortNo)>>,
}

impl ExtremesWalk {
    const FRESH: Acc =
        Acc { routed: false, hops: 0, delay: Duration::ZERO, slowest: BitsPerSec(u64::MAX) };

    fn new(nodes: usize) -> ExtremesWalk {
        ExtremesWalk {
            state: vec![State::Unknown; nodes],
            acc: vec![Self::FRESH; nodes],
            stack: Vec::new(),
            via: vec![None; nodes],
        }
    }

    /// Forgets everything; `dst` is the new destination.
    fn reset(&mut self, dst: NodeId) {
        self.state.fill(State::Unknown);
        self.state[dst.idx()] = State::Done;
        self.acc[dst.idx()] = Acc { routed: true, ..Self::FRESH };
    }

    /// Folds the finished `child`, reached from `parent` through `port`, into the parent.
    fn fold(&mut self, net: &Network, parent: NodeId, port: PortNo, child: NodeId) {
        if self.state[child.idx()] != State::Done {
            return;
        }
        let p = net.port(parent, port);
        let c = self.acc[child.idx()];
        let a = &mut self.acc[parent.idx()];
        a.routed = true;
        a.hops = a.hops.max(c.hops + 1);
        a.delay = a.delay.max(c.delay.saturating_add(p.delay));
        a.slowest = a.slowest.min(c.slowest.min(p.rate));
    }

    /// The extremes from `start` over every path, `cands(x)` giving each node's next hops
    /// (a host other than the destination is never a transit node). `None` without a route.
    fn resolve<'a>(
        &mut self,
        net: &Network,
        start: NodeId,
        cands: impl Fn(NodeId) -> &'a [PortNo],
    ) -> Option<Acc> {
        if self.state[start.idx()] == State::Unknown {
            self.state[start.idx()] = State::OnStack;
            self.acc[start.idx()] = Self::FRESH;
            self.via[start.idx()] = None;
            self.stack.push((start, 0));
        }
        while let Some(top) = self.stack.last_mut() {
            let (x, i) = *top;
            let cands = cands(x);
            if i < cands.len() {
                top.1 += 1;
                let port = cands[i];
                if port.idx() >= net.ports(x).len() {
                    continue;
                }
                let y = net.port(x, port).peer;
                match self.state[y.idx()] {
                    State::Unknown if net.is_host(y) => {}
                    State::Unknown => {
                        self.state[y.idx()] = State::OnStack;
                        self.acc[y.idx()] = Self::FRESH;
                        self.via[y.idx()] = Some((x, port));
                        self.stack.push((y, 0));
                    }
                    State::Done => self.fold(net, x, port, y),
                    State::OnStack | State::NoRoute => {}
                }
                continue;
            }
            self.stack.pop();
            self.state[x.idx()] =
                if self.acc[x.idx()].routed { State::Done } else { State::NoRoute };
            if let Some((parent, port)) = self.via[x.idx()] {
                self.fold(net, parent, port, x);
            }
        }
        (self.state[start.idx()] == State::Done).then(|| self.acc[start.idx()])
    }
}

/// The hosts hanging from each switch, by the class of their link (delay and rate): what the
/// grouped path algorithms need of them.
struct Attached {
    /// The switches with hosts, ascending.
    switches: Vec<NodeId>,
    /// Per node: its classes, `(class, hosts, hosts whose link is up)` (empty for a node
    /// without hosts).
    classes: Vec<Vec<(LinkClass, u32, u32)>>,
}

/// A host link's delay and rate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct LinkClass {
    delay: Duration,
    rate: BitsPerSec,
}

impl Attached {
    /// The hosts of `net` by switch, when `routes` is grouped and every host hangs from a
    /// switch (else the per-destination algorithms apply).
    fn of(net: &Network, routes: &RoutingTable) -> Option<Attached> {
        if !routes.is_grouped() || routes.host_count() != net.hosts().len() {
            return None;
        }
        let mut classes: Vec<Vec<(LinkClass, u32, u32)>> = vec![Vec::new(); net.node_count()];
        let mut switches = Vec::new();
        for (hi, &h) in net.hosts().iter().enumerate() {
            let p = &net.ports(h)[0];
            if net.is_host(p.peer) {
                return None;
            }
            let c = LinkClass { delay: p.delay, rate: p.rate };
            let up = u32::from(routes.column_of(hi).is_some());
            let at = &mut classes[p.peer.idx()];
            if at.is_empty() {
                switches.push(p.peer);
            }
            match at.iter_mut().find(|e| e.0 == c) {
                Some(e) => {
                    e.1 += 1;
                    e.2 += up;
                }
                None => at.push((c, 1, up)),
            }
        }
        switches.sort_unstable();
        Some(Attached { switches, classes })
    }

    /// The destination classes of column `col`'s root `r`, each with a host whose link is up.
    fn targets(&self, r: NodeId) -> impl Iterator<Item = &(LinkClass, u32, u32)> {
        self.classes[r.idx()].iter().filter(|e| e.2 > 0)
    }

    /// Whether a pair of distinct hosts exists with the source in `src` and the destination
    /// in `dst` (classes of the same switch, the destination's counted among the reachable).
    fn pair_on_one_switch(src: &(LinkClass, u32, u32), dst: &(LinkClass, u32, u32)) -> bool {
        dst.2 > 0 && (src.0 != dst.0 || src.1 >= 2)
    }

    /// The grouped algorithms' common loop. For each column of `routes` whose root `r` has a
    /// reachable host: `reset(walk, r)`, then for each switch with hosts its path to `r`,
    /// `resolve(walk, column, switch)`, and where it has one, `visit(path, source class,
    /// destination class)` for each pair of classes holding a pair of distinct hosts.
    fn for_each_pair<W, P>(
        &self,
        routes: &RoutingTable,
        walk: &mut W,
        reset: impl Fn(&mut W, NodeId),
        mut resolve: impl FnMut(&mut W, usize, NodeId) -> Option<P>,
        mut visit: impl FnMut(&P, &LinkClass, &LinkClass),
    ) {
        for col in 0..routes.column_count() {
            let Some(r) = routes.column(col).root else { continue };
            if self.targets(r).next().is_none() {
                continue;
            }
            reset(walk, r);
            for &src_sw in &self.switches {
                let Some(path) = resolve(walk, col, src_sw) else { continue };
                for s in &self.classes[src_sw.idx()] {
                    for d in self.targets(r) {
                        if src_sw != r || Self::pair_on_one_switch(s, d) {
                            visit(&path, &s.0, &d.0);
                        }
                    }
                }
            }
        }
    }
}

/// [`max_pair_metrics`] on a grouped table: per column (destination switch `r`), the suffix
/// from every switch to `r` along first next hops, then every (source switch, source class,
/// destination class) combination, with the hosts' links added at both ends.
fn max_pair_metrics_grouped(
    net: &Network,
    routes: &RoutingTable,
    mtu: u64,
    at: &Attached,
) -> (Duration, u64) {
    let (mut max_rtt, mut max_bdp) = (Duration::ZERO, 0u64);
    at.for_each_pair(
        routes,
        &mut SuffixWalk::new(net.node_count()),
        SuffixWalk::reset,
        |walk, col, src_sw| {
            let first = |x: NodeId| routes.column_next_hops(x, col).first().copied();
            walk.resolve(net, src_sw, mtu, first)
        },
        |mid, s, d| {
            let delay = s.delay.saturating_add(mid.delay).saturating_add(d.delay);
            let tx = s.rate.tx_time(mtu).saturating_add(mid.tx).saturating_add(d.rate.tx_time(mtu));
            let bottleneck = s.rate.min(mid.bottleneck).min(d.rate);
            let rtt = delay.saturating_mul(2).saturating_add(tx);
            max_rtt = max_rtt.max(rtt);
            max_bdp = max_bdp.max(bottleneck.bytes_in(rtt));
        },
    );
    (max_rtt, max_bdp)
}

/// [`path_extremes`] on a grouped table: per column (destination switch `r`), the extremes of
/// every equal-cost path from every switch to `r`, then the hosts' links at both ends.
fn path_extremes_grouped(net: &Network, routes: &RoutingTable, at: &Attached) -> PathExtremes {
    let mut out = PathExtremes { hops: 0, delay: Duration::ZERO, slowest: BitsPerSec(u64::MAX) };
    at.for_each_pair(
        routes,
        &mut ExtremesWalk::new(net.node_count()),
        ExtremesWalk::reset,
        |walk, col, src_sw| walk.resolve(net, src_sw, |x| routes.column_next_hops(x, col)),
        |a, s, d| {
            out.hops = out.hops.max(a.hops + 2);
            out.delay = out.delay.max(s.delay.saturating_add(a.delay).saturating_add(d.delay));
            out.slowest = out.slowest.min(s.rate.min(a.slowest).min(d.rate));
        },
    );
    out
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

    /// Two hosts under two ToRs joined by a long fast spine and a short slow one: the
    /// extremes come from different paths, and neither is the first-next-hop path alone.
    #[test]
    fn path_extremes_cover_every_equal_cost_path() {
        use crate::network::LinkSpec;
        use crate::network::NodeKind::{Host, Switch};
        let link = |a, b, gbps, us| LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate: BitsPerSec::gbps(gbps),
            delay: Duration::from_us(us),
            loss: 0.0,
        };
        let links = vec![
            link(0, 2, 100, 1),
            link(1, 5, 100, 1),
            link(2, 3, 400, 5),
            link(2, 4, 10, 1),
            link(3, 5, 400, 5),
            link(4, 5, 10, 1),
        ];
        let net = Network::new(vec![Host, Host, Switch, Switch, Switch, Switch], links).unwrap();
        let p = |x: u16| PortNo(x);
        let routes = RoutingTable::from_fn(6, 2, |n, h| match (n.0, h) {
            (2, 0) | (3, 0) | (4, 0) => vec![p(0)],
            (5, 0) => vec![p(1), p(2)],
            (5, 1) => vec![p(0)],
            (3, 1) | (4, 1) => vec![p(1)],
            (2, 1) => vec![p(1), p(2)],
            _ => vec![],
        });
        let e = path_extremes(&net, &routes);
        assert_eq!(
            e,
            PathExtremes { hops: 4, delay: Duration::from_us(12), slowest: BitsPerSec::gbps(10) }
        );
        // The first-next-hop metrics see only the fast spine.
        let m = pair_metrics(&net, &routes, NodeId(0), NodeId(1), 1000).unwrap();
        assert_eq!(m.bottleneck, BitsPerSec::gbps(100));
        // No route at all: nothing to bound.
        let none = RoutingTable::from_fn(6, 2, |_, _| vec![]);
        assert_eq!(path_extremes(&net, &none).hops, 0);
    }

    /// A three-tier network: `leaves` leaves under `spines` spines, `per` hosts per leaf, one
    /// host link class per host from `classes`, fabric links alternating in rate, a core
    /// switch above the spines; links down where `mask` says so.
    fn tiered(
        leaves: u32,
        spines: u32,
        per: u32,
        classes: &[(u64, u64)],
        mask: &[bool],
    ) -> (Network, RoutingTable) {
        use crate::network::{LinkSpec, NodeKind};
        let hosts = leaves * per;
        let link = |a: u32, b: u32, gbps: u64, ns: u64| LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate: BitsPerSec::gbps(gbps),
            delay: Duration::from_ns(ns),
            loss: 0.0,
        };
        let mut links = Vec::new();
        for h in 0..hosts {
            let (g, ns) = classes[h as usize % classes.len()];
            links.push(link(h, hosts + h / per, g, ns));
        }
        let spine0 = hosts + leaves;
        for l in 0..leaves {
            for sp in 0..spines {
                links.push(link(
                    hosts + l,
                    spine0 + sp,
                    if (l + sp) % 2 == 0 { 400 } else { 100 },
                    500 + 100 * u64::from(sp),
                ));
            }
        }
        let core = spine0 + spines;
        for sp in 0..spines {
            links.push(link(spine0 + sp, core, 100, 2000));
        }
        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.extend(std::iter::repeat_n(NodeKind::Switch, (leaves + spines + 1) as usize));
        let net = Network::new(kinds, links).unwrap();
        let up: Vec<bool> =
            (0..net.links().len()).map(|l| mask.get(l).copied().unwrap_or(true)).collect();
        let routes = RoutingTable::shortest_paths(&net, &up);
        (net, routes)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Per destination switch and per destination host, the path quantities agree exactly,
        /// with mixed host link classes, several hosts per class or one, and failed links.
        #[test]
        fn grouped_path_quantities_equal_the_per_destination_walks(
            leaves in 1u32..5,
            spines in 1u32..4,
            per in 1u32..4,
            classes in proptest::collection::vec((proptest::sample::select(vec![25u64, 100, 400]), 100u64..3000), 1..4),
            mask in proptest::collection::vec(proptest::bool::weighted(0.85), 0..40),
            mtu in proptest::sample::select(vec![1000u64, 9000]),
        ) {
            let (net, routes) = tiered(leaves, spines, per, &classes, &mask);
            let at = Attached::of(&net, &routes).expect("every host on a switch");
            proptest::prop_assert_eq!(
                max_pair_metrics_grouped(&net, &routes, mtu, &at),
                max_pair_metrics_per_destination(&net, &routes, mtu)
            );
            proptest::prop_assert_eq!(
                path_extremes_grouped(&net, &routes, &at),
                path_extremes_per_destination(&net, &routes)
            );
        }
    }

    /// Sums beyond 64 bits of picoseconds saturate.
    #[test]
    fn pipeline_time_saturates() {
        let slow = Hop { rate: BitsPerSec(1), ..hop(100, 1000) };
        let t = pipeline_time(&[slow, slow], u64::MAX, 1048, 1048, Serialization::Exact);
        assert_eq!(t, Duration(u64::MAX));
        let far = Hop { delay: Duration(u64::MAX / 2 + 1), ..hop(100, 0) };
        assert_eq!(metrics_of(&[far, far], 1000).rtt, Duration(u64::MAX));
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
