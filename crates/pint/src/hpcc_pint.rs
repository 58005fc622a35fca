//! HPCC-PINT (spec §4.2; PINT paper §"HPCC on PINT"): HPCC's rate rule driven by the 8-bit
//! PINT digest instead of 42 bytes of INT.
//!
//! Switches keep a per-port EWMA of utilisation and write the path maximum, encoded with
//! [`UtilCodec`], into a 2-byte digest (done by `dcsim-core`'s switch model in
//! [`HeaderMode::Pint`]). The receiver echoes the digest; the sender decodes `U` and applies
//! HPCC's multiplicative-increase / additive-increase rule: `c = U / eta`, then
//! `rate = curRate / c + AI` (or `curRate + AI` in the additive stage), clamped to
//! `[min_rate, line rate]`, re-timing the next send like HPCC. The reference rate `curRate` and
//! the stage are committed once per RTT. There is no sender-side EWMA (the switch keeps it),
//! and fast reaction is always on. A fraction `1 - prob` of ACKs is ignored, as if only a
//! fraction `prob` of packets carried the digest.

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit};
use dcsim_core::packet::HeaderMode;
use dcsim_core::units::BitsPerSec;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use dcsim_core::telemetry::UtilCodec;

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

impl HpccPintParams {
    /// Checks the parameters; the message names the offending one.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("eta must be in (0, 1], got {}", self.eta));
        }
        if self.rate_ai == Some(BitsPerSec(0)) {
            return Err("rate_ai must be > 0 bps, got 0".into());
        }
        if self.min_rate.0 == 0 {
            return Err("min_rate must be > 0 bps, got 0".into());
        }
        if !(self.log_base.is_finite() && self.log_base > 1.0) {
            return Err(format!("log_base must be finite and > 1, got {}", self.log_base));
        }
        if !(self.prob > 0.0 && self.prob <= 1.0) {
            return Err(format!("prob must be in (0, 1], got {}", self.prob));
        }
        Ok(())
    }
}

/// Per-flow HPCC-PINT state.
#[derive(Clone, Debug)]
pub struct HpccPint {
    eta: f64,
    max_stage: u32,
    ai: u64,
    min_rate: u64,
    line: u64,
    /// `floor(65536 * prob)`: an ACK is used if a 16-bit draw is below it.
    threshold: u32,
    codec: UtilCodec,
    rng: ChaCha8Rng,
    last_update_seq: u64,
    cur_rate: u64,
    inc_stage: u32,
}

impl HpccPint {
    /// State for a new flow.
    pub fn new(p: &HpccPintParams, init: &FlowInit) -> HpccPint {
        let line = init.line_rate.0;
        HpccPint {
            eta: p.eta,
            max_stage: p.max_stage,
            ai: p.rate_ai.map_or(line / 2500, |r| r.0),
            min_rate: p.min_rate.0,
            line,
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
        BitsPerSec(self.cur_rate)
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
        let c = u / self.eta;
        let (mut new, stage) = if c >= 1.0 || self.inc_stage >= self.max_stage {
            (((self.cur_rate as f64 / c) as u64).saturating_add(self.ai), 0)
        } else {
            (self.cur_rate.saturating_add(self.ai), self.inc_stage + 1)
        };
        if new < self.min_rate {
            new = self.min_rate;
        }
        if new > self.line {
            new = self.line;
        }
        if per_rtt {
            self.cur_rate = new;
            self.inc_stage = stage;
            if snd_nxt > self.last_update_seq {
                self.last_update_seq = snd_nxt;
            }
        }
        Some(BitsPerSec(new))
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

/// The HPCC-PINT scheme: name `"hpcc-pint"`, 2-byte PINT digests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HpccPintFactory {
    /// Parameters for every flow. The switches' log base must be the same
    /// (`SimConfig::pint_log_base`).
    pub params: HpccPintParams,
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
    fn validation_names_the_parameter() {
        let p = HpccPintParams { prob: 0.0, ..Default::default() };
        assert!(p.validate().unwrap_err().contains("prob"));
        let p = HpccPintParams { log_base: 1.0, ..Default::default() };
        assert!(p.validate().unwrap_err().contains("log_base"));
        assert!(HpccPintParams::default().validate().is_ok());
    }
}
