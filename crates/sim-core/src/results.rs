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
    /// Data packets transmitted by host NICs (first transmissions and retransmissions; with a
    /// TCP handshake, the client's request too).
    data_packets_sent,
    /// Data payload bytes transmitted by host NICs (the TCP handshake's requests included).
    data_bytes_sent,
    /// Data payload bytes received by destination hosts (duplicates included; the TCP
    /// handshake's requests where servers receive them).
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
    /// TCP retransmission timeouts F-RTO found spurious (Linux `TCPSpuriousRTOs`).
    tcp_spurious_rtos,
    /// TCP reductions undone as spurious: timeouts (by F-RTO or a timestamp echo older than the
    /// first retransmission) and fast recoveries (by the echo). Linux `TCPLossUndo` plus
    /// `TCPFullUndo`.
    tcp_undos,
    /// TCP flows that took a connection another flow had dialed (connection reuse,
    /// `reuse = "go-http"`): their request went without a handshake of their own.
    tcp_reused_connections,
    /// TCP windows restarted because the application wrote after the connection had been idle
    /// for longer than its RTO (`slow_start_after_idle`, Linux `tcp_cwnd_restart`).
    tcp_idle_restarts,
    /// Open-loop query arrivals refused because their client already held
    /// [`crate::apps::MAX_PENDING_QUERIES`] unanswered queries: a load the network cannot
    /// carry.
    queries_refused,
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
/// The windows, events, critical paths and crossings are counts fixed by the scenario, the
/// partition and the steps the run was taken in: they do not depend on the threads' timing,
/// so they can be measured on a small machine for a large thread count (`dcsim run --shards
/// 16 --threads 1`). `wait`, `redeals`, `moves`, `pinned` and `trace` depend on the machine.
#[derive(Clone, Debug, Default)]
pub struct ParallelStats {
    /// Windows run (each at most one lookahead of simulated time).
    pub windows: u64,
    /// Events each shard processed.
    pub shard_events: Vec<u64>,
    /// The sum over windows of the largest shard's events in that window: the events on the
    /// critical path with one thread per shard. `events / critical_shard` bounds the speed-up
    /// of one thread per shard over one thread, costs per event and barriers aside.
    pub critical_shard: u64,
    /// The same with the run's threads, each running only its own shards (shard `i` on thread
    /// `i % threads`, as when there are as many shards as threads).
    pub critical_thread: u64,
    /// For each thread count `t` of [`SHARED_THREADS`] below the number of shards: the sum over
    /// windows of the busiest thread's events when each window's shards are shared out among
    /// `t` threads as they come free, the shards with the most events in the previous window
    /// first (list scheduling). `events / critical` bounds the speed-up of `t` threads that
    /// claim shards window by window, as the engine's threads do when there are more shards
    /// than threads.
    pub critical_shared: Vec<(usize, u64)>,
    /// Packets handed from one shard to another.
    pub crossings: u64,
    /// Times the shards were dealt out to new owners by their measured time
    /// ([`crate::Simulation::set_rebalance`]); 0 without rebalancing.
    pub redeals: u64,
    /// Shards that changed owner in those deals.
    pub moves: u64,
    /// The CPUs the threads were bound to, thread `t` to `pinned[t]`
    /// ([`crate::Simulation::set_pin_threads`]; the last run's); empty if they were not, or
    /// if the system refused any of them.
    pub pinned: Vec<usize>,
    /// The previous window's events by shard (the order in which shards are shared out).
    prev: Vec<u64>,
    /// Scratch: shard indices in the order they are shared out.
    order: Vec<usize>,
    /// Wall-clock time each thread waited at the window barriers (empty for a run on one
    /// thread).
    pub wait: Vec<std::time::Duration>,
    /// Every shard's window and every thread's barrier wait, when asked for
    /// ([`crate::Simulation::trace_windows`]); `None` otherwise.
    pub trace: Option<WindowTrace>,
    /// When the system refused to start a thread (too many for its limits): the threads asked
    /// for, those the run then took (every one that had started, and the calling thread), and
    /// the system's error. The results do not depend on the thread count; the last run's.
    pub refused: Option<(usize, usize, String)>,
}

