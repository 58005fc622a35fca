//! The workload of the FCT-harm experiment (ccafct, spec A4): a fixed number of flows with
//! exponential gaps and lognormal sizes given by their 5th and 95th percentiles.

use dcsim_core::units::{Duration, Time, PS_PER_NS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use thiserror::Error;

use crate::poisson::exp_gap_ps;

/// The standard-normal quantile ccafct uses for the 95th percentile (a rounded
/// `Φ⁻¹(0.95) = 1.6448536…`; kept rounded so that μ and σ are ccafct's).
pub const Z95: f64 = 1.645;

/// RNG stream of the gaps. The streams are tagged (`"HARM"` in the high bytes) so that they
/// never coincide with the per-host streams of [`crate::PoissonWorkload`] for the same seed.
const STREAM_GAPS: u64 = 0x4841_524D_0000_0000;
/// RNG stream of the sizes.
const STREAM_SIZES: u64 = STREAM_GAPS | 1;
/// RNG stream of the competitor's phase ([`HarmWorkload::competitor_phase`]).
const STREAM_PHASE: u64 = STREAM_GAPS | 2;

/// Why a [`HarmWorkload`] cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HarmWorkloadError {
    /// No flows were asked for.
    #[error("the harm workload needs at least 1 flow, found 0")]
    ZeroFlows,
    /// A zero 5th percentile (the lognormal has no mass at 0, and ln 0 is undefined).
    #[error("the 5th-percentile flow size must be at least 1 byte, found 0")]
    ZeroP5,
    /// The 95th percentile does not exceed the 5th.
    #[error("the 95th-percentile flow size ({p95} B) must exceed the 5th ({p5} B)")]
    PercentilesNotIncreasing {
        /// The 5th percentile given, bytes.
        p5: u64,
        /// The 95th percentile given, bytes.
        p95: u64,
    },
    /// A mean gap below 1 ns (zero included): gaps are whole nanoseconds, so the generator
    /// could not reach the requested rate.
    #[error(
        "the mean gap between flows must be at least 1 ns (gaps are whole nanoseconds), \
         found {mean_gap_ps} ps"
    )]
    MeanGapTooShort {
        /// The mean gap given, picoseconds.
        mean_gap_ps: u64,
    },
}

/// One flow of a [`HarmWorkload`]: when its request starts and how many bytes it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HarmFlow {
    /// Start time of the flow.
    pub start: Time,
    /// Size in bytes (at least 1).
    pub size: u64,
}

/// The ccafct FCT workload as a generator (spec A4; ccafct `client.go`).
///
/// # Model
/// * `flows` flows. The first starts at `start`; each later one follows the previous after an
///   exponential gap with mean `mean_gap`, truncated to whole nanoseconds like ccafct's
///   `time.Duration(Exp(1) · mean)` (`trunc(-ln(1 - U) · mean)`; two flows can share a start
///   time). Start times saturate at [`Time::MAX`] rather than overflow.
/// * Sizes are lognormal with `μ = (ln p5 + ln p95) / 2` and `σ = (ln p95 − ln p5) / (2 · 1.645)`
///   ([`Z95`]), so `p5` and `p95` are the 5th and 95th percentiles. A size is the draw
///   truncated to whole bytes (ccafct's `int(draw)`), **raised to 1 byte** if the draw is below
///   1 (ccafct would request an empty response; with the defaults this has probability
///   ~10⁻³³). There is no upper cap; a draw beyond `u64::MAX` saturates.
///
/// Defaults ([`HarmWorkload::default`]) are ccafct's: 900 flows (3 min / 200 ms) from 20 s,
/// P5 = 64 KiB, P95 = 2 MiB, giving μ = 12.8232, σ = 1.05342 and a mean of 645 683 B.
///
/// # Random streams
/// A [`ChaCha8Rng`] seeded with `seed_from_u64(seed)`, with two streams (`set_stream`): one
/// for the gaps (one `f64` per gap, `flows − 1` gaps) and one for the sizes (one standard
/// normal per flow, via `rand_distr`). A third gives the competitor's phase. Flow `i` therefore gets the same start time and size
/// whatever `flows` is (a longer list extends a shorter one), and changing the size
/// percentiles does not move the start times. The output is bit-identical for a seed on a
/// given platform (`ln` and `exp` come from the platform's math library).
///
/// ```
/// use dcsim_workload::HarmWorkload;
///
/// let w = HarmWorkload::default();
/// assert!((w.mean_size() - 645_683.0).abs() < 1.0);
/// let flows = w.generate(1).unwrap();
/// assert_eq!(flows.len(), 900);
/// assert_eq!(flows[0].start, w.start);
/// assert_eq!(flows, w.generate(1).unwrap());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HarmWorkload {
    /// Number of flows (ccafct: `int(duration / mean gap)` = 900).
    pub flows: usize,
    /// Start time of the first flow (ccafct: 20 s, after the competitor's slow start).
    pub start: Time,
    /// Mean of the exponential gap between consecutive flow starts (ccafct: 200 ms).
    pub mean_gap: Duration,
    /// 5th-percentile flow size in bytes (ccafct: 65 536).
    pub p5: u64,
    /// 95th-percentile flow size in bytes (ccafct: 2 097 152).
    pub p95: u64,
}

