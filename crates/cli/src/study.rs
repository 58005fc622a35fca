//! The buffer-sizing study's report: a sweep with a `[buffer]` table writes `buffer.csv` (one
//! row per cell: the victim's QPS and QCT, the queue-length distribution of chosen switch
//! ports, their utilisation), optionally `slowdown_by_size.csv` (QCT slowdown p50/p99 per
//! query size), and figures like the seed's, all computed from the cells' `qct.csv`,
//! `qlen.csv`, `qlen_hist.csv` and `counters.csv` (so a merge of shards writes the same).
//!
//! ```toml
//! [buffer]
//! scheme_axis = "variant"   # the axis whose labels name the schemes (default: the first)
//! victim = "victim"         # the [[rpc]] whose QPS and QCT are reported (default: none)
//! queues = "hosts"          # pooled ports: "hosts" (facing `hosts`), "busy", or "all"
//! hosts = [14, 15]
//! busy_utilisation = 0.5    # "busy": ports at least this utilised over the run
//! by_size = true            # also slowdown_by_size.csv
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use dcsim_analysis::{
    percentile, plot_lines, qlen_cdf_chart, Axis, Dash, Legend, Line, LineChart, Panel,
    PooledBacklog,
};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use crate::error::CliError;
use crate::output;
use crate::scenario::Source;
use crate::sweep::Manifest;

/// Which switch egress ports' queues a report pools.
pub const QUEUE_SETS: &[&str] = &["hosts", "busy", "all"];

/// `[buffer]` of a sweep file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(expecting = "the `[buffer]` table")]
pub struct StudySpec {
    /// The axis whose value labels name the schemes.
    pub scheme_axis: String,
    /// The application whose QPS and QCT fill the victim columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim: Option<String>,
    /// `hosts`, `busy` or `all`.
    pub queues: String,
    /// For `hosts`: the hosts whose facing switch ports are pooled.
    #[serde(default)]
    pub hosts: Vec<u32>,
    /// For `busy`: the utilisation a port needs over the run.
    pub busy_utilisation: f64,
    /// Write `slowdown_by_size.csv`.
    pub by_size: bool,
}

