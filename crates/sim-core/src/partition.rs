//! Assigning nodes to shards for the parallel engine.
//!
//! Any assignment gives the same results; a good one keeps shards balanced (work is roughly
//! proportional to hosts and their traffic) and cuts only links with a long propagation delay,
//! since the shortest delay of a cut link bounds the window the shards run ahead in
//! (the lookahead).

use crate::config::{FlowSpec, SimConfig, Transport};
use crate::ids::NodeId;
use crate::network::{Network, NodeKind, RoutingTable};
use crate::units::Duration;

/// How a parallel run's nodes are split into shards (`dcsim run --partition`). Results never
/// depend on it; speed does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Partitioner {
    /// [`Partition::by_load`] on [`traffic_load`]: racks and switches balanced by the frames
    /// the listed flows will make them handle.
    Load,
    /// [`Partition::by_load_and_cut`] on [`traffic`]: balanced as `Load`, and cutting little
    /// of the traffic (the frames copied between shards at the ends of windows). The default
    /// since 2026-11-25: on two threads 8–9% faster than `Load` on the 12 ms and k = 16 fat
    /// trees, the same on the calibration (docs/performance.md).
    #[default]
    Cut,
    /// [`Partition::by_rack`]: racks balanced by hosts, other switches dealt round robin.
    Rack,
    /// [`Partition::round_robin`]: node `i` in shard `i % parts` (every link cut; for tests).
    RoundRobin,
}

impl Partitioner {
    /// The names [`Partitioner::from_name`] accepts, in the order of the enum.
    pub const NAMES: [&'static str; 4] = ["load", "cut", "rack", "round-robin"];

    /// The partitioner called `name`.
    pub fn from_name(name: &str) -> Option<Partitioner> {
        match name {
            "load" => Some(Partitioner::Load),
            "cut" => Some(Partitioner::Cut),
            "rack" => Some(Partitioner::Rack),
            "round-robin" => Some(Partitioner::RoundRobin),
            _ => None,
        }
    }

    /// This partitioner's name.
    pub fn name(self) -> &'static str {
        match self {
            Partitioner::Load => "load",
            Partitioner::Cut => "cut",
            Partitioner::Rack => "rack",
            Partitioner::RoundRobin => "round-robin",
        }
    }

    /// `parts` shards of `net` for running `flows` under `cfg`.
    pub fn partition(
        self,
        net: &Network,
        routes: &RoutingTable,
        flows: &[FlowSpec],
        cfg: &SimConfig,
        parts: usize,
    ) -> Partition {
        match self {
            Partitioner::Load => {
                Partition::by_load(net, &traffic_load(net, routes, flows, cfg), parts)
            }
            Partitioner::Cut => {
                Partition::by_load_and_cut(net, &traffic(net, routes, flows, cfg), parts)
            }
            Partitioner::Rack => Partition::by_rack(net, parts),
            Partitioner::RoundRobin => Partition::round_robin(net.node_count(), parts),
        }
    }
}

/// The frames the listed flows will put on each node and each link: what
/// [`traffic_load`] counts per node, and per link the frames that cross it (both directions
/// together), by link index ([`Network::links`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// By node id: as [`traffic_load`].
    pub nodes: Vec<u64>,
    /// By link index: the data frames and acknowledgements that cross the link.
    pub links: Vec<u64>,
}

/// The events each node can expect from the listed `flows` (indexed by node id): every data
/// frame of a flow and one acknowledgement per data frame, each counted once at every node it
/// arrives at, and once more at the host that sends it (its transmission-done). Frames follow
/// the very path the run will give them: the flows' ECMP keys and the switches' hash seeds are
/// those of set-up, so in a run without link failures each flow's load lands exactly where
/// its packets will go. Retransmissions, switch transmission-done events (only where frames
/// wait), timers and application traffic (unknown before the run) are left out: this is an
/// estimate to balance shards by, not a count.
///
/// Flows without a route are skipped (set-up rejects them).
pub fn traffic_load(
    net: &Network,
    routes: &RoutingTable,
    flows: &[FlowSpec],
    cfg: &SimConfig,
) -> Vec<u64> {
    traffic(net, routes, flows, cfg).nodes
}

