//! KLL sketch: rank error within its (Azuma–Hoeffding) bound on 100k-item streams; weight
//! conservation, memory budget and monotone quantiles on arbitrary streams.

use dcsim_pint::kll::Kll;
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const N: u64 = 100_000;
/// Per-query failure probability of the bound; 999 queries per stream.
const DELTA: f64 = 1e-6;

/// Feed `stream` to `s`, then check the estimated rank of 999 evenly spaced values against the
/// exact rank computed from the sorted stream. Returns (worst error, bound).
fn check_rank_error(mut s: Kll<u64>, stream: &[u64]) -> (f64, f64) {
    for &x in stream {
        s.update(x);
    }
    let mut sorted = stream.to_vec();
    sorted.sort_unstable();
    let bound = s.rank_error_bound(DELTA);
    let mut worst = 0.0f64;
    for i in 1..1000 {
        let x = sorted[(i * sorted.len()) / 1000];
        let exact = sorted.partition_point(|&y| y <= x) as f64;
        let err = (s.rank(x) as f64 - exact).abs();
        worst = worst.max(err);
        assert!(err <= bound, "rank error {err} > bound {bound} at x = {x}");
    }
    assert_eq!(s.len(), stream.len() as u64);
    (worst, bound)
}

fn streams() -> Vec<(&'static str, Vec<u64>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut perm: Vec<u64> = (0..N).collect();
    perm.shuffle(&mut rng);
    let sorted: Vec<u64> = (0..N).collect();
    let reversed: Vec<u64> = (0..N).rev().collect();
    let dups: Vec<u64> = perm.iter().map(|x| x % 97).collect();
    vec![("permutation", perm), ("sorted", sorted), ("reversed", reversed), ("97 values", dups)]
}

#[test]
fn rank_error_within_bound_k200() {
    for (name, stream) in streams() {
        let (worst, bound) = check_rank_error(Kll::new(200, 1).unwrap(), &stream);
        // The bound is O(n / k · sqrt(ln 1/δ)); check it is informative, not vacuous.
        assert!(bound < 0.03 * N as f64, "{name}: bound {bound}");
        println!("{name}: k=200 worst {worst} bound {bound}");
    }
}

#[test]
fn rank_error_within_bound_budget_100() {
    for (name, stream) in streams() {
        let s = Kll::with_budget(100, 2).unwrap();
        let (worst, bound) = check_rank_error(s, &stream);
        assert!(bound < 0.15 * N as f64, "{name}: bound {bound}");
        println!("{name}: budget 100 worst {worst} bound {bound}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn weight_budget_and_monotone_quantiles(
        xs in prop::collection::vec(0u32..1000, 0..5000),
        budget in 8usize..300,
        seed: u64,
    ) {
        let mut s = Kll::with_budget(budget, seed).unwrap();
        for &x in &xs {
            s.update(x);
            prop_assert!(s.retained() <= budget.max(2 * s.levels()));
        }
        let total: u64 = s.weighted_items().iter().map(|p| p.1).sum();
        prop_assert_eq!(total, xs.len() as u64);
        prop_assert_eq!(s.rank(u32::MAX), xs.len() as u64);
        let mut prev = None;
        for i in 0..=20 {
            let q = s.quantile(f64::from(i) / 20.0);
            prop_assert_eq!(q.is_none(), xs.is_empty());
            if let (Some(a), Some(b)) = (prev, q) {
                prop_assert!(a <= b);
            }
            prev = q;
        }
        // Every stored item is a stream item, so every estimate lies within the stream's range.
        if let (Some(&lo), Some(&hi)) = (xs.iter().min(), xs.iter().max()) {
            for i in 0..=20 {
                let q = s.quantile(f64::from(i) / 20.0).unwrap();
                prop_assert!(lo <= q && q <= hi);
            }
        }
    }
}
