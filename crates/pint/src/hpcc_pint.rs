//! HPCC-PINT (spec §4.2; PINT paper §"HPCC on PINT"): HPCC's rate rule driven by the 8-bit
//! PINT digest instead of 42 bytes of INT.
//!
//! Switches keep a per-port EWMA of utilisation and write the path maximum, encoded with
//! [`UtilCodec`], into a 2-byte digest (`dcsim-core`'s switch model in [`HeaderMode::Pint`]
//! calls [`HpccPintFactory`]'s `pint_digest`). The receiver echoes the digest; the sender decodes `U` and applies
//! HPCC's multiplicative-increase / additive-increase rule: `c = U / eta`, then
//! `rate = curRate / c + AI` (or `curRate + AI` in the additive stage), clamped to
//! `[min_rate, line rate]`, re-timing the next send like HPCC. The rule is HPCC's own
//! ([`dcsim_hpcc::RateRule::next_rate`]), not a copy. The reference rate `curRate` and
//! the stage are committed once per RTT. There is no sender-side EWMA (the switch keeps it),
//! and fast reaction is always on. A fraction `1 - prob` of ACKs is ignored, as if only a
//! fraction `prob` of packets carried the digest.

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit};
use dcsim_core::packet::HeaderMode;
use dcsim_core::units::BitsPerSec;
use dcsim_hpcc::RateRule;
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use crate::codec::UtilCodec;

/// Parameters of HPCC-PINT (the reference's `hpccPint` run-script row and config keys).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccPintParams {
    /// Target utilisation `eta` (`U_TARGET`, 0.95).
    pub eta: f64,
    /// Additive-increase stages before multiplicative (`MI_THRESH`, 0).
    pub max_stage: u32,
    /// Additive increase per RTT (`RATE_AI`); `None` scales with the line rate like HPCC's
    /// default (line / 2500, 40 Mb/s at 100 Gb/s).
    pub rate_ai: Option<BitsPerSec>,
    /// Rate floor (`MIN_RATE`, 1000 Mb/s).
    pub min_rate: BitsPerSec,
    /// Log base of the utilisation encoding (`PINT_LOG_BASE`; 1.05 gives 8-bit digests).
    pub log_base: f64,
    /// Fraction of ACKs whose digest is used (`PINT_PROB`, 1.0).
    pub prob: f64,
}

impl Default for HpccPintParams {
    fn default() -> Self {
        HpccPintParams {
            eta: 0.95,
            max_stage: 0,
            rate_ai: None,
            min_rate: BitsPerSec::mbps(1000),
            log_base: 1.05,
            prob: 1.0,
        }
    }
}

/// The `hpcc-pint` scheme and its parameters, in the order front ends list them (defaults as a
/// scenario writes them; `docs/schemes.md` documents each).
pub const SPEC: PluginSpec = PluginSpec {
    name: "hpcc-pint",
    summary: "HPCC-PINT: HPCC's rate rule on an 8-bit PINT digest of the path's maximum \
              utilisation (2 bytes on the wire instead of 42)",
    params: &[
        ParamSpec::new("eta", Kind::Number, "0.95", "the target utilization, in (0, 1] (U_TARGET)"),
        ParamSpec::new(
            "max_stage",
            Kind::Integer,
            "0",
            "additive-increase updates allowed in a row before a multiplicative one (MI_THRESH)",
        ),
        ParamSpec::new(
            "rate_ai",
            Kind::Rate,
            "line rate / 2500 (40Mbps at 100Gbps)",
            "the additive increase per update (RATE_AI); by default it scales with the line rate",
        ),
        ParamSpec::new(
            "min_rate",
            Kind::Rate,
            "1000Mbps",
            "the lower bound of the pacing rate (MIN_RATE)",
        ),
        ParamSpec::new(
            "log_base",
            Kind::Number,
            "1.05",
            "the log base of the switches' utilization encoding, > 1 (PINT_LOG_BASE; 1.05 gives \
             8-bit digests)",
        ),
        ParamSpec::new(
            "prob",
            Kind::Number,
            "1.0",
            "the fraction of ACKs whose digest is used, in (0, 1] (PINT_PROB)",
        ),
    ],
};

