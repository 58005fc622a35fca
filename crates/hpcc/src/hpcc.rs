//! Per-flow HPCC state, the update rule (spec §4.1) and the plugin glue.

use dcsim_core::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit};
use dcsim_core::packet::{HeaderMode, IntHop, IntStack, MAX_INT_HOPS};
use dcsim_core::units::{BitsPerSec, PS_PER_SEC};

use crate::params::{rate_ai_for, HpccParams};

/// Multi-rate state of one hop: its own utilisation estimate, reference rate and stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HopState {
    /// EWMA of the hop's normalised inflight bytes (starts at 1).
    pub u: f64,
    /// The hop's reference rate `Rc_i` (starts at the line rate).
    pub rc: BitsPerSec,
    /// The hop's additive-increase stage (starts at 0).
    pub inc_stage: u32,
}

/// HPCC state of one flow.
///
/// The algorithm lives in [`Hpcc::on_ack`], a pure function of the state and the ACK that
/// returns the new pacing rate; [`CongestionControl::on_feedback`] only passes the result to
/// [`CcCtx::change_rate`]. See the crate documentation for the algorithm and its edge cases.
#[derive(Clone, Debug)]
pub struct Hpcc {
    // Fixed per flow.
    rule: RateRule,
    fast_react: bool,
    multi_rate: bool,
    sample_feedback: bool,
    /// `T`, picoseconds.
    base_rtt_ps: u64,
    /// `W`, bytes, at least 1.
    bdp: u64,
    // Evolving.
    last_update_seq: u64,
    cur_rate: BitsPerSec,
    inc_stage: u32,
    u: f64,
    hops: [IntHop; MAX_INT_HOPS],
    hop_state: [HopState; MAX_INT_HOPS],
}

/// What one hop's INT record says, relative to the record stored for that hop.
pub(crate) struct HopSample {
    /// Normalised inflight bytes `u'`.
    pub(crate) u: f64,
    /// Time between the two records, picoseconds (> 0).
    pub(crate) tau_ps: u64,
}

impl Hpcc {
    /// The state of a new flow: `curRate` = line rate, `incStage` = 0, `u` = 1, no stored hops
    /// (`lastUpdateSeq` = 0 marks the first feedback); per hop `u_i` = 1, `Rc_i` = line rate,
    /// `stage_i` = 0.
    ///
    /// `params` is not re-validated here (call [`HpccParams::validate`] first); invalid values
    /// give meaningless rates but never a panic.
    pub fn new(params: &HpccParams, init: &FlowInit) -> Hpcc {
        let line_rate = init.line_rate;
        Hpcc {
            rule: RateRule::new(
                params.eta,
                params.max_stage,
                params.rate_ai,
                params.min_rate,
                line_rate,
            ),
            fast_react: params.fast_react,
            multi_rate: params.multi_rate,
            sample_feedback: params.sample_feedback,
            base_rtt_ps: init.base_rtt.as_ps(),
            bdp: init.bdp.max(1),
            last_update_seq: 0,
            cur_rate: line_rate,
            inc_stage: 0,
            u: 1.0,
            hops: [IntHop::default(); MAX_INT_HOPS],
            hop_state: [HopState { u: 1.0, rc: line_rate, inc_stage: 0 }; MAX_INT_HOPS],
        }
    }

