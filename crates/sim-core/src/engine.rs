//! The engine: node state, the per-shard event loop and every handler.
//!
//! A [`Shard`] owns a group of nodes (all of them in a sequential run) with their event queue,
//! packet pool, queue pairs and counters; the immutable facts of the run ([`Shared`]) are
//! shared by all shards. A packet sent over a link whose far end belongs to another shard
//! leaves through the shard's outbox and is delivered into the other shard's queue at the next
//! window boundary (see `sim.rs`), with the same `(time, seq)` key it would have had in a
//! sequential run, so the order of events at every node is the same for any partitioning.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit, TimerOp, MAX_TIMERS};
use crate::config::{FlowSpec, SimConfig, WindowMode};
use crate::event::{BinaryHeapQueue, EventQueue};
use crate::ids::{FlowId, NodeId, PortNo};
use crate::mmu::{Admit, Mmu, QUEUES};
use crate::network::{Network, RoutingTable};
use crate::packet::{HeaderMode, IntHop, IntStack, Packet, PacketKind, PFC_FRAME};
use crate::results::{Counters, HopSample};
use crate::sim::{mix64, murmur3_32};
use crate::telemetry::{PortUtil, UtilCodec};
use crate::units::{BitsPerSec, Duration, Time};

/// Events. Compact (at most 16 bytes): packets live in a pool and are named by index.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The packet at the head of the link leaving `port` of `node`, `pkt`, has been fully
    /// received by the node at the other end. (Packets on a link arrive in order, so only the
    /// head of each link's in-flight FIFO sits in the event queue; `pkt` lets the loop
    /// prefetch it without looking at the link.)
    Arrive { node: u32, port: u16, pkt: u32 },
    /// A packet that crossed from another shard, `pkt` in this shard's pool, has been fully
    /// received on `port` of `node`.
    Deliver { node: u32, port: u16, pkt: u32 },
    /// `port` of `node` finished transmitting.
    TxDone { node: u32, port: u16 },
    /// Flow `flow` starts (at its source host).
    FlowStart { flow: u32 },
    /// NIC pacing wake-up at host `node` (stale unless `version` matches).
    NicWake { node: u32, version: u32 },
    /// Congestion-control timer `slot` of flow `flow` (stale unless `version` matches).
    CcTimer { flow: u32, slot: u8, version: u32 },
}

/// Hints the CPU to load `p`'s cache line.
#[inline(always)]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults or changes memory, and `p` is a
    // valid reference anyway. SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (p as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Transmit side of one port, common to hosts and switches.
pub(crate) struct Link {
    pub(crate) rate: BitsPerSec,
    pub(crate) delay: Duration,
    pub(crate) peer: u32,
    pub(crate) peer_port: u16,
    pub(crate) loss: f64,
    /// The port is transmitting until this time.
    pub(crate) busy_until: Time,
    /// A `TxDone` event is pending for this port (switch ports schedule one only when frames
    /// wait behind the one on the wire).
    pub(crate) txdone_pending: bool,
    /// Priorities paused by PFC frames received on this port.
    pub(crate) paused: [bool; QUEUES],
    /// Bytes transmitted so far (INT `tx_bytes`).
    pub(crate) tx_bytes: u64,
    /// Frames transmitted so far.
    pub(crate) tx_frames: u64,
    /// Data frames transmitted so far.
    pub(crate) tx_data_frames: u64,
    /// Frames on the wire towards the peer: (arrival time, event seq, packet), in order.
    pub(crate) flight: VecDeque<(Time, u64, u32)>,
    pub(crate) rng: ChaCha8Rng,
}

/// A switch egress port.
pub(crate) struct SwitchPort {
    pub(crate) link: Link,
    pub(crate) queues: [VecDeque<u32>; QUEUES],
    pub(crate) rr_last: usize,
    /// Bytes queued over all priorities (INT `qlen`).
    pub(crate) queued: u64,
    /// PINT utilisation EWMA (HPCC-PINT only).
    pub(crate) util: PortUtil,
    pub(crate) ecn: Option<(u64, u64, f64)>,
}

pub(crate) struct Switch {
    pub(crate) node: u32,
    pub(crate) ports: Vec<SwitchPort>,
    pub(crate) mmu: Mmu,
    pub(crate) hash_seed: u32,
}

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
}

