//! ECMP routing (spec §3.1) and the network-wide base RTT / BDP (spec §6.1).

use dcsim_core::network::{Network, RoutingTable};
use dcsim_core::units::Duration;

/// Computes the equal-cost next hops of every node toward every host, over every link:
/// [`RoutingTable::shortest_paths`] with no link down (see there for the rule: shortest
/// hop-count paths through switches, next hops in ascending neighbour node id).
///
/// Cost: one BFS per destination switch (the switch hosts hang from) plus one pass over every
/// switch's ports per destination switch, i.e. O(roots × (nodes + links)) time, and a table
/// of switches × roots cells (see [`RoutingTable`]).
pub fn compute_routes(net: &Network) -> RoutingTable {
    RoutingTable::shortest_paths(net, &[])
}

/// [`compute_routes`], or, before routing, the work it would take when that is more than
/// `max` steps (see [`RoutingTable::work`] and [`RoutingTable::shortest_paths_within`]).
///
/// # Errors
/// The work routing would take, when it is more than `max`.
pub fn compute_routes_within(net: &Network, max: usize) -> Result<RoutingTable, usize> {
    RoutingTable::shortest_paths_within(net, &[], max)
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
