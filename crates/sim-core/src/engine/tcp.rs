//! The TCP transport: `dcsim-tcp`'s sans-IO endpoints on hosts.
//!
//! A TCP flow has a [`dcsim_tcp::Sender`] at its source host and a [`dcsim_tcp::Receiver`] at
//! its destination. The sender's segments leave through the NIC's round robin like RoCE data
//! (one per turn, when [`Readiness::Now`]); the receiver's ACKs, and the client's handshake
//! segments, go to the NIC's control FIFO as soon as they exist. Each endpoint has one timer
//! (its earliest deadline: RTO, TLP, delayed ACK, handshake retransmission), kept as one
//! versioned `CcTimer` event with slot [`TCP_TX_TIMER`] or [`TCP_RX_TIMER`], re-armed only
//! when the deadline changes.
//!
//! Without a handshake the flow starts at its source, which creates the sender; the receiver
//! appears with the first segment. With a handshake the flow starts at its destination (the
//! client), which sends the SYN; the sender (the server) appears with it. A TCP flow completes
//! when its receiver holds every byte in order: its FCT runs from the flow's start to that
//! instant (the application's view; RoCE flows complete at the sender's last ACK).

use dcsim_tcp::{Readiness, Receiver, Segment, Sender};

use super::link::Paused;
use super::transport::FlowTx;
use super::{Event, FlowRx, Host, Shard, Shared, Slot};
use crate::cc::{CcFactory, MAX_TIMERS};
use crate::config::TcpGroup;
use crate::ids::{FlowId, PortNo};
use crate::packet::{Area, HeaderMode, Packet, PacketKind, TcpFields};
use crate::units::Time;

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
    /// The deadline an event is scheduled for, and that event's version.
    pub(crate) timer: Option<Time>,
    pub(crate) version: u32,
    /// Every byte is acknowledged.
    pub(crate) done: bool,
    /// Highest payload byte sent (to count retransmitted bytes).
    pub(crate) high: u64,
}

/// The receiver side of a TCP flow.
#[derive(Clone)]
pub(crate) struct TcpRx {
    pub(crate) group: u16,
    pub(crate) ep: Option<Receiver>,
    pub(crate) timer: Option<Time>,
    pub(crate) version: u32,
    /// Every byte has arrived (the flow's completion is recorded).
    pub(crate) done: bool,
}

impl TcpTx {
    pub(crate) fn new(group: u16, pg: u8) -> TcpTx {
        TcpTx { group, pg, ep: None, timer: None, version: 0, done: false, high: 0 }
    }
}

impl TcpRx {
    pub(crate) fn new(group: u16) -> TcpRx {
        TcpRx { group, ep: None, timer: None, version: 0, done: false }
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
    }
}

fn tx_mut<C>(tx: &mut [FlowTx<C>], flow: usize) -> &mut TcpTx {
    match &mut tx[flow] {
        FlowTx::Tcp(t) => t,
        FlowTx::Roce(_) => unreachable!("flow {flow} is a TCP flow"),
    }
}

fn rx_mut(rx: &mut [FlowRx], flow: usize) -> &mut TcpRx {
    match &mut rx[flow] {
        FlowRx::Tcp(r) => r,
        FlowRx::Roce(_) => unreachable!("flow {flow} is a TCP flow"),
    }
}

