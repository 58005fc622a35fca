//! Queue-length files of `dcsim run` (`qlen_hist.csv`) as inputs of `dcsim analyze`, `dcsim
//! plot` and `dcsim sweep`: each file's ports pooled into one time-weighted backlog
//! distribution ([`PooledBacklog`]), printed as a table, written as `qlen_summary.csv` and
//! drawn as a CDF, one line per run.

use std::io::Write;
use std::path::{Path, PathBuf};

use dcsim_analysis::{plot_lines, qlen_cdf_chart, qlen_table, PooledBacklog};

use crate::error::CliError;
use crate::study::{input_error, open_csv, ps_of};

/// The header of `qlen_hist.csv`.
pub const QLEN_HIST_HEADER: &str = "switch,port,lower_bytes,upper_bytes,time_ns";

/// Whether `path` is a `qlen_hist.csv` (by its header); false for a file that cannot be read.
pub fn is_qlen_hist(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut first = String::new();
    if std::io::BufReader::new(f).read_line(&mut first).is_err() {
        return false;
    }
    first.trim_end() == QLEN_HIST_HEADER
}

/// Reads a `qlen_hist.csv`, pooling the bins of the ports `keep(switch, port)` accepts.
///
/// # Errors
/// A missing or unreadable file, missing columns, a malformed row (with its line).
pub fn read_backlog(
    path: &Path,
    keep: impl Fn(u32, u32) -> bool,
) -> Result<PooledBacklog, CliError> {
    if !path.exists() {
        return Err(input_error(
            path,
            "missing: queue lengths need `dcsim run --queue-lengths` ([output] queue_lengths = true)",
        ));
    }
    let names = ["switch", "port", "lower_bytes", "upper_bytes", "time_ns"];
    let (mut r, [c_sw, c_port, c_lo, c_hi, c_t]) = open_csv(path, names)?;
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| input_error(path, e.to_string()))?;
        let bad = || input_error(path, format!("line {}: malformed row", i + 2));
        let field = |c: usize| rec.get(c).ok_or_else(bad);
        let sw: u32 = field(c_sw)?.parse().map_err(|_| bad())?;
        let port: u32 = field(c_port)?.parse().map_err(|_| bad())?;
        if !keep(sw, port) {
            continue;
        }
        let lo: u64 = field(c_lo)?.parse().map_err(|_| bad())?;
        let hi: u64 = field(c_hi)?.parse().map_err(|_| bad())?;
        if hi <= lo {
            return Err(bad());
        }
        let t = ps_of(field(c_t)?).ok_or_else(bad)?;
        rows.push(((sw, port), lo, hi, t));
    }
    Ok(PooledBacklog::pool(rows))
}

/// Draws the CDF figure of `runs` as `dir/PREFIX_qlen_cdf.png` and `.svg` (each written to a
/// hidden temporary file first, then renamed). Returns the files written, none if no run has
/// a histogram.
pub fn plot_qlen_cdf(
    dir: &Path,
    prefix: &str,
    title: &str,
    runs: &[(&str, &PooledBacklog)],
) -> Result<Vec<PathBuf>, CliError> {
    let caption = if title.is_empty() {
        "Queue length CDF".to_string()
    } else {
        format!("{title}: queue length CDF")
    };
    let chart = qlen_cdf_chart(&caption, runs);
    if chart.panels[0].lines.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for ext in ["png", "svg"] {
        let tmp = dir.join(format!(".{prefix}_qlen_cdf.tmp.{ext}"));
        let to = dir.join(format!("{prefix}_qlen_cdf.{ext}"));
        if let Err(e) = plot_lines(&chart, &tmp) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.into());
        }
        std::fs::rename(&tmp, &to).map_err(|source| {
            let _ = std::fs::remove_file(&tmp);
            CliError::Write { path: to.clone(), source }
        })?;
        out.push(to);
    }
    Ok(out)
}

/// Prints the queue-length section of `dcsim analyze`.
pub(crate) fn print_section(out: &mut dyn Write, runs: &[(&str, &PooledBacklog)]) {
    let _ = writeln!(
        out,
        "\nqueue lengths (bytes; time-weighted, pooled over each file's ports; percentiles \
         within a bin, <= 1/32, below):"
    );
    let _ = write!(out, "{}", qlen_table(runs));
}
