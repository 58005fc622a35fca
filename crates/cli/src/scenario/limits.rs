//! The limits that keep every computation on a scenario's values representable and every
//! command bounded in time and memory (documented in `docs/scenario.md`, "Limits").
//!
//! * Every time a scenario writes is at most [`TIME_LIMIT`] (2^62 ps, about 53 days; enforced
//!   by `units::parse_duration` and the topology- and flow-file readers).
//! * The longest path's base round trip, bounded from above by `Bounds::round_trip_ps`, is
//!   at most [`TIME_LIMIT`].
//! * Every flow's (and every query's) ideal completion time, bounded from above by
//!   `Bounds::transfer_ps`, is at most [`TIME_LIMIT`], so that its start plus its FCT fits.
//! * The PFC headroom and reserve of every switch fit in 64 bits of bytes.
//! * With `serialization = "ns3"` a full-size RoCE data frame takes at least 1 ns on every
//!   host link, so that a NIC's frames advance its clock.
//! * A topology has at most [`MAX_TOPOLOGY_SIZE`] nodes and links, and routing it at most
//!   `RoutingTable::MAX_WORK` steps (destination switches × (nodes + 2 × links)), checked
//!   before routing.
//! * A scenario has at most `[flows] max_flows` flows ([`DEFAULT_MAX_FLOWS`] unless raised);
//!   generators check their expected count before generating and stop at the limit, and
//!   check that the machine can allocate [`BYTES_PER_FLOW`] for each (`memory_refused`).
//!
//! The bounds are deliberately simple and conservative: they use the extremes over every
//! routed path (`dcsim_core::paths::path_extremes`), each on its own, and an upper bound on
//! every frame's size. A scenario they reject has times of tens of days.

use std::ops::Range;

use dcsim_core::config::{Serialization, SimConfig, Transport};
use dcsim_core::network::{Network, RoutingTable};
use dcsim_core::paths::path_extremes;
use dcsim_core::units::{BitsPerSec, Duration, TIME_LIMIT, TIME_LIMIT_TEXT};

use super::Source;
use crate::error::CliError;
use crate::units::HumanDuration;

/// The default of `[flows] max_flows`: 50 million flows (validation peaks at about 160 bytes
/// per generated flow, a simulated one up to a kilobyte, so this is about 8 GB to generate
/// and tens of GB to run).
pub const DEFAULT_MAX_FLOWS: u64 = 50_000_000;

/// The most nodes plus links a topology may have: 2^22 (about 4.2 million; a k = 48 fat tree
/// has 113 472), so that building and validating the network stays within seconds and a few
/// hundred MiB. Routing is bounded separately, by `RoutingTable::MAX_WORK`.
pub const MAX_TOPOLOGY_SIZE: u64 = 1 << 22;

/// Bytes added to the largest payload a packet carries to bound its frame on the wire
/// (Ethernet, IP, transport and telemetry headers are all well below this).
pub const FRAME_MARGIN: u64 = 1024;

/// Upper bounds on the paths and frames of a network, for [`Bounds::round_trip_ps`] and
/// [`Bounds::transfer_ps`].
pub(super) struct Bounds {
    /// Longest one-way propagation delay of a routed path, ps.
    delay: u128,
    /// Most links on a routed path.
    hops: u128,
    /// The largest frame, bytes: the largest payload (MTU, a TCP group's MSS or request) plus
    /// [`FRAME_MARGIN`] (or a TCP group's own header bytes, if larger).
    frame: u64,
    /// The slowest link of a routed path.
    slowest: BitsPerSec,
    /// Serialization of `frame` at `slowest`, ps.
    frame_ps: u128,
}

impl Bounds {
    /// The bounds of `net` with the NIC and TCP-group settings of `cfg`.
    pub(super) fn new(net: &Network, routes: &RoutingTable, cfg: &SimConfig) -> Bounds {
        let e = path_extremes(net, routes);
        let mut payload = u64::from(cfg.nic.mtu);
        let mut header = FRAME_MARGIN;
        for g in &cfg.tcp_groups {
            let t = &g.tcp;
            payload = payload
                .max(u64::from(t.mss))
                .max(u64::from(t.request_bytes))
                .max(u64::from(t.syn_frame_bytes))
                .max(u64::from(t.min_frame_bytes));
            header = header.max(u64::from(t.header_bytes));
        }
        let frame = payload + header;
        let frame_ps = u128::from(e.slowest.tx_time(frame).as_ps());
        Bounds {
            delay: u128::from(e.delay.as_ps()),
            hops: e.hops as u128,
            frame,
            slowest: e.slowest,
            frame_ps,
        }
    }

