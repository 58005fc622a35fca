//! ECMP routing (spec §3.1) and the network-wide base RTT / BDP (spec §6.1).

use dcsim_core::ids::{NodeId, PortNo};
use dcsim_core::network::{Network, NodeKind, RoutingTable};
use dcsim_core::units::Duration;

/// Marks a node not reached by a BFS.
const UNREACHED: u32 = u32::MAX;

/// Computes the equal-cost next hops of every node toward every host.
///
/// For every destination host, a BFS from it expands only through switches (a host is only
/// ever an endpoint). At a switch, every port whose neighbour lies on a shortest hop-count
/// path toward the destination (the destination itself or a switch one hop closer) is a next
/// hop, listed in **ascending neighbour node id** (ties, i.e. parallel links, by port
/// number). The reference orders them by pointer value, which is not reproducible (spec §3.1).
///
/// Host entries: a host's route toward every *other* host it can reach is `[PortNo(0)]`, its
/// one NIC port; toward itself and toward unreachable hosts the entry is empty. A switch's
/// entry toward an unreachable host is empty too.
///
/// Cost: one BFS per host plus one pass over every node's ports per host, i.e.
/// O(hosts × (nodes + links)) time and a hosts × nodes distance matrix of `u32`.
pub fn compute_routes(net: &Network) -> RoutingTable {
    let n = net.node_count();
    let hosts = net.hosts();
    // dist[host_index * n + node]: hop count from node to the host (through switches).
    let mut dist = vec![UNREACHED; hosts.len() * n];
    let mut queue: Vec<NodeId> = Vec::with_capacity(n);
    for (hi, &dst) in hosts.iter().enumerate() {
        let d = &mut dist[hi * n..(hi + 1) * n];
        bfs_through_switches(net, dst, d, &mut queue);
    }

    // Every node's ports in ascending (neighbour id, port number).
    let by_peer: Vec<Vec<(NodeId, PortNo)>> = (0..n)
        .map(|i| {
            let node = NodeId::from_idx(i);
            let mut v: Vec<(NodeId, PortNo)> = net
                .ports(node)
                .iter()
                .enumerate()
                .map(|(p, port)| (port.peer, port_no(p)))
                .collect();
            v.sort_unstable();
            v
        })
        .collect();

    RoutingTable::from_fn(n, hosts.len(), |node, hi| {
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

/// A port number from a port index (a `Network` never has more than `u16::MAX` ports per node).
fn port_no(p: usize) -> PortNo {
    PortNo(u16::try_from(p).expect("Network::new limits ports per node to u16"))
}

/// Fills `dist` with the hop count from every node to `dst`, expanding only through switches
/// (and `dst` itself). `queue` is scratch space.
fn bfs_through_switches(net: &Network, dst: NodeId, dist: &mut [u32], queue: &mut Vec<NodeId>) {
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
            if dist[v] == UNREACHED {
                dist[v] = du + 1;
                queue.push(port.peer);
            }
        }
    }
}

/// The network-wide maxima of the reference's per-pair base RTT and BDP (spec §6.1), which
/// HPCC uses for its window and PINT switches for their RTT.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct NetworkMetrics {
    /// Maximum over ordered host pairs of `2 * propagation + sum of per-hop serialization of
    /// one payload`.
    pub max_rtt: Duration,
    /// Maximum over ordered host pairs of `rtt * bottleneck rate / 8`, in bytes (rounded down).
    /// The two maxima may come from different pairs, as in the reference.
    pub max_bdp: u64,
}

/// Computes [`NetworkMetrics`] with `mtu` payload bytes per packet: the maximum over all
/// ordered pairs of distinct hosts of `dcsim_core::paths::pair_metrics(net, routes, src, dst,
/// mtu)` (the path that always takes the first next hop), with exactly the same integer
/// arithmetic.
///
/// Rather than walking every pair's path, it walks each destination's first-next-hop tree
/// once, memoizing each node's remaining delay, serialization time and bottleneck: O(hosts ×
/// nodes) time. Pairs without a route (possible only with a hand-made routing table or an
/// unvalidated network) are skipped; with no routed pair the result is all zeros.
pub fn network_metrics(net: &Network, routes: &RoutingTable, mtu: u64) -> NetworkMetrics {
    let (max_rtt, max_bdp) = dcsim_core::paths::max_pair_metrics(net, routes, mtu);
    NetworkMetrics { max_rtt, max_bdp }
}
