//! Links: the transmit side of a port, serialization, propagation and the loss model.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Crossing, Shard, Shared};
use crate::cc::CcFactory;
use crate::config::Serialization;
use crate::ids::{NodeId, PortNo};
use crate::mmu::QUEUES;
use crate::units::{BitsPerSec, Duration, Time};

/// Transmit side of one port, common to hosts and switches.
///
/// `repr(C)`, in the order the compiler chose when it was free to (pinned so that the switch
/// port's layout, which depends on it, cannot change under a new compiler): the last frame
/// put on the wire first, the random stream, then the scalars a frame reads, together.
#[repr(C)]
pub(crate) struct Link {
    /// The last frame put on the wire towards the peer (see [`Flight`]).
    pub(crate) tail: Tail,
    pub(crate) rng: ChaCha8Rng,
    /// While down: when the frame the failure cut off would have finished (the port's
    /// `busy_until` at the failure).
    pub(crate) cut_until: Time,
    pub(crate) rate: BitsPerSec,
    pub(crate) delay: Duration,
    pub(crate) loss: f64,
    /// The port is transmitting until this time.
    pub(crate) busy_until: Time,
    /// Bytes transmitted so far (INT `tx_bytes`).
    pub(crate) tx_bytes: u64,
    /// Frames transmitted so far.
    pub(crate) tx_frames: u64,
    /// Data frames transmitted so far.
    pub(crate) tx_data_frames: u64,
    /// When the peer belongs to another shard: the receiving end's slot in that shard's
    /// [`Shard::cross_in`] (numbered at set-up, kept here so that a crossing reads no network
    /// table); [`Link::NO_CROSSING`] otherwise.
    pub(crate) cross_slot: u32,
    pub(crate) peer: u32,
    pub(crate) peer_port: u16,
    /// The link has failed ([`crate::config::Faults`]): the port sends nothing (its
    /// `busy_until` is `Time::MAX`) until it is restored.
    pub(crate) down: bool,
    /// A `TxDone` event is pending for this port (switch ports schedule one only when frames
    /// wait behind the one on the wire).
    pub(crate) txdone_pending: bool,
    /// Priorities paused by PFC frames received on this port.
    pub(crate) paused: Paused,
}

impl Link {
    /// [`Link::cross_slot`] of a link whose ends are in one shard.
    pub(crate) const NO_CROSSING: u32 = u32::MAX;
}

/// The frames on a link's wire, in order, without a queue at the link.
///
/// Frames on a link arrive in the order they were sent, so only the first frame on the wire
/// has its arrival in the event queue. Each frame on the wire records the one sent behind it
/// (`Shard::flight`, by packet: its arrival time, sequence number and packet), and the link
/// records the last one sent ([`Tail`]). The arrival of a frame puts its successor's arrival in
/// the event queue; a frame sent when the last one has arrived (its arrival key is behind the
/// event now running) starts the chain afresh. So an arrival touches only the packet and its
/// record, never the sending port, which lies elsewhere in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flight {
    /// When the frame arrives at the far end.
    pub(crate) at: Time,
    /// The sequence number of its arrival event.
    pub(crate) seq: u64,
    /// The frame (its pool index), or [`Flight::NONE`].
    pub(crate) pkt: u32,
}

impl Flight {
    /// No frame.
    pub(crate) const NONE: Flight = Flight { at: Time::ZERO, seq: 0, pkt: u32::MAX };
}

/// What every transmission on a link reads and writes, in the 32 bytes the switch port's
/// hand-made layout reserves here (see `SwitchPort`): the last frame put on the wire (its
/// [`Flight`] record) and the picoseconds a byte takes on the wire.
///
/// Until a frame is sent, `last` is [`Flight::NONE`], whose key (0, 0) precedes or is every
/// event's: "already arrived". `ps_per_byte` is set in exact serialization at a rate where it
/// is a whole number ([`BitsPerSec::exact_ps_per_byte`]: every standard speed), so that a
/// frame's serialization time is a multiplication; else it is 0, and each frame divides.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Tail {
    pub(crate) last: Flight,
    pub(crate) ps_per_byte: u64,
}

impl Tail {
    /// Nothing sent yet, on a wire of `rate` whose frames take the times of mode `ser`.
    pub(crate) fn new(ser: Serialization, rate: BitsPerSec) -> Tail {
        let ps_per_byte = match ser {
            Serialization::Exact => rate.exact_ps_per_byte().unwrap_or(0),
            // ns-3's rule truncates each frame's time: no fixed time per byte.
            Serialization::Ns3 => 0,
        };
        Tail { last: Flight::NONE, ps_per_byte }
    }
}

/// The serialization times a shard computed last, by (rate, frame size): a small direct-mapped
/// memo for the links whose time per byte is not a whole number of picoseconds, or that follow
/// ns-3's rule ([`Serialization::Ns3`]: a floating-point division and a
/// fixed-point truncation per frame). A run has few distinct link rates and frame sizes (full
/// packets, ACKs, last packets), so nearly every frame finds its time here; a miss computes it
/// and takes the slot. The times are those the rule gives, so the memo changes nothing else.
pub(crate) struct SerMemo {
    ser: Serialization,
    slots: Box<[(BitsPerSec, u64, Duration); SerMemo::SLOTS]>,
}

