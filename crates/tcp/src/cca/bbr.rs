//! BBR v1 as Linux `tcp_bbr.c` (mainline 6.x): a model of the path from delivery-rate and RTT
//! samples, paced at the estimated bottleneck bandwidth.
//!
//! The controller runs the whole window and the pacing rate itself (Linux `cong_control`), and
//! works, as Linux does, in packets, with bandwidths in packets per µs scaled by 2^24 and gains
//! scaled by 256. The socket's byte counts are turned into packets of one MSS (a short final
//! segment counts as one).
//!
//! - **Model.** The bottleneck bandwidth is the windowed maximum (10 packet-timed rounds, Linux
//!   `win_minmax.c`) of delivery-rate samples, application-limited ones only when they raise it;
//!   a sample whose interval is shorter than the socket's minimum RTT is not valid
//!   (`tcp_rate_gen`). The propagation delay is the minimum RTT over 10 s.
//! - **STARTUP** paces at 2/ln 2 (2.885) × bw with cwnd 2.885 × BDP until three rounds without
//!   25% bandwidth growth; **DRAIN** then paces at its inverse until what is in the network at
//!   the next departure time is at most one BDP; **PROBE_BW** cycles the pacing gain through
//!   5/4, 3/4 and six rounds of 1 (from a phase drawn at random, never the 3/4 one), cwnd
//!   2 × BDP; **PROBE_RTT**, when the minimum RTT is 10 s old, holds cwnd at 4 packets for
//!   200 ms and a round.
//! - **cwnd** = BDP × gain + the ACK-aggregation allowance (the extra data ACKed beyond the
//!   bandwidth's share over 5–10 rounds, at most 100 ms of bandwidth) + three TSO bursts'
//!   worth of segments (`bbr_tso_segs_goal`: about 1 ms at the pacing rate, 1–127 segments),
//!   rounded up to even, + 2 in the 5/4 phase; reached by slow start, cut to the target only
//!   once the pipe was found full.
//! - **Loss.** Recovery's first round conserves packets (cwnd = in flight + ACKed), later ones
//!   let cwnd grow by the ACKed packets; on leaving recovery, or a timeout's Loss, cwnd goes
//!   back to the cwnd saved when it began. A timeout ends a round and restarts the full-pipe
//!   detection. The long-term ("policer") sampler: after a loss, two intervals of 4–16 rounds
//!   with at least 20% loss and bandwidths within 1/8 (or 4 kbit/s) of each other make BBR pace
//!   at their mean, gain 1, for 48 rounds.
//! - **Pacing** = bw × gain × MSS × 99% (`bbr_pacing_margin_percent`), from the first segment:
//!   2.885 × cwnd / SRTT (1 ms before an RTT sample). Before the pipe is full it only rises.
//! - **ECN** is ignored (v1 has no ECN response; the socket's CWR state does not touch a
//!   controller that owns the window).
//!
//! Not modelled: TSO bursts themselves (segments still leave one at a time, paced; only the
//! cwnd allowance for them is kept), the ACK-delay test of the minimum-RTT filter's refresh
//! (`is_ack_delayed`: every sample may refresh an expired filter), jiffies (10 s and 200 ms are
//! exact), and `sk_max_pacing_rate` (unlimited).

