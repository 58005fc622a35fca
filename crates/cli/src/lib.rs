//! # dcsim-cli
//!
//! The `dcsim` command line: TOML scenarios in, FCT CSVs out.
//!
//! ```text
//! dcsim run SCENARIO.toml [--out DIR] [--seed N] [--threads N]
//! dcsim validate SCENARIO.toml
//! dcsim gen SCENARIO.toml --out FLOWS.txt [--seed N]
//! dcsim analyze FCT.csv[:NAME]... [--buckets SPEC] [--dport N] [--out DIR]
//! dcsim plot FCT.csv[:NAME]... --out DIR [--buckets SPEC] [--dport N] [--title T]
//! dcsim sweep SWEEP.toml [--jobs N] [--shard i/N] [--out DIR] [--dry-run] [--resume]
//! dcsim merge SHARD_DIR... --out DIR
//! dcsim import-ns3 CONFIG.txt --out SCENARIO.toml
//! dcsim compare-ns3 REF_FCT.txt OUR_FCT.csv [--csv OUT.csv]
//! dcsim pint path-tracing --out DIR [--k K,..] [--bits B,..] [--instances N,..] [--trials N]
//! dcsim pint latency --out DIR [--bits B,..] [--sketch N,..] [--hist BYTES,..]
//!                    [--checkpoints P,..] [--flows N]
//! dcsim harm --out DIR [--rtt T,..] [--cca CCA,..] [--seeds N] [--flows N] [--fq-flows N]
//!            [--aqm fq_codel|dualpi2] [--bandwidth RATE] [--warmup T] [--timeout T] [--jobs N]
//! ```
//!
//! The pipeline is parse → validate → run: [`scenario::load`] reads the scenario (and the flow
//! or topology files it names) and returns a [`scenario::ValidScenario`] or a [`CliError`]
//! naming the file, line, column and field; [`schemes::run_with_scheme`] dispatches to the
//! chosen congestion-control scheme; [`output`] renders the result files, which are written
//! atomically and only after the run succeeded. Every error makes the binary exit with
//! status 2.
//!
//! ```
//! use dcsim_cli::scenario::{validate, Source};
//!
//! let text = r#"
//! [topology]
//! kind = "star"
//! senders = 2
//! [[flows.list]]
//! src = 0
//! dst = 2
//! size = "10KB"
//! "#;
//! let v = validate(&Source::new("example.toml", text.to_string()), None).unwrap();
//! assert_eq!((v.net.hosts().len(), v.flows.len(), v.cc.name()), (3, 1, "none"));
//!
//! let bad = Source::new("bad.toml", text.replace("dst = 2", "dst = 9"));
//! assert_eq!(
//!     validate(&bad, None).unwrap_err().to_string(),
//!     "bad.toml:7:7: field `flows.list[0].dst`: host 9 does not exist (hosts are 0..2)"
//! );
//! ```
//!
//! `gen` writes the flows of a scenario's generators (`[flows] workload`, `incast`) as a
//! reference flow file. `analyze` and `plot` ([`analyze`]) turn `fct.csv` files into slowdown
//! tables, CSV files and figures. `sweep` and `merge` ([`sweep`]) run a base scenario over the
//! cartesian product of axis values, in parallel or in shards, and combine the results
//! (`docs/sweeps.md`).
//!
//! `import-ns3` ([`ns3import`]) converts a reference simulator config file into a scenario,
//! reporting every key it does not use; `compare-ns3` ([`compare`]) prints slowdown
//! percentiles of a reference FCT file next to ours (see `docs/ns3.md`).
//!
//! `pint path-tracing` and `pint latency` ([`pint`]) run the PINT paper's telemetry
//! experiments from `dcsim-pint` and write a CSV file and a figure (see `docs/pint.md`).
//!
//! Modules: [`units`] (quantities with units), [`scenario`] (the schema and its validation),
//! [`flowfile`] (the reference flow-file format), [`schemes`] (the scheme registry and
//! profiles), [`output`] (CSV files), [`spans`] (source positions), [`analyze`] (FCT analysis
//! commands), [`sweep`] (sweeps, shards, merging), [`ns3import`] and [`compare`] (the reference
//! simulator's config and FCT files), [`pint`] (the PINT experiments).
#![warn(missing_docs)]

pub mod analyze;
pub mod compare;
pub mod error;
pub mod flowfile;
pub mod harm;
pub mod interrupt;
pub mod ns3import;
pub mod output;
pub mod pint;
pub mod progress;
pub mod queues;
pub mod scenario;
pub mod schemes;
pub mod spans;
pub mod study;
pub mod sweep;
pub mod units;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use dcsim_core::units::Duration;
use dcsim_core::Partitioner;
use dcsim_workload::Interpolation;

use analyze::{BucketSpec, FctInput};
pub use error::CliError;
use scenario::ValidScenario;
use schemes::RunOutput;
use sweep::Shard;
use units::HumanDuration;