impl Default for HarmWorkload {
    /// ccafct's parameters: 900 flows from 20 s, mean gap 200 ms, P5 64 KiB, P95 2 MiB.
    fn default() -> HarmWorkload {
        HarmWorkload {
            flows: 900,
            start: Time::from_ns(20_000_000_000),
            mean_gap: Duration::from_ms(200),
            p5: 64 * 1024,
            p95: 2 * 1024 * 1024,
        }
    }
}

impl HarmWorkload {
    /// Checks the parameters: at least one flow, `1 <= p5 < p95`, and a mean gap of at least
    /// 1 ns.
    ///
    /// # Errors
    /// The first violated condition, in that order.
    pub fn validate(&self) -> Result<(), HarmWorkloadError> {
        if self.flows == 0 {
            return Err(HarmWorkloadError::ZeroFlows);
        }
        if self.p5 == 0 {
            return Err(HarmWorkloadError::ZeroP5);
        }
        if self.p5 >= self.p95 {
            return Err(HarmWorkloadError::PercentilesNotIncreasing { p5: self.p5, p95: self.p95 });
        }
        if self.mean_gap.as_ps() < PS_PER_NS {
            return Err(HarmWorkloadError::MeanGapTooShort { mean_gap_ps: self.mean_gap.as_ps() });
        }
        Ok(())
    }

    /// μ of the size distribution, `(ln p5 + ln p95) / 2` (12.8232 for the defaults).
    pub fn mu(&self) -> f64 {
        ((self.p5 as f64).ln() + (self.p95 as f64).ln()) / 2.0
    }

    /// σ of the size distribution, `(ln p95 − ln p5) / (2 · 1.645)` (1.05342 for the defaults).
    pub fn sigma(&self) -> f64 {
        ((self.p95 as f64).ln() - (self.p5 as f64).ln()) / (2.0 * Z95)
    }

    /// Mean of the lognormal size distribution, `e^(μ + σ²/2)` bytes (645 683 B for the
    /// defaults; ccafct prints it truncated). The generated sizes, truncated to whole bytes,
    /// average about half a byte less.
    pub fn mean_size(&self) -> f64 {
        let s = self.sigma();
        (self.mu() + s * s / 2.0).exp()
    }

    /// The load the workload offers, `mean_size · 8 / mean_gap` in bit/s (25.83 Mb/s for the
    /// defaults). ccafct computes the arrival rate as a whole number of flows per second
    /// (`1 s / mean gap` in integer arithmetic); this is the exact rate.
    pub fn offered_bps(&self) -> f64 {
        self.mean_size() * 8.0 / self.mean_gap.as_secs_f64()
    }

    /// Generates the flows, sorted by start time (see the type's documentation for the model
    /// and the stream order).
    ///
    /// # Errors
    /// As [`HarmWorkload::validate`].
    pub fn generate(&self, seed: u64) -> Result<Vec<HarmFlow>, HarmWorkloadError> {
        self.validate()?;
        let sizes = LogNormal::new(self.mu(), self.sigma())
            .expect("validated: sigma is finite and positive");
        let mut gap_rng = stream(seed, STREAM_GAPS);
        let mut size_rng = stream(seed, STREAM_SIZES);
        let mean_ns = self.mean_gap.as_ns_f64();
        let mut t = self.start.as_ps();
        let mut out = Vec::with_capacity(self.flows);
        for i in 0..self.flows {
            if i > 0 {
                t = t.saturating_add(exp_gap_ps(&mut gap_rng, mean_ns));
            }
            let draw: f64 = sizes.sample(&mut size_rng);
            // `as` truncates toward zero and saturates; a draw below 1 becomes 1 byte.
            let size = (draw as u64).max(1);
            out.push(HarmFlow { start: Time::from_ps(t), size });
        }
        Ok(out)
    }
}

