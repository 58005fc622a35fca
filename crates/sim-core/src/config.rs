//! Simulation parameters, validated by whoever builds them (the CLI's scenario loader) and
//! given to [`crate::Simulation::new`]. Every default equals the reference simulator's run-script
//! value (spec §5.1) unless its doc says otherwise.

use crate::ids::{FlowId, LinkId, NodeId, PortNo};

use crate::units::{BitsPerSec, Bytes, Duration, Time};
pub use dcsim_aqm::QdiscConfig;
pub use dcsim_tcp::{CcaConfig, TcpConfig};

/// RED/ECN marking parameters for ports of one speed (spec §3.3).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct EcnParams {
    /// Below or at this egress queue depth nothing is marked.
    pub kmin: Bytes,
    /// Above this depth every packet is marked.
    pub kmax: Bytes,
    /// Marking probability as the depth approaches `kmax`.
    pub pmax: f64,
}

/// Shared-buffer switch parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchConfig {
    /// Total shared buffer per switch (reference: `BUFFER_SIZE` MiB; default 32 MiB).
    pub buffer: Bytes,
    /// Whether ECN marking is on (`ENABLE_QCN`).
    pub ecn_enabled: bool,
    /// ECN parameters per exact port rate. Every switch port's rate must have an entry when
    /// ECN is enabled (checked by [`crate::Simulation::new`]).
    pub ecn: Vec<(BitsPerSec, EcnParams)>,
    /// Per (port, queue) guaranteed reserve (reference: 4096 B).
    pub reserve: Bytes,
    /// Hysteresis for PFC resume (reference: 3072 B).
    pub resume_offset: Bytes,
    /// Headroom per port as a multiple of the port's one-way BDP (reference: 3).
    pub headroom_bdp_multiple: u64,
    /// Whether PFC is on. With PFC off, packets that would need headroom are dropped.
    pub pfc_enabled: bool,
    /// Priority classes that are lossy even when PFC is on (bit `q` for class `q`): their
    /// packets never pause the upstream and are dropped where they would need headroom, as TCP
    /// classes are on a production fabric that runs RoCE losslessly beside them.
    pub lossy_classes: u8,
    /// Queue disciplines of particular ports and classes, replacing the default (RED/ECN on
    /// classes 1–7 when ECN is on, else drop-tail without a limit of its own).
    pub qdiscs: Vec<PortQdisc>,
    /// The ingress dynamic-threshold alpha, explicitly. `None` (the default) is the
    /// reference's rule: threshold `= free >> shift`, where `free` is the shared pool minus
    /// its used bytes and `shift` is 3 (alpha = 1/8), decreased by one for each doubling of
    /// the ingress port's rate over the first host's NIC rate. `Some(alpha)` sets the
    /// threshold to `floor(alpha * free)` on every port: no per-port rate shift.
    ///
    /// The threshold bounds the shared bytes of one (ingress port, class): a lossless class
    /// pauses its upstream once it reaches the threshold (PFC fires when the queue holds more
    /// than `alpha` of the free buffer), and in ingress admission a lossy class drops beyond
    /// it. In either case a queue may never take more than the free shared buffer itself, which
    /// matters only for `alpha > 1`. Valid values: finite, in (0, 1000).
    pub dt_alpha: Option<f64>,
    /// Egress admission for lossy classes (classes that do not pause: not
    /// [`SwitchConfig::lossless`]). `None` (the default): lossy classes are admitted at ingress
    /// like lossless ones, only without headroom. `Some(cap)`: a lossy packet is dropped when
    /// its egress queue (port, class) would exceed `min(cap, floor(egress_alpha * free))`
    /// bytes (`free`: the shared pool minus its used bytes), or when it does not fit in the
    /// free shared buffer; otherwise it is admitted (still counted in the ingress reserve and
    /// the shared pool). Lossless classes keep ingress admission with PFC. Valid caps: at
    /// least 1 byte and at most [`SwitchConfig::buffer`].
    pub egress_cap: Option<Bytes>,
    /// The dynamic-threshold alpha of egress admission (used only with
    /// [`SwitchConfig::egress_cap`]); default 1 (a queue may hold as much as is free). Valid
    /// values: finite, in (0, 1000).
    pub egress_alpha: f64,
    /// How each switch seeds its ECMP hash.
    pub ecmp_seed: EcmpSeed,
}

