//! Latency quantiles: nearest rounding commutes with quantiles (so compressed quantiles are
//! within the codec's ε of the sample quantiles, exactly), and the experiment converges to the
//! compression error as packets accumulate.

use dcsim_pint::latency::LatencyCodec;
use dcsim_pint::stats::percentile;
use dcsim_pint::{latency_experiment, latency_table, LatencyConfig, LatencyRow, Storage};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// For values inside the codec range, the decoded nearest-rank quantile of the codes is
    /// within a factor 1 + ε of the nearest-rank quantile of the values.
    #[test]
    fn compressed_quantile_within_eps(
        bits in 2u32..=12,
        xs in prop::collection::vec(64u64..4_194_304, 1..400),
        q in 0.0f64..=1.0,
    ) {
        let c = LatencyCodec::new(bits, 64.0, 4_194_304.0).unwrap();
        let codes: Vec<u64> = xs.iter().map(|&x| u64::from(c.encode(x as f64))).collect();
        let est = c.decode(percentile(&codes, q).unwrap() as u32);
        let truth = percentile(&xs, q).unwrap() as f64;
        let tol = 1.0 + c.eps();
        prop_assert!(est <= truth * tol * (1.0 + 1e-12) && est >= truth / tol / (1.0 + 1e-12),
            "bits {} q {}: est {} truth {}", bits, q, est, truth);
    }
}

fn at(rows: &[LatencyRow], packets: u64) -> &LatencyRow {
    rows.iter().find(|r| r.packets == packets).expect("checkpoint present")
}

#[test]
fn errors_converge_to_compression_error() {
    let checkpoints = [100, 1000, 20_000];
    let eps8 = LatencyCodec::new(8, 64.0, 4_194_304.0).unwrap().eps();
    let rows = latency_table(&[4, 8], &[Storage::All], &checkpoints, 4, 1).unwrap();
    let (four, eight): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r.bits == 4);
    // 8 bits: sampling error shrinks; what is left is compression (<= eps8 ≈ 2.2%) plus the
    // sampling error of ~4 000 digests per hop (a few per cent at p99).
    assert!(at(&eight, 20_000).p50_err < at(&eight, 100).p50_err);
    assert!(at(&eight, 20_000).p99_err < at(&eight, 100).p99_err);
    assert!(at(&eight, 20_000).p50_err <= eps8 + 0.02, "{:?}", at(&eight, 20_000));
    assert!(at(&eight, 20_000).p99_err <= eps8 + 0.06, "{:?}", at(&eight, 20_000));
    // 4 bits: the compression error dominates and stays well above the 8-bit error.
    assert!(at(&four, 20_000).p50_err > 3.0 * at(&eight, 20_000).p50_err);
}

#[test]
fn sketch_matches_exact_until_it_compacts_and_is_deterministic() {
    let checkpoints = [50, 200, 5_000];
    let all = latency_experiment(&LatencyConfig::new(8, Storage::All, &checkpoints, 2, 9)).unwrap();
    let cfg = LatencyConfig::new(8, Storage::Kll(100), &checkpoints, 2, 9);
    let kll = latency_experiment(&cfg).unwrap();
    // Five hops share 50 packets: no hop has 100 digests yet, so the sketch is exact.
    assert_eq!(all[0].p50_err, kll[0].p50_err);
    assert_eq!(all[0].p99_err, kll[0].p99_err);
    // With ~1 000 digests per hop the sketch adds rank error but stays usable at the median.
    assert!(kll[2].p50_err < 0.15, "{:?}", kll[2]);
    assert_eq!(latency_experiment(&cfg).unwrap(), kll);
}

#[test]
fn histogram_is_exact_while_codes_fit_and_never_errs_in_rank() {
    let checkpoints = [100, 1000, 20_000];
    let strip = |rows: Vec<LatencyRow>| -> Vec<[f64; 4]> {
        rows.iter().map(|r| [r.p50_err, r.p99_err, r.p50_rank_err, r.p99_rank_err]).collect()
    };
    let run = |bits, st| latency_experiment(&LatencyConfig::new(bits, st, &checkpoints, 3, 4));
    // 4-bit codes: all 16 fit the 20 buckets of 50 bytes, so the histogram is the exact storage.
    assert_eq!(strip(run(4, Storage::Hist(50)).unwrap()), strip(run(4, Storage::All).unwrap()));
    // 8-bit codes over the default range (β = 65536^(1/255) ≈ 1.0445): a log-normal hop uses
    // ~130 codes, 100 bytes hold 33 buckets, so up to 3 halvings; the answer is then within
    // β^4 ≈ 1.19 of the truth plus sampling error, and never off in rank.
    let hist = run(8, Storage::Hist(100)).unwrap();
    let beta4 = (65_536f64).powf(4.0 / 255.0) - 1.0;
    for r in &hist {
        assert_eq!((r.p50_rank_err, r.p99_rank_err), (0.0, 0.0), "{r}");
    }
    let last = at(&hist, 20_000);
    assert!(last.p50_err <= beta4 + 0.02 && last.p99_err <= beta4 + 0.06, "{last}");
    // 200 bytes (66 buckets): one halving fewer, so closer to the 8-bit exact storage.
    let finer = run(8, Storage::Hist(200)).unwrap();
    assert!(at(&finer, 20_000).p50_err < last.p50_err, "{:?}", at(&finer, 20_000));
}

/// Heavier run (release): the latency table for 4/8 bits, all digests vs a 100-digest KLL
/// sketch, averaged over 20 flows.
#[test]
#[ignore]
fn latency_table_release() {
    let checkpoints = [50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000];
    let rows =
        latency_table(&[4, 8], &[Storage::All, Storage::Kll(100)], &checkpoints, 20, 2020).unwrap();
    println!("{}", LatencyRow::CSV_HEADER);
    for r in rows {
        println!("{r}");
    }
}
