//! A deterministic toy path for driving one sender and one receiver:
//!
//! ```text
//! Sender --access link--> [bottleneck FIFO: drop-tail bytes, step CE mark, random loss]
//!        --rate R, one-way delay--> Receiver --ACK delay (no queue)--> Sender
//! ```
//!
//! A tiny event loop with `(time, seq)` ordering and lazily cancelled timers.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use dcsim_tcp::cca::{BbrMode, CaState};
use dcsim_tcp::{Cca, Readiness, Receiver, Segment, Sender, TcpConfig};
use dcsim_types::{BitsPerSec, Duration, Ecn, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The path.
#[derive(Clone, Debug)]
pub struct Path {
    /// Sender NIC rate.
    pub access: BitsPerSec,
    /// Bottleneck rate.
    pub rate: BitsPerSec,
    /// Drop-tail buffer in frame bytes (the segment in service is not counted).
    pub buffer: u64,
    /// CE-mark ECT packets that arrive to a queue of at least this many bytes.
    pub mark_threshold: Option<u64>,
    /// Random loss probability of data segments at the bottleneck.
    pub loss: f64,
    /// One-way delay sender → receiver (after the bottleneck).
    pub fwd_delay: Duration,
    /// One-way delay receiver → sender.
    pub rev_delay: Duration,
    /// RNG seed.
    pub seed: u64,
}

impl Path {
    /// A path with `rate`, round-trip propagation `rtt` (split evenly) and `buffer` bytes; the
    /// access link is 10× faster.
    pub fn new(rate: BitsPerSec, rtt: Duration, buffer: u64) -> Path {
        Path {
            access: BitsPerSec(rate.get() * 10),
            rate,
            buffer,
            mark_threshold: None,
            loss: 0.0,
            fwd_delay: Duration(rtt.as_ps() / 2),
            rev_delay: Duration(rtt.as_ps() - rtt.as_ps() / 2),
            seed: 1,
        }
    }
    /// Bandwidth-delay product in bytes for the propagation RTT.
    pub fn bdp(&self) -> u64 {
        self.rate.bytes_in(self.fwd_delay + self.rev_delay)
    }
}

/// A drop decision for a forward segment: `(nth transmission of this seq, segment)`.
pub type DropFn = Box<dyn FnMut(u32, &Segment) -> bool>;

/// One recorded sender event.
#[derive(Clone, Copy, Debug)]
pub struct AckTrace {
    pub t: Time,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub state: CaState,
    pub snd_una: u64,
    /// DCTCP's or Prague's α after the ACK (`None` for other controllers).
    pub alpha: Option<f64>,
    /// BBR's mode and bandwidth estimate (payload bytes per second) after the ACK.
    pub bbr: Option<(BbrMode, u64)>,
}

/// One transmitted data segment.
#[derive(Clone, Copy, Debug)]
pub struct TxTrace {
    pub t: Time,
    pub seq: u64,
    pub len: u32,
    /// How many times this seq was sent before.
    pub nth: u32,
}

/// What a run produced.
pub struct Run {
    pub tx: Sender,
    pub rx: Receiver,
    pub cfg: TcpConfig,
    pub acks: Vec<AckTrace>,
    pub sent: Vec<TxTrace>,
    pub drops: u64,
    pub dropped_payload: u64,
    pub marks: u64,
    /// Payload bytes delivered in order at the receiver, sampled at each data arrival.
    pub delivered_at: Vec<(Time, u64)>,
    /// Bottleneck busy time (frame transmission time summed).
    pub busy: Duration,
    pub busy_trace: Vec<(Time, Duration)>,
    pub end: Time,
    pub complete_at: Option<Time>,
    pub first_drop_at: Option<Time>,
}

#[derive(Debug)]
enum Ev {
    NicFree,
    NicWake,
    AtBottleneck(Segment),
    BottleneckDone,
    AtReceiver(Segment),
    AtSender(Segment),
    TxTimer(u64),
    RxTimer(u64),
}

struct Sim {
    now: Time,
    seq: u64,
    heap: BinaryHeap<Reverse<(Time, u64)>>,
    evs: HashMap<u64, Ev>,
}

impl Sim {
    fn at(&mut self, t: Time, e: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq)));
        self.evs.insert(self.seq, e);
    }
}

/// Options of a run.
pub struct Opts {
    pub cfg: TcpConfig,
    pub cca: Cca,
    pub bytes: u64,
    pub path: Path,
    pub until: Time,
    pub drop: Option<DropFn>,
    /// Drop ACKs (receiver → sender) with this probability.
    pub ack_loss: f64,
    pub trace_acks: bool,
}

