//! The FCT-harm statistics and report (spec A4) against hand-computed values and the seed's
//! own ccafct table.

use dcsim_analysis::{
    aggregate_seeds, geomean, harm, harm_ci_table, harm_csv, harm_more_is_better, harm_summary_csv,
    harm_table, plot_harm_all, plot_harm_vs_rtt, quantile_empirical, AnalysisError, FctStats,
    HarmRow, MeanCi, HARM_CSV_COLUMNS, SOLO_CCA,
};

#[test]
fn empirical_quantile_is_the_ceil_pn_th_order_statistic() {
    let q = quantile_empirical;
    // n = 1: every p gives the only value.
    for p in [0.0, 0.5, 0.95, 1.0] {
        assert_eq!(q(&[7.0], p), Some(7.0));
    }
    // n = 2: p·n = 0, 1, 1.9, 2 -> 1st, 1st, 2nd, 2nd.
    let two = [3.0, 9.0];
    assert_eq!(
        [q(&two, 0.0), q(&two, 0.5), q(&two, 0.95), q(&two, 1.0)].map(Option::unwrap),
        [3.0, 3.0, 9.0, 9.0]
    );
    // n = 10 (even): the median is the 5th value, not the mean of the 5th and 6th.
    let ten: Vec<f64> = (1..=10).map(|i| f64::from(i) * 10.0).collect();
    assert_eq!(q(&ten, 0.5), Some(50.0));
    assert_eq!(q(&ten, 0.95), Some(100.0)); // ⌈9.5⌉ = 10th
    assert_eq!(q(&ten, 0.9), Some(90.0)); // 0.9·10 = 9 exactly
    assert_eq!(q(&ten, 0.1), Some(10.0)); // 0.1·10 rounds to 1.0
    assert_eq!(q(&ten, 0.0), Some(10.0));
    assert_eq!(q(&ten, 1.0), Some(100.0));
    // n = 5 (odd): ⌈2.5⌉ = 3rd, ⌈4.75⌉ = 5th.
    let five = [1.0, 2.0, 4.0, 8.0, 16.0];
    assert_eq!(q(&five, 0.5), Some(4.0));
    assert_eq!(q(&five, 0.95), Some(16.0));
    // n = 20: 0.95·20 is 19.0 in f64 -> the 19th; n = 21: ⌈19.95⌉ = 20th.
    let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(q(&twenty, 0.95), Some(19.0));
    let twenty_one: Vec<f64> = (1..=21).map(f64::from).collect();
    assert_eq!(q(&twenty_one, 0.95), Some(20.0));
    assert_eq!(q(&twenty_one, 0.5), Some(11.0));
    // Edge cases: empty, p out of range (gonum panics), NaN data (gonum returns NaN).
    assert_eq!(q(&[], 0.5), None);
    assert_eq!(q(&ten, 1.01), None);
    assert_eq!(q(&ten, -0.1), None);
    assert_eq!(q(&ten, f64::NAN), None);
    assert!(q(&[1.0, f64::NAN], 0.5).unwrap().is_nan());
}

#[test]
fn geometric_mean_of_known_values() {
    assert_eq!(geomean(&[]), None);
    assert_eq!(geomean(&[5.0]), Some(5.0f64.ln().exp()));
    assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    assert!((geomean(&[1.0, 10.0, 100.0, 1000.0]).unwrap() - 10f64.powf(1.5)).abs() < 1e-9);
    assert_eq!(geomean(&[0.0, 4.0]), Some(0.0));
}

#[test]
fn fct_stats_sort_their_input() {
    let s = FctStats::of(&[400.0, 100.0, 200.0, 800.0]).unwrap();
    assert!((s.geomean - (400.0f64 * 100.0 * 200.0 * 800.0).powf(0.25)).abs() < 1e-9);
    assert_eq!((s.median, s.p95), (200.0, 800.0));
    assert_eq!(FctStats::of(&[]), None);
}

#[test]
fn harm_sign_and_clamp() {
    // (with - solo) / with, "less is better".
    assert_eq!(harm(100.0, 200.0), 0.5);
    assert_eq!(harm(176.2, 339.3), (339.3 - 176.2) / 339.3);
    assert_eq!(harm(100.0, 100.0), 0.0);
    // Better with the competitor: clamped to 0, never negative.
    assert_eq!(harm(100.0, 99.0), 0.0);
    assert_eq!(harm(100.0, 1e-9), 0.0);
    // Harm tends to 1, and a zero FCT is ccafct's invalid (infinite) harm.
    assert!(harm(1.0, 1e12) < 1.0);
    assert_eq!(harm(1.0, 0.0), f64::INFINITY);
    assert!(harm(f64::NAN, 1.0).is_nan());
    // "More is better": (solo - with) / solo.
    assert_eq!(harm_more_is_better(50.0, 25.0), 0.5);
    assert_eq!(harm_more_is_better(50.0, 75.0), 0.0);
    assert_eq!(harm_more_is_better(0.0, 1.0), f64::INFINITY);
    // Per statistic.
    let solo = FctStats { geomean: 100.0, median: 50.0, p95: 400.0 };
    let with = FctStats { geomean: 400.0, median: 40.0, p95: 500.0 };
    let h = with.harm_vs(&solo);
    assert_eq!((h.geomean, h.median, h.p95), (0.75, 0.0, 0.2));
}

