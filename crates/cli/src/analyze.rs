//! `dcsim analyze` and `dcsim plot`: slowdown percentiles by flow size from `fct.csv` files,
//! as tables, CSV files and figures (the computations are `dcsim-analysis`'s).
//!
//! Inputs are named `PATH[:NAME]`; without a name, a file called `fct.csv` (or `qlen_hist.csv`)
//! is named after its folder (`out/hpcc/fct.csv` → `hpcc`) and any other file after its stem.
//! An input whose header is `qlen_hist.csv`'s is a run's queue lengths: its ports are pooled
//! into one time-weighted backlog distribution (module [`crate::queues`]), printed as a table,
//! written as `qlen_summary.csv` and drawn as a CDF (`PREFIX_qlen_cdf.png`), one line per run.
//!
//! Size buckets ([`BucketSpec`]): `quantile:N` (equal-count buckets of N percent of the flows,
//! like the reference `fct_analysis.py` but keeping the largest flow), `sizes:websearch` /
//! `sizes:hadoop` (the x-axis sizes of the HPCC/PINT figures), or `sizes:10K,100K,1M` (upper
//! edges; `K`, `M`, `G` are powers of 1000).
//!
//! ```
//! use dcsim_cli::analyze::BucketSpec;
//! let b: BucketSpec = "sizes:10K,1M".parse().unwrap();
//! assert_eq!(b, BucketSpec::Sizes { name: "10K,1M".into(), edges: vec![10_000, 1_000_000] });
//! assert_eq!("quantile:5".parse::<BucketSpec>().unwrap().to_string(), "quantile:5");
//! assert!("quantile:0".parse::<BucketSpec>().is_err());
//! ```

use std::collections::HashSet;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use dcsim_analysis::{
    buckets_by_quantile, buckets_by_size, buckets_csv, buckets_table, parse_fct_csv, plot_all,
    summarize, summary_csv, summary_table, AnalysisError, Bucket, FctRow, GroupSummary,
    PooledBacklog, Summary, HADOOP_SIZE_EDGES, WEBSEARCH_SIZE_EDGES,
};

use crate::error::CliError;
use crate::{output, queues};

/// How flows are grouped by size for the slowdown-by-size tables and figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BucketSpec {
    /// Equal-count buckets of this many percent of the flows (1..=100).
    Quantile(u32),
    /// Fixed upper edges (inclusive), plus an overflow bucket when needed.
    Sizes {
        /// `websearch`, `hadoop`, or the list as written.
        name: String,
        /// Strictly increasing edges in bytes.
        edges: Vec<u64>,
    },
}

/// The default buckets: ten equal-count buckets, the x axis of the HPCC/PINT figures.
pub const DEFAULT_BUCKETS: BucketSpec = BucketSpec::Quantile(10);

const BUCKET_SYNTAX: &str =
    "expected quantile:N (N = 1..=100 percent), sizes:websearch, sizes:hadoop or sizes:EDGE,EDGE,... \
     (e.g. sizes:10K,100K,1M)";

impl FromStr for BucketSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<BucketSpec, String> {
        let bad = |why: String| format!("bad bucket spec `{s}`: {why}");
        let (kind, arg) = s.split_once(':').ok_or_else(|| bad(BUCKET_SYNTAX.to_string()))?;
        match kind.trim() {
            "quantile" => {
                let step: u32 = arg.trim().parse().map_err(|_| bad(BUCKET_SYNTAX.to_string()))?;
                if !(1..=100).contains(&step) {
                    return Err(bad(format!("the step must be 1..=100 percent, found {step}")));
                }
                Ok(BucketSpec::Quantile(step))
            }
            "sizes" => {
                let arg = arg.trim();
                let edges = match arg.to_ascii_lowercase().as_str() {
                    "websearch" => WEBSEARCH_SIZE_EDGES.to_vec(),
                    "hadoop" => HADOOP_SIZE_EDGES.to_vec(),
                    _ => arg
                        .split(',')
                        .map(parse_edge)
                        .collect::<Result<Vec<u64>, String>>()
                        .map_err(bad)?,
                };
                if let Some(w) = edges.windows(2).find(|w| w[0] >= w[1]) {
                    return Err(bad(format!(
                        "edges must strictly increase, but {} follows {}",
                        w[1], w[0]
                    )));
                }
                let name = match arg.to_ascii_lowercase().as_str() {
                    n @ ("websearch" | "hadoop") => n.to_string(),
                    _ => arg.to_string(),
                };
                Ok(BucketSpec::Sizes { name, edges })
            }
            _ => Err(bad(BUCKET_SYNTAX.to_string())),
        }
    }
}

