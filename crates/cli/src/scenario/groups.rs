//! `[[group]]`: flow groups, each with a transport (TCP with a congestion controller, or the
//! run's RoCE scheme) and its parameters; and `[[queue]]`: the queue discipline of chosen switch
//! ports and priority classes.
//!
//! ```toml
//! [[group]]
//! name = "workload"
//! transport = "tcp"              # "tcp" or "roce" (RoCE flows use the [cc] scheme)
//! cca = "cubic"                  # or { name = "cubic", beta = 0.7 }
//! tcp = { profile = "linux", ecn = "off", handshake = true }
//! pg = 3                         # priority class of the group's flows (default: as listed)
//! mtu = 1500                     # IP MTU: MSS + TCP/IP headers must fit
//!
//! [[queue]]
//! at = "bottleneck"              # or link = [a, b], or switch = n (+ port = p)
//! kind = "fq_codel"
//! flows = 1                      # the discipline's parameters
//! classes = [3]                  # default: 1..=7
//! ```

use std::ops::Range;

use dcsim_core::cc::ProbeControl;
use dcsim_core::config::{PortQdisc, QdiscConfig, SimConfig, TcpGroup, Transport};
use dcsim_core::ids::{NodeId, PortNo};
use dcsim_core::network::{Network, NodeKind};
use dcsim_core::units::BitsPerSec;
use dcsim_tcp::{cca_spec, CcaConfig, TcpConfig, CCA_SPECS, TCP_SPEC};
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec, Value};

use super::Source;
use crate::error::CliError;
use crate::units;

/// The transports a group may name.
pub const TRANSPORTS: &[&str] = &["tcp", "roce"];

/// Port selectors of `[[queue]] at`.
pub const QUEUE_AT: &[&str] = &["bottleneck", "all", "host-facing", "fabric"];

/// A flow group as validated: its name and the transport its flows use.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The name flows refer to.
    pub name: String,
    /// Where its table is, for errors about its flows.
    pub span: Option<Range<usize>>,
    /// The transport (a TCP group's index into `SimConfig::tcp_groups`).
    pub transport: Transport,
    /// The priority class its flows are moved to, if it sets one.
    pub pg: Option<u8>,
    /// HPCC's minimum rate, for a TCP group whose window comes from HPCC's probe law.
    pub hpcc_min_rate: Option<BitsPerSec>,
}

/// Reads a table's keys as the parameters of a plugin, locating errors at their keys.
pub(crate) struct PluginTable<'a> {
    src: &'a Source,
    path: Vec<String>,
    field: String,
    table: &'a toml::Table,
}

impl<'a> PluginTable<'a> {
    /// The table at `path` in `src` (`field` names it in messages, e.g. `group[0].tcp`).
    pub(crate) fn new(
        src: &'a Source,
        path: &[&str],
        field: impl Into<String>,
        table: &'a toml::Table,
    ) -> PluginTable<'a> {
        PluginTable {
            src,
            path: path.iter().map(|s| s.to_string()).collect(),
            field: field.into(),
            table,
        }
    }

    fn span(&self, key: &str) -> Option<Range<usize>> {
        let mut p: Vec<&str> = self.path.iter().map(String::as_str).collect();
        p.push(key);
        self.src.span_of(&p).or_else(|| self.table_span())
    }

    fn table_span(&self) -> Option<Range<usize>> {
        let p: Vec<&str> = self.path.iter().map(String::as_str).collect();
        self.src.span_of(&p)
    }

    /// An error about `key` of this table.
    pub(crate) fn error(&self, key: &str, message: impl Into<String>) -> CliError {
        self.src.error_at(self.span(key), format!("{}.{key}", self.field), message)
    }

    /// Every key but `skip` as a parameter of `spec` (`owner` names the plugin in the
    /// "unknown parameter" message).
    pub(crate) fn params(&self, spec: &PluginSpec, skip: &[&str]) -> Result<Params, CliError> {
        if let Some(key) =
            self.table.keys().find(|k| !skip.contains(&k.as_str()) && spec.param(k).is_none())
        {
            let list = spec.params.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>();
            let list = if list.is_empty() { "none".to_string() } else { list.join(", ") };
            return Err(self.error(
                key,
                format!("unknown parameter `{key}` for \"{}\" (its parameters: {list})", spec.name),
            ));
        }
        let mut given = Vec::new();
        for param in spec.params {
            if let Some(v) = self.table.get(param.name) {
                given.push((param.name, convert(param, v).map_err(|m| self.error(param.name, m))?));
            }
        }
        Ok(Params::from_values(spec.params, given))
    }

    /// A plugin's error, at the key it names if written here, else at the table.
    pub(crate) fn located(&self, e: &ParamError) -> CliError {
        let message = format!("{} {}", e.field, e.message);
        if self.table.contains_key(e.field) {
            self.error(e.field, message)
        } else {
            self.src.error_at(self.table_span(), self.field.clone(), message)
        }
    }
}

