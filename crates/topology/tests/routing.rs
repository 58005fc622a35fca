//! ECMP next hops, the network-wide base RTT/BDP, and routing properties.

use dcsim_core::ids::{NodeId, PortNo};
use dcsim_core::network::{Network, RoutingTable};
use dcsim_core::paths::{pair_metrics, walk};
use dcsim_core::units::{BitsPerSec, Duration};
use dcsim_topology::*;
use proptest::prelude::*;

const G100: BitsPerSec = BitsPerSec::gbps(100);
const G400: BitsPerSec = BitsPerSec::gbps(400);
const US: Duration = Duration::from_us(1);

fn routed(t: &Topology) -> (Network, RoutingTable) {
    let net = t.validate().unwrap();
    let routes = compute_routes(&net);
    (net, routes)
}

/// The neighbours behind the next hops of `node` toward host `dst`.
fn next_peers(net: &Network, routes: &RoutingTable, node: u32, dst: u32) -> Vec<u32> {
    let hi = net.host_index(NodeId(dst)).unwrap();
    routes.next_hops(NodeId(node), hi).iter().map(|&p| net.port(NodeId(node), p).peer.0).collect()
}

/// Brute force: the maximum of `pair_metrics` over every ordered host pair.
fn brute_metrics(net: &Network, routes: &RoutingTable, mtu: u64) -> NetworkMetrics {
    let mut m = NetworkMetrics::default();
    for &s in net.hosts() {
        for &d in net.hosts() {
            if s != d {
                let p = pair_metrics(net, routes, s, d, mtu).expect("routed");
                m.max_rtt = m.max_rtt.max(p.rtt);
                m.max_bdp = m.max_bdp.max(p.bdp);
            }
        }
    }
    m
}

#[test]
fn leaf_spine_ecmp() {
    // Hosts 0..8 (2 per leaf), leaves 8..12, spines 12..16.
    let (net, routes) = routed(&leaf_spine(4, 4, 2, G100, G400, US).unwrap());
    assert_eq!(next_peers(&net, &routes, 8, 7), vec![12, 13, 14, 15]); // leaf -> other leaf's host
    assert_eq!(next_peers(&net, &routes, 8, 1), vec![1]); // leaf -> own host
    assert_eq!(next_peers(&net, &routes, 13, 7), vec![11]); // spine -> host's leaf
    assert_eq!(next_peers(&net, &routes, 0, 7), vec![8]); // host: its NIC
    assert_eq!(routes.next_hops(NodeId(0), 1), &[PortNo(0)]);
    assert!(routes.next_hops(NodeId(0), 0).is_empty()); // toward itself
}

#[test]
fn paper_fat_tree_ecmp() {
    let (net, routes) = routed(&paper_fat_tree());
    // Host 0 is under ToR 320 (pod 0, aggs 340..344); host 319 under ToR 339 (pod 4, aggs 356..360).
    assert_eq!(next_peers(&net, &routes, 320, 319), vec![340, 341, 342, 343]); // ToR up, other pod
    assert_eq!(next_peers(&net, &routes, 320, 16), vec![340, 341, 342, 343]); // ToR up, same pod
    assert_eq!(next_peers(&net, &routes, 320, 1), vec![1]); // ToR down to own host
    assert_eq!(next_peers(&net, &routes, 341, 319), vec![364, 365, 366, 367]); // Agg up to its cores
    assert_eq!(next_peers(&net, &routes, 341, 16), vec![321]); // Agg down, same pod
    assert_eq!(next_peers(&net, &routes, 364, 319), vec![357]); // core down: agg 1 of pod 4
    assert_eq!(next_peers(&net, &routes, 357, 319), vec![339]); // Agg down to the ToR
                                                                // Every ToR has 4 next hops toward any host outside its rack.
    for tor in 320..340u32 {
        for dst in (0..320u32).step_by(7) {
            let n = next_peers(&net, &routes, tor, dst).len();
            assert_eq!(n, if dst / 16 + 320 == tor { 1 } else { 4 }, "ToR {tor} -> {dst}");
        }
    }
}