/// One size edge: a size with an optional unit; `K`, `M`, `G` alone mean KB, MB, GB.
fn parse_edge(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let expanded = match t.chars().last() {
        Some('K' | 'k' | 'M' | 'G') => format!("{}{}B", &t[..t.len() - 1], &t[t.len() - 1..]),
        _ => t.to_string(),
    };
    let expanded = expanded.replace("kB", "KB");
    match crate::units::parse_size(&expanded) {
        Ok(b) if b.get() > 0 => Ok(b.get()),
        Ok(_) => Err("an edge must be at least 1 byte".to_string()),
        Err(e) => Err(format!("edge `{t}`: {e}")),
    }
}

impl fmt::Display for BucketSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BucketSpec::Quantile(step) => write!(f, "quantile:{step}"),
            BucketSpec::Sizes { name, .. } => write!(f, "sizes:{name}"),
        }
    }
}

impl BucketSpec {
    /// The buckets of `rows`.
    ///
    /// # Errors
    /// Only for specs not built by [`BucketSpec::from_str`] (a step or edges out of range).
    pub fn buckets(&self, rows: &[FctRow]) -> Result<Vec<Bucket>, AnalysisError> {
        match self {
            BucketSpec::Quantile(step) => buckets_by_quantile(rows, *step),
            BucketSpec::Sizes { edges, .. } => buckets_by_size(rows, edges),
        }
    }
}

/// Flows smaller than this form the extra summary group `<200KB` (the HPCC results' "short
/// flows < 200 KB").
pub const SHORT_FLOW_BYTES: u64 = 200_000;

/// The summary groups: `all`, `<100KB`, `<200KB`, `>1MB` (dcsim-analysis's [`summarize`] plus
/// `<200KB`).
pub fn summary(rows: &[FctRow]) -> Summary {
    let mut s = summarize(rows);
    let short: Vec<FctRow> = rows.iter().filter(|r| r.size < SHORT_FLOW_BYTES).cloned().collect();
    let all_short = summarize(&short).groups.into_iter().next().expect("summarize has `all`");
    let g = GroupSummary { name: "<200KB", ..all_short };
    let at = s.groups.iter().position(|g| g.name == "<100KB").map_or(s.groups.len(), |i| i + 1);
    s.groups.insert(at, g);
    s
}

/// An `fct.csv` to analyze and the name it goes by in tables and legends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FctInput {
    /// The file.
    pub path: PathBuf,
    /// Its name.
    pub name: String,
}

impl FromStr for FctInput {
    type Err = String;

    /// `PATH:NAME` or `PATH`. The text is split at its last `:` unless the whole text names an
    /// existing file.
    fn from_str(s: &str) -> Result<FctInput, String> {
        if !Path::new(s).is_file() {
            if let Some((path, name)) = s.rsplit_once(':') {
                if name.is_empty() {
                    return Err(format!("`{s}`: empty name after `:`"));
                }
                if let Some(c) = name.chars().find(|c| c.is_control()) {
                    return Err(format!(
                        "`{}`: the name contains the control character U+{:04X}; a name is \
                         printed in tables and drawn in figures",
                        s.escape_debug(),
                        u32::from(c)
                    ));
                }
                if !path.is_empty() && !name.contains('/') {
                    return Ok(FctInput { path: path.into(), name: name.to_string() });
                }
            }
        }
        Ok(FctInput { path: s.into(), name: printable(default_name(Path::new(s))) })
    }
}

/// `hpcc` for `out/hpcc/fct.csv`, the stem otherwise.
fn default_name(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if stem == "fct" || stem == "qlen_hist" {
        if let Some(dir) = path.parent().and_then(Path::file_name) {
            return dir.to_string_lossy().into_owned();
        }
    }
    if stem.is_empty() {
        "fct".to_string()
    } else {
        stem
    }
}

