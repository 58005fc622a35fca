//! Switches: ingress (loss, PFC frames, ECMP, MMU admission) and egress (priority
//! scheduling, queue disciplines, MMU release, ECN, INT/PINT stamping).

use dcsim_aqm::{Ctx, DropCause, Entry, Qdisc, QueueDisc};

use super::{at, at_mut, Event, Link, Shard, Shared};
use crate::cc::CcFactory;
use crate::ids::{FlowId, NodeId, PortNo};
use crate::mmu::{Admit, Mmu, QUEUES};
use crate::packet::{
    Area, Ecn, HeaderMode, IntHop, Packet, PacketKind, MAX_INT_HOPS, NO_PORT, PATH_HOPS, PFC_FRAME,
};
use crate::qmon::{PortMonitor, SampleState, Watch};
use crate::results::{HopSample, PfcEvent};
use crate::sim::{ecmp_pick, murmur3_32};
use crate::telemetry::PortUtil;
use crate::units::Time;

/// Mixed into a switch's hash seed for flow-queue classification.
const FQ_HASH_SALT: u32 = 0x5bd1_e995;

/// A switch egress port: the link, one queue discipline per priority class, and the
/// scheduler's state (class 0 strictly first, then round robin over unpaused classes 1–7).
///
/// Laid out by hand (see the assertions below) so that a frame's hops touch few cache lines:
/// the backlog block shares a line with the head of the link's in-flight queue; the link's
/// scalars (times, rate, counters, pause state) start a line, whose next line holds the rest
/// of them with the scheduler's state, the PINT estimate and the sampler's state.
#[repr(C, align(64))]
pub(crate) struct SwitchPort {
    /// The queue discipline of each priority class.
    pub(crate) classes: [Qdisc; QUEUES],
    /// The bytes queued and their monitors.
    pub(crate) backlog: Backlog,
    pub(crate) link: Link,
    /// PINT utilisation EWMA (HPCC-PINT only).
    pub(crate) util: PortUtil,
    /// The class 1–7 the round robin served last (0: none yet).
    pub(crate) rr_last: u8,
    /// Bit `q` is set while class `q` holds packets: the scheduler reads this, not the classes.
    pub(crate) backlogged: u8,
    /// The queue sampler's state, when the port is monitored (see [`Backlog`]).
    pub(crate) sample: SampleState,
}

// The lines a frame touches: the backlog block with the in-flight queue's head, and the two
// lines of the link's scalars with the scheduler, PINT and sampler state.
const _: () = {
    use std::mem::{offset_of, size_of};
    let backlog = offset_of!(SwitchPort, backlog);
    assert!(backlog % 64 == 0 && size_of::<Backlog>() == 32);
    assert!(offset_of!(SwitchPort, link) + offset_of!(Link, tail) == backlog + 32);
    let scalars = offset_of!(SwitchPort, link) + offset_of!(Link, cut_until);
    assert!(scalars % 64 == 0);
    assert!(offset_of!(SwitchPort, sample) + size_of::<SampleState>() <= scalars + 128);
    assert!(size_of::<SwitchPort>() == 17 * 64);
};

/// A port's backlog and its monitors, in one 32-byte block that shares a cache line with the
/// head of the link's in-flight queue.
///
/// The frame path only counts bytes: a change of classes 1–7 adds to or takes from `queued`
/// and nothing else. The monitors are told at the end of the handling of each event that
/// touched the port ([`SwitchPort::settle`], which every [`Shard::switch_send`] ends with):
/// the level after the event's last change, if it differs from the level last told. Each
/// monitor sees the backlog as a function of time, and a level held for no time is not seen
/// (the histogram weighs levels by time; a sample at a change's instant sees the level after
/// every change at that instant), so telling the net change is exact. Most frames cross an
/// idle port, growing and shrinking its backlog by the same bytes in one event: they never
/// touch the monitors' memory. A change of class 0 (control frames, rare) is told at once
/// ([`Backlog::control`]), so that the changes held back are all of classes 1–7, which the
/// sampler counts.
#[repr(C)]
pub(crate) struct Backlog {
    /// Bytes queued over all priorities (INT `qlen`).
    pub(crate) queued: u64,
    /// The backlog last told to the monitors, plus [`EVERY_EVENT`] when the per-class
    /// histograms are on (so that it never equals `queued`: classes may change with the
    /// total unchanged).
    told: u64,
    /// The monitors' totals, when the port is monitored.
    pub(crate) mon: Option<Box<PortMonitor>>,
    /// The time of the last tell to the monitors.
    pub(crate) since: Time,
}

