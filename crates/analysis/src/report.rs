//! Text tables and CSV files. Every writer is a pure function of its input: the same input
//! gives the same bytes (fixed decimal places, fixed row and column order, `\n` line ends).

use crate::stats::{Bucket, Summary};

/// Slowdown decimals in CSV output.
const CSV_SLOWDOWN_DECIMALS: usize = 6;
/// Time (ns) decimals in CSV output.
const CSV_NS_DECIMALS: usize = 3;

fn fixed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// Renders rows as an aligned text table: first column left-aligned, the others
/// right-aligned, two spaces between columns, a dashed rule under the header.
pub(crate) fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            if i == 0 {
                s.push_str(&format!("{c:<w$}"));
            } else {
                s.push_str(&format!("  {c:>w$}"));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(rule.iter().map(String::as_str).collect()));
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

pub(crate) fn csv_bytes(header: &[&str], rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail and every record has the header's length.
    w.write_record(header).expect("in-memory CSV");
    for r in rows {
        w.write_record(r).expect("in-memory CSV");
    }
    w.into_inner().expect("in-memory CSV")
}

/// The summary of each scheme as a text table for a terminal: one row per (scheme, group)
/// with the flow count, FCT mean/p50/p99 in microseconds (2 decimals) and slowdown
/// mean/p50/p95/p99 (3 decimals); empty groups show `-`.
pub fn summary_table(schemes: &[(&str, &Summary)]) -> String {
    let rows: Vec<Vec<String>> = summary_rows(schemes, |v| format!("{:.2}", v / 1e3), 3, "-");
    text_table(
        &[
            "scheme",
            "group",
            "count",
            "fct_mean_us",
            "fct_p50_us",
            "fct_p99_us",
            "sd_mean",
            "sd_p50",
            "sd_p95",
            "sd_p99",
        ],
        &rows,
    )
}

/// The summary of each scheme as CSV (header `scheme,group,count,fct_mean_ns,fct_p50_ns,
/// fct_p99_ns,slowdown_mean,slowdown_p50,slowdown_p95,slowdown_p99`); times with 3 decimals,
/// slowdowns with 6; empty groups have empty fields.
pub fn summary_csv(schemes: &[(&str, &Summary)]) -> Vec<u8> {
    let rows = summary_rows(schemes, |v| fixed(v, CSV_NS_DECIMALS), CSV_SLOWDOWN_DECIMALS, "");
    csv_bytes(
        &[
            "scheme",
            "group",
            "count",
            "fct_mean_ns",
            "fct_p50_ns",
            "fct_p99_ns",
            "slowdown_mean",
            "slowdown_p50",
            "slowdown_p95",
            "slowdown_p99",
        ],
        &rows,
    )
}

fn summary_rows(
    schemes: &[(&str, &Summary)],
    time: impl Fn(f64) -> String,
    sd_decimals: usize,
    empty: &str,
) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (name, s) in schemes {
        for g in &s.groups {
            let mut r = vec![name.to_string(), g.name.to_string(), g.count.to_string()];
            match &g.stats {
                Some(st) => r.extend([
                    time(st.fct_mean_ns),
                    time(st.fct_p50_ns),
                    time(st.fct_p99_ns),
                    fixed(st.slowdown_mean, sd_decimals),
                    fixed(st.slowdown.p50, sd_decimals),
                    fixed(st.slowdown.p95, sd_decimals),
                    fixed(st.slowdown.p99, sd_decimals),
                ]),
                None => r.extend(std::iter::repeat_n(empty.to_string(), 7)),
            }
            rows.push(r);
        }
    }
    rows
}