/// `value` as a value of `param`'s kind, or what is wrong with it.
pub(crate) fn convert(param: &ParamSpec, value: &toml::Value) -> Result<Value, String> {
    use toml::Value as T;
    let found = value.type_str();
    let non_negative = |v: i64| {
        u64::try_from(v).map_err(|_| format!("{v} is negative; expected a non-negative integer"))
    };
    let unit = |r: Result<Value, units::UnitError>| r.map_err(|e| e.to_string());
    match (param.kind, value) {
        (Kind::Number, T::Float(v)) => Ok(Value::Number(*v)),
        (Kind::Number, T::Integer(v)) => Ok(Value::Number(*v as f64)),
        (Kind::Number, _) => Err(format!("expected a number, found {found}")),
        (Kind::Integer, T::Integer(v)) => {
            let v = non_negative(*v)?;
            if v > u64::from(u32::MAX) {
                return Err(format!("{v} is larger than {}", u32::MAX));
            }
            Ok(Value::Integer(v))
        }
        (Kind::Integer, _) => Err(format!("expected a non-negative integer, found {found}")),
        (Kind::Bool, T::Boolean(v)) => Ok(Value::Bool(*v)),
        (Kind::Bool, _) => Err(format!("expected true or false, found {found}")),
        (Kind::Rate, T::String(s)) => {
            let r = units::parse_rate(s).map_err(|e| e.to_string())?;
            // As `[cc]`'s rates (HPCC over TCP's `rate_ai`, `min_rate`): beyond the largest
            // rate a link may have, a window law's arithmetic is out of its range.
            if r > dcsim_core::units::MAX_RATE {
                return Err(format!(
                    "`{s}` is above the largest rate supported, {}",
                    dcsim_core::units::MAX_RATE_TEXT
                ));
            }
            Ok(Value::Rate(r))
        }
        (Kind::Rate, _) => {
            Err(format!("expected a rate with a unit such as \"40Mbps\", found {found}"))
        }
        (Kind::Duration, T::String(s)) => unit(units::parse_duration(s).map(Value::Duration)),
        (Kind::Duration, _) => Err(format!("needs a unit, e.g. \"1us\" (found {found})")),
        (Kind::Size, T::Integer(v)) => Ok(Value::Size(dcsim_core::units::Bytes(non_negative(*v)?))),
        (Kind::Size, T::String(s)) => unit(units::parse_size(s).map(Value::Size)),
        (Kind::Size, _) => {
            Err(format!("expected a size in bytes such as 1514 or \"32MiB\", found {found}"))
        }
        (Kind::Choice(words), T::String(s)) => match words.iter().find(|w| **w == s.as_str()) {
            Some(w) => Ok(Value::Choice(w)),
            None => Err(format!("unknown value \"{s}\" (valid: {})", words.join(", "))),
        },
        (Kind::Choice(words), _) => {
            Err(format!("expected one of {}, found {found}", words.join(", ")))
        }
    }
}

/// The keys of a `[[group]]` table.
const GROUP_KEYS: &[&str] = &["name", "transport", "cca", "tcp", "pg", "mtu"];

