//! DCQCN, Mellanox variant (the reference's CC mode 1; spec §4.3).
//!
//! # State machine
//!
//! ```text
//! flagged ACK/NACK: alphaCnp = decCnp = true
//!   first one only: alpha = 1, alphaCnp = false, target = rate,
//!                   arm alpha timer at now + t_alpha, decrease timer at now + t_dec + 1 ns
//! alpha timer    (every t_alpha): alpha = (1-g)·alpha [+ g if alphaCnp]; alphaCnp = false
//! decrease timer (every t_dec)  : if decCnp: [target = rate if clamp or stage != 0];
//!                                 rate = max(MIN_RATE, rate·(1 - alpha/2)); stage = 0;
//!                                 decCnp = false; (re)arm increase timer at now + t_inc
//! increase timer (every t_inc)  : re-arm; then stage <  F: rate = rate/2 + target/2
//!                                          stage == F: target = min(line, target + AI); same
//!                                          stage >  F: target = min(line, target + HAI); same
//!                                 then stage += 1
//! ```
//!
//! Timers use the slots [`Dcqcn::ALPHA_TIMER`] (0), [`Dcqcn::DECREASE_TIMER`] (1) and
//! [`Dcqcn::INCREASE_TIMER`] (2). When one callback arms two timers for the same instant, the
//! core schedules them in slot order, which is the order in which the reference schedules them
//! (alpha before decrease on the first CNP; decrease before increase in the decrease timer).
//!
//! The first-CNP "rate on first CNP" factor is fixed at 1.0 in the reference, so the rate is
//! not changed (and not re-written) by the first CNP. All timers stop when the flow completes
//! (the core discards them); a flagged ACK that completes the flow arms none (see the crate
//! docs on the reference's §2.4 quirk).

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit, TimerOp};
use dcsim_core::packet::HeaderMode;
use dcsim_core::units::{BitsPerSec, Duration, Time, MIN_PERIOD, PS_PER_US};
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::{bw_gbps, check_unit_interval, mul_rate, sentence, Actions};

/// The parameters of `dcqcn` and `dcqcn-w` (the same algorithm), in the order front ends list
/// them, with their defaults as a scenario writes them (`docs/schemes.md` documents each).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "alpha_resume_interval",
        Kind::Duration,
        "1us",
        "t_alpha: the period of the alpha update, > 0 (ALPHA_RESUME_INTERVAL)",
    ),
    ParamSpec::new(
        "rate_decrease_interval",
        Kind::Duration,
        "4us",
        "t_dec: the period of the rate-decrease check, > 0 (RATE_DECREASE_INTERVAL)",
    ),
    ParamSpec::new(
        "rp_timer",
        Kind::Duration,
        "300us",
        "t_inc: the period of the rate-increase timer, > 0 (RP_TIMER)",
    ),
    ParamSpec::new(
        "ewma_gain",
        Kind::Number,
        "0.00390625",
        "g: the gain of the alpha EWMA, in (0, 1] (EWMA_GAIN)",
    ),
    ParamSpec::new(
        "fast_recovery_times",
        Kind::Integer,
        "1",
        "F: the number of fast-recovery stages before additive increase (FAST_RECOVERY_TIMES)",
    ),
    ParamSpec::new(
        "rate_ai",
        Kind::Rate,
        "5*bw/25 Mbps (20Mbps at 100Gbps)",
        "the additive increase of the target rate (RATE_AI); by default it scales with the \
         line rate",
    ),
    ParamSpec::new(
        "rate_hai",
        Kind::Rate,
        "50*bw/25 Mbps (200Mbps at 100Gbps)",
        "the hyper-additive increase, used after stage F (RATE_HAI); by default it scales with \
         the line rate",
    ),
    ParamSpec::new("min_rate", Kind::Rate, "1000Mbps", "the floor of a decreased rate (MIN_RATE)"),
    ParamSpec::new(
        "clamp_target_rate",
        Kind::Bool,
        "false",
        "a decrease in stage 0 also sets the target rate to the current rate (CLAMP_TARGET_RATE)",
    ),
];

/// The `dcqcn` scheme: DCQCN with pure rate pacing.
pub const SPEC: PluginSpec = PluginSpec {
    name: "dcqcn",
    summary: "DCQCN, Mellanox variant, pure rate pacing",
    params: PARAMS,
};

/// The `dcqcn-w` scheme: the same algorithm and parameters as [`SPEC`], with a variable window
/// (a NIC profile, not another algorithm).
pub const SPEC_W: PluginSpec =
    PluginSpec { name: "dcqcn-w", summary: "DCQCN with a variable window", params: PARAMS };