impl HpccPintParams {
    /// The parameters [`SPEC`] describes, read from `p`; absent ones take
    /// [`HpccPintParams::default`]'s values. The result is checked ([`HpccPintParams::check`]).
    ///
    /// # Errors
    /// A `max_stage` above `u32::MAX`, or what [`HpccPintParams::check`] rejects.
    pub fn from_params(p: &Params) -> Result<HpccPintParams, ParamError> {
        let d = HpccPintParams::default();
        let params = HpccPintParams {
            eta: p.f64("eta", d.eta),
            max_stage: p.u32("max_stage", d.max_stage)?,
            rate_ai: p.opt_rate("rate_ai", d.rate_ai),
            min_rate: p.rate("min_rate", d.min_rate),
            log_base: p.f64("log_base", d.log_base),
            prob: p.f64("prob", d.prob),
        };
        params.check()?;
        Ok(params)
    }

    /// Checks the parameters: `eta` and `prob` in (0, 1], `rate_ai` (if set) and `min_rate`
    /// positive, `log_base` finite and above 1, with a digest of 1 to 16 bits.
    ///
    /// # Errors
    /// The first offending parameter and what is wrong with it.
    pub fn check(&self) -> Result<(), ParamError> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(ParamError::new("eta", format!("must be in (0, 1], got {}", self.eta)));
        }
        if self.rate_ai == Some(BitsPerSec(0)) {
            return Err(ParamError::new("rate_ai", "must be > 0 bps, got 0"));
        }
        if self.min_rate.0 == 0 {
            return Err(ParamError::new("min_rate", "must be > 0 bps, got 0"));
        }
        if !(self.log_base.is_finite() && self.log_base > 1.0) {
            return Err(ParamError::new(
                "log_base",
                format!("must be finite and > 1, got {}", dcsim_types::params::Num(self.log_base)),
            ));
        }
        // The digest's codes are 16-bit: a base so near 1 that they need more saturated every
        // code (decoded as 0.4% utilisation), and one of 2^18 or more leaves no bit at all
        // (every code 0): either way congestion control silently never saw any feedback.
        let bits = UtilCodec::new(self.log_base).map_or(0, |c| c.n_bits());
        if !(1..=16).contains(&bits) {
            return Err(ParamError::new(
                "log_base",
                format!(
                    "gives a digest of {bits} bits; it must take 1 to 16 (a log_base from about \
                     1.0002 to below 262144), got {}",
                    dcsim_types::params::Num(self.log_base)
                ),
            ));
        }
        if !(self.prob > 0.0 && self.prob <= 1.0) {
            return Err(ParamError::new("prob", format!("must be in (0, 1], got {}", self.prob)));
        }
        Ok(())
    }

    /// [`HpccPintParams::check`] as one sentence that starts with the parameter's name.
    ///
    /// # Errors
    /// As [`HpccPintParams::check`].
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(|e| format!("{} {}", e.field, e.message))
    }
}

/// Per-flow HPCC-PINT state.
#[derive(Clone, Debug)]
pub struct HpccPint {
    /// HPCC's rate rule, with this flow's line rate and additive increase.
    rule: RateRule,
    /// `floor(65536 * prob)`: an ACK is used if a 16-bit draw is below it.
    threshold: u32,
    codec: UtilCodec,
    rng: ChaCha8Rng,
    last_update_seq: u64,
    cur_rate: BitsPerSec,
    inc_stage: u32,
}

impl HpccPint {
    /// State for a new flow.
    pub fn new(p: &HpccPintParams, init: &FlowInit) -> HpccPint {
        let line = init.line_rate;
        HpccPint {
            rule: RateRule::new(p.eta, p.max_stage, p.rate_ai, p.min_rate, line),
            threshold: (65536.0 * p.prob).floor() as u32,
            codec: UtilCodec::new(p.log_base).expect("validated log base"),
            rng: ChaCha8Rng::seed_from_u64(init.seed),
            last_update_seq: 0,
            cur_rate: line,
            inc_stage: 0,
        }
    }

    /// The committed reference rate.
    pub fn cur_rate(&self) -> BitsPerSec {
        self.cur_rate
    }

