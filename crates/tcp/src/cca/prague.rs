//! TCP Prague as Linux `tcp_prague.c` v0.6 (L4S, RFC 9331).
//!
//! Prague runs the whole window itself (Linux `cong_control`). Data is ECT(1) and paced. The
//! window is an integer number of segments plus a signed fraction `cwnd_cnt` in 2^−20 segments;
//! at most one whole segment is added or removed per ACK. Kept from v0.6:
//! - α (2^−20 units, upscaled by 1/g) starts at 1 and is updated once per round (snd_una past
//!   the round's end) from the CE fraction of delivered segments, only after the first CE;
//!   g = 1/16.
//! - Additive increase counts only non-CE delivered segments: `acked·ai_ack_increase/cwnd`.
//! - Entering CWR subtracts α/2·cwnd from the fraction; entering Recovery (or a timeout)
//!   subtracts cwnd/2 (half of it, plus half the pending fraction), then no increase until
//!   the state is Open again.
//! - RTT independence (`RTT_CONTROL_RATE`): after 500 rounds outside slow start, the increase
//!   is scaled by (SRTT/25 ms)² below 25 ms (SRTT in 128 µs units, as Linux), the EWMA
//!   updates at most every 25 ms and CWR reductions at most every 25 ms.
//! - Minimum cwnd 2 segments; each reduction sets ssthresh = cwnd.
//! - Pacing rate = MTU·max(cwnd, in flight)/SRTT, doubled while cwnd < ssthresh/2.
//! - Classic-ECN fallback off (`prague_ecn_fallback = 0`), so not modelled.

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};
use dcsim_types::{Duration, Ecn, Time};

use super::{AckSample, CaState, Congestion, CongestionControl, PacingInput, StateChange, Window};

/// Prague's parameters.
pub const SPEC: PluginSpec = PluginSpec {
    name: "prague",
    summary:
        "TCP Prague v0.6 (L4S): ECT(1), DCTCP-like α, fractional cwnd, RTT independence, paced",
    params: &[
        ParamSpec::new(
            "rtt_target",
            Kind::Duration,
            "25ms",
            "RTT-independence target (prague_rtt_target)",
        ),
        ParamSpec::new(
            "rtt_transition",
            Kind::Integer,
            "500",
            "post-slow-start rounds before RTT independence",
        ),
        ParamSpec::new(
            "rtt_scaling",
            Kind::Choice(&["rate", "none"]),
            "rate",
            "RTT scaling heuristic",
        ),
    ],
};

/// Prague configuration.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PragueConfig {
    /// RTT-independence target (25 ms).
    pub rtt_target: Duration,
    /// Rounds after slow start before RTT independence (500 in v0.6; 4 in the ns-3 fork).
    pub rtt_transition: u32,
    /// Whether `RTT_CONTROL_RATE` is on (`false`: `RTT_CONTROL_NONE`).
    pub rtt_scaling: bool,
}

impl Default for PragueConfig {
    fn default() -> PragueConfig {
        PragueConfig { rtt_target: Duration::from_ms(25), rtt_transition: 500, rtt_scaling: true }
    }
}

impl PragueConfig {
    /// From parameters (see [`SPEC`]).
    ///
    /// # Errors
    /// A zero `rtt_target` with RTT scaling on.
    pub fn from_params(p: &Params) -> Result<PragueConfig, ParamError> {
        let d = PragueConfig::default();
        let c = PragueConfig {
            rtt_target: p.duration("rtt_target", d.rtt_target),
            rtt_transition: p.u32("rtt_transition", d.rtt_transition)?,
            rtt_scaling: p.choice("rtt_scaling", "rate") == "rate",
        };
        if c.rtt_scaling && c.rtt_target.as_ps() == 0 {
            return Err(ParamError::new(
                "rtt_target",
                "must be greater than 0 with rtt_scaling = \"rate\"",
            ));
        }
        Ok(c)
    }
}

const ALPHA_BITS: u32 = 20;
const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
const CWND_UNIT: u32 = 20;
const ONE_CWND: i64 = 1 << CWND_UNIT;
const SHIFT_G: u32 = 4;
const MIN_CWND: u64 = 2;
/// Linux `MAX_SCALED_RTT`, compared (as v0.6 does) with an RTT in 128 µs units.
const MAX_SCALED_RTT: u64 = 100_000;

/// Prague state.
#[derive(Clone, Debug)]
pub struct Prague {
    cfg: PragueConfig,
    cwr_stamp: Option<Time>,
    alpha_stamp: Time,
    upscaled_alpha: u64,
    ai_ack_increase: u64,
    cwnd_cnt: i64,
    loss_cwnd: u64,
    /// `cwnd_cnt` when the last loss reduction began (`loss_cwnd_cnt`), for the undo.
    loss_cwnd_cnt: i64,
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u64,
    round: u32,
    saw_ce: bool,
    in_loss: bool,
    srtt: Option<Duration>,
}

