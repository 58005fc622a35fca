//! HPCC driven by the dcsim engine: flows complete without loss and share a bottleneck.
//!
//! ```text
//!   host 0 ──┐
//!   host 1 ──┼── switch 4 ── host 3
//!   host 2 ──┘        (all links 100 Gb/s, 1 µs)
//! ```

use dcsim_core::config::{FlowSpec, SimConfig, WindowMode};
use dcsim_core::ids::{FlowId, NodeId, PortNo};
use dcsim_core::network::{LinkSpec, Network, NodeKind, RoutingTable};
use dcsim_core::units::{BitsPerSec, Duration, Time};
use dcsim_core::Simulation;
use dcsim_hpcc::{HpccFactory, HpccParams};

const HOSTS: usize = 4;

fn star() -> (Network, RoutingTable) {
    let sw = HOSTS as u32;
    let mut kinds = vec![NodeKind::Host; HOSTS];
    kinds.push(NodeKind::Switch);
    let links = (0..sw)
        .map(|h| LinkSpec {
            a: NodeId(h),
            b: NodeId(sw),
            rate: BitsPerSec::gbps(100),
            delay: Duration::from_us(1),
            loss: 0.0,
        })
        .collect();
    let net = Network::new(kinds, links).expect("valid star");
    // The switch's port k leads to host k.
    let routes = RoutingTable::from_fn(HOSTS + 1, HOSTS, |n, h| {
        if n == NodeId(sw) {
            vec![PortNo(h as u16)]
        } else {
            vec![]
        }
    });
    (net, routes)
}

fn flow(id: u32, src: u32, size: u64) -> FlowSpec {
    FlowSpec {
        id: FlowId(id),
        src: NodeId(src),
        dst: NodeId(3),
        size,
        start: Time::from_ns(1000),
        pg: 3,
        dport: 100,
    }
}

fn run(flows: Vec<FlowSpec>) -> Simulation<HpccFactory> {
    let (net, routes) = star();
    let mut cfg = SimConfig::default();
    cfg.nic.window = WindowMode::Variable; // the reference `hp` row: HAS_WIN 1, VAR_WIN 1
    let factory = HpccFactory::new(HpccParams::default()).expect("valid params");
    let mut sim = Simulation::new(net, routes, cfg, flows, factory).expect("valid inputs");
    let summary = sim.run();
    assert_eq!(summary.flows_done, sim.flow_results().len(), "every flow completes");
    let c = sim.counters();
    assert_eq!(c.mmu_drops, 0);
    assert_eq!(c.nacks_sent, 0);
    assert_eq!(c.pfc_pauses, 0, "HPCC keeps the queue far below the PFC threshold");
    sim
}

#[test]
fn single_flow_runs_near_the_target_utilisation() {
    let sim = run(vec![flow(0, 0, 2_000_000)]);
    let r = sim.flow_results()[0];
    // HPCC holds the path at about eta = 95% and data packets carry 42 B of INT (1090 vs
    // 1048 B): the slowdown against the INT-free ideal is about 1.04 / 0.95 = 1.09 at most.
    let s = r.slowdown().unwrap();
    assert!(s > 1.0 && s < 1.12, "slowdown {s}");
}

#[test]
fn incast_flows_share_the_bottleneck() {
    let sim = run(vec![flow(0, 0, 2_000_000), flow(1, 1, 2_000_000), flow(2, 2, 2_000_000)]);
    let fcts: Vec<f64> = sim.flow_results().iter().map(|r| r.fct.unwrap().as_secs_f64()).collect();
    // 6 MB of payload through one 100 Gb/s port: >= 6e6 * 1090 / 1000 * 8 / 100e9 = 523 us.
    let last = fcts.iter().cloned().fold(0.0, f64::max);
    let first = fcts.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(last > 523e-6, "last FCT {last}");
    assert!(last < 523e-6 / 0.95 * 1.1, "the bottleneck stays busy: last FCT {last}");
    // Fair sharing: the three equal flows finish close together.
    assert!(first > 0.85 * last, "FCTs {fcts:?}");
}
