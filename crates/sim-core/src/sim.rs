//! The simulation: nodes, links and the event loop.
//!
//! # Event model
//! Events are a closed enum ([`Event`]) in one [`EventQueue`]. A node's state changes only in
//! its own events: a packet fully received on one of its ports ([`Event::Arrive`]), one of its
//! ports finishing a transmission ([`Event::TxDone`]), or one of its timers (flow start, NIC
//! pacing wake-up, congestion-control timers). Nodes influence each other only by putting
//! packets on links, which arrive one propagation delay after their last bit is sent.
//!
//! # Determinism
//! Ties at equal times are broken by `seq = (counter << 24) | node`, where `counter` counts the
//! events the *scheduling* node has scheduled so far. A node's events for one instant therefore
//! run in the order it scheduled them, and nothing depends on a global counter, so a later
//! partitioned engine can reproduce this order exactly. Random draws (ECN marking, link loss)
//! come from one ChaCha stream per (node, port) seeded from the run seed.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cc::{CcCtx, CcFactory, CongestionControl, Feedback, FlowInit, TimerOp, MAX_TIMERS};
use crate::config::{FlowSpec, SimConfig, WindowMode};
use crate::event::{BinaryHeapQueue, EventQueue};
use crate::ids::{FlowId, NodeId, PortNo};
use crate::mmu::{Admit, Mmu, QUEUES};
use crate::network::{Network, NodeKind, RoutingTable};
use crate::packet::{
    HeaderMode, IntHop, IntStack, Packet, PacketKind, DATA_BASE_HEADER, PFC_FRAME,
};
use crate::paths::{self, Hop};
use crate::results::{Counters, FlowResult, RunSummary};
use crate::telemetry::{PortUtil, UtilCodec};
use crate::units::{BitsPerSec, Duration, Time};

/// A problem with the inputs of [`Simulation::new`].
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum SimError {
    /// ECN is enabled but no parameters are configured for a switch port's rate.
    #[error("ECN is enabled but no ECN parameters are configured for link rate {rate} (switch {node} port {port}); configured rates: {configured}")]
    MissingEcn {
        /// The rate.
        rate: BitsPerSec,
        /// A switch with such a port.
        node: NodeId,
        /// The port.
        port: PortNo,
        /// The rates that have parameters.
        configured: String,
    },
    /// A flow endpoint is not a host.
    #[error("flow {flow}: node {node} is not a host of the network")]
    NotAHost {
        /// The flow.
        flow: FlowId,
        /// The node.
        node: NodeId,
    },
    /// A flow to itself.
    #[error("flow {flow}: source and destination are the same host {node}")]
    SelfFlow {
        /// The flow.
        flow: FlowId,
        /// The host.
        node: NodeId,
    },
    /// A flow of zero bytes.
    #[error("flow {flow}: size must be at least 1 byte")]
    EmptyFlow {
        /// The flow.
        flow: FlowId,
    },
    /// A priority outside 1..=7.
    #[error("flow {flow}: priority group {pg} is outside 1..=7")]
    BadPriority {
        /// The flow.
        flow: FlowId,
        /// The value.
        pg: u8,
    },
    /// Flow ids must be 0..n in order.
    #[error("flow at position {pos} has id {id}; flow ids must equal their position")]
    FlowIdOrder {
        /// Position in the list.
        pos: usize,
        /// Its id.
        id: FlowId,
    },
    /// No route between a flow's endpoints.
    #[error("flow {flow}: no route from {src} to {dst}")]
    NoRoute {
        /// The flow.
        flow: FlowId,
        /// Source.
        src: NodeId,
        /// Destination.
        dst: NodeId,
    },
    /// A parameter that must be positive is zero.
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
    /// The PINT log base must be a finite number above 1.
    #[error("PINT log base must be greater than 1, got {0}")]
    BadPintBase(f64),
    /// The routing table was built for another host count.
    #[error("routing table is for {table} hosts but the network has {network}")]
    RoutingMismatch {
        /// Hosts in the table.
        table: usize,
        /// Hosts in the network.
        network: usize,
    },
}

/// Transmit statistics of one port (see [`Simulation::port_stats`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct PortStats {
    /// Bytes put on the wire.
    pub tx_bytes: u64,
    /// Frames of any kind put on the wire.
    pub tx_frames: u64,
    /// Data frames put on the wire.
    pub tx_data_frames: u64,
}

