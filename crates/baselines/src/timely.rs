//! TIMELY (the reference's CC mode 7; spec §4.4).
//!
//! # Algorithm
//!
//! On every ACK/NACK whose cumulative sequence `ack` is beyond `lastUpdateSeq` (once per window
//! of data; other ACKs do nothing), with `rtt = now − echoed send time`:
//!
//! ```text
//! if lastUpdateSeq != 0:                      # not the first sample
//!   d = (1-α)·rttDiff + α·(rtt − lastRtt);  gradient = d / minRtt
//!   rtt < T_low           → increase
//!   rtt > T_high          → decrease, c = 1 − β(1 − T_high/rtt)
//!   gradient <= 0         → increase
//!   otherwise             → decrease, c = max(0, 1 − β·gradient)
//!   increase: rate = min(line, curRate + (incStage < hai_after ? AI : HAI)); incStage += 1
//!   decrease: rate = max(MIN_RATE, curRate·c);                               incStage = 0
//!   curRate = rate; rttDiff = d
//! if snd_nxt > lastUpdateSeq: lastUpdateSeq = snd_nxt; lastRtt = rtt
//! ```
//!
//! # Time units
//!
//! The reference works in integer nanoseconds (`rtt`, `lastRtt`, `T_low`, `T_high`, `minRtt`)
//! and keeps `rttDiff` as a `double` in nanoseconds. dcsim keeps RTTs as picosecond
//! [`Duration`]s and compares them with the thresholds in picoseconds, so `rtt < T_low` and
//! `rtt > T_high` decide exactly as the reference does whenever the RTT is a whole number of
//! nanoseconds (and use the full precision otherwise). The gradient arithmetic is done in `f64`
//! nanoseconds with the reference's expression order (`rtt − lastRtt` and `T_high/rtt` are
//! exact or identically rounded for whole-nanosecond values), so `rttDiff`, the gradient and
//! `c` are bit-identical to the reference's.

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit};
use dcsim_core::packet::HeaderMode;
use dcsim_core::units::{BitsPerSec, Duration, PS_PER_NS};
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::{bw_gbps, check_unit_interval, mul_rate, sentence};

/// The parameters of `timely` and `timely-w` (the same algorithm), in the order front ends
/// list them, with their defaults as a scenario writes them (`docs/schemes.md` documents each).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "rate_ai",
        Kind::Rate,
        "10*bw/10 Mbps (100Mbps at 100Gbps)",
        "the additive increase (RATE_AI); by default it scales with the line rate",
    ),
    ParamSpec::new(
        "rate_hai",
        Kind::Rate,
        "50*bw/10 Mbps (500Mbps at 100Gbps)",
        "the increase used after hai_after increases in a row (RATE_HAI); by default it scales \
         with the line rate",
    ),
    ParamSpec::new("min_rate", Kind::Rate, "1000Mbps", "the floor of a decreased rate (MIN_RATE)"),
    ParamSpec::new(
        "alpha",
        Kind::Number,
        "0.875",
        "the EWMA weight of the new RTT-difference sample, in (0, 1]",
    ),
    ParamSpec::new("beta", Kind::Number, "0.8", "the multiplicative-decrease factor, in (0, 1]"),
    ParamSpec::new(
        "t_low",
        Kind::Duration,
        "50us",
        "below this RTT the rate always increases; at most t_high",
    ),
    ParamSpec::new("t_high", Kind::Duration, "500us", "above this RTT the rate always decreases"),
    ParamSpec::new("min_rtt", Kind::Duration, "20us", "the normalizer of the RTT gradient, > 0"),
    ParamSpec::new(
        "hai_after",
        Kind::Integer,
        "5",
        "how many increases in a row before the step becomes rate_hai",
    ),
];

/// The `timely` scheme: TIMELY with pure rate pacing.
pub const SPEC: PluginSpec =
    PluginSpec { name: "timely", summary: "TIMELY, pure rate pacing", params: PARAMS };

/// The `timely-w` scheme: the same algorithm and parameters as [`SPEC`], with a variable
/// window (a NIC profile, not another algorithm).
pub const SPEC_W: PluginSpec =
    PluginSpec { name: "timely-w", summary: "TIMELY with a variable window", params: PARAMS };