impl SerMemo {
    const SLOTS: usize = 64;

    /// An empty memo of the times of mode `ser`.
    pub(crate) fn new(ser: Serialization) -> SerMemo {
        // Rate 0 never matches: links have positive rates.
        SerMemo { ser, slots: Box::new([(BitsPerSec(0), 0, Duration::ZERO); Self::SLOTS]) }
    }

    /// The time `wire` bytes take at `rate`.
    #[inline]
    pub(crate) fn tx_time(&mut self, rate: BitsPerSec, wire: u64) -> Duration {
        let i = (wire ^ rate.0 ^ (rate.0 >> 17)) as usize % Self::SLOTS;
        let slot = &mut self.slots[i];
        if slot.0 == rate && slot.1 == wire {
            return slot.2;
        }
        let d = self.ser.tx_time(rate, wire);
        *slot = (rate, wire, d);
        d
    }
}

/// The priorities a port may not send, set by PFC frames from its peer: bit `q` for class `q`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Paused(u8);

impl Paused {
    /// Whether class `q` is paused.
    #[inline]
    pub(crate) fn get(self, q: usize) -> bool {
        self.0 & (1 << q) != 0
    }

    /// Pauses (`true`) or resumes class `q`.
    #[inline]
    pub(crate) fn set(&mut self, q: usize, pause: bool) {
        debug_assert!(q < QUEUES);
        if pause {
            self.0 |= 1 << q;
        } else {
            self.0 &= !(1 << q);
        }
    }

    /// The paused classes as a bit mask.
    #[inline]
    pub(crate) fn mask(self) -> u8 {
        self.0
    }
}

impl<F: CcFactory> Shard<F> {
    /// Puts packet `pkt` on the wire of port `port` of `node`, now; returns when the port is
    /// free again. The caller decides whether it needs a `TxDone` event then.
    #[inline]
    pub(crate) fn transmit(&mut self, sh: &Shared<F>, node: u32, port: u16, pkt: u32) -> Time {
        // SAFETY: a pooled packet and a node id (the invariants of `super::at`).
        let wire = unsafe { super::at(&self.pool, pkt as usize) }.wire as u64;
        let seq = self.next_seq(node);
        let now = self.now;
        let id = self.id;
        let slot = unsafe { super::at(&sh.place, node as usize) }.slot;
        let link = super::link_in(&mut self.hosts, &mut self.switches, slot, port);
        let ser = if link.tail.ps_per_byte != 0 {
            // `wire` < 2^32 bytes, `ps_per_byte` <= 8e6: no overflow.
            Duration(wire * link.tail.ps_per_byte)
        } else {
            self.ser_memo.tx_time(link.rate, wire)
        };
        let done = now + ser;
        link.busy_until = done;
        let at = done + link.delay;
        let (peer, peer_port, cross_slot) = (link.peer, link.peer_port, link.cross_slot);
        self.counters.frames_transmitted += 1;
        if let Some(plan) = &sh.faults {
            // The link fails before the frame's last bit arrives: the frame is lost.
            let link_id = sh.net.port(NodeId(node), PortNo(port)).link.0;
            if plan.cut(link_id, now, at) {
                self.counters.drops_link_down += 1;
                self.drop_packet(pkt);
                return done;
            }
        }
        // SAFETY: a link's peer (the nodes invariant of `super::at`).
        let to = unsafe { super::at(&sh.place, peer as usize) };
        let (shard, to) = (to.shard, to.slot);
        if shard != id {
            // The far end belongs to another shard: hand the packet over at the next window.
            debug_assert_ne!(cross_slot, Link::NO_CROSSING, "a link between shards has a slot");
            push_crossing(
                &mut self.outbox[shard as usize],
                (at, seq),
                to,
                peer_port,
                cross_slot,
                &self.pool[pkt as usize],
                sh.prefetchw,
            );
            self.release(pkt);
            return done;
        }
        // Still the link borrowed above (the branches that returned needed `self` whole).
        let last = std::mem::replace(&mut link.tail.last, Flight { at, seq, pkt });
        self.follow_or_queue(last, Flight { at, seq, pkt }, to, peer_port);
        done
    }

    /// Applies the per-link loss model on arrival; returns true if the frame is lost.
    #[inline]
    pub(crate) fn lost(link: &mut Link) -> bool {
        link.loss > 0.0 && link.rng.gen::<f64>() < link.loss
    }

    pub(crate) fn drop_packet(&mut self, pkt: u32) {
        let p = &self.pool[pkt as usize];
        if p.is_data() {
            self.counters.data_bytes_dropped += p.payload as u64;
        }
        self.release(pkt);
    }
}

