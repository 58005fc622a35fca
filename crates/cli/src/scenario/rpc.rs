//! `[[rpc]]`: request/response applications on persistent connections (the buffer-sizing
//! study's RPC tool).
//!
//! ```toml
//! [[rpc]]
//! name = "victim"                # label in qct.csv and summaries
//! clients = [2]                  # servers that send queries
//! servers = [7]                  # servers that answer (default: every other server)
//! connections = 8                # persistent connections per (client, server) pair
//! group = "tcp"                  # a [[group]]; without one, RoCE queue pairs of [cc]
//! outstanding = 2                # closed loop: queries outstanding per connection
//! # load = 0.8                   # open loop: Poisson, this fraction of the client's NICs
//! query = "4KiB"                 # or query_cdf = "alistorage2019", interpolate = "step"
//! response = "64B"
//! start = "0us"
//! stop = "110ms"                 # no new query from here (default: the stop time)
//! warmup = "10ms"                # queries submitted earlier are not measured
//! pg = 3
//! connection = "least-pending"   # open loop: the query's connection among those to its server
//!                                # ("least-pending": a pool's idle one first; or "random")
//! ```
//!
//! A *server* is a machine with `nics_per_server` NICs (hosts `s·n … s·n + n − 1`; one NIC per
//! server on every topology but `alibaba-2pod`'s default). Each connection's two ends are on one
//! NIC of each machine: a pair's connections are dealt to the NICs in turn, from an offset
//! hashed from (client, server, seed) at each end, so every NIC carries an equal share.

use std::sync::Arc;

use dcsim_core::apps::{Apps, Arrivals, Connection, Pick, RpcApp, SizeDist, SizeSampler};
use dcsim_core::config::{SimConfig, Transport};
use dcsim_core::ids::NodeId;
use dcsim_core::network::Network;
use dcsim_core::units::{Duration, Time};
use dcsim_workload::{Cdf, Interpolation};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use toml::Spanned;

use super::groups::Group;
use super::{Int, Qty, Source, Zero};
use crate::error::CliError;

/// `[[rpc]]` as written.
#[derive(Deserialize, Debug)]
#[serde(expecting = "an `[[rpc]]` entry: a table")]
#[serde(deny_unknown_fields)]
pub(super) struct RawRpc {
    name: Option<Spanned<String>>,
    clients: Option<Spanned<Vec<Int>>>,
    servers: Option<Spanned<Vec<Int>>>,
    connections: Option<Int>,
    group: Option<Spanned<String>>,
    outstanding: Option<Int>,
    load: Option<Spanned<f64>>,
    query: Option<Qty>,
    query_cdf: Option<Spanned<String>>,
    interpolate: Option<Spanned<String>>,
    response: Option<Qty>,
    start: Option<Qty>,
    stop: Option<Qty>,
    warmup: Option<Qty>,
    pg: Option<Int>,
    connection: Option<Spanned<String>>,
}

/// An application as described to the user (`dcsim validate`) and used by summaries.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcInfo {
    /// Its name.
    pub name: String,
    /// Client servers.
    pub clients: Vec<usize>,
    /// Server machines.
    pub servers: Vec<usize>,
    /// Connections in all.
    pub connections: usize,
    /// "closed loop, 64 outstanding per connection" or "open loop at 80% load".
    pub arrivals: String,
    /// The mean query size in bytes.
    pub mean_query: f64,
    /// The transport ("tcp group NAME" or "roce").
    pub transport: String,
    /// The largest query, bytes (the fixed size, or the CDF's largest rounded up).
    pub max_query: u64,
    /// The response size, bytes.
    pub response: u64,
    /// The segment size of its connections' transport (the MTU for RoCE, the MSS for TCP).
    pub segment: u64,
    /// Queries submitted from here on are measured.
    pub measure_from: Time,
    /// No query is submitted from here on.
    pub stop: Time,
}

/// Query sizes from a workload CDF, read linearly or as steps.
#[derive(Debug)]
struct CdfSizes {
    cdf: Cdf,
    mode: Interpolation,
}

