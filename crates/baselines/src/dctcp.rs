//! DCTCP, hardware-style and rate-based (the reference's CC mode 8; spec §4.5).
//!
//! # Algorithm
//!
//! The flow starts at line rate with `alpha = 1`. On every ACK/NACK (`ecn` = the ECN-echo
//! flag, `ack` = cumulative sequence):
//!
//! ```text
//! ecnCnt += ecn
//! newBatch = ack > lastUpdateSeq
//! if newBatch:
//!   if lastUpdateSeq == 0: lastUpdateSeq = snd_nxt; batch = snd_nxt/MTU + 1   # ecnCnt kept!
//!   else: alpha = (1-g)·alpha + g·min(1, ecnCnt/batch)
//!         lastUpdateSeq = snd_nxt; ecnCnt = 0; batch = (snd_nxt − ack)/MTU + 1
//! if in CWR and ack > highSeq: leave CWR
//! if ecn and not in CWR: rate = max(MIN_RATE, rate·(1 − alpha/2)); enter CWR; highSeq = snd_nxt
//! if not in CWR and newBatch: rate = min(line, rate + DCTCP_RATE_AI)
//! ```
//!
//! So the rate is cut at most once per window (CWR lasts until the data sent at the cut is
//! acknowledged) and grows by one step per batch (about one RTT) outside CWR.
//!
//! # Quirk 14
//!
//! The reference does not reset `ecnCnt` when the first batch is opened, so the ECN flag of the
//! very first ACK is also counted in the second batch's fraction. This is matched by default;
//! [`DctcpParams::reset_ecn_count_after_first_batch`] resets the count there too.
//!
//! # Corner case
//!
//! With chunk-aligned go-back (`L2_BACK_TO_ZERO 1`) a NACK can leave `snd_nxt` below the
//! acknowledged sequence; the reference's `snd_nxt − ack` then wraps around (and is truncated to
//! 32 bits). Here the difference saturates at 0, giving a batch of one packet.

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit};
use dcsim_core::packet::HeaderMode;
use dcsim_core::units::BitsPerSec;
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

use crate::{check_unit_interval, mul_rate, sentence};

/// The `dctcp` scheme and its parameters, in the order front ends list them, with their
/// defaults as a scenario writes them (`docs/schemes.md` documents each).
pub const SPEC: PluginSpec = PluginSpec {
    name: "dctcp",
    summary: "DCTCP, hardware style: rate based, starts at line rate",
    params: &[
        ParamSpec::new(
            "ewma_gain",
            Kind::Number,
            "0.0625",
            "g: the gain of the alpha EWMA, in (0, 1] (EWMA_GAIN)",
        ),
        ParamSpec::new(
            "rate_ai",
            Kind::Rate,
            "615Mbps",
            "the additive increase per batch (DCTCP_RATE_AI); does not scale with the line rate",
        ),
        ParamSpec::new(
            "min_rate",
            Kind::Rate,
            "1000Mbps",
            "the floor of a decreased rate (MIN_RATE)",
        ),
        ParamSpec::new(
            "reset_ecn_count_after_first_batch",
            Kind::Bool,
            "false",
            "fix the reference's quirk 14: reset the ECN count when the first batch ends",
        ),
    ],
};

/// DCTCP parameters. [`Default`] is the reference run script's `dctcp` profile (spec §5.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// `g`, the alpha EWMA gain (`EWMA_GAIN`); default 1/16.
    pub ewma_gain: f64,
    /// Additive increase per batch (`DCTCP_RATE_AI`); default 615 Mb/s (one 1000-byte MTU per
    /// 13 µs).
    pub rate_ai: BitsPerSec,
    /// Floor of a decreased rate (`MIN_RATE`); default 1000 Mb/s.
    pub min_rate: BitsPerSec,
    /// Reset the ECN count when the first batch opens too (fixes the reference's quirk 14);
    /// default `false` (match the reference).
    pub reset_ecn_count_after_first_batch: bool,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            ewma_gain: 1.0 / 16.0,
            rate_ai: BitsPerSec::mbps(615),
            min_rate: BitsPerSec::mbps(1000),
            reset_ecn_count_after_first_batch: false,
        }
    }
}

