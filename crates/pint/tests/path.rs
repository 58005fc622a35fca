//! Path tracing: on random paths (k from 5 to 64, several bit budgets, both universes, both
//! schemes) the decoder ends with exactly the true path, and before that it only ever says
//! "incomplete" — never a wrong path, never "inconsistent".

use dcsim_pint::path::{DecodeStatus, Decoder, PathScheme, SchemeKind, TraceConfig, Universe};
use proptest::prelude::*;
use rand::seq::index;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const BUDGETS: [(u32, u32); 6] = [(4, 1), (8, 1), (8, 2), (16, 1), (16, 2), (32, 4)];

/// Packets after which a trial is declared stuck (far beyond anything observed: the worst
/// p99 in the release table is ~1 100 packets).
const CAP: u64 = 50_000;

fn check_path(
    scheme: &PathScheme,
    path: &[u32],
    universe: Universe,
    first_packet: u64,
) -> Result<u64, TestCaseError> {
    let mut dec = Decoder::new(scheme, path.len(), universe).unwrap();
    let mut n = 0;
    loop {
        let pid = first_packet.wrapping_add(n);
        dec.record(pid, scheme.encode_path(pid, path));
        n += 1;
        match dec.status() {
            DecodeStatus::Complete(p) => {
                prop_assert_eq!(p, path.to_vec());
                return Ok(n);
            }
            DecodeStatus::Incomplete { resolved } => {
                prop_assert!(resolved < path.len());
                prop_assert!(n < CAP, "not decoded after {} packets", n);
            }
            DecodeStatus::Inconsistent => {
                return Err(TestCaseError::fail("inconsistent on a true path"));
            }
        }
    }
}

fn random_path(universe: &[u32], k: usize, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    index::sample(&mut rng, universe.len(), k).into_iter().map(|i| universe[i]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(800))]

    /// PINT scheme, IDs 0..2048.
    #[test]
    fn pint_decodes_exact_path_range_universe(
        k in 5usize..=64,
        budget in 0usize..BUDGETS.len(),
        seed: u64,
        first_packet: u64,
    ) {
        let (bits, inst) = BUDGETS[budget];
        let scheme = PathScheme::pint(bits, inst, k).unwrap().with_seed(seed);
        let ids: Vec<u32> = (0..2048).collect();
        let path = random_path(&ids, k, seed);
        check_path(&scheme, &path, Universe::Range(2048), first_packet)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Arbitrary 32-bit IDs from an explicit candidate set (e.g. a topology's switches); the
    /// path length `d` the scheme is tuned for need not equal `k`.
    #[test]
    fn pint_decodes_exact_path_set_universe(
        k in 5usize..=64,
        d in 5usize..=64,
        budget in 0usize..BUDGETS.len(),
        seed: u64,
        ids in prop::collection::hash_set(any::<u32>(), 64..1000),
    ) {
        let (bits, inst) = BUDGETS[budget];
        let scheme = PathScheme::pint(bits, inst, d).unwrap().with_seed(seed);
        let ids: Vec<u32> = ids.into_iter().collect();
        let path = random_path(&ids, k, seed ^ 1);
        check_path(&scheme, &path, Universe::Set(ids), seed)?;
    }

    /// The naive scheme (Baseline only).
    #[test]
    fn naive_decodes_exact_path(
        k in 5usize..=64,
        budget in 0usize..BUDGETS.len(),
        seed: u64,
    ) {
        let (bits, inst) = BUDGETS[budget];
        let scheme = PathScheme::naive(bits, inst).unwrap().with_seed(seed);
        let ids: Vec<u32> = (0..1024).collect();
        let path = random_path(&ids, k, seed);
        check_path(&scheme, &path, Universe::Range(1024), 0)?;
    }
}

/// Stamping hop by hop (as the switches do) gives the same digest as `encode_path`, and the
/// digest never has bits set beyond the budget.
#[test]
fn stamping_matches_encode_path() {
    for &(bits, inst) in &BUDGETS {
        let scheme = PathScheme::pint(bits, inst, 20).unwrap().with_seed(3);
        let path: Vec<u32> = (0..20).map(|i| 77 * i + 5).collect();
        for pid in 0..500u64 {
            let mut d = dcsim_pint::path::Digest::default();
            for (i, &s) in path.iter().enumerate() {
                scheme.stamp(&mut d, pid, i + 1, s);
            }
            assert_eq!(d, scheme.encode_path(pid, &path));
            assert!(bits == 64 || d.0 >> bits == 0);
        }
    }
}

/// The experiment driver on a small configuration: every trial decodes, never wrongly, and
/// PINT needs fewer packets than the naive scheme at k = 36.
#[test]
fn experiment_driver_small() {
    let mut cfg = TraceConfig::new(SchemeKind::Pint, 36, 8, 2, 40, 9);
    cfg.universe = 4096;
    let pint = dcsim_pint::path::run_trace(&cfg).unwrap();
    cfg.scheme = SchemeKind::Naive;
    let naive = dcsim_pint::path::run_trace(&cfg).unwrap();
    for s in [&pint, &naive] {
        assert_eq!(s.packets.len(), 40);
        assert_eq!(s.failures, 0);
        assert_eq!(s.wrong, 0);
    }
    assert!(pint.mean() < naive.mean(), "pint {} naive {}", pint.mean(), naive.mean());
    // Same configuration, same numbers.
    cfg.scheme = SchemeKind::Pint;
    assert_eq!(dcsim_pint::path::run_trace(&cfg).unwrap(), pint);
}

/// Heavier sweep (release: `cargo test -p dcsim-pint --release -- --ignored --nocapture`):
/// prints the packets-to-decode table for k ∈ {5, 10, 20, 36, 64} and 4/8/16-bit budgets over
/// the default universe of 2^16 IDs.
#[test]
#[ignore]
fn path_tracing_table_release() {
    let ks = [5, 10, 20, 36, 64];
    let budgets = [(4, 1), (8, 1), (8, 2), (16, 1), (16, 2)];
    let rows = dcsim_pint::path_tracing_table(&ks, &budgets, 1000, 2020).unwrap();
    println!("{}", dcsim_pint::PathRow::CSV_HEADER);
    for r in &rows {
        println!("{r}");
        assert_eq!(r.wrong, 0);
        assert_eq!(r.failures, 0);
    }
}