impl SizeSampler for CdfSizes {
    fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        self.cdf.sample_with(rng, self.mode)
    }
    fn mean(&self) -> f64 {
        self.cdf.mean_with(self.mode)
    }
    fn mean_of(&self, f: &dyn Fn(u64) -> f64) -> f64 {
        // The mean of f over the distribution: f at the midpoints of 100 000 equal slices of
        // probability (exact for a step CDF whose masses are multiples of 0.001%).
        const N: u32 = 100_000;
        let value = |pct: f64| match self.mode {
            Interpolation::Step => self.cdf.step_value_at_percent(pct),
            Interpolation::Linear => self.cdf.value_at_percent(pct),
        };
        let sum: f64 = (0..N)
            .map(|i| {
                let v = value((f64::from(i) + 0.5) * 100.0 / f64::from(N)).trunc();
                f(if v <= 0.0 { 1 } else { v as u64 })
            })
            .sum();
        sum / f64::from(N)
    }
}

/// Reads `[[rpc]]` into `cfg.apps`. `nics` is the number of NICs (host nodes) per server.
pub(super) fn rpcs(
    src: &Source,
    raw: Option<&Vec<Spanned<RawRpc>>>,
    net: &Network,
    nics: usize,
    groups: &[Group],
    roce_frame: (u64, u64),
    cfg: &mut SimConfig,
) -> Result<Vec<RpcInfo>, CliError> {
    let mut infos = Vec::new();
    let hosts = net.hosts().len();
    let nservers = hosts / nics.max(1);
    let mut apps = Apps { seed: cfg.seed, ..Apps::default() };
    let mut outstanding = 0u64;
    // The last application's `connections` (where the memory check of them all is reported).
    let mut last_connections = None;
    for (i, r) in raw.into_iter().flatten().enumerate() {
        let field = |k: &str| format!("rpc[{i}].{k}");
        let whole = r.span();
        let r = r.get_ref();
        let name = match &r.name {
            Some(n) if n.get_ref().is_empty() => {
                return Err(src.error(n.span(), field("name"), "must not be empty"))
            }
            Some(n) => n.get_ref().clone(),
            None => format!("rpc{i}"),
        };
        // Queries are reported by application name (`qct.csv`, the summary): two apps of one
        // name would be counted as one.
        if infos.iter().any(|x: &RpcInfo| x.name == name) {
            let at = r.name.as_ref().map_or(whole.clone(), |n| n.span());
            return Err(src.error(
                at,
                field("name"),
                format!("\"{name}\" names another [[rpc]] too: application names must differ"),
            ));
        }
        let server_list = |v: &Spanned<Vec<Int>>, key: &str| -> Result<Vec<usize>, CliError> {
            if v.get_ref().is_empty() {
                return Err(src.error(v.span(), field(key), "must list at least one server"));
            }
            let mut out: Vec<usize> = Vec::new();
            for x in v.get_ref() {
                let s = src.int(x, &field(key), 0, i64::MAX)? as usize;
                if s >= nservers {
                    return Err(src.error(
                        x.span(),
                        field(key),
                        format!(
                            "server {s} does not exist (servers are 0..{}{})",
                            nservers.saturating_sub(1),
                            if nics > 1 {
                                format!(", each with {nics} NICs")
                            } else {
                                String::new()
                            }
                        ),
                    ));
                }
                if out.contains(&s) {
                    return Err(src.error(
                        x.span(),
                        field(key),
                        format!("server {s} is listed twice"),
                    ));
                }
                out.push(s);
            }
            Ok(out)
        };
        let clients = match &r.clients {
            Some(v) => server_list(v, "clients")?,
            None => {
                return Err(src.error(
                    whole,
                    format!("rpc[{i}]"),
                    "missing `clients` (the servers that send queries)",
                ))
            }
        };
        let servers = match &r.servers {
            Some(v) => {
                let s = server_list(v, "servers")?;
                if let Some(c) = clients.iter().find(|c| s.contains(c)) {
                    return Err(src.error(
                        v.span(),
                        field("servers"),
                        format!("server {c} is also a client: a machine does not query itself"),
                    ));
                }
                s
            }
            None => (0..nservers).collect(),
        };
        let per_pair = match &r.connections {
            Some(v) => src.int(v, &field("connections"), 1, 65_536)? as usize,
            None => 1,
        };
        // Each connection holds two streams' state for the whole run: the scenario's total is
        // bounded, and what it needs must be memory the machine can give.
        // Every client with every server but itself: counted without the pairs' loop, which
        // the limit must come before.
        let mut is_server = vec![false; nservers];
        for &b in &servers {
            is_server[b] = true;
        }
        let own = clients.iter().filter(|&&a| is_server[a]).count();
        let pairs = clients.len() * servers.len() - own;
        let total = apps.connections.len() as u64 + pairs as u64 * per_pair as u64;
        let at = r.connections.as_ref().map_or(whole.clone(), |v| v.span());
        if total > MAX_CONNECTIONS {
            return Err(src.error(
                at,
                field("connections"),
                format!(
                    "{per_pair} per (client, server) pair over {pairs} pairs bring the scenario's \
                     connections to {total}, more than the limit of {MAX_CONNECTIONS}"
                ),
            ));
        }
        last_connections = Some((at, field("connections")));
        let (transport, group_pg, transport_name) = match &r.group {
            None => (Transport::Roce, None, "roce".to_string()),
            Some(g) => match groups.iter().find(|x| &x.name == g.get_ref()) {
                Some(x) => {
                    // Reuse is a client's pool for its listed flows; an application keeps its
                    // own connections open, so the setting would do nothing here.
                    if let Transport::Tcp(i) = x.transport {
                        let reuse = cfg.tcp_groups[usize::from(i)].tcp.reuse;
                        if reuse != dcsim_tcp::Reuse::None {
                            return Err(src.error(
                                g.span(),
                                field("group"),
                                format!(
                                    "group \"{}\" has reuse = \"{}\", which pools the \
                                     connections of listed flows; an [[rpc]] application keeps \
                                     its own connections open, so it would do nothing here: \
                                     use a group without reuse",
                                    x.name,
                                    reuse.name()
                                ),
                            ));
                        }
                    }
                    let t = match x.transport {
                        Transport::Tcp(_) => format!("tcp group {}", x.name),
                        Transport::Roce => format!("roce group {}", x.name),
                    };
                    (x.transport, x.pg, t)
                }
                None => {
                    let names: Vec<&str> = groups.iter().map(|x| x.name.as_str()).collect();
                    return Err(src.error(
                        g.span(),
                        field("group"),
                        format!(
                            "no [[group]] named \"{}\" (groups: {})",
                            g.get_ref(),
                            if names.is_empty() { "none".into() } else { names.join(", ") }
                        ),
                    ));
                }
            },
        };
        let pg = match &r.pg {
            Some(v) => src.int(v, &field("pg"), 1, 7)? as u8,
            None => group_pg.unwrap_or(3),
        };
        let (query, max_query) = match (&r.query, &r.query_cdf) {
            (Some(_), Some(c)) => {
                return Err(src.error(
                    c.span(),
                    field("query_cdf"),
                    "give either `query` (a fixed size) or `query_cdf`, not both",
                ))
            }
            (Some(q), None) => {
                if let Some(ip) = &r.interpolate {
                    return Err(src.error(
                        ip.span(),
                        field("interpolate"),
                        "only applies to `query_cdf`",
                    ));
                }
                let size = message_size(src, q, &field("query"))?;
                (SizeDist::Fixed(size), size)
            }
            (None, Some(c)) => {
                let cdf = super::generator::load_cdf(src, c, &field("query_cdf"))?;
                if cdf.max_size().is_nan() || cdf.max_size() > MAX_MESSAGE as f64 {
                    return Err(src.error(
                        c.span(),
                        field("query_cdf"),
                        format!(
                            "its largest size, {} bytes, is more than the largest message, \
                             {MAX_MESSAGE} bytes (1 TiB)",
                            cdf.max_size()
                        ),
                    ));
                }
                let mode = match &r.interpolate {
                    None => Interpolation::Linear,
                    Some(ip) => Interpolation::from_name(ip.get_ref()).ok_or_else(|| {
                        let valid: Vec<&str> =
                            Interpolation::ALL.iter().map(|m| m.name()).collect();
                        src.error(
                            ip.span(),
                            field("interpolate"),
                            format!(
                                "unknown interpolation \"{}\" (valid: {})",
                                ip.get_ref(),
                                valid.join(", ")
                            ),
                        )
                    })?,
                };
                let max = cdf.max_size().ceil() as u64;
                (SizeDist::Sampled(Arc::new(CdfSizes { cdf, mode })), max)
            }
            (None, None) => {
                return Err(src.error(
                    whole,
                    format!("rpc[{i}]"),
                    "missing `query` (a size such as \"4KiB\") or `query_cdf`",
                ))
            }
        };
        let response = match &r.response {
            Some(q) => message_size(src, q, &field("response"))?,
            None => 64,
        };
        let start = match &r.start {
            Some(q) => Time::ZERO + src.duration(q, &field("start"), Zero::Allowed)?,
            None => Time::ZERO,
        };
        let stop = match &r.stop {
            Some(q) => Time::ZERO + src.duration(q, &field("stop"), Zero::Rejected)?,
            None => cfg.stop_time,
        };
        if stop <= start {
            let show = |t: Time| crate::units::HumanDuration(t - Time::ZERO);
            return Err(match (&r.stop, &r.start) {
                (Some(q), _) => src.error(
                    q.span(),
                    field("stop"),
                    format!("must be after start ({})", show(start)),
                ),
                // No `stop`: the run's stop time is the one the start is not before.
                (None, at) => src.error(
                    at.as_ref().map_or(whole.clone(), |q| q.span()),
                    field("start"),
                    format!(
                        "must be before the stop time (`simulation.stop_time`, {}), when the \
                         application stops without its own `stop`",
                        show(stop)
                    ),
                ),
            });
        }
        let warmup = match &r.warmup {
            Some(q) => src.duration(q, &field("warmup"), Zero::Allowed)?,
            None => Duration::ZERO,
        };
        let measure_from = start + warmup;
        if measure_from >= stop {
            let at = r.warmup.as_ref().map_or(whole.clone(), |q| q.span());
            return Err(src.error(
                at,
                field("warmup"),
                "the warm-up ends at or after `stop`: nothing would be measured",
            ));
        }
        // Arrivals: closed or open loop.
        let (closed, load) = match (&r.outstanding, &r.load) {
            (Some(_), Some(l)) => {
                return Err(src.error(
                    l.span(),
                    field("load"),
                    "give either `outstanding` (closed loop) or `load` (open loop), not both",
                ))
            }
            (Some(o), None) => {
                (Some(src.int(o, &field("outstanding"), 1, 1_000_000)? as u32), None)
            }
            (None, Some(l)) => {
                let x = *l.get_ref();
                if !(x > 0.0 && x < 1.0) {
                    return Err(src.error(l.span(), field("load"), format!("{x} is not in (0, 1): an open-loop load must be a fraction below 1 of the client's NIC capacity")));
                }
                (None, Some(x))
            }
            (None, None) => {
                return Err(src.error(
                    whole,
                    format!("rpc[{i}]"),
                    "missing `outstanding` (closed loop) or `load` (open loop)",
                ))
            }
        };
        let pick = match &r.connection {
            None => Pick::LeastPending,
            Some(c) => match c.get_ref().as_str() {
                "least-pending" => Pick::LeastPending,
                "least-bytes" => Pick::LeastBytes,
                "random" => Pick::Random,
                v => {
                    return Err(src.error(
                        c.span(),
                        field("connection"),
                        format!(
                            "unknown connection choice \"{v}\" (valid: least-pending, \
                             least-bytes, random)"
                        ),
                    ))
                }
            },
        };
        if closed.is_some() {
            if let Some(c) = &r.connection {
                return Err(src.error(
                    c.span(),
                    field("connection"),
                    "only applies to open-loop clients (`load`): a closed loop keeps its queries on each connection",
                ));
            }
        }
        let mean_query = query.mean();
        // Open-loop load counts the queries' frames on the wire: payload plus each packet's
        // headers, with the connections' framing.
        let (seg, hdr, min) = match transport {
            Transport::Roce => (roce_frame.0, roce_frame.1, 0),
            Transport::Tcp(g) => {
                let t = &cfg.tcp_groups[g as usize].tcp;
                (u64::from(t.mss), u64::from(t.header_bytes), u64::from(t.min_frame_bytes))
            }
        };
        // In u128: a TCP group's header bytes (up to 2^32) times a message's packets (up to
        // 2^40) do not fit in 64 bits.
        let wire = |s: u64| {
            let n = s.div_ceil(seg);
            let last = s - (n - 1) * seg;
            let (full, last) = ((seg + hdr).max(min), (last + hdr).max(min));
            (u128::from(n - 1) * u128::from(full) + u128::from(last)) as f64
        };
        let mean_wire = match &query {
            SizeDist::Fixed(s) => wire(*s),
            SizeDist::Sampled(x) => x.mean_of(&wire),
        };
        let first_conn = apps.connections.len();
        for &a in &clients {
            // Connections of client a, by NIC.
            let mut by_nic: Vec<Vec<u32>> = vec![Vec::new(); nics];
            let pairs: Vec<usize> = servers.iter().copied().filter(|&b| b != a).collect();
            for &b in &pairs {
                // Connections are dealt to the NICs in turn from a hashed offset per pair
                // and end: each NIC of a machine gets an equal share of a pair's connections.
                let offset = |side: u64| {
                    let h = mix(cfg.seed ^ mix(((a as u64) << 32) | ((b as u64) << 1) | side));
                    (h % nics as u64) as usize
                };
                let (c0, s0) = (offset(0), offset(1));
                for k in 0..per_pair {
                    let (ci, si) = ((c0 + k) % nics, (s0 + k) % nics);
                    let client = NodeId::from_idx(a * nics + ci);
                    let server = NodeId::from_idx(b * nics + si);
                    let c = apps.connections.len() as u32;
                    apps.connections.push(Connection {
                        client,
                        server,
                        transport,
                        pg,
                        app: u32::MAX, // set below
                    });
                    by_nic[ci].push(c);
                }
            }
            let total: usize = by_nic.iter().map(Vec::len).sum();
            if total == 0 {
                continue;
            }
            for (ni, conns) in by_nic.into_iter().enumerate() {
                if conns.is_empty() {
                    continue;
                }
                let host = NodeId::from_idx(a * nics + ni);
                let arrivals = match (closed, load) {
                    (Some(o), _) => Arrivals::Closed { outstanding: o },
                    (None, Some(l)) => {
                        // The client's rate, shared among its NICs' apps by connection count.
                        let capacity: f64 = (0..nics)
                            .map(|j| net.nic_rate(NodeId::from_idx(a * nics + j)).0 as f64)
                            .sum();
                        let lambda =
                            l * capacity / (8.0 * mean_wire) * conns.len() as f64 / total as f64;
                        let gap_ps = (1e12 / lambda).round();
                        if !(1.0..1e18).contains(&gap_ps) {
                            let at = r.load.as_ref().map_or(whole.clone(), |q| q.span());
                            return Err(src.error(at, field("load"), format!("gives a mean inter-arrival time of {} ps, which cannot be represented", dcsim_types::params::Num(gap_ps))));
                        }
                        Arrivals::Open { mean_gap: Duration::from_ps(gap_ps as u64), pick }
                    }
                    _ => unreachable!("one of the two"),
                };
                let app = apps.apps.len() as u32;
                for &c in &conns {
                    apps.connections[c as usize].app = app;
                }
                apps.apps.push(RpcApp {
                    name: name.clone(),
                    host,
                    connections: conns,
                    arrivals,
                    query: query.clone(),
                    response: SizeDist::Fixed(response),
                    start,
                    stop,
                    measure_from,
                });
            }
        }
        let connections = apps.connections.len() - first_conn;
        if connections == 0 {
            return Err(src.error(
                whole,
                format!("rpc[{i}]"),
                "no (client, server) pair: every client is its own only server",
            ));
        }
        // Every outstanding query holds its state for the whole run (tens of bytes each, and
        // its messages' streams): bounded over all applications.
        if let (Some(o), Some(at)) = (closed, r.outstanding.as_ref()) {
            outstanding += connections as u64 * u64::from(o);
            if outstanding > MAX_OUTSTANDING {
                return Err(src.error(
                    at.span(),
                    field("outstanding"),
                    format!(
                        "{connections} connections × {o} outstanding queries bring the \
                         scenario's closed-loop queries to {outstanding}, more than the limit of \
                         {MAX_OUTSTANDING}"
                    ),
                ));
            }
        }
        let arrivals = match (closed, load) {
            (Some(o), _) => format!("closed loop, {o} outstanding per connection"),
            (None, Some(l)) => format!("open loop at {:.1}% of the client's NICs", l * 100.0),
            _ => unreachable!(),
        };
        infos.push(RpcInfo {
            name,
            clients,
            servers,
            connections,
            arrivals,
            mean_query,
            max_query,
            response,
            segment: seg,
            transport: transport_name,
            measure_from,
            stop,
        });
    }
    if let Some((at, field)) = last_connections {
        let total = apps.connections.len();
        let bytes = total as f64 * BYTES_PER_CONNECTION as f64;
        if let Some(bytes) = super::limits::memory_refused_bytes(bytes) {
            return Err(src.error(
                at,
                field,
                format!(
                    "the scenario's {total} connections would take about {:.1} GiB to simulate \
                     (up to {BYTES_PER_CONNECTION} bytes each), more memory than this machine \
                     can allocate",
                    bytes as f64 / (1u64 << 30) as f64
                ),
            ));
        }
    }
    if !infos.is_empty() {
        cfg.apps = apps;
    }
    Ok(infos)
}

