//! Statistical and determinism tests of the generators.
//!
//! Every test uses fixed seeds, so the outcomes are reproducible; the tolerances are chosen
//! so that the tests would still pass for the overwhelming majority of seeds (the margins
//! are stated at each test), i.e. they do not pass by a lucky seed.

use dcsim_core::ids::NodeId;
use dcsim_core::units::{BitsPerSec, Duration, Time};
use dcsim_workload::{
    merge, offered_load, Cdf, FlowSpec, Incast, Interpolation, PoissonWorkload, ReceiverChoice,
    WorkloadError, REFERENCE_START,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, Exp};

/// Significance level of the Kolmogorov–Smirnov tests.
const KS_ALPHA: f64 = 0.001;

/// The asymptotic KS critical value `sqrt(-ln(alpha / 2) / 2) / sqrt(n)` (1.9495 / sqrt(n) at
/// alpha = 0.001). For a discrete law the test is conservative (rejects less often).
fn ks_critical(n: usize) -> f64 {
    (-(KS_ALPHA / 2.0).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// The KS statistic `sup_x |F_n(x) - G(x)|` of integer samples against an integer-supported
/// law with CDF `g(k) = P(S <= k)`. Both are step functions jumping only at integers, and
/// F_n is constant between consecutive distinct sample values `a < b`, where G is
/// non-decreasing, so the supremum is attained at a sample value or one below a sample value.
fn ks_statistic(samples: &mut [u64], g: impl Fn(u64) -> f64) -> f64 {
    samples.sort_unstable();
    let n = samples.len() as f64;
    let mut d: f64 = 0.0;
    let mut below = 0.0; // F_n just below the current value
    let mut i = 0;
    while i < samples.len() {
        let v = samples[i];
        let mut j = i;
        while j < samples.len() && samples[j] == v {
            j += 1;
        }
        let at = j as f64 / n;
        if v > 0 {
            d = d.max((below - g(v - 1)).abs());
        }
        d = d.max((at - g(v)).abs());
        below = at;
        i = j;
    }
    d
}

/// CDF of a sampled size `S = max(1, trunc(X))` with `X` continuous with CDF `F`:
/// `P(S <= k) = P(X < k + 1) = F(k + 1)` for `k >= 1`, and 0 for `k = 0`.
fn truncated_size_cdf(cdf: &Cdf) -> impl Fn(u64) -> f64 + '_ {
    move |k| if k == 0 { 0.0 } else { cdf.probability_le(k as f64 + 1.0) }
}

#[test]
fn ks_sampled_sizes_follow_each_builtin_cdf() {
    const N: usize = 20_000;
    let crit = ks_critical(N);
    for (i, name) in Cdf::builtin_names().iter().enumerate() {
        let cdf = Cdf::builtin(name).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(100 + i as u64);
        let mut s: Vec<u64> = (0..N).map(|_| cdf.sample(&mut rng)).collect();
        let d = ks_statistic(&mut s, truncated_size_cdf(&cdf));
        println!("KS {name}: D = {d:.5}, critical {crit:.5} (alpha {KS_ALPHA}, n {N})");
        assert!(d < crit, "{name}: D = {d} >= {crit}");
    }
}

#[test]
fn ks_detects_the_wrong_distribution() {
    // The same test must reject web-search sizes judged against the Hadoop CDF, and sizes
    // that ignore the truncation rule (sizes + 1) for the byte-granular Google RPC CDF.
    const N: usize = 20_000;
    let web = Cdf::builtin("websearch").unwrap();
    let hadoop = Cdf::builtin("hadoop").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut s: Vec<u64> = (0..N).map(|_| web.sample(&mut rng)).collect();
    let d = ks_statistic(&mut s, truncated_size_cdf(&hadoop));
    assert!(d > 10.0 * ks_critical(N), "{d}");
    let rpc = Cdf::builtin("googlerpc2008").unwrap();
    let mut s: Vec<u64> = (0..N).map(|_| rpc.sample(&mut rng) + 1).collect();
    let d = ks_statistic(&mut s, truncated_size_cdf(&rpc));
    assert!(d > ks_critical(N), "{d}");
}

fn hosts(n: u32) -> Vec<NodeId> {
    (0..n).map(NodeId).collect()
}

fn workload(name: &str, n: u32, load: f64, duration: Duration, seed: u64) -> PoissonWorkload {
    PoissonWorkload {
        cdf: Cdf::builtin(name).unwrap(),
        hosts: hosts(n),
        host_rate: BitsPerSec::gbps(100),
        load,
        start: REFERENCE_START,
        duration,
        seed,
        interpolation: Interpolation::Linear,
    }
}

#[test]
fn ks_inter_arrival_gaps_are_exponential() {
    // Gaps are trunc(E) ns with E ~ Exp(mean ia): P(gap <= k) = P(E < k + 1).
    let w = workload("hadoop", 4, 0.3, Duration::from_ms(400), 9);
    let ia = w.mean_inter_arrival_ns();
    let exp = Exp::new(1.0 / ia).unwrap();
    let flows = w.generate().unwrap();
    let mut gaps = Vec::new();
    for h in w.hosts.iter() {
        let starts: Vec<u64> =
            flows.iter().filter(|f| f.src == *h).map(|f| f.start.as_ns()).collect();
        gaps.extend(starts.windows(2).map(|p| p[1] - p[0]));
    }
    let n = gaps.len();
    let d = ks_statistic(&mut gaps, |k| exp.cdf(k as f64 + 1.0));
    println!("KS gaps: D = {d:.5}, critical {:.5} (n {n}, ia {ia:.1} ns)", ks_critical(n));
    assert!(n > 40_000);
    assert!(d < ks_critical(n));
}

/// Relative error of the realized payload load.
fn realized(w: &PoissonWorkload) -> (usize, f64) {
    let flows = w.generate().unwrap();
    let load = offered_load(&flows, w.hosts.len(), w.host_rate, w.duration);
    (flows.len(), load)
}

#[test]
fn realized_load_is_within_two_percent_websearch() {
    // 64 hosts x 1 s at 30 %: ~140 000 flows. The relative standard deviation of the realized
    // load is sqrt(E[S^2] / E[S]^2 / N) = sqrt(6.37 / 140 000) = 0.67 %, so 2 % is 3 sigma.
    let w = workload("websearch", 64, 0.3, Duration::from_ms(1000), 2024);
    let (n, load) = realized(&w);
    println!(
        "websearch 30 %: {n} flows (expected {:.0}), realized load {load:.5}",
        w.expected_flows()
    );
    assert!((load / 0.3 - 1.0).abs() < 0.02, "{load}");
    assert!((n as f64 / w.expected_flows() - 1.0).abs() < 0.02);
}

#[test]
fn realized_load_is_within_two_percent_hadoop() {
    // 64 hosts x 0.25 s at 50 %: ~830 000 flows; relative sd sqrt(31.9 / 830 000) = 0.62 %.
    let w = workload("hadoop", 64, 0.5, Duration::from_ms(250), 77);
    let (n, load) = realized(&w);
    println!("hadoop 50 %: {n} flows, realized load {load:.5}");
    assert!((load / 0.5 - 1.0).abs() < 0.02, "{load}");
}

#[test]
fn same_seed_same_flows_other_seed_other_flows() {
    let w = workload("websearch", 16, 0.5, Duration::from_ms(20), 42);
    let a = w.generate().unwrap();
    let b = w.generate().unwrap();
    assert_eq!(a, b);
    let c = PoissonWorkload { seed: 43, ..w.clone() }.generate().unwrap();
    assert_ne!(a, c);
    // Not merely shifted: start times and sizes differ for most flows.
    let same = a.iter().zip(&c).filter(|(x, y)| x.start == y.start || x.size == y.size).count();
    assert!(same * 10 < a.len().min(c.len()), "{same}");
}

#[test]
fn load_out_of_range_is_rejected() {
    for load in [0.0, -0.3, 1.0, 1.2] {
        let e = workload("websearch", 4, load, Duration::from_ms(1), 1).generate().unwrap_err();
        assert_eq!(e, WorkloadError::InvalidLoad(load));
    }
}

fn incast(seed: u64) -> Incast {
    Incast {
        hosts: hosts(64),
        host_rate: BitsPerSec::gbps(100),
        receiver_choice: ReceiverChoice::Random,
        senders: 60,
        size: 500_000,
        fraction_of_capacity: 0.02,
        start: REFERENCE_START,
        duration: Duration::from_ms(10_000),
        seed,
    }
}

#[test]
fn incast_fraction_is_realized() {
    // 533 events/s for 10 s: ~5 333 events of 60 flows; the event count is Poisson, so the
    // relative sd is 1 / sqrt(5 333) = 1.4 %; the tolerance 5 % is 3.6 sigma.
    let c = incast(8);
    let flows = c.generate().unwrap();
    let frac = offered_load(&flows, 64, c.host_rate, c.duration);
    println!("incast: {} events, realized fraction {frac:.5}", flows.len() / 60);
    assert!((frac / 0.02 - 1.0).abs() < 0.05, "{frac}");
    // Receivers spread over all hosts.
    let mut rx: Vec<u32> = flows.iter().map(|f| f.dst.0).collect();
    rx.sort_unstable();
    rx.dedup();
    assert_eq!(rx.len(), 64);
    assert_eq!(c.generate().unwrap(), flows);
    assert_ne!(incast(9).generate().unwrap(), flows);
}

#[test]
fn background_plus_incast_merge() {
    let w = workload("websearch", 64, 0.3, Duration::from_ms(20), 3);
    let bg = w.generate().unwrap();
    let ic = Incast { duration: Duration::from_ms(20), ..incast(3) }.generate().unwrap();
    let all = merge(&bg, &ic);
    assert_eq!(all.len(), bg.len() + ic.len());
    assert!(all.windows(2).all(|p| p[0].start <= p[1].start));
    assert!(all.iter().enumerate().all(|(i, f)| f.id.idx() == i));
    assert_eq!(all.iter().filter(|f| f.dport == 200).count(), ic.len());
}

fn check_flows(w: &PoissonWorkload, flows: &[FlowSpec]) {
    let end = w.start + w.duration;
    let max = w.cdf.max_size() as u64;
    for (i, f) in flows.iter().enumerate() {
        assert_eq!(f.id.idx(), i);
        assert_ne!(f.src, f.dst);
        assert!(w.hosts.contains(&f.dst));
        // An inter-arrival gap below 1 ns truncates to 0, so the first flow may start exactly
        // at the window's start (proptest found one: n = 2, load 0.65, start 0).
        assert!(f.start >= w.start && f.start <= end);
        assert!(f.size >= 1 && f.size <= max);
    }
    assert!(flows.windows(2).all(|p| p[0].start <= p[1].start));
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_flows_are_well_formed(
        n in 2u32..12,
        load in 0.05f64..0.95,
        ms in 1u64..5,
        seed in any::<u64>(),
        name_idx in 0usize..4,
        start_ns in 0u64..1_000_000,
    ) {
        let name = Cdf::builtin_names()[name_idx];
        let w = PoissonWorkload {
            start: Time::from_ns(start_ns),
            ..workload(name, n, load, Duration::from_ms(ms), seed)
        };
        let flows = w.generate().unwrap();
        check_flows(&w, &flows);
    }

    #[test]
    fn value_at_percent_inverts_probability_le(p in 0.0f64..100.0, name_idx in 0usize..4) {
        let cdf = Cdf::builtin(Cdf::builtin_names()[name_idx]).unwrap();
        let x = cdf.value_at_percent(p);
        prop_assert!((cdf.probability_le(x) * 100.0 - p).abs() < 1e-6);
    }
}
