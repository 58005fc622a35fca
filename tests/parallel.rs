//! The parallel engine gives exactly the sequential results: for 1–4 threads and several
//! partitionings, every flow's FCT and every counter equal those of the one-shard run, on an
//! incast, web-search traffic on a leaf-spine, web-search traffic on the paper fat tree, and
//! (with up to 16 threads) on a k = 8 fat tree.

use dcsim::core::cc::CcFactory;
use dcsim::core::config::{FlowSpec, SimConfig, WindowMode};
use dcsim::core::ids::{FlowId, NodeId};
use dcsim::core::network::Network;
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::{Partition, Simulation};
use dcsim::hpcc::HpccFactory;
use dcsim::topology::{self, Topology};
use dcsim::workload::{Cdf, Interpolation, PoissonWorkload};

fn run<F: CcFactory + Clone>(
    t: &Topology,
    flows: &[FlowSpec],
    cfg: &SimConfig,
    f: &F,
    part: impl Fn(&Network) -> Partition,
    threads: usize,
) -> Simulation<F> {
    let net = t.validate().unwrap();
    let routes = topology::compute_routes(&net);
    let p = part(&net);
    let mut sim =
        Simulation::with_partition(net, routes, cfg.clone(), flows.to_vec(), f.clone(), p).unwrap();
    sim.set_threads(threads);
    let traced: Vec<FlowId> = flows.iter().take(8).map(|f| f.id).collect();
    sim.trace_hop_latency(&traced).unwrap();
    sim.run();
    sim
}

fn check_all<F: CcFactory + Clone>(
    name: &str,
    t: Topology,
    flows: Vec<FlowSpec>,
    cfg: SimConfig,
    f: F,
) {
    check_threads(name, t, flows, cfg, f, &[1, 2, 3, 4]);
}

/// [`check_all`] with the given thread counts (each run partitioned into at least two shards).
fn check_threads<F: CcFactory + Clone>(
    name: &str,
    t: Topology,
    flows: Vec<FlowSpec>,
    cfg: SimConfig,
    f: F,
    thread_counts: &[usize],
) {
    let seq = run(&t, &flows, &cfg, &f, |net| Partition::single(net.node_count()), 1);
    assert!(seq.summary().flows_done > 0, "{name}: nothing completed");
    let trace = seq.hop_trace();
    assert!(!trace.is_empty(), "{name}: the traced flows crossed switches");
    type Part = fn(&Network, usize) -> Partition;
    let parts: [(&str, Part); 2] = [
        ("by rack", |net, n| Partition::by_rack(net, n)),
        ("round robin", |net, n| Partition::round_robin(net.node_count(), n)),
    ];
    for (pname, part) in parts {
        for &threads in thread_counts {
            let par = run(&t, &flows, &cfg, &f, |net| part(net, threads.max(2)), threads);
            assert!(par.shards() > 1, "{name}/{pname}: expected several shards");
            assert_eq!(par.flow_results(), seq.flow_results(), "{name}/{pname}/{threads} threads");
            assert_eq!(par.counters(), seq.counters(), "{name}/{pname}/{threads} threads");
            assert_eq!(par.summary(), seq.summary(), "{name}/{pname}/{threads} threads");
            assert!(par.hop_trace() == trace, "{name}/{pname}/{threads} threads: hop trace");
            assert!(par.is_quiescent() == seq.is_quiescent());
        }
    }
}

/// 64 hosts on 4 leaves and 2 spines, 100/400 Gb/s, 1 us (the calibration fabric).
fn calibration_fabric() -> Topology {
    topology::leaf_spine(
        4,
        2,
        16,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(400),
        Duration::from_us(1),
    )
    .unwrap()
}

fn hpcc_cfg() -> SimConfig {
    let mut c = SimConfig::default();
    c.nic.window = WindowMode::Variable;
    c
}

fn websearch(hosts: usize, duration_us: u64, seed: u64) -> Vec<FlowSpec> {
    websearch_on((0..hosts as u32).map(NodeId).collect(), duration_us, seed)
}

fn websearch_on(hosts: Vec<NodeId>, duration_us: u64, seed: u64) -> Vec<FlowSpec> {
    PoissonWorkload {
        cdf: Cdf::builtin("websearch").unwrap(),
        hosts,
        host_rate: BitsPerSec::gbps(100),
        load: 0.3,
        start: Time::ZERO,
        duration: Duration::from_us(duration_us),
        seed,
        interpolation: Interpolation::Linear,
    }
    .generate()
    .unwrap()
    .into_iter()
    // keep the test fast: cap flow sizes
    .map(|mut f| {
        f.size = f.size.min(300_000);
        f
    })
    .collect()
}

#[test]
fn incast_is_partition_independent() {
    let t = calibration_fabric();
    let flows = (0..32)
        .map(|i| FlowSpec {
            id: FlowId(i),
            src: NodeId(16 + i),
            dst: NodeId(0),
            size: 200_000,
            start: Time::ZERO,
            pg: 3,
            dport: 200,
        })
        .collect();
    check_all("incast", t, flows, hpcc_cfg(), HpccFactory::default());
}

#[test]
fn websearch_on_leaf_spine_is_partition_independent() {
    let t = calibration_fabric();
    check_all("leaf-spine", t, websearch(64, 300, 5), hpcc_cfg(), HpccFactory::default());
}

#[test]
fn websearch_on_paper_fat_tree_is_partition_independent() {
    let t = topology::paper_fat_tree();
    check_all("fat tree", t, websearch(320, 60, 9), hpcc_cfg(), HpccFactory::default());
}

/// A k = 8 fat tree (128 hosts, 80 switches) at 1, 2, 4, 8 and 16 threads, both partitioners.
#[test]
fn websearch_on_k8_fat_tree_is_partition_independent() {
    let t = topology::fat_tree(8, &topology::FatTreeParams::default()).unwrap();
    let flows = websearch_on(t.hosts().collect(), 400, 11);
    check_threads(
        "k = 8 fat tree",
        t,
        flows,
        hpcc_cfg(),
        HpccFactory::default(),
        &[1, 2, 4, 8, 16],
    );
}

#[test]
fn zero_delay_cut_falls_back_to_one_shard() {
    let t = topology::star(3, BitsPerSec::gbps(100), Duration::ZERO).unwrap();
    let net = t.validate().unwrap();
    let routes = topology::compute_routes(&net);
    let p = Partition::round_robin(net.node_count(), 2);
    let sim = Simulation::with_partition(
        net,
        routes,
        SimConfig::default(),
        vec![],
        HpccFactory::default(),
        p,
    )
    .unwrap();
    assert_eq!(sim.shards(), 1);
    assert!(sim.fallback().unwrap().contains("zero propagation delay"));
}