/// `dcsim`: a deterministic packet-level datacenter network simulator.
#[derive(Parser, Debug)]
#[command(name = "dcsim", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario and write fct.csv, counters.csv (and unfinished.csv if some flows did
    /// not finish) to the output folder.
    Run(RunArgs),
    /// Check a scenario (and the files it names) and describe it, without running it.
    Validate {
        /// The scenario file (TOML; see docs/scenario.md).
        scenario: PathBuf,
    },
    /// Write the flows of a scenario (those of its `[flows] workload` and `incast` generators,
    /// merged with any explicit flows) as a reference flow file.
    Gen {
        /// The scenario file (TOML; see docs/scenario.md).
        scenario: PathBuf,
        /// The flow file to write (reference format: a count, then
        /// `src dst pg dport size start_seconds` lines).
        #[arg(long, value_name = "FLOWS.txt")]
        out: PathBuf,
        /// Overrides `simulation.seed` (and so the generators' seed unless they set their own).
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
    },
    /// Slowdown percentiles by flow size and FCT summaries of one or more fct.csv files: a
    /// table on stdout, and buckets.csv and summary.csv with --out.
    Analyze(AnalyzeArgs),
    /// Figures from fct.csv files, one line per file: slowdown p50/p95/p99 by flow size and
    /// CDFs of FCT and slowdown, as PNG and SVG.
    Plot(PlotArgs),
    /// Run a base scenario over the cartesian product of axis values (schemes, workloads,
    /// loads, any scenario field), in parallel, and write per-cell results, a combined
    /// summary.csv and figures (see docs/sweeps.md).
    Sweep(SweepArgs),
    /// Join the output folders of `dcsim sweep --shard` runs into the combined outputs of the
    /// whole sweep.
    Merge {
        /// The shard output folders.
        #[arg(required = true, value_name = "SHARD_DIR")]
        shards: Vec<PathBuf>,
        /// The folder to write the merged sweep to (may be one of the shard folders).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Convert a reference simulator (HPCC ns-3) config file into a scenario. Keys that are
    /// not used are reported on stderr; see docs/ns3.md.
    ImportNs3 {
        /// The reference config file (`KEY value` lines).
        config: PathBuf,
        /// The scenario file to write.
        #[arg(long, value_name = "SCENARIO.toml")]
        out: PathBuf,
    },
    /// Compare slowdown percentiles of a reference FCT file with a dcsim fct.csv (p50 within
    /// 10% and p95 within 15% pass). Exits 0 even when some groups miss.
    CompareNs3 {
        /// The reference simulator's FCT output file.
        reference: PathBuf,
        /// dcsim's fct.csv for the same flows.
        ours: PathBuf,
        /// Also write the table as CSV to this file.
        #[arg(long, value_name = "OUT.csv")]
        csv: Option<PathBuf>,
    },
    /// The PINT paper's telemetry experiments (path tracing, latency quantiles): a CSV file
    /// and a figure per experiment, and a table on stdout (see docs/pint.md).
    Pint {
        /// The experiment.
        #[command(subcommand)]
        experiment: pint::PintCommand,
    },
    /// The FCT-harm experiment of ccafct: a workload of short CUBIC flows through one CoDel
    /// queue, alone and beside one bulk flow of each competitor, per RTT; writes harm.csv,
    /// per-run fct.csv and figures and prints ccafct's table (see docs/harm.md). Also
    /// answers to `ccafct`, the name the behavioural spec (A4) gives it.
    #[command(visible_alias = "ccafct")]
    Harm(harm::HarmArgs),
}

/// Arguments of `dcsim analyze`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// fct.csv files written by `dcsim run`, each as PATH or PATH:NAME (default name: the
    /// folder of a file called fct.csv, else the file stem); qlen_hist.csv files (from `run
    /// --queue-lengths`) add a table of each run's pooled queue lengths.
    #[arg(required = true, value_name = "FCT.csv[:NAME]")]
    pub inputs: Vec<FctInput>,
    /// Size buckets: quantile:N (equal-count buckets of N% of the flows), sizes:websearch,
    /// sizes:hadoop (the HPCC figures' sizes) or sizes:10K,100K,1M (upper edges).
    #[arg(long, value_name = "SPEC", default_value = "quantile:10")]
    pub buckets: BucketSpec,
    /// Analyze only flows with this destination port (100 background, 200 incast).
    #[arg(long, value_name = "N")]
    pub dport: Option<u16>,
    /// Also write buckets.csv and summary.csv to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Arguments of `dcsim plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// fct.csv files, each as PATH or PATH:NAME (the line's legend); qlen_hist.csv files add
    /// the queue-length CDF (PREFIX_qlen_cdf.png), one line per run.
    #[arg(required = true, value_name = "FCT.csv[:NAME]")]
    pub inputs: Vec<FctInput>,
    /// The folder to write the figures to.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Size buckets, as for `dcsim analyze`.
    #[arg(long, value_name = "SPEC", default_value = "quantile:10")]
    pub buckets: BucketSpec,
    /// Plot only flows with this destination port.
    #[arg(long, value_name = "N")]
    pub dport: Option<u16>,
    /// Figure title (each caption adds what the figure shows).
    #[arg(long, value_name = "TEXT", default_value = "", value_parser = parse_title)]
    pub title: String,
    /// File name prefix: PREFIX_p50.png, PREFIX_cdf_fct.svg, ... (letters, digits, `.`, `_`,
    /// `+`, `-`; not starting with `.`)
    #[arg(long, value_name = "NAME", default_value = "fct", value_parser = parse_prefix)]
    pub prefix: String,
}

/// Arguments of `dcsim sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep file (TOML; see docs/sweeps.md).
    pub sweep: PathBuf,
    /// Cells run in parallel [default: the number of available cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Run only the cells whose index % N == i (0 <= i < N), for job arrays; combine the
    /// shard folders with `dcsim merge`.
    #[arg(long, value_name = "i/N")]
    pub shard: Option<Shard>,
    /// Output folder (default: `out/` followed by the sweep file's stem).
    #[arg(long, value_name = "DIR", help = "Output folder [default: out/<sweep file stem>]")]
    pub out: Option<PathBuf>,
    /// Build and validate every cell and list the cells (of the shard), without running
    /// anything or writing any file.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep the cells an earlier run of this sweep into the output folder finished (their
    /// `scenario.toml` is the cell's, byte for byte) and run only the others, e.g. after an
    /// interrupted run or a job's time limit; the combined outputs are computed from all.
    #[arg(long)]
    pub resume: bool,
}

