//! Value approximation (PINT §4.3): fitting a number into a few bits.
//!
//! Three codecs:
//!
//! - [`Multiplicative`]: the code is an exponent `a` with `v ≈ b^a`, `b = (1 + ε)²`.
//!   [`Multiplicative::encode_nearest`] rounds `log_b v` to the nearest integer, so the decoded
//!   value is within a factor `1 + ε` of `v`. [`Multiplicative::encode`] rounds *randomly*
//!   between the two neighbouring exponents so that the decoded value is unbiased
//!   (`E[decode(encode(v))] = v`), at the price of a factor `(1 + ε)²` worst case.
//! - [`Additive`]: integer values rounded to multiples of a step; error at most Δ.
//! - [`UtilCodec`]: the HPCC-PINT link-utilisation codec of the reference simulator
//!   (`Pint::encode_u`/`decode_u`, spec §3.4), which the switch model calls on every packet.
//!
//! ```
//! use dcsim_pint::approx::Multiplicative;
//! use rand::SeedableRng;
//!
//! let m = Multiplicative::new(0.025).unwrap();
//! let code = m.encode_nearest(1234.0);
//! let back = m.decode(code);
//! assert!(back <= 1234.0 * 1.025 && back >= 1234.0 / 1.025);
//! // 32-bit values fit in ceil(log2(ceil(log_b 2^32) + 1)) bits:
//! assert_eq!(m.bits_for(4_294_967_295.0), 9);
//!
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
//! let r = m.decode(m.encode(1234.0, &mut rng));
//! assert!(r <= 1234.0 * m.base() && r >= 1234.0 / m.base());
//! ```

use rand::Rng;

use crate::error::PintError;

/// Number of bits needed to write every integer in `0..=max_code`.
fn bits_for_code(max_code: u64) -> u32 {
    64 - max_code.leading_zeros()
}

/// Multiplicative approximation of values `v >= 1` by exponents of `b = (1 + ε)²`.
///
/// **Domain.** Values below 1 (and NaN) are treated as 1 (code 0); `+∞` and anything whose
/// exponent exceeds `u32::MAX` saturate at code `u32::MAX`. Scale the quantity first if its unit
/// makes useful values smaller than 1 (e.g. latencies in ns rather than µs).
///
/// **Guarantees** (exact arithmetic; `f64` adds a relative error of order `1e-15`):
/// - [`encode_nearest`](Self::encode_nearest): `|a - log_b v| <= 1/2`, hence
///   `v / (1 + ε) <= decode(a) <= v · (1 + ε)`. Monotone in `v`, so it commutes with quantiles.
/// - [`encode`](Self::encode): `a ∈ {⌊log_b v⌋, ⌈log_b v⌉}`, hence
///   `v / (1 + ε)² <= decode(a) <= v · (1 + ε)²`, and the upper exponent is chosen with
///   probability `(v - b^lo) / (b^hi - b^lo)`, which makes `E[decode(a)] = v` exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Multiplicative {
    eps: f64,
    base: f64,
    inv_ln_base: f64,
}

impl Multiplicative {
    /// A codec with error target `eps` (base `(1 + eps)²`). Errors unless `eps` is finite and
    /// positive.
    pub fn new(eps: f64) -> Result<Self, PintError> {
        if !(eps.is_finite() && eps > 0.0) {
            return Err(PintError::InvalidEps(eps));
        }
        let base = (1.0 + eps) * (1.0 + eps);
        Ok(Multiplicative { eps, base, inv_ln_base: 1.0 / base.ln() })
    }

    /// The finest codec whose codes for every value in `[1, max]` fit in `bits` bits (codes
    /// `0..=2^bits - 1`): base `max^(1 / (2^bits - 1))`, nudged up if rounding would need one
    /// more code. Errors unless `max > 1` is finite and `1 <= bits <= 31`.
    pub fn for_range(max: f64, bits: u32) -> Result<Self, PintError> {
        if !(max.is_finite() && max > 1.0 && (1..=31).contains(&bits)) {
            return Err(PintError::InvalidRange { min: 1.0, max, bits });
        }
        let codes = f64::from((1u32 << bits) - 1);
        let mut base = max.powf(1.0 / codes);
        loop {
            let eps = base.sqrt() - 1.0;
            let m = Multiplicative::new(eps)?;
            if m.bits_for(max) <= bits {
                return Ok(m);
            }
            base *= 1.0 + 1e-12;
        }
    }

