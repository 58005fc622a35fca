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
use dcsim::pint::{HpccPintFactory, HpccPintParams};
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

#[test]
fn hpcc_pint() {
    let f = HpccPintFactory::from(HpccPintParams::default());
    both_cases("hpcc-pint", f, cfg(WindowMode::Variable, false, false));
}

/// HPCC-PINT reacts to its digests only, so what RED does cannot change its flows: with RED
/// marking thousands of packets and with ECN off, every flow ends at the same picosecond. The
/// digests' random rounding draws from a stream of its own at each port, as the reference
/// draws it from C's `rand()` and RED's from ns-3's generator; when it shared the link's
/// stream with RED, each marking draw shifted every later digest, and the runs differed.
#[test]
fn hpcc_pint_flows_do_not_depend_on_reds_draws() {
    let run = |ecn: bool| {
        let mut c = cfg(WindowMode::Variable, false, false);
        c.switch.ecn_enabled = ecn;
        // Thresholds low enough that the incast's queues mark.
        let e = |kb: u64| EcnParams { kmin: Bytes(kb * 1000), kmax: Bytes(kb * 10_000), pmax: 0.2 };
        c.switch.ecn = vec![(BitsPerSec::gbps(100), e(5)), (BitsPerSec::gbps(400), e(20))];
        let us = Duration::from_us(1);
        let t = topology::leaf_spine(4, 2, 16, BitsPerSec::gbps(100), BitsPerSec::gbps(400), us)
            .unwrap();
        let net = t.validate().unwrap();
        let routes = topology::compute_routes(&net);
        let flows = (0..16).map(|i| flow(i, 16 + i as u32, 0, 500_000)).collect();
        let f = HpccPintFactory::from(HpccPintParams::default());
        let mut sim = Simulation::new(net, routes, c, flows, f).unwrap();
        let s = sim.run();
        assert_eq!(s.flows_done, 16);
        let fcts: Vec<_> = sim.flow_results().iter().map(|r| r.fct.unwrap()).collect();
        (fcts, sim.counters().ecn_marks)
    };
    let (marked, marks) = run(true);
    let (unmarked, none) = run(false);
    assert!(marks > 1000, "RED marks the incast's packets: {marks}");
    assert_eq!(none, 0);
    assert_eq!(marked, unmarked, "the same FCTs with and without RED's marking");
}

/// A flow that starts at the very picosecond a frame of another flow of its host ends: with
/// flow starts first it finds the link free and sends at once; after the events already
/// queued (the reference's order) the other flow's transmission-done runs first and sends its
/// next frame, so the new flow's first frame waits one frame time. A start off the tie runs
/// alike in both orders, and each order gives the same results on one thread or two.
#[test]
fn a_flow_starting_as_a_frame_ends_follows_the_queued_events_in_the_references_order() {
    use dcsim::core::config::FlowStartOrder;
    use dcsim::core::Partition;
    let run = |order: FlowStartOrder, start_b: Time, threads: usize| {
        let t = topology::leaf_spine(
            2,
            1,
            2,
            BitsPerSec::gbps(100),
            BitsPerSec::gbps(400),
            Duration::from_us(1),
        )
        .unwrap();
        let net = t.validate().unwrap();
        let routes = topology::compute_routes(&net);
        let mut c = SimConfig::default();
        c.switch.ecn_enabled = false;
        c.flow_start = order;
        let mut a = flow(0, 0, 2, 1_000_000);
        a.start = Time::ZERO;
        let mut b = flow(1, 0, 3, 10_000);
        b.start = start_b;
        let part = if threads > 1 {
            Partition::by_rack(&net, threads)
        } else {
            Partition::single(net.node_count())
        };
        let mut sim =
            Simulation::with_partition(net, routes, c, vec![a, b], NoCcFactory, part).unwrap();
        sim.set_threads(threads);
        assert_eq!(sim.run().flows_done, 2);
        sim.flow_results().iter().map(|r| r.fct.unwrap()).collect::<Vec<_>>()
    };
    // Frames of 1,000 B and 48 B of headers at 100 Gb/s, back to back from 0: the 100th
    // ends at 100 x 83.84 ns.
    let frame = Duration::from_ps(1048 * 80);
    let tie = Time::ZERO + frame * 100;
    let first = run(FlowStartOrder::First, tie, 1);
    let queued = run(FlowStartOrder::AfterQueued, tie, 1);
    assert!(queued[1] > first[1], "B waits behind A's next frame: {first:?} {queued:?}");
    assert_eq!(run(FlowStartOrder::AfterQueued, tie, 2), queued);
    let off = tie + Duration::from_ps(1);
    assert_eq!(run(FlowStartOrder::First, off, 1), run(FlowStartOrder::AfterQueued, off, 1));
}
