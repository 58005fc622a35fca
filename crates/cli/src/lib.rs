//! # dcsim-cli
//!
//! The `dcsim` command line: TOML scenarios in, FCT CSVs out.
//!
//! ```text
//! dcsim run SCENARIO.toml [--out DIR] [--seed N] [--threads N]
//! dcsim validate SCENARIO.toml
//! dcsim import-ns3 CONFIG.txt --out SCENARIO.toml
//! dcsim compare-ns3 REF_FCT.txt OUR_FCT.csv [--csv OUT.csv]
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
//! `import-ns3` ([`ns3import`]) converts a reference simulator config file into a scenario,
//! reporting every key it does not use; `compare-ns3` ([`compare`]) prints slowdown
//! percentiles of a reference FCT file next to ours (see `docs/ns3.md`).
//!
//! Modules: [`units`] (quantities with units), [`scenario`] (the schema and its validation),
//! [`flowfile`] (the reference flow-file format), [`schemes`] (the scheme registry and
//! profiles), [`output`] (CSV files), [`spans`] (source positions), [`ns3import`] and
//! [`compare`] (the reference simulator's config and FCT files).
#![warn(missing_docs)]

pub mod compare;
pub mod error;
pub mod flowfile;
pub mod ns3import;
pub mod output;
pub mod scenario;
pub mod schemes;
pub mod spans;
pub mod units;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use dcsim_core::units::Duration;

pub use error::CliError;
use scenario::ValidScenario;
use schemes::{RunOutput, SimInput};
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
    /// Worker threads (at least 1). The engine is currently sequential; results never depend
    /// on this value.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
}

/// Runs one parsed command line, printing its report to `out` and notes (such as the keys
/// `import-ns3` ignored) to `notes`.
///
/// # Errors
/// Any [`CliError`]; no result file is written unless the command succeeded.
pub fn execute(cli: Cli, out: &mut dyn Write, notes: &mut dyn Write) -> Result<(), CliError> {
    match cli.command {
        Command::Run(args) => run_command(&args, out),
        Command::Validate { scenario } => validate_command(&scenario, out),
        Command::ImportNs3 { config, out: scenario } => {
            import_command(&config, &scenario, out, notes)
        }
        Command::CompareNs3 { reference, ours, csv } => {
            compare_command(&reference, &ours, csv.as_deref(), out)
        }
    }
}

/// `out/<stem>` for a scenario path.
pub fn default_out_dir(scenario: &Path) -> PathBuf {
    let stem = scenario
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    Path::new("out").join(stem)
}

fn run_command(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let valid = scenario::load(&args.scenario, args.seed)?;
    let dir = args.out.clone().unwrap_or_else(|| default_out_dir(&args.scenario));
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::Write {
            path: dir,
            source: std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ),
        });
    }
    let headline = format!(
        "{}: {} flow{} on {}, scheme {}",
        valid.path.display(),
        valid.flows.len(),
        if valid.flows.len() == 1 { "" } else { "s" },
        valid.topology,
        valid.cc.name()
    );
    let path = valid.path.clone();
    let ValidScenario { net, routes, cfg, flows, cc, .. } = valid;
    let result = schemes::run_with_scheme(cc, SimInput { net, routes, cfg, flows })
        .map_err(|source| CliError::Simulation { file: path, source })?;

    std::fs::create_dir_all(&dir)
        .map_err(|source| CliError::Write { path: dir.clone(), source })?;
    let fct = output::write_atomic(&dir, "fct.csv", &output::fct_csv(&result.results))?;
    let mut written = vec![fct];
    match output::unfinished_csv(&result.results) {
        Some(text) => written.push(output::write_atomic(&dir, "unfinished.csv", &text)?),
        None => output::remove_stale(&dir, "unfinished.csv")?,
    }
    let counters = output::counters_csv(&result.counters, &result.summary);
    written.push(output::write_atomic(&dir, "counters.csv", &counters)?);

    let _ = writeln!(out, "{headline}");
    let _ = write_summary(out, &result);
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    let _ = writeln!(out, "wrote {}", names.join(", "));
    Ok(())
}