/// [`traffic_load`] with the frames of each link beside those of each node: the links'
/// counts are what a partition cuts ([`Partition::cut`]).
pub fn traffic(
    net: &Network,
    routes: &RoutingTable,
    flows: &[FlowSpec],
    cfg: &SimConfig,
) -> Traffic {
    use crate::sim::{ecmp_seed, murmur3_32, FlowKeys};
    let mut load = vec![0u64; net.node_count()];
    let mut links = vec![0u64; net.links().len()];
    let mut keys = FlowKeys::default();
    let seeds: Vec<u32> = (0..net.node_count()).map(|i| ecmp_seed(i, cfg)).collect();
    let mtu = u64::from(cfg.nic.mtu).max(1);
    for (pos, f) in flows.iter().enumerate() {
        let (fwd, rev) = keys.next(f);
        let seg = match cfg.transport_of(pos) {
            Transport::Roce => mtu,
            Transport::Tcp(g) => {
                cfg.tcp_groups.get(g as usize).map_or(mtu, |g| u64::from(g.tcp.mss).max(1))
            }
        };
        let frames = f.size.div_ceil(seg).max(1);
        for (src, dst, key) in [(f.src, f.dst, fwd), (f.dst, f.src, rev)] {
            if !net.is_host(src) || !net.is_host(dst) {
                continue;
            }
            let hash = |node: NodeId, c: &[crate::ids::PortNo]| {
                (murmur3_32(&key, seeds[node.idx()]) as usize) % c.len()
            };
            let Some(hops) = crate::paths::walk(net, routes, src, dst, hash) else { continue };
            load[src.idx()] = load[src.idx()].saturating_add(frames);
            for h in &hops {
                let l = net.port(h.node, h.port).link.idx();
                links[l] = links[l].saturating_add(frames);
            }
            for node in hops.iter().skip(1).map(|h| h.node).chain([dst]) {
                load[node.idx()] = load[node.idx()].saturating_add(frames);
            }
        }
    }
    Traffic { nodes: load, links }
}

/// Which shard each node belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    assignment: Vec<u32>,
    shards: usize,
}

impl Partition {
    /// Every node in one shard (a sequential run).
    pub fn single(nodes: usize) -> Partition {
        Partition { assignment: vec![0; nodes], shards: 1 }
    }

    /// An explicit assignment: `assignment[node]` is the node's shard. Shards are renumbered
    /// densely in order of first appearance; empty shards disappear.
    pub fn from_assignment(assignment: &[u32]) -> Partition {
        let mut map = std::collections::HashMap::new();
        let mut dense = Vec::with_capacity(assignment.len());
        for &a in assignment {
            let next = map.len() as u32;
            dense.push(*map.entry(a).or_insert(next));
        }
        Partition { shards: map.len().max(1), assignment: dense }
    }

    /// Racks (a switch with its hosts) spread over `parts` shards, balancing hosts; switches
    /// without hosts are dealt round robin. Only switch-to-switch links are cut, so the
    /// lookahead is the fabric's link delay.
    pub fn by_rack(net: &Network, parts: usize) -> Partition {
        let parts = parts.max(1);
        let n = net.node_count();
        let mut assignment = vec![u32::MAX; n];
        let mut load = vec![0usize; parts];
        // Racks: switches with at least one host, in node order.
        let mut spine_rr = 0;
        for i in 0..n {
            let node = NodeId::from_idx(i);
            if net.kind(node) != NodeKind::Switch {
                continue;
            }
            let hosts: Vec<NodeId> =
                net.ports(node).iter().map(|p| p.peer).filter(|&p| net.is_host(p)).collect();
            let shard = if hosts.is_empty() {
                let s = spine_rr % parts;
                spine_rr += 1;
                s
            } else {
                let s = (0..parts).min_by_key(|&s| (load[s], s)).expect("parts > 0");
                load[s] += hosts.len() + 1;
                s
            };
            assignment[i] = shard as u32;
            for h in hosts {
                assignment[h.idx()] = shard as u32;
            }
        }
        // Hosts attached to nothing (not possible in a validated network) go to shard 0.
        for a in &mut assignment {
            if *a == u32::MAX {
                *a = 0;
            }
        }
        Partition::from_assignment(&assignment)
    }

