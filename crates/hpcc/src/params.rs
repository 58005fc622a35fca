//! HPCC's parameters and their validation.

use dcsim_core::units::BitsPerSec;

/// HPCC parameters, shared by every flow of a run.
///
/// [`Default`] is the reference run script's `hp` row (spec §5.1) at any bandwidth: the one
/// value that depends on the bandwidth, the additive increase, is left as `None` and resolved
/// per flow from the NIC line rate by [`HpccParams::rate_ai_for`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccParams {
    /// Target utilisation η (`U_TARGET`), in (0, 1]. Default 0.95 (the HPCC project page
    /// recommends 0.99; the run script's default is 0.95).
    pub eta: f64,
    /// Number of consecutive additive-increase updates allowed before a multiplicative one
    /// (`MI_THRESH`, the paper's maxStage). Default 0: every update is multiplicative.
    pub max_stage: u32,
    /// Additive increase W_AI per update (`RATE_AI`, the script's `--hpai`). `None` (the
    /// default) scales it with the NIC line rate: `10 * bw / 25` Mb/s with `bw` in Gb/s,
    /// i.e. 40 Mb/s at 100 Gb/s.
    pub rate_ai: Option<BitsPerSec>,
    /// Lower bound of the pacing rate (`MIN_RATE`). Default 1000 Mb/s.
    pub min_rate: BitsPerSec,
    /// React to every ACK, not only once per RTT (`FAST_REACT`). Default true.
    pub fast_react: bool,
    /// Keep one reference rate per hop and pace at the minimum (`MULTI_RATE`). Default false.
    pub multi_rate: bool,
    /// On fast-react (not per-RTT) updates, ignore hops whose queue is empty
    /// (`SAMPLE_FEEDBACK`). Default false.
    pub sample_feedback: bool,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams {
            eta: 0.95,
            max_stage: 0,
            rate_ai: None,
            min_rate: BitsPerSec::mbps(1000),
            fast_react: true,
            multi_rate: false,
            sample_feedback: false,
        }
    }
}

impl HpccParams {
    /// Checks the parameters; the error names the offending field and its value.
    ///
    /// ```
    /// use dcsim_hpcc::HpccParams;
    /// assert!(HpccParams::default().validate().is_ok());
    /// let bad = HpccParams { eta: 1.5, ..HpccParams::default() };
    /// assert_eq!(bad.validate().unwrap_err(), "eta must be in (0, 1], got 1.5");
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        // Written so that NaN fails too.
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("eta must be in (0, 1], got {}", self.eta));
        }
        if let Some(ai) = self.rate_ai {
            if ai.0 == 0 {
                return Err("rate_ai must be > 0 bps, got 0".to_string());
            }
        }
        if self.min_rate.0 == 0 {
            return Err("min_rate must be > 0 bps, got 0".to_string());
        }
        Ok(())
    }

    /// The additive increase for a flow whose NIC runs at `line_rate`: `rate_ai` if set,
    /// otherwise `line_rate / 2500` (integer bps, truncated), which is the run script's
    /// `10 * bw / 25` Mb/s: 10 Mb/s at 25G, 20 at 50G, 40 at 100G, 160 at 400G.
    ///
    /// The script computes `10 * bw / 25` in whole Mb/s with integer division; the two agree
    /// at every line rate that is a multiple of 2.5 Gb/s, which includes every speed the
    /// reference's INT header can encode (25/50/100/200/400G).
    ///
    /// ```
    /// use dcsim_core::units::BitsPerSec;
    /// use dcsim_hpcc::HpccParams;
    /// let p = HpccParams::default();
    /// assert_eq!(p.rate_ai_for(BitsPerSec::gbps(100)), BitsPerSec::mbps(40));
    /// ```
    pub fn rate_ai_for(&self, line_rate: BitsPerSec) -> BitsPerSec {
        self.rate_ai.unwrap_or(BitsPerSec(line_rate.0 / 2500))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_run_script_hp_row() {
        let p = HpccParams::default();
        assert_eq!(p.eta, 0.95);
        assert_eq!(p.max_stage, 0);
        assert_eq!(p.rate_ai, None);
        assert_eq!(p.min_rate, BitsPerSec(1_000_000_000));
        assert!(p.fast_react);
        assert!(!p.multi_rate);
        assert!(!p.sample_feedback);
        assert_eq!(p.validate(), Ok(()));
    }

    #[test]
    fn rate_ai_scales_like_the_script() {
        let p = HpccParams::default();
        // 10 * bw / 25 Mb/s.
        for (bw, ai_mbps) in [(25, 10), (40, 16), (50, 20), (100, 40), (200, 80), (400, 160)] {
            assert_eq!(p.rate_ai_for(BitsPerSec::gbps(bw)), BitsPerSec::mbps(ai_mbps), "{bw}G");
        }
        // --hpai overrides.
        let p = HpccParams { rate_ai: Some(BitsPerSec::mbps(50)), ..p };
        assert_eq!(p.rate_ai_for(BitsPerSec::gbps(100)), BitsPerSec::mbps(50));
    }

    #[test]
    fn validation_names_the_field() {
        let d = HpccParams::default();
        let err = |p: HpccParams| p.validate().unwrap_err();
        assert_eq!(err(HpccParams { eta: 0.0, ..d }), "eta must be in (0, 1], got 0");
        assert_eq!(err(HpccParams { eta: -0.5, ..d }), "eta must be in (0, 1], got -0.5");
        assert_eq!(err(HpccParams { eta: 1.01, ..d }), "eta must be in (0, 1], got 1.01");
        assert_eq!(err(HpccParams { eta: f64::NAN, ..d }), "eta must be in (0, 1], got NaN");
        assert_eq!(
            err(HpccParams { rate_ai: Some(BitsPerSec(0)), ..d }),
            "rate_ai must be > 0 bps, got 0"
        );
        assert_eq!(
            err(HpccParams { min_rate: BitsPerSec(0), ..d }),
            "min_rate must be > 0 bps, got 0"
        );
        assert_eq!(HpccParams { eta: 1.0, ..d }.validate(), Ok(()));
        assert_eq!(HpccParams { eta: 0.99, max_stage: 5, ..d }.validate(), Ok(()));
    }
}
