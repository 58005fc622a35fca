//! The sending endpoint: segmentation, the SACK scoreboard, loss detection (RACK or
//! duplicate ACKs), NewReno / SACK+PRR recovery, RTO, TLP, pacing, ECN reaction, the
//! server side of the handshake, and the hooks of the congestion controller.
//!
//! The shape of the ACK path follows Linux `tcp_ack`: clean the retransmission queue
//! (cumulative ACK, RTT samples with Karn's rule), tag SACKed segments, let the controller
//! observe the ACK (`pkts_acked`, `in_ack_event`), process a tail-loss-probe ACK, detect losses,
//! run the congestion state machine (`tcp_fastretrans_alert`), then change the window
//! (`tcp_cong_control`: PRR in CWR/Recovery, growth otherwise) and re-arm the single
//! transmit timer (RTO, TLP or RACK reordering timer).

use std::collections::VecDeque;

use dcsim_types::{Duration, Ecn, Time};

use crate::cca::{
    AckSample, CaState, Cca, Congestion, CongestionControl, PacingInput, RateSample, StateChange,
    Window,
};
use crate::config::{EcnMode, LossDetection, Pacing, Recovery, Reuse, TcpConfig};
use crate::rtt::{backoff_of, ts_rtt, RttEstimator};
use crate::rwnd::initial_window;
use crate::segment::{Flags, Segment};

/// Whether, and when, the sender has a segment for the NIC.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Readiness {
    /// A segment can be taken now.
    Now,
    /// Pacing holds the next segment until then.
    At(Time),
    /// Nothing to send until an ACK or a timer changes the state.
    Blocked,
}

/// What a sender counted.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct SenderStats {
    /// Data segments sent: new data, retransmissions and probes.
    pub segments: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes: u64,
    /// Data segments sent again.
    pub retrans_segments: u64,
    /// Payload bytes sent again.
    pub retrans_bytes: u64,
    /// Retransmissions sent in fast recovery.
    pub fast_retransmits: u64,
    /// Fast recoveries entered.
    pub recoveries: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Tail loss probes sent (new data or a retransmission).
    pub tlp_probes: u64,
    /// Probes that repaired a loss (cwnd reduced, Linux `TCPLossProbeRecovery`).
    pub tlp_recoveries: u64,
    /// Windows restarted after an idle period longer than the RTO
    /// ([`TcpConfig::slow_start_after_idle`], Linux `tcp_cwnd_restart`).
    pub idle_restarts: u64,
    /// ECN-triggered reductions (entries into CWR).
    pub ecn_reductions: u64,
    /// RACK reordering-timer expiries.
    pub reo_timeouts: u64,
    /// SYN-ACKs sent (first and retransmissions).
    pub synacks: u64,
    /// Pure ACKs sent (to the client's request).
    pub pure_acks: u64,
    /// ACK segments received.
    pub acks_received: u64,
    /// Duplicate ACKs received (no SACK: same `ack`, no payload, data outstanding).
    pub dupacks: u64,
    /// ACKs that reported CE-marked bytes (accurate) or carried ECE (classic).
    pub ce_acks: u64,
    /// Timeouts F-RTO found spurious: an ACK covered data sent before the timeout and never
    /// retransmitted (Linux `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// Timeouts undone, by F-RTO or by a timestamp echo older than the first retransmission
    /// (Linux `TCPLossUndo`).
    pub loss_undos: u64,
    /// Fast recoveries undone at their end by a timestamp echo older than the first
    /// retransmission (Linux `TCPFullUndo`).
    pub recovery_undos: u64,
}

/// One sent segment in the retransmission queue (the scoreboard).
#[derive(Clone, Copy, Debug)]
struct SegRec {
    start: u64,
    end: u64,
    /// Time of the last transmission.
    sent: Time,
    sacked: bool,
    lost: bool,
    /// A retransmission is in flight (Linux `TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// Sent more than once (Linux `TCPCB_EVER_RETRANS`): no RTT sample (Karn).
    ever_retrans: bool,
    // Delivery-rate state at the last transmission (Linux `tcp_skb_cb.tx`).
    delivered: u64,
    delivered_time: Time,
    first_tx: Time,
    app_limited: bool,
}

impl SegRec {
    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// Connection state of the server side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Conn {
    Listen,
    SynRcvd,
    Established,
}

/// What the single transmit timer is armed for (Linux `icsk_pending`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Timer {
    Rto,
    Tlp,
    Reo,
}

/// RACK state (Linux `tp->rack`).
#[derive(Clone, Copy, Debug)]
struct Rack {
    xmit: Option<Time>,
    end: u64,
    rtt: Duration,
    advanced: bool,
}

/// What to transmit next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Choice {
    New,
    Rexmit(usize),
    ProbeNew,
    ProbeRexmit(usize),
}

/// The sending endpoint of one finite flow (the server when there is a handshake).
#[derive(Clone, Debug)]
pub struct Sender {
    cfg: TcpConfig,
    cca: Cca,
    w: Window,
    total: u64,
    conn: Conn,
    data_ready: bool,
    ca: CaState,
    snd_una: u64,
    snd_nxt: u64,
    /// The receiver's window (Linux `snd_wnd`; unlimited without [`TcpConfig::rwnd`]): no new
    /// data beyond `snd_una + snd_wnd`.
    snd_wnd: u64,
    /// The client's sequence number on the segment that last set the window (`snd_wl1`).
    snd_wl1: u64,
    /// The client's last timestamp, which our segments echo (RFC 7323 `TS.Recent`).
    ts_recent: Option<Time>,
    /// Linux `high_seq`: `snd_nxt` when the current reduction (or Loss) began (RFC 6582 `recover`).
    high_seq: u64,
    /// NewReno: `recover` is valid (a recovery or timeout happened).
    recover_valid: bool,
    sb: VecDeque<SegRec>,
    sacked_bytes: u64,
    /// Segments SACKed (Linux `sacked_out`, which RACK's reordering window compares with the
    /// duplicate threshold in segments: a short segment counts as one).
    sacked_segs: u64,
    lost_bytes: u64,
    /// Bytes retransmitted and in flight but no longer marked lost: an undo clears the lost
    /// marks and leaves retransmissions counted in flight (Linux `tcp_undo_cwnd_reduction`).
    /// Otherwise every retransmitted segment is a lost one.
    retrans_unlost: u64,
    /// Bytes ever marked lost (Linux `tp->lost`, which only grows): an ACK's newly lost bytes
    /// are its rise, even when the same ACK also acknowledges bytes marked lost before.
    lost_total: u64,
    /// When the last data segment left (Linux `lsndtime`), for `CA_EVENT_TX_START`.
    last_data_sent: Option<Time>,
    /// The `last_data_sent` whose idle period [`Sender::write`] last restarted the window
    /// for: a second write before any segment leaves (a busy NIC, several messages at once)
    /// finds the same idle period and must not halve the window again.
    restarted_after: Option<Time>,
    retrans_bytes: u64,
    /// No segment below this sequence number is lost and not yet retransmitted.
    rexmit_hint: u64,
    dupacks: u32,
    rtt: RttEstimator,
    backoff: u32,
    /// Timeouts since `snd_una` last advanced (Linux `icsk_retransmits`): a timeout in Loss
    /// after progress takes a new ssthresh.
    rto_retransmits: u32,
    timer: Option<(Time, Timer)>,
    rack: Rack,
    // Handshake (server side).
    synack_pending: bool,
    synack_sent_at: Option<Time>,
    synack_retries: u32,
    synack_timer: Option<Time>,
    req_rcvd: u64,
    /// Requests received whole and not yet taken by [`Sender::take_requests`] (connection
    /// reuse).
    requests_in: u32,
    ack_pending: bool,
    // Reduction (PRR) state.
    /// cwnd when the current reduction began (Linux `prior_cwnd`: PRR's and the undo's).
    prior_cwnd: u64,
    prr_delivered: u64,
    prr_out: u64,
    force_rexmit: bool,
    // Undo (Linux `tcp_init_undo`, `tcp_undo_cwnd_reduction`) and F-RTO (RFC 5682).
    /// `snd_una` when the current recovery or timeout began, while it may still be undone
    /// (Linux `undo_marker`).
    undo_marker: Option<u64>,
    /// The ssthresh an undo restores (Linux `prior_ssthresh`; 0: none, after an ECN echo).
    prior_ssthresh: u64,
    /// When the episode's first retransmission left (Linux `retrans_stamp`); a timestamp echo
    /// older than it shows an original transmission got through.
    retrans_stamp: Option<Time>,
    /// F-RTO runs for the current timeout (Linux `tp->frto`).
    frto: bool,
    /// F-RTO step 2b: segments of new data still sent before any retransmission, until the
    /// next ACK (Linux `REXMIT_NEW`: what `tcp_write_xmit` sends at that ACK).
    frto_new: u64,
    // TLP.
    tlp_fire: bool,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    // ECN.
    last_ace: u32,
    cwr_pending: bool,
    delivered_ce: u64,
    // Pacing.
    paced: bool,
    next_send: Time,
    // Delivery rate (Linux tcp_rate.c).
    delivered: u64,
    delivered_time: Time,
    first_tx_time: Time,
    app_limited: u64,
    // cwnd-limited tracking (Linux tcp_cwnd_validate).
    is_cwnd_limited: bool,
    max_out: u64,
    cwnd_usage_seq: u64,
    stats: SenderStats,
}

impl Sender {
    /// A sender with `bytes` of application data, created at `now`. With `cfg.handshake` it
    /// listens for the client's SYN; otherwise it may send at once.
    pub fn new(cfg: &TcpConfig, cca: impl Into<Cca>, bytes: u64, now: Time) -> Sender {
        let cca = cca.into();
        let mss = u64::from(cfg.mss);
        let paced = match cfg.pacing {
            Pacing::On => true,
            Pacing::Off => false,
            Pacing::Auto => cca.wants_pacing(),
        };
        let mut s = Sender {
            cfg: cfg.clone(),
            w: Window { cwnd: u64::from(cfg.iw) * mss, ssthresh: u64::MAX, mss, cwnd_cnt: 0 },
            cca,
            total: bytes,
            conn: if cfg.handshake { Conn::Listen } else { Conn::Established },
            data_ready: !cfg.handshake,
            ca: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            snd_wnd: if cfg.rwnd { initial_window(cfg) } else { u64::MAX },
            snd_wl1: 0,
            ts_recent: None,
            high_seq: 0,
            recover_valid: false,
            sb: VecDeque::new(),
            sacked_bytes: 0,
            sacked_segs: 0,
            lost_bytes: 0,
            retrans_unlost: 0,
            lost_total: 0,
            last_data_sent: None,
            restarted_after: None,
            retrans_bytes: 0,
            rexmit_hint: u64::MAX,
            dupacks: 0,
            rtt: RttEstimator::new(cfg),
            backoff: 0,
            rto_retransmits: 0,
            timer: None,
            rack: Rack { xmit: None, end: 0, rtt: Duration::ZERO, advanced: false },
            synack_pending: false,
            synack_sent_at: None,
            synack_retries: 0,
            synack_timer: None,
            req_rcvd: 0,
            requests_in: 0,
            ack_pending: false,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            force_rexmit: false,
            undo_marker: None,
            prior_ssthresh: 0,
            retrans_stamp: None,
            frto: false,
            frto_new: 0,
            tlp_fire: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            last_ace: 0,
            cwr_pending: false,
            delivered_ce: 0,
            paced,
            next_send: now,
            delivered: 0,
            delivered_time: now,
            first_tx_time: now,
            app_limited: 0,
            is_cwnd_limited: false,
            max_out: 0,
            cwnd_usage_seq: 0,
            stats: SenderStats::default(),
        };
        if !cfg.handshake {
            s.init_cca(now);
        }
        s
    }

    /// Linux `tcp_init_congestion_control`: when the connection is established.
    fn init_cca(&mut self, now: Time) {
        self.cca.on_init(&mut self.w, now, self.rtt.srtt(), self.rtt.min_rtt());
    }

    // ----- accessors -----

