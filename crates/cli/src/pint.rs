//! `dcsim pint path-tracing` and `dcsim pint latency`: the PINT paper's telemetry experiments
//! (Ben Basat et al., SIGCOMM 2020, §6.2–6.3), computed by [`dcsim_pint`] and written as a CSV
//! file, a figure (PNG and SVG) and a table on stdout. See `docs/pint.md`.
//!
//! Each command is parse → validate → run. [`PathTracingPlan::new`] and [`LatencyPlan::new`]
//! check every option against the library's limits and return a [`CliError::BadOption`]
//! naming the option and the value, before anything runs or is written. `run` then computes
//! one cell per parameter combination (a path length and a budget; a bit width and a storage),
//! in parallel. The library derives every cell's random streams from the seed and the cell's
//! own parameters, so the rows, and the files, are the same for every `--jobs` and whichever
//! other cells are computed.
//!
//! ```
//! use dcsim_cli::pint::{LatencyPlan, PathTracingPlan};
//!
//! let plan = PathTracingPlan::new(&[5, 10], &[8], &[1, 2], 20, 1).unwrap();
//! assert_eq!(plan.budgets, [(8, 1), (8, 2)]);
//! let rows = plan.run(1).unwrap();
//! assert_eq!(rows.len(), 2 * 2 * 2); // k x budget x {PINT, naive}
//!
//! let e = PathTracingPlan::new(&[5, 10], &[4], &[3], 20, 1).unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "--bits, --instances: a budget of 4 bits does not split into 3 instances of 1..=32 bits \
//!      each (total <= 64); every --bits value must split evenly into every --instances value"
//! );
//! let e = LatencyPlan::new(&[4, 8], &[100], &[100], &[100, 50], 2, 1).unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "--checkpoints: values must be strictly increasing, but 50 follows 100"
//! );
//! ```

use std::fmt::{Display, Write as _};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use dcsim_analysis::{plot_lines, Axis, Dash, Legend, Line, LineChart, Panel};
use dcsim_core::config::FlowSpec;
use dcsim_core::ids::{FlowId, NodeId};
use dcsim_core::HopSample;
use dcsim_pint::hist::CodeHist;
use dcsim_pint::kll::Kll;
use dcsim_pint::latency::{LatencyCodec, LatencyModel};
use dcsim_pint::path::{PathScheme, SchemeKind};
use dcsim_pint::{
    latency_table, latency_table_traced, path_tracing_table, trace_range, FlowTrace, LatencyConfig,
    LatencyRow, PathRow, Storage, TraceConfig,
};
use rayon::prelude::*;
use std::sync::Arc;

use crate::error::CliError;
use crate::output::create_out_dir;
use crate::output::{self, check_out_dir};
use crate::scenario;
use crate::sweep::{in_pool, progress};

/// The PINT experiments.
#[derive(Subcommand, Debug)]
pub enum PintCommand {
    /// Path tracing: packets needed to decode a k-hop path from per-packet digests, for PINT
    /// and the naive scheme, per path length and bit budget. Writes path_tracing.csv and
    /// path_tracing.png/.svg to the output folder and prints a table.
    PathTracing(PathTracingArgs),
    /// Latency quantiles: relative error of the per-hop p50 and p99 estimated from compressed
    /// per-packet latency digests, kept exactly or in a KLL sketch, as packets accumulate.
    /// Writes latency.csv and latency.png/.svg to the output folder and prints a table.
    Latency(LatencyArgs),
}

/// Arguments of `dcsim pint path-tracing`.
#[derive(Args, Debug)]
pub struct PathTracingArgs {
    /// Path lengths (hops), strictly increasing.
    #[arg(
        long = "k",
        value_name = "K,...",
        value_delimiter = ',',
        default_value = "5,10,20,36,64"
    )]
    pub k: Vec<usize>,
    /// Bits per packet, strictly increasing; every value is combined with every --instances
    /// value.
    #[arg(long, value_name = "BITS,...", value_delimiter = ',', default_value = "4,8,16")]
    pub bits: Vec<u32>,
    /// Independent instances sharing the bits (8 bits in 2 instances: two 4-bit hashes),
    /// strictly increasing.
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_value = "1,2")]
    pub instances: Vec<u32>,
    /// Random paths per (k, budget, scheme).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub trials: usize,
    /// Master seed.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// The folder to write path_tracing.csv, .png and .svg to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Cells computed in parallel [default: the number of available cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

