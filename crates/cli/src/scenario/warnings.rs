//! Warnings: scenarios that are valid but probably do not mean what they say. Each [`Warning`]
//! prints in the errors' format (`FILE:LINE:COL: field `x`: message` where the scenario writes
//! the field to blame, else `FILE: message`); commands print them after `warning: ` on stderr,
//! and `dcsim validate` in its description (documented in `docs/scenario.md`, "Warnings").
//!
//! * flows that start at or after the stop time (they never run), and RoCE flows that the
//!   receiver never ACKs in full (smaller than `nic.ack_interval`, not a `nic.chunk` multiple),
//!   and with `nic.back_to_chunk` those whose size is not a `nic.chunk` multiple;
//! * RoCE flows and `[[rpc]]` connections whose window closes before the receiver's first ACK
//!   (`nic.ack_interval` above a packet, with a window);
//! * a workload whose realized load is more than 10% below the requested load (with why:
//!   `drop_last`, the window's length);
//! * a switch buffer smaller than one MTU-sized frame plus the switch's PFC headroom and
//!   reserve (its shared pool is empty), and a port's PFC headroom shorter than what can
//!   arrive after a pause where RoCE traffic is lossless;
//! * `[nic] rto_retries` / `rto_backoff` when `rto = "auto"` left the timeout off, and a
//!   scenario whose generators gave no flow (and that has no applications);
//! * a TCP group's HPCC `min_rate`, or the `[cc]` scheme's `min_rate` where RoCE traffic
//!   runs, not below the slowest link of the routed paths;
//! * a `[[queue]]` byte limit below the largest data frame in use, and one whose classes no
//!   traffic uses;
//! * `[output] qlen_ports` with no queue monitor on, after the command's flags
//!   ([`monitor_warnings`]);
//! * for `run --threads N`: more threads than the network has shards, and a lookahead so short
//!   that the threads are likely slower than one ([`thread_warnings`]).

use std::fmt;
use std::path::PathBuf;

use dcsim_core::config::{FlowSpec, SimConfig, TcpGroup};
use dcsim_core::ids::NodeId;
use dcsim_core::network::{Network, NodeKind, RoutingTable};
use dcsim_core::units::{BitsPerSec, Duration, PS_PER_NS};
use dcsim_core::Partition;

use super::generator::WorkloadInfo;
use super::{Source, ValidScenario};
use crate::spans::{line_col, LineCol};
use crate::units::HumanDuration;

/// One warning: the file, where in it and which field if one is to blame, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The scenario file.
    pub file: PathBuf,
    /// The line and column of the field to blame, and its dotted path, if the scenario
    /// writes it.
    pub at: Option<(LineCol, String)>,
    /// What is probably wrong, and what to do.
    pub message: String,
}