/// DCQCN parameters (reference config keys in parentheses). [`Default`] is the reference run
/// script's `dcqcn` profile (spec §5.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// `t_alpha`, period of the alpha update (`ALPHA_RESUME_INTERVAL`); default 1 µs.
    pub alpha_resume_interval: Duration,
    /// `t_dec`, period of the rate-decrease check (`RATE_DECREASE_INTERVAL`); default 4 µs.
    pub rate_decrease_interval: Duration,
    /// `t_inc`, period of the rate-increase timer (`RP_TIMER`); default 300 µs.
    pub rp_timer: Duration,
    /// `g`, the alpha EWMA gain (`EWMA_GAIN`); default 1/256.
    pub ewma_gain: f64,
    /// `F`, number of fast-recovery stages before additive increase (`FAST_RECOVERY_TIMES`);
    /// default 1.
    pub fast_recovery_times: u32,
    /// Additive-increase step of the target rate (`RATE_AI`). `None` (default) scales it with
    /// the NIC line rate as the run script does: `5*bw/25` Mb/s with `bw` the line rate in whole
    /// Gb/s (integer division; 20 Mb/s at 100 Gb/s).
    pub rate_ai: Option<BitsPerSec>,
    /// Hyper-additive-increase step (`RATE_HAI`). `None` (default): `50*bw/25` Mb/s (200 Mb/s at
    /// 100 Gb/s).
    pub rate_hai: Option<BitsPerSec>,
    /// Floor of a decreased rate (`MIN_RATE`); default 1000 Mb/s.
    pub min_rate: BitsPerSec,
    /// Also set the target rate to the current rate on a decrease in stage 0
    /// (`CLAMP_TARGET_RATE`); default `false`.
    pub clamp_target_rate: bool,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            alpha_resume_interval: Duration::from_us(1),
            rate_decrease_interval: Duration::from_us(4),
            rp_timer: Duration::from_us(300),
            ewma_gain: 1.0 / 256.0,
            fast_recovery_times: 1,
            rate_ai: None,
            rate_hai: None,
            min_rate: BitsPerSec::mbps(1000),
            clamp_target_rate: false,
        }
    }
}

impl DcqcnParams {
    /// The run script's `dcqcn_paper` profile: the default with `t_alpha = 50 µs`,
    /// `t_dec = 50 µs`, `t_inc = 55 µs`.
    pub fn paper() -> Self {
        DcqcnParams {
            alpha_resume_interval: Duration::from_us(50),
            rate_decrease_interval: Duration::from_us(50),
            rp_timer: Duration::from_us(55),
            ..DcqcnParams::default()
        }
    }

    /// The parameters [`PARAMS`] describes, read from `p`; absent ones take
    /// [`DcqcnParams::default`]'s values. The result is checked ([`DcqcnParams::check`]).
    ///
    /// # Errors
    /// A `fast_recovery_times` above `u32::MAX`, or what [`DcqcnParams::check`] rejects.
    pub fn from_params(p: &Params) -> Result<DcqcnParams, ParamError> {
        let d = DcqcnParams::default();
        let params = DcqcnParams {
            alpha_resume_interval: p.duration("alpha_resume_interval", d.alpha_resume_interval),
            rate_decrease_interval: p.duration("rate_decrease_interval", d.rate_decrease_interval),
            rp_timer: p.duration("rp_timer", d.rp_timer),
            ewma_gain: p.f64("ewma_gain", d.ewma_gain),
            fast_recovery_times: p.u32("fast_recovery_times", d.fast_recovery_times)?,
            rate_ai: p.opt_rate("rate_ai", d.rate_ai),
            rate_hai: p.opt_rate("rate_hai", d.rate_hai),
            min_rate: p.rate("min_rate", d.min_rate),
            clamp_target_rate: p.bool("clamp_target_rate", d.clamp_target_rate),
        };
        params.check()?;
        Ok(params)
    }

    /// Checks the values. Intervals must be at least [`MIN_PERIOD`] (1 µs: a zero interval
    /// would make its timer fire forever at one instant, spec §4.3, and a 1 ps one 10^12
    /// times per simulated second), the gain in (0, 1] and the minimum rate positive.
    ///
    /// # Errors
    /// The first offending field and what is wrong with it.
    pub fn check(&self) -> Result<(), ParamError> {
        for (name, d) in [
            ("alpha_resume_interval", self.alpha_resume_interval),
            ("rate_decrease_interval", self.rate_decrease_interval),
            ("rp_timer", self.rp_timer),
        ] {
            if d == Duration::ZERO {
                return Err(ParamError::new(
                    name,
                    "must be positive (a zero period never advances time)",
                ));
            }
            if d < MIN_PERIOD {
                return Err(ParamError::new(
                    name,
                    format!("must be at least 1us (a periodic timer), got {d}"),
                ));
            }
        }
        check_unit_interval("ewma_gain", self.ewma_gain)?;
        if self.min_rate.0 == 0 {
            return Err(ParamError::new("min_rate", "must be positive"));
        }
        Ok(())
    }

