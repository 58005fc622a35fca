//! `[flows] workload` and `[flows] incast`: flows made by the `dcsim-workload` generators over
//! every host of the topology, at the hosts' NIC rate.
//!
//! Every value is checked here, where its position is known, before the generator runs, so
//! that errors name the file, line, column and field like every other scenario error. A CDF
//! file's own errors name the CDF file and its line.

use std::ops::Range;
use std::path::PathBuf;

use dcsim_core::config::FlowSpec;
use dcsim_core::ids::NodeId;
use dcsim_core::network::Network;
use dcsim_core::units::{BitsPerSec, Duration, Time};
use dcsim_workload::{
    offered_load, Cdf, Incast, Interpolation, PoissonWorkload, ReceiverChoice, WindowEnd,
    WorkloadError,
};
use serde::Deserialize;
use toml::Spanned;

use super::{host_problem, limits, Int, Qty, Source, Zero};
use crate::error::CliError;
use crate::units::HumanDuration;

/// How many flows the generators may still make (`left`) under `[flows] max_flows` (`limit`).
#[derive(Clone, Copy, Debug)]
pub(super) struct FlowBudget {
    pub left: u64,
    pub limit: u64,
}

impl FlowBudget {
    /// `left` as a `usize` limit for the generators.
    fn cap(self) -> usize {
        usize::try_from(self.left).unwrap_or(usize::MAX)
    }

    /// The error when a generator would make `what` (a description of the count).
    fn exceeded(self, src: &Source, key: &[&str], field: &str, what: &str) -> CliError {
        self.error(src, key, field, what, |what| limits::too_many_flows(what, self.limit))
    }

    /// Checks that the machine can allocate the memory of `expected` more flows besides
    /// those already made (`limits::memory_refused`); the error names `field` at `key`.
    fn memory(
        self,
        src: &Source,
        key: &[&str],
        field: &str,
        expected: f64,
        what: &str,
    ) -> Result<(), CliError> {
        match limits::memory_refused(expected + (self.limit - self.left) as f64) {
            None => Ok(()),
            Some(bytes) => {
                Err(self.error(src, key, field, what, |what| limits::too_much_memory(what, bytes)))
            }
        }
    }

    /// The error at `field` (located at `key`, else its table) whose message `message` makes
    /// from `what`, which names the flows made before when there are any.
    fn error(
        self,
        src: &Source,
        key: &[&str],
        field: &str,
        what: &str,
        message: impl FnOnce(&str) -> String,
    ) -> CliError {
        let what = if self.left < self.limit {
            format!("{what} (besides {} other flows)", self.limit - self.left)
        } else {
            what.to_string()
        };
        let span = src.span_of(key).or_else(|| src.span_of(&key[..2]));
        src.error_at(span, field, message(&what))
    }
}

/// `[flows] workload = { cdf, interpolate, load, duration, start, seed, drop_last }` as
/// written.
#[derive(Deserialize, Debug)]
#[serde(expecting = "the `[flows.workload]` table")]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    cdf: Option<Spanned<String>>,
    interpolate: Option<Spanned<String>>,
    load: Option<Spanned<f64>>,
    duration: Option<Qty>,
    start: Option<Qty>,
    seed: Option<Int>,
    drop_last: Option<bool>,
}

/// `[flows] incast = { senders, size, fraction, receiver, duration, start, seed }` as written.
#[derive(Deserialize, Debug)]
#[serde(expecting = "the `[flows.incast]` table")]
#[serde(deny_unknown_fields)]
pub(super) struct RawIncast {
    senders: Option<Int>,
    size: Option<Qty>,
    fraction: Option<Spanned<f64>>,
    receiver: Option<Int>,
    duration: Option<Qty>,
    start: Option<Qty>,
    seed: Option<Int>,
}

/// What the generators of a scenario produced, for summaries (`dcsim validate`, `dcsim gen`).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadInfo {
    /// The Poisson background traffic, if `workload` is given.
    pub background: Option<BackgroundInfo>,
    /// The incast traffic, if `incast` is given.
    pub incast: Option<IncastInfo>,
}

