//! The simulation: set-up, partitioning and the run loop.
//!
//! # Event model
//! Events are a closed enum in one event queue per shard (see `engine.rs`). A node's state
//! changes only in its own events: a packet fully received on one of its ports, one of its
//! ports finishing a transmission, or one of its timers (flow start, NIC pacing wake-up,
//! congestion-control timers). Nodes influence each other only by putting packets on links,
//! which arrive at least one propagation delay after their last bit is sent.
//!
//! # Determinism
//! Ties at equal times are broken by `seq = (counter << 24) | node`, where `counter` counts the
//! events the *scheduling* node has scheduled so far. A node's events for one instant therefore
//! run in the order it scheduled them, and nothing depends on a global counter. Random draws
//! (ECN marking, link loss, PINT rounding) come from one ChaCha stream per (node, port) seeded
//! from the run seed.
//!
//! # Parallel runs
//! A [`Partition`] assigns nodes to shards. Shards advance in conservative windows: with `L`
//! the smallest propagation delay of a link between two shards (the lookahead) and `t` the
//! earliest pending event anywhere, every shard processes its events before `t + L`, in
//! parallel; nothing it sends to another shard can arrive before `t + L`. At the window boundary
//! packets that crossed shards are delivered with the `(time, seq)` key they were given when
//! sent. Each node therefore sees exactly the same sequence of events for any partitioning and
//! any thread count, and the results are identical to a sequential run.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::apps::{Arrivals, QueryRecord};
use crate::cc::CcFactory;
use crate::config::{
    EcnParams, FlowSpec, PortQdisc, Serialization, SimConfig, TcpConfig, Transport, WindowMode,
};
use crate::engine::{
    initial_state, Backlog, ConnPaths, Event, FaultPlan, FlowMeta, FlowPorts, FlowRx, FlowTables,
    FlowTx, Framing, Host, Link, Place, Qp, Rx, Shard, Shared, Slot, Switch, SwitchPort, TcpRx,
    TcpTx,
};
use crate::event::{CalendarQueue, EventQueue};
use crate::ids::{FlowId, NodeId, PortNo};
use crate::mmu::{Mmu, QUEUES};
use crate::network::{Network, NodeKind, RoutingTable};
use crate::packet::{HeaderMode, DATA_BASE_HEADER};
use crate::partition::Partition;
use crate::paths::{self, Hop};
use crate::qmon::{
    ClassQueue, PortMonitor, PortQueue, PortSamples, SampleClock, SampleState, Watch,
};
use crate::results::{Counters, FlowResult, HopSample, ParallelStats, PfcEvent, RunSummary};
use crate::telemetry::PortUtil;
use crate::units::{BitsPerSec, Duration, Time};
use dcsim_aqm::fifo::FifoParams;
use dcsim_aqm::red::RedParams;
use dcsim_aqm::{Qdisc, QdiscConfig, QueueDisc};

/// The largest MTU [`Simulation::new`] takes: a data frame is its payload plus at most a few
/// hundred header bytes (Ethernet, IP, transport, telemetry), and frame sizes are 32-bit. The
/// CLI's own bound (`limits::FRAME_MARGIN`) is the same.
pub const MAX_MTU: u32 = u32::MAX - 1024;

/// The most bins a queue sampler's histogram may have per port (switch buffer / bin width):
/// 2^20, the CLI's bound too.
pub const MAX_SAMPLER_BINS: u64 = 1 << 20;

