//! Queue lengths: time-weighted backlog histograms pooled over switch ports (the bins of
//! `qlen_hist.csv`), their percentiles and mean, and the CDF figure (one line per run).
//!
//! A run's `qlen_hist.csv` has, per switch egress port, the time the port's backlog spent in
//! each log-spaced bin `[lower, upper)`. Pooling adds the ports' times bin by bin, so the pooled
//! distribution is that of the backlog of a port picked uniformly at random at a uniformly
//! random instant. Percentiles are reported as the lower edge of the bin where the cumulative
//! time reaches the fraction: at most one bin width (1/32 of the level) below the exact value.

use std::collections::BTreeMap;

use crate::chart::{Axis, Dash, Legend, Line, LineChart, Panel};

/// A backlog distribution pooled over ports: non-empty bins `(lower, upper, time)` in
/// ascending order (bytes, bytes, picoseconds), and how many ports went into it. Times are
/// 128-bit: a bin pooled over many ports, each up to a run's length, can exceed 64 bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PooledBacklog {
    /// Non-empty bins, ascending: `(lower bytes, upper bytes, time ps)`.
    pub bins: Vec<(u64, u64, u128)>,
    /// Ports pooled.
    pub ports: usize,
}

impl PooledBacklog {
    /// Pools `(port, lower, upper, time ps)` rows (`port` identifies the port; rows of one bin
    /// are added).
    pub fn pool<P: Ord>(rows: impl IntoIterator<Item = (P, u64, u64, u64)>) -> PooledBacklog {
        let mut bins: BTreeMap<(u64, u64), u128> = BTreeMap::new();
        let mut ports = std::collections::BTreeSet::new();
        for (p, lo, hi, t) in rows {
            ports.insert(p);
            *bins.entry((lo, hi)).or_default() += u128::from(t);
        }
        PooledBacklog {
            bins: bins.into_iter().map(|((lo, hi), t)| (lo, hi, t)).collect(),
            ports: ports.len(),
        }
    }

    /// The pooled time (the run's length times the ports).
    pub fn total(&self) -> u128 {
        self.bins.iter().map(|b| b.2).sum()
    }

    /// The level below which a fraction `p` of the pooled time lies: the lower edge of the bin
    /// where the cumulative time reaches it (0 for an empty distribution).
    pub fn percentile(&self, p: f64) -> u64 {
        let total = self.total();
        if total == 0 {
            return 0;
        }
        let target = p * total as f64;
        let mut acc = 0u128;
        for &(lo, _, t) in &self.bins {
            acc += t;
            if acc as f64 >= target {
                return lo;
            }
        }
        self.bins.last().map_or(0, |b| b.0)
    }

    /// The time-weighted mean backlog, bytes (each bin's midpoint standing for its levels;
    /// bins are at most 1/32 of their level wide).
    pub fn mean(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let sum: f64 = self.bins.iter().map(|&(lo, hi, t)| (lo + hi) as f64 / 2.0 * t as f64).sum();
        sum / total as f64
    }

    /// The fraction of the pooled time with a non-empty queue.
    pub fn busy(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let idle: u128 = self.bins.iter().filter(|b| b.0 == 0).map(|b| b.2).sum();
        1.0 - idle as f64 / total as f64
    }

    /// The CDF as points `(KB, fraction of time at or below)`, one per bin at its upper edge;
    /// levels below 1 KB show at 1 KB (for a log axis).
    pub fn cdf_points(&self) -> Vec<(f64, f64)> {
        let total = self.total().max(1) as f64;
        let mut acc = 0u128;
        self.bins
            .iter()
            .map(|&(_, hi, t)| {
                acc += t;
                ((hi as f64 / 1e3).max(1.0), acc as f64 / total)
            })
            .collect()
    }
}

/// The per-run columns of `qlen_summary.csv` (after its run-identifying ones): ports pooled,
/// fraction of time with a queue, mean and percentiles in bytes.
pub const QLEN_SUMMARY_COLUMNS: [&str; 8] = [
    "ports",
    "busy_frac",
    "mean_bytes",
    "p50_bytes",
    "p90_bytes",
    "p99_bytes",
    "p999_bytes",
    "p9999_bytes",
];

/// The percentiles of [`QLEN_SUMMARY_COLUMNS`].
const PCTS: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 0.9999];

/// One run's [`QLEN_SUMMARY_COLUMNS`] values.
pub fn qlen_summary_row(b: &PooledBacklog) -> Vec<String> {
    let mut r = vec![b.ports.to_string(), format!("{:.6}", b.busy()), format!("{:.3}", b.mean())];
    r.extend(PCTS.iter().map(|&p| b.percentile(p).to_string()));
    r
}