impl StudySpec {
    /// Reads `[buffer]` of the sweep file `src`; `axes` are the sweep's axes.
    pub(crate) fn parse(src: &Source, t: &Table, axes: &[&str]) -> Result<StudySpec, CliError> {
        const KEYS: &[&str] =
            &["scheme_axis", "victim", "queues", "hosts", "busy_utilisation", "by_size"];
        let err = |k: &str, m: String| {
            src.error_at(
                src.span_of(&["buffer", k]).or(src.span_of(&["buffer"])),
                format!("buffer.{k}"),
                m,
            )
        };
        if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(err(k, format!("unknown key `{k}` (the keys: {})", KEYS.join(", "))));
        }
        let string = |k: &str| -> Result<Option<String>, CliError> {
            match t.get(k) {
                None => Ok(None),
                Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
                Some(v) => Err(err(k, format!("expected a non-empty string, found {v}"))),
            }
        };
        let scheme_axis = match string("scheme_axis")? {
            Some(a) => a,
            None => axes.first().map(|a| a.to_string()).unwrap_or_default(),
        };
        let queues = string("queues")?.unwrap_or_else(|| "busy".into());
        let hosts = match t.get("hosts") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    Value::Integer(i) if (0..=i64::from(u32::MAX)).contains(i) => Ok(*i as u32),
                    v => Err(err("hosts", format!("expected host ids, found {v}"))),
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(err("hosts", format!("expected an array of host ids, found {v}")))
            }
        };
        let busy_utilisation = match t.get("busy_utilisation") {
            None => 0.5,
            // The range is checked with the other rules (`check`).
            Some(Value::Float(f)) => *f,
            Some(Value::Integer(i)) => *i as f64,
            Some(v) => {
                return Err(err(
                    "busy_utilisation",
                    format!("expected a fraction in [0, 1], found {v}"),
                ))
            }
        };
        let by_size = match t.get("by_size") {
            None => false,
            Some(Value::Boolean(b)) => *b,
            Some(v) => return Err(err("by_size", format!("expected true or false, found {v}"))),
        };
        let spec = StudySpec {
            scheme_axis,
            victim: string("victim")?,
            queues,
            hosts,
            busy_utilisation,
            by_size,
        };
        spec.check(axes).map_err(|(k, m)| err(k, m))?;
        Ok(spec)
    }

    /// The rules on the values, for a spec parsed from a sweep file or read back from a
    /// sweep's manifest (which `dcsim merge` takes as written): the scheme axis is an axis of
    /// `axes`, the port set is known, `queues = "hosts"` names hosts, and the utilisation is
    /// a fraction. `Err` names the key.
    pub(crate) fn check(&self, axes: &[&str]) -> Result<(), (&'static str, String)> {
        if !axes.contains(&self.scheme_axis.as_str()) {
            return Err((
                "scheme_axis",
                format!("`{}` is not an axis (axes: {})", self.scheme_axis, axes.join(", ")),
            ));
        }
        if !QUEUE_SETS.contains(&self.queues.as_str()) {
            return Err((
                "queues",
                format!("unknown port set \"{}\" (valid: {})", self.queues, QUEUE_SETS.join(", ")),
            ));
        }
        if self.queues == "hosts" && self.hosts.is_empty() {
            return Err((
                "hosts",
                "queues = \"hosts\" needs the hosts, e.g. hosts = [14, 15]".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.busy_utilisation) {
            return Err((
                "busy_utilisation",
                format!("expected a fraction in [0, 1], found {}", self.busy_utilisation),
            ));
        }
        if self.victim.as_deref() == Some("") {
            return Err(("victim", "expected a non-empty string".into()));
        }
        Ok(())
    }
}

impl StudySpec {
    /// Whether a cell (its validated scenario) can give the report what it reads: `[[rpc]]`
    /// applications (one named `victim`, if given), queue lengths, and for `queues = "hosts"`
    /// hosts that exist. `Err` names the `[buffer]` key (empty for the section as a whole) and
    /// the problem.
    pub(crate) fn check_cell(
        &self,
        v: &crate::scenario::ValidScenario,
    ) -> Result<(), (&'static str, String)> {
        let apps: Vec<&str> = v.rpc.iter().map(|r| r.name.as_str()).collect();
        if apps.is_empty() {
            return Err((
                "",
                "the scenario has no [[rpc]] applications, whose queries the report reads".into(),
            ));
        }
        if !v.cfg.monitor.queue_lengths {
            return Err((
                "",
                "the scenario does not write queue lengths ([output] queue_lengths = true), \
                 which the report reads"
                    .into(),
            ));
        }
        if let Some(victim) = &self.victim {
            if !apps.contains(&victim.as_str()) {
                return Err((
                    "victim",
                    format!(
                        "no [[rpc]] application named \"{victim}\" (applications: {})",
                        apps.join(", ")
                    ),
                ));
            }
        }
        if self.queues == "hosts" {
            let is_host = |h: u32| {
                (h as usize) < v.net.node_count()
                    && v.net.kind(dcsim_core::ids::NodeId(h)) == dcsim_core::network::NodeKind::Host
            };
            if let Some(h) = self.hosts.iter().find(|&&h| !is_host(h)) {
                return Err(("hosts", format!("node {h} is not a host of the scenario")));
            }
        }
        Ok(())
    }
}

/// One cell's measured queries.
#[derive(Default)]
struct Queries {
    /// (submit ps, qct ps) of the victim's measured queries.
    victim: Vec<(u64, u64)>,
    /// Whether any query of the victim, measured or not, is in the file.
    victim_seen: bool,
    /// (size, slowdown) of every measured query.
    by_size: Vec<(u64, f64)>,
}

pub(crate) fn input_error(file: &Path, message: impl Into<String>) -> CliError {
    CliError::Input { file: file.to_path_buf(), message: message.into() }
}

/// The reader of CSV file `path` and the positions of its columns `names`.
pub(crate) fn open_csv<const N: usize>(
    path: &Path,
    names: [&str; N],
) -> Result<(csv::Reader<std::fs::File>, [usize; N]), CliError> {
    let mut r = csv::Reader::from_path(path).map_err(|e| input_error(path, e.to_string()))?;
    let headers = r.headers().map_err(|e| input_error(path, e.to_string()))?.clone();
    let mut cols = [0; N];
    for (c, name) in cols.iter_mut().zip(names) {
        *c = headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| input_error(path, format!("no `{name}` column")))?;
    }
    Ok((r, cols))
}