impl Prague {
    /// A fresh controller.
    pub fn new(cfg: PragueConfig) -> Prague {
        Prague {
            cfg,
            cwr_stamp: None,
            alpha_stamp: Time::ZERO,
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            ai_ack_increase: ONE_CWND as u64,
            cwnd_cnt: 0,
            loss_cwnd: 0,
            loss_cwnd_cnt: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            srtt: None,
        }
    }

    /// α as a fraction.
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> SHIFT_G) as f64 / MAX_ALPHA as f64
    }
    /// Rounds counted outside slow start.
    pub fn rounds(&self) -> u32 {
        self.round
    }
    /// Whether RTT independence is active.
    pub fn rtt_independent(&self, w: &Window) -> bool {
        self.cfg.rtt_scaling && !w.in_slow_start() && self.round >= self.cfg.rtt_transition
    }

    fn target_units(&self) -> u64 {
        (self.cfg.rtt_target.as_ps() / 1_000_000) >> 7
    }

    fn update_ai_ack_increase(&mut self) {
        let one = ONE_CWND as u64;
        let rtt = self.srtt.map_or(0, |s| (s.as_ps() / 1_000_000) >> 7);
        self.ai_ack_increase = if !self.cfg.rtt_scaling
            || self.round < self.cfg.rtt_transition
            || rtt == 0
            || rtt > MAX_SCALED_RTT
        {
            one
        } else {
            let target = self.target_units().max(1);
            if rtt >= target {
                one
            } else {
                let divisor = target * target;
                ((rtt << CWND_UNIT) * rtt + divisor / 2) / divisor
            }
        };
    }

    fn new_round(&mut self, w: &Window, ack: &AckSample) {
        self.next_seq = ack.snd_nxt;
        self.old_delivered = ack.delivered;
        self.old_delivered_ce = ack.delivered_ce;
        if !w.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.cfg.rtt_transition;
            }
        }
        self.update_ai_ack_increase();
    }

    fn update_alpha(&mut self, w: &Window, ack: &AckSample) {
        if self.saw_ce {
            let mss = w.mss;
            let ecn_segs = (ack.delivered_ce - self.old_delivered_ce).div_ceil(mss);
            let acked_segs = (ack.delivered - self.old_delivered).div_ceil(mss);
            let f = if ecn_segs > 0 { (ecn_segs << ALPHA_BITS) / acked_segs.max(1) } else { 0 };
            let alpha = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + f;
            self.alpha_stamp = ack.now;
            self.upscaled_alpha = alpha.min(MAX_ALPHA << SHIFT_G);
        }
        self.new_round(w, ack);
    }

    fn should_update_ewma(&self, w: &Window, ack: &AckSample) -> bool {
        ack.snd_una >= self.next_seq
            && (!self.rtt_independent(w)
                || ack.now.saturating_since(self.alpha_stamp) >= self.cfg.rtt_target)
    }

    fn enter_loss(&mut self, w: &Window) {
        let cwnd = w.segs() as i64;
        self.loss_cwnd = w.segs();
        self.loss_cwnd_cnt = self.cwnd_cnt;
        self.cwnd_cnt -= (cwnd << (CWND_UNIT - 1)) + (self.cwnd_cnt >> 1);
        self.in_loss = true;
        self.update_ai_ack_increase();
    }

    fn enter_cwr(&mut self, w: &Window, now: Time) {
        if self.rtt_independent(w)
            && self.cwr_stamp.is_some_and(|t| now.saturating_since(t) < self.cfg.rtt_target)
        {
            return;
        }
        self.cwr_stamp = Some(now);
        let alpha = self.upscaled_alpha >> SHIFT_G;
        let reduction = (alpha * (w.segs() << CWND_UNIT) + MAX_ALPHA) >> (ALPHA_BITS + 1);
        self.cwnd_cnt -= reduction as i64;
    }
}

impl CongestionControl for Prague {
    fn on_ack(&mut self, _w: &mut Window, ack: &AckSample) {
        self.srtt = ack.srtt;
    }

    fn increase(&mut self, _w: &mut Window, _ack: &AckSample) {}

    fn ssthresh(&mut self, w: &Window, _cause: Congestion, _in_flight: u64) -> u64 {
        // prague_ssthresh leaves ssthresh alone; reductions go through cwnd_cnt.
        w.ssthresh
    }

    fn on_state(&mut self, w: &mut Window, change: &StateChange) {
        let (from, to, now) = (change.from, change.to, change.now);
        if from == to {
            return;
        }
        match to {
            // A timeout's reduction comes through `on_loss_event` (Linux `prague_state` has no
            // Loss case: `CA_EVENT_LOSS` calls `prague_enter_loss`).
            CaState::Recovery => self.enter_loss(w),
            CaState::Loss => {}
            CaState::Cwr => self.enter_cwr(w, now),
            CaState::Open => self.in_loss = false,
            CaState::Disorder => {}
        }
    }