/// The background traffic of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct BackgroundInfo {
    /// The CDF as written: a built-in name or a file path.
    pub cdf: String,
    /// How the CDF is read (`interpolate`).
    pub interpolation: Interpolation,
    /// Mean flow size of the CDF in bytes, read in that mode.
    pub mean_size: f64,
    /// Target payload load.
    pub load: f64,
    /// The payload load the generated flows offer over the window (below the target by about
    /// one mean-size flow per host, the reference generator's last-candidate drop).
    pub realized_load: f64,
    /// Number of hosts (every host of the topology).
    pub hosts: usize,
    /// Their NIC rate.
    pub host_rate: BitsPerSec,
    /// Start of the arrival window.
    pub start: Time,
    /// Length of the arrival window.
    pub duration: Duration,
    /// Seed used.
    pub seed: u64,
    /// Whether each host's last arrival in the window was dropped (the reference's quirk).
    pub drop_last: bool,
    /// Flows generated.
    pub flows: usize,
}

/// The incast traffic of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastInfo {
    /// Flows generated.
    pub flows: usize,
    /// Senders per event.
    pub senders: usize,
    /// Bytes per flow.
    pub size: u64,
    /// Target fraction of the total host capacity.
    pub fraction: f64,
    /// Start of the arrival window.
    pub start: Time,
    /// Length of the arrival window.
    pub duration: Duration,
    /// Seed used.
    pub seed: u64,
}

/// The generated flows (ids `0..n` within each list) and their description.
pub(super) struct Generated {
    pub background: Vec<FlowSpec>,
    pub incast: Vec<FlowSpec>,
    pub info: Option<WorkloadInfo>,
}

/// Runs the generators of `[flows]`.
pub(super) fn generate(
    src: &Source,
    workload: Option<&RawWorkload>,
    incast: Option<&RawIncast>,
    net: &Network,
    sim_seed: u64,
    mut budget: FlowBudget,
) -> Result<Generated, CliError> {
    let mut out = Generated { background: Vec::new(), incast: Vec::new(), info: None };
    let mut info = WorkloadInfo { background: None, incast: None };
    let mut window = None;
    if let Some(w) = workload {
        let (flows, bg) = background(src, w, net, sim_seed, budget)?;
        window = Some((bg.start, bg.duration, bg.seed));
        budget.left -= flows.len() as u64;
        out.background = flows;
        info.background = Some(bg);
    }
    if let Some(c) = incast {
        let (flows, ic) = incast_flows(src, c, net, sim_seed, window, budget)?;
        out.incast = flows;
        info.incast = Some(ic);
    }
    out.info = Some(info);
    Ok(out)
}

const WORKLOAD: &str = "flows.workload";
const INCAST: &str = "flows.incast";

fn table_span(src: &Source, table: &str) -> Option<Range<usize>> {
    src.span_of(&["flows", table])
}

/// `field: missing; <what>` at the table.
fn missing(src: &Source, table: &str, key: &str, what: &str) -> CliError {
    src.error_at(table_span(src, table), format!("flows.{table}.{key}"), format!("missing; {what}"))
}

/// The hosts of the network and their common NIC rate.
fn hosts_and_rate(
    src: &Source,
    net: &Network,
    table: &str,
) -> Result<(Vec<NodeId>, BitsPerSec), CliError> {
    let hosts = net.hosts().to_vec();
    let Some(&first) = hosts.first() else {
        return Err(src.error_at(
            table_span(src, table),
            format!("flows.{table}"),
            "the topology has no hosts",
        ));
    };
    let rate = net.nic_rate(first);
    if let Some(&other) = hosts.iter().find(|&&h| net.nic_rate(h) != rate) {
        return Err(src.error_at(
            table_span(src, table),
            format!("flows.{table}"),
            format!(
                "the generator needs every host at the same NIC rate, but host {first} has {rate} \
                 and host {other} has {}",
                net.nic_rate(other)
            ),
        ));
    }
    Ok((hosts, rate))
}

fn seed(src: &Source, v: Option<&Int>, field: &str, default: u64) -> Result<u64, CliError> {
    match v {
        Some(v) => src.int(v, field, 0, i64::MAX).map(|x| x as u64),
        None => Ok(default),
    }
}