    /// Processes one ACK or NACK with cumulative sequence `ack`, when the flow's next byte to
    /// send is `snd_nxt`, carrying `int`. Returns the rate to apply with
    /// [`CcCtx::change_rate`], or `None` when no hop record was used (first feedback, more than
    /// five hops, fast reaction off, every hop skipped).
    ///
    /// A full update (which commits `curRate`/`incStage` and advances `lastUpdateSeq`) runs when
    /// `ack > lastUpdateSeq`; otherwise, with fast reaction on, an update that only sets the
    /// pacing rate.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, int: &IntStack) -> Option<BitsPerSec> {
        if ack > self.last_update_seq {
            self.update(true, snd_nxt, int)
        } else if self.fast_react {
            self.update(false, snd_nxt, int)
        } else {
            None
        }
    }

    /// The reference rate `Wc` (`curRate`), committed once per RTT.
    pub fn cur_rate(&self) -> BitsPerSec {
        self.cur_rate
    }
    /// The additive-increase stage (single-rate mode).
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }
    /// The utilisation EWMA `u` (single-rate mode).
    pub fn u(&self) -> f64 {
        self.u
    }
    /// `lastUpdateSeq`: the `snd_nxt` at the last per-RTT update (0 before the first ACK).
    pub fn last_update_seq(&self) -> u64 {
        self.last_update_seq
    }
    /// The INT record last stored for each hop (all-zero until that hop reports).
    pub fn stored_hops(&self) -> &[IntHop; MAX_INT_HOPS] {
        &self.hops
    }
    /// The per-hop state of multi-rate mode.
    pub fn hop_states(&self) -> &[HopState; MAX_INT_HOPS] {
        &self.hop_state
    }
    /// The additive increase in force for this flow (resolved from the line rate if unset).
    pub fn rate_ai(&self) -> BitsPerSec {
        self.rule.rate_ai
    }

    /// `UpdateRateHp` of the reference (spec §4.1). `per_rtt == false` is fast reaction.
    fn update(&mut self, per_rtt: bool, snd_nxt: u64, int: &IntStack) -> Option<BitsPerSec> {
        if self.last_update_seq == 0 {
            // First feedback: remember where this RTT ends and the hop records, nothing else.
            self.last_update_seq = snd_nxt;
            if int.nhop as usize <= MAX_INT_HOPS {
                for (i, hop) in int.valid().iter().enumerate() {
                    self.hops[i] = *hop;
                }
            }
            return None;
        }
        let mut new_rate = None;
        let nhop = int.nhop as usize;
        if nhop <= MAX_INT_HOPS {
            new_rate = self.update_from_hops(per_rtt, &int.hops[..nhop]);
        }
        if per_rtt && snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
        }
        new_rate
    }

    fn update_from_hops(&mut self, per_rtt: bool, hops: &[IntHop]) -> Option<BitsPerSec> {
        let t = self.base_rtt_ps;
        let mut used = [false; MAX_INT_HOPS];
        // Single rate: the hop with the largest u' (strictly: the first of equals; NaN never
        // wins) and its tau; (0, 0) while none is above 0. Kept by selects, not a branch: which
        // hop is the most utilised changes from ACK to ACK.
        let (mut big_u, mut dt) = (0.0f64, 0u64);
        for (i, hop) in hops.iter().enumerate() {
            if self.sample_feedback && !per_rtt && hop.qlen == 0 {
                continue;
            }
            let stored = std::mem::replace(&mut self.hops[i], *hop);
            let Some(s) = sample(hop, &stored, self.rule.line_rate, self.bdp) else {
                continue;
            };
            used[i] = true;
            if self.multi_rate {
                let st = &mut self.hop_state[i];
                st.u = ewma(st.u, s.u, s.tau_ps, t);
            } else {
                let better = s.u > big_u;
                big_u = std::hint::select_unpredictable(better, s.u, big_u);
                dt = std::hint::select_unpredictable(better, s.tau_ps, dt);
            }
        }
        if !used.iter().any(|&b| b) {
            return None;
        }

        if !self.multi_rate {
            // With no winner (every u' is 0) U = 0 and dt = 0: the EWMA keeps u.
            self.u = ewma(self.u, big_u, dt, t);
            let (new, stage) = self.rule.next_rate(self.u, self.cur_rate, self.inc_stage);
            if per_rtt {
                self.cur_rate = new;
                self.inc_stage = stage;
            }
            return Some(new);
        }

        let mut new = self.rule.line_rate;
        let mut per_hop = [(BitsPerSec(0), 0u32); MAX_INT_HOPS];
        for i in 0..hops.len() {
            let st = self.hop_state[i];
            if used[i] {
                per_hop[i] = self.rule.next_rate(st.u, st.rc, st.inc_stage);
                new = new.min(per_hop[i].0);
            } else {
                new = new.min(st.rc);
            }
        }
        if per_rtt {
            // The reference also stores the minimum as curRate (and garbage as incStage, which
            // multi-rate never reads); we keep incStage as it was.
            self.cur_rate = new;
            for i in 0..hops.len() {
                if used[i] {
                    let st = &mut self.hop_state[i];
                    (st.rc, st.inc_stage) = per_hop[i];
                }
            }
        }
        Some(new)
    }
}

/// HPCC's rate rule (spec §4.1, step 5): the multiplicative / additive increase from a
/// utilisation estimate, with its clamps. Everything in it is fixed per flow; HPCC
/// ([`Hpcc`]) and HPCC-PINT (`dcsim-pint`) both compute their rates with
/// [`RateRule::next_rate`].
///
/// ```
/// use dcsim_core::units::BitsPerSec;
/// use dcsim_hpcc::RateRule;
/// let rule = RateRule::new(0.95, 0, None, BitsPerSec::mbps(1000), BitsPerSec::gbps(100));
/// // u = 1.5: c = 1.5 / 0.95, rate = 100G / c + 40 Mb/s (truncated to whole bps), stage 0.
/// let (rate, stage) = rule.next_rate(1.5, BitsPerSec::gbps(100), 0);
/// assert_eq!((rate, stage), (BitsPerSec(63_373_333_333), 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateRule {
    /// Target utilisation η.
    pub eta: f64,
    /// Additive-increase updates allowed in a row before a multiplicative one (maxStage).
    pub max_stage: u32,
    /// The additive increase W_AI in force (resolved from the line rate if the scheme's
    /// parameter was unset).
    pub rate_ai: BitsPerSec,
    /// Lower bound of the rate.
    pub min_rate: BitsPerSec,
    /// Upper bound of the rate: the NIC line rate.
    pub line_rate: BitsPerSec,
}

