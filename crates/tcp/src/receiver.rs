//! The receiving endpoint: reassembly, cumulative and selective ACKs, delayed and quick ACKs,
//! ECN echo, and (with a handshake) the client's SYN and request.

use std::collections::BTreeMap;

use dcsim_types::{Duration, Ecn, Time};

use crate::config::{EcnMode, Reuse, TcpConfig};
use crate::rtt::{ts_rtt, RttEstimator};
use crate::rwnd::{initial_window, RcvWindow};
use crate::segment::{Flags, SackBlocks, Segment};

/// What a receiver counted.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ReceiverStats {
    /// Data segments received (duplicates included).
    pub segments: u64,
    /// Payload bytes received (duplicates included).
    pub bytes: u64,
    /// Payload bytes received that had already been received.
    pub dup_bytes: u64,
    /// Segments entirely made of already-received bytes.
    pub dup_segments: u64,
    /// Segments that arrived above a hole.
    pub ooo_segments: u64,
    /// ACKs sent (handshake ACKs included, SYNs excluded).
    pub acks: u64,
    /// ACKs sent because the delayed-ACK timer fired.
    pub delayed_acks: u64,
    /// Payload bytes that arrived CE-marked.
    pub ce_bytes: u64,
    /// SYNs sent (first and retransmissions).
    pub syns: u64,
    /// Requests sent (first and retransmissions).
    pub requests: u64,
}

/// The client side of the handshake.
#[derive(Clone, Debug)]
struct Client {
    syn_pending: bool,
    syn_sent_at: Option<Time>,
    syn_retries: u32,
    syn_timer: Option<Time>,
    established: bool,
    req_pending: bool,
    req_acked: bool,
    req_retries: u32,
    req_timer: Option<Time>,
    /// One past the last request byte issued: `request_bytes` for the handshake's request, plus
    /// as much for each request on a reused connection ([`Receiver::request`]).
    req_end: u64,
    /// When the request in flight was sent (an RTT sample when its first transmission is
    /// acknowledged, on a reused connection).
    req_sent_at: Option<Time>,
    rtt: RttEstimator,
}

/// The receiving endpoint of one flow (and, with a handshake, its client).
#[derive(Clone, Debug)]
pub struct Receiver {
    cfg: TcpConfig,
    total: u64,
    rcv_nxt: u64,
    /// `rcv_nxt` when the last ACK was sent (Linux `rcv_wup`).
    rcv_wup: u64,
    /// Out-of-order intervals above `rcv_nxt`: start → end, disjoint and not adjacent.
    ofo: BTreeMap<u64, u64>,
    /// The bytes those intervals hold.
    ofo_bytes: u64,
    /// The receive window (with [`TcpConfig::rwnd`]).
    win: Option<RcvWindow>,
    /// A byte inside each recently changed SACK block, most recent first (Linux keeps four).
    sack_recent: [u64; 4],
    sack_n: usize,
    quick: u32,
    /// When in-order data last arrived (Linux `lrcvtime`); `None` before the first.
    last_in_order: Option<Time>,
    /// The timestamp to echo (RFC 7323 `TS.Recent`, with timestamps on).
    ts_recent: Option<Time>,
    ack_now: bool,
    /// An ACK is owed for received data (Linux `inet_csk_ack_scheduled`).
    ack_scheduled: bool,
    delack_at: Option<Time>,
    delack_fired: bool,
    ce_bytes: u32,
    demand_cwr: bool,
    last_ce: bool,
    ecn_seen: bool,
    client: Option<Client>,
    stats: ReceiverStats,
}

impl Receiver {
    /// A receiver expecting `bytes` bytes. With `cfg.handshake` it waits for
    /// [`Receiver::connect`]; otherwise data may arrive at once.
    pub fn new(cfg: &TcpConfig, bytes: u64) -> Receiver {
        Receiver {
            cfg: cfg.clone(),
            total: bytes,
            rcv_nxt: 0,
            rcv_wup: 0,
            ofo: BTreeMap::new(),
            ofo_bytes: 0,
            win: cfg.rwnd.then(|| RcvWindow::new(cfg)),
            sack_recent: [0; 4],
            sack_n: 0,
            quick: 0,
            last_in_order: None,
            ts_recent: None,
            ack_now: false,
            ack_scheduled: false,
            delack_at: None,
            delack_fired: false,
            ce_bytes: 0,
            demand_cwr: false,
            last_ce: false,
            ecn_seen: false,
            client: cfg.handshake.then(|| Client {
                syn_pending: false,
                syn_sent_at: None,
                syn_retries: 0,
                syn_timer: None,
                established: false,
                req_pending: false,
                req_acked: false,
                req_retries: 0,
                req_timer: None,
                req_end: if cfg.reuse == Reuse::None { u64::from(cfg.request_bytes) } else { 0 },
                req_sent_at: None,
                rtt: RttEstimator::new(cfg),
            }),
            stats: ReceiverStats::default(),
        }
    }