fn start(src: &Source, v: Option<&Qty>, field: &str, default: Time) -> Result<Time, CliError> {
    match v {
        Some(q) => Ok(Time::from_ps(src.duration(q, field, Zero::Allowed)?.as_ps())),
        None => Ok(default),
    }
}

/// Checks that an arrival window `start .. start + duration` of `[flows] table` ends within
/// [`TIME_LIMIT`](dcsim_core::units::TIME_LIMIT), so that every flow it generates starts within
/// it; the error points at `start` when the scenario gives one, else at `duration`.
fn window_within_limit(
    src: &Source,
    table: &str,
    given_start: bool,
    start: Time,
    duration: Duration,
) -> Result<(), CliError> {
    let limit = dcsim_core::units::TIME_LIMIT.as_ps();
    let end = start.as_ps().checked_add(duration.as_ps());
    if end.is_some_and(|e| e <= limit) {
        return Ok(());
    }
    let key = if given_start { "start" } else { "duration" };
    Err(src.error_at(
        src.span_of(&["flows", table, key]),
        format!("flows.{table}.{key}"),
        format!(
            "the arrival window, {} from {}, ends later than the limit of {}: flows would \
             start beyond it",
            HumanDuration(duration),
            HumanDuration(Duration::from_ps(start.as_ps())),
            dcsim_core::units::TIME_LIMIT_TEXT
        ),
    ))
}

/// A fraction strictly between 0 and 1.
fn fraction(src: &Source, v: &Spanned<f64>, field: &str, what: &str) -> Result<f64, CliError> {
    let x = *v.get_ref();
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(src.error(
            v.span(),
            field,
            format!("{what} must be in (0, 1) exclusive, found {x} (a fraction: 0.3 means 30%)"),
        ))
    }
}

/// The CDF named by `cdf`: a built-in workload, or else a file relative to the scenario.
pub(super) fn load_cdf(src: &Source, cdf: &Spanned<String>, field: &str) -> Result<Cdf, CliError> {
    let name = cdf.get_ref();
    if let Ok(c) = Cdf::builtin(name) {
        return Ok(c);
    }
    let file: PathBuf = src.resolve(name);
    let text = crate::scenario::read_text(&file).map_err(|e| {
        src.error(
            cdf.span(),
            field,
            format!(
                "\"{name}\" is neither a built-in workload ({}) nor a readable CDF file: \
                 cannot read {}: {e}",
                Cdf::builtin_names().join(", "),
                file.display()
            ),
        )
    })?;
    Cdf::parse(&text).map_err(|e| cdf_error(&file, &text, &e))
}

/// A CDF file's error as `FILE:LINE:COL: field `point[i].size`: bad CDF: ...` (or
/// `FILE: bad CDF: ...` for an error about the whole CDF).
pub(crate) fn cdf_error(file: &std::path::Path, text: &str, e: &WorkloadError) -> CliError {
    let pos = e.cdf_position(text).map(|p| (p.line, p.col, p.field));
    super::file_error(file, pos, format!("bad CDF: {}", e.detail()))
}