impl RateRule {
    /// The rule for a flow on a NIC of `line_rate`. `rate_ai == None` takes the default W_AI,
    /// `line_rate / 2500` (as [`HpccParams::rate_ai_for`]).
    pub fn new(
        eta: f64,
        max_stage: u32,
        rate_ai: Option<BitsPerSec>,
        min_rate: BitsPerSec,
        line_rate: BitsPerSec,
    ) -> RateRule {
        RateRule { eta, max_stage, rate_ai: rate_ai_for(rate_ai, line_rate), min_rate, line_rate }
    }

    /// The MI/AI rule with clamping, from utilisation `u`, reference rate `cur` (`W_c`) and
    /// additive-increase stage `stage`: returns the new rate and the stage to commit.
    ///
    /// With `c = u / η`: if `c >= 1` or `stage >= max_stage`, `cur / c + W_AI` (the quotient
    /// in `f64`, truncated toward zero and saturating) and stage 0; else `cur + W_AI` and
    /// `stage + 1`. Then clamped up to `min_rate`, then down to `line_rate`.
    pub fn next_rate(&self, u: f64, cur: BitsPerSec, stage: u32) -> (BitsPerSec, u32) {
        let c = u / self.eta;
        let (mut new, stage) = if c >= 1.0 || stage >= self.max_stage {
            // `as` truncates toward zero and saturates (+inf when c == 0 becomes u64::MAX, NaN
            // becomes 0), so the sum never overflows and the clamps below give a defined rate.
            let mi = (cur.0 as f64 / c) as u64;
            (mi.saturating_add(self.rate_ai.0), 0)
        } else {
            (cur.0.saturating_add(self.rate_ai.0), stage + 1)
        };
        if new < self.min_rate.0 {
            new = self.min_rate.0;
        }
        if new > self.line_rate.0 {
            new = self.line_rate.0;
        }
        (BitsPerSec(new), stage)
    }
}

/// `u'` of one hop from its new and stored records, or `None` if the pair cannot give a rate:
/// the time did not advance (`tau == 0`; the reference divides by zero) or the hop reports a
/// zero line rate.
pub(crate) fn sample(
    new: &IntHop,
    stored: &IntHop,
    nic_rate: BitsPerSec,
    w: u64,
) -> Option<HopSample> {
    if new.time <= stored.time || new.rate.0 == 0 {
        return None;
    }
    let tau_ps = new.time.as_ps() - stored.time.as_ps();
    let duration = tau_ps as f64 / PS_PER_SEC as f64;
    let bytes = new.tx_bytes.saturating_sub(stored.tx_bytes);
    let tx_rate = bytes.saturating_mul(8) as f64 / duration;
    let line = new.rate.0 as f64;
    let qlen = new.qlen.min(stored.qlen) as f64;
    let u = tx_rate / line + qlen * nic_rate.0 as f64 / line / w as f64;
    Some(HopSample { u, tau_ps })
}

/// `(old * (T - dt) + sample * dt) / T` with `dt = min(tau, T)`. With `T == 0` the weight
/// `dt / T` is taken as 1 when a sample is given (`tau > 0`: at least a whole "RTT" passed) and
/// 0 otherwise.
pub(crate) fn ewma(old: f64, sample: f64, tau_ps: u64, t_ps: u64) -> f64 {
    if t_ps == 0 {
        return if tau_ps > 0 { sample } else { old };
    }
    let dt = tau_ps.min(t_ps);
    (old * (t_ps - dt) as f64 + sample * dt as f64) / t_ps as f64
}

impl CongestionControl for Hpcc {
    fn on_feedback(&mut self, ctx: &mut CcCtx, fb: &Feedback<'_>) {
        if let Some(rate) = self.on_ack(fb.ack, ctx.snd_nxt, fb.int) {
            ctx.change_rate(rate);
        }
    }
}

/// The HPCC scheme: name `"hpcc"`, INT headers, one [`Hpcc`] per flow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HpccFactory {
    /// Parameters for every flow.
    pub params: HpccParams,
}

impl HpccFactory {
    /// A factory with validated parameters.
    pub fn new(params: HpccParams) -> Result<HpccFactory, String> {
        params.validate()?;
        Ok(HpccFactory { params })
    }
}

impl From<HpccParams> for HpccFactory {
    /// The factory for checked parameters.
    fn from(params: HpccParams) -> HpccFactory {
        HpccFactory { params }
    }
}

impl CcFactory for HpccFactory {
    type Cc = Hpcc;
    fn name(&self) -> &str {
        "hpcc"
    }
    fn header_mode(&self) -> HeaderMode {
        HeaderMode::Int
    }
    fn new_flow(&self, init: &FlowInit) -> Hpcc {
        Hpcc::new(&self.params, init)
    }
}