    /// Opens the connection (handshake on): the next [`Receiver::poll_transmit`] returns a SYN.
    /// Does nothing without a handshake or when already called.
    pub fn connect(&mut self, _now: Time) {
        if let Some(c) = &mut self.client {
            if c.syn_sent_at.is_none() && !c.syn_pending {
                c.syn_pending = true;
            }
        }
    }

    /// In-order bytes received so far.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }
    /// Asks for an ACK at once if received data is unacknowledged: the application consumed a
    /// whole message, and its reply (or next message) would carry the ACK.
    pub fn ack_message_end(&mut self) {
        if self.rcv_nxt > self.rcv_wup {
            self.ack_now = true;
        }
    }
    /// Whether every byte arrived.
    pub fn is_complete(&self) -> bool {
        self.rcv_nxt >= self.total
    }
    /// Counters.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }
    /// Whether the handshake completed (always `true` without one).
    pub fn is_established(&self) -> bool {
        self.client.as_ref().is_none_or(|c| c.established)
    }
    /// The receive window's state, with flow control on: `(window_clamp, rcv_ssthresh,
    /// rcvbuf)` in bytes (Linux's names; see [`crate::rwnd`]).
    pub fn window_state(&self) -> Option<(u64, u64, u64)> {
        self.win.as_ref().map(|w| (w.clamp(), w.ssthresh(), w.rcvbuf()))
    }
    /// The receiver's own RTT estimate (Linux `rcv_rtt_est`), which paces autotuning.
    pub fn rcv_rtt(&self) -> Option<Duration> {
        self.win.as_ref().and_then(RcvWindow::rtt)
    }
    /// Out-of-order intervals held above the cumulative ACK point.
    pub fn ofo_intervals(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ofo.iter().map(|(&a, &b)| (a, b))
    }

    /// The client's sequence number for pure ACKs (after its requests).
    fn own_seq(&self) -> u64 {
        self.client.as_ref().map_or(0, |c| c.req_end)
    }

    /// Sends the next request on an established connection that reuses its flows
    /// ([`Reuse::GoHttp`]): `request_bytes` more in the client's stream, answered by
    /// `response_bytes` more from the server, which the receiver then expects. The request
    /// carries the ACK of everything received so far.
    ///
    /// # Panics
    /// Without connection reuse, before the handshake completed, or while the previous request
    /// is unacknowledged (one request at a time, as HTTP/1.1 without pipelining).
    pub fn request(&mut self, now: Time, response_bytes: u64) {
        assert!(self.cfg.reuse != Reuse::None, "requests need connection reuse");
        let c = self.client.as_mut().expect("a client");
        assert!(c.established && c.req_acked, "one request at a time, once established");
        c.req_end += u64::from(self.cfg.request_bytes);
        c.req_acked = false;
        c.req_pending = true;
        c.req_retries = 0;
        c.req_timer = None;
        c.req_sent_at = Some(now);
        self.total = self.total.saturating_add(response_bytes);
    }

    /// Bytes the receiver expects in all (with connection reuse, the responses so far).
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Linux `tcp_incr_quickack` / `tcp_enter_quickack_mode`: with flow control, at most half
    /// the window in segments.
    fn enter_quickack(&mut self, n: u32) {
        let n = self.win.as_ref().map_or(n, |w| w.quickack_bound(n));
        self.quick = self.quick.max(n);
    }