/// Events. Compact (16 bytes): packets live in a pool and are named by index.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// The packet at the head of the link leaving `port` of `node` has been fully received by
    /// the node at the other end. (Packets on a link arrive in order, so only the head of each
    /// link's in-flight FIFO sits in the event queue.)
    Arrive { node: u32, port: u16 },
    /// `port` of `node` finished transmitting.
    TxDone { node: u32, port: u16 },
    /// Flow `flow` starts (at its source host).
    FlowStart { flow: u32 },
    /// NIC pacing wake-up at host `node` (stale unless `version` matches).
    NicWake { node: u32, version: u32 },
    /// Congestion-control timer `slot` of flow `flow` (stale unless `version` matches).
    CcTimer { flow: u32, slot: u8, version: u32 },
}

/// Transmit side of one port, common to hosts and switches.
struct Link {
    rate: BitsPerSec,
    delay: Duration,
    peer: u32,
    peer_port: u16,
    loss: f64,
    /// The port is transmitting until this time.
    busy_until: Time,
    /// A `TxDone` event is pending for this port (switch ports schedule one only when frames
    /// wait behind the one on the wire).
    txdone_pending: bool,
    /// Priorities paused by PFC frames received on this port.
    paused: [bool; QUEUES],
    /// Bytes transmitted so far (INT `tx_bytes`).
    tx_bytes: u64,
    /// Frames transmitted so far.
    tx_frames: u64,
    /// Data frames transmitted so far.
    tx_data_frames: u64,
    /// Frames on the wire towards the peer: (arrival time, event seq, packet), in order.
    flight: VecDeque<(Time, u64, u32)>,
    rng: ChaCha8Rng,
}

/// A switch egress port.
struct SwitchPort {
    link: Link,
    queues: [VecDeque<u32>; QUEUES],
    rr_last: usize,
    /// Bytes queued over all priorities (INT `qlen`).
    queued: u64,
    /// PINT utilisation EWMA (HPCC-PINT only).
    util: PortUtil,
    ecn: Option<(u64, u64, f64)>,
}

struct Switch {
    node: u32,
    ports: Vec<SwitchPort>,
    mmu: Mmu,
    hash_seed: u32,
}

/// Sender state of one flow (queue pair).
struct Qp<C> {
    size: u64,
    snd_nxt: u64,
    snd_una: u64,
    /// Highest byte ever sent (for retransmission accounting).
    high: u64,
    rate: BitsPerSec,
    max_rate: BitsPerSec,
    win: u64,
    next_avail: Time,
    last_pkt_size: u32,
    pg: u8,
    done: bool,
    cc: Option<C>,
    timer_version: [u32; MAX_TIMERS],
}

/// Receiver state of one flow.
#[derive(Clone, Copy, Default)]
struct Rx {
    expected: u64,
    nack_timer: Time,
    last_nack: u64,
}

struct Host<C> {
    node: u32,
    link: Link,
    ack_fifo: VecDeque<u32>,
    /// Queue pairs in round-robin order (flow ids), including finished ones not yet compacted.
    active: Vec<u32>,
    rr_last: usize,
    wake: Option<Time>,
    wake_version: u32,
    _cc: std::marker::PhantomData<C>,
}

/// Static per-flow facts.
struct FlowMeta {
    hash_fwd: [u32; 3],
    hash_rev: [u32; 3],
    base_rtt: Duration,
    bdp: u64,
}

#[derive(Clone, Copy)]
enum Slot {
    Host(u32),
    Switch(u32),
}

/// A simulation run: build with [`Simulation::new`], then [`Simulation::run`].
pub struct Simulation<F: CcFactory> {
    cfg: SimConfig,
    net: Network,
    routes: RoutingTable,
    header: HeaderMode,
    /// PINT codec, the EWMA window (max base RTT, ps) and whether the digest is one byte, in
    /// [`HeaderMode::Pint`].
    pint: Option<(UtilCodec, u64, bool)>,
    factory: F,
    now: Time,
    queue: BinaryHeapQueue<Event>,
    node_seq: Vec<u64>,
    slots: Vec<Slot>,
    hosts: Vec<Host<F::Cc>>,
    switches: Vec<Switch>,
    pool: Vec<Packet>,
    free: Vec<u32>,
    flows: Vec<FlowSpec>,
    meta: Vec<FlowMeta>,
    qps: Vec<Qp<F::Cc>>,
    rx: Vec<Rx>,
    results: Vec<FlowResult>,
    /// Flow starts not yet in the event queue, latest first: (start, seq, flow).
    pending_starts: Vec<(Time, u64, u32)>,
    counters: Counters,
    done: usize,
}

/// The reference's host IP address for a node id (spec §6.1), used in ECMP hash keys.
fn node_ip(n: NodeId) -> u32 {
    0x0b00_0001 + ((n.0 / 256) << 16) + ((n.0 % 256) << 8)
}

