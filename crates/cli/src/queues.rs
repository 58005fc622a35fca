//! Queue-length files of `dcsim run` (`qlen_hist.csv`) as inputs of `dcsim analyze`, `dcsim
//! plot` and `dcsim sweep`: each file's ports pooled into one time-weighted backlog
//! distribution ([`PooledBacklog`]), printed as a table, written as `qlen_summary.csv` and
//! drawn as a CDF, one line per run.

use std::io::Write;
use std::path::{Path, PathBuf};

use dcsim_analysis::{plot_lines, qlen_cdf_chart, qlen_table, PooledBacklog};
use dcsim_core::units::{TIME_LIMIT, TIME_LIMIT_TEXT};

use crate::error::CliError;
use crate::study::{input_error, open_csv, ps_of};

/// The header of `qlen_hist.csv`.
pub const QLEN_HIST_HEADER: &str = "switch,port,lower_bytes,upper_bytes,time_ns";

/// Whether `path` is a `qlen_hist.csv` (by its header); false for a file that cannot be read.
/// Reads no more than the header's length and a line end, whatever the file holds.
pub fn is_qlen_hist(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(f) = std::fs::File::open(path) else { return false };
    let mut first = String::new();
    let cap = QLEN_HIST_HEADER.len() + 2;
    let Ok(n) = std::io::BufReader::new(f.take(cap as u64)).read_line(&mut first) else {
        return false;
    };
    // The whole first line, ended within the bytes read or by the file's end.
    (first.ends_with('\n') || n < cap) && first.trim_end() == QLEN_HIST_HEADER
}

/// The largest bin edge a `qlen_hist.csv` may give (2^62 bytes: far above any buffer, and
/// small enough that the pooled means and percentiles stay representable).
pub const MAX_BIN_BYTES: u64 = 1 << 62;

/// Reads a `qlen_hist.csv`, pooling the bins of the ports `keep(switch, port)` accepts.
///
/// # Errors
/// A missing or unreadable file, missing columns, a malformed value (with its line and
/// column), a bin edge above [`MAX_BIN_BYTES`], a port whose bins' times add up to more than
/// the time limit (2^62 ps), or two bins of a port that overlap.
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
    let header = r.headers().map_err(|e| input_error(path, e.to_string()))?.clone();
    let mut rows = Vec::new();
    // By port, the bins read (lower, upper, line), to check that they do not overlap.
    type Bins = Vec<(u64, u64, usize)>;
    let mut bins: std::collections::BTreeMap<(u32, u32), Bins> = Default::default();
    // By port, the time of the bins read so far, ps.
    let mut port_time: std::collections::HashMap<(u32, u32), u64> = Default::default();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| input_error(path, e.to_string()))?;
        let line = i + 2;
        let bad = |c: usize, why: &str| {
            let value = rec.get(c).unwrap_or("");
            input_error(path, format!("line {line}: column {}: {why}, found {value:?}", &header[c]))
        };
        let int = |c: usize| -> Result<u64, CliError> {
            rec.get(c)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| bad(c, "expected a non-negative integer"))
        };
        let id = |c: usize| -> Result<u32, CliError> {
            u32::try_from(int(c)?).map_err(|_| bad(c, "expected an id below 2^32"))
        };
        let (sw, port) = (id(c_sw)?, id(c_port)?);
        if !keep(sw, port) {
            continue;
        }
        let (lo, hi) = (int(c_lo)?, int(c_hi)?);
        if hi <= lo {
            return Err(bad(c_hi, "expected a bin's upper edge above its lower edge"));
        }
        if hi > MAX_BIN_BYTES {
            return Err(bad(c_hi, "expected at most 2^62 bytes"));
        }
        let t = rec
            .get(c_t)
            .and_then(ps_of)
            .ok_or_else(|| bad(c_t, "expected a non-negative time in ns, with at most three decimals (picoseconds), as dcsim writes it"))?;
        // A port's bins add up to the run's length, which is within the time limit: a
        // larger sum is not a run's output (and one near 2^64 had wrapped the pooled times).
        let total = port_time.entry((sw, port)).or_insert(0u64);
        *total = total.saturating_add(t);
        if *total > TIME_LIMIT.as_ps() {
            return Err(bad(
                c_t,
                &format!(
                    "switch {sw} port {port}: its bins' times add up to more than a run can last ({TIME_LIMIT_TEXT})"
                ),
            ));
        }
        bins.entry((sw, port)).or_default().push((lo, hi, line));
        rows.push(((sw, port), lo, hi, t));
    }
    for ((sw, port), v) in &mut bins {
        v.sort_unstable();
        if let Some(w) = v.windows(2).find(|w| w[1].0 < w[0].1) {
            return Err(input_error(
                path,
                format!(
                    "lines {} and {}: switch {sw} port {port}: bins [{}, {}) and [{}, {}) overlap",
                    w[0].2, w[1].2, w[0].0, w[0].1, w[1].0, w[1].1
                ),
            ));
        }
    }
    Ok(PooledBacklog::pool(rows))
}

/// Draws the CDF figure of `runs` as `dir/PREFIX_qlen_cdf.png` and `.svg`, `dir` being a
/// command's [`crate::output::Drafts`] folder. Returns the files drawn, none if no run has a
/// histogram.
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
        let path = dir.join(format!("{prefix}_qlen_cdf.{ext}"));
        plot_lines(&chart, &path)?;
        out.push(path);
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

#[cfg(test)]
mod tests {
    use super::{is_qlen_hist, QLEN_HIST_HEADER};

    /// The header test reads at most a header's length: a file whose first line never ends
    /// (`/dev/zero`) is not a `qlen_hist.csv`, and is not read until memory runs out.
    #[test]
    fn the_header_test_reads_a_bounded_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let yes = dir.path().join("qlen_hist.csv");
        std::fs::write(&yes, format!("{QLEN_HIST_HEADER}\r\n1,2,0,1000,5\n")).unwrap();
        assert!(is_qlen_hist(&yes));
        let no = dir.path().join("fct.csv");
        std::fs::write(&no, format!("{QLEN_HIST_HEADER},extra\n")).unwrap();
        assert!(!is_qlen_hist(&no));
        std::fs::write(&no, format!("{QLEN_HIST_HEADER}\t\tmore\n")).unwrap();
        assert!(!is_qlen_hist(&no));
        std::fs::write(&yes, QLEN_HIST_HEADER).unwrap();
        assert!(is_qlen_hist(&yes), "the header alone, without a line end");
        let zero = std::path::Path::new("/dev/zero");
        if zero.exists() {
            assert!(!is_qlen_hist(zero));
        }
    }
}