/// Set in [`Backlog::told`] when every event that touches the port is told.
const EVERY_EVENT: u64 = 1 << 63;

impl Backlog {
    /// An empty backlog, monitored by `mon` if any (with `w`'s monitors).
    pub(crate) fn new(mon: Option<Box<PortMonitor>>, w: &Watch) -> Backlog {
        let told = if mon.is_some() && w.classes { EVERY_EVENT } else { 0 };
        Backlog { queued: 0, told, mon, since: Time::ZERO }
    }

    /// `bytes` (> 0) more are queued in class `q` from `now` (`w` and `sample`: the monitors,
    /// told at once for class 0).
    #[inline(always)]
    pub(crate) fn grow(
        &mut self,
        w: &Watch,
        sample: &mut SampleState,
        now: Time,
        bytes: u64,
        q: usize,
    ) {
        if q == 0 {
            self.control(w, sample, now, bytes, true);
        } else {
            self.queued += bytes;
        }
    }

    /// `bytes` (> 0) fewer are queued in class `q` from `now` (as [`Backlog::grow`]).
    #[inline(always)]
    pub(crate) fn shrink(
        &mut self,
        w: &Watch,
        sample: &mut SampleState,
        now: Time,
        bytes: u64,
        q: usize,
    ) {
        if q == 0 {
            self.control(w, sample, now, bytes, false);
        } else {
            self.queued -= bytes;
        }
    }

    /// A change of class 0 by `bytes`: the monitors are told the changes held back (all of
    /// classes 1–7) first, then the class-0 change moves the told level with the backlog,
    /// so that what is held back stays a change of classes 1–7.
    #[cold]
    #[inline(never)]
    fn control(&mut self, w: &Watch, sample: &mut SampleState, now: Time, bytes: u64, grew: bool) {
        if self.mon.is_some() {
            self.tell(w, sample, now);
        }
        if grew {
            self.queued += bytes;
        } else {
            self.queued -= bytes;
        }
        if let Some(m) = &mut self.mon {
            m.class_change(now, grew, bytes, 0);
            self.told = self.queued | self.told & EVERY_EVENT;
        }
    }

    /// Tells the monitors, if any, the backlog at the end of an event that changed it (or of
    /// every event, with per-class histograms: `class_bytes(q)` is class `q`'s backlog).
    #[inline(always)]
    pub(crate) fn settle(
        &mut self,
        w: &Watch,
        sample: &mut SampleState,
        now: Time,
        class_bytes: impl Fn(usize) -> u64,
    ) {
        if self.mon.is_some() && self.queued != self.told {
            self.tell(w, sample, now);
            if self.told & EVERY_EVENT != 0 {
                if let Some(m) = &mut self.mon {
                    m.set_classes(now, class_bytes);
                }
            }
        }
    }

    /// Whether every change has been told.
    pub(crate) fn settled(&self) -> bool {
        self.mon.is_none() || self.queued == self.told & !EVERY_EVENT
    }

    /// Tells the monitors the backlog went from the level last told to `queued` at `now`.
    #[inline(never)]
    fn tell(&mut self, w: &Watch, sample: &mut SampleState, now: Time) {
        let (before, after) = (self.told & !EVERY_EVENT, self.queued);
        // Before the tell, so that its call out is the last act.
        self.told = after | self.told & EVERY_EVENT;
        if let Some(m) = &mut self.mon {
            w.tell(m, &mut self.since, sample, now, before, after);
        }
    }
}

