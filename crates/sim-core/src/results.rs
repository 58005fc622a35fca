//! What a run produces: one record per flow and run-wide counters.

use crate::ids::{FlowId, NodeId, PortNo};
use crate::units::{Duration, Time};

/// The outcome of one flow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FlowResult {
    /// Flow id.
    pub id: FlowId,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes.
    pub size: u64,
    /// Start time.
    pub start: Time,
    /// Flow completion time: from `start` until the sender receives the ACK that covers the
    /// last byte. `None` if the flow had not completed when the run stopped.
    pub fct: Option<Duration>,
    /// The FCT of this flow alone in the network with base headers only (no INT/telemetry
    /// area), at line rate with no window, on its own ECMP path: the exact time the simulator
    /// itself would produce for it (see `paths::pipeline_time`).
    pub ideal_fct: Duration,
    /// The reference simulator's "standalone" FCT for the pair (spec §2.6):
    /// `pair_rtt + wire_bytes * 8 / bottleneck`, for comparisons with reference outputs.
    pub ref_ideal_fct: Duration,
    /// When the sender gave up, after exhausting its retransmission timeouts
    /// ([`crate::config::RoceRto`]); `None` for a flow that completed or was still going when
    /// the run stopped.
    pub gave_up: Option<Time>,
}

impl FlowResult {
    /// `fct / ideal_fct`, if the flow completed.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct.map(|f| f.as_ps() as f64 / self.ideal_fct.as_ps() as f64)
    }
}

/// One data packet's passage through one switch, recorded for the flows selected with
/// [`Simulation::trace_hop_latency`](crate::Simulation::trace_hop_latency).
///
/// The hop latency is the time from the packet's last bit arriving at the switch to its last
/// bit leaving the egress port: queueing (behind other frames and PFC pauses) plus the
/// serialization of the packet itself. Propagation on the links is not included.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HopSample {
    /// The flow.
    pub flow: FlowId,
    /// The packet's first payload byte (a retransmission repeats it).
    pub seq: u64,
    /// When the source host started transmitting this copy of the packet: tells a
    /// retransmission's passage from the original's.
    pub origin: Time,
    /// The switch.
    pub node: NodeId,
    /// When the switch started transmitting the packet.
    pub sent: Time,
    /// Queueing plus serialization at this switch.
    pub latency: Duration,
}

/// A PFC frame a switch sent (`Simulation::pfc_log`): the switch pauses (or resumes) priority
/// `priority` of the link from `peer` into its port `port`, because that ingress queue crossed
/// its threshold. One event per `pfc_pauses` / `pfc_resumes` count.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PfcEvent {
    /// When the frame was generated (queued at the head of the port's control class).
    pub time: Time,
    /// The switch that sent it.
    pub switch: NodeId,
    /// The port it was sent from (the congested ingress port).
    pub port: PortNo,
    /// The node it was sent to (the one that stops or resumes sending).
    pub peer: NodeId,
    /// The paused priority class.
    pub priority: u8,
    /// Pause (`true`) or resume.
    pub pause: bool,
}

/// Declares [`Counters`] from one list of fields, so that adding a counter updates the struct,
/// [`Counters::add`] and [`Counters::named`] together.
macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Run-wide counters.
        #[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
        pub struct Counters {
            $($(#[$doc])* pub $name: u64,)*
        }

        impl Counters {
            /// Adds another set of counters (e.g. another shard's) to this one.
            pub fn add(&mut self, o: &Counters) {
                $(self.$name += o.$name;)*
            }

            /// Every counter as `(name, value)`, in declaration order.
            pub fn named(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}

counters! {
    /// Events processed.
    events,
    /// Data packets transmitted by host NICs (first transmissions and retransmissions).
    data_packets_sent,
    /// Data payload bytes transmitted by host NICs.
    data_bytes_sent,
    /// Data payload bytes received by destination hosts (duplicates included).
    data_bytes_delivered,
    /// Data payload bytes dropped anywhere (MMU, no route, link loss).
    data_bytes_dropped,
    /// Payload bytes retransmitted after a NACK (go-back-N).
    data_bytes_retransmitted,
    /// ACKs sent by receivers.
    acks_sent,
    /// NACKs sent by receivers.
    nacks_sent,
    /// Packets of any kind dropped by a switch MMU (buffer and headroom full).
    mmu_drops,
    /// Packets dropped for lack of a route.
    no_route_drops,
    /// Frames lost to the per-link loss model.
    link_losses,
    /// PFC pause frames sent.
    pfc_pauses,
    /// PFC resume frames sent.
    pfc_resumes,
    /// Packets CE-marked by switches.
    ecn_marks,
    /// Frames of any kind put on any link.
    frames_transmitted,
    // ----- extended counters (see `Counters::BASE`) -----
    /// Packets a queue discipline dropped because a limit (bytes, packets, memory) was reached.
    qdisc_overflow_drops,
    /// Packets an AQM dropped as its congestion signal (CoDel, RED or PI² on Not-ECT traffic).
    aqm_drops,
    /// TCP segments retransmitted (fast retransmit, recovery, RTO and TLP retransmissions).
    tcp_retransmits,
    /// TCP loss recoveries entered (fast retransmit).
    tcp_recoveries,
    /// Retransmission timeouts that expired.
    timeouts,
    /// TCP tail-loss probes sent.
    tlp_probes,
    /// TCP pure ACKs sent by receivers.
    tcp_acks_sent,
    /// INT probes sent by probe-driven TCP senders (HPCC over TCP).
    tcp_probes,
    /// Queries submitted by applications.
    queries_submitted,
    /// Queries whose response fully arrived.
    queries_completed,
    /// Frames lost to link failures: on the wire of a link that failed, queued at a switch
    /// port whose link failed, or routed to such a port before routing converged.
    drops_link_down,
    /// RoCE flows that gave up after exhausting their retransmission timeouts.
    flows_failed,
}

impl Counters {
    /// How many counters, from the first, every run reports; the ones after them (queue
    /// disciplines, TCP) are reported by front ends when they are non-zero or the run uses
    /// what they count, so that the output of RoCE-only runs keeps its historical form.
    pub const BASE: usize = 15;
}

/// Summary of a finished [`crate::Simulation::run`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RunSummary {
    /// Simulated time when the run ended.
    pub end_time: Time,
    /// Events processed.
    pub events: u64,
    /// Flows that completed.
    pub flows_done: usize,
    /// Flows that had not completed.
    pub flows_unfinished: usize,
}
