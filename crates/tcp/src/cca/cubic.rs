//! CUBIC (RFC 9438) as Linux `tcp_cubic.c` computes it, with HyStart (Linux) or HyStart++
//! (RFC 9406).
//!
//! Linux specifics kept: β = 717/1024 and C = 410/1024 by default; fast convergence; the cubic
//! target is evaluated one minimum RTT ahead (`t + delay_min`); while no reduction has set
//! W_max (`last_max_cwnd = 0`: after slow start, and after a timeout) cwnd grows at least 5% per
//! RTT (`cnt ≤ 20`); the Reno-friendly window grows one segment per `cwnd·15/8` segments ACKed
//! (`beta_scale`); cwnd grows at most one segment per two ACKed; `cnt` is recomputed at most
//! every 1/32 s while cwnd is unchanged. HyStart: rounds counted from the first ACK of slow
//! start, ACK-train and delay detection from 16 segments, delay threshold
//! `clamp(delay_min/8, 4 ms, 16 ms)` over 8 samples, RTT samples ignored for 1 s after the
//! current epoch began.

use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};
use dcsim_types::{Duration, Time};

use super::{AckSample, CaState, Congestion, CongestionControl, StateChange, Window};

const HYSTART_MODES: &[&str] = &["classic", "plus", "off"];
const HYSTART_ROUNDS: &[&str] = &["first-ack", "low-window"];

/// CUBIC's parameters.
pub const SPEC: PluginSpec = PluginSpec {
    name: "cubic",
    summary: "CUBIC (RFC 9438, Linux tcp_cubic.c) with HyStart or HyStart++",
    params: &[
        ParamSpec::new("beta", Kind::Number, "0.7", "multiplicative decrease (Linux 717/1024)"),
        ParamSpec::new("c", Kind::Number, "0.4", "cubic scaling constant C (Linux 410/1024)"),
        ParamSpec::new(
            "fast_convergence",
            Kind::Bool,
            "true",
            "release bandwidth faster on a lower W_max",
        ),
        ParamSpec::new(
            "tcp_friendliness",
            Kind::Bool,
            "true",
            "Reno-friendly region (RFC 9438 §4.3)",
        ),
        ParamSpec::new(
            "hystart",
            Kind::Choice(HYSTART_MODES),
            "classic",
            "slow-start exit: Linux HyStart, RFC 9406, none",
        ),
        ParamSpec::new(
            "hystart_ack_train",
            Kind::Bool,
            "true",
            "classic HyStart: ACK-train detection",
        ),
        ParamSpec::new(
            "hystart_delay",
            Kind::Bool,
            "true",
            "classic HyStart: delay-increase detection",
        ),
        ParamSpec::new(
            "hystart_low_window",
            Kind::Integer,
            "16",
            "HyStart acts from this cwnd (segments)",
        ),
        ParamSpec::new(
            "hystart_rounds",
            Kind::Choice(HYSTART_ROUNDS),
            "first-ack",
            "classic HyStart's rounds: from slow start's first ACK (Linux before 5.16 and from \
             6.14) or from the low window (5.16 to 6.13)",
        ),
        ParamSpec::new(
            "hystart_ack_delta",
            Kind::Duration,
            "2ms",
            "ACK-train spacing (hystart_ack_delta_us)",
        ),
    ],
};

/// The parameters only classic HyStart reads (with `hystart = "plus"` or `"off"` they change
/// nothing; a scenario warns about them).
pub const CLASSIC_HYSTART_KEYS: [&str; 5] = [
    "hystart_ack_train",
    "hystart_delay",
    "hystart_low_window",
    "hystart_rounds",
    "hystart_ack_delta",
];

/// Which slow-start exit heuristic CUBIC uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HyStartMode {
    /// Linux's HyStart (ACK train + delay increase).
    Classic,
    /// RFC 9406 HyStart++ (delay increase, then conservative slow start).
    Plus,
    /// Plain slow start until loss.
    Off,
}

