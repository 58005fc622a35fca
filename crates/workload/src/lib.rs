//! Workload generation for dcsim: flow-size CDFs, Poisson background traffic at a target
//! load, and incast, producing [`FlowSpec`] lists.
//!
//! This crate does no file I/O: it parses CDF *text* and returns flows; reading and writing
//! files (including the reference flow-file format) is the CLI's job.
//!
//! * [`Cdf`]: the reference `traffic_gen.py` CDF format (`<size> <cumulative percent>` per
//!   line), its trapezoid-rule mean and its sampling rule, or read as point masses
//!   ([`Interpolation::Step`]); four built-in workloads
//!   ([`Cdf::builtin_names`]): `websearch`, `hadoop`, `alistorage2019`, `googlerpc2008`.
//! * [`PoissonWorkload`]: per-host Poisson arrivals at a payload load, the reference
//!   generator's semantics (spec §7) with a seeded ChaCha RNG.
//! * [`Incast`]: many-to-one bursts as a Poisson process using a fraction of capacity.
//! * [`merge`]: combine two flow lists into one, renumbered by start time.
//!
//! ```
//! use dcsim_core::ids::NodeId;
//! use dcsim_core::units::{BitsPerSec, Duration};
//! use dcsim_workload::{
//!     merge, Cdf, Incast, Interpolation, PoissonWorkload, ReceiverChoice, REFERENCE_START,
//! };
//!
//! let hosts: Vec<NodeId> = (0..16).map(NodeId).collect();
//! let background = PoissonWorkload {
//!     cdf: Cdf::builtin("websearch").unwrap(),
//!     hosts: hosts.clone(),
//!     host_rate: BitsPerSec::gbps(100),
//!     load: 0.3,
//!     start: REFERENCE_START,
//!     duration: Duration::from_ms(10),
//!     seed: 1,
//!     interpolation: Interpolation::Linear,
//! }
//! .generate()
//! .unwrap();
//! let incast = Incast {
//!     hosts,
//!     host_rate: BitsPerSec::gbps(100),
//!     receiver_choice: ReceiverChoice::Random,
//!     senders: 8,
//!     size: 500_000,
//!     fraction_of_capacity: 0.02,
//!     start: REFERENCE_START,
//!     duration: Duration::from_ms(10),
//!     seed: 1,
//! }
//! .generate()
//! .unwrap();
//! let all = merge(&background, &incast);
//! assert_eq!(all.len(), background.len() + incast.len());
//! assert!(all.windows(2).all(|w| w[0].start <= w[1].start));
//! ```
#![warn(missing_docs)]

mod cdf;
mod error;
mod incast;
mod lognormal;
mod poisson;

pub use cdf::{Cdf, Interpolation, MAX_CDF_SIZE};
pub use dcsim_core::config::FlowSpec;
pub use error::{CdfPos, WorkloadError};
pub use incast::{Incast, ReceiverChoice, INCAST_DPORT};
pub use lognormal::{HarmFlow, HarmWorkload, HarmWorkloadError, Z95};
pub use poisson::{
    offered_load, PoissonWorkload, WindowEnd, BACKGROUND_DPORT, DEFAULT_FLOW_LIMIT, FLOW_PG,
    REFERENCE_START,
};

use dcsim_core::ids::FlowId;

/// Merges two flow lists into one sorted by start time and renumbers the ids `0..n` in that
/// order. The sort is stable: at equal start times flows of `a` come before flows of `b`, and
/// each list keeps its own order.
pub fn merge(a: &[FlowSpec], b: &[FlowSpec]) -> Vec<FlowSpec> {
    let mut all: Vec<FlowSpec> = a.iter().chain(b).copied().collect();
    all.sort_by_key(|f| f.start);
    for (i, f) in all.iter_mut().enumerate() {
        f.id = FlowId::from_idx(i);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_core::ids::NodeId;
    use dcsim_core::units::Time;

    fn flow(id: u32, src: u32, ns: u64) -> FlowSpec {
        FlowSpec {
            id: FlowId(id),
            src: NodeId(src),
            dst: NodeId(99),
            size: 1,
            start: Time::from_ns(ns),
            pg: 3,
            dport: 100,
        }
    }

    #[test]
    fn merge_is_stable_and_renumbers() {
        let a = [flow(0, 1, 10), flow(1, 2, 20), flow(2, 3, 30)];
        let b = [flow(0, 11, 5), flow(1, 12, 20), flow(2, 13, 40)];
        let m = merge(&a, &b);
        let srcs: Vec<u32> = m.iter().map(|f| f.src.0).collect();
        assert_eq!(srcs, [11, 1, 2, 12, 3, 13]);
        let ids: Vec<u32> = m.iter().map(|f| f.id.0).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
        assert!(merge(&[], &[]).is_empty());
    }
}