use dcsim_types::params::{ParamError, Params, PluginSpec};
use dcsim_types::{Duration, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{AckSample, CaState, Congestion, CongestionControl, PacingInput, StateChange, Window};

/// BBR's parameters (none: Linux's module has none either).
pub const SPEC: PluginSpec = PluginSpec {
    name: "bbr",
    summary: "BBR v1 (Linux tcp_bbr.c): paced at the estimated bottleneck bandwidth, cwnd 2 BDP",
    params: &[],
};

/// BBR configuration (no parameters).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct BbrConfig;

impl BbrConfig {
    /// From parameters (see [`SPEC`]).
    ///
    /// # Errors
    /// None; the signature is shared by every controller.
    pub fn from_params(_p: &Params) -> Result<BbrConfig, ParamError> {
        Ok(BbrConfig)
    }
}

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
/// 2/ln(2), the STARTUP gain.
const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u64 = BBR_UNIT * 2;
const PACING_GAIN: [u64; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
const CYCLE_LEN: usize = 8;
/// The gain cycle starts at a phase drawn from this many (never the draining one).
const CYCLE_RAND: u32 = 7;
/// The bandwidth filter's window, in rounds.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
const MIN_RTT_WIN: Duration = Duration::from_ms(10_000);
const PROBE_RTT_MODE: Duration = Duration::from_ms(200);
const CWND_MIN_TARGET: u64 = 4;
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this pacing rate (bytes/s) a TSO burst is one segment (`bbr_min_tso_rate`, 1.2 Mb/s).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` with a common x86-64 build's 320-byte header room.
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// `sk_pacing_shift`: a TSO burst holds about 1/2^10 s of the pacing rate.
const PACING_SHIFT: u32 = 10;
const TCP_INIT_CWND: u64 = 10;

/// BBR's modes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BbrMode {
    /// Ramping up to fill the pipe.
    Startup,
    /// Draining the queue STARTUP made.
    Drain,
    /// Steady state: gain cycling around the estimated bandwidth.
    ProbeBw,
    /// cwnd held at 4 packets to measure the propagation delay again.
    ProbeRtt,
}

/// Linux `win_minmax.c`: a windowed maximum kept as the best three samples from successive
/// quarters of the window.
#[derive(Clone, Copy, Debug, Default)]
struct MinMax {
    s: [(u64, u64); 3],
}

impl MinMax {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    fn running_max(&mut self, win: u64, t: u64, v: u64) {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            self.reset(t, v);
            return;
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v));
    }

    fn subwin_update(&mut self, win: u64, val: (u64, u64)) {
        let dt = val.0 - self.s[0].0;
        if dt > win {
            // The whole window passed without a better sample: the second and third choices
            // move up (twice, if the second is out of the window too).
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0 - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
    }
}

/// BBR's state.
#[derive(Clone, Debug)]
pub struct Bbr {
    mode: BbrMode,
    /// Minimum RTT in µs over the filter's window (`u64::MAX`: none yet).
    min_rtt_us: u64,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    bw: MinMax,
    rtt_cnt: u64,
    /// Delivered bytes at which the current round ends.
    next_rtt_delivered: u64,
    cycle_mstamp: Time,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    /// cwnd (packets) saved when a recovery, timeout or PROBE_RTT began.
    prior_cwnd: u64,
    // Long-term (policer) sampling.
    lt_is_sampling: bool,
    lt_use_bw: bool,
    lt_rtt_cnt: u32,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_lost: u64,
    /// In whole ms, as Linux keeps it.
    lt_last_stamp_ms: u64,
    // ACK aggregation.
    ack_epoch_mstamp: Time,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Bytes per second (Linux `sk_pacing_rate`).
    pacing_rate: u64,
    /// The socket's counters at the last ACK or state change.
    delivered: u64,
    lost: u64,
    delivered_mstamp: Time,
    seed: u64,
    draws: u64,
    mark_app_limited: bool,
}

impl Bbr {
    /// A fresh controller (the socket calls [`CongestionControl::on_init`] when the connection
    /// is established).
    pub fn new(_cfg: BbrConfig) -> Bbr {
        Bbr {
            mode: BbrMode::Startup,
            min_rtt_us: u64::MAX,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: Time::ZERO,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_use_bw: false,
            lt_rtt_cnt: 0,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_lost: 0,
            lt_last_stamp_ms: 0,
            ack_epoch_mstamp: Time::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: 0,
            delivered: 0,
            lost: 0,
            delivered_mstamp: Time::ZERO,
            seed: 0,
            draws: 0,
            mark_app_limited: false,
        }
    }

    /// The current mode.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// The bandwidth estimate in bytes per second of payload (`bbr_bw` × MSS).
    pub fn bw_bytes_per_sec(&self, mss: u64) -> u64 {
        ((u128::from(self.bw_est()) * u128::from(mss) * 1_000_000) >> BW_SCALE) as u64
    }
    /// The minimum-RTT estimate, if any.
    pub fn min_rtt(&self) -> Option<Duration> {
        (self.min_rtt_us != u64::MAX).then(|| Duration::from_us(self.min_rtt_us))
    }
    /// Whether STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// The gain cycle's phase (0: the 5/4 probe).
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }
    /// Whether the long-term (policer) bandwidth is in use.
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }
    /// The pacing gain, ×256.
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    fn bw_est(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked_max(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: packets/µs ≪ 24 × gain → bytes per second, 1% below.
    fn rate_bytes_per_sec(rate: u64, mss: u64, gain: u64) -> u64 {
        let r = (u128::from(rate) * u128::from(mss) * u128::from(gain)) >> BBR_SCALE;
        let r = r * u128::from(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT));
        (r >> BW_SCALE) as u64
    }

    fn init_pacing_rate_from_rtt(&mut self, w: &Window, srtt: Option<Duration>) {
        let rtt_us = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                (s.as_ps() / 1_000_000).max(1)
            }
            None => 1000,
        };
        let bw = w.segs() * BW_UNIT / rtt_us;
        self.pacing_rate = Self::rate_bytes_per_sec(bw, w.mss, HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, w: &Window, srtt: Option<Duration>, bw: u64, gain: u64) {
        let rate = Self::rate_bytes_per_sec(bw, w.mss, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(w, srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: the segments of about 1 ms at the pacing rate, 1 or 2 at least,
    /// at most 127.
    fn tso_segs_goal(&self, mss: u64) -> u64 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let min_segs = if self.pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
        (bytes / mss).max(min_segs).min(0x7F)
    }

    fn save_cwnd(&mut self, w: &Window) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = w.segs();
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.segs());
        }
    }

    /// `bbr_bdp`: ⌈bw × min_rtt × gain⌉ packets (10 without an RTT sample).
    fn bdp(&self, bw: u64, gain: u64) -> u64 {
        if self.min_rtt_us == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = u128::from(bw) * u128::from(self.min_rtt_us);
        ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT)) as u64
    }

    fn quantization_budget(&self, cwnd: u64, mss: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, bw: u64, gain: u64, mss: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// `bbr_packets_in_net_at_edt`: what will still be in the network when the next paced
    /// segment leaves.
    fn packets_in_net_at_edt(&self, inflight_now: u64, ack: &AckSample, mss: u64) -> u64 {
        let interval_us = ack.next_send.max(ack.now).saturating_since(ack.now).as_ps() / 1_000_000;
        let interval_delivered =
            ((u128::from(self.bw_est()) * u128::from(interval_us)) >> BW_SCALE) as u64;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(mss);
        }
        at_edt.saturating_sub(interval_delivered)
    }

    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw_est() * EXTRA_ACKED_MAX_US / BW_UNIT;
        ((EXTRA_ACKED_GAIN * self.extra_acked_max()) >> BBR_SCALE).min(max_aggr)
    }

    fn draw_below(&mut self, n: u32) -> u32 {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(self.draws);
        self.draws += 1;
        rng.gen_range(0..n)
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = self.delivered_mstamp;
    }

    fn reset_startup_mode(&mut self) {
        self.mode = BbrMode::Startup;
    }

    fn reset_probe_bw_mode(&mut self) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.draw_below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.reset_startup_mode();
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp_ms = self.delivered_mstamp.as_ps() / 1_000_000_000;
        self.lt_last_delivered = self.delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    fn lt_bw_interval_done(&mut self, bw: u64, mss: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw
                || Self::rate_bytes_per_sec(diff, mss, BBR_UNIT) <= LT_BW_DIFF
            {
                // Two intervals agree: we are policed at their mean.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_sampling`.
    fn lt_bw_sampling(&mut self, losses: u64, app_limited: bool, mss: u64) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        if app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        if losses == 0 {
            return;
        }
        let lost = packets(self.lost - self.lt_last_lost, mss);
        let delivered = packets(self.delivered - self.lt_last_delivered, mss);
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let now_ms = self.delivered_mstamp.as_ps() / 1_000_000_000;
        let t = now_ms.saturating_sub(self.lt_last_stamp_ms);
        if t < 1 {
            return;
        }
        if t >= u64::from(u32::MAX) / 1000 {
            self.reset_lt_bw_sampling();
            return;
        }
        let bw = delivered * BW_UNIT / (t * 1000);
        self.lt_bw_interval_done(bw, mss);
    }

    /// `bbr_update_bw`, with `tcp_rate_gen`'s validity test; whether the sample was valid.
    fn update_bw(&mut self, ack: &AckSample, mss: u64) -> bool {
        self.round_start = false;
        let interval_us = ack.rate.interval.as_ps() / 1_000_000;
        let min_rtt_us = ack.min_rtt.map_or(u64::MAX, |m| m.as_ps() / 1_000_000);
        if ack.rate.interval.as_ps() == 0 || interval_us == 0 || interval_us < min_rtt_us {
            return false;
        }
        let prior_delivered = ack.delivered - ack.rate.delivered;
        if prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = ack.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(packets(ack.lost, mss), ack.rate.app_limited, mss);
        let bw = packets(ack.rate.delivered, mss) * BW_UNIT / interval_us;
        if !ack.rate.app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
        true
    }

    fn update_ack_aggregation(&mut self, w: &Window, ack: &AckSample, acked: u64) {
        if acked == 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us =
            ack.delivered_time.saturating_since(self.ack_epoch_mstamp).as_ps() / 1_000_000;
        let mut expected =
            (u128::from(self.bw_est()) * u128::from(epoch_us) / u128::from(BW_UNIT)) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = ack.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xF_FFFF);
        let extra = (self.ack_epoch_acked - expected).min(w.segs());
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }

    fn is_next_cycle_phase(&self, ack: &AckSample, mss: u64) -> bool {
        let elapsed_us = ack.delivered_time.saturating_since(self.cycle_mstamp).as_ps() / 1_000_000;
        let full_length = elapsed_us > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(packets(ack.prior_in_flight, mss), ack, mss);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return full_length
                && (ack.lost > 0 || inflight >= self.inflight(bw, self.pacing_gain, mss));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT, mss)
    }

    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, w: &mut Window, ack: &AckSample) {
        let mss = w.mss;
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            w.ssthresh = self.inflight(self.max_bw(), BBR_UNIT, mss) * mss;
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(packets(ack.in_flight, mss), ack, mss)
                <= self.inflight(self.max_bw(), BBR_UNIT, mss)
        {
            self.reset_probe_bw_mode();
        }
    }

    fn check_probe_rtt_done(&mut self, w: &mut Window, now: Time) {
        if self.probe_rtt_done_stamp.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = now;
        w.set_segs(w.segs().max(self.prior_cwnd));
        self.reset_mode();
    }

    fn update_min_rtt(&mut self, w: &mut Window, ack: &AckSample, delivered_some: bool) {
        let now = ack.now;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = ack.rtt {
            let rtt_us = rtt.as_ps() / 1_000_000;
            if rtt_us < self.min_rtt_us || expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(w);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            // Low-rate samples of this mode are not the path's.
            self.mark_app_limited = true;
            if self.probe_rtt_done_stamp.is_none()
                && packets(ack.in_flight, w.mss) <= CWND_MIN_TARGET
            {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = ack.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, now);
                }
            }
        }
        if delivered_some {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => {
                let g = if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx] };
                (g, CWND_GAIN)
            }
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: `Some(cwnd)` while conserving packets.
    fn recover_or_restore(&mut self, w: &Window, ack: &AckSample, acked: u64) -> (u64, bool) {
        let mss = w.mss;
        let prev = self.prev_ca_state;
        let state = ack.state;
        let mut cwnd = w.segs();
        let losses = packets(ack.lost, mss);
        if losses > 0 {
            cwnd = cwnd.saturating_sub(losses).max(1);
        }
        let in_flight = packets(ack.in_flight, mss);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = ack.delivered;
            cwnd = in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, w: &mut Window, ack: &AckSample, acked: u64, bw: u64, gain: u64) {
        let mss = w.mss;
        let mut cwnd = w.segs();
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(w, ack, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
                target = self.quantization_budget(target, mss);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || packets(ack.delivered, mss) < TCP_INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == BbrMode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        w.set_segs(cwnd);
    }
}