fn background(
    src: &Source,
    w: &RawWorkload,
    net: &Network,
    sim_seed: u64,
    budget: FlowBudget,
) -> Result<(Vec<FlowSpec>, BackgroundInfo), CliError> {
    let cdf_raw = w.cdf.as_ref().ok_or_else(|| {
        missing(
            src,
            "workload",
            "cdf",
            &format!(
                "expected a built-in workload ({}) or a CDF file",
                Cdf::builtin_names().join(", ")
            ),
        )
    })?;
    let cdf = load_cdf(src, cdf_raw, &format!("{WORKLOAD}.cdf"))?;
    let interpolation = match &w.interpolate {
        Some(m) => Interpolation::from_name(m.get_ref()).ok_or_else(|| {
            let valid: Vec<&str> = Interpolation::ALL.iter().map(|m| m.name()).collect();
            src.error(
                m.span(),
                format!("{WORKLOAD}.interpolate"),
                format!("unknown interpolation \"{}\" (valid: {})", m.get_ref(), valid.join(", ")),
            )
        })?,
        None => Interpolation::Linear,
    };
    let load_raw = w
        .load
        .as_ref()
        .ok_or_else(|| missing(src, "workload", "load", "expected e.g. load = 0.3"))?;
    let load = fraction(src, load_raw, &format!("{WORKLOAD}.load"), "load")?;
    let duration_raw = w.duration.as_ref().ok_or_else(|| {
        missing(
            src,
            "workload",
            "duration",
            "expected the arrival window, e.g. duration = \"10ms\"",
        )
    })?;
    let duration = src.duration(duration_raw, &format!("{WORKLOAD}.duration"), Zero::Rejected)?;
    let start = start(src, w.start.as_ref(), &format!("{WORKLOAD}.start"), Time::ZERO)?;
    window_within_limit(src, "workload", w.start.is_some(), start, duration)?;
    let seed = seed(src, w.seed.as_ref(), &format!("{WORKLOAD}.seed"), sim_seed)?;
    let drop_last = w.drop_last.unwrap_or(true);
    let (hosts, host_rate) = hosts_and_rate(src, net, "workload")?;
    let n_hosts = hosts.len();
    let gen = PoissonWorkload { cdf, hosts, host_rate, load, start, duration, seed, interpolation };
    gen.validate().map_err(|e| match e {
        WorkloadError::InterArrivalTooShort { .. } | WorkloadError::InvalidLoad(_) => {
            src.error(load_raw.span(), format!("{WORKLOAD}.load"), e.to_string())
        }
        other => src.error_at(table_span(src, "workload"), WORKLOAD, other.to_string()),
    })?;
    // The expected count first: a window that would hold too many flows fails at once.
    let key = ["flows", "workload", "duration"];
    let expected = gen.expected_flows();
    if expected > budget.left as f64 {
        let what = format!(
            "about {expected:.3e} flows expected ({n_hosts} hosts, each a flow every {} on \
             average, for {})",
            HumanDuration(Duration::from_ps((gen.mean_inter_arrival_ns() * 1e3) as u64)),
            HumanDuration(duration)
        );
        return Err(budget.exceeded(src, &key, &format!("{WORKLOAD}.duration"), &what));
    }
    let what = format!("about {expected:.3e} flows expected");
    budget.memory(src, &key, &format!("{WORKLOAD}.duration"), expected, &what)?;
    let rule = if drop_last { WindowEnd::DropLast } else { WindowEnd::Exact };
    let flows = gen.generate_at_most(rule, budget.cap()).map_err(|e| match e {
        WorkloadError::TooManyFlows { limit } => budget.exceeded(
            src,
            &key,
            &format!("{WORKLOAD}.duration"),
            &format!("more than {limit} flows generated (about {expected:.0} expected)"),
        ),
        other => src.error_at(table_span(src, "workload"), WORKLOAD, other.to_string()),
    })?;
    let info = BackgroundInfo {
        cdf: cdf_raw.get_ref().clone(),
        interpolation,
        mean_size: gen.mean_size(),
        load,
        realized_load: offered_load(&flows, n_hosts, host_rate, duration),
        hosts: n_hosts,
        host_rate,
        start,
        duration,
        seed,
        drop_last,
        flows: flows.len(),
    };
    Ok((flows, info))
}

