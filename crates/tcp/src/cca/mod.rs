//! Congestion controllers behind one small trait, in the style of smoltcp's `Controller` and
//! Linux's `tcp_congestion_ops`.
//!
//! The socket ([`crate::Sender`]) owns loss detection, recovery and the congestion state machine
//! ([`CaState`]); a controller owns the window *rules*: growth ([`CongestionControl::increase`]),
//! the slow-start threshold on a reduction ([`CongestionControl::ssthresh`]), and reactions to
//! state changes. A controller that runs the whole window itself (Prague, BBR)
//! returns `true` from [`CongestionControl::owns_window`] and gets every ACK in
//! [`CongestionControl::control`] instead of the socket's PRR and growth calls, as Linux's
//! `cong_control`.
//!
//! Adding a controller: one file with a config type, its `SPEC` and `from_params`, and a state
//! type implementing [`CongestionControl`]; one arm in [`CcaConfig`] and [`Cca`] (the
//! `dispatch!` list below); one line in [`CCA_SPECS`].

use dcsim_types::params::{ParamError, Params, PluginSpec};
use dcsim_types::{Duration, Ecn, Time};

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod external;
pub mod newreno;
pub mod prague;

pub use bbr::{Bbr, BbrConfig, BbrMode};
pub use cubic::{Cubic, CubicConfig, HyStartMode};
pub use dctcp::{Dctcp, DctcpConfig};
pub use external::External;
pub use newreno::{NewReno, NewRenoConfig};
pub use prague::{Prague, PragueConfig};

/// The sender's window state, as a controller sees and changes it. All in bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Window {
    /// Congestion window.
    pub cwnd: u64,
    /// Slow-start threshold (`u64::MAX` until the first reduction).
    pub ssthresh: u64,
    /// Maximum segment size.
    pub mss: u64,
    /// Bytes ACKed towards the next additive increase (Linux `snd_cwnd_cnt`, in bytes); the
    /// socket zeroes it when a reduction starts.
    pub cwnd_cnt: u64,
}

impl Window {
    /// Whether cwnd is below ssthresh (Linux `tcp_in_slow_start`).
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    /// cwnd in whole segments (at least 1).
    #[inline]
    pub fn segs(&self) -> u64 {
        (self.cwnd / self.mss).max(1)
    }
    /// Sets cwnd to `segs` whole segments.
    #[inline]
    pub fn set_segs(&mut self, segs: u64) {
        self.cwnd = segs.max(1) * self.mss;
    }

    /// Slow start (Linux `tcp_slow_start`): cwnd grows by the bytes ACKed (at most `limit`
    /// bytes when `limit > 0`, RFC 3465), not beyond ssthresh. Returns the ACKed bytes left
    /// over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u64, limit: u64) -> u64 {
        let acked = if limit > 0 { acked.min(limit) } else { acked };
        let grown = (self.cwnd + acked).min(self.ssthresh.max(self.cwnd));
        let used = grown - self.cwnd;
        self.cwnd = grown;
        acked - used
    }

    /// Additive increase (Linux `tcp_cong_avoid_ai`): one MSS per `w` bytes ACKed.
    pub fn cong_avoid_ai(&mut self, w: u64, acked: u64) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += self.mss;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let k = self.cwnd_cnt / w;
            self.cwnd_cnt -= k * w;
            self.cwnd += k * self.mss;
        }
    }
}

/// Linux's congestion-avoidance states (`TCP_CA_*`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum CaState {
    /// Normal operation.
    Open,
    /// Duplicate ACKs or SACKs seen, nothing marked lost yet.
    Disorder,
    /// Reducing after an ECN echo (or a TLP-detected loss).
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// A change of the congestion state, as the controller sees it (Linux `set_state` reads the
/// socket for the rest).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct StateChange {
    /// The state before.
    pub from: CaState,
    /// The new state.
    pub to: CaState,
    /// When.
    pub now: Time,
    /// The socket's `snd_nxt`.
    pub snd_nxt: u64,
    /// Bytes delivered so far (Linux `tp->delivered`, in bytes).
    pub delivered: u64,
    /// Bytes ever marked lost (Linux `tp->lost`, in bytes), the timeout's marks included.
    pub lost: u64,
}

