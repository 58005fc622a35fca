//! The RoCE transport: go-back-N queue pairs paced at the congestion-control rate, with
//! an optional window, and receivers that ACK in order and NACK gaps (spec §2).

use super::link::Paused;
use super::transport::{qp_mut, rx_mut};
use super::{Event, Shard, Shared, Slot};
use crate::cc::{CcCtx, CcFactory, CongestionControl, Feedback, TimerOp, MAX_TIMERS};
use crate::config::WindowMode;
use crate::ids::{FlowId, PortNo};
use crate::packet::{Area, Ecn, HeaderMode, IntStack, Packet, PacketKind};
use crate::units::{BitsPerSec, Time};

/// The `CcTimer` slot of a queue pair's retransmission timer ([`crate::config::RoceRto`]),
/// after the scheme's slots and TCP's.
pub(crate) const ROCE_RTO_TIMER: u8 = MAX_TIMERS as u8 + 2;

/// Sender state of one flow (queue pair).
pub(crate) struct Qp<C> {
    pub(crate) size: u64,
    pub(crate) snd_nxt: u64,
    pub(crate) snd_una: u64,
    /// Highest byte ever sent (for retransmission accounting).
    pub(crate) high: u64,
    pub(crate) rate: BitsPerSec,
    pub(crate) max_rate: BitsPerSec,
    pub(crate) win: u64,
    pub(crate) next_avail: Time,
    pub(crate) last_pkt_size: u32,
    pub(crate) pg: u8,
    pub(crate) done: bool,
    pub(crate) cc: Option<C>,
    pub(crate) timer_version: [u32; MAX_TIMERS],
    /// When the pending retransmission timer event is due (its version is `rto_version`;
    /// older events lapse). It is re-armed lazily when it fires, and earlier only when a
    /// deadline moves before it.
    pub(crate) rto_at: Option<Time>,
    /// The version of the pending retransmission timer event.
    pub(crate) rto_version: u32,
    /// The retransmission timer runs from here: the last progress, the last timeout, or when
    /// bytes were last sent after every byte sent had been acknowledged.
    pub(crate) rto_from: Time,
    /// Consecutive timeouts without progress.
    pub(crate) rto_expiries: u32,
    /// Its position in its host's round robin ([`super::transport::nic_pos`]).
    pub(crate) nic_pos: u32,
}

impl<C> Qp<C> {
    /// A queue pair not started yet: `size` bytes to send (0 for a stream), paced at the line
    /// rate `line` from `start`, with window `win` (0: none), in class `pg`.
    pub(crate) fn new(size: u64, line: BitsPerSec, win: u64, start: Time, pg: u8) -> Qp<C> {
        Qp {
            size,
            snd_nxt: 0,
            snd_una: 0,
            high: 0,
            rate: line,
            max_rate: line,
            win,
            next_avail: start,
            last_pkt_size: 0,
            pg,
            done: false,
            cc: None,
            timer_version: [0; MAX_TIMERS],
            rto_at: None,
            rto_version: 0,
            rto_from: Time::ZERO,
            rto_expiries: 0,
            nic_pos: super::transport::NOT_LISTED,
        }
    }
}

/// Receiver state of one flow.
#[derive(Clone, Copy, Default)]
pub(crate) struct Rx {
    pub(crate) expected: u64,
    pub(crate) nack_timer: Time,
    pub(crate) last_nack: u64,
}

/// Queue pair `qp`'s window in bytes now (0: none): fixed, or scaled by its rate.
fn window_of<F: CcFactory>(sh: &Shared<F>, qp: &Qp<F::Cc>) -> u64 {
    if qp.win == 0 {
        return 0;
    }
    match sh.cfg.nic.window {
        WindowMode::Variable => scaled_window(qp.win, qp.rate, qp.max_rate),
        _ => qp.win,
    }
}

/// Window `win` scaled by `rate / max_rate`, rounded down, at least 1 byte.
///
/// In u64 where the product fits (any window below ~180 MB at 100 Gb/s): the same quotient
/// as in u128, without the 128-bit division's library call, which readiness tests paid for
/// 0.5% of the calibration's time (`perf record`, `__udivti3`).
#[inline]
fn scaled_window(win: u64, rate: BitsPerSec, max_rate: BitsPerSec) -> u64 {
    let w = match win.checked_mul(rate.0) {
        Some(p) => p / max_rate.0,
        None => (win as u128 * rate.0 as u128 / max_rate.0 as u128) as u64,
    };
    w.max(1)
}