/// Arguments of `dcsim run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (TOML; see docs/scenario.md).
    pub scenario: PathBuf,
    /// Output folder (default: `out/` followed by the scenario file's stem).
    #[arg(long, value_name = "DIR", help = "Output folder [default: out/<scenario file stem>]")]
    pub out: Option<PathBuf>,
    /// Overrides `simulation.seed`.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Worker threads (at least 1; at most 512 are used). Above 1 the network is split into
    /// shards, two per thread unless --shards says otherwise (see --partition), and simulated
    /// in parallel; the results are identical for every value.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Shards to split the network into (default: two per thread with several threads, one
    /// with one). Each thread runs its own shards, then claims any not yet started, window by
    /// window; the run summary's `parallel:` line tells how well N
    /// threads would share the work: `--shards 16 --threads 1` measures 16 threads' balance on
    /// any machine. The results are identical for every value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=schemes::MAX_SHARDS as i64))]
    pub shards: Option<u32>,
    /// How nodes are split into shards: `cut` (the default: racks and switches balanced by
    /// the frames the flows will make them handle, then units moved to cut as little of that
    /// traffic between shards as the balance allows: about half the crossings on fat trees),
    /// `load` (balanced the same way, without regard to the traffic cut), `rack` (racks
    /// balanced by hosts, other switches dealt round robin) or `round-robin` (node i in shard
    /// i mod N; every link cut). The results are identical for every value.
    #[arg(long, value_name = "NAME", default_value = "cut", value_parser = parse_partitioner)]
    pub partition: Partitioner,
    /// Also write pfc.csv: every PFC pause/resume frame a switch sent (as `[output] pfc_log`).
    #[arg(long)]
    pub pfc_log: bool,
    /// Also write qlen.csv and qlen_hist.csv: time-weighted backlog statistics and histograms
    /// of every switch egress port (as `[output] queue_lengths`).
    #[arg(long)]
    pub queue_lengths: bool,
    /// Also write windows.csv and barriers.csv (runs on several shards): every shard's window
    /// (its end, thread, start and duration in wall-clock ns, events, crossings taken in) and
    /// every thread's arrival at and departure from each window's barrier, for
    /// `scripts/window_trace.py`. Wall-clock times: they differ from run to run; the run's
    /// other outputs do not change. Written as the run goes (it is stepped by at most 1 ms of
    /// simulated time), so a long run's trace is not held in memory.
    #[arg(long)]
    pub window_trace: bool,
    /// With several threads, deal the shards out to the threads again every N windows by the
    /// wall-clock time each took recently (longest first, each to the least-loaded thread),
    /// keeping the new owners only if they lower the busiest thread's load by 10% or more; a
    /// thread still runs its own shards first, then any not yet taken. 0: shard i stays thread
    /// i mod T's. The summary's `parallel:` line counts the deals and the shards moved. The
    /// results are identical for every value.
    #[arg(long, value_name = "N", default_value_t = schemes::DEFAULT_REBALANCE,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub rebalance: u64,
    /// With several threads, bind each thread to a CPU of its own for the run (Linux; distinct
    /// cores before second hardware threads of one core), so that the system neither moves a
    /// thread away from its caches nor puts two threads on one CPU. Nothing is pinned where
    /// the process's CPU affinity (`taskset`, a cpuset) allows fewer CPUs than the run's
    /// threads; a CPU quota does not narrow it. The summary's `parallel:` line lists the CPUs.
    /// The results are identical either way.
    #[arg(long)]
    pub pin_threads: bool,
    /// Print no progress: by default a progress bar on a terminal (simulated time, events/s,
    /// time left), else a status line on stderr every 10 s.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs one parsed command line, printing its report to `out` and notes (such as the keys
/// `import-ns3` ignored) to `notes`.
///
/// # Errors
/// Any [`CliError`]; no result file is written unless the command succeeded.
pub fn execute(cli: Cli, out: &mut dyn Write, notes: &mut dyn Write) -> Result<(), CliError> {
    match cli.command {
        Command::Run(args) => run_command(&args, out, notes),
        Command::Validate { scenario } => validate_command(&scenario, out),
        Command::Gen { scenario, out: flows, seed } => {
            gen_command(&scenario, &flows, seed, out, notes)
        }
        Command::Analyze(a) => {
            analyze::analyze_command(&a.inputs, &a.buckets, a.dport, a.out.as_deref(), out)
        }
        Command::Plot(a) => {
            analyze::plot_command(&a.inputs, &a.buckets, a.dport, &a.out, &a.prefix, &a.title, out)
        }
        Command::Sweep(a) => {
            let jobs = match a.jobs {
                Some(j) => j as usize,
                None => std::thread::available_parallelism().map_or(1, |n| n.get()),
            };
            let dir = a.out.clone().unwrap_or_else(|| default_out_dir(&a.sweep));
            let shard = a.shard.unwrap_or(Shard::ALL);
            if a.dry_run {
                sweep::dry_run(&a.sweep, jobs, shard, a.resume.then_some(&*dir), out, notes)
            } else {
                sweep::sweep_command(&a.sweep, jobs, shard, a.resume, &dir, out, notes)
            }
        }
        Command::Merge { shards, out: dir } => sweep::merge_command(&shards, &dir, out, notes),
        Command::ImportNs3 { config, out: scenario } => {
            import_command(&config, &scenario, out, notes)
        }
        Command::CompareNs3 { reference, ours, csv } => {
            compare_command(&reference, &ours, csv.as_deref(), out, notes)
        }
        Command::Pint { experiment } => pint::execute(experiment, out),
        Command::Harm(a) => harm::harm_command(&a, out, notes),
    }
}

/// `out/<stem>` for a scenario (or sweep) path.
pub fn default_out_dir(scenario: &Path) -> PathBuf {
    let stem = scenario
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    Path::new("out").join(stem)
}

/// Prints `warnings` to `notes`, each after `warning: `.
fn print_warnings(notes: &mut dyn Write, warnings: &[scenario::warnings::Warning]) {
    for w in warnings {
        let _ = writeln!(notes, "warning: {w}");
    }
}

