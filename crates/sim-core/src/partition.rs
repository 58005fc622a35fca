//! Assigning nodes to shards for the parallel engine.
//!
//! Any assignment gives the same results; a good one keeps shards balanced (work is roughly
//! proportional to hosts and their traffic) and cuts only links with a long propagation delay,
//! since the shortest delay of a cut link bounds the window the shards run ahead in
//! (the lookahead).

use crate::ids::NodeId;
use crate::network::{Network, NodeKind};
use crate::units::Duration;

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