    /// The error target ε.
    pub fn eps(&self) -> f64 {
        self.eps
    }

    /// The logarithm base `b = (1 + ε)²`.
    pub fn base(&self) -> f64 {
        self.base
    }

    /// `log_b v` for `v >= 1` (values below 1 and NaN give 0).
    pub fn exponent(&self, v: f64) -> f64 {
        if v > 1.0 {
            v.ln() * self.inv_ln_base
        } else {
            0.0
        }
    }

    /// The bracketing exponents of `v`: `(lo, b^lo, p)` with `b^lo <= v < b^(lo+1)` and
    /// `p = (v - b^lo) / (b^(lo+1) - b^lo)`, corrected for `f64` rounding of the logarithm.
    /// `None` when the exponent saturates.
    fn bracket(&self, v: f64) -> Option<(u32, f64, f64)> {
        if v.is_nan() || v <= 1.0 {
            return Some((0, 1.0, 0.0));
        }
        let e = self.exponent(v);
        if e >= f64::from(u32::MAX) - 1.0 {
            return None;
        }
        let mut lo = e.floor() as u32;
        let mut lo_val = self.base.powi(lo as i32);
        // The computed logarithm can be off by an ulp at exact powers of b: fix the bracket.
        if lo_val > v && lo > 0 {
            lo -= 1;
            lo_val /= self.base;
        } else if lo_val * self.base <= v {
            lo += 1;
            lo_val *= self.base;
        }
        let hi_val = lo_val * self.base;
        let p = ((v - lo_val) / (hi_val - lo_val)).clamp(0.0, 1.0);
        Some((lo, lo_val, p))
    }

    /// Randomised rounding of `log_b v` (unbiased in the decoded domain; see the type docs).
    pub fn encode<R: Rng + ?Sized>(&self, v: f64, rng: &mut R) -> u32 {
        match self.bracket(v) {
            None => u32::MAX,
            Some((lo, _, p)) => {
                if p > 0.0 && rng.gen::<f64>() < p {
                    lo + 1
                } else {
                    lo
                }
            }
        }
    }

    /// Deterministic rounding of `log_b v` to the nearest integer (halves round up): the
    /// decoded value is within a factor `1 + ε` of `v`.
    pub fn encode_nearest(&self, v: f64) -> u32 {
        match self.bracket(v) {
            None => u32::MAX,
            Some((lo, lo_val, _)) => {
                // Compare in the log domain: round up iff log_b v - lo >= 1/2, i.e. v >= b^lo·√b.
                if v >= lo_val * self.base.sqrt() {
                    lo + 1
                } else {
                    lo
                }
            }
        }
    }

    /// The value a code stands for: `b^code`.
    pub fn decode(&self, code: u32) -> f64 {
        self.base.powf(f64::from(code))
    }

    /// The largest code that either encoder can produce for a value in `[1, max]`.
    pub fn max_code(&self, max: f64) -> u32 {
        match self.bracket(max) {
            None => u32::MAX,
            Some((lo, _, p)) => {
                if p > 0.0 {
                    lo + 1
                } else {
                    lo
                }
            }
        }
    }

    /// Bits needed to carry the code of any value in `[1, max]`:
    /// `⌈log2(max_code(max) + 1)⌉` (0 when only code 0 can occur).
    pub fn bits_for(&self, max: f64) -> u32 {
        bits_for_code(u64::from(self.max_code(max)))
    }
}

/// Additive approximation of non-negative integers with error at most Δ (PINT §4.3).
///
/// Two schemes, chosen per call:
/// - **Nearest** ([`encode_nearest`](Self::encode_nearest) /
///   [`decode_nearest`](Self::decode_nearest)): the paper's `a = [v / 2Δ]`, rounded to the
///   nearest integer (halves up), decoded as `2Δ · a`. Deterministic; `|decode - v| <= Δ`.
///   Saves `⌊log2 2Δ⌋` bits compared with writing `v`.
/// - **Randomised** ([`encode`](Self::encode) / [`decode`](Self::decode)): `a = ⌊v / Δ⌋ + X`
///   with `X ~ Bernoulli((v mod Δ) / Δ)`, decoded as `Δ · a`. Unbiased (`E[decode] = v`
///   exactly) with `|decode - v| < Δ`, at one bit more than the nearest scheme.
///
/// All arithmetic is on integers, so the bounds hold exactly (decoding saturates at
/// `u64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Additive {
    delta: u64,
}