fn run_command(args: &RunArgs, out: &mut dyn Write, notes: &mut dyn Write) -> Result<(), CliError> {
    let mut valid = scenario::load(&args.scenario, args.seed)?;
    print_warnings(notes, &valid.warnings);
    let parallel = schemes::Parallelism {
        threads: args.threads as usize,
        shards: args.shards.map_or(0, |n| n as usize),
        partitioner: args.partition,
        trace_windows: args.window_trace,
        rebalance: args.rebalance,
        pin_threads: args.pin_threads,
    };
    print_warnings(
        notes,
        &valid.parallel_warnings(parallel.threads, args.shards.map(|n| n as usize)),
    );
    valid.cfg.monitor.pfc_log |= args.pfc_log;
    valid.cfg.monitor.queue_lengths |= args.queue_lengths;
    print_warnings(notes, &valid.monitor_warnings());
    let dir = args.out.clone().unwrap_or_else(|| default_out_dir(&args.scenario));
    output::check_out_dir(&dir)?;
    let headline = format!(
        "{}: {} flow{} on {}, scheme {}",
        valid.path.display(),
        valid.flows.len(),
        if valid.flows.len() == 1 { "" } else { "s" },
        valid.topology,
        valid.cc.name()
    );
    let path = valid.path.clone();
    let dports: Vec<u16> = valid.flows.iter().map(|f| f.dport).collect();
    let all_counters = valid.uses_tcp_or_qdiscs();
    // Applications' queries stream into qct.csv as the run goes.
    let qct = if valid.cfg.apps.is_empty() {
        None
    } else {
        output::create_out_dir(&dir)?;
        let w = output::QctWriter::create(&dir, &valid.cfg.apps, valid.cfg.stop_time)?;
        Some(std::sync::Arc::new(std::sync::Mutex::new(Some(w))))
    };
    let sink: Option<schemes::QuerySink> = qct.clone().map(|w| {
        Box::new(move |q: &[dcsim_core::apps::QueryRecord]| {
            if let Some(w) = w.lock().expect("not poisoned").as_mut() {
                w.write(q);
            }
        }) as schemes::QuerySink
    });
    let taken = |qct: Option<std::sync::Arc<std::sync::Mutex<Option<output::QctWriter>>>>| {
        qct.and_then(|w| w.lock().expect("not poisoned").take())
    };
    // The window trace streams into windows.csv and barriers.csv likewise.
    let windows = if args.window_trace {
        output::create_out_dir(&dir)?;
        let w = output::WindowTraceWriter::create(&dir)?;
        Some(std::sync::Arc::new(std::sync::Mutex::new(Some(w))))
    } else {
        None
    };
    let window_sink: Option<schemes::WindowSink> = windows.clone().map(|w| {
        Box::new(move |t: dcsim_core::WindowTrace| {
            if let Some(w) = w.lock().expect("not poisoned").as_mut() {
                w.write(t);
            }
        }) as schemes::WindowSink
    });
    let progress = (!args.quiet).then(progress::reporter);
    let result = match valid.run_parallel_into(parallel, Vec::new(), sink, window_sink, progress) {
        Ok(r) => r,
        Err(source) => {
            if let Some(w) = taken(qct) {
                w.abandon();
            }
            return Err(CliError::Simulation { file: path, source });
        }
    };

    let refused = result.counters.queries_refused;
    if refused > 0 {
        let _ = writeln!(
            notes,
            "warning: {}: {refused} open-loop query arrivals were refused because their client \
             already held {} unanswered queries: the offered load is more than the network \
             carries (lower `rpc[i].load`; a load of small queries is mostly headers, and their \
             answers' ACKs share the client's link); `queries_refused` in counters.csv",
            path.display(),
            dcsim_core::apps::MAX_PENDING_QUERIES
        );
    }
    if let Some((asked, ran, e)) = &result.parallel.refused {
        let _ = writeln!(
            notes,
            "warning: the system refused to start thread {ran} of the {asked} asked for ({e}): \
             the run went on with {ran} (the results are the same for any thread count)"
        );
    }
    output::create_out_dir(&dir)?;
    let qct = taken(qct);
    let windows = windows.and_then(|w| w.lock().expect("not poisoned").take());
    // Every output is written before any is put in place: a failure leaves the folder's
    // earlier outputs as they were.
    let mut set = output::Staged::new(&dir);
    let totals = stage_run_outputs(&mut set, &result, &dports, all_counters, qct, windows)?;
    let written = set.commit()?;

    let _ = writeln!(out, "{headline}");
    let _ = write_summary(out, &result);
    for t in &totals {
        let _ = writeln!(
            out,
            "app {}: {} measured queries ({} in warm-up or after), {:.0} QPS, mean QCT {:.2} us, \
             mean slowdown {:.3}",
            t.name,
            t.queries,
            t.unmeasured,
            t.qps(),
            t.mean_qct_us(),
            if t.queries > 0 { t.slowdown / t.queries as f64 } else { 0.0 }
        );
    }
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    let _ = writeln!(out, "wrote {}", names.join(", "));
    Ok(())
}

/// Peak resident memory of this process (Linux `VmHWM`), in MiB.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Stages a run's outputs in `set` (put in place together by [`output::Staged::commit`]):
/// `fct.csv`, `unfinished.csv` (or the removal of a stale one), `counters.csv`, and `pfc.csv`,
/// `qlen.csv`, `qlen_hist.csv`, `qlen_class.csv`, `qlen_class_hist.csv`, `qlen_mon.csv` when
/// the run monitored them (else the removal of stale ones), and `qct.csv` from `qct` (else the
/// removal of a stale one), and `windows.csv` and `barriers.csv` from `windows` (else the
/// removal of stale ones); `dports[i]` is flow `i`'s destination port; `all_counters` lists
/// the queue-discipline and TCP counters even when zero (for runs that use them). Returns the
/// applications' totals (none without `qct`); on an error the streamed files are removed.
pub(crate) fn stage_run_outputs(
    set: &mut output::Staged,
    result: &RunOutput,
    dports: &[u16],
    all_counters: bool,
    qct: Option<output::QctWriter>,
    windows: Option<output::WindowTraceWriter>,
) -> Result<Vec<output::AppTotals>, CliError> {
    if let Err(e) = stage_result_files(set, result, dports, all_counters) {
        if let Some(w) = qct {
            w.abandon();
        }
        return Err(e);
    }
    match windows {
        Some(w) => w.finish_into(set)?,
        None => {
            set.remove("windows.csv");
            set.remove("barriers.csv");
        }
    }
    match qct {
        Some(w) => w.finish_into(set),
        None => {
            set.remove("qct.csv");
            Ok(Vec::new())
        }
    }
}

