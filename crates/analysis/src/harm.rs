//! The statistics, tables, CSV and figures of the FCT-harm experiment (ccafct, spec A4).
//!
//! A workload of short flows runs alone ("solo") and then beside one bulk flow of a competing
//! congestion-control algorithm; for each run the flow completion times are reduced to three
//! statistics ([`FctStats`]: geometric mean, median and P95), and each competitor's statistics
//! are compared with the solo ones as a **harm** ([`harm`], Ware et al., HotNets'19).
//!
//! * [`quantile_empirical`] and [`geomean`] are gonum's `stat.Quantile(p, stat.Empirical, …)`
//!   and `stat.GeometricMean`, the functions ccafct uses.
//! * [`HarmRow`] is one run (RTT, competitor, seed); [`harm_table`] prints rows exactly as
//!   ccafct prints its results, [`harm_csv`] writes them as CSV.
//! * [`aggregate_seeds`] reduces the runs of several seeds to means with 95 % confidence
//!   intervals ([`MeanCi`]), printed by [`harm_ci_table`] and written by [`harm_summary_csv`].
//! * [`plot_harm_vs_rtt`] and [`plot_fct_vs_rtt`] draw them against RTT; [`plot_harm_all`]
//!   writes both as PNG and SVG.
//!
//! ```
//! use dcsim_analysis::{harm_table, FctStats, HarmRow};
//!
//! // FCTs in nanoseconds.
//! let solo = FctStats::of(&[100e6, 150e6, 300e6]).unwrap();
//! let with = FctStats::of(&[200e6, 300e6, 600e6]).unwrap();
//! let rows = [
//!     HarmRow::solo(10.0, 1, 3, 0, &solo),
//!     HarmRow::competitor(10.0, "prague", 1, 3, 0, &with, &solo),
//! ];
//! assert_eq!(
//!     harm_table(&rows),
//!     "RTT   CCA     GeoMean (Harm)   Median (Harm)    P95 (Harm)\n\
//!      ---   ---     --------------   -------------    ----------\n\
//!      10ms  -       165.1ms          150.0ms          300.0ms\n\
//!      10ms  prague  330.2ms (0.500)  300.0ms (0.500)  600.0ms (0.500)\n"
//! );
//! ```

use std::path::{Path, PathBuf};

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::chart::{plot_lines, Axis, Dash, Legend, Line, LineChart, Panel};
use crate::error::AnalysisError;

/// The `cca` of a solo run (no competitor), as ccafct prints it.
pub const SOLO_CCA: &str = "-";

/// The confidence level of [`MeanCi::of`] and of the tables, CSV files and figures.
pub const CI_LEVEL: f64 = 0.95;

/// The empirical quantile of gonum (`stat.Quantile(p, stat.Empirical, sorted, nil)`), which
/// ccafct uses for its median and P95: the `⌈p·n⌉`-th smallest of the `n` ascending values
/// (1-based; the first for `p·n <= 1`, so `p = 0` gives the minimum and `p = 1` the maximum),
/// with no interpolation. `p·n` is computed in `f64` as gonum does (`0.95 · 20` rounds to
/// exactly 19, giving the 19th value).
///
/// Returns `None` for an empty slice or `p` outside `[0, 1]` (where gonum panics), and
/// `Some(NaN)` if any value is NaN (as gonum). `sorted` must be ascending (gonum panics
/// otherwise; here it is only checked in debug builds).
///
/// ```
/// use dcsim_analysis::quantile_empirical;
/// let v = [1.0, 2.0, 3.0, 4.0];
/// assert_eq!(quantile_empirical(&v, 0.5), Some(2.0)); // ⌈2⌉ = 2nd
/// assert_eq!(quantile_empirical(&v, 0.51), Some(3.0)); // ⌈2.04⌉ = 3rd
/// assert_eq!(quantile_empirical(&v, 0.0), Some(1.0));
/// ```
pub fn quantile_empirical(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    if sorted.iter().any(|v| v.is_nan()) {
        return Some(f64::NAN);
    }
    debug_assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "values must be ascending");
    // gonum walks the values with a running count c = 1, 2, … and stops at the first c >= p·n;
    // that is c = max(1, ⌈p·n⌉), and c <= n because p <= 1.
    let k = (p * sorted.len() as f64).ceil() as usize;
    Some(sorted[k.clamp(1, sorted.len()) - 1])
}

/// The geometric mean `exp(Σ ln xᵢ / n)`, summed in the given order, as gonum's
/// `stat.GeometricMean(values, nil)`. `None` for an empty slice. Meant for positive values: a
/// zero gives 0 and a negative value NaN.
///
/// ```
/// use dcsim_analysis::geomean;
/// assert!((geomean(&[1.0, 10.0, 100.0]).unwrap() - 10.0).abs() < 1e-12);
/// assert_eq!(geomean(&[]), None);
/// ```
pub fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let s: f64 = values.iter().map(|v| v.ln()).sum();
    Some((s / values.len() as f64).exp())
}

