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
    #[default]
    Load,
    /// [`Partition::by_rack`]: racks balanced by hosts, other switches dealt round robin.
    Rack,
    /// [`Partition::round_robin`]: node `i` in shard `i % parts` (every link cut; for tests).
    RoundRobin,
}

impl Partitioner {
    /// The names [`Partitioner::from_name`] accepts, in the order of the enum.
    pub const NAMES: [&'static str; 3] = ["load", "rack", "round-robin"];

    /// The partitioner called `name`.
    pub fn from_name(name: &str) -> Option<Partitioner> {
        match name {
            "load" => Some(Partitioner::Load),
            "rack" => Some(Partitioner::Rack),
            "round-robin" => Some(Partitioner::RoundRobin),
            _ => None,
        }
    }

    /// This partitioner's name.
    pub fn name(self) -> &'static str {
        match self {
            Partitioner::Load => "load",
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
            Partitioner::Rack => Partition::by_rack(net, parts),
            Partitioner::RoundRobin => Partition::round_robin(net.node_count(), parts),
        }
    }
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
    use crate::sim::{ecmp_seed, murmur3_32, FlowKeys};
    let mut load = vec![0u64; net.node_count()];
    let mut keys = FlowKeys::default();
    let seeds: Vec<u32> = (0..net.node_count()).map(|i| ecmp_seed(i, cfg.seed)).collect();
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
            for node in hops.iter().skip(1).map(|h| h.node).chain([dst]) {
                load[node.idx()] = load[node.idx()].saturating_add(frames);
            }
        }
    }
    load
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
        assert_eq!(load.len(), net.node_count(), "one load per node");
        let parts = parts.max(1);
        let n = net.node_count();
        let mut assignment = vec![u32::MAX; n];
        // Units: (weight, first node, nodes).
        let mut units: Vec<(u64, usize, Vec<usize>)> = Vec::new();
        for i in 0..n {
            let node = NodeId::from_idx(i);
            if net.kind(node) != NodeKind::Switch {
                continue;
            }
            let mut nodes = vec![i];
            nodes.extend(
                net.ports(node).iter().map(|p| p.peer).filter(|&p| net.is_host(p)).map(|p| p.idx()),
            );
            units.push((0, i, nodes));
        }
        // A host on several switches goes with the last of them, as in `by_rack`.
        let mut owner = vec![usize::MAX; n];
        for (u, (_, _, nodes)) in units.iter().enumerate() {
            for &x in nodes {
                owner[x] = u;
            }
        }
        for (u, unit) in units.iter_mut().enumerate() {
            unit.2.retain(|&x| owner[x] == u);
            unit.0 = unit.2.iter().map(|&x| load[x].saturating_add(1)).fold(0, u64::saturating_add);
        }
        units.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut shard_load = vec![0u64; parts];
        for (w, _, nodes) in &units {
            let s = (0..parts).min_by_key(|&s| (shard_load[s], s)).expect("parts > 0");
            shard_load[s] = shard_load[s].saturating_add(*w);
            for &x in nodes {
                assignment[x] = s as u32;
            }
        }
        // Hosts attached to no switch (linked to hosts only) go to shard 0.
        for a in &mut assignment {
            if *a == u32::MAX {
                *a = 0;
            }
        }
        Partition::from_assignment(&assignment)
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

    /// The smallest propagation delay of a link between two shards, or `None` with one shard.
    pub fn lookahead(&self, net: &Network) -> Option<Duration> {
        net.links()
            .iter()
            .filter(|l| self.assignment[l.a.idx()] != self.assignment[l.b.idx()])
            .map(|l| l.delay)
            .min()
    }

    /// This partition with its lookahead, or a single shard (and the reason) if a link between
    /// two shards has no propagation delay.
    pub(crate) fn with_lookahead(self, net: &Network) -> (Partition, Duration, Option<String>) {
        match self.lookahead(net) {
            None => (self, Duration::ZERO, None),
            Some(d) if d > Duration::ZERO => (self, d, None),
            Some(_) => (
                Partition::single(net.node_count()),
                Duration::ZERO,
                Some(
                    "a link between two shards has zero propagation delay, so shards cannot run \\
                     ahead of each other; running as one shard"
                        .to_string(),
                ),
            ),
        }
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

    #[test]
    fn partitioners_are_named() {
        for (i, name) in Partitioner::NAMES.iter().enumerate() {
            let p = Partitioner::from_name(name).unwrap();
            assert_eq!(p.name(), *name);
            assert_eq!([Partitioner::Load, Partitioner::Rack, Partitioner::RoundRobin][i], p);
        }
        assert_eq!(Partitioner::from_name("metis"), None);
        assert_eq!(Partitioner::default(), Partitioner::Load);
    }
}