    /// Handles a segment from the sender: data, or a SYN-ACK.
    pub fn on_segment(&mut self, now: Time, seg: &Segment) {
        // RFC 7323 §4.3 (Linux `tcp_replace_ts_recent`): remember the send time of an
        // acceptable segment that covers the last byte ACKed, so that the next ACK echoes the
        // segment that moved the window (a hole's retransmission), not a later one. A segment
        // wholly below it (a duplicate) is not acceptable (Linux `tcp_sequence` drops it before
        // the update). The first SYN-ACK's is the first; a repeated one is only answered.
        let first_synack = seg.is_syn() && self.client.as_ref().is_some_and(|c| !c.established);
        let covers = !seg.is_syn() && seg.seq <= self.rcv_wup && seg.end() >= self.rcv_wup;
        if self.cfg.timestamps
            && (first_synack || covers)
            && self.ts_recent.is_none_or(|t| seg.tsval >= t)
        {
            self.ts_recent = Some(seg.tsval);
        }
        if let Some(c) = &mut self.client {
            if seg.flags.contains(Flags::ACK) && seg.ack >= c.req_end && c.established {
                if self.cfg.reuse != Reuse::None && !c.req_acked && c.req_retries == 0 {
                    // A reused connection's request, acknowledged: the client's RTT sample
                    // (Karn's rule: not after a retransmission).
                    if let Some(t) = c.req_sent_at {
                        c.rtt.sample(now.saturating_since(t), 0, 0);
                    }
                }
                c.req_acked = true;
                c.req_pending = false;
                c.req_timer = None;
            }
            if seg.is_syn() {
                if !c.established {
                    c.established = true;
                    c.syn_timer = None;
                    if c.syn_retries == 0 {
                        if let Some(t) = c.syn_sent_at {
                            c.rtt.sample(now.saturating_since(t), 0, 0);
                        }
                    } else if let Some(ecr) = seg.tsecr.filter(|_| self.cfg.timestamps) {
                        // After a retransmitted SYN, Karn's rule leaves the sample to the echo
                        // (Linux `tcp_ack_update_rtt` on the SYN-ACK).
                        c.rtt.sample(ts_rtt(now, ecr), 0, 0);
                    }
                    if let Some(w) = &mut self.win {
                        w.established(now);
                    }
                    if self.cfg.request_bytes > 0 && self.cfg.reuse == Reuse::None {
                        c.req_pending = true;
                    } else {
                        // No request yet (with reuse, the engine sends one when a flow takes
                        // the connection): the handshake's ACK goes alone.
                        c.req_acked = true;
                        self.ack_now = true;
                    }
                } else {
                    // A retransmitted SYN-ACK: our ACK was lost; ACK again.
                    self.ack_now = true;
                }
                return;
            }
        }
        if seg.len == 0 {
            return;
        }
        self.on_data(now, seg);
    }

    fn on_data(&mut self, now: Time, seg: &Segment) {
        let len = u64::from(seg.len);
        self.stats.segments += 1;
        self.stats.bytes += len;
        // Linux `tcp_rcv_rtt_measure_ts`, for segments `tcp_sequence` accepts (not wholly
        // below the last ACK's point).
        if let Some(w) = self.win.as_mut().filter(|_| seg.end() > self.rcv_wup) {
            w.measure_ts(now, seg.tsecr.filter(|_| self.cfg.timestamps), len);
        }
        if self.cfg.ecn != EcnMode::Off {
            if self.cfg.ecn == EcnMode::Classic && seg.flags.contains(Flags::CWR) {
                // tcp_ecn_accept_cwr: the sender reduced; stop echoing and ACK at once.
                self.demand_cwr = false;
                self.ack_now = true;
            }
            match seg.ecn {
                Ecn::NotEct => {
                    // Linux: a Not-ECT segment after ECT ones is probably a retransmission.
                    if self.ecn_seen {
                        self.enter_quickack(2);
                    }
                }
                Ecn::Ce => {
                    self.stats.ce_bytes += len;
                    self.ce_bytes = self.ce_bytes.wrapping_add(seg.len);
                    if self.cfg.ecn == EcnMode::Classic && !self.demand_cwr {
                        self.enter_quickack(2);
                        self.demand_cwr = true;
                    }
                    self.ecn_seen = true;
                }
                Ecn::Ect0 | Ecn::Ect1 => self.ecn_seen = true,
            }
            let ce = seg.ecn.is_ce();
            if self.cfg.ecn == EcnMode::Accurate && ce != self.last_ce {
                self.ack_now = true;
            }
            self.last_ce = ce;
        }

        let (s, e) = (seg.seq, seg.end());
        let before = self.rcv_nxt;
        self.ack_scheduled = true;
        if e <= self.rcv_nxt {
            // A retransmission of received data: Linux sends a (D)SACK at once.
            self.stats.dup_bytes += len;
            self.stats.dup_segments += 1;
            self.enter_quickack(self.cfg.quickack);
            self.ack_now = true;
        } else if s <= self.rcv_nxt {
            self.stats.dup_bytes += self.rcv_nxt - s;
            let had_ofo = !self.ofo.is_empty();
            self.rcv_nxt = e;
            self.in_order_data(now, len);
            while let Some((&a, &b)) = self.ofo.first_key_value() {
                if a > self.rcv_nxt {
                    break;
                }
                self.ofo.pop_first();
                self.ofo_bytes -= b - a;
                self.rcv_nxt = self.rcv_nxt.max(b);
            }
            if had_ofo {
                // Filling (part of) a hole: ACK at once (RFC 5681 §4.2).
                self.ack_now = true;
                let keep = self.rcv_nxt;
                let mut n = 0;
                for i in 0..self.sack_n {
                    if self.sack_recent[i] >= keep {
                        self.sack_recent[n] = self.sack_recent[i];
                        n += 1;
                    }
                }
                self.sack_n = n;
            }
        } else {
            self.stats.ooo_segments += 1;
            // Linux `tcp_data_queue_ofo`: a SACK connection's window grows with held data too,
            // unless every byte is already held. A segment that extends a held block is
            // charged to it before the window grows (`tcp_try_coalesce`); a new block after.
            let prev = self.ofo.range(..=s).next_back().map(|(&a, &b)| (a, b));
            let held_already = prev.is_some_and(|(_, b)| b >= e);
            if self.cfg.sack && !held_already {
                let coalesced = self.ofo.range(..s).next_back().is_some_and(|(_, &b)| b == s);
                let held = self.ofo_bytes + if coalesced { len } else { 0 };
                if let Some(w) = &mut self.win {
                    if w.on_out_of_order(len, held) {
                        self.quick |= 1;
                    }
                }
            }
            self.insert_ofo(s, e);
            self.ack_now = true;
        }
        if self.rcv_nxt > before {
            // The application reads the new in-order bytes at once: autotuning, then
            // `tcp_cleanup_rbuf`'s window update.
            if let Some(w) = &mut self.win {
                w.space_adjust(now, self.rcv_nxt);
            }
            if !self.ack_now {
                if let Some(w) = &self.win {
                    if w.update_due(self.rcv_nxt, self.rcv_wup, self.ofo_bytes, &mut self.quick) {
                        self.ack_now = true;
                    }
                }
            }
        }

        if !self.ack_now {
            let unacked = self.rcv_nxt - self.rcv_wup;
            let mss = u64::from(self.cfg.mss);
            if self.quick > 0 || unacked > u64::from(self.cfg.delack_segments - 1) * mss {
                self.ack_now = true;
            } else if self.delack_at.is_none() {
                self.delack_at = Some(now + self.cfg.delack_timeout);
            }
        }
    }

