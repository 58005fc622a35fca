//! End-to-end analysis of hand-made FCT files with hand-computed expectations, and plots.

use std::fs;
use std::path::Path;

use dcsim_analysis::{
    buckets_by_quantile, buckets_by_size, buckets_csv, buckets_table, plot_all, plot_cdf,
    plot_lines, plot_slowdown_by_size, read_fct_csv, reference_table, summarize, summary_csv,
    summary_table, AnalysisError, Axis, Bucket, CdfMetric, Dash, FctRow, Legend, Line, LineChart,
    Panel, Percentiles, SlowdownPercentile, WEBSEARCH_SIZE_EDGES,
};

/// 20 flows. Flow `i` has ideal FCT 1000 ns and slowdown `s_i = (7 i mod 20) + 1`, a
/// permutation of 1..=20 so that slowdown order differs from size order:
///
/// | i | 0 1 2 3 4 5 6 7 8 9 | 10 11 12 13 14 15 16 17 18 19 |
/// | s | 1 8 15 2 9 16 3 10 17 4 | 11 18 5 12 19 6 13 20 7 14 |
///
/// Sizes: `(i+1)·1000` B for i < 10 (1K..10K), `(i-9)·1 000 000` B for i >= 10 (1M..10M).
/// Flow 0's FCT is 500 ns, *below* its ideal: its slowdown is floored to 1.
fn hand_made_csv() -> String {
    let mut s = String::from(
        "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns\n",
    );
    for i in 0..20u64 {
        let size = if i < 10 { (i + 1) * 1000 } else { (i - 9) * 1_000_000 };
        let sd = (7 * i) % 20 + 1;
        let fct = if i == 0 { 500 } else { sd * 1000 };
        s.push_str(&format!(
            "{i},{},{},{size},{},{fct},1000,{sd},1000\n",
            i % 4,
            4 + i % 3,
            i * 10
        ));
    }
    s
}

fn write_rows(dir: &Path) -> Vec<FctRow> {
    let p = dir.join("fct.csv");
    fs::write(&p, hand_made_csv()).unwrap();
    read_fct_csv(&p).unwrap()
}

fn pcts(b: &Bucket) -> (f64, f64, f64) {
    let p = b.slowdown.expect("non-empty bucket");
    (p.p50, p.p95, p.p99)
}

#[test]
fn quantile_buckets_have_hand_computed_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(dir.path());
    assert_eq!(rows.len(), 20);
    assert_eq!(rows[0].slowdown(), 1.0, "floored at 1");

    let b = buckets_by_quantile(&rows, 50).unwrap();
    assert_eq!(b.len(), 2);
    // Bucket 0 = sorted rows [floor(0·20/100), floor(50·20/100)) = [0, 10): flows 0..9.
    // Slowdowns sorted: 1 2 3 4 8 9 10 15 16 17.
    // p50 = element floor(10·0.5) = 5 -> 9; p95 = element floor(9.5) = 9 -> 17; p99 -> 17.
    assert_eq!((b[0].count, b[0].max_size, b[0].label.as_str()), (10, Some(10_000), "10K"));
    assert_eq!(b[0].start_quantile, Some(0.0));
    assert_eq!(pcts(&b[0]), (9.0, 17.0, 17.0));
    // Bucket 1 = [10, 20): flows 10..19, *including the largest flow* (10 MB).
    // Slowdowns sorted: 5 6 7 11 12 13 14 18 19 20 -> p50 = [5] = 13, p95 = p99 = [9] = 20.
    assert_eq!((b[1].count, b[1].max_size, b[1].label.as_str()), (10, Some(10_000_000), "10M"));
    assert_eq!(b[1].start_quantile, Some(0.5));
    assert_eq!(pcts(&b[1]), (13.0, 20.0, 20.0));
}