    /// The slowest link of a routed path.
    pub(super) fn slowest(&self) -> BitsPerSec {
        self.slowest
    }

    /// An upper bound on any pair's base round trip: `2 × delay + 2 × hops × frame time`.
    pub(super) fn round_trip_ps(&self) -> u128 {
        2 * self.delay + 2 * self.hops * self.frame_ps
    }

    /// An upper bound on the ideal completion time of `size` bytes sent in `seg`-byte
    /// segments, alone, on any path, with a handshake and an answer or ACK coming back:
    /// `6 × delay + (packets + 6 × hops) × frame time`.
    pub(super) fn transfer_ps(&self, size: u64, seg: u64) -> u128 {
        let packets = u128::from(size.div_ceil(seg.max(1)));
        6 * self.delay + (packets + 6 * self.hops) * self.frame_ps
    }

    /// The largest flow, in bytes, whose [`Bounds::transfer_ps`] with `seg`-byte segments is
    /// within [`TIME_LIMIT`].
    pub(super) fn max_flow_bytes(&self, seg: u64) -> u64 {
        let limit = u128::from(TIME_LIMIT.as_ps());
        let fixed = 6 * self.delay + 6 * self.hops * self.frame_ps;
        let Some(budget) = limit.checked_sub(fixed) else { return 0 };
        let packets = budget / self.frame_ps.max(1);
        u64::try_from(packets * u128::from(seg.max(1))).unwrap_or(u64::MAX)
    }

    /// Why a flow of `size` bytes is too large: the message of the errors that reject it.
    pub(super) fn flow_message(&self, size: u64, seg: u64) -> String {
        format!(
            "a flow of {size} B could take longer than the time limit of {TIME_LIMIT_TEXT} to \
             complete: at most {} B fit in {seg}-byte segments on this network (whose slowest \
             path link is {}, longest path {} links and {} one way)",
            self.max_flow_bytes(seg),
            self.slowest,
            self.hops,
            HumanDuration(Duration::from_ps(u64::try_from(self.delay).unwrap_or(u64::MAX))),
        )
    }
}

/// Checks [`Bounds::round_trip_ps`] against [`TIME_LIMIT`]. `delay_at` is where the topology's
/// delays are written (a `delay` field, or the topology file), `rate_at` where its slowest
/// rate is: the error points at the one that dominates.
pub(super) fn check_round_trip(
    src: &Source,
    b: &Bounds,
    delay_at: (&str, Option<Range<usize>>),
    rate_at: (&str, Option<Range<usize>>),
) -> Result<(), CliError> {
    let rtt = b.round_trip_ps();
    if rtt <= u128::from(TIME_LIMIT.as_ps()) {
        return Ok(());
    }
    let (field, span) = if 2 * b.delay >= 2 * b.hops * b.frame_ps { delay_at } else { rate_at };
    let secs = |ps: u128| ps as f64 / 1e12;
    Err(src.error_at(
        span,
        field,
        format!(
            "the longest path's base round trip would be about {:.6e} s (2 × {:.6e} s of \
             propagation over up to {} links, plus a {}-byte frame per link at {}), beyond the \
             time limit of {TIME_LIMIT_TEXT}",
            secs(rtt),
            secs(b.delay),
            b.hops,
            b.frame,
            b.slowest,
        ),
    ))
}

