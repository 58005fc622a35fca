//! The HPCC-PINT link-utilisation codec (reference `Pint`, spec §1.3 and §3.4): how a switch
//! turns its port's utilisation into the few bits a packet's digest carries, and how the sender
//! turns them back. The switch calls it through [`crate::HpccPintFactory`]'s
//! `CcFactory::pint_digest`; the core keeps only the per-port utilisation EWMA.

use rand::Rng;

/// A PINT log base that is not a finite number above 1.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("log base {0} must be finite and > 1")]
pub struct InvalidBase(pub f64);

/// The HPCC-PINT link-utilisation codec (reference `Pint`, spec §1.3 and §3.4).
///
/// With base `b` and `K = 512`: `v = max(1, ⌈u · K⌉)`, `e = ln v · (1 / ln b)`; the code is
/// `⌈e⌉` with probability `(v - b^⌊e⌋) / (b^⌈e⌉ - b^⌊e⌋)` and `⌊e⌋` otherwise (when `e` is an
/// integer the upper value is `b^⌊e⌋ · b`, so the code is `⌊e⌋`). The coin is a uniform 16-bit
/// draw `r` with "upper iff `r < p · 65536`", as in the reference (`rand() % 65536`), so the
/// choice probability is `p` rounded up to a multiple of `2^-16`. Decoding gives `b^code / K`.
///
/// Hence `decode(encode(u)) ∈ [v / (b·K), v·b / K]` (within a factor `b` of the quantised
/// utilisation `v / K`), and `E[decode(encode(u))] = v / K` up to the coin's `2^-16`
/// resolution (a relative bias of at most `(b - 1) / 65536`).
///
/// `encode` costs one `ln` and a table lookup (powers of `b` are precomputed for every code a
/// header of [`n_bits`](Self::n_bits) bits can hold, up to 4096 entries); it is deterministic
/// given the RNG. Codes are `u16`; inputs so large that `e >= 65535` saturate at `u16::MAX`.
/// The reference computes `n_bits` from `u <= K` (`v <= K²`); a larger `u` gives codes that
/// do not fit `n_bits` — the header model decides what to do with them (the reference's
/// one-byte header keeps the low 8 bits).
#[derive(Debug, Clone, PartialEq)]
pub struct UtilCodec {
    base: f64,
    inv_ln_base: f64,
    /// `pow[i] = base^i` for `i < pow.len()`.
    pow: Vec<f64>,
}

impl UtilCodec {
    /// The quantisation constant `K` (`max_concurrent` in the reference).
    pub const K: u32 = 512;

    /// A codec with log base `base` (reference `PINT_LOG_BASE`, e.g. 1.05). Errors unless
    /// `base` is finite and greater than 1.
    pub fn new(base: f64) -> Result<Self, InvalidBase> {
        if !(base.is_finite() && base > 1.0) {
            return Err(InvalidBase(base));
        }
        let inv_ln_base = 1.0 / base.ln();
        let mut codec = UtilCodec { base, inv_ln_base, pow: Vec::new() };
        let len = (1usize << codec.n_bits().min(12)) + 1;
        codec.pow = (0..len).map(|i| base.powf(i as f64)).collect();
        Ok(codec)
    }

    /// The log base `b`.
    pub fn base(&self) -> f64 {
        self.base
    }

    /// `n_bits = ⌈log2(ln(K²) / ln b)⌉` (0 if that is not positive): base 1.05 → 8,
    /// base 1.01 → 11.
    pub fn n_bits(&self) -> u32 {
        let k = f64::from(Self::K);
        let max_value = (k * k).ln() * self.inv_ln_base;
        let bits = max_value.log2().ceil();
        if bits > 0.0 {
            bits as u32
        } else {
            0
        }
    }

    /// Header bytes the reference serialises: `⌈n_bits / 8⌉` (1 for base 1.05, 2 for 1.01).
    pub fn n_bytes(&self) -> u32 {
        self.n_bits().div_ceil(8)
    }

