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

/// How a run with several shards went, window by window ([`crate::Simulation::parallel_stats`]).
/// Everything but `wait` is a count fixed by the scenario and the partition: it does not depend
/// on the threads' timing, so it can be measured on a small machine for a large thread count
/// (`dcsim run --shards 16 --threads 1`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParallelStats {
    /// Windows run (each at most one lookahead of simulated time).
    pub windows: u64,
    /// Events each shard processed.
    pub shard_events: Vec<u64>,
    /// The sum over windows of the largest shard's events in that window: the events on the
    /// critical path with one thread per shard. `events / critical_shard` bounds the speed-up
    /// of one thread per shard over one thread, costs per event and barriers aside.
    pub critical_shard: u64,
    /// The same with the run's threads (shard `i` on thread `i % threads`).
    pub critical_thread: u64,
    /// Packets handed from one shard to another.
    pub crossings: u64,
    /// Wall-clock time each thread waited at the window barriers (empty for a run on one
    /// thread).
    pub wait: Vec<std::time::Duration>,
}

impl ParallelStats {
    /// Events in all shards.
    pub fn events(&self) -> u64 {
        self.shard_events.iter().sum()
    }

    /// The speed-up bound of one thread per shard ([`ParallelStats::critical_shard`]), or 1
    /// when nothing ran.
    pub fn shard_bound(&self) -> f64 {
        if self.critical_shard == 0 {
            1.0
        } else {
            self.events() as f64 / self.critical_shard as f64
        }
    }

    /// Adds the counts of `other` (not its waits).
    pub(crate) fn merge(&mut self, other: &ParallelStats) {
        if self.shard_events.len() < other.shard_events.len() {
            self.shard_events.resize(other.shard_events.len(), 0);
        }
        for (a, b) in self.shard_events.iter_mut().zip(&other.shard_events) {
            *a += b;
        }
        self.windows += other.windows;
        self.critical_shard += other.critical_shard;
        self.critical_thread += other.critical_thread;
        self.crossings += other.crossings;
    }

    /// Adds the per-shard events of one window (`events[s]`, shard `s` on thread
    /// `s % threads`).
    pub(crate) fn window(&mut self, events: &[u64], threads: usize) {
        if self.shard_events.len() < events.len() {
            self.shard_events.resize(events.len(), 0);
        }
        let threads = threads.clamp(1, events.len().max(1));
        for (total, &e) in self.shard_events.iter_mut().zip(events) {
            *total += e;
        }
        let busiest_thread = (0..threads)
            .map(|t| events.iter().skip(t).step_by(threads).sum::<u64>())
            .max()
            .unwrap_or(0);
        self.windows += 1;
        self.critical_shard += events.iter().max().copied().unwrap_or(0);
        self.critical_thread += busiest_thread;
    }
}

#[cfg(test)]
mod parallel_stats_tests {
    use super::ParallelStats;

    /// Two windows of three shards on two threads (shards 0 and 2 on thread 0): the critical
    /// paths add each window's busiest shard and busiest thread.
    #[test]
    fn windows_add_their_busiest_shard_and_thread() {
        let mut s = ParallelStats::default();
        s.window(&[5, 1, 2], 2);
        s.window(&[0, 4, 3], 2);
        assert_eq!(s.windows, 2);
        assert_eq!(s.shard_events, vec![5, 5, 5]);
        assert_eq!(s.events(), 15);
        assert_eq!(s.critical_shard, 5 + 4);
        assert_eq!(s.critical_thread, (5 + 2) + 4);
        assert!((s.shard_bound() - 15.0 / 9.0).abs() < 1e-12);
        s.crossings = 7;
        let mut t = ParallelStats::default();
        t.merge(&s);
        t.merge(&s);
        assert_eq!((t.windows, t.critical_shard, t.critical_thread, t.crossings), (4, 18, 22, 14));
        assert_eq!(t.shard_events, vec![10, 10, 10]);
        assert_eq!(ParallelStats::default().shard_bound(), 1.0);
    }
}
