//! The receive window: Linux's flow control and receive-buffer autotuning (`tcp_input.c` and
//! `tcp_output.c` of the 6.1 era), for a receiver whose application reads every byte as soon as
//! it is in order.
//!
//! What the receiver keeps (Linux's names):
//! - `sk_rcvbuf`, the buffer's memory, from `tcp_rmem[1]` (128 KiB) up to `tcp_rmem[2]` (6 MiB);
//!   half of it is taken to be payload (`tcp_adv_win_scale = 1`, `tcp_win_from_space`), and a
//!   segment held out of order is charged twice its payload, so that this holds exactly;
//! - `window_clamp`, the largest window the buffer allows, raised by autotuning;
//! - `rcv_ssthresh`, the ceiling of the advertised window, which grows by two segments per
//!   segment received while there is room below the clamp (`tcp_grow_window`). Each such
//!   segment is ACKed at once (`icsk_ack.quick |= 1`);
//! - the receiver's RTT estimate (`tcp_rcv_rtt_update`): from the echo of its own ACKs'
//!   timestamps in data segments, or without timestamps from the time a window takes to arrive;
//! - the bytes the application read in the current period of at least one such RTT
//!   (`rcvq_space`). When a period read more than the previous one, the buffer grows to hold
//!   twice that plus 16 segments, more when the rate is rising (`tcp_rcv_space_adjust`).
//!
//! Every ACK advertises `min(rcv_ssthresh, free space)`, rounded up to the window scale's unit,
//! and never less than the right edge already advertised (`tcp_select_window`). The SYN carries
//! the initial window unscaled (at most 65 535 B).
//!
//! Not modelled: memory pressure and pruning (`tcp_clamp_window`), an application that reads late
//! (every in-order byte is read at once), SO_RCVBUF locks, and the window in the other direction
//! (the client's request always fits). Linux's estimate of a segment's memory for autotuning is
//! `SKB_TRUESIZE(advmss + MAX_TCP_HEADER)` rounded up (about 2 984 B on x86-64); here it is twice
//! the MSS (2 896 B), so the clamp autotuning sets is about 3% below Linux's.

use dcsim_types::{Duration, Time};

use crate::config::TcpConfig;
use crate::rtt::ts_rtt;

/// Bytes of the timestamps option, which Linux's SYN-time MSS does not yet subtract.
const TS_OPTION: u64 = 12;
/// Linux `TCP_MSS_DEFAULT`: the receiver's guess of the peer's MSS before data arrives.
const MSS_DEFAULT: u64 = 536;
/// Linux `TCP_INIT_CWND`: the first autotuning period expects this many segments.
const INIT_CWND: u64 = 10;
/// The largest unscaled window field.
const MAX_FIELD: u64 = 65_535;
/// Linux `net.core.rmem_max` (212 992 B by default), which the window scale also covers.
const CORE_RMEM_MAX: u64 = 212_992;

/// Linux `tcp_win_from_space` with `tcp_adv_win_scale = 1`: half of a buffer is payload.
#[inline]
fn win_from_space(space: i64) -> i64 {
    space - (space >> 1)
}

/// The window scale the receiver offers (Linux `tcp_select_initial_window`): enough for the
/// largest buffer, `tcp_rmem[2]`, in 16 bits; at most 14.
pub fn window_scale(cfg: &TcpConfig) -> u32 {
    let s = cfg.rmem_max.max(win_from_space(cfg.rmem as i64) as u64).max(CORE_RMEM_MAX);
    (s.ilog2().saturating_sub(15)).min(14)
}

/// The MSS a receiver announces in its SYN (`advmss`: the timestamps option not yet subtracted).
fn syn_mss(cfg: &TcpConfig) -> u64 {
    u64::from(cfg.mss) + if cfg.timestamps { TS_OPTION } else { 0 }
}

