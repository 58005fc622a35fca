//! The wired network the simulator runs on: nodes, full-duplex links and per-node ports,
//! plus the routing table the switches forward with.
//!
//! Builders, file readers and graph validation live in the `dcsim-topology` crate; this module
//! only holds the result and checks the structural facts the simulator relies on.

use crate::ids::{LinkId, NodeId, PortNo};
use crate::units::{BitsPerSec, Duration};

/// What a node is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NodeKind {
    /// An end host with one RDMA NIC (exactly one link).
    Host,
    /// A shared-buffer switch.
    Switch,
}

/// One full-duplex link between two nodes.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct LinkSpec {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// Rate in each direction.
    pub rate: BitsPerSec,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Probability that a frame arriving over this link is corrupted and dropped (0 = none).
    pub loss: f64,
}

/// One port of a node: the local end of a link.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Port {
    /// The link behind the port.
    pub link: LinkId,
    /// The node at the other end.
    pub peer: NodeId,
    /// The port number at the other end.
    pub peer_port: PortNo,
    /// Link rate.
    pub rate: BitsPerSec,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Frame loss probability on arrival at this port.
    pub loss: f64,
}

/// A structural problem found by [`Network::new`]. Graph-level checks with node names
/// (duplicates, disconnected hosts) are done by `dcsim-topology` before it gets here.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NetworkError {
    /// A link names a node id that does not exist.
    #[error("link {link} names node {node}, but there are only {count} nodes")]
    UnknownNode {
        /// The link.
        link: LinkId,
        /// The missing node.
        node: NodeId,
        /// Number of nodes.
        count: usize,
    },
    /// A link from a node to itself.
    #[error("link {link} connects node {node} to itself")]
    SelfLoop {
        /// The link.
        link: LinkId,
        /// The node.
        node: NodeId,
    },
    /// A link with a rate of zero.
    #[error("link {link} ({a}-{b}) has zero bandwidth")]
    ZeroRate {
        /// The link.
        link: LinkId,
        /// One end.
        a: NodeId,
        /// Other end.
        b: NodeId,
    },
    /// A loss probability outside [0, 1].
    #[error("link {link} ({a}-{b}) has loss probability {loss}, outside [0, 1]")]
    BadLoss {
        /// The link.
        link: LinkId,
        /// One end.
        a: NodeId,
        /// Other end.
        b: NodeId,
        /// The value.
        loss: f64,
    },
    /// A host must have exactly one link.
    #[error("host {node} has {links} links; a host has exactly one NIC link")]
    HostLinks {
        /// The host.
        node: NodeId,
        /// Its link count.
        links: usize,
    },
    /// More ports on one node than a `PortNo` can number.
    #[error("node {node} has more than 65535 ports")]
    TooManyPorts {
        /// The node.
        node: NodeId,
    },
}

/// Nodes, links and the port tables derived from them.
#[derive(Clone, Debug)]
pub struct Network {
    kinds: Vec<NodeKind>,
    links: Vec<LinkSpec>,
    ports: Vec<Vec<Port>>,
    host_index: Vec<u32>,
    hosts: Vec<NodeId>,
}

/// Marker in `host_index` for a switch.
const NOT_A_HOST: u32 = u32::MAX;

impl Network {
    /// Builds the port tables: a node's ports are numbered from 0 in the order its links appear.
    pub fn new(kinds: Vec<NodeKind>, links: Vec<LinkSpec>) -> Result<Network, NetworkError> {
        let n = kinds.len();
        let mut ports: Vec<Vec<Port>> = vec![Vec::new(); n];
        for (i, l) in links.iter().enumerate() {
            let link = LinkId::from_idx(i);
            for node in [l.a, l.b] {
                if node.idx() >= n {
                    return Err(NetworkError::UnknownNode { link, node, count: n });
                }
            }
            if l.a == l.b {
                return Err(NetworkError::SelfLoop { link, node: l.a });
            }
            if l.rate.0 == 0 {
                return Err(NetworkError::ZeroRate { link, a: l.a, b: l.b });
            }
            if !(0.0..=1.0).contains(&l.loss) {
                return Err(NetworkError::BadLoss { link, a: l.a, b: l.b, loss: l.loss });
            }
            let pa = ports[l.a.idx()].len();
            let pb = ports[l.b.idx()].len();
            if pa >= u16::MAX as usize {
                return Err(NetworkError::TooManyPorts { node: l.a });
            }
            if pb >= u16::MAX as usize {
                return Err(NetworkError::TooManyPorts { node: l.b });
            }
            ports[l.a.idx()].push(Port {
                link,
                peer: l.b,
                peer_port: PortNo(pb as u16),
                rate: l.rate,
                delay: l.delay,
                loss: l.loss,
            });
            ports[l.b.idx()].push(Port {
                link,
                peer: l.a,
                peer_port: PortNo(pa as u16),
                rate: l.rate,
                delay: l.delay,
                loss: l.loss,
            });
        }
        let mut host_index = vec![NOT_A_HOST; n];
        let mut hosts = Vec::new();
        for (i, k) in kinds.iter().enumerate() {
            if *k == NodeKind::Host {
                let node = NodeId::from_idx(i);
                if ports[i].len() != 1 {
                    return Err(NetworkError::HostLinks { node, links: ports[i].len() });
                }
                host_index[i] = hosts.len() as u32;
                hosts.push(node);
            }
        }
        Ok(Network { kinds, links, ports, host_index, hosts })
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.kinds.len()
    }
    /// What node `n` is.
    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.kinds[n.idx()]
    }
    /// All node kinds, indexed by node id.
    pub fn kinds(&self) -> &[NodeKind] {
        &self.kinds
    }
    /// All links in declaration order.
    pub fn links(&self) -> &[LinkSpec] {
        &self.links
    }
    /// The ports of node `n`.
    pub fn ports(&self, n: NodeId) -> &[Port] {
        &self.ports[n.idx()]
    }
    /// One port.
    pub fn port(&self, n: NodeId, p: PortNo) -> &Port {
        &self.ports[n.idx()][p.idx()]
    }
    /// The hosts in ascending node id.
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }
    /// Dense index of host `n` among the hosts, or `None` for a switch or unknown id.
    pub fn host_index(&self, n: NodeId) -> Option<usize> {
        match self.host_index.get(n.idx()) {
            Some(&i) if i != NOT_A_HOST => Some(i as usize),
            _ => None,
        }
    }
    /// Whether `n` is a host of this network.
    pub fn is_host(&self, n: NodeId) -> bool {
        self.host_index(n).is_some()
    }
    /// The NIC rate of host `n` (its only link's rate).
    pub fn nic_rate(&self, host: NodeId) -> BitsPerSec {
        self.ports[host.idx()][0].rate
    }
}