/// TIMELY parameters. [`Default`] is the reference's: its constants (`alpha`, `beta`, the
/// thresholds and `hai_after` are not configurable there) and the run script's `timely` rates
/// (spec §5.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyParams {
    /// Additive-increase step (`RATE_AI`). `None` (default) scales it with the NIC line rate
    /// as the run script does: `10*bw/10` Mb/s with `bw` the line rate in whole Gb/s
    /// (100 Mb/s at 100 Gb/s).
    pub rate_ai: Option<BitsPerSec>,
    /// Step after `hai_after` consecutive increases (`RATE_HAI`). `None` (default):
    /// `50*bw/10` Mb/s (500 Mb/s at 100 Gb/s).
    pub rate_hai: Option<BitsPerSec>,
    /// Floor of a decreased rate (`MIN_RATE`); default 1000 Mb/s.
    pub min_rate: BitsPerSec,
    /// EWMA weight of the **new** RTT-difference sample; default 0.875.
    pub alpha: f64,
    /// Multiplicative-decrease factor; default 0.8.
    pub beta: f64,
    /// Below this RTT the rate always increases; default 50 µs.
    pub t_low: Duration,
    /// Above this RTT the rate always decreases; default 500 µs.
    pub t_high: Duration,
    /// Normaliser of the RTT gradient; default 20 µs.
    pub min_rtt: Duration,
    /// Number of consecutive increases after which the step is `rate_hai`; default 5.
    pub hai_after: u32,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            rate_ai: None,
            rate_hai: None,
            min_rate: BitsPerSec::mbps(1000),
            alpha: 0.875,
            beta: 0.8,
            t_low: Duration::from_us(50),
            t_high: Duration::from_us(500),
            min_rtt: Duration::from_us(20),
            hai_after: 5,
        }
    }
}

impl TimelyParams {
    /// The parameters [`PARAMS`] describes, read from `p`; absent ones take
    /// [`TimelyParams::default`]'s values. The result is checked ([`TimelyParams::check`]).
    ///
    /// # Errors
    /// A `hai_after` above `u32::MAX`, or what [`TimelyParams::check`] rejects.
    pub fn from_params(p: &Params) -> Result<TimelyParams, ParamError> {
        let d = TimelyParams::default();
        let params = TimelyParams {
            rate_ai: p.opt_rate("rate_ai", d.rate_ai),
            rate_hai: p.opt_rate("rate_hai", d.rate_hai),
            min_rate: p.rate("min_rate", d.min_rate),
            alpha: p.f64("alpha", d.alpha),
            beta: p.f64("beta", d.beta),
            t_low: p.duration("t_low", d.t_low),
            t_high: p.duration("t_high", d.t_high),
            min_rtt: p.duration("min_rtt", d.min_rtt),
            hai_after: p.u32("hai_after", d.hai_after)?,
        };
        params.check()?;
        Ok(params)
    }

    /// Checks the values: `alpha` and `beta` in (0, 1], `min_rtt` and `min_rate` positive,
    /// `t_low <= t_high` (reported on `t_low`).
    ///
    /// # Errors
    /// The first offending field and what is wrong with it.
    pub fn check(&self) -> Result<(), ParamError> {
        check_unit_interval("alpha", self.alpha)?;
        check_unit_interval("beta", self.beta)?;
        if self.min_rtt == Duration::ZERO {
            return Err(ParamError::new("min_rtt", "must be positive"));
        }
        if self.t_low > self.t_high {
            return Err(ParamError::new(
                "t_low",
                format!("({}) must not exceed t_high ({})", self.t_low, self.t_high),
            ));
        }
        if self.min_rate.0 == 0 {
            return Err(ParamError::new("min_rate", "must be positive"));
        }
        Ok(())
    }

    /// [`TimelyParams::check`] as one sentence that starts with the field's name.
    ///
    /// # Errors
    /// As [`TimelyParams::check`].
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(sentence)
    }

    /// The additive-increase step in force for a NIC of rate `line_rate`.
    pub fn rate_ai_for(&self, line_rate: BitsPerSec) -> BitsPerSec {
        self.rate_ai.unwrap_or(BitsPerSec::mbps(10 * bw_gbps(line_rate) / 10))
    }

    /// The hyper-additive step in force for a NIC of rate `line_rate`.
    pub fn rate_hai_for(&self, line_rate: BitsPerSec) -> BitsPerSec {
        self.rate_hai.unwrap_or(BitsPerSec::mbps(50 * bw_gbps(line_rate) / 10))
    }
}