    /// Racks (a switch with its hosts) and switches without hosts spread over `parts` shards
    /// to balance `load` (per node, e.g. [`traffic_load`]): the heaviest first, each to the
    /// least loaded shard (longest processing time first; ties go to the earlier unit and the
    /// lower shard). A unit weighs its nodes' load plus one per node, so that idle racks still
    /// spread. As with [`Partition::by_rack`], hosts stay with their switch, so only
    /// switch-to-switch links are cut: with fewer racks than shards, or one rack carrying more
    /// than a shard's share, the balance is bounded by the rack.
    ///
    /// # Panics
    /// If `load` does not have one entry per node.
    pub fn by_load(net: &Network, load: &[u64], parts: usize) -> Partition {
        let units = Units::new(net, load);
        let assign = units.longest_first(parts.max(1));
        units.to_partition(&assign)
    }

    /// Balanced as [`Partition::by_load`], and cutting little traffic: a frame that crosses
    /// from one shard to another is copied out of the one and into the other at the end of a
    /// window, which costs about as much as an event (on one core, measured on the 12 ms fat
    /// tree: 90–140 ns a crossing, 100 ns an event).
    ///
    /// Two starting points are refined and the better kept: `by_load`'s, and one grown shard
    /// by shard from the heaviest unit left, each time taking the unit with the most traffic
    /// to the shard so far (graph growing: on a fat tree it gathers a pod's racks and
    /// aggregation switches). Refinement moves one unit at a time to the shard it exchanges
    /// the most traffic with, while no shard weighs more than the bound
    /// (1/32 above an even share of the total, or `by_load`'s heaviest shard if that is
    /// more); moves that cut the same traffic and
    /// leave the target lighter than the source was are taken too, and a unit of a shard
    /// above the bound moves wherever it fits best. The result cuts at most the traffic
    /// `by_load` cuts ([`Partition::cut`]), with no shard above the bound.
    ///
    /// # Panics
    /// If `traffic` does not have one node load per node and one link load per link.
    pub fn by_load_and_cut(net: &Network, traffic: &Traffic, parts: usize) -> Partition {
        assert_eq!(traffic.links.len(), net.links().len(), "one load per link");
        let units = Units::new(net, &traffic.nodes);
        let parts = parts.max(1);
        let lpt = units.longest_first(parts);
        if units.list.len() <= 1 || parts == 1 {
            return units.to_partition(&lpt);
        }
        let adj = units.graph(net, &traffic.links);
        let bound = Self::balance_bound(&units.weights(&lpt, parts));
        let mut best: Option<(u64, Vec<u32>)> = None;
        for mut assign in [lpt, units.grown(&adj, parts, bound)] {
            units.refine(&mut assign, &adj, parts, bound);
            if units.weights(&assign, parts).iter().any(|&w| w > bound) {
                continue;
            }
            let cut = Units::cut(&adj, &assign);
            if best.as_ref().is_none_or(|(c, _)| cut < *c) {
                best = Some((cut, assign));
            }
        }
        let (_, assign) = best.expect("by_load's start stays within its own bound");
        units.to_partition(&assign)
    }

    /// The heaviest a shard may be in [`Partition::by_load_and_cut`], given the shard weights
    /// of [`Partition::by_load`]: 1/32 above an even share of their total, or the heaviest of
    /// those shards if that is more.
    fn balance_bound(weights: &[u64]) -> u64 {
        let total = weights.iter().fold(0u64, |a, &w| a.saturating_add(w));
        let even = total.div_ceil(weights.len().max(1) as u64);
        let max = weights.iter().copied().max().unwrap_or(0);
        even.saturating_add(even / 32).max(max)
    }

