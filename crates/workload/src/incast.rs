//! Incast traffic: many senders to one receiver at the same instant, as a Poisson process.

use dcsim_core::config::FlowSpec;
use dcsim_core::ids::{FlowId, NodeId};
use dcsim_core::units::{BitsPerSec, Duration, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::WorkloadError;
use crate::poisson::{check_hosts, exp_gap_ps, FLOW_PG};

/// Destination port of incast flows (the reference analysis selects incast by dport 200).
pub const INCAST_DPORT: u16 = 200;

/// The ChaCha stream used by [`Incast`]; disjoint from the per-host streams of
/// [`crate::PoissonWorkload`] (which are below 2^34), so the two can share a seed.
const INCAST_STREAM: u64 = 1 << 63;

/// How an incast event chooses its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverChoice {
    /// Uniformly among the hosts, independently for every event.
    Random,
    /// Always this host (must be one of the hosts).
    Fixed(NodeId),
}

/// Incast events arriving as a Poisson process (the HPCC paper adds 2 % of capacity as
/// 60-sender × 500 KB incasts on top of the background traffic).
///
/// # Model
/// * Each event has `senders` flows of `size` bytes, all to one receiver and all starting at
///   the event's instant.
/// * Events are a Poisson process whose rate makes incast payload use
///   `fraction_of_capacity` of the total host capacity `hosts.len() * host_rate`: the mean gap
///   between events is `senders * size * 8 / (fraction * hosts * rate)` s. Gaps are truncated
///   to whole nanoseconds like [`crate::PoissonWorkload`]'s.
/// * The first event is at `start + gap`; every event in `[start, start + duration)` is
///   emitted (there is no incast generator in the reference, so no last-candidate drop).
/// * The receiver is drawn per [`ReceiverChoice`]; the senders are distinct, drawn uniformly
///   among the other hosts.
/// * Flows have priority group 3 and destination port [`INCAST_DPORT`] (200); the output is
///   sorted by start time (within an event, in the order the senders were drawn), ids `0..n`.
///
/// # Random stream
/// One [`rand_chacha::ChaCha8Rng`] seeded with `seed` (via `seed_from_u64`) on stream 2^63,
/// consumed in this order: one `f64` for the first gap; then per event: the receiver
/// (`gen_range(0..hosts)`, only for [`ReceiverChoice::Random`]), the senders by a partial
/// Fisher–Yates shuffle of the other hosts in list order (`gen_range(i..n_other)` for
/// `i = 0..senders`), and one `f64` for the gap to the next event.
#[derive(Clone, Debug, PartialEq)]
pub struct Incast {
    /// The hosts that may send or receive (no duplicates).
    pub hosts: Vec<NodeId>,
    /// Each host's link rate.
    pub host_rate: BitsPerSec,
    /// How each event's receiver is chosen.
    pub receiver_choice: ReceiverChoice,
    /// Senders per event (distinct, never the receiver; at most `hosts.len() - 1`).
    pub senders: usize,
    /// Bytes per incast flow.
    pub size: u64,
    /// Fraction of total host capacity used by incast payload, in (0, 1).
    pub fraction_of_capacity: f64,
    /// Start of the arrival window.
    pub start: Time,
    /// Length of the arrival window.
    pub duration: Duration,
    /// Seed of the random stream.
    pub seed: u64,
}

impl Incast {
    /// Checks the parameters.
    ///
    /// # Errors
    /// The first violated condition as a [`WorkloadError`].
    pub fn validate(&self) -> Result<(), WorkloadError> {
        check_hosts(&self.hosts, "an incast", self.senders.max(1) + 1)?;
        if self.senders == 0 {
            return Err(WorkloadError::Zero("incast sender count"));
        }
        if self.size == 0 {
            return Err(WorkloadError::Zero("incast flow size"));
        }
        if self.host_rate.get() == 0 {
            return Err(WorkloadError::ZeroRate);
        }
        let f = self.fraction_of_capacity;
        if !(f > 0.0 && f < 1.0) {
            return Err(WorkloadError::InvalidFraction(f));
        }
        if let ReceiverChoice::Fixed(r) = self.receiver_choice {
            if !self.hosts.contains(&r) {
                return Err(WorkloadError::ReceiverNotAHost(r.0));
            }
        }
        let gap = self.mean_event_gap_ns();
        if gap.is_nan() || gap < 1.0 {
            return Err(WorkloadError::InterArrivalTooShort { mean_ns: gap });
        }
        Ok(())
    }

    /// Mean time between incast events in nanoseconds.
    pub fn mean_event_gap_ns(&self) -> f64 {
        let event_bits = self.senders as f64 * self.size as f64 * 8.0;
        let capacity =
            self.fraction_of_capacity * self.hosts.len() as f64 * self.host_rate.get() as f64;
        event_bits / capacity * 1e9
    }

    /// The expected number of flows: `senders × duration / mean event gap`.
    pub fn expected_flows(&self) -> f64 {
        self.senders as f64 * self.duration.as_ns_f64() / self.mean_event_gap_ns()
    }