/// The result files of [`stage_run_outputs`], all but `qct.csv`.
fn stage_result_files(
    set: &mut output::Staged,
    result: &RunOutput,
    dports: &[u16],
    all_counters: bool,
) -> Result<(), CliError> {
    set.write("fct.csv", output::fct_csv(&result.results, dports))?;
    match output::unfinished_csv(&result.results, dports) {
        Some(text) => set.write("unfinished.csv", text)?,
        None => set.remove("unfinished.csv"),
    }
    let mut always = Vec::new();
    if result.faults {
        always.push("drops_link_down");
    }
    if result.rto {
        always.extend(["timeouts", "flows_failed"]);
    }
    let counters = if all_counters {
        output::counters_csv_all(&result.counters, &result.summary)
    } else {
        output::counters_csv_listing(&result.counters, &result.summary, &always)
    };
    set.write("counters.csv", counters)?;
    if result.monitor.pfc_log {
        set.write("pfc.csv", output::pfc_csv(&result.pfc_log))?;
    } else {
        set.remove("pfc.csv");
    }
    if result.monitor.queue_lengths {
        set.write("qlen.csv", output::qlen_csv(&result.queues))?;
        set.write("qlen_hist.csv", output::qlen_hist_csv(&result.queues))?;
    } else {
        set.remove("qlen.csv");
        set.remove("qlen_hist.csv");
    }
    if result.monitor.per_class {
        set.write("qlen_class.csv", output::qlen_class_csv(&result.class_queues))?;
        set.write("qlen_class_hist.csv", output::qlen_class_hist_csv(&result.class_queues))?;
    } else {
        set.remove("qlen_class.csv");
        set.remove("qlen_class_hist.csv");
    }
    if result.monitor.qlen_sampler.is_some() {
        set.write("qlen_mon.csv", output::qlen_mon_csv(&result.samples))?;
    } else {
        set.remove("qlen_mon.csv");
    }
    Ok(())
}

/// A plot file name prefix: the start of a file name in the output folder, so no path (a `/`
/// in it failed after plotting, a `..` wrote outside the folder) and no hidden name.
/// A figure title: any text without control characters, which no figure can show (an SVG
/// with one is not well-formed XML).
fn parse_title(t: &str) -> Result<String, String> {
    match t.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "contains the control character U+{:04X}; a title is drawn in every figure",
            u32::from(c)
        )),
        None => Ok(t.to_string()),
    }
}

fn parse_prefix(p: &str) -> Result<String, String> {
    let ok = (1..=100).contains(&p.len())
        && !p.starts_with('.')
        && p.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c));
    if ok {
        Ok(p.to_string())
    } else {
        Err(format!(
            "`{p}` cannot start a file name: use 1 to 100 letters, digits, `.`, `_`, `+` or `-`, \
             not starting with `.`"
        ))
    }
}

/// `--partition`'s value.
fn parse_partitioner(name: &str) -> Result<Partitioner, String> {
    Partitioner::from_name(name).ok_or_else(|| {
        format!("unknown partitioner `{name}`: expected one of {}", Partitioner::NAMES.join(", "))
    })
}

/// The run summary's line on the shards' balance and the barriers (runs with several shards).
fn write_parallel(out: &mut dyn Write, r: &RunOutput) -> std::io::Result<()> {
    let p = &r.parallel;
    let events = p.events();
    let per_window = if p.windows > 0 { events as f64 / p.windows as f64 } else { 0.0 };
    let bound = p.shard_bound();
    let threads = p.wait.len().max(1);
    let mut line = format!(
        "parallel: {} shards by {} on {threads} thread{}, {} windows ({per_window:.0} events \
         each), {} crossings; busiest shard of each window: {} events in all, so one thread per \
         shard is at most {bound:.2}x one thread ({:.0}% of {}); busiest shard overall: {:+.1}% \
         on the mean",
        r.shards,
        r.partitioner.map_or("?", Partitioner::name),
        if threads == 1 { "" } else { "s" },
        p.windows,
        p.crossings,
        p.critical_shard,
        100.0 * bound / r.shards as f64,
        r.shards,
        // No event at all (an idle run): every shard is at the mean.
        if events == 0 {
            0.0
        } else {
            100.0
                * (p.shard_events.iter().max().copied().unwrap_or(0) as f64 * r.shards as f64
                    / events as f64
                    - 1.0)
        },
    );
    if threads > 1 && r.shards > threads {
        // What the claiming can improve on: each thread running only its own shards.
        line.push_str(&format!(
            "; {threads} threads each running only its own shards (shard i on thread i mod \
             {threads}), at most {:.2}x",
            p.thread_bound()
        ));
    }
    if !p.critical_shared.is_empty() {
        let bounds: Vec<String> = p
            .critical_shared
            .iter()
            .filter_map(|&(t, _)| Some(format!("{t} threads {:.2}x", p.shared_bound(t)?)))
            .collect();
        line.push_str(&format!(
            "; shards claimed window by window, at most: {}",
            bounds.join(", ")
        ));
    }
    if p.redeals > 0 {
        line.push_str(&format!(
            "; shards dealt to threads by time {} times, {} moves",
            p.redeals, p.moves
        ));
    }
    if !p.pinned.is_empty() {
        let cpus: Vec<String> = p.pinned.iter().map(usize::to_string).collect();
        line.push_str(&format!("; threads pinned to CPUs {}", cpus.join(",")));
    }
    if !p.wait.is_empty() {
        let waits: Vec<String> = p.wait.iter().map(|w| format!("{:.2}", w.as_secs_f64())).collect();
        line.push_str(&format!("; barrier waits (s) by thread: {}", waits.join(", ")));
    }
    writeln!(out, "{line}")
}

