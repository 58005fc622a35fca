//! The TCP transport: `dcsim-tcp`'s sans-IO endpoints on hosts.
//!
//! A TCP flow has a [`dcsim_tcp::Sender`] at its source host and a [`dcsim_tcp::Receiver`] at
//! its destination. The sender's segments leave through the NIC's round robin like RoCE data
//! (one per turn, when [`Readiness::Now`]); the receiver's ACKs, and the client's handshake
//! segments, go to the NIC's control FIFO as soon as they exist. Each endpoint has one timer
//! (its earliest deadline: RTO, TLP, delayed ACK, handshake retransmission), kept as one
//! versioned `CcTimer` event with slot [`TCP_TX_TIMER`] or [`TCP_RX_TIMER`] that follows the
//! deadline lazily ([`LazyTimer`]: a deadline that moves later keeps its queued event).
//!
//! Without a handshake the flow starts at its source, which creates the sender; the receiver
//! appears with the first segment. With a handshake the flow starts at its destination (the
//! client), which sends the SYN; the sender (the server) appears with it. A TCP flow completes
//! when its receiver holds every byte in order: its FCT runs from the flow's start to that
//! instant (the application's view; RoCE flows complete at the sender's last ACK).

use dcsim_tcp::cca::CongestionControl;
use dcsim_tcp::{Readiness, Receiver, Segment, Sender};

use super::link::Paused;
use super::transport::{FlowTable, FlowTx, TxState};
use super::{Event, FlowRx, Shard, Shared, Slot};
use crate::cc::{CcFactory, FlowInit, ProbeLaw, MAX_TIMERS};
use crate::config::{TcpConfig, TcpGroup};
use crate::ids::{FlowId, PortNo};
use crate::packet::{Area, Ecn, HeaderMode, IntStack, Packet, PacketKind, TcpFields};
use crate::sim::mix64;
use crate::units::{Duration, Time};

/// Wire bytes of an INT probe before its INT area (the seed's "64 B" probe).
pub(crate) const PROBE_BYTES: u32 = 64;

/// The timer slot of a TCP sender's deadline.
pub(crate) const TCP_TX_TIMER: u8 = MAX_TIMERS as u8;
/// The timer slot of a TCP receiver's deadline.
pub(crate) const TCP_RX_TIMER: u8 = MAX_TIMERS as u8 + 1;

/// The sender side of a TCP flow.
#[derive(Clone)]
pub(crate) struct TcpTx {
    /// Index into `SimConfig::tcp_groups`.
    pub(crate) group: u16,
    /// Priority class of its packets.
    pub(crate) pg: u8,
    /// The endpoint, once the flow has started here.
    pub(crate) ep: Option<Sender>,
    /// The endpoint's deadline and its event.
    pub(crate) timer: LazyTimer,
    /// Every byte is acknowledged.
    pub(crate) done: bool,
    /// Highest payload byte sent (to count retransmitted bytes).
    pub(crate) high: u64,
    /// A persistent connection's stream: never completes, grows with each message.
    pub(crate) stream: bool,
    /// The probe-driven window law of the group, once the sender exists.
    pub(crate) probe: Option<Box<Probe>>,
    /// Its position in its host's round robin ([`super::transport::nic_pos`]).
    pub(crate) nic_pos: u32,
}

/// Per-connection state of a probe-driven window ([`crate::cc::ProbeLaw`]).
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    law: Box<dyn ProbeLaw>,
    /// When the probe now in flight was sent.
    outstanding: Option<Time>,
    /// When the last probe was sent.
    last: Option<Time>,
    /// The path's base RTT: the probe interval until the first RTT sample.
    base_rtt: Duration,
}

/// The receiver side of a TCP flow.
#[derive(Clone)]
pub(crate) struct TcpRx {
    pub(crate) group: u16,
    pub(crate) ep: Option<Receiver>,
    /// The endpoint's deadline and its event.
    pub(crate) timer: LazyTimer,
    /// Every byte has arrived (the flow's completion is recorded).
    pub(crate) done: bool,
}

impl TcpTx {
    pub(crate) fn new(group: u16, pg: u8) -> TcpTx {
        TcpTx {
            group,
            pg,
            ep: None,
            timer: LazyTimer::default(),
            done: false,
            high: 0,
            stream: false,
            probe: None,
            nic_pos: super::transport::NOT_LISTED,
        }
    }
}

