//! Percentiles, size buckets and summaries.

use crate::error::AnalysisError;
use crate::fct::FctRow;

/// The percentile rule of the reference analysis (spec §8 step 6): the element at index
/// `floor(n * p)` of the ascending `sorted` values (clamped to the last element, so `p = 1`
/// gives the maximum). `n * p` is computed in `f64` exactly like the reference's
/// `int(len * p)`. `None` for an empty slice.
///
/// ```
/// use dcsim_analysis::percentile;
/// let v = [1.0, 2.0, 3.0, 4.0];
/// assert_eq!(percentile(&v, 0.5), Some(3.0)); // index floor(4 * 0.5) = 2
/// assert_eq!(percentile(&v, 0.99), Some(4.0)); // index floor(3.96) = 3
/// ```
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 * p) as usize).min(sorted.len() - 1);
    Some(sorted[i])
}

/// p50, p95 and p99 of a set of values (by [`percentile`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Percentiles {
    /// Percentiles of `values` (sorted here); `None` if empty.
    pub fn of(mut values: Vec<f64>) -> Option<Percentiles> {
        values.sort_by(f64::total_cmp);
        Some(Percentiles {
            p50: percentile(&values, 0.5)?,
            p95: percentile(&values, 0.95)?,
            p99: percentile(&values, 0.99)?,
        })
    }
}

/// Slowdown statistics of the flows in one size bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct Bucket {
    /// X-axis label: for quantile buckets the largest size in the bucket, for fixed-size
    /// buckets the upper edge, formatted by [`size_label`] (an overflow bucket reads
    /// `>30M`).
    pub label: String,
    /// For quantile buckets, the bucket's start quantile `k / 100` (0.0, 0.1, ...).
    pub start_quantile: Option<f64>,
    /// For fixed-size buckets, the inclusive upper size edge (`None` for the overflow bucket).
    pub upper_edge: Option<u64>,
    /// Largest flow size in the bucket (`None` if empty).
    pub max_size: Option<u64>,
    /// Flows in the bucket.
    pub count: usize,
    /// Slowdown percentiles (`None` if empty).
    pub slowdown: Option<Percentiles>,
}

/// Formats a size the way the HPCC/PINT figures label their x axes: below 1000 the plain
/// number (`324`), then whole kilobytes (`7K`, `197K`, `989K`; K = 1000), then megabytes with
/// one decimal below 10 M and a trailing `.0` dropped (`2M`, `1.5M`, `30M`). Rounded to
/// nearest.
///
/// ```
/// use dcsim_analysis::size_label;
/// assert_eq!(size_label(6_667), "7K");
/// assert_eq!(size_label(1_999_990), "2M");
/// assert_eq!(size_label(1_500_000), "1.5M");
/// assert_eq!(size_label(999), "999");
/// ```
pub fn size_label(bytes: u64) -> String {
    if bytes < 1000 {
        return bytes.to_string();
    }
    let k = (bytes as f64 / 1e3).round();
    if k < 1000.0 {
        return format!("{k}K");
    }
    let m = bytes as f64 / 1e6;
    if m < 9.95 {
        let s = format!("{m:.1}");
        format!("{}M", s.strip_suffix(".0").unwrap_or(&s))
    } else {
        format!("{}M", m.round())
    }
}

/// The x-axis size labels of the HPCC/PINT web-search figures (PINT paper Fig. 7; the 10 %
/// quantile bucket maxima of the web-search CDF), as inclusive upper edges for
/// [`buckets_by_size`].
pub const WEBSEARCH_SIZE_EDGES: [u64; 10] =
    [7_000, 20_000, 30_000, 50_000, 73_000, 197_000, 989_000, 2_000_000, 5_000_000, 30_000_000];

/// The x-axis size labels of the HPCC/PINT Hadoop figures (PINT paper Fig. 7), as inclusive
/// upper edges for [`buckets_by_size`].
pub const HADOOP_SIZE_EDGES: [u64; 10] =
    [324, 399, 500, 599, 699, 999, 7_000, 46_000, 120_000, 10_000_000];