fn incast_flows(
    src: &Source,
    c: &RawIncast,
    net: &Network,
    sim_seed: u64,
    window: Option<(Time, Duration, u64)>,
    budget: FlowBudget,
) -> Result<(Vec<FlowSpec>, IncastInfo), CliError> {
    let f = |key: &str| format!("{INCAST}.{key}");
    let senders_raw = c.senders.as_ref().ok_or_else(|| {
        missing(src, "incast", "senders", "expected the senders per event, e.g. senders = 60")
    })?;
    let senders = src.int(senders_raw, &f("senders"), 1, i64::MAX)? as usize;
    let size_raw = c.size.as_ref().ok_or_else(|| {
        missing(src, "incast", "size", "expected the bytes per flow, e.g. size = \"500KB\"")
    })?;
    let size = src.size(size_raw, &f("size"), Zero::Rejected)?.get();
    // Beyond any flow a run can complete, drawn or not (2^64 − 1 B passed when the window
    // happened to hold no incast event). The same bound as a CDF's sizes.
    if size as f64 > dcsim_workload::MAX_CDF_SIZE {
        return Err(src.error(
            size_raw.span(),
            f("size"),
            format!(
                "{size} B is more than 2^62 bytes (4.6 EB), beyond any flow a run can complete"
            ),
        ));
    }
    let fraction_raw = c.fraction.as_ref().ok_or_else(|| {
        missing(
            src,
            "incast",
            "fraction",
            "expected the fraction of the total host capacity, e.g. fraction = 0.02",
        )
    })?;
    let fraction = fraction(src, fraction_raw, &f("fraction"), "fraction")?;
    let receiver_choice = match &c.receiver {
        Some(v) => match host_problem(net, *v.get_ref()) {
            Some(p) => return Err(src.error(v.span(), f("receiver"), p)),
            None => ReceiverChoice::Fixed(NodeId(*v.get_ref() as u32)),
        },
        None => ReceiverChoice::Random,
    };
    let duration = match (&c.duration, window) {
        (Some(q), _) => src.duration(q, &f("duration"), Zero::Rejected)?,
        (None, Some((_, d, _))) => d,
        (None, None) => {
            return Err(missing(
                src,
                "incast",
                "duration",
                "needed when there is no `workload` to share its window with, \
                 e.g. duration = \"10ms\"",
            ))
        }
    };
    let start_default = window.map_or(Time::ZERO, |(s, _, _)| s);
    let start = start(src, c.start.as_ref(), &f("start"), start_default)?;
    window_within_limit(src, "incast", c.start.is_some(), start, duration)?;
    let seed_default = window.map_or(sim_seed, |(_, _, s)| s);
    let seed = seed(src, c.seed.as_ref(), &f("seed"), seed_default)?;
    let (hosts, host_rate) = hosts_and_rate(src, net, "incast")?;
    let gen = Incast {
        hosts,
        host_rate,
        receiver_choice,
        senders,
        size,
        fraction_of_capacity: fraction,
        start,
        duration,
        seed,
    };
    let map_err = |e: WorkloadError| match e {
        WorkloadError::TooFewHosts { .. } => {
            src.error(senders_raw.span(), f("senders"), e.to_string())
        }
        WorkloadError::InterArrivalTooShort { .. } | WorkloadError::InvalidFraction(_) => {
            src.error(fraction_raw.span(), f("fraction"), e.to_string())
        }
        WorkloadError::TooManyFlows { limit } => budget.exceeded(
            src,
            &["flows", "incast", "duration"],
            &f("duration"),
            &format!("more than {limit} incast flows generated"),
        ),
        other => src.error_at(table_span(src, "incast"), INCAST, other.to_string()),
    };
    gen.validate().map_err(map_err)?;
    let expected = gen.expected_flows();
    if expected > budget.left as f64 {
        let what = format!(
            "about {expected:.3e} incast flows expected ({senders} senders per event, an event \
             every {} on average, for {})",
            HumanDuration(Duration::from_ps((gen.mean_event_gap_ns() * 1e3) as u64)),
            HumanDuration(duration)
        );
        return Err(budget.exceeded(src, &["flows", "incast", "duration"], &f("duration"), &what));
    }
    let what = format!("about {expected:.3e} incast flows expected");
    budget.memory(src, &["flows", "incast", "duration"], &f("duration"), expected, &what)?;
    let flows = gen.generate_at_most(budget.cap()).map_err(map_err)?;
    let info = IncastInfo { flows: flows.len(), senders, size, fraction, start, duration, seed };
    Ok((flows, info))
}

/// `[flows] lognormal = { src, dst, flows, start, mean_gap, p5, p95, seed, pg, dport }` as
/// written: the ccafct FCT-harm workload (spec A4) between two hosts.
#[derive(Deserialize, Debug)]
#[serde(expecting = "the `[flows.lognormal]` table")]
#[serde(deny_unknown_fields)]
pub(super) struct RawLognormal {
    src: Option<Int>,
    dst: Option<Int>,
    flows: Option<Int>,
    start: Option<Qty>,
    mean_gap: Option<Qty>,
    p5: Option<Qty>,
    p95: Option<Qty>,
    seed: Option<Int>,
    pg: Option<Int>,
    dport: Option<Int>,
}

const LOGNORMAL: &str = "flows.lognormal";