    /// The frames of `links` (per link, e.g. [`Traffic::links`]) on links between two shards.
    ///
    /// # Panics
    /// If `links` does not have one entry per link of `net`.
    pub fn cut(&self, net: &Network, links: &[u64]) -> u64 {
        assert_eq!(links.len(), net.links().len(), "one load per link");
        net.links()
            .iter()
            .zip(links)
            .filter(|(l, _)| self.assignment[l.a.idx()] != self.assignment[l.b.idx()])
            .fold(0, |a, (_, &w)| a.saturating_add(w))
    }

    /// Node `i` in shard `i % parts`: a deliberately poor but valid partition (every link is
    /// cut), useful to test that results do not depend on the partition.
    pub fn round_robin(nodes: usize, parts: usize) -> Partition {
        let parts = parts.max(1) as u32;
        Partition::from_assignment(&(0..nodes as u32).map(|i| i % parts).collect::<Vec<_>>())
    }

    /// Shard of every node.
    pub fn assignment(&self) -> &[u32] {
        &self.assignment
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.shards
    }

    /// The smallest propagation delay of a link between two shards, or `None` when no link
    /// joins two (one shard, or shards of which some hold only nodes without links).
    pub fn lookahead(&self, net: &Network) -> Option<Duration> {
        net.links()
            .iter()
            .filter(|l| self.assignment[l.a.idx()] != self.assignment[l.b.idx()])
            .map(|l| l.delay)
            .min()
    }

    /// This partition with its lookahead, or a single shard (and the reason) if a link between
    /// two shards has no propagation delay, or if no link joins two of several shards (some
    /// hold only nodes without links, e.g. an unused switch of a topology file: a window
    /// would have no length, and the run would never advance).
    pub(crate) fn with_lookahead(self, net: &Network) -> (Partition, Duration, Option<String>) {
        match self.lookahead(net) {
            None if self.shards <= 1 => (self, Duration::ZERO, None),
            None => (
                Partition::single(net.node_count()),
                Duration::ZERO,
                Some(
                    "no link joins two of the shards, so they have no lookahead; running as one \
                     shard"
                        .to_string(),
                ),
            ),
            Some(d) if d > Duration::ZERO => (self, d, None),
            Some(_) => (
                Partition::single(net.node_count()),
                Duration::ZERO,
                Some(
                    "a link between two shards has zero propagation delay, so shards cannot run \
                     ahead of each other; running as one shard"
                        .to_string(),
                ),
            ),
        }
    }
}

/// Longest processing time first: item `i` of `load` in decreasing load (ties: the earlier
/// item), each to the part with the least load so far; of tied parts, its part in `now` if
/// given and among them, else the lowest. Returns each item's part. Deals a partition's units
/// to shards, and a parallel run's shards to threads (`parallel::Owners`).
pub(crate) fn longest_first(load: &[u64], parts: usize, now: Option<&[usize]>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..load.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(load[i]), i));
    let mut total = vec![0u64; parts];
    let mut part = vec![0; load.len()];
    for i in order {
        let keep = |p: usize| now.is_some_and(|now| now[i] == p);
        let p = (0..parts).min_by_key(|&p| (total[p], !keep(p), p)).expect("parts > 0");
        total[p] = total[p].saturating_add(load[i]);
        part[i] = p;
    }
    part
}

/// The units a partition deals out: each switch with the hosts attached to it (a rack; a
/// host on several switches goes with the last of them), or alone if it has none.
struct Units {
    /// Each unit's weight (its nodes' load plus one per node, so that idle racks still
    /// spread), first node and nodes.
    list: Vec<(u64, usize, Vec<usize>)>,
    /// Each node's unit (`usize::MAX`: a host attached to no switch).
    of: Vec<usize>,
    /// Nodes in no unit.
    nodes: usize,
}