/// Rows sorted by size, ties by flow id (the reference sorts ties by the whole line's text;
/// flow id is deterministic and documented instead).
fn sorted_by_size(rows: &[FctRow]) -> Vec<&FctRow> {
    let mut v: Vec<&FctRow> = rows.iter().collect();
    v.sort_by_key(|r| (r.size, r.flow_id));
    v
}

fn bucket_of(
    rows: &[&FctRow],
    label: String,
    start_quantile: Option<f64>,
    upper_edge: Option<u64>,
) -> Bucket {
    Bucket {
        label,
        start_quantile,
        upper_edge,
        max_size: rows.iter().map(|r| r.size).max(),
        count: rows.len(),
        slowdown: Percentiles::of(rows.iter().map(|r| r.slowdown()).collect()),
    }
}

/// Equal-count buckets by size percentile, like the reference analysis (spec §8 step 5) but
/// **including the largest flow** (the reference drops it by an off-by-one).
///
/// Rows are sorted by size (ties by flow id). With `n` rows, bucket `k = 0, step, 2·step, …
/// < 100` holds sorted rows `[floor(k·n/100), floor((k+step)·n/100))`, the last one clamped
/// to `n`, so every row is in exactly one bucket. Each bucket's label is its largest size
/// ([`size_label`]); an empty bucket (only when `n < 100 / step`) is labelled `p<k+step>` and
/// has no statistics (the reference crashes there).
///
/// # Errors
/// [`AnalysisError::InvalidStep`] unless `1 <= step_percent <= 100`.
pub fn buckets_by_quantile(
    rows: &[FctRow],
    step_percent: u32,
) -> Result<Vec<Bucket>, AnalysisError> {
    if !(1..=100).contains(&step_percent) {
        return Err(AnalysisError::InvalidStep(step_percent));
    }
    let sorted = sorted_by_size(rows);
    let n = sorted.len();
    let at = |k: u32| ((k as usize * n) / 100).min(n);
    Ok((0..100)
        .step_by(step_percent as usize)
        .map(|k| {
            let slice = &sorted[at(k)..at(k + step_percent)];
            let label = slice.last().map_or_else(
                || format!("p{}", (k + step_percent).min(100)),
                |r| size_label(r.size),
            );
            bucket_of(slice, label, Some(f64::from(k) / 100.0), None)
        })
        .collect())
}

/// Buckets by fixed size thresholds: bucket `i` holds sizes in `(edges[i-1], edges[i]]` (the
/// first one everything `<= edges[0]`), labelled [`size_label`]`(edges[i])`. Flows larger than
/// the last edge go to one more bucket labelled `>` + the last label, added only if it is not
/// empty. Empty buckets below the last edge are kept (with no statistics) so that the x axis
/// is the same for every scheme.
///
/// # Errors
/// [`AnalysisError::InvalidEdges`] if `edges` is empty or not strictly increasing.
pub fn buckets_by_size(rows: &[FctRow], edges: &[u64]) -> Result<Vec<Bucket>, AnalysisError> {
    if edges.is_empty() || edges.windows(2).any(|w| w[0] >= w[1]) {
        return Err(AnalysisError::InvalidEdges(edges.to_vec()));
    }
    let sorted = sorted_by_size(rows);
    let mut out = Vec::with_capacity(edges.len() + 1);
    let mut lo = 0;
    for &e in edges {
        let hi = lo + sorted[lo..].partition_point(|r| r.size <= e);
        out.push(bucket_of(&sorted[lo..hi], size_label(e), None, Some(e)));
        lo = hi;
    }
    if lo < sorted.len() {
        let last = edges[edges.len() - 1];
        out.push(bucket_of(&sorted[lo..], format!(">{}", size_label(last)), None, None));
    }
    Ok(out)
}

/// FCT and slowdown statistics of a group of flows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupStats {
    /// Mean FCT in nanoseconds.
    pub fct_mean_ns: f64,
    /// Median FCT in nanoseconds.
    pub fct_p50_ns: f64,
    /// 99th-percentile FCT in nanoseconds.
    pub fct_p99_ns: f64,
    /// Mean slowdown.
    pub slowdown_mean: f64,
    /// Slowdown percentiles.
    pub slowdown: Percentiles,
}