    /// Linux `tcp_event_data_recv`, for in-order data of `len` bytes (`rcv_nxt` already past
    /// it, the held data not yet joined): the first initialises the delayed-ACK engine in
    /// quick-ACK mode, and so does a gap since the previous longer than this endpoint's RTO (the
    /// sender has stalled, as after its own timeout, so ACKs go at once). With flow control, the
    /// receiver learns the MSS and its RTT, and a segment that grows the window is ACKed at once
    /// (`tcp_grow_window`: `quick |= 1`).
    fn in_order_data(&mut self, now: Time, len: u64) {
        if let Some(w) = &mut self.win {
            w.learn_mss(len);
        }
        let stalled = match self.last_in_order {
            None => true,
            Some(t) => now.saturating_since(t) > self.rto(),
        };
        if stalled {
            self.enter_quickack(self.cfg.quickack);
        }
        self.last_in_order = Some(now);
        if let Some(w) = &mut self.win {
            if w.on_in_order(now, len, self.rcv_nxt, self.ofo_bytes) {
                self.quick |= 1;
            }
        }
    }

    /// This endpoint's RTO (Linux `icsk_rto`): the client's from its handshake sample; without
    /// a handshake, none was measured, and Linux's initial RTO stands in.
    fn rto(&self) -> Duration {
        self.client.as_ref().map_or(self.cfg.initial_rto, |c| c.rtt.rto())
    }

    fn insert_ofo(&mut self, s: u64, e: u64) {
        let (mut start, mut end) = (s, e);
        let mut overlap = 0;
        if let Some((&a, &b)) = self.ofo.range(..=s).next_back() {
            if b >= s {
                overlap += b.min(e).saturating_sub(s);
                start = a;
                end = end.max(b);
                self.ofo.remove(&a);
            }
        }
        while let Some((&a, &b)) = self.ofo.range(start..).next() {
            if a > end {
                break;
            }
            overlap += b.min(e).saturating_sub(a.max(s));
            end = end.max(b);
            self.ofo.remove(&a);
        }
        self.ofo.insert(start, end);
        self.ofo_bytes += (e - s) - overlap;
        self.stats.dup_bytes += overlap;
        // The block holding this segment becomes the first SACK block.
        let mut n = 0;
        let mut kept = [0u64; 4];
        for &p in &self.sack_recent[..self.sack_n] {
            if (p < start || p >= end) && n < 3 {
                kept[n] = p;
                n += 1;
            }
        }
        self.sack_recent[0] = s;
        self.sack_recent[1..=n].copy_from_slice(&kept[..n]);
        self.sack_n = n + 1;
    }

    #[inline(always)]
    fn sack_blocks(&self) -> SackBlocks {
        let mut out = SackBlocks::EMPTY;
        if !self.cfg.sack {
            return out;
        }
        for &p in &self.sack_recent[..self.sack_n] {
            if let Some((&a, &b)) = self.ofo.range(..=p).next_back() {
                if b > p && !out.as_slice().iter().any(|&(x, _)| x == a) && !out.push((a, b)) {
                    break;
                }
            }
        }
        out
    }

