//! Background traffic: every host an independent Poisson source at a target load (spec §7).

use dcsim_core::config::FlowSpec;
use dcsim_core::ids::{FlowId, NodeId};
use dcsim_core::units::{BitsPerSec, Duration, Time, PS_PER_NS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cdf::{Cdf, Interpolation};
use crate::error::WorkloadError;

/// The reference generator's start epoch: flows start after 2 s of simulated time.
pub const REFERENCE_START: Time = Time::from_ns(2_000_000_000);

/// The flow limit of [`PoissonWorkload::generate`] and [`crate::Incast::generate`]: 50 million
/// flows (about 2 GB of [`FlowSpec`]s). Beyond it they fail with
/// [`WorkloadError::TooManyFlows`] instead of allocating until memory runs out; the
/// `_at_most` variants take another limit.
pub const DEFAULT_FLOW_LIMIT: usize = 50_000_000;

/// How a host's arrivals end at the end of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowEnd {
    /// The reference generator's rule: a flow at `t` is emitted only if the next arrival
    /// `t + gap` is still within the window, so each host's last candidate is dropped (spec
    /// §9.22).
    #[default]
    DropLast,
    /// Every arrival in `[start, start + duration)`: the Poisson process cut at the window's end.
    Exact,
}

/// Priority group of generated flows (the reference writes 3).
pub const FLOW_PG: u8 = 3;
/// Destination port of background flows (the reference writes 100).
pub const BACKGROUND_DPORT: u16 = 100;

/// RNG stream purposes; a host's streams are `node_id << 2 | purpose`.
const STREAM_GAPS: u64 = 0;
const STREAM_SIZES: u64 = 1;
const STREAM_DSTS: u64 = 2;

/// A per-host Poisson workload, the reference `traffic_gen.py` with a seeded RNG.
///
/// # Model (spec §7)
/// * Every host is an independent Poisson source. The mean inter-arrival time is
///   `ia = 1 / (rate * load / 8 / mean) * 1e9` ns (the reference's expression, i.e.
///   `mean * 8 / (rate * load)` s), so each host offers `load` of its link rate in **payload**
///   bytes (the HPCC definition of load; headers and ACKs come on top).
/// * Gaps are exponential and truncated to whole nanoseconds: `trunc(-ln(1 - U) * ia)`.
/// * A host's first flow starts at `start + gap`. A host's flow at time `t` is emitted only
///   if `t + next_gap <= start + duration`; otherwise the host stops. **This matches the
///   reference's quirk of dropping each host's last candidate** (spec §9.22), so the realized
///   load is slightly below target, by about one mean-size flow per host per run.
/// * Sizes are drawn with [`Cdf::sample_with`] in the workload's [`Interpolation`] mode
///   (truncated to whole bytes, at least 1); the default, [`Interpolation::Linear`], is the
///   reference's [`Cdf::sample`]. `mean` in the inter-arrival expression is the CDF's mean in
///   the same mode ([`Cdf::mean_with`]), so the load is right in either mode.
/// * Destinations are uniform over the other hosts.
/// * Every flow has priority group [`FLOW_PG`] (3) and destination port [`BACKGROUND_DPORT`]
///   (100).
/// * The output is sorted by start time, ties by the source's position in `hosts` (the
///   reference's heap order), then generation order; ids are `0..n` in that order.
///
/// # Random streams
/// Determinism comes from [`rand_chacha::ChaCha8Rng`] seeded with `seed` (via
/// `seed_from_u64`). Each host has three streams of its own (`set_stream`), numbered by its
/// **node id**: `id << 2 | 0` for gaps, `id << 2 | 1` for sizes, `id << 2 | 2` for
/// destinations. Each stream is consumed in time order: the gap stream gives one `f64` per
/// gap (first the initial one, then one per candidate, the dropped one included); the size
/// stream one `f64` per emitted flow; the destination stream one `gen_range(0..n_hosts - 1)`
/// per emitted flow, mapped onto the other hosts in list order (index `>=` the source's
/// position shifts up by one). Consequently adding, removing or reordering *other* hosts does
/// not change a host's start times or sizes (only which destinations it picks), and the
/// result does not depend on the order hosts are processed in.
///
/// The output is bit-identical for a seed on a given platform (`f64::ln` comes from the
/// platform's math library, so another platform could in rare cases move a gap by 1 ns).
/// The reference's Python `random` stream cannot be reproduced; compare distributions.
#[derive(Clone, Debug, PartialEq)]
pub struct PoissonWorkload {
    /// Flow-size distribution.
    pub cdf: Cdf,
    /// The hosts that send and receive (at least two, no duplicates).
    pub hosts: Vec<NodeId>,
    /// Each host's link rate.
    pub host_rate: BitsPerSec,
    /// Offered payload load per host as a fraction of `host_rate`, in (0, 1).
    pub load: f64,
    /// The start epoch (reference: [`REFERENCE_START`]).
    pub start: Time,
    /// Length of the arrival window after `start`.
    pub duration: Duration,
    /// Seed of the random streams.
    pub seed: u64,
    /// How the CDF is read: [`Interpolation::Linear`] (the reference generator; the default)
    /// or [`Interpolation::Step`] (point masses at the listed sizes).
    pub interpolation: Interpolation,
}