/// `qlen_summary.csv` of `dcsim analyze`: `run` and [`QLEN_SUMMARY_COLUMNS`], one row per run.
pub fn qlen_summary_csv(runs: &[(&str, &PooledBacklog)]) -> Vec<u8> {
    let mut header = vec!["run"];
    header.extend(QLEN_SUMMARY_COLUMNS);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|(n, b)| std::iter::once(n.to_string()).chain(qlen_summary_row(b)).collect())
        .collect();
    crate::report::csv_bytes(&header, &rows)
}

/// The same as a text table for a terminal (bytes; busy as a percentage).
pub fn qlen_table(runs: &[(&str, &PooledBacklog)]) -> String {
    let mut header = vec!["run"];
    header.extend(QLEN_SUMMARY_COLUMNS);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|(n, b)| {
            let mut r = vec![n.to_string()];
            r.extend(qlen_summary_row(b));
            r[2] = format!("{:.1}%", b.busy() * 100.0);
            r[3] = format!("{:.0}", b.mean());
            r
        })
        .collect();
    crate::report::text_table(&header, &rows)
}

/// The queue-length CDF figure: one line per `(name, distribution)`, x in KB on a log axis,
/// y the time-weighted CDF. Distributions without time are left out.
pub fn qlen_cdf_chart(title: &str, runs: &[(&str, &PooledBacklog)]) -> LineChart {
    let lines = runs
        .iter()
        .enumerate()
        .filter(|(_, (_, b))| b.total() > 0)
        .map(|(i, (name, b))| Line::new(*name, b.cdf_points(), i, Dash::Solid))
        .collect();
    LineChart {
        title: title.to_string(),
        x: Axis::log("queue length (KB)"),
        y: Axis::linear("CDF (time-weighted)"),
        legend: Legend::Right,
        panels: vec![Panel { title: String::new(), lines }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_percentiles_walk_the_time_weighted_bins() {
        // 50% of the time at 0, 30% in [100, 104), 20% in [1000, 1032), over two ports.
        let b = PooledBacklog::pool([
            (1, 0, 1, 30),
            (2, 0, 1, 20),
            (1, 100, 104, 30),
            (2, 1000, 1032, 20),
        ]);
        assert_eq!(b.ports, 2);
        assert_eq!(b.bins, vec![(0, 1, 50), (100, 104, 30), (1000, 1032, 20)]);
        assert_eq!(b.percentile(0.5), 0);
        assert_eq!(b.percentile(0.51), 100);
        assert_eq!(b.percentile(0.8), 100);
        assert_eq!(b.percentile(0.99), 1000);
        assert_eq!(PooledBacklog::default().percentile(0.5), 0);
        let mean = b.mean();
        assert!((mean - (0.5 * 0.5 + 102.0 * 0.3 + 1016.0 * 0.2)).abs() < 1e-9, "{mean}");
        assert!((b.busy() - 0.5).abs() < 1e-12);
        let cdf = b.cdf_points();
        assert_eq!(cdf.len(), 3);
        assert_eq!(cdf[2], (1.032, 1.0));
        assert!((cdf[0].1 - 0.5).abs() < 1e-12 && cdf[0].0 == 1.0);
    }

    #[test]
    fn pooled_times_beyond_64_bits_stay_exact() {
        // Eight ports, each a run of the longest length (2^62 ps): half the time idle, a
        // quarter in each of two bins. The pooled total, 2^65 ps, had wrapped to 0 in u64.
        let limit = 1u64 << 62;
        let b = PooledBacklog::pool((0..8u32).flat_map(|p| {
            [(p, 0, 1, limit / 2), (p, 100, 104, limit / 4), (p, 1000, 1032, limit / 4)]
        }));
        assert_eq!(b.total(), 8 * u128::from(limit));
        assert!((b.busy() - 0.5).abs() < 1e-12, "{}", b.busy());
        assert_eq!(b.percentile(0.6), 100);
        assert_eq!(b.percentile(0.9), 1000);
        assert!((b.mean() - (0.5 * 0.5 + 102.0 * 0.25 + 1016.0 * 0.25)).abs() < 1e-6);
    }

    #[test]
    fn the_table_and_csv_list_each_run() {
        // 90% of the time idle, 10% in [10 000, 10 240).
        let b = PooledBacklog::pool([(0, 0, 1, 90), (0, 10_000, 10_240, 10)]);
        let t = qlen_table(&[("hpcc", &b)]);
        assert!(t.lines().next().unwrap().starts_with("run"), "{t}");
        let row = t.lines().nth(2).unwrap();
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

    #[test]
    fn the_chart_has_a_line_per_run_with_time() {
        let a = PooledBacklog::pool([(0, 0, 1, 10), (0, 2000, 2064, 10)]);
        let empty = PooledBacklog::default();
        let c = qlen_cdf_chart("t", &[("a", &a), ("empty", &empty)]);
        assert_eq!(c.panels[0].lines.len(), 1);
        assert_eq!(c.panels[0].lines[0].label.as_deref(), Some("a"));
    }
}