/// The flows of `[flows] lognormal`: `flows` flows from `src` to `dst`, the first at `start`,
/// then exponential gaps of mean `mean_gap`, sizes lognormal through the given 5th and 95th
/// percentiles (`dcsim_workload::HarmWorkload`).
pub(super) fn lognormal_flows(
    src: &Source,
    w: &RawLognormal,
    net: &Network,
    sim_seed: u64,
    budget: FlowBudget,
) -> Result<Vec<FlowSpec>, CliError> {
    let d = dcsim_workload::HarmWorkload::default();
    let field = |k: &str| format!("{LOGNORMAL}.{k}");
    let host = |v: &Option<Int>, k: &str| -> Result<NodeId, CliError> {
        let v = v.as_ref().ok_or_else(|| missing(src, "lognormal", k, "expected a host id"))?;
        match host_problem(net, *v.get_ref()) {
            Some(p) => Err(src.error(v.span(), field(k), p)),
            None => Ok(NodeId(*v.get_ref() as u32)),
        }
    };
    let (s, t) = (host(&w.src, "src")?, host(&w.dst, "dst")?);
    if s == t {
        let span = w.dst.as_ref().map(|v| v.span());
        return Err(src.error_at(span, field("dst"), format!("same host as src ({s})")));
    }
    let flows = match &w.flows {
        Some(v) => src.int(v, &field("flows"), 1, 10_000_000)? as usize,
        None => d.flows,
    };
    let (key, what) = (["flows", "lognormal", "flows"], format!("{flows} lognormal flows"));
    if flows as u64 > budget.left {
        return Err(budget.exceeded(src, &key, &field("flows"), &what));
    }
    budget.memory(src, &key, &field("flows"), flows as f64, &what)?;
    let start = start(src, w.start.as_ref(), &field("start"), d.start)?;
    let mean_gap = match &w.mean_gap {
        Some(q) => src.duration(q, &field("mean_gap"), Zero::Rejected)?,
        None => d.mean_gap,
    };
    let size = |q: &Option<Qty>, k: &str, default: u64| -> Result<u64, CliError> {
        match q {
            Some(q) => Ok(src.size(q, &field(k), Zero::Rejected)?.0),
            None => Ok(default),
        }
    };
    let p5 = size(&w.p5, "p5", d.p5)?;
    let p95 = size(&w.p95, "p95", d.p95)?;
    let seed = seed(src, w.seed.as_ref(), &field("seed"), sim_seed)?;
    let pg = match &w.pg {
        Some(v) => src.int(v, &field("pg"), 1, 7)? as u8,
        None => dcsim_workload::FLOW_PG,
    };
    let dport = match &w.dport {
        Some(v) => src.int(v, &field("dport"), 0, i64::from(u16::MAX))? as u16,
        None => dcsim_workload::BACKGROUND_DPORT,
    };
    let gen = dcsim_workload::HarmWorkload { flows, start, mean_gap, p5, p95 };
    let list = gen.generate(seed).map_err(|e| {
        let key = match e {
            dcsim_workload::HarmWorkloadError::MeanGapTooShort { .. } => "mean_gap",
            dcsim_workload::HarmWorkloadError::ZeroFlows => "flows",
            _ => "p95",
        };
        let span =
            src.span_of(&["flows", "lognormal", key]).or_else(|| table_span(src, "lognormal"));
        src.error_at(span, field(key), e.to_string())
    })?;
    // The starts add up the gaps: with long gaps they pass the time limit (and saturate).
    let limit = dcsim_core::units::TIME_LIMIT.as_ps();
    if let Some(i) = list.iter().position(|f| f.start.as_ps() > limit) {
        let span = src
            .span_of(&["flows", "lognormal", "mean_gap"])
            .or_else(|| table_span(src, "lognormal"));
        return Err(src.error_at(
            span,
            field("mean_gap"),
            format!(
                "flow {i} would start later than the limit of {}: give a shorter mean_gap, fewer \
                 flows or an earlier start",
                dcsim_core::units::TIME_LIMIT_TEXT
            ),
        ));
    }
    Ok(list
        .into_iter()
        .enumerate()
        .map(|(i, f)| FlowSpec {
            id: dcsim_core::ids::FlowId::from_idx(i),
            src: s,
            dst: t,
            size: f.size,
            start: f.start,
            pg,
            dport,
        })
        .collect())
}