/// Milliseconds with one decimal as whole nanoseconds (exact).
fn ns(ms: f64) -> f64 {
    ((ms * 10.0).round() as u64 * 100_000) as f64
}

fn stats(ms: [f64; 3]) -> FctStats {
    FctStats { geomean: ns(ms[0]), median: ns(ms[1]), p95: ns(ms[2]) }
}

/// The seed's sample run (ccafct README): (RTT, solo, cubic, prague) statistics in ms.
#[allow(clippy::type_complexity)]
const SEED: [(f64, [f64; 3], [f64; 3], [f64; 3]); 5] = [
    (10.0, [176.2, 154.3, 1061.3], [339.3, 314.9, 2002.7], [1171.3, 1131.7, 7305.2]),
    (20.0, [243.0, 211.5, 1155.3], [376.6, 351.7, 1986.0], [1394.1, 1385.3, 8454.8]),
    (40.0, [369.2, 317.8, 1634.7], [475.7, 423.9, 2179.9], [1643.8, 1637.7, 9879.3]),
    (80.0, [599.9, 554.5, 2135.6], [906.7, 846.9, 3709.4], [2384.8, 2228.4, 12159.9]),
    (160.0, [976.6, 976.4, 3465.1], [1127.7, 1043.2, 4207.8], [2471.9, 2174.7, 14418.8]),
];

fn seed_rows(seed: u64, scale: f64) -> Vec<HarmRow> {
    let mut rows = Vec::new();
    for (rtt, solo, cubic, prague) in SEED {
        let solo = stats(solo);
        let solo = FctStats {
            geomean: (solo.geomean * scale).round(),
            median: (solo.median * scale).round(),
            p95: (solo.p95 * scale).round(),
        };
        rows.push(HarmRow::solo(rtt, seed, 900, 0, &solo));
        for (cca, with) in [("cubic", cubic), ("prague", prague)] {
            rows.push(HarmRow::competitor(rtt, cca, seed, 900, 0, &stats(with), &solo));
        }
    }
    rows
}

/// The results table of the seed page, character for character (the harms are recomputed
/// from the rounded FCTs and agree with the seed's in all 30 cells).
const SEED_TABLE: &str = "\
RTT    CCA     GeoMean (Harm)    Median (Harm)     P95 (Harm)
---    ---     --------------    -------------     ----------
10ms   -       176.2ms           154.3ms           1061.3ms
10ms   cubic   339.3ms (0.481)   314.9ms (0.510)   2002.7ms (0.470)
10ms   prague  1171.3ms (0.850)  1131.7ms (0.864)  7305.2ms (0.855)
20ms   -       243.0ms           211.5ms           1155.3ms
20ms   cubic   376.6ms (0.355)   351.7ms (0.399)   1986.0ms (0.418)
20ms   prague  1394.1ms (0.826)  1385.3ms (0.847)  8454.8ms (0.863)
40ms   -       369.2ms           317.8ms           1634.7ms
40ms   cubic   475.7ms (0.224)   423.9ms (0.250)   2179.9ms (0.250)
40ms   prague  1643.8ms (0.775)  1637.7ms (0.806)  9879.3ms (0.835)
80ms   -       599.9ms           554.5ms           2135.6ms
80ms   cubic   906.7ms (0.338)   846.9ms (0.345)   3709.4ms (0.424)
80ms   prague  2384.8ms (0.748)  2228.4ms (0.751)  12159.9ms (0.824)
160ms  -       976.6ms           976.4ms           3465.1ms
160ms  cubic   1127.7ms (0.134)  1043.2ms (0.064)  4207.8ms (0.177)
160ms  prague  2471.9ms (0.605)  2174.7ms (0.551)  14418.8ms (0.760)
";

#[test]
fn table_reproduces_the_seed() {
    let rows = seed_rows(1, 1.0);
    assert_eq!(rows[0].cca, SOLO_CCA);
    assert_eq!(rows[0].geomean_harm, None);
    assert!((rows[1].geomean_harm.unwrap() - 0.4807).abs() < 1e-4);
    assert_eq!(harm_table(&rows), SEED_TABLE);
}