/// Checks that every switch's PFC headroom (`headroom_bdp_multiple` × each port's one-way BDP,
/// when PFC protects some class) and reserve (`reserve` × its ports) fit in 64 bits of bytes.
pub(super) fn check_headroom(src: &Source, net: &Network, cfg: &SimConfig) -> Result<(), CliError> {
    let sw = &cfg.switch;
    // As the MMU: headroom only when PFC protects some class.
    let lossless = sw.pfc_enabled && sw.lossy_classes & 0xfe != 0xfe;
    let max = u128::from(u64::MAX);
    for n in (0..net.node_count()).map(dcsim_core::ids::NodeId::from_idx) {
        if net.is_host(n) {
            continue;
        }
        let ports = net.ports(n);
        let headroom: u128 = ports
            .iter()
            .map(|p| {
                let bdp =
                    u128::from(p.rate.get()) * u128::from(p.delay.as_ps()) / 8_000_000_000_000;
                bdp * u128::from(sw.headroom_bdp_multiple)
            })
            .sum();
        let reserve = u128::from(sw.reserve.get()) * ports.len() as u128;
        let headroom = if lossless { headroom } else { 0 };
        let (key, what) = if headroom > max {
            ("headroom_bdp_multiple", format!("{headroom} bytes of PFC headroom"))
        } else if reserve + headroom > max {
            ("reserve", format!("{} bytes of reserve and headroom", reserve + headroom))
        } else {
            continue;
        };
        let span = src.span_of(&["switch", key]).or_else(|| src.span_of(&["switch"]));
        return Err(src.error_at(
            span,
            format!("switch.{key}"),
            format!(
                "switch {n} would set aside {what} ({} ports), more than 64 bits of bytes can \
                 count",
                ports.len()
            ),
        ));
    }
    Ok(())
}

/// Checks that a full-size RoCE data frame (`nic.mtu` plus `data_header` bytes) takes at least
/// 1 ns at the fastest host link when `serialization = "ns3"`, which truncates to whole
/// nanoseconds. At 0 ns a NIC's frames, and its pacing gap, take no time: it sends its flows
/// without end at one instant, and the frames fill the switch buffers and memory (found by the
/// input property test: a 1-byte MTU at 400 Gbps, 49-byte frames of 0.98 ns, peaked at 7 GiB
/// in a 1 µs run). Exact serialization rounds up to the picosecond and never gives 0.
pub(super) fn check_ns3_frames(
    src: &Source,
    net: &Network,
    cfg: &SimConfig,
    data_header: u64,
    roce_used: bool,
) -> Result<(), CliError> {
    if cfg.serialization != Serialization::Ns3 || !roce_used {
        return Ok(());
    }
    let fastest = net.hosts().iter().filter_map(|&h| net.ports(h).first().map(|p| p.rate)).max();
    let Some(rate) = fastest else { return Ok(()) };
    let takes = |payload: u64| cfg.serialization.tx_time(rate, payload + data_header);
    let mtu = u64::from(cfg.nic.mtu);
    if takes(mtu) > Duration::ZERO {
        return Ok(());
    }
    // The smallest payload whose frame takes 1 ns: about rate / 8 Gbps bytes (rates are at
    // most 100 Tbps, so at most ~12 500), a few more where the double falls short.
    let mut need = rate.get().div_ceil(8_000_000_000).saturating_sub(data_header);
    while takes(need) == Duration::ZERO {
        need += 1;
    }
    let (span, field) = match src.span_of(&["nic", "mtu"]) {
        Some(s) => (Some(s), "nic.mtu"),
        None => (src.span_of(&["simulation", "serialization"]), "simulation.serialization"),
    };
    Err(src.error_at(
        span,
        field,
        format!(
            "with serialization = \"ns3\" (whole nanoseconds, truncated) a full data frame of \
             {} bytes takes 0 ns at {rate}, the fastest host link: a NIC would send without end \
             at one instant; make nic.mtu at least {need}, or use serialization = \"exact\"",
            mtu + data_header
        ),
    ))
}

/// Checks that `topo` has at most [`MAX_TOPOLOGY_SIZE`] nodes and links; the error points at
/// `at` (the topology's kind or file).
pub(super) fn check_topology_size(
    src: &Source,
    topo: &dcsim_topology::Topology,
    at: (&str, Option<Range<usize>>),
) -> Result<(), CliError> {
    let (nodes, links) = (topo.node_count() as u64, topo.link_count() as u64);
    if nodes + links <= MAX_TOPOLOGY_SIZE {
        return Ok(());
    }
    Err(src.error_at(
        at.1,
        at.0,
        format!(
            "the topology has {nodes} nodes and {links} links, more than the limit of \
             {MAX_TOPOLOGY_SIZE} in all; simulate a smaller network"
        ),
    ))
}