#[test]
fn paper_fat_tree_metrics() {
    let (net, routes) = routed(&paper_fat_tree());
    let m = network_metrics(&net, &routes, 1000);
    assert_eq!(m.max_rtt, Duration::from_ns(12_240));
    assert_eq!(m.max_bdp, 153_000);
    // Same pair check as pair_metrics: a cross-pod pair has 6 hops.
    let p = pair_metrics(&net, &routes, NodeId(0), NodeId(319), 1000).unwrap();
    assert_eq!((p.rtt, p.bdp, p.bottleneck), (Duration::from_ns(12_240), 153_000, G100));
}

#[test]
fn metrics_equal_brute_force() {
    let topos = [
        leaf_spine(3, 2, 4, G100, G400, US).unwrap(),
        fat_tree(
            4,
            &FatTreeParams { oversubscription: 2, fabric_rate: G400, ..Default::default() },
        )
        .unwrap(),
        dumbbell(2, 3, G100, BitsPerSec::gbps(10), Duration::from_ns(1500)).unwrap(),
        star(5, BitsPerSec::gbps(25), US).unwrap(),
    ];
    for t in &topos {
        let (net, routes) = routed(t);
        for mtu in [1000, 1048, 9000] {
            assert_eq!(network_metrics(&net, &routes, mtu), brute_metrics(&net, &routes, mtu));
        }
    }
    // Dumbbell: the max RTT crosses the 10G bottleneck (3 hops: 2*4500 + 80 + 800 + 80 ns),
    // but the max BDP is a same-side pair (2 hops at 100G: 6160 ns * 100 Gb/s = 77 000 B;
    // across: 9960 ns * 10 Gb/s = 12 450 B). The two maxima come from different pairs.
    let (net, routes) = routed(&topos[2]);
    let m = network_metrics(&net, &routes, 1000);
    assert_eq!(m.max_rtt, Duration::from_ns(9_960));
    assert_eq!(m.max_bdp, 77_000);
}

#[test]
fn metrics_skip_unrouted_pairs() {
    let t = star(2, G100, US).unwrap();
    let net = t.validate().unwrap();
    let empty = RoutingTable::from_fn(net.node_count(), net.hosts().len(), |_, _| Vec::new());
    assert_eq!(network_metrics(&net, &empty, 1000), NetworkMetrics::default());
    // A routing loop between two switches is "no route", not a hang.
    let d = dumbbell(1, 1, G100, G100, US).unwrap();
    let net = d.validate().unwrap();
    // Switch 2 -> port 1 (to switch 3), switch 3 -> port 1 (to switch 2): a loop.
    let looping =
        RoutingTable::from_fn(
            4,
            2,
            |n, _| {
                if n.0 >= 2 {
                    vec![PortNo(1)]
                } else {
                    vec![PortNo(0)]
                }
            },
        );
    assert_eq!(network_metrics(&net, &looping, 1000), NetworkMetrics::default());
}

