//! The engine: node state, the per-shard event loop and every handler.
//!
//! A [`Shard`] owns a group of nodes (all of them in a sequential run) with their event queue,
//! packet pool, queue pairs and counters; the immutable facts of the run ([`Shared`]) are
//! shared by all shards. A packet sent over a link whose far end belongs to another shard
//! leaves through the shard's outbox and is delivered into the other shard's queue at the next
//! window boundary (see `sim.rs`), with the same `(time, seq)` key it would have had in a
//! sequential run, so the order of events at every node is the same for any partitioning.

mod app;
mod fault;
mod host;
mod link;
mod pool;
mod roce;
mod switch;
mod tcp;
mod transport;

pub(crate) use app::{initial_state, AppState, ConnState};
pub(crate) use fault::FaultPlan;
pub(crate) use host::{Host, DENSE_SCAN};
pub(crate) use link::Link;
pub(crate) use link::{Flight, SerMemo, Tail};
pub(crate) use pool::{PoolState, NO_POOL};
pub(crate) use roce::{Qp, Rx};
pub(crate) use switch::{Backlog, Switch, SwitchPort};
pub(crate) use tcp::{TcpRx, TcpTx};
pub(crate) use transport::{FlowRx, FlowTable, FlowTables, FlowTx};

use crate::cc::CcFactory;
use crate::config::{FlowSpec, FlowStartOrder, SimConfig};
use crate::event::CalendarQueue;
use crate::network::{Network, RoutingTable};
use crate::packet::{HeaderMode, Packet, NO_PORT, PATH_HOPS};
use crate::results::{Counters, HopSample, PfcEvent};
use crate::units::{Duration, Time};

/// Events. Compact (12 bytes): packets live in a pool and are named by index.
///
/// `repr(u8)` fixes the layout (a `u8` tag, then each variant's fields in the order declared,
/// as a `repr(C)` struct), and the fields are declared so that each variant packs into 12
/// bytes and both arrivals hold their packet at byte 8: the loop reads that word from the
/// next event whatever its kind and keeps it only for an arrival, without a branch on the
/// kind ([`Event::packet_or_zero`]).
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub(crate) enum Event {
    /// Packet `pkt`, the first on its link's wire, has been fully received on `port` of
    /// switch slot `sw` (an index into this shard's switches, not a node id: the event names
    /// where its handler looks, so that dispatching it needs no lookup and no second branch).
    /// Packets on a link arrive in order, so only the first of each link sits in the event
    /// queue; see [`Flight`].
    ArriveSwitch { port: u16, sw: u32, pkt: u32 } = 0,
    /// As [`Event::ArriveSwitch`], at host slot `host`.
    ArriveHost { host: u32, pkt: u32 } = ARRIVE_HOST_TAG,
    // The two kinds next to the arrivals have a field at byte 8 too (so that the test of
    // `Event::packet_or_zero` sees a tag test off by one or two).
    /// NIC pacing wake-up at host slot `host` (stale unless `version` matches).
    NicWake { host: u32, version: u32 },
    /// Congestion-control timer `slot` of flow `flow` (stale unless `version` matches).
    CcTimer { slot: u8, flow: u32, version: u32 },
    /// Egress `port` of switch slot `sw` finished transmitting.
    SwitchTxDone { port: u16, sw: u32 },
    /// The NIC of host slot `host` finished transmitting. (Debug builds also queue, with
    /// `check` set, the marker of a deferred one; see [`Shard::host_transmit`].)
    HostTxDone { check: bool, host: u32 },
    /// Flow `flow` starts (at its source host, or at the client of a TCP handshake).
    FlowStart { flow: u32 },
    /// Flow `flow` begins sending, after the events already queued for its start's instant
    /// at its host ([`crate::config::FlowStartOrder::AfterQueued`]).
    FlowBegin { flow: u32 },
    /// Application `app`'s timer at its client host (start, or the next open-loop arrival).
    AppTimer { app: u32 },
    /// The link at `port` of `node` fails (`up = false`) or is restored.
    LinkChange { up: bool, port: u16, node: u32 },
}

impl Event {
    /// The packet of an arrival, or 0 for any other event: read without a branch on the
    /// kind, so that the loop's prefetch for the next event (whose kind is known only when
    /// its calendar node arrives from memory) starts no branch that could be mispredicted
    /// late (docs/performance.md, "One core, seventeenth session").
    #[inline(always)]
    pub(crate) fn packet_or_zero(&self) -> u32 {
        use std::mem::MaybeUninit;
        // SAFETY: bytes 8..12 lie within the event (12 bytes, `events_are_compact`); read as
        // `MaybeUninit`, they may be padding. The tag is the first byte (`repr(u8)`).
        let (tag, word) = unsafe {
            let p = (self as *const Event).cast::<u8>();
            (*p, p.add(8).cast::<MaybeUninit<u32>>().read_unaligned())
        };
        let arrival = tag <= ARRIVE_HOST_TAG;
        let word = std::hint::select_unpredictable(arrival, word, MaybeUninit::new(0));
        // SAFETY: for an arrival, bytes 8..12 are its `pkt` (the layout fixed above, checked
        // by `arrivals_hold_their_packet_at_byte_8`); else the word is 0.
        unsafe { word.assume_init() }
    }
}

// `Event::packet_or_zero` reads bytes 8..12 of an event.
const _: () = assert!(std::mem::size_of::<Event>() == 12);

/// The tag of `Event::ArriveHost`; `Event::ArriveSwitch`'s is 0, every other kind's larger.
const ARRIVE_HOST_TAG: u8 = 1;

