//! Shapes of the built topologies: node and link counts, numbering, degrees.

use dcsim_core::ids::NodeId;
use dcsim_core::network::NodeKind;
use dcsim_core::units::{BitsPerSec, Duration};
use dcsim_topology::*;

const G100: BitsPerSec = BitsPerSec::gbps(100);
const G400: BitsPerSec = BitsPerSec::gbps(400);
const US: Duration = Duration::from_us(1);

/// Hosts are exactly the nodes `0..hosts`, and the topology validates.
fn hosts_first(t: &Topology, hosts: usize) {
    assert_eq!(t.host_count(), hosts);
    assert!(t.kinds[..hosts].iter().all(|k| *k == NodeKind::Host));
    assert!(t.kinds[hosts..].iter().all(|k| *k == NodeKind::Switch));
    t.validate().expect("builder output validates");
}

fn linked(t: &Topology, a: u32, b: u32) -> bool {
    t.links
        .iter()
        .any(|l| (l.a, l.b) == (NodeId(a), NodeId(b)) || (l.a, l.b) == (NodeId(b), NodeId(a)))
}

#[test]
fn paper_fat_tree_shape() {
    let t = paper_fat_tree();
    assert_eq!(t.node_count(), 376);
    assert_eq!(t.switch_count(), 56);
    assert_eq!(t.link_count(), 480);
    hosts_first(&t, 320);
    // Host h under ToR 320 + h/16.
    for h in 0..320u32 {
        assert_eq!(t.links[h as usize].a, NodeId(h));
        assert_eq!(t.links[h as usize].b, NodeId(320 + h / 16));
        assert_eq!(t.links[h as usize].rate, G100);
    }
    for tor in 320..340 {
        assert_eq!(t.degree(NodeId(tor)), 16 + 4, "ToR {tor}");
    }
    for agg in 340..360 {
        assert_eq!(t.degree(NodeId(agg)), 4 + 4, "Agg {agg}");
    }
    for core in 360..376 {
        assert_eq!(t.degree(NodeId(core)), 5, "core {core}");
    }
    // Full mesh inside pod 1 (ToRs 324..328, Aggs 344..348) and nothing across pods.
    assert!(linked(&t, 324, 344) && linked(&t, 327, 347));
    assert!(!linked(&t, 324, 340));
    // Agg i of every pod reaches cores 360+4i ..= 360+4i+3.
    assert!(linked(&t, 341, 364) && linked(&t, 345, 367) && linked(&t, 359, 375));
    assert!(!linked(&t, 341, 360));
    assert!(t.links[320..].iter().all(|l| l.rate == G400 && l.delay == US && l.loss == 0.0));
    // The same link order as the reference's mix/fat.txt.
    let text = write_ns3(&t);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "376 56 480");
    assert_eq!(lines[2], "0 320 100Gbps 1000ns 0");
    assert_eq!(lines[322], "320 340 400Gbps 1000ns 0");
    assert_eq!(lines[402], "340 360 400Gbps 1000ns 0");
    assert_eq!(lines[406], "341 364 400Gbps 1000ns 0");
    assert_eq!(lines[481], "359 375 400Gbps 1000ns 0");
}

#[test]
fn k_ary_fat_tree_shape() {
    for k in [2usize, 4, 8] {
        let t = fat_tree(k, &FatTreeParams::default()).unwrap();
        let hosts = k * k * k / 4;
        hosts_first(&t, hosts);
        assert_eq!(t.switch_count(), k * k + k * k / 4, "k={k}");
        assert_eq!(t.link_count(), 3 * hosts, "k={k}");
        // Every switch (edge, aggregation, core) has k ports.
        for s in t.switches() {
            assert_eq!(t.degree(s), k, "k={k} switch {s}");
        }
    }
}

#[test]
fn oversubscribed_fat_tree() {
    let p = FatTreeParams {
        oversubscription: 3,
        host_rate: BitsPerSec::gbps(25),
        fabric_rate: G100,
        delay: Duration::from_ns(500),
    };
    let t = fat_tree(4, &p).unwrap();
    hosts_first(&t, 16 * 3);
    // Edge switches (48..56) have 6 hosts and 2 uplinks.
    for e in 48..56 {
        assert_eq!(t.degree(NodeId(e)), 6 + 2);
    }
    assert!(t.links.iter().take(48).all(|l| l.rate == BitsPerSec::gbps(25)));
    assert!(t.links.iter().skip(48).all(|l| l.rate == G100));
    assert!(t.links.iter().all(|l| l.delay == Duration::from_ns(500)));
}