/// Bytes as packets of one MSS, a short one counting as one.
fn packets(bytes: u64, mss: u64) -> u64 {
    bytes.div_ceil(mss)
}

impl CongestionControl for Bbr {
    fn increase(&mut self, _w: &mut Window, _ack: &AckSample) {}

    /// `bbr_ssthresh`: a reduction begins; cwnd is saved and ssthresh left alone.
    fn ssthresh(&mut self, w: &Window, _cause: Congestion, _in_flight: u64) -> u64 {
        self.save_cwnd(w);
        w.ssthresh
    }

    /// `bbr_set_state`: a timeout ends a round and restarts the full-pipe detection.
    fn on_state(&mut self, w: &mut Window, change: &StateChange) {
        if change.to != CaState::Loss {
            return;
        }
        self.delivered = change.delivered;
        self.lost = change.lost;
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        self.lt_bw_sampling(1, false, w.mss);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: restarting from idle while application-limited.
    fn on_tx_start(&mut self, w: &mut Window, _idle: Duration, now: Time, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            BbrMode::ProbeBw => {
                let bw = self.bw_est();
                self.set_pacing_rate(w, None, bw, BBR_UNIT);
            }
            BbrMode::ProbeRtt => self.check_probe_rtt_done(w, now),
            _ => {}
        }
    }