#[test]
fn zero_and_invalid_harms_print_like_ccafct() {
    let solo = FctStats { geomean: 200e6, median: 100e6, p95: 1e9 };
    // Faster than solo in the median (harm clamped to 0, so omitted), zero P95 (infinite harm).
    let with = FctStats { geomean: 250e6, median: 90e6, p95: 0.0 };
    let rows = [
        HarmRow::solo(12.5, 1, 10, 0, &solo),
        HarmRow::competitor(12.5, "bbr", 1, 10, 2, &with, &solo),
    ];
    assert_eq!(rows[1].median_harm, Some(0.0));
    assert_eq!(
        harm_table(&rows),
        "RTT     CCA  GeoMean (Harm)   Median (Harm)  P95 (Harm)\n\
         ---     ---  --------------   -------------  ----------\n\
         12.5ms  -    200.0ms          100.0ms        1000.0ms\n\
         12.5ms  bbr  250.0ms (0.200)  90.0ms         0.0ms (!(+Inf))\n"
    );
}

#[test]
fn confidence_intervals() {
    // Identical samples: zero width, and the mean is the value itself.
    let ci = MeanCi::of(&[0.1, 0.1, 0.1]).unwrap();
    assert_eq!((ci.mean, ci.half_width, ci.n), (0.1, Some(0.0), 3));
    assert_eq!((ci.low(), ci.high()), (0.1, 0.1));
    // One sample: no interval.
    assert_eq!(MeanCi::of(&[4.0]).unwrap().half_width, None);
    assert_eq!(MeanCi::of(&[]), None);
    assert_eq!(MeanCi::with_level(&[1.0, 2.0], 1.0), None);
    // 1..5: mean 3, s = sqrt(2.5), t(0.975, 4) = 2.776445.
    let ci = MeanCi::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_eq!(ci.mean, 3.0);
    let want = 2.776_445 * 2.5f64.sqrt() / 5f64.sqrt();
    assert!((ci.half_width.unwrap() - want).abs() < 1e-5, "{ci:?}");
    // Two samples: t(0.975, 1) = 12.706205; s/sqrt(n) = 1.
    let ci = MeanCi::of(&[0.0, 2.0]).unwrap();
    assert!((ci.half_width.unwrap() - 12.706_205).abs() < 1e-5, "{ci:?}");
    // 90 %: t(0.95, 4) = 2.131847.
    let ci = MeanCi::with_level(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.9).unwrap();
    assert!((ci.half_width.unwrap() - 2.131_847 * 0.5f64.sqrt()).abs() < 1e-5);
}

#[test]
fn seeds_aggregate_into_means_and_intervals() {
    // Seed 1 is the seed's run; seed 2 has a solo 10% slower, so smaller harms.
    let mut rows = seed_rows(1, 1.0);
    rows.extend(seed_rows(2, 1.1));
    rows[1].unfinished = 3;
    rows[1].drops = Some(100);
    rows[16].drops = Some(200); // seed 2, 10 ms, cubic
    let s = aggregate_seeds(&rows);
    assert_eq!(s.len(), 15, "5 RTTs x (solo, cubic, prague)");
    assert_eq!((s[0].rtt_ms, s[0].cca.as_str(), s[0].seeds), (10.0, "-", 2));
    assert_eq!((s[1].cca.as_str(), s[1].flows, s[1].unfinished), ("cubic", 1800, 3));
    // Solo: the mean of 176.2 and 193.82 ms; half-width t(0.975, 1) · 17.62 / 2 = 111.94.
    assert!((s[0].geomean_ms.mean - (176.2 + 193.82) / 2.0).abs() < 1e-9);
    assert_eq!(s[0].geomean_harm, None);
    // Cubic at 10 ms: the same FCT in both seeds, zero-width interval.
    assert_eq!(s[1].geomean_ms.half_width, Some(0.0));
    // Its harm is the mean of the per-seed harms.
    let h1 = (339.3 - 176.2) / 339.3;
    let h2 = (339.3 - 193.82) / 339.3;
    let gh = s[1].geomean_harm.unwrap();
    assert!((gh.mean - (h1 + h2) / 2.0).abs() < 1e-6);
    // t(0.975, 1) · |h1 - h2| / 2.
    assert!((gh.half_width.unwrap() - 12.706_205 * (h1 - h2).abs() / 2.0).abs() < 1e-5);
    assert_eq!(s[1].drops.unwrap().mean, 150.0);
    assert_eq!(s[2].drops, None);

    let table = harm_ci_table(&s[..3]);
    let want = "\
RTT   CCA     Seeds  GeoMean (Harm)              Median (Harm)               P95 (Harm)                  Unfinished
---   ---     -----  --------------              -------------               ----------                  ----------
10ms  -       2      185.0±111.9ms               162.0±98.0ms                1114.4±674.3ms              0/1800
10ms  cubic   2      339.3±0.0ms (0.455±0.330)   314.9±0.0ms (0.486±0.311)   2002.7±0.0ms (0.444±0.337)  3/1800
10ms  prague  2      1171.3±0.0ms (0.842±0.096)  1131.7±0.0ms (0.857±0.087)  7305.2±0.0ms (0.847±0.092)  0/1800
";
    assert_eq!(table, want);

    // A single seed prints no ±.
    let one = aggregate_seeds(&seed_rows(1, 1.0)[..2]);
    assert_eq!(
        harm_ci_table(&one),
        "RTT   CCA    Seeds  GeoMean (Harm)   Median (Harm)    P95 (Harm)        Unfinished\n\
         ---   ---    -----  --------------   -------------    ----------        ----------\n\
         10ms  -      1      176.2ms          154.3ms          1061.3ms          0/900\n\
         10ms  cubic  1      339.3ms (0.481)  314.9ms (0.510)  2002.7ms (0.470)  0/900\n"
    );

    let csv = String::from_utf8(harm_summary_csv(&s[..2])).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "rtt_ms,cca,seeds,flows,unfinished,geomean_ms_mean,geomean_ms_ci95,geomean_harm_mean,\
         geomean_harm_ci95,median_ms_mean,median_ms_ci95,median_harm_mean,median_harm_ci95,\
         p95_ms_mean,p95_ms_ci95,p95_harm_mean,p95_harm_ci95,workload_goodput_mbps_mean,\
         workload_goodput_mbps_ci95,competitor_goodput_mbps_mean,competitor_goodput_mbps_ci95,\
         drops_mean,drops_ci95,marks_mean,marks_ci95,reused_mean,reused_ci95"
    );
    let solo: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(solo.len(), 27);
    assert_eq!(solo[..5], ["10", "-", "2", "1800", "0"]);
    assert_eq!(solo[7], "", "no harm for solo");
    let cubic: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!((cubic[5], cubic[6]), ("339.300000", "0.000000"));
    assert_eq!((cubic[21], cubic[23]), ("150.000000", ""));
}