    #[inline(always)]
    fn make_ack(&mut self) -> Segment {
        let mut flags = Flags::ACK;
        if self.cfg.ecn == EcnMode::Classic && self.demand_cwr {
            flags.insert(Flags::ECE);
        }
        let seg = Segment {
            seq: self.own_seq(),
            len: 0,
            ack: self.rcv_nxt,
            flags,
            sack: self.sack_blocks(),
            ace: if self.cfg.ecn == EcnMode::Accurate { self.ce_bytes } else { 0 },
            ecn: Ecn::NotEct,
            // The timestamps are set by `poll_transmit`.
            ..Segment::default()
        };
        self.rcv_wup = self.rcv_nxt;
        self.ack_now = false;
        self.delack_at = None;
        if self.ack_scheduled && self.quick > 0 {
            self.quick -= 1;
        }
        self.ack_scheduled = false;
        self.stats.acks += 1;
        if self.delack_fired {
            self.stats.delayed_acks += 1;
            self.delack_fired = false;
        }
        seg
    }

    /// The next segment to send now: a SYN, the request, or an ACK. The engine calls it until
    /// it returns `None` after every other call.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Segment> {
        let wup = self.rcv_wup;
        let seg = self.next_segment(now)?;
        let tsecr = if self.cfg.timestamps { self.ts_recent } else { None };
        // The window: a SYN's unscaled initial one, else `tcp_select_window`'s.
        let wnd = match &mut self.win {
            None => u32::MAX,
            Some(_) if seg.is_syn() => initial_window(&self.cfg) as u32,
            Some(w) => {
                let bytes = w.select(self.rcv_nxt, wup, self.ofo_bytes, &mut self.quick);
                u32::try_from(bytes).unwrap_or(u32::MAX)
            }
        };
        Some(Segment { tsval: now, tsecr, wnd, ..seg })
    }

    fn next_segment(&mut self, now: Time) -> Option<Segment> {
        // A reused connection's request, which carries the ACK (one `make_ack` below for both).
        let mut request = None;
        if let Some(c) = &mut self.client {
            if c.syn_pending {
                c.syn_pending = false;
                c.syn_sent_at = Some(now);
                c.syn_timer = Some(
                    now + crate::rtt::backoff_of(
                        self.cfg.initial_rto,
                        c.syn_retries,
                        self.cfg.max_rto,
                    ),
                );
                self.stats.syns += 1;
                return Some(Segment { flags: Flags::SYN, ecn: Ecn::NotEct, ..Segment::default() });
            }
            if c.req_pending {
                c.req_pending = false;
                c.req_timer = Some(now + c.rtt.backed_off(c.req_retries));
                self.stats.requests += 1;
                if self.cfg.reuse == Reuse::None {
                    self.stats.acks += 1;
                    return Some(Segment {
                        seq: 0,
                        len: self.cfg.request_bytes,
                        ack: self.rcv_nxt,
                        flags: Flags::ACK,
                        ecn: Ecn::NotEct,
                        ..Segment::default()
                    });
                }
                // The request carries the ACK of what arrived (Linux `tcp_event_ack_sent`):
                // the ACK owed goes with it.
                request = Some(c.req_end - u64::from(self.cfg.request_bytes));
            }
        }
        if self.ack_now || request.is_some() {
            let ack = self.make_ack();
            return Some(match request {
                Some(seq) => Segment { seq, len: self.cfg.request_bytes, ..ack },
                None => ack,
            });
        }
        None
    }

    /// The earliest timer: delayed ACK, SYN or request retransmission.
    pub fn deadline(&self) -> Option<Time> {
        let mut d = self.delack_at;
        if let Some(c) = &self.client {
            for t in [c.syn_timer, c.req_timer].into_iter().flatten() {
                d = Some(d.map_or(t, |x| x.min(t)));
            }
        }
        d
    }

    /// Runs the timers due at `now` (a late or spurious call is harmless).
    pub fn on_deadline(&mut self, now: Time) {
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            if self.ack_scheduled {
                self.ack_now = true;
                self.delack_fired = true;
            }
        }
        if let Some(c) = &mut self.client {
            if c.syn_timer.is_some_and(|t| t <= now) && !c.established {
                c.syn_retries += 1;
                c.syn_pending = true;
                c.syn_timer = None;
            }
            if c.req_timer.is_some_and(|t| t <= now) && !c.req_acked {
                c.req_retries += 1;
                c.req_pending = true;
                c.req_timer = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Recovery;
    use dcsim_types::Duration;

    fn data(seq: u64, len: u32) -> Segment {
        Segment { seq, len, flags: Flags::ACK, ecn: Ecn::NotEct, ..Segment::default() }
    }

    #[test]
    fn sack_blocks_put_the_newest_first_and_merge() {
        let cfg = TcpConfig { quickack: 0, ..TcpConfig::linux() };
        let mut r = Receiver::new(&cfg, 100_000);
        let t = Time::ZERO;
        r.on_segment(t, &data(1000, 1000));
        let a = r.poll_transmit(t).unwrap();
        assert_eq!((a.ack, a.sack.as_slice()), (0, &[(1000, 2000)][..]));
        r.on_segment(t, &data(5000, 1000));
        let a = r.poll_transmit(t).unwrap();
        assert_eq!(a.sack.as_slice(), &[(5000, 6000), (1000, 2000)]);
        r.on_segment(t, &data(2000, 1000));
        let a = r.poll_transmit(t).unwrap();
        assert_eq!(a.sack.as_slice(), &[(1000, 3000), (5000, 6000)]);
        r.on_segment(t, &data(0, 1000));
        let a = r.poll_transmit(t).unwrap();
        assert_eq!((a.ack, a.sack.as_slice()), (3000, &[(5000, 6000)][..]));
        assert_eq!(r.stats().ooo_segments, 3);
    }

    /// Linux `tcp_event_data_recv` runs for in-order data only: out-of-order segments before
    /// the first in-order one neither start the quick-ACK credits nor spend them, so the hole's
    /// fill starts all 16.
    #[test]
    fn quick_acks_start_with_the_first_in_order_data() {
        let cfg = TcpConfig::linux();
        let mss = cfg.mss;
        let m = u64::from(mss);
        let mut r = Receiver::new(&cfg, 1 << 30);
        let t = Time::ZERO;
        for k in [1, 2] {
            r.on_segment(t, &data(k * m, mss));
            assert!(r.poll_transmit(t).is_some(), "out-of-order data is ACKed at once");
        }
        assert_eq!(r.quick, 0);
        r.on_segment(t, &data(0, mss));
        assert_eq!(r.poll_transmit(t).map(|a| a.ack), Some(3 * m));
        assert_eq!(r.quick, cfg.quickack - 1, "the fill's ACK spent one of 16");
    }

    /// In-order data after a gap longer than the endpoint's RTO (the sender stalled, as on its
    /// own timeout) re-enters quick-ACK mode (Linux `tcp_event_data_recv`): the segment is ACKed
    /// at once instead of after the delayed-ACK timer; after a shorter gap it waits.
    #[test]
    fn data_after_a_gap_longer_than_the_rto_is_acked_at_once() {
        let cfg = TcpConfig { quickack: 2, ..TcpConfig::linux() };
        assert_eq!(cfg.initial_rto, Duration::from_ms(1000), "no handshake: the initial RTO");
        let m = u64::from(cfg.mss);
        let mut r = Receiver::new(&cfg, 1 << 30);
        let mut t = Time::ZERO;
        for i in 0..4u64 {
            r.on_segment(t, &data(i * m, cfg.mss));
            while r.poll_transmit(t).is_some() {}
            t += Duration::from_us(10);
        }
        assert_eq!(r.quick, 0, "credits spent");
        // 900 ms later: below the RTO, the odd segment waits for the timer.
        t += Duration::from_ms(900);
        r.on_segment(t, &data(4 * m, cfg.mss));
        assert!(r.poll_transmit(t).is_none());
        r.on_deadline(t + cfg.delack_timeout);
        assert!(r.poll_transmit(t + cfg.delack_timeout).is_some());
        // 1.1 s later: above it, ACKed at once.
        t += Duration::from_ms(1100);
        r.on_segment(t, &data(5 * m, cfg.mss));
        assert_eq!(r.poll_transmit(t).map(|a| a.ack), Some(6 * m));
    }

    /// RFC 7323 §4.3: an ACK echoes the send time of the segment that covered the last byte
    /// ACKed (here the first segment, then the hole's retransmission), not that of a later
    /// out-of-order one nor of a duplicate; without timestamps nothing is echoed.
    #[test]
    fn acks_echo_the_segment_that_moved_the_window() {
        for timestamps in [true, false] {
            let cfg = TcpConfig { timestamps, quickack: 0, ..TcpConfig::linux() };
            let m = u64::from(cfg.mss);
            let mut r = Receiver::new(&cfg, 1 << 30);
            let at = |ms: u64| Time::ZERO + Duration::from_ms(ms);
            let seg = |k: u64, sent: u64| Segment { tsval: at(sent), ..data(k * m, cfg.mss) };
            let echo = |t: u64| timestamps.then(|| at(t));
            r.on_segment(at(10), &seg(0, 1));
            r.on_segment(at(10), &seg(1, 1));
            assert_eq!(r.poll_transmit(at(10)).map(|a| (a.ack, a.tsecr)), Some((2 * m, echo(1))));
            // Segment 2 lost; 3 arrives out of order.
            r.on_segment(at(20), &seg(3, 2));
            assert_eq!(r.poll_transmit(at(20)).map(|a| a.tsecr), Some(echo(1)));
            // 2's retransmission fills the hole: its send time is echoed.
            r.on_segment(at(40), &seg(2, 30));
            let a = r.poll_transmit(at(40)).expect("the fill is ACKed at once");
            assert_eq!((a.ack, a.tsecr, a.tsval), (4 * m, echo(30), at(40)));
            // A duplicate of 1 (wholly below the last byte ACKed) is not acceptable: it is
            // ACKed at once, with the same echo.
            r.on_segment(at(50), &seg(1, 45));
            let a = r.poll_transmit(at(50)).expect("a duplicate is ACKed at once");
            assert_eq!((a.ack, a.tsecr), (4 * m, echo(30)));
        }
    }

    #[test]
    fn delayed_ack_after_quickack_ends() {
        let cfg = TcpConfig { quickack: 2, ..TcpConfig::linux() };
        let mss = cfg.mss;
        let mut r = Receiver::new(&cfg, 1 << 30);
        let mut t = Time::ZERO;
        let mut acks = 0;
        for i in 0..10u64 {
            r.on_segment(t, &data(i * u64::from(mss), mss));
            while r.poll_transmit(t).is_some() {
                acks += 1;
            }
            t += Duration::from_us(10);
        }
        // Two quick ACKs, then one per two segments: (10 − 2) / 2 = 4.
        assert_eq!(acks, 6);
        // An odd segment waits for the 40 ms timer.
        r.on_segment(t, &data(10 * u64::from(mss), mss));
        assert!(r.poll_transmit(t).is_none());
        assert_eq!(r.deadline(), Some(t + Duration::from_ms(40)));
        r.on_deadline(t + Duration::from_ms(40));
        assert_eq!(r.poll_transmit(t).unwrap().ack, 11 * u64::from(mss));
        assert_eq!(r.stats().delayed_acks, 1);
    }

    /// Linux `tcp_grow_window`: once autotuning has raised the clamp (a period of one receiver
    /// RTT that read more than the first ten segments), each in-order segment grows the window
    /// by two segments and is ACKed at once (`quick |= 1`); when `rcv_ssthresh` reaches the
    /// clamp, the receiver ACKs every second segment again.
    #[test]
    fn segments_that_grow_the_window_are_acked_at_once() {
        let cfg = TcpConfig { quickack: 0, ..TcpConfig::linux() };
        let m = u64::from(cfg.mss);
        let mut r = Receiver::new(&cfg, 1 << 30);
        let ms = |x: u64| Time::ZERO + Duration::from_ms(x);
        let seg = |k: u64| Segment { tsecr: Some(Time::ZERO), ..data(k * m, cfg.mss) };
        let acks_for = |r: &mut Receiver, ks: std::ops::Range<u64>, t: Time| {
            let mut n = 0;
            for k in ks {
                r.on_segment(t, &seg(k));
                while r.poll_transmit(t).is_some() {
                    n += 1;
                }
            }
            n
        };
        // The first period, begun by the first read: 20 segments (the first gives a 100 ms RTT
        // sample from its echo).
        assert_eq!(acks_for(&mut r, 0..20, ms(100)), 10, "no room: every second segment");
        assert_eq!(r.rcv_rtt(), Some(Duration::from_ms(100)));
        let (clamp, ssthresh, _) = r.window_state().unwrap();
        assert_eq!((clamp, ssthresh), (64_088, 64_088));
        // One RTT later a read ends the period: 20 segments read, more than 10, so the clamp
        // rises; the next segments each grow the window and are ACKed at once.
        assert_eq!(acks_for(&mut r, 20..21, ms(201)), 0);
        let (clamp, ssthresh, _) = r.window_state().unwrap();
        assert!(clamp > 3 * ssthresh, "clamp {clamp}");
        let growing = (clamp - ssthresh).div_ceil(2 * m);
        assert_eq!(acks_for(&mut r, 21..21 + growing, ms(201)), growing);
        // Fully grown: up to the clamp less the segment just queued (`tcp_space` counts it
        // until it is read), and one ACK per two segments.
        let (clamp, ssthresh, _) = r.window_state().unwrap();
        assert_eq!(ssthresh, clamp - m);
        let k = 21 + growing;
        assert_eq!(acks_for(&mut r, k..k + 20, ms(202)), 10);
    }

    /// After a retransmitted SYN, Karn's rule leaves the client's first RTT sample to the
    /// SYN-ACK's echo of the SYN it answers (Linux `tcp_ack_update_rtt`): the request's
    /// retransmission timer is then the RTO of a 100 ms sample (Linux's formula: 100 + 200 ms),
    /// not the initial 1 s. Without timestamps there is no sample (Linux would then fall back
    /// to 3 s, `TCP_TIMEOUT_FALLBACK`; not modelled: the initial RTO stays).
    #[test]
    fn a_retransmitted_syn_gives_a_sample_from_the_synacks_echo() {
        for timestamps in [true, false] {
            let cfg = TcpConfig { handshake: true, timestamps, ..TcpConfig::linux() };
            let mut r = Receiver::new(&cfg, 1 << 20);
            let ms = |x: u64| Time::ZERO + Duration::from_ms(x);
            r.connect(ms(0));
            assert!(r.poll_transmit(ms(0)).is_some_and(|s| s.is_syn()));
            r.on_deadline(ms(1000));
            let syn = r.poll_transmit(ms(1000)).expect("the SYN again");
            assert_eq!(syn.tsval, ms(1000));
            let synack = Segment {
                flags: Flags::SYN | Flags::ACK,
                tsecr: Some(syn.tsval),
                ..Segment::default()
            };
            r.on_segment(ms(1100), &synack);
            let req = r.poll_transmit(ms(1100)).expect("the request");
            assert_eq!(req.len, cfg.request_bytes);
            let rto = if timestamps { 300 } else { 1000 };
            assert_eq!(r.deadline(), Some(ms(1100 + rto)), "timestamps {timestamps}");
        }
    }

    /// A small buffer (8 segments of memory: a SYN window of 5 840 B, a clamp of 4 392 B, a first
    /// offer of 4 480 B) with ACKs
    /// every 4 segments: Linux's `tcp_incr_quickack` gives 2 quick ACKs, not 16 (half the window
    /// in segments); and each time less than half the window is left open and the offer is at
    /// least twice that (every second segment here), `tcp_cleanup_rbuf` ACKs at once (a window
    /// update) where the delayed-ACK rule would wait for a fourth.
    #[test]
    fn a_small_window_bounds_quick_acks_and_updates_when_half_used() {
        for rwnd in [true, false] {
            let cfg = TcpConfig { rwnd, rmem: 8 * 1460, delack_segments: 4, ..TcpConfig::linux() };
            let m = u64::from(cfg.mss);
            let mut r = Receiver::new(&cfg, 1 << 20);
            let t = Time::ZERO;
            let acked: Vec<bool> = (0..7u64)
                .map(|k| {
                    r.on_segment(t, &data(k * m, cfg.mss));
                    r.poll_transmit(t).is_some()
                })
                .collect();
            if rwnd {
                // Two quick ACKs; then every second segment leaves under half the window open
                // (4 480 − 2 896 B): window updates, where the 4-segment rule would wait.
                assert_eq!(acked, [true, true, false, true, false, true, false]);
            } else {
                assert!(acked.iter().all(|&a| a), "16 quick ACKs: {acked:?}");
            }
        }
    }

    /// With SACK, an out-of-order segment with new bytes grows the window too (Linux
    /// `tcp_data_queue_ofo`, a new block or one coalesced into a held block alike), and is ACKed
    /// at once anyway; one whose bytes are all held does not. Without SACK none does (Linux
    /// keeps the duplicate ACKs coming).
    #[test]
    fn out_of_order_segments_with_new_bytes_grow_the_window() {
        for sack in [true, false] {
            let cfg = TcpConfig {
                quickack: 0,
                sack,
                recovery: if sack { Recovery::Sack } else { Recovery::NewReno },
                ..TcpConfig::linux()
            };
            let m = u64::from(cfg.mss);
            let mut r = Receiver::new(&cfg, 1 << 30);
            let ms = |x: u64| Time::ZERO + Duration::from_ms(x);
            let seg = |k: u64| Segment { tsecr: Some(Time::ZERO), ..data(k * m, cfg.mss) };
            for k in 0..20 {
                r.on_segment(ms(100), &seg(k));
            }
            r.on_segment(ms(201), &seg(20));
            let ssthresh = |r: &Receiver| r.window_state().unwrap().1;
            let before = ssthresh(&r);
            let step = if sack { 2 * m } else { 0 };
            r.on_segment(ms(201), &seg(30));
            assert_eq!(ssthresh(&r), before + step, "a new block");
            r.on_segment(ms(201), &seg(31));
            assert_eq!(ssthresh(&r), before + 2 * step, "a segment that extends it");
            r.on_segment(ms(201), &seg(30));
            assert_eq!(ssthresh(&r), before + 2 * step, "a segment already held: no growth");
        }
    }
}
