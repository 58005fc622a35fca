//! Whole-fabric acceptance tests of the core with the `none` scheme: ideal FCT on idle paths,
//! lossless incast under PFC, ECMP spread, determinism and conservation.

use dcsim::core::cc::NoCcFactory;
use dcsim::core::config::{FlowSpec, SimConfig};
use dcsim::core::ids::{FlowId, NodeId, PortNo};
use dcsim::core::network::{Network, RoutingTable};
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::Simulation;
use dcsim::topology::{self as topo, Topology};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn build(t: Topology) -> (Network, RoutingTable) {
    let net = t.validate().expect("valid topology");
    let routes = topo::compute_routes(&net);
    (net, routes)
}

fn flow(id: usize, src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
    FlowSpec {
        id: FlowId(id as u32),
        src: NodeId(src),
        dst: NodeId(dst),
        size,
        start,
        pg: 3,
        dport: 100,
    }
}

fn run(t: Topology, flows: Vec<FlowSpec>, cfg: SimConfig) -> Simulation<NoCcFactory> {
    let (net, routes) = build(t);
    let mut sim = Simulation::new(net, routes, cfg, flows, NoCcFactory).expect("valid inputs");
    sim.run();
    sim
}

/// Every fabric test ends with these: bytes conserved, all queues and MMU counters at zero.
fn assert_conserved(sim: &Simulation<NoCcFactory>) {
    let c = sim.counters();
    assert_eq!(
        c.data_bytes_sent,
        c.data_bytes_delivered + c.data_bytes_dropped + sim.data_bytes_in_flight(),
        "bytes sent = delivered + dropped + in flight: {c:?}"
    );
    assert!(sim.is_quiescent(), "queues, MMU counters and pauses return to zero");
}

#[test]
fn ideal_fct_closed_form_one_switch() {
    // host 0 -- switch -- host 1, 100 Gb/s, 1 us. One 1000 B packet: 1048 B data takes
    // 83.84 ns per hop, a 60 B ACK 4.8 ns per hop, plus 4 propagation delays.
    let t = topo::star(1, BitsPerSec::gbps(100), Duration::from_us(1)).unwrap();
    let sim = run(t.clone(), vec![flow(0, 0, 1, 1000, Time::ZERO)], SimConfig::default());
    let r = sim.flow_results()[0];
    assert_eq!(r.ideal_fct, Duration::from_ps(2 * 83_840 + 2 * 4_800 + 4_000_000));
    assert_eq!(r.fct, Some(r.ideal_fct));
    // Three packets pipeline through two equal hops: (3 + 2 - 1) * 83.84 ns.
    let sim = run(t, vec![flow(0, 0, 1, 3000, Time::ZERO)], SimConfig::default());
    let r = sim.flow_results()[0];
    assert_eq!(r.ideal_fct, Duration::from_ps(4 * 83_840 + 2 * 4_800 + 4_000_000));
    assert_eq!(r.fct, Some(r.ideal_fct));
    assert_conserved(&sim);
}

#[test]
fn hop_latency_trace_is_queueing_plus_serialization() {
    // Hosts 0 and 1 each send one 1000 B packet to host 2 at time 0 through one switch. Both
    // arrive at the switch together; one leaves after its own 83.84 ns of serialization, the
    // other waits for it first (167.68 ns). Flow 2 (host 3 to 0) is not traced.
    let t = topo::star(3, BitsPerSec::gbps(100), Duration::from_us(1)).unwrap();
    let (net, routes) = build(t);
    let flows = vec![
        flow(0, 0, 2, 1000, Time::ZERO),
        flow(1, 1, 2, 1000, Time::ZERO),
        flow(2, 3, 0, 5000, Time::ZERO),
    ];
    let mut sim =
        Simulation::new(net, routes, SimConfig::default(), flows, NoCcFactory).expect("valid");
    sim.trace_hop_latency(&[FlowId(0), FlowId(1)]).unwrap();
    assert!(sim.trace_hop_latency(&[FlowId(3)]).is_err(), "flow 3 does not exist");
    sim.run();
    let trace = sim.hop_trace();
    assert_eq!(trace.len(), 2, "{trace:?}");
    assert_eq!((trace[0].flow, trace[1].flow), (FlowId(0), FlowId(1)));
    let mut lat: Vec<u64> = trace.iter().map(|h| h.latency.as_ps()).collect();
    lat.sort_unstable();
    assert_eq!(lat, [83_840, 2 * 83_840]);
    let arrival = Time::from_ps(1_000_000 + 83_840);
    assert_eq!(trace.iter().map(|h| h.sent).min(), Some(arrival));

    // Three switches on a leaf-spine path: three samples per packet, on distinct switches,
    // sent in path order; on an idle path each is the serialization at the egress rate.
    let t = topo::leaf_spine(
        2,
        2,
        2,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(400),
        Duration::from_us(1),
    )
    .unwrap();
    let (net, routes) = build(t);
    let mut sim = Simulation::new(
        net,
        routes,
        SimConfig::default(),
        vec![flow(0, 0, 3, 2000, Time::ZERO)],
        NoCcFactory,
    )
    .expect("valid");
    sim.trace_hop_latency(&[FlowId(0)]).unwrap();
    sim.run();
    let trace = sim.hop_trace();
    assert_eq!(trace.len(), 6);
    for pkt in trace.chunks(3) {
        assert!(pkt.iter().all(|h| h.seq == pkt[0].seq));
        assert!(pkt[0].sent < pkt[1].sent && pkt[1].sent < pkt[2].sent);
        assert!(pkt[0].node != pkt[1].node && pkt[1].node != pkt[2].node);
        // leaf -> spine at 400 Gb/s, spine -> leaf at 400, leaf -> host at 100.
        let lat: Vec<u64> = pkt.iter().map(|h| h.latency.as_ps()).collect();
        assert_eq!(lat, [20_960, 20_960, 83_840]);
    }
}