#[test]
fn k16_fat_tree_routes() {
    // 1024 hosts, 320 switches: routing and metrics must stay cheap.
    let t = fat_tree(16, &FatTreeParams::default()).unwrap();
    let (net, routes) = routed(&t);
    assert_eq!(net.hosts().len(), 1024);
    // Edge 1024 (pod 0) toward the last host: 8 aggs up; agg toward another pod: 8 cores.
    assert_eq!(next_peers(&net, &routes, 1024, 1023).len(), 8);
    assert_eq!(next_peers(&net, &routes, 1024 + 128, 1023).len(), 8);
    let m = network_metrics(&net, &routes, 1000);
    assert_eq!(m.max_rtt, Duration::from_ns(12_000 + 6 * 80));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_leaf_spines_route_every_pair(
        leaves in 1usize..6,
        spines in 1usize..5,
        hosts_per_leaf in 1usize..5,
        seed in any::<u64>(),
    ) {
        let t = leaf_spine(leaves, spines, hosts_per_leaf, G100, G400, US).unwrap();
        let (net, routes) = routed(&t);
        let hosts = net.hosts().to_vec();
        prop_assert_eq!(hosts.len(), leaves * hosts_per_leaf);
        let mut rng = seed;
        for &s in &hosts {
            for &d in &hosts {
                if s == d { continue; }
                let hops = walk(&net, &routes, s, d, |_, c| {
                    rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (rng >> 33) as usize % c.len()
                });
                let hops = hops.expect("every pair is routed");
                let same_leaf = s.idx() / hosts_per_leaf == d.idx() / hosts_per_leaf;
                prop_assert_eq!(hops.len(), if same_leaf { 2 } else { 4 });
                let last = hops.last().unwrap();
                prop_assert_eq!(net.port(last.node, last.port).peer, d);
            }
        }
        prop_assert_eq!(network_metrics(&net, &routes, 1000), brute_metrics(&net, &routes, 1000));
    }

    #[test]
    fn parser_never_panics(text in "[0-9 a-zA-Z./\n-]{0,200}") {
        if let Ok(t) = parse_ns3(&text) {
            let _ = t.validate();
        }
    }

    #[test]
    fn parser_survives_mutated_files(pos in 0usize..60, ch in "[0-9 xG.\n-]") {
        let mut text = String::from("4 2 3\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 1us 0\n2 3 400Gbps 0.001ms 0\n");
        let pos = pos.min(text.len());
        text.insert_str(pos, &ch);
        if let Ok(t) = parse_ns3(&text) {
            if let Ok(net) = t.validate() {
                let routes = compute_routes(&net);
                let _ = network_metrics(&net, &routes, 1000);
            }
        }
    }
}

#[test]
fn alibaba_2pod_routes_and_base_rtts() {
    let p = Alibaba2PodParams::default();
    let (net, routes) = routed(&alibaba_2pod(&p).unwrap());
    // Every host reaches every other host (both NICs of a server included).
    for &s in net.hosts() {
        for &d in net.hosts() {
            if s != d {
                assert!(walk(&net, &routes, s, d, |_, _| 0).is_some(), "{s} -> {d}");
            }
        }
    }
    // ToR 16 (pod 0) toward host 8 (server 4, pod 1, on ToR 18): up to both aggs of pod 0;
    // agg 20 up to both cores; core 24 down to both aggs of pod 1; agg 22 down to ToR 18.
    assert_eq!(next_peers(&net, &routes, 16, 8), vec![20, 21]);
    assert_eq!(next_peers(&net, &routes, 20, 8), vec![24, 25]);
    assert_eq!(next_peers(&net, &routes, 24, 8), vec![22, 23]);
    assert_eq!(next_peers(&net, &routes, 22, 8), vec![18]);
    // The two NICs of server 0 (hosts 0 and 1, on ToRs 16 and 17) meet at the aggs.
    assert_eq!(next_peers(&net, &routes, 16, 1), vec![20, 21]);
    // Base RTTs with 1 us links and a 1000-byte payload (25G: 320 ns, 100G: 80 ns a hop):
    // across pods 6 links: 2 * 6 us + 2 * 320 + 4 * 80 = 12 960 ns, BDP 12 960 ns * 25G / 8
    // = 40 500 B; same pod, other ToR, 4 links: 8 us + 640 + 160 = 8 800 ns; same ToR
    // (hosts 0 and 2, NIC 0 of servers 0 and 1), 2 links: 4 us + 640 = 4 640 ns.
    let rtt = |s: u32, d: u32| pair_metrics(&net, &routes, NodeId(s), NodeId(d), 1000).unwrap();
    let across = rtt(0, 8);
    assert_eq!((across.rtt.as_ns(), across.bdp), (12_960, 40_500));
    assert_eq!(across.bottleneck, BitsPerSec::gbps(25));
    assert_eq!(rtt(0, 1).rtt.as_ns(), 8_800);
    assert_eq!(rtt(0, 2).rtt.as_ns(), 4_640);
    let m = network_metrics(&net, &routes, 1000);
    assert_eq!((m.max_rtt.as_ns(), m.max_bdp), (12_960, 40_500));
}