    /// [`DcqcnParams::check`] as one sentence that starts with the field's name.
    ///
    /// # Errors
    /// As [`DcqcnParams::check`].
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(sentence)
    }

    /// The three intervals truncated to whole microseconds, as the reference does with its
    /// (floating-point) configuration values (spec §0): 1.5 µs becomes 1 µs, 0.5 µs becomes 0
    /// (which [`validate`](Self::validate) then rejects).
    pub fn truncated_to_whole_us(self) -> Self {
        let t = |d: Duration| Duration::from_ps(d.as_ps() / PS_PER_US * PS_PER_US);
        DcqcnParams {
            alpha_resume_interval: t(self.alpha_resume_interval),
            rate_decrease_interval: t(self.rate_decrease_interval),
            rp_timer: t(self.rp_timer),
            ..self
        }
    }

    /// The additive-increase step in force for a NIC of rate `line_rate`.
    pub fn rate_ai_for(&self, line_rate: BitsPerSec) -> BitsPerSec {
        self.rate_ai.unwrap_or(BitsPerSec::mbps(5 * bw_gbps(line_rate) / 25))
    }

    /// The hyper-additive-increase step in force for a NIC of rate `line_rate`.
    pub fn rate_hai_for(&self, line_rate: BitsPerSec) -> BitsPerSec {
        self.rate_hai.unwrap_or(BitsPerSec::mbps(50 * bw_gbps(line_rate) / 25))
    }
}

/// Per-flow DCQCN state (the reference's `mlx` block plus the queue pair's rate), with the
/// parameters resolved for the flow's line rate.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    t_alpha: Duration,
    t_dec: Duration,
    t_inc: Duration,
    g: f64,
    f: u32,
    ai: BitsPerSec,
    hai: BitsPerSec,
    min_rate: BitsPerSec,
    clamp: bool,
    line_rate: BitsPerSec,

    rate: BitsPerSec,
    target_rate: BitsPerSec,
    alpha: f64,
    alpha_cnp: bool,
    dec_cnp: bool,
    first_cnp: bool,
    stage: u32,
}

impl Dcqcn {
    /// Timer slot of the alpha update.
    pub const ALPHA_TIMER: usize = 0;
    /// Timer slot of the rate-decrease check.
    pub const DECREASE_TIMER: usize = 1;
    /// Timer slot of the rate increase.
    pub const INCREASE_TIMER: usize = 2;

    /// A new flow on a NIC of rate `line_rate`: rate and target at line rate, `alpha = 1`, no
    /// CNP seen, stage 0, no timers.
    pub fn new(params: &DcqcnParams, line_rate: BitsPerSec) -> Dcqcn {
        Dcqcn {
            t_alpha: params.alpha_resume_interval,
            t_dec: params.rate_decrease_interval,
            t_inc: params.rp_timer,
            g: params.ewma_gain,
            f: params.fast_recovery_times,
            ai: params.rate_ai_for(line_rate),
            hai: params.rate_hai_for(line_rate),
            min_rate: params.min_rate,
            clamp: params.clamp_target_rate,
            line_rate,
            rate: line_rate,
            target_rate: line_rate,
            alpha: 1.0,
            alpha_cnp: false,
            dec_cnp: false,
            first_cnp: true,
            stage: 0,
        }
    }

    /// Current pacing rate.
    pub fn rate(&self) -> BitsPerSec {
        self.rate
    }
    /// Current target rate.
    pub fn target_rate(&self) -> BitsPerSec {
        self.target_rate
    }
    /// Current `alpha`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Current increase stage (number of increase-timer firings since the last decrease).
    pub fn stage(&self) -> u32 {
        self.stage
    }
    /// Whether a CNP arrived since the last alpha update.
    pub fn alpha_cnp(&self) -> bool {
        self.alpha_cnp
    }
    /// Whether a CNP arrived since the last decrease check.
    pub fn decrease_cnp(&self) -> bool {
        self.dec_cnp
    }
    /// Whether the flow has seen a CNP (and so runs its timers).
    pub fn cnp_seen(&self) -> bool {
        !self.first_cnp
    }
    /// The additive-increase step in force.
    pub fn rate_ai(&self) -> BitsPerSec {
        self.ai
    }
    /// The hyper-additive-increase step in force.
    pub fn rate_hai(&self) -> BitsPerSec {
        self.hai
    }