/// Reads `[[group]]`: fills `cfg.tcp_groups` and returns the groups by name.
pub(super) fn groups(
    src: &Source,
    raw: Option<&Vec<toml::Table>>,
    cfg: &mut SimConfig,
) -> Result<Vec<Group>, CliError> {
    let mut out: Vec<Group> = Vec::new();
    for (i, t) in raw.into_iter().flatten().enumerate() {
        let idx = i.to_string();
        let table = PluginTable::new(src, &["group", &idx], format!("group[{i}]"), t);
        if let Some(k) = t.keys().find(|k| !GROUP_KEYS.contains(&k.as_str())) {
            return Err(table
                .error(k, format!("unknown key `{k}` (a group has: {})", GROUP_KEYS.join(", "))));
        }
        let name = match t.get("name") {
            Some(toml::Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => return Err(table.error("name", "expected a non-empty string")),
            None => return Err(table.error("name", "missing: every group needs a name")),
        };
        if out.iter().any(|g| g.name == name) {
            return Err(table.error("name", format!("a group named \"{name}\" already exists")));
        }
        let transport = match t.get("transport") {
            None => "tcp",
            Some(toml::Value::String(s)) if TRANSPORTS.contains(&s.as_str()) => s.as_str(),
            Some(v) => {
                return Err(table.error(
                    "transport",
                    format!("unknown transport {v} (valid: {})", TRANSPORTS.join(", ")),
                ))
            }
        };
        let pg = match t.get("pg") {
            None => None,
            Some(toml::Value::Integer(v)) if (1..=7).contains(v) => Some(*v as u8),
            Some(v) => return Err(table.error("pg", format!("{v} is outside 1..=7"))),
        };
        let (transport, hpcc_min_rate) = if transport == "roce" {
            for k in ["cca", "tcp", "mtu"] {
                if t.contains_key(k) {
                    return Err(table.error(
                        k,
                        format!("`{k}` is a TCP parameter; a RoCE group uses the [cc] scheme"),
                    ));
                }
            }
            (Transport::Roce, None)
        } else {
            let tcp = tcp_config(src, i, t, &table)?;
            let (cca, probe, min_rate) = cca_config(src, i, t, &table)?;
            let index = u16::try_from(cfg.tcp_groups.len()).expect("few groups");
            cfg.tcp_groups.push(TcpGroup { name: name.clone(), tcp, cca, probe });
            (Transport::Tcp(index), min_rate)
        };
        out.push(Group { name, span: table.table_span(), transport, pg, hpcc_min_rate });
    }
    Ok(out)
}

fn tcp_config(
    src: &Source,
    i: usize,
    t: &toml::Table,
    group: &PluginTable<'_>,
) -> Result<TcpConfig, CliError> {
    let empty = toml::Table::new();
    let tt = match t.get("tcp") {
        None => &empty,
        Some(toml::Value::Table(tt)) => tt,
        Some(v) => {
            return Err(group.error(
                "tcp",
                format!("expected a table of TCP parameters, found {}", v.type_str()),
            ))
        }
    };
    let idx = i.to_string();
    let table = PluginTable::new(src, &["group", &idx, "tcp"], format!("group[{i}].tcp"), tt);
    let params = table.params(&TCP_SPEC, &[])?;
    let tcp = TcpConfig::from_params(&params).map_err(|e| table.located(&e))?;
    let mtu = match t.get("mtu") {
        None => 1500,
        Some(toml::Value::Integer(v)) if (68..=65_535).contains(v) => *v as u32,
        Some(v) => return Err(group.error("mtu", format!("{v} is outside 68..=65535 bytes"))),
    };
    // The IP packet of a full segment: the frame less the 14-byte Ethernet header.
    let ip = u64::from(tcp.mss) + u64::from(tcp.header_bytes).saturating_sub(14);
    if ip > u64::from(mtu) {
        let key = if tt.contains_key("mss") { "mss" } else { "profile" };
        let e = ParamError::new(
            "mss",
            format!(
                "{} B plus {} B of TCP/IP headers exceeds the group's MTU of {mtu} B",
                tcp.mss,
                tcp.header_bytes.saturating_sub(14)
            ),
        );
        return Err(if tt.contains_key(key) {
            table.located(&e)
        } else if t.contains_key("mtu") {
            // The profile's MSS is what the written MTU is too small for.
            group.error(
                "mtu",
                format!(
                    "{mtu} B cannot carry a full segment of the group: mss {} B plus {} B of \
                     TCP/IP headers; raise it, or set a smaller `tcp.mss`",
                    tcp.mss,
                    tcp.header_bytes.saturating_sub(14)
                ),
            )
        } else {
            group.located(&e)
        });
    }
    // Frames of their own size (a SYN with its options, the padded minimum) fit the MTU too:
    // a 100 MB one was dropped by every buffer and the flow never completed.
    let most = u64::from(mtu) + 14;
    for (name, v) in
        [("syn_frame_bytes", tcp.syn_frame_bytes), ("min_frame_bytes", tcp.min_frame_bytes)]
    {
        if u64::from(v) > most {
            let e = ParamError::new(
                name,
                format!(
                    "{v} B exceeds the group's MTU of {mtu} B plus the 14-byte Ethernet header"
                ),
            );
            return Err(table.located(&e));
        }
    }
    Ok(tcp)
}

/// A group's controller; HPCC (`cca = "hpcc"`) is a probe-driven window law from `dcsim-hpcc`
/// over a socket whose window is set from outside (with its minimum rate, for warnings).
type Controller = (CcaConfig, Option<ProbeControl>, Option<BitsPerSec>);

fn cca_config(
    src: &Source,
    i: usize,
    t: &toml::Table,
    group: &PluginTable<'_>,
) -> Result<Controller, CliError> {
    let known = || {
        let mut v = CCA_SPECS.iter().map(|s| s.name).collect::<Vec<_>>();
        v.push(dcsim_hpcc::PROBE_SPEC.name);
        v.join(", ")
    };
    let empty = toml::Table::new();
    let (name, tt, path): (String, &toml::Table, Vec<String>) = match t.get("cca") {
        None => ("cubic".to_string(), &empty, vec![]),
        Some(toml::Value::String(s)) => (s.clone(), &empty, vec![]),
        Some(toml::Value::Table(tt)) => match tt.get("name") {
            Some(toml::Value::String(s)) => (s.clone(), tt, vec!["cca".to_string()]),
            _ => return Err(group.error("cca", format!("needs `name` (one of {})", known()))),
        },
        Some(v) => {
            return Err(group.error(
                "cca",
                format!("expected a controller name or table, found {}", v.type_str()),
            ))
        }
    };
    let spec = if name == dcsim_hpcc::PROBE_SPEC.name {
        Some(&dcsim_hpcc::PROBE_SPEC)
    } else {
        cca_spec(&name)
    };
    let Some(spec) = spec else {
        return Err(group.error(
            "cca",
            format!("unknown congestion controller \"{name}\" (valid: {})", known()),
        ));
    };
    let idx = i.to_string();
    let mut p = vec!["group", idx.as_str()];
    p.extend(path.iter().map(String::as_str));
    let table = PluginTable::new(src, &p, format!("group[{i}].cca"), tt);
    let params = table.params(spec, &["name"])?;
    if name == dcsim_hpcc::PROBE_SPEC.name {
        let f =
            dcsim_hpcc::HpccProbeFactory::from_params(&params).map_err(|e| table.located(&e))?;
        let min_rate = f.params.min_rate;
        return Ok((
            CcaConfig::External,
            Some(ProbeControl(std::sync::Arc::new(f))),
            Some(min_rate),
        ));
    }
    let cca = CcaConfig::from_params(&name, &params).map_err(|e| table.located(&e))?;
    Ok((cca, None, None))
}

/// The keys of a `[[queue]]` table besides the discipline's parameters.
const QUEUE_KEYS: &[&str] = &["kind", "at", "link", "switch", "port", "classes"];

/// Reads `[[queue]]` into `cfg.switch.qdiscs`, in order (a later rule wins where rules
/// overlap). Returns each table's discipline and classes (a bit per class), in order (for the
/// warnings).
pub(super) fn queues(
    src: &Source,
    raw: Option<&Vec<toml::Table>>,
    net: &Network,
    cfg: &mut SimConfig,
) -> Result<Vec<(QdiscConfig, u8)>, CliError> {
    let mut tables = Vec::new();
    for (i, t) in raw.into_iter().flatten().enumerate() {
        let idx = i.to_string();
        let table = PluginTable::new(src, &["queue", &idx], format!("queue[{i}]"), t);
        let names = || dcsim_aqm::SPECS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ");
        let kind = match t.get("kind") {
            Some(toml::Value::String(s)) => s.clone(),
            Some(v) => {
                return Err(table.error("kind", format!("expected a name, found {}", v.type_str())))
            }
            None => return Err(table.error("kind", format!("missing: one of {}", names()))),
        };
        let Some(spec) = dcsim_aqm::spec(&kind) else {
            return Err(table.error(
                "kind",
                format!("unknown queue discipline \"{kind}\" (valid: {})", names()),
            ));
        };
        let params = table.params(spec, QUEUE_KEYS)?;
        let qdisc = dcsim_aqm::config_from_params(&kind, &params).map_err(|e| table.located(&e))?;
        let classes = match t.get("classes") {
            None => 0xfe,
            Some(toml::Value::Array(a)) if !a.is_empty() => {
                let mut bits = 0u8;
                for v in a {
                    match v.as_integer() {
                        Some(c) if (1..=7).contains(&c) && bits & (1 << c) != 0 => {
                            return Err(table.error("classes", format!("class {c} is given twice")))
                        }
                        Some(c) if (1..=7).contains(&c) => bits |= 1 << c,
                        _ => {
                            return Err(table.error(
                                "classes",
                                format!(
                                    "{v} is not a class 1..=7 (class 0 carries control frames)"
                                ),
                            ))
                        }
                    }
                }
                bits
            }
            Some(v) => {
                return Err(table.error(
                    "classes",
                    format!("expected a non-empty list of classes 1..=7, found {v}"),
                ))
            }
        };
        let ports = select_ports(net, t, &table)?;
        if ports.is_empty() {
            return Err(src.error_at(
                table.table_span(),
                format!("queue[{i}]"),
                "selects no switch port in this topology",
            ));
        }
        for (node, port) in ports {
            cfg.switch.qdiscs.push(PortQdisc { node, port, classes, qdisc: qdisc.clone() });
        }
        tables.push((qdisc, classes));
    }
    Ok(tables)
}

/// The switch egress ports a `[[queue]]` (or `[output] qlen_ports`) names.
pub(crate) fn select_ports(
    net: &Network,
    t: &toml::Table,
    table: &PluginTable<'_>,
) -> Result<Vec<(NodeId, PortNo)>, CliError> {
    let given: Vec<&str> =
        ["at", "link", "switch"].into_iter().filter(|k| t.contains_key(*k)).collect();
    if given.len() != 1 {
        let key = given.get(1).copied().unwrap_or("at");
        return Err(table.error(
            key,
            "give exactly one of `at` (\"bottleneck\", \"all\", \"host-facing\", \"fabric\"), \
             `link = [a, b]` or `switch = n`",
        ));
    }
    if t.contains_key("port") && given[0] != "switch" {
        return Err(table.error("port", "`port` goes with `switch`"));
    }
    let is_switch = |n: NodeId| net.kinds().get(n.idx()) == Some(&NodeKind::Switch);
    let switch_ports = || {
        net.kinds().iter().enumerate().filter(|(_, k)| **k == NodeKind::Switch).flat_map(
            |(n, _)| {
                let node = NodeId(n as u32);
                (0..net.ports(node).len()).map(move |p| (node, PortNo(p as u16)))
            },
        )
    };
    let node_arg = |key: &str, v: &toml::Value| -> Result<NodeId, CliError> {
        match v.as_integer() {
            Some(n) if n >= 0 && (n as usize) < net.node_count() => Ok(NodeId(n as u32)),
            _ => Err(table.error(
                key,
                format!("{v} is not a node of this topology (nodes are 0..{})", net.node_count()),
            )),
        }
    };
    match given[0] {
        "at" => {
            let at = t["at"].as_str().unwrap_or("");
            let peer_is_host = |(n, p): &(NodeId, PortNo)| {
                net.kinds()[net.ports(*n)[p.idx()].peer.idx()] == NodeKind::Host
            };
            Ok(match at {
                "all" => switch_ports().collect(),
                "host-facing" => switch_ports().filter(peer_is_host).collect(),
                "fabric" => switch_ports().filter(|x| !peer_is_host(x)).collect(),
                "bottleneck" => {
                    // The slowest links between switches, both directions.
                    let rate = |(n, p): &(NodeId, PortNo)| net.ports(*n)[p.idx()].rate;
                    let fabric: Vec<_> = switch_ports().filter(|x| !peer_is_host(x)).collect();
                    let min = fabric.iter().map(rate).min().unwrap_or(BitsPerSec(0));
                    fabric.into_iter().filter(|x| rate(x) == min).collect()
                }
                _ => {
                    return Err(table.error(
                        "at",
                        format!("unknown port set {} (valid: {})", t["at"], QUEUE_AT.join(", ")),
                    ))
                }
            })
        }
        "link" => {
            let pair = t["link"].as_array().filter(|a| a.len() == 2);
            let Some(pair) = pair else {
                return Err(table
                    .error("link", "expected [a, b]: the egress port of switch a towards node b"));
            };
            let (a, b) = (node_arg("link", &pair[0])?, node_arg("link", &pair[1])?);
            if !is_switch(a) {
                return Err(table.error("link", format!("node {a} is not a switch")));
            }
            match net.ports(a).iter().position(|p| p.peer == b) {
                Some(p) => Ok(vec![(a, PortNo(p as u16))]),
                None => Err(table.error("link", format!("there is no link from {a} to {b}"))),
            }
        }
        _ => {
            let s = node_arg("switch", &t["switch"])?;
            if !is_switch(s) {
                return Err(table.error("switch", format!("node {s} is not a switch")));
            }
            let n = net.ports(s).len();
            match t.get("port") {
                None => Ok((0..n).map(|p| (s, PortNo(p as u16))).collect()),
                Some(v) => match v.as_integer() {
                    Some(p) if p >= 0 && (p as usize) < n => Ok(vec![(s, PortNo(p as u16))]),
                    _ => Err(table.error(
                        "port",
                        format!("{v} is not a port of switch {s} (ports are 0..{n})"),
                    )),
                },
            }
        }
    }
}
