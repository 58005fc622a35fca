//! Switch-port micro-benchmarks: one switch (a star of `n` hosts, 100 Gb/s, 1 us links) and
//! the cost of moving frames through its egress ports, in three regimes:
//!
//! - `forward_1to1`: one 10 MB flow from host 0 to host 1. Every data frame is forwarded the
//!   moment it arrives (no queue), every ACK too: the bare ingress → route → MMU admit →
//!   egress → transmit path.
//! - `incast_8to1_none`: eight 1 MB flows into one port at line rate with no congestion
//!   control. The port holds a standing queue of hundreds of frames, so every frame is also
//!   admitted against the shared buffer, queued, marked by RED/ECN (the queue sits between
//!   `kmin` and `kmax`), released and dequeued by a transmission-done event; PFC pauses the
//!   senders' ingress ports when the queue crosses the dynamic threshold.
//! - `incast_8to1_hpcc`: the same with HPCC, so every data frame is also stamped with an INT
//!   record at dequeue and the senders run their rate updates.
//!
//! The throughput is the **frames the switch transmits** (data, ACKs, PFC) per second of wall
//! time. The figure includes the host work that feeds the switch (about a third of the events
//! in these scenarios are host-side), so it is the whole per-frame cost of a simulation that is
//! all switch port, not an isolated handler timing.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dcsim::core::cc::{CcFactory, NoCcFactory};
use dcsim::core::config::{EcnParams, FlowSpec, SimConfig, WindowMode};
use dcsim::core::ids::{FlowId, NodeId, PortNo};
use dcsim::core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim::core::Simulation;
use dcsim::hpcc::HpccFactory;
use dcsim::topology as topo;

fn flow(id: u32, src: u32, dst: u32, size: u64) -> FlowSpec {
    FlowSpec {
        id: FlowId(id),
        src: NodeId(src),
        dst: NodeId(dst),
        size,
        start: Time::ZERO,
        pg: 3,
        dport: 100,
    }
}

/// Runs the scenario; returns the frames the switch transmitted.
fn simulate<F: CcFactory + Clone>(hosts: usize, flows: &[FlowSpec], f: &F, cfg: &SimConfig) -> u64 {
    let t = topo::star(hosts - 1, BitsPerSec::gbps(100), Duration::from_us(1)).expect("valid");
    let net = t.validate().expect("valid");
    let routes = topo::compute_routes(&net);
    let mut sim =
        Simulation::new(net, routes, cfg.clone(), flows.to_vec(), f.clone()).expect("valid");
    let summary = sim.run();
    assert_eq!(summary.flows_done, flows.len(), "every flow completes");
    let sw = NodeId(hosts as u32);
    (0..hosts).map(|p| sim.port_stats(sw, PortNo(p as u16)).tx_frames).sum()
}

fn case<F: CcFactory + Clone>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    hosts: usize,
    flows: &[FlowSpec],
    f: F,
    cfg: SimConfig,
) {
    let frames = simulate(hosts, flows, &f, &cfg);
    eprintln!("{name}: {frames} frames through the switch per run");
    g.throughput(Throughput::Elements(frames));
    g.bench_function(name, |b| b.iter(|| simulate(hosts, flows, &f, &cfg)));
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("switch_port");
    g.sample_size(20);

    case(
        &mut g,
        "forward_1to1",
        2,
        &[flow(0, 0, 1, 10_000_000)],
        NoCcFactory,
        SimConfig::default(),
    );

    // A RED band low enough that the incast queue sits inside it: every dequeue draws a mark.
    let mut cfg = SimConfig::default();
    cfg.switch.ecn = vec![(
        BitsPerSec::gbps(100),
        EcnParams { kmin: Bytes(20_000), kmax: Bytes(2_000_000), pmax: 0.2 },
    )];
    let incast: Vec<FlowSpec> = (0..8).map(|i| flow(i, i + 1, 0, 1_000_000)).collect();
    case(&mut g, "incast_8to1_none", 9, &incast, NoCcFactory, cfg.clone());

    cfg.nic.window = WindowMode::Variable;
    case(&mut g, "incast_8to1_hpcc", 9, &incast, HpccFactory::default(), cfg);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
