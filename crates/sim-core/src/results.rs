//! What a run produces: one record per flow and run-wide counters.

use crate::ids::{FlowId, NodeId};
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
}

impl FlowResult {
    /// `fct / ideal_fct`, if the flow completed.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct.map(|f| f.as_ps() as f64 / self.ideal_fct.as_ps() as f64)
    }
}

/// Run-wide counters.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Counters {
    /// Events processed.
    pub events: u64,
    /// Data packets transmitted by host NICs (first transmissions and retransmissions).
    pub data_packets_sent: u64,
    /// Data payload bytes transmitted by host NICs.
    pub data_bytes_sent: u64,
    /// Data payload bytes received by destination hosts (duplicates included).
    pub data_bytes_delivered: u64,
    /// Data payload bytes dropped anywhere (MMU, no route, link loss).
    pub data_bytes_dropped: u64,
    /// Payload bytes retransmitted after a NACK (go-back-N).
    pub data_bytes_retransmitted: u64,
    /// ACKs sent by receivers.
    pub acks_sent: u64,
    /// NACKs sent by receivers.
    pub nacks_sent: u64,
    /// Packets of any kind dropped by a switch MMU (buffer and headroom full).
    pub mmu_drops: u64,
    /// Packets dropped for lack of a route.
    pub no_route_drops: u64,
    /// Frames lost to the per-link loss model.
    pub link_losses: u64,
    /// PFC pause frames sent.
    pub pfc_pauses: u64,
    /// PFC resume frames sent.
    pub pfc_resumes: u64,
    /// Packets CE-marked by switches.
    pub ecn_marks: u64,
    /// Frames of any kind put on any link.
    pub frames_transmitted: u64,
}

impl Counters {
    /// Adds another set of counters (e.g. another shard's) to this one.
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            events,
            data_packets_sent,
            data_bytes_sent,
            data_bytes_delivered,
            data_bytes_dropped,
            data_bytes_retransmitted,
            acks_sent,
            nacks_sent,
            mmu_drops,
            no_route_drops,
            link_losses,
            pfc_pauses,
            pfc_resumes,
            ecn_marks,
            frames_transmitted,
        } = *o;
        self.events += events;
        self.data_packets_sent += data_packets_sent;
        self.data_bytes_sent += data_bytes_sent;
        self.data_bytes_delivered += data_bytes_delivered;
        self.data_bytes_dropped += data_bytes_dropped;
        self.data_bytes_retransmitted += data_bytes_retransmitted;
        self.acks_sent += acks_sent;
        self.nacks_sent += nacks_sent;
        self.mmu_drops += mmu_drops;
        self.no_route_drops += no_route_drops;
        self.link_losses += link_losses;
        self.pfc_pauses += pfc_pauses;
        self.pfc_resumes += pfc_resumes;
        self.ecn_marks += ecn_marks;
        self.frames_transmitted += frames_transmitted;
    }
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