/// How a switch seeds the MurmurHash3 that picks its ECMP next hop (`[switch] ecmp_seed`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcmpSeed {
    /// From the run's seed and the switch's node id: `--seed` draws other paths.
    #[default]
    Run,
    /// The switch's node id, as the reference seeds it (`m_ecmpSeed = m_id`). With next hops in
    /// the reference's order (ascending neighbour ids, which is the order the reference builds
    /// when its nodes lie in memory in the order they were created), flows take the
    /// reference's paths, and a run can be compared with the reference's flow by flow.
    Node,
}

/// A queue discipline for some priority classes of one switch egress port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortQdisc {
    /// The switch.
    pub node: NodeId,
    /// Its egress port.
    pub port: PortNo,
    /// The classes it applies to (bit `q` for class `q`; class 0 carries control frames and
    /// cannot be given one).
    pub classes: u8,
    /// The discipline.
    pub qdisc: QdiscConfig,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: Bytes(32 << 20),
            ecn_enabled: true,
            ecn: vec![
                (
                    BitsPerSec::gbps(100),
                    EcnParams { kmin: Bytes(400_000), kmax: Bytes(1_600_000), pmax: 0.2 },
                ),
                (
                    BitsPerSec::gbps(400),
                    EcnParams { kmin: Bytes(1_600_000), kmax: Bytes(6_400_000), pmax: 0.2 },
                ),
            ],
            reserve: Bytes(4096),
            resume_offset: Bytes(3072),
            headroom_bdp_multiple: 3,
            pfc_enabled: true,
            lossy_classes: 0,
            qdiscs: Vec::new(),
            dt_alpha: None,
            egress_cap: None,
            egress_alpha: 1.0,
            ecmp_seed: EcmpSeed::Run,
        }
    }
}

impl SwitchConfig {
    /// Whether class `q` is lossless: PFC is on and the class is not in
    /// [`SwitchConfig::lossy_classes`].
    pub fn lossless(&self, q: usize) -> bool {
        self.pfc_enabled && self.lossy_classes & (1 << q) == 0
    }

    /// The largest alpha [`SwitchConfig::dt_alpha`] and [`SwitchConfig::egress_alpha`] may
    /// take (exclusive).
    pub const MAX_ALPHA: f64 = 1000.0;

    /// Checks the buffer-admission parameters: each alpha finite and in
    /// `(0, `[`SwitchConfig::MAX_ALPHA`]`)`, the egress cap in `1..=buffer` bytes.
    ///
    /// # Errors
    /// `(field, what is wrong)`, the field named as in a scenario's `[switch]` table
    /// (`pfc_alpha`, `egress_alpha`, `egress_cap`).
    pub fn check_admission(&self) -> Result<(), (&'static str, String)> {
        let alpha = |field: &'static str, a: f64| {
            if a > 0.0 && a < Self::MAX_ALPHA {
                Ok(())
            } else {
                Err((field, format!("{a} is outside (0, {}) exclusive", Self::MAX_ALPHA)))
            }
        };
        if let Some(a) = self.dt_alpha {
            alpha("pfc_alpha", a)?;
        }
        if let Some(cap) = self.egress_cap {
            alpha("egress_alpha", self.egress_alpha)?;
            if cap.0 == 0 {
                return Err(("egress_cap", "must be at least 1 byte".into()));
            }
            if cap > self.buffer {
                return Err((
                    "egress_cap",
                    format!("{cap} is larger than the switch buffer ({})", self.buffer),
                ));
            }
        }
        Ok(())
    }

    /// ECN parameters for a port of rate `rate`, if configured.
    pub fn ecn_for(&self, rate: BitsPerSec) -> Option<EcnParams> {
        self.ecn.iter().find(|(r, _)| *r == rate).map(|(_, p)| *p)
    }
}

/// How a flow's window is set (reference `HAS_WIN` / `VAR_WIN` / `GLOBAL_T`, spec §2.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WindowMode {
    /// No window: pure rate pacing (`HAS_WIN 0`).
    None,
    /// A fixed window of one BDP (`HAS_WIN 1, VAR_WIN 0`).
    Fixed,
    /// One BDP scaled by `rate / line rate` (`HAS_WIN 1, VAR_WIN 1`).
    Variable,
}