impl DctcpParams {
    /// The parameters [`SPEC`] describes, read from `p`; absent ones take
    /// [`DctcpParams::default`]'s values. The result is checked ([`DctcpParams::check`]).
    ///
    /// # Errors
    /// What [`DctcpParams::check`] rejects.
    pub fn from_params(p: &Params) -> Result<DctcpParams, ParamError> {
        let d = DctcpParams::default();
        let params = DctcpParams {
            ewma_gain: p.f64("ewma_gain", d.ewma_gain),
            rate_ai: p.rate("rate_ai", d.rate_ai),
            min_rate: p.rate("min_rate", d.min_rate),
            reset_ecn_count_after_first_batch: p
                .bool("reset_ecn_count_after_first_batch", d.reset_ecn_count_after_first_batch),
        };
        params.check()?;
        Ok(params)
    }

    /// Checks the values: `ewma_gain` in (0, 1], `min_rate` positive.
    ///
    /// # Errors
    /// The first offending field and what is wrong with it.
    pub fn check(&self) -> Result<(), ParamError> {
        check_unit_interval("ewma_gain", self.ewma_gain)?;
        if self.min_rate.0 == 0 {
            return Err(ParamError::new("min_rate", "must be positive"));
        }
        Ok(())
    }

    /// [`DctcpParams::check`] as one sentence that starts with the field's name.
    ///
    /// # Errors
    /// As [`DctcpParams::check`].
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(sentence)
    }
}

/// Per-flow DCTCP state (the reference's `dctcp` block plus the queue pair's rate).
#[derive(Clone, Debug)]
pub struct Dctcp {
    line_rate: BitsPerSec,
    g: f64,
    rate_ai: BitsPerSec,
    min_rate: BitsPerSec,
    mtu: u64,
    reset_first: bool,

    rate: BitsPerSec,
    last_update_seq: u64,
    in_cwr: bool,
    high_seq: u64,
    alpha: f64,
    ecn_cnt: u64,
    batch: u64,
}

impl Dctcp {
    /// A new flow on a NIC of rate `line_rate` sending `mtu`-byte payloads (0 is treated as 1):
    /// at line rate, `alpha = 1`, not in CWR.
    pub fn new(params: &DctcpParams, line_rate: BitsPerSec, mtu: u32) -> Dctcp {
        Dctcp {
            line_rate,
            g: params.ewma_gain,
            rate_ai: params.rate_ai,
            min_rate: params.min_rate,
            mtu: u64::from(mtu.max(1)),
            reset_first: params.reset_ecn_count_after_first_batch,
            rate: line_rate,
            last_update_seq: 0,
            in_cwr: false,
            high_seq: 0,
            alpha: 1.0,
            ecn_cnt: 0,
            batch: 0,
        }
    }

    /// Current pacing rate.
    pub fn rate(&self) -> BitsPerSec {
        self.rate
    }
    /// Current `alpha`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Whether the flow is in a congestion-window-reduced period (`caState == 1`).
    pub fn in_cwr(&self) -> bool {
        self.in_cwr
    }
    /// The sequence the ACK must pass to leave CWR.
    pub fn high_seq(&self) -> u64 {
        self.high_seq
    }
    /// ECN echoes counted in the current batch.
    pub fn ecn_count(&self) -> u64 {
        self.ecn_cnt
    }
    /// Size of the current batch in packets (the fraction's denominator).
    pub fn batch(&self) -> u64 {
        self.batch
    }
    /// `snd_nxt` when the current batch opened (0 before the first ACK).
    pub fn last_update_seq(&self) -> u64 {
        self.last_update_seq
    }