/// `name` with each control character (a file or folder may be named with one) replaced by
/// U+FFFD, so that tables keep their lines and figures stay well-formed.
fn printable(name: String) -> String {
    if name.chars().any(char::is_control) {
        name.chars().map(|c| if c.is_control() { '\u{FFFD}' } else { c }).collect()
    } else {
        name
    }
}

/// Reads an `fct.csv`, keeping only flows with destination port `dport` if given.
///
/// # Errors
/// An unreadable or empty file, missing columns, a bad value (with its line), `--dport` on a
/// file without a `dport` column, or no flows left.
pub fn load_rows(path: &Path, dport: Option<u16>) -> Result<Vec<FctRow>, CliError> {
    let text = crate::scenario::read_file(path)?;
    let file = path.to_path_buf();
    let header = text.lines().next().unwrap_or("");
    if header.trim().is_empty() {
        return Err(CliError::Input {
            file,
            message: "empty file; expected a dcsim fct.csv (header flow_id,src,dst,size_bytes,\
                      start_ns,fct_ns,ideal_fct_ns,...)"
                .into(),
        });
    }
    let rows = parse_fct_csv(text.as_bytes(), &path.display().to_string())?;
    let Some(port) = dport else {
        if rows.is_empty() {
            return Err(CliError::Input { file, message: "no completed flows to analyze".into() });
        }
        return Ok(rows);
    };
    if !header.split(',').any(|c| c.trim() == "dport") {
        return Err(CliError::Input {
            file,
            message: format!(
                "--dport {port} needs a `dport` column, which this file does not have (dcsim \
                 run writes it as the last column)"
            ),
        });
    }
    let rows: Vec<FctRow> = rows.into_iter().filter(|r| r.dport == Some(port)).collect();
    if rows.is_empty() {
        return Err(CliError::Input {
            file,
            message: format!("no completed flows with dport {port} to analyze"),
        });
    }
    Ok(rows)
}

/// The inputs of `analyze` and `plot`, loaded: FCT files and queue-length histograms
/// (`qlen_hist.csv`, told apart by their header), each with its name.
struct Loaded {
    fct: Vec<(String, Vec<FctRow>)>,
    queues: Vec<(String, PooledBacklog)>,
}

impl Loaded {
    fn queue_runs(&self) -> Vec<(&str, &PooledBacklog)> {
        self.queues.iter().map(|(n, b)| (n.as_str(), b)).collect()
    }
}

/// Loads every input; names must be distinct among the `fct.csv` inputs and among the
/// queue-length inputs (a run's two files share its folder's name).
fn load_inputs(inputs: &[FctInput], dport: Option<u16>) -> Result<Loaded, CliError> {
    let kinds: Vec<bool> = inputs.iter().map(|i| queues::is_qlen_hist(&i.path)).collect();
    // A file named as a histogram that does not start with its header (an empty one was taken
    // for an fct.csv, and reported as a second fct.csv input of its folder's name).
    for (i, &qlen) in inputs.iter().zip(&kinds) {
        if !qlen && i.path.file_name().is_some_and(|n| n == "qlen_hist.csv") {
            return Err(CliError::Input {
                file: i.path.clone(),
                message: format!(
                    "not a queue-length histogram: its first line is not `{}`",
                    queues::QLEN_HIST_HEADER
                ),
            });
        }
    }
    let mut seen = HashSet::new();
    for (i, &qlen) in inputs.iter().zip(&kinds) {
        if !seen.insert((qlen, i.name.as_str())) {
            let what = if qlen { "queue-length inputs" } else { "fct.csv inputs" };
            return Err(CliError::Input {
                file: i.path.clone(),
                message: format!("two {what} are named \"{}\"; name them with FILE:NAME", i.name),
            });
        }
    }
    let mut loaded = Loaded { fct: Vec::new(), queues: Vec::new() };
    for (i, qlen) in inputs.iter().zip(kinds) {
        if qlen {
            let backlog = queues::read_backlog(&i.path, |_, _| true)?;
            // A histogram with no bins has nothing to analyze or plot (`analyze` printed a row
            // of zeros, then named the run's fct.csv; `plot` left it out without a word).
            if backlog.ports == 0 {
                return Err(CliError::Input {
                    file: i.path.clone(),
                    message: "no queue-length bins (the file has only its header)".into(),
                });
            }
            loaded.queues.push((i.name.clone(), backlog));
        } else {
            loaded.fct.push((i.name.clone(), load_rows(&i.path, dport)?));
        }
    }
    Ok(loaded)
}