/// Appends to `outbox` the crossing of packet `pkt` (a pooled packet) due at `port` of slot
/// `to` at `key` (time, sequence number), received at cross slot `slot`. The packet is copied
/// once, from the pool straight into the outbox: built as a value and pushed, the crossing was
/// copied twice (into a temporary, then into the vector).
///
/// With `prefetchw` it then prefetches the next slot's lines for writing. An outbox's buffer
/// goes back and forth between two shards (the receiver drains it in the next window, and the
/// sender refills it in the one after), so its lines are usually in the cache of the core that
/// read them, and every store into them waited for the line to be taken back. Prefetched when
/// the previous crossing is written, they arrive before they are needed: two threads ran the
/// 12 ms fat tree 6–14% faster, and 13–24% faster with every link between shards
/// (`--partition round-robin`; docs/performance.md, "One core, twenty-first session").
#[inline]
fn push_crossing(
    outbox: &mut Vec<Crossing>,
    key: (Time, u64),
    to: super::Slot,
    port: u16,
    slot: u32,
    pkt: &crate::packet::Packet,
    prefetchw: bool,
) {
    use std::ptr::addr_of_mut;
    outbox.reserve(1);
    let len = outbox.len();
    // SAFETY: `reserve(1)` made room for element `len`; every field of it is written before
    // the length covers it, and `pkt` (in the pool) cannot overlap the outbox's buffer.
    unsafe {
        let c = outbox.as_mut_ptr().add(len);
        addr_of_mut!((*c).at).write(key.0);
        addr_of_mut!((*c).seq).write(key.1);
        addr_of_mut!((*c).to).write(to);
        addr_of_mut!((*c).port).write(port);
        addr_of_mut!((*c).slot).write(slot);
        super::copy_packet(pkt, addr_of_mut!((*c).pkt));
        outbox.set_len(len + 1);
    }
    if prefetchw {
        let next = outbox.as_ptr().wrapping_add(outbox.len()).cast::<u8>();
        for line in 0..std::mem::size_of::<Crossing>().div_ceil(64) {
            super::prefetch_write(next.wrapping_add(64 * line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{push_crossing, SerMemo};
    use crate::config::Serialization;
    use crate::engine::{has_prefetchw, Crossing, Slot};
    use crate::ids::{FlowId, NodeId, PortNo};
    use crate::packet::{Area, Ecn, HeaderMode, Packet, PacketKind, NO_PORT, PATH_HOPS};
    use crate::units::{BitsPerSec, Time};
    use proptest::prelude::*;

    fn packet(seq: u64) -> Packet {
        Packet {
            kind: PacketKind::Data,
            wire: 1_048,
            payload: 1_000,
            pg: 3,
            ecn: Ecn::Ect0,
            ecn_echo: false,
            flow: FlowId(7),
            src: NodeId(1),
            dst: NodeId(2),
            path: [NO_PORT; PATH_HOPS],
            seq,
            ts: Time(seq),
            header: HeaderMode::None,
            hop: 0,
            area: Area::None,
            pint: 0,
            in_port: PortNo(0),
            arrived: Time(seq),
        }
    }

    /// Crossings pushed with the next slot prefetched for writing (where this processor can)
    /// are the crossings pushed without: every field as given, in order, including pushes that
    /// fill the buffer exactly, so that the prefetched slot lies past its end.
    #[test]
    fn crossings_pushed_with_the_write_prefetch_are_unchanged() {
        let fill = |prefetchw: bool| {
            let mut outbox: Vec<Crossing> = Vec::with_capacity(1);
            for i in 0..40u64 {
                let to = if i % 2 == 0 { Slot::Host(i as u32) } else { Slot::Switch(i as u32) };
                let key = (Time(1_000 + i), i << 24);
                push_crossing(&mut outbox, key, to, i as u16, i as u32 * 3, &packet(i), prefetchw);
            }
            outbox
                .iter()
                .map(|c| {
                    let to = match c.to {
                        Slot::Host(h) => (0, h),
                        Slot::Switch(s) => (1, s),
                    };
                    (c.at, c.seq, to, c.port, c.slot, c.pkt.seq, c.pkt.wire, c.pkt.flow)
                })
                .collect::<Vec<_>>()
        };
        let plain = fill(false);
        assert_eq!(plain.len(), 40);
        assert_eq!(plain[39], (Time(1_039), 39 << 24, (1, 39), 39, 117, 39, 1_048, FlowId(7)));
        assert_eq!(fill(has_prefetchw()), plain);
    }

    proptest! {
        /// The memo answers what its rule computes, for any sequence of (rate, size), repeats
        /// and slot collisions included, in either mode.
        #[test]
        fn the_serialization_memo_gives_the_rules_times(
            frames in prop::collection::vec(
                (any::<bool>(), prop::sample::select(vec![1_000_000u64, 3_000_000_000,
                    25_000_000_000, 100_000_000_000, 100_000_000_001, 400_000_000_000]),
                 prop::sample::select(vec![64u64, 84, 1000, 1048, 1064, 9000, 65_536])),
                1..300),
        ) {
            let mut memos = [SerMemo::new(Serialization::Exact), SerMemo::new(Serialization::Ns3)];
            for (ns3, rate, wire) in frames {
                let memo = &mut memos[ns3 as usize];
                let rate = BitsPerSec(rate);
                prop_assert_eq!(memo.tx_time(rate, wire), memo.ser.tx_time(rate, wire));
            }
        }
    }
}