/// ccafct's statistics of one run's flow completion times, in the unit of the FCTs given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FctStats {
    /// Geometric mean ([`geomean`] of the ascending FCTs).
    pub geomean: f64,
    /// Median ([`quantile_empirical`] at 0.5).
    pub median: f64,
    /// 95th percentile ([`quantile_empirical`] at 0.95).
    pub p95: f64,
}

impl FctStats {
    /// The statistics of `fcts` (any order, any unit; the result is in the same unit). Like
    /// ccafct, the values are sorted first and the geometric mean is summed in ascending
    /// order. `None` if `fcts` is empty (ccafct stops with an error there).
    pub fn of(fcts: &[f64]) -> Option<FctStats> {
        let mut v = fcts.to_vec();
        v.sort_by(f64::total_cmp);
        Some(FctStats {
            geomean: geomean(&v)?,
            median: quantile_empirical(&v, 0.5)?,
            p95: quantile_empirical(&v, 0.95)?,
        })
    }

    /// The harm of each statistic of `self` (the run with a competitor) relative to `solo`,
    /// by [`harm`].
    pub fn harm_vs(&self, solo: &FctStats) -> FctHarm {
        FctHarm {
            geomean: harm(solo.geomean, self.geomean),
            median: harm(solo.median, self.median),
            p95: harm(solo.p95, self.p95),
        }
    }
}

/// The harm of each [`FctStats`] statistic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FctHarm {
    /// Harm to the geometric mean.
    pub geomean: f64,
    /// Harm to the median.
    pub median: f64,
    /// Harm to the 95th percentile.
    pub p95: f64,
}

/// The harm a competitor does to a "less is better" metric such as an FCT (Ware et al.,
/// HotNets'19; ccafct's `harm.LessIsBetter`): `(with − solo) / with`, where `solo` is the
/// metric without the competitor and `with` the metric beside it.
///
/// It is 0 when the competitor does not make things worse (`with < solo` is clamped to 0, not
/// negative), approaches 1 as `with` grows without bound, and is `+∞` when `with` is 0 (ccafct's
/// marker of an invalid harm). NaN inputs give NaN.
///
/// ```
/// use dcsim_analysis::harm;
/// assert_eq!(harm(100.0, 400.0), 0.75);
/// assert_eq!(harm(100.0, 80.0), 0.0); // improved: no harm
/// assert_eq!(harm(100.0, 0.0), f64::INFINITY);
/// ```
pub fn harm(solo: f64, with: f64) -> f64 {
    if with == 0.0 {
        return f64::INFINITY;
    }
    if with < solo {
        return 0.0;
    }
    (with - solo) / with
}

/// The harm to a "more is better" metric such as goodput (Ware et al.; ccafct's
/// `harm.MoreIsBetter`): `(solo − with) / solo`, 0 when `with > solo`, and `+∞` when `solo`
/// is 0.
///
/// ```
/// use dcsim_analysis::harm_more_is_better;
/// assert_eq!(harm_more_is_better(50.0, 20.0), 0.6);
/// assert_eq!(harm_more_is_better(50.0, 60.0), 0.0);
/// ```
pub fn harm_more_is_better(solo: f64, with: f64) -> f64 {
    if solo == 0.0 {
        return f64::INFINITY;
    }
    if with > solo {
        return 0.0;
    }
    (solo - with) / solo
}

/// One run of the harm experiment: the workload's FCT statistics at one RTT, alone or beside
/// one competitor, for one seed.
///
/// The statistics are over the flows that finished (`flows − unfinished` of them), in
/// milliseconds. The harms are `None` for a solo run. The last four fields are optional
/// measurements a caller may fill in; they are written to CSV and averaged by
/// [`aggregate_seeds`] but not printed by [`harm_table`].
#[derive(Clone, Debug, PartialEq)]
pub struct HarmRow {
    /// Round-trip time of the path, ms.
    pub rtt_ms: f64,
    /// The competing algorithm, or [`SOLO_CCA`] (`-`) for the solo run.
    pub cca: String,
    /// The run's seed.
    pub seed: u64,
    /// Flows in the workload.
    pub flows: usize,
    /// Flows that had not finished when the run ended.
    pub unfinished: usize,
    /// Geometric mean FCT, ms.
    pub geomean_ms: f64,
    /// Harm to the geometric mean (`None` for the solo run).
    pub geomean_harm: Option<f64>,
    /// Median FCT, ms.
    pub median_ms: f64,
    /// Harm to the median (`None` for the solo run).
    pub median_harm: Option<f64>,
    /// 95th-percentile FCT, ms.
    pub p95_ms: f64,
    /// Harm to the 95th percentile (`None` for the solo run).
    pub p95_harm: Option<f64>,
    /// The workload's goodput over the run, Mb/s.
    pub workload_goodput_mbps: Option<f64>,
    /// The competitor's goodput over the run, Mb/s.
    pub competitor_goodput_mbps: Option<f64>,
    /// Packets dropped at the bottleneck.
    pub drops: Option<u64>,
    /// Packets CE-marked at the bottleneck.
    pub marks: Option<u64>,
    /// Workload flows that took a connection another flow had dialed (connection reuse).
    pub reused: Option<u64>,
}