/// `dcsim analyze`: prints the slowdown-by-size table and the summary, and with `out` writes
/// `buckets.csv` and `summary.csv` there (atomically, after everything was computed).
///
/// # Errors
/// As [`load_rows`], or a file that cannot be written.
pub fn analyze_command(
    inputs: &[FctInput],
    buckets: &BucketSpec,
    dport: Option<u16>,
    dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if let Some(dir) = dir {
        crate::output::check_out_dir(dir)?;
    }
    let loaded = load_inputs(inputs, dport)?;
    let data = &loaded.fct;
    let per: Vec<(String, Vec<Bucket>, Summary)> = data
        .iter()
        .map(|(name, rows)| Ok((name.clone(), buckets.buckets(rows)?, summary(rows))))
        .collect::<Result<_, AnalysisError>>()?;
    let b: Vec<(&str, &[Bucket])> =
        per.iter().map(|(n, b, _)| (n.as_str(), b.as_slice())).collect();
    let s: Vec<(&str, &Summary)> = per.iter().map(|(n, _, s)| (n.as_str(), s)).collect();

    let path_of = |name: &str| inputs.iter().find(|i| i.name == name).map(|i| i.path.display());
    for (name, rows) in data {
        let path = path_of(name).expect("every input has its name");
        let _ = writeln!(out, "{name}: {path} ({} flows)", rows.len());
    }
    for (name, b) in &loaded.queues {
        let path = path_of(name).expect("every input has its name");
        let _ = writeln!(out, "{name}: {path} (queue lengths of {} ports)", b.ports);
    }
    if !data.is_empty() {
        let filter = dport.map_or_else(String::new, |p| format!(", dport {p} only"));
        let _ = writeln!(out, "\nslowdown by flow size ({buckets}{filter}):");
        let _ = write!(out, "{}", buckets_table(&b));
        let _ = writeln!(out, "\nsummary (FCT in µs, sd = slowdown):");
        let _ = write!(out, "{}", summary_table(&s));
    }
    let runs = loaded.queue_runs();
    if !runs.is_empty() {
        queues::print_section(out, &runs);
    }
    if let Some(dir) = dir {
        output::create_out_dir(dir)?;
        // Tables this analysis does not write are removed: they were another analysis'.
        let mut set = output::Staged::new(dir);
        if data.is_empty() {
            set.remove("buckets.csv");
            set.remove("summary.csv");
        } else {
            set.write("buckets.csv", buckets_csv(&b))?;
            set.write("summary.csv", summary_csv(&s))?;
        }
        if runs.is_empty() {
            set.remove("qlen_summary.csv");
        } else {
            set.write("qlen_summary.csv", dcsim_analysis::qlen_summary_csv(&runs))?;
        }
        let written = set.commit()?;
        let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        let _ = writeln!(out, "\nwrote {}", names.join(", "));
    }
    Ok(())
}