/// The windows of a run with several shards, one record per shard and window and one per
/// thread and barrier ([`crate::Simulation::trace_windows`]). Times are wall-clock
/// nanoseconds since the first window of the run, so unlike the rest of [`ParallelStats`]
/// they differ from run to run; `scripts/window_trace.py` analyses them.
#[derive(Clone, Debug, Default)]
pub struct WindowTrace {
    /// One record per shard and window, in the order the threads ran them (thread by thread).
    pub shards: Vec<ShardWindow>,
    /// One record per thread and window (none in a run on one thread).
    pub barriers: Vec<BarrierWait>,
    /// The wall-clock origin of the records' times (set by the first window).
    pub(crate) origin: Option<std::time::Instant>,
}

/// One shard's window ([`WindowTrace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardWindow {
    /// The window's end: events before it were processed in this window.
    pub end: Time,
    /// The shard.
    pub shard: u32,
    /// The thread that ran it (0 in a run on one thread).
    pub thread: u32,
    /// When the thread took the shard (ns since the run's first window).
    pub start_ns: u64,
    /// How long the shard's window took: taking in the crossings, the events, handing over
    /// what it sent (ns).
    pub took_ns: u64,
    /// The events the shard processed in the window.
    pub events: u64,
    /// The packets other shards had sent it, taken in at the window's start.
    pub crossings_in: u64,
}

/// One thread's wait at the barrier that ends a window ([`WindowTrace`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWait {
    /// The window's end.
    pub end: Time,
    /// The thread.
    pub thread: u32,
    /// When it reached the barrier (ns since the run's first window).
    pub arrived_ns: u64,
    /// When it left it.
    pub left_ns: u64,
}

impl WindowTrace {
    /// The origin of the records' times, set now if no window has been recorded.
    pub(crate) fn origin(&mut self) -> std::time::Instant {
        *self.origin.get_or_insert_with(std::time::Instant::now)
    }

    /// An empty trace whose times count from `origin` (one thread's part of a run's trace).
    pub(crate) fn from(origin: std::time::Instant) -> WindowTrace {
        WindowTrace { origin: Some(origin), ..WindowTrace::default() }
    }

    /// Records that `thread` ran `shard`'s window ending at `end` from `began` until now,
    /// processing `events` events after taking in `crossings_in` packets.
    pub(crate) fn shard_ran(
        &mut self,
        end: Time,
        shard: usize,
        thread: usize,
        began: std::time::Instant,
        events: u64,
        crossings_in: u64,
    ) {
        let start_ns = nanos(began.saturating_duration_since(self.origin()));
        self.shards.push(ShardWindow {
            end,
            shard: shard as u32,
            thread: thread as u32,
            start_ns,
            took_ns: nanos(began.elapsed()),
            events,
            crossings_in,
        });
    }

    /// Records that `thread` reached the barrier ending the window at `end` at `arrived` and
    /// left it `waited` later.
    pub(crate) fn barrier_passed(
        &mut self,
        end: Time,
        thread: usize,
        arrived: std::time::Instant,
        waited: std::time::Duration,
    ) {
        let arrived_ns = nanos(arrived.saturating_duration_since(self.origin()));
        self.barriers.push(BarrierWait {
            end,
            thread: thread as u32,
            arrived_ns,
            left_ns: arrived_ns.saturating_add(nanos(waited)),
        });
    }
}

/// A duration in nanoseconds (saturating at `u64::MAX`, 584 years).
fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Equal counts and waits (the scratch of [`ParallelStats::critical_shared`] aside).
impl PartialEq for ParallelStats {
    fn eq(&self, o: &Self) -> bool {
        self.windows == o.windows
            && self.shard_events == o.shard_events
            && self.critical_shard == o.critical_shard
            && self.critical_thread == o.critical_thread
            && self.critical_shared == o.critical_shared
            && self.crossings == o.crossings
            && self.wait == o.wait
    }
}

/// The thread counts for which [`ParallelStats::critical_shared`] is counted.
pub const SHARED_THREADS: [usize; 6] = [2, 4, 8, 16, 32, 64];

impl ParallelStats {
    /// The speed-up bound of `threads` threads claiming shards window by window
    /// ([`ParallelStats::critical_shared`]), if counted for that thread count.
    pub fn shared_bound(&self, threads: usize) -> Option<f64> {
        let &(_, c) = self.critical_shared.iter().find(|&&(t, _)| t == threads)?;
        Some(if c == 0 { 1.0 } else { self.events() as f64 / c as f64 })
    }

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