/// Whether queue pair `qp` may send at `now`: its priority is not `paused`, bytes are left,
/// its pacing time has come and its window is open.
#[inline]
pub(crate) fn roce_ready<F: CcFactory>(
    sh: &Shared<F>,
    now: Time,
    paused: Paused,
    qp: &Qp<F::Cc>,
) -> bool {
    // One branch for the three tests (`|`, not `||`): which of its senders is ready follows
    // the ACKs, in no order a predictor can learn.
    if paused.get(qp.pg as usize) | (qp.snd_nxt >= qp.size) | (qp.next_avail > now) {
        return false;
    }
    let w = window_of(sh, qp);
    (w == 0) | (qp.snd_nxt - qp.snd_una < w)
}

impl<F: CcFactory> Shard<F> {
    /// Sends the queue pair's next data packet (spec §2.2).
    pub(crate) fn roce_send(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let mtu = sh.cfg.nic.mtu as u64;
        let f = sh.flows[flow];
        let qp = qp_mut(&mut self.tx, flow);
        let payload = mtu.min(qp.size - qp.snd_nxt) as u32;
        let seq = qp.snd_nxt;
        qp.snd_nxt += payload as u64;
        if seq < qp.high {
            self.counters.data_bytes_retransmitted += payload as u64;
        }
        if let Some(rto) = &sh.cfg.nic.rto {
            if qp.snd_una >= qp.high {
                // Nothing sent was unacknowledged: the timer starts with this packet.
                qp.rto_from = self.now;
            }
            let at = qp.rto_from + rto.after(qp.rto_expiries);
            if qp.rto_at.is_none_or(|t| at < t) {
                self.arm_rto(flow, f.src.0, at);
            }
        }
        let qp = qp_mut(&mut self.tx, flow);
        qp.high = qp.high.max(qp.snd_nxt);
        let wire = sh.header.data_wire(payload);
        qp.last_pkt_size = wire;
        let pace = if sh.cfg.nic.rate_bound { qp.rate } else { qp.max_rate };
        // The pacing gap, truncated to whole ns in `ns3` mode as the reference's
        // `CalculateBytesTxTime` (spec §0).
        qp.next_avail = self.now + sh.cfg.serialization.tx_time(pace, wire as u64);
        self.counters.data_packets_sent += 1;
        self.counters.data_bytes_sent += payload as u64;
        let p = Packet {
            kind: PacketKind::Data,
            wire,
            payload,
            pg: f.pg,
            ecn: Ecn::Ect0,
            ecn_echo: false,
            flow: FlowId(flow as u32),
            src: f.src,
            dst: f.dst,
            path: sh.path_of(flow, 0),
            seq,
            ts: self.now,
            header: sh.header,
            hop: 0,
            area: Area::None,
            pint: 0,
            in_port: PortNo(0),
            arrived: self.now,
        };
        let pkt = if sh.header == HeaderMode::Int { self.alloc_int(&p) } else { self.alloc(p) };
        self.host_transmit(sh, h, pkt);
    }

    /// Receiver: ACK/NACK generation (spec §2.3). Reuses the data packet's pool slot.
    pub(crate) fn receive_data(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let (flow, seq, payload, ce, src, dst) =
            (p.flow, p.seq, p.payload, p.ecn.is_ce(), p.src, p.dst);
        self.counters.data_bytes_delivered += payload as u64;
        let nic = &sh.cfg.nic;
        let rx = rx_mut(&mut self.rx, flow.idx());
        let reply = if seq == rx.expected {
            rx.expected += payload as u64;
            if nic.acks_at(rx.expected) {
                Some(PacketKind::Ack)
            } else {
                None
            }
        } else if seq > rx.expected {
            if self.now >= rx.nack_timer || rx.last_nack != rx.expected {
                rx.nack_timer = self.now + nic.nack_interval;
                rx.last_nack = rx.expected;
                if nic.back_to_chunk {
                    rx.expected = rx.expected / nic.chunk * nic.chunk;
                }
                Some(PacketKind::Nack)
            } else {
                None
            }
        } else if nic.rto.is_some() {
            // A duplicate: with a retransmission timeout, re-ACK what is held (as an InfiniBand
            // responder does), so that a lost ACK is repaired by the sender's retransmission.
            Some(PacketKind::Ack)
        } else {
            None
        };
        let Some(kind) = reply else {
            self.release(pkt);
            return;
        };
        if kind == PacketKind::Ack {
            self.counters.acks_sent += 1;
        } else {
            self.counters.nacks_sent += 1;
        }
        let expected = rx.expected;
        let path = sh.path_of(flow.idx(), 1);
        let a = &mut self.pool[pkt as usize];
        a.kind = kind;
        a.wire = sh.header.ack_wire();
        a.payload = 0;
        a.ecn_echo = ce;
        // RoCE ACKs are ECN-capable too: a RED queue marks them (harmlessly) rather than
        // dropping them, as the reference marks every packet of a data queue.
        a.ecn = Ecn::Ect0;
        a.src = dst;
        a.dst = src;
        a.path = path;
        a.hop = 0;
        a.seq = expected;
        self.hosts[h].ack_fifo.push_back(pkt);
        self.host_send(sh, h);
    }

