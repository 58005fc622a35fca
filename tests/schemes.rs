//! The same fabric cases for every congestion-control scheme: a 16-to-1 incast across a
//! leaf-spine and a 4-flow dumbbell both complete, with zero drops, bytes conserved, and every
//! queue, MMU counter and pause back at zero at the end.

use dcsim::baselines::dcqcn::DcqcnFactory;
use dcsim::baselines::dctcp::DctcpFactory;
use dcsim::baselines::timely::TimelyFactory;
use dcsim::core::cc::{CcFactory, NoCcFactory};
use dcsim::core::config::{EcnParams, FlowSpec, SimConfig, WindowMode};
use dcsim::core::ids::{FlowId, NodeId};
use dcsim::core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim::core::Simulation;
use dcsim::hpcc::HpccFactory;
use dcsim::topology::{self, Topology};

/// The reference run script's per-scheme NIC settings (spec §5.1).
fn cfg(window: WindowMode, ack_high_prio: bool, dctcp_ecn: bool) -> SimConfig {
    let mut c = SimConfig::default();
    c.nic.window = window;
    c.nic.ack_high_prio = ack_high_prio;
    c.stop_time = Time::from_ns(100_000_000);
    if dctcp_ecn {
        let e = |kb: u64| EcnParams { kmin: Bytes(kb * 1000), kmax: Bytes(kb * 1000), pmax: 1.0 };
        c.switch.ecn = vec![(BitsPerSec::gbps(100), e(300)), (BitsPerSec::gbps(400), e(1200))];
    }
    c
}

fn flow(i: usize, src: u32, dst: u32, size: u64) -> FlowSpec {
    let start = Time::from_ns(i as u64 * 50);
    FlowSpec {
        id: FlowId(i as u32),
        src: NodeId(src),
        dst: NodeId(dst),
        size,
        start,
        pg: 3,
        dport: 100,
    }
}

fn check<F: CcFactory>(
    name: &str,
    case: &str,
    t: Topology,
    flows: Vec<FlowSpec>,
    c: SimConfig,
    f: F,
) {
    let net = t.validate().unwrap();
    let routes = topology::compute_routes(&net);
    let n = flows.len();
    let mut sim = Simulation::new(net, routes, c, flows, f).unwrap();
    let s = sim.run();
    let k = sim.counters();
    assert_eq!(s.flows_done, n, "{name} {case}: {s:?}");
    assert_eq!(k.mmu_drops + k.no_route_drops + k.link_losses, 0, "{name} {case}: {k:?}");
    assert_eq!(k.data_bytes_sent, k.data_bytes_delivered + k.data_bytes_dropped, "{name} {case}");
    assert_eq!(k.data_bytes_retransmitted, 0, "{name} {case}");
    assert!(sim.is_quiescent(), "{name} {case}: not quiescent");
    for r in sim.flow_results() {
        assert!(r.fct.unwrap() >= r.ideal_fct, "{name} {case}: faster than ideal: {r:?}");
    }
}

fn both_cases<F: CcFactory + Clone>(name: &str, f: F, c: SimConfig) {
    let us = Duration::from_us(1);
    let ls =
        topology::leaf_spine(4, 2, 16, BitsPerSec::gbps(100), BitsPerSec::gbps(400), us).unwrap();
    let incast = (0..16).map(|i| flow(i, 16 + i as u32, 0, 500_000)).collect();
    check(name, "16-to-1 incast", ls, incast, c.clone(), f.clone());
    let db = topology::dumbbell(4, 4, BitsPerSec::gbps(100), BitsPerSec::gbps(100), us).unwrap();
    let pairs = (0..4).map(|i| flow(i, i as u32, 4 + i as u32, 2_000_000)).collect();
    check(name, "4-flow dumbbell", db, pairs, c, f);
}

#[test]
fn none() {
    both_cases("none", NoCcFactory, cfg(WindowMode::None, false, false));
}

#[test]
fn hpcc() {
    both_cases("hpcc", HpccFactory::default(), cfg(WindowMode::Variable, false, false));
}

#[test]
fn dcqcn() {
    both_cases("dcqcn", DcqcnFactory::default(), cfg(WindowMode::None, true, false));
}

#[test]
fn dcqcn_w() {
    both_cases("dcqcn-w", DcqcnFactory::default(), cfg(WindowMode::Variable, false, false));
}

#[test]
fn timely() {
    both_cases("timely", TimelyFactory::default(), cfg(WindowMode::None, true, false));
}

#[test]
fn timely_w() {
    both_cases("timely-w", TimelyFactory::default(), cfg(WindowMode::Variable, true, false));
}

#[test]
fn dctcp() {
    both_cases("dctcp", DctcpFactory::default(), cfg(WindowMode::Variable, false, true));
}
