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
