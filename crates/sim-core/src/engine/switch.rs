//! Switches: ingress (loss, PFC frames, ECMP, MMU admission) and egress (priority
//! scheduling, queue disciplines, MMU release, ECN, INT/PINT stamping).

use dcsim_aqm::{Ctx, DropCause, Entry, Qdisc, QueueDisc};

use super::{Event, Link, Shard, Shared};
use crate::cc::CcFactory;
use crate::ids::{FlowId, NodeId, PortNo};
use crate::mmu::{Admit, Mmu, QUEUES};
use crate::packet::{Area, Ecn, HeaderMode, IntHop, Packet, PacketKind, PFC_FRAME};
use crate::qmon::PortMonitor;
use crate::results::{HopSample, PfcEvent};
use crate::sim::murmur3_32;
use crate::telemetry::PortUtil;
use crate::units::Time;

/// Mixed into a switch's hash seed for flow-queue classification.
const FQ_HASH_SALT: u32 = 0x5bd1_e995;

/// A switch egress port: the link, one queue discipline per priority class, and the
/// scheduler's state (class 0 strictly first, then round robin over unpaused classes 1–7).
pub(crate) struct SwitchPort {
    pub(crate) link: Link,
    /// The queue discipline of each priority class.
    pub(crate) classes: [Qdisc; QUEUES],
    /// Bit `q` is set while class `q` holds packets: the scheduler reads this, not the classes.
    pub(crate) backlogged: u8,
    pub(crate) rr_last: usize,
    /// Bytes queued over all priorities (INT `qlen`).
    pub(crate) queued: u64,
    /// PINT utilisation EWMA (HPCC-PINT only).
    pub(crate) util: PortUtil,
    /// The backlog monitors of the port (histograms, sampler), when it is monitored.
    pub(crate) mon: Option<Box<PortMonitor>>,
}

impl SwitchPort {
    /// `bytes` more are queued in class `q` of the port from `now` (the backlog monitors, if
    /// any, are told).
    #[inline]
    pub(crate) fn grow(&mut self, now: Time, bytes: u64, q: usize) {
        self.queued += bytes;
        if let Some(m) = &mut self.mon {
            m.grow(now, self.queued, bytes, q);
        }
    }

    /// `bytes` fewer are queued in class `q` of the port from `now` (the backlog monitors, if
    /// any, are told).
    #[inline]
    pub(crate) fn shrink(&mut self, now: Time, bytes: u64, q: usize) {
        self.queued -= bytes;
        if let Some(m) = &mut self.mon {
            m.shrink(now, self.queued, bytes, q);
        }
    }

    /// Records whether class `q` holds packets, after a call that may have changed it.
    #[inline]
    pub(crate) fn mark_backlog(&mut self, q: usize) {
        if self.classes[q].is_empty() {
            self.backlogged &= !(1 << q);
        } else {
            self.backlogged |= 1 << q;
        }
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
}

impl<F: CcFactory> Shard<F> {
    pub(crate) fn switch_arrive(&mut self, sh: &Shared<F>, s: usize, inp: usize, pkt: u32) {
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
            link.paused.set(queue as usize, pause);
            if !pause {
                self.switch_send(sh, s, inp);
            }
            return;
        }
        let node = NodeId(sw.node);
        let dst = sh.net.host_index(dst).expect("packets are addressed to hosts");
        let routes = match &sh.faults {
            None => &sh.routes,
            Some(plan) => plan.routes(self.now, &sh.routes),
        };
        let hops = routes.next_hops(node, dst);
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
        if sh.faults.is_some() && sw.ports[out].link.down {
            // Routed to a failed link before routing converged.
            self.counters.drops_link_down += 1;
            self.drop_packet(pkt);
            return;
        }
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
        let (ecn, hash_seed) = (p.ecn, self.switches[s].hash_seed);
        let port = &mut self.switches[s].ports[out];
        port.grow(self.now, wire as u64, q);
        let mut entry = Entry { pkt, wire, ecn, flow: 0, enq: self.now };
        match &mut port.classes[q] {
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
                    entry.flow = murmur3_32(&hash_key, hash_seed ^ FQ_HASH_SALT);
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

    /// Settles the packets a queue discipline of class `q` at port `out` of switch slot `s`
    /// just dropped: buffer accounting (which may resume a paused upstream), counters, the
    /// pool.
    fn qdisc_drops(&mut self, sh: &Shared<F>, s: usize, out: usize, q: usize) {
        let mut dropped = std::mem::take(&mut self.dropped);
        for d in dropped.drain(..) {
            let wire = d.entry.wire as u64;
            let sw = &mut self.switches[s];
            sw.ports[out].shrink(self.now, wire, q);
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
            hash_key: [0; 3],
            seq: 0,
            ts: self.now,
            header: HeaderMode::None,
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
        p.grow(self.now, PFC_FRAME as u64, 0);
        let mut cx = Ctx { now: self.now, rng: &mut p.link.rng, dropped: &mut self.dropped };
        p.classes[0].enqueue(entry, &mut cx);
        p.backlogged |= 1;
        debug_assert!(self.dropped.is_empty(), "class 0 holds control frames without limit");
        self.switch_send(sh, s, port);
    }

    pub(crate) fn switch_send(&mut self, sh: &Shared<F>, s: usize, out: usize) {
        let sw = &mut self.switches[s];
        let port = &mut sw.ports[out];
        if port.link.busy_until > self.now {
            // Come back when the frame on the wire is out (once); a failed link sends nothing.
            if !port.link.txdone_pending && !port.link.down {
                port.link.txdone_pending = true;
                let (node, at) = (sw.node, port.link.busy_until);
                self.schedule(node, at, Event::TxDone { node, port: out as u16 });
            }
            return;
        }
        let (q, pkt, wire) = loop {
            let sw = &mut self.switches[s];
            let port = &mut sw.ports[out];
            let backlogged = port.backlogged;
            let q = if backlogged & 1 != 0 {
                0
            } else {
                match next_round_robin(backlogged & !port.link.paused.mask(), port.rr_last) {
                    Some(q) => {
                        port.rr_last = q;
                        q
                    }
                    None => return,
                }
            };
            let mut cx = Ctx { now: self.now, rng: &mut port.link.rng, dropped: &mut self.dropped };
            let next = port.classes[q].dequeue(&mut cx);
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
        let sw = &mut self.switches[s];
        sw.ports[out].shrink(self.now, wire, q);
        if q != 0 {
            let inp = self.pool[pkt as usize].in_port.idx();
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
        let sw = &mut self.switches[s];
        let port = &mut sw.ports[out];
        let pk = &mut self.pool[pkt as usize];
        let data = pk.is_data();
        // Data packets in INT runs, and the INT probes of probe-driven TCP senders (the only TCP
        // packets that carry an INT header: their echoes carry none).
        if pk.header == HeaderMode::Int && (data || pk.kind == PacketKind::Tcp) {
            if let Area::Int(stack) = &mut pk.area {
                stack.push(IntHop {
                    rate: port.link.rate,
                    time: self.now,
                    tx_bytes: port.link.tx_bytes,
                    qlen: port.queued,
                });
            }
        }
        if let Some(t) = sh.pint {
            if data {
                // Every data packet updates the port's utilisation estimate; those that carry a
                // PINT area take the scheme's digest of it.
                let u = port.util.update(self.now.0, port.link.rate.0, port.queued, t);
                if pk.header == HeaderMode::Pint {
                    let p = sh.factory.pint_digest(u, &mut port.link.rng);
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
}

#[cfg(test)]
mod tests {
    use super::next_round_robin;

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