#[test]
fn csv_columns_and_records() {
    let required = "rtt_ms,cca,seed,flows,unfinished,geomean_ms,geomean_harm,median_ms,\
                    median_harm,p95_ms,p95_harm";
    assert!(HARM_CSV_COLUMNS.join(",").starts_with(required));
    assert_eq!(HarmRow::csv_header(), HARM_CSV_COLUMNS);
    let mut rows = seed_rows(7, 1.0);
    rows[1].competitor_goodput_mbps = Some(24.5);
    rows[1].marks = Some(12);
    rows[1].reused = Some(34);
    let csv = String::from_utf8(harm_csv(&rows[..2])).unwrap();
    assert_eq!(
        csv,
        format!(
            "{},workload_goodput_mbps,competitor_goodput_mbps,drops,marks,reused\n\
             10,-,7,900,0,176.200000,,154.300000,,1061.300000,,,,,,\n\
             10,cubic,7,900,0,339.300000,{:.6},314.900000,{:.6},2002.700000,{:.6},,24.500000,,12,34\n",
            required,
            (339.3 - 176.2) / 339.3,
            (314.9 - 154.3) / 314.9,
            (2002.7 - 1061.3) / 2002.7,
        )
    );
}

#[test]
fn figures_render() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = seed_rows(1, 1.0);
    rows.extend(seed_rows(2, 1.1));
    let s = aggregate_seeds(&rows);
    let files = plot_harm_all(&s, dir.path(), "ccafct", "harm").unwrap();
    let names: Vec<String> =
        files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["ccafct_harm.png", "ccafct_harm.svg", "ccafct_fct.png", "ccafct_fct.svg"]);
    for f in &files {
        assert!(std::fs::metadata(f).unwrap().len() > 1000, "{}", f.display());
    }
    let svg = std::fs::read_to_string(dir.path().join("ccafct_harm.svg")).unwrap();
    assert!(svg.contains("prague 95% CI") && svg.contains("Geometric mean"));
    // One seed: no interval lines.
    let one = aggregate_seeds(&seed_rows(1, 1.0));
    let path = dir.path().join("one.svg");
    plot_harm_vs_rtt(&one, "harm", &path).unwrap();
    assert!(!std::fs::read_to_string(&path).unwrap().contains("95% CI"));
    // Solo rows only: nothing to plot.
    let solo: Vec<HarmRow> = seed_rows(1, 1.0).into_iter().filter(|r| r.cca == "-").collect();
    let err = plot_harm_vs_rtt(&aggregate_seeds(&solo), "x", &dir.path().join("solo.png"));
    assert!(matches!(err, Err(AnalysisError::NothingToPlot(_))));
}