/// Nanoseconds with up to three decimals as picoseconds; `None` for anything else, or beyond
/// `u64` picoseconds.
pub(crate) fn ps_of(ns: &str) -> Option<u64> {
    let (int, frac) = ns.split_once('.').unwrap_or((ns, ""));
    let mut f = frac.to_string();
    if f.len() > 3 {
        return None;
    }
    while f.len() < 3 {
        f.push('0');
    }
    int.parse::<u64>().ok()?.checked_mul(1000)?.checked_add(f.parse::<u64>().ok()?)
}

fn read_queries(path: &Path, victim: Option<&str>) -> Result<Queries, CliError> {
    if !path.exists() {
        return Err(input_error(path, "missing: the [buffer] report needs [[rpc]] applications"));
    }
    let names = ["app", "size_bytes", "submit_ns", "qct_ns", "slowdown", "measured"];
    let (mut r, [app, size, submit, qct, slow, measured]) = open_csv(path, names)?;
    let mut q = Queries::default();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| input_error(path, e.to_string()))?;
        let bad = || input_error(path, format!("row {}: malformed", i + 2));
        q.victim_seen |= victim == Some(&rec[app]);
        if &rec[measured] != "1" {
            continue;
        }
        let sz: u64 = rec[size].parse().map_err(|_| bad())?;
        let sd: f64 = rec[slow].parse().map_err(|_| bad())?;
        q.by_size.push((sz, sd));
        if victim == Some(&rec[app]) {
            let s = ps_of(&rec[submit]).ok_or_else(bad)?;
            let t = ps_of(&rec[qct]).ok_or_else(bad)?;
            q.victim.push((s, t));
        }
    }
    Ok(q)
}

/// A switch egress port from `qlen.csv`.
struct PortRow {
    switch: u32,
    port: u32,
    peer: u32,
    utilisation: f64,
    max: u64,
}

fn read_ports(path: &Path) -> Result<Vec<PortRow>, CliError> {
    if !path.exists() {
        return Err(input_error(
            path,
            "missing: the [buffer] report needs queue lengths ([output] queue_lengths = true)",
        ));
    }
    let names = ["switch", "port", "peer", "utilisation", "max_bytes"];
    let (mut r, [sw, port, peer, util, max]) = open_csv(path, names)?;
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| input_error(path, e.to_string()))?;
        let num = |i: usize| rec[i].parse::<u64>().map_err(|_| input_error(path, "malformed row"));
        out.push(PortRow {
            switch: num(sw)? as u32,
            port: num(port)? as u32,
            peer: num(peer)? as u32,
            utilisation: rec[util].parse().map_err(|_| input_error(path, "malformed row"))?,
            max: num(max)?,
        });
    }
    Ok(out)
}

/// The pooled time-weighted histogram of the chosen ports of a `qlen_hist.csv`.
fn read_pooled(path: &Path, ports: &[(u32, u32)]) -> Result<PooledBacklog, CliError> {
    crate::queues::read_backlog(path, |sw, port| ports.contains(&(sw, port)))
}

/// One row of `buffer.csv`.
struct Row {
    scheme: String,
    cell: String,
    victim: Option<VictimStats>,
    queue_p50: u64,
    queue_p99: u64,
    queue_mean: f64,
    queue_max: u64,
    ports: usize,
    utilisation: f64,
    counters: BTreeMap<String, String>,
    bins: PooledBacklog,
    by_size: Vec<(u64, usize, f64, f64)>,
}

struct VictimStats {
    queries: usize,
    qps: f64,
    mean_us: f64,
    p50_us: f64,
    p99_us: f64,
    qps_halves: (f64, f64),
}

fn victim_stats(v: &mut [(u64, u64)]) -> Option<VictimStats> {
    if v.len() < 2 {
        return None;
    }
    v.sort_unstable();
    let (first, last) = (v[0].0, v[v.len() - 1].0);
    let span = (last - first) as f64 * 1e-12;
    if span <= 0.0 {
        return None;
    }
    let mid = first + (last - first) / 2;
    let a = v.iter().filter(|q| q.0 < mid).count() as f64;
    let b = v.len() as f64 - a;
    let mut qct: Vec<f64> = v.iter().map(|q| q.1 as f64 / 1e6).collect();
    qct.sort_by(f64::total_cmp);
    Some(VictimStats {
        queries: v.len(),
        qps: v.len() as f64 / span,
        mean_us: qct.iter().sum::<f64>() / qct.len() as f64,
        p50_us: percentile(&qct, 0.5).unwrap_or(0.0),
        p99_us: percentile(&qct, 0.99).unwrap_or(0.0),
        qps_halves: (a / (span / 2.0), b / (span / 2.0)),
    })
}