impl Additive {
    /// A codec with error bound `delta >= 1`.
    pub fn new(delta: u64) -> Result<Self, PintError> {
        if delta == 0 {
            return Err(PintError::InvalidDelta);
        }
        Ok(Additive { delta })
    }

    /// The error bound Δ.
    pub fn delta(&self) -> u64 {
        self.delta
    }

    /// Nearest multiple of 2Δ, as its index: `⌊(v + Δ) / 2Δ⌋` (computed without overflow).
    pub fn encode_nearest(&self, v: u64) -> u64 {
        let step = u128::from(self.delta) * 2;
        ((u128::from(v) + u128::from(self.delta)) / step) as u64
    }

    /// `2Δ · a` (saturating).
    pub fn decode_nearest(&self, a: u64) -> u64 {
        a.saturating_mul(self.delta).saturating_mul(2)
    }

    /// Randomised rounding to a multiple of Δ (unbiased), as its index.
    pub fn encode<R: Rng + ?Sized>(&self, v: u64, rng: &mut R) -> u64 {
        let (q, r) = (v / self.delta, v % self.delta);
        if r > 0 && rng.gen_range(0..self.delta) < r {
            q + 1
        } else {
            q
        }
    }

    /// `Δ · a` (saturating).
    pub fn decode(&self, a: u64) -> u64 {
        a.saturating_mul(self.delta)
    }

    /// Bits needed for the nearest scheme's codes of values in `[0, max]`.
    pub fn bits_nearest(&self, max: u64) -> u32 {
        bits_for_code(self.encode_nearest(max))
    }

    /// Bits needed for the randomised scheme's codes of values in `[0, max]` (`⌈max / Δ⌉`).
    pub fn bits_randomized(&self, max: u64) -> u32 {
        bits_for_code(max.div_ceil(self.delta))
    }
}

pub use crate::codec::{InvalidBase, UtilCodec};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_parameters_are_rejected() {
        assert_eq!(Multiplicative::new(0.0), Err(PintError::InvalidEps(0.0)));
        assert!(Multiplicative::new(f64::NAN).is_err());
        assert_eq!(UtilCodec::new(1.0), Err(InvalidBase(1.0)));
        assert_eq!(Additive::new(0), Err(PintError::InvalidDelta));
        assert!(Multiplicative::for_range(1.0, 8).is_err());
        assert!(Multiplicative::for_range(100.0, 0).is_err());
        assert_eq!(PintError::InvalidBase(1.0).to_string(), "log base 1 must be finite and > 1");
    }

    #[test]
    fn paper_example_32_to_16_bits() {
        // "compress a 32-bit value into 16 bits, we can set eps = 0.0025".
        let m = Multiplicative::new(0.0025).unwrap();
        assert!(m.bits_for(4_294_967_295.0) <= 16);
    }

    #[test]
    fn for_range_fits_budget() {
        for bits in [2, 4, 8, 12] {
            for max in [2.0, 1000.0, 1e6, 4_294_967_295.0] {
                let m = Multiplicative::for_range(max, bits).unwrap();
                assert!(m.bits_for(max) <= bits, "max {max} bits {bits}");
                // and it is tight: a slightly finer codec would not fit.
                let finer = Multiplicative::new(m.eps() * 0.99).unwrap();
                assert!(finer.bits_for(max) > bits || max <= 2.0, "max {max} bits {bits}");
            }
        }
    }

    #[test]
    fn additive_bits() {
        let a = Additive::new(8).unwrap();
        assert_eq!(a.bits_nearest(1015), 6); // codes 0..=63
        assert_eq!(a.bits_randomized(1015), 7); // codes 0..=127
        assert_eq!(a.bits_nearest(1023), 7); // code 64 = 1024 is the nearest to 1023
        assert_eq!(a.encode_nearest(7), 0);
        assert_eq!(a.encode_nearest(8), 1);
        assert_eq!(a.encode_nearest(u64::MAX), (u64::MAX / 16) + 1);
    }
}