impl<C> Qp<C> {
    /// A copy of a not-yet-started queue pair (no congestion-control state yet).
    pub(crate) fn unstarted_copy(&self) -> Qp<C> {
        debug_assert!(self.cc.is_none());
        Qp { cc: None, ..*self }
    }
}

/// Receiver state of one flow.
#[derive(Clone, Copy, Default)]
pub(crate) struct Rx {
    pub(crate) expected: u64,
    pub(crate) nack_timer: Time,
    pub(crate) last_nack: u64,
}

pub(crate) struct Host<C> {
    pub(crate) node: u32,
    pub(crate) link: Link,
    pub(crate) ack_fifo: VecDeque<u32>,
    /// Queue pairs in round-robin order (flow ids), including finished ones not yet compacted.
    pub(crate) active: Vec<u32>,
    pub(crate) rr_last: usize,
    pub(crate) wake: Option<Time>,
    pub(crate) wake_version: u32,
    pub(crate) _cc: std::marker::PhantomData<C>,
}

/// Static per-flow facts.
pub(crate) struct FlowMeta {
    pub(crate) hash_fwd: [u32; 3],
    pub(crate) hash_rev: [u32; 3],
    pub(crate) base_rtt: Duration,
    pub(crate) bdp: u64,
    /// Record this flow's data packets at every switch ([`HopSample`]).
    pub(crate) traced: bool,
}

#[derive(Clone, Copy)]
pub(crate) enum Slot {
    Host(u32),
    Switch(u32),
}

/// Where a node lives: its shard and its index among that shard's hosts or switches.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    pub(crate) shard: u32,
    pub(crate) slot: Slot,
}

/// The immutable facts of a run, shared by every shard.
pub(crate) struct Shared<F: CcFactory> {
    pub(crate) cfg: SimConfig,
    pub(crate) net: Network,
    pub(crate) routes: RoutingTable,
    pub(crate) header: HeaderMode,
    /// PINT codec, the EWMA window (max base RTT, ps) and whether the digest is one byte, in
    /// [`HeaderMode::Pint`].
    pub(crate) pint: Option<(UtilCodec, u64, bool)>,
    pub(crate) factory: F,
    pub(crate) flows: Vec<FlowSpec>,
    pub(crate) meta: Vec<FlowMeta>,
    pub(crate) place: Vec<Place>,
    /// Some flow is traced ([`FlowMeta::traced`]); spares the per-hop lookup otherwise.
    pub(crate) tracing: bool,
}

/// A packet leaving a shard: delivered to `node`'s `port` at `at` with key `seq`.
pub(crate) struct Crossing {
    pub(crate) at: Time,
    pub(crate) seq: u64,
    pub(crate) node: u32,
    pub(crate) port: u16,
    pub(crate) pkt: Packet,
}

/// The mutable state of a group of nodes and their event loop.
pub(crate) struct Shard<F: CcFactory> {
    pub(crate) id: u32,
    pub(crate) now: Time,
    pub(crate) queue: BinaryHeapQueue<Event>,
    /// Per-node scheduling counters (indexed by node id; only this shard's nodes are used).
    pub(crate) node_seq: Vec<u64>,
    pub(crate) hosts: Vec<Host<F::Cc>>,
    pub(crate) switches: Vec<Switch>,
    pub(crate) pool: Vec<Packet>,
    pub(crate) free: Vec<u32>,
    /// Queue pairs by flow id (only flows sourced in this shard are used).
    pub(crate) qps: Vec<Qp<F::Cc>>,
    /// Receiver states by flow id (only flows destined to this shard are used).
    pub(crate) rx: Vec<Rx>,
    /// Completion times of this shard's flows.
    pub(crate) fct: Vec<Option<Duration>>,
    /// Flow starts not yet in the event queue, latest first: (start, seq, flow).
    pub(crate) pending_starts: Vec<(Time, u64, u32)>,
    pub(crate) counters: Counters,
    pub(crate) done: usize,
    /// Packets for other shards, by target shard, sent during the current window.
    pub(crate) outbox: Vec<Vec<Crossing>>,
    /// Hop samples of traced flows, in the order this shard recorded them.
    pub(crate) hop_trace: Vec<HopSample>,
}