/// `dcsim plot`: the standard figure set (slowdown p50/p95/p99 by size, CDFs of FCT and of
/// slowdown; PNG and SVG), one line per input.
///
/// # Errors
/// As [`load_rows`], or a plot that cannot be drawn or written.
pub fn plot_command(
    inputs: &[FctInput],
    buckets: &BucketSpec,
    dport: Option<u16>,
    dir: &Path,
    prefix: &str,
    title: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    crate::output::check_out_dir(dir)?;
    let loaded = load_inputs(inputs, dport)?;
    let data = &loaded.fct;
    let per: Vec<Vec<Bucket>> =
        data.iter().map(|(_, rows)| buckets.buckets(rows)).collect::<Result<_, _>>()?;
    let b: Vec<(&str, &[Bucket])> =
        data.iter().zip(&per).map(|((n, _), b)| (n.as_str(), b.as_slice())).collect();
    let r: Vec<(&str, &[FctRow])> = data.iter().map(|(n, r)| (n.as_str(), r.as_slice())).collect();
    // The folders this command creates (`dir` and any missing parents), removed again if the
    // plot fails.
    let created: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    output::create_out_dir(dir)?;
    // Every figure is drawn into a hidden folder first; all go in place together.
    let plotted = (|| {
        let drafts = output::Drafts::new(dir, &format!("{prefix}.plots"))?;
        let mut files = if data.is_empty() {
            Vec::new()
        } else {
            plot_all(&b, &r, drafts.path(), prefix, title)?
        };
        files.extend(queues::plot_qlen_cdf(drafts.path(), prefix, title, &loaded.queue_runs())?);
        if files.is_empty() {
            let message = if inputs.len() == 1 {
                "nothing to plot: no queue-length bins in the input"
            } else {
                "nothing to plot: no queue-length bins in any of the inputs"
            };
            return Err(CliError::Input {
                file: inputs.first().map(|i| i.path.clone()).unwrap_or_default(),
                message: message.into(),
            });
        }
        let mut set = output::Staged::new(dir);
        drafts.stage(&files, dir, &mut set)?;
        set.commit()
    })();
    let files = match plotted {
        Ok(files) => files,
        Err(e) => {
            // Leave no empty folder behind that this command made (those there before stay;
            // `remove_dir` removes only empty ones, deepest first).
            for d in &created {
                if std::fs::remove_dir(d).is_err() {
                    break;
                }
            }
            return Err(e);
        }
    };
    let _ =
        writeln!(out, "wrote {} plots to {} ({prefix}_*.png, .svg)", files.len(), dir.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are printed in tables and drawn in figures: a control character in one given
    /// after `:` is refused, and one in a file or folder name becomes U+FFFD.
    #[test]
    fn input_names_have_no_control_characters() {
        let e = "out/fct.csv:a\nb".parse::<FctInput>().unwrap_err();
        assert!(e.contains("U+000A"), "{e}");
        let i = "out/x\u{1b}y/fct.csv".parse::<FctInput>().unwrap();
        assert_eq!(i.name, "x\u{FFFD}y");
        assert_eq!("out/hpcc/fct.csv".parse::<FctInput>().unwrap().name, "hpcc");
    }

    #[test]
    fn bucket_specs() {
        assert_eq!("quantile:5".parse::<BucketSpec>(), Ok(BucketSpec::Quantile(5)));
        let web: BucketSpec = "sizes:WebSearch".parse().unwrap();
        assert_eq!(web.to_string(), "sizes:websearch");
        assert_eq!(
            "sizes:1000,2kB,3K,4M,6MiB,5G".parse::<BucketSpec>(),
            Ok(BucketSpec::Sizes {
                name: "1000,2kB,3K,4M,6MiB,5G".into(),
                edges: vec![1000, 2000, 3000, 4_000_000, 6 << 20, 5_000_000_000]
            })
        );
        let e = |s: &str| s.parse::<BucketSpec>().unwrap_err();
        assert_eq!(
            e("sizes:10K,5K"),
            "bad bucket spec `sizes:10K,5K`: edges must strictly increase, but 5000 follows 10000"
        );
        assert!(e("quantile:101").contains("the step must be 1..=100 percent, found 101"));
        assert!(e("linear:3").contains("expected quantile:N"));
        assert!(e("sizes:10X").contains("edge `10X`"));
        assert!(e("sizes:0").contains("at least 1 byte"));
    }

    #[test]
    fn input_names() {
        let i: FctInput = "out/hpcc/fct.csv".parse().unwrap();
        assert_eq!((i.path, i.name.as_str()), (PathBuf::from("out/hpcc/fct.csv"), "hpcc"));
        let i: FctInput = "a/b.csv:HPCC 95%".parse().unwrap();
        assert_eq!((i.path, i.name.as_str()), (PathBuf::from("a/b.csv"), "HPCC 95%"));
        let i: FctInput = "runs.csv".parse().unwrap();
        assert_eq!(i.name, "runs");
        assert!("x.csv:".parse::<FctInput>().is_err());
    }
}