impl TcpRx {
    pub(crate) fn new(group: u16) -> TcpRx {
        TcpRx { group, ep: None, timer: LazyTimer::default(), done: false }
    }
}

/// The segment a packet carries.
fn segment_of(p: &Packet) -> Segment {
    let t = p.area.tcp().copied().unwrap_or_default();
    Segment {
        seq: p.seq,
        len: p.payload,
        ack: t.ack,
        flags: t.flags,
        sack: t.sack,
        ace: t.ace,
        ecn: p.ecn,
        tsval: p.ts,
        tsecr: t.tsecr,
        wnd: t.wnd,
    }
}

/// A TCP endpoint's timer event, which follows the endpoint's deadline lazily.
///
/// An endpoint's deadline moves at almost every segment (each ACK restarts the retransmission
/// timer), nearly always later. Instead of a new event per move (the old one lapsing as stale),
/// a deadline that moves later keeps the event in the queue: when it fires early, it is put
/// back at the deadline. Only a deadline that moves earlier than the queued event gets a new
/// one.
///
/// The order of events is unchanged by this: each deadline still takes its sequence number
/// ([`Shard::next_seq`]) when it is set, as its own event did, and the event that fires at the
/// deadline carries it. So a run's outputs are those of one event per deadline; only the count
/// of events popped is smaller.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LazyTimer {
    /// The endpoint's deadline, and the sequence number it took.
    deadline: Option<Time>,
    seq: u64,
    /// When the event of this version is due, if one is queued; and whether it is the
    /// deadline's own (else it is due earlier and moves to the deadline when it fires).
    queued: Option<Time>,
    exact: bool,
    version: u32,
}

/// What a timer event found when it fired ([`LazyTimer::fire`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fired {
    /// An event of an earlier version, or of a deadline since withdrawn: nothing to do.
    Stale,
    /// The deadline moved later: the event goes back in the queue at this time and sequence
    /// number, with its version.
    Moved(Time, u64),
    /// The deadline is now: run the endpoint's timers.
    Due,
}

impl LazyTimer {
    /// The deadline followed.
    pub(crate) fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Follows a new `deadline` (different from [`LazyTimer::deadline`]) at `now`; `seq` is the
    /// sequence number taken for it (`Some` exactly when `deadline` is). Returns the event to
    /// queue, `(time, seq, version)`, if one is needed: always, for a deadline, if `eager`
    /// (the timer as it was before it was lazy, for tests).
    pub(crate) fn set(
        &mut self,
        deadline: Option<Time>,
        seq: Option<u64>,
        now: Time,
        eager: bool,
    ) -> Option<(Time, u64, u32)> {
        debug_assert_ne!(deadline, self.deadline);
        self.deadline = deadline;
        let (Some(d), Some(seq)) = (deadline, seq) else {
            debug_assert!(deadline.is_none() && seq.is_none());
            // Withdrawn: any queued event is stale.
            self.version = self.version.wrapping_add(1);
            self.queued = None;
            return None;
        };
        self.seq = seq;
        match self.queued {
            // The queued event fires first (`q >= now`, so `d >= now`), and moves here then.
            Some(q) if q <= d && !eager => {
                self.exact = false;
                None
            }
            _ => {
                self.version = self.version.wrapping_add(1);
                let at = d.max(now);
                self.queued = Some(at);
                self.exact = true;
                Some((at, seq, self.version))
            }
        }
    }

    /// The timer's event of `version` fired.
    pub(crate) fn fire(&mut self, version: u32) -> Fired {
        if version != self.version || self.queued.is_none() {
            return Fired::Stale;
        }
        if self.exact {
            self.queued = None;
            self.deadline = None;
            return Fired::Due;
        }
        let d = self.deadline.expect("a queued event follows a deadline");
        self.queued = Some(d);
        self.exact = true;
        Fired::Moved(d, self.seq)
    }
}

fn tx_mut<C>(tx: &mut FlowTable<FlowTx<C>>, flow: usize) -> &mut TcpTx {
    match &mut tx[flow] {
        FlowTx::Tcp(t) => t,
        FlowTx::Roce(_) => unreachable!("flow {flow} is a TCP flow"),
    }
}

pub(crate) fn rx_mut(rx: &mut FlowTable<FlowRx>, flow: usize) -> &mut TcpRx {
    match &mut rx[flow] {
        FlowRx::Tcp(r) => r,
        FlowRx::Roce(_) => unreachable!("flow {flow} is a TCP flow"),
    }
}