/// Nanoseconds as ccafct turns them into milliseconds: truncated to a whole Go
/// `time.Duration`, then `Duration.Seconds() * 1000` (whole seconds plus the remaining
/// nanoseconds / 1e9, times 1000).
fn go_ms(ns: f64) -> f64 {
    let d = go_ns(ns) as i64;
    let (sec, nsec) = (d / 1_000_000_000, d % 1_000_000_000);
    (sec as f64 + nsec as f64 / 1e9) * 1000.0
}

/// Nanoseconds truncated toward zero, as Go's `time.Duration(f)` (saturating here).
fn go_ns(ns: f64) -> f64 {
    (ns as i64) as f64
}

impl HarmRow {
    /// The row of a solo run (cca [`SOLO_CCA`], no harms) from statistics of FCTs in
    /// **nanoseconds**. As in ccafct, each statistic is truncated to whole nanoseconds before
    /// it is converted to milliseconds.
    pub fn solo(
        rtt_ms: f64,
        seed: u64,
        flows: usize,
        unfinished: usize,
        stats_ns: &FctStats,
    ) -> HarmRow {
        HarmRow {
            rtt_ms,
            cca: SOLO_CCA.to_string(),
            seed,
            flows,
            unfinished,
            geomean_ms: go_ms(stats_ns.geomean),
            geomean_harm: None,
            median_ms: go_ms(stats_ns.median),
            median_harm: None,
            p95_ms: go_ms(stats_ns.p95),
            p95_harm: None,
            workload_goodput_mbps: None,
            competitor_goodput_mbps: None,
            drops: None,
            marks: None,
            reused: None,
        }
    }

    /// The row of a run beside competitor `cca`, from statistics of FCTs in **nanoseconds**,
    /// with its harms relative to the solo run of the same RTT and seed. As in ccafct, every
    /// statistic is truncated to whole nanoseconds first, and the harm is computed from the
    /// truncated values.
    pub fn competitor(
        rtt_ms: f64,
        cca: &str,
        seed: u64,
        flows: usize,
        unfinished: usize,
        stats_ns: &FctStats,
        solo_ns: &FctStats,
    ) -> HarmRow {
        let h = |solo: f64, with: f64| Some(harm(go_ns(solo), go_ns(with)));
        HarmRow {
            cca: cca.to_string(),
            geomean_harm: h(solo_ns.geomean, stats_ns.geomean),
            median_harm: h(solo_ns.median, stats_ns.median),
            p95_harm: h(solo_ns.p95, stats_ns.p95),
            ..HarmRow::solo(rtt_ms, seed, flows, unfinished, stats_ns)
        }
    }

    /// The CSV header of [`HarmRow::csv_record`], [`HARM_CSV_COLUMNS`].
    pub fn csv_header() -> &'static [&'static str] {
        &HARM_CSV_COLUMNS
    }

    /// The row as CSV fields in the order of [`HARM_CSV_COLUMNS`]: the RTT in its shortest
    /// decimal form (`10`, `12.5`), milliseconds, harms and goodputs with 6 decimals, counts
    /// as integers; missing values empty.
    pub fn csv_record(&self) -> Vec<String> {
        let opt = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.6}"));
        let count = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
        vec![
            self.rtt_ms.to_string(),
            self.cca.clone(),
            self.seed.to_string(),
            self.flows.to_string(),
            self.unfinished.to_string(),
            format!("{:.6}", self.geomean_ms),
            opt(self.geomean_harm),
            format!("{:.6}", self.median_ms),
            opt(self.median_harm),
            format!("{:.6}", self.p95_ms),
            opt(self.p95_harm),
            opt(self.workload_goodput_mbps),
            opt(self.competitor_goodput_mbps),
            count(self.drops),
            count(self.marks),
            count(self.reused),
        ]
    }
}