impl Opts {
    pub fn new(cfg: TcpConfig, cca: impl Into<Cca>, bytes: u64, path: Path) -> Opts {
        Opts {
            cfg,
            cca: cca.into(),
            bytes,
            path,
            until: Time::from_ns(1_000_000_000_000),
            drop: None,
            ack_loss: 0.0,
            trace_acks: true,
        }
    }
}

/// Runs one flow until the network drains or `until`.
pub fn run(mut o: Opts) -> Run {
    let cfg = o.cfg.clone();
    let p = o.path.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut tx = Sender::new(&cfg, o.cca.clone(), o.bytes, Time::ZERO);
    let mut rx = Receiver::new(&cfg, o.bytes);
    let mut sim = Sim { now: Time::ZERO, seq: 0, heap: BinaryHeap::new(), evs: HashMap::new() };
    let mut r = Run {
        tx: tx.clone(),
        rx: rx.clone(),
        cfg: cfg.clone(),
        acks: Vec::new(),
        sent: Vec::new(),
        drops: 0,
        dropped_payload: 0,
        marks: 0,
        delivered_at: Vec::new(),
        busy: Duration::ZERO,
        busy_trace: Vec::new(),
        end: Time::ZERO,
        complete_at: None,
        first_drop_at: None,
    };
    let mut nic_busy = false;
    let mut nic_wake: Option<Time> = None;
    let mut queue: std::collections::VecDeque<Segment> = Default::default();
    let mut qbytes = 0u64;
    let mut link_busy = false;
    let mut tx_ver = 0u64;
    let mut tx_timer: Option<Time> = None;
    let mut rx_ver = 0u64;
    let mut rx_timer: Option<Time> = None;
    let mut nth: HashMap<u64, u32> = HashMap::new();
    let mut syn_nth = 0u32;

    if cfg.handshake {
        rx.connect(Time::ZERO);
    }
    // Kick everything once.
    sim.at(Time::ZERO, Ev::NicFree);
    sim.at(Time::ZERO, Ev::RxTimer(u64::MAX));

    while let Some(Reverse((t, id))) = sim.heap.pop() {
        if t > o.until {
            break;
        }
        sim.now = t;
        let now = t;
        let ev = sim.evs.remove(&id).expect("event");
        let mut kick_nic = false;
        let mut check_tx_timer = false;
        let mut drain_rx = false;
        match ev {
            Ev::NicFree => {
                nic_busy = false;
                kick_nic = true;
            }
            Ev::NicWake => {
                if nic_wake.is_some_and(|w| w <= now) {
                    nic_wake = None;
                    kick_nic = true;
                }
            }
            Ev::AtBottleneck(mut seg) => {
                let size = u64::from(seg.wire_bytes(&cfg));
                let n = if seg.len > 0 {
                    nth.get(&seg.seq).copied().unwrap_or(1) - 1
                } else {
                    let c = syn_nth;
                    syn_nth += u32::from(seg.is_syn());
                    c
                };
                let mut drop = false;
                if let Some(f) = o.drop.as_mut() {
                    drop |= f(n, &seg);
                }
                if seg.len > 0 && p.loss > 0.0 && rng.gen::<f64>() < p.loss {
                    drop = true;
                }
                if !drop && qbytes + size > p.buffer && link_busy {
                    drop = true;
                }
                if drop {
                    r.drops += 1;
                    r.dropped_payload += u64::from(seg.len);
                    r.first_drop_at.get_or_insert(now);
                } else {
                    if let Some(k) = p.mark_threshold {
                        if qbytes >= k && seg.ecn.is_ect() {
                            seg.ecn = Ecn::Ce;
                            r.marks += 1;
                        }
                    }
                    if link_busy {
                        queue.push_back(seg);
                        qbytes += size;
                    } else {
                        link_busy = true;
                        let d = p.rate.tx_time(size);
                        r.busy += d;
                        sim.at(now + d, Ev::BottleneckDone);
                        queue.push_front(seg);
                    }
                }
            }
            Ev::BottleneckDone => {
                let seg = queue.pop_front().expect("segment in service");
                sim.at(now + p.fwd_delay, Ev::AtReceiver(seg));
                if let Some(next) = queue.front() {
                    let size = u64::from(next.wire_bytes(&cfg));
                    qbytes -= size;
                    let d = p.rate.tx_time(size);
                    r.busy += d;
                    sim.at(now + d, Ev::BottleneckDone);
                } else {
                    link_busy = false;
                }
                r.busy_trace.push((now, r.busy));
            }
            Ev::AtReceiver(seg) => {
                rx.on_segment(now, &seg);
                if seg.len > 0 {
                    r.delivered_at.push((now, rx.delivered()));
                }
                if rx.is_complete() && r.complete_at.is_none() {
                    r.complete_at = Some(now);
                }
                drain_rx = true;
            }
            Ev::AtSender(seg) => {
                tx.on_segment(now, &seg);
                if o.trace_acks {
                    r.acks.push(AckTrace {
                        t: now,
                        cwnd: tx.cwnd(),
                        ssthresh: tx.ssthresh(),
                        state: tx.ca_state(),
                        snd_una: tx.snd_una(),
                        alpha: match tx.cca() {
                            Cca::Dctcp(d) => Some(d.alpha()),
                            Cca::Prague(p) => Some(p.alpha()),
                            _ => None,
                        },
                        bbr: match tx.cca() {
                            Cca::Bbr(b) => Some((b.mode(), b.bw_bytes_per_sec(u64::from(cfg.mss)))),
                            _ => None,
                        },
                    });
                }
                kick_nic = true;
                check_tx_timer = true;
            }
            Ev::TxTimer(v) => {
                if v == tx_ver && tx_timer.is_some_and(|d| d <= now) {
                    tx_timer = None;
                    tx.on_deadline(now);
                    kick_nic = true;
                    check_tx_timer = true;
                }
            }
            Ev::RxTimer(v) => {
                if v == u64::MAX || (v == rx_ver && rx_timer.is_some_and(|d| d <= now)) {
                    rx_timer = None;
                    rx.on_deadline(now);
                    drain_rx = true;
                }
            }
        }
        if drain_rx {
            while let Some(a) = rx.poll_transmit(now) {
                if o.ack_loss > 0.0 && rng.gen::<f64>() < o.ack_loss {
                    continue;
                }
                sim.at(now + p.rev_delay, Ev::AtSender(a));
            }
            let d = rx.deadline();
            if d != rx_timer {
                rx_timer = d;
                rx_ver += 1;
                if let Some(d) = d {
                    sim.at(d.max(now), Ev::RxTimer(rx_ver));
                }
            }
        }
        if kick_nic && !nic_busy {
            match tx.readiness(now) {
                Readiness::Now => {
                    let seg = tx.poll_transmit(now).expect("readiness said Now");
                    if seg.len > 0 {
                        let c = nth.entry(seg.seq).or_insert(0);
                        r.sent.push(TxTrace { t: now, seq: seg.seq, len: seg.len, nth: *c });
                        *c += 1;
                    }
                    let d = p.access.tx_time(u64::from(seg.wire_bytes(&cfg)));
                    nic_busy = true;
                    sim.at(now + d, Ev::NicFree);
                    sim.at(now + d, Ev::AtBottleneck(seg));
                }
                Readiness::At(w) => {
                    if nic_wake.is_none_or(|x| x != w) {
                        nic_wake = Some(w);
                        sim.at(w, Ev::NicWake);
                    }
                }
                Readiness::Blocked => {}
            }
            check_tx_timer = true;
        }
        if check_tx_timer {
            let d = tx.deadline();
            if d != tx_timer {
                tx_timer = d;
                tx_ver += 1;
                if let Some(d) = d {
                    sim.at(d.max(now), Ev::TxTimer(tx_ver));
                }
            }
        }
        r.end = now;
    }
    r.tx = tx;
    r.rx = rx;
    r
}