fn write_summary(out: &mut dyn Write, r: &RunOutput) -> std::io::Result<()> {
    let s = &r.summary;
    let c = &r.counters;
    let wall = r.wall.as_secs_f64();
    let rate = if wall > 0.0 { format!("{:.0}", s.events as f64 / wall) } else { "-".into() };
    writeln!(out, "flows: {} done, {} unfinished", s.flows_done, s.flows_unfinished)?;
    writeln!(
        out,
        "simulated time: {}, events: {}, wall time: {:.3} s, events/s: {rate}",
        HumanDuration(Duration::from_ps(s.end_time.as_ps())),
        s.events,
        wall
    )?;
    writeln!(
        out,
        "drops: {} (buffer {}, no route {}, link loss {}), PFC pauses: {}, ECN marks: {}",
        c.mmu_drops + c.no_route_drops + c.link_losses,
        c.mmu_drops,
        c.no_route_drops,
        c.link_losses,
        c.pfc_pauses,
        c.ecn_marks
    )
}

/// A one-paragraph description of a validated scenario.
pub fn describe(v: &ValidScenario) -> String {
    let net = &v.net;
    let hosts = net.hosts().len();
    let switches = net.node_count() - hosts;
    let m = dcsim_topology::network_metrics(net, &v.routes, u64::from(v.cfg.nic.mtu));
    let total: u64 = v.flows.iter().map(|f| f.size).sum();
    let at = |t: dcsim_core::units::Time| HumanDuration(Duration::from_ps(t.as_ps()));
    let first = v.flows.iter().map(|f| f.start).min();
    let last = v.flows.iter().map(|f| f.start).max();
    let starts = match (first, last) {
        (Some(a), Some(b)) if a == b => format!(", all starting at {}", at(a)),
        (Some(a), Some(b)) => format!(", starting from {} to {}", at(a), at(b)),
        _ => String::new(),
    };
    format!(
        "{}: valid. Topology {}: {} nodes ({hosts} hosts, {switches} switches), {} links. \
         {} flow{}, {total} bytes in total{starts}. Scheme {}. Max base RTT {}, max BDP {} bytes \
         (payload {} B). Stop time {}, seed {}.",
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
    for n in &imported.notes {
        let at = n.line.map_or_else(String::new, |l| format!("{l}:"));
        let _ = writeln!(notes, "note: {}:{at} {}", config.display(), n.text);
    }
    // Check the scenario before writing it. A scheme that is not available yet is replaced by
    // `none` for the check, so that everything else is still checked.
    let available = schemes::SCHEMES.contains(&imported.scheme);
    let checked = if available { &imported.toml } else { &imported.toml_without_cc };
    let dir = parent_dir(scenario_path);
    // The folder first: the scenario's relative paths go through it.
    std::fs::create_dir_all(&dir)
        .map_err(|source| CliError::Write { path: dir.clone(), source })?;
    let src = scenario::Source::new(scenario_path, checked.clone());
    let valid = scenario::validate(&src, None);
    let name =
        scenario_path.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(|| {
            CliError::Write {
                path: scenario_path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
            }
        })?;
    // Written even if it does not validate, so that the error's line numbers point somewhere.
    output::write_atomic(&dir, &name, &imported.toml)?;
    let written = scenario_path;
    let valid = valid?;
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
) -> Result<(), CliError> {
    let line_error = |file: &Path| {
        let file = file.to_path_buf();
        move |e: compare::LineError| CliError::Line {
            file: file.clone(),
            line: e.line,
            message: e.message,
        }
    };
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
    let _ = writeln!(out, "reference: {} ({} flows)", reference.display(), ref_flows.len());
    let _ = writeln!(out, "ours:      {} ({} flows)", ours.display(), our_flows.len());
    let _ = write!(out, "{}", c.table());
    if let Some(path) = csv {
        let dir = parent_dir(path);
        std::fs::create_dir_all(&dir)
            .map_err(|source| CliError::Write { path: dir.clone(), source })?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        output::write_atomic(&dir, &name, &c.csv())?;
        let _ = writeln!(out, "wrote {}", path.display());
    }
    Ok(())
}

/// The folder a file path is in (`.` for a bare file name).
fn parent_dir(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