/// The columns of [`harm_csv`] (`harm.csv`), in order.
pub const HARM_CSV_COLUMNS: [&str; 16] = [
    "rtt_ms",
    "cca",
    "seed",
    "flows",
    "unfinished",
    "geomean_ms",
    "geomean_harm",
    "median_ms",
    "median_harm",
    "p95_ms",
    "p95_harm",
    "workload_goodput_mbps",
    "competitor_goodput_mbps",
    "drops",
    "marks",
    "reused",
];

fn csv_bytes(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail and every record has the header's length.
    w.write_record(header).expect("in-memory CSV");
    for r in rows {
        w.write_record(&r).expect("in-memory CSV");
    }
    w.into_inner().expect("in-memory CSV")
}

/// The rows as CSV (`harm.csv`): the header [`HARM_CSV_COLUMNS`], then one record per row in
/// the given order ([`HarmRow::csv_record`]).
pub fn harm_csv(rows: &[HarmRow]) -> Vec<u8> {
    csv_bytes(&HARM_CSV_COLUMNS, rows.iter().map(HarmRow::csv_record))
}

/// A number with one decimal and trailing zeros removed, as ccafct's `pretty.Float64(v, 1)`
/// (`10`, `12.5`).
fn trimmed_1(v: f64) -> String {
    let s = format!("{v:.1}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An RTT label: ccafct's (`10ms`, `12.5ms`: milliseconds with at most one decimal) when that
/// shows the RTT exactly, else microseconds with at most one decimal (`5us`, `1250us`), so that
/// RTTs ccafct's format would round together (5 µs and 10 µs are both `0ms` there) stay apart.
fn rtt_label(ms: f64) -> String {
    let tenths = ms * 10.0;
    if (tenths - tenths.round()).abs() <= 1e-9 * tenths.abs().max(1.0) && ms >= 0.1 {
        format!("{}ms", trimmed_1(ms))
    } else {
        format!("{}us", trimmed_1(ms * 1000.0))
    }
}

/// A float as Go's `%.3f` prints it (`+Inf`, `-Inf` and `NaN` included).
fn go_3(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{v:.3}")
    }
}

/// A harm as ccafct prints it: 3 decimals, or `!(…)` when outside `[0, 1]`.
fn harm_text(h: f64) -> String {
    // Not `contains`: NaN is not invalid for ccafct.
    #[allow(clippy::manual_range_contains)]
    if h < 0.0 || h > 1.0 {
        format!("!({})", go_3(h))
    } else {
        go_3(h)
    }
}

/// One FCT cell of [`harm_table`]: `176.2ms`, then ` (0.481)` unless the harm is missing or
/// exactly 0.
fn fct_cell(ms: f64, harm: Option<f64>) -> String {
    match harm {
        Some(h) if h != 0.0 => format!("{ms:.1}ms ({})", harm_text(h)),
        _ => format!("{ms:.1}ms"),
    }
}

/// Lays out a table as ccafct's `pretty.TableWriter` with padding 2 does (Go's
/// `text/tabwriter`): the header, an underline of dashes as long as each header text, then the
/// rows. Every cell but the last of a line is padded with spaces to its column's widest cell
/// (in characters) plus 2; the last cell is not padded.
fn tab_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let underline: Vec<String> = header.iter().map(|h| "-".repeat(h.len())).collect();
    let mut lines: Vec<Vec<&str>> = vec![header.to_vec(), underline.iter().map(|s| &**s).collect()];
    lines.extend(rows.iter().map(|r| r.iter().map(String::as_str).collect()));
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let mut width = vec![0usize; columns];
    for line in &lines {
        for (i, c) in line.iter().enumerate().take(line.len().saturating_sub(1)) {
            width[i] = width[i].max(c.chars().count() + 2);
        }
    }
    let mut out = String::new();
    for line in &lines {
        for (i, c) in line.iter().enumerate() {
            out.push_str(c);
            if i + 1 < line.len() {
                out.extend(std::iter::repeat_n(' ', width[i] - c.chars().count()));
            }
        }
        out.push('\n');
    }
    out
}

/// The results table exactly as ccafct prints it, one line per row in the given order:
///
/// ```text
/// RTT    CCA     GeoMean (Harm)    Median (Harm)     P95 (Harm)
/// ---    ---     --------------    -------------     ----------
/// 10ms   -       176.2ms           154.3ms           1061.3ms
/// 10ms   cubic   339.3ms (0.481)   314.9ms (0.510)   2002.7ms (0.470)
/// ```
///
/// The RTT has at most one decimal, trailing zeros dropped (`10ms`, `12.5ms`; in microseconds
/// when that is not exact, as `5us`); FCTs have one
/// decimal; a harm follows in parentheses with 3 decimals, **omitted when it is missing (solo)
/// or exactly 0** (a competitor that did no harm), and shown as `!(…)` when outside `[0, 1]`
/// (`!(+Inf)` for a zero FCT). Columns are separated as Go's `tabwriter` with padding 2 does:
/// each column is as wide as its widest cell plus two spaces, and the last column is not
/// padded. Unfinished flows and the optional fields are not shown (ccafct has neither).
pub fn harm_table(rows: &[HarmRow]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                rtt_label(r.rtt_ms),
                r.cca.clone(),
                fct_cell(r.geomean_ms, r.geomean_harm),
                fct_cell(r.median_ms, r.median_harm),
                fct_cell(r.p95_ms, r.p95_harm),
            ]
        })
        .collect();
    tab_table(&TABLE_HEADER, &cells)
}

