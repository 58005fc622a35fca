//! [`Topology`], the unvalidated description of a network, and its validation into a
//! `dcsim_core::network::Network`.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

use dcsim_core::ids::{LinkId, NodeId};
use dcsim_core::network::{LinkSpec, Network, NodeKind};

use crate::error::{LinkRef, TopologyError};

/// An unvalidated network description: node kinds (the index is the node id) and full-duplex
/// links in declaration order. A node's ports are numbered from 0 in the order its links
/// appear here.
///
/// Built by the [builders](crate::builders) or read by [`crate::parse_ns3`]; turned into a
/// simulator [`Network`] by [`Topology::validate`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Topology {
    /// Node kinds, indexed by node id.
    pub kinds: Vec<NodeKind>,
    /// Links in declaration order.
    pub links: Vec<LinkSpec>,
    /// For a topology read from a file: the 1-based line each link was declared on (same
    /// length as `links`). Empty for topologies built in code; errors then name link indices.
    pub link_lines: Vec<usize>,
}

impl Topology {
    /// A topology built in code (no file lines).
    pub fn new(kinds: Vec<NodeKind>, links: Vec<LinkSpec>) -> Topology {
        Topology { kinds, links, link_lines: Vec::new() }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.kinds.len()
    }

    /// Number of hosts.
    pub fn host_count(&self) -> usize {
        self.kinds.iter().filter(|k| **k == NodeKind::Host).count()
    }

    /// Number of switches.
    pub fn switch_count(&self) -> usize {
        self.kinds.iter().filter(|k| **k == NodeKind::Switch).count()
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The host ids in ascending order.
    pub fn hosts(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes_of(NodeKind::Host)
    }

    /// The switch ids in ascending order.
    pub fn switches(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes_of(NodeKind::Switch)
    }

    fn nodes_of(&self, kind: NodeKind) -> impl Iterator<Item = NodeId> + '_ {
        self.kinds
            .iter()
            .enumerate()
            .filter(move |(_, k)| **k == kind)
            .map(|(i, _)| NodeId::from_idx(i))
    }

    /// Number of links with `node` at one end (its port count).
    pub fn degree(&self, node: NodeId) -> usize {
        self.links.iter().filter(|l| l.a == node || l.b == node).count()
    }

    /// How errors refer to link `i`: its file line if known, else its index.
    pub fn link_ref(&self, i: usize) -> LinkRef {
        match self.link_lines.get(i) {
            Some(&line) => LinkRef::Line(line),
            None => LinkRef::Link(LinkId::from_idx(i)),
        }
    }

    /// Checks the graph and builds the simulator's [`Network`].
    ///
    /// Checks, in this order, reporting the first problem found: per link (in declaration
    /// order) unknown node, self loop, zero bandwidth, loss outside [0, 1], duplicate link
    /// (the same unordered pair declared twice); then per host (ascending id) more than one
    /// link or no link; then that there is at least one host and that every host reaches the
    /// lowest-id host through switches only (a host is an endpoint, never a transit node).
    pub fn validate(&self) -> Result<Network, TopologyError> {
        let n = self.kinds.len();
        let mut seen: HashMap<(NodeId, NodeId), usize> = HashMap::with_capacity(self.links.len());
        // First and second link of every node, for the host degree check.
        let mut first_link: Vec<Option<usize>> = vec![None; n];
        let mut second_link: Vec<Option<usize>> = vec![None; n];
        for (i, l) in self.links.iter().enumerate() {
            let at = self.link_ref(i);
            for node in [l.a, l.b] {
                if node.idx() >= n {
                    return Err(TopologyError::UnknownNode { at, node, count: n });
                }
            }
            if l.a == l.b {
                return Err(TopologyError::SelfLoop { at, node: l.a });
            }
            if l.rate.0 == 0 {
                return Err(TopologyError::ZeroRate { at, a: l.a, b: l.b });
            }
            if !(0.0..=1.0).contains(&l.loss) {
                return Err(TopologyError::BadLoss { at, a: l.a, b: l.b, loss: l.loss });
            }
            let key = (l.a.min(l.b), l.a.max(l.b));
            match seen.entry(key) {
                Entry::Occupied(e) => {
                    return Err(TopologyError::DuplicateLink {
                        at,
                        first: self.link_ref(*e.get()),
                        a: l.a,
                        b: l.b,
                    });
                }
                Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
            for node in [l.a, l.b] {
                let k = node.idx();
                if first_link[k].is_none() {
                    first_link[k] = Some(i);
                } else if second_link[k].is_none() {
                    second_link[k] = Some(i);
                }
            }
        }

        let mut first_host = None;
        for (i, kind) in self.kinds.iter().enumerate() {
            if *kind != NodeKind::Host {
                continue;
            }
            let node = NodeId::from_idx(i);
            match (first_link[i], second_link[i]) {
                (None, _) => return Err(TopologyError::IsolatedHost { node }),
                (Some(a), Some(b)) => {
                    return Err(TopologyError::HostMultipleLinks {
                        node,
                        first: self.link_ref(a),
                        second: self.link_ref(b),
                    })
                }
                (Some(_), None) => {}
            }
            first_host.get_or_insert(node);
        }
        let from = first_host.ok_or(TopologyError::NoHosts)?;

        if let Some(node) = self.unreachable_host(from) {
            return Err(TopologyError::DisconnectedHost { node, from });
        }

        Ok(Network::new(self.kinds.clone(), self.links.clone())?)
    }

    /// BFS from host `from`, expanding only through switches; returns the lowest-id host not
    /// reached. Assumes link endpoints are in range (checked before).
    fn unreachable_host(&self, from: NodeId) -> Option<NodeId> {
        let n = self.kinds.len();
        let mut adj: Vec<Vec<NodeId>> = vec![Vec::new(); n];
        for l in &self.links {
            adj[l.a.idx()].push(l.b);
            adj[l.b.idx()].push(l.a);
        }
        let mut reached = vec![false; n];
        let mut queue = VecDeque::new();
        reached[from.idx()] = true;
        queue.push_back(from);
        while let Some(u) = queue.pop_front() {
            if u != from && self.kinds[u.idx()] == NodeKind::Host {
                continue;
            }
            for &v in &adj[u.idx()] {
                if !reached[v.idx()] {
                    reached[v.idx()] = true;
                    queue.push_back(v);
                }
            }
        }
        self.kinds
            .iter()
            .enumerate()
            .find(|(i, k)| **k == NodeKind::Host && !reached[*i])
            .map(|(i, _)| NodeId::from_idx(i))
    }
}
