//! # dcsim-core
//!
//! The deterministic, packet-level event core of dcsim: integer picosecond time, a
//! `(time, sequence)`-ordered event queue, packets with the reference simulator's wire sizes,
//! full-duplex store-and-forward links, shared-buffer switches (8 priorities, PFC with dynamic
//! thresholds, RED/ECN, INT stamping, ECMP) and RDMA host NICs (per-flow queue pairs, pacing,
//! windows, ACK/NACK with go-back-N), driven by congestion-control plugins.
//!
//! This crate does no I/O and knows no file format. Topologies come from `dcsim-topology`,
//! scenarios from `dcsim-cli`.
//!
//! ```
//! use dcsim_core::{cc::NoCcFactory, config::*, ids::*, network::*, units::*, Simulation};
//! // host 0 -- switch 1 -- host 2
//! let link = |a, b| LinkSpec {
//!     a: NodeId(a), b: NodeId(b), rate: BitsPerSec::gbps(100),
//!     delay: Duration::from_us(1), loss: 0.0,
//! };
//! let net = Network::new(
//!     vec![NodeKind::Host, NodeKind::Switch, NodeKind::Host],
//!     vec![link(0, 1), link(1, 2)],
//! ).unwrap();
//! // Switch 1 reaches host index 0 (node 0) through port 0 and host 1 (node 2) through port 1.
//! let routes = RoutingTable::from_fn(3, 2, |n, h| {
//!     if n == NodeId(1) { vec![PortNo(h as u16)] } else { vec![] }
//! });
//! let flow = FlowSpec {
//!     id: FlowId(0), src: NodeId(0), dst: NodeId(2), size: 10_000,
//!     start: Time::ZERO, pg: 3, dport: 100,
//! };
//! let mut sim = Simulation::new(net, routes, SimConfig::default(), vec![flow], NoCcFactory)
//!     .unwrap();
//! let summary = sim.run();
//! assert_eq!(summary.flows_done, 1);
//! let r = &sim.flow_results()[0];
//! assert_eq!(r.fct, Some(r.ideal_fct)); // alone on an idle path: exactly the ideal FCT
//! ```
#![warn(missing_docs)]

mod affinity;
pub mod apps;
pub mod cc;
pub mod config;
mod engine;
pub mod event;
pub mod ids;
mod mmu;
pub mod network;
pub mod packet;
pub use dcsim_types::params;
pub use dcsim_types::text;
mod parallel;
pub mod partition;
pub mod paths;
pub mod qmon;
pub mod results;
mod sim;
pub mod telemetry;
pub mod units;

pub use parallel::REBALANCE_GAIN_PERCENT;
pub use partition::{traffic, traffic_load, Partition, Partitioner, Traffic};
pub use results::{
    BarrierWait, Counters, FlowResult, HopSample, ParallelStats, PfcEvent, RunSummary, ShardWindow,
    WindowTrace, SHARED_THREADS,
};
pub use sim::{PortStats, SimError, Simulation, MAX_MTU, MAX_OUTSTANDING, MAX_SAMPLER_BINS};