impl PoissonWorkload {
    /// Checks the parameters: at least two distinct hosts, a positive rate, `0 < load < 1`, and
    /// a mean inter-arrival time of at least 1 ns.
    ///
    /// # Errors
    /// The first violated condition as a [`WorkloadError`].
    pub fn validate(&self) -> Result<(), WorkloadError> {
        check_hosts(&self.hosts, "a Poisson workload", 2)?;
        if self.host_rate.get() == 0 {
            return Err(WorkloadError::ZeroRate);
        }
        if !(self.load > 0.0 && self.load < 1.0) {
            return Err(WorkloadError::InvalidLoad(self.load));
        }
        let ia = self.mean_inter_arrival_ns();
        if ia.is_nan() || ia < 1.0 {
            return Err(WorkloadError::InterArrivalTooShort { mean_ns: ia });
        }
        Ok(())
    }

    /// Mean inter-arrival time of one host's flows in nanoseconds, computed with the
    /// reference's expression `1 / (rate * load / 8 / mean) * 1e9`, where `mean` is
    /// [`PoissonWorkload::mean_size`].
    pub fn mean_inter_arrival_ns(&self) -> f64 {
        1.0 / (self.host_rate.get() as f64 * self.load / 8.0 / self.mean_size()) * 1e9
    }

    /// The mean flow size of the CDF read in the workload's mode: [`Cdf::mean_with`]
    /// `(self.interpolation)`.
    pub fn mean_size(&self) -> f64 {
        self.cdf.mean_with(self.interpolation)
    }

    /// The expected number of flows, `duration / ia * hosts` (the reference's estimate,
    /// before its last-candidate drop).
    pub fn expected_flows(&self) -> f64 {
        self.duration.as_ns_f64() / self.mean_inter_arrival_ns() * self.hosts.len() as f64
    }

    /// Generates the flows (see the type's documentation for the model and stream order),
    /// with the reference's last-candidate drop ([`WindowEnd::DropLast`]), at most
    /// [`DEFAULT_FLOW_LIMIT`] of them.
    ///
    /// # Errors
    /// As [`PoissonWorkload::generate_at_most`].
    pub fn generate(&self) -> Result<Vec<FlowSpec>, WorkloadError> {
        self.generate_at_most(WindowEnd::DropLast, DEFAULT_FLOW_LIMIT)
    }

    /// Generates the flows of the window ended by `end`, at most `max_flows` of them.
    ///
    /// With [`WindowEnd::Exact`] a host's arrivals, sizes and destinations are those of
    /// [`WindowEnd::DropLast`] on any longer window, cut at the end (each host's streams are
    /// consumed in time order either way).
    ///
    /// The loop ends for every input: every step either emits a flow, which `max_flows`
    /// bounds, or ends the host's arrivals.
    ///
    /// # Errors
    /// As [`PoissonWorkload::validate`], or [`WorkloadError::TooManyFlows`] as soon as a flow
    /// beyond `max_flows` would be emitted.
    pub fn generate_at_most(
        &self,
        end_rule: WindowEnd,
        max_flows: usize,
    ) -> Result<Vec<FlowSpec>, WorkloadError> {
        self.validate()?;
        let ia = self.mean_inter_arrival_ns();
        let end = self.start.as_ps().saturating_add(self.duration.as_ps());
        let n = self.hosts.len();
        // (start, source position, dst, size)
        let mut raw: Vec<(u64, usize, NodeId, u64)> = Vec::new();
        for (pos, &src) in self.hosts.iter().enumerate() {
            let mut gaps = host_stream(self.seed, src, STREAM_GAPS);
            let mut sizes = host_stream(self.seed, src, STREAM_SIZES);
            let mut dsts = host_stream(self.seed, src, STREAM_DSTS);
            let mut t = self.start.as_ps().saturating_add(exp_gap_ps(&mut gaps, ia));
            loop {
                let next = match end_rule {
                    WindowEnd::DropLast => {
                        let next = t.saturating_add(exp_gap_ps(&mut gaps, ia));
                        if next > end {
                            break; // the reference drops this last candidate
                        }
                        Some(next)
                    }
                    WindowEnd::Exact if t >= end => break,
                    WindowEnd::Exact => None,
                };
                if raw.len() >= max_flows {
                    return Err(WorkloadError::TooManyFlows { limit: max_flows });
                }
                let size = self.cdf.sample_with(&mut sizes, self.interpolation);
                let j = dsts.gen_range(0..n - 1);
                let dst = self.hosts[if j >= pos { j + 1 } else { j }];
                raw.push((t, pos, dst, size));
                t = match next {
                    Some(next) => next,
                    None => t.saturating_add(exp_gap_ps(&mut gaps, ia)),
                };
            }
        }
        raw.sort_by_key(|&(t, pos, _, _)| (t, pos));
        Ok(raw
            .into_iter()
            .enumerate()
            .map(|(i, (t, pos, dst, size))| FlowSpec {
                id: FlowId::from_idx(i),
                src: self.hosts[pos],
                dst,
                size,
                start: Time::from_ps(t),
                pg: FLOW_PG,
                dport: BACKGROUND_DPORT,
            })
            .collect())
    }
}