/// Passes of [`Units::refine`] at most (each pass visits every unit once; a pass that moves
/// nothing ends it).
const REFINE_PASSES: usize = 64;

impl Units {
    /// The units of `net`, weighed by `load` (per node).
    fn new(net: &Network, load: &[u64]) -> Units {
        assert_eq!(load.len(), net.node_count(), "one load per node");
        let n = net.node_count();
        let mut list: Vec<(u64, usize, Vec<usize>)> = Vec::new();
        for i in 0..n {
            let node = NodeId::from_idx(i);
            if net.kind(node) != NodeKind::Switch {
                continue;
            }
            let mut nodes = vec![i];
            nodes.extend(
                net.ports(node).iter().map(|p| p.peer).filter(|&p| net.is_host(p)).map(|p| p.idx()),
            );
            list.push((0, i, nodes));
        }
        let mut of = vec![usize::MAX; n];
        for (u, (_, _, nodes)) in list.iter().enumerate() {
            for &x in nodes {
                of[x] = u;
            }
        }
        for (u, unit) in list.iter_mut().enumerate() {
            unit.2.retain(|&x| of[x] == u);
            unit.0 = unit.2.iter().map(|&x| load[x].saturating_add(1)).fold(0, u64::saturating_add);
        }
        Units { list, of, nodes: n }
    }

    /// Longest processing time first: the heaviest unit first, each to the least loaded
    /// shard (ties: the earlier unit, the lower shard). Returns each unit's shard.
    fn longest_first(&self, parts: usize) -> Vec<u32> {
        let load: Vec<u64> = self.list.iter().map(|u| u.0).collect();
        longest_first(&load, parts, None).into_iter().map(|s| s as u32).collect()
    }

    /// Each shard's weight under `assign`.
    fn weights(&self, assign: &[u32], parts: usize) -> Vec<u64> {
        let mut w = vec![0u64; parts];
        for (u, &s) in assign.iter().enumerate() {
            w[s as usize] = w[s as usize].saturating_add(self.list[u].0);
        }
        w
    }

    /// The traffic between units: for each unit, its neighbours and the frames on the links
    /// between them (`links`: per link), sorted by neighbour.
    fn graph(&self, net: &Network, links: &[u64]) -> Vec<Vec<(usize, u64)>> {
        let mut adj: Vec<Vec<(usize, u64)>> = vec![Vec::new(); self.list.len()];
        for (l, &w) in net.links().iter().zip(links) {
            let (a, b) = (self.of[l.a.idx()], self.of[l.b.idx()]);
            if w == 0 || a == usize::MAX || b == usize::MAX || a == b {
                continue;
            }
            adj[a].push((b, w));
            adj[b].push((a, w));
        }
        for list in &mut adj {
            list.sort_unstable();
            list.dedup_by(|next, kept| {
                let same = next.0 == kept.0;
                if same {
                    kept.1 = kept.1.saturating_add(next.1);
                }
                same
            });
        }
        adj
    }

    /// The traffic between units in different shards.
    fn cut(adj: &[Vec<(usize, u64)>], assign: &[u32]) -> u64 {
        let mut cut = 0u64;
        for (u, list) in adj.iter().enumerate() {
            for &(v, w) in list {
                if u < v && assign[u] != assign[v] {
                    cut = cut.saturating_add(w);
                }
            }
        }
        cut
    }

