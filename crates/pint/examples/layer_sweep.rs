//! This example demonstrates how the default layer mix of `PathScheme::pint` was chosen: for
//! several Baseline/XOR mixes it runs path-tracing trials and prints mean/p99 packets to
//! decode for each (k, budget) cell.
//!
//! ```text
//!   src ── s1 ── s2 ── … ── sk ── sink      k ∈ {5, 10, 20, 36, 64}
//!   budgets (bits/instances): 4/1 8/1 8/2 16/1 16/2, IDs drawn from 0..universe
//! ```
//!
//! `cargo run -p dcsim-pint --release --example layer_sweep -- [trials] [universe]`
//! (defaults 100 and 65536).

use dcsim_pint::path::{Decoder, Layer, PathScheme, Universe};
use dcsim_pint::stats;
use rand::seq::index;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A named layer mix: Baseline weight and `(c, weight)` of each XOR layer with `p = c / d`.
type Mix = (&'static str, f64, Vec<(f64, f64)>);

/// Mean and p99 packets to decode with the given layers.
fn run(
    layers: &[(Layer, f64)],
    k: usize,
    budget: (u32, u32),
    trials: usize,
    universe: u32,
) -> (f64, u64) {
    let mut packets = Vec::with_capacity(trials);
    for t in 0..trials {
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + t as u64);
        let scheme = PathScheme::new(budget.0, budget.1, layers, rng.gen()).expect("valid layers");
        let path: Vec<u32> =
            index::sample(&mut rng, universe as usize, k).into_iter().map(|i| i as u32).collect();
        let mut dec = Decoder::new(&scheme, k, Universe::Range(universe)).expect("k >= 1");
        let mut n = 0u64;
        while !dec.is_complete() {
            dec.record(n, scheme.encode_path(n, &path));
            n += 1;
        }
        packets.push(n);
    }
    (stats::mean(&packets), stats::percentile(&packets, 0.99).unwrap_or(0))
}

/// Layers `(Baseline, w0), (Xor c_1 / d, w_1), …` with XOR probabilities capped at 1/2.
fn mix(baseline: f64, xors: &[(f64, f64)], d: f64) -> Vec<(Layer, f64)> {
    let mut v = vec![(Layer::Baseline, baseline)];
    v.extend(xors.iter().map(|&(c, w)| (Layer::Xor { p: (c / d).min(0.5) }, w)));
    v
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let universe: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1 << 16);
    let e = std::f64::consts::E;
    let ee = e.powf(e);
    let mixes: [Mix; 6] = [
        ("naive (Baseline only)", 1.0, vec![]),
        ("B.6 Xe/d.25 Xe^e/d.15 (default)", 0.6, vec![(e, 0.25), (ee, 0.15)]),
        ("B.5 X1/d.5", 0.5, vec![(1.0, 0.5)]),
        ("B.5 X4/d.5", 0.5, vec![(4.0, 0.5)]),
        ("B.4 Xe/d.3 Xe^e/d.3", 0.4, vec![(e, 0.3), (ee, 0.3)]),
        ("B.6 X2/d.2 X6/d.1 X15/d.1", 0.6, vec![(2.0, 0.2), (6.0, 0.1), (15.0, 0.1)]),
    ];
    let ks = [5usize, 10, 20, 36, 64];
    let budgets = [(4u32, 1u32), (8, 1), (8, 2), (16, 1), (16, 2)];
    print!("{:34}", "mix \\ k:bits/inst");
    for k in ks {
        for (b, i) in budgets {
            print!(" {:>11}", format!("{k}:{b}/{i}"));
        }
    }
    println!();
    for (name, baseline, xors) in &mixes {
        print!("{name:34}");
        for &k in &ks {
            for &budget in &budgets {
                let (m, p) = run(&mix(*baseline, xors, k as f64), k, budget, trials, universe);
                print!(" {:>11}", format!("{m:.0}/{p}"));
            }
        }
        println!();
    }
}