/// CUBIC configuration.
#[derive(Clone, PartialEq, Debug)]
pub struct CubicConfig {
    /// β (0.7; Linux uses 717/1024).
    pub beta: f64,
    /// C (0.4; Linux uses 410/1024).
    pub c: f64,
    /// Fast convergence.
    pub fast_convergence: bool,
    /// Reno-friendly region.
    pub tcp_friendliness: bool,
    /// Slow-start exit heuristic.
    pub hystart: HyStartMode,
    /// Classic HyStart: ACK-train detection.
    pub hystart_ack_train: bool,
    /// Classic HyStart: delay detection.
    pub hystart_delay: bool,
    /// HyStart acts from this cwnd (segments).
    pub hystart_low_window: u64,
    /// Classic HyStart counts its rounds only once cwnd reaches `hystart_low_window` (Linux
    /// 5.16 to 6.13, where `cubictcp_acked` tests the window before `hystart_update`, whose
    /// round reset then first runs at the low window); otherwise from slow start's first ACK
    /// (Linux before 5.16 and from 6.14).
    pub hystart_rounds_from_low_window: bool,
    /// ACK-train spacing.
    pub hystart_ack_delta: Duration,
}

impl Default for CubicConfig {
    fn default() -> CubicConfig {
        CubicConfig {
            beta: 717.0 / 1024.0,
            c: 410.0 / 1024.0,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: HyStartMode::Classic,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_rounds_from_low_window: false,
            hystart_ack_delta: Duration::from_ms(2),
        }
    }
}

/// The largest `c` accepted: 250 times Linux's 0.4 (a window that grows by 100·t³ segments
/// fills any path within a second). Beyond 64 bits the growth saturates.
pub const MAX_C: f64 = 100.0;

impl CubicConfig {
    /// From parameters (see [`SPEC`]). `beta = 0.7` and `c = 0.4` map to Linux's 717/1024 and
    /// 410/1024.
    ///
    /// # Errors
    /// `beta` outside (0, 1) or `c` not positive.
    pub fn from_params(p: &Params) -> Result<CubicConfig, ParamError> {
        let d = CubicConfig::default();
        let beta = p.f64("beta", 0.7);
        if !(beta > 0.0 && beta < 1.0) {
            return Err(ParamError::new("beta", format!("must be in (0, 1), got {beta}")));
        }
        // Linux's units: beta in 1/1024 (`beta`), C in 10/1024 (`bic_scale`). A value that
        // rounds to the bounds would run silently as beta = 1 (no decrease) or C = 0 (no
        // growth): refused, as the bounds themselves are.
        let beta_q = (beta * 1024.0).round();
        if !(1.0..=1023.0).contains(&beta_q) {
            return Err(ParamError::new(
                "beta",
                format!("{beta} rounds to {beta_q}/1024 (Linux's unit), outside (0, 1)"),
            ));
        }
        let c = p.f64("c", 0.4);
        if !(c > 0.0 && c.is_finite()) {
            return Err(ParamError::new("c", format!("must be positive, got {c}")));
        }
        let c_q = (c * 1024.0 / 10.0).round();
        if c_q < 1.0 {
            return Err(ParamError::new(
                "c",
                format!(
                    "{c} rounds to 0 in Linux's unit of 10/1024 (bic_scale); the least is 0.0098"
                ),
            ));
        }
        if c > MAX_C {
            return Err(ParamError::new("c", format!("must be at most {MAX_C}, got {c}")));
        }
        Ok(CubicConfig {
            beta: beta_q / 1024.0,
            c: c_q * 10.0 / 1024.0,
            fast_convergence: p.bool("fast_convergence", d.fast_convergence),
            tcp_friendliness: p.bool("tcp_friendliness", d.tcp_friendliness),
            hystart: match p.choice("hystart", "classic") {
                "plus" => HyStartMode::Plus,
                "off" => HyStartMode::Off,
                _ => HyStartMode::Classic,
            },
            hystart_ack_train: p.bool("hystart_ack_train", d.hystart_ack_train),
            hystart_delay: p.bool("hystart_delay", d.hystart_delay),
            hystart_low_window: p.u64("hystart_low_window", d.hystart_low_window),
            hystart_rounds_from_low_window: p.choice("hystart_rounds", "first-ack") == "low-window",
            hystart_ack_delta: p.duration("hystart_ack_delta", d.hystart_ack_delta),
        })
    }
}