    /// Graph growing: shards `0..parts - 1` one after the other, each started from the
    /// heaviest unit left and grown by the unit with the most traffic to it (ties: the
    /// heavier, then the earlier unit) that keeps it within `bound`, until it holds an even
    /// share of the total; the last shard takes the rest.
    fn grown(&self, adj: &[Vec<(usize, u64)>], parts: usize, bound: u64) -> Vec<u32> {
        let n = self.list.len();
        let total = self.list.iter().fold(0u64, |a, u| a.saturating_add(u.0));
        let share = total.div_ceil(parts as u64);
        let last = (parts - 1) as u32;
        let mut assign = vec![last; n];
        let mut free = vec![true; n];
        let mut conn = vec![0u64; n];
        for p in 0..parts - 1 {
            conn.fill(0);
            let mut held = 0u64;
            while held < share {
                let pick = (0..n)
                    .filter(|&u| free[u] && held.saturating_add(self.list[u].0) <= bound)
                    .max_by(|&a, &b| {
                        (conn[a], self.list[a].0).cmp(&(conn[b], self.list[b].0)).then(b.cmp(&a))
                    });
                let Some(u) = pick else { break };
                free[u] = false;
                assign[u] = p as u32;
                held = held.saturating_add(self.list[u].0);
                for &(v, w) in &adj[u] {
                    conn[v] = conn[v].saturating_add(w);
                }
            }
        }
        assign
    }