/// The window a receiver's SYN advertises (Linux `tcp_select_initial_window` for the active
/// opener): half of `tcp_rmem[1]` in whole SYN-time MSS, at most 65 535 B. A sender starts with
/// it as its send window (without a handshake as if it had come in a SYN).
pub fn initial_window(cfg: &TcpConfig) -> u64 {
    let space = win_from_space(cfg.rmem as i64) as u64;
    let mss = syn_mss(cfg);
    let space = if space > mss { space / mss * mss } else { space };
    space.min(MAX_FIELD)
}

/// A receiver's window state (see the module's documentation).
#[derive(Clone, Debug)]
pub(crate) struct RcvWindow {
    wscale: u32,
    advmss: u64,
    rmem_max: u64,
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// The window last advertised: its right edge is `rcv_wup + rcv_wnd`.
    rcv_wnd: u64,
    /// The largest segment seen, at most `advmss` (Linux `icsk_ack.rcv_mss`).
    rcv_mss: u64,
    /// Autotuning (Linux `rcvq_space`): the bytes read in the last period, and where and when
    /// the current one began (`None` until the connection is established).
    space: u64,
    space_seq: u64,
    space_time: Option<Time>,
    /// Eight times the receiver's RTT estimate, in picoseconds (Linux `rcv_rtt_est.rtt_us`); 0
    /// before a sample.
    rtt8: u64,
    /// The window-based RTT measurement: the sequence number to reach, from when.
    rtt_seq: u64,
    rtt_time: Option<Time>,
    /// The last echo sampled, in Linux's millisecond ticks (each is used once).
    last_tsecr: Option<u64>,
}

impl RcvWindow {
    /// The state after the handshake (Linux `tcp_select_initial_window`, then
    /// `tcp_init_buffer_space`).
    pub(crate) fn new(cfg: &TcpConfig) -> RcvWindow {
        let advmss = u64::from(cfg.mss);
        let rcv_wnd = initial_window(cfg);
        let wscale = window_scale(cfg);
        let maxwin = win_from_space(cfg.rmem as i64) as u64;
        let mut clamp = (MAX_FIELD << wscale).min(maxwin);
        // Keep one segment in reserve (`tcp_app_win`).
        if clamp > 2 * advmss && clamp + advmss > maxwin {
            clamp = (2 * advmss).max(maxwin - advmss);
        }
        let rcv_ssthresh = rcv_wnd.min(clamp);
        RcvWindow {
            wscale,
            advmss,
            rmem_max: cfg.rmem_max,
            rcvbuf: cfg.rmem,
            window_clamp: clamp,
            rcv_ssthresh,
            rcv_wnd,
            rcv_mss: MSS_DEFAULT.min(advmss).min(rcv_wnd / 2).max(1),
            space: rcv_ssthresh.min(rcv_wnd).min(INIT_CWND * advmss),
            space_seq: 0,
            space_time: None,
            rtt8: 0,
            rtt_seq: 0,
            rtt_time: None,
            last_tsecr: None,
        }
    }

    /// The connection is established at `now`: the first autotuning period begins.
    pub(crate) fn established(&mut self, now: Time) {
        if self.space_time.is_none() {
            self.space_time = Some(now);
        }
    }