    /// Generates the incast flows (see the type's documentation), at most
    /// [`crate::DEFAULT_FLOW_LIMIT`].
    ///
    /// # Errors
    /// As [`Incast::generate_at_most`].
    pub fn generate(&self) -> Result<Vec<FlowSpec>, WorkloadError> {
        self.generate_at_most(crate::DEFAULT_FLOW_LIMIT)
    }

    /// Generates the incast flows, at most `max_flows` of them. The loop ends for every
    /// input: every event adds `senders` flows, which `max_flows` bounds.
    ///
    /// # Errors
    /// As [`Incast::validate`], or [`WorkloadError::TooManyFlows`] as soon as an event would
    /// take the flows beyond `max_flows`.
    pub fn generate_at_most(&self, max_flows: usize) -> Result<Vec<FlowSpec>, WorkloadError> {
        self.validate()?;
        let mean = self.mean_event_gap_ns();
        let end = self.start.as_ps().saturating_add(self.duration.as_ps());
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(INCAST_STREAM);
        let mut flows = Vec::new();
        let mut t = self.start.as_ps().saturating_add(exp_gap_ps(&mut rng, mean));
        let mut others: Vec<NodeId> = Vec::with_capacity(self.hosts.len());
        while t < end {
            let receiver = match self.receiver_choice {
                ReceiverChoice::Random => self.hosts[rng.gen_range(0..self.hosts.len())],
                ReceiverChoice::Fixed(r) => r,
            };
            if flows.len().saturating_add(self.senders) > max_flows {
                return Err(WorkloadError::TooManyFlows { limit: max_flows });
            }
            others.clear();
            others.extend(self.hosts.iter().copied().filter(|&h| h != receiver));
            for i in 0..self.senders {
                let j = rng.gen_range(i..others.len());
                others.swap(i, j);
                flows.push(FlowSpec {
                    id: FlowId::from_idx(flows.len()),
                    src: others[i],
                    dst: receiver,
                    size: self.size,
                    start: Time::from_ps(t),
                    pg: FLOW_PG,
                    dport: INCAST_DPORT,
                });
            }
            t = t.saturating_add(exp_gap_ps(&mut rng, mean));
        }
        Ok(flows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incast() -> Incast {
        Incast {
            hosts: (0..16).map(NodeId).collect(),
            host_rate: BitsPerSec::gbps(100),
            receiver_choice: ReceiverChoice::Random,
            senders: 8,
            size: 500_000,
            fraction_of_capacity: 0.02,
            start: Time::from_ns(1000),
            duration: Duration::from_ms(100),
            seed: 5,
        }
    }

    #[test]
    fn events_have_distinct_senders_and_one_receiver() {
        let flows = incast().generate().unwrap();
        assert!(!flows.is_empty());
        assert_eq!(flows.len() % 8, 0);
        for ev in flows.chunks(8) {
            let rx = ev[0].dst;
            let mut srcs: Vec<u32> = ev.iter().map(|f| f.src.0).collect();
            srcs.sort_unstable();
            srcs.dedup();
            assert_eq!(srcs.len(), 8);
            for f in ev {
                assert_eq!(
                    (f.dst, f.start, f.size, f.pg, f.dport),
                    (rx, ev[0].start, 500_000, 3, 200)
                );
                assert_ne!(f.src, rx);
            }
        }
        for (i, f) in flows.iter().enumerate() {
            assert_eq!(f.id, FlowId::from_idx(i));
        }
    }

    #[test]
    fn fixed_receiver_and_all_other_hosts() {
        let mut c = incast();
        c.receiver_choice = ReceiverChoice::Fixed(NodeId(3));
        c.senders = 15;
        let flows = c.generate().unwrap();
        assert!(flows.iter().all(|f| f.dst == NodeId(3) && f.src != NodeId(3)));
    }

    #[test]
    fn the_flow_count_is_bounded() {
        let c = incast();
        let n = c.generate().unwrap().len();
        assert!(n > 8 && (c.expected_flows() - n as f64).abs() < n as f64);
        assert_eq!(c.generate_at_most(n).unwrap().len(), n);
        assert_eq!(c.generate_at_most(n - 1), Err(WorkloadError::TooManyFlows { limit: n - 1 }));
        let mut c = incast();
        c.start = Time::MAX;
        assert_eq!(c.generate_at_most(8).unwrap(), vec![]);
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let mut c = incast();
        c.senders = 16;
        assert_eq!(
            c.generate().unwrap_err().to_string(),
            "an incast needs at least 17 hosts, found 16"
        );
        let mut c = incast();
        c.receiver_choice = ReceiverChoice::Fixed(NodeId(99));
        assert_eq!(
            c.generate().unwrap_err().to_string(),
            "incast receiver 99 is not one of the hosts"
        );
        for f in [0.0, 1.0, -1.0] {
            let mut c = incast();
            c.fraction_of_capacity = f;
            assert_eq!(c.generate().unwrap_err(), WorkloadError::InvalidFraction(f));
        }
        let mut c = incast();
        c.size = 0;
        assert_eq!(c.generate().unwrap_err().to_string(), "incast flow size must be > 0");
        let mut c = incast();
        c.senders = 0;
        assert_eq!(c.generate().unwrap_err().to_string(), "incast sender count must be > 0");
    }
}