    /// An ACK or NACK with the ECN-echo flag (a CNP) arrived at `now`.
    pub fn on_cnp(&mut self, now: Time) -> Actions {
        let mut a = Actions::default();
        self.alpha_cnp = true;
        self.dec_cnp = true;
        if self.first_cnp {
            self.alpha = 1.0;
            self.alpha_cnp = false;
            a.timers[Self::ALPHA_TIMER] = TimerOp::Set(now + self.t_alpha);
            a.timers[Self::DECREASE_TIMER] = TimerOp::Set(now + self.t_dec + Duration::from_ns(1));
            // Rate on first CNP: the factor is fixed at 1.0, so this is the identity.
            self.rate = mul_rate(self.rate, 1.0);
            self.target_rate = self.rate;
            self.first_cnp = false;
        }
        a
    }

    /// The alpha timer fired at `now`.
    pub fn on_alpha_timer(&mut self, now: Time) -> Actions {
        if self.alpha_cnp {
            self.alpha = (1.0 - self.g) * self.alpha + self.g;
        } else {
            self.alpha *= 1.0 - self.g;
        }
        self.alpha_cnp = false;
        let mut a = Actions::default();
        a.timers[Self::ALPHA_TIMER] = TimerOp::Set(now + self.t_alpha);
        a
    }

    /// The decrease timer fired at `now`.
    pub fn on_decrease_timer(&mut self, now: Time) -> Actions {
        let mut a = Actions::default();
        a.timers[Self::DECREASE_TIMER] = TimerOp::Set(now + self.t_dec);
        if self.dec_cnp {
            if self.clamp || self.stage != 0 {
                self.target_rate = self.rate;
            }
            self.rate = self.min_rate.max(mul_rate(self.rate, 1.0 - self.alpha / 2.0));
            self.stage = 0;
            self.dec_cnp = false;
            a.timers[Self::INCREASE_TIMER] = TimerOp::Set(now + self.t_inc);
            a.rate = Some(self.rate);
        }
        a
    }

    /// The increase timer fired at `now`.
    pub fn on_increase_timer(&mut self, now: Time) -> Actions {
        let mut a = Actions::default();
        a.timers[Self::INCREASE_TIMER] = TimerOp::Set(now + self.t_inc);
        if self.stage < self.f {
            // Fast recovery: the target stays.
        } else if self.stage == self.f {
            self.target_rate = self.line_rate.min(BitsPerSec(self.target_rate.0 + self.ai.0));
        } else {
            self.target_rate = self.line_rate.min(BitsPerSec(self.target_rate.0 + self.hai.0));
        }
        self.rate = BitsPerSec(self.rate.0 / 2 + self.target_rate.0 / 2);
        self.stage = self.stage.saturating_add(1);
        a.rate = Some(self.rate);
        a
    }

    /// Dispatches timer slot `id` (an unknown slot does nothing).
    pub fn on_timer_slot(&mut self, id: usize, now: Time) -> Actions {
        match id {
            Self::ALPHA_TIMER => self.on_alpha_timer(now),
            Self::DECREASE_TIMER => self.on_decrease_timer(now),
            Self::INCREASE_TIMER => self.on_increase_timer(now),
            _ => Actions::default(),
        }
    }
}

impl CongestionControl for Dcqcn {
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>) {
        if !fb.ecn {
            return;
        }
        let a = self.on_cnp(ctx.now);
        if ctx.snd_una >= ctx.size {
            // The ACK completed the flow: the reference would re-arm timers nobody needs.
            a.without_timers().apply(ctx);
        } else {
            a.apply(ctx);
        }
    }

    fn on_timer(&mut self, ctx: &mut CcCtx, id: usize) {
        self.on_timer_slot(id, ctx.now).apply(ctx);
    }
}

/// The DCQCN scheme (`"dcqcn"`, no telemetry header).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DcqcnFactory {
    /// Parameters shared by every flow (validated by the caller with
    /// [`DcqcnParams::validate`]).
    pub params: DcqcnParams,
}

impl From<DcqcnParams> for DcqcnFactory {
    /// The factory for checked parameters.
    fn from(params: DcqcnParams) -> DcqcnFactory {
        DcqcnFactory { params }
    }
}