const TABLE_HEADER: [&str; 5] = ["RTT", "CCA", "GeoMean (Harm)", "Median (Harm)", "P95 (Harm)"];

/// A sample mean with the half-width of its confidence interval (Student's t).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanCi {
    /// The sample mean.
    pub mean: f64,
    /// Half-width of the interval: `t(1 − (1 − level)/2, n − 1) · s / √n` with `s` the sample
    /// standard deviation. `None` for a single sample. Exactly 0 when all samples are equal.
    pub half_width: Option<f64>,
    /// Number of samples.
    pub n: usize,
}

impl MeanCi {
    /// The mean and its 95 % confidence interval ([`CI_LEVEL`]); `None` if `samples` is empty.
    pub fn of(samples: &[f64]) -> Option<MeanCi> {
        MeanCi::with_level(samples, CI_LEVEL)
    }

    /// The mean and its confidence interval at `level` (for example 0.95); `None` if `samples`
    /// is empty or `level` is not strictly between 0 and 1.
    pub fn with_level(samples: &[f64], level: f64) -> Option<MeanCi> {
        if samples.is_empty() || !(level > 0.0 && level < 1.0) {
            return None;
        }
        let n = samples.len();
        let first = samples[0];
        if samples.iter().all(|&v| v == first) {
            let half_width = (n > 1).then_some(0.0);
            return Some(MeanCi { mean: first, half_width, n });
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let half_width = (n > 1).then(|| {
            let var = samples.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
                .expect("n - 1 >= 1 degrees of freedom")
                .inverse_cdf(1.0 - (1.0 - level) / 2.0);
            t * (var / n as f64).sqrt()
        });
        Some(MeanCi { mean, half_width, n })
    }

    /// Lower end of the interval (the mean for a single sample).
    pub fn low(&self) -> f64 {
        self.mean - self.half_width.unwrap_or(0.0)
    }

    /// Upper end of the interval (the mean for a single sample).
    pub fn high(&self) -> f64 {
        self.mean + self.half_width.unwrap_or(0.0)
    }
}

/// The runs of one (RTT, competitor) over all seeds: means and 95 % confidence intervals.
///
/// A harm is averaged over the per-seed harms (each against the solo run of its own seed), not
/// computed from the mean FCTs. Optional fields are averaged over the rows that have them and
/// are `None` when none does.
#[derive(Clone, Debug, PartialEq)]
pub struct HarmSummary {
    /// Round-trip time, ms.
    pub rtt_ms: f64,
    /// The competitor, or [`SOLO_CCA`].
    pub cca: String,
    /// Number of runs (seeds) aggregated.
    pub seeds: usize,
    /// Flows over all runs.
    pub flows: usize,
    /// Unfinished flows over all runs.
    pub unfinished: usize,
    /// Geometric mean FCT, ms.
    pub geomean_ms: MeanCi,
    /// Harm to the geometric mean (`None` for solo).
    pub geomean_harm: Option<MeanCi>,
    /// Median FCT, ms.
    pub median_ms: MeanCi,
    /// Harm to the median (`None` for solo).
    pub median_harm: Option<MeanCi>,
    /// 95th-percentile FCT, ms.
    pub p95_ms: MeanCi,
    /// Harm to the 95th percentile (`None` for solo).
    pub p95_harm: Option<MeanCi>,
    /// Workload goodput, Mb/s.
    pub workload_goodput_mbps: Option<MeanCi>,
    /// Competitor goodput, Mb/s.
    pub competitor_goodput_mbps: Option<MeanCi>,
    /// Bottleneck drops.
    pub drops: Option<MeanCi>,
    /// Bottleneck CE marks.
    pub marks: Option<MeanCi>,
    /// Workload flows that took another flow's connection.
    pub reused: Option<MeanCi>,
}

/// Groups rows by (RTT, cca), in order of first appearance, and summarizes each group over
/// its rows (one per seed; seeds are not checked for duplicates).
pub fn aggregate_seeds(rows: &[HarmRow]) -> Vec<HarmSummary> {
    let mut groups: Vec<Vec<&HarmRow>> = Vec::new();
    for r in rows {
        match groups.iter_mut().find(|g| g[0].rtt_ms == r.rtt_ms && g[0].cca == r.cca) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let all = |f: fn(&HarmRow) -> f64| {
                MeanCi::of(&g.iter().map(|&r| f(r)).collect::<Vec<_>>()).expect("non-empty group")
            };
            let some = |f: fn(&HarmRow) -> Option<f64>| {
                MeanCi::of(&g.iter().filter_map(|&r| f(r)).collect::<Vec<_>>())
            };
            HarmSummary {
                rtt_ms: g[0].rtt_ms,
                cca: g[0].cca.clone(),
                seeds: g.len(),
                flows: g.iter().map(|r| r.flows).sum(),
                unfinished: g.iter().map(|r| r.unfinished).sum(),
                geomean_ms: all(|r| r.geomean_ms),
                geomean_harm: some(|r| r.geomean_harm),
                median_ms: all(|r| r.median_ms),
                median_harm: some(|r| r.median_harm),
                p95_ms: all(|r| r.p95_ms),
                p95_harm: some(|r| r.p95_harm),
                workload_goodput_mbps: some(|r| r.workload_goodput_mbps),
                competitor_goodput_mbps: some(|r| r.competitor_goodput_mbps),
                drops: some(|r| r.drops.map(|v| v as f64)),
                marks: some(|r| r.marks.map(|v| v as f64)),
                reused: some(|r| r.reused.map(|v| v as f64)),
            }
        })
        .collect()
}

