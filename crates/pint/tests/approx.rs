//! Properties of the value codecs: the exact error bounds each scheme documents, and
//! unbiasedness of the randomised schemes (sample means within 6 standard errors, computed from
//! the exact two-point distribution of each encoding, with fixed seeds).

use dcsim_pint::approx::{Additive, Multiplicative, UtilCodec};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Relative slack for `f64` rounding in `exp`/`ln`.
const FP: f64 = 1e-12;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Nearest rounding: `v / (1 + ε) <= decode(encode_nearest(v)) <= v (1 + ε)`.
    #[test]
    fn multiplicative_nearest_within_one_plus_eps(eps in 0.001f64..0.5, v in 1.0f64..1e12) {
        let m = Multiplicative::new(eps).unwrap();
        let d = m.decode(m.encode_nearest(v));
        prop_assert!(d <= v * (1.0 + eps) * (1.0 + FP), "v {v} decoded {d}");
        prop_assert!(d >= v / (1.0 + eps) / (1.0 + FP), "v {v} decoded {d}");
    }

    /// Randomised rounding: the code is one of the two bracketing exponents, so the decoded
    /// value is within a factor `(1 + ε)²`, and never further than one step from `v`'s bracket.
    #[test]
    fn multiplicative_randomized_within_base(eps in 0.001f64..0.5, v in 1.0f64..1e12, seed: u64) {
        let m = Multiplicative::new(eps).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let e = m.exponent(v);
        for _ in 0..8 {
            let a = m.encode(v, &mut rng);
            let d = m.decode(a);
            prop_assert!(d <= v * m.base() * (1.0 + FP) && d >= v / m.base() / (1.0 + FP));
            prop_assert!((f64::from(a) - e).abs() <= 1.0 + 1e-9);
        }
    }

    /// Codes of values in `[1, max]` fit `bits_for(max)` bits.
    #[test]
    fn multiplicative_bits_for_covers_range(eps in 0.001f64..0.5, max in 1.0f64..1e12, frac in 0.0f64..=1.0, seed: u64) {
        let m = Multiplicative::new(eps).unwrap();
        let bits = m.bits_for(max);
        let v = 1.0 + (max - 1.0) * frac;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let limit = if bits >= 32 { u64::MAX } else { (1u64 << bits) - 1 };
        prop_assert!(u64::from(m.encode_nearest(v)) <= limit);
        prop_assert!(u64::from(m.encode(v, &mut rng)) <= limit);
    }

    /// `for_range(max, bits)` really fits in `bits` bits.
    #[test]
    fn multiplicative_for_range_fits(max in 1.001f64..1e12, bits in 1u32..=20) {
        let m = Multiplicative::for_range(max, bits).unwrap();
        prop_assert!(m.bits_for(max) <= bits);
    }

    /// Additive: nearest error <= Δ, randomised error < Δ, both exactly (integers).
    #[test]
    fn additive_error_at_most_delta(v: u64, delta in 1u64..=1_000_000, seed: u64) {
        let a = Additive::new(delta).unwrap();
        let near = a.decode_nearest(a.encode_nearest(v));
        // decode saturates at u64::MAX; the true multiple may lie above it only within Δ.
        prop_assert!(near.abs_diff(v) <= delta, "v {v} -> {near}");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let r = a.decode(a.encode(v, &mut rng));
        prop_assert!(r.abs_diff(v) < delta, "v {v} -> {r}");
    }

    /// UtilCodec: the decoded value is within a factor b of the quantised utilisation v / K.
    #[test]
    fn util_codec_within_factor_base(base_i in 0usize..4, u in 0.0f64..600.0, seed: u64) {
        let base = [1.01, 1.05, 1.1, 1.5][base_i];
        let c = UtilCodec::new(base).unwrap();
        let k = f64::from(UtilCodec::K);
        let v = f64::from(c.quantize(u));
        prop_assert!(v >= (u * k).max(1.0) && v < (u * k).max(1.0) + 1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..8 {
            let d = c.decode(c.encode(u, &mut rng));
            prop_assert!(d <= v * base / k * (1.0 + FP) && d >= v / base / k * (1.0 - FP), "u {u} -> {d}");
        }
    }
}

/// Sample mean of `n` decoded randomised encodings, and the 6-standard-error tolerance of the
/// two-point distribution `{lo, hi}` with `P(hi) = p`.
fn six_se(lo: f64, hi: f64, p: f64, n: usize) -> f64 {
    6.0 * ((p * (1.0 - p)).sqrt() * (hi - lo)) / (n as f64).sqrt()
}