#[test]
fn quantile_bucket_boundaries_keep_the_largest_flow() {
    // 21 flows, step 10: boundaries floor(k·21/100) for k = 0, 10, ..., 100 are
    // 0 2 4 6 8 10 12 14 16 18 21, so the last bucket holds 3 flows, the largest included
    // (the reference would drop it and hold 2).
    let rows: Vec<FctRow> = (0..21u64)
        .map(|i| FctRow {
            flow_id: 20 - i, // ids reversed: sorting must be by size
            src: 0,
            dst: 1,
            size: (i + 1) * 100,
            start_ns: 0.0,
            fct_ns: 2000.0,
            ideal_ns: 1000.0,
            ref_ideal_ns: None,
            dport: None,
        })
        .collect();
    let b = buckets_by_quantile(&rows, 10).unwrap();
    let counts: Vec<usize> = b.iter().map(|b| b.count).collect();
    assert_eq!(counts, [2, 2, 2, 2, 2, 2, 2, 2, 2, 3]);
    assert_eq!(counts.iter().sum::<usize>(), 21);
    assert_eq!(b[9].max_size, Some(2100));
    assert_eq!(b[0].max_size, Some(200));
    // Step 30 does not divide 100: buckets start at 0, 30, 60, 90; the last is clamped.
    let b = buckets_by_quantile(&rows, 30).unwrap();
    let counts: Vec<usize> = b.iter().map(|b| b.count).collect();
    // floor(k·21/100): 0, 6, 12, 18, then min(floor(120·21/100), 21) = 21.
    assert_eq!(counts, [6, 6, 6, 3]);
    // Equal sizes split across buckets are ordered by flow id.
    let mut same = rows.clone();
    for r in &mut same {
        r.size = 7;
    }
    let b = buckets_by_quantile(&same, 50).unwrap();
    assert_eq!((b[0].count, b[1].count), (10, 11));
}

#[test]
fn size_buckets_by_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(dir.path());
    let b = buckets_by_size(&rows, &[5_000, 10_000, 5_000_000]).unwrap();
    let labels: Vec<&str> = b.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["5K", "10K", "5M", ">5M"]);
    // <= 5K: flows 0..4, slowdowns 1 8 15 2 9 -> sorted 1 2 8 9 15: p50 [2] = 8, p95 [4] = 15.
    assert_eq!(pcts(&b[0]), (8.0, 15.0, 15.0));
    // (5K, 10K]: flows 5..9: 16 3 10 17 4 -> 3 4 10 16 17: p50 10, p95 17.
    assert_eq!(pcts(&b[1]), (10.0, 17.0, 17.0));
    // (10K, 5M]: flows 10..14: 11 18 5 12 19 -> 5 11 12 18 19: p50 12, p95 19.
    assert_eq!(pcts(&b[2]), (12.0, 19.0, 19.0));
    // > 5M: flows 15..19: 6 13 20 7 14 -> 6 7 13 14 20: p50 13, p95 20. Overflow bucket.
    assert_eq!(pcts(&b[3]), (13.0, 20.0, 20.0));
    assert_eq!((b[3].upper_edge, b[3].max_size), (None, Some(10_000_000)));
    assert_eq!(b.iter().map(|b| b.count).sum::<usize>(), 20);

    // The web-search figure edges: sizes 1K..10K fall in 7K (7 flows), 20K (3 flows); the
    // 1M flow in 2M? No: 1 000 000 > 989K, <= 2M -> "2M" holds 1M and 2M; "5M" 3M..5M;
    // "30M" 6M..10M. Empty buckets are kept, no overflow bucket.
    let b = buckets_by_size(&rows, &WEBSEARCH_SIZE_EDGES).unwrap();
    let counts: Vec<(&str, usize)> = b.iter().map(|b| (b.label.as_str(), b.count)).collect();
    assert_eq!(
        counts,
        [
            ("7K", 7),
            ("20K", 3),
            ("30K", 0),
            ("50K", 0),
            ("73K", 0),
            ("197K", 0),
            ("989K", 0),
            ("2M", 2),
            ("5M", 3),
            ("30M", 5)
        ]
    );
    assert_eq!(b[2].slowdown, None);
}