/// MurmurHash3 x86 32-bit of three little-endian words.
pub(crate) fn murmur3_32(key: &[u32; 3], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    for &w in key {
        let mut k = w.wrapping_mul(C1);
        k = k.rotate_left(15);
        k = k.wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13);
        h = h.wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h ^= 12;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// SplitMix64 finalizer, to derive independent seeds.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn port_rng(seed: u64, node: u32, port: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix64(seed ^ mix64(((node as u64) << 20) | port as u64)))
}

impl<F: CcFactory> Simulation<F> {
    /// Builds a run. Fails if the flows or config do not fit the network.
    pub fn new(
        net: Network,
        routes: RoutingTable,
        cfg: SimConfig,
        flows: Vec<FlowSpec>,
        factory: F,
    ) -> Result<Self, SimError> {
        if cfg.nic.mtu == 0 {
            return Err(SimError::Zero("nic.mtu"));
        }
        if cfg.nic.ack_interval == 0 {
            return Err(SimError::Zero("nic.ack_interval"));
        }
        if cfg.nic.chunk == 0 {
            return Err(SimError::Zero("nic.chunk"));
        }
        if routes.host_count() != net.hosts().len() {
            return Err(SimError::RoutingMismatch {
                table: routes.host_count(),
                network: net.hosts().len(),
            });
        }
        let header = factory.header_mode();
        let n = net.node_count();
        let nic_rate = net.hosts().first().map(|&h| net.nic_rate(h)).unwrap_or_default();
        let mut slots = Vec::with_capacity(n);
        let mut hosts = Vec::new();
        let mut switches = Vec::new();
        let link_of = |node: usize, p: usize| {
            let port = &net.ports(NodeId::from_idx(node))[p];
            Link {
                rate: port.rate,
                delay: port.delay,
                peer: port.peer.0,
                peer_port: port.peer_port.0,
                loss: port.loss,
                busy_until: Time::ZERO,
                txdone_pending: false,
                paused: [false; QUEUES],
                tx_bytes: 0,
                tx_frames: 0,
                tx_data_frames: 0,
                flight: VecDeque::new(),
                rng: port_rng(cfg.seed, node as u32, p),
            }
        };
        for (i, kind) in net.kinds().iter().enumerate() {
            let node = NodeId::from_idx(i);
            match kind {
                NodeKind::Host => {
                    slots.push(Slot::Host(hosts.len() as u32));
                    hosts.push(Host {
                        node: i as u32,
                        link: link_of(i, 0),
                        ack_fifo: VecDeque::new(),
                        active: Vec::new(),
                        rr_last: 0,
                        wake: None,
                        wake_version: 0,
                        _cc: std::marker::PhantomData,
                    });
                }
                NodeKind::Switch => {
                    let mut ports = Vec::new();
                    for (p, port) in net.ports(node).iter().enumerate() {
                        let ecn = if cfg.switch.ecn_enabled {
                            match cfg.switch.ecn_for(port.rate) {
                                Some(e) => Some((e.kmin.0, e.kmax.0, e.pmax)),
                                None => {
                                    let configured = cfg
                                        .switch
                                        .ecn
                                        .iter()
                                        .map(|(r, _)| r.to_string())
                                        .collect::<Vec<_>>()
                                        .join(", ");
                                    return Err(SimError::MissingEcn {
                                        rate: port.rate,
                                        node,
                                        port: PortNo(p as u16),
                                        configured,
                                    });
                                }
                            }
                        } else {
                            None
                        };
                        ports.push(SwitchPort {
                            link: link_of(i, p),
                            queues: Default::default(),
                            rr_last: 0,
                            queued: 0,
                            util: PortUtil::default(),
                            ecn,
                        });
                    }
                    let geometry: Vec<(BitsPerSec, u64)> =
                        net.ports(node).iter().map(|p| (p.rate, p.delay.as_ps())).collect();
                    slots.push(Slot::Switch(switches.len() as u32));
                    switches.push(Switch {
                        node: i as u32,
                        ports,
                        mmu: Mmu::new(&cfg.switch, &geometry, nic_rate),
                        hash_seed: (i as u32) ^ (mix64(cfg.seed) as u32),
                    });
                }
            }
        }

        // Flows: validation, ports, ECMP keys, metrics, ideal FCTs.
        let mtu = cfg.nic.mtu as u64;
        let mut sport_next: std::collections::HashMap<(u32, u32), u16> = Default::default();
        let mut meta = Vec::with_capacity(flows.len());
        let mut qps = Vec::with_capacity(flows.len());
        let mut results = Vec::with_capacity(flows.len());
        let mut max_rtt = Duration::ZERO;
        let mut max_bdp = 0u64;
        if cfg.nic.global_t || header == HeaderMode::Pint {
            let (r, b) = paths::max_pair_metrics(&net, &routes, mtu);
            max_rtt = r;
            max_bdp = b;
        }
        for (pos, f) in flows.iter().enumerate() {
            if f.id.idx() != pos {
                return Err(SimError::FlowIdOrder { pos, id: f.id });
            }
            for node in [f.src, f.dst] {
                if !net.is_host(node) {
                    return Err(SimError::NotAHost { flow: f.id, node });
                }
            }
            if f.src == f.dst {
                return Err(SimError::SelfFlow { flow: f.id, node: f.src });
            }
            if f.size == 0 {
                return Err(SimError::EmptyFlow { flow: f.id });
            }
            if f.pg == 0 || f.pg as usize >= QUEUES {
                return Err(SimError::BadPriority { flow: f.id, pg: f.pg });
            }
            let sport = sport_next.entry((f.src.0, f.dst.0)).or_insert(10_000);
            let sp = *sport;
            *sport = sport.wrapping_add(1);
            let (sip, dip) = (node_ip(f.src), node_ip(f.dst));
            let hash_fwd = [sip, dip, sp as u32 | ((f.dport as u32) << 16)];
            let hash_rev = [dip, sip, f.dport as u32 | ((sp as u32) << 16)];
            let seed_of = |node: NodeId| match slots[node.idx()] {
                Slot::Switch(s) => switches[s as usize].hash_seed,
                Slot::Host(_) => 0,
            };
            let no_route = SimError::NoRoute { flow: f.id, src: f.src, dst: f.dst };
            let fwd = paths::walk(&net, &routes, f.src, f.dst, |node, c| {
                (murmur3_32(&hash_fwd, seed_of(node)) as usize) % c.len()
            })
            .ok_or(no_route.clone())?;
            let rev = paths::walk(&net, &routes, f.dst, f.src, |node, c| {
                (murmur3_32(&hash_rev, seed_of(node)) as usize) % c.len()
            })
            .ok_or(no_route)?;
            let pair = paths::pair_metrics(&net, &routes, f.src, f.dst, mtu)
                .expect("a routed pair has metrics");
            let (base_rtt, bdp) =
                if cfg.nic.global_t { (max_rtt, max_bdp) } else { (pair.rtt, pair.bdp) };
            let ideal = ideal_fct(&fwd, &rev, f.size, mtu);
            let ref_ideal = ref_ideal_fct(&fwd, f.size, mtu);
            let line = net.nic_rate(f.src);
            meta.push(FlowMeta { hash_fwd, hash_rev, base_rtt, bdp });
            qps.push(Qp {
                size: f.size,
                snd_nxt: 0,
                snd_una: 0,
                high: 0,
                rate: line,
                max_rate: line,
                win: if cfg.nic.window == WindowMode::None { 0 } else { bdp },
                next_avail: f.start,
                last_pkt_size: 0,
                pg: f.pg,
                done: false,
                cc: None,
                timer_version: [0; MAX_TIMERS],
            });
            results.push(FlowResult {
                id: f.id,
                src: f.src,
                dst: f.dst,
                size: f.size,
                start: f.start,
                fct: None,
                ideal_fct: ideal,
                ref_ideal_fct: ref_ideal,
            });
        }
        let rx = vec![Rx::default(); flows.len()];
        let pint = if header == HeaderMode::Pint {
            let b = cfg.pint_log_base;
            if !(b.is_finite() && b > 1.0) {
                return Err(SimError::BadPintBase(b));
            }
            let codec = UtilCodec::new(b);
            Some((codec, max_rtt.as_ps().max(1), codec.n_bits() <= 8))
        } else {
            None
        };
        let mut sim = Simulation {
            header,
            pint,
            factory,
            now: Time::ZERO,
            queue: BinaryHeapQueue::with_capacity(1024),
            node_seq: vec![0; n],
            slots,
            hosts,
            switches,
            pool: Vec::new(),
            free: Vec::new(),
            flows,
            meta,
            qps,
            rx,
            results,
            pending_starts: Vec::new(),
            counters: Counters::default(),
            done: 0,
            net,
            routes,
            cfg,
        };
        // Flow starts are keyed as if each source host had scheduled them at set-up, but only
        // the earliest sits in the event queue; the next is pushed when it fires.
        let mut starts: Vec<(Time, u64, u32)> = (0..sim.flows.len())
            .map(|i| {
                let f = sim.flows[i];
                (f.start, sim.next_seq(f.src.0), i as u32)
            })
            .collect();
        starts.sort_unstable();
        starts.reverse();
        sim.pending_starts = starts;
        sim.push_next_start();
        Ok(sim)
    }