/// One FCT cell of [`harm_ci_table`]: `339.3±12.4ms (0.481±0.020)`.
fn ci_cell(ms: &MeanCi, harm: Option<&MeanCi>) -> String {
    let mut s = match ms.half_width {
        Some(hw) => format!("{:.1}±{hw:.1}ms", ms.mean),
        None => format!("{:.1}ms", ms.mean),
    };
    if let Some(h) = harm {
        if h.mean != 0.0 || h.half_width.is_some_and(|hw| hw != 0.0) {
            s.push_str(&format!(" ({}", harm_text(h.mean)));
            if let Some(hw) = h.half_width {
                s.push_str(&format!("±{}", go_3(hw)));
            }
            s.push(')');
        }
    }
    s
}

/// The multi-seed version of [`harm_table`], in the same layout with two more columns:
///
/// ```text
/// RTT   CCA    Seeds  GeoMean (Harm)              Median (Harm)  …  Unfinished
/// ---   ---    -----  --------------              -------------  …  ----------
/// 10ms  -      5      176.2±4.1ms                 …                 0/4500
/// 10ms  cubic  5      339.3±12.4ms (0.481±0.020)  …                 3/4500
/// ```
///
/// Each cell is the mean over seeds `±` the half-width of its 95 % confidence interval (no
/// `±` for a single seed); FCTs in ms with one decimal, harms with 3 decimals, the harm
/// omitted when it is missing (solo) or zero in every seed. `Unfinished` is unfinished flows
/// over all seeds / flows over all seeds.
pub fn harm_ci_table(summaries: &[HarmSummary]) -> String {
    let cells: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                rtt_label(s.rtt_ms),
                s.cca.clone(),
                s.seeds.to_string(),
                ci_cell(&s.geomean_ms, s.geomean_harm.as_ref()),
                ci_cell(&s.median_ms, s.median_harm.as_ref()),
                ci_cell(&s.p95_ms, s.p95_harm.as_ref()),
                format!("{}/{}", s.unfinished, s.flows),
            ]
        })
        .collect();
    tab_table(
        &["RTT", "CCA", "Seeds", "GeoMean (Harm)", "Median (Harm)", "P95 (Harm)", "Unfinished"],
        &cells,
    )
}

/// The quantities of [`harm_summary_csv`], each written as `<name>_mean,<name>_ci95`.
const SUMMARY_QUANTITIES: [&str; 11] = [
    "geomean_ms",
    "geomean_harm",
    "median_ms",
    "median_harm",
    "p95_ms",
    "p95_harm",
    "workload_goodput_mbps",
    "competitor_goodput_mbps",
    "drops",
    "marks",
    "reused",
];