/// RDMA NIC parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct NicConfig {
    /// Payload bytes per data packet (`PACKET_PAYLOAD_SIZE`, default 1000).
    pub mtu: u32,
    /// ACK when the cumulative in-order byte count reaches this (`L2_ACK_INTERVAL`; 1 = every
    /// packet). See spec §2.3 for why this is a byte threshold.
    pub ack_interval: u64,
    /// Also ACK at multiples of this many bytes (`L2_CHUNK_SIZE`, default 4000).
    pub chunk: u64,
    /// Go back to a chunk boundary on NACK (`L2_BACK_TO_ZERO 1`) instead of to the last
    /// cumulative ACK.
    pub back_to_chunk: bool,
    /// NACKs for the same gap are suppressed for this long (reference: 500 µs).
    pub nack_interval: Duration,
    /// Pace at the CC rate (`RATE_BOUND 1`); otherwise packets are spaced at line rate.
    pub rate_bound: bool,
    /// Which PFC priority blocks the NIC's ACK queue: 0 if true, 3 otherwise (`ACK_HIGH_PRIO`).
    pub ack_high_prio: bool,
    /// Window mode.
    pub window: WindowMode,
    /// Use the network-wide maximum base RTT and BDP for every flow (`GLOBAL_T 1`) instead of
    /// the flow's own pair values.
    pub global_t: bool,
    /// The queue pairs' retransmission timeout; `None` (the default, as the reference): none,
    /// so a lost tail packet or ACK is never repaired.
    pub rto: Option<RoceRto>,
}

/// A RoCE queue pair's retransmission timeout (the InfiniBand "local ACK timeout").
///
/// While a queue pair has bytes sent and not acknowledged, a timer runs from the latest of its
/// last progress (an ACK or NACK that advanced `snd_una`), its last timeout, and the moment it
/// last sent a packet when every byte sent so far had been acknowledged. When it expires the
/// sender goes back to the last acknowledged byte (go-back-N) and counts a timeout; the next
/// timeout is `backoff` times longer. The timer keeps running while the retransmission cannot
/// leave (a failed link, a PFC pause), as an InfiniBand requester's does. Progress resets both
/// the timeout and the retry count. After `retries` consecutive timeouts without progress the
/// next expiry ends the flow: it is reported unfinished, with the time it gave up
/// ([`crate::FlowResult::gave_up`]). A connection's streams never give up.
///
/// With a timeout, a receiver answers a duplicate packet with an ACK of what it holds (as an
/// InfiniBand responder does), so that a lost ACK is repaired too. Without one (the reference),
/// duplicates are ignored.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RoceRto {
    /// The first timeout (> 0).
    pub timeout: Duration,
    /// Retransmissions after timeouts before the flow gives up.
    pub retries: u32,
    /// Each consecutive timeout is this many times the previous one (1: fixed, as InfiniBand
    /// hardware; 2: exponential). At least 1; the timeout saturates at [`RoceRto::MAX`].
    pub backoff: u32,
}

impl RoceRto {
    /// Checks the parameters: a timeout of at least 1 ps and a back-off of at least 1.
    ///
    /// # Errors
    /// What is wrong, naming the scenario key (`nic.rto`, `nic.rto_backoff`).
    pub fn check(&self) -> Result<(), String> {
        if self.timeout == Duration::ZERO {
            return Err("nic.rto: the timeout must be greater than zero".into());
        }
        if self.backoff == 0 {
            return Err("nic.rto_backoff: must be at least 1".into());
        }
        Ok(())
    }

    /// The longest a backed-off timeout may grow (1000 s).
    pub const MAX: Duration = Duration::from_ps(1_000_000_000_000_000);

    /// The timeout after `k` consecutive expiries: `timeout * backoff^k`, at most
    /// [`RoceRto::MAX`].
    pub fn after(&self, k: u32) -> Duration {
        let mut t = self.timeout.as_ps().min(Self::MAX.as_ps());
        if self.backoff <= 1 || t == 0 {
            return Duration::from_ps(t);
        }
        // With a factor of at least 2 the timeout reaches MAX within 64 doublings.
        for _ in 0..k.min(64) {
            t = t.saturating_mul(u64::from(self.backoff));
            if t >= Self::MAX.as_ps() {
                return Self::MAX;
            }
        }
        Duration::from_ps(t.min(Self::MAX.as_ps()))
    }
}

/// A link goes down or comes back up during the run ([`Faults`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LinkEvent {
    /// When.
    pub at: Time,
    /// The link (an index into [`crate::network::Network::links`]).
    pub link: LinkId,
    /// `false`: the link fails; `true`: it is restored.
    pub up: bool,
}