/// What triggered a window reduction.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Congestion {
    /// Loss detected by duplicate ACKs, SACK or RACK (fast recovery), or a repaired tail loss.
    Loss,
    /// An ECN congestion echo.
    Ecn,
    /// A retransmission timeout.
    Timeout,
}

/// A delivery-rate sample (Linux `tcp_rate.c`, for BBR-like controllers).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct RateSample {
    /// Bytes delivered (ACKed or SACKed) during `interval`.
    pub delivered: u64,
    /// The sampling interval: the longer of the send and the ACK intervals of the newest
    /// delivered segment.
    pub interval: Duration,
    /// Whether the newest delivered segment was sent while the flow had no data to fill cwnd.
    pub app_limited: bool,
}

impl RateSample {
    /// Delivered bytes per second, if the interval is not zero.
    pub fn rate_bytes_per_sec(&self) -> Option<u64> {
        (self.interval.as_ps() > 0).then(|| {
            (u128::from(self.delivered) * 1_000_000_000_000 / u128::from(self.interval.as_ps()))
                as u64
        })
    }
}

/// What one ACK told the sender, handed to the controller.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AckSample {
    /// Arrival time.
    pub now: Time,
    /// Bytes newly delivered by this ACK (cumulatively ACKed or SACKed).
    pub acked: u64,
    /// Of those, bytes newly reported CE-marked (accurate ECN), or all of them when a classic
    /// ECE flag came with the ACK.
    pub ce: u64,
    /// Whether the ACK advanced `snd_una`.
    pub una_advanced: bool,
    /// Linux `ca_rtt_us`: the RTT of the newest segment this ACK SACKed, else of the newest it
    /// acknowledged cumulatively if none of those was retransmitted, else (with timestamps) the
    /// echo's sample.
    pub rtt: Option<Duration>,
    /// Smoothed RTT after this ACK.
    pub srtt: Option<Duration>,
    /// Minimum RTT so far.
    pub min_rtt: Option<Duration>,
    /// Delivery-rate sample.
    pub rate: RateSample,
    /// Congestion state after the socket processed the ACK.
    pub state: CaState,
    /// `snd_una` after the ACK.
    pub snd_una: u64,
    /// `snd_nxt`.
    pub snd_nxt: u64,
    /// Bytes in flight (RFC 6675 pipe) after the ACK.
    pub in_flight: u64,
    /// Whether the flow is cwnd-limited (Linux `tcp_is_cwnd_limited`).
    pub cwnd_limited: bool,
    /// Total bytes delivered so far (Linux `tp->delivered`, in bytes).
    pub delivered: u64,
    /// Total bytes delivered with a CE echo so far (Linux `tp->delivered_ce`, in bytes).
    pub delivered_ce: u64,
    /// Slow-start byte limit per ACK (RFC 3465 `L·MSS`, 0 = none).
    pub abc_limit: u64,
    /// The socket's pacing rate in bytes per second (Linux `sk_pacing_rate`, computed even
    /// when pacing is not enforced; 0 before an RTT sample).
    pub pacing_rate: u64,
    /// Whether the socket enforces pacing.
    pub paced: bool,
    /// Bytes in flight before the ACK (Linux `rs->prior_in_flight`).
    pub prior_in_flight: u64,
    /// Bytes newly marked lost while the ACK was handled (Linux `rs->losses`, in bytes).
    pub lost: u64,
    /// Bytes ever marked lost (Linux `tp->lost`, in bytes).
    pub lost_total: u64,
    /// When data was last delivered (Linux `tp->delivered_mstamp`).
    pub delivered_time: Time,
    /// When pacing lets the next segment leave (Linux `tp->tcp_wstamp_ns`, the earliest
    /// departure time); at most now when not paced.
    pub next_send: Time,
}

/// Inputs of a pacing-rate computation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PacingInput {
    /// Smoothed RTT (`None` before the first sample).
    pub srtt: Option<Duration>,
    /// Bytes in flight.
    pub in_flight: u64,
    /// Frame bytes of a full segment (Linux `tcp_mss_to_mtu`).
    pub mtu: u64,
}