    /// Congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    /// Slow-start threshold, bytes (`u64::MAX` before the first reduction).
    pub fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    /// Smoothed RTT, if there was a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    /// Smallest RTT sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.rtt.min_rtt()
    }
    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> Duration {
        self.rtt.backed_off(self.backoff)
    }
    /// The RTT estimator.
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Whether the sender is in fast recovery or recovering from a timeout.
    pub fn in_recovery(&self) -> bool {
        matches!(self.ca, CaState::Recovery | CaState::Loss)
    }
    /// The congestion state.
    pub fn ca_state(&self) -> CaState {
        self.ca
    }
    /// The congestion controller.
    pub fn cca(&self) -> &Cca {
        &self.cca
    }
    /// The congestion controller, mutably (for controllers whose window is set from outside).
    pub fn cca_mut(&mut self) -> &mut Cca {
        &mut self.cca
    }
    /// Overrides cwnd (bytes, at least one MSS): for a controller driven from outside, such as
    /// HPCC's per-RTT window.
    pub fn set_cwnd(&mut self, cwnd: u64) {
        self.w.cwnd = cwnd.max(self.w.mss);
    }
    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }
    /// Lowest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next new byte to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// The receiver's window, bytes (`u64::MAX` without flow control).
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }
    /// Bytes in flight (RFC 6675 pipe, Linux `tcp_packets_in_flight` in bytes).
    pub fn in_flight(&self) -> u64 {
        self.pipe()
    }
    /// Bytes the flow sends in total.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }
    /// Appends `bytes` of application data to the flow, as they are: no check of the time the
    /// connection has been idle ([`Sender::write`] makes it).
    pub(crate) fn extend(&mut self, bytes: u64) {
        self.total = self.total.saturating_add(bytes);
    }
    /// The requests received whole since the last call (with connection reuse, each answered
    /// by [`Sender::write`]; without it, the handshake's one request is not counted).
    pub fn take_requests(&mut self) -> u32 {
        std::mem::take(&mut self.requests_in)
    }

    /// The application writes `bytes` more at `now` (a persistent connection's next message,
    /// a reused connection's next response). With
    /// [`TcpConfig::slow_start_after_idle`], Linux `tcp_slow_start_after_idle_check` comes
    /// first: a connection idle (nothing in flight) for longer than its RTO since it last sent
    /// data restarts from at most the initial window, halved once per RTO of idleness
    /// (`tcp_cwnd_restart`, with ssthresh at least ¾ of the old cwnd), once per idle period
    /// however many writes end it; a controller that runs the whole window (BBR, Prague, HPCC
    /// over TCP: in Linux those with their own `cong_control`) keeps it, as in Linux. Without
    /// it the window persists across idle periods (Linux with `tcp_slow_start_after_idle = 0`).
    pub fn write(&mut self, now: Time, bytes: u64) {
        if self.cfg.slow_start_after_idle
            && self.snd_nxt == self.snd_una
            && !self.cca.owns_window()
            && self.restarted_after != self.last_data_sent
        {
            if let Some(last) = self.last_data_sent {
                let idle = now.saturating_since(last);
                let rto = self.rto();
                if idle > rto {
                    self.cwnd_restart(idle, rto);
                    self.restarted_after = self.last_data_sent;
                }
            }
        }
        self.extend(bytes);
    }

    /// Linux `tcp_cwnd_restart` after `idle` with the RTO `rto` (`idle > rto`).
    fn cwnd_restart(&mut self, idle: Duration, rto: Duration) {
        let mss = self.w.mss;
        self.w.ssthresh = self.current_ssthresh();
        let restart = u64::from(self.cfg.iw).min(self.w.cwnd / mss);
        let mut cwnd = self.w.cwnd / mss;
        let mut left = idle;
        while left > rto && cwnd > restart {
            left -= rto;
            cwnd >>= 1;
        }
        self.w.cwnd = cwnd.max(restart).max(1) * mss;
        self.stats.idle_restarts += 1;
    }

    /// Whether every byte was acknowledged.
    pub fn is_complete(&self) -> bool {
        self.data_ready && self.snd_una >= self.total
    }
    /// Whether data segments are paced.
    pub fn is_paced(&self) -> bool {
        self.paced
    }
    /// The pacing rate in bytes per second (0 before an RTT sample: unpaced).
    pub fn pacing_rate(&self) -> u64 {
        let srtt = self.rtt.srtt();
        let in_flight = self.pipe();
        let p =
            PacingInput { srtt, in_flight, mtu: u64::from(self.cfg.mss + self.cfg.header_bytes) };
        if let Some(r) = self.cca.pacing_rate(&self.w, &p) {
            return r;
        }
        let Some(srtt) = srtt else { return 0 };
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 {
            self.cfg.pacing_ss_ratio
        } else {
            self.cfg.pacing_ca_ratio
        };
        let bytes = u128::from(self.w.cwnd.max(in_flight)) * u128::from(ratio);
        (bytes * 1_000_000_000_000 / 100 / u128::from(srtt.as_ps().max(1))) as u64
    }

    fn pipe(&self) -> u64 {
        (self.snd_nxt - self.snd_una) - self.sacked_bytes - self.lost_bytes + self.retrans_bytes
    }

    fn cwnd_limited(&self) -> bool {
        self.is_cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_out)
    }

    // ----- transmission -----

    /// The index of the first segment that is lost and not yet retransmitted.
    fn first_rexmit(&self) -> Option<usize> {
        if self.rexmit_hint >= self.snd_nxt {
            return None;
        }
        // A retransmitted segment is lost (`retrans` is set only on a lost segment, and
        // cleared with `lost` or before it) unless an undo cleared its mark
        // (`retrans_unlost`), so the bytes lost and not retransmitted are
        // `lost_bytes - (retrans_bytes - retrans_unlost)`. With none, no segment qualifies: the
        // scan would walk the whole window behind a repaired loss at every readiness query.
        if self.lost_bytes + self.retrans_unlost == self.retrans_bytes {
            debug_assert_eq!(self.scan_rexmit(), None, "a lost segment not counted");
            return None;
        }
        self.scan_rexmit()
    }

    /// [`Sender::first_rexmit`]'s search from the hint.
    fn scan_rexmit(&self) -> Option<usize> {
        let from = self.sb.partition_point(|r| r.end <= self.rexmit_hint);
        (from..self.sb.len()).find(|&i| {
            let r = &self.sb[i];
            r.lost && !r.retrans && !r.sacked
        })
    }

    /// Whether the next new segment fits the receiver's window (Linux `tcp_snd_wnd_test`).
    fn new_fits_window(&self) -> bool {
        let len = (self.total - self.snd_nxt).min(self.w.mss);
        self.snd_nxt + len <= self.snd_una.saturating_add(self.snd_wnd)
    }

    fn choose(&self) -> Option<Choice> {
        if !self.data_ready {
            return None;
        }
        if self.frto_new > 0 && self.snd_nxt < self.total && self.new_fits_window() {
            // F-RTO step 2b (Linux `REXMIT_NEW`): new data first; the retransmissions wait for
            // the next ACK, which tells whether the timeout was spurious.
            let len = (self.total - self.snd_nxt).min(self.w.mss);
            return (self.pipe() + len <= self.w.cwnd).then_some(Choice::New);
        }
        if self.tlp_fire {
            // Linux `tcp_send_loss_probe`: new data if the window takes it, else the last
            // segment again.
            if self.snd_nxt < self.total && self.new_fits_window() {
                return Some(Choice::ProbeNew);
            }
            if !self.sb.is_empty() {
                return Some(Choice::ProbeRexmit(self.sb.len() - 1));
            }
        }
        let pipe = self.pipe();
        if let Some(i) = self.first_rexmit() {
            let r = &self.sb[i];
            // Linux `tcp_retransmit_skb`: not beyond the window, unless it is the head.
            let in_window =
                r.start < self.snd_una.saturating_add(self.snd_wnd) || r.start == self.snd_una;
            if in_window && (self.force_rexmit || pipe + r.len() <= self.w.cwnd) {
                return Some(Choice::Rexmit(i));
            }
            return None;
        }
        if self.snd_nxt < self.total && self.new_fits_window() {
            let len = (self.total - self.snd_nxt).min(self.w.mss);
            let mut allowance = 0;
            if self.cfg.recovery == Recovery::NewReno
                && self.cfg.limited_transmit
                && self.ca <= CaState::Disorder
                && self.dupacks < self.cfg.dupthresh
            {
                allowance = u64::from(self.dupacks) * self.w.mss;
            }
            if pipe + len <= self.w.cwnd + allowance {
                return Some(Choice::New);
            }
        }
        None
    }

    /// Whether the sender has a segment now, later (pacing), or not until something happens.
    pub fn readiness(&self, now: Time) -> Readiness {
        if self.synack_pending {
            return Readiness::Now;
        }
        match self.choose() {
            Some(Choice::ProbeNew | Choice::ProbeRexmit(_)) => Readiness::Now,
            Some(_) if self.paced && self.next_send > now => Readiness::At(self.next_send),
            Some(_) => Readiness::Now,
            None if self.ack_pending => Readiness::Now,
            None => Readiness::Blocked,
        }
    }

    /// The next segment allowed now (one per call), or `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        let seg = self.next_segment(now)?;
        let tsecr = if self.cfg.timestamps { self.ts_recent } else { None };
        Some(Segment { tsval: now, tsecr, ..seg })
    }

    fn next_segment(&mut self, now: Time) -> Option<Segment> {
        if self.synack_pending {
            self.synack_pending = false;
            if self.synack_sent_at.is_none() {
                self.synack_sent_at = Some(now);
            }
            self.synack_timer =
                Some(now + backoff_of(self.cfg.initial_rto, self.synack_retries, self.cfg.max_rto));
            self.stats.synacks += 1;
            return Some(Segment {
                flags: Flags::SYN | Flags::ACK,
                ecn: Ecn::NotEct,
                ..Segment::default()
            });
        }
        let choice = self.choose();
        if self.data_ready
            && self.total - self.snd_nxt < self.w.mss
            && self.pipe() < self.w.cwnd
            && self.first_rexmit().is_none()
        {
            // Linux `tcp_rate_check_app_limited`: less than a segment left to send, cwnd not
            // full, and every lost segment retransmitted.
            self.app_limited = (self.delivered + self.pipe()).max(1);
        }
        let seg = match choice {
            Some(Choice::ProbeNew) => Some(self.send_new(now, true)),
            Some(Choice::ProbeRexmit(i)) => Some(self.send_rexmit(now, i, true)),
            Some(_) if self.paced && self.next_send > now => None,
            Some(Choice::New) => Some(self.send_new(now, false)),
            Some(Choice::Rexmit(i)) => Some(self.send_rexmit(now, i, false)),
            None => None,
        };
        if seg.is_some() {
            self.ack_pending = false;
            return seg;
        }
        if self.ack_pending {
            self.ack_pending = false;
            self.stats.pure_acks += 1;
            return Some(Segment {
                seq: self.snd_nxt,
                ack: self.req_rcvd,
                flags: Flags::ACK,
                ecn: Ecn::NotEct,
                ..Segment::default()
            });
        }
        None
    }

    fn data_segment(&mut self, start: u64, len: u64, ect: bool) -> Segment {
        let mut flags = Flags::ACK;
        if ect && self.cwr_pending && self.cfg.ecn == EcnMode::Classic {
            flags.insert(Flags::CWR);
            self.cwr_pending = false;
        }
        Segment {
            seq: start,
            len: len as u32,
            ack: self.req_rcvd,
            flags,
            ecn: if ect { self.cca.ect() } else { Ecn::NotEct },
            ..Segment::default()
        }
    }

    /// Bookkeeping common to every data transmission.
    fn on_sent(&mut self, now: Time, len: u64) {
        self.stats.segments += 1;
        self.stats.bytes += len;
        if matches!(self.ca, CaState::Cwr | CaState::Recovery) {
            self.prr_out += len;
        }
        if self.paced {
            // Linux `tcp_update_skb_after_send`: the first 10 data segments leave unpaced (as
            // sch_fq lets them), and a segment sent late by `credit` (the sender was held by
            // cwnd, not by the pacing rate) has its gap shortened by it, by at most half.
            let rate = self.pacing_rate();
            let prior = self.next_send;
            self.next_send = prior.max(now);
            if rate > 0 && self.stats.segments >= 10 {
                let gap = (u128::from(len) * 1_000_000_000_000 / u128::from(rate)) as u64;
                let credit = self.next_send.saturating_since(prior).as_ps();
                self.next_send += Duration::from_ps(gap - credit.min(gap / 2));
            }
        }
        // Linux tcp_cwnd_validate.
        let out = self.snd_nxt - self.snd_una;
        let limited = self.pipe() + self.w.mss > self.w.cwnd;
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.is_cwnd_limited && out > self.max_out)
        {
            self.is_cwnd_limited = limited;
            self.max_out = out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    fn stamp(&mut self, now: Time, rec: &mut SegRec) {
        if self.snd_nxt == self.snd_una {
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        rec.sent = now;
        rec.delivered = self.delivered;
        rec.delivered_time = self.delivered_time;
        rec.first_tx = self.first_tx_time;
        rec.app_limited = self.app_limited != 0;
    }

    /// Linux `tcp_event_data_sent`, before a data segment (new or retransmitted) leaves: with
    /// nothing in flight the controller learns how long the connection sent nothing
    /// (`CA_EVENT_TX_START`); the segment's time is the new `lsndtime`.
    fn data_sent(&mut self, now: Time) {
        if let Some(last) = self.last_data_sent.filter(|_| self.pipe() == 0) {
            let app_limited = self.app_limited != 0;
            self.cca.on_tx_start(&mut self.w, now.saturating_since(last), now, app_limited);
        }
        self.last_data_sent = Some(now);
    }

    fn send_new(&mut self, now: Time, probe: bool) -> Segment {
        self.data_sent(now);
        let start = self.snd_nxt;
        let len = (self.total - start).min(self.w.mss);
        let was_empty = self.sb.is_empty();
        let mut rec = SegRec {
            start,
            end: start + len,
            sent: now,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            delivered: 0,
            delivered_time: now,
            first_tx: now,
            app_limited: false,
        };
        self.stamp(now, &mut rec);
        self.sb.push_back(rec);
        self.snd_nxt += len;
        self.frto_new = self.frto_new.saturating_sub(1);
        let ect = self.cfg.ecn != EcnMode::Off;
        let seg = self.data_segment(start, len, ect);
        self.on_sent(now, len);
        // tcp_event_new_data_sent: start the RTO if nothing was out (or a probe was pending).
        if was_empty || matches!(self.timer, Some((_, Timer::Tlp)) | None) {
            self.rearm_rto(now);
        }
        if probe {
            self.after_probe(now, false);
        } else {
            self.schedule_tlp(now, false);
        }
        seg
    }

    fn send_rexmit(&mut self, now: Time, i: usize, probe: bool) -> Segment {
        self.data_sent(now);
        let mut rec = self.sb[i];
        let len = rec.len();
        // A tail-loss probe's copy is not a retransmission in flight (Linux sends it with
        // `__tcp_retransmit_skb`, which leaves `SACKED_RETRANS` and `retrans_out` alone): the
        // segment stays in flight once, and is resent if it is then marked lost.
        if !probe {
            if !rec.retrans {
                self.retrans_bytes += len;
            }
            rec.retrans = true;
            // Linux `tcp_retransmit_skb` (a probe goes through `__tcp_retransmit_skb`).
            self.retrans_stamp.get_or_insert(now);
        }
        rec.ever_retrans = true;
        self.stamp(now, &mut rec);
        self.sb[i] = rec;
        if rec.lost && self.rexmit_hint < rec.end {
            self.rexmit_hint = rec.end;
        }
        self.force_rexmit = false;
        self.stats.retrans_segments += 1;
        self.stats.retrans_bytes += len;
        if self.ca == CaState::Recovery {
            self.stats.fast_retransmits += 1;
        }
        let ect = self.cfg.ecn != EcnMode::Off && self.cca.needs_ecn();
        let seg = self.data_segment(rec.start, len, ect);
        self.on_sent(now, len);
        if probe {
            self.after_probe(now, true);
        } else if i == 0 && !matches!(self.timer, Some((_, Timer::Reo))) {
            // Retransmitting the head restarts the RTO.
            self.timer = Some((now + self.rto(), Timer::Rto));
        }
        seg
    }

    fn after_probe(&mut self, now: Time, retrans: bool) {
        self.tlp_fire = false;
        self.tlp_high_seq = Some(self.snd_nxt);
        self.tlp_retrans = retrans;
        self.stats.tlp_probes += 1;
        self.timer = None;
        self.rearm_rto(now);
    }

    // ----- timers -----

    /// Linux `tcp_rearm_rto`: from the head's last transmission while a probe or reordering
    /// timer is pending (or is the one being handled), else from now.
    fn rearm_rto(&mut self, now: Time) {
        let from_head = matches!(self.timer, Some((_, Timer::Tlp | Timer::Reo)));
        self.rearm_rto_from(now, from_head);
    }

    fn rearm_rto_from(&mut self, now: Time, from_head: bool) {
        let Some(head) = self.sb.front() else {
            self.timer = None;
            return;
        };
        let rto = self.rto();
        let at =
            if from_head { (head.sent + rto).max(now + Duration::from_ps(1)) } else { now + rto };
        self.timer = Some((at, Timer::Rto));
    }

    /// Linux `tcp_schedule_loss_probe`.
    fn schedule_tlp(&mut self, now: Time, advancing_rto: bool) -> bool {
        if !self.cfg.tlp
            || !self.cfg.sack
            || self.sb.is_empty()
            || !matches!(self.ca, CaState::Open | CaState::Cwr)
            || !self.data_ready
        {
            return false;
        }
        let mut pto = match self.rtt.srtt() {
            Some(srtt) => {
                srtt * 2 + if self.sb.len() == 1 { self.cfg.min_rto } else { self.cfg.timer_min }
            }
            None => self.cfg.initial_rto,
        };
        let rto_delta = if advancing_rto {
            Some(self.rto())
        } else {
            let head = self.sb.front().map_or(now, |h| h.sent);
            (head + self.rto()).as_ps().checked_sub(now.as_ps()).filter(|&d| d > 0).map(Duration)
        };
        if let Some(d) = rto_delta {
            pto = pto.min(d);
        }
        self.timer = Some((now + pto, Timer::Tlp));
        true
    }

    /// Linux `tcp_set_xmit_timer`.
    fn set_xmit_timer(&mut self, now: Time) {
        if !self.schedule_tlp(now, true) {
            self.rearm_rto(now);
        }
    }

    /// The earliest timer: RTO, tail loss probe, RACK reordering timer or SYN-ACK retransmission.
    pub fn deadline(&self) -> Option<Time> {
        match (self.timer.map(|(t, _)| t), self.synack_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the timers due at `now` (a late or spurious call is harmless).
    pub fn on_deadline(&mut self, now: Time) {
        if self.synack_timer.is_some_and(|t| t <= now) {
            self.synack_timer = None;
            if self.conn == Conn::SynRcvd {
                self.synack_retries += 1;
                self.synack_pending = true;
            }
        }
        let Some((at, kind)) = self.timer else { return };
        if at > now {
            return;
        }
        self.timer = None;
        if self.sb.is_empty() {
            return;
        }
        match kind {
            Timer::Rto => self.on_rto(now),
            Timer::Tlp => {
                if self.tlp_high_seq.is_some() {
                    // One probe at a time. Linux still has the probe timer pending here, so
                    // the RTO is re-armed from the head's transmission, not from now.
                    self.rearm_rto_from(now, true);
                } else {
                    self.tlp_fire = true;
                }
            }
            Timer::Reo => self.on_reo_timeout(now),
        }
    }

    /// Linux `tcp_retransmit_timer` and `tcp_enter_loss`.
    fn on_rto(&mut self, now: Time) {
        self.stats.timeouts += 1;
        let from = self.ca;
        let flight = self.snd_nxt - self.snd_una;
        // Linux `tcp_enter_loss`: a new ssthresh unless this window is already being reduced;
        // in Loss, also after progress since the last timeout (`icsk_retransmits` is 0). What
        // it replaces is kept for an undo (`tcp_init_undo`).
        if self.ca <= CaState::Disorder
            || self.high_seq <= self.snd_una
            || (self.ca == CaState::Loss && self.rto_retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.prior_cwnd = self.w.cwnd;
            self.w.ssthresh = self.cca.ssthresh(&self.w, Congestion::Timeout, flight);
            self.cca.on_loss_event(&mut self.w);
            self.undo_marker = Some(self.snd_una);
        }
        // F-RTO step 1 (RFC 5682 §3.1): for a timeout that does not interrupt a recovery, or
        // one that repeats on the same `snd_una` (§3.2).
        self.frto = self.cfg.frto && (from < CaState::Recovery || self.rto_retransmits > 0);
        self.frto_new = 0;
        // Linux `tcp_timeout_mark_lost`: every segment is marked lost, except, with RACK, those
        // (after the first) sent less than RACK's RTT ago, which may still arrive. Only where
        // RACK runs here (with SACK recovery), or nothing would mark them lost later.
        let rack =
            self.cfg.recovery == Recovery::Sack && self.cfg.loss_detection == LossDetection::Rack;
        for i in 0..self.sb.len() {
            if rack && i > 0 && now.saturating_since(self.sb[i].sent) < self.rack.rtt {
                continue;
            }
            self.mark_lost(i);
        }
        self.rexmit_hint = self.snd_una;
        self.w.cwnd = self.pipe() + self.w.mss;
        self.w.cwnd_cnt = 0;
        // As Linux, the state changes after cwnd is set.
        let change = self.state_change(from, CaState::Loss, now);
        self.cca.on_state(&mut self.w, &change);
        self.high_seq = self.snd_nxt;
        self.recover_valid = true;
        self.ca = CaState::Loss;
        self.dupacks = 0;
        self.tlp_fire = false;
        self.tlp_high_seq = None;
        self.force_rexmit = true;
        if self.cfg.ecn == EcnMode::Classic {
            self.cwr_pending = true;
        }
        self.backoff += 1;
        self.rto_retransmits += 1;
        self.timer = Some((now + self.rto(), Timer::Rto));
    }

    /// Linux `tcp_rack_reo_timeout`.
    fn on_reo_timeout(&mut self, now: Time) {
        self.stats.reo_timeouts += 1;
        // As Linux, losses found (a lost retransmission too) change what is in flight, and
        // recovery is entered from any state but Recovery. (From Loss rarely: the reordering
        // window is 0 there, so the timer is armed only when RACK's RTT comes from a segment
        // sent before the latest delivered one. The default `dcsim harm` table is the same
        // with recovery entered only from below Recovery, as it was.)
        // Linux runs the detection without arming the timer again (only `tcp_rack_mark_lost`, on
        // an ACK, arms it): segments not yet overdue are left to the RTO re-armed below.
        let before = self.pipe();
        self.rack_detect_loss(now);
        if self.pipe() != before && self.ca != CaState::Recovery {
            let flight = self.snd_nxt - self.snd_una;
            self.enter_recovery(now, flight, false);
            if !self.cca.owns_window() && self.cfg.prr {
                self.prr_reduction(self.w.mss, false, false);
            }
        }
        // `on_deadline` cleared the timer, and nothing above arms one. In Linux the reordering
        // timer is still the pending one here, so the RTO is re-armed from the head.
        self.rearm_rto_from(now, true);
    }

    // ----- loss detection -----

    /// Linux `tcp_mark_skb_lost`: a segment not yet lost becomes lost; a lost segment's
    /// retransmission is lost again and the segment may be sent once more. Both count as new
    /// losses (`tp->lost`).
    fn mark_lost(&mut self, i: usize) {
        let r = &mut self.sb[i];
        if r.sacked {
            return;
        }
        if !r.lost {
            r.lost = true;
            self.lost_bytes += r.len();
            self.lost_total += r.len();
            if r.retrans {
                // Its retransmission, in flight since an undo, is now the lost segment's.
                self.retrans_unlost -= r.len();
            }
        } else if r.retrans {
            r.retrans = false;
            self.retrans_bytes -= r.len();
            self.lost_total += r.len();
        }
        self.rexmit_hint = self.rexmit_hint.min(r.start);
    }

    /// Linux `tcp_rack_advance`.
    fn rack_advance(&mut self, r: &SegRec, now: Time) {
        let rtt = now.saturating_since(r.sent);
        if r.ever_retrans && self.rtt.min_rtt().is_none_or(|m| rtt < m) {
            // Possibly the ACK of the original transmission (Linux's `tcp_min_rtt` is infinite
            // before the first sample, so no retransmission advances RACK until then).
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        if self.rack.xmit.is_none_or(|x| r.sent > x || (r.sent == x && r.end > self.rack.end)) {
            self.rack.xmit = Some(r.sent);
            self.rack.end = r.end;
        }
    }

    /// Linux `tcp_rack_detect_loss`: marks lost; returns when the reordering timer should fire
    /// for the segments not yet overdue, if any (`tcp_rack_mark_lost` arms it).
    fn rack_detect_loss(&mut self, now: Time) -> Option<Time> {
        let rack_xmit = self.rack.xmit?;
        // Linux checks a recovery's or Loss's end before it detects losses: on the ACK that
        // ends one, the window is Open's.
        let ending =
            matches!(self.ca, CaState::Recovery | CaState::Loss) && self.snd_una >= self.high_seq;
        let reducing = self.ca >= CaState::Recovery && !ending;
        let reo_wnd = if reducing || self.sacked_segs >= u64::from(self.cfg.dupthresh) {
            Duration::ZERO
        } else {
            let m = self.rtt.min_rtt().map_or(Duration::ZERO, |m| Duration(m.as_ps() / 4));
            m.min(self.rtt.srtt().unwrap_or(m))
        };
        let mut timeout = 0i128;
        for i in 0..self.sb.len() {
            let r = self.sb[i];
            let before_rack = r.sent < rack_xmit || (r.sent == rack_xmit && r.end < self.rack.end);
            if !before_rack {
                if r.ever_retrans {
                    continue;
                }
                break;
            }
            if r.sacked || (r.lost && !r.retrans) {
                continue;
            }
            let remaining = (self.rack.rtt + reo_wnd).as_ps() as i128
                - now.saturating_since(r.sent).as_ps() as i128;
            if remaining <= 0 {
                self.mark_lost(i);
            } else {
                timeout = timeout.max(remaining);
            }
        }
        (timeout > 0).then(|| now + Duration(timeout as u64) + self.cfg.timer_min)
    }

    /// Loss detection again after an undo cleared the lost marks (step 6 of [`Sender::on_ack`]).
    fn redetect_losses(&mut self, now: Time, reo_armed: &mut bool, lost_retrans: &mut bool) {
        if self.cfg.recovery != Recovery::Sack {
            return;
        }
        match self.cfg.loss_detection {
            LossDetection::Rack => {
                self.rack.advanced = false;
                let prior_retrans = self.retrans_bytes;
                if let Some(at) = self.rack_detect_loss(now) {
                    self.timer = Some((at, Timer::Reo));
                    *reo_armed = true;
                }
                *lost_retrans |= self.retrans_bytes < prior_retrans;
            }
            LossDetection::DupThresh => self.dupthresh_detect_loss(),
        }
    }

    /// RFC 6675 `IsLost`: more than `(dupthresh − 1)·MSS` bytes SACKed above.
    fn dupthresh_detect_loss(&mut self) {
        if self.sacked_bytes == 0 {
            return;
        }
        let limit = u64::from(self.cfg.dupthresh - 1) * self.w.mss;
        let mut above = 0;
        for i in (0..self.sb.len()).rev() {
            let r = self.sb[i];
            if r.sacked {
                above += r.len();
            } else if above > limit && !r.lost {
                self.mark_lost(i);
            }
        }
    }

    // ----- reductions -----

    /// Linux `tcp_init_cwnd_reduction`.
    fn init_reduction(&mut self, cause: Congestion, flight: u64) {
        self.high_seq = self.snd_nxt;
        self.recover_valid = true;
        self.tlp_high_seq = None;
        self.w.cwnd_cnt = 0;
        self.prior_cwnd = self.w.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.w.ssthresh = self.cca.ssthresh(&self.w, cause, flight);
        if self.cfg.ecn == EcnMode::Classic {
            self.cwr_pending = true;
        }
    }

    fn set_state(&mut self, to: CaState, now: Time) {
        let from = self.ca;
        self.ca = to;
        let change = self.state_change(from, to, now);
        self.cca.on_state(&mut self.w, &change);
    }

    fn state_change(&self, from: CaState, to: CaState, now: Time) -> StateChange {
        StateChange {
            from,
            to,
            now,
            snd_nxt: self.snd_nxt,
            delivered: self.delivered,
            lost: self.lost_total,
        }
    }

    /// Linux `tcp_enter_recovery`: a recovery may be undone from here on (`tcp_init_undo`),
    /// its ssthresh only if no ECN echo came with it.
    fn enter_recovery(&mut self, now: Time, flight: u64, ece_ack: bool) {
        self.prior_ssthresh = 0;
        self.undo_marker = Some(self.snd_una);
        if !matches!(self.ca, CaState::Cwr | CaState::Recovery) {
            if !ece_ack {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_reduction(Congestion::Loss, flight);
        }
        self.stats.recoveries += 1;
        self.force_rexmit = true;
        self.set_state(CaState::Recovery, now);
        if !self.cca.owns_window() && !self.cfg.prr {
            self.w.cwnd = match self.cfg.recovery {
                // RFC 6582 step 3: ssthresh + 3·MSS ("inflated" by the segments that left).
                Recovery::NewReno => self.w.ssthresh + u64::from(self.cfg.dupthresh) * self.w.mss,
                // RFC 6675: cwnd = ssthresh.
                Recovery::Sack => self.w.ssthresh,
            };
        }
    }

    /// Linux `tcp_end_cwnd_reduction`.
    fn end_reduction(&mut self) {
        if !self.cca.owns_window() && self.w.ssthresh < u64::MAX {
            self.w.cwnd = self.w.ssthresh;
        }
    }

    /// Linux `tcp_current_ssthresh`: in a reduction its ssthresh, else at least ¾ of cwnd (in
    /// whole segments, as Linux counts them).
    fn current_ssthresh(&self) -> u64 {
        if matches!(self.ca, CaState::Cwr | CaState::Recovery) {
            return self.w.ssthresh;
        }
        let segs = self.w.cwnd / self.w.mss;
        self.w.ssthresh.max(((segs >> 1) + (segs >> 2)) * self.w.mss)
    }

    /// Linux `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.retrans_bytes > 0 || self.sb.front().is_some_and(|h| h.ever_retrans)
    }

    /// Linux `tcp_may_undo` without DSACK (its `undo_retrans` then never returns to 0): the
    /// reduction may still be undone and the ACK shows that an original transmission got
    /// through (`tcp_packet_delayed`): nothing was retransmitted, or the ACK echoes a
    /// timestamp from a millisecond before the first retransmission (Eifel, RFC 3522).
    fn may_undo(&self, seg: &Segment) -> bool {
        if self.undo_marker.is_none() {
            return false;
        }
        let Some(first) = self.retrans_stamp else { return true };
        let ms = Duration::from_ms(1).as_ps();
        self.cfg.timestamps && seg.tsecr.is_some_and(|e| e.as_ps() / ms < first.as_ps() / ms)
    }

    /// Linux `tcp_undo_cwnd_reduction`: the reduction was spurious. cwnd goes back (the
    /// controller's `undo_cwnd`) and ssthresh too, unless an ECN echo came during it; with
    /// `unmark_loss` no segment stays marked lost (retransmissions stay in flight).
    fn undo_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for r in &mut self.sb {
                if r.lost {
                    r.lost = false;
                    if r.retrans {
                        self.retrans_unlost += r.len();
                    }
                }
            }
            self.lost_bytes = 0;
            self.rexmit_hint = u64::MAX;
        }
        if self.prior_ssthresh > 0 {
            self.w.cwnd = self.cca.undo_cwnd(&self.w, self.prior_cwnd);
            if self.prior_ssthresh > self.w.ssthresh {
                self.w.ssthresh = self.prior_ssthresh;
                // `tcp_ecn_withdraw_cwr`.
                self.cwr_pending = false;
            }
        }
        self.undo_marker = None;
        // Linux has RACK look at the losses again.
        self.rack.advanced = true;
    }

    /// Linux `tcp_try_undo_loss`: a timeout undone, by F-RTO (`frto_undo`) or by the echo.
    /// With SACK (or F-RTO's verdict) the state returns to Open.
    fn try_undo_loss(&mut self, now: Time, seg: &Segment, frto_undo: bool) -> bool {
        if !(frto_undo || self.may_undo(seg)) {
            return false;
        }
        self.undo_reduction(true);
        self.stats.loss_undos += 1;
        if frto_undo {
            self.stats.spurious_rtos += 1;
        }
        self.rto_retransmits = 0;
        if frto_undo || self.cfg.recovery == Recovery::Sack {
            self.set_state(CaState::Open, now);
        }
        true
    }

    /// Linux `tcp_cwnd_reduction` (PRR-SSRB, RFC 6937), in bytes.
    fn prr_reduction(&mut self, acked: u64, newly_lost: bool, una_advanced: bool) {
        if acked == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += acked;
        let pipe = self.pipe();
        let ssthresh = self.w.ssthresh;
        let mut sndcnt: i128 = if ssthresh < pipe {
            let dividend = u128::from(ssthresh) * u128::from(self.prr_delivered)
                + u128::from(self.prior_cwnd)
                - 1;
            (dividend / u128::from(self.prior_cwnd)) as i128 - self.prr_out as i128
        } else {
            let delta = (ssthresh - pipe) as i128;
            let mut s = (self.prr_delivered as i128 - self.prr_out as i128).max(acked as i128);
            if una_advanced && !newly_lost {
                s += self.w.mss as i128;
            }
            s.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { self.w.mss as i128 });
        self.w.cwnd = pipe + sndcnt as u64;
    }

    // ----- receiving -----

    /// Handles a segment from the client: its SYN, its handshake ACK and request, or an ACK of
    /// data.
    pub fn on_segment(&mut self, now: Time, seg: &Segment) {
        // RFC 7323 §4.3: the client's segments all sit at or below the last byte we ACKed (its
        // request is one segment), so each newer timestamp is the one to echo; but a repeated
        // SYN is answered with the first one's (Linux `tcp_check_req` leaves `ts_recent`).
        let repeated_syn = seg.is_syn() && self.conn != Conn::Listen;
        if self.cfg.timestamps && !repeated_syn && self.ts_recent.is_none_or(|t| seg.tsval >= t) {
            self.ts_recent = Some(seg.tsval);
        }
        if seg.is_syn() {
            match self.conn {
                Conn::Listen => {
                    self.conn = Conn::SynRcvd;
                    self.synack_pending = true;
                    if self.cfg.rwnd {
                        // The SYN's window is unscaled.
                        self.snd_wnd = u64::from(seg.wnd);
                        self.snd_wl1 = seg.seq;
                    }
                }
                Conn::SynRcvd => {
                    // The client retransmitted its SYN: our SYN-ACK was lost.
                    self.synack_retries += 1;
                    self.synack_pending = true;
                }
                Conn::Established => {}
            }
            return;
        }
        if !seg.flags.contains(Flags::ACK) {
            return;
        }
        if self.conn == Conn::Listen {
            return;
        }
        if self.conn == Conn::SynRcvd {
            self.conn = Conn::Established;
            self.synack_timer = None;
            self.synack_pending = false;
            if self.synack_retries == 0 {
                if let Some(t) = self.synack_sent_at {
                    self.rtt.sample(now.saturating_since(t), 0, 0);
                }
            } else if let Some(ecr) = seg.tsecr.filter(|_| self.cfg.timestamps) {
                // Linux `tcp_synack_rtt_meas`: after a retransmitted SYN-ACK, Karn's rule leaves
                // the sample to the echo of the SYN-ACK the client got.
                self.rtt.sample(ts_rtt(now, ecr), 0, 0);
            }
            if self.synack_retries > 1 {
                // Linux tcp_init_transfer: a handshake with retransmissions starts at cwnd 1.
                self.w.cwnd = self.w.mss;
            }
            self.init_cca(now);
            if self.cfg.request_bytes == 0 {
                self.start_data(now);
            }
        }
        if seg.len > 0 {
            let req = u64::from(self.cfg.request_bytes);
            if seg.seq <= self.req_rcvd && seg.end() > self.req_rcvd {
                if self.cfg.reuse == Reuse::None {
                    self.req_rcvd = seg.end().min(req);
                } else {
                    // A reused connection's requests follow each other in the client's stream.
                    let before = self.req_rcvd / req;
                    self.req_rcvd = seg.end();
                    self.requests_in += (self.req_rcvd / req - before) as u32;
                }
            } else {
                // A retransmitted request: ACK it.
                self.ack_pending = true;
            }
            if self.req_rcvd >= req && !self.data_ready {
                self.start_data(now);
            } else if self.data_ready {
                self.ack_pending = true;
            }
        }
        if self.cfg.rwnd && (self.snd_una..=self.snd_nxt).contains(&seg.ack) {
            // Not from an old ACK, nor from one of data never sent (Linux `tcp_ack` leaves
            // both before the window's update).
            self.update_window(seg);
        }
        if self.data_ready {
            self.on_ack(now, seg);
        }
    }

    /// Linux `tcp_ack_update_window`: an ACK that advances `snd_una`, or comes from further in
    /// the client's stream, or offers more from the same place, sets the window.
    fn update_window(&mut self, seg: &Segment) {
        let wnd = u64::from(seg.wnd);
        if seg.ack > self.snd_una
            || seg.seq > self.snd_wl1
            || (seg.seq == self.snd_wl1 && wnd > self.snd_wnd)
        {
            self.snd_wnd = wnd;
            self.snd_wl1 = seg.seq;
        }
    }

    fn start_data(&mut self, now: Time) {
        self.data_ready = true;
        self.next_send = now;
        self.delivered_time = now;
        self.first_tx_time = now;
    }

    fn on_ack(&mut self, now: Time, seg: &Segment) {
        self.stats.acks_received += 1;
        let ack = seg.ack;
        if ack > self.snd_nxt {
            return;
        }
        let prior_una = self.snd_una;
        let prior_delivered = self.delivered;
        let prior_lost = self.lost_total;
        let prior_in_flight = self.pipe();
        // Linux `tcp_ack` leaves old ACKs (`old_ack`) and ACKs with nothing outstanding
        // (`no_queue`) before `tcp_cong_control`.
        let cong_control = ack >= self.snd_una && self.snd_nxt > self.snd_una;
        let old_ack = ack < self.snd_una;
        // F-RTO's new data goes out at the ACK that released it, not later.
        self.frto_new = 0;

        // ECN input.
        let mut ce = 0u64;
        if !old_ack {
            match self.cfg.ecn {
                EcnMode::Accurate => {
                    ce = u64::from(seg.ace.wrapping_sub(self.last_ace));
                    self.last_ace = seg.ace;
                }
                EcnMode::Classic | EcnMode::Off => {}
            }
        }
        let ece = self.cfg.ecn == EcnMode::Classic && seg.flags.contains(Flags::ECE);

        // Rate sample: the newest delivered segment.
        let mut rs_rec: Option<SegRec> = None;
        let mut first_ackt: Option<Time> = None;
        let mut last_ackt: Option<Time> = None;
        let mut retrans_acked = false;
        let mut first_sackt: Option<Time> = None;
        let mut last_sackt: Option<Time> = None;
        // Linux `FLAG_ORIG_SACK_ACKED`: data never retransmitted, up to `high_seq`, (S)ACKed.
        let mut orig_acked = false;
        // Linux `FLAG_DATA_SACKED`.
        let mut data_sacked = false;

        // 1. Cumulative ACK (tcp_clean_rtx_queue).
        if ack > self.snd_una {
            while let Some(&r) = self.sb.front() {
                if r.end > ack {
                    if r.start < ack {
                        // Partially ACKed head (not produced by our receiver; kept consistent).
                        let d = ack - r.start;
                        let f = self.sb.front_mut().expect("head exists");
                        f.start = ack;
                        if r.lost {
                            self.lost_bytes -= d;
                        }
                        if r.retrans {
                            self.retrans_bytes -= d;
                            if !r.lost {
                                self.retrans_unlost -= d;
                            }
                        }
                        if r.sacked {
                            self.sacked_bytes -= d;
                        } else {
                            self.delivered += d;
                        }
                    }
                    break;
                }
                self.sb.pop_front();
                let len = r.len();
                if r.lost {
                    self.lost_bytes -= len;
                }
                if r.retrans {
                    self.retrans_bytes -= len;
                    if !r.lost {
                        self.retrans_unlost -= len;
                    }
                }
                if r.ever_retrans {
                    retrans_acked = true;
                }
                if r.sacked {
                    self.sacked_bytes -= len;
                    self.sacked_segs -= 1;
                } else {
                    self.delivered += len;
                    if !r.ever_retrans {
                        last_ackt = Some(r.sent);
                        if first_ackt.is_none() {
                            first_ackt = Some(r.sent);
                        }
                        orig_acked |= r.end <= self.high_seq;
                    }
                    self.rack_advance(&r, now);
                    rate_pick(&mut rs_rec, &r);
                }
            }
            self.snd_una = ack;
            self.dupacks = 0;
        }
        let una_advanced = self.snd_una > prior_una;
        if una_advanced {
            // Linux `tcp_ack` zeroes `icsk_retransmits` on progress.
            self.rto_retransmits = 0;
        }

        // 2. SACK blocks (tcp_sacktag_write_queue).
        if self.cfg.sack && self.cfg.recovery == Recovery::Sack {
            for &(bs, be) in seg.sack.as_slice() {
                if be <= self.snd_una || bs >= be {
                    continue;
                }
                let mut i = self.sb.partition_point(|r| r.end <= bs);
                while i < self.sb.len() {
                    let r = self.sb[i];
                    if r.start >= be {
                        break;
                    }
                    if r.start >= bs && r.end <= be && !r.sacked {
                        let len = r.len();
                        let rm = &mut self.sb[i];
                        rm.sacked = true;
                        if rm.lost {
                            rm.lost = false;
                            self.lost_bytes -= len;
                        }
                        if rm.retrans {
                            rm.retrans = false;
                            self.retrans_bytes -= len;
                            if !r.lost {
                                self.retrans_unlost -= len;
                            }
                        }
                        data_sacked = true;
                        self.sacked_bytes += len;
                        self.sacked_segs += 1;
                        self.delivered += len;
                        if !r.ever_retrans {
                            last_sackt = Some(last_sackt.map_or(r.sent, |t| t.max(r.sent)));
                            first_sackt = Some(first_sackt.map_or(r.sent, |t| t.min(r.sent)));
                            orig_acked |= r.end <= self.high_seq;
                        }
                        self.rack_advance(&r, now);
                        rate_pick(&mut rs_rec, &r);
                    }
                    i += 1;
                }
            }
        }
        let acked = self.delivered - prior_delivered;
        if acked > 0 {
            self.delivered_time = now;
        }
        if ece {
            ce = acked;
        }
        self.delivered_ce += ce;
        if ce > 0 || ece {
            self.stats.ce_acks += 1;
        }
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }

        // Duplicate ACK (RFC 5681 definition; with SACK, only counted for the stats).
        let is_dup = !una_advanced && ack == self.snd_una && seg.len == 0 && !self.sb.is_empty();
        if is_dup {
            self.stats.dupacks += 1;
        }

        // 3. RTT (tcp_ack_update_rtt): Karn's rule — no sample if retransmitted data was ACKed.
        let seq_rtt =
            if retrans_acked { None } else { first_ackt.map(|t| now.saturating_since(t)) };
        let mut rtt_sample = seq_rtt.or(first_sackt.map(|t| now.saturating_since(t)));
        // The CCA's sample (Linux `ca_rtt_us`): the newest segment SACKed, else the newest
        // acknowledged cumulatively (never a retransmitted one).
        let mut ca_rtt = last_sackt
            .or(if retrans_acked { None } else { last_ackt })
            .map(|t| now.saturating_since(t));
        if rtt_sample.is_none() && una_advanced && self.cfg.timestamps {
            // RFC 7323 RTTM (Linux `tcp_rtt_tsopt_us`): an ACK of new data gives a sample from
            // its echoed timestamp even when Karn's rule forbids one from the sequence space,
            // so the RTO's backoff ends at the first ACK after a timeout.
            if let Some(ecr) = seg.tsecr {
                let r = ts_rtt(now, ecr);
                rtt_sample = Some(r);
                ca_rtt = Some(r);
            }
        }
        if let Some(r) = rtt_sample {
            self.rtt.sample_ack(r, ca_rtt.unwrap_or(r), self.snd_una, self.snd_nxt);
            self.backoff = 0;
        }

        // 4. Rate sample (tcp_rate_gen).
        if let Some(r) = rs_rec {
            // Linux `tcp_rate_skb_delivered`: the send phase of segments sent from now on
            // starts at the newest delivered segment's send time.
            self.first_tx_time = r.sent;
        }
        let rate = match rs_rec {
            Some(r) => RateSample {
                delivered: self.delivered - r.delivered,
                interval: r
                    .sent
                    .saturating_since(r.first_tx)
                    .max(now.saturating_since(r.delivered_time)),
                app_limited: r.app_limited,
            },
            None => RateSample::default(),
        };

        let mut sample = AckSample {
            now,
            acked,
            ce,
            una_advanced,
            rtt: ca_rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            rate,
            state: self.ca,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            in_flight: self.pipe(),
            cwnd_limited: self.cwnd_limited(),
            delivered: self.delivered,
            delivered_ce: self.delivered_ce,
            abc_limit: u64::from(self.cfg.abc) * self.w.mss,
            pacing_rate: self.pacing_rate(),
            paced: self.paced,
            prior_in_flight,
            lost: 0,
            lost_total: self.lost_total,
            delivered_time: self.delivered_time,
            next_send: if self.paced { self.next_send.max(now) } else { now },
        };
        if acked > 0 || ce > 0 || una_advanced {
            self.cca.on_ack(&mut self.w, &sample);
        }

        // 5. Tail loss probe ACK (tcp_process_tlp_ack).
        if let Some(h) = self.tlp_high_seq {
            if ack >= h {
                if !self.tlp_retrans {
                    self.tlp_high_seq = None;
                } else if ack > h {
                    // The probe repaired a loss: reduce once.
                    let flight = self.snd_nxt - self.snd_una;
                    self.init_reduction(Congestion::Loss, flight);
                    self.set_state(CaState::Cwr, now);
                    self.end_reduction();
                    self.set_state(CaState::Open, now);
                    self.stats.tlp_recoveries += 1;
                } else if !una_advanced && acked == 0 {
                    self.tlp_high_seq = None;
                }
            }
        }

        // 6. Loss detection.
        let mut reo_armed = false;
        // Linux `FLAG_LOST_RETRANS`: RACK found a retransmission lost.
        let mut lost_retrans = false;
        match self.cfg.recovery {
            Recovery::Sack => match self.cfg.loss_detection {
                LossDetection::Rack => {
                    if self.rack.advanced {
                        self.rack.advanced = false;
                        let prior_retrans = self.retrans_bytes;
                        if let Some(at) = self.rack_detect_loss(now) {
                            self.timer = Some((at, Timer::Reo));
                            reo_armed = true;
                        }
                        lost_retrans = self.retrans_bytes < prior_retrans;
                    }
                }
                LossDetection::DupThresh => self.dupthresh_detect_loss(),
            },
            Recovery::NewReno => {
                if is_dup {
                    self.dupacks += 1;
                    if self.ca <= CaState::Cwr
                        && self.dupacks >= self.cfg.dupthresh
                        && (!self.recover_valid || prior_una >= self.high_seq)
                    {
                        // RFC 6582 §3.2 step 2: fast retransmit of the head.
                        if !self.sb.is_empty() {
                            self.mark_lost(0);
                        }
                    }
                } else if una_advanced
                    && self.ca == CaState::Recovery
                    && self.snd_una < self.high_seq
                {
                    // Partial ACK: the next hole is lost too (RFC 6582 §3.2 step 5).
                    if self.sb.front().is_some_and(|r| !r.lost) {
                        self.mark_lost(0);
                        self.force_rexmit = true;
                    }
                }
            }
        }

        // 7. State machine (tcp_fastretrans_alert).
        let flight = self.snd_nxt - self.snd_una;
        let was_recovery = self.ca == CaState::Recovery;
        let ece_ack = ece || ce > 0;
        if self.ca == CaState::Open || (self.ca <= CaState::Cwr && !self.any_retrans_done()) {
            // The episode is over (Linux clears `retrans_stamp` here and in `tcp_try_to_open`).
            self.retrans_stamp = None;
        }
        if ece_ack {
            // Linux step A: the reduction an ECN echo asks for is not undone.
            self.prior_ssthresh = 0;
        }
        // F-RTO step 2b: this ACK releases new data.
        let mut frto_release = false;
        if self.ca == CaState::Loss {
            // Linux `tcp_process_loss`.
            let recovered = self.snd_una >= self.high_seq;
            let mut undone = una_advanced && self.try_undo_loss(now, seg, false);
            if !undone && self.frto {
                if orig_acked && self.try_undo_loss(now, seg, true) {
                    // Step 3b: data sent before the timeout arrived without a retransmission.
                    undone = true;
                } else if self.snd_nxt > self.high_seq {
                    if data_sacked || is_dup {
                        // Step 3a: the loss was real.
                        self.frto = false;
                    }
                } else if una_advanced && !recovered {
                    self.high_seq = self.snd_nxt;
                    if self.snd_nxt < self.total
                        && self.snd_una.saturating_add(self.snd_wnd) > self.snd_nxt
                    {
                        frto_release = true;
                    } else {
                        self.frto = false;
                    }
                }
            }
            if undone {
                // Linux runs RACK again on the unmarked scoreboard (`tcp_identify_packet_loss`).
                self.redetect_losses(now, &mut reo_armed, &mut lost_retrans);
            } else if recovered && !frto_release {
                // Linux `tcp_try_undo_recovery`: the Loss state ends, undone if the echo shows
                // the originals got through.
                if self.may_undo(seg) {
                    self.undo_reduction(false);
                    self.stats.loss_undos += 1;
                }
                self.set_state(CaState::Open, now);
            }
        } else if matches!(self.ca, CaState::Cwr | CaState::Recovery)
            && self.snd_una >= self.high_seq
        {
            let done = self.snd_una >= self.snd_nxt;
            match self.ca {
                CaState::Cwr if self.snd_una > self.high_seq || done => {
                    self.end_reduction();
                    self.set_state(CaState::Open, now);
                }
                CaState::Recovery => {
                    if self.may_undo(seg) {
                        // Linux `tcp_try_undo_recovery`: cwnd and ssthresh go back, and
                        // `tcp_end_cwnd_reduction` leaves them.
                        self.undo_reduction(false);
                        self.stats.recovery_undos += 1;
                    } else if self.cfg.recovery == Recovery::NewReno
                        && !self.cfg.prr
                        && !self.cca.owns_window()
                    {
                        // RFC 6582 step 6 (option 1).
                        self.w.cwnd = self.w.ssthresh.min(flight + self.w.mss);
                    } else {
                        self.end_reduction();
                    }
                    self.set_state(CaState::Open, now);
                }
                _ => {}
            }
        }
        let newly_lost = self.lost_total > prior_lost;
        // Linux `tcp_time_to_recover`: any segment marked lost (`lost_out`), retransmitted or
        // not, starts a recovery from below it; and from Loss, a lost retransmission does
        // (`FLAG_LOST_RETRANS`: ssthresh then comes from the Loss state's window, and PRR takes
        // over from slow start). NewReno recovery waits for a segment to retransmit.
        let may_recover = self.ca < CaState::Recovery || (self.ca == CaState::Loss && lost_retrans);
        if may_recover
            && self.lost_bytes > 0
            && (self.cfg.recovery == Recovery::Sack || self.first_rexmit().is_some())
        {
            self.enter_recovery(now, flight, ece_ack);
        } else if self.ca <= CaState::Disorder && (ce > 0 || ece) && self.cfg.ecn != EcnMode::Off {
            // tcp_enter_cwr: an ECN reduction is never undone.
            self.prior_ssthresh = 0;
            self.undo_marker = None;
            self.init_reduction(Congestion::Ecn, flight);
            self.stats.ecn_reductions += 1;
            self.set_state(CaState::Cwr, now);
            if !self.cca.owns_window() && !self.cfg.prr {
                self.w.cwnd = self.w.cwnd.min(self.w.ssthresh);
            }
        }
        if self.ca <= CaState::Disorder {
            let disorder = self.sacked_bytes > 0 || self.dupacks > 0;
            let to = if disorder { CaState::Disorder } else { CaState::Open };
            if to != self.ca {
                self.set_state(to, now);
            }
        }

        // 8. Window (tcp_cong_control).
        sample.state = self.ca;
        sample.in_flight = self.pipe();
        sample.cwnd_limited = self.cwnd_limited();
        sample.lost = self.lost_total - prior_lost;
        sample.lost_total = self.lost_total;
        if self.cca.owns_window() {
            if cong_control {
                self.cca.control(&mut self.w, &sample);
                if self.cca.take_app_limited() {
                    // Linux BBR in PROBE_RTT: `tp->app_limited = delivered + in flight` (or 1).
                    self.app_limited = (self.delivered + self.pipe()).max(1);
                }
            }
        } else if matches!(self.ca, CaState::Cwr | CaState::Recovery) {
            if self.cfg.prr {
                if cong_control {
                    self.prr_reduction(acked, newly_lost, una_advanced);
                }
            } else if self.ca == CaState::Recovery && self.cfg.recovery == Recovery::NewReno {
                if is_dup && was_recovery {
                    // RFC 6582 step 4: inflate by one MSS per further duplicate ACK.
                    self.w.cwnd += self.w.mss;
                } else if una_advanced {
                    // Partial ACK: deflate by the amount ACKed, add back one MSS.
                    let newly = self.snd_una - prior_una;
                    let back = if newly >= self.w.mss { self.w.mss } else { 0 };
                    self.w.cwnd = (self.w.cwnd.saturating_sub(newly) + back).max(self.w.mss);
                }
            }
        } else if una_advanced {
            self.cca.increase(&mut self.w, &sample);
        }
        self.w.cwnd = self.w.cwnd.max(self.w.mss);

        if frto_release {
            // Linux `tcp_xmit_recovery(REXMIT_NEW)`, after the window's update: what
            // `tcp_write_xmit` sends now (all cwnd allows; one segment when paced, the pacing
            // timer's later sends being retransmissions first). If nothing can go now, F-RTO
            // gives way to the usual recovery.
            let len = (self.total - self.snd_nxt).min(self.w.mss);
            if self.new_fits_window()
                && self.pipe() + len <= self.w.cwnd
                && (!self.paced || self.next_send <= now)
            {
                self.frto_new = if self.paced { 1 } else { u64::MAX };
            } else {
                self.frto = false;
            }
        }

        if self.first_rexmit().is_none() {
            self.force_rexmit = false;
        }

        // 9. Timers (FLAG_SET_XMIT_TIMER unless RACK armed its reordering timer): on progress,
        // and on a SACK whose sample is older than the head's last transmission (Linux
        // `tcp_clean_rtx_queue`: data sent before the head was resent still arrives, so the
        // head's retransmission is not overdue yet).
        let sack_rearm = !una_advanced
            && !old_ack
            && first_sackt.zip(self.sb.front()).is_some_and(|(t, head)| t < head.sent);
        if self.sb.is_empty() {
            self.timer = None;
        } else if (una_advanced || sack_rearm) && !reo_armed {
            self.set_xmit_timer(now);
        } else if self.timer.is_none() {
            self.rearm_rto(now);
        }
    }
}

/// Linux `tcp_rate_skb_delivered`: keep the most recently sent delivered segment.
fn rate_pick(best: &mut Option<SegRec>, r: &SegRec) {
    if best.is_none_or(|b| r.sent > b.sent || (r.sent == b.sent && r.end > b.end)) {
        *best = Some(*r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cca::cubic::{Cubic, CubicConfig};
    use crate::cca::CcaConfig;
    use crate::segment::SackBlocks;

    fn epoch(s: &Sender) -> Option<Time> {
        match s.cca() {
            Cca::Cubic(c) => c.epoch_start(),
            _ => unreachable!("a CUBIC sender"),
        }
    }

    /// A NewReno sender under `cfg` with a window of 20 segments, all sent at time 0.
    fn twenty_in_flight(cfg: &TcpConfig) -> Sender {
        let mss = u64::from(cfg.mss);
        let mut s =
            Sender::new(cfg, CcaConfig::NewReno(Default::default()).build(), 20 * mss, Time::ZERO);
        s.w.cwnd = 20 * mss;
        while s.poll_transmit(Time::ZERO).is_some_and(|x| x.len > 0) {}
        s
    }

    /// An ACK of everything below segment `a` that SACKs segments `[x, y)` of each block
    /// (segments of `mss` bytes).
    fn sack_ack(mss: u64, a: u64, blocks: &[(u64, u64)]) -> Segment {
        let blocks: Vec<(u64, u64)> = blocks.iter().map(|&(x, y)| (x * mss, y * mss)).collect();
        Segment {
            ack: a * mss,
            flags: Flags::ACK,
            sack: SackBlocks::from_slice(&blocks),
            ..Segment::default()
        }
    }

    /// An ACK that both acknowledges a segment marked lost and marks another lost has newly
    /// lost bytes (Linux counts `tp->lost`, which only grows), although the bytes marked lost
    /// are as many as before: PRR then grants no extra segment for the advancing `snd_una`.
    #[test]
    fn an_ack_that_repairs_one_loss_and_finds_another_has_new_losses() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let seg = |k: u64| k * mss;
        let mut s = twenty_in_flight(&cfg);
        let ack = |a: u64, blocks: &[(u64, u64)]| sack_ack(mss, a, blocks);
        // Segments 0 and 1 missing, 2..6 SACKed: both marked lost, recovery starts.
        let t1 = Time::from_ns(1_000_000);
        s.on_segment(t1, &ack(0, &[(2, 6)]));
        assert_eq!(s.ca, CaState::Recovery);
        assert_eq!(s.lost_bytes, seg(2));
        // Segment 0's retransmission goes out.
        assert!(s.poll_transmit(t1).is_some_and(|x| x.seq == 0 && x.len > 0));
        // Segment 0 acknowledged, 6..10 and 11..15 SACKed: segment 10 is newly lost.
        let (lost_before, total_before) = (s.lost_bytes, s.lost_total);
        s.on_segment(t1 + Duration::from_us(10), &ack(1, &[(2, 10), (11, 15)]));
        assert_eq!(s.lost_bytes, lost_before, "one lost segment repaired, one found");
        assert_eq!(s.lost_total, total_before + seg(1), "segment 10's loss is counted");
    }

    /// PRR's extra segment for an advancing `snd_una` (Linux `tcp_cwnd_reduction`: only with no
    /// new loss) is withheld when the ACK marks new losses, even when it also acknowledges as
    /// many bytes marked lost before (the net change of the bytes marked lost is then zero).
    #[test]
    fn prr_grants_no_extra_segment_on_an_ack_with_new_losses() {
        let cfg = TcpConfig { loss_detection: LossDetection::DupThresh, ..TcpConfig::default() };
        let mss = u64::from(cfg.mss);
        let seg = |k: u64| k * mss;
        let mut s = twenty_in_flight(&cfg);
        let ack = |a: u64, blocks: &[(u64, u64)]| sack_ack(mss, a, blocks);
        // 10..13 SACKed: 0..10 lost (three segments SACKed above), recovery with ssthresh 10.
        let t1 = Time::from_ns(1_000_000);
        s.on_segment(t1, &ack(0, &[(10, 13)]));
        assert_eq!((s.ca, s.w.ssthresh, s.lost_bytes), (CaState::Recovery, seg(10), seg(10)));
        for k in 0..3 {
            assert!(s.poll_transmit(t1).is_some_and(|x| x.seq == seg(k) && x.len > 0));
        }
        assert!(s.poll_transmit(t1).is_none_or(|x| x.len == 0), "PRR allows three");
        // 0..3 acknowledged (three lost segments), 16..19 SACKed: 13..16 newly lost.
        let (lost, total) = (s.lost_bytes, s.lost_total);
        s.on_segment(t1 + Duration::from_us(10), &ack(3, &[(10, 13), (16, 19)]));
        assert_eq!(s.lost_bytes, lost, "as many bytes marked lost as before");
        assert_eq!(s.lost_total, total + seg(3));
        // pipe 1; delivered 6 (prr_delivered 9, prr_out 3): sndcnt = min(9, max(6, 6)) = 6, not 7.
        assert_eq!(s.pipe(), seg(1));
        assert_eq!(s.w.cwnd, seg(1) + seg(6));
    }

    /// Linux `tcp_timeout_mark_lost`: on a timeout RACK leaves segments sent less than its RTT
    /// ago unmarked (they may still arrive), the first excepted; without RACK (or where it does
    /// not run: no SACK recovery) every segment is marked lost.
    #[test]
    fn a_timeout_with_rack_spares_recently_sent_segments() {
        // RACK's loss detection, SACK off: RACK never runs, so nothing is spared (nothing would
        // mark the spared segments lost later).
        let rack_without_sack = TcpConfig {
            recovery: Recovery::NewReno,
            sack: false,
            tlp: false,
            ..TcpConfig::default()
        };
        assert_eq!(rack_without_sack.loss_detection, LossDetection::Rack);
        for (cfg, rack) in [
            (TcpConfig::default(), true),
            (TcpConfig::dc_newreno(), false),
            (rack_without_sack, false),
        ] {
            let mss = u64::from(cfg.mss);
            let seg = |k: u64| k * mss;
            let mut s = Sender::new(
                &cfg,
                CcaConfig::NewReno(Default::default()).build(),
                seg(40),
                Time::ZERO,
            );
            while s.poll_transmit(Time::ZERO).is_some_and(|x| x.len > 0) {}
            let sent = s.snd_nxt;
            // Half the window acknowledged after 1 ms (RACK's RTT: 1 ms); new segments leave.
            let t1 = Time::from_ns(1_000_000);
            let half = sent / mss / 2;
            s.on_segment(t1, &Segment { ack: seg(half), flags: Flags::ACK, ..Segment::default() });
            while s.poll_transmit(t1).is_some_and(|x| x.len > 0) {}
            let recent = s.snd_nxt - sent;
            assert!(recent > 0);
            // The timeout 0.5 ms later: the segments of t = 0 are older than RACK's RTT.
            s.on_rto(t1 + Duration::from_us(500));
            let old = sent - seg(half);
            if rack {
                assert_eq!(s.lost_bytes, old, "the first and the other segments sent at 0");
                assert_eq!(s.pipe(), recent, "those sent at 1 ms stay in flight");
            } else {
                assert_eq!(s.lost_bytes, old + recent);
                assert_eq!(s.pipe(), 0);
            }
        }
    }

    /// A tail-loss probe's copy is not a retransmission in flight (Linux sends it without
    /// `SACKED_RETRANS`): the segment counts once in flight, and a timeout that then marks it
    /// lost resends it at once (with the copy counted as a retransmission it waited for the
    /// next, doubled timeout).
    #[test]
    fn a_probed_segment_is_resent_at_the_timeout() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s =
            Sender::new(&cfg, CcaConfig::NewReno(Default::default()).build(), mss, Time::ZERO);
        assert!(s.poll_transmit(Time::ZERO).is_some_and(|x| x.len > 0));
        s.tlp_fire = true;
        let t1 = Time::from_ns(2_000_000);
        assert!(s.poll_transmit(t1).is_some_and(|x| x.seq == 0 && x.len > 0), "the probe");
        assert_eq!(s.pipe(), mss, "the segment is in flight once");
        s.on_rto(Time::from_ns(300_000_000));
        let again = s.poll_transmit(Time::from_ns(300_000_000));
        assert!(again.is_some_and(|x| x.seq == 0 && x.len > 0), "resent at the timeout");
    }

    /// Sends what the window allows at `t`; returns the sequence numbers of the data segments.
    fn drain(s: &mut Sender, t: Time) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(x) = s.poll_transmit(t) {
            if x.len == 0 {
                break;
            }
            out.push(x.seq);
        }
        out
    }

    /// A NewReno sender of 40 segments with 20 sent at 0, in recovery from 10 ms (segment 0
    /// lost, 1..20 SACKed by 11 ms) until `snd_una` reaches 20, having sent segment 0 again and
    /// new data from segment 20 on.
    fn recovering_with_new_data(cfg: &TcpConfig) -> Sender {
        let mss = u64::from(cfg.mss);
        let cca = CcaConfig::NewReno(Default::default()).build();
        let mut s = Sender::new(cfg, cca, 40 * mss, Time::ZERO);
        s.w.cwnd = 20 * mss;
        assert_eq!(drain(&mut s, Time::ZERO).len(), 20);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        s.on_segment(ms(10), &sack_ack(mss, 0, &[(1, 5)]));
        assert_eq!((s.ca, s.high_seq), (CaState::Recovery, 20 * mss));
        let mut sent = drain(&mut s, ms(10));
        assert_eq!(sent[0], 0, "segment 0 resent first");
        s.on_segment(ms(11), &sack_ack(mss, 0, &[(1, 20)]));
        sent.extend(drain(&mut s, ms(11)));
        assert!((20..23).all(|k| sent.contains(&(k * mss))), "sent {sent:?}");
        assert_eq!(s.ca, CaState::Recovery);
        s
    }

    /// Linux `FLAG_LOST_RETRANS`: in Loss, RACK finding a retransmission lost starts a recovery
    /// (`tcp_fastretrans_alert` falls through to `tcp_enter_recovery`), with ssthresh from the
    /// Loss state's window and PRR in place of slow start; a retransmission delivered in order
    /// keeps the sender in Loss.
    #[test]
    fn a_lost_retransmission_in_loss_starts_a_recovery() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s = twenty_in_flight(&cfg);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        s.on_rto(ms(300));
        assert_eq!(s.ca, CaState::Loss);
        assert_eq!(drain(&mut s, ms(300)), vec![0], "cwnd: one segment");
        // Segment 0's retransmission is acknowledged (its echo gives the first RTT sample,
        // without which no retransmission would advance RACK): slow start, two
        // retransmissions.
        s.on_segment(ms(310), &Segment { tsecr: Some(ms(300)), ..sack_ack(mss, 1, &[]) });
        assert_eq!(s.ca, CaState::Loss);
        assert_eq!(drain(&mut s, ms(310)), vec![mss, 2 * mss]);
        // Segment 1's is lost, 2's SACKed: RACK marks 1's retransmission lost.
        let ssthresh_at_rto = s.w.ssthresh;
        s.on_segment(ms(320), &sack_ack(mss, 1, &[(2, 3)]));
        assert_eq!(s.ca, CaState::Recovery);
        assert_eq!(s.stats.recoveries, 1);
        assert_eq!(s.high_seq, s.snd_nxt);
        // NewReno's ssthresh: half the flight (19 segments) then, not the timeout's (20).
        assert_eq!((ssthresh_at_rto, s.w.ssthresh), (10 * mss, 19 * mss / 2));
    }

    /// Linux `tcp_time_to_recover` counts every segment marked lost (`lost_out`): when a
    /// recovery ends with a loss above its `high_seq` already retransmitted but not yet
    /// acknowledged, a new recovery (a new reduction) starts at once.
    #[test]
    fn a_repaired_loss_above_high_seq_starts_a_new_recovery_when_one_ends() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        let mut s = recovering_with_new_data(&cfg);
        // Segment 20 lost, 21 and 22 SACKed a little later: 20 is marked lost and resent.
        s.on_segment(ms(22), &sack_ack(mss, 0, &[(21, 23), (1, 20)]));
        assert!(s.lost_bytes >= 2 * mss);
        let resent = drain(&mut s, ms(22));
        assert!(resent.contains(&(20 * mss)), "20 resent: {resent:?}");
        assert_eq!(s.first_rexmit(), None, "every lost segment resent");
        // Segment 0's retransmission arrives: snd_una = 20 ends the recovery, and 20's loss,
        // repaired but not acknowledged, starts the next one.
        let recoveries = s.stats.recoveries;
        let ssthresh = s.w.ssthresh;
        s.on_segment(ms(23), &sack_ack(mss, 20, &[(21, 23)]));
        assert_eq!(s.ca, CaState::Recovery);
        assert_eq!(s.stats.recoveries, recoveries + 1);
        assert!(s.w.ssthresh < ssthresh, "a second reduction");
    }

    /// Linux `tcp_enter_loss`: a timeout in Loss takes a new ssthresh when `snd_una` advanced
    /// since the previous one (`icsk_retransmits` is 0), and keeps it otherwise.
    #[test]
    fn a_timeout_in_loss_after_progress_takes_a_new_ssthresh() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s = twenty_in_flight(&cfg);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        s.on_rto(ms(300));
        assert_eq!(s.w.ssthresh, 10 * mss, "half of 20 in flight");
        s.on_rto(ms(900));
        assert_eq!(s.w.ssthresh, 10 * mss, "no progress: the same window's reduction");
        drain(&mut s, ms(900));
        s.on_segment(ms(910), &sack_ack(mss, 1, &[]));
        assert_eq!(s.ca, CaState::Loss);
        s.on_rto(ms(2000));
        assert_eq!(s.w.ssthresh, 19 * mss / 2, "progress since: half of 19 in flight");
    }

    /// A tail-loss probe timer that expires while a probe is outstanding re-arms the RTO from
    /// the head's transmission, not from now (Linux still has the probe timer pending when
    /// `tcp_send_loss_probe` calls `tcp_rearm_rto`).
    #[test]
    fn a_probe_timer_with_a_probe_outstanding_rearms_the_rto_from_the_head() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s = twenty_in_flight(&cfg);
        let us = |k: u64| Time::from_ns(k * 1_000);
        // Half acknowledged after 1 ms; the probe timer is armed.
        s.on_segment(us(1_000), &sack_ack(mss, 10, &[]));
        let Some((pto, Timer::Tlp)) = s.timer else { panic!("a probe timer: {:?}", s.timer) };
        s.on_deadline(pto);
        let probe = drain(&mut s, pto);
        assert_eq!(probe, vec![19 * mss], "the last segment, probed");
        // One more segment acknowledged (below the probe's snd_nxt): a new probe timer.
        s.on_segment(pto + Duration::from_us(100), &sack_ack(mss, 11, &[]));
        let Some((pto2, Timer::Tlp)) = s.timer else { panic!("a probe timer: {:?}", s.timer) };
        s.on_deadline(pto2);
        let head_sent = s.sb[0].sent;
        assert_eq!(s.timer, Some(((head_sent + s.rto()).max(pto2), Timer::Rto)));
        assert!(head_sent + s.rto() > pto2 && head_sent + s.rto() < pto2 + s.rto());
    }

    /// RACK's reordering window is 0 once `dupthresh` segments are SACKed, counted as segments
    /// (Linux `sacked_out`): three SACKed segments, the short last one among them, mark the
    /// hole lost at once instead of after min_RTT/4.
    #[test]
    fn three_sacked_segments_with_a_short_one_close_the_reordering_window() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let cca = CcaConfig::NewReno(Default::default()).build();
        let mut s = Sender::new(&cfg, cca, 20 * mss - 500, Time::ZERO);
        s.w.cwnd = 20 * mss;
        assert_eq!(drain(&mut s, Time::ZERO).len(), 20);
        let at = Time::from_ns(1_000_000);
        let ack = Segment {
            ack: 16 * mss,
            flags: Flags::ACK,
            sack: SackBlocks::from_slice(&[(17 * mss, 20 * mss - 500)]),
            ..Segment::default()
        };
        s.on_segment(at, &ack);
        assert_eq!(s.lost_bytes, mss, "segment 16 marked lost");
        assert_eq!(s.ca, CaState::Recovery);
    }

    /// Prague reacts to a timeout only where Linux raises `CA_EVENT_LOSS` (inside
    /// `tcp_enter_loss`'s new-ssthresh branch): not on a timeout within a window already being
    /// reduced, as its CWR after CE marks.
    #[test]
    fn prague_reacts_to_a_timeout_only_with_a_new_reduction() {
        use crate::cca::prague::{Prague, PragueConfig};
        let cfg = TcpConfig { ecn: EcnMode::Accurate, ..TcpConfig::default() };
        let mss = u64::from(cfg.mss);
        let loss_cwnd = |s: &Sender| match s.cca() {
            Cca::Prague(p) => p.loss_cwnd_segments(),
            _ => unreachable!("a Prague sender"),
        };
        for cwr_first in [true, false] {
            let prague = Cca::Prague(Prague::new(PragueConfig::default()));
            let mut s = Sender::new(&cfg, prague, 40 * mss, Time::ZERO);
            s.w.cwnd = 20 * mss;
            assert_eq!(drain(&mut s, Time::ZERO).len(), 20);
            let t1 = Time::from_ns(1_000_000);
            if cwr_first {
                // Two segments acknowledged, one of them CE-marked: CWR until snd_nxt.
                let ack = Segment { ace: mss as u32, ..sack_ack(mss, 2, &[]) };
                s.on_segment(t1, &ack);
                assert_eq!(s.ca, CaState::Cwr);
            }
            s.on_rto(Time::from_ns(300_000_000));
            assert_eq!(s.ca, CaState::Loss);
            if cwr_first {
                assert_eq!(loss_cwnd(&s), 0, "no CA_EVENT_LOSS within the CWR window");
            } else {
                assert_eq!(loss_cwnd(&s), 20, "CA_EVENT_LOSS: prague_enter_loss");
            }
        }
    }

    /// Linux `tcp_rack_reo_timeout`: the segments found overdue are marked lost and recovery
    /// starts; the RTO is then re-armed from the head's transmission (the reordering timer is
    /// still the pending one), not from now.
    #[test]
    fn the_reordering_timeout_rearms_the_rto_from_the_head() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s = twenty_in_flight(&cfg);
        // One segment SACKed after 1 ms: the window is min_RTT/4, so a reordering timer.
        s.on_segment(Time::from_ns(1_000_000), &sack_ack(mss, 0, &[(19, 20)]));
        let Some((at, Timer::Reo)) = s.timer else { panic!("a reordering timer: {:?}", s.timer) };
        assert_eq!(s.lost_bytes, 0);
        s.on_deadline(at);
        assert_eq!(s.ca, CaState::Recovery);
        assert_eq!(s.lost_bytes, 19 * mss);
        assert_eq!(s.timer, Some((s.sb[0].sent + s.rto(), Timer::Rto)));
        assert!(s.sb[0].sent + s.rto() < at + s.rto());
    }

    /// A timestamp sample counts Linux's millisecond clock ticks between the echoed send time
    /// and now, at least one.
    #[test]
    fn timestamp_samples_are_whole_milliseconds() {
        let t = |us: u64| Time::from_ns(us * 1_000);
        assert_eq!(ts_rtt(t(10_900), t(200)), Duration::from_ms(10));
        assert_eq!(ts_rtt(t(11_000), t(999)), Duration::from_ms(11));
        assert_eq!(ts_rtt(t(500), t(100)), Duration::from_ms(1), "at least one tick");
    }

    /// Linux's congestion-control RTT sample (`ca_rtt_us`) is the newest SACKed segment's when
    /// the ACK SACKs any, not the newest cumulatively acknowledged one's: CUBIC's `delay_min`
    /// takes the SACK's 3 ms, not the cumulative part's 13 ms.
    #[test]
    fn the_ccas_rtt_sample_prefers_the_newest_sacked_segment() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let cubic = Cca::Cubic(Cubic::new(CubicConfig::default()));
        let mut s = Sender::new(&cfg, cubic, 40 * mss, Time::ZERO);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        assert_eq!(drain(&mut s, ms(0)).len(), 10);
        s.on_segment(ms(10), &sack_ack(mss, 5, &[]));
        assert_eq!(drain(&mut s, ms(10)), (10..20).map(|k| k * mss).collect::<Vec<_>>());
        // Segment 5 (sent at 0) acknowledged, 10 (sent at 10 ms) SACKed, at 13 ms.
        s.on_segment(ms(13), &sack_ack(mss, 6, &[(10, 11)]));
        let Cca::Cubic(c) = s.cca() else { unreachable!("a CUBIC sender") };
        assert_eq!(c.delay_min(), Some(Duration::from_ms(3)));
    }

    /// Linux `FLAG_SET_XMIT_TIMER` for an ACK that only SACKs: when the SACKed data was sent
    /// before the head's last (re)transmission, the RTO restarts from now (the head's
    /// retransmission is not overdue while older data still arrives).
    #[test]
    fn a_sack_of_data_older_than_the_heads_retransmission_restarts_the_rto() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s = twenty_in_flight(&cfg);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        // 1..5 SACKed: segment 0 lost, resent at 1 ms, which restarts the RTO.
        s.on_segment(ms(1), &sack_ack(mss, 0, &[(1, 5)]));
        assert_eq!(s.ca, CaState::Recovery);
        assert_eq!(drain(&mut s, ms(1))[0], 0);
        assert_eq!(s.timer, Some((ms(1) + s.rto(), Timer::Rto)));
        // 5..10, sent at 0, SACKed at 2 ms: the RTO restarts.
        s.on_segment(ms(2), &sack_ack(mss, 0, &[(1, 10)]));
        assert_eq!(s.timer, Some((ms(2) + s.rto(), Timer::Rto)));
    }

    /// Linux `tcp_synack_rtt_meas`: after a retransmitted SYN-ACK the server takes its first
    /// RTT sample from the echo of the SYN-ACK the client got (Karn's rule forbids the
    /// SYN-ACK's own timing); without timestamps it has none until its first data ACK.
    #[test]
    fn a_retransmitted_synack_gives_a_sample_from_the_echo() {
        for timestamps in [true, false] {
            let cfg = TcpConfig { handshake: true, timestamps, ..TcpConfig::default() };
            let cca = CcaConfig::NewReno(Default::default()).build();
            let mut s = Sender::new(&cfg, cca, 100_000, Time::ZERO);
            let ms = |k: u64| Time::from_ns(k * 1_000_000);
            s.on_segment(ms(0), &Segment { flags: Flags::SYN, ..Segment::default() });
            assert!(s.poll_transmit(ms(0)).is_some_and(|x| x.is_syn()));
            // The SYN-ACK is lost; its timer (1 s) resends it.
            s.on_deadline(ms(1000));
            let again = s.poll_transmit(ms(1000)).expect("the SYN-ACK again");
            assert_eq!(again.tsval, ms(1000));
            // The client's request echoes the second SYN-ACK's send time, 12 ms later.
            let req = Segment {
                len: cfg.request_bytes,
                flags: Flags::ACK,
                tsecr: timestamps.then_some(ms(1000)),
                ..Segment::default()
            };
            s.on_segment(ms(1012), &req);
            let srtt = s.srtt();
            assert_eq!(srtt, timestamps.then(|| Duration::from_ms(12)));
        }
    }

    /// On the ACK that ends a recovery, RACK already uses the Open state's reordering window
    /// (Linux checks the end of the recovery before it detects losses): a hole above
    /// `high_seq` with one segment SACKed after it arms the reordering timer instead of
    /// starting a new recovery at once.
    #[test]
    fn the_ack_that_ends_a_recovery_detects_losses_with_opens_window() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let ms = |k: u64| Time::from_ns(k * 1_000_000);
        let mut s = recovering_with_new_data(&cfg);
        // Segment 0's retransmission and 21 arrive, 20 not yet: the recovery ends, and 20 is
        // not marked lost within min_RTT/4 of 21's delivery.
        s.on_segment(ms(21), &sack_ack(mss, 20, &[(21, 22)]));
        assert_eq!(s.ca, CaState::Disorder);
        assert_eq!(s.lost_bytes, 0);
        assert!(matches!(s.timer, Some((_, Timer::Reo))), "{:?}", s.timer);
    }

    /// `CA_EVENT_TX_START`: the first segment after an idle period (nothing in flight) shifts
    /// CUBIC's epoch by the time since the last data segment, never past now; a segment sent
    /// while others are in flight does not.
    #[test]
    fn an_idle_connection_shifts_cubics_epoch_when_it_sends_again() {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let cubic = Cca::Cubic(Cubic::new(CubicConfig::default()));
        let mut s = Sender::new(&cfg, cubic, 0, Time::ZERO);
        s.extend(10 * mss);
        while s.poll_transmit(Time::ZERO).is_some_and(|seg| seg.len > 0) {}
        // Out of slow start, so that the ACK starts CUBIC's epoch.
        s.w.ssthresh = 2 * mss;
        let at = Time::from_ns(1_000_000);
        let ack = Segment { ack: 10 * mss, flags: Flags::ACK, ..Segment::default() };
        s.on_segment(at, &ack);
        assert_eq!(s.in_flight(), 0);
        assert_eq!(epoch(&s), Some(at));
        // 50 ms later the application writes again: idle since the last send at 0.
        let later = Time::from_ns(51_000_000);
        s.extend(2 * mss);
        assert!(s.poll_transmit(later).is_some_and(|seg| seg.len > 0));
        // 1 ms + 51 ms, capped at now.
        assert_eq!(epoch(&s), Some(later));
        // The second segment leaves with the first in flight: no shift.
        let e = epoch(&s);
        assert!(s.poll_transmit(later + Duration::from_us(1)).is_some_and(|seg| seg.len > 0));
        assert_eq!(epoch(&s), e);
    }

    /// A sender under `cca` that sent four segments at 0, all ACKed at 1 ms (nothing in
    /// flight since), then given the window and ssthresh `cwnd` and `ssthresh` (in segments).
    fn idle_sender(cca: CcaConfig, cwnd: u64, ssthresh: u64) -> Sender {
        let cfg = TcpConfig::default();
        let mss = u64::from(cfg.mss);
        let mut s = Sender::new(&cfg, cca.build(), 0, Time::ZERO);
        s.extend(4 * mss);
        while s.poll_transmit(Time::ZERO).is_some_and(|seg| seg.len > 0) {}
        let ack = Segment { ack: 4 * mss, flags: Flags::ACK, ..Segment::default() };
        s.on_segment(Time::from_ns(1_000_000), &ack);
        assert_eq!(s.in_flight(), 0);
        s.w.cwnd = cwnd * mss;
        s.w.ssthresh = ssthresh * mss;
        s
    }

    /// `tcp_cwnd_restart` on a write after 1.5 RTOs of idleness: cwnd halved once, ssthresh
    /// `tcp_current_ssthresh`'s max(ssthresh, ¾ cwnd) in whole segments as Linux counts them
    /// (10 segments give 7, not 7.5); a second write before anything leaves finds the same
    /// idle period and changes nothing; controllers that run their own window keep it.
    #[test]
    fn a_write_after_idling_restarts_the_window_once_with_linuxs_ssthresh() {
        let mss = u64::from(TcpConfig::default().mss);
        let newreno = || CcaConfig::NewReno(Default::default());
        let mut s = idle_sender(newreno(), 40, 20);
        let rto = s.rto();
        let at = Time::ZERO + Duration::from_ps(rto.as_ps() * 3 / 2);
        s.write(at, 100 * mss);
        assert_eq!((s.cwnd() / mss, s.ssthresh() / mss), (20, 30));
        assert_eq!(s.stats().idle_restarts, 1);
        s.write(at + Duration::from_us(1), 100 * mss);
        assert_eq!((s.cwnd() / mss, s.stats().idle_restarts), (20, 1), "one restart per idleness");

        let mut s = idle_sender(newreno(), 10, 5);
        s.write(Time::ZERO + Duration::from_ps(rto.as_ps() * 3 / 2), 100 * mss);
        assert_eq!((s.cwnd(), s.ssthresh()), (10 * mss, 7 * mss), "restart window min(IW, cwnd)");

        // After the next idleness the window restarts again.
        while s.poll_transmit(at).is_some_and(|seg| seg.len > 0) {}
        let acked = s.snd_nxt();
        let ack = Segment { ack: acked, flags: Flags::ACK, ..Segment::default() };
        s.on_segment(at + Duration::from_ms(1), &ack);
        s.w.cwnd = 40 * mss;
        let later = at + Duration::from_ps(s.rto().as_ps() * 5 / 2);
        s.write(later, 10 * mss);
        assert_eq!((s.cwnd() / mss, s.stats().idle_restarts), (10, 2));

        for cca in [CcaConfig::Bbr(Default::default()), CcaConfig::Prague(Default::default())] {
            let mut s = idle_sender(cca.clone(), 40, 20);
            s.write(Time::ZERO + Duration::from_ms(10_000), 100 * mss);
            assert_eq!((s.cwnd() / mss, s.stats().idle_restarts), (40, 0), "{cca:?}");
        }
        let cfg = TcpConfig { slow_start_after_idle: false, ..TcpConfig::default() };
        let mut s = idle_sender(newreno(), 40, 20);
        s.cfg = cfg;
        s.write(Time::ZERO + Duration::from_ms(10_000), 100 * mss);
        assert_eq!((s.cwnd() / mss, s.stats().idle_restarts), (40, 0), "turned off");
    }

    /// Linux `tcp_ack_update_window`: the window starts as the receiver's SYN would give it; an
    /// ACK that advances `snd_una` sets it (smaller too), a duplicate only when it offers more,
    /// and an old ACK (or one of data never sent) never. No new segment goes beyond
    /// `snd_una + snd_wnd`, whatever cwnd.
    #[test]
    fn the_window_follows_acks_and_bounds_new_data() {
        let cfg = TcpConfig::linux();
        let m = u64::from(cfg.mss);
        let mut s =
            Sender::new(&cfg, CcaConfig::NewReno(Default::default()).build(), 1 << 30, Time::ZERO);
        assert_eq!(s.snd_wnd(), 64_240);
        s.w.cwnd = 100 * m;
        assert_eq!(drain(&mut s, Time::ZERO).len(), 44, "64 240 B: 44 whole segments");
        let t = Time::ZERO + Duration::from_ms(10);
        let ack = |a: u64, wnd: u64| Segment {
            ack: a * m,
            flags: Flags::ACK,
            wnd: wnd as u32,
            ..Segment::default()
        };
        s.on_segment(t, &ack(2, 30 * m));
        assert_eq!(s.snd_wnd(), 30 * m, "an advancing ACK sets a smaller window");
        assert!(drain(&mut s, t).is_empty(), "44 sent, 2 + 30 allowed");
        s.on_segment(t, &ack(2, 20 * m));
        assert_eq!(s.snd_wnd(), 30 * m, "a duplicate offering less is ignored");
        s.on_segment(t, &ack(2, 50 * m));
        assert_eq!(s.snd_wnd(), 50 * m, "a duplicate offering more is taken");
        assert_eq!(drain(&mut s, t), (44..52).map(|k| k * m).collect::<Vec<_>>());
        s.on_segment(t, &ack(1, 500 * m));
        assert_eq!(s.snd_wnd(), 50 * m, "an old ACK is ignored");
        s.on_segment(t, &ack(1_000, 500 * m));
        assert_eq!(s.snd_wnd(), 50 * m, "so is an ACK of data never sent");
        // With a handshake, the SYN's (unscaled) window is the first. A repeated SYN is
        // answered with the first one's timestamp (Linux `tcp_check_req`).
        let hs = TcpConfig { handshake: true, ..cfg.clone() };
        let mut s = Sender::new(&hs, CcaConfig::NewReno(Default::default()).build(), 1, Time::ZERO);
        let syn = |ms: u64| Segment {
            flags: Flags::SYN,
            wnd: 20_000,
            tsval: Time::ZERO + Duration::from_ms(ms),
            ..Segment::default()
        };
        s.on_segment(Time::ZERO, &syn(0));
        assert_eq!(s.snd_wnd(), 20_000);
        assert_eq!(s.poll_transmit(Time::ZERO).and_then(|a| a.tsecr), Some(Time::ZERO));
        let t = Time::ZERO + Duration::from_ms(1000);
        s.on_segment(t, &syn(1000));
        assert_eq!(s.poll_transmit(t).and_then(|a| a.tsecr), Some(Time::ZERO));
        // Without flow control the window is unlimited.
        let free = TcpConfig { rwnd: false, ..cfg };
        let s = Sender::new(&free, CcaConfig::NewReno(Default::default()).build(), 1, Time::ZERO);
        assert_eq!(s.snd_wnd(), u64::MAX);
    }

    /// Linux `tcp_send_loss_probe`: when the window leaves no room for new data, the probe
    /// sends the last segment again.
    #[test]
    fn a_probe_resends_the_last_segment_when_the_window_is_full() {
        let cfg = TcpConfig::linux();
        let m = u64::from(cfg.mss);
        let mut s =
            Sender::new(&cfg, CcaConfig::NewReno(Default::default()).build(), 1 << 30, Time::ZERO);
        s.w.cwnd = 12 * m;
        assert_eq!(drain(&mut s, Time::ZERO).len(), 12);
        let t = Time::ZERO + Duration::from_ms(10);
        // Two segments ACKed; the window ends where the data sent ends.
        let a =
            Segment { ack: 2 * m, flags: Flags::ACK, wnd: (10 * m) as u32, ..Segment::default() };
        s.on_segment(t, &a);
        assert!(drain(&mut s, t).is_empty());
        let probe_at = s.deadline().expect("a probe timer");
        s.on_deadline(probe_at);
        let p = s.poll_transmit(probe_at).expect("the probe");
        assert_eq!((p.seq, p.len), (11 * m, cfg.mss), "the last segment, not new data");
        assert_eq!(s.stats().tlp_probes, 1);
    }

    /// RFC 7323: the sender's segments echo the newest timestamp the client sent, which lets
    /// the receiver time its own RTT (and the SYN-ACK echo the SYN); without timestamps, none.
    #[test]
    fn data_echoes_the_clients_latest_timestamp() {
        for timestamps in [true, false] {
            let cfg = TcpConfig { timestamps, ..TcpConfig::linux() };
            let m = u64::from(cfg.mss);
            let mut s = Sender::new(
                &cfg,
                CcaConfig::NewReno(Default::default()).build(),
                1 << 20,
                Time::ZERO,
            );
            let ms = |x: u64| Time::ZERO + Duration::from_ms(x);
            assert_eq!(s.poll_transmit(ms(0)).map(|d| d.tsecr), Some(None), "nothing to echo yet");
            while s.poll_transmit(ms(0)).is_some() {}
            let ack = Segment { ack: 2 * m, flags: Flags::ACK, tsval: ms(7), ..Segment::default() };
            s.on_segment(ms(10), &ack);
            let d = s.poll_transmit(ms(10)).expect("new data");
            assert_eq!(d.tsecr, timestamps.then(|| ms(7)));
        }
    }

    /// Linux `tcp_retransmit_skb`: a lost segment that starts beyond the window is not resent
    /// (the head always may be). A peer that shrinks its window (ours never does) leaves the
    /// third and fourth holes waiting.
    #[test]
    fn a_retransmission_beyond_the_window_waits() {
        let cfg = TcpConfig { loss_detection: LossDetection::DupThresh, ..TcpConfig::linux() };
        let m = u64::from(cfg.mss);
        let mut s = twenty_in_flight(&cfg);
        let t = Time::ZERO + Duration::from_ms(10);
        let mut a = sack_ack(m, 1, &[(5, 20)]);
        a.wnd = (2 * m) as u32;
        s.on_segment(t, &a);
        assert_eq!(s.snd_wnd(), 2 * m);
        s.force_rexmit = true;
        assert_eq!(drain(&mut s, t), [m, 2 * m], "segments 3 and 4 start at or past 3 MSS");
    }

    /// A NewReno sender of 40 segments under `cfg`, 20 of them sent at 0 (cwnd 20), then a
    /// timeout at 300 ms whose retransmission of the head leaves at once.
    fn timed_out_with_data_left(cfg: &TcpConfig) -> Sender {
        let mss = u64::from(cfg.mss);
        let mut s =
            Sender::new(cfg, CcaConfig::NewReno(Default::default()).build(), 40 * mss, Time::ZERO);
        s.w.cwnd = 20 * mss;
        assert_eq!(drain(&mut s, Time::ZERO).len(), 20);
        s.on_rto(ms_time(300));
        assert_eq!(drain(&mut s, ms_time(300)), [0], "the head, at the timeout");
        assert_eq!((s.ca, s.w.ssthresh), (CaState::Loss, 10 * mss));
        s
    }

    fn ms_time(k: u64) -> Time {
        Time::ZERO + Duration::from_ms(k)
    }

    /// An ACK of everything below segment `a`, SACKing `blocks`, echoing `tsecr`.
    fn echo_ack(mss: u64, a: u64, blocks: &[(u64, u64)], tsecr: Time) -> Segment {
        Segment { tsecr: Some(tsecr), ..sack_ack(mss, a, blocks) }
    }

    /// F-RTO (RFC 5682 §3.1 steps 2b and 3a, Linux `tcp_process_loss`): after a genuine
    /// timeout, the first ACK that advances `snd_una` releases new data, not the next lost
    /// segment; a SACK of that new data then shows the loss was real, and the retransmissions
    /// go on. Without F-RTO the same ACK releases retransmissions at once.
    #[test]
    fn frto_sends_new_data_before_retransmitting_more_after_a_timeout() {
        for frto in [true, false] {
            let cfg = TcpConfig { frto, ..TcpConfig::linux() };
            let mss = u64::from(cfg.mss);
            let mut s = timed_out_with_data_left(&cfg);
            // The head's retransmission arrives; 1..20 were lost. The echo is the
            // retransmission's, so the timestamps show nothing spurious.
            s.on_segment(ms_time(310), &echo_ack(mss, 1, &[], ms_time(300)));
            assert_eq!(s.ca, CaState::Loss);
            let sent = drain(&mut s, ms_time(310));
            if frto {
                assert_eq!(sent, [20 * mss, 21 * mss], "step 2b: new data, as cwnd (2) allows");
                // Their SACK, with the hole at 1 still open: step 3a.
                s.on_segment(ms_time(320), &echo_ack(mss, 1, &[(20, 22)], ms_time(310)));
                assert!(!s.frto, "the loss was real");
                assert_eq!(drain(&mut s, ms_time(320)), [mss, 2 * mss], "retransmissions resume");
            } else {
                assert_eq!(sent, [mss, 2 * mss], "the lost segments first");
            }
            assert_eq!(s.w.ssthresh, 10 * mss, "nothing undone");
            assert_eq!((s.stats.spurious_rtos, s.stats.loss_undos), (0, 0));
        }
    }

    /// F-RTO step 3b: an ACK of data sent before the timeout and never retransmitted shows the
    /// timeout was spurious. Without timestamps only F-RTO can tell: the reduction is undone
    /// (cwnd and ssthresh back, no segment left marked lost, state Open) and new data follows,
    /// not the retransmissions the timeout had queued.
    #[test]
    fn frto_undoes_a_spurious_timeout() {
        for frto in [true, false] {
            let cfg = TcpConfig { frto, timestamps: false, ..TcpConfig::linux() };
            let mss = u64::from(cfg.mss);
            let mut s = timed_out_with_data_left(&cfg);
            // The first five originals were only delayed.
            s.on_segment(ms_time(310), &sack_ack(mss, 5, &[]));
            if frto {
                assert_eq!(s.ca, CaState::Open);
                assert_eq!((s.stats.spurious_rtos, s.stats.loss_undos), (1, 1));
                assert_eq!(s.w.ssthresh, u64::MAX, "the ssthresh before the timeout");
                assert!(s.w.cwnd >= 20 * mss, "cwnd back to {} ≥ 20 segments", s.w.cwnd / mss);
                assert_eq!(s.lost_bytes, 0);
                assert_eq!(drain(&mut s, ms_time(310))[0], 20 * mss, "new data, no retransmission");
            } else {
                assert_eq!((s.ca, s.w.ssthresh), (CaState::Loss, 10 * mss));
                assert_eq!(drain(&mut s, ms_time(310))[0], 5 * mss, "the next segment again");
            }
        }
    }

    /// Eifel (RFC 3522, Linux `tcp_packet_delayed`): with timestamps, an ACK that echoes a
    /// timestamp from before the first retransmission shows that an original got through, and
    /// the timeout is undone without F-RTO. The same ACK echoing the retransmission is not.
    #[test]
    fn an_echo_older_than_the_retransmission_undoes_a_timeout() {
        for (echo, undone) in [(ms_time(0), true), (ms_time(300), false)] {
            let cfg = TcpConfig { frto: false, ..TcpConfig::linux() };
            let mss = u64::from(cfg.mss);
            let mut s = timed_out_with_data_left(&cfg);
            s.on_segment(ms_time(310), &echo_ack(mss, 5, &[], echo));
            assert_eq!(s.stats.loss_undos, u64::from(undone));
            assert_eq!(s.stats.spurious_rtos, 0, "not F-RTO's verdict");
            if undone {
                assert_eq!((s.ca, s.w.ssthresh), (CaState::Open, u64::MAX));
            } else {
                assert_eq!((s.ca, s.w.ssthresh), (CaState::Loss, 10 * mss));
            }
        }
    }

    /// An ECN echo during the episode forbids restoring ssthresh and cwnd (Linux step A of
    /// `tcp_fastretrans_alert` zeroes `prior_ssthresh`); the lost marks are still cleared, and
    /// the echo then starts an ECN reduction from the undone state (`tcp_try_to_open`).
    #[test]
    fn an_ecn_echo_keeps_a_spurious_timeouts_reduction() {
        let cfg = TcpConfig { timestamps: false, ecn: EcnMode::Classic, ..TcpConfig::linux() };
        let mss = u64::from(cfg.mss);
        let mut s = timed_out_with_data_left(&cfg);
        let mut a = sack_ack(mss, 5, &[]);
        a.flags.insert(Flags::ECE);
        s.on_segment(ms_time(310), &a);
        assert_eq!(s.stats.spurious_rtos, 1);
        assert_eq!(s.ca, CaState::Cwr);
        assert!(s.w.ssthresh <= 10 * mss, "no ssthresh restored: {}", s.w.ssthresh);
        assert_eq!(s.prior_cwnd, mss, "the ECN reduction starts from the timeout's cwnd");
        assert_eq!(s.lost_bytes, 0);
    }

    /// A fast recovery whose retransmission was not needed (the original head was only
    /// delayed) is undone when it ends, if the ACK that ends it echoes a timestamp from before
    /// the retransmission (Linux `tcp_try_undo_recovery`); otherwise cwnd falls to ssthresh.
    #[test]
    fn a_recovery_the_echo_shows_spurious_is_undone_at_its_end() {
        for (echo, undone) in [(ms_time(0), true), (ms_time(10), false)] {
            let cfg = TcpConfig::linux();
            let mss = u64::from(cfg.mss);
            let mut s = twenty_in_flight(&cfg);
            // 1..4 SACKed 10 ms after they left: RACK marks the head lost at once.
            s.on_segment(ms_time(10), &echo_ack(mss, 0, &[(1, 4)], ms_time(0)));
            assert_eq!(s.ca, CaState::Recovery);
            assert_eq!(drain(&mut s, ms_time(10))[0], 0, "the fast retransmission");
            s.on_segment(ms_time(12), &echo_ack(mss, 20, &[], echo));
            assert_eq!(s.ca, CaState::Open);
            assert_eq!(s.stats.recovery_undos, u64::from(undone));
            if undone {
                // cwnd back to 20 segments, then slow start (ssthresh is infinite again) on the
                // 17 segments this ACK delivered.
                assert_eq!((s.w.cwnd, s.w.ssthresh), (37 * mss, u64::MAX));
            } else {
                // cwnd to ssthresh, then one segment of additive increase for the 17 delivered.
                assert_eq!((s.w.cwnd, s.w.ssthresh), (11 * mss, 10 * mss));
            }
        }
    }

    /// A retransmission whose lost mark an undo cleared stays in flight; marked lost again,
    /// it is the lost segment's retransmission, not a segment to resend (Linux
    /// `tcp_mark_skb_lost`), and the scoreboard's counts stay consistent.
    #[test]
    fn an_undone_retransmission_marked_lost_again_is_not_resent() {
        let cfg = TcpConfig { timestamps: false, ..TcpConfig::linux() };
        let mss = u64::from(cfg.mss);
        let mut s = timed_out_with_data_left(&cfg);
        // As an undo leaves it: the head's retransmission in flight with no lost mark; of the
        // rest, only segment 1 still lost (as many bytes lost as retransmitted).
        for r in s.sb.iter_mut().filter(|r| r.start != mss) {
            r.lost = false;
        }
        s.lost_bytes = mss;
        s.retrans_unlost += mss;
        s.undo_marker = None;
        assert_eq!(s.first_rexmit(), Some(1));
        s.mark_lost(0);
        assert_eq!(s.retrans_unlost, 0);
        assert_eq!(s.first_rexmit(), Some(1), "the head's retransmission is still out");
        s.mark_lost(0);
        assert_eq!(s.first_rexmit(), Some(0), "lost again: resent");
    }

    /// Linux `tcp_update_skb_after_send`: the first 10 data segments leave unpaced; from the
    /// tenth on each adds its gap at the pacing rate, and a segment sent late (held by cwnd,
    /// not by pacing) has its gap shortened by the delay, by at most half.
    #[test]
    fn pacing_spares_the_first_ten_segments_and_credits_a_late_send() {
        let cfg = TcpConfig::linux();
        let mss = u64::from(cfg.mss);
        let bbr = CcaConfig::Bbr(crate::cca::BbrConfig).build();
        let mut s = Sender::new(&cfg, bbr, 100 * mss, Time::ZERO);
        s.w.cwnd = 12 * mss;
        let rate = s.pacing_rate();
        assert!(rate > 0, "BBR paces from the start");
        let gap =
            Duration::from_ps((u128::from(mss) * 1_000_000_000_000 / u128::from(rate)) as u64);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 10, "ten segments at once");
        assert_eq!(s.readiness(Time::ZERO), Readiness::At(Time::ZERO + gap));
        assert_eq!(drain(&mut s, Time::ZERO + gap).len(), 1);
        assert_eq!(s.next_send, Time::ZERO + gap + gap);
        // cwnd full: the twelfth segment leaves late, after an ACK, by a quarter of a gap.
        let late = Time::ZERO + gap + gap + Duration(gap.as_ps() / 4);
        s.w.cwnd = 13 * mss;
        assert_eq!(drain(&mut s, late).len(), 1);
        assert_eq!(s.next_send, late + gap - Duration(gap.as_ps() / 4));
    }

    /// Linux `tcp_ack_update_rtt`: the estimator takes the oldest newly acknowledged segment's
    /// RTT, the minimum the newest's (`ca_rtt_us`).
    #[test]
    fn the_minimum_rtt_comes_from_the_newest_segment_acknowledged() {
        let cfg = TcpConfig { timestamps: false, ..TcpConfig::linux() };
        let mss = u64::from(cfg.mss);
        let mut s =
            Sender::new(&cfg, CcaConfig::NewReno(Default::default()).build(), 10 * mss, Time::ZERO);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 10);
        // Segment 3 as if sent 5 ms later than the others; the first four ACKed at 15 ms.
        s.sb[3].sent = ms_time(5);
        s.on_segment(ms_time(15), &sack_ack(mss, 4, &[]));
        assert_eq!(s.min_rtt(), Some(Duration::from_ms(10)), "segment 3's");
        assert_eq!(s.srtt(), Some(Duration::from_ms(15)), "segment 0's");
    }

    /// Linux `tcp_ack` reaches `tcp_cong_control` only with data outstanding: an ACK after
    /// everything was acknowledged (a window update) does not run the controller, so an idle
    /// BBR flow whose minimum RTT expired does not enter PROBE_RTT on it.
    #[test]
    fn an_ack_with_nothing_outstanding_does_not_run_the_controller() {
        let cfg = TcpConfig::linux();
        let mss = u64::from(cfg.mss);
        let bbr = CcaConfig::Bbr(crate::cca::BbrConfig).build();
        let mut s = Sender::new(&cfg, bbr, 2 * mss, Time::ZERO);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 2);
        s.on_segment(ms_time(10), &echo_ack(mss, 2, &[], Time::ZERO));
        let cwnd = s.cwnd();
        let update = Segment { wnd: 1 << 20, ..echo_ack(mss, 2, &[], Time::ZERO) };
        s.on_segment(ms_time(11_000), &update);
        let Cca::Bbr(b) = s.cca() else { unreachable!() };
        assert_ne!(b.mode(), crate::cca::BbrMode::ProbeRtt);
        assert_eq!(s.cwnd(), cwnd);
    }
}