impl TcpTx {
    /// When pacing releases the next segment, if it holds one back.
    #[inline]
    pub(crate) fn wake(&self, now: Time) -> Option<Time> {
        match self.ep.as_ref()?.readiness(now) {
            Readiness::At(t) => Some(t),
            Readiness::Now | Readiness::Blocked => None,
        }
    }
}

impl<F: CcFactory> Shard<F> {
    pub(crate) fn tcp_group(sh: &Shared<F>, group: u16) -> &TcpGroup {
        &sh.cfg.tcp_groups[group as usize]
    }

    fn host_slot(sh: &Shared<F>, node: crate::ids::NodeId) -> usize {
        let Slot::Host(h) = sh.place[node.idx()].slot else { unreachable!("validated") };
        h as usize
    }

    /// A packet carrying `seg` of flow `flow`, from its sender (`forward`) or its receiver.
    fn segment_packet(
        &self,
        sh: &Shared<F>,
        flow: usize,
        seg: &Segment,
        g: &TcpGroup,
        forward: bool,
    ) -> Packet {
        let f = &sh.flows[flow];
        let (src, dst) = if forward { (f.src, f.dst) } else { (f.dst, f.src) };
        Packet {
            kind: PacketKind::Tcp,
            wire: seg.wire_bytes(&g.tcp),
            payload: seg.len,
            pg: f.pg,
            ecn: seg.ecn,
            ecn_echo: false,
            flow: FlowId(flow as u32),
            src,
            dst,
            path: sh.path_of(flow, usize::from(!forward)),
            seq: seg.seq,
            ts: seg.tsval,
            header: HeaderMode::None,
            hop: 0,
            pint: 0,
            in_port: PortNo(0),
            arrived: self.now,
            area: Area::Tcp(TcpFields {
                ack: seg.ack,
                flags: seg.flags,
                sack: seg.sack,
                ace: seg.ace,
                tsecr: seg.tsecr,
                wnd: seg.wnd,
                app: TcpFields::NO_APP,
            }),
        }
    }

    /// Starts TCP flow `flow` at its initiator: the source without a handshake (the sender
    /// may send at once), the destination with one (the client sends its SYN).
    pub(crate) fn tcp_start(&mut self, sh: &Shared<F>, flow: usize) {
        let f = sh.flows[flow];
        let FlowRx::Tcp(r) = &self.rx[flow] else { unreachable!("a TCP flow") };
        let g = Self::tcp_group(sh, r.group);
        if sh.pooled(flow) {
            let h = Self::host_slot(sh, f.dst);
            self.pool_start(sh, h, flow);
        } else if g.tcp.handshake {
            let h = Self::host_slot(sh, f.dst);
            let mut ep = Receiver::new(&g.tcp, f.size);
            ep.connect(self.now);
            rx_mut(&mut self.rx, flow).ep = Some(ep);
            self.tcp_rx_flush(sh, h, flow);
        } else {
            let h = Self::host_slot(sh, f.src);
            self.tcp_open_sender(sh, h, flow);
            self.tcp_tx_timer(sh, flow);
            self.host_send(sh, h);
        }
    }

    /// The transport parameters of flow `flow`'s group: a persistent connection's streams
    /// are established before the run, so they never shake hands.
    fn tcp_cfg(sh: &Shared<F>, group: u16, flow: usize) -> &TcpConfig {
        if flow >= sh.nlisted {
            &sh.stream_tcp[group as usize]
        } else {
            &Self::tcp_group(sh, group).tcp
        }
    }