/// Equal-cost next hops from every node towards every host.
///
/// Built by `dcsim-topology`'s routing (BFS per destination) or by hand; the simulator only
/// looks entries up. An empty entry means "no route" (the packet is dropped and counted).
#[derive(Clone, Debug, Default)]
pub struct RoutingTable {
    hosts: usize,
    /// `start[node * hosts + host] .. start[... + 1]` indexes `ports`.
    start: Vec<u32>,
    ports: Vec<PortNo>,
}

impl RoutingTable {
    /// The most next hops [`RoutingTable::shortest_paths_within`] callers use by default
    /// (2^28: 512 MiB of ports; a k = 32 fat tree needs about 2 · 10^8).
    pub const MAX_NEXT_HOPS: usize = 1 << 28;

    /// Builds the table by asking `next_hops(node, host_index)` for every node and host.
    ///
    /// # Panics
    /// If the table would hold more than `u32::MAX` next hops in all.
    pub fn from_fn(
        nodes: usize,
        hosts: usize,
        next_hops: impl FnMut(NodeId, usize) -> Vec<PortNo>,
    ) -> RoutingTable {
        Self::try_from_fn(nodes, hosts, u32::MAX as usize, next_hops)
            .expect("at most u32::MAX next hops")
    }

    /// [`RoutingTable::from_fn`], giving up with the count reached as soon as the table would
    /// hold more than `max` next hops in all (at most `u32::MAX`).
    pub fn try_from_fn(
        nodes: usize,
        hosts: usize,
        max: usize,
        mut next_hops: impl FnMut(NodeId, usize) -> Vec<PortNo>,
    ) -> Result<RoutingTable, usize> {
        let max = max.min(u32::MAX as usize);
        let mut start = Vec::with_capacity(nodes * hosts + 1);
        let mut ports = Vec::new();
        for n in 0..nodes {
            for h in 0..hosts {
                start.push(ports.len() as u32);
                ports.extend(next_hops(NodeId::from_idx(n), h));
                if ports.len() > max {
                    return Err(ports.len());
                }
            }
        }
        start.push(ports.len() as u32);
        Ok(RoutingTable { hosts, start, ports })
    }