fn bucket_rows(schemes: &[(&str, &[Bucket])], decimals: usize, empty: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (name, buckets) in schemes {
        for b in buckets.iter() {
            let sd = |f: fn(&crate::stats::Percentiles) -> f64| {
                b.slowdown.as_ref().map_or_else(|| empty.to_string(), |p| fixed(f(p), decimals))
            };
            rows.push(vec![
                name.to_string(),
                b.label.clone(),
                b.start_quantile.map_or_else(|| empty.to_string(), |q| format!("{q:.2}")),
                b.upper_edge.map_or_else(|| empty.to_string(), |e| e.to_string()),
                b.max_size.map_or_else(|| empty.to_string(), |m| m.to_string()),
                b.count.to_string(),
                sd(|p| p.p50),
                sd(|p| p.p95),
                sd(|p| p.p99),
            ]);
        }
    }
    rows
}

/// Slowdown by size bucket for each scheme as a text table: one row per (scheme, bucket)
/// with label, start quantile, upper edge, largest size, count and slowdown p50/p95/p99
/// (3 decimals); missing values show `-`.
pub fn buckets_table(schemes: &[(&str, &[Bucket])]) -> String {
    text_table(
        &["scheme", "size", "from_q", "edge", "max_size", "count", "p50", "p95", "p99"],
        &bucket_rows(schemes, 3, "-"),
    )
}

/// Slowdown by size bucket as CSV (header `scheme,label,start_quantile,upper_edge,max_size,
/// count,p50,p95,p99`), slowdowns with 6 decimals, missing values empty.
pub fn buckets_csv(schemes: &[(&str, &[Bucket])]) -> Vec<u8> {
    csv_bytes(
        &[
            "scheme",
            "label",
            "start_quantile",
            "upper_edge",
            "max_size",
            "count",
            "p50",
            "p95",
            "p99",
        ],
        &bucket_rows(schemes, CSV_SLOWDOWN_DECIMALS, ""),
    )
}

/// The reference `fct_analysis.py` output layout (spec §8 step 7), for side-by-side
/// comparison with its files: one line per bucket, `%.3f` start quantile (for size buckets,
/// `index / buckets`), a space, the first scheme's largest size in the bucket (`0` if empty),
/// then per scheme a tab and `p50 p95 p99` with 3 decimals (`nan` for an empty bucket).
/// Buckets are matched by position.
pub fn reference_table(schemes: &[(&str, &[Bucket])]) -> String {
    let Some((_, first)) = schemes.first() else {
        return String::new();
    };
    let n = first.len();
    let mut out = String::new();
    for (i, b) in first.iter().enumerate() {
        let q = b.start_quantile.unwrap_or(i as f64 / n as f64);
        out.push_str(&format!("{q:.3} {}", b.max_size.unwrap_or(0)));
        for (_, buckets) in schemes {
            let p = buckets.get(i).and_then(|b| b.slowdown);
            out.push('\t');
            out.push_str(&match p {
                Some(p) => format!("{:.3} {:.3} {:.3}", p.p50, p.p95, p.p99),
                None => "nan nan nan".to_string(),
            });
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Percentiles, Summary};

    #[test]
    fn table_alignment() {
        let t = text_table(&["a", "bb"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "a    bb\n---  --\nxyz   1\n");
    }

    #[test]
    fn reference_layout() {
        let b = [Bucket {
            label: "7K".into(),
            start_quantile: Some(0.0),
            upper_edge: None,
            max_size: Some(6_666),
            count: 3,
            slowdown: Some(Percentiles { p50: 1.5, p95: 2.0, p99: 2.25 }),
        }];
        let empty = [Bucket { slowdown: None, ..b[0].clone() }];
        assert_eq!(
            reference_table(&[("a", &b), ("b", &empty)]),
            "0.000 6666\t1.500 2.000 2.250\tnan nan nan\n"
        );
        assert_eq!(reference_table(&[]), "");
        let s = Summary { groups: vec![] };
        assert_eq!(
            String::from_utf8(summary_csv(&[("x", &s)])).unwrap(),
            "scheme,group,count,fct_mean_ns,fct_p50_ns,fct_p99_ns,slowdown_mean,slowdown_p50,\
             slowdown_p95,slowdown_p99\n"
        );
    }
}