#[test]
fn fat_tree_argument_errors() {
    let d = FatTreeParams::default();
    let e = fat_tree(5, &d).unwrap_err();
    assert_eq!(e.to_string(), "fat_tree: k = 5 must be even and at least 2");
    assert!(fat_tree(0, &d).is_err());
    let e = fat_tree(4, &FatTreeParams { oversubscription: 0, ..d }).unwrap_err();
    assert_eq!(e.to_string(), "fat_tree: oversubscription factor must be at least 1");
    let e = fat_tree(4, &FatTreeParams { fabric_rate: BitsPerSec(0), ..d }).unwrap_err();
    assert_eq!(e.to_string(), "fat_tree: fabric_rate must be positive (got 0 bps)");
    let e = fat_tree(1 << 20, &d).unwrap_err();
    assert!(e.to_string().contains("more than 16777216 nodes"), "{e}");
    let e = fat_tree(usize::MAX - 1, &d).unwrap_err();
    assert!(matches!(e, TopologyError::InvalidArgument { builder: "fat_tree", .. }));
}

#[test]
fn clos_argument_errors() {
    let e = three_tier_clos(&ClosParams { cores_per_agg: 0, ..ClosParams::PAPER }).unwrap_err();
    assert_eq!(e.to_string(), "three_tier_clos: cores_per_agg must be at least 1");
    assert_eq!(three_tier_clos(&ClosParams::default()).unwrap(), paper_fat_tree());
}

#[test]
fn leaf_spine_shape() {
    let t = leaf_spine(3, 4, 5, G100, G400, US).unwrap();
    hosts_first(&t, 15);
    assert_eq!(t.switch_count(), 7);
    assert_eq!(t.link_count(), 15 + 12);
    for leaf in 15..18 {
        assert_eq!(t.degree(NodeId(leaf)), 5 + 4);
    }
    for spine in 18..22 {
        assert_eq!(t.degree(NodeId(spine)), 3);
    }
    assert_eq!(t.links[7].b, NodeId(16)); // host 7 on leaf 15 + 7/5
    let e = leaf_spine(0, 4, 5, G100, G400, US).unwrap_err();
    assert_eq!(e.to_string(), "leaf_spine: leaves must be at least 1");
    let e = leaf_spine(2, 0, 5, G100, G400, US).unwrap_err();
    assert_eq!(e.to_string(), "leaf_spine: spines must be at least 1");
    let e = leaf_spine(2, 2, 0, G100, G400, US).unwrap_err();
    assert_eq!(e.to_string(), "leaf_spine: hosts_per_leaf must be at least 1");
    let e = leaf_spine(2, 2, 2, BitsPerSec(0), G400, US).unwrap_err();
    assert_eq!(e.to_string(), "leaf_spine: host_rate must be positive (got 0 bps)");
}

#[test]
fn dumbbell_shape() {
    let t = dumbbell(3, 2, G100, BitsPerSec::gbps(10), US).unwrap();
    hosts_first(&t, 5);
    assert_eq!(t.switch_count(), 2);
    assert_eq!(t.link_count(), 6);
    assert_eq!(t.degree(NodeId(5)), 3 + 1);
    assert_eq!(t.degree(NodeId(6)), 2 + 1);
    let last = t.links[5];
    assert_eq!((last.a, last.b, last.rate), (NodeId(5), NodeId(6), BitsPerSec::gbps(10)));
    assert_eq!(t.links[2].b, NodeId(5));
    assert_eq!(t.links[3].b, NodeId(6));
    let e = dumbbell(0, 2, G100, G100, US).unwrap_err();
    assert_eq!(e.to_string(), "dumbbell: left_hosts must be at least 1");
    let e = dumbbell(1, 2, G100, BitsPerSec(0), US).unwrap_err();
    assert_eq!(e.to_string(), "dumbbell: bottleneck_rate must be positive (got 0 bps)");
}

#[test]
fn star_shape() {
    let t = star(8, G100, US).unwrap();
    hosts_first(&t, 9); // senders 0..8, receiver 8
    assert_eq!(t.switch_count(), 1);
    assert_eq!(t.degree(NodeId(9)), 9);
    assert_eq!(t.link_count(), 9);
    let e = star(0, G100, US).unwrap_err();
    assert_eq!(e.to_string(), "star: senders must be at least 1");
}