#[test]
fn summary_groups() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(dir.path());
    let s = summarize(&rows);
    let names: Vec<&str> = s.groups.iter().map(|g| g.name).collect();
    assert_eq!(names, ["all", "<100KB", ">1MB"]);

    // all: FCTs 500, then 1000·s for the others: sum = 1000·210 - 1000 + 500 = 209 500.
    let all = s.groups[0].stats.unwrap();
    assert_eq!(s.groups[0].count, 20);
    assert_eq!(all.fct_mean_ns, 10_475.0);
    // Sorted FCTs: 500, 2000, 3000, ..., 20000: p50 = [10] = 11 000, p99 = [19] = 20 000.
    assert_eq!((all.fct_p50_ns, all.fct_p99_ns), (11_000.0, 20_000.0));
    // Slowdowns 1..=20: mean 10.5, p50 = [10] = 11, p95 = [floor(19.0)] = 20, p99 = 20.
    assert_eq!(all.slowdown_mean, 10.5);
    assert_eq!(all.slowdown, Percentiles { p50: 11.0, p95: 20.0, p99: 20.0 });

    // < 100 KB: flows 0..9 (see the quantile test): mean 85 / 10 = 8.5, p50 9, p95 17.
    let small = s.groups[1].stats.unwrap();
    assert_eq!(s.groups[1].count, 10);
    assert_eq!(small.slowdown_mean, 8.5);
    assert_eq!(small.slowdown, Percentiles { p50: 9.0, p95: 17.0, p99: 17.0 });

    // > 1 MB: flows 11..19 (exactly 1 MB is not > 1 MB): 18 5 12 19 6 13 20 7 14,
    // sorted 5 6 7 12 13 14 18 19 20: mean 114 / 9, p50 = [4] = 13, p95 = [8] = 20.
    let large = s.groups[2].stats.unwrap();
    assert_eq!(s.groups[2].count, 9);
    assert!((large.slowdown_mean - 114.0 / 9.0).abs() < 1e-12);
    assert_eq!(large.slowdown, Percentiles { p50: 13.0, p95: 20.0, p99: 20.0 });
}

#[test]
fn writers_are_deterministic_and_formatted() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_rows(dir.path());
    let b = buckets_by_quantile(&rows, 50).unwrap();
    let s = summarize(&rows);
    let csv = String::from_utf8(buckets_csv(&[("hpcc", &b)])).unwrap();
    assert_eq!(
        csv,
        "scheme,label,start_quantile,upper_edge,max_size,count,p50,p95,p99\n\
         hpcc,10K,0.00,,10000,10,9.000000,17.000000,17.000000\n\
         hpcc,10M,0.50,,10000000,10,13.000000,20.000000,20.000000\n"
    );
    assert_eq!(buckets_csv(&[("hpcc", &b)]), buckets_csv(&[("hpcc", &b)]));
    let table = buckets_table(&[("hpcc", &b), ("dcqcn", &b)]);
    assert_eq!(table.lines().count(), 2 + 4);
    assert!(
        table.starts_with("scheme  size  from_q  edge  max_size  count     p50     p95     p99\n")
    );
    assert!(
        table.contains("hpcc     10K    0.00     -     10000     10   9.000  17.000  17.000\n"),
        "{table}"
    );
    let st = summary_table(&[("hpcc", &s)]);
    assert!(st.contains(">1MB"), "{st}");
    assert_eq!(
        st.lines().nth(4).unwrap(),
        "hpcc      >1MB      9        12.67       13.00       20.00   12.667  13.000  20.000  20.000"
    );
    let sc = String::from_utf8(summary_csv(&[("hpcc", &s)])).unwrap();
    assert_eq!(
        sc.lines().nth(1).unwrap(),
        "hpcc,all,20,10475.000,11000.000,20000.000,10.500000,11.000000,20.000000,20.000000"
    );
    let empty = summarize(&rows[..5]);
    let sc_empty = String::from_utf8(summary_csv(&[("x", &empty)])).unwrap();
    assert_eq!(sc_empty.lines().nth(3).unwrap(), "x,>1MB,0,,,,,,,");
    let st_empty = summary_table(&[("x", &empty)]);
    assert!(
        st_empty
            .lines()
            .nth(4)
            .unwrap()
            .ends_with("0            -           -           -        -       -       -       -"),
        "{st_empty}"
    );
    assert_eq!(
        sc.lines().nth(2).unwrap().split(',').take(3).collect::<Vec<_>>(),
        ["hpcc", "<100KB", "10"]
    );
    assert_eq!(
        reference_table(&[("hpcc", &b)]),
        "0.000 10000\t9.000 17.000 17.000\n0.500 10000000\t13.000 20.000 20.000\n"
    );
}