    /// The additive-increase stage.
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    /// One ACK: returns the new pacing rate, if the ACK was used. `sampled` says whether this
    /// ACK's digest is one of the fraction `prob` that count.
    pub fn on_digest(
        &mut self,
        ack: u64,
        snd_nxt: u64,
        power: u16,
        sampled: bool,
    ) -> Option<BitsPerSec> {
        if !sampled {
            return None;
        }
        let per_rtt = ack > self.last_update_seq;
        if self.last_update_seq == 0 {
            self.last_update_seq = snd_nxt;
            return None;
        }
        let u = self.codec.decode(power);
        let (new, stage) = self.rule.next_rate(u, self.cur_rate, self.inc_stage);
        if per_rtt {
            self.cur_rate = new;
            self.inc_stage = stage;
            if snd_nxt > self.last_update_seq {
                self.last_update_seq = snd_nxt;
            }
        }
        Some(new)
    }
}

impl CongestionControl for HpccPint {
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>) {
        let sampled = u32::from(self.rng.gen::<u16>()) < self.threshold;
        if let Some(r) = self.on_digest(fb.ack, ctx.snd_nxt, fb.pint, sampled) {
            ctx.change_rate(r);
        }
    }
}

/// The HPCC-PINT scheme: name `"hpcc-pint"`, 2-byte PINT digests. Build it with
/// [`HpccPintFactory::from`] (its switches' codec comes from `params.log_base`).
#[derive(Clone, Debug, PartialEq)]
pub struct HpccPintFactory {
    /// Parameters for every flow.
    pub params: HpccPintParams,
    /// The codec the switches encode port utilisation with (base `params.log_base`).
    codec: UtilCodec,
    /// The digest is one byte (`n_bits <= 8`): the reference writes only its low byte.
    one_byte: bool,
}

impl From<HpccPintParams> for HpccPintFactory {
    /// The factory for checked parameters.
    ///
    /// # Panics
    /// If `params.log_base` is not a finite number above 1 ([`HpccPintParams::check`]).
    fn from(params: HpccPintParams) -> HpccPintFactory {
        let codec = UtilCodec::new(params.log_base).expect("a checked log base");
        let one_byte = codec.n_bits() <= 8;
        HpccPintFactory { params, codec, one_byte }
    }
}

impl Default for HpccPintFactory {
    fn default() -> Self {
        HpccPintFactory::from(HpccPintParams::default())
    }
}