    /// An ACK/NACK with cumulative sequence `ack` and ECN-echo flag `ecn` arrived, the sender's
    /// `snd_nxt` being `snd_nxt` (after any go-back-N). Returns the new pacing rate if the
    /// algorithm assigned one.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, ecn: bool) -> Option<BitsPerSec> {
        self.ecn_cnt += u64::from(ecn);
        let new_batch = ack > self.last_update_seq;
        if new_batch {
            if self.last_update_seq == 0 {
                self.last_update_seq = snd_nxt;
                self.batch = snd_nxt / self.mtu + 1;
                if self.reset_first {
                    self.ecn_cnt = 0;
                }
            } else {
                let frac = (self.ecn_cnt as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * frac;
                self.last_update_seq = snd_nxt;
                self.ecn_cnt = 0;
                self.batch = snd_nxt.saturating_sub(ack) / self.mtu + 1;
            }
        }
        if self.in_cwr && ack > self.high_seq {
            self.in_cwr = false;
        }
        let mut assigned = false;
        if ecn && !self.in_cwr {
            self.rate = self.min_rate.max(mul_rate(self.rate, 1.0 - self.alpha / 2.0));
            self.in_cwr = true;
            self.high_seq = snd_nxt;
            assigned = true;
        }
        if !self.in_cwr && new_batch {
            self.rate = self.line_rate.min(BitsPerSec(self.rate.0 + self.rate_ai.0));
            assigned = true;
        }
        assigned.then_some(self.rate)
    }
}

impl CongestionControl for Dctcp {
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>) {
        if let Some(r) = self.on_ack(fb.ack, ctx.snd_nxt, fb.ecn) {
            ctx.set_rate(r);
        }
    }
}

/// The DCTCP scheme (`"dctcp"`, no telemetry header).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DctcpFactory {
    /// Parameters shared by every flow (validated by the caller with
    /// [`DctcpParams::validate`]).
    pub params: DctcpParams,
}

impl From<DctcpParams> for DctcpFactory {
    /// The factory for checked parameters.
    fn from(params: DctcpParams) -> DctcpFactory {
        DctcpFactory { params }
    }
}