/// The segment size of flows of `transport` (the MTU for RoCE, the group's MSS for TCP).
pub(super) fn segment(cfg: &SimConfig, transport: Transport) -> u64 {
    match transport {
        Transport::Roce => u64::from(cfg.nic.mtu),
        Transport::Tcp(g) => cfg.tcp_groups.get(g as usize).map_or(1, |g| u64::from(g.tcp.mss)),
    }
}

/// The memory a flow may take, generated, set up and simulated, bytes: an upper bound on what
/// docs/performance.md measures (about 850 bytes per HPCC flow on one shard, about 12 more for
/// each further shard), for `memory_refused`.
pub const BYTES_PER_FLOW: u64 = 1024;

/// 2^47 bytes (128 TiB): the user address space of x86-64 Linux with four-level paging, more
/// than any machine dcsim runs on can hold.
pub const MAX_ADDRESS_SPACE: u64 = 1 << 47;

/// Whether the memory of `flows` flows ([`BYTES_PER_FLOW`] each) is refused by the allocator
/// now: the bytes asked for, if it is. The probe reserves that much address space and releases
/// it at once, without touching it, so it costs no memory. Linux's default overcommit refuses
/// a reservation larger than its memory and swap, so a run far beyond the machine fails here
/// with a located error instead of aborting on an allocation later. A run that fits this
/// bound but not the memory other processes leave it can still run out later.
///
/// Beyond [`MAX_ADDRESS_SPACE`] it refuses without asking, whatever the overcommit policy.
pub(super) fn memory_refused(flows: f64) -> Option<u64> {
    memory_refused_bytes(flows * BYTES_PER_FLOW as f64)
}

/// [`memory_refused`] for `bytes` bytes.
pub(crate) fn memory_refused_bytes(bytes: f64) -> Option<u64> {
    if bytes.is_nan() || bytes > MAX_ADDRESS_SPACE as f64 {
        return Some(bytes.min(u64::MAX as f64) as u64);
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes as usize).err().map(|_| bytes as u64)
}

/// The message when [`memory_refused`] refuses `bytes` for `what` (a description of the flows).
pub(super) fn too_much_memory(what: &str, bytes: u64) -> String {
    format!(
        "{what} would take about {:.1} GiB to simulate (up to {BYTES_PER_FLOW} bytes per flow), \
         more memory than this machine can allocate; generate fewer flows",
        bytes as f64 / (1u64 << 30) as f64
    )
}

/// `[flows] max_flows` exceeded: the message, naming the limit and how to raise it.
pub(super) fn too_many_flows(what: &str, limit: u64) -> String {
    format!(
        "{what}, more than the limit of {limit} flows (each flow takes memory: about 40 bytes \
         to generate, up to a kilobyte to simulate); generate fewer, or raise the limit with \
         `[flows] max_flows`"
    )
}

#[cfg(test)]
mod tests {
    use super::{
        memory_refused, memory_refused_bytes, too_much_memory, BYTES_PER_FLOW, MAX_ADDRESS_SPACE,
    };

    #[test]
    fn memory_beyond_the_address_space_is_refused_and_a_small_run_is_not() {
        assert_eq!(memory_refused(1000.0), None);
        assert_eq!(memory_refused(0.0), None);
        let beyond = (MAX_ADDRESS_SPACE / BYTES_PER_FLOW) as f64 * 2.0;
        assert_eq!(memory_refused(beyond), Some(2 * MAX_ADDRESS_SPACE));
        assert_eq!(memory_refused(f64::INFINITY), Some(u64::MAX));
        assert_eq!(memory_refused(f64::NAN), Some(u64::MAX));
        assert_eq!(memory_refused_bytes(1e6), None);
        assert_eq!(
            memory_refused_bytes(4.0 * MAX_ADDRESS_SPACE as f64),
            Some(4 * MAX_ADDRESS_SPACE)
        );
        assert_eq!(
            too_much_memory("3 flows", 3 << 30),
            "3 flows would take about 3.0 GiB to simulate (up to 1024 bytes per flow), more \
             memory than this machine can allocate; generate fewer flows"
        );
    }
}