    /// Runs until every event is processed or the stop time is reached.
    pub fn run(&mut self) -> RunSummary {
        self.run_until(self.cfg.stop_time)
    }

    /// Processes every event up to and including time `t` (capped at the stop time), then
    /// leaves the clock at `t` if events remain, so that a caller can step a run and inspect
    /// it in between ([`Self::queue_bytes`], [`Self::flow_acked`], [`Self::port_stats`]).
    pub fn run_until(&mut self, t: Time) -> RunSummary {
        let stop = t.min(self.cfg.stop_time);
        while let Some(at) = self.queue.peek_time() {
            if at > stop {
                break;
            }
            let (at, _, ev) = self.queue.pop().expect("peeked");
            self.now = at;
            self.counters.events += 1;
            self.dispatch(ev);
        }
        if !self.queue.is_empty() {
            self.now = self.now.max(stop);
        }
        self.summary()
    }

    /// Whether events remain (the run is not over).
    pub fn has_events(&self) -> bool {
        !self.queue.is_empty()
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Bytes queued at an egress port of a switch, over all priorities (0 for a host).
    pub fn queue_bytes(&self, node: NodeId, port: PortNo) -> u64 {
        match self.slots[node.idx()] {
            Slot::Host(_) => 0,
            Slot::Switch(s) => self.switches[s as usize].ports[port.idx()].queued,
        }
    }

    /// Bytes of a flow acknowledged so far (its `snd_una`).
    pub fn flow_acked(&self, flow: FlowId) -> u64 {
        self.qps[flow.idx()].snd_una
    }

    /// The current pacing rate of a flow.
    pub fn flow_rate(&self, flow: FlowId) -> BitsPerSec {
        self.qps[flow.idx()].rate
    }

    /// Summary of the run so far.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            end_time: self.now,
            events: self.counters.events,
            flows_done: self.done,
            flows_unfinished: self.flows.len() - self.done,
        }
    }

    /// Per-flow results, indexed by flow id.
    pub fn flow_results(&self) -> &[FlowResult] {
        &self.results
    }

    /// Run-wide counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The network being simulated.
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Transmit statistics of one port.
    ///
    /// # Panics
    /// If the node or port does not exist.
    pub fn port_stats(&self, node: NodeId, port: PortNo) -> PortStats {
        let link = match self.slots[node.idx()] {
            Slot::Host(h) => {
                assert_eq!(port.0, 0, "a host has one port");
                &self.hosts[h as usize].link
            }
            Slot::Switch(s) => &self.switches[s as usize].ports[port.idx()].link,
        };
        PortStats {
            tx_bytes: link.tx_bytes,
            tx_frames: link.tx_frames,
            tx_data_frames: link.tx_data_frames,
        }
    }

    /// Name of the congestion-control scheme.
    pub fn scheme(&self) -> &str {
        self.factory.name()
    }

    /// Packets currently in flight or queued anywhere.
    pub fn packets_in_flight(&self) -> usize {
        self.pool.len() - self.free.len()
    }

    /// Payload bytes of data packets currently in flight or queued.
    pub fn data_bytes_in_flight(&self) -> u64 {
        let mut free = vec![false; self.pool.len()];
        for &f in &self.free {
            free[f as usize] = true;
        }
        self.pool
            .iter()
            .zip(free)
            .filter(|(p, f)| !f && p.kind == PacketKind::Data)
            .map(|(p, _)| p.payload as u64)
            .sum()
    }

    /// Whether every switch queue and MMU counter is zero, nothing is paused, and no packet is
    /// in flight: the state a lossless fabric must return to once all traffic has drained.
    pub fn is_quiescent(&self) -> bool {
        self.packets_in_flight() == 0
            && self.switches.iter().all(|s| {
                s.mmu.is_idle()
                    && s.ports.iter().all(|p| {
                        p.queued == 0
                            && p.queues.iter().all(|q| q.is_empty())
                            && p.link.busy_until <= self.now
                            && p.link.paused.iter().all(|&x| !x)
                    })
            })
            && self.hosts.iter().all(|h| {
                h.ack_fifo.is_empty()
                    && h.link.busy_until <= self.now
                    && h.link.paused.iter().all(|&x| !x)
            })
    }

    // ----- scheduling ------------------------------------------------------------------

    #[inline]
    fn next_seq(&mut self, origin: u32) -> u64 {
        let c = &mut self.node_seq[origin as usize];
        let seq = (*c << 24) | origin as u64;
        *c += 1;
        seq
    }

    fn push_next_start(&mut self) {
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
    fn link_mut(&mut self, node: u32, port: u16) -> &mut Link {
        match self.slots[node as usize] {
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

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive { node, port } => {
                let link = self.link_mut(node, port);
                let (_, _, pkt) = link.flight.pop_front().expect("an arrival has a frame");
                let (peer, peer_port) = (link.peer, link.peer_port);
                if let Some(&(t, seq, _)) = link.flight.front() {
                    self.queue.push(t, seq, Event::Arrive { node, port });
                }
                match self.slots[peer as usize] {
                    Slot::Host(h) => self.host_arrive(h as usize, pkt),
                    Slot::Switch(s) => self.switch_arrive(s as usize, peer_port as usize, pkt),
                }
            }
            Event::TxDone { node, port } => match self.slots[node as usize] {
                Slot::Host(h) => {
                    self.hosts[h as usize].link.txdone_pending = false;
                    self.host_send(h as usize);
                }
                Slot::Switch(s) => {
                    self.switches[s as usize].ports[port as usize].link.txdone_pending = false;
                    self.switch_send(s as usize, port as usize);
                }
            },
            Event::FlowStart { flow } => {
                self.pending_starts.pop();
                self.push_next_start();
                self.flow_start(flow as usize)
            }
            Event::NicWake { node, version } => {
                let Slot::Host(h) = self.slots[node as usize] else { unreachable!() };
                let host = &mut self.hosts[h as usize];
                if host.wake_version == version && host.wake.is_some() {
                    host.wake = None;
                    self.host_send(h as usize);
                }
            }
            Event::CcTimer { flow, slot, version } => self.cc_timer(flow as usize, slot, version),
        }
    }

    /// Puts packet `pkt` on the wire of port `port` of `node`, now; returns when the port is
    /// free again. The caller decides whether it needs a `TxDone` event then.
    #[inline]
    fn transmit(&mut self, node: u32, port: u16, pkt: u32) -> Time {
        let wire = self.pool[pkt as usize].wire as u64;
        let seq = self.next_seq(node);
        let now = self.now;
        let link = self.link_mut(node, port);
        let done = now + link.rate.tx_time(wire);
        link.busy_until = done;
        let at = done + link.delay;
        let first = link.flight.is_empty();
        link.flight.push_back((at, seq, pkt));
        self.counters.frames_transmitted += 1;
        if first {
            self.queue.push(at, seq, Event::Arrive { node, port });
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

    fn switch_arrive(&mut self, s: usize, inp: usize, pkt: u32) {
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
                self.switch_send(s, inp);
            }
            return;
        }
        let node = NodeId(sw.node);
        let dst = self.net.host_index(dst).expect("packets are addressed to hosts");
        let hops = self.routes.next_hops(node, dst);
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
                    self.switch_send_pfc(s, inp, true, q as u8);
                }
                Admit::Ok => {}
            }
        }
        self.pool[pkt as usize].in_port = PortNo(inp as u16);
        let port = &mut self.switches[s].ports[out];
        port.queues[q].push_back(pkt);
        port.queued += wire as u64;
        self.switch_send(s, out);
    }

    fn switch_send_pfc(&mut self, s: usize, port: usize, pause: bool, queue: u8) {
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
        });
        let p = &mut self.switches[s].ports[port];
        p.queues[0].push_back(pkt);
        p.queued += PFC_FRAME as u64;
        self.switch_send(s, port);
    }

    fn switch_send(&mut self, s: usize, out: usize) {
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
                self.switch_send_pfc(s, inp, false, q as u8);
            }
        }
        let sw = &mut self.switches[s];
        let port = &mut sw.ports[out];
        let pk = &mut self.pool[pkt as usize];
        if self.header == HeaderMode::Int && pk.kind == PacketKind::Data {
            pk.int.push(IntHop {
                rate: port.link.rate,
                time: self.now,
                tx_bytes: port.link.tx_bytes,
                qlen: port.queued,
            });
        }
        if let Some((codec, t, one_byte)) = &self.pint {
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
        port.link.tx_bytes += wire;
        port.link.tx_frames += 1;
        port.link.tx_data_frames += (pk.kind == PacketKind::Data) as u64;
        let backlog = port.queued > 0 && !port.link.txdone_pending;
        let node = sw.node;
        let done = self.transmit(node, out as u16, pkt);
        if backlog {
            self.switches[s].ports[out].link.txdone_pending = true;
            self.schedule(node, done, Event::TxDone { node, port: out as u16 });
        }
    }

    // ----- host ------------------------------------------------------------------------

    fn flow_start(&mut self, flow: usize) {
        let f = self.flows[flow];
        let m = &self.meta[flow];
        let init = FlowInit {
            line_rate: self.qps[flow].max_rate,
            base_rtt: m.base_rtt,
            bdp: m.bdp,
            mtu: self.cfg.nic.mtu,
            size: f.size,
            seed: mix64(self.cfg.seed ^ mix64(0x5eed_0000_0000 | flow as u64)),
        };
        self.qps[flow].cc = Some(self.factory.new_flow(&init));
        self.qps[flow].next_avail = self.now;
        let Slot::Host(h) = self.slots[f.src.idx()] else { unreachable!("validated") };
        self.hosts[h as usize].active.push(flow as u32);
        self.host_send(h as usize);
    }

    fn window_of(&self, qp: &Qp<F::Cc>) -> u64 {
        if qp.win == 0 {
            return 0;
        }
        match self.cfg.nic.window {
            WindowMode::Variable => {
                let w = (qp.win as u128 * qp.rate.0 as u128 / qp.max_rate.0 as u128) as u64;
                w.max(1)
            }
            _ => qp.win,
        }
    }

    #[inline]
    fn eligible(&self, host: &Host<F::Cc>, flow: u32) -> bool {
        let qp = &self.qps[flow as usize];
        if host.link.paused[qp.pg as usize] || qp.snd_nxt >= qp.size || qp.next_avail > self.now {
            return false;
        }
        let w = self.window_of(qp);
        w == 0 || qp.snd_nxt - qp.snd_una < w
    }

    /// The NIC scheduler (spec §2.2).
    fn host_send(&mut self, h: usize) {
        let host = &self.hosts[h];
        if host.link.busy_until > self.now {
            return;
        }
        let ack_q = if self.cfg.nic.ack_high_prio { 0 } else { 3 };
        if !host.ack_fifo.is_empty() && !host.link.paused[ack_q] {
            let host = &mut self.hosts[h];
            let pkt = host.ack_fifo.pop_front().expect("non-empty");
            self.host_transmit(h, pkt);
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
            if self.eligible(host, host.active[i]) {
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
                self.send_data(h, flow as usize);
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

    fn send_data(&mut self, h: usize, flow: usize) {
        let mtu = self.cfg.nic.mtu as u64;
        let f = self.flows[flow];
        let qp = &mut self.qps[flow];
        let payload = mtu.min(qp.size - qp.snd_nxt) as u32;
        let seq = qp.snd_nxt;
        qp.snd_nxt += payload as u64;
        if seq < qp.high {
            self.counters.data_bytes_retransmitted += payload as u64;
        }
        qp.high = qp.high.max(qp.snd_nxt);
        let wire = self.header.data_wire(payload);
        qp.last_pkt_size = wire;
        let pace = if self.cfg.nic.rate_bound { qp.rate } else { qp.max_rate };
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
            hash_key: self.meta[flow].hash_fwd,
            seq,
            ts: self.now,
            int: IntStack::default(),
            pint: 0,
            in_port: PortNo(0),
        });
        self.host_transmit(h, pkt);
    }

    fn host_transmit(&mut self, h: usize, pkt: u32) {
        let host = &mut self.hosts[h];
        let p = &self.pool[pkt as usize];
        host.link.tx_bytes += p.wire as u64;
        host.link.tx_frames += 1;
        host.link.tx_data_frames += (p.kind == PacketKind::Data) as u64;
        let node = host.node;
        let done = self.transmit(node, 0, pkt);
        self.hosts[h].link.txdone_pending = true;
        self.schedule(node, done, Event::TxDone { node, port: 0 });
    }

    fn host_arrive(&mut self, h: usize, pkt: u32) {
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
                    self.host_send(h);
                }
            }
            PacketKind::Data => self.receive_data(h, pkt),
            PacketKind::Ack | PacketKind::Nack => {
                self.receive_ack(h, pkt);
                self.release(pkt);
            }
        }
    }

    /// Receiver: ACK/NACK generation (spec §2.3). Reuses the data packet's pool slot.
    fn receive_data(&mut self, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let (flow, seq, payload, ce, src, dst) = (p.flow, p.seq, p.payload, p.ce, p.src, p.dst);
        self.counters.data_bytes_delivered += payload as u64;
        let nic = &self.cfg.nic;
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
        let hash_rev = self.meta[flow.idx()].hash_rev;
        let a = &mut self.pool[pkt as usize];
        a.kind = kind;
        a.wire = self.header.ack_wire();
        a.payload = 0;
        a.ecn_echo = ce;
        a.ce = false;
        a.src = dst;
        a.dst = src;
        a.hash_key = hash_rev;
        a.seq = expected;
        self.hosts[h].ack_fifo.push_back(pkt);
        self.host_send(h);
    }

    /// Sender: ACK/NACK processing (spec §2.4).
    fn receive_ack(&mut self, h: usize, pkt: u32) {
        let p = &self.pool[pkt as usize];
        let flow = p.flow.idx();
        if self.qps[flow].done {
            return;
        }
        let (ack, kind, ecn, ts_echo, pint) = (p.seq, p.kind, p.ecn_echo, p.ts, p.pint);
        // Only INT-mode ACKs carry records; copy them out of the pool for the callback.
        let int = if self.header == HeaderMode::Int { p.int } else { IntStack::default() };
        let nic = &self.cfg.nic;
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
            self.results[flow].fct = Some(self.now - self.flows[flow].start);
            self.done += 1;
        }
        let nack = kind == PacketKind::Nack;
        if nack {
            qp.snd_nxt = qp.snd_una;
        }
        let fb = Feedback { ack, nack, ecn, int: &int, ts_echo, pint };
        self.with_cc(flow, |cc, ctx| cc.on_feedback(ctx, &fb));
        self.host_send(h);
    }

    fn cc_timer(&mut self, flow: usize, slot: u8, version: u32) {
        let qp = &self.qps[flow];
        if qp.done || qp.timer_version[slot as usize] != version {
            return;
        }
        // As in the reference, a timer changes the rate (and timers) but does not kick the NIC
        // scheduler: the new rate applies from the next packet the scheduler sends anyway.
        self.with_cc(flow, |cc, ctx| cc.on_timer(ctx, slot as usize));
    }

    /// Runs a CC callback and applies what it asked for.
    fn with_cc(&mut self, flow: usize, call: impl FnOnce(&mut F::Cc, &mut CcCtx)) {
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
                let src = self.flows[flow].src;
                let Slot::Host(h) = self.slots[src.idx()] else { unreachable!() };
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
        let src = self.flows[flow].src.0;
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

/// Ideal FCT: the flow alone, base headers, line rate, no window, on the given paths.
fn ideal_fct(fwd: &[Hop], rev: &[Hop], size: u64, mtu: u64) -> Duration {
    let npkts = size.div_ceil(mtu);
    let last = size - (npkts - 1) * mtu;
    let hdr = DATA_BASE_HEADER as u64;
    let data = paths::pipeline_time(fwd, npkts, mtu + hdr, last + hdr);
    let ack_wire = HeaderMode::None.ack_wire() as u64;
    let ack = rev.iter().fold(Duration::ZERO, |a, h| a + h.rate.tx_time(ack_wire) + h.delay);
    data + ack
}

/// The reference's standalone FCT (spec §2.6), in whole nanoseconds like the reference.
fn ref_ideal_fct(fwd: &[Hop], size: u64, mtu: u64) -> Duration {
    let npkts = size.div_ceil(mtu);
    let wire = size + npkts * DATA_BASE_HEADER as u64;
    let mut delay_ns = 0u64;
    let mut tx_ns = 0u64;
    let mut bw = u64::MAX;
    for h in fwd {
        delay_ns += h.delay.as_ns();
        tx_ns += (mtu as u128 * 8_000_000_000 / h.rate.0 as u128) as u64;
        bw = bw.min(h.rate.0);
    }
    let rtt = 2 * delay_ns + tx_ns;
    let ser = (wire as u128 * 8_000_000_000 / bw as u128) as u64;
    Duration::from_ns(rtt + ser)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straightforward byte-wise MurmurHash3_x86_32, to check the fixed 12-byte version.
    fn murmur_bytes(data: &[u8], seed: u32) -> u32 {
        let (c1, c2) = (0xcc9e_2d51u32, 0x1b87_3593u32);
        let mut h = seed;
        let blocks = data.len() / 4;
        for i in 0..blocks {
            let mut k = u32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
            k = k.wrapping_mul(c1).rotate_left(15).wrapping_mul(c2);
            h ^= k;
            h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        }
        let tail = &data[blocks * 4..];
        let mut k = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k ^= (b as u32) << (8 * i);
        }
        if !tail.is_empty() {
            k = k.wrapping_mul(c1).rotate_left(15).wrapping_mul(c2);
            h ^= k;
        }
        h ^= data.len() as u32;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    }

    #[test]
    fn murmur3_known_vectors() {
        // Published test vectors of MurmurHash3_x86_32.
        assert_eq!(murmur_bytes(b"", 0), 0);
        assert_eq!(murmur_bytes(b"", 1), 0x514E_28B7);
        assert_eq!(murmur_bytes(b"", 0xffff_ffff), 0x81F1_6F39);
        assert_eq!(murmur_bytes(&[0, 0, 0, 0], 0), 0x2362_F9DE);
        assert_eq!(murmur_bytes(b"aaaa", 0x9747_b28c), 0x5A97_808A);
        assert_eq!(murmur_bytes(b"Hello, world!", 0x9747_b28c), 0x2488_4CBA);
        assert_eq!(
            murmur_bytes(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c),
            0x2FA8_26CD
        );
        // The 12-byte key version agrees with the byte-wise one.
        for (i, key) in
            [[1u32, 2, 3], [0x0b00_0d01, 0x0b00_1c01, 10_000 | (100 << 16)]].iter().enumerate()
        {
            let bytes: Vec<u8> = key.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(murmur3_32(key, i as u32 * 77), murmur_bytes(&bytes, i as u32 * 77));
        }
    }
}