/// A port's queue discipline of class `q` (of its `classes`, borrowed alone so that a caller
/// may use the port's other fields meanwhile), without the bounds check, which every frame's
/// hop otherwise paid several times. `q` is below [`QUEUES`]: a class index is a packet's
/// priority group (checked against `QUEUES` when the run is built: `SimError::BadPriority`; 0
/// for control frames) or a bit of an 8-bit class mask (debug-asserted).
#[inline(always)]
fn class_in(classes: &mut [Qdisc; QUEUES], q: usize) -> &mut Qdisc {
    debug_assert!(q < QUEUES, "class {q}");
    // SAFETY: `q < QUEUES`, the length of `classes` (above).
    unsafe { classes.get_unchecked_mut(q) }
}

impl SwitchPort {
    /// Tells the port's monitors, if any, its backlog at the end of an event that changed it
    /// (see [`Backlog`]).
    #[inline(always)]
    pub(crate) fn settle(&mut self, w: &Watch, now: Time) {
        let classes = &self.classes;
        self.backlog.settle(w, &mut self.sample, now, |q| classes[q].backlog_bytes());
    }

    /// Whether the backlog is the classes' bytes (between events; a settle nested in an
    /// event's handling, e.g. a pause resumed through the port being served, may see the
    /// discipline ahead of the byte count, for no time).
    pub(crate) fn consistent(&self) -> bool {
        self.classes.iter().map(|c| c.backlog_bytes()).sum::<u64>() == self.backlog.queued
    }

    /// Records whether class `q` holds packets, after a call that may have changed it.
    #[inline]
    pub(crate) fn mark_backlog(&mut self, q: usize) {
        // By masks, not a branch: whether a dequeue emptied the class follows the traffic.
        let held = !class_in(&mut self.classes, q).is_empty() as u8;
        self.backlogged = (self.backlogged & !(1 << q)) | (held << q);
    }

    /// The packet most likely to leave next (the head of the first backlogged class), if its
    /// discipline knows it cheaply: a prefetch hint.
    #[inline]
    pub(crate) fn likely_next(&self) -> Option<u32> {
        match self.backlogged {
            0 => None,
            b => self.classes[b.trailing_zeros() as usize].peek(),
        }
    }
}

/// The round-robin choice among classes 1–7: the first class of `eligible` (a bit mask of
/// backlogged, unpaused classes; bit 0 is ignored) after `last` in the cyclic order 1, 2, …, 7,
/// 1, … (`last = 0`: from class 1).
#[inline]
pub(crate) fn next_round_robin(eligible: u8, last: usize) -> Option<usize> {
    let eligible = u32::from(eligible) & 0xfe;
    if eligible == 0 {
        return None;
    }
    let after = eligible & !((2u32 << last) - 1);
    let pick = if after != 0 { after } else { eligible };
    Some(pick.trailing_zeros() as usize)
}

pub(crate) struct Switch {
    pub(crate) node: u32,
    pub(crate) ports: Vec<SwitchPort>,
    pub(crate) mmu: Mmu,
    pub(crate) hash_seed: u32,
    /// Some port's link loses frames (`Link::loss > 0`): only then does an arrival read its
    /// ingress port, which most arrivals otherwise never touch.
    pub(crate) lossy: bool,
}