    /// The receiver's RTT estimate, if it has one.
    pub(crate) fn rtt(&self) -> Option<Duration> {
        (self.rtt8 > 0).then(|| Duration::from_ps(self.rtt8 >> 3))
    }
    /// The current `window_clamp`.
    pub(crate) fn clamp(&self) -> u64 {
        self.window_clamp
    }
    /// The current `rcv_ssthresh`.
    pub(crate) fn ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }
    /// The current buffer size (`sk_rcvbuf`).
    pub(crate) fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    /// Linux `tcp_rcv_rtt_update`: a timestamp sample moves the estimate by 1/8; a window
    /// sample (`win_dep`) can only lower it.
    fn rtt_update(&mut self, sample: Duration, win_dep: bool) {
        let m = sample.as_ps().max(1);
        if self.rtt8 == 0 {
            self.rtt8 = m << 3;
        } else if !win_dep {
            self.rtt8 = self.rtt8 - (self.rtt8 >> 3) + m;
        } else {
            self.rtt8 = self.rtt8.min(m << 3);
        }
    }

    /// Linux `tcp_rcv_rtt_measure_ts`, for every acceptable data segment: a sample from its
    /// echo of one of our ACKs (in whole milliseconds, at least one), once per echoed tick (all
    /// ACKs sent in one millisecond carry the same TSval), from full segments only.
    pub(crate) fn measure_ts(&mut self, now: Time, tsecr: Option<Time>, len: u64) {
        let Some(ecr) = tsecr else { return };
        let ms = Duration::from_ms(1).as_ps();
        let tick = ecr.as_ps() / ms;
        if self.last_tsecr == Some(tick) {
            return;
        }
        self.last_tsecr = Some(tick);
        if len >= self.rcv_mss {
            self.rtt_update(ts_rtt(now, ecr), false);
        }
    }

    /// Linux `tcp_measure_rcv_mss`, first for in-order data: the largest segment seen, at most
    /// the MSS.
    pub(crate) fn learn_mss(&mut self, len: u64) {
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(self.advmss);
        }
    }

    /// Linux `tcp_event_data_recv` for in-order data of `len` bytes, `rcv_nxt` already past it
    /// and `ooo` bytes held out of order: times a window (`tcp_rcv_rtt_measure`) and grows
    /// `rcv_ssthresh`. Returns whether it grew, in which case Linux ACKs the segment at once.
    pub(crate) fn on_in_order(&mut self, now: Time, len: u64, rcv_nxt: u64, ooo: u64) -> bool {
        if self.rtt_time.is_none() || rcv_nxt >= self.rtt_seq {
            if let Some(t) = self.rtt_time {
                self.rtt_update(now.saturating_since(t), true);
            }
            self.rtt_seq = rcv_nxt + self.rcv_wnd;
            self.rtt_time = Some(now);
        }
        // The segment is in the queue, not yet read, when the window grows.
        len >= 128 && self.grow(len, ooo + len)
    }

    /// Linux `tcp_grow_window` for an out-of-order segment with new bytes (SACK connections
    /// only), `held` bytes charged to the buffer when it runs.
    pub(crate) fn on_out_of_order(&mut self, len: u64, held: u64) -> bool {
        self.grow(len, held)
    }

    /// Linux `tcp_space`: the window the free buffer holds, with `held` payload bytes queued.
    fn free_space(&self, held: u64) -> i64 {
        win_from_space(self.rcvbuf as i64 - 2 * held as i64)
    }

    /// Linux `tcp_grow_window`: two segments (or twice this one) per segment, up to the clamp
    /// and the free space.
    fn grow(&mut self, len: u64, held: u64) -> bool {
        let room = (self.window_clamp as i64).min(self.free_space(held)) - self.rcv_ssthresh as i64;
        if room <= 0 {
            return false;
        }
        let incr = (2 * self.advmss).max(2 * len);
        self.rcv_ssthresh += incr.min(room as u64);
        true
    }

    /// Linux `tcp_rcv_space_adjust`, after the application read up to `copied`: at most once per
    /// receiver RTT, a period that read more than the last grows the buffer.
    pub(crate) fn space_adjust(&mut self, now: Time, copied: u64) {
        let Some(start) = self.space_time else {
            self.space_time = Some(now);
            self.space_seq = copied;
            return;
        };
        if self.rtt8 == 0 || now.saturating_since(start).as_ps() < self.rtt8 >> 3 {
            return;
        }
        let read = copied - self.space_seq;
        if read > self.space {
            let mut rcvwin = 2 * read + 16 * self.advmss;
            // A rising rate (slow start): room for the next period's growth.
            let grow = (u128::from(rcvwin) * u128::from(read - self.space)
                / u128::from(self.space.max(1))) as u64;
            rcvwin = rcvwin.saturating_add(grow.saturating_mul(2));
            let rcvmem = 2 * self.advmss;
            let rcvbuf = (rcvwin / self.advmss).saturating_mul(rcvmem).min(self.rmem_max);
            if rcvbuf > self.rcvbuf {
                self.rcvbuf = rcvbuf;
                self.window_clamp = win_from_space(rcvbuf as i64) as u64;
            }
            self.space = read;
        }
        self.space_seq = copied;
        self.space_time = Some(now);
    }

    /// Linux `__tcp_select_window`: the window the receiver could offer now. Clears `quick`
    /// when less than half the buffer is free, as Linux does.
    fn offer(&self, ooo: u64, quick: &mut u32) -> u64 {
        let unit = 1i64 << self.wscale;
        let mut free = self.free_space(ooo);
        let allowed = win_from_space(self.rcvbuf as i64);
        let full = (self.window_clamp as i64).min(allowed);
        let mss = (self.rcv_mss as i64).min(full);
        if mss <= 0 {
            return 0;
        }
        if free < full / 2 {
            *quick = 0;
            free = free.div_euclid(unit) * unit;
            if free < allowed / 16 || free < mss {
                return 0;
            }
        }
        let free = free.min(self.rcv_ssthresh as i64);
        if self.wscale > 0 {
            ((free + unit - 1) / unit * unit) as u64
        } else {
            // Unscaled: keep the old window within one segment of the free space, else whole
            // segments.
            let old = self.rcv_wnd as i64;
            if old <= free - mss || old > free {
                (free / mss * mss) as u64
            } else if mss == full && free > old + full / 2 {
                free as u64
            } else {
                old as u64
            }
        }
    }

    /// Linux `tcp_select_window`, for a segment sent now with `rcv_nxt` as its ACK: the offer,
    /// but never an edge below the one already advertised; it becomes the advertised window.
    /// Returns the bytes the peer reads from the scaled field.
    pub(crate) fn select(&mut self, rcv_nxt: u64, rcv_wup: u64, ooo: u64, quick: &mut u32) -> u64 {
        let unit = 1u64 << self.wscale;
        let cur = (rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        let mut new = self.offer(ooo, quick);
        if new < cur {
            new = cur.div_ceil(unit) * unit;
        }
        self.rcv_wnd = new;
        (new.min(MAX_FIELD << self.wscale) >> self.wscale) << self.wscale
    }

    /// Linux `tcp_cleanup_rbuf`'s window update, after a read: when at most half the advertised
    /// window is left open and the offer would at least double it, ACK now.
    pub(crate) fn update_due(&self, rcv_nxt: u64, rcv_wup: u64, ooo: u64, quick: &mut u32) -> bool {
        let now = (rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        if 2 * now > self.window_clamp {
            return false;
        }
        let new = self.offer(ooo, quick);
        new != 0 && new >= 2 * now
    }

    /// Linux `tcp_incr_quickack`: at most half the window in segments ACKed at once (two when
    /// that is none).
    pub(crate) fn quickack_bound(&self, n: u32) -> u32 {
        let segs = match self.rcv_wnd / (2 * self.rcv_mss.max(1)) {
            0 => 2,
            k => k,
        };
        n.min(u32::try_from(segs).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of a Linux 6.1 client with default sysctls (131 072 B of buffer, 6 MiB at
    /// most, timestamps on): a SYN window of 44 × 1460 = 64 240 B with scale 7; a clamp of
    /// 65 536 − 1 448 = 64 088 B, which is also `rcv_ssthresh`; a first period of 10 segments;
    /// and the first ACK's window, 64 128 B offered, raised to the SYN's edge rounded up to 128.
    #[test]
    fn the_initial_window_is_linuxs() {
        let cfg = TcpConfig::linux();
        assert_eq!(initial_window(&cfg), 64_240);
        assert_eq!(window_scale(&cfg), 7);
        let mut w = RcvWindow::new(&cfg);
        assert_eq!((w.clamp(), w.ssthresh(), w.space), (64_088, 64_088, 14_480));
        let mut quick = 5;
        assert_eq!(w.offer(0, &mut quick), 64_128);
        assert_eq!(w.select(0, 0, 0, &mut quick), 64_256);
        assert_eq!(quick, 5);
        // Once the edge is passed, the offer stands.
        assert_eq!(w.select(64_256, 0, 0, &mut quick), 64_128);
        // The scale also covers `net.core.rmem_max` (212 992 B): 2 for a 64 KiB buffer.
        let small = TcpConfig { rmem: 65_536, rmem_max: 65_536, ..TcpConfig::linux() };
        assert_eq!(window_scale(&small), 2);
        // Whole segments of the SYN's MSS (without timestamps, the MSS itself).
        let c = TcpConfig { timestamps: false, mss: 1000, ..TcpConfig::linux() };
        assert_eq!(initial_window(&c), 65_000);
    }

    /// No room below the initial clamp: the window does not grow until autotuning raises it;
    /// then each segment adds two.
    #[test]
    fn the_window_grows_two_segments_per_segment_once_the_clamp_rises() {
        let cfg = TcpConfig::linux();
        let m = u64::from(cfg.mss);
        let mut w = RcvWindow::new(&cfg);
        let t0 = Time::ZERO;
        w.established(t0);
        w.measure_ts(t0 + Duration::from_ms(100), Some(t0), m);
        assert_eq!(w.rtt(), Some(Duration::from_ms(100)));
        // An echo from the same millisecond tick (Linux's TSval) gives no second sample.
        w.measure_ts(t0 + Duration::from_ms(150), Some(t0 + Duration::from_us(500)), m);
        assert_eq!(w.rtt(), Some(Duration::from_ms(100)));
        w.learn_mss(m);
        assert!(!w.on_in_order(t0 + Duration::from_ms(100), m, m, 0));
        // A period of one RTT that read 20 segments (more than the first period's 10):
        // rcvwin = (40 + 16) segments, plus twice that times (20 − 10) / 10.
        w.space_adjust(t0 + Duration::from_ms(100), 20 * m);
        let rcvwin = (2 * 20 * m + 16 * m) * 3;
        assert_eq!(w.rcvbuf(), rcvwin / m * 2 * m);
        assert_eq!(w.clamp(), rcvwin / m * m);
        let before = w.ssthresh();
        assert!(w.on_in_order(t0 + Duration::from_ms(101), m, 21 * m, 0));
        assert_eq!(w.ssthresh(), before + 2 * m);
        // A period shorter than the RTT changes nothing.
        w.space_adjust(t0 + Duration::from_ms(150), 100 * m);
        assert_eq!(w.clamp(), rcvwin / m * m);
    }

    /// Data held out of order takes twice its bytes from the buffer: the offer shrinks with it,
    /// to zero when less than a segment is free, and the advertised edge never moves back.
    #[test]
    fn held_data_shrinks_the_offer_but_not_the_edge() {
        let cfg = TcpConfig::linux();
        let mut w = RcvWindow::new(&cfg);
        let mut quick = 3;
        let first = w.select(0, 0, 0, &mut quick);
        assert_eq!(first, 64_256);
        // 40 000 B held: 65 536 − 40 000 = 25 536 B free, below half the clamp.
        assert_eq!(w.offer(40_000, &mut quick), 25_472);
        assert_eq!(quick, 0, "less than half free ends quick-ACK mode");
        // The edge stays where it was.
        assert_eq!(w.select(1_000, 0, 40_000, &mut quick), 63_360);
        // Nearly everything held: no window at all.
        assert_eq!(w.offer(65_000, &mut quick), 0);
    }
}