    /// Moves units, one at a time, to the shard they exchange the most traffic with: a move
    /// is taken if the target stays within `bound` and it cuts less traffic, or the same
    /// traffic with the target after the move lighter than the source before it; a unit of a
    /// shard above `bound` moves to the best shard with room, whatever it cuts. Each move
    /// lowers (weight above the bound, traffic cut, sum of squared shard weights), so passes
    /// end; [`REFINE_PASSES`] bounds them anyway.
    fn refine(&self, assign: &mut [u32], adj: &[Vec<(usize, u64)>], parts: usize, bound: u64) {
        let mut shard_w = self.weights(assign, parts);
        let mut conn = vec![0u64; parts];
        for _ in 0..REFINE_PASSES {
            let mut moved = false;
            for u in 0..self.list.len() {
                let s = assign[u] as usize;
                let w = self.list[u].0;
                conn.fill(0);
                for &(v, x) in &adj[u] {
                    let t = assign[v] as usize;
                    conn[t] = conn[t].saturating_add(x);
                }
                let over = shard_w[s] > bound;
                let mut best: Option<(i128, usize)> = None;
                for t in (0..parts).filter(|&t| t != s) {
                    let after = shard_w[t].saturating_add(w);
                    if after > bound {
                        continue;
                    }
                    let gain = i128::from(conn[t]) - i128::from(conn[s]);
                    if !(over || gain > 0 || gain == 0 && after < shard_w[s]) {
                        continue;
                    }
                    if best.is_none_or(|(g, _)| gain > g) {
                        best = Some((gain, t));
                    }
                }
                if let Some((_, t)) = best {
                    shard_w[s] -= w;
                    shard_w[t] = shard_w[t].saturating_add(w);
                    assign[u] = t as u32;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }

    /// The partition that puts each unit's nodes in its shard (`assign`), and nodes in no
    /// unit in shard 0.
    fn to_partition(&self, assign: &[u32]) -> Partition {
        let mut assignment = vec![0u32; self.nodes];
        for (u, (_, _, nodes)) in self.list.iter().enumerate() {
            for &x in nodes {
                assignment[x] = assign[u];
            }
        }
        Partition::from_assignment(&assignment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::FlowId;
    use crate::network::test_link;
    use crate::units::Time;
    use proptest::prelude::*;

    /// `leaves` leaves of `per` hosts each under `spines` spines; hosts first, then leaves,
    /// then spines.
    fn leaf_spine(leaves: u32, spines: u32, per: u32) -> Network {
        let hosts = leaves * per;
        let mut kinds = vec![NodeKind::Host; hosts as usize];
        kinds.extend(std::iter::repeat_n(NodeKind::Switch, (leaves + spines) as usize));
        let mut links: Vec<_> = (0..hosts).map(|h| test_link(h, hosts + h / per)).collect();
        for l in 0..leaves {
            for s in 0..spines {
                links.push(test_link(hosts + l, hosts + leaves + s));
            }
        }
        Network::new(kinds, links).unwrap()
    }

    fn flow(id: u32, src: u32, dst: u32, size: u64) -> FlowSpec {
        FlowSpec {
            id: FlowId(id),
            src: NodeId(src),
            dst: NodeId(dst),
            size,
            start: Time::ZERO,
            pg: 3,
            dport: 100,
        }
    }

    /// One flow of ten full frames between hosts on two leaves: 10 data frames and 10
    /// acknowledgements arrive at each of the four nodes of the path and at its ends, and
    /// each end sends 10; exactly one spine carries the data and one the acknowledgements,
    /// and nothing else is loaded.
    #[test]
    fn a_flow_loads_the_nodes_of_its_paths() {
        let net = leaf_spine(2, 4, 2);
        let routes = RoutingTable::shortest_paths(&net, &vec![true; net.links().len()]);
        let cfg = SimConfig::default();
        let size = 10 * u64::from(cfg.nic.mtu);
        let load = traffic_load(&net, &routes, &[flow(0, 0, 3, size)], &cfg);
        // Hosts 0..4, leaves 4 and 5, spines 6..10.
        assert_eq!(&load[..6], &[20, 0, 0, 20, 20, 20]);
        let spines = &load[6..];
        assert_eq!(spines.iter().sum::<u64>(), 20, "{spines:?}");
        assert!(spines.iter().all(|&l| l == 0 || l == 10 || l == 20), "{spines:?}");
        // A partial last frame is a frame.
        let load = traffic_load(&net, &routes, &[flow(0, 0, 1, size + 1)], &cfg);
        assert_eq!(&load[..5], &[22, 22, 0, 0, 22]);
        assert_eq!(load[5..].iter().sum::<u64>(), 0);
    }

    /// Racks stay whole, switches without hosts spread, and the heaviest units go first to
    /// the least loaded shard.
    #[test]
    fn by_load_balances_racks_and_spines() {
        let net = leaf_spine(3, 3, 2);
        // Hosts 0..6, leaves 6..9, spines 9..12. Rack 0 is heavy, spine 9 too.
        let mut load = vec![0u64; 12];
        load[0] = 100;
        load[6] = 100;
        load[9] = 150;
        let p = Partition::by_load(&net, &load, 2);
        let a = p.assignment();
        for h in 0..6 {
            assert_eq!(a[h], a[6 + h / 2], "host {h} with its leaf");
        }
        // Units by weight (load plus one per node): rack 0 (203), spine 9 (151), racks 1 and 2
        // (3 each), spines 10 and 11 (1 each). Rack 0 takes one shard, spine 9 the other, and
        // the light units all join spine 9, which stays the lighter shard (159 < 203).
        assert_ne!(a[0], a[9], "the two heavy units apart");
        for n in [2, 4, 10, 11] {
            assert_eq!(a[n], a[9], "node {n} joins the lighter shard");
        }
    }

    proptest! {
        /// Any loads: every node has a shard, hosts share their switch's, and the loads of the
        /// shards differ by at most the heaviest unit (the greedy's guarantee).
        #[test]
        fn by_load_stays_within_one_unit(
            loads in proptest::collection::vec(0u64..1000, 3 * 4 + 4 + 3),
            parts in 1usize..6,
        ) {
            let net = leaf_spine(4, 3, 3);
            let p = Partition::by_load(&net, &loads, parts);
            let a = p.assignment();
            prop_assert_eq!(a.len(), net.node_count());
            for h in 0..12 {
                prop_assert_eq!(a[h], a[12 + h / 3]);
            }
            let weight = |n: usize| loads[n] + 1;
            let mut units: Vec<u64> = (0..4)
                .map(|l| weight(12 + l) + (0..3).map(|k| weight(3 * l + k)).sum::<u64>())
                .collect();
            units.extend((16..19).map(weight));
            let mut shard = vec![0u64; p.shards()];
            for (n, &s) in a.iter().enumerate() {
                shard[s as usize] += weight(n);
            }
            prop_assert_eq!(p.shards(), parts.min(units.len()));
            let (max, min) = (shard.iter().max().unwrap(), shard.iter().min().unwrap());
            prop_assert!(max - min <= *units.iter().max().unwrap(), "{:?} {:?}", shard, units);
        }
    }

    /// Two leaf-spine clusters (two leaves of two hosts under one spine each) joined by one
    /// spine-to-spine link that carries nothing: two shards keep each cluster whole, cutting
    /// no traffic, where the balance alone deals the racks out of both clusters alike.
    #[test]
    fn by_load_and_cut_keeps_clusters_whole() {
        // Hosts 0..8, leaves 8..12 (hosts 2l, 2l + 1 under leaf 8 + l), spines 12 and 13.
        let mut kinds = vec![NodeKind::Host; 8];
        kinds.extend([NodeKind::Switch; 6]);
        let mut links: Vec<_> = (0..8).map(|h| test_link(h, 8 + h / 2)).collect();
        links.extend([test_link(8, 12), test_link(9, 12), test_link(10, 13), test_link(11, 13)]);
        links.push(test_link(12, 13));
        let net = Network::new(kinds, links).unwrap();
        let mut link_load = vec![10u64; net.links().len()];
        *link_load.last_mut().unwrap() = 0;
        let traffic = Traffic { nodes: vec![10; 14], links: link_load };
        let p = Partition::by_load_and_cut(&net, &traffic, 2);
        let a = p.assignment();
        assert_eq!(p.shards(), 2);
        for n in [0, 1, 2, 3, 8, 9, 12] {
            assert_eq!(a[n], a[0], "node {n} with the first cluster: {a:?}");
        }
        for n in [4, 5, 6, 7, 10, 11, 13] {
            assert_eq!(a[n], a[4], "node {n} with the second cluster: {a:?}");
        }
        assert_eq!(p.cut(&net, &traffic.links), 0);
        let lpt = Partition::by_load(&net, &traffic.nodes, 2);
        assert!(lpt.cut(&net, &traffic.links) > 0, "{:?}", lpt.assignment());
    }

    proptest! {
        /// Any loads on nodes and links: hosts stay with their switch, no shard weighs more
        /// than the bound, and the traffic cut is at most what `by_load` cuts.
        #[test]
        fn by_load_and_cut_cuts_no_more_than_by_load(
            nodes in proptest::collection::vec(0u64..1000, 3 * 4 + 4 + 3),
            links in proptest::collection::vec(0u64..1000, 3 * 4 + 4 * 3),
            parts in 1usize..7,
        ) {
            let net = leaf_spine(4, 3, 3);
            let traffic = Traffic { nodes, links };
            let p = Partition::by_load_and_cut(&net, &traffic, parts);
            let a = p.assignment();
            prop_assert_eq!(a.len(), net.node_count());
            for h in 0..12 {
                prop_assert_eq!(a[h], a[12 + h / 3]);
            }
            let lpt = Partition::by_load(&net, &traffic.nodes, parts);
            let weigh = |p: &Partition| {
                let mut w = vec![0u64; parts];
                for (n, &s) in p.assignment().iter().enumerate() {
                    w[s as usize] += traffic.nodes[n] + 1;
                }
                w
            };
            let bound = Partition::balance_bound(&weigh(&lpt));
            prop_assert!(weigh(&p).iter().all(|&w| w <= bound), "{:?} > {}", weigh(&p), bound);
            prop_assert!(p.cut(&net, &traffic.links) <= lpt.cut(&net, &traffic.links));
        }
    }

    #[test]
    fn partitioners_are_named() {
        for (i, name) in Partitioner::NAMES.iter().enumerate() {
            let p = Partitioner::from_name(name).unwrap();
            assert_eq!(p.name(), *name);
            let all =
                [Partitioner::Load, Partitioner::Cut, Partitioner::Rack, Partitioner::RoundRobin];
            assert_eq!(all[i], p);
        }
        assert_eq!(Partitioner::from_name("metis"), None);
        assert_eq!(Partitioner::default(), Partitioner::Cut);
    }
}