/// One group of a [`Summary`].
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSummary {
    /// Group name: `all`, `<100KB` or `>1MB`.
    pub name: &'static str,
    /// Flows in the group.
    pub count: usize,
    /// Statistics (`None` if the group is empty).
    pub stats: Option<GroupStats>,
}

/// Overall statistics: the groups `all`, `<100KB` (size < 100 000 B) and `>1MB`
/// (size > 1 000 000 B), in that order. Percentiles by [`percentile`]; means summed in row
/// order.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The groups, in the order above.
    pub groups: Vec<GroupSummary>,
}

/// Small-flow threshold of [`Summary`] (exclusive), bytes.
pub const SMALL_FLOW_BYTES: u64 = 100_000;
/// Large-flow threshold of [`Summary`] (exclusive), bytes.
pub const LARGE_FLOW_BYTES: u64 = 1_000_000;

/// Computes the [`Summary`] of `rows`.
pub fn summarize(rows: &[FctRow]) -> Summary {
    let group = |name: &'static str, keep: &dyn Fn(&FctRow) -> bool| {
        let sel: Vec<&FctRow> = rows.iter().filter(|r| keep(r)).collect();
        let n = sel.len();
        let stats = (n > 0).then(|| {
            let mut fct: Vec<f64> = sel.iter().map(|r| r.fct_ns).collect();
            let sd: Vec<f64> = sel.iter().map(|r| r.slowdown()).collect();
            let fct_mean_ns = fct.iter().sum::<f64>() / n as f64;
            let slowdown_mean = sd.iter().sum::<f64>() / n as f64;
            fct.sort_by(f64::total_cmp);
            GroupStats {
                fct_mean_ns,
                fct_p50_ns: percentile(&fct, 0.5).expect("non-empty"),
                fct_p99_ns: percentile(&fct, 0.99).expect("non-empty"),
                slowdown_mean,
                slowdown: Percentiles::of(sd).expect("non-empty"),
            }
        });
        GroupSummary { name, count: n, stats }
    };
    Summary {
        groups: vec![
            group("all", &|_| true),
            group("<100KB", &|r| r.size < SMALL_FLOW_BYTES),
            group(">1MB", &|r| r.size > LARGE_FLOW_BYTES),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_rule() {
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[7.0], 0.99), Some(7.0));
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        // floor(20 * 0.95) = 19 in f64 (0.95 is slightly below, the product rounds to 19.0).
        assert_eq!(percentile(&v, 0.95), Some(20.0));
        assert_eq!(percentile(&v, 0.5), Some(11.0));
        assert_eq!(percentile(&v, 1.0), Some(20.0));
    }

    #[test]
    fn labels() {
        let web: Vec<String> = WEBSEARCH_SIZE_EDGES.iter().map(|&e| size_label(e)).collect();
        assert_eq!(web, ["7K", "20K", "30K", "50K", "73K", "197K", "989K", "2M", "5M", "30M"]);
        let fb: Vec<String> = HADOOP_SIZE_EDGES.iter().map(|&e| size_label(e)).collect();
        assert_eq!(fb, ["324", "399", "500", "599", "699", "999", "7K", "46K", "120K", "10M"]);
        assert_eq!(size_label(999_600), "1M");
        assert_eq!(size_label(9_960_000), "10M");
        assert_eq!(size_label(0), "0");
    }

    #[test]
    fn invalid_parameters() {
        assert_eq!(
            buckets_by_quantile(&[], 0).unwrap_err().to_string(),
            "bucket step must be 1..=100 percent, found 0"
        );
        assert!(buckets_by_quantile(&[], 101).is_err());
        assert_eq!(
            buckets_by_size(&[], &[5, 5]).unwrap_err().to_string(),
            "size bucket edges must be non-empty and strictly increasing, found [5, 5]"
        );
        assert!(buckets_by_size(&[], &[]).is_err());
    }

    #[test]
    fn empty_input() {
        let b = buckets_by_quantile(&[], 50).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].label.as_str(), b[0].count, b[0].slowdown), ("p50", 0, None));
        let s = summarize(&[]);
        assert!(s.groups.iter().all(|g| g.count == 0 && g.stats.is_none()));
    }
}