    /// Next hops (egress ports) at `node` towards the host with dense index `host`, in
    /// ascending order of the neighbour's node id.
    #[inline]
    pub fn next_hops(&self, node: NodeId, host: usize) -> &[PortNo] {
        let i = node.idx() * self.hosts + host;
        &self.ports[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Number of hosts the table was built for.
    pub fn host_count(&self) -> usize {
        self.hosts
    }

    /// Shortest-path ECMP next hops of every node toward every host, over the links that are
    /// up: `link_up[l]` for link `l` (an empty slice: every link is up).
    ///
    /// For every destination host, a BFS from it expands only through switches (a host is
    /// only ever an endpoint) and over links that are up. At a switch, every port on an up
    /// link whose neighbour lies on a shortest hop-count path toward the destination (the
    /// destination itself or a switch one hop closer) is a next hop, listed in **ascending
    /// neighbour node id** (ties, i.e. parallel links, by port number). The reference orders
    /// them by pointer value, which is not reproducible (spec §3.1).
    ///
    /// Host entries: a host's route toward every *other* host it can reach is `[PortNo(0)]`,
    /// its one NIC port; toward itself and toward unreachable hosts the entry is empty. A
    /// switch's entry toward an unreachable host is empty too (packets for it are dropped and
    /// counted as `no_route_drops`).
    ///
    /// Cost: one BFS per host plus one pass over every node's ports per host, i.e.
    /// O(hosts × (nodes + links)) time and a hosts × nodes distance matrix of `u32`.
    ///
    /// # Panics
    /// If `link_up` is neither empty nor one entry per link.
    pub fn shortest_paths(net: &Network, link_up: &[bool]) -> RoutingTable {
        Self::shortest_paths_within(net, link_up, u32::MAX as usize)
            .expect("at most u32::MAX next hops")
    }

    /// [`RoutingTable::shortest_paths`], giving up (with the count reached) as soon as the
    /// table would hold more than `max` next hops: for networks given by users, whose
    /// equal-cost fan-out can make the table huge (e.g. [`RoutingTable::MAX_NEXT_HOPS`]).
    ///
    /// # Panics
    /// If `link_up` is neither empty nor one entry per link.
    pub fn shortest_paths_within(
        net: &Network,
        link_up: &[bool],
        max: usize,
    ) -> Result<RoutingTable, usize> {
        assert!(link_up.is_empty() || link_up.len() == net.links().len(), "one state per link");
        let up = |l: LinkId| link_up.is_empty() || link_up[l.idx()];
        let n = net.node_count();
        let hosts = net.hosts();
        // dist[host_index * n + node]: hop count from node to the host (through switches).
        let mut dist = vec![UNREACHED; hosts.len() * n];
        let mut queue: Vec<NodeId> = Vec::with_capacity(n);
        for (hi, &dst) in hosts.iter().enumerate() {
            let d = &mut dist[hi * n..(hi + 1) * n];
            bfs_through_switches(net, dst, d, &mut queue, &up);
        }

        // Every node's ports on up links, in ascending (neighbour id, port number).
        let by_peer: Vec<Vec<(NodeId, PortNo)>> = (0..n)
            .map(|i| {
                let node = NodeId::from_idx(i);
                let mut v: Vec<(NodeId, PortNo)> = net
                    .ports(node)
                    .iter()
                    .enumerate()
                    .filter(|(_, port)| up(port.link))
                    .map(|(p, port)| (port.peer, PortNo(p as u16)))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();

        RoutingTable::try_from_fn(n, hosts.len(), max, |node, hi| {
            let d = &dist[hi * n..(hi + 1) * n];
            let dst = hosts[hi];
            let here = d[node.idx()];
            if node == dst || here == UNREACHED {
                return Vec::new();
            }
            if net.kind(node) == NodeKind::Host {
                return vec![PortNo(0)];
            }
            by_peer[node.idx()]
                .iter()
                .filter(|(peer, _)| {
                    d[peer.idx()].wrapping_add(1) == here
                        && (*peer == dst || net.kind(*peer) == NodeKind::Switch)
                })
                .map(|&(_, p)| p)
                .collect()
        })
    }
}

/// Marks a node not reached by a BFS.
const UNREACHED: u32 = u32::MAX;

/// Fills `dist` with the hop count from every node to `dst`, expanding only through switches
/// (and `dst` itself) and over links for which `up` holds. `queue` is scratch space.
fn bfs_through_switches(
    net: &Network,
    dst: NodeId,
    dist: &mut [u32],
    queue: &mut Vec<NodeId>,
    up: &impl Fn(LinkId) -> bool,
) {
    queue.clear();
    dist[dst.idx()] = 0;
    queue.push(dst);
    let mut head = 0;
    while let Some(&u) = queue.get(head) {
        head += 1;
        if u != dst && net.kind(u) == NodeKind::Host {
            continue;
        }
        let du = dist[u.idx()];
        for port in net.ports(u) {
            let v = port.peer.idx();
            if dist[v] == UNREACHED && up(port.link) {
                dist[v] = du + 1;
                queue.push(port.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A star: hosts 0..n on switch n.
    fn star(n: u32) -> Network {
        let l = |a| LinkSpec {
            a: NodeId(a),
            b: NodeId(n),
            rate: BitsPerSec::gbps(100),
            delay: Duration::from_us(1),
            loss: 0.0,
        };
        let mut kinds = vec![NodeKind::Host; n as usize];
        kinds.push(NodeKind::Switch);
        Network::new(kinds, (0..n).map(l).collect()).unwrap()
    }

    #[test]
    fn routing_gives_up_past_its_next_hop_budget() {
        let net = star(10);
        // Every host reaches 9 others (1 hop each) and the switch reaches 10: 100 next hops.
        let full = RoutingTable::shortest_paths(&net, &[]);
        assert_eq!(full.ports.len(), 100);
        assert!(RoutingTable::shortest_paths_within(&net, &[], 100).is_ok());
        let err = RoutingTable::shortest_paths_within(&net, &[], 99).unwrap_err();
        assert!(err > 99 && err <= 100 + 10, "{err}");
        // A failed host link leaves that host unreachable (empty entries).
        let mut up = vec![true; 10];
        up[3] = false;
        let cut = RoutingTable::shortest_paths(&net, &up);
        assert!(cut.next_hops(NodeId(10), 3).is_empty());
        assert_eq!(cut.next_hops(NodeId(10), 4), &[PortNo(4)]);
    }
}