/// The summaries as CSV: `rtt_ms,cca,seeds,flows,unfinished`, then for each of
/// `geomean_ms, geomean_harm, median_ms, median_harm, p95_ms, p95_harm,
/// workload_goodput_mbps, competitor_goodput_mbps, drops, marks, reused` a pair
/// `<name>_mean,<name>_ci95` (the mean and the half-width of its 95 % interval, 6 decimals;
/// empty when missing, and the half-width empty for a single seed).
pub fn harm_summary_csv(summaries: &[HarmSummary]) -> Vec<u8> {
    let mut header: Vec<String> =
        ["rtt_ms", "cca", "seeds", "flows", "unfinished"].map(String::from).to_vec();
    for q in SUMMARY_QUANTITIES {
        header.push(format!("{q}_mean"));
        header.push(format!("{q}_ci95"));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let rows = summaries.iter().map(|s| {
        let mut r = vec![
            s.rtt_ms.to_string(),
            s.cca.clone(),
            s.seeds.to_string(),
            s.flows.to_string(),
            s.unfinished.to_string(),
        ];
        let values = [
            Some(s.geomean_ms),
            s.geomean_harm,
            Some(s.median_ms),
            s.median_harm,
            Some(s.p95_ms),
            s.p95_harm,
            s.workload_goodput_mbps,
            s.competitor_goodput_mbps,
            s.drops,
            s.marks,
            s.reused,
        ];
        for v in values {
            r.push(v.map_or_else(String::new, |v| format!("{:.6}", v.mean)));
            r.push(v.and_then(|v| v.half_width).map_or_else(String::new, |h| format!("{h:.6}")));
        }
        r
    });
    csv_bytes(&header, rows)
}

/// One of the three statistics of the harm experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarmStatistic {
    /// Geometric mean.
    GeoMean,
    /// Median.
    Median,
    /// 95th percentile.
    P95,
}

impl HarmStatistic {
    /// All three, in ccafct's column order.
    pub const ALL: [HarmStatistic; 3] =
        [HarmStatistic::GeoMean, HarmStatistic::Median, HarmStatistic::P95];

    /// Panel caption: `Geometric mean`, `Median`, `P95`.
    pub fn caption(self) -> &'static str {
        match self {
            HarmStatistic::GeoMean => "Geometric mean",
            HarmStatistic::Median => "Median",
            HarmStatistic::P95 => "P95",
        }
    }

    /// The statistic's FCT, ms.
    pub fn fct(self, s: &HarmSummary) -> MeanCi {
        match self {
            HarmStatistic::GeoMean => s.geomean_ms,
            HarmStatistic::Median => s.median_ms,
            HarmStatistic::P95 => s.p95_ms,
        }
    }

    /// The statistic's harm (`None` for solo).
    pub fn harm(self, s: &HarmSummary) -> Option<MeanCi> {
        match self {
            HarmStatistic::GeoMean => s.geomean_harm,
            HarmStatistic::Median => s.median_harm,
            HarmStatistic::P95 => s.p95_harm,
        }
    }
}