    /// Creates flow `flow`'s sender at host slot `h` and puts it in the NIC's round robin.
    fn tcp_open_sender(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        // A pooled connection's responses come with its requests (`tcp_arrive`).
        let stream = flow >= sh.nlisted || sh.pooled(flow);
        let size = if stream { 0 } else { sh.flows[flow].size };
        let now = self.now;
        let t = tx_mut(&mut self.tx, flow);
        let g = Self::tcp_group(sh, t.group);
        let mut cca = g.cca.build();
        // A controller that draws random numbers (BBR's gain-cycle phase) gets a stream of its
        // own, fixed by the run's seed and the flow.
        cca.seed(mix64(sh.cfg.seed ^ mix64(0xbb72_0000_0000 | flow as u64)));
        let mut ep = Sender::new(Self::tcp_cfg(sh, t.group, flow), cca, size, now);
        if let Some(pc) = &g.probe {
            let f = &sh.flows[flow];
            let m = &sh.meta[flow];
            let init = FlowInit {
                line_rate: sh.net.nic_rate(f.src),
                base_rtt: m.base_rtt,
                bdp: m.bdp,
                mtu: g.tcp.mss,
                size: if flow >= sh.nlisted { u64::MAX } else { f.size },
                seed: mix64(sh.cfg.seed ^ mix64(0x9b0b_0000_0000 | flow as u64)),
            };
            let tcp = Self::tcp_cfg(sh, t.group, flow);
            let hold = u64::from(tcp.delack_segments.saturating_sub(1)) * u64::from(tcp.mss);
            let (law, w0) = pc.0.new_law(&init, hold);
            ep.set_cwnd(w0);
            t.probe =
                Some(Box::new(Probe { law, outstanding: None, last: None, base_rtt: m.base_rtt }));
        }
        t.stream = stream;
        t.ep = Some(ep);
        self.nic_join(h, flow);
    }

    /// Appends `bytes` to TCP stream flow `flow` at its sender on host slot `h`.
    pub(crate) fn tcp_stream_append(&mut self, sh: &Shared<F>, h: usize, flow: usize, bytes: u64) {
        if tx_mut(&mut self.tx, flow).ep.is_none() {
            self.tcp_open_sender(sh, h, flow);
        }
        let now = self.now;
        let t = tx_mut(&mut self.tx, flow);
        t.ep.as_mut().expect("opened").write(now, bytes);
        self.tcp_tx_timer(sh, flow);
        self.nic_touch(h, flow);
        self.host_send(sh, h);
        self.tcp_pull_wake(h, flow);
    }

    /// Builds the sender's next segment and transmits it from host slot `h`.
    pub(crate) fn tcp_send(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let now = self.now;
        let t = tx_mut(&mut self.tx, flow);
        let seg = t.ep.as_mut().and_then(|e| e.poll_transmit(now));
        let Some(seg) = seg else {
            debug_assert!(false, "a ready TCP sender yields a segment");
            return;
        };
        if seg.len > 0 {
            let len = u64::from(seg.len);
            if seg.seq < t.high {
                self.counters.data_bytes_retransmitted += len.min(t.high - seg.seq);
            }
            t.high = t.high.max(seg.end());
            self.counters.data_packets_sent += 1;
            self.counters.data_bytes_sent += len;
        }
        let g = Self::tcp_group(sh, t.group);
        let p = self.segment_packet(sh, flow, &seg, g, true);
        let pkt = self.alloc(p);
        self.host_transmit(sh, h, pkt);
        self.tcp_tx_timer(sh, flow);
        self.tcp_maybe_probe(sh, h, flow);
    }

    /// Sends an INT probe for flow `flow` on host slot `h`'s control queue if its window law
    /// wants one: data is in flight, the sender has nothing more to send now (so the probe
    /// follows the burst instead of splitting it), no probe is outstanding (or the outstanding
    /// one is older than 2·SRTT: lost), and an RTT has passed since the last.
    fn tcp_maybe_probe(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let now = self.now;
        let FlowTx::Tcp(t) = &mut self.tx[flow] else { return };
        let (Some(pr), Some(ep)) = (t.probe.as_deref_mut(), t.ep.as_ref()) else { return };
        if ep.snd_nxt() == ep.snd_una() || ep.readiness(now) == Readiness::Now {
            return;
        }
        let rtt = ep.srtt().unwrap_or(pr.base_rtt);
        if pr.outstanding.is_some_and(|s| now < s + rtt * 2)
            || pr.last.is_some_and(|s| now < s + rtt)
        {
            return;
        }
        pr.outstanding = Some(now);
        pr.last = Some(now);
        self.counters.tcp_probes += 1;
        let f = &sh.flows[flow];
        let p = Packet {
            kind: PacketKind::Tcp,
            wire: PROBE_BYTES + HeaderMode::Int.area_bytes(),
            payload: 0,
            pg: f.pg,
            ecn: Ecn::NotEct,
            ecn_echo: false,
            flow: FlowId(flow as u32),
            src: f.src,
            dst: f.dst,
            path: sh.path_of(flow, 0),
            seq: 0,
            ts: now,
            header: HeaderMode::Int,
            hop: 0,
            pint: 0,
            in_port: PortNo(0),
            arrived: now,
            area: Area::Int(IntStack::default()),
        };
        let pkt = self.alloc(p);
        self.hosts[h].ack_fifo.push_back(pkt);
        self.host_send(sh, h);
    }