/// The hooks a congestion controller implements. Only `increase` and `ssthresh` are required.
pub trait CongestionControl {
    /// Every ACK that delivers data or reports CE, before the socket runs loss detection and
    /// its state machine (Linux `pkts_acked` and `in_ack_event`): RTT filters, HyStart, α.
    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}

    /// Window growth (Linux `cong_avoid`), called when the ACK advanced `snd_una` outside a
    /// reduction (states Open, Disorder, Loss).
    fn increase(&mut self, w: &mut Window, ack: &AckSample);

    /// The new ssthresh on entering a reduction (Linux `ssthresh`). `in_flight` is the flight
    /// size when the reduction starts.
    fn ssthresh(&mut self, w: &Window, cause: Congestion, in_flight: u64) -> u64;

    /// The congestion state changed (Linux `set_state`); on a timeout the socket calls this with
    /// `to = Loss` (also when already in Loss, as Linux does) after `ssthresh` and after setting
    /// cwnd to what is in flight plus one segment, as `tcp_enter_loss` does.
    fn on_state(&mut self, _w: &mut Window, _change: &StateChange) {}

    /// A data segment leaves with nothing in flight, `idle` after the previous one (Linux
    /// `CA_EVENT_TX_START`: the application sent nothing for a while). `app_limited` is the
    /// socket's mark that it ran out of data (Linux `tp->app_limited`).
    fn on_tx_start(&mut self, _w: &mut Window, _idle: Duration, _now: Time, _app_limited: bool) {}

    /// The connection is established and the controller starts (Linux `init`): after the
    /// handshake, with its RTT sample, or when the sender is created without one.
    fn on_init(
        &mut self,
        _w: &mut Window,
        _now: Time,
        _srtt: Option<Duration>,
        _min_rtt: Option<Duration>,
    ) {
    }

    /// A controller that draws random numbers (BBR's gain-cycle phase) gets its own seed, so
    /// that runs are reproducible and flows independent.
    fn seed(&mut self, _seed: u64) {}

    /// Whether the controller asked, on the ACK just handled, that the socket mark the data in
    /// flight application-limited (Linux: BBR's PROBE_RTT sets `tp->app_limited`); the
    /// question clears the request.
    fn take_app_limited(&mut self) -> bool {
        false
    }

    /// A timeout reduced ssthresh (Linux `CA_EVENT_LOSS`, raised by `tcp_enter_loss` right after
    /// `ssthresh`, and only when it called `ssthresh`: not on a timeout in a window already
    /// being reduced). Called before [`CongestionControl::on_state`] with `to = Loss`.
    fn on_loss_event(&mut self, _w: &mut Window) {}

    /// The window to go back to when the socket undoes a reduction it found spurious (Linux
    /// `undo_cwnd`, called by `tcp_undo_cwnd_reduction` before the state returns to Open).
    /// `prior_cwnd` is cwnd when the reduction began. The default is Linux's
    /// `tcp_reno_undo_cwnd`, which CUBIC and NewReno use: the larger of the two.
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u64) -> u64 {
        w.cwnd.max(prior_cwnd)
    }

    /// Whether the controller runs the whole window itself (Linux `cong_control`): the socket
    /// then calls [`CongestionControl::control`] on every ACK instead of PRR or `increase`, and
    /// does not set cwnd to ssthresh when a reduction ends.
    fn owns_window(&self) -> bool {
        false
    }

    /// The per-ACK window update of a controller that owns the window.
    fn control(&mut self, _w: &mut Window, _ack: &AckSample) {}

    /// The controller's own pacing rate in bytes per second, or `None` for the socket's
    /// `ratio·cwnd/SRTT` (none before an RTT sample). A controller that keeps
    /// `sk_pacing_rate` itself, as BBR does, answers before the first sample too.
    fn pacing_rate(&self, _w: &Window, _p: &PacingInput) -> Option<u64> {
        None
    }

    /// Whether the controller asks for pacing (Linux `SK_PACING_NEEDED`).
    fn wants_pacing(&self) -> bool {
        false
    }

    /// The ECN-capable codepoint its data carries when ECN is on.
    fn ect(&self) -> Ecn {
        Ecn::Ect0
    }

    /// Whether retransmissions stay ECN-capable (Linux `tcp_ca_needs_ecn`: DCTCP, Prague);
    /// otherwise they are sent Not-ECT, as RFC 3168 asks.
    fn needs_ecn(&self) -> bool {
        false
    }
}

