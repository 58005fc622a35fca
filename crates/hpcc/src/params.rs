//! HPCC's parameters: their description for front ends ([`SPEC`]), how they are read from
//! [`Params`] and their validation.

use dcsim_core::units::BitsPerSec;
use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, PluginSpec};

/// The `hpcc` scheme and its parameters, in the order front ends list them (defaults as a
/// scenario writes them; `docs/schemes.md` documents each).
pub const SPEC: PluginSpec = PluginSpec {
    name: "hpcc",
    summary: "HPCC: INT-based rate control (SIGCOMM 2019)",
    params: &[
        ParamSpec::new("eta", Kind::Number, "0.95", "the target utilization η, in (0, 1] (U_TARGET)"),
        ParamSpec::new(
            "max_stage",
            Kind::Integer,
            "0",
            "additive-increase updates allowed in a row before a multiplicative one (MI_THRESH); \
             with 0 every update is multiplicative",
        ),
        ParamSpec::new(
            "rate_ai",
            Kind::Rate,
            "10*bw/25 Mbps (40Mbps at 100Gbps)",
            "the additive increase W_AI per update (RATE_AI); by default it scales with the line rate",
        ),
        ParamSpec::new("min_rate", Kind::Rate, "1000Mbps", "the lower bound of the pacing rate (MIN_RATE)"),
        ParamSpec::new(
            "fast_react",
            Kind::Bool,
            "true",
            "react to every ACK; if false, once per RTT (FAST_REACT)",
        ),
        ParamSpec::new(
            "multi_rate",
            Kind::Bool,
            "false",
            "keep one reference rate per hop and pace at the minimum of them (MULTI_RATE)",
        ),
        ParamSpec::new(
            "sample_feedback",
            Kind::Bool,
            "false",
            "fast-react updates skip hops whose queue is empty (SAMPLE_FEEDBACK)",
        ),
    ],
};

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
    /// The parameters [`SPEC`] describes, read from `p`; absent ones take
    /// [`HpccParams::default`]'s values. The result is checked ([`HpccParams::check`]).
    ///
    /// # Errors
    /// A `max_stage` above `u32::MAX`, or what [`HpccParams::check`] rejects.
    ///
    /// ```
    /// use dcsim_hpcc::{HpccParams, SPEC};
    /// use dcsim_types::params::{Params, Value};
    /// let p = Params::from_values(SPEC.params, vec![("eta", Value::Number(0.99))]);
    /// assert_eq!(HpccParams::from_params(&p).unwrap().eta, 0.99);
    /// let p = Params::from_values(SPEC.params, vec![("eta", Value::Number(1.5))]);
    /// assert_eq!(HpccParams::from_params(&p).unwrap_err().field, "eta");
    /// ```
    pub fn from_params(p: &Params) -> Result<HpccParams, ParamError> {
        let d = HpccParams::default();
        let params = HpccParams {
            eta: p.f64("eta", d.eta),
            max_stage: p.u32("max_stage", d.max_stage)?,
            rate_ai: p.opt_rate("rate_ai", d.rate_ai),
            min_rate: p.rate("min_rate", d.min_rate),
            fast_react: p.bool("fast_react", d.fast_react),
            multi_rate: p.bool("multi_rate", d.multi_rate),
            sample_feedback: p.bool("sample_feedback", d.sample_feedback),
        };
        params.check()?;
        Ok(params)
    }

    /// Checks the parameters: `eta` in (0, 1], `rate_ai` (if set) and `min_rate` positive.
    ///
    /// # Errors
    /// The first offending parameter and what is wrong with it.
    pub fn check(&self) -> Result<(), ParamError> {
        // Written so that NaN fails too.
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(ParamError::new(
                "eta",
                format!("must be in (0, 1], got {}", dcsim_types::params::Num(self.eta)),
            ));
        }
        if let Some(ai) = self.rate_ai {
            if ai.0 == 0 {
                return Err(ParamError::new("rate_ai", "must be > 0 bps, got 0"));
            }
        }
        if self.min_rate.0 == 0 {
            return Err(ParamError::new("min_rate", "must be > 0 bps, got 0"));
        }
        Ok(())
    }

    /// [`HpccParams::check`] as one sentence that starts with the field's name.
    ///
    /// ```
    /// use dcsim_hpcc::HpccParams;
    /// assert!(HpccParams::default().validate().is_ok());
    /// let bad = HpccParams { eta: 1.5, ..HpccParams::default() };
    /// assert_eq!(bad.validate().unwrap_err(), "eta must be in (0, 1], got 1.5");
    /// ```
    ///
    /// # Errors
    /// As [`HpccParams::check`].
    pub fn validate(&self) -> Result<(), String> {
        self.check().map_err(|e| format!("{} {}", e.field, e.message))
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
        rate_ai_for(self.rate_ai, line_rate)
    }
}

/// `rate_ai`, or by default `line_rate / 2500` (see [`HpccParams::rate_ai_for`]).
pub(crate) fn rate_ai_for(rate_ai: Option<BitsPerSec>, line_rate: BitsPerSec) -> BitsPerSec {
    rate_ai.unwrap_or(BitsPerSec(line_rate.0 / 2500))
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
        assert_eq!(
            HpccParams { min_rate: BitsPerSec(0), ..d }.check(),
            Err(ParamError::new("min_rate", "must be > 0 bps, got 0"))
        );
    }

    #[test]
    fn from_params_reads_every_parameter_of_the_spec() {
        use dcsim_types::params::Value;
        assert_eq!(HpccParams::from_params(&Params::default()), Ok(HpccParams::default()));
        let given = vec![
            ("eta", Value::Number(0.9)),
            ("max_stage", Value::Integer(5)),
            ("rate_ai", Value::Rate(BitsPerSec::mbps(50))),
            ("min_rate", Value::Rate(BitsPerSec::mbps(100))),
            ("fast_react", Value::Bool(false)),
            ("multi_rate", Value::Bool(true)),
            ("sample_feedback", Value::Bool(true)),
        ];
        assert_eq!(given.len(), SPEC.params.len());
        let p = HpccParams::from_params(&Params::from_values(SPEC.params, given)).unwrap();
        assert_eq!(
            p,
            HpccParams {
                eta: 0.9,
                max_stage: 5,
                rate_ai: Some(BitsPerSec::mbps(50)),
                min_rate: BitsPerSec::mbps(100),
                fast_react: false,
                multi_rate: true,
                sample_feedback: true,
            }
        );
        let big = Params::from_values(SPEC.params, vec![("max_stage", Value::Integer(1 << 32))]);
        assert_eq!(HpccParams::from_params(&big).unwrap_err().field, "max_stage");
    }
}
