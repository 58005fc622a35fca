//! TCP flows through the engine: completion, exactly-once in-order delivery, conservation,
//! determinism across thread counts, and queue disciplines on the bottleneck.

use dcsim::aqm::{codel::CoDelParams, QdiscConfig};
use dcsim::core::cc::NoCcFactory;
use dcsim::core::config::{FlowSpec, PortQdisc, SimConfig, TcpGroup, Transport};
use dcsim::core::ids::{FlowId, NodeId, PortNo};
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::{Partition, Simulation};
use dcsim::tcp::{CcaConfig, TcpConfig};
use dcsim::topology as topo;

/// `n` senders on the left of a dumbbell, one receiver on the right.
fn dumbbell(n: usize, bottleneck: BitsPerSec) -> (dcsim::core::network::Network, dcsim::core::network::RoutingTable) {
    let t = topo::dumbbell(n, 1, BitsPerSec::gbps(1), bottleneck, Duration::from_us(500)).unwrap();
    let net = t.validate().unwrap();
    let routes = topo::compute_routes(&net);
    (net, routes)
}

fn flow(id: u32, src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
    FlowSpec { id: FlowId(id), src: NodeId(src), dst: NodeId(dst), size, start, pg: 3, dport: 100 }
}

fn tcp_cfg(cca: CcaConfig, tcp: TcpConfig, flows: usize) -> SimConfig {
    let mut cfg = SimConfig::default();
    cfg.switch.ecn_enabled = false;
    cfg.switch.pfc_enabled = false;
    cfg.stop_time = Time::from_ns(60_000_000_000);
    cfg.tcp_groups = vec![TcpGroup { name: "g".into(), tcp, cca }];
    cfg.flow_transport = vec![Transport::Tcp(0); flows];
    cfg
}

fn assert_sound(sim: &Simulation<NoCcFactory>) {
    let c = sim.counters();
    assert_eq!(
        c.data_bytes_sent,
        c.data_bytes_delivered + c.data_bytes_dropped + sim.data_bytes_in_flight(),
        "bytes sent = delivered + dropped + in flight: {c:?}"
    );
    for r in sim.flow_results() {
        let rx = sim.tcp_receiver(r.id).expect("every flow received something");
        assert_eq!(rx.delivered(), r.size, "flow {} delivered every byte in order once", r.id);
        assert!(r.fct.is_some(), "flow {} completed", r.id);
        assert!(r.fct.unwrap() >= r.ideal_fct, "no flow beats its ideal FCT");
    }
    assert!(sim.is_quiescent(), "queues and MMU counters return to zero");
}

#[test]
fn newreno_flows_share_a_drop_tail_bottleneck_and_complete() {
    let (net, routes) = dumbbell(4, BitsPerSec::mbps(100));
    let flows: Vec<FlowSpec> =
        (0..4).map(|i| flow(i, i, 4, 2_000_000, Time::from_ns(i as u64 * 1_000_000))).collect();
    let mut cfg = tcp_cfg(CcaConfig::NewReno(Default::default()), TcpConfig::dc_newreno(), 4);
    // A 100-packet drop-tail buffer at the bottleneck (left switch 5, port towards switch 6).
    let port = PortNo(net.ports(NodeId(5)).iter().position(|p| p.peer == NodeId(6)).unwrap() as u16);
    let fifo = dcsim::aqm::fifo::FifoParams { limit_bytes: None, limit_packets: Some(100) };
    cfg.switch.qdiscs = vec![PortQdisc { node: NodeId(5), port, classes: 0xfe, qdisc: QdiscConfig::Fifo(fifo) }];
    let mut sim = Simulation::new(net, routes, cfg, flows, NoCcFactory).unwrap();
    sim.run();
    assert_sound(&sim);
    let c = sim.counters();
    assert!(c.qdisc_overflow_drops > 0, "four NewReno flows overflow 100 packets: {c:?}");
    assert!(c.tcp_retransmits > 0 && c.tcp_recoveries > 0, "{c:?}");
}

#[test]
fn cubic_through_codel_completes_and_is_identical_on_several_threads() {
    let run = |threads: usize| {
        let (net, routes) = dumbbell(3, BitsPerSec::mbps(50));
        let flows: Vec<FlowSpec> =
            (0..3).map(|i| flow(i, i, 3, 1_000_000 + i as u64 * 77_777, Time::ZERO)).collect();
        let mut cfg = tcp_cfg(CcaConfig::Cubic(Default::default()), TcpConfig::linux(), 3);
        let port = PortNo(net.ports(NodeId(4)).iter().position(|p| p.peer == NodeId(5)).unwrap() as u16);
        let codel = CoDelParams { ecn: false, ..CoDelParams::default() };
        cfg.switch.qdiscs = vec![PortQdisc { node: NodeId(4), port, classes: 0xfe, qdisc: QdiscConfig::CoDel(codel) }];
        let part = if threads == 1 {
            Partition::single(net.node_count())
        } else {
            Partition::round_robin(net.node_count(), threads)
        };
        let mut sim = Simulation::with_partition(net, routes, cfg, flows, NoCcFactory, part).unwrap();
        sim.set_threads(threads);
        sim.run();
        assert_sound(&sim);
        (sim.flow_results().to_vec(), *sim.counters())
    };
    let (r1, c1) = run(1);
    assert!(c1.aqm_drops > 0, "CoDel drops Not-ECT CUBIC: {c1:?}");
    for t in [2, 3] {
        let (r, c) = run(t);
        assert_eq!(r, r1, "{t} threads");
        assert_eq!(c.data_bytes_delivered, c1.data_bytes_delivered);
        assert_eq!(c.aqm_drops, c1.aqm_drops);
    }
}