/// The arrival of packet `pkt` on `port` of the node in slot `to`.
#[inline(always)]
pub(crate) fn arrival(to: Slot, port: u16, pkt: u32) -> Event {
    match to {
        Slot::Switch(sw) => Event::ArriveSwitch { sw, port, pkt },
        Slot::Host(host) => Event::ArriveHost { host, pkt },
    }
}

/// Whether this processor has PREFETCHW, the prefetch for writing (CPUID 8000_0001h, ECX bit
/// 8: every AMD64 processor, and Intel's since Broadwell). Where it is missing, the instruction
/// is not issued at all ([`prefetch_write`]).
pub(crate) fn has_prefetchw() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // CPUID is on every x86-64 processor (`__cpuid` is an `unsafe` function in the older
        // Rust releases this crate supports).
        #[allow(unused_unsafe)]
        // SAFETY: CPUID has no preconditions on x86-64.
        let (max, ext) = unsafe { (__cpuid(0x8000_0000).eax, __cpuid(0x8000_0001).ecx) };
        max >= 0x8000_0001 && ext & (1 << 8) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Hints the CPU to fetch the cache line at `p` (which need not point to anything) for
/// writing: in the exclusive state, so that the stores that follow need not first take the
/// line from the core that holds it. Only where [`has_prefetchw`] says the processor has the
/// instruction.
#[inline(always)]
fn prefetch_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults or changes memory, whatever the
    // address. The caller checked that the processor has PREFETCHW.
    unsafe {
        std::arch::asm!("prefetchw [{}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hints the CPU to load the cache line at `p`, which need not point to anything.
#[inline(always)]
fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults or changes memory, whatever the
    // address. SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `v[i]`, without the bounds check: for the hottest lookups of the event loop and the
/// frame path, whose indices the engine made itself (a third of the loop's instructions were
/// bounds checks). Each caller names the invariant that makes `i` valid; debug builds (the
/// test suite) check it. The invariants:
///
/// * **pool**: a packet index held in an event, a [`Flight`] record, a queue discipline or a
///   port was returned by [`Shard::alloc`]; the pool and its [`Shard::flight`] records grow
///   together and never shrink.
/// * **nodes**: a node id held in an event, a link's `peer` or a packet was checked against
///   the network when the run was built, and [`Shared::place`] and [`Shard::node_seq`] have
///   an entry for every node.
/// * **slots**: a host or switch slot held in an event of a shard's queue indexes that
///   shard's hosts or switches: the scheduling node's own (its handler runs in its shard), or
///   a link peer's, read from [`Shared::place`] when the frame was sent (crossings carry it
///   to the shard that owns the receiver).
/// * **ports**: a port number held in an event, a link's `peer_port`, a packet's `in_port` or
///   a routing table's next hop is a port of that switch.
///
/// # Safety
/// `i < v.len()`.
#[inline(always)]
pub(crate) unsafe fn at<T>(v: &[T], i: usize) -> &T {
    debug_assert!(i < v.len(), "index {i} out of {}", v.len());
    // SAFETY: the caller's contract.
    unsafe { v.get_unchecked(i) }
}

/// [`at`], mutable.
///
/// # Safety
/// `i < v.len()`.
#[inline(always)]
pub(crate) unsafe fn at_mut<T>(v: &mut [T], i: usize) -> &mut T {
    debug_assert!(i < v.len(), "index {i} out of {}", v.len());
    // SAFETY: the caller's contract.
    unsafe { v.get_unchecked_mut(i) }
}

/// The link at `port` of the node in `slot`, borrowed from the node lists alone (so that a
/// caller may use the shard's other fields while it holds the link).
#[inline]
pub(crate) fn link_in<'a, C>(
    hosts: &'a mut [Host<C>],
    switches: &'a mut [Switch],
    slot: Slot,
    port: u16,
) -> &'a mut Link {
    // SAFETY: `slot` is a node of this shard's (the slots invariant of `at`), and `port` a
    // port of it (the ports invariant).
    unsafe {
        match slot {
            Slot::Host(h) => &mut at_mut(hosts, h as usize).link,
            Slot::Switch(s) => {
                &mut at_mut(&mut at_mut(switches, s as usize).ports, port as usize).link
            }
        }
    }
}

/// A flow's egress ports at the switches of its two paths, as routing chooses them for its
/// packets: `ports[d]` for direction `d` (0 from the flow's source, 1 back), which its senders
/// copy into each packet ([`Packet::path`]). The route of a packet is a function of the
/// switch, its destination and its ECMP key, all fixed per flow and direction while no link
/// fails; so a switch reads the port from the packet it has just received instead of hashing
/// the packet's key and reading the routing table (a chain of a hash and four dependent loads
/// at every switch arrival).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
pub(crate) struct FlowPorts {
    /// By direction, the egress port at each switch of the path, in path order;
    /// [`NO_PORT`] past the path's last switch, and for every switch of a path longer than
    /// [`PATH_HOPS`] (whose switches route the packet as before).
    pub(crate) ports: [[u16; PATH_HOPS]; 2],
}

// Two to a cache line, never across one.
const _: () = assert!(std::mem::size_of::<FlowPorts>() == 32);

impl FlowPorts {
    /// The ports of a flow along its forward and reverse paths (each from its source host:
    /// the hops after the first are the switches').
    pub(crate) fn new(fwd: &[crate::paths::Hop], rev: &[crate::paths::Hop]) -> Self {
        let mut ports = [[NO_PORT; PATH_HOPS]; 2];
        for (d, path) in [fwd, rev].into_iter().enumerate() {
            let switches = path.get(1..).unwrap_or(&[]);
            if switches.len() <= PATH_HOPS {
                for (slot, h) in ports[d].iter_mut().zip(switches) {
                    *slot = h.port.0;
                }
            }
        }
        FlowPorts { ports }
    }
}