/// Slowdown percentiles per query size: (size, queries, p50, p99).
fn by_size(mut v: Vec<(u64, f64)>) -> Vec<(u64, usize, f64, f64)> {
    v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let size = v[i].0;
        let j = i + v[i..].iter().take_while(|x| x.0 == size).count();
        let s: Vec<f64> = v[i..j].iter().map(|x| x.1).collect();
        out.push((
            size,
            s.len(),
            percentile(&s, 0.5).unwrap_or(0.0),
            percentile(&s, 0.99).unwrap_or(0.0),
        ));
        i = j;
    }
    out
}

/// Header of `buffer.csv` (the contract's columns first).
pub const BUFFER_HEADER: [&str; 19] = [
    "scheme",
    "victim_qps",
    "qct_mean_us",
    "qct_p50_us",
    "qct_p99_us",
    "queue_p50_bytes",
    "queue_p99_bytes",
    "utilisation",
    "cell",
    "victim_queries",
    "qps_first_half",
    "qps_second_half",
    "queue_mean_bytes",
    "queue_max_bytes",
    "ports",
    "drops",
    "pfc_pauses",
    "timeouts",
    "queries_completed",
];

/// Writes `buffer.csv`, `slowdown_by_size.csv` (when asked) and the study's figures into
/// `dir`, from the cells of `m` under `dir/cells/`. Returns the files written.
///
/// # Errors
/// A cell without the files the report needs, or a file that cannot be written.
pub fn write_report(
    dir: &Path,
    m: &Manifest,
    spec: &StudySpec,
    notes: &mut dyn Write,
) -> Result<Vec<PathBuf>, CliError> {
    let axis = m.axes.iter().position(|a| a.key == spec.scheme_axis);
    let mut rows = Vec::with_capacity(m.cells.len());
    for c in &m.cells {
        let cdir = dir.join("cells").join(&c.name);
        let scheme = match axis {
            Some(a) => m.axes[a].labels[c.values[a]].clone(),
            None => c.name.clone(),
        };
        let mut q = read_queries(&cdir.join("qct.csv"), spec.victim.as_deref())?;
        if let (Some(victim), false) = (&spec.victim, q.victim_seen) {
            // A sweep checks the name against each cell's applications before it runs; a
            // manifest edited since, or a victim that completed no query, would otherwise
            // leave the victim's columns empty without a word.
            let _ = writeln!(
                notes,
                "note: cell {}: no query of application \"{victim}\" in qct.csv; its victim \
                 columns are empty",
                c.name
            );
        }
        let ports = read_ports(&cdir.join("qlen.csv"))?;
        let chosen: Vec<&PortRow> = ports
            .iter()
            .filter(|p| match spec.queues.as_str() {
                "hosts" => spec.hosts.contains(&p.peer),
                "busy" => p.utilisation >= spec.busy_utilisation,
                _ => true,
            })
            .collect();
        let keys: Vec<(u32, u32)> = chosen.iter().map(|p| (p.switch, p.port)).collect();
        let bins = read_pooled(&cdir.join("qlen_hist.csv"), &keys)?;
        if chosen.is_empty() {
            let _ = writeln!(
                notes,
                "note: cell {}: no switch port matches queues = \"{}\"",
                c.name, spec.queues
            );
        }
        let utilisation = if chosen.is_empty() {
            0.0
        } else {
            chosen.iter().map(|p| p.utilisation).sum::<f64>() / chosen.len() as f64
        };
        let text = crate::scenario::read_text(&cdir.join("counters.csv"))
            .map_err(|source| CliError::Read { path: cdir.join("counters.csv"), source })?;
        let counters: BTreeMap<String, String> = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(','))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        rows.push(Row {
            scheme,
            cell: c.name.clone(),
            victim: victim_stats(&mut q.victim),
            queue_p50: bins.percentile(0.5),
            queue_p99: bins.percentile(0.99),
            queue_mean: bins.mean(),
            queue_max: chosen.iter().map(|p| p.max).max().unwrap_or(0),
            ports: chosen.len(),
            utilisation,
            counters,
            bins,
            by_size: if spec.by_size {
                by_size(std::mem::take(&mut q.by_size))
            } else {
                Vec::new()
            },
        });
    }

    let f3 = |x: f64| format!("{x:.3}");
    let mut csv = vec![BUFFER_HEADER.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    for r in &rows {
        let v = r.victim.as_ref();
        let opt = |f: &dyn Fn(&VictimStats) -> String| v.map_or_else(String::new, f);
        let get = |k: &str| r.counters.get(k).cloned().unwrap_or_else(|| "0".into());
        let drops: u64 =
            ["mmu_drops", "qdisc_overflow_drops", "aqm_drops", "no_route_drops", "link_losses"]
                .iter()
                .map(|k| get(k).parse::<u64>().unwrap_or(0))
                .sum();
        csv.push(vec![
            r.scheme.clone(),
            opt(&|s| f3(s.qps)),
            opt(&|s| f3(s.mean_us)),
            opt(&|s| f3(s.p50_us)),
            opt(&|s| f3(s.p99_us)),
            r.queue_p50.to_string(),
            r.queue_p99.to_string(),
            format!("{:.4}", r.utilisation),
            r.cell.clone(),
            opt(&|s| s.queries.to_string()),
            opt(&|s| f3(s.qps_halves.0)),
            opt(&|s| f3(s.qps_halves.1)),
            f3(r.queue_mean),
            r.queue_max.to_string(),
            r.ports.to_string(),
            drops.to_string(),
            get("pfc_pauses"),
            get("timeouts"),
            get("queries_completed"),
        ]);
    }
    let mut set = output::Staged::new(dir);
    set.write("buffer.csv", csv_text(&csv))?;
    if spec.by_size {
        let mut t =
            vec![["scheme", "size_bytes", "queries", "p50", "p99"].map(String::from).to_vec()];
        for r in &rows {
            for &(size, n, p50, p99) in &r.by_size {
                t.push(vec![
                    r.scheme.clone(),
                    size.to_string(),
                    n.to_string(),
                    format!("{p50:.4}"),
                    format!("{p99:.4}"),
                ]);
            }
        }
        set.write("slowdown_by_size.csv", csv_text(&t))?;
    } else {
        set.remove("slowdown_by_size.csv");
    }
    // The figures are drawn into a hidden folder of plots/ and go in place with the tables.
    let plots = dir.join("plots");
    let made = !plots.exists();
    output::create_out_dir(&plots)?;
    let placed = (|| {
        let drafts = output::Drafts::new(&plots, "plots")?;
        let drawn = figures(drafts.path(), &rows, spec, notes)?;
        drafts.stage(&drawn, &plots, &mut set)?;
        set.commit()
    })();
    if made {
        // Leave no empty folder behind: no figure, or a failure (`remove_dir` removes only an
        // empty one).
        let _ = std::fs::remove_dir(&plots);
    }
    placed
}