/// A controller's configuration, chosen by name.
#[derive(Clone, PartialEq, Debug)]
pub enum CcaConfig {
    /// NewReno (RFC 5681/6582 window rules).
    NewReno(NewRenoConfig),
    /// CUBIC (RFC 9438, Linux `tcp_cubic.c`).
    Cubic(CubicConfig),
    /// DCTCP (RFC 8257, Linux `tcp_dctcp.c`).
    Dctcp(DctcpConfig),
    /// TCP Prague (Linux `tcp_prague.c` v0.6).
    Prague(PragueConfig),
    /// BBR v1 (Linux `tcp_bbr.c`).
    Bbr(BbrConfig),
    /// The window is set from outside the socket ([`External`]: HPCC over TCP). Not in
    /// [`CCA_SPECS`]: a front end builds it together with the law that sets the window.
    External,
}

/// Every controller's spec, for lookup by name and "known controllers: ..." messages.
pub const CCA_SPECS: &[PluginSpec] =
    &[newreno::SPEC, cubic::SPEC, dctcp::SPEC, prague::SPEC, bbr::SPEC];

/// The spec of controller `name`.
pub fn cca_spec(name: &str) -> Option<&'static PluginSpec> {
    CCA_SPECS.iter().find(|s| s.name == name)
}

impl CcaConfig {
    /// The configuration of controller `name` from its parameters.
    ///
    /// # Errors
    /// An unknown name (field `cca`), or a parameter out of range.
    pub fn from_params(name: &str, p: &Params) -> Result<CcaConfig, ParamError> {
        Ok(match name {
            "newreno" => CcaConfig::NewReno(NewRenoConfig::from_params(p)?),
            "cubic" => CcaConfig::Cubic(CubicConfig::from_params(p)?),
            "dctcp" => CcaConfig::Dctcp(DctcpConfig::from_params(p)?),
            "prague" => CcaConfig::Prague(PragueConfig::from_params(p)?),
            "bbr" => CcaConfig::Bbr(BbrConfig::from_params(p)?),
            _ => {
                let names: Vec<&str> = CCA_SPECS.iter().map(|s| s.name).collect();
                return Err(ParamError::new(
                    "cca",
                    format!("unknown congestion control {name:?}; known: {}", names.join(", ")),
                ));
            }
        })
    }

    /// The controller's name.
    pub fn name(&self) -> &'static str {
        match self {
            CcaConfig::NewReno(_) => newreno::SPEC.name,
            CcaConfig::Cubic(_) => cubic::SPEC.name,
            CcaConfig::Dctcp(_) => dctcp::SPEC.name,
            CcaConfig::Prague(_) => prague::SPEC.name,
            CcaConfig::Bbr(_) => bbr::SPEC.name,
            CcaConfig::External => "external",
        }
    }

    /// A fresh controller.
    pub fn build(&self) -> Cca {
        match self {
            CcaConfig::NewReno(c) => Cca::NewReno(NewReno::new(c.clone())),
            CcaConfig::Cubic(c) => Cca::Cubic(Cubic::new(c.clone())),
            CcaConfig::Dctcp(c) => Cca::Dctcp(Dctcp::new(c.clone())),
            CcaConfig::Prague(c) => Cca::Prague(Prague::new(c.clone())),
            CcaConfig::Bbr(c) => Cca::Bbr(Box::new(Bbr::new(c.clone()))),
            CcaConfig::External => Cca::External(External),
        }
    }
}

impl From<CcaConfig> for Cca {
    fn from(c: CcaConfig) -> Cca {
        c.build()
    }
}

/// A controller's state, dispatched statically.
#[derive(Clone, Debug)]
pub enum Cca {
    /// NewReno.
    NewReno(NewReno),
    /// CUBIC.
    Cubic(Cubic),
    /// DCTCP.
    Dctcp(Dctcp),
    /// Prague.
    Prague(Prague),
    /// BBR (boxed: its state is the largest).
    Bbr(Box<Bbr>),
    /// Window set from outside.
    External(External),
}

macro_rules! dispatch {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            Cca::NewReno($c) => $e,
            Cca::Cubic($c) => $e,
            Cca::Dctcp($c) => $e,
            Cca::Prague($c) => $e,
            Cca::Bbr($c) => $e,
            Cca::External($c) => $e,
        }
    };
}

