//! Statistical and determinism checks of the FCT-harm workload generator (spec A4, A5
//! "Generator and harm").

use dcsim_core::units::{Duration, Time};
use dcsim_workload::HarmWorkload;

/// The ⌈p·n⌉-th smallest value (1-based, at least the first).
fn order_statistic(sorted: &[u64], p: f64) -> u64 {
    let k = (p * sorted.len() as f64).ceil() as usize;
    sorted[k.max(1) - 1]
}

#[test]
fn a_million_draws_match_the_distribution() {
    let w = HarmWorkload { flows: 1_000_000, ..HarmWorkload::default() };
    let flows = w.generate(42).unwrap();
    assert_eq!(flows.len(), 1_000_000);

    // Sizes: mean e^(μ+σ²/2) = 645 683 B within 1 %.
    let mean = flows.iter().map(|f| f.size as f64).sum::<f64>() / flows.len() as f64;
    assert!((mean / 645_683.0 - 1.0).abs() < 0.01, "mean size {mean}");

    // Empirical P5 and P95 within 1 % of 65 536 and 2 097 152.
    let mut sizes: Vec<u64> = flows.iter().map(|f| f.size).collect();
    sizes.sort_unstable();
    let p5 = order_statistic(&sizes, 0.05) as f64;
    let p95 = order_statistic(&sizes, 0.95) as f64;
    assert!((p5 / 65_536.0 - 1.0).abs() < 0.01, "P5 {p5}");
    assert!((p95 / 2_097_152.0 - 1.0).abs() < 0.01, "P95 {p95}");
    assert!(sizes[0] >= 1);

    // Gaps: the first flow at `start`, sorted, mean gap 200 ms within 1 %.
    assert_eq!(flows[0].start, Time::from_ns(20_000_000_000));
    assert!(flows.windows(2).all(|p| p[0].start <= p[1].start));
    let span = flows[flows.len() - 1].start.as_ps() - flows[0].start.as_ps();
    let mean_gap = span as f64 / (flows.len() - 1) as f64;
    let want = Duration::from_ms(200).as_ps() as f64;
    assert!((mean_gap / want - 1.0).abs() < 0.01, "mean gap {mean_gap} ps");
    // Gaps are whole nanoseconds.
    assert!(flows.iter().all(|f| f.start.as_ps() % 1000 == 0));
}

#[test]
fn the_seed_decides_the_list() {
    let w = HarmWorkload::default();
    let a = w.generate(7).unwrap();
    assert_eq!(a, w.generate(7).unwrap(), "same seed, same list");
    let b = w.generate(8).unwrap();
    assert_eq!(a.len(), b.len());
    let same_sizes = a.iter().zip(&b).filter(|(x, y)| x.size == y.size).count();
    let same_starts = a.iter().zip(&b).skip(1).filter(|(x, y)| x.start == y.start).count();
    assert!(same_sizes < 5 && same_starts < 5, "{same_sizes} sizes, {same_starts} starts equal");
}

#[test]
fn first_flow_is_at_start_and_one_flow_has_no_gap() {
    let w = HarmWorkload { flows: 1, start: Time::from_ns(5), ..HarmWorkload::default() };
    let f = w.generate(0).unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].start, Time::from_ns(5));
}