/// Per-flow TIMELY state (the reference's `tmly` block), with the parameters resolved for the
/// flow's line rate.
#[derive(Clone, Debug)]
pub struct Timely {
    line_rate: BitsPerSec,
    ai: BitsPerSec,
    hai: BitsPerSec,
    min_rate: BitsPerSec,
    alpha: f64,
    beta: f64,
    t_low: Duration,
    t_high: Duration,
    min_rtt_ns: f64,
    hai_after: u32,

    last_update_seq: u64,
    cur_rate: BitsPerSec,
    inc_stage: u32,
    last_rtt: Duration,
    rtt_diff_ns: f64,
}

/// A duration in nanoseconds as `f64` (exact for whole nanoseconds).
fn ns_f64(ps: i128) -> f64 {
    ps as f64 / PS_PER_NS as f64
}

impl Timely {
    /// A new flow on a NIC of rate `line_rate`: at line rate, no sample yet.
    pub fn new(params: &TimelyParams, line_rate: BitsPerSec) -> Timely {
        Timely {
            line_rate,
            ai: params.rate_ai_for(line_rate),
            hai: params.rate_hai_for(line_rate),
            min_rate: params.min_rate,
            alpha: params.alpha,
            beta: params.beta,
            t_low: params.t_low,
            t_high: params.t_high,
            min_rtt_ns: ns_f64(params.min_rtt.as_ps() as i128),
            hai_after: params.hai_after,
            last_update_seq: 0,
            cur_rate: line_rate,
            inc_stage: 0,
            last_rtt: Duration::ZERO,
            rtt_diff_ns: 0.0,
        }
    }

    /// Current rate (`curRate`, always equal to the pacing rate this scheme set).
    pub fn rate(&self) -> BitsPerSec {
        self.cur_rate
    }
    /// Number of consecutive increases.
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }
    /// The smoothed RTT difference, in nanoseconds.
    pub fn rtt_diff_ns(&self) -> f64 {
        self.rtt_diff_ns
    }
    /// The RTT recorded at the last window boundary.
    pub fn last_rtt(&self) -> Duration {
        self.last_rtt
    }
    /// `snd_nxt` at the last window boundary (0 before the first sample).
    pub fn last_update_seq(&self) -> u64 {
        self.last_update_seq
    }
    /// The additive-increase step in force.
    pub fn rate_ai(&self) -> BitsPerSec {
        self.ai
    }
    /// The hyper-additive step in force.
    pub fn rate_hai(&self) -> BitsPerSec {
        self.hai
    }

    /// An ACK/NACK with cumulative sequence `ack` arrived, the sender's `snd_nxt` being
    /// `snd_nxt` (after any go-back-N), carrying an RTT sample `rtt`. Returns the new pacing
    /// rate if the algorithm assigned one.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, rtt: Duration) -> Option<BitsPerSec> {
        if ack <= self.last_update_seq {
            return None;
        }
        let mut new_rate = None;
        if self.last_update_seq != 0 {
            let new_diff = ns_f64(rtt.as_ps() as i128 - self.last_rtt.as_ps() as i128);
            let d = (1.0 - self.alpha) * self.rtt_diff_ns + self.alpha * new_diff;
            let gradient = d / self.min_rtt_ns;
            let decrease = if rtt < self.t_low {
                None
            } else if rtt > self.t_high {
                let ratio = self.t_high.as_ps() as f64 / rtt.as_ps() as f64;
                Some(1.0 - self.beta * (1.0 - ratio))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - self.beta * gradient).max(0.0))
            };
            let rate = match decrease {
                None => {
                    let step = if self.inc_stage < self.hai_after { self.ai } else { self.hai };
                    let r = self.line_rate.min(BitsPerSec(self.cur_rate.0 + step.0));
                    self.inc_stage = self.inc_stage.saturating_add(1);
                    r
                }
                Some(c) => {
                    self.inc_stage = 0;
                    self.min_rate.max(mul_rate(self.cur_rate, c))
                }
            };
            self.cur_rate = rate;
            self.rtt_diff_ns = d;
            new_rate = Some(rate);
        }
        if snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
            self.last_rtt = rtt;
        }
        new_rate
    }
}