impl CcFactory for HpccPintFactory {
    type Cc = HpccPint;
    fn name(&self) -> &str {
        "hpcc-pint"
    }
    fn header_mode(&self) -> HeaderMode {
        HeaderMode::Pint
    }
    fn new_flow(&self, init: &FlowInit) -> HpccPint {
        HpccPint::new(&self.params, init)
    }
    fn pint_digest(&self, u: f64, rng: &mut ChaCha8Rng) -> u16 {
        let p = self.codec.encode(u, rng);
        if self.one_byte {
            p & 0xff
        } else {
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_core::units::Duration;

    fn init() -> FlowInit {
        FlowInit {
            line_rate: BitsPerSec::gbps(100),
            base_rtt: Duration::from_ns(8200),
            bdp: 102_500,
            mtu: 1000,
            size: 1_000_000,
            seed: 7,
        }
    }

    #[test]
    fn first_ack_only_records() {
        let mut h = HpccPint::new(&HpccPintParams::default(), &init());
        assert_eq!(h.on_digest(1000, 5000, 140, true), None);
        assert_eq!(h.cur_rate(), BitsPerSec::gbps(100));
    }

    #[test]
    fn rate_follows_the_decoded_utilisation() {
        let p = HpccPintParams::default();
        let mut h = HpccPint::new(&p, &init());
        h.on_digest(1000, 5000, 0, true);
        // power 128 at base 1.05: U = 1.05^128 / 512 = 1.0092...; c = U / 0.95.
        let u = 1.05f64.powi(128) / 512.0;
        let expect = (100e9 / (u / 0.95)) as u64 + 40_000_000;
        let r = h.on_digest(6000, 9000, 128, true).unwrap();
        assert_eq!(r.0, expect);
        assert_eq!(h.cur_rate().0, expect, "ack 6000 > 5000 commits the rate");
        // A later ACK within the RTT reacts from curRate without committing.
        let r2 = h.on_digest(7000, 9000, 150, true).unwrap();
        let u2 = 1.05f64.powi(150) / 512.0;
        assert_eq!(r2.0, ((expect as f64 / (u2 / 0.95)) as u64 + 40_000_000).max(1_000_000_000));
        assert_eq!(h.cur_rate().0, expect);
    }

    #[test]
    fn low_utilisation_is_capped_at_line_rate_and_unsampled_acks_are_ignored() {
        let mut h = HpccPint::new(&HpccPintParams::default(), &init());
        h.on_digest(1000, 5000, 0, true);
        assert_eq!(h.on_digest(6000, 9000, 0, true), Some(BitsPerSec::gbps(100)));
        assert_eq!(h.on_digest(9500, 12000, 200, false), None);
    }

    #[test]
    fn the_rate_is_hpccs_rule_on_the_decoded_utilisation() {
        // Same rule, same numbers: an additive stage, then multiplicative steps.
        let p = HpccPintParams { max_stage: 2, ..HpccPintParams::default() };
        let mut h = HpccPint::new(&p, &init());
        let rule = RateRule::new(0.95, 2, None, BitsPerSec::mbps(1000), BitsPerSec::gbps(100));
        let codec = UtilCodec::new(1.05).unwrap();
        h.on_digest(1000, 5000, 0, true);
        let (mut cur, mut stage) = (BitsPerSec::gbps(100), 0);
        for (i, power) in [60u16, 70, 128, 150, 90].into_iter().enumerate() {
            let ack = 6000 + 4000 * i as u64;
            let expect = rule.next_rate(codec.decode(power), cur, stage);
            assert_eq!(h.on_digest(ack, ack + 3000, power, true), Some(expect.0), "step {i}");
            (cur, stage) = expect;
            assert_eq!((h.cur_rate(), h.inc_stage()), (cur, stage));
        }
    }

    #[test]
    fn from_params_reads_every_parameter_of_the_spec() {
        use dcsim_types::params::Value;
        assert_eq!(HpccPintParams::from_params(&Params::default()), Ok(HpccPintParams::default()));
        let given = vec![
            ("eta", Value::Number(0.9)),
            ("max_stage", Value::Integer(3)),
            ("rate_ai", Value::Rate(BitsPerSec::mbps(50))),
            ("min_rate", Value::Rate(BitsPerSec::mbps(100))),
            ("log_base", Value::Number(1.01)),
            ("prob", Value::Number(0.0625)),
        ];
        assert_eq!(given.len(), SPEC.params.len());
        let p = HpccPintParams::from_params(&Params::from_values(SPEC.params, given)).unwrap();
        assert_eq!(
            p,
            HpccPintParams {
                eta: 0.9,
                max_stage: 3,
                rate_ai: Some(BitsPerSec::mbps(50)),
                min_rate: BitsPerSec::mbps(100),
                log_base: 1.01,
                prob: 0.0625,
            }
        );
        let bad = Params::from_values(SPEC.params, vec![("prob", Value::Integer(0))]);
        assert_eq!(
            HpccPintParams::from_params(&bad),
            Err(ParamError::new("prob", "must be in (0, 1], got 0"))
        );
    }

    #[test]
    fn validation_names_the_parameter() {
        let p = HpccPintParams { prob: 0.0, ..Default::default() };
        assert!(p.validate().unwrap_err().contains("prob"));
        let p = HpccPintParams { log_base: 1.0, ..Default::default() };
        assert!(p.validate().unwrap_err().contains("log_base"));
        assert!(HpccPintParams::default().validate().is_ok());
    }

    /// The digest's codes fit 16 bits and have at least one: bases outside that range turned
    /// the feedback off without a word (every code saturated, or every code 0).
    #[test]
    fn log_bases_give_a_digest_of_1_to_16_bits() {
        let with = |log_base: f64| HpccPintParams { log_base, ..Default::default() }.check();
        for ok in [1.0002, 1.01, 1.05, 262_143.0] {
            assert_eq!(with(ok), Ok(()), "{ok}");
        }
        let e = with(1.00001).unwrap_err();
        assert_eq!(e.field, "log_base");
        assert!(e.message.starts_with("gives a digest of 21 bits"), "{}", e.message);
        let e = with(1e20).unwrap_err();
        assert!(e.message.starts_with("gives a digest of 0 bits"), "{}", e.message);
        assert!(e.message.ends_with("got 1e20"), "{}", e.message);
    }
}