#[test]
fn multiplicative_randomized_is_unbiased() {
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(0xbeef);
    for eps in [0.01, 0.025, 0.1, 0.4] {
        let m = Multiplicative::new(eps).unwrap();
        for v in [1.0, 1.5, 2.0, 3.7, 10.0, 123.456, 1e4, 98_765.4, 1e9, m.base().powi(7)] {
            let lo_e = m.exponent(v).floor() as u32;
            let (lo, hi) = (m.decode(lo_e), m.decode(lo_e + 1));
            let p = ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
            let mean = (0..n).map(|_| m.decode(m.encode(v, &mut rng))).sum::<f64>() / n as f64;
            let tol = six_se(lo, hi, p, n) + v * 1e-9;
            assert!((mean - v).abs() <= tol, "eps {eps} v {v}: mean {mean}, tolerance {tol}");
        }
    }
}

#[test]
fn additive_randomized_is_unbiased() {
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for delta in [1u64, 3, 8, 1000] {
        let a = Additive::new(delta).unwrap();
        for v in [0u64, 1, 2, 5, 7, 999, 1001, 123_457] {
            let p = (v % delta) as f64 / delta as f64;
            let mean =
                (0..n).map(|_| a.decode(a.encode(v, &mut rng)) as f64).sum::<f64>() / n as f64;
            let tol = six_se(0.0, delta as f64, p, n) + 1e-9;
            assert!((mean - v as f64).abs() <= tol, "delta {delta} v {v}: mean {mean}");
        }
    }
}

#[test]
fn util_codec_is_unbiased() {
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let k = f64::from(UtilCodec::K);
    for base in [1.01, 1.05, 1.2] {
        let c = UtilCodec::new(base).unwrap();
        for u in [0.0, 0.001, 0.1, 0.5, 0.95, 1.0, 1.37, 4.0, 100.0] {
            let v = f64::from(c.quantize(u));
            let e = v.ln() / base.ln();
            let (lo, hi) = (base.powf(e.floor()) / k, base.powf(e.floor() + 1.0) / k);
            let p = ((v / k - lo) / (hi - lo)).clamp(0.0, 1.0);
            let mean = (0..n).map(|_| c.decode(c.encode(u, &mut rng))).sum::<f64>() / n as f64;
            // The reference's 16-bit coin rounds P(hi) up to a multiple of 2^-16.
            let coin_bias = (hi - lo) / 65536.0;
            let tol = six_se(lo, hi, p, n) + coin_bias + v / k * 1e-9;
            assert!((mean - v / k).abs() <= tol, "base {base} u {u}: mean {mean} vs {}", v / k);
        }
    }
}

/// The codec against a direct transcription of the specification (spec §3.4), fed the same
/// coin draws: the codes must agree.
#[test]
fn util_codec_matches_spec_transcription() {
    fn spec_encode(base: f64, u: f64, coin: u16) -> u16 {
        let mut v = (u * 512.0).ceil() as u32;
        if v == 0 {
            v = 1;
        }
        let power = f64::from(v).ln() * (1.0 / base.ln());
        let (hi, lo) = (power.ceil() as u16, power.floor() as u16);
        let lower = base.powf(f64::from(lo));
        let mut upper = base.powf(f64::from(hi));
        if hi == lo {
            upper *= base;
        }
        if f64::from(coin) < (f64::from(v) - lower) / (upper - lower) * 65536.0 {
            hi
        } else {
            lo
        }
    }
    for base in [1.01, 1.05, 1.1] {
        let c = UtilCodec::new(base).unwrap();
        let mut draw = ChaCha8Rng::seed_from_u64(5);
        let mut mismatches = 0;
        for _ in 0..20_000 {
            let u: f64 = draw.gen_range(0.0..3.0);
            let seed: u64 = draw.gen();
            let coin = ChaCha8Rng::seed_from_u64(seed).gen::<u16>();
            let ours = c.encode(u, &mut ChaCha8Rng::seed_from_u64(seed));
            if ours != spec_encode(base, u, coin) {
                mismatches += 1;
            }
        }
        // `upper` is b^lo·b rather than pow(b, hi): the probabilities differ by ulps, which
        // can flip a coin only when it lands exactly on the boundary.
        assert!(mismatches <= 1, "base {base}: {mismatches} mismatches");
    }
}