    /// `bbr_init`.
    fn on_init(
        &mut self,
        w: &mut Window,
        now: Time,
        srtt: Option<Duration>,
        min_rtt: Option<Duration>,
    ) {
        let (seed, draws) = (self.seed, self.draws);
        *self = Bbr::new(BbrConfig);
        (self.seed, self.draws) = (seed, draws);
        w.ssthresh = u64::MAX;
        self.min_rtt_us = min_rtt.map_or(u64::MAX, |m| m.as_ps() / 1_000_000);
        self.min_rtt_stamp = now;
        self.init_pacing_rate_from_rtt(w, srtt);
        self.ack_epoch_mstamp = now;
        self.delivered_mstamp = now;
        self.reset_lt_bw_sampling();
        self.reset_startup_mode();
    }

    fn seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// `bbr_undo_cwnd`: a spurious reduction; the full-pipe detection and the policer sampler
    /// start again, and cwnd stays.
    fn undo_cwnd(&mut self, w: &Window, _prior_cwnd: u64) -> u64 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
        w.cwnd
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn control(&mut self, w: &mut Window, ack: &AckSample) {
        let mss = w.mss;
        self.delivered = ack.delivered;
        self.lost = ack.lost_total;
        self.delivered_mstamp = ack.delivered_time;
        let acked = packets(ack.acked, mss);
        // bbr_update_model
        let valid = self.update_bw(ack, mss);
        if valid {
            self.update_ack_aggregation(w, ack, acked);
        }
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(ack, mss) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(ack.rate.app_limited);
        self.check_drain(w, ack);
        self.update_min_rtt(w, ack, ack.rate.delivered > 0);
        self.update_gains();
        let bw = self.bw_est();
        self.set_pacing_rate(w, ack.srtt, bw, self.pacing_gain);
        self.set_cwnd(w, ack, acked, bw, self.cwnd_gain);
    }