fn write_summary(out: &mut dyn Write, r: &RunOutput) -> std::io::Result<()> {
    let s = &r.summary;
    let c = &r.counters;
    let wall = r.wall.as_secs_f64();
    let per_sec = |n: u64| if wall > 0.0 { format!("{:.0}", n as f64 / wall) } else { "-".into() };
    let rate = per_sec(s.events);
    writeln!(out, "flows: {} done, {} unfinished", s.flows_done, s.flows_unfinished)?;
    writeln!(
        out,
        "simulated time: {}, events: {}, wall time: {:.3} s, events/s: {rate}",
        HumanDuration(Duration::from_ps(s.end_time.as_ps())),
        s.events,
        wall
    )?;
    let peak = peak_memory_mib().map_or_else(|| "unknown".to_string(), |m| format!("{m:.0} MiB"));
    writeln!(
        out,
        "frames/s: {}, shards: {}, peak memory: {peak}",
        per_sec(c.frames_transmitted),
        r.shards
    )?;
    if let Some(why) = &r.fallback {
        writeln!(out, "note: {why}")?;
    } else if r.shards < r.shards_asked {
        // The partitioner keeps a switch with its hosts, and may put several such units in a
        // shard (`cut` to cut less traffic, `rack` dealing host-less switches onto the racks'
        // shards): say so, as the run asked for more.
        let by = r.partitioner.map_or(String::new(), |p| format!("{} ", p.name()));
        writeln!(
            out,
            "note: {} shards asked for, {} made: the {by}partitioner placed the network's \
             switches (each with its hosts) in fewer",
            r.shards_asked, r.shards,
        )?;
    }
    if r.shards > 1 {
        write_parallel(out, r)?;
    }
    let queue = c.aqm_drops + c.qdisc_overflow_drops;
    let mut queue_drops = if queue > 0 {
        format!(", queue overflow {}, AQM {}", c.qdisc_overflow_drops, c.aqm_drops)
    } else {
        String::new()
    };
    if r.faults {
        queue_drops.push_str(&format!(", link down {}", c.drops_link_down));
    }
    writeln!(
        out,
        "drops: {} (buffer {}, no route {}, link loss {}{queue_drops}), PFC pauses: {}, ECN marks: {}",
        c.mmu_drops + c.no_route_drops + c.link_losses + queue + c.drops_link_down,
        c.mmu_drops,
        c.no_route_drops,
        c.link_losses,
        c.pfc_pauses,
        c.ecn_marks
    )?;
    if c.tcp_acks_sent > 0 || c.tcp_retransmits > 0 {
        writeln!(
            out,
            "TCP: {} retransmitted segments, {} recoveries, {} timeouts, {} tail-loss probes",
            c.tcp_retransmits, c.tcp_recoveries, c.timeouts, c.tlp_probes
        )?;
        if c.tcp_undos > 0 {
            writeln!(
                out,
                "TCP undos: {} reductions found spurious, {} of them timeouts by F-RTO",
                c.tcp_undos, c.tcp_spurious_rtos
            )?;
        }
        if c.tcp_reused_connections > 0 {
            writeln!(
                out,
                "TCP connection reuse: {} flows took a connection another flow had dialed",
                c.tcp_reused_connections
            )?;
        }
        if c.tcp_idle_restarts > 0 {
            writeln!(
                out,
                "TCP idle restarts: {} windows restarted after an idle period longer than the RTO",
                c.tcp_idle_restarts
            )?;
        }
    }
    if r.rto {
        writeln!(
            out,
            "RoCE retransmission timeouts: {} (with TCP's, if any), flows that gave up: {}",
            c.timeouts, c.flows_failed
        )?;
    }
    Ok(())
}

/// A one-paragraph description of a validated scenario, followed by its warnings, one
/// `warning: ...` line each.
pub fn describe(v: &ValidScenario) -> String {
    let net = &v.net;
    let hosts = net.hosts().len();
    let switches = net.node_count() - hosts;
    let m = dcsim_topology::network_metrics(net, &v.routes, u64::from(v.cfg.nic.mtu));
    let total: u128 = v.flows.iter().map(|f| u128::from(f.size)).sum();
    let at = |t: dcsim_core::units::Time| HumanDuration(Duration::from_ps(t.as_ps()));
    let first = v.flows.iter().map(|f| f.start).min();
    let last = v.flows.iter().map(|f| f.start).max();
    let starts = match (first, last) {
        (Some(a), Some(b)) if a == b => format!(", all starting at {}", at(a)),
        (Some(a), Some(b)) => format!(", starting from {} to {}", at(a), at(b)),
        _ => String::new(),
    };
    let generated =
        v.workload.as_ref().map_or_else(String::new, |w| format!(" {}", describe_workload(w)));
    let transports = describe_transports(v);
    let apps: String = v
        .rpc
        .iter()
        .map(|r| {
            // A machine never queries itself: say so where the lists overlap (the default
            // server list is every server).
            let selves = r.clients.iter().any(|c| r.servers.contains(c));
            format!(
                " Application {}: clients {:?} to servers {:?}{}, {} connections ({}), {}, mean \
                 query {:.0} B, measured from {} to {}.",
                r.name,
                r.clients,
                r.servers,
                if selves { " (each client to the others)" } else { "" },
                r.connections,
                r.transport,
                r.arrivals,
                r.mean_query,
                at(r.measure_from),
                at(r.stop)
            )
        })
        .collect();
    let faults: String = v.describe_faults().iter().map(|s| format!(" {s}.")).collect();
    let warnings: String =
        v.warnings.iter().chain(&v.monitor_warnings()).map(|w| format!("\nwarning: {w}")).collect();
    format!(
        "{}: valid. Topology {}: {} nodes ({hosts} hosts, {switches} switches), {} links. \
         {} flow{}, {total} bytes in total{starts}.{generated}{apps} Scheme {}.{transports} Max \
         base RTT {}, max BDP {} bytes (payload {} B).{faults} Stop time {}, seed {}.{warnings}",
        v.path.display(),
        v.topology,
        net.node_count(),
        net.links().len(),
        v.flows.len(),
        if v.flows.len() == 1 { "" } else { "s" },
        v.cc.name(),
        HumanDuration(m.max_rtt),
        m.max_bdp,
        v.cfg.nic.mtu,
        HumanDuration(Duration::from_ps(v.cfg.stop_time.as_ps())),
        v.cfg.seed,
    )
}