/// HyStart++ constants (RFC 9406 §4.3).
const HSPP_MIN_RTT_THRESH: Duration = Duration::from_ms(4);
const HSPP_MAX_RTT_THRESH: Duration = Duration::from_ms(16);
const HSPP_N_RTT_SAMPLE: u32 = 8;
const HSPP_CSS_GROWTH_DIVISOR: u64 = 4;
const HSPP_CSS_ROUNDS: u32 = 5;

/// CUBIC state.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// Segments per one-segment increase (Linux `ca->cnt`).
    cnt: u64,
    /// W_max in segments (Linux `last_max_cwnd`).
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: Option<Time>,
    origin: u64,
    /// K in seconds.
    k: f64,
    delay_min: Option<Duration>,
    epoch_start: Option<Time>,
    /// Bytes ACKed in this epoch, for the Reno-friendly window.
    ack_cnt: u64,
    /// Reno-friendly window estimate, segments.
    tcp_cwnd: u64,
    // Classic HyStart.
    found: bool,
    round_start: Time,
    last_ack: Time,
    end_seq: u64,
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    // HyStart++.
    hspp_last_round_min: Option<Duration>,
    hspp_css_baseline: Option<Duration>,
    hspp_css_rounds: u32,
}

impl Cubic {
    /// A fresh controller.
    pub fn new(cfg: CubicConfig) -> Cubic {
        Cubic {
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: None,
            origin: 0,
            k: 0.0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start: Time::ZERO,
            last_ack: Time::ZERO,
            end_seq: 0,
            curr_rtt: None,
            sample_cnt: 0,
            hspp_last_round_min: None,
            hspp_css_baseline: None,
            hspp_css_rounds: 0,
        }
    }