    /// An INT probe of flow `flow` arrived at host slot `h`: reflected at once by the
    /// receiver; at the sender, its records set the window.
    fn tcp_probe_arrive(&mut self, sh: &Shared<F>, h: usize, pkt: u32, at_sender: bool) {
        let flow = self.pool[pkt as usize].flow.idx();
        if !at_sender {
            let path = sh.path_of(flow, 1);
            let p = &mut self.pool[pkt as usize];
            std::mem::swap(&mut p.src, &mut p.dst);
            p.path = path;
            p.hop = 0;
            // Not stamped on the way back: the echo carries the forward path's records.
            p.header = HeaderMode::None;
            self.hosts[h].ack_fifo.push_back(pkt);
            self.host_send(sh, h);
            return;
        }
        let stack = match &self.pool[pkt as usize].area {
            Area::Int(s) => *s,
            _ => IntStack::default(),
        };
        self.release(pkt);
        let now = self.now;
        let FlowTx::Tcp(t) = &mut self.tx[flow] else { return };
        let (Some(pr), Some(ep)) = (t.probe.as_deref_mut(), t.ep.as_mut()) else { return };
        pr.outstanding = None;
        if let Some(w) = pr.law.on_probe(now, &stack) {
            // Not below two segments, as TCP's own controllers (a one-segment window stalls
            // on the receiver's delayed ACK until the retransmission timer fires).
            let mss = u64::from(Self::tcp_group(sh, t.group).tcp.mss);
            ep.set_cwnd(w.max(2 * mss));
        }
        self.tcp_tx_timer(sh, flow);
        self.nic_touch(h, flow);
        self.host_send(sh, h);
        self.tcp_pull_wake(h, flow);
    }

    /// A TCP packet of flow `flow` arrived at host slot `h` (its source or its destination).
    pub(crate) fn tcp_arrive(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let flow = p.flow.idx();
        let at_sender = p.dst == sh.flows[flow].src;
        if matches!(p.area, Area::Int(_)) {
            self.tcp_probe_arrive(sh, h, pkt, at_sender);
            return;
        }
        let seg = segment_of(p);
        // A reused connection's request names its flow (only requests carry payload to a
        // sender).
        let app = if at_sender && seg.len > 0 {
            p.area.tcp().map_or(TcpFields::NO_APP, |t| t.app)
        } else {
            TcpFields::NO_APP
        };
        self.release(pkt);
        let now = self.now;
        if at_sender {
            // The client's request, if this segment carries it (ACKs carry no payload).
            self.counters.data_bytes_delivered += u64::from(seg.len);
            if tx_mut(&mut self.tx, flow).ep.is_none() {
                // The client's SYN: the server opens.
                self.tcp_open_sender(sh, h, flow);
            }
            let t = tx_mut(&mut self.tx, flow);
            let ep = t.ep.as_mut().expect("opened");
            ep.on_segment(now, &seg);
            // A reused connection's request: answered with the size of the flow it names.
            if app != TcpFields::NO_APP {
                for _ in 0..ep.take_requests() {
                    if let Some(f) = sh.flows.get(app as usize) {
                        ep.write(now, f.size);
                    }
                }
            }
            if ep.is_complete() && !t.stream {
                t.done = true;
            }
            self.tcp_tx_timer(sh, flow);
            self.nic_touch(h, flow);
            self.host_send(sh, h);
            self.tcp_pull_wake(h, flow);
        } else {
            self.counters.data_bytes_delivered += u64::from(seg.len);
            let stream = flow >= sh.nlisted;
            let size = if stream { u64::MAX } else { sh.flows[flow].size };
            let r = rx_mut(&mut self.rx, flow);
            let cfg = Self::tcp_cfg(sh, r.group, flow);
            let ep = r.ep.get_or_insert_with(|| Receiver::new(cfg, size));
            let pooled = sh.pooled(flow);
            let was_established = pooled && ep.is_established();
            ep.on_segment(now, &seg);
            if pooled {
                if !was_established && ep.is_established() {
                    self.pool_established(sh, h, flow);
                } else {
                    self.pool_progress(sh, h, flow);
                }
                self.tcp_rx_flush(sh, h, flow);
                return;
            }
            if stream {
                let delivered = ep.delivered();
                if self.stream_delivered(sh, flow, delivered) {
                    let r = rx_mut(&mut self.rx, flow);
                    r.ep.as_mut().expect("created").ack_message_end();
                }
                self.tcp_rx_flush(sh, h, flow);
                return;
            }
            let r = rx_mut(&mut self.rx, flow);
            let ep = r.ep.as_mut().expect("created");
            if ep.is_complete() && !r.done {
                r.done = true;
                self.fct.push((flow as u32, now - sh.flows[flow].start));
                self.done += 1;
            }
            self.tcp_rx_flush(sh, h, flow);
        }
    }