/// Arguments of `dcsim pint latency`.
#[derive(Args, Debug)]
pub struct LatencyArgs {
    /// Bits per latency digest, strictly increasing.
    #[arg(long, value_name = "BITS,...", value_delimiter = ',', default_value = "4,8")]
    pub bits: Vec<u32>,
    /// KLL sketch sizes (digests kept per hop), strictly increasing; exact storage (every
    /// digest) is always run too. `--sketch ''` for none.
    #[arg(long, value_name = "DIGESTS,...", default_value = "100", value_parser = parse_sizes)]
    pub sketch: Sizes,
    /// Code-histogram sizes in bytes per hop (a bucket is a digest code and a 16-bit count;
    /// when full, pairs of adjacent codes share a bucket), strictly increasing. `--hist ''`
    /// for none.
    #[arg(long, value_name = "BYTES,...", default_value = "100", value_parser = parse_sizes)]
    pub hist: Sizes,
    /// Packet counts at which the error is measured, strictly increasing [default:
    /// 100,1000,5000,50000; with --scenario 100,1000,5000,20000].
    #[arg(long, value_name = "PACKETS,...", value_delimiter = ',')]
    pub checkpoints: Option<Vec<u64>>,
    /// Flows the errors are averaged over: independent synthetic flows, or with --scenario the
    /// largest flows of the scenario that have enough packets.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub flows: usize,
    /// Take the latencies from a simulation of this scenario: every switch hop latency
    /// (queueing + serialization) of the data packets of its largest flows, instead of the
    /// synthetic log-normal hops.
    #[arg(long, value_name = "SCENARIO.toml")]
    pub scenario: Option<PathBuf>,
    /// Worker threads of the --scenario simulation, at least 1, at most 512 used (results do not
    /// depend on it).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "scenario",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Master seed.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// The folder to write latency.csv, .png and .svg to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Cells computed in parallel [default: the number of available cores]; fewer, with a
    /// warning, where the machine refuses the memory of that many cells at once (12 bytes per
    /// packet and hop of the last checkpoint each).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

/// A comma-separated list of sizes that may be empty (`--sketch ''`: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(pub Vec<usize>);

/// Parses [`Sizes`]: `""` is the empty list, otherwise comma-separated non-negative integers.
fn parse_sizes(s: &str) -> Result<Sizes, String> {
    if s.trim().is_empty() {
        return Ok(Sizes(Vec::new()));
    }
    s.split(',')
        .map(|v| v.trim().parse::<usize>().map_err(|e| format!("{:?}: {e}", v.trim())))
        .collect::<Result<_, _>>()
        .map(Sizes)
}

/// The bytes a `dcsim pint latency` cell may hold at once for each packet and hop: its true
/// latencies (8 bytes) and the digests it keeps exactly (4), the most of any storage: 10.7
/// bytes measured (peak resident memory less the process's own, one cell of 10⁷ packets over
/// the synthetic model's 5 hops). [`jobs_within_memory`] runs no more cells at once than the
/// machine grants this for.
pub const LATENCY_BYTES_PER_PACKET_HOP: u64 = 12;

/// The most cells, up to `wanted`, that may run at once when each holds `cell_bytes`: the
/// largest count whose memory `grants` (bytes → whether the allocator would give them now),
/// found by bisection. `None` when not even one cell's is granted.
pub fn jobs_within_memory(
    wanted: usize,
    cell_bytes: u64,
    grants: impl Fn(u64) -> bool,
) -> Option<usize> {
    let fits = |jobs: usize| grants(cell_bytes.saturating_mul(jobs as u64));
    if !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1, wanted.max(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

/// The largest latency checkpoint: the experiment keeps every true latency of a flow in
/// memory (8 bytes per packet and hop), so 10⁷ packets over 5 hops take 400 MB per cell.
pub const MAX_LATENCY_PACKETS: u64 = 10_000_000;

/// The most `--trials` of `dcsim pint path-tracing`: each trial's packet count is kept (8
/// bytes) for the row's percentiles, and a trial decodes a path of up to 2^16 hops, so 10⁷
/// trials take 80 MB and minutes per row.
pub const MAX_PATH_TRIALS: usize = 10_000_000;

/// The longest path `pint path-tracing` traces, hops: far beyond any data-center path (the
/// PINT paper's longest is 64). A trial's time and memory grow with the path (about 3 ms and
/// 0.2 MB per hop with 1-bit digests), and 65,536 hops ran out of memory.
pub const MAX_PATH_K: usize = 1024;

/// The most packets `dcsim pint latency` encodes per cell: `--flows` × the last checkpoint
/// (each packet's digest at every hop, for every storage), a few minutes per cell at 10⁹.
pub const MAX_LATENCY_WORK: u64 = 1_000_000_000;

/// Runs a `dcsim pint` command, printing its table to `out`.
///
/// # Errors
/// A [`CliError::BadOption`] before anything runs, or an output that cannot be written.
pub fn execute(cmd: PintCommand, out: &mut dyn Write) -> Result<(), CliError> {
    let jobs = |j: Option<u32>| match j {
        Some(j) => j as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    match cmd {
        PintCommand::PathTracing(a) => {
            let plan = PathTracingPlan::new(&a.k, &a.bits, &a.instances, a.trials, a.seed)?;
            check_out_dir(&a.out)?;
            path_tracing_command(&plan, jobs(a.jobs), &a.out, out)
        }
        PintCommand::Latency(a) => {
            let checkpoints = a.checkpoints.unwrap_or_else(|| match a.scenario {
                Some(_) => vec![100, 1000, 5000, 20_000],
                None => vec![100, 1000, 5000, 50_000],
            });
            let mut plan =
                LatencyPlan::new(&a.bits, &a.sketch.0, &a.hist.0, &checkpoints, a.flows, a.seed)?;
            check_out_dir(&a.out)?;
            if let Some(scenario) = &a.scenario {
                let last = *plan.checkpoints.last().expect("validated non-empty");
                let rec = record_traces(scenario, a.flows, last, a.threads as usize)?;
                let _ = writeln!(out, "{}", rec.describe());
                plan.traces = Some(rec);
            }
            latency_command(&plan, jobs(a.jobs), &a.out, out)
        }
    }
}

fn bad(option: &'static str, message: String) -> CliError {
    CliError::BadOption { option, message }
}

/// A non-empty, strictly increasing list.
fn increasing<T: PartialOrd + Display>(option: &'static str, values: &[T]) -> Result<(), CliError> {
    if values.is_empty() {
        return Err(bad(option, "needs at least one value".into()));
    }
    match values.windows(2).find(|w| w[0] >= w[1]) {
        Some(w) => Err(bad(
            option,
            format!("values must be strictly increasing, but {} follows {}", w[1], w[0]),
        )),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Path tracing
// ---------------------------------------------------------------------------------------------

/// A validated path-tracing experiment: every path length with every budget, both schemes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTracingPlan {
    /// Path lengths, increasing.
    pub ks: Vec<usize>,
    /// `(bits, instances)` budgets: each `--bits` value with each `--instances` value.
    pub budgets: Vec<(u32, u32)>,
    /// Trials per row.
    pub trials: usize,
    /// Master seed.
    pub seed: u64,
}

/// The number of switch IDs paths are drawn from (the library's default universe).
pub fn path_universe() -> u32 {
    TraceConfig::new(SchemeKind::Pint, 1, 8, 1, 1, 0).universe
}

impl PathTracingPlan {
    /// Checks the options: non-empty strictly increasing lists; `1 <= k <=` [`MAX_PATH_K`]
    /// (and the universe of switch IDs, [`path_universe`], 2¹⁶); every `bits` value split evenly into every
    /// `instances` value, 1 to 32 bits per instance and at most 64 bits; `1 <= trials <=`
    /// [`MAX_PATH_TRIALS`].
    ///
    /// # Errors
    /// [`CliError::BadOption`] naming the option and the value.
    pub fn new(
        ks: &[usize],
        bits: &[u32],
        instances: &[u32],
        trials: usize,
        seed: u64,
    ) -> Result<PathTracingPlan, CliError> {
        increasing("--k", ks)?;
        let universe = path_universe();
        for &k in ks {
            if k == 0 {
                return Err(bad("--k", "path length 0: a path has at least 1 hop".into()));
            }
            if k > MAX_PATH_K {
                return Err(bad(
                    "--k",
                    format!(
                        "path length {k} is more than {MAX_PATH_K} hops (a trial's time and \
                         memory grow with the path; the PINT paper's longest is 64)"
                    ),
                ));
            }
            if k > universe as usize {
                return Err(bad(
                    "--k",
                    format!(
                        "path length {k} is larger than the {universe} switch IDs that paths of \
                         distinct switches are drawn from"
                    ),
                ));
            }
        }
        increasing("--bits", bits)?;
        if bits.contains(&0) {
            return Err(bad("--bits", "0 bits: a digest has at least 1 bit".into()));
        }
        increasing("--instances", instances)?;
        if instances.contains(&0) {
            return Err(bad("--instances", "0 instances: at least 1 is needed".into()));
        }
        let mut budgets = Vec::new();
        for &b in bits {
            for &i in instances {
                if let Err(e) = PathScheme::naive(b, i) {
                    return Err(bad(
                        "--bits, --instances",
                        format!(
                            "{e}; every --bits value must split evenly into every --instances \
                             value"
                        ),
                    ));
                }
                budgets.push((b, i));
            }
        }
        if trials == 0 {
            return Err(bad("--trials", "0 trials: at least 1 is needed".into()));
        }
        if trials > MAX_PATH_TRIALS {
            return Err(bad(
                "--trials",
                format!(
                    "{trials} trials is more than {MAX_PATH_TRIALS}: every trial's packet count \
                     is kept for the percentiles (8 bytes each, per row)"
                ),
            ));
        }
        Ok(PathTracingPlan { ks: ks.to_vec(), budgets, trials, seed })
    }

    /// Computes the rows on `jobs` threads: as [`path_tracing_table`] over all path lengths
    /// and budgets (k, then budget, then PINT before naive), one cell per `(k, budget)`.
    ///
    /// # Errors
    /// [`CliError::Threads`], or [`CliError::Pint`] if the library rejects what passed
    /// validation.
    pub fn run(&self, jobs: usize) -> Result<Vec<PathRow>, CliError> {
        let cells: Vec<(usize, (u32, u32))> =
            self.ks.iter().flat_map(|&k| self.budgets.iter().map(move |&b| (k, b))).collect();
        let bar = progress(cells.len(), "cells");
        let parts = in_pool(jobs, cells.len(), || {
            cells
                .par_iter()
                .map(|&(k, b)| {
                    let rows = path_tracing_table(&[k], &[b], self.trials, self.seed);
                    bar.inc(1);
                    rows
                })
                .collect::<Result<Vec<_>, _>>()
        })??;
        bar.finish_and_clear();
        Ok(parts.concat())
    }
}

/// A panel of a figure: its title and the statistic of a row it plots.
type Stat<R> = (&'static str, fn(&R) -> f64);

/// `8 bits` for one instance, `8 bits (2x4)` for two 4-bit instances.
pub fn budget_label(bits: u32, instances: u32) -> String {
    if instances == 1 {
        format!("{bits} bits")
    } else {
        format!("{bits} bits ({instances}x{})", bits / instances)
    }
}

/// The CSV file: [`PathRow::CSV_HEADER`], then one line per row.
pub fn path_tracing_csv(rows: &[PathRow]) -> String {
    csv_of(PathRow::CSV_HEADER, rows)
}

fn csv_of<R: Display>(header: &str, rows: &[R]) -> String {
    let mut s = format!("{header}\n");
    for r in rows {
        let _ = writeln!(s, "{r}");
    }
    s
}

/// The rows of one scheme (`"pint"` or `"naive"`) for a budget.
fn scheme_rows<'a>(
    rows: &'a [PathRow],
    scheme: &'a str,
    (bits, instances): (u32, u32),
) -> impl Iterator<Item = &'a PathRow> + 'a {
    rows.iter().filter(move |r| r.scheme == scheme && r.bits == bits && r.instances == instances)
}

/// The stdout table: per `(k, budget)`, PINT's and the naive scheme's mean and p99 packets.
pub fn path_tracing_text(plan: &PathTracingPlan, rows: &[PathRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "path tracing: packets to decode a k-hop path ({} trials per row, seed {}, paths of \
         distinct switches from {} IDs)",
        plan.trials,
        plan.seed,
        path_universe()
    );
    let w = plan.budgets.iter().map(|&(b, i)| budget_label(b, i).len()).max().unwrap_or(0).max(6);
    let _ = writeln!(
        s,
        "{:>5}  {:<w$}  {:>10}  {:>9}  {:>10}  {:>9}",
        "k", "budget", "PINT mean", "PINT p99", "naive mean", "naive p99"
    );
    // A row without any decoded trial has no statistics.
    let stats = |r: &PathRow| {
        if r.mean.is_finite() {
            (format!("{:.1}", r.mean), r.p99.to_string())
        } else {
            ("-".to_string(), "-".to_string())
        }
    };
    for r in rows.iter().filter(|r| r.scheme == "pint") {
        let naive = rows.iter().find(|n| {
            n.scheme == "naive" && (n.k, n.bits, n.instances) == (r.k, r.bits, r.instances)
        });
        let (pm, pp) = stats(r);
        let (nm, np) = naive.map_or(("-".into(), "-".into()), stats);
        let label = budget_label(r.bits, r.instances);
        let _ = writeln!(s, "{:>5}  {label:<w$}  {pm:>10}  {pp:>9}  {nm:>10}  {np:>9}", r.k);
    }
    let failures: usize = rows.iter().map(|r| r.failures).sum();
    let wrong: usize = rows.iter().map(|r| r.wrong).sum();
    if failures > 0 {
        let _ = writeln!(
            s,
            "note: {failures} trial(s) were not decoded within the packet cap (column `failures`); \
             their rows' statistics are over the decoded trials only"
        );
    }
    if wrong > 0 {
        let _ = writeln!(
            s,
            "warning: {wrong} trial(s) decoded a wrong path (column `wrong`): this is a bug, \
             please report it"
        );
    }
    s
}

/// The figure: two panels (mean and p99 packets to decode against k, log y axis), one line
/// per budget and scheme: the colour is the budget, PINT solid, naive dashed.
pub fn path_tracing_chart(plan: &PathTracingPlan, rows: &[PathRow]) -> LineChart {
    let stats: [Stat<PathRow>; 2] = [("Mean", |r| r.mean), ("99th percentile", |r| r.p99 as f64)];
    let panels = stats
        .iter()
        .map(|(title, stat)| {
            let mut lines = Vec::new();
            for (bi, &budget) in plan.budgets.iter().enumerate() {
                for (scheme, name, dash) in
                    [("pint", "PINT", Dash::Solid), ("naive", "naive", Dash::Dashed)]
                {
                    let points: Vec<(f64, f64)> =
                        scheme_rows(rows, scheme, budget).map(|r| (r.k as f64, stat(r))).collect();
                    let label = format!("{name}, {}", budget_label(budget.0, budget.1));
                    lines.push(Line::new(label, points, bi, dash));
                }
            }
            Panel { title: (*title).to_string(), lines }
        })
        .collect();
    LineChart {
        title: format!(
            "Path tracing: packets to decode a k-hop path ({} trials; PINT solid, naive dashed)",
            plan.trials
        ),
        x: Axis::linear("Path length k (hops)").integers(),
        y: Axis::log("Packets to decode (log scale)"),
        legend: Legend::Right,
        panels,
    }
}

fn path_tracing_command(
    plan: &PathTracingPlan,
    jobs: usize,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let start = Instant::now();
    let rows = plan.run(jobs)?;
    let wall = start.elapsed().as_secs_f64();
    let written = write_outputs(
        dir,
        "path_tracing",
        &path_tracing_csv(&rows),
        &path_tracing_chart(plan, &rows),
    )?;
    let _ = write!(out, "{}", path_tracing_text(plan, &rows));
    report_written(out, &written, wall, jobs);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Latency
// ---------------------------------------------------------------------------------------------

/// A validated latency experiment: every bit width with exact storage and every sketch size.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyPlan {
    /// Digest bits, increasing.
    pub bits: Vec<u32>,
    /// [`Storage::All`], then a [`Storage::Kll`] per sketch size, then a [`Storage::Hist`]
    /// per histogram size.
    pub storages: Vec<Storage>,
    /// Packet counts, increasing.
    pub checkpoints: Vec<u64>,
    /// Flows averaged over.
    pub flows: usize,
    /// Master seed.
    pub seed: u64,
    /// Recorded latencies to use instead of the synthetic model ([`record_traces`]).
    pub traces: Option<RecordedTraces>,
}

/// Switch hop latencies of a scenario's largest flows, recorded by simulating it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedTraces {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The flows used, in the order of [`Self::traces`].
    pub flows: Vec<FlowId>,
    /// One trace per flow: the first packets (in sequence order) that crossed every switch
    /// of the flow's path, each with its latency at every switch, in ns.
    pub traces: Arc<Vec<FlowTrace>>,
    /// The codec range covering every latency ([`trace_range`]).
    pub range_ns: (f64, f64),
    /// Flows chosen for tracing that did not get enough packets through before the
    /// scenario's stop time (left out).
    pub short: usize,
}

impl RecordedTraces {
    /// One line: scenario, flows, hops and the latency range.
    pub fn describe(&self) -> String {
        let hops: Vec<usize> = self.traces.iter().map(FlowTrace::hops).collect();
        let (lo, hi) = (hops.iter().min().unwrap_or(&0), hops.iter().max().unwrap_or(&0));
        let mut s = format!(
            "recorded {} flow{} of {} ({}{} switch hops each); codec range {} ns to {} ns",
            self.flows.len(),
            if self.flows.len() == 1 { "" } else { "s" },
            self.scenario.display(),
            if lo == hi { String::new() } else { format!("{lo} to ") },
            hi,
            self.range_ns.0,
            self.range_ns.1
        );
        if self.short > 0 {
            let _ = write!(
                s,
                "; {} more flow{} left out (too few packets through before the stop time)",
                self.short,
                if self.short == 1 { "" } else { "s" }
            );
        }
        s
    }
}

/// Simulates the scenario at `path`, recording the switch hop latencies of its `flows` largest
/// flows (ties by id) among those with at least `packets` packets, and returns one trace per
/// flow that got `packets` packets across every switch of its path.
///
/// # Errors
/// The scenario's own errors; [`CliError::BadOption`] for `--checkpoints` if no flow is large
/// enough or none got enough packets through before the stop time.
pub fn record_traces(
    path: &Path,
    flows: usize,
    packets: u64,
    threads: usize,
) -> Result<RecordedTraces, CliError> {
    let valid = scenario::load(path, None)?;
    // A flow's packets: full segments of its transport (the MTU for RoCE, the MSS for TCP).
    let count = |f: &FlowSpec| f.size.div_ceil(valid.segment_of(f.id.idx()));
    let mut chosen: Vec<&FlowSpec> = valid.flows.iter().filter(|f| count(f) >= packets).collect();
    if chosen.is_empty() {
        let most = valid.flows.iter().map(count).max().unwrap_or(0);
        return Err(bad(
            "--checkpoints",
            format!("{packets} packets: the largest flow of {} has {most} packets", path.display()),
        ));
    }
    chosen.sort_by_key(|f| (std::cmp::Reverse(f.size), f.id));
    chosen.truncate(flows);
    let ids: Vec<FlowId> = chosen.iter().map(|f| f.id).collect();
    let file = valid.path.clone();
    let run =
        valid.run(threads, ids.clone()).map_err(|source| CliError::Simulation { file, source })?;
    let mut kept = Vec::new();
    let mut traces = Vec::new();
    for &id in &ids {
        let lo = run.hop_trace.partition_point(|h| h.flow < id);
        let hi = run.hop_trace.partition_point(|h| h.flow <= id);
        if let Some(t) = flow_trace(&run.hop_trace[lo..hi], packets as usize) {
            kept.push(id);
            traces.push(t);
        }
    }
    if traces.is_empty() {
        return Err(bad(
            "--checkpoints",
            format!(
                "{packets} packets: none of the {} traced flows of {} got that many packets \
                 through before the stop time",
                ids.len(),
                path.display()
            ),
        ));
    }
    let range_ns = trace_range(&traces).expect("traces hold packets");
    Ok(RecordedTraces {
        scenario: path.to_path_buf(),
        short: ids.len() - kept.len(),
        flows: kept,
        traces: Arc::new(traces),
        range_ns,
    })
}

/// The first `packets` packets of one flow's samples (ordered by sequence number, origin and
/// transmission time) that crossed the whole path, or `None` if fewer did. A passage is one
/// copy of a packet (same sequence number and origin); the path is the longest passage among
/// the first ones; a packet counts with its first passage over the whole path, so a copy lost
/// on the way is skipped and its retransmission used.
fn flow_trace(samples: &[HopSample], packets: usize) -> Option<FlowTrace> {
    let passages: Vec<&[HopSample]> =
        samples.chunk_by(|a, b| a.seq == b.seq && a.origin == b.origin).collect();
    let longest = passages.iter().take(64).max_by_key(|p| p.len())?;
    let path: Vec<NodeId> = longest.iter().map(|h| h.node).collect();
    let mut lat = Vec::with_capacity(packets * path.len());
    let mut done = 0;
    let mut last_seq = None;
    for p in passages {
        if done == packets {
            break;
        }
        let whole = p.len() == path.len() && p.iter().zip(&path).all(|(h, n)| h.node == *n);
        if !whole || last_seq == Some(p[0].seq) {
            continue;
        }
        last_seq = Some(p[0].seq);
        lat.extend(p.iter().map(|h| h.latency.as_ps() as f64 / 1000.0));
        done += 1;
    }
    (done == packets).then(|| FlowTrace::new(path.len(), lat).expect("whole positive packets"))
}

impl LatencyPlan {
    /// Checks the options: non-empty strictly increasing lists; every bit width usable by the
    /// library's latency codec over its default range (1..=31 bits); every sketch size at
    /// least 8 digests; every histogram size at least two buckets at every bit width;
    /// checkpoints from 1 to [`MAX_LATENCY_PACKETS`]; `flows >= 1`, and `flows` × the last
    /// checkpoint at most [`MAX_LATENCY_WORK`].
    ///
    /// # Errors
    /// [`CliError::BadOption`] naming the option and the value.
    pub fn new(
        bits: &[u32],
        sketches: &[usize],
        hists: &[usize],
        checkpoints: &[u64],
        flows: usize,
        seed: u64,
    ) -> Result<LatencyPlan, CliError> {
        increasing("--bits", bits)?;
        let (lo, hi) = LatencyConfig::new(8, Storage::All, &[1], 1, 0).range_ns;
        for &b in bits {
            LatencyCodec::new(b, lo, hi).map_err(|e| bad("--bits", format!("{b} bits: {e}")))?;
        }
        if !sketches.is_empty() {
            increasing("--sketch", sketches)?;
        }
        for &k in sketches {
            Kll::<u32>::with_budget(k, 0).map_err(|_| {
                bad("--sketch", format!("a sketch of {k} digests: at least 8 are needed"))
            })?;
        }
        if !hists.is_empty() {
            increasing("--hist", hists)?;
        }
        for &bytes in hists {
            for &b in bits {
                CodeHist::with_budget(bytes, b, 0).map_err(|e| bad("--hist", e.to_string()))?;
            }
        }
        increasing("--checkpoints", checkpoints)?;
        if checkpoints[0] == 0 {
            return Err(bad("--checkpoints", "0 packets: checkpoints start at 1".into()));
        }
        let last = *checkpoints.last().expect("checked non-empty");
        if last > MAX_LATENCY_PACKETS {
            let hops = LatencyModel::default().hops();
            return Err(bad(
                "--checkpoints",
                format!(
                    "{last} packets is more than {MAX_LATENCY_PACKETS}: the experiment keeps every \
                     true latency in memory ({} bytes per packet over {hops} hops, per cell)",
                    8 * hops
                ),
            ));
        }
        if flows == 0 {
            return Err(bad("--flows", "0 flows: at least 1 is needed".into()));
        }
        if (flows as u128) * u128::from(last) > u128::from(MAX_LATENCY_WORK) {
            return Err(bad(
                "--flows, --checkpoints",
                format!(
                    "{flows} flows of {last} packets is more than {MAX_LATENCY_WORK} packets to \
                     encode per cell"
                ),
            ));
        }
        let storages = std::iter::once(Storage::All)
            .chain(sketches.iter().map(|&k| Storage::Kll(k)))
            .chain(hists.iter().map(|&b| Storage::Hist(b)))
            .collect();
        Ok(LatencyPlan {
            bits: bits.to_vec(),
            storages,
            checkpoints: checkpoints.to_vec(),
            flows,
            seed,
            traces: None,
        })
    }

    /// The cells: one per `(bits, storage)`.
    pub fn cells(&self) -> usize {
        self.bits.len() * self.storages.len()
    }

    /// The memory one cell may hold at once, bytes: [`LATENCY_BYTES_PER_PACKET_HOP`] for each
    /// packet of the last checkpoint at each hop (of the synthetic model, or of the longest
    /// recorded path).
    pub fn cell_bytes(&self) -> u64 {
        let hops = match &self.traces {
            Some(r) => r.traces.iter().map(FlowTrace::hops).max().unwrap_or(0),
            None => LatencyModel::default().hops(),
        };
        let last = self.checkpoints.last().copied().unwrap_or(0);
        LATENCY_BYTES_PER_PACKET_HOP.saturating_mul(hops as u64).saturating_mul(last)
    }

    /// Computes the rows on `jobs` threads: as [`latency_table`] (bits, then storage, then
    /// checkpoint), one cell per `(bits, storage)`.
    ///
    /// # Errors
    /// [`CliError::Threads`], or [`CliError::Pint`] if the library rejects what passed
    /// validation.
    pub fn run(&self, jobs: usize) -> Result<Vec<LatencyRow>, CliError> {
        let cells: Vec<(u32, Storage)> =
            self.bits.iter().flat_map(|&b| self.storages.iter().map(move |&s| (b, s))).collect();
        let bar = progress(cells.len(), "cells");
        let parts = in_pool(jobs, cells.len(), || {
            cells
                .par_iter()
                .map(|&(b, st)| {
                    let (bits, cps, seed) = (&[b], &self.checkpoints, self.seed);
                    let rows = match &self.traces {
                        None => latency_table(bits, &[st], cps, self.flows, seed),
                        Some(r) => latency_table_traced(
                            r.traces.clone(),
                            r.range_ns,
                            bits,
                            &[st],
                            cps,
                            seed,
                        ),
                    };
                    bar.inc(1);
                    rows
                })
                .collect::<Result<Vec<_>, _>>()
        })??;
        bar.finish_and_clear();
        Ok(parts.concat())
    }
}

/// `exact`, `KLL 100` or `hist 100B`.
fn storage_label(s: Storage) -> String {
    match s {
        Storage::All => "exact".into(),
        Storage::Kll(k) => format!("KLL {k}"),
        Storage::Hist(b) => format!("hist {b}B"),
    }
}

/// The CSV file: [`LatencyRow::CSV_HEADER`], then one line per row.
pub fn latency_csv(rows: &[LatencyRow]) -> String {
    csv_of(LatencyRow::CSV_HEADER, rows)
}

/// The stdout table: one line per checkpoint, one `p50 / p99` column per bits and storage.
pub fn latency_text(plan: &LatencyPlan, rows: &[LatencyRow]) -> String {
    let over = match &plan.traces {
        None => format!("{} hops x {} flows", LatencyModel::default().hops(), plan.flows),
        Some(r) => format!(
            "the switch hops of {} recorded flow{}",
            r.flows.len(),
            if r.flows.len() == 1 { "" } else { "s" }
        ),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "latency quantiles: relative error of the per-hop p50 / p99 estimates (mean over {over}, \
         seed {}; exact = every digest, KLL N = a sketch of N digests per hop, hist NB = a code \
         histogram of N bytes per hop)",
        plan.seed
    );
    let cols: Vec<(u32, Storage)> =
        plan.bits.iter().flat_map(|&b| plan.storages.iter().map(move |&st| (b, st))).collect();
    let labels: Vec<String> =
        cols.iter().map(|&(b, st)| format!("{b} bits {}", storage_label(st))).collect();
    let w = labels.iter().map(String::len).max().unwrap_or(0).max(15);
    let _ = write!(s, "{:>8}", "packets");
    for l in &labels {
        let _ = write!(s, "  {l:>w$}");
    }
    let _ = writeln!(s);
    for &p in &plan.checkpoints {
        let _ = write!(s, "{p:>8}");
        for &(b, st) in &cols {
            let cell = rows
                .iter()
                .find(|r| r.bits == b && r.storage == st && r.packets == p)
                .map_or_else(|| "-".into(), |r| format!("{:.4} / {:.4}", r.p50_err, r.p99_err));
            let _ = write!(s, "  {cell:>w$}");
        }
        let _ = writeln!(s);
    }
    s
}

/// The figure: two panels (p50 and p99 relative error against packets, both axes log), one
/// line per bits and storage: exact storage solid, sketches dashed; one colour per bit width
/// (per bit width and sketch size when there are several sketch sizes).
pub fn latency_chart(plan: &LatencyPlan, rows: &[LatencyRow]) -> LineChart {
    let stats: [Stat<LatencyRow>; 2] =
        [("Median (p50)", |r| r.p50_err), ("99th percentile (p99)", |r| r.p99_err)];
    let sketches = plan.storages.iter().filter(|s| !matches!(s, Storage::All)).count().max(1);
    let panels = stats
        .iter()
        .map(|(title, stat)| {
            let mut lines = Vec::new();
            for (bi, &b) in plan.bits.iter().enumerate() {
                let mut sketch_index = 0;
                for &st in &plan.storages {
                    let (color, dash) = match st {
                        Storage::All => (bi * sketches, Dash::Solid),
                        Storage::Kll(_) | Storage::Hist(_) => {
                            sketch_index += 1;
                            (bi * sketches + sketch_index - 1, Dash::Dashed)
                        }
                    };
                    let points = rows
                        .iter()
                        .filter(|r| r.bits == b && r.storage == st)
                        .map(|r| (r.packets as f64, stat(r)))
                        .collect();
                    let label = format!("{b} bits, {}", storage_label(st));
                    lines.push(Line::new(label, points, color, dash));
                }
            }
            Panel { title: (*title).to_string(), lines }
        })
        .collect();
    LineChart {
        title: format!(
            "Latency quantiles: relative error vs packets ({} {}flows; exact solid, sketch dashed)",
            plan.traces.as_ref().map_or(plan.flows, |r| r.flows.len()),
            if plan.traces.is_some() { "simulated " } else { "" }
        ),
        x: Axis::log("Packets of the flow (log scale)"),
        y: Axis::log("Relative error (log scale)"),
        legend: Legend::Right,
        panels,
    }
}

fn latency_command(
    plan: &LatencyPlan,
    jobs: usize,
    dir: &Path,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let wanted = jobs.clamp(1, plan.cells().max(1));
    let cell = plan.cell_bytes();
    let gib = |bytes: u64| bytes as f64 / (1u64 << 30) as f64;
    let jobs = jobs_within_memory(wanted, cell, |bytes| {
        scenario::limits::memory_refused_bytes(bytes as f64).is_none()
    })
    .ok_or_else(|| {
        bad(
            "--checkpoints",
            format!(
                "a cell keeps up to {:.2} GiB of latencies at once ({LATENCY_BYTES_PER_PACKET_HOP} \
                 bytes per packet and hop), more memory than this machine can allocate; lower \
                 the last checkpoint",
                gib(cell)
            ),
        )
    })?;
    if jobs < wanted {
        let _ = writeln!(
            out,
            "warning: {jobs} job(s) rather than {wanted}: a cell keeps up to {:.2} GiB of \
             latencies at once, and this machine refused the memory of more cells at once \
             (the rows do not depend on the jobs)",
            gib(cell)
        );
    }
    let start = Instant::now();
    let rows = plan.run(jobs)?;
    let wall = start.elapsed().as_secs_f64();
    let written = write_outputs(dir, "latency", &latency_csv(&rows), &latency_chart(plan, &rows))?;
    let _ = write!(out, "{}", latency_text(plan, &rows));
    report_written(out, &written, wall, jobs);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/// Writes `dir/{stem}.csv`, `.png` and `.svg`: the figures are drawn into a hidden folder
/// ([`output::Drafts`]) first, then all three go in place together, so a failure leaves no
/// partial set. Returns the files written.
fn write_outputs(
    dir: &Path,
    stem: &str,
    csv: &str,
    chart: &LineChart,
) -> Result<Vec<PathBuf>, CliError> {
    create_out_dir(dir)?;
    let drafts = output::Drafts::new(dir, &format!("{stem}.plots"))?;
    let mut figures = Vec::new();
    for ext in ["png", "svg"] {
        let path = drafts.path().join(format!("{stem}.{ext}"));
        plot_lines(chart, &path)?;
        figures.push(path);
    }
    // The table and both figures go in place together.
    let mut set = output::Staged::new(dir);
    set.write(&format!("{stem}.csv"), csv)?;
    drafts.stage(&figures, dir, &mut set)?;
    set.commit()
}

fn report_written(out: &mut dyn Write, written: &[PathBuf], wall: f64, jobs: usize) {
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    let s = if jobs == 1 { "" } else { "s" };
    let _ = writeln!(out, "computed in {wall:.1} s with {jobs} job{s}; wrote {}", names.join(", "));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No more cells at once than the machine grants memory for: the largest count that fits
    /// (found by bisection, whatever the count asked for), at least one, and none when one
    /// cell does not fit.
    #[test]
    fn latency_cells_run_within_memory() {
        let upto = |limit: u64| move |bytes: u64| bytes <= limit;
        assert_eq!(jobs_within_memory(8, 3, upto(10)), Some(3));
        assert_eq!(jobs_within_memory(2, 3, upto(10)), Some(2));
        assert_eq!(jobs_within_memory(0, 3, upto(10)), Some(1));
        assert_eq!(jobs_within_memory(usize::MAX, 3, upto(3 * 1000)), Some(1000));
        assert_eq!(jobs_within_memory(16, 11, upto(10)), None);
        assert_eq!(jobs_within_memory(16, u64::MAX, |_| true), Some(16));
        // A cell holds 16 bytes per packet and hop of its last checkpoint.
        let plan = LatencyPlan::new(&[4, 8], &[100], &[], &[100, 1000], 2, 1).unwrap();
        assert_eq!(plan.cells(), 4);
        let hops = LatencyModel::default().hops() as u64;
        assert_eq!(plan.cell_bytes(), LATENCY_BYTES_PER_PACKET_HOP * hops * 1000);
    }

    /// Lost copies are skipped, retransmissions used, duplicates ignored; the path is the
    /// longest passage even when the first packet's first copy was lost.
    #[test]
    fn flow_trace_uses_first_whole_passages() {
        use dcsim_core::units::{Duration, Time};
        let (a, b, c) = (NodeId(10), NodeId(11), NodeId(12));
        let mut v = Vec::new();
        let mut add = |seq: u64, origin: u64, nodes: &[NodeId], lat: &[u64]| {
            for (i, (n, l)) in nodes.iter().zip(lat).enumerate() {
                v.push(HopSample {
                    flow: FlowId(0),
                    seq,
                    origin: Time::from_ns(origin),
                    node: *n,
                    sent: Time::from_ns(origin + 10 * i as u64),
                    latency: Duration::from_ns(*l),
                });
            }
        };
        add(0, 10, &[a], &[99]);
        add(0, 30, &[a, b, c], &[1, 2, 3]);
        add(1000, 12, &[a, b, c], &[4, 5, 6]);
        add(1000, 40, &[a, b, c], &[7, 8, 9]);
        add(2000, 14, &[a, b], &[98, 97]);
        add(2000, 50, &[a, b, c], &[10, 11, 12]);
        let t = flow_trace(&v, 3).unwrap();
        assert_eq!(t.hops(), 3);
        let got: Vec<&[f64]> = (0..3).map(|p| t.packet(p)).collect();
        assert_eq!(got, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [10.0, 11.0, 12.0]]);
        assert!(flow_trace(&v, 4).is_none(), "only three packets crossed");
    }

    #[test]
    fn cells_in_parallel_equal_one_library_call() {
        let plan = PathTracingPlan::new(&[3, 6], &[4, 8], &[1, 2], 5, 9).unwrap();
        let whole = path_tracing_table(&plan.ks, &plan.budgets, plan.trials, plan.seed).unwrap();
        assert_eq!(plan.run(2).unwrap(), whole);

        let plan = LatencyPlan::new(&[4, 8], &[8, 16], &[10], &[10, 40], 2, 3).unwrap();
        let whole =
            latency_table(&plan.bits, &plan.storages, &plan.checkpoints, plan.flows, plan.seed)
                .unwrap();
        assert_eq!(plan.run(2).unwrap(), whole);
    }

    #[test]
    fn validation_messages() {
        let p = |ks: &[usize], bits: &[u32], inst: &[u32], trials| {
            PathTracingPlan::new(ks, bits, inst, trials, 1).unwrap_err().to_string()
        };
        assert_eq!(p(&[], &[8], &[1], 1), "--k: needs at least one value");
        assert_eq!(p(&[0, 5], &[8], &[1], 1), "--k: path length 0: a path has at least 1 hop");
        assert_eq!(
            p(&[5, 70_000], &[8], &[1], 1),
            "--k: path length 70000 is more than 1024 hops (a trial's time and memory grow with \
             the path; the PINT paper's longest is 64)"
        );
        assert!(PathTracingPlan::new(&[MAX_PATH_K], &[8], &[1], 1, 1).is_ok());
        assert_eq!(
            p(&[5, 5], &[8], &[1], 1),
            "--k: values must be strictly increasing, but 5 follows 5"
        );
        assert_eq!(p(&[5], &[0, 8], &[1], 1), "--bits: 0 bits: a digest has at least 1 bit");
        assert_eq!(p(&[5], &[8], &[0], 1), "--instances: 0 instances: at least 1 is needed");
        assert!(p(&[5], &[128], &[1], 1).starts_with("--bits, --instances: a budget of 128 bits"));
        assert_eq!(p(&[5], &[8], &[1], 0), "--trials: 0 trials: at least 1 is needed");

        let l = |bits: &[u32], sk: &[usize], cp: &[u64], flows| {
            LatencyPlan::new(bits, sk, &[], cp, flows, 1).unwrap_err().to_string()
        };
        assert_eq!(
            l(&[0], &[100], &[10], 1),
            "--bits: 0 bits: cannot compress the range [64, 4194304] into 0 bits (need min >= 1, \
             max > min, 1 <= bits <= 31)"
        );
        assert!(l(&[32], &[100], &[10], 1).starts_with("--bits: 32 bits: cannot compress"));
        assert_eq!(
            l(&[4], &[4], &[10], 1),
            "--sketch: a sketch of 4 digests: at least 8 are needed"
        );
        assert_eq!(
            l(&[4], &[100, 100], &[10], 1),
            "--sketch: values must be strictly increasing, but 100 follows 100"
        );
        assert_eq!(LatencyPlan::new(&[4], &[], &[], &[10], 1, 1).unwrap().storages, [Storage::All]);
        assert_eq!(
            LatencyPlan::new(&[4, 8], &[], &[4], &[10], 1, 1).unwrap_err().to_string(),
            "--hist: a histogram of 4 bytes holds fewer than two buckets of 4-bit codes (5 bytes \
             needed)"
        );
        assert_eq!(
            LatencyPlan::new(&[4], &[100], &[50, 100], &[10], 1, 1).unwrap().storages,
            [Storage::All, Storage::Kll(100), Storage::Hist(50), Storage::Hist(100)]
        );
        assert_eq!(
            l(&[4], &[100], &[0, 10], 1),
            "--checkpoints: 0 packets: checkpoints start at 1"
        );
        assert!(l(&[4], &[100], &[20_000_000], 1)
            .starts_with("--checkpoints: 20000000 packets is more than 10000000"));
        assert_eq!(l(&[4], &[100], &[10], 0), "--flows: 0 flows: at least 1 is needed");
    }

    #[test]
    fn table_marks_rows_without_decoded_trials() {
        let plan = PathTracingPlan::new(&[64], &[4], &[1], 2, 1).unwrap();
        let row = |scheme, mean: f64, p99, failures| PathRow {
            scheme,
            k: 64,
            bits: 4,
            instances: 1,
            trials: 2,
            mean,
            p50: p99,
            p99,
            max: p99,
            failures,
            wrong: 0,
        };
        let rows = [row("pint", 400.5, 420, 0), row("naive", f64::NAN, 0, 2)];
        let text = path_tracing_text(&plan, &rows);
        assert!(
            text.contains("\n   64  4 bits       400.5        420           -          -\n"),
            "{text}"
        );
        assert!(text.contains("note: 2 trial(s) were not decoded within the packet cap"), "{text}");
        assert!(!text.contains("warning"), "{text}");
    }

    #[test]
    fn size_lists() {
        assert_eq!(parse_sizes(""), Ok(Sizes(vec![])));
        assert_eq!(parse_sizes("100, 200"), Ok(Sizes(vec![100, 200])));
        assert!(parse_sizes("100,x").unwrap_err().contains("\"x\""));
        assert!(parse_sizes("100,").is_err());
    }

    #[test]
    fn labels() {
        assert_eq!(budget_label(8, 1), "8 bits");
        assert_eq!(budget_label(16, 2), "16 bits (2x8)");
        assert_eq!(storage_label(Storage::Kll(100)), "KLL 100");
        assert_eq!(storage_label(Storage::Hist(100)), "hist 100B");
    }
}
