//! Scenario files: TOML in, a [`ValidScenario`] out.
//!
//! Loading goes parse → validate in one place ([`load`]): the file is deserialized into raw
//! structs that mirror the TOML exactly (`deny_unknown_fields`, every value kept with its
//! span), then every value is checked and converted — units parsed, defaults filled in from
//! `SimConfig::default()`, the topology built and checked, the ECN map checked against the
//! topology's switch port rates, the flows checked against its hosts, the scheme and its
//! parameters resolved. Every error names the file, line, column and field. Nothing is
//! written anywhere; a scenario that loads runs without user-input errors.
//!
//! The schema is documented field by field in `docs/scenario.md`.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use dcsim_core::config::{
    EcmpSeed, EcnParams, FlowSpec, FlowStartOrder, NicConfig, Serialization, SimConfig,
    SwitchConfig, Transport, WindowMode,
};
use dcsim_core::ids::{FlowId, NodeId, PortNo};
use dcsim_core::network::{Network, NodeKind, RoutingTable};
use dcsim_core::units::{BitsPerSec, Bytes, Duration, Time};
use dcsim_topology::Topology;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::error::CliError;
use crate::flowfile;
use crate::schemes::{self, CcChoice, CcParams, EcnDefault, Profile, SCHEMES};
use crate::spans::{line_col, KeyTree};
use crate::units::{self, HumanDuration, UnitError};

mod events;
mod generator;
mod groups;
pub mod limits;
mod rpc;
pub mod warnings;

pub use events::{RtoMode, ACTIONS, DEFAULT_RTO, DEFAULT_RTO_BACKOFF, DEFAULT_RTO_RETRIES};
pub use rpc::RpcInfo;

pub use groups::{Group, QUEUE_AT, TRANSPORTS};

pub use generator::WorkloadInfo;

// ---------------------------------------------------------------------------------------------
// Raw structs: the TOML as written.
// ---------------------------------------------------------------------------------------------

/// A quantity as written: a TOML integer, float or string, converted by `units` later (when
/// the field it belongs to, and so its unit and limits, is known).
#[derive(Clone, Debug, PartialEq)]
enum RawQty {
    Int(i64),
    Float(f64),
    Str(String),
}