/// One of a host's random streams.
fn host_stream(seed: u64, host: NodeId, purpose: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(u64::from(host.0) << 2 | purpose);
    rng
}

/// An exponential gap with mean `mean_ns`, truncated to whole nanoseconds like the reference
/// (`int(-ln(1 - U) * mean)`), in picoseconds. One `f64` draw.
pub(crate) fn exp_gap_ps<R: Rng + ?Sized>(rng: &mut R, mean_ns: f64) -> u64 {
    let u: f64 = rng.gen();
    let ns = (-(1.0 - u).ln() * mean_ns).trunc();
    // Saturates for absurd values (the `as` cast does).
    (ns as u64).saturating_mul(PS_PER_NS)
}

/// At least `needed` hosts and no duplicates.
pub(crate) fn check_hosts(
    hosts: &[NodeId],
    what: &'static str,
    needed: usize,
) -> Result<(), WorkloadError> {
    if hosts.len() < needed {
        return Err(WorkloadError::TooFewHosts { what, needed, found: hosts.len() });
    }
    let mut sorted: Vec<u32> = hosts.iter().map(|h| h.0).collect();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(WorkloadError::DuplicateHost(w[0]));
    }
    Ok(())
}

/// The payload load that `flows` offer: `sum(size) * 8 / (n_hosts * host_rate * duration)`,
/// the HPCC definition (application bytes per second over total host bandwidth).
/// Returns 0 for an empty window or zero rate.
pub fn offered_load(
    flows: &[FlowSpec],
    n_hosts: usize,
    host_rate: BitsPerSec,
    duration: Duration,
) -> f64 {
    // A fold from +0.0: an empty `sum` of floats is -0.0, which prints as "-0".
    let bits: f64 = flows.iter().fold(0.0, |a, f| a + f.size as f64 * 8.0);
    let capacity = n_hosts as f64 * host_rate.get() as f64 * duration.as_secs_f64();
    if capacity > 0.0 {
        bits / capacity
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    fn web(n: u32, load: f64, ms: u64, seed: u64) -> PoissonWorkload {
        PoissonWorkload {
            cdf: Cdf::builtin("websearch").unwrap(),
            hosts: hosts(n),
            host_rate: BitsPerSec::gbps(100),
            load,
            start: REFERENCE_START,
            duration: Duration::from_ms(ms),
            seed,
            interpolation: Interpolation::Linear,
        }
    }

    #[test]
    fn mean_inter_arrival_is_the_reference_expression() {
        // 1711250 B * 8 / (100e9 * 0.3) s = 456.333... us
        let w = web(16, 0.3, 10, 1);
        assert!((w.mean_inter_arrival_ns() - 456_333.333_333).abs() < 1e-3);
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        for load in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            match web(4, load, 1, 1).generate() {
                Err(WorkloadError::InvalidLoad(l)) => {
                    assert!(l == load || (l.is_nan() && load.is_nan()))
                }
                other => panic!("load {load}: {other:?}"),
            }
        }
        assert_eq!(
            web(4, 1.0, 1, 1).generate().unwrap_err().to_string(),
            "load must be in (0, 1) exclusive, found 1"
        );
        assert_eq!(
            web(1, 0.3, 1, 1).generate().unwrap_err().to_string(),
            "a Poisson workload needs at least 2 hosts, found 1"
        );
        let mut w = web(4, 0.3, 1, 1);
        w.hosts.push(NodeId(2));
        assert_eq!(w.generate().unwrap_err().to_string(), "host 2 is listed more than once");
        let mut w = web(4, 0.3, 1, 1);
        w.host_rate = BitsPerSec(0);
        assert_eq!(w.generate().unwrap_err(), WorkloadError::ZeroRate);
        let mut w = web(4, 0.3, 1, 1);
        w.cdf = Cdf::parse("0 0\n1 100").unwrap();
        w.host_rate = BitsPerSec::gbps(400);
        assert!(matches!(w.generate(), Err(WorkloadError::InterArrivalTooShort { .. })));
    }

    #[test]
    fn flows_are_sorted_in_window_and_well_formed() {
        let w = web(8, 0.5, 20, 7);
        let flows = w.generate().unwrap();
        assert!(!flows.is_empty());
        let end = w.start + w.duration;
        for (i, f) in flows.iter().enumerate() {
            assert_eq!(f.id, FlowId::from_idx(i));
            assert_ne!(f.src, f.dst);
            assert!(f.start > w.start && f.start <= end);
            assert_eq!(f.start.as_ps() % PS_PER_NS, 0, "whole nanoseconds");
            assert!(f.size >= 1 && f.size <= 30_000_000);
            assert_eq!((f.pg, f.dport), (3, 100));
        }
        assert!(flows.windows(2).all(|p| (p[0].start, p[0].src) <= (p[1].start, p[1].src)));
    }

    /// The exact window is the drop-last rule on a longer window, cut at the end (the
    /// algorithm `dcsim` used before: extend the window until every host has an arrival past
    /// the end).
    #[test]
    fn exact_window_is_a_longer_drop_last_window_cut() {
        for (load, ms, seed) in [(0.3, 2, 1), (0.7, 5, 9), (0.05, 1, 4)] {
            let w = web(8, load, ms, seed);
            let exact = w.generate_at_most(WindowEnd::Exact, usize::MAX).unwrap();
            let end = w.start + w.duration;
            let longer = PoissonWorkload { duration: w.duration * 100, ..w.clone() };
            let mut cut: Vec<FlowSpec> =
                longer.generate().unwrap().into_iter().filter(|f| f.start < end).collect();
            for (i, f) in cut.iter_mut().enumerate() {
                f.id = FlowId::from_idx(i);
            }
            assert_eq!(exact, cut, "load {load}, {ms} ms");
            assert!(exact.len() >= w.generate().unwrap().len());
        }
    }

    /// Tiny loads, 1 bit/s hosts and windows at the end of the time range end at once; a
    /// window that would hold too many flows fails at the limit instead of allocating.
    #[test]
    fn every_window_ends_and_the_flow_count_is_bounded() {
        let mut w = web(4, 1e-11, 1, 1);
        for rule in [WindowEnd::DropLast, WindowEnd::Exact] {
            assert_eq!(w.generate_at_most(rule, 10).unwrap(), vec![]);
        }
        w.load = 0.3;
        w.host_rate = BitsPerSec(1);
        for rule in [WindowEnd::DropLast, WindowEnd::Exact] {
            assert_eq!(w.generate_at_most(rule, 10).unwrap(), vec![]);
        }
        // Saturated times: every gap is 0 or the window reaches u64::MAX.
        let mut w = web(4, 0.3, 1, 1);
        w.start = Time::MAX;
        assert_eq!(w.generate_at_most(WindowEnd::Exact, 10).unwrap(), vec![]);
        assert_eq!(
            w.generate_at_most(WindowEnd::DropLast, 10),
            Err(WorkloadError::TooManyFlows { limit: 10 })
        );
        let w = web(4, 0.99, 1000, 1);
        assert!(w.expected_flows() > 100.0);
        assert_eq!(
            w.generate_at_most(WindowEnd::Exact, 100),
            Err(WorkloadError::TooManyFlows { limit: 100 })
        );
    }

    #[test]
    fn a_host_keeps_its_arrivals_when_other_hosts_change() {
        let a = web(4, 0.3, 50, 11).generate().unwrap();
        let mut w = web(4, 0.3, 50, 11);
        w.hosts = vec![NodeId(9), NodeId(3), NodeId(0), NodeId(1), NodeId(2)];
        let b = w.generate().unwrap();
        for h in 0..4 {
            let pick = |fs: &[FlowSpec]| {
                fs.iter().filter(|f| f.src.0 == h).map(|f| (f.start, f.size)).collect::<Vec<_>>()
            };
            assert_eq!(pick(&a), pick(&b), "host {h}");
        }
    }
}
