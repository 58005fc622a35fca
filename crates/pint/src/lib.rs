//! # dcsim-pint
//!
//! PINT (Probabilistic In-band Network Telemetry, Ben Basat et al., SIGCOMM 2020) for dcsim:
//! the encodings that let switches spread telemetry over many packets with a fixed, small
//! per-packet bit budget, the sink-side decoders, and experiment drivers that reproduce the
//! paper's path-tracing and latency-quantile results.
//!
//! - [`approx`] — value approximation: [`approx::Multiplicative`] (exponents of `(1 + ε)²`,
//!   nearest or unbiased randomised rounding, bit-width arithmetic), [`approx::Additive`]
//!   (error ≤ Δ) and [`approx::UtilCodec`], the HPCC-PINT utilisation codec of the reference
//!   simulator (spec §3.4) that the switch model calls per packet.
//! - [`path`] — path tracing (static per-flow aggregation): per-switch
//!   [`stamp`](path::PathScheme::stamp) with a global hash choosing the acting hops, Baseline
//!   and XOR layers, multiple instances; a peeling [`Decoder`](path::Decoder) that returns the
//!   exact path once it is determined and never a wrong one; [`path_tracing_table`].
//! - [`latency`] — latency quantiles (dynamic per-flow aggregation): compressed per-hop
//!   latencies, collected exactly, in a [`kll::Kll`] sketch or in a [`hist::CodeHist`];
//!   [`latency_table`].
//! - [`kll`] — a KLL quantile sketch with a tracked rank-error bound.
//! - [`hist`] — a fixed-size histogram of digest codes (DDSketch's log buckets, UDDSketch's
//!   uniform collapse): exact quantiles while the codes in use fit, coarser codes beyond.
//! - [`stats`] — mean and nearest-rank percentiles for the experiment tables.
//! - [`hpcc_pint`] — the HPCC-PINT congestion-control plugin (`"hpcc-pint"`): the sender
//!   decodes the digest with [`approx::UtilCodec`] and applies HPCC's rate rule
//!   ([`dcsim_hpcc::RateRule`]); [`hpcc_pint::SPEC`] describes its parameters.
//!
//! Both tables are CSV-ready: each row type has a `CSV_HEADER` and a `Display` that prints one
//! CSV line.
//!
//! ```
//! use dcsim_pint::{path_tracing_table, PathRow};
//!
//! let rows = path_tracing_table(&[5], &[(8, 2)], 20, 1).unwrap();
//! assert_eq!(rows.len(), 2); // PINT and the naive scheme
//! println!("{}", PathRow::CSV_HEADER);
//! for r in &rows {
//!     assert_eq!(r.wrong, 0);
//!     println!("{r}");
//! }
//! ```
//!
//! ## What is not modelled
//!
//! - The query engine that multiplexes several queries over one budget (§3.4), and the
//!   randomised-counting aggregation (§4.3); only one query runs per bit field here.
//! - Switch pipelines: `stamp` and `UtilCodec::encode` compute with `f64` and 64-bit hashes,
//!   not with P4 lookup tables.

#![warn(missing_docs)]

pub mod approx;
pub mod codec;
pub mod error;
mod hash;
pub mod hist;
pub mod hpcc_pint;
pub mod kll;
pub mod latency;
pub mod path;
pub mod stats;

pub use error::PintError;
pub use hpcc_pint::{HpccPint, HpccPintFactory, HpccPintParams};
pub use latency::{
    latency_experiment, latency_table, latency_table_traced, trace_range, FlowTrace, LatencyConfig,
    LatencyRow, LatencySource, Storage,
};
pub use path::{experiment, path_tracing_table, PathRow, TraceConfig, TraceStats};