    /// The quantised utilisation `v = max(1, ⌈u · K⌉)` (NaN and negative `u` give 1; values
    /// beyond `u32` saturate).
    pub fn quantize(&self, u: f64) -> u32 {
        let v = (u * f64::from(Self::K)).ceil();
        if v >= 1.0 {
            // `as` saturates at u32::MAX.
            v as u32
        } else {
            1
        }
    }

    #[inline]
    fn pow(&self, p: u16) -> f64 {
        match self.pow.get(usize::from(p)) {
            Some(&x) => x,
            None => self.base.powf(f64::from(p)),
        }
    }

    /// Encode utilisation `u` (randomised rounding of `log_b v`, see the type docs).
    #[inline]
    pub fn encode<R: Rng + ?Sized>(&self, u: f64, rng: &mut R) -> u16 {
        let v = f64::from(self.quantize(u));
        let power = v.ln() * self.inv_ln_base;
        if power >= f64::from(u16::MAX) {
            return u16::MAX;
        }
        let lo = power.floor() as u16;
        let hi = power.ceil() as u16;
        let lower = self.pow(lo);
        // b^hi = b^lo · b, both when hi = lo + 1 and (per the reference) when hi = lo.
        let upper = lower * self.base;
        let p = (v - lower) / (upper - lower);
        let coin = f64::from(rng.gen::<u16>());
        if coin < p * 65536.0 {
            hi
        } else {
            lo
        }
    }

    /// Decode a code: `b^p / K`.
    #[inline]
    pub fn decode(&self, p: u16) -> f64 {
        self.pow(p) / f64::from(Self::K)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn reference_bit_widths() {
        assert_eq!(UtilCodec::new(1.05).unwrap().n_bits(), 8);
        assert_eq!(UtilCodec::new(1.05).unwrap().n_bytes(), 1);
        assert_eq!(UtilCodec::new(1.01).unwrap().n_bits(), 11);
        assert_eq!(UtilCodec::new(1.01).unwrap().n_bytes(), 2);
        assert_eq!(UtilCodec::new(1e6).unwrap().n_bits(), 0);
    }

    #[test]
    fn util_codec_small_values() {
        let c = UtilCodec::new(1.05).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // u = 0 quantises to v = 1, whose exponent is exactly 0.
        assert_eq!(c.encode(0.0, &mut rng), 0);
        assert_eq!(c.encode(f64::NAN, &mut rng), 0);
        assert!((c.decode(0) - 1.0 / 512.0).abs() < 1e-15);
        // u saturates at v = u32::MAX, exponent ln(2^32 - 1) / ln 1.05 = 454.6.
        let p = c.encode(f64::INFINITY, &mut rng);
        assert!(p == 454 || p == 455, "{p}");
        // A base so close to 1 that the exponent overflows u16 saturates there.
        let fine = UtilCodec::new(1.0001).unwrap();
        assert_eq!(fine.encode(1e6, &mut rng), u16::MAX);
    }

    #[test]
    fn encoding_is_unbiased_and_close() {
        let c = UtilCodec::new(1.05).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for &u in &[0.01, 0.3, 0.95, 1.0, 1.7] {
            let n = 20_000;
            let mut sum = 0.0;
            for _ in 0..n {
                let d = c.decode(c.encode(u, &mut rng));
                let v = (u * (UtilCodec::K as f64)).ceil().max(1.0) / (UtilCodec::K as f64);
                assert!(d <= v * 1.05 + 1e-12 && d >= v / 1.05 - 1e-12, "{u}: {d}");
                sum += d;
            }
            let v = (u * (UtilCodec::K as f64)).ceil().max(1.0) / (UtilCodec::K as f64);
            assert!((sum / n as f64 - v).abs() / v < 0.005, "{u}: mean {}", sum / n as f64);
        }
    }
}
