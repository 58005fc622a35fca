//! # dcsim
//!
//! A discrete-event, packet-level datacenter network simulator. This facade crate re-exports
//! the workspace's crates under short names; it also hosts the runnable examples
//! (`examples/`) and the benchmarks (`benches/`).
//!
//! | module | crate | what it owns |
//! |---|---|---|
//! | [`core`] | `dcsim-core` | time, events, packets, links, switches, NICs, the CC trait |
//! | [`topology`] | `dcsim-topology` | builders, reference topology files, routing, validation |
//! | [`hpcc`] | `dcsim-hpcc` | the HPCC congestion-control plugin |
//! | [`baselines`] | `dcsim-baselines` | DCQCN, TIMELY, DCTCP plugins |
//! | [`pint`] | `dcsim-pint` | PINT telemetry encodings and HPCC-PINT |
//! | [`workload`] | `dcsim-workload` | flow-size CDFs, Poisson and incast generators |
//! | [`analysis`] | `dcsim-analysis` | slowdown percentiles, size buckets, plots |
//! | [`cli`] | `dcsim-cli` | scenario files, the `dcsim` command |
#![warn(missing_docs)]

pub use dcsim_analysis as analysis;
pub use dcsim_aqm as aqm;
pub use dcsim_baselines as baselines;
pub use dcsim_cli as cli;
pub use dcsim_core as core;
pub use dcsim_hpcc as hpcc;
pub use dcsim_pint as pint;
pub use dcsim_tcp as tcp;
pub use dcsim_topology as topology;
pub use dcsim_workload as workload;