/// The routing rule written plainly, one BFS per destination host over nodes (the table's
/// documented rule, and what it computed before it grouped destinations by their switch):
/// the next hops of `node` toward `dst`.
fn oracle_next_hops(net: &Network, up: &[bool], node: NodeId, dst: NodeId) -> Vec<PortNo> {
    use dcsim_core::network::NodeKind;
    let is_up = |l: dcsim_core::ids::LinkId| up.is_empty() || up[l.idx()];
    let mut dist = vec![u32::MAX; net.node_count()];
    dist[dst.idx()] = 0;
    let mut queue = std::collections::VecDeque::from([dst]);
    while let Some(u) = queue.pop_front() {
        if u != dst && net.kind(u) == NodeKind::Host {
            continue;
        }
        for port in net.ports(u) {
            if dist[port.peer.idx()] == u32::MAX && is_up(port.link) {
                dist[port.peer.idx()] = dist[u.idx()] + 1;
                queue.push_back(port.peer);
            }
        }
    }
    let here = dist[node.idx()];
    if node == dst || here == u32::MAX {
        return Vec::new();
    }
    if net.kind(node) == NodeKind::Host {
        return vec![PortNo(0)];
    }
    let mut v: Vec<(NodeId, PortNo)> = net
        .ports(node)
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            is_up(p.link)
                && dist[p.peer.idx()].wrapping_add(1) == here
                && (p.peer == dst || net.kind(p.peer) == NodeKind::Switch)
        })
        .map(|(i, p)| (p.peer, PortNo(i as u16)))
        .collect();
    v.sort_unstable();
    v.into_iter().map(|(_, p)| p).collect()
}

/// Every entry of `RoutingTable::shortest_paths(net, up)` against the oracle.
fn assert_table_matches_oracle(net: &Network, up: &[bool]) {
    let routes = RoutingTable::shortest_paths(net, up);
    assert!(routes.is_grouped());
    for n in 0..net.node_count() {
        for (hi, &dst) in net.hosts().iter().enumerate() {
            let node = NodeId(n as u32);
            assert_eq!(
                routes.next_hops(node, hi),
                oracle_next_hops(net, up, node, dst).as_slice(),
                "node {n} toward host {dst:?}, links up {up:?}"
            );
        }
    }
}

#[test]
fn grouped_table_equals_the_per_destination_rule() {
    let topologies = [
        fat_tree(4, &FatTreeParams::default()).unwrap(),
        leaf_spine(4, 3, 3, G100, G400, US).unwrap(),
        dumbbell(3, 2, G100, G100, US).unwrap(),
        star(5, G100, US).unwrap(),
    ];
    for t in &topologies {
        let net = t.validate().unwrap();
        assert_table_matches_oracle(&net, &[]);
        // Every single link down, then every third link down.
        for l in 0..net.links().len() {
            let mut up = vec![true; net.links().len()];
            up[l] = false;
            assert_table_matches_oracle(&net, &up);
        }
        let up: Vec<bool> = (0..net.links().len()).map(|l| l % 3 != 0).collect();
        assert_table_matches_oracle(&net, &up);
    }
    // Two hosts linked directly, and a host pair beside a switch.
    use dcsim_core::network::{LinkSpec, NodeKind::*};
    let link = |a, b| LinkSpec { a: NodeId(a), b: NodeId(b), rate: G100, delay: US, loss: 0.0 };
    let direct = Network::new(vec![Host, Host], vec![link(0, 1)]).unwrap();
    assert_table_matches_oracle(&direct, &[]);
    assert_table_matches_oracle(&direct, &[false]);
    let mixed = Network::new(vec![Host, Host, Host, Switch], vec![link(0, 1), link(2, 3)]).unwrap();
    assert_table_matches_oracle(&mixed, &[]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Random failures on a k = 4 fat tree and a leaf-spine: the grouped table is the rule.
    #[test]
    fn grouped_table_equals_the_rule_under_random_failures(
        mask in proptest::collection::vec(proptest::bool::weighted(0.8), 48),
        which in 0usize..2,
    ) {
        let t = if which == 0 {
            fat_tree(4, &FatTreeParams::default()).unwrap()
        } else {
            leaf_spine(4, 3, 3, G100, G400, US).unwrap()
        };
        let net = t.validate().unwrap();
        let up: Vec<bool> = (0..net.links().len()).map(|l| mask[l % mask.len()]).collect();
        assert_table_matches_oracle(&net, &up);
    }
}