impl<F: CcFactory> Shard<F> {
    /// A packet has been fully received on port `inp` of switch slot `s`. Kept out of line:
    /// inlined into the dispatch (its one caller), it made the dispatch too large to inline
    /// into the event loop (+3% instructions, +4–5% wall time on one core).
    #[inline(never)]
    pub(crate) fn switch_arrive(&mut self, sh: &Shared<F>, s: usize, inp: usize, pkt: u32) {
        // SAFETY (this function's unchecked lookups): `s` is a switch of this shard, `inp` and
        // `out` ports of it, `pkt` a pooled packet (the invariants of `super::at`).
        let sw = unsafe { at_mut(&mut self.switches, s) };
        if sw.lossy && Self::lost(&mut unsafe { at_mut(&mut sw.ports, inp) }.link) {
            self.counters.link_losses += 1;
            self.drop_packet(pkt);
            return;
        }
        let p = unsafe { at(&self.pool, pkt as usize) };
        let (kind, dst, pg, wire, hop) = (p.kind, p.dst, p.pg, p.wire, p.hop);
        let (flow, kept) = (p.flow.idx(), p.path.get(hop as usize).copied());
        if let PacketKind::Pfc { pause, queue } = kind {
            self.release(pkt);
            let link = &mut self.switches[s].ports[inp].link;
            link.paused.set(queue as usize, pause);
            if !pause {
                self.switch_send(sh, s, inp);
            }
            return;
        }
        // The egress port: the one the packet carries for this hop of its path, else (link
        // events, paths of many switches) routed here by its flow's key.
        let out = match kept {
            Some(out) if out != NO_PORT => {
                let out = out as usize;
                debug_assert_eq!(
                    Some(out),
                    Self::route(sh, sw.node, sw.hash_seed, dst, &sh.key_of(flow, dst), self.now),
                    "the kept port of flow {flow} at hop {hop} of switch {}",
                    sw.node
                );
                out
            }
            _ => match Self::route(sh, sw.node, sw.hash_seed, dst, &sh.key_of(flow, dst), self.now)
            {
                Some(out) => {
                    if sh.faults.is_some() && unsafe { at(&sw.ports, out) }.link.down {
                        // Routed to a failed link before routing converged.
                        self.counters.drops_link_down += 1;
                        self.drop_packet(pkt);
                        return;
                    }
                    out
                }
                None => {
                    self.counters.no_route_drops += 1;
                    self.drop_packet(pkt);
                    return;
                }
            },
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
        let p = unsafe { at_mut(&mut self.pool, pkt as usize) };
        p.in_port = PortNo(inp as u16);
        p.hop = hop.saturating_add(1);
        p.arrived = self.now;
        let sw = unsafe { at_mut(&mut self.switches, s) };
        let (ecn, hash_seed) = (p.ecn, sw.hash_seed);
        let port = unsafe { at_mut(&mut sw.ports, out) };
        if q != 0
            && port.backlogged == 0
            && port.link.busy_until <= self.now
            && !port.link.paused.get(q)
            && class_in(&mut port.classes, q).passes_through_when_empty(wire)
        {
            // The port is free and holds nothing: the scheduler would pick this class (the only
            // one backlogged, not paused) and its discipline would hand the packet straight
            // back, so it leaves now as `switch_send` would send it, without the round trip
            // through the queue (whose bytes it would have grown and shrunk again).
            port.rr_last = q as u8;
            self.send_dequeued(sh, s, out, q, pkt, wire as u64);
            unsafe { at_mut(&mut at_mut(&mut self.switches, s).ports, out) }
                .settle(&sh.watch, self.now);
            return;
        }
        port.backlog.grow(&sh.watch, &mut port.sample, self.now, wire as u64, q);
        let mut entry = Entry { pkt, wire, ecn, flow: 0, enq: self.now };
        match class_in(&mut port.classes, q) {
            // RED keeps every packet it is offered (the MMU alone admits): nothing to settle.
            Qdisc::Red(red) => {
                red.push(entry);
                port.backlogged |= 1 << q;
            }
            class => {
                // Flow queueing classifies by a hash of the 5-tuple (Linux `skb_get_hash`,
                // perturbed per switch; a different seed from ECMP's so the two choices are
                // independent). Only a discipline that queues per flow needs it.
                if let Qdisc::FqCodel(_) = class {
                    entry.flow = murmur3_32(&sh.key_of(flow, dst), hash_seed ^ FQ_HASH_SALT);
                }
                let mut cx =
                    Ctx { now: self.now, rng: &mut port.link.rng, dropped: &mut self.dropped };
                class.enqueue(entry, &mut cx);
                if self.dropped.is_empty() {
                    // Nothing dropped: the discipline kept the packet.
                    port.backlogged |= 1 << q;
                } else {
                    port.mark_backlog(q);
                    self.qdisc_drops(sh, s, out, q);
                }
            }
        }
        self.switch_send(sh, s, out);
    }

    /// The egress port routing gives a packet to `dst` with ECMP key `key` at switch `node`
    /// (whose hash seed is `seed`) at `now`; `None` without a route.
    #[inline(always)]
    fn route(
        sh: &Shared<F>,
        node: u32,
        seed: u32,
        dst: NodeId,
        key: &[u32; 3],
        now: Time,
    ) -> Option<usize> {
        let routes = match &sh.faults {
            None => &sh.routes,
            Some(plan) => plan.routes(now, &sh.routes),
        };
        let hops = routes.switch_next_hops(NodeId(node), dst);
        if hops.is_empty() {
            return None;
        }
        // The hash's remainder by the group's width, without a branch on whether there is a
        // choice (`ecmp_pick`).
        let i = ecmp_pick(murmur3_32(key, seed), hops.len());
        // SAFETY: a remainder by `hops.len()` is an index of `hops`.
        Some(unsafe { at(hops, i) }.idx())
    }

    /// Settles the packets a queue discipline of class `q` at port `out` of switch slot `s`
    /// just dropped: buffer accounting (which may resume a paused upstream), counters, the
    /// pool.
    fn qdisc_drops(&mut self, sh: &Shared<F>, s: usize, out: usize, q: usize) {
        let mut dropped = std::mem::take(&mut self.dropped);
        for d in dropped.drain(..) {
            let wire = d.entry.wire as u64;
            let sw = &mut self.switches[s];
            let port = &mut sw.ports[out];
            port.backlog.shrink(&sh.watch, &mut port.sample, self.now, wire, q);
            match d.cause {
                DropCause::Overflow => self.counters.qdisc_overflow_drops += 1,
                DropCause::Aqm => self.counters.aqm_drops += 1,
            }
            let pkt = d.entry.pkt;
            if q != 0 {
                let inp = self.pool[pkt as usize].in_port.idx();
                if sw.mmu.release(inp, out, q, wire) {
                    self.counters.pfc_resumes += 1;
                    self.switch_send_pfc(sh, s, inp, false, q as u8);
                }
            }
            self.drop_packet(pkt);
        }
        self.dropped = dropped;
    }

    pub(crate) fn switch_send_pfc(
        &mut self,
        sh: &Shared<F>,
        s: usize,
        port: usize,
        pause: bool,
        queue: u8,
    ) {
        let sw_node = NodeId(self.switches[s].node);
        let pkt = self.alloc(Packet {
            kind: PacketKind::Pfc { pause, queue },
            wire: PFC_FRAME,
            payload: 0,
            pg: 0,
            ecn: Ecn::NotEct,
            ecn_echo: false,
            flow: FlowId(u32::MAX),
            src: sw_node,
            dst: sw_node,
            path: [NO_PORT; PATH_HOPS],
            seq: 0,
            ts: self.now,
            header: HeaderMode::None,
            hop: 0,
            area: Area::None,
            pint: 0,
            in_port: PortNo(port as u16),
            arrived: self.now,
        });
        let entry = Entry { pkt, wire: PFC_FRAME, ecn: Ecn::NotEct, flow: 0, enq: self.now };
        if sh.cfg.monitor.pfc_log {
            let link = &self.switches[s].ports[port].link;
            self.pfc_log.push(PfcEvent {
                time: self.now,
                switch: sw_node,
                port: PortNo(port as u16),
                peer: NodeId(link.peer),
                priority: queue,
                pause,
            });
        }
        let p = &mut self.switches[s].ports[port];
        if p.link.down {
            // The link to the peer has failed: the frame is lost.
            self.counters.drops_link_down += 1;
            self.release(pkt);
            return;
        }
        p.backlog.grow(&sh.watch, &mut p.sample, self.now, PFC_FRAME as u64, 0);
        let mut cx = Ctx { now: self.now, rng: &mut p.link.rng, dropped: &mut self.dropped };
        p.classes[0].enqueue(entry, &mut cx);
        p.backlogged |= 1;
        debug_assert!(self.dropped.is_empty(), "class 0 holds control frames without limit");
        self.switch_send(sh, s, port);
    }

    /// Starts the next frame at egress port `out` of switch slot `s` if the port is free and a
    /// class may send, then tells the port's monitors what the event did to its backlog.
    pub(crate) fn switch_send(&mut self, sh: &Shared<F>, s: usize, out: usize) {
        self.switch_send_next(sh, s, out);
        // SAFETY: `s` is a switch of this shard and `out` a port of it (the invariants of
        // `super::at`).
        unsafe { at_mut(&mut at_mut(&mut self.switches, s).ports, out) }
            .settle(&sh.watch, self.now);
    }

    /// [`Shard::switch_send`] before the monitors are told.
    #[inline(always)]
    fn switch_send_next(&mut self, sh: &Shared<F>, s: usize, out: usize) {
        // SAFETY (this function's unchecked lookups): `s` is a switch of this shard and `out` a
        // port of it (the invariants of `super::at`).
        let sw = unsafe { at_mut(&mut self.switches, s) };
        let port = unsafe { at_mut(&mut sw.ports, out) };
        if port.link.busy_until > self.now {
            // Come back when the frame on the wire is out (once); a failed link sends nothing.
            if !port.link.txdone_pending && !port.link.down {
                port.link.txdone_pending = true;
                let (node, at) = (sw.node, port.link.busy_until);
                self.schedule(node, at, Event::SwitchTxDone { sw: s as u32, port: out as u16 });
            }
            return;
        }
        let (q, pkt, wire) = loop {
            let sw = unsafe { at_mut(&mut self.switches, s) };
            let port = unsafe { at_mut(&mut sw.ports, out) };
            let backlogged = port.backlogged;
            let q = if backlogged & 1 != 0 {
                0
            } else {
                match next_round_robin(backlogged & !port.link.paused.mask(), port.rr_last.into()) {
                    Some(q) => {
                        port.rr_last = q as u8;
                        q
                    }
                    None => return,
                }
            };
            let mut cx = Ctx { now: self.now, rng: &mut port.link.rng, dropped: &mut self.dropped };
            let next = class_in(&mut port.classes, q).dequeue(&mut cx);
            port.mark_backlog(q);
            if !self.dropped.is_empty() {
                self.qdisc_drops(sh, s, out, q);
            }
            // A discipline that dropped everything it held yields nothing: pick again.
            if let Some(d) = next {
                let pkt = d.entry.pkt;
                if d.marked {
                    self.pool[pkt as usize].ecn = Ecn::Ce;
                    self.counters.ecn_marks += 1;
                }
                break (q, pkt, d.entry.wire as u64);
            }
        };
        let port = unsafe { at_mut(&mut at_mut(&mut self.switches, s).ports, out) };
        port.backlog.shrink(&sh.watch, &mut port.sample, self.now, wire, q);
        self.send_dequeued(sh, s, out, q, pkt, wire);
    }

    /// Sends packet `pkt` (`wire` bytes), just taken from class `q` at egress port `out` of
    /// switch slot `s` (its bytes no longer counted in the port's backlog): MMU release,
    /// telemetry stamps, transmission, and a `TxDone` if frames wait behind it.
    #[inline(always)]
    fn send_dequeued(
        &mut self,
        sh: &Shared<F>,
        s: usize,
        out: usize,
        q: usize,
        pkt: u32,
        wire: u64,
    ) {
        // SAFETY (this function's unchecked lookups): `s` is a switch of this shard, `out` a
        // port of it and `pkt` a pooled packet (the invariants of `super::at`).
        let sw = unsafe { at_mut(&mut self.switches, s) };
        if q != 0 {
            let inp = unsafe { at(&self.pool, pkt as usize) }.in_port.idx();
            let resume = sw.mmu.release(inp, out, q, wire);
            debug_assert_eq!(
                sw.mmu.egress_bytes(out, q),
                sw.ports[out].classes[q].backlog_bytes(),
                "the MMU's egress count of a class is its queue's backlog"
            );
            if resume {
                self.counters.pfc_resumes += 1;
                self.switch_send_pfc(sh, s, inp, false, q as u8);
            }
        }
        let sw = unsafe { at_mut(&mut self.switches, s) };
        let port = unsafe { at_mut(&mut sw.ports, out) };
        let pk = unsafe { at_mut(&mut self.pool, pkt as usize) };
        let data = pk.is_data();
        // Data packets in INT runs, and the INT probes of probe-driven TCP senders (the only TCP
        // packets that carry an INT header: their echoes carry none), take this hop's record;
        // the ACKs of an INT run carry their data packet's records back unchanged. Data and
        // ACKs pass a port in no order a predictor can learn, so the choice is made without a
        // branch: the record is written either into the stack or into a scratch record, and
        // the count grows by 0 or 1.
        let stamp = (pk.header == HeaderMode::Int) & (data | (pk.kind == PacketKind::Tcp));
        if let Area::Int(stack) = &mut pk.area {
            let i = stack.nhop as usize % MAX_INT_HOPS;
            let rec =
                std::hint::select_unpredictable(stamp, &mut stack.hops[i], &mut self.int_scratch);
            *rec = IntHop {
                rate: port.link.rate,
                time: self.now,
                tx_bytes: port.link.tx_bytes,
                qlen: port.backlog.queued,
            };
            stack.nhop = stack.nhop.saturating_add(stamp as u16);
        }
        if let Some(t) = sh.pint {
            if data {
                // Every data packet updates the port's utilisation estimate; those that carry a
                // PINT area take the scheme's digest of it.
                let u = port.util.update(self.now.0, port.link.rate.0, port.backlog.queued, t);
                if pk.header == HeaderMode::Pint {
                    // `pint_rng` has a stream per switch and port in runs with a PINT area.
                    let streams = unsafe { at_mut(&mut self.pint_rng, s) };
                    let rng = unsafe { at_mut(streams, out) };
                    let p = sh.factory.pint_digest(u, rng);
                    pk.pint = pk.pint.max(p);
                }
            }
            port.util.last_ts = self.now.0;
            port.util.last_size = wire;
        }
        let traced = sh.tracing && data && sh.meta[pk.flow.idx()].traced;
        // Read the trace fields (another cache line of the packet) only for traced flows.
        let trace = if traced { Some((pk.flow, pk.seq, pk.ts, pk.arrived)) } else { None };
        port.link.tx_bytes += wire;
        port.link.tx_frames += 1;
        port.link.tx_data_frames += data as u64;
        let backlog = (port.backlog.queued > 0) & !port.link.txdone_pending;
        let node = sw.node;
        let done = self.transmit(sh, node, out as u16, pkt);
        if let Some((flow, seq, origin, arrived)) = trace {
            let (node, sent, latency) = (NodeId(node), self.now, done - arrived);
            self.hop_trace.push(HopSample { flow, seq, origin, node, sent, latency });
        }
        if backlog {
            let port = unsafe { at_mut(&mut at_mut(&mut self.switches, s).ports, out) };
            port.link.txdone_pending = true;
            // The packet most likely to leave at that `TxDone` has waited in the queue and is
            // cold: start loading it a frame's time ahead.
            if let Some(next) = port.likely_next() {
                super::prefetch_ptr(self.pool.as_ptr().wrapping_add(next as usize));
            }
            self.schedule(node, done, Event::SwitchTxDone { sw: s as u32, port: out as u16 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{next_round_robin, Backlog};
    use crate::mmu::QUEUES;
    use crate::qmon::{
        ClassHistograms, PortMonitor, QueueHistogram, QueueSampler, SampleClock, SampleState,
        SamplerWindow, Watch,
    };
    use crate::units::{Duration, Time};
    use proptest::prelude::*;

    /// A 100 ns sampler over the whole test.
    fn window() -> SamplerWindow {
        SamplerWindow {
            start: Time::ZERO,
            end: Time::from_ns(1_000_000),
            interval: Duration::from_ns(100),
            bin: 1000,
        }
    }

    proptest! {
        /// The settled backlog (the frame path counts bytes; the monitors are told the net
        /// change at the end of each event, class 0 at once) leaves every monitor as telling
        /// each change at once does: a stand-alone histogram of the port, a sampler of classes
        /// 1–7 and per-class histograms, each on or off. Each event: a time step (often 0),
        /// maybe one frame in, maybe a settle in the middle (as a nested `switch_send` does),
        /// some frames out (oldest first, of any class), maybe one more frame in, then the
        /// settle.
        #[test]
        fn settled_backlog_equals_telling_every_change(
            events in prop::collection::vec(
                (
                    0u64..4,
                    prop::option::of((0usize..3, 0usize..4)),
                    any::<bool>(),
                    0usize..3,
                    prop::option::of((0usize..3, 0usize..4)),
                ),
                1..200,
            ),
            hist_on in any::<bool>(),
            per_class in any::<bool>(),
            sampling in any::<bool>(),
        ) {
            const SIZES: [u64; 3] = [64, 1000, 1048];
            let clock = if sampling { SampleClock::new(window()) } else { SampleClock::OFF };
            let w = Watch { hist: hist_on, classes: per_class, clock };
            let mut b = Backlog::new(Some(Box::new(PortMonitor::new(&w))), &w);
            let mut sample = SampleState::new(&w.clock);
            let (mut hist, mut sampler) = (QueueHistogram::new(), QueueSampler::new(window()));
            let mut classes = ClassHistograms::default();
            let mut class_bytes = [0u64; QUEUES];
            let mut held: std::collections::VecDeque<(u64, usize)> = Default::default();
            let (mut now, mut total) = (Time::ZERO, 0u64);
            for (step, arrival, mid_settle, leaving, late_arrival) in events {
                now = Time(now.0 + step * 70_000);
                macro_rules! arrive {
                    ($size:expr, $q:expr) => {{
                        let (bytes, q) = (SIZES[$size], $q);
                        b.grow(&w, &mut sample, now, bytes, q);
                        total += bytes;
                        class_bytes[q] += bytes;
                        hist.set(now, total);
                        if q != 0 {
                            sampler.grow(now, bytes);
                        }
                        classes.grow(now, bytes, q);
                        held.push_back((bytes, q));
                    }};
                }
                if let Some((size, q)) = arrival {
                    arrive!(size, q);
                }
                if mid_settle {
                    b.settle(&w, &mut sample, now, |q| class_bytes[q]);
                }
                for _ in 0..leaving {
                    let Some((bytes, q)) = held.pop_front() else { break };
                    b.shrink(&w, &mut sample, now, bytes, q);
                    total -= bytes;
                    class_bytes[q] -= bytes;
                    hist.set(now, total);
                    if q != 0 {
                        sampler.shrink(now, bytes);
                    }
                    classes.shrink(now, bytes, q);
                }
                if let Some((size, q)) = late_arrival {
                    arrive!(size, q);
                }
                b.settle(&w, &mut sample, now, |q| class_bytes[q]);
                prop_assert!(b.settled());
                prop_assert_eq!(b.queued, total);
            }
            let end = Time(now.0 + 1_000_000);
            let mut m = b.mon.take().unwrap();
            if hist_on {
                prop_assert_eq!(w.finish_hist(&mut m, &mut b.since, total, end), hist.finish(end));
            }
            if sampling {
                prop_assert_eq!(w.finish_samples(&mut m, &mut sample, end), sampler.finish(end));
            }
            prop_assert_eq!(m.finish_classes(end), per_class.then(|| classes.finish(end)));
        }
    }

    /// The scheduler's former loop: classes `last % 7 + 1`, … in cyclic order.
    fn by_loop(eligible: u8, last: usize) -> Option<usize> {
        (0..7).map(|k| (last + k) % 7 + 1).find(|&q| eligible & (1 << q) != 0)
    }

    #[test]
    fn round_robin_choice_matches_the_cyclic_scan() {
        for eligible in 0..=u8::MAX {
            for last in 0..8 {
                assert_eq!(
                    next_round_robin(eligible, last),
                    by_loop(eligible, last),
                    "{eligible:#010b} after {last}"
                );
            }
        }
    }
}