    /// The speed-up bound of the run's threads each running only its own shards
    /// ([`ParallelStats::critical_thread`]), or 1 when nothing ran.
    pub fn thread_bound(&self) -> f64 {
        if self.critical_thread == 0 {
            1.0
        } else {
            self.events() as f64 / self.critical_thread as f64
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
        for &(t, c) in &other.critical_shared {
            match self.critical_shared.iter_mut().find(|e| e.0 == t) {
                Some(e) => e.1 += c,
                None => self.critical_shared.push((t, c)),
            }
        }
        self.crossings += other.crossings;
        self.redeals += other.redeals;
        self.moves += other.moves;
        if let (Some(t), Some(o)) = (&mut self.trace, &other.trace) {
            t.shards.extend_from_slice(&o.shards);
            t.barriers.extend_from_slice(&o.barriers);
        }
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
        self.share_out(events);
    }

    /// Adds one window to [`ParallelStats::critical_shared`].
    fn share_out(&mut self, events: &[u64]) {
        let n = events.len();
        if self.prev.len() != n {
            self.prev = vec![0; n];
        }
        self.order.clear();
        self.order.extend(0..n);
        // Heaviest in the previous window first; ties by index (a fixed order).
        let prev = &self.prev;
        self.order.sort_by_key(|&s| (std::cmp::Reverse(prev[s]), s));
        let mut load = [0u64; 64];
        for t in SHARED_THREADS.into_iter().filter(|&t| t < n) {
            let load = &mut load[..t];
            load.fill(0);
            for &s in &self.order {
                let least = (0..t).min_by_key(|&i| load[i]).expect("t >= 2");
                load[least] += events[s];
            }
            let busiest = load.iter().max().copied().unwrap_or(0);
            match self.critical_shared.iter_mut().find(|e| e.0 == t) {
                Some(e) => e.1 += busiest,
                None => self.critical_shared.push((t, busiest)),
            }
        }
        self.prev.copy_from_slice(events);
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
        assert!((s.thread_bound() - 15.0 / 11.0).abs() < 1e-12);
        s.crossings = 7;
        let mut t = ParallelStats::default();
        t.merge(&s);
        t.merge(&s);
        assert_eq!((t.windows, t.critical_shard, t.critical_thread, t.crossings), (4, 18, 22, 14));
        assert_eq!(t.shard_events, vec![10, 10, 10]);
        assert_eq!(ParallelStats::default().shard_bound(), 1.0);
        assert_eq!(ParallelStats::default().thread_bound(), 1.0);
    }

    /// Shared out among two threads: the first window in index order (5 to one thread, then
    /// 1 and 2 to the other: busiest 5); the second heaviest-in-the-previous-window first
    /// (shard 0's 0 and shard 2's 3 to the first thread, shard 1's 4 to the second: busiest
    /// 4). No path is counted for as many threads as shards or more.
    #[test]
    fn shards_are_shared_out_heaviest_first_as_threads_come_free() {
        let mut s = ParallelStats::default();
        s.window(&[5, 1, 2], 1);
        assert_eq!(s.critical_shared, vec![(2, 5)]);
        s.window(&[0, 4, 3], 1);
        assert_eq!(s.critical_shared, vec![(2, 5 + 4)]);
        assert!((s.shared_bound(2).unwrap() - 15.0 / 9.0).abs() < 1e-12);
        assert_eq!(s.shared_bound(4), None);
        // Five shards: counted for 2 and 4 threads. The first window in index order over 2
        // threads: 1 | 4, then 2 (3 | 4), 3 (6 | 4), 1 (6 | 5). The second heaviest first:
        // 4 | 3, then 2 (4 | 5), 1 (5 | 5), 1 (6 | 5).
        let mut f = ParallelStats::default();
        f.window(&[1, 4, 2, 3, 1], 1);
        assert_eq!(f.critical_shared, vec![(2, 6), (4, 4)]);
        f.window(&[1, 4, 2, 3, 1], 1);
        assert_eq!(f.critical_shared, vec![(2, 6 + 6), (4, 4 + 4)]);
    }
}