    /// Sender: ACK/NACK processing (spec §2.4).
    pub(crate) fn receive_ack(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let flow = p.flow.idx();
        if super::transport::qp(&self.tx, flow).done {
            return;
        }
        let (ack, kind, ecn, ts_echo, pint) = (p.seq, p.kind, p.ecn_echo, p.ts, p.pint);
        let nic = &sh.cfg.nic;
        let mut seq = ack;
        if nic.back_to_chunk {
            seq = seq / nic.chunk * nic.chunk;
        }
        let qp = qp_mut(&mut self.tx, flow);
        if let Some(rto) = &nic.rto {
            if seq > qp.snd_una {
                // Progress: the retransmission timer and its retries start over.
                qp.rto_from = self.now;
                qp.rto_expiries = 0;
                // After back-offs the pending expiry may be later than the fresh deadline.
                let at = self.now + rto.timeout;
                if qp.rto_at.is_some_and(|t| at < t) {
                    let src = sh.flows[flow].src.0;
                    self.arm_rto(flow, src, at);
                }
            }
        }
        let qp = qp_mut(&mut self.tx, flow);
        qp.snd_una = qp.snd_una.max(seq);
        if qp.snd_nxt < qp.snd_una {
            // An ACK for packets sent before a timeout's rewind: skip what is acknowledged.
            qp.snd_nxt = qp.snd_una;
        }
        // A connection's stream never completes: more messages may come.
        let finished = qp.snd_una >= qp.size && flow < sh.nlisted;
        if finished {
            qp.done = true;
            for v in qp.timer_version.iter_mut() {
                *v = v.wrapping_add(1);
            }
            self.fct.push((flow as u32, self.now - sh.flows[flow].start));
            self.done += 1;
        }
        let nack = kind == PacketKind::Nack;
        if nack {
            qp.snd_nxt = qp.snd_una;
        }
        self.with_cc(sh, flow, |cc, ctx, pool| {
            // Only INT-mode ACKs carry records; the callback reads them in the pool (a copy
            // of the stack per ACK cost a `memcpy` call).
            let int = match (sh.header, &pool[pkt as usize].area) {
                (HeaderMode::Int, Area::Int(s)) => s,
                _ => &IntStack::EMPTY,
            };
            cc.on_feedback(ctx, &Feedback { ack, nack, ecn, int, ts_echo, pint })
        });
        if finished || nack {
            // Finished, or rewound (bytes are left again): the scheduler looks at it again. A
            // plain ACK only moves `snd_una`, which idleness does not depend on.
            self.nic_touch(h, flow);
        }
        self.host_send(sh, h);
    }

    /// The retransmission timer of queue pair `flow` ([`crate::config::RoceRto`]): re-armed
    /// for its current deadline if the flow made progress since it was set; on expiry, go back
    /// to the last acknowledged byte, or give up once the retries are spent (listed flows
    /// only: a connection's streams retry for as long as the run lasts).
    pub(crate) fn roce_rto(&mut self, sh: &Shared<F>, flow: usize, version: u32) {
        let Some(rto) = sh.cfg.nic.rto else { return };
        let now = self.now;
        let qp = qp_mut(&mut self.tx, flow);
        if version != qp.rto_version {
            return; // superseded by an earlier deadline
        }
        qp.rto_at = None;
        if qp.done || qp.snd_una >= qp.high {
            return; // nothing unacknowledged: the next packet sent arms the timer
        }
        let src = sh.flows[flow].src;
        let Slot::Host(h) = sh.place[src.idx()].slot else { unreachable!("a host") };
        let h = h as usize;
        let deadline = qp.rto_from + rto.after(qp.rto_expiries);
        if deadline > now {
            self.arm_rto(flow, src.0, deadline);
            return;
        }
        self.counters.timeouts += 1;
        if qp.rto_expiries >= rto.retries && flow < sh.nlisted {
            // Give up: the flow stops and is reported unfinished.
            qp.done = true;
            qp.snd_nxt = qp.size;
            for v in qp.timer_version.iter_mut() {
                *v = v.wrapping_add(1);
            }
            self.counters.flows_failed += 1;
            self.gave_up.push((flow as u32, now));
            // Finished: the scheduler compacts it out when it next passes.
            self.nic_touch(h, flow);
            return;
        }
        qp.rto_expiries = qp.rto_expiries.saturating_add(1);
        qp.snd_nxt = qp.snd_una;
        qp.rto_from = now;
        let next = now + rto.after(qp.rto_expiries);
        self.arm_rto(flow, src.0, next);
        // Rewound: bytes are left again.
        self.nic_touch(h, flow);
        self.host_send(sh, h);
    }