impl CcFactory for DcqcnFactory {
    type Cc = Dcqcn;
    fn name(&self) -> &str {
        "dcqcn"
    }
    fn header_mode(&self) -> HeaderMode {
        HeaderMode::None
    }
    fn new_flow(&self, init: &FlowInit) -> Dcqcn {
        Dcqcn::new(&self.params, init.line_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: BitsPerSec = BitsPerSec::gbps(100);

    fn us(n: u64) -> Time {
        Time::from_ps(n * PS_PER_US)
    }

    fn flow() -> Dcqcn {
        Dcqcn::new(&DcqcnParams::default(), G100)
    }

    fn set(at: Time) -> TimerOp {
        TimerOp::Set(at)
    }

    #[test]
    fn defaults_are_the_run_script_dcqcn_profile() {
        let p = DcqcnParams::default();
        assert_eq!(p.alpha_resume_interval, Duration::from_us(1));
        assert_eq!(p.rate_decrease_interval, Duration::from_us(4));
        assert_eq!(p.rp_timer, Duration::from_us(300));
        assert_eq!(p.ewma_gain, 0.00390625);
        assert_eq!(p.fast_recovery_times, 1);
        assert_eq!(p.min_rate, BitsPerSec(1_000_000_000));
        assert!(!p.clamp_target_rate);
        // 5*bw/25 and 50*bw/25 Mb/s with Python 2 floor division.
        assert_eq!(p.rate_ai_for(G100), BitsPerSec::mbps(20));
        assert_eq!(p.rate_hai_for(G100), BitsPerSec::mbps(200));
        assert_eq!(p.rate_ai_for(BitsPerSec::gbps(25)), BitsPerSec::mbps(5));
        assert_eq!(p.rate_hai_for(BitsPerSec::gbps(400)), BitsPerSec::mbps(800));
        assert_eq!(p.rate_ai_for(BitsPerSec::gbps(10)), BitsPerSec::mbps(2));
        let q = DcqcnParams { rate_ai: Some(BitsPerSec(7)), ..p };
        assert_eq!(q.rate_ai_for(G100), BitsPerSec(7));
        assert!(p.validate().is_ok());
        let paper = DcqcnParams::paper();
        assert_eq!(paper.rp_timer, Duration::from_us(55));
        assert_eq!(paper.ewma_gain, p.ewma_gain);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |f: fn(&mut DcqcnParams)| {
            let mut p = DcqcnParams::default();
            f(&mut p);
            p.validate().unwrap_err()
        };
        assert!(bad(|p| p.alpha_resume_interval = Duration::ZERO)
            .starts_with("alpha_resume_interval must be positive"));
        assert!(bad(|p| p.rate_decrease_interval = Duration::ZERO)
            .starts_with("rate_decrease_interval must be positive"));
        assert!(bad(|p| p.rp_timer = Duration::ZERO).starts_with("rp_timer must be positive"));
        // Periodic timers of at least 1 µs: 1 µs is taken, 999 ns is not.
        assert_eq!(
            bad(|p| p.rate_decrease_interval = Duration::from_ns(999)),
            "rate_decrease_interval must be at least 1us (a periodic timer), got 999ns"
        );
        assert!(bad(|p| p.rp_timer = Duration::from_ps(1)).starts_with("rp_timer must be at least"));
        let p = DcqcnParams { alpha_resume_interval: MIN_PERIOD, ..DcqcnParams::default() };
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(bad(|p| p.ewma_gain = 0.0), "ewma_gain must be in (0, 1], got 0");
        assert_eq!(bad(|p| p.ewma_gain = 1.5), "ewma_gain must be in (0, 1], got 1.5");
        assert!(bad(|p| p.ewma_gain = f64::NAN).starts_with("ewma_gain"));
        assert_eq!(bad(|p| p.min_rate = BitsPerSec(0)), "min_rate must be positive");
    }

    #[test]
    fn from_params_reads_every_parameter() {
        use dcsim_types::params::Value;
        assert_eq!(DcqcnParams::from_params(&Params::default()), Ok(DcqcnParams::default()));
        let given = vec![
            ("alpha_resume_interval", Value::Duration(Duration::from_us(50))),
            ("rate_decrease_interval", Value::Duration(Duration::from_us(51))),
            ("rp_timer", Value::Duration(Duration::from_us(55))),
            ("ewma_gain", Value::Number(0.5)),
            ("fast_recovery_times", Value::Integer(3)),
            ("rate_ai", Value::Rate(BitsPerSec::mbps(7))),
            ("rate_hai", Value::Rate(BitsPerSec::mbps(70))),
            ("min_rate", Value::Rate(BitsPerSec::mbps(10))),
            ("clamp_target_rate", Value::Bool(true)),
        ];
        assert_eq!(given.len(), PARAMS.len());
        let p = DcqcnParams::from_params(&Params::from_values(PARAMS, given)).unwrap();
        assert_eq!(
            p,
            DcqcnParams {
                alpha_resume_interval: Duration::from_us(50),
                rate_decrease_interval: Duration::from_us(51),
                rp_timer: Duration::from_us(55),
                ewma_gain: 0.5,
                fast_recovery_times: 3,
                rate_ai: Some(BitsPerSec::mbps(7)),
                rate_hai: Some(BitsPerSec::mbps(70)),
                min_rate: BitsPerSec::mbps(10),
                clamp_target_rate: true,
            }
        );
        let bad = Params::from_values(PARAMS, vec![("rp_timer", Value::Duration(Duration::ZERO))]);
        assert_eq!(DcqcnParams::from_params(&bad).unwrap_err().field, "rp_timer");
        assert_eq!((SPEC.params, SPEC_W.params), (PARAMS, PARAMS));
    }

    #[test]
    fn intervals_truncate_to_whole_microseconds() {
        let p = DcqcnParams {
            alpha_resume_interval: Duration::from_ns(1_500),
            rate_decrease_interval: Duration::from_ns(500),
            rp_timer: Duration::from_us(300),
            ..DcqcnParams::default()
        }
        .truncated_to_whole_us();
        assert_eq!(p.alpha_resume_interval, Duration::from_us(1));
        assert_eq!(p.rate_decrease_interval, Duration::ZERO);
        assert_eq!(p.rp_timer, Duration::from_us(300));
        assert!(p.validate().unwrap_err().starts_with("rate_decrease_interval"));
    }

    #[test]
    fn new_flow_is_at_line_rate_without_timers() {
        let f = DcqcnFactory::default();
        assert_eq!(f.name(), "dcqcn");
        assert_eq!(f.header_mode(), HeaderMode::None);
        let init = FlowInit {
            line_rate: BitsPerSec::gbps(25),
            base_rtt: Duration::from_us(8),
            bdp: 25_000,
            mtu: 1000,
            size: 10_000,
            seed: 0,
        };
        let d = f.new_flow(&init);
        assert_eq!(d.rate(), BitsPerSec::gbps(25));
        assert_eq!(d.target_rate(), BitsPerSec::gbps(25));
        assert_eq!(d.rate_ai(), BitsPerSec::mbps(5));
        assert_eq!(d.rate_hai(), BitsPerSec::mbps(50));
        assert_eq!(d.alpha(), 1.0);
        assert!(!d.cnp_seen());
        assert_eq!(d.stage(), 0);
    }

    #[test]
    fn first_cnp_schedules_timers_and_keeps_the_rate() {
        let mut d = flow();
        let a = d.on_cnp(us(10));
        assert_eq!(a.rate, None);
        assert_eq!(
            a.timers,
            [set(us(11)), set(us(14) + Duration::from_ns(1)), TimerOp::Keep, TimerOp::Keep]
        );
        assert_eq!(d.rate(), G100);
        assert_eq!(d.target_rate(), G100);
        assert_eq!(d.alpha(), 1.0);
        assert!(!d.alpha_cnp(), "the first CNP does not count for alpha");
        assert!(d.decrease_cnp(), "but does for the decrease");
        assert!(d.cnp_seen());
        // Later CNPs only set the flags.
        let a = d.on_cnp(us(10) + Duration::from_ns(500));
        assert_eq!(a, Actions::default());
        assert!(d.alpha_cnp() && d.decrease_cnp());
    }

    #[test]
    fn decrease_with_alpha_one_halves_the_rate() {
        let mut d = flow();
        d.on_cnp(us(10));
        let now = us(14) + Duration::from_ns(1);
        let a = d.on_decrease_timer(now);
        assert_eq!(a.rate, Some(BitsPerSec::gbps(50)));
        assert_eq!(a.timers[Dcqcn::DECREASE_TIMER], set(us(18) + Duration::from_ns(1)));
        assert_eq!(a.timers[Dcqcn::INCREASE_TIMER], set(us(314) + Duration::from_ns(1)));
        assert_eq!(a.timers[Dcqcn::ALPHA_TIMER], TimerOp::Keep);
        assert_eq!(d.rate(), BitsPerSec::gbps(50));
        assert_eq!(d.target_rate(), G100, "stage 0 without clamp keeps the target");
        assert_eq!(d.stage(), 0);
        assert!(!d.decrease_cnp());
        // No CNP since: the next check only re-arms itself.
        let a = d.on_decrease_timer(us(18) + Duration::from_ns(1));
        assert_eq!(a.rate, None);
        assert_eq!(a.timers[Dcqcn::DECREASE_TIMER], set(us(22) + Duration::from_ns(1)));
        assert_eq!(a.timers[Dcqcn::INCREASE_TIMER], TimerOp::Keep);
        assert_eq!(d.rate(), BitsPerSec::gbps(50));
    }

    #[test]
    fn alpha_ewma_over_timer_ticks() {
        let mut d = flow();
        d.on_cnp(us(0));
        // Tick without CNP: alpha = 255/256.
        let a = d.on_alpha_timer(us(1));
        assert_eq!(a.timers[Dcqcn::ALPHA_TIMER], set(us(2)));
        assert_eq!(a.rate, None);
        assert_eq!(d.alpha(), 255.0 / 256.0);
        // CNP, then tick: alpha = (255/256)^2 + 1/256 = 65281/65536.
        d.on_cnp(us(1) + Duration::from_ns(300));
        d.on_alpha_timer(us(2));
        assert_eq!(d.alpha(), 65281.0 / 65536.0);
        assert!(!d.alpha_cnp());
        // Tick without CNP: 255 * 65281 / 2^24.
        d.on_alpha_timer(us(3));
        assert_eq!(d.alpha(), 16_646_655.0 / 16_777_216.0);
        // The decrease uses the current alpha: 1 - alpha/2 = 16907777/33554432, and
        // 1e11 * 16907777 / 33554432 = 50389102101.326 -> truncated.
        let a = d.on_decrease_timer(us(4) + Duration::from_ns(1));
        let exact = 100_000_000_000u128 * 16_907_777 / 33_554_432; // floor
        assert_eq!(exact, 50_389_102_101);
        assert_eq!(a.rate, Some(BitsPerSec(50_389_102_101)));
    }

    #[test]
    fn alpha_saturates_at_one_with_cnp_every_tick() {
        let mut d = flow();
        d.on_cnp(us(0));
        for k in 1..=10 {
            d.on_cnp(us(k) - Duration::from_ns(1));
            d.on_alpha_timer(us(k));
            assert_eq!(d.alpha(), 1.0);
        }
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper_additive() {
        // Decrease with alpha = 255/256 (one alpha tick without CNP first).
        let mut d = flow();
        d.on_cnp(us(0));
        d.on_alpha_timer(us(1));
        let t_dec = us(4) + Duration::from_ns(1);
        let a = d.on_decrease_timer(t_dec);
        // 1e11 * (1 - 255/512) = 1e11 * 257/512
        assert_eq!(a.rate, Some(BitsPerSec(50_195_312_500)));
        // Stage 0 < F = 1: fast recovery, target stays 100G.
        let t1 = t_dec + Duration::from_us(300);
        let a = d.on_increase_timer(t1);
        assert_eq!(a.timers[Dcqcn::INCREASE_TIMER], set(t1 + Duration::from_us(300)));
        assert_eq!(a.rate, Some(BitsPerSec(25_097_656_250 + 50_000_000_000)));
        assert_eq!(d.target_rate(), G100);
        assert_eq!(d.stage(), 1);
        // Stage 1 == F: additive increase, the target is capped at line rate.
        let a = d.on_increase_timer(t1 + Duration::from_us(300));
        assert_eq!(d.target_rate(), G100);
        assert_eq!(a.rate, Some(BitsPerSec(37_548_828_125 + 50_000_000_000)));
        assert_eq!(d.stage(), 2);
        // Stage 2 > F: hyper increase; the half of an odd rate is truncated.
        let a = d.on_increase_timer(t1 + Duration::from_us(600));
        assert_eq!(a.rate, Some(BitsPerSec(43_774_414_062 + 50_000_000_000)));
        assert_eq!(d.stage(), 3);
    }

    #[test]
    fn target_rises_by_ai_then_hai_below_line_rate() {
        // alpha = 1 throughout (decreases come before any alpha tick).
        let mut d = flow();
        d.on_cnp(us(0));
        d.on_decrease_timer(us(4)); // 100G -> 50G, target 100G
        d.on_increase_timer(us(304)); // stage 0: 75G, stage -> 1
        assert_eq!(d.rate(), BitsPerSec::gbps(75));
        // CNP and decrease in stage 1: the target drops to the current rate.
        d.on_cnp(us(305));
        d.on_decrease_timer(us(308));
        assert_eq!(d.target_rate(), BitsPerSec::gbps(75));
        assert_eq!(d.rate(), BitsPerSec(37_500_000_000));
        assert_eq!(d.stage(), 0);
        // Fast recovery: 18.75G + 37.5G.
        d.on_increase_timer(us(608));
        assert_eq!(d.rate(), BitsPerSec(56_250_000_000));
        // Additive: target 75G + 20M; rate 28.125G + 37.51G.
        d.on_increase_timer(us(908));
        assert_eq!(d.target_rate(), BitsPerSec(75_020_000_000));
        assert_eq!(d.rate(), BitsPerSec(65_635_000_000));
        // Hyper: target + 200M; rate 32.8175G + 37.61G.
        d.on_increase_timer(us(1208));
        assert_eq!(d.target_rate(), BitsPerSec(75_220_000_000));
        assert_eq!(d.rate(), BitsPerSec(70_427_500_000));
        d.on_increase_timer(us(1508));
        assert_eq!(d.target_rate(), BitsPerSec(75_420_000_000));
        assert_eq!(d.rate(), BitsPerSec(35_213_750_000 + 37_710_000_000));
    }

    #[test]
    fn zero_fast_recovery_stages_start_with_additive_increase() {
        let p = DcqcnParams { fast_recovery_times: 0, ..DcqcnParams::default() };
        let mut d = Dcqcn::new(&p, G100);
        d.on_cnp(us(0));
        d.on_decrease_timer(us(4)); // 50G, target 100G (stage 0, no clamp)
        d.on_cnp(us(5));
        d.on_decrease_timer(us(8)); // stage 0: target stays 100G; 25G
        d.on_increase_timer(us(308)); // stage 0 == F: AI, capped at 100G
        assert_eq!(d.target_rate(), G100);
        assert_eq!(d.rate(), BitsPerSec(12_500_000_000 + 50_000_000_000));
    }

    #[test]
    fn clamp_target_rate_on_and_off() {
        for clamp in [false, true] {
            let p = DcqcnParams { clamp_target_rate: clamp, ..DcqcnParams::default() };
            let mut d = Dcqcn::new(&p, G100);
            d.on_cnp(us(0));
            d.on_decrease_timer(us(4)); // target = 100G either way (rate was 100G)
            assert_eq!(d.target_rate(), G100);
            // A second decrease still in stage 0 (no increase ran).
            d.on_cnp(us(5));
            d.on_decrease_timer(us(8));
            assert_eq!(d.rate(), BitsPerSec::gbps(25));
            let want = if clamp { BitsPerSec::gbps(50) } else { G100 };
            assert_eq!(d.target_rate(), want, "clamp = {clamp}");
            d.on_increase_timer(us(308));
            let want_rate = if clamp { 37_500_000_000 } else { 62_500_000_000 };
            assert_eq!(d.rate(), BitsPerSec(want_rate), "clamp = {clamp}");
        }
    }

    #[test]
    fn decrease_is_floored_at_min_rate() {
        let mut d = flow();
        d.on_cnp(us(0));
        let mut rates = Vec::new();
        for k in 0..8 {
            d.on_cnp(us(4 * k + 1));
            d.on_decrease_timer(us(4 * k + 4));
            rates.push(d.rate().0);
        }
        assert_eq!(
            rates,
            [
                50_000_000_000,
                25_000_000_000,
                12_500_000_000,
                6_250_000_000,
                3_125_000_000,
                1_562_500_000,
                1_000_000_000, // 781.25 Mb/s floored
                1_000_000_000,
            ]
        );
        let p = DcqcnParams { min_rate: BitsPerSec::gbps(60), ..DcqcnParams::default() };
        let mut d = Dcqcn::new(&p, G100);
        d.on_cnp(us(0));
        assert_eq!(d.on_decrease_timer(us(4)).rate, Some(BitsPerSec::gbps(60)));
    }

    #[test]
    fn timer_slots_dispatch() {
        let mut d = flow();
        d.on_cnp(us(0));
        let a = d.on_timer_slot(Dcqcn::ALPHA_TIMER, us(1));
        assert_eq!(a.timers[0], set(us(2)));
        let a = d.on_timer_slot(Dcqcn::DECREASE_TIMER, us(4));
        assert_eq!(a.timers[1], set(us(8)));
        let a = d.on_timer_slot(Dcqcn::INCREASE_TIMER, us(304));
        assert_eq!(a.timers[2], set(us(604)));
        assert_eq!(d.on_timer_slot(3, us(5)), Actions::default());
        assert_eq!(d.on_timer_slot(99, us(5)), Actions::default());
    }
}