#[test]
fn ideal_fct_on_idle_paths() {
    let us = Duration::from_us(1);
    let cases: Vec<(&str, Topology, u32, u32)> = vec![
        ("1 hop 100G", topo::star(3, BitsPerSec::gbps(100), us).unwrap(), 0, 3),
        ("1 hop 400G", topo::star(3, BitsPerSec::gbps(400), us).unwrap(), 1, 3),
        (
            "3 hops 100G/400G",
            topo::leaf_spine(4, 2, 4, BitsPerSec::gbps(100), BitsPerSec::gbps(400), us).unwrap(),
            0,
            13,
        ),
        (
            "3 hops 400G/100G",
            topo::leaf_spine(2, 2, 2, BitsPerSec::gbps(400), BitsPerSec::gbps(100), us).unwrap(),
            0,
            3,
        ),
    ];
    for (name, t, src, dst) in cases {
        for size in [1u64, 1000, 1_000_000, 10_000_000] {
            let sim = run(
                t.clone(),
                vec![flow(0, src, dst, size, Time::from_ns(5))],
                SimConfig::default(),
            );
            let r = sim.flow_results()[0];
            assert_eq!(r.fct, Some(r.ideal_fct), "{name}, {size} B");
            assert_conserved(&sim);
        }
    }
}

/// The ideal FCT is exact also where the last ACK waits on the way back: behind the one
/// before it when the last packet is short, behind a train of them when every frame is
/// shorter than an ACK (a 10-byte MTU), and with ACKs only at some packets (`ack_interval`,
/// `chunk`), in both serialization modes.
#[test]
fn ideal_fct_counts_acks_that_wait_for_each_other() {
    use dcsim::core::config::Serialization;
    let us = Duration::from_us(1);
    let g = BitsPerSec::gbps;
    let topos: Vec<(&str, Topology, u32, u32)> = vec![
        ("star 25G", topo::star(3, g(25), us).unwrap(), 0, 3),
        ("dumbbell 10G/1G", topo::dumbbell(1, 1, g(10), g(1), us).unwrap(), 0, 1),
        ("leaf-spine 100G/400G", topo::leaf_spine(2, 2, 2, g(100), g(400), us).unwrap(), 0, 3),
    ];
    // (mtu, ack_interval, chunk)
    let nics = [
        (1000, 1, 4000),
        (4000, 1, 4000),
        (1000, 3000, 4000),
        (10, 1, 4000),
        (10, 45, 20),
        (10, 45, 10),
    ];
    for (name, t, src, dst) in &topos {
        for (mtu, ack_interval, chunk) in nics {
            for ser in [Serialization::Exact, Serialization::Ns3] {
                for size in [1u64, 1001, 1049, 2001, 12_047, 30_003, 100_001] {
                    let mut cfg = SimConfig::default();
                    cfg.nic.mtu = mtu;
                    cfg.nic.ack_interval = ack_interval;
                    cfg.nic.chunk = chunk;
                    cfg.serialization = ser;
                    cfg.switch.ecn_enabled = false; // any rate, no ECN map needed
                    if !cfg.nic.acks_at(size) {
                        continue; // the last packet is never ACKed: the flow cannot complete
                    }
                    let flows = vec![flow(0, *src, *dst, size, Time::from_ns(5))];
                    let sim = run(t.clone(), flows, cfg);
                    let r = sim.flow_results()[0];
                    let case = format!("{name}, MTU {mtu}, ACK {ack_interval}/{chunk}, {ser:?}");
                    assert_eq!(r.fct, Some(r.ideal_fct), "{case}, {size} B");
                    assert_conserved(&sim);
                }
            }
        }
    }
}

#[test]
fn lossless_incast_32_to_1_runs_at_line_rate() {
    // The reference's dynamic threshold, and an explicit alpha of 0.11.
    for dt_alpha in [None, Some(0.11)] {
        lossless_incast(dt_alpha);
    }
}