impl CongestionControl for Timely {
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>) {
        let rtt = ctx.now.saturating_since(fb.ts_echo);
        if let Some(r) = self.on_ack(fb.ack, ctx.snd_nxt, rtt) {
            ctx.set_rate(r);
        }
    }
}

/// The TIMELY scheme (`"timely"`, 8-byte timestamp header echoed in ACKs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimelyFactory {
    /// Parameters shared by every flow (validated by the caller with
    /// [`TimelyParams::validate`]).
    pub params: TimelyParams,
}

impl From<TimelyParams> for TimelyFactory {
    /// The factory for checked parameters.
    fn from(params: TimelyParams) -> TimelyFactory {
        TimelyFactory { params }
    }
}

impl CcFactory for TimelyFactory {
    type Cc = Timely;
    fn name(&self) -> &str {
        "timely"
    }
    fn header_mode(&self) -> HeaderMode {
        HeaderMode::Timestamp
    }
    fn new_flow(&self, init: &FlowInit) -> Timely {
        Timely::new(&self.params, init.line_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: BitsPerSec = BitsPerSec::gbps(100);

    fn us(n: u64) -> Duration {
        Duration::from_us(n)
    }

    fn flow() -> Timely {
        Timely::new(&TimelyParams::default(), G100)
    }

    /// A flow whose first sample (RTT `first`) has been recorded at `snd_nxt = 10_000`.
    fn primed(first: Duration) -> Timely {
        let mut t = flow();
        assert_eq!(t.on_ack(1_000, 10_000, first), None);
        t
    }

    /// Feeds one window-boundary ACK per RTT, `seq` advancing by 10 000 each time.
    fn feed(t: &mut Timely, rtts_us: &[u64]) -> Vec<u64> {
        rtts_us
            .iter()
            .map(|&r| {
                let ack = t.last_update_seq() + 1_000;
                let snd_nxt = t.last_update_seq() + 10_000;
                t.on_ack(ack, snd_nxt, us(r)).expect("a window boundary reacts").0
            })
            .collect()
    }

    #[test]
    fn defaults() {
        let p = TimelyParams::default();
        assert_eq!(p.rate_ai_for(G100), BitsPerSec::mbps(100));
        assert_eq!(p.rate_hai_for(G100), BitsPerSec::mbps(500));
        assert_eq!(p.rate_ai_for(BitsPerSec::gbps(25)), BitsPerSec::mbps(25));
        assert_eq!(p.rate_hai_for(BitsPerSec::gbps(25)), BitsPerSec::mbps(125));
        assert_eq!(p.min_rate, BitsPerSec::mbps(1000));
        assert_eq!((p.alpha, p.beta, p.hai_after), (0.875, 0.8, 5));
        assert_eq!((p.t_low, p.t_high, p.min_rtt), (us(50), us(500), us(20)));
        assert!(p.validate().is_ok());
        let f = TimelyFactory::default();
        assert_eq!(f.name(), "timely");
        assert_eq!(f.header_mode(), HeaderMode::Timestamp);
        let t = f.new_flow(&FlowInit {
            line_rate: BitsPerSec::gbps(400),
            base_rtt: us(8),
            bdp: 400_000,
            mtu: 1000,
            size: 1,
            seed: 0,
        });
        assert_eq!(
            (t.rate(), t.rate_ai(), t.rate_hai()),
            (BitsPerSec::gbps(400), BitsPerSec::mbps(400), BitsPerSec::mbps(2000))
        );
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |f: fn(&mut TimelyParams)| {
            let mut p = TimelyParams::default();
            f(&mut p);
            p.validate().unwrap_err()
        };
        assert_eq!(bad(|p| p.alpha = 0.0), "alpha must be in (0, 1], got 0");
        assert_eq!(bad(|p| p.beta = 1.2), "beta must be in (0, 1], got 1.2");
        assert_eq!(bad(|p| p.min_rtt = Duration::ZERO), "min_rtt must be positive");
        assert_eq!(
            bad(|p| p.t_low = Duration::from_us(600)),
            "t_low (600000ns) must not exceed t_high (500000ns)"
        );
        assert_eq!(bad(|p| p.min_rate = BitsPerSec(0)), "min_rate must be positive");
    }

    #[test]
    fn from_params_reads_every_parameter() {
        use dcsim_types::params::Value;
        assert_eq!(TimelyParams::from_params(&Params::default()), Ok(TimelyParams::default()));
        let given = vec![
            ("rate_ai", Value::Rate(BitsPerSec::mbps(7))),
            ("rate_hai", Value::Rate(BitsPerSec::mbps(70))),
            ("min_rate", Value::Rate(BitsPerSec::mbps(10))),
            ("alpha", Value::Number(0.5)),
            ("beta", Value::Number(0.25)),
            ("t_low", Value::Duration(us(10))),
            ("t_high", Value::Duration(us(100))),
            ("min_rtt", Value::Duration(us(5))),
            ("hai_after", Value::Integer(2)),
        ];
        assert_eq!(given.len(), PARAMS.len());
        let p = TimelyParams::from_params(&Params::from_values(PARAMS, given)).unwrap();
        assert_eq!(
            p,
            TimelyParams {
                rate_ai: Some(BitsPerSec::mbps(7)),
                rate_hai: Some(BitsPerSec::mbps(70)),
                min_rate: BitsPerSec::mbps(10),
                alpha: 0.5,
                beta: 0.25,
                t_low: us(10),
                t_high: us(100),
                min_rtt: us(5),
                hai_after: 2,
            }
        );
        // t_high below the default t_low: reported on t_low, whose value is the other side.
        let bad = Params::from_values(PARAMS, vec![("t_high", Value::Duration(us(10)))]);
        let e = TimelyParams::from_params(&bad).unwrap_err();
        assert_eq!(
            (e.field, e.message.as_str()),
            ("t_low", "(50000ns) must not exceed t_high (10000ns)")
        );
        assert_eq!((SPEC.params, SPEC_W.params), (PARAMS, PARAMS));
    }

    #[test]
    fn first_sample_only_records() {
        let t = primed(us(30));
        assert_eq!(t.rate(), G100);
        assert_eq!(t.last_update_seq(), 10_000);
        assert_eq!(t.last_rtt(), us(30));
        assert_eq!(t.rtt_diff_ns(), 0.0);
        assert_eq!(t.inc_stage(), 0);
    }

    #[test]
    fn reacts_only_once_the_ack_passes_the_window_boundary() {
        let mut t = primed(us(30));
        // ack <= lastUpdateSeq: nothing at all, not even the RTT.
        assert_eq!(t.on_ack(5_000, 12_000, us(900)), None);
        assert_eq!(t.on_ack(10_000, 12_000, us(900)), None);
        assert_eq!((t.last_update_seq(), t.last_rtt(), t.rate()), (10_000, us(30), G100));
        // ack > lastUpdateSeq: reacts (RTT 1000 us > T_high).
        assert!(t.on_ack(10_001, 20_000, us(1000)).is_some());
        assert_eq!(t.last_update_seq(), 20_000);
    }

    #[test]
    fn decrease_above_t_high() {
        // c = 1 - 0.8 (1 - 500/1000) = 0.6; 100G -> 60G.
        let mut t = primed(us(30));
        assert_eq!(feed(&mut t, &[1000]), [60_000_000_000]);
        assert_eq!(t.inc_stage(), 0);
        // d = 0.875 * (1 000 000 - 30 000) ns
        assert_eq!(t.rtt_diff_ns(), 848_750.0);
        assert_eq!(t.last_rtt(), us(1000));
        // c = 1 - 0.8 (1 - 500/800) = 0.7; 60G -> 42G.
        assert_eq!(feed(&mut t, &[800]), [42_000_000_000]);
        // d = 0.125 * 848750 + 0.875 * (-200000) = -68906.25: the T_high rule wins anyway.
        assert_eq!(t.rtt_diff_ns(), -68_906.25);
    }

    #[test]
    fn increase_below_t_low_and_hai_after_five() {
        let mut t = primed(us(30));
        feed(&mut t, &[1000]); // 60G
        let rates = feed(&mut t, &[40, 40, 40, 40, 40, 40, 40]);
        assert_eq!(
            rates,
            [
                60_100_000_000, // stages 0..4: +AI
                60_200_000_000,
                60_300_000_000,
                60_400_000_000,
                60_500_000_000,
                61_000_000_000, // stage 5: +HAI
                61_500_000_000,
            ]
        );
        assert_eq!(t.inc_stage(), 7);
        // Below T_low the rule ignores a large positive gradient: 40 -> 49 us.
        assert_eq!(feed(&mut t, &[49]), [62_000_000_000]);
        // A decrease resets the stage.
        feed(&mut t, &[1000]);
        assert_eq!(t.inc_stage(), 0);
    }

    #[test]
    fn gradient_decides_between_the_thresholds() {
        let mut t = primed(us(100));
        // d = 0.875 * 10 000 = 8750 ns, gradient 0.4375, c = 1 - 0.8 * 0.4375 = 0.65 in f64
        // is 0.6499999999999999, so 100G * c truncates to 64 999 999 999 (as in the reference).
        assert_eq!(feed(&mut t, &[110]), [64_999_999_999]);
        assert_eq!(t.rtt_diff_ns(), 8_750.0);
        // d = 0.125 * 8750 + 0.875 * (-5000) = -3281.25 < 0: increase.
        assert_eq!(feed(&mut t, &[105]), [65_099_999_999]);
        assert_eq!(t.rtt_diff_ns(), -3_281.25);
        // d = 0.125 * -3281.25 + 0 = -410.15625: increase.
        assert_eq!(feed(&mut t, &[105]), [65_199_999_999]);
        assert_eq!(t.rtt_diff_ns(), -410.156_25);
        // d = -51.26953125 + 0.875 * 40 000 = 34948.73046875, gradient 1.7474..., c < 0 -> 0,
        // floored at MIN_RATE.
        assert_eq!(feed(&mut t, &[145]), [1_000_000_000]);
        assert_eq!(t.rtt_diff_ns(), 34_948.730_468_75);
        assert_eq!(t.inc_stage(), 0);
    }

    #[test]
    fn zero_gradient_increases_and_line_rate_caps() {
        let mut t = primed(us(100));
        // Equal RTTs: d = 0, gradient 0 (<= 0) -> increase, capped at line rate.
        assert_eq!(feed(&mut t, &[100, 100]), [G100.0, G100.0]);
        assert_eq!(t.inc_stage(), 2);
        assert_eq!(t.rtt_diff_ns(), 0.0);
    }

    #[test]
    fn thresholds_are_strict() {
        // rtt == T_low is not below it, rtt == T_high is not above it: the gradient decides.
        let mut t = primed(us(40));
        // d = 0.875 * 10 000 = 8750 -> c = 0.65 (truncated product, see above)
        assert_eq!(feed(&mut t, &[50]), [64_999_999_999]);
        let mut t = primed(us(490));
        assert_eq!(feed(&mut t, &[500]), [64_999_999_999]);
        // One picosecond above T_high is above it.
        let mut t = primed(us(490));
        let r = t.on_ack(10_001, 20_000, us(500) + Duration::from_ps(1)).unwrap();
        let c = 1.0 - 0.8 * (1.0 - 500_000_000.0 / 500_000_001.0);
        assert_eq!(r, BitsPerSec((1e11 * c) as u64));
        assert_eq!(r, BitsPerSec(99_999_999_840));
        // One picosecond below T_low is below it (increase, capped).
        let mut t = primed(us(40));
        assert_eq!(t.on_ack(10_001, 20_000, us(50) - Duration::from_ps(1)), Some(G100));
    }

    #[test]
    fn boundary_not_advanced_when_snd_nxt_went_back() {
        // After a go-back-N, snd_nxt may not pass lastUpdateSeq: the reaction happens but
        // neither the boundary nor lastRtt moves.
        let mut t = primed(us(30));
        assert_eq!(t.on_ack(10_500, 9_000, us(1000)), Some(BitsPerSec(60_000_000_000)));
        assert_eq!((t.last_update_seq(), t.last_rtt()), (10_000, us(30)));
    }
}