    /// Queues every segment the receiver (or client) of `flow` has for the wire on host slot
    /// `h`'s control FIFO, re-arms its timer and kicks the NIC.
    #[inline(always)]
    pub(crate) fn tcp_rx_flush(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let now = self.now;
        let pooled = sh.pooled(flow);
        loop {
            let r = rx_mut(&mut self.rx, flow);
            let Some(seg) = r.ep.as_mut().and_then(|e| e.poll_transmit(now)) else { break };
            if seg.len == 0 && !seg.is_syn() {
                self.counters.tcp_acks_sent += 1;
            } else if seg.len > 0 {
                // The handshake's request: payload like the sender's data (`Packet::is_data`),
                // counted as sent here and delivered at the server, so that the data bytes
                // balance when a request is dropped or still on its way.
                self.counters.data_packets_sent += 1;
                self.counters.data_bytes_sent += u64::from(seg.len);
            }
            let g = Self::tcp_group(sh, r.group);
            let mut p = self.segment_packet(sh, flow, &seg, g, false);
            if pooled && seg.len > 0 {
                if let Area::Tcp(t) = &mut p.area {
                    t.app = self.pool_serving(sh, flow);
                }
            }
            let pkt = self.alloc(p);
            self.hosts[h].ack_fifo.push_back(pkt);
        }
        self.tcp_rx_timer(sh, flow);
        self.host_send(sh, h);
    }

    /// Follows the sender's deadline with its timer event ([`LazyTimer`]).
    fn tcp_tx_timer(&mut self, sh: &Shared<F>, flow: usize) {
        let t = tx_mut(&mut self.tx, flow);
        let deadline = if t.done { None } else { t.ep.as_ref().and_then(Sender::deadline) };
        self.tcp_follow(flow, TCP_TX_TIMER, sh.flows[flow].src.0, deadline);
    }

    /// Follows the receiver's deadline with its timer event ([`LazyTimer`]).
    fn tcp_rx_timer(&mut self, sh: &Shared<F>, flow: usize) {
        let r = rx_mut(&mut self.rx, flow);
        let deadline = r.ep.as_ref().and_then(Receiver::deadline);
        self.tcp_follow(flow, TCP_RX_TIMER, sh.flows[flow].dst.0, deadline);
    }

    /// Flow `flow`'s timer of `slot` (the sender's or the receiver's).
    fn tcp_timer_mut(&mut self, flow: usize, slot: u8) -> &mut LazyTimer {
        if slot == TCP_TX_TIMER {
            &mut tx_mut(&mut self.tx, flow).timer
        } else {
            &mut rx_mut(&mut self.rx, flow).timer
        }
    }

    /// Has flow `flow`'s timer of `slot`, whose events host `node` queues, follow `deadline`.
    fn tcp_follow(&mut self, flow: usize, slot: u8, node: u32, deadline: Option<Time>) {
        if deadline == self.tcp_timer_mut(flow, slot).deadline() {
            return;
        }
        let seq = deadline.map(|_| self.next_seq(node));
        let (now, eager) = (self.now, self.eager_timers);
        match self.tcp_timer_mut(flow, slot).set(deadline, seq, now, eager) {
            Some((at, seq, version)) => {
                self.queue.push(at, seq, Event::CcTimer { flow: flow as u32, slot, version });
            }
            // A deadline followed without an event of its own ([`Shard::lapsed_until`]).
            None => {
                if let Some(d) = deadline {
                    self.lapsed_until = self.lapsed_until.max(d);
                }
            }
        }
    }