/// One panel per statistic; per algorithm (coloured by its order of first appearance, solo
/// included, so that an algorithm has the same colour in both figures) a solid line of the
/// means against RTT, and, where there are intervals, dashed lines at their ends labelled
/// `<name> 95% CI`, clamped to `bounds`.
fn rtt_chart(
    summaries: &[HarmSummary],
    title: &str,
    y: Axis,
    harms: bool,
    bounds: (f64, f64),
) -> LineChart {
    let mut names: Vec<&str> = Vec::new();
    for s in summaries {
        if !names.contains(&s.cca.as_str()) {
            names.push(&s.cca);
        }
    }
    let value = |stat: HarmStatistic, s: &HarmSummary| {
        if harms {
            stat.harm(s)
        } else {
            Some(stat.fct(s))
        }
    };
    let panels = HarmStatistic::ALL
        .iter()
        .map(|&stat| {
            let mut lines = Vec::new();
            for (color, &name) in names.iter().enumerate() {
                if harms && name == SOLO_CCA {
                    continue;
                }
                let mut pts: Vec<(f64, MeanCi)> = summaries
                    .iter()
                    .filter(|s| s.cca == name)
                    .filter_map(|s| value(stat, s).map(|v| (s.rtt_ms, v)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let label = if name == SOLO_CCA { "solo" } else { name };
                let line = |f: fn(&MeanCi) -> f64| -> Vec<(f64, f64)> {
                    pts.iter().map(|(x, v)| (*x, f(v).clamp(bounds.0, bounds.1))).collect()
                };
                lines.push(Line::new(label, line(|v| v.mean), color, Dash::Solid));
                if pts.iter().any(|(_, v)| v.half_width.is_some()) {
                    let ci = format!("{label} {}% CI", CI_LEVEL * 100.0);
                    lines.push(Line::new(ci.clone(), line(MeanCi::low), color, Dash::Dashed));
                    lines.push(Line::new(ci, line(MeanCi::high), color, Dash::Dashed));
                }
            }
            Panel { title: stat.caption().to_string(), lines }
        })
        .collect();
    LineChart {
        title: title.to_string(),
        x: Axis::log("RTT (ms, log scale)"),
        y,
        legend: Legend::Right,
        panels,
    }
}

/// Plots FCT harm against RTT to `path` (`.png` or `.svg`): three panels (geometric mean,
/// median, P95) sharing a logarithmic RTT axis and a linear harm axis from 0, one line per
/// competitor in each (the mean over seeds), with dashed lines at the ends of the 95 %
/// confidence interval when there are several seeds, clamped to `[0, 1]` where harm is
/// defined (with few seeds a t interval easily reaches past it). Solo rows are ignored, but
/// colours are assigned as in [`plot_fct_vs_rtt`] (solo first), so an algorithm has the same
/// colour in both figures.
///
/// The RTT axis is logarithmic, so the usual doubling RTTs (10, 20, …, 160 ms) are evenly
/// spaced; its ticks are labelled at 1, 2 and 5 times a power of ten like the crate's other
/// log axes.
///
/// # Errors
/// As [`plot_lines`]: [`AnalysisError::NothingToPlot`] when there is no competitor.
pub fn plot_harm_vs_rtt(
    summaries: &[HarmSummary],
    title: &str,
    path: &Path,
) -> Result<(), AnalysisError> {
    let chart = rtt_chart(summaries, title, Axis::linear("FCT harm"), true, (0.0, 1.0));
    plot_lines(&chart, path)
}

/// Plots the FCT statistics against RTT to `path` (`.png` or `.svg`), laid out like
/// [`plot_harm_vs_rtt`] but with a logarithmic FCT axis (ms) and the solo run as a line
/// labelled `solo`. An interval end that is not positive cannot be shown on the log axis and
/// leaves a gap in its dashed line.
///
/// # Errors
/// As [`plot_lines`].
pub fn plot_fct_vs_rtt(
    summaries: &[HarmSummary],
    title: &str,
    path: &Path,
) -> Result<(), AnalysisError> {
    let y = Axis::log("FCT (ms, log scale)");
    let chart = rtt_chart(summaries, title, y, false, (f64::NEG_INFINITY, f64::INFINITY));
    plot_lines(&chart, path)
}

/// Writes `{prefix}_harm` ([`plot_harm_vs_rtt`]) and `{prefix}_fct` ([`plot_fct_vs_rtt`]) into
/// `dir`, each as `.png` and `.svg`, and returns the files written in that order. Captions
/// are `title` followed by what the figure shows.
///
/// # Errors
/// The first error of the two plotting functions.
pub fn plot_harm_all(
    summaries: &[HarmSummary],
    dir: &Path,
    prefix: &str,
    title: &str,
) -> Result<Vec<PathBuf>, AnalysisError> {
    let caption = |what: &str| crate::plot::caption(title, what);
    let mut written = Vec::new();
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{prefix}_harm.{ext}"));
        plot_harm_vs_rtt(summaries, &caption("FCT harm vs RTT"), &path)?;
        written.push(path);
    }
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{prefix}_fct.{ext}"));
        plot_fct_vs_rtt(summaries, &caption("FCT vs RTT"), &path)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_conversions() {
        assert_eq!(trimmed_1(10.0), "10");
        assert_eq!(trimmed_1(100.0), "100");
        assert_eq!(trimmed_1(12.5), "12.5");
        assert_eq!(trimmed_1(0.04), "0");
        assert_eq!(rtt_label(10.0), "10ms");
        assert_eq!(rtt_label(12.5), "12.5ms");
        assert_eq!(rtt_label(0.1), "0.1ms");
        assert_eq!(rtt_label(0.005), "5us");
        assert_eq!(rtt_label(0.01), "10us");
        assert_eq!(rtt_label(1.25), "1250us");
        assert_eq!(rtt_label(0.0125), "12.5us");
        assert_eq!(go_3(f64::INFINITY), "+Inf");
        assert_eq!(go_3(f64::NEG_INFINITY), "-Inf");
        assert_eq!(go_3(f64::NAN), "NaN");
        assert_eq!(harm_text(f64::INFINITY), "!(+Inf)");
        assert_eq!(harm_text(-0.25), "!(-0.250)");
        assert_eq!(harm_text(0.4805), "0.480"); // 0.4805 is just below the tie in binary
                                                // Truncation to whole nanoseconds, then seconds + ns/1e9, times 1000.
        assert_eq!(go_ms(176_200_000.9), (0.0 + 176_200_000.0 / 1e9) * 1000.0);
        assert_eq!(go_ms(2_002_700_000.0), (2.0 + 2_700_000.0 / 1e9) * 1000.0);
        assert_eq!(fct_cell(go_ms(2_002_700_000.0), Some(0.0)), "2002.7ms");
    }

    #[test]
    fn tabwriter_layout() {
        let t = tab_table(&["a", "bb", "c"], &[vec!["xyz".into(), "1".into(), "long tail".into()]]);
        assert_eq!(t, "a    bb  c\n-    --  -\nxyz  1   long tail\n");
    }
}