impl<F: CcFactory> Shared<F> {
    /// The egress ports a packet of flow `flow` carries in direction `dir` (0 from the flow's
    /// source, 1 back): none kept in runs with link events.
    #[inline]
    pub(crate) fn path_of(&self, flow: usize, dir: usize) -> [u16; PATH_HOPS] {
        self.flow_ports.get(flow).map_or([NO_PORT; PATH_HOPS], |e| e.ports[dir])
    }

    /// The ECMP key of a packet of flow `flow` bound for `dst`: its flow's forward key, or the
    /// reverse one for a packet going back to the flow's source.
    #[inline]
    pub(crate) fn key_of(&self, flow: usize, dst: crate::ids::NodeId) -> [u32; 3] {
        let m = &self.meta[flow];
        if self.flows[flow].dst == dst {
            m.hash_fwd
        } else {
            m.hash_rev
        }
    }
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
    /// The PINT utilisation EWMA's window (the max base RTT, ps), in runs whose packets carry a
    /// PINT area ([`HeaderMode::Pint`]); the factory encodes the digest.
    pub(crate) pint: Option<u64>,
    pub(crate) factory: F,
    pub(crate) flows: Vec<FlowSpec>,
    pub(crate) meta: Vec<FlowMeta>,
    /// By flow, its packets' egress ports at the switches of its two paths ([`FlowPorts`]);
    /// empty in runs with link events, whose routes change.
    pub(crate) flow_ports: Vec<FlowPorts>,
    pub(crate) place: Vec<Place>,
    /// The processor has PREFETCHW ([`has_prefetchw`]): a shard that hands a packet to another
    /// prefetches its outbox's next slot for writing.
    pub(crate) prefetchw: bool,
    /// Some flow is traced ([`FlowMeta::traced`]); spares the per-hop lookup otherwise.
    pub(crate) tracing: bool,
    /// How many flows were listed; flows from here on are the streams of
    /// `cfg.apps.connections` (two per connection: request, response).
    pub(crate) nlisted: usize,
    /// Each connection's paths and framing, for ideal QCTs.
    pub(crate) conn_paths: Vec<ConnPaths>,
    /// Each TCP group's parameters with the handshake off (for connection streams).
    pub(crate) stream_tcp: Vec<crate::config::TcpConfig>,
    /// By listed flow, its client's connection pool ([`PoolState`]; [`NO_POOL`]: none, a
    /// connection of its own); empty when no group reuses connections.
    pub(crate) pool_of: Vec<u32>,
    /// The link failure plan, in runs with link events.
    pub(crate) faults: Option<Box<FaultPlan>>,
    /// What the switch ports' queue monitors keep (the same at every monitored port).
    pub(crate) watch: crate::qmon::Watch,
}

impl<F: CcFactory> Shared<F> {
    /// The host that starts listed flow `flow`: its source, or its destination when that is a
    /// TCP client that opens the connection with a handshake.
    pub(crate) fn initiator(&self, flow: usize) -> crate::ids::NodeId {
        let f = &self.flows[flow];
        let client = match self.cfg.transport_of(flow) {
            crate::config::Transport::Tcp(g) => self.cfg.tcp_groups[g as usize].tcp.handshake,
            crate::config::Transport::Roce => false,
        };
        if client {
            f.dst
        } else {
            f.src
        }
    }

    /// Whether listed flow `flow` is in a connection pool ([`Shared::pool_of`]).
    #[inline]
    pub(crate) fn pooled(&self, flow: usize) -> bool {
        self.pool_of.get(flow).is_some_and(|&p| p != NO_POOL)
    }
}

/// How a stream cuts messages into packets: full packets of `seg` payload bytes, each with
/// `hdr` header bytes, frames at least `min` bytes. `ack` is the frame a RoCE receiver sends
/// for a message's last packet, when it ACKs that packet, before the server's answer can leave
/// (its NIC's ACK queue goes first); TCP answers first and ACKs after, so it has none.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Framing {
    pub(crate) seg: u64,
    pub(crate) hdr: u64,
    pub(crate) min: u64,
    pub(crate) ack: u64,
}

/// A connection's request and response paths, for the ideal QCT.
pub(crate) struct ConnPaths {
    pub(crate) fwd: Vec<crate::paths::Hop>,
    pub(crate) rev: Vec<crate::paths::Hop>,
    pub(crate) framing: Framing,
}

impl ConnPaths {
    /// The time a message of `size` bytes takes over `hops` alone: first bit out to last bit
    /// in, packets back to back.
    fn message(
        &self,
        hops: &[crate::paths::Hop],
        size: u64,
        ser: crate::config::Serialization,
    ) -> Duration {
        let f = self.framing;
        let n = size.div_ceil(f.seg);
        let last = size - (n - 1) * f.seg;
        crate::paths::pipeline_time(
            hops,
            n,
            (f.seg + f.hdr).max(f.min),
            (last + f.hdr).max(f.min),
            ser,
        )
    }

    /// The QCT of a query of `size` bytes that starts at byte `start` of the request stream,
    /// answered by `response` bytes, alone in the network: the query's packets to the server,
    /// then, over RoCE, the server NIC's ACKs of those of its packets that end at an ACK point
    /// (`nic`'s [`crate::config::NicConfig::acks_at`] of their end on the stream), which go
    /// before the answer, then the answer.
    pub(crate) fn ideal(
        &self,
        start: u64,
        size: u64,
        response: u64,
        nic: &crate::config::NicConfig,
        ser: crate::config::Serialization,
    ) -> Duration {
        self.answer_start(start, size, nic, ser) + self.message(&self.rev, response, ser)
    }