#[test]
fn missing_columns_name_the_columns_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old_fct.csv");
    fs::write(&p, "flow_id,src,dst,size_bytes,start_ns,slowdown\n0,1,2,3,4,5\n").unwrap();
    let e = read_fct_csv(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: missing column(s) fct_ns, ideal_fct_ns in the header", p.display())
    );
    let e = read_fct_csv(&dir.path().join("nope.csv")).unwrap_err();
    assert!(matches!(e, AnalysisError::Io { .. }));
    assert!(e.to_string().contains("nope.csv"), "{e}");
}

/// Three synthetic schemes over the web-search size labels with slowdowns that grow with
/// load and shrink with size, plus FCT rows for the CDFs.
fn synthetic() -> Vec<(String, Vec<FctRow>)> {
    let sizes: Vec<u64> = (0..2000u64).map(|i| 1000 + (i * i * 7) % 29_000_000).collect();
    ["HPCC", "DCQCN", "TIMELY"]
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let rows = sizes
                .iter()
                .enumerate()
                .map(|(i, &size)| {
                    let ideal = 2000.0 + size as f64 * 0.08;
                    let noise = ((i * 37 + k * 11) % 100) as f64 / 100.0;
                    let sd = 1.0 + (k as f64 + 1.0) * noise * 4.0 * (1.0 + 1e5 / size as f64);
                    FctRow {
                        flow_id: i as u64,
                        src: 0,
                        dst: 1,
                        size,
                        start_ns: 0.0,
                        fct_ns: ideal * sd,
                        ideal_ns: ideal,
                        ref_ideal_ns: None,
                        dport: Some(100),
                    }
                })
                .collect();
            (name.to_string(), rows)
        })
        .collect()
}

#[test]
fn plots_are_written_as_png_and_svg() {
    let data = synthetic();
    let buckets: Vec<(String, Vec<Bucket>)> = data
        .iter()
        .map(|(n, r)| (n.clone(), buckets_by_size(r, &WEBSEARCH_SIZE_EDGES).unwrap()))
        .collect();
    let b: Vec<(&str, &[Bucket])> =
        buckets.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    let r: Vec<(&str, &[FctRow])> = data.iter().map(|(n, r)| (n.as_str(), r.as_slice())).collect();

    // Set DCSIM_PLOT_DIR to keep the figures for a look.
    let tmp = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("DCSIM_PLOT_DIR").map(std::path::PathBuf::from);
    let dir = keep.as_deref().unwrap_or(tmp.path());
    let written = plot_all(&b, &r, dir, "wb30", "Web search 30% load").unwrap();
    assert_eq!(written.len(), 10);
    for p in &written {
        let bytes = fs::read(p).unwrap();
        assert!(bytes.len() > 1000, "{} is {} bytes", p.display(), bytes.len());
        if p.extension().unwrap() == "png" {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", p.display());
        } else {
            let text = String::from_utf8(bytes).unwrap();
            assert!(text.contains("<svg"), "{}", p.display());
            assert!(text.contains("HPCC") && text.contains("TIMELY"), "legend in {}", p.display());
        }
    }
    let svg = fs::read_to_string(dir.join("wb30_p95.svg")).unwrap();
    for label in ["7K", "197K", "989K", "30M", "Flow size (bytes)"] {
        assert!(svg.contains(&format!("\n{label}\n")), "{label} missing");
    }

    // Deterministic bytes: the same figure twice is identical.
    let again = tmp.path().join("again.png");
    plot_slowdown_by_size(
        &b,
        SlowdownPercentile::P95,
        "Web search 30% load: 95th-percentile slowdown by flow size",
        &again,
    )
    .unwrap();
    assert_eq!(fs::read(&again).unwrap(), fs::read(dir.join("wb30_p95.png")).unwrap());
}