impl TcpTx {
    /// Whether the sender may put a segment on the wire now.
    #[inline]
    pub(crate) fn ready(&self, now: Time, paused: Paused) -> bool {
        !paused.get(self.pg as usize)
            && self.ep.as_ref().is_some_and(|e| e.readiness(now) == Readiness::Now)
    }

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
    fn tcp_group(sh: &Shared<F>, group: u16) -> &TcpGroup {
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
        let m = &sh.meta[flow];
        let (src, dst, hash_key) =
            if forward { (f.src, f.dst, m.hash_fwd) } else { (f.dst, f.src, m.hash_rev) };
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
            hash_key,
            seq: seg.seq,
            ts: self.now,
            header: HeaderMode::None,

            pint: 0,
            in_port: PortNo(0),
            arrived: self.now,
            area: Area::Tcp(TcpFields {
                ack: seg.ack,
                flags: seg.flags,
                sack: seg.sack,
                ace: seg.ace,
            }),
        }
    }

    /// Starts TCP flow `flow` at its initiator: the source without a handshake (the sender
    /// may send at once), the destination with one (the client sends its SYN).
    pub(crate) fn tcp_start(&mut self, sh: &Shared<F>, flow: usize) {
        let f = sh.flows[flow];
        let FlowRx::Tcp(r) = &self.rx[flow] else { unreachable!("a TCP flow") };
        let g = Self::tcp_group(sh, r.group);
        if g.tcp.handshake {
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

    /// Creates flow `flow`'s sender at host slot `h` and puts it in the NIC's round robin.
    fn tcp_open_sender(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let size = sh.flows[flow].size;
        let now = self.now;
        let t = tx_mut(&mut self.tx, flow);
        let g = Self::tcp_group(sh, t.group);
        t.ep = Some(Sender::new(&g.tcp, g.cca.build(), size, now));
        self.hosts[h].active.push(flow as u32);
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
    }

    /// A TCP packet of flow `flow` arrived at host slot `h` (its source or its destination).
    pub(crate) fn tcp_arrive(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let flow = p.flow.idx();
        let seg = segment_of(p);
        let at_sender = p.dst == sh.flows[flow].src;
        self.release(pkt);
        let now = self.now;
        if at_sender {
            if tx_mut(&mut self.tx, flow).ep.is_none() {
                // The client's SYN: the server opens.
                self.tcp_open_sender(sh, h, flow);
            }
            let t = tx_mut(&mut self.tx, flow);
            let ep = t.ep.as_mut().expect("opened");
            ep.on_segment(now, &seg);
            if ep.is_complete() {
                t.done = true;
            }
            self.tcp_tx_timer(sh, flow);
            self.host_send(sh, h);
            self.tcp_pull_wake(h, flow);
        } else {
            self.counters.data_bytes_delivered += u64::from(seg.len);
            let size = sh.flows[flow].size;
            let r = rx_mut(&mut self.rx, flow);
            let g = Self::tcp_group(sh, r.group);
            let ep = r.ep.get_or_insert_with(|| Receiver::new(&g.tcp, size));
            ep.on_segment(now, &seg);
            if ep.is_complete() && !r.done {
                r.done = true;
                self.fct[flow] = Some(now - sh.flows[flow].start);
                self.done += 1;
            }
            self.tcp_rx_flush(sh, h, flow);
        }
    }

    /// Queues every segment the receiver (or client) of `flow` has for the wire on host slot
    /// `h`'s control FIFO, re-arms its timer and kicks the NIC.
    fn tcp_rx_flush(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let now = self.now;
        loop {
            let r = rx_mut(&mut self.rx, flow);
            let Some(seg) = r.ep.as_mut().and_then(|e| e.poll_transmit(now)) else { break };
            if seg.len == 0 && !seg.is_syn() {
                self.counters.tcp_acks_sent += 1;
            }
            let g = Self::tcp_group(sh, r.group);
            let p = self.segment_packet(sh, flow, &seg, g, false);
            let pkt = self.alloc(p);
            self.hosts[h].ack_fifo.push_back(pkt);
        }
        self.tcp_rx_timer(sh, flow);
        self.host_send(sh, h);
    }

    /// Re-arms the sender's timer event if its deadline changed.
    fn tcp_tx_timer(&mut self, sh: &Shared<F>, flow: usize) {
        let t = tx_mut(&mut self.tx, flow);
        let deadline = if t.done { None } else { t.ep.as_ref().and_then(Sender::deadline) };
        if deadline == t.timer {
            return;
        }
        t.timer = deadline;
        t.version = t.version.wrapping_add(1);
        let version = t.version;
        if let Some(at) = deadline {
            let node = sh.flows[flow].src.0;
            let ev = Event::CcTimer { flow: flow as u32, slot: TCP_TX_TIMER, version };
            self.schedule(node, at.max(self.now), ev);
        }
    }

    /// Re-arms the receiver's timer event if its deadline changed.
    fn tcp_rx_timer(&mut self, sh: &Shared<F>, flow: usize) {
        let r = rx_mut(&mut self.rx, flow);
        let deadline = r.ep.as_ref().and_then(Receiver::deadline);
        if deadline == r.timer {
            return;
        }
        r.timer = deadline;
        r.version = r.version.wrapping_add(1);
        let version = r.version;
        if let Some(at) = deadline {
            let node = sh.flows[flow].dst.0;
            let ev = Event::CcTimer { flow: flow as u32, slot: TCP_RX_TIMER, version };
            self.schedule(node, at.max(self.now), ev);
        }
    }

    /// A TCP timer event fired.
    pub(crate) fn tcp_timer(&mut self, sh: &Shared<F>, flow: usize, slot: u8, version: u32) {
        let now = self.now;
        let f = sh.flows[flow];
        if slot == TCP_TX_TIMER {
            let t = tx_mut(&mut self.tx, flow);
            if t.version != version || t.timer.is_none() {
                return;
            }
            t.timer = None;
            if let Some(ep) = t.ep.as_mut() {
                ep.on_deadline(now);
                if ep.is_complete() {
                    t.done = true;
                }
            }
            let h = Self::host_slot(sh, f.src);
            self.tcp_tx_timer(sh, flow);
            self.host_send(sh, h);
            self.tcp_pull_wake(h, flow);
        } else {
            let r = rx_mut(&mut self.rx, flow);
            if r.version != version || r.timer.is_none() {
                return;
            }
            r.timer = None;
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
        let host = &mut self.hosts[h];
        if let Some(w) = host.wake {
            if at < w && at > now {
                host.wake = Some(at);
                host.wake_version = host.wake_version.wrapping_add(1);
                let (node, version) = (host.node, host.wake_version);
                self.schedule(node, at, Event::NicWake { node, version });
            }
        }
    }
}

/// Whether `host`'s link has paused the class of the sender (for the NIC scheduler).
#[inline]
pub(crate) fn tcp_ready<C>(t: &TcpTx, now: Time, host: &Host<C>) -> bool {
    t.ready(now, host.link.paused)
}
