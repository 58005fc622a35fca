//! PINT telemetry at the switch (spec §3.4): a per-port utilisation EWMA updated on every data
//! packet, encoded into a few bits with randomized rounding, and kept as the path maximum in
//! the packet's 2-byte digest. The sender side (HPCC-PINT) lives in `dcsim-pint`, which
//! re-exports [`UtilCodec`].

use rand::Rng;

/// The reference's scale factor: utilisation is encoded as `ceil(u * K)` before the log.
pub const PINT_K: f64 = 512.0;

/// Logarithmic codec for utilisation values with randomized rounding (spec §3.4): a value `u`
/// is encoded as an exponent `p` of `base` such that `base^p / K` approximates `u`, choosing
/// between the two neighbouring exponents so that the decoded value is unbiased.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UtilCodec {
    base: f64,
    inv_ln_base: f64,
}

impl UtilCodec {
    /// A codec with log base `base` (> 1; the reference's default 1.05 gives 8-bit values).
    ///
    /// # Panics
    /// If `base <= 1` or is not finite (validated by the caller).
    pub fn new(base: f64) -> UtilCodec {
        assert!(base.is_finite() && base > 1.0, "PINT log base must be > 1, got {base}");
        UtilCodec { base, inv_ln_base: 1.0 / base.ln() }
    }
    /// The log base.
    pub fn base(&self) -> f64 {
        self.base
    }
    /// Bits needed for the exponent: `ceil(log2(ln(K^2) / ln(base)))` (8 for base 1.05).
    pub fn n_bits(&self) -> u32 {
        ((PINT_K * PINT_K).ln() * self.inv_ln_base).log2().ceil() as u32
    }
    /// Encodes `u` (≥ 0) with randomized rounding between the two neighbouring exponents.
    pub fn encode<R: Rng + ?Sized>(&self, u: f64, rng: &mut R) -> u16 {
        let v = (u * PINT_K).ceil().max(1.0);
        let e = v.ln() * self.inv_ln_base;
        let lo = e.floor();
        let mut hi = e.ceil();
        if hi == lo {
            hi = lo + 1.0;
        }
        let (b_lo, b_hi) = (self.base.powf(lo), self.base.powf(hi));
        let p_hi = ((v - b_lo) / (b_hi - b_lo)).clamp(0.0, 1.0);
        let p = if rng.gen::<f64>() < p_hi { hi } else { lo };
        p.clamp(0.0, u16::MAX as f64) as u16
    }
    /// Decodes an exponent: `base^p / K` (so 0 decodes to 1/512).
    pub fn decode(&self, p: u16) -> f64 {
        self.base.powi(p as i32) / PINT_K
    }
}

/// Per-port state of the PINT utilisation EWMA.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct PortUtil {
    /// Current EWMA of utilisation.
    pub u: f64,
    /// When the previous frame (of any kind) started transmission, in picoseconds.
    pub last_ts: u64,
    /// Wire size of the previous frame.
    pub last_size: u64,
}

impl PortUtil {
    /// The exact form of the reference's update (spec §3.4), at transmission start of a data
    /// packet at time `now_ps` on a port of `rate_bps`, with `queued` bytes waiting (excluding
    /// this packet) and window `t_ps` (the network's maximum base RTT).
    pub fn update(&mut self, now_ps: u64, rate_bps: u64, queued: u64, t_ps: u64) -> f64 {
        let t = t_ps as f64 * 1e-12;
        let dt = (now_ps.saturating_sub(self.last_ts)).min(t_ps) as f64 * 1e-12;
        let bq = rate_bps as f64 / 8.0;
        let w = dt / t;
        self.u =
            self.u * (1.0 - w) + queued as f64 / (bq * t) * w + self.last_size as f64 / (bq * t);
        self.u
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn bits_follow_the_reference() {
        assert_eq!(UtilCodec::new(1.05).n_bits(), 8);
        assert_eq!(UtilCodec::new(1.01).n_bits(), 11);
    }

    #[test]
    fn encoding_is_unbiased_and_close() {
        let c = UtilCodec::new(1.05);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for &u in &[0.01, 0.3, 0.95, 1.0, 1.7] {
            let n = 20_000;
            let mut sum = 0.0;
            for _ in 0..n {
                let d = c.decode(c.encode(u, &mut rng));
                let v = (u * PINT_K).ceil().max(1.0) / PINT_K;
                assert!(d <= v * 1.05 + 1e-12 && d >= v / 1.05 - 1e-12, "{u}: {d}");
                sum += d;
            }
            let v = (u * PINT_K).ceil().max(1.0) / PINT_K;
            assert!((sum / n as f64 - v).abs() / v < 0.005, "{u}: mean {}", sum / n as f64);
        }
    }

    #[test]
    fn ewma_of_a_saturated_port_tends_to_one() {
        // 1000-byte frames back to back at 100 Gb/s: each takes 80 ns; T = 8 us.
        let mut p = PortUtil::default();
        let mut now = 0;
        for _ in 0..2000 {
            p.update(now, 100_000_000_000, 0, 8_000_000);
            p.last_ts = now;
            p.last_size = 1000;
            now += 80_000;
        }
        assert!((p.u - 1.0).abs() < 0.02, "{}", p.u);
    }
}