#[test]
fn plot_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let e = plot_cdf(&[], CdfMetric::Fct, "t", &tmp.path().join("x.pdf")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: plot files must end in .png or .svg", tmp.path().join("x.pdf").display())
    );
    let e = plot_cdf(&[("a", &[])], CdfMetric::Fct, "t", &tmp.path().join("x.png")).unwrap_err();
    assert!(matches!(e, AnalysisError::NothingToPlot(_)), "{e}");
    let empty = buckets_by_size(&[], &[10]).unwrap();
    let e = plot_slowdown_by_size(
        &[("a", &empty)],
        SlowdownPercentile::P50,
        "t",
        &tmp.path().join("y.svg"),
    )
    .unwrap_err();
    assert!(matches!(e, AnalysisError::NothingToPlot(_)), "{e}");
    let e = plot_slowdown_by_size(
        &[("a", &buckets_by_size(&synthetic()[0].1, &[10_000]).unwrap())],
        SlowdownPercentile::P50,
        "t",
        &tmp.path().join("no/such/dir/z.png"),
    )
    .unwrap_err();
    assert!(matches!(e, AnalysisError::Plot { .. }), "{e}");
}

#[test]
fn line_charts() {
    let tmp = tempfile::tempdir().unwrap();
    let chart = |legend, lines: Vec<Line>| LineChart {
        title: "Packets to decode".into(),
        x: Axis::linear("Path length k").integers(),
        y: Axis::log("Packets (log scale)"),
        legend,
        panels: vec![
            Panel { title: "Mean".into(), lines: lines.clone() },
            Panel { title: "p99".into(), lines },
        ],
    };
    let lines = vec![
        Line::new("PINT", vec![(5.0, 12.0), (10.0, 30.0), (20.0, 75.0)], 0, Dash::Solid),
        Line::new("naive", vec![(5.0, 20.0), (10.0, 0.0), (20.0, 150.0)], 0, Dash::Dashed),
    ];
    for legend in [Legend::Right, Legend::UpperLeft] {
        for ext in ["png", "svg"] {
            let p = tmp.path().join(format!("c.{ext}"));
            plot_lines(&chart(legend, lines.clone()), &p).unwrap();
            let bytes = fs::read(&p).unwrap();
            if ext == "png" {
                assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
            } else {
                let text = String::from_utf8(bytes).unwrap();
                for label in ["PINT", "naive", "Mean", "p99", "Path length k", "100"] {
                    assert!(text.contains(&format!(">\n{label}\n</text>")), "{label} missing");
                }
            }
        }
    }
    // Same input, same bytes.
    let (a, b) = (tmp.path().join("a.png"), tmp.path().join("b.png"));
    plot_lines(&chart(Legend::Right, lines.clone()), &a).unwrap();
    plot_lines(&chart(Legend::Right, lines), &b).unwrap();
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());

    // Nothing drawable on a log axis.
    let zero = vec![Line::new("z", vec![(1.0, 0.0), (2.0, -1.0)], 0, Dash::Solid)];
    let e = plot_lines(&chart(Legend::Right, zero), &tmp.path().join("z.png")).unwrap_err();
    assert!(matches!(e, AnalysisError::NothingToPlot(_)), "{e}");
    let e = plot_lines(&chart(Legend::Right, vec![]), &tmp.path().join("c.pdf")).unwrap_err();
    assert!(matches!(e, AnalysisError::UnsupportedPlotFormat(_)), "{e}");
}