    /// `sk_pacing_rate` as BBR keeps it, from the connection's start.
    fn pacing_rate(&self, _w: &Window, _p: &PacingInput) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn take_app_limited(&mut self) -> bool {
        std::mem::take(&mut self.mark_app_limited)
    }

    fn wants_pacing(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cca::RateSample;

    /// Linux `win_minmax.c`: a new maximum replaces everything; a lower sample is kept as a
    /// later choice and takes over once the maximum is older than the window.
    #[test]
    fn the_bandwidth_filter_is_a_windowed_maximum() {
        let mut m = MinMax::default();
        m.running_max(10, 0, 100);
        m.running_max(10, 3, 60);
        m.running_max(10, 6, 80);
        assert_eq!(m.get(), 100);
        m.running_max(10, 10, 50);
        assert_eq!(m.get(), 100, "still in the window");
        m.running_max(10, 11, 40);
        assert_eq!(m.get(), 80, "the maximum aged out; the next choice took over");
        m.running_max(10, 12, 120);
        assert_eq!(m.get(), 120);
        // Nothing measured for longer than the window: the new sample is all there is.
        m.running_max(10, 30, 10);
        assert_eq!(m.get(), 10);
    }

    /// `tcp_rate_gen`: a rate sample whose interval is shorter than the minimum RTT (ACK
    /// compression) is not valid: it neither counts a round nor enters the filter.
    #[test]
    fn a_rate_sample_shorter_than_the_minimum_rtt_is_not_used() {
        let mss = 1000;
        let mut b = Bbr::new(BbrConfig);
        let mut w = Window { cwnd: 20 * mss, ssthresh: u64::MAX, mss, cwnd_cnt: 0 };
        b.on_init(&mut w, Time::ZERO, Some(Duration::from_ms(10)), Some(Duration::from_ms(10)));
        let mut a = ack(CaState::Open, 10 * mss, mss, 0);
        a.rate =
            RateSample { delivered: 10 * mss, interval: Duration::from_ms(5), app_limited: false };
        b.control(&mut w, &a);
        assert_eq!((b.max_bw(), b.rtt_cnt), (0, 0), "5 ms < min RTT 10 ms");
        a.rate.interval = Duration::from_ms(20);
        b.control(&mut w, &a);
        // 10 packets in 20 000 µs, ≪ 24.
        assert_eq!((b.max_bw(), b.rtt_cnt), ((10 << 24) / 20_000, 1));
    }

    /// `bbr_init_pacing_rate_from_rtt`: 2.885 × cwnd / RTT, 1 ms without a sample, 1% below.
    #[test]
    fn the_first_pacing_rate_is_the_startup_gain_over_the_initial_window() {
        let mut b = Bbr::new(BbrConfig);
        let mut w = Window { cwnd: 10 * 1448, ssthresh: u64::MAX, mss: 1448, cwnd_cnt: 0 };
        b.on_init(&mut w, Time::ZERO, None, None);
        let expect = 2.885 * 10.0 * 1448.0 / 1e-3 * 0.99;
        let got = b.pacing_rate as f64;
        assert!((got / expect - 1.0).abs() < 0.002, "{got} vs {expect}");
        b.on_init(&mut w, Time::ZERO, Some(Duration::from_ms(20)), Some(Duration::from_ms(20)));
        let got = b.pacing_rate as f64;
        assert!((got / (expect / 20.0) - 1.0).abs() < 0.002, "{got}");
        assert_eq!(b.min_rtt(), Some(Duration::from_ms(20)));
    }

    fn ack(state: CaState, in_flight: u64, acked: u64, lost: u64) -> AckSample {
        AckSample {
            now: Time::ZERO + Duration::from_ms(100),
            acked,
            ce: 0,
            una_advanced: true,
            rtt: None,
            srtt: Some(Duration::from_ms(10)),
            min_rtt: Some(Duration::from_ms(10)),
            rate: RateSample::default(),
            state,
            snd_una: 0,
            snd_nxt: 0,
            in_flight,
            cwnd_limited: true,
            delivered: 1_000_000,
            delivered_ce: 0,
            abc_limit: 0,
            pacing_rate: 0,
            paced: true,
            prior_in_flight: in_flight + acked,
            lost,
            lost_total: lost,
            delivered_time: Time::ZERO + Duration::from_ms(100),
            next_send: Time::ZERO + Duration::from_ms(100),
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the first round of a recovery conserves packets
    /// (cwnd = in flight + ACKed, after the losses are taken off); leaving it restores the cwnd
    /// saved when it began (`bbr_ssthresh`).
    #[test]
    fn recovery_conserves_packets_then_restores_the_saved_cwnd() {
        let mss = 1000;
        let mut b = Bbr::new(BbrConfig);
        let mut w = Window { cwnd: 40 * mss, ssthresh: u64::MAX, mss, cwnd_cnt: 0 };
        b.on_init(&mut w, Time::ZERO, Some(Duration::from_ms(10)), Some(Duration::from_ms(10)));
        b.full_bw_reached = true;
        b.mode = BbrMode::ProbeBw;
        // A bandwidth of 0.25 packets per µs: a BDP of 2 500 packets, far above cwnd.
        b.bw.reset(0, 1 << 22);
        // The socket enters recovery: ssthresh saves cwnd.
        assert_eq!(b.ssthresh(&w, Congestion::Loss, 0), u64::MAX);
        b.control(&mut w, &ack(CaState::Recovery, 25 * mss, 2 * mss, 3 * mss));
        assert_eq!(w.cwnd, 27 * mss, "in flight 25 + ACKed 2");
        // Still the first round: cwnd follows what is in flight.
        b.control(&mut w, &ack(CaState::Recovery, 20 * mss, mss, 0));
        assert_eq!(w.cwnd, 27 * mss, "max(27, 20 + 1)");
        // Recovery ends: back to at least the 40 saved.
        b.control(&mut w, &ack(CaState::Open, 20 * mss, mss, 0));
        assert!(w.cwnd >= 40 * mss, "cwnd {}", w.cwnd / mss);
    }

    /// A timeout restarts the full-pipe detection (`bbr_set_state`) and an undo does too
    /// (`bbr_undo_cwnd`), leaving cwnd alone.
    #[test]
    fn a_timeout_and_an_undo_restart_the_full_pipe_detection() {
        let mss = 1000;
        let mut b = Bbr::new(BbrConfig);
        let mut w = Window { cwnd: 40 * mss, ssthresh: u64::MAX, mss, cwnd_cnt: 0 };
        b.on_init(&mut w, Time::ZERO, None, None);
        b.full_bw = 500;
        b.full_bw_cnt = 2;
        let change = StateChange {
            from: CaState::Open,
            to: CaState::Loss,
            now: Time::ZERO,
            snd_nxt: 0,
            delivered: 0,
            lost: 0,
        };
        b.on_state(&mut w, &change);
        assert_eq!((b.full_bw, b.prev_ca_state, b.round_start), (0, CaState::Loss, true));
        b.full_bw = 500;
        assert_eq!(b.undo_cwnd(&w, 7 * mss), 40 * mss);
        assert_eq!((b.full_bw, b.full_bw_cnt), (0, 0));
    }

    /// The gain cycle's first phase is drawn from the seed, never the draining one, and the
    /// same seed draws the same phases.
    #[test]
    fn the_gain_cycle_starts_at_a_seeded_phase_other_than_the_drain() {
        let phases = |seed: u64| -> Vec<usize> {
            let mut b = Bbr::new(BbrConfig);
            b.seed(seed);
            (0..50)
                .map(|_| {
                    b.reset_probe_bw_mode();
                    b.cycle_idx
                })
                .collect()
        };
        let a = phases(1);
        assert_eq!(a, phases(1));
        assert_ne!(a, phases(2));
        assert!(a.iter().all(|&i| i != 1), "{a:?}");
        let mut seen = a.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [0, 2, 3, 4, 5, 6, 7]);
    }

    /// `bbr_check_full_bw_reached`: the pipe is full after three rounds in which the bandwidth
    /// grew by less than 25%; a round with 25% growth starts the count again.
    #[test]
    fn the_pipe_is_full_after_three_rounds_without_a_quarter_more_bandwidth() {
        let mut b = Bbr::new(BbrConfig);
        let round = |b: &mut Bbr, bw: u64| {
            b.bw.reset(b.rtt_cnt, bw);
            b.round_start = true;
            b.check_full_bw_reached(false);
        };
        round(&mut b, 1000);
        for bw in [1249, 1249] {
            round(&mut b, bw);
            assert!(!b.full_bw_reached);
        }
        // 1250 is 25% above 1000: the count starts again.
        round(&mut b, 1250);
        assert_eq!((b.full_bw, b.full_bw_cnt), (1250, 0));
        for _ in 0..2 {
            round(&mut b, 1500);
            assert!(!b.full_bw_reached);
        }
        round(&mut b, 1500);
        assert!(b.full_bw_reached, "three rounds below 1562");
    }

    /// `bbr_quantization_budget`: three TSO bursts, rounded up to even, and two more segments in
    /// the 5/4 phase of the gain cycle.
    #[test]
    fn the_cwnd_target_adds_tso_bursts_an_even_rounding_and_the_probe_phases_two() {
        let mut b = Bbr::new(BbrConfig);
        let mss = 1000;
        // 2 MB/s: bursts of 2 segments (2 000 000 >> 10 = 1953 B, at least 2).
        b.pacing_rate = 2_000_000;
        assert_eq!(b.tso_segs_goal(mss), 2);
        b.mode = BbrMode::ProbeBw;
        b.cycle_idx = 2;
        assert_eq!(b.quantization_budget(11, mss), 18, "11 + 6, rounded up to even");
        b.cycle_idx = 0;
        assert_eq!(b.quantization_budget(11, mss), 20);
        // Below 1.2 Mb/s a burst is one segment.
        b.pacing_rate = 100_000;
        assert_eq!(b.tso_segs_goal(mss), 1);
    }
}
