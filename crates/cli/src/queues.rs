//! Queue-length files of `dcsim run` (`qlen_hist.csv`) as inputs of `dcsim analyze`, `dcsim
//! plot` and `dcsim sweep`: each file's ports pooled into one time-weighted backlog
//! distribution ([`PooledBacklog`]), printed as a table, written as `qlen_summary.csv` and
//! drawn as a CDF, one line per run.

use std::io::Write;
use std::path::{Path, PathBuf};

use dcsim_analysis::{plot_lines, qlen_cdf_chart, PooledBacklog};

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

/// Percentile columns of the table and of `qlen_summary.csv`.
const PCTS: [(f64, &str); 5] =
    [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p999"), (0.9999, "p9999")];

/// The terminal table: per run, ports, the fraction of time a queue was non-empty, the mean
/// and percentiles (bytes).
pub fn qlen_table(runs: &[(&str, &PooledBacklog)]) -> String {
    let mut rows: Vec<Vec<String>> = vec![["run", "ports", "busy", "mean"]
        .iter()
        .map(|s| s.to_string())
        .chain(PCTS.iter().map(|p| p.1.to_string()))
        .collect()];
    for (name, b) in runs {
        let mut r = vec![
            name.to_string(),
            b.ports.to_string(),
            format!("{:.1}%", b.busy() * 100.0),
            format!("{:.0}", b.mean()),
        ];
        r.extend(PCTS.iter().map(|&(p, _)| b.percentile(p).to_string()));
        rows.push(r);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (v, w))| if c == 0 { format!("{v:<w$}") } else { format!("{v:>w$}") })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `qlen_summary.csv`: `run,ports,busy_frac,mean_bytes,p50_bytes,...,p9999_bytes`.
pub fn qlen_summary_csv(runs: &[(&str, &PooledBacklog)]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header =
        vec!["run".to_string(), "ports".into(), "busy_frac".into(), "mean_bytes".into()];
    header.extend(PCTS.iter().map(|p| format!("{}_bytes", p.1)));
    w.write_record(&header).expect("in-memory CSV");
    for (name, b) in runs {
        let mut r = vec![
            name.to_string(),
            b.ports.to_string(),
            format!("{:.6}", b.busy()),
            format!("{:.3}", b.mean()),
        ];
        r.extend(PCTS.iter().map(|&(p, _)| b.percentile(p).to_string()));
        w.write_record(&r).expect("in-memory CSV");
    }
    w.into_inner().expect("in-memory CSV")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_csv_list_each_run() {
        let b = PooledBacklog::pool([(0, 0, 1, 90), (0, 10_000, 10_240, 10)]);
        let t = qlen_table(&[("hpcc", &b)]);
        assert!(t.lines().next().unwrap().starts_with("run"), "{t}");
        let row = t.lines().nth(1).unwrap();
        assert!(row.starts_with("hpcc") && row.contains("10.0%") && row.ends_with("10000"), "{t}");
        let csv = String::from_utf8(qlen_summary_csv(&[("hpcc", &b)])).unwrap();
        assert_eq!(
            csv.lines().next(),
            Some(
                "run,ports,busy_frac,mean_bytes,p50_bytes,p90_bytes,p99_bytes,p999_bytes,\
                 p9999_bytes"
            )
        );
        assert_eq!(csv.lines().nth(1), Some("hpcc,1,0.100000,1012.450,0,0,10000,10000,10000"));
    }
}