/// What the flow groups and the switch ports run (empty for a RoCE-only scenario with the
/// default queues).
fn describe_transports(v: &ValidScenario) -> String {
    use dcsim_core::config::Transport;
    let cfg = &v.cfg;
    let mut out = String::new();
    // Without TCP flows (`flow_transport` empty) every flow is RoCE and goes undescribed here;
    // a group that only `[[rpc]]` connections use is still described.
    let count = |t: Transport| cfg.flow_transport.iter().filter(|&&x| x == t).count();
    let roce = count(Transport::Roce);
    if roce > 0 {
        out += &format!(" {roce} RoCE flow{} ({}).", if roce == 1 { "" } else { "s" }, v.cc.name());
    }
    for (i, g) in cfg.tcp_groups.iter().enumerate() {
        let n = count(Transport::Tcp(i as u16));
        // The classes of the group's flows and of the `[[rpc]]` connections over it.
        let group = Transport::Tcp(i as u16);
        let flows = v.flows.iter().zip(&cfg.flow_transport).filter(|(_, t)| **t == group);
        let conns = cfg.apps.connections.iter().filter(|c| c.transport == group);
        let classes: std::collections::BTreeSet<u8> =
            flows.map(|(f, _)| f.pg).chain(conns.map(|c| c.pg)).collect();
        let mut classes: Vec<String> = classes.iter().map(u8::to_string).collect();
        if classes.is_empty() {
            classes.push("none (unused)".into());
        }
        out += &format!(
            " TCP group \"{}\": {n} flow{} with {}, MSS {} B, ECN {:?}, SACK {}, handshake {}, \
             min RTO {}, restart after idle {}, lossy class {}.",
            g.name,
            if n == 1 { "" } else { "s" },
            g.cca.name(),
            g.tcp.mss,
            g.tcp.ecn,
            if g.tcp.sack { "on" } else { "off" },
            match (g.tcp.handshake, g.tcp.reuse) {
                (false, _) => "off".to_string(),
                (true, dcsim_tcp::Reuse::None) => "on".to_string(),
                (true, r) => format!("on, connections reused ({})", r.name()),
            },
            HumanDuration(Duration::from_ps(g.tcp.min_rto.as_ps())),
            if g.tcp.slow_start_after_idle { "on" } else { "off" },
            classes.join(", "),
        );
    }
    let rules = &cfg.switch.qdiscs;
    if !rules.is_empty() {
        let mut kinds: Vec<(&str, Vec<String>)> = Vec::new();
        for r in rules {
            let port = format!("switch {} port {}", r.node, r.port.0);
            match kinds.iter_mut().find(|(k, _)| *k == r.qdisc.name()) {
                // A port's classes have a rule each: name the port once.
                Some((_, ports)) if ports.contains(&port) => {}
                Some((_, ports)) => ports.push(port),
                None => kinds.push((r.qdisc.name(), vec![port])),
            }
        }
        for (kind, ports) in kinds {
            let shown = ports.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
            let more = if ports.len() > 4 {
                format!(" and {} more", ports.len() - 4)
            } else {
                String::new()
            };
            out += &format!(
                " Queue discipline {kind} on {} port{} ({shown}{more}).",
                ports.len(),
                if ports.len() == 1 { "" } else { "s" }
            );
        }
        let default = if cfg.switch.ecn_enabled { "RED/ECN" } else { "drop-tail" };
        out += &format!(" Other switch ports: {default}.");
    }
    if let Some(a) = cfg.switch.dt_alpha {
        out += &format!(" Ingress dynamic threshold: {a} x free buffer.");
    }
    if let Some(cap) = cfg.switch.egress_cap {
        out += &format!(
            " Lossy classes: egress admission, queue limit min({cap}, {} x free buffer).",
            cfg.switch.egress_alpha
        );
    }
    if cfg.switch.ecmp_seed == dcsim_core::config::EcmpSeed::Node {
        out += " ECMP: each switch hashes with its node id as the seed, as the reference does.";
    }
    if cfg.flow_start == dcsim_core::config::FlowStartOrder::AfterQueued {
        out += " Flow starts: after the events already queued for their instant at their host, \
                as the reference starts them.";
    }
    out
}

/// One sentence per generator of a scenario.
pub fn describe_workload(w: &scenario::WorkloadInfo) -> String {
    let mut parts = Vec::new();
    if let Some(b) = &w.background {
        parts.push(format!(
            "Workload {}{} (mean flow {:.0} B) at load {} on {} hosts at {} for {} from {}, \
             seed {}: {} flows, realized load {:.4}.",
            b.cdf,
            if b.interpolation == Interpolation::Linear { "" } else { " (step CDF)" },
            b.mean_size,
            b.load,
            b.hosts,
            b.host_rate,
            HumanDuration(b.duration),
            HumanDuration(Duration::from_ps(b.start.as_ps())),
            b.seed,
            b.flows,
            b.realized_load
        ));
    }
    if let Some(c) = &w.incast {
        // A tiny fraction in scientific notation (as decimals, 1e-300 took 300 digits).
        let fraction = if c.fraction > 0.0 && c.fraction < 1e-4 {
            format!("{:e}", c.fraction)
        } else {
            c.fraction.to_string()
        };
        parts.push(format!(
            "Incast: {} senders x {} B at {} of capacity for {} from {}, seed {}: {} flows.",
            c.senders,
            c.size,
            fraction,
            HumanDuration(c.duration),
            HumanDuration(Duration::from_ps(c.start.as_ps())),
            c.seed,
            c.flows
        ));
    }
    parts.join(" ")
}

fn gen_command(
    path: &Path,
    flows_path: &Path,
    seed: Option<u64>,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let valid = scenario::load(path, seed)?;
    let mut inputs = vec![path.to_path_buf()];
    inputs.extend(scenario::named_files(path, &scenario::read_file(path)?));
    output::refuse_input_as_output("--out", flows_path, &inputs)?;
    print_warnings(notes, &valid.warnings);
    let text = flowfile::write(&valid.flows);
    let (dir, name) = out_file(flows_path)?;
    output::create_out_dir(&dir)?;
    output::write_atomic(&dir, &name, &text)?;
    let _ = writeln!(
        out,
        "wrote {}: {} flow{}",
        flows_path.display(),
        valid.flows.len(),
        if valid.flows.len() == 1 { "" } else { "s" }
    );
    if let Some(w) = &valid.workload {
        let _ = writeln!(out, "{}", describe_workload(w));
    }
    Ok(())
}