impl<F: CcFactory> Shard<F> {
    /// Processes this shard's events with time `< end` and `<= stop`.
    pub(crate) fn run_window(&mut self, sh: &Shared<F>, end: Time, stop: Time) {
        while let Some(at) = self.queue.peek_time() {
            if at >= end || at > stop {
                break;
            }
            let (at, _, ev) = self.queue.pop().expect("peeked");
            self.now = at;
            self.counters.events += 1;
            self.prefetch_next(sh);
            self.dispatch(sh, ev);
        }
    }

    /// Starts loading the packet the next event will handle, if it is a link arrival, so that
    /// the cache miss on the pooled packet overlaps with the current event's work.
    #[inline]
    fn prefetch_next(&mut self, sh: &Shared<F>) {
        match self.queue.peek_event() {
            Some(&Event::Arrive { pkt, .. }) => prefetch(&self.pool[pkt as usize]),
            Some(&Event::TxDone { node, port }) => {
                // Most likely the head of the first non-empty queue goes next.
                if let Slot::Switch(s) = sh.place[node as usize].slot {
                    let p = &self.switches[s as usize].ports[port as usize];
                    if let Some(&pkt) = p.queues.iter().find_map(|q| q.front()) {
                        prefetch(&self.pool[pkt as usize]);
                    }
                }
            }
            _ => {}
        }
    }

    /// Takes in packets other shards sent to this one.
    pub(crate) fn ingest(&mut self, c: Crossing) {
        let pkt = self.alloc(c.pkt);
        self.queue.push(c.at, c.seq, Event::Deliver { node: c.node, port: c.port, pkt });
    }

    /// Packets sent to other shards and not yet delivered.
    pub(crate) fn outgoing(&self) -> impl Iterator<Item = &Crossing> {
        self.outbox.iter().flatten()
    }

    // ----- scheduling ------------------------------------------------------------------

    #[inline]
    pub(crate) fn next_seq(&mut self, origin: u32) -> u64 {
        let c = &mut self.node_seq[origin as usize];
        let seq = (*c << 24) | origin as u64;
        *c += 1;
        seq
    }

    pub(crate) fn push_next_start(&mut self) {
        if let Some(&(t, seq, flow)) = self.pending_starts.last() {
            self.queue.push(t, seq, Event::FlowStart { flow });
        }
    }

    #[inline]
    fn schedule(&mut self, origin: u32, at: Time, ev: Event) {
        let seq = self.next_seq(origin);
        self.queue.push(at, seq, ev);
    }

    #[inline]
    fn link_mut(&mut self, sh: &Shared<F>, node: u32, port: u16) -> &mut Link {
        match sh.place[node as usize].slot {
            Slot::Host(h) => &mut self.hosts[h as usize].link,
            Slot::Switch(s) => &mut self.switches[s as usize].ports[port as usize].link,
        }
    }