/// Link failures and repairs, scheduled before the run.
///
/// The semantics (see `docs/scenario.md`, "Link failures"): at `at` both ends of the link stop
/// transmitting (or start again); frames queued at a switch port of a failed link are dropped,
/// and every frame on the wire of a link that fails before its last bit arrives is lost (a
/// frame starting on a link that is down is lost too), counted in `drops_link_down`; the PFC
/// state of the link is cleared on both ends (its pauses are void). Routing reacts
/// `convergence` after each event: from then on switches use shortest-path ECMP over the
/// links up at the event ([`crate::network::RoutingTable::shortest_paths`]); until then they
/// keep the previous routes, and a packet routed to a failed port is dropped
/// (`drops_link_down`). A destination no route reaches has its packets dropped as
/// `no_route_drops`. Events at the same time apply in list order; events after the stop time
/// are left out. Routes after each change are always computed by
/// [`crate::network::RoutingTable::shortest_paths`], whatever table the run was given.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Faults {
    /// The events, in any order (applied by time, ties in list order).
    pub events: Vec<LinkEvent>,
    /// The routing convergence delay after each event.
    pub convergence: Duration,
}

impl Faults {
    /// The most distinct times at which links may change state in one run: routing keeps a
    /// table (switches × destination switches entries) for each.
    pub const MAX_ROUTE_CHANGES: usize = 1024;
}

impl NicConfig {
    /// Whether a receiver ACKs the packet that brings its in-order byte count to `expected`
    /// (spec §2.3): at or past [`NicConfig::ack_interval`], or at a multiple of
    /// [`NicConfig::chunk`].
    #[inline]
    pub fn acks_at(&self, expected: u64) -> bool {
        expected >= self.ack_interval || expected.is_multiple_of(self.chunk)
    }
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            mtu: 1000,
            ack_interval: 1,
            chunk: 4000,
            back_to_chunk: false,
            nack_interval: Duration::from_us(500),
            rate_bound: true,
            ack_high_prio: false,
            window: WindowMode::None,
            global_t: true,
            rto: None,
        }
    }
}

/// Where a flow's start falls among the other events of its instant at the host that starts
/// it (events at one instant run in the order they were scheduled at each node). A flow that
/// starts as a frame of another flow ends on the same host's link, for one, finds the link
/// free with [`FlowStartOrder::First`] and sends at once, and finds it taken by the other
/// flow's next frame with [`FlowStartOrder::AfterQueued`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum FlowStartOrder {
    /// Before every other event of its instant at its host: flow starts are keyed as if the
    /// host had scheduled them all at set-up.
    #[default]
    First,
    /// After the events already queued for its instant at its host, as the reference ns-3
    /// simulator starts a flow: its flow input runs at the start time and creates the queue
    /// pair through events of zero delay, which run after those already queued for that
    /// nanosecond (a transmission that ends then among them). Costs one event per flow.
    AfterQueued,
}

impl FlowStartOrder {
    /// Every order.
    pub const ALL: [FlowStartOrder; 2] = [FlowStartOrder::First, FlowStartOrder::AfterQueued];

    /// The scenario name (`first`, `after-queued`).
    pub fn name(self) -> &'static str {
        match self {
            FlowStartOrder::First => "first",
            FlowStartOrder::AfterQueued => "after-queued",
        }
    }
}

/// How links compute a frame's serialization time.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Serialization {
    /// Exact: `bytes * 8 / rate`, rounded up to the next picosecond.
    #[default]
    Exact,
    /// As the reference ns-3 simulator: the time in seconds as an IEEE double, truncated to
    /// whole nanoseconds by ns-3's 64.64 conversion (spec §0; often 1 ns short of an integer
    /// number of ns). Frame serialization, the RoCE NIC's pacing gap (`nextAvail`, and
    /// HPCC's re-timing of it on a rate change) and the ideal FCT follow it, as the
    /// reference computes all three with `CalculateBytesTxTime`; TCP pacing (not in the
    /// reference) stays exact.
    Ns3,
}

impl Serialization {
    /// Every mode.
    pub const ALL: [Serialization; 2] = [Serialization::Exact, Serialization::Ns3];

    /// The scenario name (`exact`, `ns3`).
    pub fn name(self) -> &'static str {
        match self {
            Serialization::Exact => "exact",
            Serialization::Ns3 => "ns3",
        }
    }

    /// The mode with scenario name `name`.
    pub fn from_name(name: &str) -> Option<Serialization> {
        Serialization::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The serialization time of `bytes` at `rate` in this mode.
    #[inline]
    pub fn tx_time(self, rate: BitsPerSec, bytes: u64) -> Duration {
        match self {
            Serialization::Exact => rate.tx_time(bytes),
            Serialization::Ns3 => rate.tx_time_ns3(bytes),
        }
    }
}