fn csv_text(rows: &[Vec<String>]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(r).expect("in-memory CSV");
    }
    String::from_utf8(w.into_inner().expect("in-memory CSV")).expect("ASCII")
}

/// The points of one scheme's line from its index and victim statistics.
type PointsOf = dyn Fn(usize, &VictimStats) -> Vec<(f64, f64)>;

/// Draws `chart` as `dir/name.png` and `.svg` (`dir`: the study's [`output::Drafts`] folder).
fn draw(dir: &Path, name: &str, chart: &LineChart) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{name}.{ext}"));
        plot_lines(chart, &path)?;
        out.push(path);
    }
    Ok(out)
}

fn figures(
    dir: &Path,
    rows: &[Row],
    spec: &StudySpec,
    notes: &mut dyn Write,
) -> Result<Vec<PathBuf>, CliError> {
    let mut written = Vec::new();
    let legend = Legend::Right;
    // Victim QPS and QCT per scheme (the seed's Fig. 1): one marker per scheme.
    if rows.iter().any(|r| r.victim.is_some()) {
        // One line per scheme with a victim, its points from `points`.
        let per_scheme = |points: &PointsOf| -> Vec<Line> {
            rows.iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let v = r.victim.as_ref()?;
                    Some(Line::new(&r.scheme, points(i, v), i, Dash::Solid))
                })
                .collect()
        };
        let qps = LineChart {
            title: format!("Victim QPS ({})", spec.victim.as_deref().unwrap_or("")),
            x: Axis::linear("scheme").integers(),
            y: Axis::linear("queries per second"),
            legend,
            panels: vec![Panel {
                title: String::new(),
                lines: per_scheme(&|i, v| vec![(i as f64 + 1.0, v.qps)]),
            }],
        };
        written.extend(draw(dir, "buffer_qps", &qps)?);
        let qct = LineChart {
            title: "Victim QCT: mean, p50, p99".into(),
            x: Axis::linear("1 = mean, 2 = p50, 3 = p99").integers(),
            y: Axis::log("QCT (us)"),
            legend,
            panels: vec![Panel {
                title: String::new(),
                lines: per_scheme(&|_, v| vec![(1.0, v.mean_us), (2.0, v.p50_us), (3.0, v.p99_us)]),
            }],
        };
        written.extend(draw(dir, "buffer_qct", &qct)?);
    }
    // Queue-length CDF of the pooled ports (the seed's Fig. 2 and 5).
    let runs: Vec<(&str, &PooledBacklog)> =
        rows.iter().map(|r| (r.scheme.as_str(), &r.bins)).collect();
    let chart = qlen_cdf_chart(&format!("Queue length CDF ({} ports)", spec.queues), &runs);
    if chart.panels[0].lines.is_empty() {
        let _ = writeln!(notes, "note: no queue-length histogram to plot");
    } else {
        written.extend(draw(dir, "buffer_queue_cdf", &chart)?);
    }
    // Slowdown by query size (the seed's Fig. 4).
    if spec.by_size && rows.iter().any(|r| !r.by_size.is_empty()) {
        let panel = |p99: bool| Panel {
            title: if p99 { "p99".into() } else { "median".into() },
            lines: rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let pts = r
                        .by_size
                        .iter()
                        .map(|&(s, _, a, b)| (s as f64 / 1024.0, if p99 { b } else { a }))
                        .collect();
                    Line::new(&r.scheme, pts, i, Dash::Solid)
                })
                .collect(),
        };
        let chart = LineChart {
            title: "QCT slowdown by query size".into(),
            x: Axis::log("query size (KiB)"),
            y: Axis::log("slowdown"),
            legend,
            panels: vec![panel(false), panel(true)],
        };
        written.extend(draw(dir, "buffer_slowdown_by_size", &chart)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_with_decimals_become_picoseconds() {
        assert_eq!(ps_of("12"), Some(12_000));
        assert_eq!(ps_of("10152.32"), Some(10_152_320));
        assert_eq!(ps_of("0.001"), Some(1));
        assert_eq!(ps_of("1.0001"), None);
        assert_eq!(ps_of("x"), None);
        // Beyond u64 picoseconds: none (the product overflowed: a panic in debug builds).
        assert_eq!(ps_of("18446744073709551"), Some(18_446_744_073_709_551_000));
        assert_eq!(ps_of("18446744073709552"), None);
    }

    #[test]
    fn victim_rates_and_quantiles() {
        // 11 queries submitted 1 ms apart, QCTs 1..=11 us: 10 ms span.
        let mut v: Vec<(u64, u64)> =
            (0..11u64).map(|i| (i * 1_000_000_000, (i + 1) * 1_000_000)).collect();
        let s = victim_stats(&mut v).unwrap();
        assert_eq!(s.queries, 11);
        assert!((s.qps - 1100.0).abs() < 1e-6, "{}", s.qps);
        assert!((s.mean_us - 6.0).abs() < 1e-9);
        assert_eq!((s.p50_us, s.p99_us), (6.0, 11.0));
        // Halves of the span: 5 submissions before 5 ms, 6 from it.
        assert!((s.qps_halves.0 - 1000.0).abs() < 1e-6 && (s.qps_halves.1 - 1200.0).abs() < 1e-6);
        assert!(victim_stats(&mut [(0, 1)]).is_none());
    }

    #[test]
    fn slowdowns_group_by_exact_size() {
        let v = vec![(4000, 2.0), (8000, 5.0), (4000, 1.0), (4000, 3.0)];
        assert_eq!(by_size(v), vec![(4000, 3, 2.0, 3.0), (8000, 1, 5.0, 5.0)]);
    }
}
