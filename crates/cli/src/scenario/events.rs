//! `[[events]]` (link failures and repairs), `[routing]` (how fast routing reacts) and the
//! RoCE retransmission timeout of `[nic]` (`rto`, `rto_retries`, `rto_backoff`).
//!
//! ```toml
//! [[events]]
//! at = "100us"
//! action = "link-down"       # or "link-up"
//! link = [16, 20]            # the link between these two node ids (every parallel one)
//!
//! [routing]
//! convergence = "50us"       # routes change this long after each event (default 0s)
//!
//! [nic]
//! rto = "1ms"                # or "off", or "auto" (the default: see `RtoMode`)
//! rto_retries = 7
//! rto_backoff = 2
//! ```

use dcsim_core::config::{Faults, FlowSpec, LinkEvent, RoceRto, SimConfig, Transport};
use dcsim_core::ids::{LinkId, NodeId};
use dcsim_core::network::Network;
use dcsim_core::units::{Duration, Time};
use serde::Deserialize;
use toml::Spanned;

use super::{Int, Qty, RawQty, Source, Zero};
use crate::error::CliError;

/// `[[events]]` as written.
#[derive(Deserialize, Debug)]
#[serde(expecting = "an `[[events]]` entry: a table with at, action and link")]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvent {
    at: Option<Qty>,
    action: Option<Spanned<String>>,
    link: Option<Spanned<Vec<Int>>>,
}

/// `[routing]` as written.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRouting {
    convergence: Option<Qty>,
}

/// The actions `[[events]] action` accepts.
pub const ACTIONS: &[&str] = &["link-down", "link-up"];

/// The native default retransmission timeout (`rto = "auto"` where packets can be lost):
/// 4 ms, about InfiniBand's local ACK timeout 4.096 µs × 2^10.
pub const DEFAULT_RTO: Duration = Duration::from_ps(4_000_000_000);
/// The native default retry count (InfiniBand's largest `retry_cnt`).
pub const DEFAULT_RTO_RETRIES: u32 = 7;
/// The native default back-off factor (fixed, as InfiniBand hardware).
pub const DEFAULT_RTO_BACKOFF: u32 = 1;
/// The largest `rto_backoff`.
pub const MAX_RTO_BACKOFF: i64 = 16;

/// What `[nic] rto` asked for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RtoMode {
    /// `"auto"` (the default): [`DEFAULT_RTO`] when a RoCE packet can be lost in the scenario
    /// (a link with a loss probability, PFC off, a RoCE flow in a lossy class, or link
    /// events), else none — a lossless fabric never needs one, and the reference has none.
    Auto,
    /// `"off"`: no timeout (the reference's behaviour).
    Off,
    /// A timeout.
    On(Duration),
}

/// The `rto*` keys of `[nic]`, read by [`rto_keys`].
#[derive(Clone, Copy, Debug)]
pub(super) struct RtoKeys {
    pub(super) mode: RtoMode,
    pub(super) retries: u32,
    pub(super) backoff: u32,
}

impl Default for RtoKeys {
    fn default() -> Self {
        RtoKeys { mode: RtoMode::Auto, retries: DEFAULT_RTO_RETRIES, backoff: DEFAULT_RTO_BACKOFF }
    }
}

/// Reads `[nic] rto`, `rto_retries` and `rto_backoff`.
pub(super) fn rto_keys(
    src: &Source,
    rto: Option<&Qty>,
    retries: Option<&Int>,
    backoff: Option<&Int>,
) -> Result<RtoKeys, CliError> {
    let mut k = RtoKeys::default();
    if let Some(q) = rto {
        k.mode = match q.get_ref() {
            RawQty::Str(s) if s == "off" => RtoMode::Off,
            RawQty::Str(s) if s == "auto" => RtoMode::Auto,
            _ => {
                let d = src.duration(q, "nic.rto", Zero::Rejected).map_err(|e| match e {
                    CliError::Field { file, at, field, message } => CliError::Field {
                        file,
                        at,
                        field,
                        message: format!("{message} (or \"off\", or \"auto\")"),
                    },
                    e => e,
                })?;
                // A timer below a microsecond fires millions of times per simulated second
                // and queue pair (a 1 ps one with unbounded retries ran for days).
                if d < dcsim_types::units::MIN_PERIOD {
                    return Err(src.error(
                        q.span(),
                        "nic.rto",
                        format!(
                            "{} is shorter than the minimum of 1 µs",
                            crate::units::HumanDuration(d)
                        ),
                    ));
                }
                if d > RoceRto::MAX {
                    return Err(src.error(
                        q.span(),
                        "nic.rto",
                        format!(
                            "{} is longer than the limit of 1000 s",
                            crate::units::HumanDuration(d)
                        ),
                    ));
                }
                RtoMode::On(d)
            }
        };
    }
    if let Some(v) = retries {
        k.retries = src.int(v, "nic.rto_retries", 0, i64::from(u32::MAX))? as u32;
    }
    if let Some(v) = backoff {
        k.backoff = src.int(v, "nic.rto_backoff", 1, MAX_RTO_BACKOFF)? as u32;
    }
    if k.mode == RtoMode::Off {
        for (given, key) in [(retries, "nic.rto_retries"), (backoff, "nic.rto_backoff")] {
            if let Some(v) = given {
                return Err(src.error(v.span(), key, "has no effect with rto = \"off\""));
            }
        }
    }
    Ok(k)
}