impl<'de> Deserialize<'de> for RawQty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawQty;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a quoted quantity with a unit, such as \"1MB\" or \"1us\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawQty, E> {
                Ok(RawQty::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawQty, E> {
                i64::try_from(v).map(RawQty::Int).map_err(|_| E::custom("integer too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawQty, E> {
                Ok(RawQty::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawQty, E> {
                Ok(RawQty::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

type Qty = Spanned<RawQty>;
type Int = Spanned<i64>;

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    #[serde(default, deserialize_with = "table")]
    simulation: Option<RawSimulation>,
    #[serde(default, deserialize_with = "table")]
    topology: Option<RawTopology>,
    #[serde(default, deserialize_with = "table")]
    flows: Option<RawFlows>,
    cc: Option<toml::Table>,
    #[serde(default, deserialize_with = "table")]
    switch: Option<RawSwitch>,
    #[serde(default, deserialize_with = "table")]
    nic: Option<RawNic>,
    group: Option<Vec<toml::Table>>,
    queue: Option<Vec<toml::Table>>,
    rpc: Option<Vec<Spanned<rpc::RawRpc>>>,
    #[serde(default, deserialize_with = "table")]
    output: Option<RawOutput>,
    events: Option<Vec<Spanned<events::RawEvent>>>,
    #[serde(default, deserialize_with = "table")]
    routing: Option<events::RawRouting>,
}

/// A section that must be a table (`[flows]`), deserialized only from one. Serde's derived
/// structs also accept a sequence, field by field, so `[[flows]]` (an array of tables) would
/// otherwise be read as `flows`' fields in order and reported as a wrong type for the first.
fn table<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct TableOnly<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for TableOnly<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a table (a `[section]`, not an array `[[section]]` or a value)")
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_map(TableOnly(std::marker::PhantomData)).map(Some)
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    pfc_log: Option<bool>,
    queue_lengths: Option<bool>,
    qlen_mon: Option<Spanned<RawQlenMon>>,
    qlen_classes: Option<bool>,
    qlen_ports: Option<toml::Value>,
}

/// `[output] qlen_mon` as written.
#[derive(Deserialize, Debug, Default)]
#[serde(expecting = "a table (`qlen_mon = { start, end, interval, bin }`)")]
#[serde(deny_unknown_fields)]
struct RawQlenMon {
    start: Option<Qty>,
    end: Option<Qty>,
    interval: Option<Qty>,
    bin: Option<Qty>,
}

/// The most bins `[output] qlen_mon` may need per port (switch buffer / bin).
pub const MAX_SAMPLER_BINS: u64 = dcsim_core::MAX_SAMPLER_BINS;

/// The largest rate a scenario may give (100 Tbps): a 43-byte PFC frame still takes 3.44 ps.
pub use dcsim_core::units::MAX_RATE;

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawSimulation {
    stop_time: Option<Qty>,
    seed: Option<u64>,
    serialization: Option<Spanned<String>>,
    flow_start: Option<Spanned<String>>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    k: Option<Int>,
    oversubscription: Option<Int>,
    pods: Option<Int>,
    tors_per_pod: Option<Int>,
    aggs_per_pod: Option<Int>,
    hosts_per_tor: Option<Int>,
    cores_per_agg: Option<Int>,
    cores: Option<Int>,
    servers: Option<Int>,
    nics_per_server: Option<Int>,
    leaves: Option<Int>,
    spines: Option<Int>,
    hosts_per_leaf: Option<Int>,
    left_hosts: Option<Int>,
    right_hosts: Option<Int>,
    senders: Option<Int>,
    host_rate: Option<Qty>,
    fabric_rate: Option<Qty>,
    bottleneck_rate: Option<Qty>,
    delay: Option<Qty>,
    bottleneck_delay: Option<Qty>,
    error_rate_per_link: Option<Spanned<f64>>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawFlows {
    file: Option<Spanned<String>>,
    list: Option<Vec<Spanned<RawFlow>>>,
    workload: Option<generator::RawWorkload>,
    incast: Option<generator::RawIncast>,
    lognormal: Option<generator::RawLognormal>,
    /// The group of every flow that does not name one.
    group: Option<Spanned<String>>,
    /// The most flows the scenario may have (`limits::DEFAULT_MAX_FLOWS`).
    max_flows: Option<Int>,
}

#[derive(Deserialize, Debug)]
#[serde(
    expecting = "a flow: a table with src, dst and size (`{ src = 0, dst = 1, size = \"1MB\" }`)"
)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    src: Int,
    dst: Int,
    size: Qty,
    start: Option<Qty>,
    pg: Option<Int>,
    dport: Option<Int>,
    group: Option<Spanned<String>>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawSwitch {
    buffer: Option<Qty>,
    ecn: Option<bool>,
    pfc: Option<bool>,
    reserve: Option<Qty>,
    resume_offset: Option<Qty>,
    headroom_bdp_multiple: Option<Int>,
    ecn_map: Option<Vec<Spanned<RawEcn>>>,
    pfc_alpha: Option<Spanned<f64>>,
    lossy_admission: Option<Spanned<String>>,
    egress_cap: Option<Qty>,
    egress_alpha: Option<Spanned<f64>>,
    ecmp_seed: Option<Spanned<String>>,
}

#[derive(Deserialize, Debug)]
#[serde(expecting = "an `ecn_map` entry: a table with rate, kmin, kmax and pmax")]
#[serde(deny_unknown_fields)]
struct RawEcn {
    rate: Qty,
    kmin: Qty,
    kmax: Qty,
    pmax: Spanned<f64>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawNic {
    mtu: Option<Qty>,
    ack_interval: Option<Qty>,
    chunk: Option<Qty>,
    back_to_chunk: Option<bool>,
    nack_interval: Option<Qty>,
    rate_bound: Option<bool>,
    ack_high_prio: Option<bool>,
    window: Option<Spanned<String>>,
    global_t: Option<bool>,
    rto: Option<Qty>,
    rto_retries: Option<Int>,
    rto_backoff: Option<Int>,
}

// ---------------------------------------------------------------------------------------------
// The source document and its errors.
// ---------------------------------------------------------------------------------------------

/// A scenario file's text, with what is needed to point errors at its lines.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    text: String,
    tree: KeyTree,
    /// The folder relative file names are resolved against, when it is not the path's own
    /// folder (a sweep cell's scenario is generated from a base file elsewhere).
    base_dir: Option<PathBuf>,
}

/// The files a scenario's text names: every string value that, read as a path (relative to
/// the scenario's folder unless absolute), is an existing file: its topology and flow files,
/// CDFs and the like. Used to keep an output from replacing one of them.
pub fn named_files(path: &Path, text: &str) -> Vec<PathBuf> {
    fn walk(v: &toml::Value, base: &Path, out: &mut Vec<PathBuf>) {
        match v {
            toml::Value::String(s) if !s.is_empty() && s.len() < 4096 => {
                let p = base.join(s);
                if p.is_file() {
                    out.push(p);
                }
            }
            toml::Value::Array(a) => a.iter().for_each(|x| walk(x, base, out)),
            toml::Value::Table(t) => t.values().for_each(|x| walk(x, base, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = text.parse::<toml::Table>() {
        let base = path.parent().unwrap_or(Path::new("."));
        walk(&toml::Value::Table(v), base, &mut out);
    }
    out
}

impl Source {
    /// Wraps the text of the scenario at `path` (as the user wrote the path).
    pub fn new(path: impl Into<PathBuf>, text: String) -> Source {
        let tree = KeyTree::parse(&text);
        Source { path: path.into(), text, tree, base_dir: None }
    }

    /// Like [`Source::new`], but file names in the scenario are resolved against `base_dir`
    /// instead of `path`'s folder (for documents generated from another file).
    pub fn with_base_dir(path: impl Into<PathBuf>, text: String, base_dir: PathBuf) -> Source {
        Source { base_dir: Some(base_dir), ..Source::new(path, text) }
    }

    /// The scenario text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The scenario's path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The span of the value at the table path `keys`, if the document has it.
    pub(crate) fn span_of(&self, keys: &[&str]) -> Option<Range<usize>> {
        self.tree.span_of(keys)
    }

    /// An error about `field`, at `span`.
    /// The choice `value` names among `all` (name, choice), or an error at `field`:
    /// `unknown WHAT "value" (valid: a, b)`.
    fn named<T: Copy>(
        &self,
        value: &Spanned<String>,
        field: &str,
        what: &str,
        all: &[(&str, T)],
    ) -> Result<T, CliError> {
        let name = value.get_ref();
        all.iter().find(|(n, _)| n == name).map(|&(_, t)| t).ok_or_else(|| {
            let valid: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            self.error(
                value.span(),
                field,
                format!("unknown {what} \"{name}\" (valid: {})", valid.join(", ")),
            )
        })
    }

    pub(crate) fn error(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> CliError {
        CliError::Field {
            file: self.path.clone(),
            at: line_col(&self.text, span.start),
            field: field.into(),
            message: message.into(),
        }
    }

    /// An error about `field`, at `span` if known.
    pub(crate) fn error_at(
        &self,
        span: Option<Range<usize>>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> CliError {
        match span {
            Some(s) => self.error(s, field, message),
            None => CliError::Scenario {
                file: self.path.clone(),
                message: format!("field `{}`: {}", field.into(), message.into()),
            },
        }
    }

    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> CliError {
        let span = e.span().unwrap_or(0..0);
        let message = e.message().trim().lines().map(str::trim).collect::<Vec<_>>().join("; ");
        let message = plain_types(&message);
        CliError::Toml {
            file: self.path.clone(),
            at: line_col(&self.text, span.start),
            field: self.tree.path_at(&self.text, &span),
            message,
        }
    }

    /// A file named in the scenario, relative to the scenario's folder.
    pub(crate) fn resolve(&self, rel: &str) -> PathBuf {
        let p = Path::new(rel);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        if let Some(dir) = &self.base_dir {
            return dir.join(p);
        }
        match self.path.parent() {
            Some(dir) => dir.join(p),
            None => p.to_path_buf(),
        }
    }
}

/// Serde's message with its Rust type names (`expected i64`) in words a scenario's author
/// reads (`expected an integer`).
fn plain_types(message: &str) -> String {
    const NAMES: [(&str, &str); 9] = [
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected u16", "expected a non-negative integer"),
        ("expected u8", "expected a non-negative integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
    ];
    let mut out = message.to_string();
    for (rust, words) in NAMES {
        // Only whole words: `expected u8` must not rewrite `expected u8x`.
        let mut from = 0;
        while let Some(i) = out[from..].find(rust).map(|i| i + from) {
            let end = i + rust.len();
            if out[end..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                from = end;
                continue;
            }
            out.replace_range(i..end, words);
            from = i + words.len();
        }
    }
    out
}

/// An error in a file the scenario names (a topology, flow or CDF file): `FILE:LINE:COL: field
/// `x`: message` where the error has a position (`(line, column, field)`), else `FILE: message`.
pub(crate) fn file_error(
    file: &Path,
    pos: Option<(usize, usize, String)>,
    message: String,
) -> CliError {
    match pos {
        Some((line, col, field)) => CliError::Field {
            file: file.to_path_buf(),
            at: crate::spans::LineCol { line, col },
            field,
            message,
        },
        None => CliError::Input { file: file.to_path_buf(), message },
    }
}

/// A topology file's error, located in its text.
fn topology_file_error(file: &Path, text: &str, e: &dcsim_topology::TopologyError) -> CliError {
    let pos = e.file_position(text).map(|p| (p.line, p.col, p.field));
    file_error(file, pos, e.detail())
}

/// A flow file's error.
fn flow_file_error(file: &Path, e: flowfile::FlowFileError) -> CliError {
    file_error(file, Some((e.line, e.col, e.field)), e.message)
}

/// The largest text file dcsim reads whole (a scenario, a flow, topology or CDF file, an ns-3
/// config): 4 GiB, checked by the file's length before reading. A flow file of 50 million
/// flows, the default `max_flows`, is about 2 GB.
pub const MAX_TEXT_FILE: u64 = 4 << 30;

/// The most dcsim reads from such an input when it is not a regular file (a pipe, a device
/// such as `/dev/zero`), whose length it cannot know before reading: 1 GiB. A larger input
/// has to be given as a file.
pub const MAX_TEXT_STREAM: u64 = 1 << 30;

/// Reads a whole text file, naming it in the error.
///
/// # Errors
/// [`CliError::Read`], also for a file beyond [`MAX_TEXT_FILE`] (or a stream beyond
/// [`MAX_TEXT_STREAM`]), which is refused rather than read until memory runs out.
pub fn read_file(path: &Path) -> Result<String, CliError> {
    read_text(path).map_err(|source| CliError::Read { path: path.to_path_buf(), source })
}

/// [`read_file`]'s bounded read.
pub(crate) fn read_text(path: &Path) -> std::io::Result<String> {
    read_text_within(path, MAX_TEXT_FILE, MAX_TEXT_STREAM)
}

/// Reads `path` whole if it holds at most `file_limit` bytes (a regular file, checked before
/// reading) or `stream_limit` (anything else, checked as it is read).
fn read_text_within(path: &Path, file_limit: u64, stream_limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    let limit = if meta.is_file() { file_limit } else { stream_limit };
    let too_large = || {
        let size = if limit >= 1 << 30 {
            format!("{} GiB", limit >> 30)
        } else {
            format!("{limit} bytes")
        };
        std::io::Error::other(if meta.is_file() {
            format!("larger than {size}, the most dcsim reads from one file")
        } else {
            format!(
                "more than {size} from a stream (not a regular file), the most dcsim reads \
                 from one; give it as a file"
            )
        })
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    f.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| {
        // Where the text stops being UTF-8, as a line and column an editor shows.
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&bytes[start..at]).chars().count() + 1;
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text: line {line}, column {column} (the file's byte {}) holds 0x{:02x}, \
                 which is not valid UTF-8 there",
                at + 1,
                bytes[at]
            ),
        )
    })
}

impl Source {
    /// Reads a file named by the scenario field `field` (whose value is `rel`); a failure
    /// points at that field as well as naming the file and the OS error.
    fn read_referenced(
        &self,
        rel: &Spanned<String>,
        field: &str,
    ) -> Result<(PathBuf, String), CliError> {
        let file = self.resolve(rel.get_ref());
        match read_text(&file) {
            Ok(text) => Ok((file, text)),
            Err(e) => {
                Err(self.error(rel.span(), field, format!("cannot read {}: {e}", file.display())))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Value conversion helpers.
// ---------------------------------------------------------------------------------------------

/// Whether zero is acceptable for a quantity.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Zero {
    Allowed,
    Rejected,
}

impl Source {
    fn size(&self, q: &Qty, field: &str, zero: Zero) -> Result<Bytes, CliError> {
        let bytes = match q.get_ref() {
            RawQty::Int(v) if *v < 0 => {
                return Err(self.error(q.span(), field, format!("{v} is negative; expected a size in bytes")))
            }
            RawQty::Int(v) => Bytes(*v as u64),
            RawQty::Float(v) => {
                return Err(self.error(
                    q.span(),
                    field,
                    format!("{v} is not a whole number of bytes; write an integer or a string such as \"1.5KB\""),
                ))
            }
            RawQty::Str(s) => units::parse_size(s).map_err(|e| self.unit_error(q, field, e))?,
        };
        if zero == Zero::Rejected && bytes.0 == 0 {
            return Err(self.error(q.span(), field, "must be at least 1 byte"));
        }
        Ok(bytes)
    }

    fn duration(&self, q: &Qty, field: &str, zero: Zero) -> Result<Duration, CliError> {
        let d = match q.get_ref() {
            RawQty::Str(s) => units::parse_duration(s).map_err(|e| self.unit_error(q, field, e))?,
            RawQty::Int(v) => return Err(self.needs_unit(q, field, &v.to_string(), "\"1us\"")),
            RawQty::Float(v) => return Err(self.needs_unit(q, field, &v.to_string(), "\"1us\"")),
        };
        if zero == Zero::Rejected && d == Duration::ZERO {
            return Err(self.error(q.span(), field, "must be greater than zero"));
        }
        Ok(d)
    }

    fn rate(&self, q: &Qty, field: &str) -> Result<BitsPerSec, CliError> {
        let (r, text) = match q.get_ref() {
            RawQty::Str(s) => (units::parse_rate(s).map_err(|e| self.unit_error(q, field, e))?, s),
            RawQty::Int(v) => return Err(self.needs_unit(q, field, &v.to_string(), "\"100Gbps\"")),
            RawQty::Float(v) => {
                return Err(self.needs_unit(q, field, &v.to_string(), "\"100Gbps\""))
            }
        };
        if r.0 == 0 {
            return Err(self.error(q.span(), field, "rate must be greater than zero"));
        }
        if r > MAX_RATE {
            // Faster, a minimum-size frame takes under 4 ps: at some rates none at all, and a
            // NIC could send a whole flow in zero simulated time (unbounded memory).
            let msg = format!(
                "`{text}` is above the largest rate supported, {}",
                dcsim_core::units::MAX_RATE_TEXT
            );
            return Err(self.error(q.span(), field, msg));
        }
        Ok(r)
    }

    fn needs_unit(&self, q: &Qty, field: &str, text: &str, example: &str) -> CliError {
        let sign = if text.starts_with('-') { " (and must not be negative)" } else { "" };
        self.error(q.span(), field, format!("{text} needs a unit, e.g. {example}{sign}"))
    }

    fn unit_error(&self, q: &Qty, field: &str, e: UnitError) -> CliError {
        self.error(q.span(), field, e.to_string())
    }

    /// An integer in `min..=max`.
    pub(crate) fn int(&self, v: &Int, field: &str, min: i64, max: i64) -> Result<i64, CliError> {
        let x = *v.get_ref();
        if x < min || x > max {
            // Small ranges (priorities, ports) are stated; large ones only by the violated end.
            let what = if max <= i64::from(u16::MAX) {
                format!("{x} is outside {min}..={max}")
            } else if x > max {
                format!("{x} is larger than the limit of {max}")
            } else if min == 0 {
                format!("{x} is negative")
            } else {
                format!("{x} must be at least {min}")
            };
            return Err(self.error(v.span(), field, what));
        }
        Ok(x)
    }

    fn count(&self, v: &Int, field: &str) -> Result<usize, CliError> {
        let max = dcsim_topology::builders::MAX_NODES as i64;
        self.int(v, field, 1, max).map(|x| x as usize)
    }
}

// ---------------------------------------------------------------------------------------------
// The validated scenario.
// ---------------------------------------------------------------------------------------------

/// A scenario that passed every check: ready to hand to the simulator.
#[derive(Debug)]
pub struct ValidScenario {
    /// The scenario file as given.
    pub path: PathBuf,
    /// How the topology was made, for summaries (`leaf-spine: 4 leaves x 2 spines, ...`).
    pub topology: String,
    /// NICs (host nodes) per server: `[topology] nics_per_server` of `alibaba-2pod` (2 by
    /// default there), 1 for every other kind. Server `s`'s NIC `i` is host node
    /// `s * nics_per_server + i`; with 1, servers are hosts.
    pub nics_per_server: usize,
    /// The network.
    pub net: Network,
    /// ECMP routes over it.
    pub routes: RoutingTable,
    /// Switch/NIC parameters, stop time and seed.
    pub cfg: SimConfig,
    /// The flows, ids equal to positions.
    pub flows: Vec<FlowSpec>,
    /// The congestion-control scheme.
    pub cc: CcChoice,
    /// What `[flows] workload` generated, if the scenario has one.
    pub workload: Option<WorkloadInfo>,
    /// The `[[rpc]]` applications (their connections and clients are in `cfg.apps`).
    pub rpc: Vec<RpcInfo>,
    /// `[nic] rto = "auto"` turned the RoCE retransmission timeout on (RoCE packets can be
    /// lost in this scenario).
    pub rto_auto: bool,
    /// What the scenario probably does not mean ([`warnings`]); commands print them after
    /// `warning: `.
    pub warnings: Vec<warnings::Warning>,
    /// Where `[output] qlen_ports` is written, if it is: blamed by
    /// [`ValidScenario::monitor_warnings`] when no queue monitor is on to watch the ports.
    pub qlen_ports_at: Option<(crate::spans::LineCol, String)>,
}

impl ValidScenario {
    /// Sentences for `validate`'s description: the link events and the RoCE retransmission
    /// timeout in effect.
    pub fn describe_faults(&self) -> Vec<String> {
        events::describe(&self.cfg, &self.net, self.rto_auto)
    }
}

impl ValidScenario {
    /// The payload bytes of a full packet of flow `flow` (an index into `flows`): the MTU for
    /// RoCE, its group's MSS for TCP.
    pub fn segment_of(&self, flow: usize) -> u64 {
        limits::segment(&self.cfg, self.cfg.transport_of(flow)).max(1)
    }

    /// Whether the scenario has TCP flow groups or explicit queue disciplines (its
    /// `counters.csv` then lists their counters even when zero).
    pub fn uses_tcp_or_qdiscs(&self) -> bool {
        !self.cfg.tcp_groups.is_empty() || !self.cfg.switch.qdiscs.is_empty()
    }

    /// The warnings of running the scenario on `threads` threads
    /// ([`warnings::thread_warnings`]).
    pub fn thread_warnings(&self, threads: usize) -> Vec<warnings::Warning> {
        warnings::thread_warnings(self, threads)
    }

    /// The warnings of the monitors as they are now, after the command's flags (`run
    /// --queue-lengths`) are applied to [`ValidScenario::cfg`] ([`warnings::monitor_warnings`]).
    pub fn monitor_warnings(&self) -> Vec<warnings::Warning> {
        warnings::monitor_warnings(self)
    }

    /// The warnings of running the scenario on `threads` threads and, if given, `shards`
    /// shards ([`warnings::parallel_warnings`]).
    pub fn parallel_warnings(
        &self,
        threads: usize,
        shards: Option<usize>,
    ) -> Vec<warnings::Warning> {
        warnings::parallel_warnings(self, threads, shards)
    }

    /// Runs the scenario on `threads` threads (results do not depend on it), recording every
    /// switch passage of the data packets of the flows in `trace`.
    ///
    /// # Errors
    /// The simulator's own validation ([`schemes::run_with_scheme`]).
    pub fn run(
        self,
        threads: usize,
        trace: Vec<FlowId>,
    ) -> Result<schemes::RunOutput, dcsim_core::SimError> {
        self.run_streaming(threads, trace, None)
    }

    /// [`ValidScenario::run`], handing completed queries to `query_sink` as the run goes
    /// (see [`schemes::SimInput::query_sink`]).
    ///
    /// # Errors
    /// The simulator's own validation ([`schemes::run_with_scheme`]).
    pub fn run_streaming(
        self,
        threads: usize,
        trace: Vec<FlowId>,
        query_sink: Option<schemes::QuerySink>,
    ) -> Result<schemes::RunOutput, dcsim_core::SimError> {
        self.run_reporting(threads, trace, query_sink, None)
    }

    /// [`ValidScenario::run_streaming`], telling `progress` how far the run has got a few
    /// times a second (see [`schemes::SimInput::progress`]).
    ///
    /// # Errors
    /// The simulator's own validation ([`schemes::run_with_scheme`]).
    pub fn run_reporting(
        self,
        threads: usize,
        trace: Vec<FlowId>,
        query_sink: Option<schemes::QuerySink>,
        progress: Option<schemes::ProgressFn>,
    ) -> Result<schemes::RunOutput, dcsim_core::SimError> {
        self.run_parallel(schemes::Parallelism::threads(threads), trace, query_sink, progress)
    }

    /// [`ValidScenario::run_reporting`] with the shards and the partitioner chosen too (results
    /// depend on neither).
    ///
    /// # Errors
    /// The simulator's own validation ([`schemes::run_with_scheme`]).
    pub fn run_parallel(
        self,
        parallel: schemes::Parallelism,
        trace: Vec<FlowId>,
        query_sink: Option<schemes::QuerySink>,
        progress: Option<schemes::ProgressFn>,
    ) -> Result<schemes::RunOutput, dcsim_core::SimError> {
        self.run_parallel_into(parallel, trace, query_sink, None, progress)
    }

    /// [`ValidScenario::run_parallel`], handing the window trace (with
    /// `parallel.trace_windows`) to `window_sink` as the run goes rather than collecting it
    /// (see [`schemes::SimInput::window_sink`]).
    ///
    /// # Errors
    /// The simulator's own validation ([`schemes::run_with_scheme`]).
    pub fn run_parallel_into(
        self,
        parallel: schemes::Parallelism,
        trace: Vec<FlowId>,
        query_sink: Option<schemes::QuerySink>,
        window_sink: Option<schemes::WindowSink>,
        progress: Option<schemes::ProgressFn>,
    ) -> Result<schemes::RunOutput, dcsim_core::SimError> {
        let ValidScenario { net, routes, cfg, flows, cc, .. } = self;
        let input = schemes::SimInput {
            net,
            routes,
            cfg,
            flows,
            threads: parallel.threads,
            shards: parallel.shards,
            partitioner: parallel.partitioner,
            trace_windows: parallel.trace_windows,
            rebalance: parallel.rebalance,
            pin_threads: parallel.pin_threads,
            trace,
            query_sink,
            window_sink,
            progress,
        };
        schemes::run_with_scheme(cc, input)
    }
}

/// Where a link rate of the built topology came from, to point ECN-map errors at it.
struct RateOrigin {
    rate: BitsPerSec,
    field: String,
    span: Option<Range<usize>>,
    /// The field was not written: the rate is the kind's default for it.
    defaulted: bool,
}

/// The memory parsing a scenario's TOML may take at its peak, per byte of text: the parser's
/// document (every key and value with its span and formatting), the tree of spans kept for
/// error messages, and the typed scenario. 59× measured on a 12 MB list of 200,000 inline
/// flows (716 MB at the peak, about 3.5 KB per flow; the same flows in a flow file take a
/// tenth of that).
pub const PARSE_BYTES_PER_TEXT_BYTE: u64 = 64;

/// Refuses a TOML text whose parse the machine would not grant the memory for now
/// ([`PARSE_BYTES_PER_TEXT_BYTE`] per byte, probed as the generators' flow counts are), so that
/// a scenario with millions of inline flows gets an error naming the file instead of an abort
/// on an allocation while it is parsed.
///
/// # Errors
/// [`CliError::Scenario`] naming `path`, the memory asked for, and the flow file as the way out.
pub(crate) fn check_parse_memory(path: &Path, text: &str) -> Result<(), CliError> {
    let need = text.len() as f64 * PARSE_BYTES_PER_TEXT_BYTE as f64;
    match limits::memory_refused_bytes(need) {
        None => Ok(()),
        Some(bytes) => Err(CliError::Scenario {
            file: path.to_path_buf(),
            message: format!(
                "{:.1} MiB of TOML would take about {:.1} GiB to parse (up to \
                 {PARSE_BYTES_PER_TEXT_BYTE} bytes per byte of text), more memory than this \
                 machine can allocate; give a long flow list as a flow file (`[flows] file`, \
                 docs/scenario.md) rather than inline",
                text.len() as f64 / (1u64 << 20) as f64,
                bytes as f64 / (1u64 << 30) as f64
            ),
        }),
    }
}

/// Reads, parses and validates the scenario at `path`. `seed` overrides `simulation.seed`.
///
/// # Errors
/// The first problem found, naming the file, line, column and field.
pub fn load(path: &Path, seed: Option<u64>) -> Result<ValidScenario, CliError> {
    let text = read_file(path)?;
    check_parse_memory(path, &text)?;
    let src = Source::new(path, text);
    validate(&src, seed)
}

/// Parses and validates an already-read scenario.
///
/// # Errors
/// As [`load`], except that no scenario file is read (flow and topology files still are).
pub fn validate(src: &Source, seed: Option<u64>) -> Result<ValidScenario, CliError> {
    let raw: RawScenario = toml::from_str(&src.text).map_err(|e| src.toml_error(&e))?;

    let mut cfg = SimConfig::default();
    let sim = raw.simulation.unwrap_or_default();
    if let Some(q) = &sim.stop_time {
        cfg.stop_time =
            Time::from_ps(src.duration(q, "simulation.stop_time", Zero::Rejected)?.as_ps());
    }
    if let Some(s) = sim.seed {
        cfg.seed = s;
    }
    if let Some(o) = &raw.output {
        cfg.monitor.pfc_log = o.pfc_log.unwrap_or(false);
        cfg.monitor.queue_lengths = o.queue_lengths.unwrap_or(false);
        cfg.monitor.per_class = o.qlen_classes.unwrap_or(false);
    }
    if let Some(m) = &sim.serialization {
        let all = Serialization::ALL.map(|m| (m.name(), m));
        cfg.serialization = src.named(m, "simulation.serialization", "serialization mode", &all)?;
    }
    if let Some(m) = &sim.flow_start {
        let all = FlowStartOrder::ALL.map(|m| (m.name(), m));
        cfg.flow_start = src.named(m, "simulation.flow_start", "flow start order", &all)?;
    }
    if let Some(s) = seed {
        cfg.seed = s;
    }

    let topo_raw = raw.topology.ok_or_else(|| CliError::Scenario {
        file: src.path.clone(),
        message: "missing required section [topology] (e.g. kind = \"leaf-spine\")".into(),
    })?;
    let BuiltTopology { topo: mut topology, desc: description, origins, nics_per_server, file } =
        build_topology(src, &topo_raw)?;
    if let Some(e) = &topo_raw.error_rate_per_link {
        let p = *e.get_ref();
        if !(0.0..=1.0).contains(&p) {
            return Err(src.error(
                e.span(),
                "topology.error_rate_per_link",
                format!("{p} is outside [0, 1]"),
            ));
        }
        // Like the reference's ERROR_RATE_PER_LINK (spec §2.5, quirk 24): only links whose
        // own loss probability is 0 take the network-wide rate.
        for l in topology.links.iter_mut().filter(|l| l.loss == 0.0) {
            l.loss = p;
        }
    }
    let size_at = match &topo_raw.path {
        Some(p) => ("topology.path", Some(p.span())),
        None => ("topology.kind", topo_raw.kind.as_ref().map(Spanned::span)),
    };
    limits::check_topology_size(src, &topology, size_at)?;
    let net = topology.validate().map_err(|e| match &file {
        Some((path, text)) => topology_file_error(path, text, &e),
        None => src.error_at(src.span_of(&["topology"]), "topology", e.to_string()),
    })?;

    // The scheme first: its profile supplies defaults for [switch] and [nic].
    let cc = cc_choice(src, raw.cc.as_ref())?;
    let profile = schemes::profile(cc.name());
    cfg.switch = switch_config(src, raw.switch.as_ref(), &net, profile.ecn)?;
    check_ecn(src, &net, &cfg.switch, raw.switch.as_ref(), &origins)?;
    if let Some(m) = raw.output.as_ref().and_then(|o| o.qlen_mon.as_ref()) {
        cfg.monitor.qlen_sampler = Some(qlen_mon(src, m, &cfg)?);
    }
    if let Some(v) = raw.output.as_ref().and_then(|o| o.qlen_ports.as_ref()) {
        cfg.monitor.ports = Some(qlen_ports(src, v, &net)?);
    }
    cfg.nic = nic_config(src, raw.nic.as_ref(), &profile)?;
    let rto = match raw.nic.as_ref() {
        Some(n) => {
            events::rto_keys(src, n.rto.as_ref(), n.rto_retries.as_ref(), n.rto_backoff.as_ref())?
        }
        None => events::RtoKeys::default(),
    };

    let max_work = RoutingTable::MAX_WORK;
    let routes = dcsim_topology::compute_routes_within(&net, max_work).map_err(|n| {
        let (field, span) = match &topo_raw.path {
            Some(p) => ("topology.path", Some(p.span())),
            None => ("topology.kind", src.span_of(&["topology", "kind"])),
        };
        src.error_at(
            span,
            field,
            format!(
                "routing this network takes {n} steps (one breadth-first search over every \
                 node and both ends of every link per switch that hosts hang from), more \
                 than the limit of {max_work}; simulate a smaller network"
            ),
        )
    })?;
    let has_apps = raw.rpc.as_ref().is_some_and(|r| !r.is_empty());
    let mut fl = flows(src, raw.flows.as_ref(), &net, cfg.seed, has_apps)?;
    let groups = groups::groups(src, raw.group.as_ref(), &mut cfg)?;
    // `[flows] group` names a group even when every flow gives its own.
    if let Some(g) = raw.flows.as_ref().and_then(|f| f.group.as_ref()) {
        if !groups.iter().any(|x| &x.name == g.get_ref()) {
            let known: Vec<&str> = groups.iter().map(|x| x.name.as_str()).collect();
            return Err(src.error(
                g.span(),
                "flows.group",
                format!(
                    "no [[group]] named \"{}\" (groups: {})",
                    g.get_ref(),
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                ),
            ));
        }
    }
    let flow_classes = assign_groups(src, &groups, &fl.refs, &mut fl.flows, &mut cfg)?;
    let queue_tables = groups::queues(src, raw.queue.as_ref(), &net, &mut cfg)?;
    let roce_frame = (u64::from(cfg.nic.mtu), u64::from(cc.header_mode().data_wire(0)));
    let rpc =
        rpc::rpcs(src, raw.rpc.as_ref(), &net, nics_per_server, &groups, roce_frame, &mut cfg)?;
    connection_classes(src, &groups, flow_classes, &mut cfg)?;
    events::events(src, raw.events.as_ref(), raw.routing.as_ref(), &net, &mut cfg)?;
    let data_header = u64::from(cc.header_mode().data_wire(0));
    let frames = warnings::Frames::of(&cfg, &fl.flows, data_header);
    let rto_auto = events::apply_rto(&rto, &net, &fl.flows, &mut cfg);

    // The limits (see `limits`): every time the run derives from these values fits.
    let bounds = limits::Bounds::new(&net, &routes, &cfg);
    let (delay_at, rate_at) = limit_fields(src, &topo_raw, &origins, bounds.slowest());
    limits::check_round_trip(src, &bounds, delay_at, rate_at)?;
    check_flow_sizes(src, &bounds, &fl, &cfg, raw.flows.as_ref())?;
    check_query_sizes(src, &bounds, &rpc)?;
    limits::check_headroom(src, &net, &cfg)?;
    let qlen_ports_at = src
        .span_of(&["output", "qlen_ports"])
        .map(|s| (line_col(src.text(), s.start), "output.qlen_ports".to_string()));
    let FlowsOut { flows, workload, .. } = fl;
    let roce_used = (0..flows.len()).any(|i| cfg.transport_of(i) == Transport::Roce)
        || cfg.apps.connections.iter().any(|c| c.transport == Transport::Roce);
    let mut warnings =
        warnings::collect(src, &net, &routes, &cfg, &flows, workload.as_ref(), &frames);
    limits::check_ns3_frames(src, &net, &cfg, data_header, roce_used)?;
    warnings::min_rates(src, bounds.slowest(), &groups, (&cc, roce_used), &mut warnings);
    warnings::tcp_groups(src, &groups, &cfg, &mut warnings);
    warnings::small_queue_limits(src, &cfg, &queue_tables, &frames, &mut warnings);
    warnings::pfc_headroom(src, &net, &cfg, &flows, &frames, &mut warnings);
    warnings::unused_queue_classes(src, &cfg, &flows, &queue_tables, &mut warnings);

    Ok(ValidScenario {
        path: src.path.clone(),
        topology: description,
        nics_per_server,
        net,
        routes,
        cfg,
        flows,
        cc,
        workload,
        rpc,
        rto_auto,
        warnings,
        qlen_ports_at,
    })
}

/// Reads `[output] qlen_ports`: one port selection (`at = "host-facing"`, `link = [a, b]`,
/// `switch = n` with an optional `port = p`, as in `[[queue]]`) or an array of them; the union,
/// sorted.
fn qlen_ports(
    src: &Source,
    v: &toml::Value,
    net: &Network,
) -> Result<Vec<(NodeId, PortNo)>, CliError> {
    const FIELD: &str = "output.qlen_ports";
    let tables: Vec<(Vec<String>, String, &toml::Table)> = match v {
        toml::Value::Table(t) => vec![(vec![], FIELD.to_string(), t)],
        toml::Value::Array(a) if !a.is_empty() => {
            let mut out = Vec::with_capacity(a.len());
            for (i, e) in a.iter().enumerate() {
                let Some(t) = e.as_table() else {
                    return Err(src.error_at(
                        src.span_of(&["output", "qlen_ports"]),
                        format!("{FIELD}[{i}]"),
                        format!("expected a table such as {{ at = \"host-facing\" }}, found {e}"),
                    ));
                };
                out.push((vec![i.to_string()], format!("{FIELD}[{i}]"), t));
            }
            out
        }
        _ => {
            return Err(src.error_at(
                src.span_of(&["output", "qlen_ports"]),
                FIELD,
                format!(
                    "expected a port selection such as {{ at = \"host-facing\" }}, \
                     {{ link = [a, b] }} or {{ switch = n, port = p }}, or a non-empty array of \
                     them; found {v}"
                ),
            ))
        }
    };
    let mut ports = Vec::new();
    for (idx, field, t) in tables {
        let mut path = vec!["output", "qlen_ports"];
        path.extend(idx.iter().map(String::as_str));
        let table = groups::PluginTable::new(src, &path, field, t);
        if let Some(k) = t.keys().find(|k| !["at", "link", "switch", "port"].contains(&k.as_str()))
        {
            return Err(table.error(k, "unknown key (valid: at, link, switch, port)"));
        }
        let sel = groups::select_ports(net, t, &table)?;
        if sel.is_empty() {
            return Err(table.error("at", "selects no switch port in this topology"));
        }
        ports.extend(sel);
    }
    ports.sort_unstable();
    ports.dedup();
    Ok(ports)
}

/// Reads `[output] qlen_mon`: start (default 0), end (required), interval (default 100 ns),
/// bin (default 1000 B), checked against the switch buffer.
fn qlen_mon(
    src: &Source,
    m: &Spanned<RawQlenMon>,
    cfg: &SimConfig,
) -> Result<dcsim_core::qmon::SamplerWindow, CliError> {
    let f = |k: &str| format!("output.qlen_mon.{k}");
    let r = m.get_ref();
    let time = |q: &Option<Qty>, k: &str, default: Duration, zero: Zero| match q {
        Some(q) => src.duration(q, &f(k), zero),
        None => Ok(default),
    };
    let start = time(&r.start, "start", Duration::ZERO, Zero::Allowed)?;
    let Some(end_q) = &r.end else {
        return Err(src.error(m.span(), f("end"), "is required (when sampling ends)"));
    };
    let end = src.duration(end_q, &f("end"), Zero::Allowed)?;
    if end < start {
        return Err(src.error(
            end_q.span(),
            f("end"),
            format!(
                "the window ends ({}) before it starts ({})",
                HumanDuration(end),
                HumanDuration(start)
            ),
        ));
    }
    let interval = time(&r.interval, "interval", Duration::from_ns(100), Zero::Rejected)?;
    let bin = match &r.bin {
        Some(q) => src.size(q, &f("bin"), Zero::Rejected)?.0,
        None => 1000,
    };
    // Saturating: a buffer of u64::MAX bytes in 1-byte bins wrapped to 0 bins.
    let bins = (cfg.switch.buffer.0 / bin).saturating_add(1);
    if bins > MAX_SAMPLER_BINS {
        let at = r.bin.as_ref().map_or(m.span(), |q| q.span());
        return Err(src.error(
            at,
            f("bin"),
            format!(
                "bins of {bin} B would need {bins} bins per port to hold the {} switch buffer, \
                 more than the limit of {MAX_SAMPLER_BINS}; use wider bins",
                cfg.switch.buffer
            ),
        ));
    }
    Ok(dcsim_core::qmon::SamplerWindow {
        start: Time::from_ps(start.as_ps()),
        end: Time::from_ps(end.as_ps()),
        interval,
        bin,
    })
}

// ---------------------------------------------------------------------------------------------
// [topology]
// ---------------------------------------------------------------------------------------------

/// The topology kinds `[topology] kind` accepts.
pub const TOPOLOGY_KINDS: &[&str] = &[
    "paper-fat-tree",
    "fat-tree",
    "clos",
    "leaf-spine",
    "dumbbell",
    "star",
    "alibaba-2pod",
    "file",
];

/// The parameters each kind accepts (besides `kind`).
fn kind_params(kind: &str) -> &'static [&'static str] {
    match kind {
        "paper-fat-tree" => &[],
        "fat-tree" => &["k", "oversubscription", "host_rate", "fabric_rate", "delay"],
        "clos" => &[
            "pods",
            "tors_per_pod",
            "aggs_per_pod",
            "hosts_per_tor",
            "cores_per_agg",
            "host_rate",
            "fabric_rate",
            "delay",
        ],
        "leaf-spine" => {
            &["leaves", "spines", "hosts_per_leaf", "host_rate", "fabric_rate", "delay"]
        }
        "dumbbell" => &[
            "left_hosts",
            "right_hosts",
            "host_rate",
            "bottleneck_rate",
            "delay",
            "bottleneck_delay",
        ],
        "star" => &["senders", "host_rate", "delay"],
        "alibaba-2pod" => &[
            "pods",
            "tors_per_pod",
            "aggs_per_pod",
            "cores",
            "servers",
            "nics_per_server",
            "host_rate",
            "fabric_rate",
            "delay",
        ],
        "file" => &["path"],
        _ => &[],
    }
}

impl RawTopology {
    /// `(name, span)` of every parameter given.
    fn given(&self) -> Vec<(&'static str, Range<usize>)> {
        let mut v = Vec::new();
        let mut int = |name: &'static str, x: &Option<Int>| {
            if let Some(x) = x {
                v.push((name, x.span()));
            }
        };
        int("k", &self.k);
        int("oversubscription", &self.oversubscription);
        int("pods", &self.pods);
        int("tors_per_pod", &self.tors_per_pod);
        int("aggs_per_pod", &self.aggs_per_pod);
        int("hosts_per_tor", &self.hosts_per_tor);
        int("cores_per_agg", &self.cores_per_agg);
        int("cores", &self.cores);
        int("servers", &self.servers);
        int("nics_per_server", &self.nics_per_server);
        int("leaves", &self.leaves);
        int("spines", &self.spines);
        int("hosts_per_leaf", &self.hosts_per_leaf);
        int("left_hosts", &self.left_hosts);
        int("right_hosts", &self.right_hosts);
        int("senders", &self.senders);
        for (name, q) in [
            ("host_rate", &self.host_rate),
            ("fabric_rate", &self.fabric_rate),
            ("bottleneck_rate", &self.bottleneck_rate),
            ("delay", &self.delay),
            ("bottleneck_delay", &self.bottleneck_delay),
        ] {
            if let Some(q) = q {
                v.push((name, q.span()));
            }
        }
        if let Some(p) = &self.path {
            v.push(("path", p.span()));
        }
        v.sort_by_key(|(_, s)| s.start);
        v
    }
}

/// Builder inputs of one topology kind, with defaults applied and origins recorded.
struct TopoCtx<'a> {
    src: &'a Source,
    raw: &'a RawTopology,
    kind: &'a Spanned<String>,
    origins: Vec<RateOrigin>,
}

impl TopoCtx<'_> {
    fn required<'b, T>(&self, v: &'b Option<T>, name: &str) -> Result<&'b T, CliError> {
        v.as_ref().ok_or_else(|| {
            self.src.error(
                self.kind.span(),
                "topology",
                format!(
                    "topology kind \"{}\" needs `{name}` (its parameters: {})",
                    self.kind.get_ref(),
                    kind_params(self.kind.get_ref()).join(", ")
                ),
            )
        })
    }

    fn count(&self, v: &Option<Int>, name: &str) -> Result<usize, CliError> {
        let v = self.required(v, name)?;
        self.src.count(v, &format!("topology.{name}"))
    }

    /// A count that has a default when not written.
    fn count_or(&self, v: &Option<Int>, name: &str, default: usize) -> Result<usize, CliError> {
        match v {
            Some(v) => self.src.count(v, &format!("topology.{name}")),
            None => Ok(default),
        }
    }

    fn rate(
        &mut self,
        v: &Option<Qty>,
        name: &str,
        default: BitsPerSec,
    ) -> Result<BitsPerSec, CliError> {
        let field = format!("topology.{name}");
        let (rate, span, defaulted) = match v {
            Some(q) => (self.src.rate(q, &field)?, Some(q.span()), false),
            None => (default, Some(self.kind.span()), true),
        };
        self.origins.push(RateOrigin { rate, field, span, defaulted });
        Ok(rate)
    }

    fn delay(&self, default: Duration) -> Result<Duration, CliError> {
        match &self.raw.delay {
            Some(q) => self.src.duration(q, "topology.delay", Zero::Allowed),
            None => Ok(default),
        }
    }
}

/// What [`build_topology`] made: the topology, its description, where its rates came from,
/// the NICs per server (1 but for `alibaba-2pod`), and for `kind = "file"` the file and its
/// text (to locate validation errors in it).
struct BuiltTopology {
    topo: Topology,
    desc: String,
    origins: Vec<RateOrigin>,
    nics_per_server: usize,
    file: Option<(PathBuf, String)>,
}

fn build_topology(src: &Source, raw: &RawTopology) -> Result<BuiltTopology, CliError> {
    use dcsim_topology::builders;

    let kind = raw.kind.as_ref().ok_or_else(|| {
        src.error_at(
            src.span_of(&["topology"]),
            "topology.kind",
            format!("missing; expected one of {}", TOPOLOGY_KINDS.join(", ")),
        )
    })?;
    let k = kind.get_ref().as_str();
    if !TOPOLOGY_KINDS.contains(&k) {
        return Err(src.error(
            kind.span(),
            "topology.kind",
            format!("unknown topology kind \"{k}\" (valid kinds: {})", TOPOLOGY_KINDS.join(", ")),
        ));
    }
    let allowed = kind_params(k);
    if let Some((name, span)) = raw.given().into_iter().find(|(n, _)| !allowed.contains(n)) {
        let list = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
        return Err(src.error(
            span,
            format!("topology.{name}"),
            format!(
                "`{name}` is not a parameter of topology kind \"{k}\" (its parameters: {list})"
            ),
        ));
    }

    let mut c = TopoCtx { src, raw, kind, origins: Vec::new() };
    let g100 = BitsPerSec::gbps(100);
    let g400 = BitsPerSec::gbps(400);
    let us1 = Duration::from_us(1);
    let builder_error = |e: dcsim_topology::TopologyError| match e {
        // Beyond the builders' own guard, so beyond the scenario's limit, which is the one to
        // name (as `limits::check_topology_size` does for what the builders make).
        dcsim_topology::TopologyError::TooLarge { .. } => src.error(
            kind.span(),
            "topology.kind",
            format!(
                "the topology would have more than {} nodes and links in all (the limit); \
                 simulate a smaller network",
                limits::MAX_TOPOLOGY_SIZE
            ),
        ),
        e => src.error(kind.span(), "topology", e.to_string()),
    };
    let mut nics_per_server = 1;
    let mut file_text = None;
    let (topo, desc) = match k {
        "paper-fat-tree" => {
            c.origins.push(RateOrigin {
                rate: g100,
                field: "topology.kind".into(),
                span: Some(kind.span()),
                defaulted: false,
            });
            c.origins.push(RateOrigin {
                rate: g400,
                field: "topology.kind".into(),
                span: Some(kind.span()),
                defaulted: false,
            });
            (
                builders::paper_fat_tree(),
                "paper-fat-tree (320 hosts, 100Gbps host links, 400Gbps fabric, 1 µs per link)"
                    .to_string(),
            )
        }
        "fat-tree" => {
            let d = builders::FatTreeParams::default();
            // 0 is read too, to be told what k must be (it said "must be at least 1").
            let max = dcsim_topology::builders::MAX_NODES as i64;
            let kk = src.int(c.required(&raw.k, "k")?, "topology.k", 0, max)? as usize;
            if !kk.is_multiple_of(2) || kk < 2 {
                let span = raw.k.as_ref().map(Spanned::span).unwrap_or_else(|| kind.span());
                return Err(src.error(
                    span,
                    "topology.k",
                    format!("{kk} must be even and at least 2"),
                ));
            }
            let over = match &raw.oversubscription {
                Some(v) => src.count(v, "topology.oversubscription")?,
                None => d.oversubscription,
            };
            let p = builders::FatTreeParams {
                oversubscription: over,
                host_rate: c.rate(&raw.host_rate, "host_rate", d.host_rate)?,
                fabric_rate: c.rate(&raw.fabric_rate, "fabric_rate", d.fabric_rate)?,
                delay: c.delay(d.delay)?,
            };
            let t = builders::fat_tree(kk, &p).map_err(builder_error)?;
            (
                t,
                format!(
                    "fat-tree (k = {kk}, oversubscription {over}, {} host links, {} fabric, {} per link)",
                    p.host_rate,
                    p.fabric_rate,
                    HumanDuration(p.delay)
                ),
            )
        }
        "clos" => {
            let p = builders::ClosParams {
                pods: c.count(&raw.pods, "pods")?,
                tors_per_pod: c.count(&raw.tors_per_pod, "tors_per_pod")?,
                aggs_per_pod: c.count(&raw.aggs_per_pod, "aggs_per_pod")?,
                hosts_per_tor: c.count(&raw.hosts_per_tor, "hosts_per_tor")?,
                cores_per_agg: c.count(&raw.cores_per_agg, "cores_per_agg")?,
                host_rate: c.rate(&raw.host_rate, "host_rate", g100)?,
                fabric_rate: c.rate(&raw.fabric_rate, "fabric_rate", g400)?,
                delay: c.delay(us1)?,
            };
            let t = builders::three_tier_clos(&p).map_err(builder_error)?;
            (
                t,
                format!(
                    "clos ({} pods of {} ToRs and {} aggregation switches, {} hosts per ToR, \
                     {} core uplinks per aggregation switch, {} host links, {} fabric, {} per link)",
                    p.pods,
                    p.tors_per_pod,
                    p.aggs_per_pod,
                    p.hosts_per_tor,
                    p.cores_per_agg,
                    p.host_rate,
                    p.fabric_rate,
                    HumanDuration(p.delay)
                ),
            )
        }
        "leaf-spine" => {
            let leaves = c.count(&raw.leaves, "leaves")?;
            let spines = c.count(&raw.spines, "spines")?;
            let hpl = c.count(&raw.hosts_per_leaf, "hosts_per_leaf")?;
            let hr = c.rate(&raw.host_rate, "host_rate", g100)?;
            let fr = c.rate(&raw.fabric_rate, "fabric_rate", g400)?;
            let delay = c.delay(us1)?;
            let t =
                builders::leaf_spine(leaves, spines, hpl, hr, fr, delay).map_err(builder_error)?;
            let delay = HumanDuration(delay);
            (
                t,
                format!(
                    "leaf-spine ({leaves} leaves x {spines} spines, {hpl} hosts per leaf, \
                     {hr} host links, {fr} fabric, {delay} per link)"
                ),
            )
        }
        "dumbbell" => {
            let left = c.count(&raw.left_hosts, "left_hosts")?;
            let right = c.count(&raw.right_hosts, "right_hosts")?;
            let hr = c.rate(&raw.host_rate, "host_rate", g100)?;
            let br = c.rate(&raw.bottleneck_rate, "bottleneck_rate", g100)?;
            let delay = c.delay(us1)?;
            match &raw.bottleneck_delay {
                None => {
                    let t =
                        builders::dumbbell(left, right, hr, br, delay).map_err(builder_error)?;
                    let delay = HumanDuration(delay);
                    (
                        t,
                        format!(
                            "dumbbell ({left} + {right} hosts, {hr} host links, {br} bottleneck, \
                             {delay} per link)"
                        ),
                    )
                }
                Some(q) => {
                    let bd = src.duration(q, "topology.bottleneck_delay", Zero::Allowed)?;
                    let t = builders::dumbbell_asym(left, right, hr, delay, br, bd)
                        .map_err(builder_error)?;
                    let (delay, bd) = (HumanDuration(delay), HumanDuration(bd));
                    (
                        t,
                        format!(
                            "dumbbell ({left} + {right} hosts, {hr} host links of {delay}, {br} \
                             bottleneck of {bd})"
                        ),
                    )
                }
            }
        }
        "star" => {
            let senders = c.count(&raw.senders, "senders")?;
            let hr = c.rate(&raw.host_rate, "host_rate", g100)?;
            let delay = c.delay(us1)?;
            let t = builders::star(senders, hr, delay).map_err(builder_error)?;
            let delay = HumanDuration(delay);
            (t, format!("star ({senders} senders + 1 receiver, {hr} links, {delay} per link)"))
        }
        "alibaba-2pod" => {
            let (p, desc) = alibaba_2pod_params(&mut c)?;
            nics_per_server = p.nics_per_server;
            (builders::alibaba_2pod(&p).map_err(builder_error)?, desc)
        }
        _ => {
            // "file"
            let rel = c.required(&raw.path, "path")?;
            let (file, text) = src.read_referenced(rel, "topology.path")?;
            let t = dcsim_topology::parse_ns3(&text)
                .map_err(|e| topology_file_error(&file, &text, &e))?;
            let mut rates: Vec<BitsPerSec> = t.links.iter().map(|l| l.rate).collect();
            rates.sort();
            rates.dedup();
            for rate in rates {
                c.origins.push(RateOrigin {
                    rate,
                    field: "topology.path".into(),
                    span: Some(rel.span()),
                    defaulted: false,
                });
            }
            let desc = format!("file {}", file.display());
            file_text = Some((file, text));
            (t, desc)
        }
    };
    Ok(BuiltTopology { topo, desc, origins: c.origins, nics_per_server, file: file_text })
}

/// The parameters of `alibaba-2pod` (defaults: the testbed), each impossible value reported at
/// its own field, and the topology's description.
fn alibaba_2pod_params(
    c: &mut TopoCtx<'_>,
) -> Result<(dcsim_topology::Alibaba2PodParams, String), CliError> {
    let (src, raw) = (c.src, c.raw);
    let d = dcsim_topology::Alibaba2PodParams::TESTBED;
    let pods = c.count_or(&raw.pods, "pods", d.pods)?;
    let tors_per_pod = c.count_or(&raw.tors_per_pod, "tors_per_pod", d.tors_per_pod)?;
    let aggs_per_pod = c.count_or(&raw.aggs_per_pod, "aggs_per_pod", d.aggs_per_pod)?;
    let cores = c.count_or(&raw.cores, "cores", d.cores)?;
    let servers = c.count_or(&raw.servers, "servers", d.servers)?;
    let nics_per_server = match &raw.nics_per_server {
        Some(v) => src.int(v, "topology.nics_per_server", 1, 2)? as usize,
        None => d.nics_per_server,
    };
    // The span of a parameter if written, else of `kind` (the value is a default).
    let at = |v: &Option<Int>| v.as_ref().map_or_else(|| c.kind.span(), Spanned::span);
    if !servers.is_multiple_of(pods) {
        return Err(src.error(
            at(&raw.servers),
            "topology.servers",
            format!(
                "{servers} servers cannot be split evenly over {pods} pods (servers must be a \
                 multiple of pods)"
            ),
        ));
    }
    if nics_per_server > tors_per_pod {
        let field = if raw.nics_per_server.is_some() { "nics_per_server" } else { "tors_per_pod" };
        let span = if raw.nics_per_server.is_some() {
            at(&raw.nics_per_server)
        } else {
            at(&raw.tors_per_pod)
        };
        return Err(src.error(
            span,
            format!("topology.{field}"),
            format!(
                "{nics_per_server} NICs per server need at least {nics_per_server} ToRs per pod \
                 (each NIC on its own ToR), found tors_per_pod = {tors_per_pod}; use \
                 nics_per_server = 1"
            ),
        ));
    }
    let p = dcsim_topology::Alibaba2PodParams {
        pods,
        tors_per_pod,
        aggs_per_pod,
        cores,
        servers,
        nics_per_server,
        host_rate: c.rate(&raw.host_rate, "host_rate", d.host_rate)?,
        fabric_rate: c.rate(&raw.fabric_rate, "fabric_rate", d.fabric_rate)?,
        delay: c.delay(d.delay)?,
    };
    let homing = if nics_per_server == 2 { "dual-homed" } else { "single-homed" };
    let desc = format!(
        "alibaba-2pod ({pods} pods of {tors_per_pod} ToRs and {aggs_per_pod} aggregation \
         switches, {cores} cores, {servers} {homing} servers ({} host NICs), {} host links, {} \
         fabric, {} per link)",
        servers * nics_per_server,
        p.host_rate,
        p.fabric_rate,
        HumanDuration(p.delay)
    );
    Ok((p, desc))
}

// ---------------------------------------------------------------------------------------------
// [switch] and [nic]
// ---------------------------------------------------------------------------------------------

/// The distinct rates of the switch ports of `net`, ascending.
fn switch_port_rates(net: &Network) -> Vec<BitsPerSec> {
    let mut rates: Vec<BitsPerSec> = (0..net.node_count())
        .map(NodeId::from_idx)
        .filter(|&n| net.kind(n) == NodeKind::Switch)
        .flat_map(|n| net.ports(n).iter().map(|p| p.rate))
        .collect();
    rates.sort();
    rates.dedup();
    rates
}

/// `[switch]`, with the ECN map derived from the topology's switch port rates by the
/// scheme's rule (`ecn_default`) unless the scenario gives one.
fn switch_config(
    src: &Source,
    raw: Option<&RawSwitch>,
    net: &Network,
    ecn_default: EcnDefault,
) -> Result<SwitchConfig, CliError> {
    let mut c = SwitchConfig {
        ecn: switch_port_rates(net).into_iter().map(|r| (r, ecn_default.params(r))).collect(),
        ..SwitchConfig::default()
    };
    let Some(raw) = raw else { return Ok(c) };
    if let Some(q) = &raw.buffer {
        c.buffer = src.size(q, "switch.buffer", Zero::Rejected)?;
    }
    if let Some(b) = raw.ecn {
        c.ecn_enabled = b;
    }
    if let Some(b) = raw.pfc {
        c.pfc_enabled = b;
    }
    if let Some(q) = &raw.reserve {
        c.reserve = src.size(q, "switch.reserve", Zero::Allowed)?;
    }
    if let Some(q) = &raw.resume_offset {
        c.resume_offset = src.size(q, "switch.resume_offset", Zero::Allowed)?;
    }
    if let Some(v) = &raw.headroom_bdp_multiple {
        c.headroom_bdp_multiple = src.int(v, "switch.headroom_bdp_multiple", 0, i64::MAX)? as u64;
    }
    admission(src, raw, &mut c)?;
    if let Some(m) = &raw.ecmp_seed {
        c.ecmp_seed = match m.get_ref().as_str() {
            "run" => EcmpSeed::Run,
            "node" => EcmpSeed::Node,
            other => {
                return Err(src.error(
                    m.span(),
                    "switch.ecmp_seed",
                    format!("unknown ECMP seeding \"{other}\" (valid: {})", ECMP_SEED.join(", ")),
                ))
            }
        };
    }
    if let Some(map) = &raw.ecn_map {
        let mut entries: Vec<(BitsPerSec, EcnParams)> = Vec::with_capacity(map.len());
        for (i, e) in map.iter().enumerate() {
            let f = |name: &str| format!("switch.ecn_map[{i}].{name}");
            let e = e.get_ref();
            let rate = src.rate(&e.rate, &f("rate"))?;
            if let Some(j) = entries.iter().position(|(r, _)| *r == rate) {
                return Err(src.error(
                    e.rate.span(),
                    f("rate"),
                    format!("{rate} already has an entry (switch.ecn_map[{j}])"),
                ));
            }
            let kmin = src.size(&e.kmin, &f("kmin"), Zero::Allowed)?;
            let kmax = src.size(&e.kmax, &f("kmax"), Zero::Allowed)?;
            if kmin > kmax {
                return Err(src.error(
                    e.kmin.span(),
                    f("kmin"),
                    format!("kmin ({kmin}) is larger than kmax ({kmax})"),
                ));
            }
            let pmax = *e.pmax.get_ref();
            if !(0.0..=1.0).contains(&pmax) {
                return Err(src.error(
                    e.pmax.span(),
                    f("pmax"),
                    format!("{pmax} is outside [0, 1]"),
                ));
            }
            entries.push((rate, EcnParams { kmin, kmax, pmax }));
        }
        c.ecn = entries;
    }
    Ok(c)
}

/// How switches seed their ECMP hash (`[switch] ecmp_seed`).
pub const ECMP_SEED: &[&str] = &["run", "node"];

/// The admission modes of the lossy classes (`[switch] lossy_admission`).
pub const LOSSY_ADMISSION: &[&str] = &["ingress", "egress"];

/// `[switch] pfc_alpha`, `lossy_admission`, `egress_cap`, `egress_alpha` (after `buffer`).
fn admission(src: &Source, raw: &RawSwitch, c: &mut SwitchConfig) -> Result<(), CliError> {
    let alpha = |v: &Spanned<f64>, field: &str| -> Result<f64, CliError> {
        let a = *v.get_ref();
        if a > 0.0 && a < SwitchConfig::MAX_ALPHA {
            Ok(a)
        } else {
            Err(src.error(
                v.span(),
                field,
                format!(
                    "{a} is outside (0, {}) exclusive (a fraction of the free buffer: 0.11 \
                     means 11%)",
                    SwitchConfig::MAX_ALPHA
                ),
            ))
        }
    };
    if let Some(v) = &raw.pfc_alpha {
        c.dt_alpha = Some(alpha(v, "switch.pfc_alpha")?);
    }
    let egress = match &raw.lossy_admission {
        None => false,
        Some(m) => match m.get_ref().as_str() {
            "ingress" => false,
            "egress" => true,
            other => {
                return Err(src.error(
                    m.span(),
                    "switch.lossy_admission",
                    format!(
                        "unknown admission mode \"{other}\" (valid: {})",
                        LOSSY_ADMISSION.join(", ")
                    ),
                ))
            }
        },
    };
    let needs_egress = |span: Range<usize>, key: &str| {
        src.error(
            span,
            format!("switch.{key}"),
            format!("`{key}` applies only with lossy_admission = \"egress\" (add it to [switch])"),
        )
    };
    let cap = match &raw.egress_cap {
        Some(q) if !egress => return Err(needs_egress(q.span(), "egress_cap")),
        Some(q) => {
            let cap = src.size(q, "switch.egress_cap", Zero::Rejected)?;
            if cap > c.buffer {
                return Err(src.error(
                    q.span(),
                    "switch.egress_cap",
                    format!("{cap} is larger than the switch buffer ({})", c.buffer),
                ));
            }
            cap
        }
        None => c.buffer,
    };
    if let Some(v) = &raw.egress_alpha {
        if !egress {
            return Err(needs_egress(v.span(), "egress_alpha"));
        }
        c.egress_alpha = alpha(v, "switch.egress_alpha")?;
    }
    if egress {
        c.egress_cap = Some(cap);
    }
    Ok(())
}

/// With ECN on, every switch port's rate needs an ECN map entry. The derived default map
/// always has one; an explicit map that misses a rate is an error naming the rate and the
/// topology field that set it.
fn check_ecn(
    src: &Source,
    net: &Network,
    cfg: &SwitchConfig,
    raw: Option<&RawSwitch>,
    origins: &[RateOrigin],
) -> Result<(), CliError> {
    if !cfg.ecn_enabled {
        return Ok(());
    }
    let configured = cfg.ecn.iter().map(|(r, _)| r.to_string()).collect::<Vec<_>>().join(", ");
    let Some(rate) = switch_port_rates(net).into_iter().find(|&r| cfg.ecn_for(r).is_none()) else {
        return Ok(());
    };
    let origin = match origins.iter().find(|o| o.rate == rate) {
        Some(o) if o.defaulted => format!(" (the default of `{}`)", o.field),
        Some(RateOrigin { field, span: Some(s), .. }) => {
            format!(" (set by `{field}` at line {})", line_col(&src.text, s.start).line)
        }
        Some(RateOrigin { field, .. }) => format!(" (set by `{field}`)"),
        None => String::new(),
    };
    let span = raw.and_then(|r| r.ecn_map.as_ref()).and(src.span_of(&["switch", "ecn_map"]));
    Err(src.error_at(
        span,
        "switch.ecn_map",
        format!(
            "no entry for {rate}, a switch port rate of the topology{origin} (entries: \
             {configured}); add a [[switch.ecn_map]] entry with rate = \"{rate}\", remove the \
             map to use the default one, or set switch.ecn = false"
        ),
    ))
}

/// `[nic]`, with the window mode and ACK priority defaulting to the scheme's profile.
fn nic_config(
    src: &Source,
    raw: Option<&RawNic>,
    profile: &Profile,
) -> Result<NicConfig, CliError> {
    let mut c = NicConfig {
        window: profile.window,
        ack_high_prio: profile.ack_high_prio,
        ..NicConfig::default()
    };
    let Some(raw) = raw else { return Ok(c) };
    if let Some(q) = &raw.mtu {
        let b = src.size(q, "nic.mtu", Zero::Rejected)?;
        // A frame is the MTU plus its headers (limits::FRAME_MARGIN covers every header), and
        // frame sizes are 32-bit: an MTU of u32::MAX wrapped its frame to 47 bytes.
        let max = u64::from(u32::MAX) - limits::FRAME_MARGIN;
        // The library refuses the same MTUs (`Simulation::new`), without a file and line.
        const _: () = assert!(dcsim_core::MAX_MTU as u64 == u32::MAX as u64 - limits::FRAME_MARGIN);
        if b.0 > max {
            return Err(src.error(
                q.span(),
                "nic.mtu",
                format!("{b} is above the largest MTU supported, {max} B (frames are 32-bit sizes with their headers)"),
            ));
        }
        c.mtu = b.0 as u32;
    }
    if let Some(q) = &raw.ack_interval {
        c.ack_interval = src.size(q, "nic.ack_interval", Zero::Rejected)?.0;
    }
    if let Some(q) = &raw.chunk {
        c.chunk = src.size(q, "nic.chunk", Zero::Rejected)?.0;
    }
    if let Some(b) = raw.back_to_chunk {
        c.back_to_chunk = b;
    }
    if let Some(q) = &raw.nack_interval {
        c.nack_interval = src.duration(q, "nic.nack_interval", Zero::Allowed)?;
    }
    if let Some(b) = raw.rate_bound {
        c.rate_bound = b;
    }
    if let Some(b) = raw.ack_high_prio {
        c.ack_high_prio = b;
    }
    if let Some(w) = &raw.window {
        c.window = match w.get_ref().as_str() {
            "none" => WindowMode::None,
            "fixed" => WindowMode::Fixed,
            "variable" => WindowMode::Variable,
            other => {
                return Err(src.error(
                    w.span(),
                    "nic.window",
                    format!("unknown window mode \"{other}\" (valid: none, fixed, variable)"),
                ))
            }
        };
    }
    if let Some(b) = raw.global_t {
        c.global_t = b;
    }
    Ok(c)
}

// ---------------------------------------------------------------------------------------------
// [cc]
// ---------------------------------------------------------------------------------------------

fn cc_choice(src: &Source, raw: Option<&toml::Table>) -> Result<CcChoice, CliError> {
    let empty = toml::Table::new();
    let table = raw.unwrap_or(&empty);
    let name = match table.get("name") {
        None if raw.is_none() => "none".to_string(),
        None => {
            return Err(src.error_at(
                src.span_of(&["cc"]),
                "cc.name",
                format!("missing; expected one of {}", SCHEMES.join(", ")),
            ))
        }
        Some(toml::Value::String(s)) => s.clone(),
        Some(v) => {
            return Err(src.error_at(
                src.span_of(&["cc", "name"]),
                "cc.name",
                format!("expected a scheme name string, found {}", v.type_str()),
            ))
        }
    };
    if !SCHEMES.contains(&name.as_str()) {
        return Err(src.error_at(
            src.span_of(&["cc", "name"]),
            "cc.name",
            schemes::unknown_scheme_message(&name),
        ));
    }
    CcChoice::from_params(&name, CcParams::new(src, &name, table))
}

// ---------------------------------------------------------------------------------------------
// [flows]
// ---------------------------------------------------------------------------------------------

/// Why `id` is not a usable host of `net`, if it is not.
fn host_problem(net: &Network, id: i64) -> Option<String> {
    let hosts = net.hosts();
    let range = match (hosts.first(), hosts.last()) {
        (Some(a), Some(b)) if (b.0 - a.0) as usize + 1 == hosts.len() => {
            format!("hosts are {a}..{b}")
        }
        (Some(a), Some(b)) => format!("{} hosts between node {a} and node {b}", hosts.len()),
        _ => "the network has no hosts".to_string(),
    };
    if id < 0 || id >= net.node_count() as i64 {
        return Some(format!("host {id} does not exist ({range})"));
    }
    if !net.is_host(NodeId(id as u32)) {
        return Some(format!("node {id} is a switch, not a host ({range})"));
    }
    None
}

/// A flow's group as the scenario names it: the name, where it is written and its field
/// (`flows.list[i].group` or `flows.group`).
type GroupRef = Option<(String, Range<usize>, String)>;

/// Where a flow came from, to point errors about its size at what set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// `[[flows.list]]` entry `i`.
    List(u32),
    /// Flow `i` of the flow file (its size's position is in [`FlowsOut::file_sizes`]).
    File(u32),
    /// The `workload` generator.
    Workload,
    /// The `incast` generator.
    Incast,
    /// The `lognormal` generator.
    Lognormal,
}

/// The flows of a scenario, each flow's group reference and origin, what the generators
/// made, and for a flow file its path and the (line, column) of each flow's size.
struct FlowsOut {
    flows: Vec<FlowSpec>,
    refs: Vec<GroupRef>,
    origins: Vec<Origin>,
    workload: Option<WorkloadInfo>,
    file_sizes: Option<(PathBuf, Vec<(usize, usize)>)>,
}

/// The flows of `[flows]`: the explicit ones (`file` or `list`), then the generated ones
/// (`workload`, `incast`, `lognormal`). With a generator, all flows are merged by start time
/// (stable: explicit, then workload, then incast, then lognormal flows at equal times) and
/// renumbered `0..n`; without one, explicit flows keep their ids (positions). At most
/// `max_flows` flows in all.
fn flows(
    src: &Source,
    raw: Option<&RawFlows>,
    net: &Network,
    sim_seed: u64,
    has_apps: bool,
) -> Result<FlowsOut, CliError> {
    const SOURCES: &str = "`file = \"flow.txt\"`, a [[flows.list]] of flows, or a generator \
                           (`workload = { cdf = \"websearch\", load = 0.3, duration = \"10ms\" }`, \
                           `incast = { ... }`, `lognormal = { ... }`)";
    let missing = || CliError::Scenario {
        file: src.path.clone(),
        message: format!(
            "missing required section [flows]: give {SOURCES}, or applications ([[rpc]])"
        ),
    };
    let empty = || FlowsOut {
        flows: Vec::new(),
        refs: Vec::new(),
        origins: Vec::new(),
        workload: None,
        file_sizes: None,
    };
    let raw = match raw {
        Some(r) => r,
        None if has_apps => return Ok(empty()),
        None => return Err(missing()),
    };
    let max_flows = match &raw.max_flows {
        Some(v) => src.int(v, "flows.max_flows", 1, i64::MAX)? as u64,
        None => limits::DEFAULT_MAX_FLOWS,
    };
    let generators = raw.workload.is_some() || raw.incast.is_some() || raw.lognormal.is_some();
    let default_group: GroupRef =
        raw.group.as_ref().map(|g| (g.get_ref().clone(), g.span(), "flows.group".to_string()));
    let mut file_sizes = None;
    let explicit: Vec<(FlowSpec, GroupRef, Origin)> = match (&raw.file, &raw.list) {
        (Some(f), Some(_)) => {
            return Err(src.error(
                f.span(),
                "flows.file",
                "give either `file` or [[flows.list]], not both",
            ))
        }
        (None, None) if !generators => {
            return Err(src.error_at(src.span_of(&["flows"]), "flows", format!("needs {SOURCES}")))
        }
        (None, None) => Vec::new(),
        (Some(f), None) => {
            let (path, read) = flows_from_file(src, f, net)?;
            file_sizes = Some((path, read.iter().map(|f| (f.line, f.cols[4])).collect()));
            read.into_iter()
                .enumerate()
                .map(|(i, f)| (f.spec, default_group.clone(), Origin::File(i as u32)))
                .collect()
        }
        (None, Some(list)) => {
            list.iter()
                .enumerate()
                .map(|(i, f)| {
                    let g =
                        f.get_ref().group.as_ref().map(|g| {
                            (g.get_ref().clone(), g.span(), format!("flows.list[{i}].group"))
                        });
                    inline_flow(src, i, f.get_ref(), net)
                        .map(|s| (s, g.or(default_group.clone()), Origin::List(i as u32)))
                })
                .collect::<Result<_, _>>()?
        }
    };
    let too_many = (explicit.len() as u64 > max_flows)
        .then(|| limits::too_many_flows(&format!("{} explicit flows", explicit.len()), max_flows));
    let too_big = || {
        let bytes = limits::memory_refused(explicit.len() as f64)?;
        Some(limits::too_much_memory(&format!("{} explicit flows", explicit.len()), bytes))
    };
    if let Some(message) = too_many.or_else(too_big) {
        let (key, span) = match &raw.file {
            Some(f) => ("flows.file", Some(f.span())),
            None => ("flows.list", src.span_of(&["flows", "list"])),
        };
        return Err(src.error_at(span, key, message));
    }
    let mut out = empty();
    out.file_sizes = file_sizes;
    if !generators {
        for (f, g, o) in explicit {
            out.flows.push(f);
            out.refs.push(g);
            out.origins.push(o);
        }
        return Ok(out);
    }
    let mut budget =
        generator::FlowBudget { left: max_flows - explicit.len() as u64, limit: max_flows };
    let (generated, info) = if raw.workload.is_some() || raw.incast.is_some() {
        let g = generator::generate(
            src,
            raw.workload.as_ref(),
            raw.incast.as_ref(),
            net,
            sim_seed,
            budget,
        )?;
        (vec![(g.background, Origin::Workload), (g.incast, Origin::Incast)], g.info)
    } else {
        (Vec::new(), None)
    };
    budget.left -= generated.iter().map(|(l, _)| l.len() as u64).sum::<u64>();
    let lognormal = match &raw.lognormal {
        Some(l) => generator::lognormal_flows(src, l, net, sim_seed, budget)?,
        None => Vec::new(),
    };
    // Sorted by start time, stably (as `dcsim_workload::merge`): listed flows first, then the
    // background, the incast and the lognormal flows, each in its own order.
    let mut all = explicit;
    for (list, origin) in generated.into_iter().chain([(lognormal, Origin::Lognormal)]) {
        all.extend(list.into_iter().map(|f| (f, default_group.clone(), origin)));
    }
    all.sort_by_key(|(f, _, _)| f.start);
    for (i, (mut f, g, o)) in all.into_iter().enumerate() {
        f.id = FlowId::from_idx(i);
        out.flows.push(f);
        out.refs.push(g);
        out.origins.push(o);
    }
    out.workload = info;
    Ok(out)
}

/// Where a round trip that is too long comes from: the field that sets the topology's delays
/// and the one that sets its slowest rate (`slowest`), each with its span if written.
type LimitField<'a> = (&'a str, Option<Range<usize>>);

fn limit_fields<'a>(
    src: &Source,
    topo: &'a RawTopology,
    origins: &'a [RateOrigin],
    slowest: BitsPerSec,
) -> (LimitField<'a>, LimitField<'a>) {
    let kind_span = topo.kind.as_ref().map(Spanned::span);
    let delay = if let Some(p) = &topo.path {
        ("topology.path", Some(p.span()))
    } else {
        // The larger of `delay` and `bottleneck_delay` when both are written.
        let parse = |q: &Option<Qty>| {
            q.as_ref().and_then(|q| src.duration(q, "", Zero::Allowed).ok().map(|d| (d, q.span())))
        };
        match (parse(&topo.delay), parse(&topo.bottleneck_delay)) {
            (Some(a), Some(b)) if b.0 > a.0 => ("topology.bottleneck_delay", Some(b.1)),
            (Some(a), _) => ("topology.delay", Some(a.1)),
            (None, Some(b)) => ("topology.bottleneck_delay", Some(b.1)),
            (None, None) => ("topology.delay", kind_span.clone()),
        }
    };
    let rate = match origins.iter().find(|o| o.rate == slowest) {
        Some(o) => (o.field.as_str(), o.span.clone()),
        None => ("topology", kind_span),
    };
    (delay, rate)
}

/// Checks that every application's largest query and its response complete, alone, within the
/// time limit ([`limits::Bounds::transfer_ps`]).
fn check_query_sizes(
    src: &Source,
    bounds: &limits::Bounds,
    rpc: &[RpcInfo],
) -> Result<(), CliError> {
    let limit = u128::from(dcsim_core::units::TIME_LIMIT.as_ps());
    for (i, r) in rpc.iter().enumerate() {
        let t =
            bounds.transfer_ps(r.max_query, r.segment) + bounds.transfer_ps(r.response, r.segment);
        if t <= limit {
            continue;
        }
        let i = i.to_string();
        let (key, span) = ["query", "query_cdf", "response"]
            .into_iter()
            .find_map(|k| src.span_of(&["rpc", &i, k]).map(|s| (k, Some(s))))
            .unwrap_or(("query", src.span_of(&["rpc", &i])));
        return Err(src.error_at(
            span,
            format!("rpc[{i}].{key}"),
            format!(
                "a query of {} B and its response of {} B: {}",
                r.max_query,
                r.response,
                bounds.flow_message(r.max_query.saturating_add(r.response), r.segment)
            ),
        ));
    }
    Ok(())
}

/// Checks every flow's size against the bound of [`limits::Bounds::max_flow_bytes`] for its
/// transport's segment size, pointing at what set the size.
fn check_flow_sizes(
    src: &Source,
    bounds: &limits::Bounds,
    out: &FlowsOut,
    cfg: &SimConfig,
    raw: Option<&RawFlows>,
) -> Result<(), CliError> {
    // The largest flow allowed for each segment size, computed once per size.
    let mut allowed: Vec<(u64, u64)> = Vec::new();
    for (i, f) in out.flows.iter().enumerate() {
        let seg = limits::segment(cfg, cfg.transport_of(i));
        let max = match allowed.iter().find(|(s, _)| *s == seg) {
            Some(&(_, m)) => m,
            None => {
                let m = bounds.max_flow_bytes(seg);
                allowed.push((seg, m));
                m
            }
        };
        if f.size <= max {
            continue;
        }
        let message = bounds.flow_message(f.size, seg);
        let at = |keys: &[&str], field: &str| {
            let span = src.span_of(keys).or_else(|| src.span_of(&["flows"]));
            src.error_at(span, field, message.clone())
        };
        return Err(match out.origins[i] {
            Origin::List(k) => {
                let k = k as usize;
                let span = raw
                    .and_then(|r| r.list.as_ref())
                    .and_then(|l| l.get(k))
                    .map(|e| e.get_ref().size.span());
                src.error_at(span, format!("flows.list[{k}].size"), message)
            }
            Origin::File(k) => {
                let (path, at) = out.file_sizes.as_ref().expect("file flows have positions");
                let (line, col) = at[k as usize];
                file_error(path, Some((line, col, format!("flow[{k}].size"))), message)
            }
            Origin::Workload => at(&["flows", "workload", "cdf"], "flows.workload.cdf"),
            Origin::Incast => at(&["flows", "incast", "size"], "flows.incast.size"),
            Origin::Lognormal => at(&["flows", "lognormal", "p95"], "flows.lognormal.p95"),
        });
    }
    Ok(())
}

/// Gives every flow its group's transport (and class, if the group sets one); makes the
/// classes of TCP groups lossy; checks that no class mixes lossless RoCE and lossy TCP flows.
fn assign_groups(
    src: &Source,
    groups: &[Group],
    refs: &[GroupRef],
    flows: &mut [FlowSpec],
    cfg: &mut SimConfig,
) -> Result<(u8, u8), CliError> {
    if groups.is_empty() {
        if let Some((name, span, field)) = refs.iter().flatten().next() {
            return Err(src.error(
                span.clone(),
                field.as_str(),
                format!("no [[group]] named \"{name}\" (the scenario defines none)"),
            ));
        }
        return Ok((0, 0));
    }
    let mut transports = Vec::with_capacity(flows.len());
    let mut roce_classes = 0u8;
    let mut tcp_classes: Vec<(u8, usize)> = Vec::new();
    for (f, r) in flows.iter_mut().zip(refs) {
        let group = match r {
            None => None,
            Some((name, span, field)) => {
                Some(groups.iter().position(|g| &g.name == name).ok_or_else(|| {
                    let known: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
                    src.error(
                        span.clone(),
                        field.as_str(),
                        format!("no [[group]] named \"{name}\" (groups: {})", known.join(", ")),
                    )
                })?)
            }
        };
        let t = group.map_or(Transport::Roce, |g| groups[g].transport);
        if let Some(pg) = group.and_then(|g| groups[g].pg) {
            f.pg = pg;
        }
        match t {
            Transport::Roce => roce_classes |= 1 << f.pg,
            Transport::Tcp(_) => tcp_classes.push((f.pg, group.expect("TCP flows have a group"))),
        }
        transports.push(t);
    }
    for &(pg, g) in &tcp_classes {
        if cfg.switch.pfc_enabled && roce_classes & (1 << pg) != 0 {
            return Err(src.error_at(
                groups[g].span.clone(),
                format!("group \"{}\"", groups[g].name),
                format!(
                    "its flows use class {pg}, which RoCE flows use losslessly with PFC; TCP \
                     classes are lossy: give the group another `pg`"
                ),
            ));
        }
        cfg.switch.lossy_classes |= 1 << pg;
    }
    // Classes no RoCE flow uses are lossy too: they carry nothing that PFC must protect, and
    // a switch whose classes are all lossy sets no headroom aside.
    cfg.switch.lossy_classes |= 0xfe & !roce_classes;
    cfg.flow_transport = transports;
    let tcp_mask = tcp_classes.iter().fold(0u8, |m, &(pg, _)| m | 1 << pg);
    Ok((roce_classes, tcp_mask))
}

/// With TCP groups, the classes of applications' connections: RoCE connections' classes are
/// lossless (PFC), TCP connections' lossy; a class cannot be both while PFC is on. `roce` and
/// `tcp` are the classes the listed flows use.
fn connection_classes(
    src: &Source,
    groups: &[Group],
    (roce, tcp): (u8, u8),
    cfg: &mut SimConfig,
) -> Result<(), CliError> {
    if groups.is_empty() || cfg.apps.is_empty() {
        return Ok(());
    }
    let (mut roce_c, mut tcp_c) = (0u8, 0u8);
    for c in &cfg.apps.connections {
        match c.transport {
            Transport::Roce => roce_c |= 1 << c.pg,
            Transport::Tcp(_) => tcp_c |= 1 << c.pg,
        }
    }
    let (lossless, lossy) = (roce | roce_c, tcp | tcp_c);
    if cfg.switch.pfc_enabled && lossless & lossy != 0 {
        let pg = (lossless & lossy).trailing_zeros();
        return Err(src.error_at(
            src.span_of(&["rpc"]),
            "rpc",
            format!(
                "class {pg} carries both RoCE traffic (lossless with PFC) and TCP traffic (lossy): \
                 give the applications or groups different `pg`s"
            ),
        ));
    }
    cfg.switch.lossy_classes = lossy | (0xfe & !lossless);
    Ok(())
}

fn inline_flow(src: &Source, i: usize, f: &RawFlow, net: &Network) -> Result<FlowSpec, CliError> {
    let field = |name: &str| format!("flows.list[{i}].{name}");
    let node = |v: &Int, name: &str| -> Result<NodeId, CliError> {
        match host_problem(net, *v.get_ref()) {
            Some(p) => Err(src.error(v.span(), field(name), p)),
            None => Ok(NodeId(*v.get_ref() as u32)),
        }
    };
    let s = node(&f.src, "src")?;
    let d = node(&f.dst, "dst")?;
    if s == d {
        return Err(src.error(f.dst.span(), field("dst"), format!("same host as src ({s})")));
    }
    let size = src.size(&f.size, &field("size"), Zero::Rejected)?;
    let start = match &f.start {
        Some(q) => Time::from_ps(src.duration(q, &field("start"), Zero::Allowed)?.as_ps()),
        None => Time::ZERO,
    };
    let pg = match &f.pg {
        Some(v) => src.int(v, &field("pg"), 1, 7)? as u8,
        None => 3,
    };
    let dport = match &f.dport {
        Some(v) => src.int(v, &field("dport"), 0, u16::MAX as i64)? as u16,
        None => 100,
    };
    Ok(FlowSpec { id: FlowId::from_idx(i), src: s, dst: d, size: size.0, start, pg, dport })
}

fn flows_from_file(
    src: &Source,
    rel: &Spanned<String>,
    net: &Network,
) -> Result<(PathBuf, Vec<flowfile::FileFlow>), CliError> {
    let (file, text) = src.read_referenced(rel, "flows.file")?;
    let parsed = flowfile::parse(&text).map_err(|e| flow_file_error(&file, e))?;
    for f in &parsed {
        for (name, n) in [("src", f.spec.src), ("dst", f.spec.dst)] {
            if let Some(p) = host_problem(net, n.0 as i64) {
                return Err(flow_file_error(&file, f.error(name, p)));
            }
        }
    }
    Ok((file, parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rust's type names become words, whole names only, wherever they are in the message.
    #[test]
    fn rust_type_names_become_words() {
        assert_eq!(
            plain_types("invalid type: string \"x\", expected i64"),
            "invalid type: string \"x\", expected an integer"
        );
        assert_eq!(
            plain_types("expected u64; expected f64 or expected u8"),
            "expected a non-negative integer; expected a number or expected a non-negative integer"
        );
        assert_eq!(plain_types("expected u8x, expected i64_"), "expected u8x, expected i64_");
        assert_eq!(plain_types("expected a string"), "expected a string");
    }

    /// A text input is read whole only within its limit: a regular file is refused by its
    /// length before anything is read, a stream (here `/dev/zero`, which never ends) once one
    /// byte more than its limit has come.
    #[test]
    fn text_inputs_are_read_within_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read_text_within(&path, 10, 0).unwrap(), "0123456789");
        let e = read_text_within(&path, 9, 1 << 40).unwrap_err();
        assert_eq!(e.to_string(), "larger than 9 bytes, the most dcsim reads from one file");
        let zero = Path::new("/dev/zero");
        if zero.exists() {
            let e = read_text_within(zero, 0, 4096).unwrap_err();
            assert_eq!(
                e.to_string(),
                "more than 4096 bytes from a stream (not a regular file), the most dcsim reads \
                 from one; give it as a file"
            );
        }
    }

    /// Text that is not UTF-8 is refused with the place where it stops being UTF-8.
    #[test]
    fn text_that_is_not_utf8_is_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, b"a = 1\nb = \"\xc3\xa9\xffy\"\n").unwrap();
        let e = read_text_within(&path, 100, 100).unwrap_err();
        assert_eq!(
            e.to_string(),
            "not UTF-8 text: line 2, column 7 (the file's byte 14) holds 0xff, which is not valid UTF-8 there"
        );
    }

    const MINIMAL: &str =
        "[topology]\nkind = \"star\"\nsenders = 2\n\n[[flows.list]]\nsrc = 0\ndst = 2\nsize = 1\n";

    fn load_text(text: &str) -> Result<ValidScenario, CliError> {
        validate(&Source::new("t.toml", text.to_string()), None)
    }

    /// More threads than [`crate::schemes::MAX_THREADS`] on a network with more shards than
    /// that: the run uses at most that many, and says so (4096 threads, each with its stack,
    /// had exhausted a 4 GB address-space limit and aborted a k = 48 run).
    #[test]
    fn threads_above_the_most_a_run_uses_are_told() {
        let k32 = "[topology]\nkind = \"fat-tree\"\nk = 32\n\n[[flows.list]]\nsrc = 0\ndst = 1\n\
                   size = 1\n";
        let v = load_text(k32).unwrap();
        let told = |threads: usize| {
            v.parallel_warnings(threads, None)
                .iter()
                .any(|w| w.message.contains("the run uses at most 512 threads (each takes a stack"))
        };
        assert!(told(4096) && told(513));
        assert!(!told(512) && !told(16));
        // Not where the shards bound the threads below it.
        let small = load_text(MINIMAL).unwrap();
        assert!(!small.parallel_warnings(4096, None).iter().any(|w| w.message.contains("512")));
    }

    #[test]
    fn absent_sections_take_the_core_defaults() {
        let v = load_text(MINIMAL).unwrap();
        // The ECN map is derived from the topology's switch port rates (100 Gb/s only here).
        let mut expected = SimConfig::default();
        expected.switch.ecn.retain(|(r, _)| *r == BitsPerSec::gbps(100));
        assert_eq!(v.cfg, expected);
        assert_eq!(v.cc.name(), "none");
        assert_eq!(
            v.flows,
            vec![FlowSpec {
                id: FlowId(0),
                src: NodeId(0),
                dst: NodeId(2),
                size: 1,
                start: Time::ZERO,
                pg: 3,
                dport: 100
            }]
        );
        assert_eq!(v.net.hosts().len(), 3);
        assert_eq!(v.nics_per_server, 1);
    }

    #[test]
    fn alibaba_2pod_reports_its_nics_per_server() {
        let flow = "[[flows.list]]\nsrc = 0\ndst = 9\nsize = 1\n";
        let v = load_text(&format!("[topology]\nkind = \"alibaba-2pod\"\n{flow}")).unwrap();
        assert_eq!((v.nics_per_server, v.net.hosts().len()), (2, 16));
        // Server 4 (pod 1), NIC 1 is host 4 * 2 + 1 = 9, on the second ToR of pod 1 (node 19).
        assert_eq!(v.net.ports(NodeId(9))[0].peer, NodeId(19));
        let v = load_text(&format!(
            "[topology]\nkind = \"alibaba-2pod\"\nnics_per_server = 1\nservers = 4\n{flow}"
        ));
        assert!(v.is_err(), "host 9 does not exist with 4 single-homed servers");
        let v = load_text(&format!(
            "[topology]\nkind = \"alibaba-2pod\"\nnics_per_server = 1\nservers = 12\n{flow}"
        ))
        .unwrap();
        assert_eq!((v.nics_per_server, v.net.hosts().len()), (1, 12));
    }

    #[test]
    fn every_field_reaches_the_config() {
        let text = format!(
            "{MINIMAL}pg = 5\ndport = 200\nstart = \"1.5us\"\n\
             [simulation]\nstop_time = \"2ms\"\nseed = 9\n\
             [cc]\nname = \"none\"\n\
             [switch]\nbuffer = \"16MB\"\necn = true\npfc = false\nreserve = \"2KiB\"\n\
             resume_offset = 1000\nheadroom_bdp_multiple = 2\necmp_seed = \"node\"\n\
             [[switch.ecn_map]]\nrate = \"100G\"\nkmin = \"10KB\"\nkmax = \"20KB\"\npmax = 1\n\
             [nic]\nmtu = \"4KB\"\nack_interval = 3\nchunk = \"8000B\"\nback_to_chunk = true\n\
             nack_interval = \"1ms\"\nrate_bound = false\nack_high_prio = true\n\
             window = \"variable\"\nglobal_t = false\n"
        );
        let v = load_text(&text).unwrap();
        let c = &v.cfg;
        assert_eq!(c.stop_time, Time::from_ns(2_000_000));
        assert_eq!(c.seed, 9);
        assert_eq!(c.switch.buffer, Bytes(16_000_000));
        assert!(c.switch.ecn_enabled);
        assert!(!c.switch.pfc_enabled);
        assert_eq!(c.switch.reserve, Bytes(2048));
        assert_eq!(c.switch.resume_offset, Bytes(1000));
        assert_eq!(c.switch.headroom_bdp_multiple, 2);
        assert_eq!(c.switch.ecmp_seed, EcmpSeed::Node);
        assert_eq!(
            c.switch.ecn,
            vec![(
                BitsPerSec::gbps(100),
                EcnParams { kmin: Bytes(10_000), kmax: Bytes(20_000), pmax: 1.0 }
            )]
        );
        assert_eq!(c.nic.mtu, 4000);
        assert_eq!(c.nic.ack_interval, 3);
        assert_eq!(c.nic.chunk, 8000);
        assert!(c.nic.back_to_chunk);
        assert_eq!(c.nic.nack_interval, Duration::from_ms(1));
        assert!(!c.nic.rate_bound);
        assert!(c.nic.ack_high_prio);
        assert_eq!(c.nic.window, WindowMode::Variable);
        assert!(!c.nic.global_t);
        let f = v.flows[0];
        assert_eq!((f.pg, f.dport, f.start), (5, 200, Time::from_ps(1_500_000)));

        let v = validate(&Source::new("t.toml", text), Some(42)).unwrap();
        assert_eq!(v.cfg.seed, 42, "--seed overrides simulation.seed");
    }

    fn error_text(text: &str) -> String {
        load_text(text).unwrap_err().to_string()
    }

    #[test]
    fn semantic_errors_name_file_line_and_field() {
        let e = error_text(&format!("{MINIMAL}pg = 0\n"));
        assert_eq!(e, "t.toml:9:6: field `flows.list[0].pg`: 0 is outside 1..=7");
        let e = error_text(&format!("{MINIMAL}dport = 70000\n"));
        assert_eq!(e, "t.toml:9:9: field `flows.list[0].dport`: 70000 is outside 0..=65535");
        let e = error_text(&format!("{MINIMAL}[nic]\nchunk = 0\n"));
        assert_eq!(e, "t.toml:10:9: field `nic.chunk`: must be at least 1 byte");
        let e = error_text(&format!("{MINIMAL}[simulation]\nstop_time = \"0s\"\n"));
        assert_eq!(e, "t.toml:10:13: field `simulation.stop_time`: must be greater than zero");
        let e = error_text(&format!(
            "{MINIMAL}[[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = \"2KB\"\nkmax = \"1KB\"\npmax = 0.5\n"
        ));
        assert_eq!(
            e,
            "t.toml:11:8: field `switch.ecn_map[0].kmin`: kmin (2000B) is larger than kmax (1000B)"
        );
        let e = error_text(&format!(
            "{MINIMAL}[[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = 1\nkmax = 2\npmax = 1.5\n"
        ));
        assert_eq!(e, "t.toml:13:8: field `switch.ecn_map[0].pmax`: 1.5 is outside [0, 1]");
        let e = error_text(&format!(
            "{MINIMAL}[[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = 1\nkmax = 2\npmax = 1\n\
             [[switch.ecn_map]]\nrate = \"100G\"\nkmin = 1\nkmax = 2\npmax = 1\n"
        ));
        assert_eq!(
            e,
            "t.toml:15:8: field `switch.ecn_map[1].rate`: 100Gbps already has an entry (switch.ecn_map[0])"
        );
        let e = error_text(
            "[topology]\nkind = \"star\"\n\n[[flows.list]]\nsrc = 0\ndst = 1\nsize = 1\n",
        );
        assert_eq!(
            e,
            "t.toml:2:8: field `topology`: topology kind \"star\" needs `senders` (its parameters: senders, host_rate, delay)"
        );
        let e = error_text("[topology]\nkind = \"star\"\nsenders = 1\n");
        assert!(e.starts_with("t.toml: missing required section [flows]"), "{e}");
        let e = error_text(&format!("{MINIMAL}[cc]\nalpha = 1\n"));
        assert_eq!(
            e,
            "t.toml:9:1: field `cc.name`: missing; expected one of none, hpcc, hpcc-pint, dcqcn, dcqcn-w, \
             timely, timely-w, dctcp"
        );
        let e = error_text(&format!("{MINIMAL}[cc]\nname = 3\n"));
        assert_eq!(e, "t.toml:10:8: field `cc.name`: expected a scheme name string, found integer");
    }

    #[test]
    fn scheme_profiles_set_defaults_that_explicit_values_override() {
        use WindowMode::{None as NoWin, Variable};
        let table = [
            ("none", NoWin, false),
            ("hpcc", Variable, false),
            ("hpcc-pint", Variable, false),
            ("dcqcn", NoWin, true),
            ("dcqcn-w", Variable, false),
            ("timely", NoWin, true),
            ("timely-w", Variable, true),
            ("dctcp", Variable, false),
        ];
        assert_eq!(table.len(), SCHEMES.len());
        let red = EcnParams { kmin: Bytes(400_000), kmax: Bytes(1_600_000), pmax: 0.2 };
        let dctcp = EcnParams { kmin: Bytes(300_000), kmax: Bytes(300_000), pmax: 1.0 };
        for (name, window, ack_high_prio) in table {
            let v = load_text(&format!("{MINIMAL}[cc]\nname = \"{name}\"\n")).unwrap();
            assert_eq!(v.cc.name(), name);
            assert_eq!(
                (v.cfg.nic.window, v.cfg.nic.ack_high_prio),
                (window, ack_high_prio),
                "{name}"
            );
            let ecn = if name == "dctcp" { dctcp } else { red };
            assert_eq!(v.cfg.switch.ecn, vec![(BitsPerSec::gbps(100), ecn)], "{name}");
            // The rest of the NIC config is the core's default whatever the scheme.
            let nic = NicConfig { window, ack_high_prio, ..NicConfig::default() };
            assert_eq!(v.cfg.nic, nic, "{name}");
        }
        // Explicit values win over the profile.
        let v = load_text(&format!(
            "{MINIMAL}[cc]\nname = \"dctcp\"\n[nic]\nwindow = \"none\"\nack_high_prio = true\n\
             [[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = \"10KB\"\nkmax = \"20KB\"\npmax = 0.5\n"
        ))
        .unwrap();
        assert_eq!((v.cfg.nic.window, v.cfg.nic.ack_high_prio), (WindowMode::None, true));
        assert_eq!(
            v.cfg.switch.ecn,
            vec![(
                BitsPerSec::gbps(100),
                EcnParams { kmin: Bytes(10_000), kmax: Bytes(20_000), pmax: 0.5 }
            )]
        );
        let v = load_text(&format!("{MINIMAL}[cc]\nname = \"dcqcn\"\n[nic]\nwindow = \"fixed\"\n"))
            .unwrap();
        assert_eq!((v.cfg.nic.window, v.cfg.nic.ack_high_prio), (WindowMode::Fixed, true));
    }

    #[test]
    fn default_ecn_map_has_one_entry_per_switch_port_rate() {
        let text =
            "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 1\n\
                    host_rate = \"25Gbps\"\nfabric_rate = \"40Gbps\"\n\
                    [[flows.list]]\nsrc = 0\ndst = 1\nsize = 1\n";
        let v = load_text(text).unwrap();
        let e = |kmin, kmax, pmax| EcnParams { kmin: Bytes(kmin), kmax: Bytes(kmax), pmax };
        assert_eq!(
            v.cfg.switch.ecn,
            vec![
                (BitsPerSec::gbps(25), e(100_000, 400_000, 0.2)),
                (BitsPerSec::gbps(40), e(160_000, 640_000, 0.2)),
            ]
        );
        let v = load_text(&format!("{text}[cc]\nname = \"dctcp\"\n")).unwrap();
        assert_eq!(
            v.cfg.switch.ecn,
            vec![
                (BitsPerSec::gbps(25), e(75_000, 75_000, 1.0)),
                (BitsPerSec::gbps(40), e(120_000, 120_000, 1.0)),
            ]
        );
        // 400G: the reference's 1600 / 6400 KB.
        assert_eq!(EcnDefault::Red.params(BitsPerSec::gbps(400)), e(1_600_000, 6_400_000, 0.2));
        // An explicit map that misses a speed names it and where it came from.
        let err = error_text(&format!(
            "{text}[[switch.ecn_map]]\nrate = \"25Gbps\"\nkmin = 1\nkmax = 2\npmax = 1\n"
        ));
        assert_eq!(
            err,
            "t.toml:12:1: field `switch.ecn_map`: no entry for 40Gbps, a switch port rate of the \
             topology (set by `topology.fabric_rate` at line 7) (entries: 25Gbps); add a \
             [[switch.ecn_map]] entry with rate = \"40Gbps\", remove the map to use the default \
             one, or set switch.ecn = false"
        );
    }

    #[test]
    fn error_rate_per_link_applies_to_lossless_links_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("topo.txt"),
            "3 1 2\n2\n0 2 100Gbps 1us 0.5\n1 2 100Gbps 1us 0\n",
        )
        .unwrap();
        let text = "[topology]\nkind = \"file\"\npath = \"topo.txt\"\nerror_rate_per_link = 0.01\n\
                    [[flows.list]]\nsrc = 0\ndst = 1\nsize = 1\n";
        let v = validate(&Source::new(dir.path().join("t.toml"), text.to_string()), None).unwrap();
        let loss: Vec<f64> = v.net.links().iter().map(|l| l.loss).collect();
        assert_eq!(loss, [0.5, 0.01]);
        let e = error_text(&MINIMAL.replace("senders = 2", "senders = 2\nerror_rate_per_link = 2"));
        assert_eq!(e, "t.toml:4:23: field `topology.error_rate_per_link`: 2 is outside [0, 1]");
    }

    /// Every parameter of every scheme can be set, and reaches the scheme's parameters.
    #[test]
    fn every_cc_parameter_is_settable() {
        use dcsim_baselines::{DcqcnParams, DctcpParams, TimelyParams};
        use dcsim_hpcc::HpccParams;
        let cc = |name: &str, body: &str| {
            load_text(&format!("{MINIMAL}[cc]\nname = \"{name}\"\n{body}")).unwrap().cc
        };
        let c = cc(
            "hpcc",
            "eta = 0.9\nmax_stage = 5\nrate_ai = \"50Mbps\"\nmin_rate = \"100Mbps\"\n\
             fast_react = false\nmulti_rate = true\nsample_feedback = true\n",
        );
        let CcChoice::Hpcc(f) = c else { panic!("{c:?}") };
        assert_eq!(
            f.params,
            HpccParams {
                eta: 0.9,
                max_stage: 5,
                rate_ai: Some(BitsPerSec::mbps(50)),
                min_rate: BitsPerSec::mbps(100),
                fast_react: false,
                multi_rate: true,
                sample_feedback: true,
            }
        );
        let dcqcn_body = "alpha_resume_interval = \"55us\"\nrate_decrease_interval = \"50us\"\n\
                          rp_timer = \"1.5us\"\newma_gain = 0.5\nfast_recovery_times = 5\n\
                          rate_ai = \"5Mbps\"\nrate_hai = \"7Mbps\"\nmin_rate = \"1Mbps\"\n\
                          clamp_target_rate = true\n";
        let expected = DcqcnParams {
            alpha_resume_interval: Duration::from_us(55),
            rate_decrease_interval: Duration::from_us(50),
            rp_timer: Duration::from_ns(1500),
            ewma_gain: 0.5,
            fast_recovery_times: 5,
            rate_ai: Some(BitsPerSec::mbps(5)),
            rate_hai: Some(BitsPerSec::mbps(7)),
            min_rate: BitsPerSec::mbps(1),
            clamp_target_rate: true,
        };
        let c = cc("dcqcn", dcqcn_body);
        let CcChoice::Dcqcn(f) = c else { panic!("{c:?}") };
        assert_eq!(f.params, expected);
        let c = cc("dcqcn-w", dcqcn_body);
        let CcChoice::DcqcnW(f) = c else { panic!("{c:?}") };
        assert_eq!(f.params, expected);
        let timely_body = "rate_ai = \"1Mbps\"\nrate_hai = \"2Mbps\"\nmin_rate = \"3Mbps\"\n\
                           alpha = 0.5\nbeta = 0.25\nt_low = \"1us\"\nt_high = \"2us\"\n\
                           min_rtt = \"3us\"\nhai_after = 9\n";
        let expected = TimelyParams {
            rate_ai: Some(BitsPerSec::mbps(1)),
            rate_hai: Some(BitsPerSec::mbps(2)),
            min_rate: BitsPerSec::mbps(3),
            alpha: 0.5,
            beta: 0.25,
            t_low: Duration::from_us(1),
            t_high: Duration::from_us(2),
            min_rtt: Duration::from_us(3),
            hai_after: 9,
        };
        let c = cc("timely", timely_body);
        let CcChoice::Timely(f) = c else { panic!("{c:?}") };
        assert_eq!(f.params, expected);
        let c = cc("timely-w", timely_body);
        let CcChoice::TimelyW(f) = c else { panic!("{c:?}") };
        assert_eq!(f.params, expected);
        let c = cc(
            "dctcp",
            "ewma_gain = 0.125\nrate_ai = \"1Gbps\"\nmin_rate = \"2Mbps\"\n\
             reset_ecn_count_after_first_batch = true\n",
        );
        let CcChoice::Dctcp(f) = c else { panic!("{c:?}") };
        assert_eq!(
            f.params,
            DctcpParams {
                ewma_gain: 0.125,
                rate_ai: BitsPerSec::gbps(1),
                min_rate: BitsPerSec::mbps(2),
                reset_ecn_count_after_first_batch: true,
            }
        );
        // Absent parameters take the plugin's defaults.
        let CcChoice::Timely(f) = cc("timely", "") else { panic!() };
        assert_eq!(f.params, TimelyParams::default());
    }

    #[test]
    fn cc_parameter_errors_name_the_parameter() {
        let e = |body: &str| error_text(&format!("{MINIMAL}[cc]\n{body}"));
        assert_eq!(
            e("name = \"hpcc\"\neta = 1.5\n"),
            "t.toml:11:7: field `cc.eta`: eta must be in (0, 1], got 1.5"
        );
        assert_eq!(
            e("name = \"dcqcn\"\nrp_timer = \"0us\"\n"),
            "t.toml:11:12: field `cc.rp_timer`: rp_timer must be positive (a zero period never advances time)"
        );
        // A period of 1 ps fired 10^12 times per simulated second: the run never ended.
        assert_eq!(
            e("name = \"dcqcn\"\nalpha_resume_interval = \"1ps\"\n"),
            "t.toml:11:25: field `cc.alpha_resume_interval`: alpha_resume_interval must be at \
             least 1us (a periodic timer), got 1ps"
        );
        // The message names t_low first, but only t_high was written: it points at t_high.
        let m = e("name = \"timely\"\nt_high = \"10us\"\n");
        assert!(m.starts_with("t.toml:11:10: field `cc.t_high`: t_low ("), "{m}");
        assert_eq!(
            e("name = \"dctcp\"\nrate_ai = 615\n"),
            "t.toml:11:11: field `cc.rate_ai`: expected a rate with a unit such as \"40Mbps\", found integer"
        );
        assert_eq!(
            e("name = \"dcqcn\"\nrp_timer = 300\n"),
            "t.toml:11:12: field `cc.rp_timer`: needs a unit, e.g. \"1us\" (found integer)"
        );
        assert_eq!(
            e("name = \"timely\"\nhai_after = -1\n"),
            "t.toml:11:13: field `cc.hai_after`: -1 is negative; expected a non-negative integer"
        );
        assert_eq!(
            e("name = \"hpcc\"\nmax_stage = 5000000000\n"),
            "t.toml:11:13: field `cc.max_stage`: 5000000000 is larger than 4294967295"
        );
        let m = e("name = \"dctcp\"\nrp_timer = \"300us\"\n");
        assert_eq!(
            m,
            "t.toml:11:12: field `cc.rp_timer`: unknown parameter `rp_timer` for scheme \"dctcp\" \
             (its parameters: `ewma_gain`, `rate_ai`, `min_rate`, `reset_ecn_count_after_first_batch`)"
        );
        assert_eq!(
            e("name = \"hpcc-pint\"\nprob = 0\n"),
            "t.toml:11:8: field `cc.prob`: prob must be in (0, 1], got 0"
        );
    }

    /// docs/schemes.md documents every scheme and every parameter.
    #[test]
    fn schemes_doc_is_complete() {
        let doc = include_str!("../../../docs/schemes.md");
        for name in SCHEMES.iter().chain(schemes::RESERVED) {
            assert!(
                doc.contains(&format!("`{name}`")),
                "docs/schemes.md does not mention `{name}`"
            );
        }
        for name in SCHEMES {
            for p in schemes::params_of(name) {
                assert!(
                    doc.contains(&format!("| `{p}` |")),
                    "docs/schemes.md has no row for `{p}`"
                );
            }
        }
    }

    #[test]
    fn raw_quantities_keep_their_toml_type() {
        #[derive(Deserialize)]
        struct T {
            a: RawQty,
            b: RawQty,
            c: RawQty,
        }
        let t: T = toml::from_str("a = 1\nb = 1.5\nc = \"1us\"").unwrap();
        assert_eq!(t.a, RawQty::Int(1));
        assert_eq!(t.b, RawQty::Float(1.5));
        assert_eq!(t.c, RawQty::Str("1us".into()));
        assert!(toml::from_str::<T>("a = true\nb = 1\nc = 1").is_err());
    }
}