impl CcFactory for DctcpFactory {
    type Cc = Dctcp;
    fn name(&self) -> &str {
        "dctcp"
    }
    fn header_mode(&self) -> HeaderMode {
        HeaderMode::None
    }
    fn new_flow(&self, init: &FlowInit) -> Dctcp {
        Dctcp::new(&self.params, init.line_rate, init.mtu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcsim_core::units::Duration;

    const G100: BitsPerSec = BitsPerSec::gbps(100);
    const G: f64 = 1.0 / 16.0;

    fn flow() -> Dctcp {
        Dctcp::new(&DctcpParams::default(), G100, 1000)
    }

    /// ACKs `from..=to` (in 1000-byte steps) with a window of ten packets
    /// (`snd_nxt = ack + 9000`), ECN-echo on the listed ACKs; returns the last result.
    fn acks(d: &mut Dctcp, from: u64, to: u64, marked: &[u64]) -> Option<BitsPerSec> {
        let mut last = None;
        let mut a = from;
        while a <= to {
            last = d.on_ack(a, a + 9_000, marked.contains(&a));
            a += 1_000;
        }
        last
    }

    #[test]
    fn defaults_and_validation() {
        let p = DctcpParams::default();
        assert_eq!(p.ewma_gain, 0.0625);
        assert_eq!(p.rate_ai, BitsPerSec(615_000_000));
        assert_eq!(p.min_rate, BitsPerSec(1_000_000_000));
        assert!(!p.reset_ecn_count_after_first_batch);
        assert!(p.validate().is_ok());
        let bad = DctcpParams { ewma_gain: 0.0, ..p };
        assert_eq!(bad.validate().unwrap_err(), "ewma_gain must be in (0, 1], got 0");
        let bad = DctcpParams { min_rate: BitsPerSec(0), ..p };
        assert_eq!(bad.validate().unwrap_err(), "min_rate must be positive");
        let f = DctcpFactory::default();
        assert_eq!(f.name(), "dctcp");
        assert_eq!(f.header_mode(), HeaderMode::None);
        let d = f.new_flow(&FlowInit {
            line_rate: BitsPerSec::gbps(25),
            base_rtt: Duration::from_us(8),
            bdp: 25_000,
            mtu: 1000,
            size: 1,
            seed: 0,
        });
        assert_eq!((d.rate(), d.alpha(), d.in_cwr()), (BitsPerSec::gbps(25), 1.0, false));
    }

    #[test]
    fn from_params_reads_every_parameter() {
        use dcsim_types::params::Value;
        assert_eq!(DctcpParams::from_params(&Params::default()), Ok(DctcpParams::default()));
        let given = vec![
            ("ewma_gain", Value::Number(0.125)),
            ("rate_ai", Value::Rate(BitsPerSec::gbps(1))),
            ("min_rate", Value::Rate(BitsPerSec::mbps(2))),
            ("reset_ecn_count_after_first_batch", Value::Bool(true)),
        ];
        assert_eq!(given.len(), SPEC.params.len());
        let p = DctcpParams::from_params(&Params::from_values(SPEC.params, given)).unwrap();
        assert_eq!(
            p,
            DctcpParams {
                ewma_gain: 0.125,
                rate_ai: BitsPerSec::gbps(1),
                min_rate: BitsPerSec::mbps(2),
                reset_ecn_count_after_first_batch: true,
            }
        );
        let bad = Params::from_values(SPEC.params, vec![("ewma_gain", Value::Integer(2))]);
        assert_eq!(
            DctcpParams::from_params(&bad),
            Err(ParamError::new("ewma_gain", "must be in (0, 1], got 2"))
        );
    }

    #[test]
    fn first_batch_opens_without_alpha_update() {
        let mut d = flow();
        // New batch outside CWR: additive increase, capped at line rate.
        assert_eq!(d.on_ack(1_000, 10_000, false), Some(G100));
        assert_eq!(d.last_update_seq(), 10_000);
        assert_eq!(d.batch(), 11); // 10 000 / 1000 + 1
        assert_eq!(d.alpha(), 1.0);
        // Not a new batch, no ECN: nothing assigned.
        assert_eq!(d.on_ack(2_000, 11_000, false), None);
    }

    #[test]
    fn one_cut_per_window_and_alpha_from_the_marked_fraction() {
        let mut d = flow();
        d.on_ack(1_000, 10_000, false);
        // First echo outside CWR: cut by alpha/2 = 1/2, enter CWR until ack > 11 000.
        assert_eq!(d.on_ack(2_000, 11_000, true), Some(BitsPerSec::gbps(50)));
        assert!(d.in_cwr());
        assert_eq!(d.high_seq(), 11_000);
        // A second echo in CWR: counted, no cut.
        assert_eq!(d.on_ack(3_000, 12_000, true), None);
        assert_eq!(acks(&mut d, 4_000, 10_000, &[]), None);
        assert_eq!(d.ecn_count(), 2);
        // ack 11 000 > lastUpdateSeq 10 000: new batch, alpha = 15/16 + 1/16 * 2/11.
        // ack == highSeq: still in CWR, so no additive increase.
        assert_eq!(d.on_ack(11_000, 20_000, false), None);
        let alpha1 = (1.0 - G) * 1.0 + G * (2.0 / 11.0);
        assert_eq!(d.alpha(), alpha1);
        assert_eq!((d.ecn_count(), d.batch(), d.last_update_seq()), (0, 10, 20_000));
        assert!(d.in_cwr());
        // ack 12 000 > highSeq: leave CWR; no new batch so no increase yet.
        assert_eq!(d.on_ack(12_000, 21_000, false), None);
        assert!(!d.in_cwr());
        assert_eq!(acks(&mut d, 13_000, 20_000, &[]), None);
        // Next batch boundary with one echo: alpha = (15/16) alpha1 + 1/16 * 1/10, then a cut
        // with the new alpha, and no increase (now in CWR).
        let r = d.on_ack(21_000, 30_000, true);
        let alpha2 = (1.0 - G) * alpha1 + G * (1.0 / 10.0);
        assert_eq!(d.alpha(), alpha2);
        let want = (50e9 * (1.0 - alpha2 / 2.0)) as u64;
        assert_eq!(r, Some(BitsPerSec(want)));
        assert_eq!(want, 27_604_758_522); // 50e9 * (1 - 0.8958096.../2), truncated
        assert_eq!(d.high_seq(), 30_000);
    }

    #[test]
    fn additive_increase_once_per_new_batch_outside_cwr() {
        let mut d = flow();
        d.on_ack(1_000, 10_000, false);
        d.on_ack(2_000, 11_000, true); // 50G, CWR until 11 000
        acks(&mut d, 3_000, 12_000, &[]); // batch at 11 000 (in CWR), CWR exit at 12 000
        assert_eq!(d.rate(), BitsPerSec::gbps(50));
        assert!(!d.in_cwr());
        // Each batch boundary (ack > lastUpdateSeq = 20 000, then 30 000, ...) adds 615 Mb/s.
        assert_eq!(acks(&mut d, 13_000, 20_000, &[]), None);
        assert_eq!(d.on_ack(21_000, 30_000, false), Some(BitsPerSec(50_615_000_000)));
        assert_eq!(acks(&mut d, 22_000, 30_000, &[]), None);
        assert_eq!(d.on_ack(31_000, 40_000, false), Some(BitsPerSec(51_230_000_000)));
        // An echo-free batch still decays alpha.
        assert_eq!(d.alpha(), (1.0 - G) * ((1.0 - G) * ((1.0 - G) + G / 11.0)));
    }

    #[test]
    fn quirk_14_first_ack_echo_counts_in_the_second_batch() {
        for reset in [false, true] {
            let p = DctcpParams { reset_ecn_count_after_first_batch: reset, ..Default::default() };
            let mut d = Dctcp::new(&p, G100, 1000);
            // The first ACK echoes ECN: it opens the first batch and cuts (alpha = 1).
            assert_eq!(d.on_ack(1_000, 10_000, true), Some(BitsPerSec::gbps(50)));
            assert_eq!(d.ecn_count(), if reset { 0 } else { 1 });
            acks(&mut d, 2_000, 10_000, &[]);
            d.on_ack(11_000, 20_000, false);
            let frac = if reset { 0.0 } else { 1.0 / 11.0 };
            assert_eq!(d.alpha(), (1.0 - G) + G * frac, "reset = {reset}");
        }
    }

    #[test]
    fn fraction_is_capped_at_one() {
        let mut d = flow();
        // First batch: snd_nxt 1000 -> batch = 2 packets.
        d.on_ack(1_000, 1_000, false);
        assert_eq!(d.batch(), 2);
        // Five echoes (one cut), then the batch closes: frac = min(1, 5/2) = 1 -> alpha stays 1.
        for a in [1_000u64; 4] {
            d.on_ack(a, 5_000, true);
        }
        d.on_ack(2_000, 5_000, true);
        assert_eq!(d.alpha(), 1.0);
    }

    #[test]
    fn cut_is_floored_at_min_rate() {
        let p = DctcpParams { min_rate: BitsPerSec::gbps(60), ..Default::default() };
        let mut d = Dctcp::new(&p, G100, 1000);
        assert_eq!(d.on_ack(1_000, 10_000, true), Some(BitsPerSec::gbps(60)));
        // The next window's cut (alpha = 15/16 + 1/16 * 2/11, factor about 0.53) is floored
        // again, and no increase follows in CWR.
        assert_eq!(d.on_ack(11_000, 20_000, true), Some(BitsPerSec::gbps(60)));
        assert!(d.in_cwr());
        assert_eq!(d.high_seq(), 20_000);
    }
}