/// Sets `cfg.nic.rto` from the keys, once everything that decides whether RoCE packets can be
/// lost is known (`cfg.faults`, the switch's PFC and lossy classes, the transports and classes
/// of `flows` and of the connections). Returns whether `auto` turned it on.
pub(super) fn apply_rto(
    keys: &RtoKeys,
    net: &Network,
    flows: &[FlowSpec],
    cfg: &mut SimConfig,
) -> bool {
    let rto = |timeout| RoceRto { timeout, retries: keys.retries, backoff: keys.backoff };
    match keys.mode {
        RtoMode::Off => {
            cfg.nic.rto = None;
            false
        }
        RtoMode::On(d) => {
            cfg.nic.rto = Some(rto(d));
            false
        }
        RtoMode::Auto => {
            let lossy = roce_can_lose(net, flows, cfg);
            cfg.nic.rto = lossy.then(|| rto(DEFAULT_RTO));
            lossy
        }
    }
}

/// Whether a RoCE packet can be lost in this scenario: a link has a loss probability, links
/// fail, or a RoCE flow or connection is in a class that does not pause (PFC off, or a lossy
/// class), where a full buffer drops, or in a class given a `[[queue]]` discipline that can
/// drop (anything but RED marking ECN-capable packets, or a FIFO without a limit).
///
/// A PFC headroom too short for what arrives around a pause can drop lossless frames too, but
/// does not count: that bound is a worst case, and a timeout turned on by it fires spuriously
/// wherever PFC holds queue pairs for milliseconds (the buffer study's DCQCN storage cell,
/// a frame short of the worst case and dropping nothing, took 22,210 timeouts and then 17,619
/// drops). It is warned about instead (`warnings::pfc_headroom`).
fn roce_can_lose(net: &Network, flows: &[FlowSpec], cfg: &SimConfig) -> bool {
    use dcsim_core::config::QdiscConfig;
    if net.links().iter().any(|l| l.loss > 0.0) || !cfg.faults.events.is_empty() {
        return true;
    }
    let dropping = |q: &QdiscConfig| match q {
        QdiscConfig::Red(r) => !r.ecn,
        QdiscConfig::Fifo(f) => f.limit_bytes.is_some() || f.limit_packets.is_some(),
        _ => true,
    };
    let lossy = |pg: u8| {
        !cfg.switch.lossless(pg as usize)
            || cfg.switch.qdiscs.iter().any(|r| r.classes & (1 << pg) != 0 && dropping(&r.qdisc))
    };
    let listed = flows
        .iter()
        .enumerate()
        .any(|(i, f)| cfg.transport_of(i) == Transport::Roce && lossy(f.pg));
    listed || cfg.apps.connections.iter().any(|c| c.transport == Transport::Roce && lossy(c.pg))
}

