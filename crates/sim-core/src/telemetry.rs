//! PINT telemetry at the switch (spec §3.4): a per-port utilisation EWMA updated on every data
//! packet. The scheme encodes it into the digest of packets that carry a PINT area
//! ([`crate::cc::CcFactory::pint_digest`]; HPCC-PINT's codec lives in `dcsim-pint`), and the
//! switch keeps the path maximum in the packet's 2-byte digest.

/// Per-port state of the PINT utilisation EWMA.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PortUtil {
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