    /// A TCP timer event fired.
    pub(crate) fn tcp_timer(&mut self, sh: &Shared<F>, flow: usize, slot: u8, version: u32) {
        let now = self.now;
        let f = sh.flows[flow];
        match self.tcp_timer_mut(flow, slot).fire(version) {
            Fired::Stale => return,
            Fired::Moved(at, seq) => {
                self.queue.push(at, seq, Event::CcTimer { flow: flow as u32, slot, version });
                return;
            }
            Fired::Due => {}
        }
        if slot == TCP_TX_TIMER {
            let t = tx_mut(&mut self.tx, flow);
            if let Some(ep) = t.ep.as_mut() {
                ep.on_deadline(now);
                if ep.is_complete() && !t.stream {
                    t.done = true;
                }
            }
            let h = Self::host_slot(sh, f.src);
            self.tcp_tx_timer(sh, flow);
            self.nic_touch(h, flow);
            self.host_send(sh, h);
            self.tcp_pull_wake(h, flow);
        } else {
            let r = rx_mut(&mut self.rx, flow);
            if let Some(ep) = r.ep.as_mut() {
                ep.on_deadline(now);
            }
            let h = Self::host_slot(sh, f.dst);
            self.tcp_rx_flush(sh, h, flow);
        }
    }

    /// If pacing holds the sender's next segment until before the NIC's pending wake-up, moves
    /// the wake-up earlier (the NIC otherwise re-arms it only when it finds nothing to send).
    fn tcp_pull_wake(&mut self, h: usize, flow: usize) {
        let now = self.now;
        let FlowTx::Tcp(t) = &self.tx[flow] else { return };
        let Some(at) = t.wake(now) else { return };
        self.pull_wake(h, at);
    }
}

/// Where TCP sender `t` stands at `now`, on a host link that has `paused` these classes, for
/// the NIC scheduler ([`super::transport::tx_state`]): ready when its endpoint has something
/// for the wire now and its class is not paused; idle when the endpoint has nothing to send
/// whatever the time (`Blocked`, or not opened).
#[inline]
pub(crate) fn tcp_state(t: &TcpTx, now: Time, paused: Paused) -> TxState {
    let r = t.ep.as_ref().map(|e| e.readiness(now));
    match r {
        Some(Readiness::Now) if !paused.get(t.pg as usize) => TxState::Ready,
        _ if t.done => TxState::Finished,
        Some(Readiness::Now) => TxState::Waiting(None),
        Some(Readiness::At(at)) => TxState::Waiting(Some(at)),
        Some(Readiness::Blocked) | None => TxState::Idle,
    }
}

#[cfg(test)]
mod tests {
    use super::{Fired, LazyTimer};
    use crate::units::Time;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// The timer as it was: a new event for every change of deadline, the old one stale.
    #[derive(Default)]
    struct Eager {
        deadline: Option<Time>,
        version: u32,
    }

