//! This example demonstrates embedding dcsim as a library: it builds a star topology in code,
//! runs an 8-to-1 incast with the `none` scheme (line rate, no window), and prints each flow's
//! completion time next to its ideal FCT, plus the PFC activity that kept the fabric lossless.
//!
//! ```text
//!   host 0 ──┐
//!   host 1 ──┤
//!     ...    ├── switch 9 ── host 8 (receiver)
//!   host 7 ──┘
//!   every link 100 Gb/s, 1 µs
//! ```
//!
//! Run it with `cargo run --release --example incast`.

use dcsim::core::cc::NoCcFactory;
use dcsim::core::config::{FlowSpec, SimConfig};
use dcsim::core::ids::{FlowId, NodeId};
use dcsim::core::units::{BitsPerSec, Duration, Time};
use dcsim::core::Simulation;
use dcsim::topology;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let senders = 8;
    let topo = topology::star(senders, BitsPerSec::gbps(100), Duration::from_us(1))?;
    let net = topo.validate()?;
    let routes = topology::compute_routes(&net);
    let receiver = NodeId(senders as u32);
    let flows: Vec<FlowSpec> = (0..senders)
        .map(|i| FlowSpec {
            id: FlowId(i as u32),
            src: NodeId(i as u32),
            dst: receiver,
            size: 2_000_000,
            start: Time::ZERO,
            pg: 3,
            dport: 200,
        })
        .collect();
    let mut sim = Simulation::new(net, routes, SimConfig::default(), flows, NoCcFactory)?;
    let summary = sim.run();
    println!("flow  fct(us)  ideal(us)  slowdown");
    for r in sim.flow_results() {
        let fct = r.fct.ok_or("every flow completes in a lossless incast")?;
        println!(
            "{:>4}  {:>7.1}  {:>9.1}  {:>8.2}",
            r.id.0,
            fct.as_ns_f64() / 1e3,
            r.ideal_fct.as_ns_f64() / 1e3,
            r.slowdown().unwrap_or(f64::NAN)
        );
    }
    let c = sim.counters();
    println!(
        "{} flows done in {:.1} us simulated, {} events; drops {}, PFC pauses {}, resumes {}",
        summary.flows_done,
        summary.end_time.as_secs_f64() * 1e6,
        summary.events,
        c.mmu_drops,
        c.pfc_pauses,
        c.pfc_resumes
    );
    // The receiver link carried all 8 x 2 MB at line rate: the last flow ends near 8x its ideal.
    assert_eq!(c.mmu_drops, 0);
    assert!(sim.is_quiescent());
    Ok(())
}