fn validate_command(path: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    let valid = scenario::load(path, None)?;
    let _ = writeln!(out, "{}", describe(&valid));
    Ok(())
}

fn import_command(
    config: &Path,
    scenario_path: &Path,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let text = scenario::read_file(config)?;
    let imported = ns3import::convert(config, &text, scenario_path)?;
    // The scenario names the topology and flow files by absolute paths.
    let mut inputs = vec![config.to_path_buf()];
    inputs.extend(scenario::named_files(scenario_path, &imported.toml));
    output::refuse_input_as_output("--out", scenario_path, &inputs)?;
    for n in &imported.notes {
        let at = n.line.map_or_else(String::new, |l| format!("{l}:"));
        let _ = writeln!(notes, "note: {}:{at} {}", config.display(), n.text);
    }
    // Check the scenario before writing it. A scheme that is not available yet is replaced by
    // `none` for the check, so that everything else is still checked.
    let available = schemes::SCHEMES.contains(&imported.scheme);
    let checked = if available { &imported.toml } else { &imported.toml_without_cc };
    let (dir, name) = out_file(scenario_path)?;
    // The folder first: the scenario's relative paths go through it.
    output::create_out_dir(&dir)?;
    let src = scenario::Source::new(scenario_path, checked.clone());
    let valid = scenario::validate(&src, None);
    // Written even if it does not validate, so that the error's line numbers point somewhere.
    output::write_atomic(&dir, &name, &imported.toml)?;
    let written = scenario_path;
    if valid.is_err() {
        let _ = writeln!(
            notes,
            "note: {} was imported from {} and written although it does not validate, so that \
             the error's line points into it; the setting comes from {}",
            written.display(),
            config.display(),
            config.display()
        );
    }
    let valid = valid?;
    // What `validate` would warn about (every flow after the stop time, say), told now.
    print_warnings(notes, &valid.warnings);
    let _ = writeln!(
        out,
        "wrote {} (scheme {}, {} flow{}, {} note{} on stderr)",
        written.display(),
        imported.scheme,
        valid.flows.len(),
        if valid.flows.len() == 1 { "" } else { "s" },
        imported.notes.len(),
        if imported.notes.len() == 1 { "" } else { "s" },
    );
    if available {
        let _ = writeln!(out, "run it with: dcsim run {} --out DIR", written.display());
    } else {
        let _ = writeln!(
            out,
            "scheme {} is not available yet: the scenario validates with [cc] name = \"none\" \
             in its place, and will run once the scheme is added",
            imported.scheme
        );
    }
    Ok(())
}

fn compare_command(
    reference: &Path,
    ours: &Path,
    csv: Option<&Path>,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let line_error = |file: &Path| {
        let file = file.to_path_buf();
        move |e: compare::LineError| CliError::Line {
            file: file.clone(),
            line: e.line,
            message: e.message,
        }
    };
    if let Some(path) = csv {
        output::refuse_input_as_output("--csv", path, &[reference.into(), ours.into()])?;
    }
    let ref_flows = compare::parse_reference(&scenario::read_file(reference)?)
        .map_err(line_error(reference))?;
    let our_flows = compare::parse_ours(&scenario::read_file(ours)?).map_err(line_error(ours))?;
    for (file, flows) in [(reference, &ref_flows), (ours, &our_flows)] {
        if flows.is_empty() {
            return Err(CliError::Input {
                file: file.to_path_buf(),
                message: "no flows to compare".into(),
            });
        }
    }
    let c = compare::Comparison::new(&ref_flows, &our_flows);
    let sets = compare::FlowSets::of(&ref_flows, &our_flows);
    // Not one flow in common: not runs of the same flows, whatever the percentiles say (it
    // printed "3 of 3 groups within tolerance ... PASS").
    if sets.both == 0 {
        return Err(CliError::Input {
            file: ours.to_path_buf(),
            message: format!(
                "no flow in common with {} (same size and start): these are not runs of the \
                 same flows",
                reference.display()
            ),
        });
    }
    if let Some(w) = sets.warning() {
        let _ = writeln!(notes, "warning: {w}");
    }
    let _ = writeln!(out, "reference: {} ({} flows)", reference.display(), ref_flows.len());
    let _ = writeln!(out, "ours:      {} ({} flows)", ours.display(), our_flows.len());
    let _ = writeln!(
        out,
        "flows in both (same size and start): {}; only in the reference: {}; only in ours: {}",
        sets.both, sets.only_reference, sets.only_ours
    );
    let _ = writeln!(
        out,
        "flows in both with the reference's FCT to the ns: {} ({:.1}%)",
        sets.same_fct,
        100.0 * sets.same_fct as f64 / sets.both as f64
    );
    let _ = write!(out, "{}", c.table());
    if let Some(path) = csv {
        let (dir, name) = out_file(path)?;
        output::create_out_dir(&dir)?;
        output::write_atomic(&dir, &name, c.csv())?;
        let _ = writeln!(out, "wrote {}", path.display());
    }
    Ok(())
}

/// An output file's folder (`.` for a bare file name) and name: a path that names a folder
/// (`sub/`, `.`, `..`) is refused (`gen --out sub/` wrote a file named `sub`).
fn out_file(file: &Path) -> Result<(PathBuf, String), CliError> {
    let folder = file.as_os_str().as_encoded_bytes().ends_with(b"/");
    match file.file_name() {
        Some(n) if !folder => {
            let dir = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            Ok((dir.to_path_buf(), n.to_string_lossy().into_owned()))
        }
        _ => Err(CliError::Write {
            path: file.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "names a folder; give the output file's name",
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    /// A figure title with a control character is refused (an SVG with one is not
    /// well-formed); any other text is kept.
    #[test]
    fn titles_have_no_control_characters() {
        assert!(super::parse_title("a\u{1}b").unwrap_err().contains("U+0001"));
        assert!(super::parse_title("a\nb").is_err());
        assert_eq!(super::parse_title("HPCC <30%> & \"ws\"").unwrap(), "HPCC <30%> & \"ws\"");
    }
}