    #[inline]
    fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.pool[i as usize] = p;
                i
            }
            None => {
                self.pool.push(p);
                (self.pool.len() - 1) as u32
            }
        }
    }

    #[inline]
    fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    fn dispatch(&mut self, sh: &Shared<F>, ev: Event) {
        match ev {
            Event::Deliver { node, port, pkt } => match sh.place[node as usize].slot {
                Slot::Host(h) => self.host_arrive(sh, h as usize, pkt),
                Slot::Switch(s) => self.switch_arrive(sh, s as usize, port as usize, pkt),
            },
            Event::Arrive { node, port, pkt } => {
                let link = self.link_mut(sh, node, port);
                let (_, _, head) = link.flight.pop_front().expect("an arrival has a frame");
                debug_assert_eq!(head, pkt, "the event names the link's head frame");
                let (peer, peer_port) = (link.peer, link.peer_port);
                if let Some(&(t, seq, next)) = link.flight.front() {
                    self.queue.push(t, seq, Event::Arrive { node, port, pkt: next });
                }
                match sh.place[peer as usize].slot {
                    Slot::Host(h) => self.host_arrive(sh, h as usize, pkt),
                    Slot::Switch(s) => self.switch_arrive(sh, s as usize, peer_port as usize, pkt),
                }
            }
            Event::TxDone { node, port } => match sh.place[node as usize].slot {
                Slot::Host(h) => {
                    self.hosts[h as usize].link.txdone_pending = false;
                    self.host_send(sh, h as usize);
                }
                Slot::Switch(s) => {
                    self.switches[s as usize].ports[port as usize].link.txdone_pending = false;
                    self.switch_send(sh, s as usize, port as usize);
                }
            },
            Event::FlowStart { flow } => {
                self.pending_starts.pop();
                self.push_next_start();
                self.flow_start(sh, flow as usize)
            }
            Event::NicWake { node, version } => {
                let Slot::Host(h) = sh.place[node as usize].slot else { unreachable!() };
                let host = &mut self.hosts[h as usize];
                if host.wake_version == version && host.wake.is_some() {
                    host.wake = None;
                    self.host_send(sh, h as usize);
                }
            }
            Event::CcTimer { flow, slot, version } => {
                self.cc_timer(sh, flow as usize, slot, version)
            }
        }
    }

    /// Puts packet `pkt` on the wire of port `port` of `node`, now; returns when the port is
    /// free again. The caller decides whether it needs a `TxDone` event then.
    #[inline]
    fn transmit(&mut self, sh: &Shared<F>, node: u32, port: u16, pkt: u32) -> Time {
        let wire = self.pool[pkt as usize].wire as u64;
        let seq = self.next_seq(node);
        let now = self.now;
        let id = self.id;
        let link = self.link_mut(sh, node, port);
        let done = now + link.rate.tx_time(wire);
        link.busy_until = done;
        let at = done + link.delay;
        let (peer, peer_port) = (link.peer, link.peer_port);
        self.counters.frames_transmitted += 1;
        let shard = sh.place[peer as usize].shard;
        if shard != id {
            // The far end belongs to another shard: hand the packet over at the next window.
            let p = self.pool[pkt as usize];
            self.release(pkt);
            let c = Crossing { at, seq, node: peer, port: peer_port, pkt: p };
            self.outbox[shard as usize].push(c);
            return done;
        }
        let link = self.link_mut(sh, node, port);
        let first = link.flight.is_empty();
        link.flight.push_back((at, seq, pkt));
        if first {
            self.queue.push(at, seq, Event::Arrive { node, port, pkt });
        }
        done
    }

    /// Applies the per-link loss model on arrival; returns true if the frame is lost.
    #[inline]
    fn lost(link: &mut Link) -> bool {
        link.loss > 0.0 && link.rng.gen::<f64>() < link.loss
    }

    fn drop_packet(&mut self, pkt: u32) {
        let p = &self.pool[pkt as usize];
        if p.kind == PacketKind::Data {
            self.counters.data_bytes_dropped += p.payload as u64;
        }
        self.release(pkt);
    }

    // ----- switch ----------------------------------------------------------------------

    fn switch_arrive(&mut self, sh: &Shared<F>, s: usize, inp: usize, pkt: u32) {
        let sw = &mut self.switches[s];
        if Self::lost(&mut sw.ports[inp].link) {
            self.counters.link_losses += 1;
            self.drop_packet(pkt);
            return;
        }
        let p = &self.pool[pkt as usize];
        let (kind, dst, hash_key, pg, wire) = (p.kind, p.dst, p.hash_key, p.pg, p.wire);
        if let PacketKind::Pfc { pause, queue } = kind {
            self.release(pkt);
            let link = &mut self.switches[s].ports[inp].link;
            link.paused[queue as usize] = pause;
            if !pause {
                self.switch_send(sh, s, inp);
            }
            return;
        }
        let node = NodeId(sw.node);
        let dst = sh.net.host_index(dst).expect("packets are addressed to hosts");
        let hops = sh.routes.next_hops(node, dst);
        if hops.is_empty() {
            self.counters.no_route_drops += 1;
            self.drop_packet(pkt);
            return;
        }
        let out = if hops.len() == 1 {
            hops[0].idx()
        } else {
            hops[murmur3_32(&hash_key, sw.hash_seed) as usize % hops.len()].idx()
        };
        let q = pg as usize;
        if q != 0 {
            match sw.mmu.admit(inp, out, q, wire as u64) {
                Admit::Drop => {
                    self.counters.mmu_drops += 1;
                    self.drop_packet(pkt);
                    return;
                }
                Admit::Pause => {
                    self.counters.pfc_pauses += 1;
                    self.switch_send_pfc(sh, s, inp, true, q as u8);
                }
                Admit::Ok => {}
            }
        }
        let p = &mut self.pool[pkt as usize];
        p.in_port = PortNo(inp as u16);
        p.arrived = self.now;
        let port = &mut self.switches[s].ports[out];
        port.queues[q].push_back(pkt);
        port.queued += wire as u64;
        self.switch_send(sh, s, out);
    }

    fn switch_send_pfc(&mut self, sh: &Shared<F>, s: usize, port: usize, pause: bool, queue: u8) {
        let sw_node = NodeId(self.switches[s].node);
        let pkt = self.alloc(Packet {
            kind: PacketKind::Pfc { pause, queue },
            wire: PFC_FRAME,
            payload: 0,
            pg: 0,
            ce: false,
            ecn_echo: false,
            flow: FlowId(u32::MAX),
            src: sw_node,
            dst: sw_node,
            hash_key: [0; 3],
            seq: 0,
            ts: self.now,
            int: IntStack::default(),
            pint: 0,
            in_port: PortNo(port as u16),
            arrived: self.now,
        });
        let p = &mut self.switches[s].ports[port];
        p.queues[0].push_back(pkt);
        p.queued += PFC_FRAME as u64;
        self.switch_send(sh, s, port);
    }

    fn switch_send(&mut self, sh: &Shared<F>, s: usize, out: usize) {
        let sw = &mut self.switches[s];
        let port = &mut sw.ports[out];
        if port.link.busy_until > self.now {
            // Come back when the frame on the wire is out (once).
            if !port.link.txdone_pending {
                port.link.txdone_pending = true;
                let (node, at) = (sw.node, port.link.busy_until);
                self.schedule(node, at, Event::TxDone { node, port: out as u16 });
            }
            return;
        }
        let q = if !port.queues[0].is_empty() {
            0
        } else {
            let mut found = None;
            for k in 0..QUEUES - 1 {
                let q = (port.rr_last + k) % (QUEUES - 1) + 1;
                if !port.queues[q].is_empty() && !port.link.paused[q] {
                    found = Some(q);
                    break;
                }
            }
            match found {
                Some(q) => {
                    port.rr_last = q;
                    q
                }
                None => return,
            }
        };
        let pkt = port.queues[q].pop_front().expect("non-empty queue");
        let wire = self.pool[pkt as usize].wire as u64;
        port.queued -= wire;
        if q != 0 {
            let inp = self.pool[pkt as usize].in_port.idx();
            let resume = sw.mmu.release(inp, out, q, wire);
            let port = &mut sw.ports[out];
            if let Some((kmin, kmax, pmax)) = port.ecn {
                let e = sw.mmu.egress_bytes(out, q);
                let mark = if e > kmax {
                    true
                } else if e > kmin {
                    let p = pmax * (e - kmin) as f64 / (kmax - kmin) as f64;
                    port.link.rng.gen::<f64>() < p
                } else {
                    false
                };
                if mark {
                    self.pool[pkt as usize].ce = true;
                    self.counters.ecn_marks += 1;
                }
            }
            if resume {
                self.counters.pfc_resumes += 1;
                self.switch_send_pfc(sh, s, inp, false, q as u8);
            }
        }
        let sw = &mut self.switches[s];
        let port = &mut sw.ports[out];
        let pk = &mut self.pool[pkt as usize];
        if sh.header == HeaderMode::Int && pk.kind == PacketKind::Data {
            pk.int.push(IntHop {
                rate: port.link.rate,
                time: self.now,
                tx_bytes: port.link.tx_bytes,
                qlen: port.queued,
            });
        }
        if let Some((codec, t, one_byte)) = &sh.pint {
            if pk.kind == PacketKind::Data {
                let u = port.util.update(self.now.0, port.link.rate.0, port.queued, *t);
                let mut p = codec.encode(u, &mut port.link.rng);
                if *one_byte {
                    p &= 0xff; // one-byte digest: the reference writes only the low byte
                }
                pk.pint = pk.pint.max(p);
            }
            port.util.last_ts = self.now.0;
            port.util.last_size = wire;
        }
        let traced = sh.tracing && pk.kind == PacketKind::Data && sh.meta[pk.flow.idx()].traced;
        // Read the trace fields (another cache line of the packet) only for traced flows.
        let trace = if traced { Some((pk.flow, pk.seq, pk.ts, pk.arrived)) } else { None };
        port.link.tx_bytes += wire;
        port.link.tx_frames += 1;
        port.link.tx_data_frames += (pk.kind == PacketKind::Data) as u64;
        let backlog = port.queued > 0 && !port.link.txdone_pending;
        let node = sw.node;
        let done = self.transmit(sh, node, out as u16, pkt);
        if let Some((flow, seq, origin, arrived)) = trace {
            let (node, sent, latency) = (NodeId(node), self.now, done - arrived);
            self.hop_trace.push(HopSample { flow, seq, origin, node, sent, latency });
        }
        if backlog {
            self.switches[s].ports[out].link.txdone_pending = true;
            self.schedule(node, done, Event::TxDone { node, port: out as u16 });
        }
    }

    // ----- host ------------------------------------------------------------------------

    fn flow_start(&mut self, sh: &Shared<F>, flow: usize) {
        let f = sh.flows[flow];
        let m = &sh.meta[flow];
        let init = FlowInit {
            line_rate: self.qps[flow].max_rate,
            base_rtt: m.base_rtt,
            bdp: m.bdp,
            mtu: sh.cfg.nic.mtu,
            size: f.size,
            seed: mix64(sh.cfg.seed ^ mix64(0x5eed_0000_0000 | flow as u64)),
        };
        self.qps[flow].cc = Some(sh.factory.new_flow(&init));
        self.qps[flow].next_avail = self.now;
        let Slot::Host(h) = sh.place[f.src.idx()].slot else { unreachable!("validated") };
        self.hosts[h as usize].active.push(flow as u32);
        self.host_send(sh, h as usize);
    }

    fn window_of(&self, sh: &Shared<F>, qp: &Qp<F::Cc>) -> u64 {
        if qp.win == 0 {
            return 0;
        }
        match sh.cfg.nic.window {
            WindowMode::Variable => {
                let w = (qp.win as u128 * qp.rate.0 as u128 / qp.max_rate.0 as u128) as u64;
                w.max(1)
            }
            _ => qp.win,
        }
    }

    #[inline]
    fn eligible(&self, sh: &Shared<F>, host: &Host<F::Cc>, flow: u32) -> bool {
        let qp = &self.qps[flow as usize];
        if host.link.paused[qp.pg as usize] || qp.snd_nxt >= qp.size || qp.next_avail > self.now {
            return false;
        }
        let w = self.window_of(sh, qp);
        w == 0 || qp.snd_nxt - qp.snd_una < w
    }

    /// The NIC scheduler (spec §2.2).
    fn host_send(&mut self, sh: &Shared<F>, h: usize) {
        let host = &self.hosts[h];
        if host.link.busy_until > self.now {
            return;
        }
        let ack_q = if sh.cfg.nic.ack_high_prio { 0 } else { 3 };
        if !host.ack_fifo.is_empty() && !host.link.paused[ack_q] {
            let host = &mut self.hosts[h];
            let pkt = host.ack_fifo.pop_front().expect("non-empty");
            self.host_transmit(sh, h, pkt);
            return;
        }
        let n = host.active.len();
        if n == 0 {
            return;
        }
        let start = (host.rr_last + 1) % n;
        let mut chosen = None;
        for k in 0..n {
            let i = (start + k) % n;
            if self.eligible(sh, host, host.active[i]) {
                chosen = Some((i, k));
                break;
            }
        }
        // Compaction of finished QPs among those examined before the chosen one (quirk 9).
        let examined = chosen.map_or(n, |(_, k)| k);
        let mut m = None;
        for k in 0..examined {
            let i = (start + k) % n;
            if self.qps[host.active[i] as usize].done {
                m = Some(m.map_or(i, |x: usize| x.min(i)));
            }
        }
        let host = &mut self.hosts[h];
        let mut chosen_idx = chosen.map(|(i, _)| i);
        if let Some(m) = m {
            let qps = &self.qps;
            let mut removed_before = 0;
            let mut j = m;
            let mut w = m;
            while j < host.active.len() {
                let f = host.active[j];
                if qps[f as usize].done {
                    if let Some(c) = chosen_idx {
                        if j < c {
                            removed_before += 1;
                        }
                    }
                } else {
                    host.active[w] = f;
                    w += 1;
                }
                j += 1;
            }
            host.active.truncate(w);
            chosen_idx = chosen_idx.map(|c| c - removed_before);
        }
        match chosen_idx {
            Some(c) => {
                host.rr_last = c;
                let flow = host.active[c];
                self.send_data(sh, h, flow as usize);
            }
            None => {
                // Wake-up at the earliest nextAvail among QPs with bytes left (quirk 8).
                let mut t = Time::MAX;
                for &f in &host.active {
                    let qp = &self.qps[f as usize];
                    if qp.snd_nxt < qp.size && qp.next_avail < t {
                        t = qp.next_avail;
                    }
                }
                if host.wake.is_none() && t != Time::MAX && t > self.now {
                    host.wake = Some(t);
                    host.wake_version = host.wake_version.wrapping_add(1);
                    let (node, version) = (host.node, host.wake_version);
                    self.schedule(node, t, Event::NicWake { node, version });
                }
            }
        }
    }

    fn send_data(&mut self, sh: &Shared<F>, h: usize, flow: usize) {
        let mtu = sh.cfg.nic.mtu as u64;
        let f = sh.flows[flow];
        let qp = &mut self.qps[flow];
        let payload = mtu.min(qp.size - qp.snd_nxt) as u32;
        let seq = qp.snd_nxt;
        qp.snd_nxt += payload as u64;
        if seq < qp.high {
            self.counters.data_bytes_retransmitted += payload as u64;
        }
        qp.high = qp.high.max(qp.snd_nxt);
        let wire = sh.header.data_wire(payload);
        qp.last_pkt_size = wire;
        let pace = if sh.cfg.nic.rate_bound { qp.rate } else { qp.max_rate };
        qp.next_avail = self.now + pace.tx_time(wire as u64);
        self.counters.data_packets_sent += 1;
        self.counters.data_bytes_sent += payload as u64;
        let pkt = self.alloc(Packet {
            kind: PacketKind::Data,
            wire,
            payload,
            pg: f.pg,
            ce: false,
            ecn_echo: false,
            flow: FlowId(flow as u32),
            src: f.src,
            dst: f.dst,
            hash_key: sh.meta[flow].hash_fwd,
            seq,
            ts: self.now,
            int: IntStack::default(),
            pint: 0,
            in_port: PortNo(0),
            arrived: self.now,
        });
        self.host_transmit(sh, h, pkt);
    }

    fn host_transmit(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let host = &mut self.hosts[h];
        let p = &self.pool[pkt as usize];
        host.link.tx_bytes += p.wire as u64;
        host.link.tx_frames += 1;
        host.link.tx_data_frames += (p.kind == PacketKind::Data) as u64;
        let node = host.node;
        let done = self.transmit(sh, node, 0, pkt);
        self.hosts[h].link.txdone_pending = true;
        self.schedule(node, done, Event::TxDone { node, port: 0 });
    }

    fn host_arrive(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        if Self::lost(&mut self.hosts[h].link) {
            self.counters.link_losses += 1;
            self.drop_packet(pkt);
            return;
        }
        match self.pool[pkt as usize].kind {
            PacketKind::Pfc { pause, queue } => {
                self.release(pkt);
                self.hosts[h].link.paused[queue as usize] = pause;
                if !pause {
                    self.host_send(sh, h);
                }
            }
            PacketKind::Data => self.receive_data(sh, h, pkt),
            PacketKind::Ack | PacketKind::Nack => {
                self.receive_ack(sh, h, pkt);
                self.release(pkt);
            }
        }
    }

    /// Receiver: ACK/NACK generation (spec §2.3). Reuses the data packet's pool slot.
    fn receive_data(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let (flow, seq, payload, ce, src, dst) = (p.flow, p.seq, p.payload, p.ce, p.src, p.dst);
        self.counters.data_bytes_delivered += payload as u64;
        let nic = &sh.cfg.nic;
        let rx = &mut self.rx[flow.idx()];
        let reply = if seq == rx.expected {
            rx.expected += payload as u64;
            if rx.expected >= nic.ack_interval || rx.expected.is_multiple_of(nic.chunk) {
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
        let hash_rev = sh.meta[flow.idx()].hash_rev;
        let a = &mut self.pool[pkt as usize];
        a.kind = kind;
        a.wire = sh.header.ack_wire();
        a.payload = 0;
        a.ecn_echo = ce;
        a.ce = false;
        a.src = dst;
        a.dst = src;
        a.hash_key = hash_rev;
        a.seq = expected;
        self.hosts[h].ack_fifo.push_back(pkt);
        self.host_send(sh, h);
    }

    /// Sender: ACK/NACK processing (spec §2.4).
    fn receive_ack(&mut self, sh: &Shared<F>, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let flow = p.flow.idx();
        if self.qps[flow].done {
            return;
        }
        let (ack, kind, ecn, ts_echo, pint) = (p.seq, p.kind, p.ecn_echo, p.ts, p.pint);
        // Only INT-mode ACKs carry records; copy them out of the pool for the callback.
        let int = if sh.header == HeaderMode::Int { p.int } else { IntStack::default() };
        let nic = &sh.cfg.nic;
        let mut seq = ack;
        if nic.back_to_chunk {
            seq = seq / nic.chunk * nic.chunk;
        }
        let qp = &mut self.qps[flow];
        qp.snd_una = qp.snd_una.max(seq);
        if qp.snd_una >= qp.size {
            qp.done = true;
            for v in qp.timer_version.iter_mut() {
                *v = v.wrapping_add(1);
            }
            self.fct[flow] = Some(self.now - sh.flows[flow].start);
            self.done += 1;
        }
        let nack = kind == PacketKind::Nack;
        if nack {
            qp.snd_nxt = qp.snd_una;
        }
        let fb = Feedback { ack, nack, ecn, int: &int, ts_echo, pint };
        self.with_cc(sh, flow, |cc, ctx| cc.on_feedback(ctx, &fb));
        self.host_send(sh, h);
    }

    fn cc_timer(&mut self, sh: &Shared<F>, flow: usize, slot: u8, version: u32) {
        let qp = &self.qps[flow];
        if qp.done || qp.timer_version[slot as usize] != version {
            return;
        }
        // As in the reference, a timer changes the rate (and timers) but does not kick the NIC
        // scheduler: the new rate applies from the next packet the scheduler sends anyway.
        self.with_cc(sh, flow, |cc, ctx| cc.on_timer(ctx, slot as usize));
    }

    /// Runs a CC callback and applies what it asked for.
    fn with_cc(&mut self, sh: &Shared<F>, flow: usize, call: impl FnOnce(&mut F::Cc, &mut CcCtx)) {
        let qp = &mut self.qps[flow];
        let mut ctx =
            CcCtx::new(self.now, qp.snd_nxt, qp.snd_una, qp.size, qp.max_rate, qp.rate, qp.win);
        let mut cc = qp.cc.take().expect("a started flow has CC state");
        call(&mut cc, &mut ctx);
        qp.cc = Some(cc);
        qp.win = ctx.window;
        if let Some((r, retime)) = ctx.rate_set {
            let r = BitsPerSec(r.0.clamp(1, qp.max_rate.0));
            if retime && qp.last_pkt_size > 0 {
                let old = qp.rate.tx_time(qp.last_pkt_size as u64).as_ps() as i128;
                let new = r.tx_time(qp.last_pkt_size as u64).as_ps() as i128;
                let na = (qp.next_avail.0 as i128 + new - old).max(0) as u64;
                qp.next_avail = Time(na);
                let src = sh.flows[flow].src;
                let Slot::Host(h) = sh.place[src.idx()].slot else { unreachable!() };
                let host = &mut self.hosts[h as usize];
                if let Some(w) = host.wake {
                    if qp.next_avail < w {
                        let at = qp.next_avail.max(self.now);
                        host.wake = Some(at);
                        host.wake_version = host.wake_version.wrapping_add(1);
                        let (node, version) = (host.node, host.wake_version);
                        qp.rate = r;
                        self.schedule(node, at, Event::NicWake { node, version });
                    }
                }
            }
            self.qps[flow].rate = r;
        }
        let src = sh.flows[flow].src.0;
        for (slot, op) in ctx.timers.iter().enumerate() {
            match op {
                TimerOp::Keep => {}
                TimerOp::Cancel => {
                    let v = &mut self.qps[flow].timer_version[slot];
                    *v = v.wrapping_add(1);
                }
                TimerOp::Set(at) => {
                    let v = &mut self.qps[flow].timer_version[slot];
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
    use super::Event;

    /// Events stay within 16 bytes (the heap moves them on every push and pop).
    #[test]
    fn events_are_compact() {
        assert!(std::mem::size_of::<Event>() <= 16);
    }
}