impl Run {
    /// Bottleneck utilisation over `[from, to]`, from the busy-time trace.
    pub fn utilisation(&self, from: Time, to: Time) -> f64 {
        let at = |t: Time| -> Duration {
            let i = self.busy_trace.partition_point(|&(x, _)| x <= t);
            if i == 0 {
                Duration::ZERO
            } else {
                self.busy_trace[i - 1].1
            }
        };
        (at(to) - at(from)).as_secs_f64() / (to - from).as_secs_f64()
    }

    /// Recovery episodes `(enter, exit)` from the ACK trace.
    pub fn recoveries(&self) -> Vec<(Time, Time)> {
        let mut out = Vec::new();
        let mut start = None;
        for a in &self.acks {
            match (a.state == CaState::Recovery, start) {
                (true, None) => start = Some(a.t),
                (false, Some(s)) => {
                    out.push((s, a.t));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    /// cwnd (bytes) of the last ACK at or before `t`.
    pub fn cwnd_at(&self, t: Time) -> u64 {
        let i = self.acks.partition_point(|a| a.t <= t);
        if i == 0 {
            return u64::from(self.cfg.iw) * u64::from(self.cfg.mss);
        }
        self.acks[i - 1].cwnd
    }
}

/// Milliseconds.
pub fn ms(x: u64) -> Duration {
    Duration::from_ms(x)
}
/// Microseconds.
pub fn us(x: u64) -> Duration {
    Duration::from_us(x)
}
/// An instant in milliseconds.
pub fn at_ms(x: u64) -> Time {
    Time::ZERO + Duration::from_ms(x)
}