    /// Arms queue pair `flow`'s retransmission timer for `at` (a new version: a pending
    /// event lapses); `src` is its host.
    fn arm_rto(&mut self, flow: usize, src: u32, at: Time) {
        let qp = qp_mut(&mut self.tx, flow);
        qp.rto_version = qp.rto_version.wrapping_add(1);
        qp.rto_at = Some(at);
        let ev =
            Event::CcTimer { flow: flow as u32, slot: ROCE_RTO_TIMER, version: qp.rto_version };
        self.schedule(src, at, ev);
    }

    pub(crate) fn cc_timer(&mut self, sh: &Shared<F>, flow: usize, slot: u8, version: u32) {
        let qp = super::transport::qp(&self.tx, flow);
        if qp.done || qp.timer_version[slot as usize] != version {
            return;
        }
        // As in the reference, a timer changes the rate (and timers) but does not kick the NIC
        // scheduler: the new rate applies from the next packet the scheduler sends anyway.
        self.with_cc(sh, flow, |cc, ctx, _| cc.on_timer(ctx, slot as usize));
    }

    /// Runs a CC callback and applies what it asked for. The callback may read the packet
    /// pool (an ACK's INT records stay there).
    pub(crate) fn with_cc(
        &mut self,
        sh: &Shared<F>,
        flow: usize,
        call: impl FnOnce(&mut F::Cc, &mut CcCtx, &[Packet]),
    ) {
        let qp = qp_mut(&mut self.tx, flow);
        // A stream is an endless flow to its congestion control.
        let size = if flow < sh.nlisted { qp.size } else { u64::MAX };
        let mut ctx =
            CcCtx::new(self.now, qp.snd_nxt, qp.snd_una, size, qp.max_rate, qp.rate, qp.win);
        // In place: a scheme's state can be hundreds of bytes (HPCC keeps a record per hop).
        call(qp.cc.as_mut().expect("a started flow has CC state"), &mut ctx, &self.pool);
        qp.win = ctx.window;
        if let Some((r, retime)) = ctx.rate_set {
            let r = BitsPerSec(r.0.clamp(1, qp.max_rate.0));
            if retime && qp.last_pkt_size > 0 {
                let gap = |rate| sh.cfg.serialization.tx_time(rate, qp.last_pkt_size as u64);
                let old = gap(qp.rate).as_ps() as i128;
                let new = gap(r).as_ps() as i128;
                let na = (qp.next_avail.0 as i128 + new - old).max(0) as u64;
                qp.next_avail = Time(na);
                let src = sh.flows[flow].src;
                let Slot::Host(h) = sh.place[src.idx()].slot else { unreachable!() };
                // The reference moves the wake-up even to now (unlike `pull_wake`).
                if self.hosts[h as usize].wake.is_some_and(|w| qp.next_avail < w) {
                    let at = qp.next_avail.max(self.now);
                    qp.rate = r;
                    self.rearm_wake(h as usize, at);
                }
            }
            qp_mut(&mut self.tx, flow).rate = r;
        }
        let src = sh.flows[flow].src.0;
        for (slot, op) in ctx.timers.iter().enumerate() {
            match op {
                TimerOp::Keep => {}
                TimerOp::Cancel => {
                    let v = &mut qp_mut(&mut self.tx, flow).timer_version[slot];
                    *v = v.wrapping_add(1);
                }
                TimerOp::Set(at) => {
                    let v = &mut qp_mut(&mut self.tx, flow).timer_version[slot];
                    *v = v.wrapping_add(1);
                    let version = *v;
                    let at = (*at).max(self.now);
                    self.schedule(
                        src,
                        at,
                        Event::CcTimer { flow: flow as u32, slot: slot as u8, version },
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The u64 path and the u128 fallback give the 128-bit quotient, on both sides of the
    /// product's overflow.
    #[test]
    fn scaled_window_is_the_exact_quotient() {
        let exact = |w: u64, r: u64, m: u64| ((w as u128 * r as u128 / m as u128) as u64).max(1);
        let rates = [1, 999, 1_000_000_000, 25_000_000_001, 100_000_000_000, 400_000_000_000];
        let wins = [1, 1_000, 61_441, 184_467_440, 184_467_441, 1 << 40, u64::MAX / 3];
        for &m in &rates {
            for &r in rates.iter().filter(|&&r| r <= m) {
                for &w in &wins {
                    let got = scaled_window(w, BitsPerSec(r), BitsPerSec(m));
                    assert_eq!(got, exact(w, r, m), "win {w} rate {r} of {m}");
                    assert!(got <= w);
                }
            }
        }
        // Below a byte: one.
        assert_eq!(scaled_window(10, BitsPerSec(1), BitsPerSec(100)), 1);
    }
}