/// The most closed-loop queries outstanding at once over a run's applications (each
/// application's connections × its `outstanding`, summed): 10^7, the CLI's bound too. Each
/// holds a record, and all are submitted when their application starts (4.3 · 10^9 of them ran
/// out of memory).
pub const MAX_OUTSTANDING: u64 = 10_000_000;

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
    /// A parameter is above the largest value the simulator represents.
    #[error("{field} is {value}, above the largest supported, {max}")]
    TooLarge {
        /// The parameter, as a scenario names it.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The largest value taken.
        max: u64,
    },
    /// A flow starts, or could not complete even alone on its path, within the time limit
    /// ([`crate::units::TIME_LIMIT`]): beyond it, deadlines built from the run's times could
    /// wrap.
    #[error(
        "flow {flow}: its {what} is {ps} ps, beyond the time limit of {}",
        crate::units::TIME_LIMIT_TEXT
    )]
    BeyondTimeLimit {
        /// The flow.
        flow: FlowId,
        /// `"start"`, or `"ideal completion time"` (alone on its path, at line rate).
        what: &'static str,
        /// The value, picoseconds (`u64::MAX` where it saturated).
        ps: u64,
    },
    /// With [`Serialization::Ns3`] (whole nanoseconds, truncated) a full-size RoCE data frame
    /// takes no time at a host's link: the NIC would send without end at one instant.
    #[error(
        "with ns3 serialization a full data frame of {bytes} bytes takes 0 ns at {rate} (host \
         {host}'s link): a NIC would send without end at one instant; use a larger nic.mtu or \
         exact serialization"
    )]
    ZeroTimeFrame {
        /// A host whose link is that fast.
        host: NodeId,
        /// Its link's rate.
        rate: BitsPerSec,
        /// The frame's bytes on the wire.
        bytes: u32,
    },
    /// A partition must assign every node.
    #[error("the partition assigns {assigned} nodes but the network has {nodes}")]
    PartitionSize {
        /// Nodes in the network.
        nodes: usize,
        /// Nodes in the partition.
        assigned: usize,
    },
    /// A flow id that is not one of the run's flows.
    #[error("flow {0} is not one of the run's flows")]
    UnknownFlow(FlowId),
    /// `flow_transport` does not list one transport per flow.
    #[error("flow_transport lists {given} transports but there are {flows} flows")]
    TransportCount {
        /// Entries given.
        given: usize,
        /// Flows.
        flows: usize,
    },
    /// A flow names a TCP group that does not exist.
    #[error("flow {flow}: TCP group {group} does not exist (there are {groups})")]
    UnknownTcpGroup {
        /// The flow.
        flow: FlowId,
        /// The group index.
        group: u16,
        /// How many groups there are.
        groups: usize,
    },
    /// A TCP group's parameters are invalid.
    #[error("TCP group {group}: {error}")]
    TcpGroup {
        /// The group index.
        group: usize,
        /// What is wrong.
        error: crate::params::ParamError,
    },
    /// A monitored port ([`crate::config::Monitor::ports`]) that is not a switch egress port.
    #[error("queue monitor: node {node} has no switch port {port}")]
    MonitorPort {
        /// The node.
        node: NodeId,
        /// The port.
        port: PortNo,
    },
    /// A queue-discipline rule names a node that is not a switch, or a port it does not have.
    #[error("queue discipline {rule}: node {node} has no switch port {port}")]
    QdiscPort {
        /// The rule's index.
        rule: usize,
        /// The node.
        node: NodeId,
        /// The port.
        port: PortNo,
    },
    /// A queue-discipline rule covers no class, or class 0 (control frames).
    #[error(
        "queue discipline {rule}: classes {classes:#010b} must be a non-empty set of classes 1..=7"
    )]
    QdiscClasses {
        /// The rule's index.
        rule: usize,
        /// The class bit set.
        classes: u8,
    },
    /// A queue discipline's parameters are invalid.
    #[error("queue discipline {rule}: {error}")]
    Qdisc {
        /// The rule's index.
        rule: usize,
        /// What is wrong.
        error: crate::params::ParamError,
    },
    /// An application or connection cannot be run as given.
    #[error("{0}")]
    App(String),
    /// A switch buffer-admission parameter is out of range
    /// ([`SwitchConfig::check_admission`](crate::config::SwitchConfig::check_admission)).
    #[error("switch.{field}: {detail}")]
    SwitchAdmission {
        /// The parameter, as a scenario's `[switch]` table names it.
        field: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A link event cannot be applied ([`crate::config::Faults`]).
    #[error("link events: {0}")]
    Fault(String),
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

/// A simulation run: build with [`Simulation::new`] (or [`Simulation::with_partition`] for a
/// parallel run), then [`Simulation::run`].
pub struct Simulation<F: CcFactory> {
    shared: Shared<F>,
    shards: Vec<Shard<F>>,
    lookahead: Duration,
    fallback: Option<String>,
    threads: usize,
    rebalance: u64,
    /// Whether to bind each thread to a CPU of its own ([`Simulation::set_pin_threads`]), and
    /// the CPUs' order, worked out once.
    pins: crate::affinity::Pins,
    /// For tests: the thread whose start fails as if the system had refused it.
    refuse_thread: Option<usize>,
    /// The shards' owners when rebalancing, carried from one `run_until` to the next.
    owners: Option<crate::parallel::Owners>,
    now: Time,
    results: Vec<FlowResult>,
    counters: Counters,
    stats: ParallelStats,
}

/// The reference's host IP address for a node id (spec §6.1), used in ECMP hash keys.
pub(crate) fn node_ip(n: NodeId) -> u32 {
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

/// Widest ECMP group whose remainder [`ecmp_pick`] takes by multiplication.
const ECMP_FAST_MAX: usize = 64;

/// `u64::MAX / d + 1` (wrapping: 0 for `d = 1`) for `d` in `0..=ECMP_FAST_MAX` (entry 0 unused):
/// the multipliers of Lemire, Kaser and Kurz's direct remainder ("Faster remainder by direct
/// computation", 2019), exact for every 32-bit dividend with a 64-bit multiplier.
const ECMP_MUL: [u64; ECMP_FAST_MAX + 1] = {
    let mut t = [0u64; ECMP_FAST_MAX + 1];
    let mut d = 1;
    while d <= ECMP_FAST_MAX {
        t[d] = (u64::MAX / d as u64).wrapping_add(1);
        d += 1;
    }
    t
};

/// `hash % n` for an ECMP group of `n >= 1` next hops: the remainder, by two multiplications
/// and no branch for groups up to 64 wide (0 for one next hop, so that a switch need not
/// branch on whether it has a choice: that branch follows the traffic's mix of directions,
/// which a predictor cannot learn).
#[inline(always)]
pub(crate) fn ecmp_pick(hash: u32, n: usize) -> usize {
    debug_assert!(n >= 1);
    if n <= ECMP_FAST_MAX {
        // SAFETY: `n <= ECMP_FAST_MAX`, the table's last index.
        let m = unsafe { *ECMP_MUL.get_unchecked(n) };
        let low = m.wrapping_mul(hash as u64);
        ((low as u128 * n as u128) >> 64) as usize
    } else {
        (hash % n as u32) as usize
    }
}

/// The ECMP hash seed of switch `node` in a run configured by `cfg`.
pub(crate) fn ecmp_seed(node: usize, cfg: &SimConfig) -> u32 {
    match cfg.switch.ecmp_seed {
        crate::config::EcmpSeed::Run => (node as u32) ^ (mix64(cfg.seed) as u32),
        crate::config::EcmpSeed::Node => node as u32,
    }
}

/// The source ports of the listed flows, handed out in flow order (from 10 000 per host
/// pair, as the reference does), and the ECMP hash keys they give.
#[derive(Default)]
pub(crate) struct FlowKeys {
    sport_next: std::collections::HashMap<(u32, u32), u16>,
}

impl FlowKeys {
    /// The next source port from `src` to `dst`.
    pub(crate) fn sport(&mut self, src: NodeId, dst: NodeId) -> u16 {
        let sport = self.sport_next.entry((src.0, dst.0)).or_insert(10_000);
        let sp = *sport;
        *sport = sport.wrapping_add(1);
        sp
    }

    /// The forward and reverse ECMP keys of the next listed flow, `f`.
    pub(crate) fn next(&mut self, f: &FlowSpec) -> ([u32; 3], [u32; 3]) {
        let sp = self.sport(f.src, f.dst);
        let (sip, dip) = (node_ip(f.src), node_ip(f.dst));
        let hash_fwd = [sip, dip, sp as u32 | ((f.dport as u32) << 16)];
        let hash_rev = [dip, sip, f.dport as u32 | ((sp as u32) << 16)];
        (hash_fwd, hash_rev)
    }
}

/// SplitMix64 finalizer, to derive independent seeds.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(crate) fn port_rng(seed: u64, node: u32, port: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix64(seed ^ mix64(((node as u64) << 20) | port as u64)))
}

/// The random stream of the PINT digest's rounding at switch `node`'s `port`: the port's own
/// key ([`port_rng`]), ChaCha's stream 1 (the link draws from stream 0).
pub(crate) fn pint_rng(seed: u64, node: u32, port: usize) -> ChaCha8Rng {
    let mut rng = port_rng(seed, node, port);
    rng.set_stream(1);
    rng
}

impl<F: CcFactory> Simulation<F> {
    /// Builds a sequential run (one shard). Fails if the flows or config do not fit the
    /// network.
    pub fn new(
        net: Network,
        routes: RoutingTable,
        cfg: SimConfig,
        flows: Vec<FlowSpec>,
        factory: F,
    ) -> Result<Self, SimError> {
        let part = Partition::single(net.node_count());
        Self::with_partition(net, routes, cfg, flows, factory, part)
    }

    /// Builds a run whose nodes are split into shards by `part`, to be run on several threads
    /// ([`Self::set_threads`]). Results are identical to [`Self::new`]'s for any partition. If
    /// a link between two shards has zero propagation delay there is no lookahead; the run
    /// then falls back to one shard and [`Self::fallback`] says why.
    pub fn with_partition(
        net: Network,
        routes: RoutingTable,
        cfg: SimConfig,
        mut flows: Vec<FlowSpec>,
        factory: F,
        part: Partition,
    ) -> Result<Self, SimError> {
        if part.assignment().len() != net.node_count() {
            return Err(SimError::PartitionSize {
                nodes: net.node_count(),
                assigned: part.assignment().len(),
            });
        }
        let (part, lookahead, fallback) = part.with_lookahead(&net);
        if cfg.nic.mtu == 0 {
            return Err(SimError::Zero("nic.mtu"));
        }
        if cfg.nic.mtu > MAX_MTU {
            // A larger MTU wrapped its frame's 32-bit size (`HeaderMode::data_wire`): a silently
            // wrong run in release builds, an overflow panic in debug ones.
            return Err(SimError::TooLarge {
                field: "nic.mtu",
                value: cfg.nic.mtu.into(),
                max: MAX_MTU.into(),
            });
        }
        if cfg.nic.ack_interval == 0 {
            return Err(SimError::Zero("nic.ack_interval"));
        }
        if cfg.nic.chunk == 0 {
            return Err(SimError::Zero("nic.chunk"));
        }
        cfg.switch
            .check_admission()
            .map_err(|(field, detail)| SimError::SwitchAdmission { field, detail })?;
        if routes.host_count() != net.hosts().len() {
            return Err(SimError::RoutingMismatch {
                table: routes.host_count(),
                network: net.hosts().len(),
            });
        }
        let mut routes = routes;
        routes.bind_hosts(net.hosts(), net.node_count());
        if let Some(rto) = &cfg.nic.rto {
            rto.check().map_err(SimError::Fault)?;
        }
        // Durations a deadline is built from (now plus the duration): beyond the time limit
        // the sum could wrap (silently, in release builds). The CLI bounds every duration so.
        let timers = [
            ("nic.nack_interval", Some(cfg.nic.nack_interval)),
            ("nic.rto", cfg.nic.rto.as_ref().map(|r| r.timeout)),
        ];
        for (field, d) in timers {
            if let Some(d) = d.filter(|&d| d > crate::units::TIME_LIMIT) {
                return Err(SimError::TooLarge {
                    field,
                    value: d.as_ps(),
                    max: crate::units::TIME_LIMIT.as_ps(),
                });
            }
        }
        if let Some(w) = &cfg.monitor.qlen_sampler {
            if w.interval == Duration::ZERO {
                return Err(SimError::Zero("monitor.qlen_sampler.interval"));
            }
            if w.bin == 0 {
                return Err(SimError::Zero("monitor.qlen_sampler.bin"));
            }
            // Each monitored port keeps a counter per bin up to the buffer's size: 1-byte bins
            // of a 32 MiB buffer were 268 MB per port.
            let bins = (cfg.switch.buffer.0 / w.bin).saturating_add(1);
            if bins > MAX_SAMPLER_BINS {
                return Err(SimError::TooLarge {
                    field: "monitor.qlen_sampler bins (switch.buffer / bin)",
                    value: bins,
                    max: MAX_SAMPLER_BINS,
                });
            }
        }
        let watch = Watch {
            hist: cfg.monitor.queue_lengths,
            classes: cfg.monitor.per_class,
            clock: cfg.monitor.qlen_sampler.map_or(SampleClock::OFF, SampleClock::new),
        };
        let watched: Option<std::collections::HashSet<(NodeId, PortNo)>> = match &cfg.monitor.ports
        {
            None => None,
            Some(list) => {
                for &(node, port) in list {
                    let is_switch = net.kinds().get(node.idx()) == Some(&NodeKind::Switch);
                    if !is_switch || port.idx() >= net.ports(node).len() {
                        return Err(SimError::MonitorPort { node, port });
                    }
                }
                Some(list.iter().copied().collect())
            }
        };
        let faults = FaultPlan::new(&net, &cfg.faults, cfg.stop_time)?.map(Box::new);
        let header = factory.header_mode();
        let roce_used = (0..flows.len()).any(|i| cfg.transport_of(i) == Transport::Roce)
            || cfg.apps.connections.iter().any(|c| c.transport == Transport::Roce);
        if roce_used && cfg.serialization == Serialization::Ns3 {
            // Exact serialization rounds up to the picosecond and never gives 0.
            let bytes = header.data_wire(cfg.nic.mtu);
            // The first of the fastest hosts (`min_by_key` keeps the first of equals).
            let fastest =
                net.hosts().iter().copied().min_by_key(|&h| std::cmp::Reverse(net.nic_rate(h)));
            if let Some(host) = fastest {
                let rate = net.nic_rate(host);
                if cfg.serialization.tx_time(rate, bytes.into()) == Duration::ZERO {
                    return Err(SimError::ZeroTimeFrame { host, rate, bytes });
                }
            }
        }
        let n = net.node_count();
        let nic_rate = net.hosts().first().map(|&h| net.nic_rate(h)).unwrap_or_default();
        let nshards = part.shards();
        let mut place = Vec::with_capacity(n);
        let mut hosts: Vec<Vec<Host<F::Cc>>> = (0..nshards).map(|_| Vec::new()).collect();
        let mut switches: Vec<Vec<Switch>> = (0..nshards).map(|_| Vec::new()).collect();
        // By shard and switch slot, with PINT: each port's stream of the digest's rounding.
        let mut pint_rngs: Vec<Vec<Vec<ChaCha8Rng>>> = (0..nshards).map(|_| Vec::new()).collect();
        let mut hash_seeds = vec![0u32; n];
        let link_of = |node: usize, p: usize| {
            let port = &net.ports(NodeId::from_idx(node))[p];
            Link {
                cross_slot: Link::NO_CROSSING,
                down: false,
                cut_until: Time::ZERO,
                rate: port.rate,
                delay: port.delay,
                peer: port.peer.0,
                peer_port: port.peer_port.0,
                loss: port.loss,
                busy_until: Time::ZERO,
                txdone_pending: false,
                paused: Default::default(),
                tx_bytes: 0,
                tx_frames: 0,
                tx_data_frames: 0,
                tail: crate::engine::Tail::new(cfg.serialization, port.rate),
                rng: port_rng(cfg.seed, node as u32, p),
            }
        };
        for (i, kind) in net.kinds().iter().enumerate() {
            let node = NodeId::from_idx(i);
            let shard = part.assignment()[i];
            let (hosts, switches) = (&mut hosts[shard as usize], &mut switches[shard as usize]);
            match kind {
                NodeKind::Host => {
                    place.push(Place { shard, slot: Slot::Host(hosts.len() as u32) });
                    hosts.push(Host {
                        node: i as u32,
                        link: link_of(i, 0),
                        ack_fifo: VecDeque::new(),
                        active: Vec::new(),
                        candidates: Default::default(),
                        rr_last: 0,
                        wake: None,
                        wake_version: 0,
                        lazy_txdone: None,
                        _cc: std::marker::PhantomData,
                    });
                }
                NodeKind::Switch => {
                    let mut ports = Vec::new();
                    for (p, port) in net.ports(node).iter().enumerate() {
                        let ecn = if cfg.switch.ecn_enabled {
                            match cfg.switch.ecn_for(port.rate) {
                                Some(e) => Some(e),
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
                        let classes = std::array::from_fn(|q| class_qdisc(&cfg, node, p, q, ecn));
                        ports.push(SwitchPort {
                            link: link_of(i, p),
                            classes,
                            backlogged: 0,
                            rr_last: 0,
                            backlog: Backlog::new(
                                port_monitor(
                                    &cfg.monitor,
                                    &watch,
                                    watched.as_ref(),
                                    (NodeId(i as u32), PortNo(p as u16)),
                                ),
                                &watch,
                            ),
                            sample: SampleState::new(&watch.clock),
                            util: PortUtil::default(),
                        });
                    }
                    let geometry: Vec<(BitsPerSec, u64)> =
                        net.ports(node).iter().map(|p| (p.rate, p.delay.as_ps())).collect();
                    place.push(Place { shard, slot: Slot::Switch(switches.len() as u32) });
                    hash_seeds[i] = ecmp_seed(i, &cfg);
                    if header == HeaderMode::Pint {
                        let streams = (0..ports.len()).map(|p| pint_rng(cfg.seed, i as u32, p));
                        pint_rngs[shard as usize].push(streams.collect());
                    }
                    switches.push(Switch {
                        node: i as u32,
                        lossy: ports.iter().any(|p: &SwitchPort| p.link.loss > 0.0),
                        ports,
                        mmu: Mmu::new(&cfg.switch, &geometry, nic_rate),
                        hash_seed: hash_seeds[i],
                    });
                }
            }
        }

        // Flows: validation, ports, ECMP keys, metrics, ideal FCTs.
        let mtu = cfg.nic.mtu as u64;
        let mut keys = FlowKeys::default();
        let mut meta = Vec::with_capacity(flows.len());
        let mut flow_ports = Vec::with_capacity(flows.len());
        // Each shard holds the senders and receivers of the flows with an end in it: the
        // source's shard takes the sender, the destination's the receiver, and a TCP flow's
        // other end an unstarted copy of each.
        let all_flows = flows.len() + 2 * cfg.apps.connections.len();
        let mut qps = FlowTables::new(nshards, all_flows);
        let mut rxs = FlowTables::new(nshards, all_flows);
        let shard_of = |n: NodeId| place[n.idx()].shard as usize;
        let mut put = |src: NodeId, dst: NodeId, tx: FlowTx<F::Cc>, rx: FlowRx| {
            let (s, d) = (shard_of(src), shard_of(dst));
            qps.push((s, d), tx, FlowTx::copy_for_other_end);
            rxs.push((d, s), rx, FlowRx::copy_for_other_end);
        };
        let mut results = Vec::with_capacity(flows.len());
        let mut max_rtt = Duration::ZERO;
        let mut max_bdp = 0u64;
        if cfg.nic.global_t || header == HeaderMode::Pint {
            let (r, b) = paths::max_pair_metrics(&net, &routes, mtu);
            max_rtt = r;
            max_bdp = b;
        }
        if !cfg.flow_transport.is_empty() && cfg.flow_transport.len() != flows.len() {
            return Err(SimError::TransportCount {
                given: cfg.flow_transport.len(),
                flows: flows.len(),
            });
        }
        for (i, g) in cfg.tcp_groups.iter().enumerate() {
            g.tcp.validate().map_err(|e| SimError::TcpGroup { group: i, error: e })?;
        }
        for (i, r) in cfg.switch.qdiscs.iter().enumerate() {
            let ok = net.kinds().get(r.node.idx()) == Some(&NodeKind::Switch)
                && r.port.idx() < net.ports(r.node).len();
            if !ok {
                return Err(SimError::QdiscPort { rule: i, node: r.node, port: r.port });
            }
            if r.classes & 1 != 0 || r.classes == 0 {
                return Err(SimError::QdiscClasses { rule: i, classes: r.classes });
            }
            r.qdisc.validate().map_err(|e| SimError::Qdisc { rule: i, error: e })?;
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
            let (hash_fwd, hash_rev) = keys.next(f);
            let seed_of = |node: NodeId| hash_seeds[node.idx()];
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
            let transport = cfg.transport_of(pos);
            let tcp = match transport {
                Transport::Roce => None,
                Transport::Tcp(g) => {
                    Some(cfg.tcp_groups.get(g as usize).ok_or(SimError::UnknownTcpGroup {
                        flow: f.id,
                        group: g,
                        groups: cfg.tcp_groups.len(),
                    })?)
                }
            };
            let ideal = match tcp {
                None => ideal_fct(&fwd, &rev, f.size, mtu, &cfg.nic, cfg.serialization),
                Some(g) => ideal_fct_tcp(&fwd, &rev, f.size, &g.tcp, cfg.serialization),
            };
            // The command line bounds starts and sizes so already (with a clearer message);
            // a library caller could give any, and a run past the limit could wrap its times.
            let limit = crate::units::TIME_LIMIT;
            for (what, ps) in [("start", f.start.as_ps()), ("ideal completion time", ideal.as_ps())]
            {
                if ps > limit.as_ps() {
                    return Err(SimError::BeyondTimeLimit { flow: f.id, what, ps });
                }
            }
            let ref_ideal = ref_ideal_fct(&fwd, f.size, mtu);
            let line = net.nic_rate(f.src);
            meta.push(FlowMeta { hash_fwd, hash_rev, base_rtt, bdp, traced: false });
            flow_ports.push(FlowPorts::new(&fwd, &rev));
            results.push(FlowResult {
                id: f.id,
                src: f.src,
                dst: f.dst,
                size: f.size,
                start: f.start,
                fct: None,
                ideal_fct: ideal,
                ref_ideal_fct: ref_ideal,
                gave_up: None,
            });
            if let Transport::Tcp(g) = transport {
                let tx = FlowTx::Tcp(Box::new(TcpTx::new(g, f.pg)));
                put(f.src, f.dst, tx, FlowRx::Tcp(Box::new(TcpRx::new(g))));
                continue;
            }
            let win = if cfg.nic.window == WindowMode::None { 0 } else { bdp };
            let tx = FlowTx::Roce(Qp::new(f.size, line, win, f.start, f.pg));
            put(f.src, f.dst, tx, FlowRx::Roce(Rx::default()));
        }
        // Connections: two streams each (request, response) after the listed flows.
        let nlisted = flows.len();
        validate_apps(&cfg, &net)?;
        let mut conn_paths = Vec::with_capacity(cfg.apps.connections.len());
        for (c, conn) in cfg.apps.connections.iter().enumerate() {
            let (cl, sv) = (conn.client, conn.server);
            let sp = keys.sport(cl, sv);
            let (cip, sip) = (node_ip(cl), node_ip(sv));
            // One connection, one 5-tuple: the response travels on the request's reverse key.
            let key_cs = [cip, sip, sp as u32 | ((RPC_DPORT as u32) << 16)];
            let key_sc = [sip, cip, RPC_DPORT as u32 | ((sp as u32) << 16)];
            let no_route =
                || SimError::App(format!("connection {c}: no route between hosts {cl} and {sv}"));
            let seed_of = |node: NodeId| hash_seeds[node.idx()];
            let fwd = paths::walk(&net, &routes, cl, sv, |node, ch| {
                (murmur3_32(&key_cs, seed_of(node)) as usize) % ch.len()
            })
            .ok_or_else(no_route)?;
            let rev = paths::walk(&net, &routes, sv, cl, |node, ch| {
                (murmur3_32(&key_sc, seed_of(node)) as usize) % ch.len()
            })
            .ok_or_else(no_route)?;
            let pair = paths::pair_metrics(&net, &routes, cl, sv, mtu).ok_or_else(no_route)?;
            let (base_rtt, bdp) =
                if cfg.nic.global_t { (max_rtt, max_bdp) } else { (pair.rtt, pair.bdp) };
            let framing = match conn.transport {
                Transport::Roce => Framing {
                    seg: mtu,
                    hdr: header.data_wire(0) as u64,
                    min: 0,
                    ack: header.ack_wire() as u64,
                },
                Transport::Tcp(g) => {
                    let t = &cfg.tcp_groups[g as usize].tcp;
                    Framing {
                        seg: u64::from(t.mss),
                        hdr: u64::from(t.header_bytes),
                        min: u64::from(t.min_frame_bytes),
                        ack: 0,
                    }
                }
            };
            for (dir, (src, dst, hf, hr, (there, back))) in
                [(cl, sv, key_cs, key_sc, (&fwd, &rev)), (sv, cl, key_sc, key_cs, (&rev, &fwd))]
                    .into_iter()
                    .enumerate()
            {
                let id = FlowId((nlisted + 2 * c + dir) as u32);
                flows.push(FlowSpec {
                    id,
                    src,
                    dst,
                    size: 0,
                    start: Time::ZERO,
                    pg: conn.pg,
                    dport: RPC_DPORT,
                });
                meta.push(FlowMeta { hash_fwd: hf, hash_rev: hr, base_rtt, bdp, traced: false });
                flow_ports.push(FlowPorts::new(there, back));
                match conn.transport {
                    Transport::Tcp(g) => {
                        let tx = FlowTx::Tcp(Box::new(TcpTx::new(g, conn.pg)));
                        put(src, dst, tx, FlowRx::Tcp(Box::new(TcpRx::new(g))));
                    }
                    Transport::Roce => {
                        let line = net.nic_rate(src);
                        let win = if cfg.nic.window == WindowMode::None { 0 } else { bdp };
                        let tx = FlowTx::Roce(Qp::new(0, line, win, Time::ZERO, conn.pg));
                        put(src, dst, tx, FlowRx::Roce(Rx::default()));
                    }
                }
            }
            conn_paths.push(ConnPaths { fwd, rev, framing });
        }
        let stream_tcp = cfg
            .tcp_groups
            .iter()
            .map(|g| TcpConfig { handshake: false, reuse: dcsim_tcp::Reuse::None, ..g.tcp.clone() })
            .collect();
        // Connection pools: one per (group, server, client) of the listed flows whose group
        // reuses connections, numbered in flow order.
        let mut pool_of = Vec::new();
        let mut npools = 0;
        if cfg.tcp_groups.iter().any(|g| g.tcp.reuse != dcsim_tcp::Reuse::None) {
            let mut ids: std::collections::HashMap<(u16, u32, u32), u32> = Default::default();
            pool_of = (0..nlisted)
                .map(|i| match cfg.transport_of(i) {
                    Transport::Tcp(g)
                        if cfg.tcp_groups[g as usize].tcp.reuse != dcsim_tcp::Reuse::None =>
                    {
                        let n = ids.len() as u32;
                        *ids.entry((g, flows[i].src.0, flows[i].dst.0)).or_insert(n)
                    }
                    _ => crate::engine::NO_POOL,
                })
                .collect();
            npools = ids.len();
        }
        let (conn_state, app_state) = initial_state(&cfg.apps);

        let pint = (header == HeaderMode::Pint).then(|| max_rtt.as_ps().max(1));
        // Each cut link's two receiving ends, numbered within their shards (`Shard::cross_in`):
        // by link, frames from end `a` to end `b` (`[0]`) and from `b` to `a` (`[1]`);
        // `Link::NO_CROSSING` for a link within a shard.
        let mut cross_rx = vec![[Link::NO_CROSSING; 2]; net.links().len()];
        let mut cross_slots = vec![0u32; nshards];
        for (l, spec) in net.links().iter().enumerate() {
            let (sa, sb) = (place[spec.a.idx()].shard, place[spec.b.idx()].shard);
            if sa != sb {
                for (end, shard) in [(0, sb), (1, sa)] {
                    cross_rx[l][end] = cross_slots[shard as usize];
                    cross_slots[shard as usize] += 1;
                }
            }
        }
        // Each port on a link between shards keeps the slot its frames are received at:
        // frames towards end `a` take the link's second.
        let cross_slot = |node: u32, port: usize, link: &mut Link| {
            let l = net.ports(NodeId(node))[port].link.idx();
            let to_a = net.links()[l].a.0 == link.peer;
            link.cross_slot = cross_rx[l][to_a as usize];
        };
        for h in hosts.iter_mut().flatten() {
            cross_slot(h.node, 0, &mut h.link);
        }
        for s in switches.iter_mut().flatten() {
            for (i, p) in s.ports.iter_mut().enumerate() {
                cross_slot(s.node, i, &mut p.link);
            }
        }
        let shared = Shared {
            cfg,
            net,
            routes,
            header,
            pint,
            factory,
            flows,
            meta,
            // Routes that change (link events) are looked up at every hop.
            flow_ports: if faults.is_some() { Vec::new() } else { flow_ports },
            place,
            prefetchw: crate::engine::has_prefetchw(),
            tracing: false,
            nlisted,
            conn_paths,
            stream_tcp,
            pool_of,
            faults,
            watch,
        };
        let tx_tables = qps.finish();
        let rx_tables = rxs.finish();
        // The event queues' horizon: most events are due within a link's delay and a full
        // data frame's serialization (the median link's).
        let span = {
            let frame = shared.header.data_wire(shared.cfg.nic.mtu) as u64;
            let mut per_link: Vec<Duration> =
                shared.net.links().iter().map(|l| l.delay + l.rate.tx_time(frame)).collect();
            per_link.sort_unstable();
            per_link.get(per_link.len() / 2).copied().unwrap_or(Duration::from_us(1))
        };
        let mut shards: Vec<Shard<F>> = hosts
            .into_iter()
            .zip(switches.into_iter().zip(pint_rngs))
            .zip(tx_tables.into_iter().zip(rx_tables))
            .enumerate()
            .map(|(id, ((hosts, (switches, pint_rng)), (tx, rx)))| Shard {
                id: id as u32,
                dense_scan: crate::engine::DENSE_SCAN,
                eager_timers: false,
                now: Time::ZERO,
                cur_seq: 0,
                queue: CalendarQueue::covering_share(span, nshards),
                node_seq: vec![0; n],
                hosts,
                switches,
                pool: Vec::new(),
                flight: Vec::new(),
                free: Vec::new(),
                tx,
                rx,
                fct: Vec::new(),
                gave_up: Vec::new(),
                pending_starts: Vec::new(),
                counters: Counters::default(),
                done: 0,
                outbox: (0..nshards).map(|_| Vec::new()).collect(),
                cross_in: vec![crate::engine::Flight::NONE; cross_slots[id] as usize],
                pint_rng,
                hop_trace: Vec::new(),
                pfc_log: Vec::new(),
                dropped: Vec::new(),
                int_scratch: Default::default(),
                ser_memo: crate::engine::SerMemo::new(shared.cfg.serialization),
                conns: conn_state.clone(),
                app_state: app_state.clone(),
                queries: Vec::new(),
                pools: vec![crate::engine::PoolState::default(); npools],
                lapsed_until: Time::ZERO,
            })
            .collect();
        // Flow starts are keyed as if each source host had scheduled them at set-up, but only
        // the earliest of each shard sits in its event queue; the next is pushed when it fires.
        let mut starts: Vec<Vec<(Time, u64, u32)>> = vec![Vec::new(); nshards];
        for (i, f) in shared.flows[..nlisted].iter().enumerate() {
            let initiator = shared.initiator(i);
            let s = shared.place[initiator.idx()].shard as usize;
            let seq = shards[s].next_seq(initiator.0);
            starts[s].push((f.start, seq, i as u32));
        }
        for (shard, mut st) in shards.iter_mut().zip(starts) {
            st.sort_unstable();
            st.reverse();
            shard.pending_starts = st;
            shard.push_next_start();
        }
        for (i, app) in shared.cfg.apps.apps.iter().enumerate() {
            let s = shared.place[app.host.idx()].shard as usize;
            let seq = shards[s].next_seq(app.host.0);
            shards[s].queue.push(app.start, seq, Event::AppTimer { app: i as u32 });
        }
        // Link state changes, at both ends of the link, keyed at set-up like flow starts.
        if let Some(plan) = &shared.faults {
            for &(at, link, up) in &plan.changes {
                let l = shared.net.links()[link.idx()];
                for node in [l.a, l.b] {
                    let port = shared
                        .net
                        .ports(node)
                        .iter()
                        .position(|p| p.link == link)
                        .expect("a link is a port of both its ends");
                    let s = shared.place[node.idx()].shard as usize;
                    let seq = shards[s].next_seq(node.0);
                    let ev = Event::LinkChange { node: node.0, port: port as u16, up };
                    shards[s].queue.push(at, seq, ev);
                }
            }
        }
        Ok(Simulation {
            shared,
            shards,
            lookahead,
            fallback,
            threads: 1,
            rebalance: 0,
            pins: Default::default(),
            refuse_thread: None,
            owners: None,
            now: Time::ZERO,
            results,
            counters: Counters::default(),
            stats: ParallelStats::default(),
        })
    }

    /// Runs on `threads` threads (1 = on the calling thread; at most one per shard is used).
    /// Results do not depend on it. Only useful with more than one shard.
    ///
    /// # Panics
    /// If `threads` is 0.
    pub fn set_threads(&mut self, threads: usize) {
        assert!(threads > 0, "at least one thread");
        self.threads = threads;
    }

    /// With several threads, deals the shards out to the threads again every `every` windows
    /// by their measured wall-clock time (0, the default: shard `i` stays thread `i % threads`'s
    /// own). Each thread still claims its own shards first and then any not yet taken; new
    /// owners are kept only when they lower the busiest thread's share of the recent time by at
    /// least [`crate::REBALANCE_GAIN_PERCENT`] (see the `parallel` module's comment). Results
    /// do not depend on it; [`ParallelStats::redeals`] and [`ParallelStats::moves`] count what
    /// it did.
    pub fn set_rebalance(&mut self, every: u64) {
        self.rebalance = every;
    }

    /// With several threads, binds each thread to a CPU of its own for the run (on Linux; the
    /// CPUs the process may use, distinct cores before second hardware threads), so that the
    /// operating system neither moves a thread away from the caches that hold its shards'
    /// state nor puts two on one CPU. Nothing is pinned where the calling thread's CPU
    /// affinity allows fewer CPUs than the run's threads (a CPU quota does not narrow it), or
    /// off Linux; [`ParallelStats::pinned`] lists the CPUs used. The calling thread, which
    /// runs one of the workers, gets its CPUs back after each run.
    /// Results do not depend on it.
    pub fn set_pin_threads(&mut self, pin: bool) {
        self.pins.on = pin;
    }

    /// For tests: the start of thread `t` (0-based; the calling thread is the last) fails as if
    /// the system had refused it. The run goes on with the threads started before it and the
    /// calling thread, and [`ParallelStats::refused`] says so.
    #[doc(hidden)]
    pub fn refuse_thread_for_test(&mut self, t: usize) {
        self.refuse_thread = Some(t);
    }

    /// For tests: hosts with up to `senders` senders have the NIC scheduler read each of them
    /// in turn (the default is 8); above that it reads only its candidates, skipping senders
    /// it has found idle. `usize::MAX` reads every sender on every pass (the reads of the
    /// scheduler before it kept candidates); `0` reads only candidates everywhere. Results do
    /// not depend on it.
    #[doc(hidden)]
    pub fn set_nic_dense_scan(&mut self, senders: usize) {
        for s in &mut self.shards {
            s.dense_scan = senders;
        }
    }

    /// For tests: TCP timers queue an event at every change of deadline (the older lapsed by
    /// a version), as they did before a deadline that moves later kept its queued event
    /// (`engine::tcp::LazyTimer`). Results do not depend on it; the count of events does.
    #[doc(hidden)]
    pub fn set_eager_tcp_timers(&mut self, eager: bool) {
        for s in &mut self.shards {
            s.eager_timers = eager;
        }
    }

    /// Records every shard's window and every thread's barrier wait in
    /// [`ParallelStats::trace`] (a [`crate::WindowTrace`]): when each shard ran, on which
    /// thread, for how long, with how many events and crossings taken in, and when each
    /// thread reached and left each barrier. Call before running; a run on one shard has no
    /// windows. Costs 48 bytes per shard and window and 32 per thread and window (the 12 ms
    /// fat tree on 16 threads: about 32 MB) and does not change the run.
    pub fn trace_windows(&mut self) {
        self.stats.trace.get_or_insert_with(Default::default);
    }

    /// Takes the window records made since the last call out of [`ParallelStats::trace`]
    /// (the trace stays on, with its time origin), so that a caller stepping the run with
    /// [`Self::run_until`] can write them out as it goes instead of holding the whole run's;
    /// `None` when the windows are not traced. Each step's windows end after the previous
    /// step's.
    pub fn take_window_trace(&mut self) -> Option<crate::WindowTrace> {
        let t = self.stats.trace.as_mut()?;
        Some(crate::WindowTrace {
            shards: std::mem::take(&mut t.shards),
            barriers: std::mem::take(&mut t.barriers),
            origin: t.origin,
        })
    }

    /// Records every switch passage of the data packets of `flows` (see [`HopSample`]),
    /// for [`Self::hop_trace`]. Call before running. Tracing costs memory (40 bytes per
    /// packet and switch) but does not change the run.
    ///
    /// # Errors
    /// [`SimError::UnknownFlow`] if a flow id is not one of the run's flows.
    pub fn trace_hop_latency(&mut self, flows: &[FlowId]) -> Result<(), SimError> {
        for &f in flows {
            let m = self.shared.meta.get_mut(f.idx()).ok_or(SimError::UnknownFlow(f))?;
            m.traced = true;
            self.shared.tracing = true;
        }
        Ok(())
    }

    /// The hop samples recorded so far for the flows chosen with
    /// [`Self::trace_hop_latency`], ordered by flow, sequence number, origin (the copy),
    /// transmission time and switch: the same for any partitioning and thread count.
    pub fn hop_trace(&self) -> Vec<HopSample> {
        let mut v: Vec<HopSample> =
            self.shards.iter().flat_map(|s| s.hop_trace.iter().copied()).collect();
        v.sort_unstable_by_key(|h| (h.flow, h.seq, h.origin, h.sent, h.node));
        v
    }

    /// The PFC frames switches sent (when [`SimConfig::monitor`] asks for the log), in time
    /// order; simultaneous frames by switch, then in the order each switch sent them — the
    /// same for any partitioning and thread count.
    pub fn pfc_log(&self) -> Vec<PfcEvent> {
        let mut v: Vec<PfcEvent> =
            self.shards.iter().flat_map(|s| s.pfc_log.iter().copied()).collect();
        // Stable: a switch's frames all come from one shard, in the order it sent them.
        v.sort_by_key(|e| (e.time, e.switch));
        v
    }

    /// The backlog statistics of every monitored switch egress port, closed at `end` (the
    /// run's end time), by switch and port; empty unless [`SimConfig::monitor`] asks for
    /// queue lengths.
    pub fn queue_stats(&mut self, end: Time) -> Vec<PortQueue> {
        let mut v = Vec::new();
        for shard in &mut self.shards {
            for sw in &mut shard.switches {
                for (i, p) in sw.ports.iter_mut().enumerate() {
                    debug_assert!(p.backlog.settled(), "every change is told in its event");
                    debug_assert!(p.consistent(), "the backlog is the classes' bytes");
                    let b = &mut p.backlog;
                    if let Some(m) = b.mon.as_mut().filter(|_| self.shared.watch.hist) {
                        v.push(PortQueue {
                            node: NodeId(sw.node),
                            port: PortNo(i as u16),
                            peer: NodeId(p.link.peer),
                            rate: p.link.rate,
                            tx_bytes: sent_by(&p.link, end),
                            stats: self.shared.watch.finish_hist(m, &mut b.since, b.queued, end),
                        });
                    }
                }
            }
        }
        v.sort_by_key(|q| (q.node, q.port));
        v
    }

    /// The backlog statistics of each priority class of every monitored switch egress port,
    /// closed at `end` (the run's end time), by switch, port and class; only the classes that
    /// held bytes at some time. Empty unless [`SimConfig::monitor`] asks for per-class
    /// histograms.
    pub fn class_queue_stats(&mut self, end: Time) -> Vec<ClassQueue> {
        let mut v = Vec::new();
        for shard in &mut self.shards {
            for sw in &mut shard.switches {
                for (i, p) in sw.ports.iter_mut().enumerate() {
                    let classes = p.backlog.mon.as_mut().and_then(|m| m.finish_classes(end));
                    if let Some(classes) = classes {
                        for (q, stats) in classes.into_iter().enumerate() {
                            if stats.max > 0 {
                                v.push(ClassQueue {
                                    node: NodeId(sw.node),
                                    port: PortNo(i as u16),
                                    peer: NodeId(p.link.peer),
                                    rate: p.link.rate,
                                    class: q as u8,
                                    stats,
                                });
                            }
                        }
                    }
                }
            }
        }
        v.sort_by_key(|q| (q.node, q.port, q.class));
        v
    }

    /// The periodic samples of every monitored switch egress port's backlog (when
    /// [`SimConfig::monitor`] asks for a sampler), by switch and port, taken up to the stop
    /// time (after the run's last event the backlog keeps its last level).
    pub fn queue_samples(&mut self) -> Vec<PortSamples> {
        let stop = self.shared.cfg.stop_time;
        let sampling = self.shared.cfg.monitor.qlen_sampler.is_some();
        let mut v = Vec::new();
        for shard in &mut self.shards {
            for sw in &mut shard.switches {
                for (i, p) in sw.ports.iter_mut().enumerate() {
                    let (b, w) = (&mut p.backlog, &self.shared.watch);
                    if let Some(m) = b.mon.as_mut().filter(|_| sampling) {
                        v.push(PortSamples {
                            node: NodeId(sw.node),
                            port: PortNo(i as u16),
                            bin: self.shared.cfg.monitor.qlen_sampler.map_or(1, |w| w.bin),
                            counts: w.finish_samples(m, &mut p.sample, stop),
                        });
                    }
                }
            }
        }
        v.sort_by_key(|q| (q.node, q.port));
        v
    }

    /// Number of shards the nodes are split into.
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The window length of the parallel engine: the smallest propagation delay of a link
    /// between two shards (zero with one shard).
    pub fn lookahead(&self) -> Duration {
        self.lookahead
    }

    /// How the windows of a run with several shards went so far: the events of each shard, the
    /// events on the critical path, the crossings and the barrier waits. Empty for one shard.
    pub fn parallel_stats(&self) -> &ParallelStats {
        &self.stats
    }

    /// Why the requested partition was replaced by a single shard, if it was.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// Runs until every event is processed or the stop time is reached.
    pub fn run(&mut self) -> RunSummary {
        self.run_until(self.shared.cfg.stop_time)
    }

    /// Processes every event up to and including time `t` (capped at the stop time), then
    /// leaves the clock at `t` if events remain, so that a caller can step a run and inspect
    /// it in between ([`Self::queue_bytes`], [`Self::flow_acked`], [`Self::port_stats`]).
    pub fn run_until(&mut self, t: Time) -> RunSummary {
        let stop = t.min(self.shared.cfg.stop_time);
        let sh = &self.shared;
        if self.shards.len() == 1 {
            self.shards[0].run_window(sh, Time::MAX, stop);
        } else if self.threads <= 1 {
            let mut events = vec![0u64; self.shards.len()];
            // Crossings delivered to each shard since its last window (for the trace).
            let mut taken_in = vec![0u64; self.shards.len()];
            let tracing = self.stats.trace.is_some();
            loop {
                let next = self.shards.iter_mut().filter_map(|s| s.queue.peek_time()).min();
                let Some(next) = next else { break };
                if next > stop {
                    break;
                }
                let end = next + self.lookahead;
                for (i, (s, e)) in self.shards.iter_mut().zip(&mut events).enumerate() {
                    let before = s.counters.events;
                    let began = tracing.then(std::time::Instant::now);
                    s.run_window(sh, end, stop);
                    *e = s.counters.events - before;
                    if let (Some(began), Some(trace)) = (began, self.stats.trace.as_mut()) {
                        trace.shard_ran(end, i, 0, began, *e, taken_in[i]);
                    }
                    taken_in[i] = 0;
                }
                self.stats.window(&events, 1);
                // Deliver packets that crossed shards (their keys fix their order).
                for from in 0..self.shards.len() {
                    for (to, taken) in taken_in.iter_mut().enumerate() {
                        let mut out = std::mem::take(&mut self.shards[from].outbox[to]);
                        self.stats.crossings += out.len() as u64;
                        *taken += out.len() as u64;
                        for c in &out {
                            self.shards[to].ingest(c);
                        }
                        out.clear();
                        self.shards[from].outbox[to] = out; // keep the capacity
                    }
                }
            }
        } else {
            crate::parallel::run(
                &mut self.shards,
                sh,
                self.threads,
                self.lookahead,
                stop,
                self.rebalance,
                &mut self.pins,
                &mut self.owners,
                &mut self.stats,
                self.refuse_thread,
            );
        }
        let last = self.shards.iter().map(|s| s.now).max().unwrap_or(Time::ZERO);
        // Lazy TCP timers leave out events that would only have lapsed: the run's time
        // counts them as if they had been queued ([`Simulation::has_events`] too).
        let lapsed = self.lapsed_until();
        self.now =
            if self.queued_events() || lapsed > stop { last.max(stop) } else { last.max(lapsed) };
        self.collect();
        self.summary()
    }

    /// Merges per-shard completions and counters into the run-wide views.
    fn collect(&mut self) {
        let mut c = Counters::default();
        for s in &self.shards {
            c.add(&s.counters);
            // TCP endpoints count for themselves; a shard holds only its own flows' endpoints.
            for t in s.tx.iter() {
                if let FlowTx::Tcp(t) = t {
                    if let Some(st) = t.ep.as_ref().map(dcsim_tcp::Sender::stats) {
                        c.tcp_retransmits += st.retrans_segments;
                        c.tcp_recoveries += st.recoveries;
                        c.timeouts += st.timeouts;
                        c.tlp_probes += st.tlp_probes;
                        c.tcp_spurious_rtos += st.spurious_rtos;
                        c.tcp_undos += st.loss_undos + st.recovery_undos;
                        c.tcp_idle_restarts += st.idle_restarts;
                    }
                }
            }
            for &(flow, fct) in &s.fct {
                self.results[flow as usize].fct = Some(fct);
            }
            for &(flow, at) in &s.gave_up {
                self.results[flow as usize].gave_up = Some(at);
            }
        }
        self.counters = c;
    }

    /// Whether events remain (the run is not over). A deadline a TCP timer followed without an
    /// event of its own counts as the event it would have had, until its time.
    pub fn has_events(&self) -> bool {
        self.queued_events() || self.lapsed_until() > self.now
    }

    /// Whether any shard holds an event or a packet for another shard.
    fn queued_events(&self) -> bool {
        self.shards.iter().any(|s| !s.queue.is_empty() || s.outgoing().next().is_some())
    }

    /// The latest deadline a lazy TCP timer followed without an event of its own, over the
    /// shards (`Shard::lapsed_until`).
    fn lapsed_until(&self) -> Time {
        self.shards.iter().map(|s| s.lapsed_until).max().unwrap_or(Time::ZERO)
    }

    /// The current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    fn shard_of(&self, node: NodeId) -> (&Shard<F>, Slot) {
        let p = self.shared.place[node.idx()];
        (&self.shards[p.shard as usize], p.slot)
    }

    /// Bytes queued at an egress port of a switch, over all priorities (0 for a host).
    pub fn queue_bytes(&self, node: NodeId, port: PortNo) -> u64 {
        match self.shard_of(node) {
            (_, Slot::Host(_)) => 0,
            (s, Slot::Switch(i)) => s.switches[i as usize].ports[port.idx()].backlog.queued,
        }
    }

    fn flow_tx(&self, flow: FlowId) -> &FlowTx<F::Cc> {
        let src = self.shared.flows[flow.idx()].src;
        &self.shard_of(src).0.tx[flow.idx()]
    }

    /// Bytes of a flow acknowledged so far (its `snd_una`).
    pub fn flow_acked(&self, flow: FlowId) -> u64 {
        match self.flow_tx(flow) {
            FlowTx::Roce(q) => q.snd_una,
            FlowTx::Tcp(t) => t.ep.as_ref().map_or(0, |e| e.snd_una()),
        }
    }

    /// Bytes of a flow its receiver holds in order (delivered exactly once to the
    /// application): the flow's size once it has completed.
    pub fn flow_received(&self, flow: FlowId) -> u64 {
        let dst = self.shared.flows[flow.idx()].dst;
        match &self.shard_of(dst).0.rx[flow.idx()] {
            FlowRx::Roce(r) => r.expected,
            FlowRx::Tcp(r) => r.ep.as_ref().map_or(0, dcsim_tcp::Receiver::delivered),
        }
    }

    /// The current pacing rate of a flow (a TCP flow that does not pace: its NIC's line rate).
    pub fn flow_rate(&self, flow: FlowId) -> BitsPerSec {
        match self.flow_tx(flow) {
            FlowTx::Roce(q) => q.rate,
            FlowTx::Tcp(t) => match t.ep.as_ref() {
                Some(e) if e.is_paced() => BitsPerSec(e.pacing_rate()),
                _ => self.shared.net.nic_rate(self.shared.flows[flow.idx()].src),
            },
        }
    }

    /// The TCP sender of a flow, once it has started (`None` for RoCE flows).
    pub fn tcp_sender(&self, flow: FlowId) -> Option<&dcsim_tcp::Sender> {
        match self.flow_tx(flow) {
            FlowTx::Tcp(t) => t.ep.as_ref(),
            FlowTx::Roce(_) => None,
        }
    }

    /// The TCP receiver of a flow, once it has started (`None` for RoCE flows).
    pub fn tcp_receiver(&self, flow: FlowId) -> Option<&dcsim_tcp::Receiver> {
        let dst = self.shared.flows.get(flow.idx())?.dst;
        match &self.shard_of(dst).0.rx[flow.idx()] {
            FlowRx::Tcp(r) => r.ep.as_ref(),
            FlowRx::Roce(_) => None,
        }
    }

    /// Summary of the run so far.
    pub fn summary(&self) -> RunSummary {
        let done: usize = self.shards.iter().map(|s| s.done).sum();
        RunSummary {
            end_time: self.now,
            events: self.shards.iter().map(|s| s.counters.events).sum(),
            flows_done: done,
            flows_unfinished: self.shared.nlisted - done,
        }
    }

    /// Takes the queries completed since the last call, ordered by completion time, then
    /// application, connection and position: the same for any partitioning and thread count,
    /// so a caller can stream them out while stepping the run with [`Self::run_until`].
    pub fn take_queries(&mut self) -> Vec<QueryRecord> {
        let mut v: Vec<QueryRecord> =
            self.shards.iter_mut().flat_map(|s| std::mem::take(&mut s.queries)).collect();
        v.sort_unstable_by_key(|q| (q.completed(), q.app, q.conn, q.seq));
        v
    }

    /// The QCT of a query of `size` bytes answered by `response` bytes on connection `conn`,
    /// alone in the network: both messages' packets back to back through the connection's
    /// store-and-forward paths, with the packets' own headers, at line rate. Over RoCE it
    /// includes the server NIC's ACKs of the query's packets where the receiver sends them
    /// ([`crate::config::NicConfig::acks_at`]), one after another, before the answer, for the
    /// connection's first query; a later query's ACK points are those of its offsets on the
    /// stream.
    ///
    /// # Panics
    /// If `conn` is not a connection of the run or a size is 0.
    pub fn ideal_qct(&self, conn: usize, size: u64, response: u64) -> Duration {
        assert!(size > 0 && response > 0, "messages have at least one byte");
        let cfg = &self.shared.cfg;
        self.shared.conn_paths[conn].ideal(0, size, response, &cfg.nic, cfg.serialization)
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
        &self.shared.net
    }

    /// Transmit statistics of one port.
    ///
    /// # Panics
    /// If the node or port does not exist.
    pub fn port_stats(&self, node: NodeId, port: PortNo) -> PortStats {
        let link = match self.shard_of(node) {
            (s, Slot::Host(h)) => {
                assert_eq!(port.0, 0, "a host has one port");
                &s.hosts[h as usize].link
            }
            (s, Slot::Switch(i)) => &s.switches[i as usize].ports[port.idx()].link,
        };
        PortStats {
            tx_bytes: link.tx_bytes,
            tx_frames: link.tx_frames,
            tx_data_frames: link.tx_data_frames,
        }
    }

    /// Name of the congestion-control scheme.
    pub fn scheme(&self) -> &str {
        self.shared.factory.name()
    }

    /// Packets currently in flight or queued anywhere.
    pub fn packets_in_flight(&self) -> usize {
        self.shards.iter().map(|s| s.pool.len() - s.free.len() + s.outgoing().count()).sum()
    }

    /// Payload bytes of data packets currently in flight or queued.
    pub fn data_bytes_in_flight(&self) -> u64 {
        let mut total = 0;
        for s in &self.shards {
            let mut free = vec![false; s.pool.len()];
            for &f in &s.free {
                free[f as usize] = true;
            }
            total += s
                .pool
                .iter()
                .zip(free)
                .filter(|(p, f)| !f && p.is_data())
                .map(|(p, _)| p.payload as u64)
                .sum::<u64>();
            total +=
                s.outgoing().filter(|c| c.pkt.is_data()).map(|c| c.pkt.payload as u64).sum::<u64>();
        }
        total
    }

    /// Whether every switch queue and MMU counter is zero, nothing is paused, and no packet is
    /// in flight: the state a lossless fabric must return to once all traffic has drained.
    pub fn is_quiescent(&self) -> bool {
        let now = self.now;
        self.packets_in_flight() == 0
            && self.shards.iter().all(|s| {
                s.switches.iter().all(|sw| {
                    sw.mmu.is_idle()
                        && sw.ports.iter().all(|p| {
                            p.backlog.queued == 0
                                && p.backlogged == 0
                                && p.classes.iter().all(|q| q.is_empty())
                                && (p.link.busy_until <= now || p.link.down)
                                && p.link.paused.mask() == 0
                        })
                }) && s.hosts.iter().all(|h| {
                    h.ack_fifo.is_empty()
                        && (h.link.busy_until <= now || h.link.down)
                        && h.link.paused.mask() == 0
                })
            })
    }
}

/// Destination port of connection streams (100 background, 200 incast, 300 RPC).
pub(crate) const RPC_DPORT: u16 = 300;

/// Checks the run's applications and connections against the network and configuration.
fn validate_apps(cfg: &SimConfig, net: &Network) -> Result<(), SimError> {
    let apps = &cfg.apps;
    let err = |m: String| Err(SimError::App(m));
    for (c, conn) in apps.connections.iter().enumerate() {
        for node in [conn.client, conn.server] {
            if !net.is_host(node) {
                return err(format!("connection {c}: node {node} is not a host"));
            }
        }
        if conn.client == conn.server {
            return err(format!("connection {c}: client and server are the same host"));
        }
        if conn.pg == 0 || conn.pg as usize >= QUEUES {
            return err(format!("connection {c}: priority group {} is outside 1..=7", conn.pg));
        }
        if let Transport::Tcp(g) = conn.transport {
            if g as usize >= cfg.tcp_groups.len() {
                return err(format!("connection {c}: TCP group {g} does not exist"));
            }
        }
        let ok = apps.apps.get(conn.app as usize).is_some_and(|a| a.host == conn.client);
        if !ok {
            return err(format!(
                "connection {c}: application {} does not exist or is not on host {}",
                conn.app, conn.client
            ));
        }
    }
    let mut queries = 0u64;
    for (i, a) in apps.apps.iter().enumerate() {
        if a.connections.is_empty() {
            return err(format!("application {i}: no connections"));
        }
        for &c in &a.connections {
            let ok = apps.connections.get(c as usize).is_some_and(|x| x.app as usize == i);
            if !ok {
                return err(format!("application {i}: connection {c} is not one of its own"));
            }
        }
        match a.arrivals {
            Arrivals::Closed { outstanding } if outstanding > 0 => {
                queries += a.connections.len() as u64 * u64::from(outstanding);
                if queries > MAX_OUTSTANDING {
                    return err(format!(
                        "application {i}: its connections bring the run's closed-loop queries \
                         outstanding at once to {queries}, more than the limit of \
                         {MAX_OUTSTANDING}"
                    ));
                }
            }
            Arrivals::Closed { outstanding: 0 } => {
                return err(format!("application {i}: outstanding queries must be at least 1"));
            }
            Arrivals::Open { mean_gap, .. } if mean_gap == Duration::ZERO => {
                return err(format!("application {i}: mean inter-arrival time must be positive"));
            }
            _ => {}
        }
        for (what, d) in [("query", &a.query), ("response", &a.response)] {
            if let crate::apps::SizeDist::Fixed(0) = d {
                return err(format!("application {i}: {what} size must be at least 1 byte"));
            }
        }
    }
    Ok(())
}

/// The queue discipline of class `q` of port `p` of switch `node`: the last `[[queue]]` rule
/// that covers it, else the default ([`default_qdisc`]; `ecn`: the port speed's ECN
/// parameters when ECN is on).
pub(crate) fn class_qdisc(
    cfg: &SimConfig,
    node: NodeId,
    p: usize,
    q: usize,
    ecn: Option<EcnParams>,
) -> Qdisc {
    let here = |r: &&PortQdisc| r.node == node && r.port.idx() == p && r.classes & (1 << q) != 0;
    match cfg.switch.qdiscs.iter().rev().find(here) {
        Some(r) if q != 0 => Qdisc::new(&r.qdisc),
        _ => default_qdisc(q, ecn),
    }
}

/// The queue discipline of class `q` of a port without an explicit one: control frames and
/// class 0 in a FIFO; classes 1–7 in RED/ECN with the port speed's parameters when ECN is on
/// (the reference's marking), else in a FIFO whose only limit is the shared buffer.
fn default_qdisc(q: usize, ecn: Option<EcnParams>) -> Qdisc {
    match ecn {
        Some(e) if q != 0 => Qdisc::new(&QdiscConfig::Red(RedParams {
            kmin: e.kmin,
            kmax: e.kmax,
            pmax: e.pmax,
            ecn: true,
        })),
        _ => Qdisc::new(&QdiscConfig::Fifo(FifoParams::default())),
    }
}

/// Ideal FCT: the flow alone, base headers, line rate, no window, on the given paths: its
/// packets back to back through `fwd`, then the ACKs through `rev` until the one of the last
/// packet arrives.
///
/// The receiver ACKs a packet as it arrives, where `nic` says it does
/// ([`crate::config::NicConfig::acks_at`]), and the ACKs queue behind each other on the way
/// back. So the last ACK may wait: behind the one before it when the last packet is short (it
/// arrives soon after), and behind a train of them where the way back is slower. Through
/// store-and-forward links, with equal ACKs, the last arrives after the longest of
/// `A_k + (m_k − 1)·s` over the ACKed packets `k`, plus one ACK's crossing of `rev`: `A_k` is
/// packet `k`'s arrival, `m_k` the number of ACKs from `k`'s to the last, and `s` the slowest
/// hop's ACK time. Before the last packet, `A_k` grows by the same step per packet, so the term
/// is linear in `k` over a run of ACK points spaced alike; only each run's ends need trying: the
/// first and last chunk multiple below `ack_interval`, the first packet at or past it, and the
/// one before the last.
///
/// This and the two functions below saturate at `u64::MAX` picoseconds rather than wrap; a
/// front end bounds flow sizes so that validated runs never get there (the `dcsim` command
/// line rejects a flow whose ideal FCT could exceed [`crate::units::TIME_LIMIT`]).
fn ideal_fct(
    fwd: &[Hop],
    rev: &[Hop],
    size: u64,
    mtu: u64,
    nic: &crate::config::NicConfig,
    ser: Serialization,
) -> Duration {
    let npkts = size.div_ceil(mtu);
    let last = size - (npkts - 1) * mtu;
    let hdr = DATA_BASE_HEADER as u64;
    let mut data = paths::pipeline_time(fwd, npkts, mtu + hdr, last + hdr, ser);
    let ack_wire = HeaderMode::None.ack_wire() as u64;
    let ack = rev.iter().fold(Duration::ZERO, |a, h| {
        a.saturating_add(ser.tx_time(h.rate, ack_wire)).saturating_add(h.delay)
    });
    let s = rev.iter().map(|h| ser.tx_time(h.rate, ack_wire)).max().unwrap_or(Duration::ZERO);
    if npkts > 1 && s > Duration::ZERO {
        // Packets 1..npkts − 1 are full; packet k is ACKed from `k0` on, and below it where
        // its end is a multiple of the chunk (every `q`-th packet).
        let n = npkts;
        let k0 = nic.ack_interval.div_ceil(mtu).clamp(1, n);
        let q = if nic.chunk == 0 { 0 } else { nic.chunk / gcd(nic.chunk, mtu) };
        let chunk_acks = |from: u64, to: u64| match q {
            // Multiples of q in from..to.
            0 => 0,
            q if to > from => (to - 1) / q - (from - 1) / q,
            _ => 0,
        };
        // ACKs from packet k (ACKed) to the last, the last's included.
        let m = |k: u64| chunk_acks(k, k0) + (n - k.max(k0)) + 1;
        let mut candidates = [n - 1, k0, 0, 0];
        if q > 0 && q < k0.min(n) {
            candidates[2] = q;
            candidates[3] = (k0.min(n) - 1) / q * q;
        }
        for k in candidates {
            if k == 0 || k >= n || !nic.acks_at(k * mtu) {
                continue;
            }
            let arrive = paths::pipeline_time(fwd, k, mtu + hdr, mtu + hdr, ser);
            data = data.max(arrive.saturating_add(s.saturating_mul(m(k) - 1)));
        }
    }
    data.saturating_add(ack)
}

/// The greatest common divisor of two positive numbers.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Ideal FCT of a TCP flow: the same lone-flow pipeline with TCP's framing (MSS segments of
/// `mss + header_bytes`), completed when the last byte reaches the receiver (no ACK
/// return), plus, with a handshake, the SYN, SYN-ACK and request crossings before the first data
/// byte. Slow start, delayed ACKs and the initial window are not part of it: a TCP flow's
/// slowdown includes what its transport costs over an unconstrained transfer.
fn ideal_fct_tcp(
    fwd: &[Hop],
    rev: &[Hop],
    size: u64,
    tcp: &TcpConfig,
    ser: Serialization,
) -> Duration {
    let mss = u64::from(tcp.mss);
    let npkts = size.div_ceil(mss);
    let last = size - (npkts - 1) * mss;
    let hdr = u64::from(tcp.header_bytes);
    let min = u64::from(tcp.min_frame_bytes);
    let data = paths::pipeline_time(fwd, npkts, mss + hdr, (last + hdr).max(min), ser);
    if !tcp.handshake {
        return data;
    }
    let cross = |hops: &[Hop], wire: u64| {
        hops.iter().fold(Duration::ZERO, |a, h| {
            a.saturating_add(ser.tx_time(h.rate, wire.max(min))).saturating_add(h.delay)
        })
    };
    let syn = u64::from(tcp.syn_frame_bytes);
    let request = hdr + u64::from(tcp.request_bytes);
    cross(rev, syn)
        .saturating_add(cross(fwd, syn))
        .saturating_add(cross(rev, request))
        .saturating_add(data)
}

/// The reference's standalone FCT (spec §2.6), in whole nanoseconds like the reference
/// (saturating, as [`ideal_fct`]).
fn ref_ideal_fct(fwd: &[Hop], size: u64, mtu: u64) -> Duration {
    let npkts = size.div_ceil(mtu);
    let wire = size as u128 + npkts as u128 * DATA_BASE_HEADER as u128;
    let mut delay_ns = 0u64;
    let mut tx_ns = 0u64;
    let mut bw = u64::MAX;
    for h in fwd {
        delay_ns = delay_ns.saturating_add(h.delay.as_ns());
        let tx = mtu as u128 * 8_000_000_000 / h.rate.0 as u128;
        tx_ns = tx_ns.saturating_add(u64::try_from(tx).unwrap_or(u64::MAX));
        bw = bw.min(h.rate.0);
    }
    let rtt = delay_ns.saturating_mul(2).saturating_add(tx_ns);
    let ser = u64::try_from(wire * 8_000_000_000 / bw as u128).unwrap_or(u64::MAX);
    Duration::from_ps(rtt.saturating_add(ser).saturating_mul(crate::units::PS_PER_NS))
}

/// The monitors of switch port `at`, if `monitor` watches it (`watched`: the ports asked for;
/// `None`: every port).
fn port_monitor(
    monitor: &crate::config::Monitor,
    watch: &Watch,
    watched: Option<&std::collections::HashSet<(NodeId, PortNo)>>,
    at: (NodeId, PortNo),
) -> Option<Box<PortMonitor>> {
    if !monitor.watches_queues() || watched.is_some_and(|w| !w.contains(&at)) {
        return None;
    }
    Some(Box::new(PortMonitor::new(watch)))
}

/// The bytes `link`'s port had put on the wire by `end`: its count, which takes a frame's
/// bytes when the frame starts, less the bits of a frame still being sent at `end` (a run
/// stopped by its stop time mid-frame), so that a saturated port's utilisation is at most 1
/// with exact serialization. A failed link sends nothing (its `busy_until` is `Time::MAX`); a
/// frame a failure cut off counts whole.
fn sent_by(link: &crate::engine::Link, end: Time) -> u64 {
    if link.down || link.busy_until <= end {
        return link.tx_bytes;
    }
    // Bits left: (busy_until − end) ps at the link's rate, in bytes rounded up, so that only
    // whole bytes sent count.
    let left =
        ((link.busy_until.0 - end.0) as u128 * link.rate.0 as u128).div_ceil(8_000_000_000_000);
    link.tx_bytes.saturating_sub(left.min(u64::MAX as u128) as u64)
}
#[cfg(test)]
mod tests {
    use super::*;

    /// The ECMP choice by multiplication is the remainder, for every group width up to the
    /// table's and past it, at the dividends' edges and at random ones.
    #[test]
    fn ecmp_pick_is_the_remainder() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in 1..=(ECMP_FAST_MAX + 3) {
            let edges = [0, 1, n as u32 - 1, n as u32, n as u32 + 1, u32::MAX - 1, u32::MAX];
            for &h in &edges {
                assert_eq!(ecmp_pick(h, n), (h % n as u32) as usize, "{h} % {n}");
            }
            for _ in 0..20_000 {
                x = mix64(x);
                let h = x as u32;
                assert_eq!(ecmp_pick(h, n), (h % n as u32) as usize, "{h} % {n}");
            }
        }
    }

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

    /// `hosts` hosts on one switch, node 1 (host `h` is node 0 for `h = 0`, else `h + 1`, on
    /// the switch's port `h`): 100 Gb/s, 1 µs links.
    fn star(hosts: u32) -> (Network, RoutingTable) {
        star_at(hosts, BitsPerSec::gbps(100))
    }

    /// [`star`] with links of `rate`.
    fn star_at(hosts: u32, rate: BitsPerSec) -> (Network, RoutingTable) {
        use crate::network::{LinkSpec, NodeKind};
        let link = |a, b| LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate,
            delay: Duration::from_us(1),
            loss: 0.0,
        };
        let mut kinds = vec![NodeKind::Host; hosts as usize + 1];
        kinds[1] = NodeKind::Switch;
        let links = (0..hosts).map(|h| if h == 0 { link(0, 1) } else { link(1, h + 1) }).collect();
        let net = Network::new(kinds, links).unwrap();
        let routes = RoutingTable::from_fn(hosts as usize + 1, hosts as usize, |n, h| {
            if n == NodeId(1) {
                vec![crate::ids::PortNo(h as u16)]
            } else {
                vec![]
            }
        });
        (net, routes)
    }

    /// Switches forward by the egress port the packet carries (its flow's kept path), not by
    /// routing: a kept port made wrong is caught by the debug check at the first switch. A run
    /// whose packets carried no ports, or whose switches ignored them, would not panic here.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "the kept port of flow 0 at hop 0 of switch 1")]
    fn switches_forward_by_the_port_the_packet_carries() {
        use crate::cc::NoCcFactory;
        // Hosts 0, 2 and 3 on switch 1, whose port `h` leads to the host of index `h`.
        let (net, routes) = star(3);
        let flow = FlowSpec {
            id: FlowId(0),
            src: NodeId(0),
            dst: NodeId(2),
            size: 20_000,
            start: Time::ZERO,
            pg: 3,
            dport: 100,
        };
        let mut sim =
            Simulation::new(net, routes, SimConfig::default(), vec![flow], NoCcFactory).unwrap();
        let port = &mut sim.shared.flow_ports[0].ports[0][0];
        assert_eq!(*port, 1, "the switch's port towards host 2 is kept");
        // Another port of the switch: towards host 3.
        *port = 2;
        sim.run();
    }

    /// Each shard holds the senders and receivers of the flows with an end in it, not a copy
    /// of every flow's, and the run is the same as on one shard.
    #[test]
    fn shards_hold_only_the_flows_with_an_end_in_them() {
        use crate::partition::Partition;
        let build = five_flows_on_a_star;
        let mut one = build(None);
        assert_eq!(one.shards(), 1);
        assert_eq!((one.shards[0].tx.held(), one.shards[0].rx.held()), (5, 5));
        // Node i in shard i % 3: hosts 0 and 3 in shard 0, the switch in 1, host 2 in 2.
        let mut three = build(Some(Partition::round_robin(4, 3)));
        assert_eq!(three.shards(), 3);
        let held: Vec<(usize, usize)> =
            three.shards.iter().map(|s| (s.tx.held(), s.rx.held())).collect();
        // A RoCE flow's sender is held at its source only and its receiver at its destination
        // only: shard 0 sends flows 0, 2, 3 and receives 1, 2, 3, 4; shard 1 has no host;
        // shard 2 sends flows 1, 4 and receives 0.
        assert_eq!(held, vec![(3, 4), (0, 0), (2, 1)]);
        one.run();
        three.set_threads(2);
        three.run();
        assert_eq!(one.flow_results(), three.flow_results());
        assert!(one.flow_results().iter().all(|r| r.fct.is_some()));
    }

    /// A run stepped with `run_until`, as `dcsim run` steps one to report progress, with the
    /// shards dealt out to two threads every third window: the owners' record carries over
    /// from step to step, so it has seen every window of the run, not only the last step's,
    /// and the results are one shard's.
    #[test]
    fn rebalancing_carries_over_from_step_to_step() {
        use crate::partition::Partition;
        let mut one = five_flows_on_a_star(None);
        one.run();
        let mut stepped = five_flows_on_a_star(Some(Partition::round_robin(4, 3)));
        stepped.set_threads(2);
        stepped.set_rebalance(3);
        let (mut t, mut steps_with_windows) = (Time::ZERO, 0);
        while stepped.has_events() && t < stepped.shared.cfg.stop_time {
            t += Duration::from_us(3);
            let before = stepped.stats.windows;
            stepped.run_until(t);
            steps_with_windows += usize::from(stepped.stats.windows > before);
        }
        assert!(steps_with_windows >= 3, "{steps_with_windows} steps ran windows");
        let seen = stepped.owners.as_ref().map(|o| o.seen);
        assert_eq!(seen, Some(stepped.stats.windows));
        assert_eq!(stepped.flow_results(), one.flow_results());
    }

    /// Five flows of 20 kB among the three hosts of a star, one every microsecond, on one
    /// shard or on `part`.
    fn five_flows_on_a_star(
        part: Option<crate::partition::Partition>,
    ) -> Simulation<crate::cc::NoCcFactory> {
        use crate::cc::NoCcFactory;
        let (net, routes) = star(3);
        let flows: Vec<FlowSpec> = [(0, 2), (2, 3), (3, 0), (0, 3), (2, 0)]
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| FlowSpec {
                id: FlowId(i as u32),
                src: NodeId(a),
                dst: NodeId(b),
                size: 20_000,
                start: Time(i as u64 * 1_000_000),
                pg: 3,
                dport: 100,
            })
            .collect();
        let cfg = SimConfig::default();
        match part {
            None => Simulation::new(net, routes, cfg, flows, NoCcFactory).unwrap(),
            Some(p) => Simulation::with_partition(net, routes, cfg, flows, NoCcFactory, p).unwrap(),
        }
    }

    /// An MTU whose frames would not fit their 32-bit sizes is refused, not wrapped into a
    /// small frame; the largest one taken runs.
    #[test]
    fn an_mtu_too_large_for_a_frame_is_refused() {
        let build = |mtu: u32| {
            let mut cfg = SimConfig::default();
            cfg.nic.mtu = mtu;
            one_flow(BitsPerSec::gbps(100), 5_000, Time::ZERO, cfg)
        };
        for mtu in [u32::MAX, u32::MAX - 47, MAX_MTU + 1] {
            match build(mtu) {
                Err(SimError::TooLarge { field: "nic.mtu", value, max }) => {
                    assert_eq!((value, max), (u64::from(mtu), u64::from(MAX_MTU)));
                }
                Err(e) => panic!("mtu {mtu}: {e}"),
                Ok(_) => panic!("mtu {mtu} was taken"),
            }
        }
        let mut sim = build(MAX_MTU).expect("the largest MTU is taken");
        sim.run();
        // One frame of 5,000 bytes and its headers, not a wrapped one.
        let r = &sim.flow_results()[0];
        assert!(r.fct.is_some_and(|f| f >= r.ideal_fct), "{r:?}");
    }

    /// One flow of `size` bytes from host 0 to host 2 of a two-host star at `rate`,
    /// starting at `start`, with the NIC and serialization of `cfg` (ECN off: the default
    /// configures it for 100 and 400 Gbps only).
    fn one_flow(
        rate: BitsPerSec,
        size: u64,
        start: Time,
        mut cfg: SimConfig,
    ) -> Result<Simulation<crate::cc::NoCcFactory>, SimError> {
        cfg.switch.ecn_enabled = false;
        let (net, routes) = star_at(2, rate);
        let flows = vec![FlowSpec {
            id: FlowId(0),
            src: NodeId(0),
            dst: NodeId(2),
            size,
            start,
            pg: 3,
            dport: 100,
        }];
        Simulation::new(net, routes, cfg, flows, crate::cc::NoCcFactory)
    }

    /// A flow that starts past the time limit, or whose ideal completion time (alone, on a
    /// 1 bps path) is past it, is refused before the run; at the limit it is taken.
    #[test]
    fn flows_beyond_the_time_limit_are_refused() {
        let limit = crate::units::TIME_LIMIT.as_ps();
        let fast = BitsPerSec::gbps(100);
        assert!(one_flow(fast, 1000, Time(limit), SimConfig::default()).is_ok());
        for start in [limit + 1, u64::MAX] {
            match one_flow(fast, 1000, Time(start), SimConfig::default()) {
                Err(SimError::BeyondTimeLimit { flow: FlowId(0), what: "start", ps }) => {
                    assert_eq!(ps, start)
                }
                other => panic!("start {start}: {:?}", other.err()),
            }
        }
        // At 1 bps, 5 kB (five frames) take about half a day per hop, within the limit; 2^40
        // bytes would take about 2.8 * 10^5 years.
        if let Err(e) = one_flow(BitsPerSec(1), 5_000, Time::ZERO, SimConfig::default()) {
            panic!("{e}");
        }
        match one_flow(BitsPerSec(1), 1 << 40, Time::ZERO, SimConfig::default()) {
            Err(e @ SimError::BeyondTimeLimit { what: "ideal completion time", .. }) => {
                assert!(e.to_string().contains("beyond the time limit of 2^62 ps"), "{e}")
            }
            other => panic!("{:?}", other.err()),
        }
    }

    /// With ns-3's whole-nanosecond serialization, an MTU whose data frames take 0 ns at the
    /// host links is refused (the NIC would send without end at one instant); one whose
    /// frames take a nanosecond is taken, and exact serialization takes any.
    #[test]
    fn ns3_frames_of_no_time_are_refused() {
        let rate = crate::units::MAX_RATE; // 100 Tbps: 12,500 bytes per ns.
        let with = |mtu: u32, ser: Serialization| {
            let mut cfg = SimConfig::default();
            cfg.nic.mtu = mtu;
            cfg.serialization = ser;
            one_flow(rate, 100_000, Time::ZERO, cfg)
        };
        let header = HeaderMode::None.data_wire(0);
        match with(1000, Serialization::Ns3) {
            Err(SimError::ZeroTimeFrame { host: NodeId(0), rate: r, bytes }) => {
                assert_eq!((r, bytes), (rate, 1000 + header))
            }
            other => panic!("{:?}", other.err()),
        }
        assert!(with(12_600 - header, Serialization::Ns3).is_ok());
        assert!(with(1000, Serialization::Exact).is_ok());
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