    /// When the answer to the query of [`ConnPaths::ideal`] can leave the server NIC, from the
    /// query's first bit out: once its last packet has arrived and the NIC has sent its ACKs.
    /// Each ACK leaves at its packet's arrival or when the one before it is out, so the ACK of
    /// the last packet waits behind the ACK of the packet before when the short last packet
    /// arrives sooner than that ACK takes (1,001 bytes at 25 Gb/s in 1,000-byte packets).
    fn answer_start(
        &self,
        start: u64,
        size: u64,
        nic: &crate::config::NicConfig,
        ser: crate::config::Serialization,
    ) -> Duration {
        let f = self.framing;
        let last = self.message(&self.fwd, size, ser);
        let s = match self.rev.first() {
            Some(h) if f.ack > 0 => ser.tx_time(h.rate, f.ack),
            _ => return last,
        };
        let n = size.div_ceil(f.seg);
        let acked = |k: u64| nic.acks_at(start + if k == n { size } else { k * f.seg });
        let full = (f.seg + f.hdr).max(f.min);
        let arrive = |k: u64| crate::paths::pipeline_time(&self.fwd, k, full, full, ser);
        // Full packets arrive a bottleneck's packet time apart. Where that is at least an ACK's
        // time, the NIC has sent each ACK before the next packet arrives, so only the ACK of
        // the packet before the last can still hold it. Otherwise every ACK counts.
        let mut from = 1;
        if n > 2 && arrive(2).as_ps().saturating_sub(arrive(1).as_ps()) >= s.as_ps() {
            from = n - 1;
        }
        let mut free = Duration::ZERO;
        for k in from..n {
            if acked(k) {
                free = free.max(arrive(k)).saturating_add(s);
            }
        }
        let leaves = free.max(last);
        if acked(n) {
            leaves.saturating_add(s)
        } else {
            leaves
        }
    }
}

/// A packet leaving a shard: delivered to `node`'s `port` at `at` with key `seq`.
pub(crate) struct Crossing {
    pub(crate) at: Time,
    pub(crate) seq: u64,
    /// The receiving node's slot in its shard.
    pub(crate) to: Slot,
    pub(crate) port: u16,
    /// The receiving end's slot in the receiver's [`Shard::cross_in`].
    pub(crate) slot: u32,
    pub(crate) pkt: Packet,
}

/// Copies a packet in two halves, each small enough for the compiler to copy inline with
/// vector moves: one copy of the whole (248 bytes) is a call to libc's `memcpy`, about 30
/// instructions and a call on every crossing, twice (into the outbox, out of the mailbox).
///
/// # Safety
/// `src` and `dst` must be valid, aligned and not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_packet(src: *const Packet, dst: *mut Packet) {
    const N: usize = std::mem::size_of::<Packet>();
    const HALF: usize = N / 2 / 8 * 8;
    let (s, d) = (src.cast::<u8>(), dst.cast::<u8>());
    // SAFETY: both halves lie within the packets (the caller's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(s.cast::<[u8; HALF]>(), d.cast::<[u8; HALF]>(), 1);
        std::ptr::copy_nonoverlapping(
            s.add(HALF).cast::<[u8; N - HALF]>(),
            d.add(HALF).cast::<[u8; N - HALF]>(),
            1,
        );
    }
}