    /// One step of a run: the endpoint asks for a deadline `Some(now + d)` (clamped at `now`
    /// when `d < 0`, as the engine queues a past deadline now) or none; another event is
    /// queued at `now + d`, which the timer's events must keep their order against; or the
    /// queue is popped up to the next event that does something.
    #[derive(Clone, Debug)]
    enum Step {
        Set(Option<i64>),
        Other(u64),
        Pop,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            // Deadlines often equal (a tie with another event or a queued timer event).
            3 => prop_oneof![Just(None), (-1i64..6).prop_map(|d| Some(d * 5))].prop_map(Step::Set),
            2 => (0u64..6).prop_map(|d| Step::Other(d * 5)),
            3 => Just(Step::Pop),
        ]
    }

    /// The events that did something, in the order popped: `(time, seq, timer)` of each timer
    /// that came due and of each other event; and the number of events popped.
    fn run(steps: &[Step], lazy: bool) -> (Vec<(u64, u64, bool)>, usize) {
        // Events: (time, seq, Some(version) for a timer's, None for another).
        let mut q = BinaryHeap::new();
        // An event after every step's, queued again each time it is popped, so that a pop
        // never empties the queue of events that do something (the model's handlers run at
        // such events: `now`).
        const END: u64 = 1 << 40;
        q.push(Reverse((END, 0, None)));
        // `now`: the time of the last event that did something (the handler's); `last`: the
        // key of the last event popped (keys must rise strictly: none pushed into the past,
        // none twice).
        let (mut now, mut last, mut seq, mut pops) = (0u64, None, 0u64, 0usize);
        let (mut e, mut l) = (Eager::default(), LazyTimer::default());
        let mut out = Vec::new();
        let deadline = |e: &Eager, l: &LazyTimer| if lazy { l.deadline() } else { e.deadline };
        for s in steps {
            match *s {
                Step::Set(d) => {
                    let d = d.map(|d| Time(now.saturating_add_signed(d)));
                    if d == deadline(&e, &l) {
                        continue;
                    }
                    let sq = d.map(|_| {
                        seq += 1;
                        seq
                    });
                    if lazy {
                        if let Some((at, sq, v)) = l.set(d, sq, Time(now), false) {
                            q.push(Reverse((at.0, sq, Some(v))));
                        }
                    } else {
                        e.deadline = d;
                        e.version += 1;
                        if let (Some(at), Some(sq)) = (d, sq) {
                            q.push(Reverse((at.0.max(now), sq, Some(e.version))));
                        }
                    }
                }
                Step::Other(d) => {
                    seq += 1;
                    q.push(Reverse((now + d, seq, None)));
                }
                Step::Pop => {
                    // Pops up to the next event that does something (lapsed and moved timer
                    // events do nothing, and their number differs between the two timers).
                    while let Some(Reverse((t, sq, v))) = q.pop() {
                        assert!(last < Some((t, sq)), "keys rise strictly: {last:?}, {t} {sq}");
                        last = Some((t, sq));
                        pops += 1;
                        let Some(v) = v else {
                            if sq == 0 {
                                q.push(Reverse((t + END, 0, None)));
                            }
                            now = t;
                            out.push((t, sq, false));
                            break;
                        };
                        let due = if lazy {
                            match l.fire(v) {
                                Fired::Stale => false,
                                Fired::Moved(at, sq) => {
                                    q.push(Reverse((at.0, sq, Some(v))));
                                    false
                                }
                                Fired::Due => true,
                            }
                        } else if v == e.version && e.deadline.is_some() {
                            e.deadline = None;
                            true
                        } else {
                            false
                        };
                        if due {
                            assert_eq!(deadline(&e, &l), None);
                            now = t;
                            out.push((t, sq, true));
                            break;
                        }
                    }
                }
            }
        }
        (out, pops)
    }

    proptest! {
        /// The lazy timer fires each deadline at the time and in the order (its sequence
        /// number among the other events') of an event per change, and pops no more events.
        #[test]
        fn a_lazy_timer_fires_as_an_event_per_deadline(steps in prop::collection::vec(step(), 1..80)) {
            let mut steps = steps;
            steps.extend(std::iter::repeat_n(Step::Pop, 100));
            let (eager, eager_pops) = run(&steps, false);
            let (lazy, lazy_pops) = run(&steps, true);
            prop_assert_eq!(eager, lazy);
            prop_assert!(lazy_pops <= eager_pops);
        }
    }

    /// A deadline that only moves later keeps one event queued: it is put back once when it
    /// comes early, and fires at the last deadline.
    #[test]
    fn a_deadline_moved_later_keeps_its_event() {
        let mut t = LazyTimer::default();
        let (at, s1, v) = t.set(Some(Time(100)), Some(1), Time(0), false).expect("a first event");
        assert_eq!((at, s1), (Time(100), 1));
        assert_eq!(t.set(Some(Time(150)), Some(2), Time(10), false), None);
        assert_eq!(t.set(Some(Time(200)), Some(3), Time(20), false), None);
        // The event comes at 100 and moves to the last deadline with its sequence number.
        assert_eq!(t.fire(v), Fired::Moved(Time(200), 3));
        assert_eq!(t.fire(v), Fired::Due);
        assert_eq!(t.deadline(), None);
        // An earlier deadline needs a new event; the old one is stale.
        let (_, _, v1) = t.set(Some(Time(300)), Some(4), Time(200), false).expect("an event");
        let (at2, _, v2) =
            t.set(Some(Time(250)), Some(5), Time(210), false).expect("an earlier event");
        assert_eq!(at2, Time(250));
        assert_eq!(t.fire(v2), Fired::Due);
        assert_eq!(t.fire(v1), Fired::Stale);
        // Withdrawn: the queued event is stale.
        let (_, _, v3) = t.set(Some(Time(400)), Some(6), Time(260), false).expect("an event");
        assert_eq!(t.set(None, None, Time(270), false), None);
        assert_eq!(t.fire(v3), Fired::Stale);
    }
}