    /// Linux `prague_cwnd_undo`: the fraction keeps what it gained since the reduction began
    /// (`cwnd_cnt += cwnd_cnt − loss_cwnd_cnt`), and cwnd goes back to at least `loss_cwnd`.
    /// `in_loss` ends with the state's return to Open.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64) -> u64 {
        self.cwnd_cnt += self.cwnd_cnt - self.loss_cwnd_cnt;
        self.loss_cwnd.max(w.segs()) * w.mss
    }

    /// Linux `prague_cwnd_event(CA_EVENT_LOSS)`.
    fn on_loss_event(&mut self, w: &mut Window) {
        self.enter_loss(w);
    }

    fn owns_window(&self) -> bool {
        true
    }

    fn control(&mut self, w: &mut Window, ack: &AckSample) {
        // prague_update_cwnd
        let mss = w.mss;
        let ce_segs = ack.ce.div_ceil(mss) as i64;
        let mut acked = ack.acked.div_ceil(mss) as i64;
        if ce_segs > 0 {
            self.saw_ce = true;
            acked -= ce_segs;
        }
        let adjust_only = acked <= 0 || self.in_loss || !ack.cwnd_limited;
        if !adjust_only && w.in_slow_start() {
            let cwnd = w.segs();
            let grown = (cwnd + acked as u64).min((w.ssthresh / mss).max(cwnd));
            acked -= (grown - cwnd) as i64;
            w.set_segs(grown);
            if acked == 0 {
                // Linux returns here without the adjust step.
                self.update_ai_ack_increase();
                self.after_cwnd(w, ack);
                return;
            }
        }
        if !adjust_only {
            let cwnd = w.segs();
            let increase = (acked as u64 * self.ai_ack_increase + cwnd / 2) / cwnd.max(1);
            self.cwnd_cnt += (acked as u64).max(increase) as i64;
        }
        if self.cwnd_cnt <= -ONE_CWND {
            self.cwnd_cnt += ONE_CWND;
            let mut cwnd = w.segs().saturating_sub(1);
            if cwnd < MIN_CWND {
                cwnd = MIN_CWND;
                self.cwnd_cnt = 0;
            }
            w.set_segs(cwnd);
            w.ssthresh = w.cwnd;
            self.update_ai_ack_increase();
        } else if self.cwnd_cnt >= ONE_CWND {
            self.cwnd_cnt -= ONE_CWND;
            w.set_segs(w.segs() + 1);
            self.update_ai_ack_increase();
        }
        self.after_cwnd(w, ack);
    }

    fn pacing_rate(&self, w: &Window, p: &PacingInput) -> Option<u64> {
        let srtt = p.srtt?;
        let inflight = w.segs().max(p.in_flight.div_ceil(w.mss));
        let mut rate = u128::from(p.mtu) * u128::from(inflight) * 1_000_000_000_000;
        if w.cwnd < w.ssthresh / 2 {
            rate *= 2;
        }
        Some((rate / u128::from(srtt.as_ps().max(1))) as u64)
    }

    fn wants_pacing(&self) -> bool {
        true
    }

    fn ect(&self) -> Ecn {
        Ecn::Ect1
    }

    fn needs_ecn(&self) -> bool {
        true
    }
}

impl Prague {
    fn after_cwnd(&mut self, w: &Window, ack: &AckSample) {
        if self.should_update_ewma(w, ack) {
            self.update_alpha(w, ack);
        }
    }

    /// cwnd (segments) when the last loss reduction began (Linux `loss_cwnd`, which an undo
    /// restores).
    pub fn loss_cwnd_segments(&self) -> u64 {
        self.loss_cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux `prague_cwnd_undo`: cwnd back to at least `loss_cwnd`, and the fraction keeps
    /// what it gained since the reduction (the reduction itself is what is undone, by cwnd).
    #[test]
    fn undo_restores_the_loss_window_and_keeps_the_fractions_gain() {
        let mut p = Prague::new(PragueConfig::default());
        let w = Window { cwnd: 20 * 1000, ssthresh: 20 * 1000, mss: 1000, cwnd_cnt: 0 };
        p.cwnd_cnt = ONE_CWND / 4;
        p.on_loss_event(&mut w.clone());
        assert_eq!(p.loss_cwnd_segments(), 20);
        // The reduction: cwnd/2 segments plus half the fraction.
        assert_eq!(p.cwnd_cnt, ONE_CWND / 4 - (10 * ONE_CWND + ONE_CWND / 8));
        // Later the fraction has gained an eighth of a segment; cwnd is down to 12.
        p.cwnd_cnt += ONE_CWND / 8;
        let gained = p.cwnd_cnt - ONE_CWND / 4;
        let now = Window { cwnd: 12 * 1000, ..w };
        assert_eq!(p.undo_cwnd(&now, 0), 20 * 1000);
        assert_eq!(
            p.cwnd_cnt,
            ONE_CWND / 4 - (10 * ONE_CWND + ONE_CWND / 8) + ONE_CWND / 8 + gained
        );
        assert_eq!(p.undo_cwnd(&Window { cwnd: 25 * 1000, ..w }, 0), 25 * 1000);
    }
}