/// The mutable state of a group of nodes and their event loop.
///
/// Aligned to 128 bytes (two cache lines, the pair Intel's spatial prefetcher fetches
/// together): the shards of a run lie side by side in one vector, and each thread writes its
/// shards' scalars (clock, counters, the queue's cursor) on every event. Unaligned, the end of
/// one shard and the start of the next shared a line, which then moved between two cores on
/// every event: two threads on the 12 ms fat tree ran ~12% slower with four shards, and up to
/// 25% slower with a two-shard partition that put the busiest fields on the shared line
/// (docs/performance.md, "False sharing between shards").
#[repr(align(128))]
pub(crate) struct Shard<F: CcFactory> {
    pub(crate) id: u32,
    /// Hosts with up to this many senders have the NIC scheduler read each in turn; more, only
    /// its candidates (`host::Candidates`; [`crate::Simulation::set_nic_dense_scan`]).
    pub(crate) dense_scan: usize,
    /// TCP timers queue an event for every change of deadline, as before they were lazy
    /// ([`crate::Simulation::set_eager_tcp_timers`]).
    pub(crate) eager_timers: bool,
    pub(crate) now: Time,
    /// The sequence number of the event now running.
    pub(crate) cur_seq: u64,
    pub(crate) queue: CalendarQueue<Event>,
    /// Per-node scheduling counters (indexed by node id; only this shard's nodes are used).
    pub(crate) node_seq: Vec<u64>,
    pub(crate) hosts: Vec<Host<F::Cc>>,
    pub(crate) switches: Vec<Switch>,
    pub(crate) pool: Vec<Packet>,
    /// By pool index: for a frame on a link's wire, the frame sent behind it on that link
    /// ([`Flight::NONE`] if none yet).
    pub(crate) flight: Vec<Flight>,
    pub(crate) free: Vec<u32>,
    /// Senders by flow id: the flows with an end in this shard (the source's is the one used;
    /// the destination's copy stays unstarted).
    pub(crate) tx: FlowTable<FlowTx<F::Cc>>,
    /// Receivers by flow id: the flows with an end in this shard (the destination's is the one
    /// used).
    pub(crate) rx: FlowTable<FlowRx>,
    /// This shard's completed flows and their completion times, in the order they completed.
    pub(crate) fct: Vec<(u32, Duration)>,
    /// This shard's flows that gave up (retransmission timeouts exhausted), and when.
    pub(crate) gave_up: Vec<(u32, Time)>,
    /// Flow starts not yet in the event queue, latest first: (start, seq, flow).
    pub(crate) pending_starts: Vec<(Time, u64, u32)>,
    pub(crate) counters: Counters,
    pub(crate) done: usize,
    /// Packets for other shards, by target shard, sent during the current window.
    pub(crate) outbox: Vec<Vec<Crossing>>,
    /// By receiving end of a link from another shard (numbered at set-up; the sending port
    /// keeps the number, [`Link::cross_slot`]): the last packet taken in on it
    /// ([`Shard::ingest`]).
    pub(crate) cross_in: Vec<Flight>,
    /// By switch slot and port, in runs whose packets carry a PINT area (empty otherwise): the
    /// random stream of the PINT digest's rounding ([`crate::sim::pint_rng`]). It is not the
    /// link's own stream, which link loss and the queue disciplines (RED's marking) draw from,
    /// so that neither changes the digests: the reference draws its rounding from C's `rand()`
    /// and RED's from ns-3's generator. Kept out of [`Switch`], whose frame path it would
    /// widen.
    pub(crate) pint_rng: Vec<Vec<rand_chacha::ChaCha8Rng>>,
    /// Hop samples of traced flows, in the order this shard recorded them.
    pub(crate) hop_trace: Vec<HopSample>,
    /// PFC frames sent by this shard's switches, in the order sent (when logged).
    pub(crate) pfc_log: Vec<PfcEvent>,
    /// Scratch: the packets a queue discipline dropped during one call.
    pub(crate) dropped: Vec<dcsim_aqm::Dropped>,
    /// Where a switch writes the INT record of a packet that takes none (`send_dequeued`).
    pub(crate) int_scratch: crate::packet::IntHop,
    /// Serialization times by (rate, frame size), for links that cannot multiply.
    pub(crate) ser_memo: SerMemo,
    /// Connection states (each shard uses the sides of its own hosts).
    pub(crate) conns: Vec<ConnState>,
    /// Client states by application (used by the shard of each client's host).
    pub(crate) app_state: Vec<AppState>,
    /// Queries completed at this shard's clients and not yet taken.
    pub(crate) queries: Vec<crate::apps::QueryRecord>,
    /// Connection pools (each used by the shard of its client's host).
    pub(crate) pools: Vec<PoolState>,
    /// The latest deadline a TCP timer followed without an event of its own
    /// ([`tcp::LazyTimer`]). An event per deadline, as before the timers were lazy, would have
    /// been popped then (if only as a lapsed one), and a run's end time (the last event's, up
    /// to the stop time) counts it, so that outputs do not depend on how timers are kept.
    pub(crate) lapsed_until: Time,
}

impl<F: CcFactory> Shard<F> {
    /// Processes this shard's events with time `< end` and `<= stop`.
    pub(crate) fn run_window(&mut self, sh: &Shared<F>, end: Time, stop: Time) {
        // The events at `at < end` and `at <= stop`.
        if end == Time::ZERO {
            return;
        }
        let last = Time(end.0 - 1).min(stop);
        while let Some(((at, seq, ev), next)) = self.queue.pop_until_peek(last) {
            self.now = at;
            self.cur_seq = seq;
            self.counters.events += 1;
            self.prefetch_next(next);
            self.dispatch(sh, ev);
        }
    }

    /// Starts loading the packet the next event will handle, if it is a link arrival, so that
    /// the cache miss on the pooled packet overlaps with the current event's work.
    ///
    /// Without a branch on the next event's kind: that kind is known only once the
    /// calendar's node for it comes from memory, so a branch on it was resolved late and,
    /// mispredicted, threw away the current event's work done meanwhile. Prefetching only
    /// for arrivals, by a select, was 7% faster on the calibration and 11% on the 2 ms fat
    /// tree than a `match` that also prefetched for transmission-done and NIC events
    /// (docs/performance.md, "One core, seventeenth session"). The packet a
    /// transmission-done sends is prefetched when that event is queued instead
    /// (`Shard::send_dequeued`).
    #[inline]
    fn prefetch_next(&mut self, next: Option<Event>) {
        let Some(ev) = next else { return };
        // The packet's first two lines: every hop reads the first and writes the second
        // (`arrived`; an INT stamp's count and the area's tag); and its wire record. For an
        // event other than an arrival, slot 0's (a hint only: nothing is read).
        let i = ev.packet_or_zero() as usize;
        let p = self.pool.as_ptr().wrapping_add(i);
        prefetch_ptr(p);
        prefetch_ptr(p.cast::<u8>().wrapping_add(std::mem::offset_of!(Packet, arrived)));
        prefetch_ptr(self.flight.as_ptr().wrapping_add(i));
    }

    /// Takes in a packet another shard sent to this one (copied once, from the mailbox into
    /// the pool), as an arrival on its link's wire: behind the last packet taken in on the
    /// same link ([`Shard::cross_in`]) while that one is still to arrive, as
    /// [`Shard::follow_or_queue`] chains a link's frames within a shard. So a window's
    /// crossings (thousands, on a busy cut) put one event per link in the queue, not one per
    /// packet, and the keys are those the packets were sent with. A packet that does not
    /// follow the remembered one (the end-of-run hand-over may take mailboxes out of step
    /// order) enters the queue on its own, which is also exact.
    #[inline]
    pub(crate) fn ingest(&mut self, c: &Crossing) {
        let pkt = self.alloc_ref(&c.pkt);
        let me = Flight { at: c.at, seq: c.seq, pkt };
        let tail = &mut self.cross_in[c.slot as usize];
        let last = *tail;
        if (me.at, me.seq) > (last.at, last.seq) {
            *tail = me;
            self.follow_or_queue(last, me, c.to, c.port);
        } else {
            self.follow_or_queue(Flight::NONE, me, c.to, c.port);
        }
    }