/// Reads `[[events]]` and `[routing]` into `cfg.faults`.
pub(super) fn events(
    src: &Source,
    raw: Option<&Vec<Spanned<RawEvent>>>,
    routing: Option<&RawRouting>,
    net: &Network,
    cfg: &mut SimConfig,
) -> Result<(), CliError> {
    let mut faults = Faults::default();
    if let Some(q) = routing.and_then(|r| r.convergence.as_ref()) {
        faults.convergence = src.duration(q, "routing.convergence", Zero::Allowed)?;
    }
    let list = raw.map(Vec::as_slice).unwrap_or_default();
    if list.len() > Faults::MAX_ROUTE_CHANGES {
        let span = list[Faults::MAX_ROUTE_CHANGES].span();
        return Err(src.error(
            span,
            format!("events[{}]", Faults::MAX_ROUTE_CHANGES),
            format!(
                "at most {} link events (each distinct time keeps a routing table)",
                Faults::MAX_ROUTE_CHANGES
            ),
        ));
    }
    for (i, e) in list.iter().enumerate() {
        let field = |k: &str| format!("events[{i}].{k}");
        let whole = e.span();
        let e = e.get_ref();
        let missing = |k: &str| src.error(whole.clone(), field(k), "is required");
        let at = e.at.as_ref().ok_or_else(|| missing("at"))?;
        let at_t = Time::from_ps(src.duration(at, &field("at"), Zero::Allowed)?.as_ps());
        let action = e.action.as_ref().ok_or_else(|| missing("action"))?;
        let up = match action.get_ref().as_str() {
            "link-down" => false,
            "link-up" => true,
            other => {
                return Err(src.error(
                    action.span(),
                    field("action"),
                    format!("unknown action \"{other}\" (valid: {})", ACTIONS.join(", ")),
                ))
            }
        };
        let link = e.link.as_ref().ok_or_else(|| missing("link"))?;
        let ends = link.get_ref();
        if ends.len() != 2 {
            return Err(src.error(
                link.span(),
                field("link"),
                format!(
                    "names {} nodes; a link is given by its two ends, e.g. [16, 20]",
                    ends.len()
                ),
            ));
        }
        let n = net.node_count();
        let mut nodes = [NodeId(0); 2];
        for (k, v) in ends.iter().enumerate() {
            let max = n as i64 - 1;
            let x = *v.get_ref();
            if x < 0 || x > max {
                return Err(src.error(
                    v.span(),
                    format!("events[{i}].link[{k}]"),
                    format!("node {x} does not exist (node ids are 0..={max})"),
                ));
            }
            nodes[k] = NodeId(x as u32);
        }
        let ids: Vec<LinkId> = net
            .links()
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                (l.a, l.b) == (nodes[0], nodes[1]) || (l.a, l.b) == (nodes[1], nodes[0])
            })
            .map(|(j, _)| LinkId(j as u32))
            .collect();
        if ids.is_empty() {
            return Err(src.error(
                link.span(),
                field("link"),
                format!("there is no link between nodes {} and {}", nodes[0], nodes[1]),
            ));
        }
        for id in ids {
            faults.events.push(LinkEvent { at: at_t, link: id, up });
        }
        // Each distinct event time within the run keeps a routing table for the rest of it.
        let mut times: Vec<Time> =
            faults.events.iter().map(|e| e.at).filter(|&t| t <= cfg.stop_time).collect();
        times.sort_unstable();
        times.dedup();
        let max = dcsim_core::network::RoutingTable::MAX_WORK;
        let work = dcsim_core::network::RoutingTable::work(net);
        let tables = times.len() as u128 + 1;
        if tables * work > max as u128 {
            return Err(src.error(
                whole,
                format!("events[{i}]"),
                format!(
                    "{} distinct event times would keep {tables} routing tables of {work} steps \
                     each to compute, more than the limit of {max} steps in all; use fewer \
                     distinct times (events at the same time share a table)",
                    times.len(),
                ),
            ));
        }
    }
    cfg.faults = faults;
    Ok(())
}

/// A time without rounding: whole µs when it is, else ns.
fn exact(t: Time) -> String {
    let ps = t.as_ps();
    if ps.is_multiple_of(1_000_000) {
        format!("{} µs", ps / 1_000_000)
    } else {
        format!("{} ns", crate::units::format_ps_as_ns(ps))
    }
}

/// Lines for `validate`'s description: the link events and the retransmission timeout.
pub(super) fn describe(cfg: &SimConfig, net: &Network, auto_rto: bool) -> Vec<String> {
    use crate::units::HumanDuration;
    let mut v = Vec::new();
    if !cfg.faults.events.is_empty() {
        let mut e: Vec<&LinkEvent> = cfg.faults.events.iter().collect();
        e.sort_by_key(|e| e.at);
        let list: Vec<String> = e
            .iter()
            .map(|e| {
                let l = net.links()[e.link.idx()];
                format!("{} at {}: {}-{}", if e.up { "up" } else { "down" }, exact(e.at), l.a, l.b)
            })
            .collect();
        v.push(format!(
            "link events: {} ({}); routing converges {} after each",
            e.len(),
            list.join(", "),
            HumanDuration(cfg.faults.convergence)
        ));
    }
    v.push(match &cfg.nic.rto {
        None => "RoCE retransmission timeout: off".to_string(),
        Some(r) => format!(
            "RoCE retransmission timeout: {}{}, {} retries, back-off x{}",
            HumanDuration(r.timeout),
            if auto_rto { " (auto: RoCE packets can be lost here)" } else { "" },
            r.retries,
            r.backoff
        ),
    });
    v
}
