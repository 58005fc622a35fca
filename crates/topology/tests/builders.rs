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
    assert!(matches!(e, TopologyError::TooLarge { builder: "fat_tree", .. }));
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

#[test]
fn alibaba_2pod_testbed_shape() {
    let p = Alibaba2PodParams::default();
    assert_eq!(p, Alibaba2PodParams::TESTBED);
    let t = alibaba_2pod(&p).unwrap();
    // 8 servers x 2 NICs = 16 hosts (0..16), ToRs 16..20 (pod 0: 16, 17; pod 1: 18, 19),
    // aggregation switches 20..24 (pod 0: 20, 21; pod 1: 22, 23), cores 24, 25.
    hosts_first(&t, 16);
    assert_eq!(t.switch_count(), 10);
    assert_eq!(t.node_count(), 26);
    assert_eq!(t.link_count(), 16 + 8 + 8);
    let g25 = BitsPerSec::gbps(25);
    for (h, l) in t.links[..16].iter().enumerate() {
        // Host h is NIC h % 2 of server h / 2, in pod (h / 2) / 4, on ToR (h % 2) of that pod.
        let (server, nic) = (h / 2, h % 2);
        let tor = 16 + (server / 4) * 2 + nic;
        assert_eq!(
            (l.a, l.b, l.rate, l.delay),
            (NodeId::from_idx(h), NodeId::from_idx(tor), g25, US)
        );
        assert_eq!(p.host_of(server, nic), NodeId::from_idx(h));
        assert_eq!(t.degree(NodeId::from_idx(h)), 1, "host {h}");
    }
    for server in 0..8 {
        // The two NICs of a server: two different ToRs of the same pod.
        let tor_of = |nic: usize| t.links[server * 2 + nic].b.0;
        let (a, b) = (tor_of(0), tor_of(1));
        assert_ne!(a, b, "server {server}");
        assert_eq!((a - 16) / 2, (b - 16) / 2, "server {server}: same pod");
        assert_eq!((a - 16) / 2, server as u32 / 4);
    }
    // Full mesh inside each pod, nothing across pods; every agg on every core.
    for (tors, aggs) in [([16, 17], [20, 21]), ([18, 19], [22, 23])] {
        for tor in tors {
            assert_eq!(t.degree(NodeId(tor)), 4 + 2, "ToR {tor}: 4 NICs, 2 aggs");
            for agg in aggs {
                assert!(linked(&t, tor, agg));
            }
        }
    }
    assert!(!linked(&t, 16, 22) && !linked(&t, 19, 20));
    for agg in 20..24 {
        assert_eq!(t.degree(NodeId(agg)), 2 + 2);
        assert!(linked(&t, agg, 24) && linked(&t, agg, 25));
    }
    for core in [24, 25] {
        assert_eq!(t.degree(NodeId(core)), 4);
    }
    assert!(t.links[16..].iter().all(|l| l.rate == G100 && l.delay == US && l.loss == 0.0));
}

#[test]
fn alibaba_2pod_single_homed_and_larger() {
    // One NIC per server: server s on ToR (s mod 4) mod 2 of its pod; host s is server s.
    let p = Alibaba2PodParams { nics_per_server: 1, ..Alibaba2PodParams::default() };
    let t = alibaba_2pod(&p).unwrap();
    hosts_first(&t, 8);
    assert_eq!((t.switch_count(), t.link_count()), (10, 8 + 8 + 8));
    let tors: Vec<u32> = t.links[..8].iter().map(|l| l.b.0).collect();
    assert_eq!(tors, [8, 9, 8, 9, 10, 11, 10, 11]);
    // 3 pods of 3 ToRs, 2 aggs, 4 cores, 9 servers (3 per pod) with 2 NICs: the pod's NICs
    // are dealt round robin over its ToRs, so a server's two NICs are on distinct ToRs.
    let p = Alibaba2PodParams {
        pods: 3,
        tors_per_pod: 3,
        aggs_per_pod: 2,
        cores: 4,
        servers: 9,
        ..Alibaba2PodParams::default()
    };
    let t = alibaba_2pod(&p).unwrap();
    hosts_first(&t, 18);
    assert_eq!(t.switch_count(), 9 + 6 + 4);
    assert_eq!(t.link_count(), 18 + 9 * 2 + 6 * 4);
    let tor_index: Vec<u32> = t.links[..6].iter().map(|l| l.b.0 - 18).collect();
    assert_eq!(tor_index, [0, 1, 2, 0, 1, 2]);
    for s in 0..9 {
        let (a, b) = (t.links[2 * s].b.0 - 18, t.links[2 * s + 1].b.0 - 18);
        assert_ne!(a, b);
        assert_eq!((a / 3, b / 3), (s as u32 / 3, s as u32 / 3));
    }
    for tor in 18..27 {
        assert_eq!(t.degree(NodeId(tor)), 2 + 2, "ToR {tor}: 2 NICs, 2 aggs");
    }
}

#[test]
fn alibaba_2pod_argument_errors() {
    let d = Alibaba2PodParams::default();
    let err = |p: Alibaba2PodParams| alibaba_2pod(&p).unwrap_err().to_string();
    assert_eq!(err(Alibaba2PodParams { pods: 0, ..d }), "alibaba_2pod: pods must be at least 1");
    assert_eq!(err(Alibaba2PodParams { cores: 0, ..d }), "alibaba_2pod: cores must be at least 1");
    assert_eq!(
        err(Alibaba2PodParams { servers: 0, ..d }),
        "alibaba_2pod: servers must be at least 1"
    );
    assert_eq!(
        err(Alibaba2PodParams { servers: 7, ..d }),
        "alibaba_2pod: servers = 7 must be a multiple of pods = 2 (servers are split evenly)"
    );
    for n in [0, 3] {
        assert_eq!(
            err(Alibaba2PodParams { nics_per_server: n, ..d }),
            format!("alibaba_2pod: nics_per_server = {n} must be 1 or 2")
        );
    }
    assert_eq!(
        err(Alibaba2PodParams { tors_per_pod: 1, ..d }),
        "alibaba_2pod: nics_per_server = 2 needs at least as many ToRs per PoD, found \
         tors_per_pod = 1"
    );
    assert_eq!(
        err(Alibaba2PodParams { host_rate: BitsPerSec(0), ..d }),
        "alibaba_2pod: host_rate must be positive (got 0 bps)"
    );
    assert!(err(Alibaba2PodParams { servers: 1 << 30, ..d }).contains("more than"));
    // One ToR per pod is fine with one NIC per server.
    assert!(alibaba_2pod(&Alibaba2PodParams { tors_per_pod: 1, nics_per_server: 1, ..d }).is_ok());
}