fn lossless_incast(dt_alpha: Option<f64>) {
    // 4 leaves x 16 hosts, 2 spines; 32 senders on leaves 1 and 2 send 1 MB each to host 0.
    let t = topo::leaf_spine(
        4,
        2,
        16,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(400),
        Duration::from_us(1),
    )
    .unwrap();
    let flows: Vec<FlowSpec> =
        (0..32).map(|i| flow(i, 16 + i as u32, 0, 1_000_000, Time::ZERO)).collect();
    let cfg = SimConfig {
        switch: dcsim::core::config::SwitchConfig {
            ecn_enabled: false,
            dt_alpha,
            ..Default::default()
        },
        ..Default::default()
    };
    let sim = run(t, flows, cfg);
    let c = sim.counters();
    assert_eq!(c.mmu_drops, 0, "PFC makes the fabric lossless");
    assert!(c.pfc_pauses > 0, "the incast must trigger PFC");
    assert_eq!(sim.summary().flows_done, 32);
    // Host 0 hangs off leaf node 64, port 0: the bottleneck. It carries only data.
    let leaf = NodeId(64);
    let st = sim.port_stats(leaf, PortNo(0));
    let last = sim.flow_results().iter().map(|r| r.start + r.fct.unwrap()).max().unwrap();
    let gbps = st.tx_bytes as f64 * 8.0 / last.as_secs_f64() / 1e9;
    assert!((gbps - 100.0).abs() / 100.0 < 0.01, "bottleneck delivered {gbps:.3} Gb/s");
    assert_conserved(&sim);
}

#[test]
fn ecmp_spreads_flows_evenly_over_four_spines() {
    let (leaves, spines, per) = (4, 4, 16);
    let t = topo::leaf_spine(
        leaves,
        spines,
        per,
        BitsPerSec::gbps(100),
        BitsPerSec::gbps(400),
        Duration::from_us(1),
    )
    .unwrap();
    let hosts = (leaves * per) as u32;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut flows = Vec::new();
    while flows.len() < 2000 {
        let (s, d) = (rng.gen_range(0..hosts), rng.gen_range(0..hosts));
        if s / per as u32 == d / per as u32 {
            continue; // same leaf: does not cross a spine
        }
        let id = flows.len();
        flows.push(flow(id, s, d, 1000, Time::from_ns(id as u64 * 100)));
    }
    let sim = run(t, flows, SimConfig::default());
    assert_eq!(sim.summary().flows_done, 2000);
    for s in 0..spines {
        let spine = NodeId(hosts + leaves as u32 + s as u32);
        let data: u64 =
            (0..leaves).map(|p| sim.port_stats(spine, PortNo(p as u16)).tx_data_frames).sum();
        let share = data as f64 / 2000.0;
        assert!((share - 0.25).abs() <= 0.03, "spine {s} carried {share:.3} of the flows");
    }
    assert_conserved(&sim);
}

fn websearch_like(seed: u64) -> Vec<FlowSpec> {
    // 300 flows of mixed sizes among 64 hosts within 200 us: a congested mix.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..300)
        .map(|i| {
            let s = rng.gen_range(0..64u32);
            let mut d = rng.gen_range(0..63u32);
            if d >= s {
                d += 1;
            }
            let size = [3_000u64, 20_000, 80_000, 500_000, 2_000_000][rng.gen_range(0..5)];
            flow(i, s, d, size, Time::from_ns(i as u64 * 700))
        })
        .collect()
}

#[test]
fn same_seed_same_results_other_seed_differs() {
    let t = || {
        topo::leaf_spine(
            4,
            2,
            16,
            BitsPerSec::gbps(100),
            BitsPerSec::gbps(400),
            Duration::from_us(1),
        )
        .unwrap()
    };
    let cfg = |seed| SimConfig { seed, ..Default::default() };
    let a = run(t(), websearch_like(3), cfg(1));
    let b = run(t(), websearch_like(3), cfg(1));
    let c = run(t(), websearch_like(3), cfg(2));
    assert_eq!(a.flow_results(), b.flow_results());
    assert_eq!(a.counters(), b.counters());
    assert_ne!(a.flow_results(), c.flow_results(), "another seed changes ECMP and ECN draws");
    for s in [&a, &c] {
        assert_eq!(s.summary().flows_done, 300);
        assert_conserved(s);
    }
}

#[test]
fn lossy_fabric_without_pfc_drops_and_go_back_n_recovers() {
    // PFC off and a small buffer: an incast overflows, drops, and go-back-N repairs every loss
    // that a later packet exposes; conservation holds with drops counted.
    let t = topo::star(8, BitsPerSec::gbps(100), Duration::from_us(1)).unwrap();
    let mut cfg = SimConfig::default();
    cfg.switch.pfc_enabled = false;
    cfg.switch.ecn_enabled = false;
    cfg.switch.buffer = dcsim::core::units::Bytes(200_000);
    cfg.stop_time = Time::from_ns(50_000_000);
    let flows: Vec<FlowSpec> = (0..8).map(|i| flow(i, i as u32, 8, 300_000, Time::ZERO)).collect();
    let sim = run(t, flows, cfg);
    let c = sim.counters();
    assert!(c.mmu_drops > 0, "{c:?}");
    assert!(c.nacks_sent > 0 && c.data_bytes_retransmitted > 0, "{c:?}");
    assert_eq!(
        c.data_bytes_sent,
        c.data_bytes_delivered + c.data_bytes_dropped + sim.data_bytes_in_flight()
    );
}