/// The most connections over a scenario's `[[rpc]]` applications: each holds its two
/// streams' state for the whole run (measured: about 4.4 KB per RoCE connection and 7.4 KB per
/// TCP one on one shard, 8.5 and 15 KB on four), so a million take several GiB. (3.7 million
/// aborted on an allocation.)
pub const MAX_CONNECTIONS: u64 = 1_000_000;

/// The memory one connection may take, bytes: an upper bound on the figures of
/// [`MAX_CONNECTIONS`], for the allocation probe (`limits::memory_refused_bytes`).
pub const BYTES_PER_CONNECTION: u64 = 16 * 1024;

/// The most closed-loop queries outstanding at once over a scenario's `[[rpc]]` applications
/// (connections × `outstanding`, summed): 10 million, a few hundred MB of query state. (1000
/// connections × 100,000 outstanding ran out of memory.)
pub const MAX_OUTSTANDING: u64 = dcsim_core::MAX_OUTSTANDING;

/// The largest message a query or response may be: 1 TiB (a stream offset must not overflow
/// however long a run goes).
pub const MAX_MESSAGE: u64 = 1 << 40;

fn message_size(src: &Source, q: &Qty, field: &str) -> Result<u64, CliError> {
    let b = src.size(q, field, Zero::Rejected)?.0;
    if b > MAX_MESSAGE {
        return Err(src.error(
            q.span(),
            field,
            format!("{b} bytes is more than the largest message, {MAX_MESSAGE} bytes (1 TiB)"),
        ));
    }
    Ok(b)
}

/// SplitMix64's finalizer (connection-to-NIC hashing).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