impl HarmWorkload {
    /// The competing flow's start for seed `seed`: uniform in `[0, span)` picoseconds (one draw
    /// from its own stream, so the flow list does not depend on it). `dcsim harm` starts the
    /// competitor this far into the run, with `span` one base RTT: a run of ccafct's starts its
    /// competitor at no fixed phase of the path's round trip, of the endpoints' millisecond
    /// clocks, or of the workload's arrivals, and each seed samples one. Zero when `span` is 0.
    pub fn competitor_phase(seed: u64, span: Duration) -> Duration {
        if span.as_ps() == 0 {
            return Duration::ZERO;
        }
        let mut rng = stream(seed, STREAM_PHASE);
        Duration::from_ps(rng.gen_range(0..span.as_ps()))
    }
}

/// One of the generator's random streams.
fn stream(seed: u64, purpose: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(purpose);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The competitor's phase is uniform in `[0, span)`: over 2 000 seeds every draw is inside,
    /// the mean is within 3% of span / 2 and both ends of the range are reached; a seed always
    /// draws the same phase, and the flow list does not depend on it.
    #[test]
    fn competitor_phases_are_uniform_within_the_span() {
        let span = Duration::from_ms(160);
        let draws: Vec<u64> =
            (1..=2000).map(|s| HarmWorkload::competitor_phase(s, span).as_ps()).collect();
        assert!(draws.iter().all(|&d| d < span.as_ps()));
        let mean = draws.iter().map(|&d| d as f64).sum::<f64>() / draws.len() as f64;
        assert!((mean / (span.as_ps() as f64 / 2.0) - 1.0).abs() < 0.03, "mean {mean}");
        assert!(draws.iter().any(|&d| d < span.as_ps() / 50));
        assert!(draws.iter().any(|&d| d > span.as_ps() / 50 * 49));
        assert_eq!(HarmWorkload::competitor_phase(7, span).as_ps(), draws[6]);
        assert_eq!(HarmWorkload::competitor_phase(7, Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn ccafct_parameters() {
        let w = HarmWorkload::default();
        assert!((w.mu() - 12.8232).abs() < 5e-5, "{}", w.mu());
        assert!((w.sigma() - 1.05342).abs() < 5e-6, "{}", w.sigma());
        assert_eq!(w.mean_size() as u64, 645_683);
        // ccafct prints "Est. bandwidth: 25.83Mbps".
        assert!((w.offered_bps() / 1e6 - 25.83).abs() < 0.005, "{}", w.offered_bps());
    }

    #[test]
    fn errors_name_the_problem() {
        let ok = HarmWorkload::default();
        let cases = [
            (HarmWorkload { flows: 0, ..ok }, "the harm workload needs at least 1 flow, found 0"),
            (
                HarmWorkload { p5: 0, ..ok },
                "the 5th-percentile flow size must be at least 1 byte, found 0",
            ),
            (
                HarmWorkload { p5: 10, p95: 10, ..ok },
                "the 95th-percentile flow size (10 B) must exceed the 5th (10 B)",
            ),
            (
                HarmWorkload { mean_gap: Duration::ZERO, ..ok },
                "the mean gap between flows must be at least 1 ns (gaps are whole nanoseconds), \
                 found 0 ps",
            ),
            (
                HarmWorkload { mean_gap: Duration::from_ps(999), ..ok },
                "the mean gap between flows must be at least 1 ns (gaps are whole nanoseconds), \
                 found 999 ps",
            ),
        ];
        for (w, msg) in cases {
            assert_eq!(w.generate(1).unwrap_err().to_string(), msg);
        }
        assert_eq!(
            HarmWorkload { p5: 20, p95: 10, ..ok }.validate(),
            Err(HarmWorkloadError::PercentilesNotIncreasing { p5: 20, p95: 10 })
        );
        assert!(HarmWorkload { mean_gap: Duration::from_ns(1), ..ok }.validate().is_ok());
    }

    #[test]
    fn a_longer_list_extends_a_shorter_one() {
        let w = HarmWorkload::default();
        let short = HarmWorkload { flows: 10, ..w }.generate(3).unwrap();
        let long = w.generate(3).unwrap();
        assert_eq!(short[..], long[..10]);
        // Other size percentiles keep the start times.
        let other = HarmWorkload { p5: 1000, p95: 5000, ..w }.generate(3).unwrap();
        assert!(other.iter().zip(&long).all(|(a, b)| a.start == b.start));
        assert!(other.iter().all(|f| f.size >= 1));
    }
}