    /// Puts frame `me` on its link's wire towards `port` of `node`: behind `last`, the frame
    /// sent before it on the same link, if that one is still on the wire (chained in
    /// [`Shard::flight`]; its arrival will queue this one's), else its arrival in the event
    /// queue.
    ///
    /// "Still on the wire" is "due after now", not "its key follows the running event's": an
    /// event may be scheduled for now with a smaller sequence number than one already run at
    /// now, so a frame due at now may have arrived although its key is the larger. One due at
    /// now is queued on its own, which is exact whether or not it has arrived.
    #[inline]
    pub(crate) fn follow_or_queue(&mut self, last: Flight, me: Flight, to: Slot, port: u16) {
        // SAFETY: frames on a wire are pooled packets (the pool invariant of `at`); `last`,
        // due after now, is one (`Flight::NONE` is due at 0).
        unsafe { *at_mut(&mut self.flight, me.pkt as usize) = Flight::NONE };
        if last.at > self.now {
            unsafe { *at_mut(&mut self.flight, last.pkt as usize) = me };
        } else {
            self.queue.push(me.at, me.seq, arrival(to, port, me.pkt));
        }
    }

    /// Packets sent to other shards and not yet delivered.
    pub(crate) fn outgoing(&self) -> impl Iterator<Item = &Crossing> {
        self.outbox.iter().flatten()
    }

    // ----- scheduling ------------------------------------------------------------------