impl Cca {
    /// The controller's name.
    pub fn name(&self) -> &'static str {
        match self {
            Cca::NewReno(_) => newreno::SPEC.name,
            Cca::Cubic(_) => cubic::SPEC.name,
            Cca::Dctcp(_) => dctcp::SPEC.name,
            Cca::Prague(_) => prague::SPEC.name,
            Cca::Bbr(_) => bbr::SPEC.name,
            Cca::External(_) => "external",
        }
    }
}

impl CongestionControl for Cca {
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        dispatch!(self, c => c.on_ack(w, ack))
    }
    fn increase(&mut self, w: &mut Window, ack: &AckSample) {
        dispatch!(self, c => c.increase(w, ack))
    }
    fn ssthresh(&mut self, w: &Window, cause: Congestion, in_flight: u64) -> u64 {
        dispatch!(self, c => c.ssthresh(w, cause, in_flight))
    }
    fn on_state(&mut self, w: &mut Window, change: &StateChange) {
        dispatch!(self, c => c.on_state(w, change))
    }
    fn on_tx_start(&mut self, w: &mut Window, idle: Duration, now: Time, app_limited: bool) {
        dispatch!(self, c => c.on_tx_start(w, idle, now, app_limited))
    }
    fn on_init(
        &mut self,
        w: &mut Window,
        now: Time,
        srtt: Option<Duration>,
        min_rtt: Option<Duration>,
    ) {
        dispatch!(self, c => c.on_init(w, now, srtt, min_rtt))
    }
    fn seed(&mut self, seed: u64) {
        dispatch!(self, c => c.seed(seed))
    }
    fn take_app_limited(&mut self) -> bool {
        dispatch!(self, c => c.take_app_limited())
    }
    fn on_loss_event(&mut self, w: &mut Window) {
        dispatch!(self, c => c.on_loss_event(w))
    }
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u64) -> u64 {
        dispatch!(self, c => c.undo_cwnd(w, prior_cwnd))
    }
    fn owns_window(&self) -> bool {
        dispatch!(self, c => c.owns_window())
    }
    fn control(&mut self, w: &mut Window, ack: &AckSample) {
        dispatch!(self, c => c.control(w, ack))
    }
    fn pacing_rate(&self, w: &Window, p: &PacingInput) -> Option<u64> {
        dispatch!(self, c => c.pacing_rate(w, p))
    }
    fn wants_pacing(&self) -> bool {
        dispatch!(self, c => c.wants_pacing())
    }
    fn ect(&self) -> Ecn {
        dispatch!(self, c => c.ect())
    }
    fn needs_ecn(&self) -> bool {
        dispatch!(self, c => c.needs_ecn())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_found_by_name_and_unknown_names_are_rejected() {
        for name in ["newreno", "cubic", "dctcp", "prague", "bbr"] {
            let spec = cca_spec(name).unwrap();
            let c = CcaConfig::from_params(name, &Params::default()).unwrap();
            assert_eq!((spec.name, c.name(), c.build().name()), (name, name, name));
        }
        let e = CcaConfig::from_params("vegas", &Params::default()).unwrap_err();
        assert_eq!(e.field, "cca");
        assert!(e.message.contains("cubic"), "{e}");
    }

    #[test]
    fn slow_start_and_additive_increase_follow_linux() {
        let mut w = Window { cwnd: 10_000, ssthresh: 14_000, mss: 1000, cwnd_cnt: 0 };
        // Slow start stops at ssthresh and hands back the rest.
        assert_eq!(w.slow_start(6000, 0), 2000);
        assert_eq!(w.cwnd, 14_000);
        // ABC: at most L·MSS per ACK.
        let mut v = Window { cwnd: 10_000, ssthresh: u64::MAX, mss: 1000, cwnd_cnt: 0 };
        assert_eq!(v.slow_start(5000, 2000), 0);
        assert_eq!(v.cwnd, 12_000);
        // One MSS per cwnd bytes ACKed.
        for _ in 0..13 {
            w.cong_avoid_ai(w.cwnd, 1000);
        }
        assert_eq!(w.cwnd, 14_000);
        w.cong_avoid_ai(w.cwnd, 1000);
        assert_eq!((w.cwnd, w.cwnd_cnt), (15_000, 0));
    }
}