impl Warning {
    /// The warning without its file and position: `field `x`: message` or `message`.
    pub fn detail(&self) -> String {
        match &self.at {
            Some((_, field)) => format!("field `{field}`: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// As the errors: `FILE:LINE:COL: field `x`: message`, or `FILE: message`.
impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some((at, _)) => write!(f, "{}:{at}: {}", self.file.display(), self.detail()),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// A realized load below this fraction of the requested one is worth a warning.
pub const REALIZED_LOAD_FRACTION: f64 = 0.9;

/// The lookahead below which `--threads` is probably slower than one thread, whatever the
/// links' rates (see [`thread_warnings`]).
pub const MIN_USEFUL_LOOKAHEAD: Duration = Duration::from_ns(100);

/// The largest full-size data frames of the transports a scenario's flows and connections
/// use: a RoCE MTU-sized frame with the scheme's headers, each used TCP group's full segment.
#[derive(Clone, Copy, Debug)]
pub(super) struct Frames {
    /// The largest of all, if any traffic (a RoCE frame if none).
    pub(super) largest: u64,
    /// Whether that is the RoCE frame (so `nic.mtu` sets it).
    pub(super) roce_largest: bool,
    /// The largest in a lossy class (RoCE where PFC does not cover its class; TCP always),
    /// if any: what a lossy egress cap must hold.
    pub(super) lossy: Option<u64>,
    /// Whether there is traffic at all.
    pub(super) any: bool,
}

impl Frames {
    /// The frames of `flows` and `cfg`'s connections; `data_header` is the scheme's header
    /// bytes on a RoCE data packet.
    pub(super) fn of(cfg: &SimConfig, flows: &[FlowSpec], data_header: u64) -> Frames {
        use dcsim_core::config::Transport;
        let roce = u64::from(cfg.nic.mtu) + data_header;
        let used = (0..flows.len())
            .map(|i| (cfg.transport_of(i), flows[i].pg))
            .chain(cfg.apps.connections.iter().map(|c| (c.transport, c.pg)));
        let (mut largest, mut lossy, mut roce_used) = (None::<u64>, None::<u64>, false);
        for (t, pg) in used {
            let (frame, is_lossy) = match t {
                Transport::Roce => {
                    roce_used = true;
                    (roce, !cfg.switch.lossless(usize::from(pg)))
                }
                Transport::Tcp(g) => {
                    let tcp = &cfg.tcp_groups[usize::from(g)].tcp;
                    (u64::from(tcp.mss) + u64::from(tcp.header_bytes), true)
                }
            };
            largest = largest.max(Some(frame));
            if is_lossy {
                lossy = lossy.max(Some(frame));
            }
        }
        Frames {
            largest: largest.unwrap_or(roce),
            roce_largest: largest.is_none() || (roce_used && largest == Some(roce)),
            lossy,
            any: largest.is_some(),
        }
    }
}

/// The hosts that send or receive lossless RoCE traffic (flows and connections in a class PFC
/// protects), by node index.
fn lossless_roce_hosts(net: &Network, flows: &[FlowSpec], cfg: &SimConfig) -> Vec<bool> {
    use dcsim_core::config::Transport;
    let mut hosts = vec![false; net.node_count()];
    let lossless = |t: Transport, pg: u8| t == Transport::Roce && cfg.switch.lossless(pg.into());
    for (i, f) in flows.iter().enumerate() {
        if lossless(cfg.transport_of(i), f.pg) {
            hosts[f.src.idx()] = true;
            hosts[f.dst.idx()] = true;
        }
    }
    for c in cfg.apps.connections.iter().filter(|c| lossless(c.transport, c.pg)) {
        hosts[c.client.idx()] = true;
        hosts[c.server.idx()] = true;
    }
    hosts
}

/// Switch ports whose PFC headroom cannot hold what usually arrives around a pause, where
/// lossless RoCE traffic can reach them (every port between switches, and a port to a host
/// only if that host sends or receives such traffic): the bytes on the link when the switch
/// decides (one BDP), those the upstream sends while the pause travels (another BDP, and the
/// engine's 43-byte PFC frame), the frame the switch may be sending (the pause waits for it)
/// and the one the upstream may be sending when the pause arrives (it is finished):
/// `2 · BDP + 2 · frame + pause`, with the largest data frame in use. In the worst case the
/// frame whose admission into headroom triggered the pause adds one more frame, which the
/// advised multiple covers. The reference's three BDPs (spec §3.2) hold either on its
/// 100 Gb/s links with 1 µs of delay (37.5 KB against 27.1 and 28.2 KB), not on slow or short
/// links: 3,750 B against 4,639 B at 10 Gb/s and 1 µs, where a three-to-one incast dropped
/// 5,085 lossless frames (and none at 4 BDPs). `rto = "auto"` stays off there
/// (`events::roce_can_lose` says why); the warning says what that means.
pub(super) fn pfc_headroom(
    src: &Source,
    net: &Network,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    frames: &Frames,
    out: &mut Vec<Warning>,
) {
    let sw = &cfg.switch;
    if !sw.pfc_enabled || sw.lossy_classes & 0xfe == 0xfe {
        return;
    }
    let hosts = lossless_roce_hosts(net, flows, cfg);
    if !hosts.contains(&true) {
        return;
    }
    let frame = frames.largest;
    let pause = u64::from(dcsim_core::packet::PFC_FRAME);
    // (switch, port, one-way BDP, what usually arrives) of each short port.
    let mut short = Vec::new();
    for n in (0..net.node_count()).map(NodeId::from_idx).filter(|&n| !net.is_host(n)) {
        for (i, p) in net.ports(n).iter().enumerate() {
            if net.is_host(p.peer) && !hosts[p.peer.idx()] {
                continue;
            }
            // As the MMU sets it aside (`Mmu::new`).
            let bdp = p.rate.bytes_in(p.delay);
            let need =
                bdp.saturating_mul(2).saturating_add(frame.saturating_mul(2)).saturating_add(pause);
            if bdp.saturating_mul(sw.headroom_bdp_multiple) < need {
                short.push((n, i, bdp, need));
            }
        }
    }
    let Some(&(switch, port, bdp, need)) = short.first() else { return };
    let more = match short.len() {
        1 => String::new(),
        2 => " (and 1 more port)".to_string(),
        n => format!(" (and {} more ports)", n - 1),
    };
    // The multiple that covers every short port's worst case; none if a link has no delay.
    let multiple = short
        .iter()
        .map(|&(_, _, bdp, need)| (bdp > 0).then(|| need.saturating_add(frame).div_ceil(bdp)))
        .try_fold(0, |a: u64, m| m.map(|m| a.max(m)));
    let fix = match multiple {
        Some(m) => format!(
            "headroom_bdp_multiple = {m} covers every port even when the frame that triggers \
             the pause is one more"
        ),
        None => "a link without delay has no BDP to scale: no headroom_bdp_multiple helps there"
            .to_string(),
    };
    let rto = if cfg.nic.rto.is_some() {
        "RoCE's retransmission timeout recovers them (`[nic] rto`)"
    } else {
        "no RoCE timeout is on (`rto = \"auto\"` leaves it off on a PFC fabric, where it would \
         fire while pauses hold queue pairs), so a flow that loses one stalls; set `[nic] rto` \
         to recover"
    };
    let message = format!(
        "switch {} port {port}{more}: its PFC headroom ({} B: headroom_bdp_multiple {} × the \
         link's one-way BDP of {bdp} B) is less than the {need} B that can arrive once it \
         decides to pause (two BDPs, two {frame}-byte frames and the pause frame), so lossless \
         classes can drop frames there, as the reference's would (its three BDPs assume fast \
         links); {rto}; {fix}",
        switch.0,
        bdp.saturating_mul(sw.headroom_bdp_multiple),
        sw.headroom_bdp_multiple,
    );
    let key = ["switch", "headroom_bdp_multiple"];
    let at = src.span_of(&key).map(|span| (line_col(src.text(), span.start), key.join(".")));
    out.push(Warning { file: src.path.clone(), at, message });
}

/// The warnings of a validated scenario's parts. `frames` are the data frames of the
/// transports in use.
pub(super) fn collect(
    src: &Source,
    net: &Network,
    routes: &RoutingTable,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    workload: Option<&WorkloadInfo>,
    frames: &Frames,
) -> Vec<Warning> {
    let mut out = Vec::new();
    late_flows(src, cfg, flows, &mut out);
    unacked_flows(src, cfg, flows, &mut out);
    stalled_windows(src, net, routes, cfg, flows, &mut out);
    if let Some(b) = workload.and_then(|w| w.background.as_ref()) {
        realized_load(src, b, &mut out);
    }
    small_buffer(src, net, cfg, frames, &mut out);
    late_events(src, cfg, &mut out);
    late_sampler(src, cfg, &mut out);
    short_rto(src, net, routes, cfg, &mut out);
    unused_rto_keys(src, cfg, &mut out);
    no_flows(src, cfg, flows, &mut out);
    out
}

/// A rate floor that is not below the slowest link of the routed paths: a TCP group's HPCC
/// window law, or the `[cc]` scheme of RoCE flows and connections. The controller cannot slow
/// a flow below that link's rate, so a queue builds there and congestion control has nothing
/// to act on (HPCC's `eta` changes nothing; the default minimum, 1 Gb/s, on a 1 Gb/s
/// bottleneck).
pub(super) fn min_rates(
    src: &Source,
    slowest: BitsPerSec,
    groups: &[super::groups::Group],
    cc: (&crate::schemes::CcChoice, bool),
    out: &mut Vec<Warning>,
) {
    let mut floor = |at: Vec<&str>, field: String, who: String, min: BitsPerSec| {
        if min < slowest {
            return;
        }
        let span = src.span_of(&at);
        out.push(Warning {
            file: src.path().to_path_buf(),
            at: span.map(|s| (line_col(src.text(), s.start), field)),
            message: format!(
                "{who} min_rate ({min}) is not below the slowest link of the routed paths \
                 ({slowest}): the controller cannot slow a flow below that link's rate, so its \
                 queue builds and congestion control has no effect there; set a lower min_rate"
            ),
        });
    };
    let (choice, roce_used) = cc;
    if let (Some(min), true) = (choice.min_rate(), roce_used) {
        let given = src.span_of(&["cc", "min_rate"]).is_some();
        let (at, field) = if given {
            (vec!["cc", "min_rate"], "cc.min_rate".to_string())
        } else {
            (vec!["cc", "name"], "cc.name".to_string())
        };
        floor(at, field, format!("{}'s", choice.name()), min);
    }
    for (i, g) in groups.iter().enumerate() {
        if let Some(min) = g.hpcc_min_rate {
            let idx = i.to_string();
            floor(vec!["group", &idx, "cca"], format!("group[{i}].cca"), "HPCC's".into(), min);
        }
    }
}

/// The warnings about each TCP group's own settings ([`classic_ecn_dctcp`],
/// [`inert_tcp_keys`]), `group[i]` being the scenario's i-th `[[group]]`.
pub(super) fn tcp_groups(
    src: &Source,
    groups: &[super::groups::Group],
    cfg: &SimConfig,
    out: &mut Vec<Warning>,
) {
    use dcsim_core::config::Transport;
    for (i, g) in groups.iter().enumerate() {
        let Transport::Tcp(t) = g.transport else { continue };
        let group = &cfg.tcp_groups[usize::from(t)];
        let idx = i.to_string();
        classic_ecn_dctcp(src, &idx, group, out);
        inert_tcp_keys(src, &idx, group, out);
    }
}

/// A DCTCP or Prague group on classic ECN: its receivers latch ECE until CWR (RFC 3168), so
/// the sender's per-ACK CE fraction, and with it α, is overestimated (docs/tcp.md). Linux
/// pairs these controllers with accurate ECN (Prague) or with DCTCP's own echo at the
/// receiver, which `ecn = "accurate"` models.
fn classic_ecn_dctcp(src: &Source, idx: &str, group: &TcpGroup, out: &mut Vec<Warning>) {
    use dcsim_tcp::{CcaConfig, EcnMode};
    let name = match group.cca {
        CcaConfig::Dctcp(_) => "DCTCP",
        CcaConfig::Prague(_) => "Prague",
        _ => return,
    };
    if group.tcp.ecn != EcnMode::Classic {
        return;
    }
    out.push(at(
        src,
        &["group", idx, "tcp", "ecn"],
        format!(
            "{name} with classic ECN: the receiver echoes ECE until it sees CWR (RFC 3168), so \
             the share of CE-marked bytes, and {name}'s alpha, is overestimated; set ecn = \
             \"accurate\" for a per-segment echo"
        ),
    ));
}

/// TCP settings written where they change nothing: `request_bytes` without a handshake (the
/// request goes with it), `rmem` or `rmem_max` with `rwnd = false` (no receive window), and
/// CUBIC's classic-HyStart settings with another slow-start exit. Warned rather than refused,
/// so that a sweep may keep them in its base while an axis turns what they need off.
fn inert_tcp_keys(src: &Source, idx: &str, group: &TcpGroup, out: &mut Vec<Warning>) {
    use dcsim_tcp::cca::cubic::{HyStartMode, CLASSIC_HYSTART_KEYS};
    use dcsim_tcp::CcaConfig;
    let written = |table: &str, key: &str| src.span_of(&["group", idx, table, key]).is_some();
    let mut inert = |table: &str, key: &str, why: String| {
        out.push(at(src, &["group", idx, table, key], format!("has no effect: {why}")));
    };
    if !group.tcp.handshake && written("tcp", "request_bytes") {
        let why = "the request goes with the handshake, which is off (handshake = false)";
        inert("tcp", "request_bytes", why.into());
    }
    for key in ["rmem", "rmem_max"] {
        if !group.tcp.rwnd && written("tcp", key) {
            inert("tcp", key, "no receive window is modelled (rwnd = false)".into());
        }
    }
    if let CcaConfig::Cubic(c) = &group.cca {
        let exit = match c.hystart {
            HyStartMode::Classic => return,
            HyStartMode::Plus => "plus",
            HyStartMode::Off => "off",
        };
        for key in CLASSIC_HYSTART_KEYS {
            if written("cca", key) {
                inert("cca", key, format!("it is classic HyStart's, and hystart = \"{exit}\""));
            }
        }
    }
}

/// `rto_retries` or `rto_backoff` given while `rto = "auto"` (the default) found no way for
/// RoCE packets to be lost and left the timeout off: the keys change nothing. (With `rto =
/// "off"` written, they are an error.)
fn unused_rto_keys(src: &Source, cfg: &SimConfig, out: &mut Vec<Warning>) {
    if cfg.nic.rto.is_some() {
        return;
    }
    for key in ["rto_retries", "rto_backoff"] {
        if src.span_of(&["nic", key]).is_some() {
            out.push(at(
                src,
                &["nic", key],
                "has no effect: rto = \"auto\" left the RoCE timeout off (it finds no way for a \
                 RoCE packet to be lost in this scenario)"
                    .into(),
            ));
        }
    }
}

/// No flow and no application: generators that gave no flow (an incast fraction or a load too
/// small for the window), or none given: the run simulates nothing.
fn no_flows(src: &Source, cfg: &SimConfig, flows: &[FlowSpec], out: &mut Vec<Warning>) {
    if flows.is_empty() && cfg.apps.apps.is_empty() {
        let generators = ["workload", "incast", "lognormal"]
            .iter()
            .any(|g| src.span_of(&["flows", g]).is_some());
        let why = if generators {
            "no flows to simulate: the generators gave none (a fraction, load or duration too \
             small?)"
        } else {
            "no flows to simulate: the scenario lists none, and has no generator and no \
             application"
        };
        out.push(at(src, &["flows"], why.into()));
    }
}

/// A queue monitor whose window starts after the stop time takes no sample.
fn late_sampler(src: &Source, cfg: &SimConfig, out: &mut Vec<Warning>) {
    let Some(w) = cfg.monitor.qlen_sampler else { return };
    if w.start <= cfg.stop_time {
        return;
    }
    out.push(at(
        src,
        &["output", "qlen_mon"],
        format!(
            "the window starts at {}, after the stop time ({}): qlen_mon.csv will have no \
             sample",
            HumanDuration(Duration::from_ps(w.start.as_ps())),
            HumanDuration(Duration::from_ps(cfg.stop_time.as_ps())),
        ),
    ));
}

/// Link events at or after the stop time never happen.
fn late_events(src: &Source, cfg: &SimConfig, out: &mut Vec<Warning>) {
    let stop = cfg.stop_time;
    let late = cfg.faults.events.iter().filter(|e| e.at >= stop).count();
    if late == 0 {
        return;
    }
    out.push(at(
        src,
        &["simulation", "stop_time"],
        format!(
            "{late} link event{} at or after the stop time ({}) will not happen; raise \
             `simulation.stop_time` or move `events[].at` earlier",
            if late == 1 { "" } else { "s" },
            HumanDuration(Duration::from_ps(stop.as_ps())),
        ),
    ));
}

/// A RoCE retransmission timeout shorter than a round trip fires before any ACK can return.
fn short_rto(
    src: &Source,
    net: &Network,
    routes: &RoutingTable,
    cfg: &SimConfig,
    out: &mut Vec<Warning>,
) {
    let Some(rto) = cfg.nic.rto else { return };
    let (rtt, _) = dcsim_core::paths::max_pair_metrics(net, routes, u64::from(cfg.nic.mtu));
    if rto.timeout >= rtt {
        return;
    }
    out.push(at(
        src,
        &["nic", "rto"],
        format!(
            "{} is shorter than the longest base round trip ({}): queue pairs time out and go \
             back before their ACKs can arrive",
            HumanDuration(rto.timeout),
            HumanDuration(rtt)
        ),
    ));
}

/// A warning at the scenario field `keys` (`simulation.stop_time`; an array index written as
/// the errors write it, `queue[0].memory_limit`), or about the file when it is not written.
fn at(src: &Source, keys: &[&str], message: String) -> Warning {
    let mut field = String::new();
    for k in keys {
        if k.parse::<usize>().is_ok() {
            field.push_str(&format!("[{k}]"));
        } else {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(k);
        }
    }
    let at = src.span_of(keys).map(|s| (line_col(src.text(), s.start), field));
    Warning { file: src.path().to_path_buf(), at, message }
}

fn late_flows(src: &Source, cfg: &SimConfig, flows: &[FlowSpec], out: &mut Vec<Warning>) {
    let stop = cfg.stop_time;
    let late: Vec<&FlowSpec> = flows.iter().filter(|f| f.start >= stop).collect();
    let Some(first) = late.iter().min_by_key(|f| (f.start, f.id)) else { return };
    let when = |t: dcsim_core::units::Time| HumanDuration(Duration::from_ps(t.as_ps()));
    out.push(at(
        src,
        &["simulation", "stop_time"],
        format!(
            "{} flow{} (of {}) start{} at or after the stop time ({}) and will not run (the \
             first, flow {}, at {}); raise `simulation.stop_time` or start them earlier",
            late.len(),
            if late.len() == 1 { "" } else { "s" },
            flows.len(),
            if late.len() == 1 { "s" } else { "" },
            when(stop),
            first.id,
            when(first.start),
        ),
    ));
}

/// RoCE flows the receiver never ACKs in full: it ACKs an in-order packet only once the flow's
/// bytes reach `nic.ack_interval` or end on a multiple of `nic.chunk` (spec §2.3, as the
/// reference does), so a flow smaller than `ack_interval` that does not end on a chunk
/// multiple is delivered but never completes. With `nic.back_to_chunk` the sender takes every
/// ACK back to a chunk multiple (the reference's go-back-to-chunk, spec §2.4), so every flow
/// that is not whole chunks never completes, whatever `ack_interval` (found by a randomized
/// audit: delivered in full at its ideal FCT, reported unfinished, with no warning).
fn unacked_flows(src: &Source, cfg: &SimConfig, flows: &[FlowSpec], out: &mut Vec<Warning>) {
    let nic = &cfg.nic;
    let back = nic.back_to_chunk && nic.chunk > 1;
    let never = |(i, f): &(usize, &FlowSpec)| {
        cfg.transport_of(*i) == dcsim_core::config::Transport::Roce
            && !f.size.is_multiple_of(nic.chunk)
            && (back || f.size < nic.ack_interval)
    };
    let stuck: Vec<&FlowSpec> = flows.iter().enumerate().filter(never).map(|(_, f)| f).collect();
    let Some(first) = stuck.first() else { return };
    let flows_of = format!(
        "{} RoCE flow{} (of {})",
        stuck.len(),
        if stuck.len() == 1 { "" } else { "s" },
        flows.len()
    );
    let (key, message) = if back {
        (
            "back_to_chunk",
            format!(
                "{flows_of} not a multiple of chunk ({} B) will never finish: with \
                 back_to_chunk the sender takes every ACK back to a chunk boundary, as the \
                 reference does, so the last partial chunk is never acknowledged (the first, \
                 flow {}, of {} B); turn `nic.back_to_chunk` off or give the flows whole chunks",
                nic.chunk, first.id, first.size,
            ),
        )
    } else {
        (
            "ack_interval",
            format!(
                "{flows_of} smaller than ack_interval ({} B) and not ending on a multiple of \
                 chunk ({} B) will never be ACKed in full, so never finish (the first, flow {}, \
                 of {} B); lower `nic.ack_interval`",
                nic.ack_interval, nic.chunk, first.id, first.size,
            ),
        )
    };
    out.push(at(src, &["nic", key], message));
}

/// RoCE senders whose window closes before the receiver's first ACK. Below
/// `nic.ack_interval` bytes the receiver ACKs an in-order packet only where the byte count is a
/// multiple of `nic.chunk` (spec §2.3); a sender may have its window (one BDP of the pair, or
/// the network's largest with `global_t`) unacknowledged and no more, so when the window is
/// smaller than the stretch to the first ACK, the flow waits for an ACK that is never sent.
/// Checked only when `ack_interval` exceeds a packet and a window is on (the reference's
/// defaults ACK every packet).
///
/// * A flow (full packets from byte 0) is stuck for certain when it is longer than the bytes
///   its window lets out, `ceil(window / mtu) * mtu`, and those are fewer than both
///   `ack_interval` and the first multiple of `chunk` that is a whole number of packets.
/// * An `[[rpc]]` connection's stream ends a packet at each message end, so where its chunk
///   ACKs fall depends on the message sizes: it may stall whenever its window is below
///   `ack_interval` (the stream's bytes count from the run's start, once) and `chunk` is more
///   than a byte.
///
/// With `nic.rto` the receiver re-ACKs duplicates, so such a flow moves on one window per
/// timeout instead of stalling.
fn stalled_windows(
    src: &Source,
    net: &Network,
    routes: &RoutingTable,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    out: &mut Vec<Warning>,
) {
    use dcsim_core::config::{Transport, WindowMode};
    let nic = &cfg.nic;
    let mtu = u64::from(nic.mtu);
    if nic.window == WindowMode::None || nic.ack_interval <= mtu {
        return;
    }
    let global = nic.global_t.then(|| dcsim_core::paths::max_pair_metrics(net, routes, mtu).1);
    let mut bdps = std::collections::HashMap::new();
    let mut window = |a: NodeId, b: NodeId| -> Option<u64> {
        if let Some(w) = global {
            return Some(w);
        }
        *bdps.entry((a, b)).or_insert_with(|| {
            dcsim_core::paths::pair_metrics(net, routes, a, b, mtu).map(|m| m.bdp)
        })
    };
    // The first ACK of a flow's full packets: at a chunk multiple that is a packet multiple,
    // or at the first packet end at or beyond ack_interval.
    let lcm = (mtu / gcd(mtu, nic.chunk)).saturating_mul(nic.chunk);
    let first_ack = lcm.min(nic.ack_interval.div_ceil(mtu).saturating_mul(mtu));
    let let_out = |w: u64| w.div_ceil(mtu).saturating_mul(mtu);
    // With a retransmission timeout the receiver re-ACKs the duplicates it gets, so a window
    // that closed moves on once per timeout.
    let fate = if nic.rto.is_some() {
        "will advance one window per retransmission timeout"
    } else {
        "will stall"
    };
    let mut stuck: Option<(usize, &FlowSpec, u64)> = None;
    let mut roce_flows = 0;
    for (i, f) in flows.iter().enumerate() {
        if cfg.transport_of(i) != Transport::Roce {
            continue;
        }
        roce_flows += 1;
        let Some(w) = window(f.src, f.dst).filter(|&w| w > 0) else { continue };
        if let_out(w) < first_ack && f.size > let_out(w) {
            let (n, first, fw) = stuck.unwrap_or((0, f, w));
            stuck = Some((n + 1, first, fw));
        }
    }
    if let Some((n, first, w)) = stuck {
        out.push(at(
            src,
            &["nic", "ack_interval"],
            format!(
                "{n} RoCE flow{} (of {roce_flows}) {fate}: the window ({w} B, the first: flow \
                 {}) lets out fewer bytes than the receiver takes to send its first ACK \
                 ({first_ack} B: ack_interval {} B, chunk {} B, mtu {mtu} B); lower \
                 `nic.ack_interval`",
                if n == 1 { "" } else { "s" },
                first.id,
                nic.ack_interval,
                nic.chunk,
            ),
        ));
    }
    let conns = &cfg.apps.connections;
    let variable = if nic.window == WindowMode::Variable {
        " (a variable window is smaller still once the rate falls)"
    } else {
        ""
    };
    // Both streams of a connection take the client-to-server pair's window (as the engine
    // does). With 1-byte chunks every packet is ACKed.
    let roce_conns = conns.iter().filter(|c| c.transport == Transport::Roce).count();
    let mut risky = conns.iter().filter(|c| c.transport == Transport::Roce).filter_map(|c| {
        let w = window(c.client, c.server).filter(|&w| w > 0)?;
        (w < nic.ack_interval && nic.chunk > 1).then_some(w)
    });
    if let Some(first) = risky.next() {
        let n = 1 + risky.count();
        out.push(at(
            src,
            &["nic", "ack_interval"],
            format!(
                "{n} RoCE connection{} (of {roce_conns}) may stall: a window ({first} B, the first) is \
                 below ack_interval ({} B), and until a stream has carried that many bytes its \
                 receiver ACKs only where a message ends on a multiple of chunk ({} B){variable}; \
                 lower `nic.ack_interval`",
                if n == 1 { "" } else { "s" },
                nic.ack_interval,
                nic.chunk,
            ),
        ));
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn realized_load(src: &Source, b: &super::generator::BackgroundInfo, out: &mut Vec<Warning>) {
    if b.realized_load >= REALIZED_LOAD_FRACTION * b.load {
        return;
    }
    // A host's mean gap between flows and the flows a host expects in the window.
    let gap_ns = b.mean_size * 8.0 / (b.host_rate.get() as f64 * b.load) * 1e9;
    let per_host = b.duration.as_ns_f64() / gap_ns;
    let gap =
        HumanDuration(Duration::from_ps((gap_ns * PS_PER_NS as f64).min(u64::MAX as f64) as u64));
    let window = HumanDuration(b.duration);
    let why = if b.flows == 0 {
        format!(
            "no flow arrived: the window ({window}) is short next to a host's mean gap between \
             flows ({gap}) at this load and CDF; lengthen `duration` or raise `load`"
        )
    } else {
        let dropped = if b.drop_last {
            format!(
                ", and `drop_last = true` drops each host's last arrival (about {:.0}% of the \
                 load here)",
                100.0 / per_host.max(1.0)
            )
        } else {
            String::new()
        };
        format!(
            "a host expects only {per_host:.1} flows in the window ({window}), so a few flow \
             sizes decide the load{dropped}; lengthen `duration`{}",
            if b.drop_last { " or set `drop_last = false`" } else { "" }
        )
    };
    out.push(at(
        src,
        &["flows", "workload", "load"],
        format!(
            "the generated flows realize a load of {:.4}, {:.0}% below the requested {} ({} \
             flows): {why}",
            b.realized_load,
            (1.0 - b.realized_load / b.load) * 100.0,
            b.load,
            b.flows
        ),
    ));
}

/// Every switch's buffer against one MTU-sized frame plus its PFC headroom and reserve (the
/// MMU's shared pool is what is left; with nothing left, packets go to reserve and headroom
/// only, or are dropped).
fn small_buffer(
    src: &Source,
    net: &Network,
    cfg: &SimConfig,
    frames: &Frames,
    out: &mut Vec<Warning>,
) {
    let sw = &cfg.switch;
    let frame = u128::from(frames.largest);
    let lossless = sw.pfc_enabled && sw.lossy_classes & 0xfe != 0xfe;
    let mut worst: Option<(NodeId, usize, u128, u128)> = None;
    for n in (0..net.node_count()).map(NodeId::from_idx).filter(|&n| !net.is_host(n)) {
        let ports = net.ports(n);
        let headroom: u128 = if lossless {
            ports
                .iter()
                .map(|p| {
                    u128::from(p.rate.bytes_in(p.delay)) * u128::from(sw.headroom_bdp_multiple)
                })
                .sum()
        } else {
            0
        };
        let reserve = u128::from(sw.reserve.get()) * ports.len() as u128;
        if worst.is_none_or(|w| headroom + reserve > w.2 + w.3) {
            worst = Some((n, ports.len(), headroom, reserve));
        }
    }
    let Some((n, ports, headroom, reserve)) = worst else { return };
    let buffer = u128::from(sw.buffer.get());
    if buffer >= frame + headroom + reserve {
        return;
    }
    // Blame what the scenario writes that takes the most: the MTU when the frame alone does
    // not fit, else the larger of the reserve and the headroom when it alone leaves no room
    // for a frame, else the buffer.
    let written = |k: &[&str]| src.span_of(k).is_some();
    let keys: &[&str] = if frame > buffer && frames.roce_largest && written(&["nic", "mtu"]) {
        &["nic", "mtu"]
    } else if reserve >= headroom && reserve + frame > buffer && written(&["switch", "reserve"]) {
        &["switch", "reserve"]
    } else if headroom > reserve
        && headroom + frame > buffer
        && written(&["switch", "headroom_bdp_multiple"])
    {
        &["switch", "headroom_bdp_multiple"]
    } else {
        &["switch", "buffer"]
    };
    let also = match keys {
        ["switch", "buffer"] if frame > buffer && frames.roce_largest => {
            " or lower `nic.mtu`".to_string()
        }
        ["switch", "buffer"] => String::new(),
        k => format!(" or lower `{}`", k.join(".")),
    };
    out.push(at(
        src,
        keys,
        format!(
            "the switch buffer ({buffer} B) is smaller than one full-size data frame ({frame} B) \
             plus the PFC headroom ({headroom} B) and reserve ({reserve} B) of switch {n} \
             ({ports} ports): its shared buffer is empty, so packets fit only in reserve and \
             headroom or are dropped; raise `switch.buffer`{also}"
        ),
    ));
}

/// A `[[queue]]` whose byte limit (`limit_bytes`, `memory_limit`), or a `switch.egress_cap`,
/// below the largest data frame of the transports in use (`largest`): every such frame is
/// dropped at its ports, so flows that send full frames through them never finish.
pub(super) fn small_queue_limits(
    src: &Source,
    cfg: &SimConfig,
    tables: &[(dcsim_core::config::QdiscConfig, u8)],
    frames: &Frames,
    out: &mut Vec<Warning>,
) {
    let cap = cfg.switch.egress_cap.map(|c| c.get());
    if let (Some(cap), Some(lossy)) = (cap, frames.lossy) {
        if cap < lossy {
            out.push(at(
                src,
                &["switch", "egress_cap"],
                format!(
                    "{cap} B is less than the largest data frame in a lossy class ({lossy} B): \
                     every such frame is dropped at every switch, so flows that send full \
                     frames never finish"
                ),
            ));
        }
    }
    if !frames.any {
        return;
    }
    let largest = frames.largest;
    for (i, (q, _)) in tables.iter().enumerate() {
        let Some((key, limit)) = q.byte_limit().filter(|&(_, b)| b < largest) else { continue };
        out.push(at(
            src,
            &["queue", &i.to_string(), key],
            format!(
                "{limit} B is less than the largest data frame of this scenario ({largest} B): \
                 {} drops every such frame at its ports, so flows that send full frames \
                 through them never finish",
                q.name()
            ),
        ));
    }
}

/// A `[[queue]]` whose classes no flow or connection uses: it changes nothing (a discipline
/// applies only to the classes it names, and the rest of the port stays drop-tail).
pub(super) fn unused_queue_classes(
    src: &Source,
    cfg: &SimConfig,
    flows: &[FlowSpec],
    tables: &[(dcsim_core::config::QdiscConfig, u8)],
    out: &mut Vec<Warning>,
) {
    let used = flows
        .iter()
        .map(|f| f.pg)
        .chain(cfg.apps.connections.iter().map(|c| c.pg))
        .fold(0u8, |m, pg| m | 1u8.checked_shl(u32::from(pg)).unwrap_or(0));
    if used == 0 {
        return;
    }
    let list = |bits: u8| {
        (0..8)
            .filter(|c| bits & (1 << c) != 0)
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, (q, classes)) in tables.iter().enumerate() {
        if classes & used != 0 {
            continue;
        }
        let n = i.to_string();
        let keys: &[&str] = if src.span_of(&["queue", &n, "classes"]).is_some() {
            &["queue", &n, "classes"]
        } else {
            &["queue", &n]
        };
        out.push(at(
            src,
            keys,
            format!(
                "{} applies to classes {} only, and no flow or connection uses them (the traffic \
                 is in class {}): it changes nothing",
                q.name(),
                list(*classes),
                list(used)
            ),
        ));
    }
}

/// The warnings of running `v` on `threads` threads: more threads than shards (the run uses
/// one thread per shard), and a lookahead under [`MIN_USEFUL_LOOKAHEAD`] or under the time the
/// fastest link takes to send one MTU-sized frame.
///
/// The second is a heuristic: the shards meet at a barrier once per lookahead of simulated
/// time, which costs about a microsecond of wall time; when a window is so short that a link
/// carries at most about one packet in it, the barriers usually cost more than the threads
/// save.
pub fn thread_warnings(v: &ValidScenario, threads: usize) -> Vec<Warning> {
    parallel_warnings(v, threads, None)
}

/// `[output] qlen_ports` with no queue monitor on to watch the ports it selects (neither
/// `queue_lengths`, `qlen_mon` nor a study's per-class monitor): nothing is written for them.
/// Checked after the command's flags, since `run --queue-lengths` turns the histograms on.
pub fn monitor_warnings(v: &ValidScenario) -> Vec<Warning> {
    match &v.qlen_ports_at {
        Some(at) if !v.cfg.monitor.watches_queues() => vec![Warning {
            file: v.path.clone(),
            at: Some(at.clone()),
            message: "selects ports for the queue monitors, but none is on, so nothing is \
                      written for them: set `[output] queue_lengths = true` or `qlen_mon`, or \
                      run with `--queue-lengths`"
                .to_string(),
        }],
        _ => Vec::new(),
    }
}

/// [`thread_warnings`] for `threads` threads and, if given (`--shards`), `shards` shards: more
/// shards asked for than the network has, and the lookahead warning when `threads` > 1.
pub fn parallel_warnings(v: &ValidScenario, threads: usize, shards: Option<usize>) -> Vec<Warning> {
    let mut out = Vec::new();
    let asked = shards.unwrap_or_else(|| crate::schemes::default_shards(threads));
    if asked <= 1 {
        return out;
    }
    let warn = |message: String| Warning { file: v.path.clone(), at: None, message };
    // The run's partitioner (`Partitioner::Cut`) builds its shards of units, each a switch with
    // the hosts on it, one unit per shard while shards are empty, and cuts only
    // switch-to-switch links: at most one shard per switch. (The rack partitioner, which this
    // used to ask, deals switches without hosts onto the racks' shards, and so undercounted:
    // "at most 2 shards" for a run of 3.)
    let switches = v.net.kinds().iter().filter(|k| **k == NodeKind::Switch).count().max(1);
    let got = asked.min(switches);
    // Asked for shards: told when they cannot all be made. Asked for threads only: told when
    // there are fewer shards than threads (the default's extra shards are best effort).
    let (flag, n, what) = match shards {
        Some(s) => ("--shards", s, "shard"),
        None => ("--threads", threads, "thread"),
    };
    let s = |k: usize| if k == 1 { "" } else { "s" };
    let max = crate::schemes::MAX_THREADS;
    // (Threads beyond the shards and beyond `max`: the warning about `max` below says both.)
    if got < n && (shards.is_some() || got <= max) {
        out.push(warn(format!(
            "{flag} {n}: the network splits into at most {got} shard{} (one switch with its \
             hosts each, or several), so the run uses at most {got} {what}{}",
            s(got),
            s(got),
        )));
    }
    if shards.is_some() && threads > got {
        out.push(warn(format!(
            "--threads {threads}: the run has at most {got} shard{} and uses at most one thread \
             per shard, so it uses at most {got} thread{}",
            s(got),
            s(got),
        )));
    }
    if threads <= 1 {
        return out;
    }
    if threads.min(got) > max {
        out.push(warn(format!(
            "--threads {threads}: the run uses at most {max} threads (each takes a stack of \
             address space; more are no faster on any machine), sharing its {got} shards"
        )));
    }
    // More threads than the CPUs the process may use (its affinity mask, or a container's
    // quota): the threads meet at a barrier every window, and one waiting for a CPU holds all
    // the others there. Under `taskset -c 0`, two threads ran 45 times slower than one.
    if let Ok(cpus) = std::thread::available_parallelism() {
        let cpus = cpus.get();
        let used = threads.min(got).min(max);
        if used > cpus {
            out.push(warn(format!(
                "--threads {threads}: this process may use only {cpus} CPU{} (its affinity or \
                 quota), and its threads wait for each other at every window, so a thread \
                 without a CPU holds them all: the run can be many times slower than with \
                 --threads {cpus}",
                s(cpus),
            )));
        }
    }
    // For the lookahead heuristic, the racks' partition: every partitioner but round robin
    // cuts only switch-to-switch links, so its shortest cut link is a fair guess.
    let part = Partition::by_rack(&v.net, got);
    let Some(lookahead) = part.lookahead(&v.net).filter(|d| *d > Duration::ZERO) else {
        return out;
    };
    let fastest = v.net.links().iter().map(|l| l.rate).max().unwrap_or(BitsPerSec(1));
    let frame = u64::from(v.cfg.nic.mtu) + u64::from(v.cc.header_mode().data_wire(0));
    let frame_time = fastest.tx_time(frame);
    let floor = MIN_USEFUL_LOOKAHEAD.max(frame_time);
    if lookahead < floor {
        let what = if frame_time > MIN_USEFUL_LOOKAHEAD {
            format!(
                "the {} a {fastest} link takes to send one {frame}-byte frame",
                HumanDuration(frame_time)
            )
        } else {
            format!("{}", HumanDuration(MIN_USEFUL_LOOKAHEAD))
        };
        out.push(warn(format!(
            "--threads {threads}: the lookahead (the shortest delay of a link between \
             shards) is {}, under {what}; the shards synchronize that often, so this run is \
             likely slower than with --threads 1 (a heuristic)",
            HumanDuration(lookahead),
        )));
    }
    out
}