    #[inline]
    pub(crate) fn next_seq(&mut self, origin: u32) -> u64 {
        // SAFETY: a node id (the nodes invariant of `at`).
        let c = unsafe { at_mut(&mut self.node_seq, origin as usize) };
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
    pub(crate) fn schedule(&mut self, origin: u32, at: Time, ev: Event) {
        let seq = self.next_seq(origin);
        self.queue.push(at, seq, ev);
    }

    #[inline]
    pub(crate) fn link_mut(&mut self, sh: &Shared<F>, node: u32, port: u16) -> &mut Link {
        link_in(&mut self.hosts, &mut self.switches, sh.place[node as usize].slot, port)
    }

    #[inline]
    pub(crate) fn alloc(&mut self, p: Packet) -> u32 {
        self.alloc_ref(&p)
    }

    /// [`Shard::alloc`] of a packet whose area is an empty INT stack (`p.area` is not read):
    /// a slot last used by a packet with INT records keeps them and only has its count
    /// cleared ([`IntStack::clear`]), so a new data packet writes its header and not the
    /// 160 bytes of records its hops overwrite (the copy of a whole packet was a `memmove`
    /// call per data packet; docs/performance.md, "One core, sixteenth session").
    ///
    /// [`IntStack::clear`]: crate::packet::IntStack::clear
    #[inline]
    pub(crate) fn alloc_int(&mut self, p: &Packet) -> u32 {
        use crate::packet::{Area, IntStack};
        let Some(i) = self.free.pop() else {
            return self.alloc_ref(&Packet { area: Area::Int(IntStack::EMPTY), ..*p });
        };
        // SAFETY: a free index is a slot of the pool (the pool invariant of `at`).
        let slot = unsafe { self.pool.get_unchecked_mut(i as usize) };
        // Every field but the area, by name: a field added to `Packet` fails to compile here.
        let Packet {
            wire,
            payload,
            flow,
            src,
            dst,
            path,
            kind,
            pg,
            ecn,
            ecn_echo,
            header,
            hop,
            pint,
            in_port,
            seq,
            ts,
            arrived,
            area: _,
        } = *p;
        slot.wire = wire;
        slot.payload = payload;
        slot.flow = flow;
        slot.src = src;
        slot.dst = dst;
        slot.path = path;
        slot.kind = kind;
        slot.pg = pg;
        slot.ecn = ecn;
        slot.ecn_echo = ecn_echo;
        slot.header = header;
        slot.hop = hop;
        slot.pint = pint;
        slot.in_port = in_port;
        slot.seq = seq;
        slot.ts = ts;
        slot.arrived = arrived;
        match &mut slot.area {
            Area::Int(s) => s.clear(),
            a => *a = Area::Int(IntStack::EMPTY),
        }
        i
    }

    /// [`Shard::alloc`] of a packet copied from where it lies (a crossing in a mailbox).
    #[inline]
    pub(crate) fn alloc_ref(&mut self, p: &Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                let slot: *mut Packet = &mut self.pool[i as usize];
                // SAFETY: a pool slot and a mailbox's packet: both valid, never the same.
                unsafe { copy_packet(p, slot) };
                i
            }
            None => {
                // Indices are `u32`, and `u32::MAX` is `Flight::NONE`: 2^32 - 1 packets at once
                // (1 TiB of pool) would alias it. Checked only when the pool grows.
                assert!(
                    self.pool.len() < Flight::NONE.pkt as usize,
                    "more than 2^32 - 1 packets in flight or queued in one shard"
                );
                self.pool.push(*p);
                self.flight.push(Flight::NONE);
                (self.pool.len() - 1) as u32
            }
        }
    }

    #[inline]
    pub(crate) fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    /// The frame on the wire behind packet `pkt`, which has just arrived, if one was chained
    /// behind it ([`Flight`]).
    #[inline(always)]
    fn next_on_wire(&self, pkt: u32) -> Option<Flight> {
        // SAFETY: an event's packet (the pool invariant of `at`).
        let next = unsafe { *at(&self.flight, pkt as usize) };
        (next.pkt != Flight::NONE.pkt).then_some(next)
    }

    #[inline(always)]
    fn dispatch(&mut self, sh: &Shared<F>, ev: Event) {
        match ev {
            Event::ArriveSwitch { sw, port, pkt } => {
                if let Some(next) = self.next_on_wire(pkt) {
                    self.queue.push(
                        next.at,
                        next.seq,
                        Event::ArriveSwitch { sw, port, pkt: next.pkt },
                    );
                }
                self.switch_arrive(sh, sw as usize, port as usize, pkt)
            }
            Event::ArriveHost { host, pkt } => {
                if let Some(next) = self.next_on_wire(pkt) {
                    self.queue.push(next.at, next.seq, Event::ArriveHost { host, pkt: next.pkt });
                }
                self.host_arrive(sh, host as usize, pkt)
            }
            // SAFETY: an event's host, switch and port (the invariants of `at`).
            Event::SwitchTxDone { sw, port } => {
                let s = unsafe { at_mut(&mut self.switches, sw as usize) };
                unsafe { at_mut(&mut s.ports, port as usize) }.link.txdone_pending = false;
                self.switch_send(sh, sw as usize, port as usize);
            }
            Event::HostTxDone { host, check } => {
                // Only debug builds queue the marker; release builds drop the test.
                if cfg!(debug_assertions) && check {
                    // A marker of debug builds, not an event of the model.
                    self.counters.events -= 1;
                    #[cfg(debug_assertions)]
                    self.check_lazy_txdone(sh, host as usize);
                    return;
                }
                unsafe { at_mut(&mut self.hosts, host as usize) }.link.txdone_pending = false;
                self.host_send(sh, host as usize);
            }
            Event::FlowStart { flow } => {
                self.pending_starts.pop();
                self.push_next_start();
                match sh.cfg.flow_start {
                    FlowStartOrder::First => self.flow_start(sh, flow as usize),
                    FlowStartOrder::AfterQueued => {
                        let host = sh.initiator(flow as usize);
                        self.schedule(host.0, self.now, Event::FlowBegin { flow });
                    }
                }
            }
            Event::FlowBegin { flow } => self.flow_start(sh, flow as usize),
            Event::NicWake { host: h, version } => {
                // SAFETY: an event's host (the slots invariant of `at`).
                let host = unsafe { at_mut(&mut self.hosts, h as usize) };
                if host.wake_version == version && host.wake.is_some() {
                    host.wake = None;
                    self.host_send(sh, h as usize);
                }
            }
            Event::CcTimer { flow, slot, version } => {
                if slot < tcp::TCP_TX_TIMER {
                    self.cc_timer(sh, flow as usize, slot, version)
                } else if slot == roce::ROCE_RTO_TIMER {
                    self.roce_rto(sh, flow as usize, version)
                } else {
                    self.tcp_timer(sh, flow as usize, slot, version)
                }
            }
            Event::AppTimer { app } => self.app_timer(sh, app as usize),
            Event::LinkChange { node, port, up } => self.link_change(sh, node, port, up),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnPaths, Event, Framing};
    use crate::config::{NicConfig, Serialization};
    use crate::ids::{NodeId, PortNo};
    use crate::paths::{pipeline_time, Hop};
    use crate::units::{BitsPerSec, Duration};

    /// The answer's start of a lone query, taken by its shortcut (only the last ACKed packet
    /// before the query's last, where packets arrive at least an ACK's time apart), is that of
    /// every ACK of the query sent one after another, whatever the ACK points, the query's
    /// offset on the stream and the rates.
    #[test]
    fn a_querys_acks_are_sent_one_after_another_before_the_answer() {
        let hop = |gbps: u64| Hop {
            node: NodeId(0),
            port: PortNo(0),
            rate: BitsPerSec::gbps(gbps),
            delay: Duration::from_ns(500),
        };
        let framing = Framing { seg: 1000, hdr: 58, min: 64, ack: 60 };
        for (fwd, rev) in
            [([25, 100, 100, 25], [25, 100, 100, 25]), ([100, 400, 400, 10], [10, 40, 40, 100])]
        {
            let paths = ConnPaths {
                fwd: fwd.iter().map(|&g| hop(g)).collect(),
                rev: rev.iter().map(|&g| hop(g)).collect(),
                framing,
            };
            for (ack_interval, chunk) in [(1, 4000), (1500, 400), (100_000, 4000), (9000, 0)] {
                let nic = NicConfig { ack_interval, chunk, ..NicConfig::default() };
                for ser in [Serialization::Exact, Serialization::Ns3] {
                    for start in [0, 64, 400, 1000, 3900, 8800] {
                        for size in [1u64, 999, 1000, 1001, 1060, 2001, 4000, 4001, 9999, 12_345] {
                            let n = size.div_ceil(framing.seg);
                            let s = ser.tx_time(paths.rev[0].rate, framing.ack);
                            let acked =
                                |k: u64| nic.acks_at(start + if k == n { size } else { k * 1000 });
                            let mut free = Duration::ZERO;
                            for k in 1..n {
                                if acked(k) {
                                    free = free
                                        .max(pipeline_time(&paths.fwd, k, 1058, 1058, ser))
                                        .saturating_add(s);
                                }
                            }
                            let mut leaves = free.max(paths.message(&paths.fwd, size, ser));
                            if acked(n) {
                                leaves = leaves.saturating_add(s);
                            }
                            assert_eq!(
                                paths.answer_start(start, size, &nic, ser),
                                leaves,
                                "{fwd:?} {ack_interval}/{chunk} {ser:?} start {start} size {size}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Events take 12 bytes (the calendar's nodes hold them; `Event::packet_or_zero` reads
    /// bytes 8..12).
    #[test]
    fn events_are_compact() {
        assert_eq!(std::mem::size_of::<Event>(), 12);
    }

    /// `Event::packet_or_zero` finds an arrival's packet where the layout puts it, and 0 in
    /// every other kind of event (each with fields of all ones, so that a word read from the
    /// wrong place would show; the kinds whose tags follow the arrivals', `NicWake` and
    /// `CcTimer`, have a field at byte 8, so a tag test that took them in fails here).
    #[test]
    fn arrivals_hold_their_packet_at_byte_8() {
        let pkt = 0x8765_4321;
        assert_eq!(Event::ArriveSwitch { port: u16::MAX, sw: u32::MAX, pkt }.packet_or_zero(), pkt);
        assert_eq!(Event::ArriveHost { host: u32::MAX, pkt }.packet_or_zero(), pkt);
        let m = u32::MAX;
        for ev in [
            Event::SwitchTxDone { port: u16::MAX, sw: m },
            Event::HostTxDone { check: true, host: m },
            Event::FlowStart { flow: m },
            Event::FlowBegin { flow: m },
            Event::NicWake { host: m, version: m },
            Event::CcTimer { slot: u8::MAX, flow: m, version: m },
            Event::AppTimer { app: m },
            Event::LinkChange { up: true, port: u16::MAX, node: m },
        ] {
            assert_eq!(ev.packet_or_zero(), 0, "{ev:?}");
        }
    }

    /// `copy_packet` copies every field, each INT record included (leaving either half out
    /// fails this).
    #[test]
    fn a_copied_packet_equals_its_original_int_records_included() {
        use super::copy_packet;
        use crate::ids::{FlowId, NodeId, PortNo};
        use crate::packet::{Area, Ecn, HeaderMode, IntHop, IntStack, Packet, PacketKind};
        use crate::units::{BitsPerSec, Time};
        let mut stack = IntStack::EMPTY;
        for i in 0..7u64 {
            stack.push(IntHop {
                rate: BitsPerSec(100 + i),
                time: Time(1_000 + i),
                tx_bytes: 10_000 + i,
                qlen: 50 + i,
            });
        }
        let p = Packet {
            kind: PacketKind::Ack,
            wire: 64,
            payload: 3,
            pg: 2,
            ecn: Ecn::Ce,
            ecn_echo: true,
            flow: FlowId(9),
            src: NodeId(4),
            dst: NodeId(5),
            path: [7; crate::packet::PATH_HOPS],
            seq: 77,
            ts: Time(88),
            header: HeaderMode::Int,
            hop: 3,
            area: Area::Int(stack),
            pint: 6,
            in_port: PortNo(2),
            arrived: Time(99),
        };
        let mut q = Packet { area: Area::None, ..p };
        q.arrived = Time(0);
        // SAFETY: two distinct packets.
        unsafe { copy_packet(&p, &mut q) };
        assert_eq!(format!("{q:?}"), format!("{p:?}"));
        let Area::Int(s) = q.area else { panic!("INT area") };
        assert_eq!(s.hops[4].qlen, 54);
    }

    /// A flow's kept ports are its switches' egress ports in path order, by direction, and
    /// none past a path's end or for a path of more switches than are kept.
    #[test]
    fn flow_ports_keep_each_switchs_port_in_path_order() {
        use super::FlowPorts;
        use crate::ids::{NodeId, PortNo};
        use crate::packet::{NO_PORT as N, PATH_HOPS};
        use crate::paths::Hop;
        use crate::units::{BitsPerSec, Duration};
        let hop = |node: u32, port: u16| Hop {
            node: NodeId(node),
            port: PortNo(port),
            rate: BitsPerSec::gbps(100),
            delay: Duration::from_us(1),
        };
        // Host 0 -> switches 10, 11 -> host 9, and back by 12, 11.
        let fwd = [hop(0, 0), hop(10, 3), hop(11, 1)];
        let rev = [hop(9, 0), hop(12, 2), hop(11, 5)];
        let e = FlowPorts::new(&fwd, &rev);
        assert_eq!(e.ports, [[3, 1, N, N, N, N, N, N], [2, 5, N, N, N, N, N, N]]);
        // One switch more than are kept: none is.
        let long: Vec<Hop> = (0..=PATH_HOPS + 1).map(|i| hop(20 + i as u32, i as u16)).collect();
        let e = FlowPorts::new(&long, &rev);
        assert_eq!(e.ports[0], [N; PATH_HOPS]);
        assert_eq!(e.ports[1][..2], [2, 5]);
        // As many as are kept: all kept.
        let e = FlowPorts::new(&long[..=PATH_HOPS], &fwd);
        assert_eq!(e.ports, [[1, 2, 3, 4, 5, 6, 7, 8], [3, 1, N, N, N, N, N, N]]);
    }

    /// The fields every hop reads sit in the packet's first cache line (the one the loop
    /// prefetches), and the whole packet within four lines.
    #[test]
    fn packets_keep_their_hot_fields_in_the_first_cache_line() {
        use crate::packet::Packet;
        assert!(std::mem::offset_of!(Packet, ts) + 8 <= 64);
        assert!(std::mem::offset_of!(Packet, in_port) + 2 <= 64);
        assert!(std::mem::size_of::<Packet>() <= 256, "{}", std::mem::size_of::<Packet>());
        // The second line (prefetched too) holds `arrived`, the area's tag and an INT stack's
        // count.
        assert!(std::mem::offset_of!(Packet, arrived) + 8 <= 128);
        assert!(std::mem::offset_of!(Packet, area) + 16 <= 128);
        assert_eq!(std::mem::offset_of!(crate::packet::IntStack, nhop), 0);
    }
}