    /// W_max in segments (0 before the first reduction or after a timeout).
    pub fn w_max_segments(&self) -> u64 {
        self.last_max_cwnd
    }
    /// K of the current epoch, in seconds (0 when cwnd started at or above W_max).
    pub fn k_seconds(&self) -> f64 {
        self.k
    }
    /// When the current epoch (growth since the last reduction) began.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch_start
    }
    /// The smallest RTT sample seen (`delay_min`: the cubic target's lookahead and HyStart's
    /// reference), if any.
    pub fn delay_min(&self) -> Option<Duration> {
        self.delay_min
    }
    /// Whether HyStart (or HyStart++) ended slow start.
    pub fn hystart_found(&self) -> bool {
        self.found
    }
    /// Whether HyStart++ is in conservative slow start.
    pub fn in_css(&self) -> bool {
        self.hspp_css_baseline.is_some()
    }
    /// The Reno-friendly window estimate, segments (valid during an epoch).
    pub fn reno_estimate_segments(&self) -> u64 {
        self.tcp_cwnd
    }

    fn reset(&mut self) {
        let cfg = self.cfg.clone();
        *self = Cubic::new(cfg);
    }

    fn hystart_reset(&mut self, ack: &AckSample) {
        self.start_round(ack.now, ack.snd_nxt);
    }

    /// Linux `bictcp_hystart_reset`: a HyStart round from `now` to `snd_nxt`.
    fn start_round(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// Linux `hystart_update`: rounds are counted from the first ACK of slow start, detection
    /// works from `hystart_low_window` segments (the round reset before the window test, as in
    /// Linux since 6.14 and before late 2021; kernels in between counted rounds only from the
    /// low window on).
    fn hystart_update(&mut self, w: &mut Window, ack: &AckSample, delay: Duration) {
        if self.cfg.hystart_rounds_from_low_window && w.segs() < self.cfg.hystart_low_window {
            return;
        }
        if ack.snd_una > self.end_seq {
            self.hystart_reset(ack);
        }
        if w.segs() < self.cfg.hystart_low_window {
            return;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if self.cfg.hystart_ack_train
            && ack.now.saturating_since(self.last_ack) <= self.cfg.hystart_ack_delta
        {
            self.last_ack = ack.now;
            // hystart_ack_delay: GSO bursts of 64 KB may compress ACKs, up to 1 ms.
            let ack_delay = if ack.pacing_rate > 0 {
                Duration::from_ps(
                    (4 * 65_536 * 1_000_000_000_000u128 / u128::from(ack.pacing_rate)) as u64,
                )
                .min(Duration::from_ms(1))
            } else {
                Duration::ZERO
            };
            let mut threshold = delay_min + ack_delay;
            if !ack.paced {
                threshold = Duration(threshold.as_ps() / 2);
            }
            if ack.now.saturating_since(self.round_start) > threshold {
                self.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        if self.cfg.hystart_delay {
            self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
            if self.sample_cnt < 8 {
                self.sample_cnt += 1;
            } else {
                let eta = Duration(delay_min.as_ps() / 8)
                    .clamp(Duration::from_ms(4), Duration::from_ms(16));
                if self.curr_rtt.is_some_and(|c| c > delay_min + eta) {
                    self.found = true;
                    w.ssthresh = w.cwnd;
                }
            }
        }
    }

    /// RFC 9406 per-ACK processing in slow start, from its first ACK (the RFC has no low window:
    /// `hystart_low_window` is classic HyStart's).
    fn hystart_plus_update(&mut self, w: &mut Window, ack: &AckSample, rtt: Duration) {
        if ack.snd_una > self.end_seq {
            // A new round.
            self.hspp_last_round_min = self.curr_rtt;
            self.curr_rtt = None;
            self.sample_cnt = 0;
            self.end_seq = ack.snd_nxt;
            if self.hspp_css_baseline.is_some() {
                self.hspp_css_rounds += 1;
                if self.hspp_css_rounds >= HSPP_CSS_ROUNDS {
                    self.found = true;
                    self.hspp_css_baseline = None;
                    w.ssthresh = w.cwnd;
                    return;
                }
            }
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
        self.sample_cnt += 1;
        if self.sample_cnt < HSPP_N_RTT_SAMPLE {
            return;
        }
        let cur = self.curr_rtt.unwrap_or(rtt);
        match self.hspp_css_baseline {
            None => {
                if let Some(last) = self.hspp_last_round_min {
                    let eta =
                        Duration(last.as_ps() / 8).clamp(HSPP_MIN_RTT_THRESH, HSPP_MAX_RTT_THRESH);
                    if cur >= last + eta {
                        self.hspp_css_baseline = Some(cur);
                        self.hspp_css_rounds = 0;
                    }
                }
            }
            Some(base) => {
                if cur < base {
                    // The delay increase was spurious: back to slow start.
                    self.hspp_css_baseline = None;
                }
            }
        }
    }

    /// Linux `bictcp_update`: recomputes `cnt`.
    fn update(&mut self, w: &Window, now: Time, acked: u64) {
        let cwnd = w.segs();
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd
            && self.last_time.is_some_and(|t| now.saturating_since(t) <= Duration::from_us(31_250))
        {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = Some(now);
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0.0;
                    self.origin = cwnd;
                } else {
                    self.k = ((self.last_max_cwnd - cwnd) as f64 / self.cfg.c).cbrt();
                    self.origin = self.last_max_cwnd;
                }
                now
            }
        };
        let t =
            (now.saturating_since(epoch) + self.delay_min.unwrap_or(Duration::ZERO)).as_secs_f64();
        let offs = (t - self.k).abs();
        let delta = (self.cfg.c * offs * offs * offs).floor() as u64;
        let target = if t < self.k {
            self.origin.saturating_sub(delta)
        } else {
            self.origin.saturating_add(delta)
        };
        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        if self.cfg.tcp_friendliness {
            // Linux beta_scale = 8·(1024 + β)/3/(1024 − β), integer (15 for β = 717).
            let b = (self.cfg.beta * 1024.0).round() as u64;
            let beta_scale = 8 * (1024 + b) / 3 / (1024 - b).max(1);
            let per_seg = (cwnd * beta_scale / 8).max(1) * w.mss;
            while self.ack_cnt > per_seg {
                self.ack_cnt -= per_seg;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(2);
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let Some(rtt) = ack.rtt else { return };
        if self.epoch_start.is_some_and(|e| ack.now.saturating_since(e) < Duration::from_ms(1000)) {
            return;
        }
        let delay = rtt.max(Duration::from_ps(1));
        if self.delay_min.is_none_or(|d| d > delay) {
            self.delay_min = Some(delay);
        }
        if self.found || !w.in_slow_start() {
            return;
        }
        match self.cfg.hystart {
            HyStartMode::Classic => self.hystart_update(w, ack, delay),
            HyStartMode::Plus => self.hystart_plus_update(w, ack, delay),
            HyStartMode::Off => {}
        }
    }

    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        if !ack.cwnd_limited {
            return;
        }
        let mut acked = ack.acked;
        if w.in_slow_start() {
            if self.hspp_css_baseline.is_some() {
                // HyStart++ conservative slow start: a quarter of the usual growth.
                w.slow_start(acked / HSPP_CSS_GROWTH_DIVISOR, ack.abc_limit);
                return;
            }
            acked = w.slow_start(acked, ack.abc_limit);
            if acked == 0 {
                return;
            }
        }
        self.update(w, ack.now, acked);
        let threshold = self.cnt * w.mss;
        w.cong_avoid_ai(threshold, acked);
    }

    fn ssthresh(&mut self, w: &Window, _cause: Congestion, _in_flight: u64) -> u64 {
        let cwnd = w.segs();
        self.epoch_start = None;
        let b = (self.cfg.beta * 1024.0).round() as u64;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            cwnd * (1024 + b) / 2048
        } else {
            cwnd
        };
        self.hspp_css_baseline = None;
        (cwnd * b / 1024).max(2) * w.mss
    }

    /// Linux `cubictcp_state`: a timeout resets the controller (`bictcp_reset`: W_max, the
    /// epoch, `delay_min` and HyStart's verdict) and starts a HyStart round at once
    /// (`bictcp_hystart_reset`): from now, until `snd_una` passes the `snd_nxt` of the timeout,
    /// which the slow start that follows resends.
    fn on_state(&mut self, _w: &mut Window, change: &StateChange) {
        if change.to == CaState::Loss {
            self.reset();
            self.start_round(change.now, change.snd_nxt);
        }
    }

    /// Linux `cubictcp_cwnd_event(CA_EVENT_TX_START)`: after an idle period the epoch starts
    /// that much later (never after now), so that W(t) continues where it stopped instead of
    /// jumping by the idle time (a persistent connection between messages).
    fn on_tx_start(&mut self, _w: &mut Window, idle: Duration, now: Time, _app_limited: bool) {
        if let Some(e) = self.epoch_start.filter(|_| idle > Duration::ZERO) {
            self.epoch_start = Some((e + idle).min(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cca::RateSample;

    fn ack(now: Time, acked: u64) -> AckSample {
        AckSample {
            now,
            acked,
            ce: 0,
            una_advanced: true,
            rtt: Some(Duration::from_ms(10)),
            srtt: Some(Duration::from_ms(10)),
            min_rtt: Some(Duration::from_ms(10)),
            rate: RateSample::default(),
            state: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            in_flight: 0,
            cwnd_limited: true,
            delivered: 0,
            delivered_ce: 0,
            abc_limit: 0,
            pacing_rate: 0,
            paced: false,
            prior_in_flight: 0,
            lost: 0,
            lost_total: 0,
            delivered_time: now,
            next_send: now,
        }
    }

    /// `beta` and `c` are refused where Linux's units would round them to a bound, and `c`
    /// above [`MAX_C`]; the accepted ones are quantised as Linux does.
    #[test]
    fn beta_and_c_that_round_to_a_bound_are_refused() {
        use dcsim_types::params::Value;
        let with = |k: &'static str, v: f64| {
            CubicConfig::from_params(&Params::from_values(SPEC.params, vec![(k, Value::Number(v))]))
        };
        for (k, v) in [("beta", 0.9999), ("beta", 0.0001), ("c", 0.001), ("c", 1e30), ("c", 100.5)]
        {
            let e = with(k, v).unwrap_err();
            assert_eq!(e.field, k, "{k} = {v}: {e}");
        }
        assert_eq!(with("beta", 0.7).unwrap().beta, 717.0 / 1024.0);
        assert_eq!(with("c", 0.4).unwrap().c, 410.0 / 1024.0);
        assert_eq!(with("c", 100.0).unwrap().c, 10240.0 / 1024.0 * 10.0);
        assert_eq!(with("c", 0.005).unwrap().c, 10.0 / 1024.0);
    }

    /// `CA_EVENT_TX_START` moves the epoch by the idle time, at most to now, and only once an
    /// epoch has started.
    #[test]
    fn an_idle_period_moves_the_epoch_by_its_length() {
        let mut c = Cubic::new(CubicConfig::default());
        let w = Window { cwnd: 100 * 1000, ssthresh: 50 * 1000, mss: 1000, cwnd_cnt: 0 };
        let ms = Duration::from_ms;
        c.on_tx_start(&mut w.clone(), ms(5), Time::ZERO + ms(20), false);
        assert_eq!(c.epoch_start(), None, "no epoch yet: nothing to move");
        c.increase(&mut w.clone(), &ack(Time::ZERO + ms(10), 1000));
        assert_eq!(c.epoch_start(), Some(Time::ZERO + ms(10)));
        c.on_tx_start(&mut w.clone(), ms(5), Time::ZERO + ms(40), false);
        assert_eq!(c.epoch_start(), Some(Time::ZERO + ms(15)));
        c.on_tx_start(&mut w.clone(), ms(100), Time::ZERO + ms(60), false);
        assert_eq!(c.epoch_start(), Some(Time::ZERO + ms(60)), "never after now");
        c.on_tx_start(&mut w.clone(), Duration::ZERO, Time::ZERO + ms(70), false);
        assert_eq!(c.epoch_start(), Some(Time::ZERO + ms(60)));
    }

    /// HyStart counts its rounds from the first ACK of slow start, below the low window too
    /// (Linux `hystart_update` resets the round before its `hystart_low_window` test): with IW
    /// 10, the first round ends at the tenth segment and the second at the thirtieth, as the
    /// sender's `snd_nxt` was when each began.
    #[test]
    fn hystart_rounds_start_at_the_first_ack_below_the_low_window() {
        let mut c = Cubic::new(CubicConfig::default());
        let mut w = Window { cwnd: 11 * 1000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        let at = |ms: u64| Time::ZERO + Duration::from_ms(ms);
        let ack_of = |now, una, nxt| AckSample { snd_una: una, snd_nxt: nxt, ..ack(now, 1000) };
        // Segment 1's ACK: 10 sent, cwnd 11 < 16.
        c.on_ack(&mut w, &ack_of(at(10), 1000, 10_000));
        assert_eq!((c.end_seq, c.round_start), (10_000, at(10)), "round 1 ends at segment 10");
        // Within the round: no reset.
        c.on_ack(&mut w, &ack_of(at(11), 10_000, 29_000));
        assert_eq!((c.end_seq, c.round_start), (10_000, at(10)));
        // Segment 11's ACK starts round 2, which ends where snd_nxt then was.
        w.cwnd = 21 * 1000;
        c.on_ack(&mut w, &ack_of(at(20), 11_000, 30_000));
        assert_eq!((c.end_seq, c.round_start), (30_000, at(20)));
        assert!(!c.hystart_found());
        // HyStart++ counts its rounds from the start too.
        let mut p =
            Cubic::new(CubicConfig { hystart: HyStartMode::Plus, ..CubicConfig::default() });
        let mut w = Window { cwnd: 11 * 1000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        p.on_ack(&mut w, &ack_of(at(10), 1000, 10_000));
        assert_eq!(p.end_seq, 10_000);
    }

    /// With `hystart_rounds = "low-window"` (Linux 5.16 to 6.13) no round starts below the low
    /// window: the first begins at the first ACK with cwnd 16, and ends where `snd_nxt` then
    /// was (the helper's 6.1 arithmetic: round starts at about 2·a + 11 segments).
    #[test]
    fn hystart_rounds_from_the_low_window_start_at_cwnd_16() {
        let cfg = CubicConfig { hystart_rounds_from_low_window: true, ..CubicConfig::default() };
        let mut c = Cubic::new(cfg);
        let mut w = Window { cwnd: 11 * 1000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        let at = |ms: u64| Time::ZERO + Duration::from_ms(ms);
        let ack_of = |now, una, nxt| AckSample { snd_una: una, snd_nxt: nxt, ..ack(now, 1000) };
        c.on_ack(&mut w, &ack_of(at(10), 1000, 10_000));
        assert_eq!(c.end_seq, 0, "no round below the low window");
        // The seventh ACK: cwnd 16 (IW 10 + 6), 22 segments sent.
        w.cwnd = 16 * 1000;
        c.on_ack(&mut w, &ack_of(at(11), 6000, 22_000));
        assert_eq!((c.end_seq, c.round_start), (22_000, at(11)), "the first round");
        // Within it: no reset; past it: the next.
        c.on_ack(&mut w, &ack_of(at(12), 20_000, 40_000));
        assert_eq!(c.end_seq, 22_000);
        c.on_ack(&mut w, &ack_of(at(20), 23_000, 57_000));
        assert_eq!((c.end_seq, c.round_start), (57_000, at(20)));
        let p = Params::from_values(
            SPEC.params,
            vec![("hystart_rounds", dcsim_types::params::Value::Choice("low-window"))],
        );
        assert!(CubicConfig::from_params(&p).unwrap().hystart_rounds_from_low_window);
        assert!(!CubicConfig::default().hystart_rounds_from_low_window);
    }

    #[test]
    fn reduction_is_beta_and_fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(CubicConfig::default());
        let w = Window { cwnd: 100 * 1000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        assert_eq!(c.ssthresh(&w, Congestion::Loss, 0), 70 * 1000);
        assert_eq!(c.w_max_segments(), 100);
        let w = Window { cwnd: 80 * 1000, ..w };
        c.ssthresh(&w, Congestion::Loss, 0);
        // 80·(1024 + 717)/2048 = 68.
        assert_eq!(c.w_max_segments(), 68);
    }

    #[test]
    fn k_is_the_cube_root_of_the_gap_over_c() {
        let mut c = Cubic::new(CubicConfig::default());
        let mut w = Window { cwnd: 100 * 1000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        w.ssthresh = c.ssthresh(&w, Congestion::Loss, 0);
        w.cwnd = w.ssthresh;
        c.increase(&mut w, &ack(Time::from_ns(1), 1000));
        let expect = (30.0 / (410.0 / 1024.0f64)).cbrt();
        assert!((c.k_seconds() - expect).abs() < 1e-9, "{}", c.k_seconds());
    }

    /// A timeout starts a HyStart round at once (Linux `cubictcp_state` calls
    /// `bictcp_hystart_reset` on entering Loss): it lasts until `snd_una` passes the timeout's
    /// `snd_nxt`, and its ACK train would have to start within `hystart_ack_delta` of the
    /// timeout. So a train of ACKs 1 ms apart in the slow start that follows does not end it,
    /// where a round started at the first of those ACKs would have after 5 ms (half of
    /// `delay_min`).
    #[test]
    fn a_timeout_starts_a_hystart_round_that_its_slow_start_cannot_end_by_an_ack_train() {
        let mut c = Cubic::new(CubicConfig::default());
        let mut w = Window { cwnd: 20 * 1000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        let at = |us: u64| Time::ZERO + Duration::from_us(us);
        c.ssthresh(&w, Congestion::Timeout, 0);
        let change = StateChange {
            from: CaState::Open,
            to: CaState::Loss,
            now: at(300_000),
            snd_nxt: 40_000,
            delivered: 0,
            lost: 0,
        };
        c.on_state(&mut w, &change);
        assert_eq!((c.end_seq, c.round_start), (40_000, at(300_000)));
        assert_eq!(c.delay_min(), None, "bictcp_reset forgets delay_min");
        w.cwnd = 16 * 1000;
        for k in 0..10u64 {
            let a = AckSample {
                snd_una: 1000 * (k + 1),
                snd_nxt: 40_000,
                ..ack(at(311_000 + 1000 * k), 1000)
            };
            c.on_ack(&mut w, &a);
        }
        assert_eq!(c.round_start, at(300_000), "still the timeout's round");
        assert!(!c.hystart_found());
    }
}