/// Everything about a run except the network, the flows and the CC scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Switch parameters.
    pub switch: SwitchConfig,
    /// NIC parameters.
    pub nic: NicConfig,
    /// The simulation stops at this time; unfinished flows are reported as such.
    pub stop_time: Time,
    /// Master seed: ECMP hashing, ECN marking and loss draws derive their streams from it.
    pub seed: u64,
    /// The TCP flow groups of the run: each a transport configuration and a congestion
    /// controller. Flows choose one in [`SimConfig::flow_transport`].
    pub tcp_groups: Vec<TcpGroup>,
    /// The transport of each flow, indexed by flow id; empty means every flow is a RoCE queue
    /// pair driven by the run's congestion-control scheme.
    pub flow_transport: Vec<Transport>,
    /// How links compute serialization times.
    pub serialization: Serialization,
    /// Where a flow's start falls among the other events of its instant at its host.
    pub flow_start: FlowStartOrder,
    /// What the run records beside its results (PFC log, queue lengths).
    pub monitor: Monitor,
    /// Applications that create traffic as the run goes (RPC clients and servers on
    /// persistent connections), beside the listed flows.
    pub apps: crate::apps::Apps,
    /// Link failures and repairs during the run (none by default).
    pub faults: Faults,
}

/// Optional recordings of a run. None changes the simulation itself.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Monitor {
    /// Record every PFC frame switches send (`Simulation::pfc_log`).
    pub pfc_log: bool,
    /// Keep a time-weighted backlog histogram per switch egress port
    /// (`Simulation::queue_stats`).
    pub queue_lengths: bool,
    /// Sample every switch egress port's backlog periodically, like the reference's
    /// `QLEN_MON_*` (`Simulation::queue_samples`).
    pub qlen_sampler: Option<crate::qmon::SamplerWindow>,
    /// Also keep a time-weighted backlog histogram per priority class of each monitored port
    /// (`Simulation::class_queue_stats`).
    pub per_class: bool,
    /// The switch egress ports the queue monitors above watch (each a switch and one of its
    /// ports; order and repeats do not matter); `None`: every switch egress port.
    pub ports: Option<Vec<(crate::ids::NodeId, crate::ids::PortNo)>>,
}

impl Monitor {
    /// Whether any per-port queue monitor is asked for.
    pub fn watches_queues(&self) -> bool {
        self.queue_lengths || self.per_class || self.qlen_sampler.is_some()
    }
}

/// Which transport carries a flow.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Transport {
    /// A RoCE queue pair (go-back-N, paced by the run's congestion-control scheme).
    #[default]
    Roce,
    /// A TCP connection of [`SimConfig::tcp_groups`]`[i]`.
    Tcp(u16),
}

/// A group of TCP flows: their transport parameters and congestion controller.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpGroup {
    /// A name for messages and summaries.
    pub name: String,
    /// Transport parameters.
    pub tcp: TcpConfig,
    /// Congestion controller.
    pub cca: CcaConfig,
    /// A probe-driven window law (HPCC over TCP): the group's senders send an INT probe once
    /// per RTT and set cwnd from its echo ([`crate::cc::ProbeLaw`]). Use with a controller
    /// that leaves the window to it ([`CcaConfig::External`]).
    pub probe: Option<crate::cc::ProbeControl>,
}

impl SimConfig {
    /// The transport of flow `flow`.
    pub fn transport_of(&self, flow: usize) -> Transport {
        self.flow_transport.get(flow).copied().unwrap_or_default()
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            switch: SwitchConfig::default(),
            nic: NicConfig::default(),
            stop_time: Time::from_ns(4_000_000_000),
            seed: 1,
            tcp_groups: Vec::new(),
            flow_transport: Vec::new(),
            serialization: Serialization::Exact,
            flow_start: FlowStartOrder::First,
            monitor: Monitor::default(),
            apps: crate::apps::Apps::default(),
            faults: Faults::default(),
        }
    }
}

/// One flow to simulate: `size` bytes from `src` to `dst` starting at `start`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FlowSpec {
    /// Identifier (its index in the flow list).
    pub id: FlowId,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes (> 0).
    pub size: u64,
    /// Start time.
    pub start: Time,
    /// Priority group (queue) 1..=7; reference generators use 3.
    pub pg: u8,
    /// Destination port (100 = background, 200 = incast by convention).
    pub dport: u16,
}
