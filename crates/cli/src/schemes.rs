//! The congestion-control scheme registry: scheme names as written in `[cc] name = ...`, their
//! parameters, their profiles (the defaults they bring to `[nic]` and `[switch]`), and the
//! static dispatch from a [`CcChoice`] to the generic [`run`].
//!
//! | name | algorithm | window | ACK high priority | default ECN map |
//! |---|---|---|---|---|
//! | `none` | line rate, no reaction | none | no | RED |
//! | `hpcc` | HPCC (`dcsim-hpcc`) | variable | no | RED |
//! | `hpcc-pint` | HPCC-PINT (`dcsim-pint`) | variable | no | RED |
//! | `dcqcn` | DCQCN (`dcsim-baselines`) | none | yes | RED |
//! | `dcqcn-w` | DCQCN | variable | no | RED |
//! | `timely` | TIMELY | none | yes | RED |
//! | `timely-w` | TIMELY | variable | yes | RED |
//! | `dctcp` | DCTCP | variable | no | DCTCP |
//!
//! No name is reserved at present ([`RESERVED`]). The parameters of every scheme are listed in
//! [`params_of`] and documented in `docs/schemes.md`.
//!
//! # Adding a scheme
//! 1. add its name to [`SCHEMES`] and its parameter names to [`params_of`];
//! 2. add a variant holding its factory to [`CcChoice`] and its name to [`CcChoice::name`];
//! 3. add a match arm to `CcChoice::from_params` that reads its parameters with
//!    [`CcParams`] (each getter takes the default), checks them with [`CcParams::check`] and
//!    ends with [`CcParams::finish`];
//! 4. add a match arm to [`run_with_scheme`] calling [`run`] with the factory;
//! 5. give it a [`profile`] if it differs from `none`'s, and document it in `docs/schemes.md`.

use std::ops::Range;
use std::time::Instant;

use dcsim_baselines::{
    DcqcnFactory, DcqcnParams, DctcpFactory, DctcpParams, TimelyFactory, TimelyParams,
};
use dcsim_core::cc::{CcFactory, NoCcFactory};
use dcsim_core::config::{EcnParams, FlowSpec, SimConfig, WindowMode};
use dcsim_core::ids::FlowId;
use dcsim_core::network::{Network, RoutingTable};
use dcsim_core::units::{BitsPerSec, Bytes, Duration};
use dcsim_core::{Counters, FlowResult, HopSample, Partition, RunSummary, SimError, Simulation};
use dcsim_hpcc::{HpccFactory, HpccParams};
use dcsim_pint::{HpccPintFactory, HpccPintParams};

use crate::error::CliError;
use crate::scenario::Source;
use crate::units;

/// Every scheme name `[cc] name` accepts.
pub const SCHEMES: &[&str] =
    &["none", "hpcc", "hpcc-pint", "dcqcn", "dcqcn-w", "timely", "timely-w", "dctcp"];

const HPCC_PARAMS: &[&str] =
    &["eta", "max_stage", "rate_ai", "min_rate", "fast_react", "multi_rate", "sample_feedback"];
const HPCC_PINT_PARAMS: &[&str] = &["eta", "max_stage", "rate_ai", "min_rate", "log_base", "prob"];
const DCQCN_PARAMS: &[&str] = &[
    "alpha_resume_interval",
    "rate_decrease_interval",
    "rp_timer",
    "ewma_gain",
    "fast_recovery_times",
    "rate_ai",
    "rate_hai",
    "min_rate",
    "clamp_target_rate",
];
const TIMELY_PARAMS: &[&str] = &[
    "rate_ai",
    "rate_hai",
    "min_rate",
    "alpha",
    "beta",
    "t_low",
    "t_high",
    "min_rtt",
    "hai_after",
];
const DCTCP_PARAMS: &[&str] =
    &["ewma_gain", "rate_ai", "min_rate", "reset_ecn_count_after_first_batch"];

/// The `[cc]` parameters of scheme `name` (empty for `none` and for unknown names).
pub fn params_of(name: &str) -> &'static [&'static str] {
    match name {
        "hpcc" => HPCC_PARAMS,
        "hpcc-pint" => HPCC_PINT_PARAMS,
        "dcqcn" | "dcqcn-w" => DCQCN_PARAMS,
        "timely" | "timely-w" => TIMELY_PARAMS,
        "dctcp" => DCTCP_PARAMS,
        _ => &[],
    }
}

/// Scheme names reserved for schemes that are not available yet: `[cc] name` rejects them
/// with a message saying so.
pub const RESERVED: &[&str] = &[];

/// How the default ECN map is derived from a switch port's rate `s` (in Gb/s), spec §5.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnDefault {
    /// kmin = 4·s KB, kmax = 16·s KB, pmax = 0.2 (the reference's `100·s/25`, `400·s/25`):
    /// 400 KB / 1600 KB at 100 Gb/s.
    Red,
    /// kmin = kmax = 3·s KB, pmax = 1 (the reference's DCTCP `30·s/10`): 300 KB at 100 Gb/s.
    Dctcp,
}

impl EcnDefault {
    /// The ECN parameters for a port of rate `rate` (bytes rounded down).
    pub fn params(self, rate: BitsPerSec) -> EcnParams {
        // s Gb/s times k KB = k * rate / 10^6 bytes.
        let kb = |k: u64| Bytes((u128::from(rate.0) * u128::from(k) / 1_000_000) as u64);
        match self {
            EcnDefault::Red => EcnParams { kmin: kb(4), kmax: kb(16), pmax: 0.2 },
            EcnDefault::Dctcp => EcnParams { kmin: kb(3), kmax: kb(3), pmax: 1.0 },
        }
    }
}

/// The settings a scheme brings to other sections: the reference run script's per-scheme
/// choices (spec §5.1). They are defaults only: explicit `[nic]` / `[switch]` values win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// `nic.window`.
    pub window: WindowMode,
    /// `nic.ack_high_prio`.
    pub ack_high_prio: bool,
    /// The rule for the default `switch.ecn_map`.
    pub ecn: EcnDefault,
}

/// The profile of scheme `name` (any name; unknown names get `none`'s).
pub fn profile(name: &str) -> Profile {
    let (window, ack_high_prio, ecn) = match name {
        "hpcc" | "hpcc-pint" => (WindowMode::Variable, false, EcnDefault::Red),
        "dcqcn" => (WindowMode::None, true, EcnDefault::Red),
        "dcqcn-w" => (WindowMode::Variable, false, EcnDefault::Red),
        "timely" => (WindowMode::None, true, EcnDefault::Red),
        "timely-w" => (WindowMode::Variable, true, EcnDefault::Red),
        "dctcp" => (WindowMode::Variable, false, EcnDefault::Dctcp),
        _ => (WindowMode::None, false, EcnDefault::Red),
    };
    Profile { window, ack_high_prio, ecn }
}

/// A congestion-control scheme chosen by a scenario, with its parameters applied.
#[derive(Clone, Debug)]
pub enum CcChoice {
    /// `none`: line rate, no reaction to congestion.
    None(NoCcFactory),
    /// `hpcc`.
    Hpcc(HpccFactory),
    /// `hpcc-pint`: HPCC driven by PINT digests (`dcsim-pint`).
    HpccPint(HpccPintFactory),
    /// `dcqcn`: DCQCN, pure rate pacing.
    Dcqcn(DcqcnFactory),
    /// `dcqcn-w`: DCQCN with a variable window.
    DcqcnW(DcqcnFactory),
    /// `timely`: TIMELY, pure rate pacing.
    Timely(TimelyFactory),
    /// `timely-w`: TIMELY with a variable window.
    TimelyW(TimelyFactory),
    /// `dctcp`.
    Dctcp(DctcpFactory),
}

impl CcChoice {
    /// The scheme's name as written in scenarios.
    pub fn name(&self) -> &'static str {
        match self {
            CcChoice::None(_) => "none",
            CcChoice::Hpcc(_) => "hpcc",
            CcChoice::HpccPint(_) => "hpcc-pint",
            CcChoice::Dcqcn(_) => "dcqcn",
            CcChoice::DcqcnW(_) => "dcqcn-w",
            CcChoice::Timely(_) => "timely",
            CcChoice::TimelyW(_) => "timely-w",
            CcChoice::Dctcp(_) => "dctcp",
        }
    }

    /// Builds the scheme `name` from its parameters. `name` must be one of [`SCHEMES`].
    pub(crate) fn from_params(name: &str, mut p: CcParams<'_>) -> Result<CcChoice, CliError> {
        let valid = params_of(name);
        let choice = match name {
            "none" => CcChoice::None(NoCcFactory),
            "hpcc" => {
                let d = HpccParams::default();
                let params = HpccParams {
                    eta: p.f64("eta", d.eta)?,
                    max_stage: p.u32("max_stage", d.max_stage)?,
                    rate_ai: p.opt_rate("rate_ai", d.rate_ai)?,
                    min_rate: p.rate("min_rate", d.min_rate)?,
                    fast_react: p.bool("fast_react", d.fast_react)?,
                    multi_rate: p.bool("multi_rate", d.multi_rate)?,
                    sample_feedback: p.bool("sample_feedback", d.sample_feedback)?,
                };
                p.check(params.validate(), valid)?;
                CcChoice::Hpcc(HpccFactory { params })
            }
            "hpcc-pint" => {
                let d = HpccPintParams::default();
                let params = HpccPintParams {
                    eta: p.f64("eta", d.eta)?,
                    max_stage: p.u32("max_stage", d.max_stage)?,
                    rate_ai: p.opt_rate("rate_ai", d.rate_ai)?,
                    min_rate: p.rate("min_rate", d.min_rate)?,
                    log_base: p.f64("log_base", d.log_base)?,
                    prob: p.f64("prob", d.prob)?,
                };
                p.check(params.validate(), valid)?;
                CcChoice::HpccPint(HpccPintFactory { params })
            }
            "dcqcn" | "dcqcn-w" => {
                let d = DcqcnParams::default();
                let params = DcqcnParams {
                    alpha_resume_interval: p
                        .duration("alpha_resume_interval", d.alpha_resume_interval)?,
                    rate_decrease_interval: p
                        .duration("rate_decrease_interval", d.rate_decrease_interval)?,
                    rp_timer: p.duration("rp_timer", d.rp_timer)?,
                    ewma_gain: p.f64("ewma_gain", d.ewma_gain)?,
                    fast_recovery_times: p.u32("fast_recovery_times", d.fast_recovery_times)?,
                    rate_ai: p.opt_rate("rate_ai", d.rate_ai)?,
                    rate_hai: p.opt_rate("rate_hai", d.rate_hai)?,
                    min_rate: p.rate("min_rate", d.min_rate)?,
                    clamp_target_rate: p.bool("clamp_target_rate", d.clamp_target_rate)?,
                };
                p.check(params.validate(), valid)?;
                let f = DcqcnFactory { params };
                if name == "dcqcn" {
                    CcChoice::Dcqcn(f)
                } else {
                    CcChoice::DcqcnW(f)
                }
            }
            "timely" | "timely-w" => {
                let d = TimelyParams::default();
                let params = TimelyParams {
                    rate_ai: p.opt_rate("rate_ai", d.rate_ai)?,
                    rate_hai: p.opt_rate("rate_hai", d.rate_hai)?,
                    min_rate: p.rate("min_rate", d.min_rate)?,
                    alpha: p.f64("alpha", d.alpha)?,
                    beta: p.f64("beta", d.beta)?,
                    t_low: p.duration("t_low", d.t_low)?,
                    t_high: p.duration("t_high", d.t_high)?,
                    min_rtt: p.duration("min_rtt", d.min_rtt)?,
                    hai_after: p.u32("hai_after", d.hai_after)?,
                };
                p.check(params.validate(), valid)?;
                let f = TimelyFactory { params };
                if name == "timely" {
                    CcChoice::Timely(f)
                } else {
                    CcChoice::TimelyW(f)
                }
            }
            "dctcp" => {
                let d = DctcpParams::default();
                let params = DctcpParams {
                    ewma_gain: p.f64("ewma_gain", d.ewma_gain)?,
                    rate_ai: p.rate("rate_ai", d.rate_ai)?,
                    min_rate: p.rate("min_rate", d.min_rate)?,
                    reset_ecn_count_after_first_batch: p.bool(
                        "reset_ecn_count_after_first_batch",
                        d.reset_ecn_count_after_first_batch,
                    )?,
                };
                p.check(params.validate(), valid)?;
                CcChoice::Dctcp(DctcpFactory { params })
            }
            other => return Err(p.unknown_scheme(other)),
        };
        p.finish(valid)?;
        Ok(choice)
    }
}

/// Everything a run needs besides the scheme.
#[derive(Debug)]
pub struct SimInput {
    /// The network.
    pub net: Network,
    /// Its routes.
    pub routes: RoutingTable,
    /// Switch/NIC parameters, stop time and seed.
    pub cfg: SimConfig,
    /// The flows, ids equal to positions.
    pub flows: Vec<FlowSpec>,
    /// Worker threads: above 1 the nodes are split into that many shards by rack
    /// (`Partition::by_rack`) and run in parallel. Results never depend on it.
    pub threads: usize,
    /// Flows whose data packets are recorded at every switch ([`RunOutput::hop_trace`]).
    pub trace: Vec<FlowId>,
}

/// What a finished run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The run summary.
    pub summary: RunSummary,
    /// One record per flow, indexed by flow id.
    pub results: Vec<FlowResult>,
    /// Run-wide counters.
    pub counters: Counters,
    /// Wall-clock time spent in [`Simulation::run`].
    pub wall: std::time::Duration,
    /// Shards the run used.
    pub shards: usize,
    /// Why a parallel run fell back to one shard, if it did.
    pub fallback: Option<String>,
    /// The switch passages of [`SimInput::trace`]'s flows (`Simulation::hop_trace`).
    pub hop_trace: Vec<HopSample>,
}

/// Runs the scenario with the chosen scheme (one match arm per scheme).
///
/// # Errors
/// The simulator's own validation ([`Simulation::new`]); a scenario that passed the loader's
/// validation should not trigger it.
pub fn run_with_scheme(choice: CcChoice, input: SimInput) -> Result<RunOutput, SimError> {
    match choice {
        CcChoice::None(f) => run(f, input),
        CcChoice::Hpcc(f) => run(f, input),
        CcChoice::HpccPint(f) => {
            // The switches encode utilisation with the same log base the senders decode.
            let mut input = input;
            input.cfg.pint_log_base = f.params.log_base;
            run(f, input)
        }
        CcChoice::Dcqcn(f) | CcChoice::DcqcnW(f) => run(f, input),
        CcChoice::Timely(f) | CcChoice::TimelyW(f) => run(f, input),
        CcChoice::Dctcp(f) => run(f, input),
    }
}

/// Builds and runs a simulation with `factory`.
///
/// # Errors
/// See [`run_with_scheme`].
pub fn run<F: CcFactory>(factory: F, input: SimInput) -> Result<RunOutput, SimError> {
    let SimInput { net, routes, cfg, flows, threads, trace } = input;
    let part = if threads > 1 {
        Partition::by_rack(&net, threads)
    } else {
        Partition::single(net.node_count())
    };
    let mut sim = Simulation::with_partition(net, routes, cfg, flows, factory, part)?;
    sim.set_threads(threads.max(1));
    sim.trace_hop_latency(&trace)?;
    let t0 = Instant::now();
    let summary = sim.run();
    let wall = t0.elapsed();
    Ok(RunOutput {
        summary,
        results: sim.flow_results().to_vec(),
        counters: *sim.counters(),
        wall,
        shards: sim.shards(),
        fallback: sim.fallback().map(str::to_string),
        hop_trace: sim.hop_trace(),
    })
}

/// One `key = value` of the `[cc]` table besides `name`.
#[derive(Debug)]
struct Param {
    key: String,
    value: toml::Value,
    used: bool,
}

/// The parameters of the `[cc]` table (every key but `name`), read by a scheme's arm of
/// `CcChoice::from_params`. Each getter marks its key as used and returns the default when
/// the key is absent; [`CcParams::finish`] rejects whatever was not used.
#[derive(Debug)]
pub struct CcParams<'a> {
    src: &'a Source,
    scheme: String,
    params: Vec<Param>,
}

impl<'a> CcParams<'a> {
    pub(crate) fn new(src: &'a Source, scheme: &str, table: &toml::Table) -> CcParams<'a> {
        let params = table
            .iter()
            .filter(|(k, _)| k.as_str() != "name")
            .map(|(k, v)| Param { key: k.clone(), value: v.clone(), used: false })
            .collect();
        CcParams { src, scheme: scheme.to_string(), params }
    }

    fn field(key: &str) -> String {
        format!("cc.{key}")
    }

    fn span(&self, key: &str) -> Option<Range<usize>> {
        self.src.span_of(&["cc", key])
    }

    fn error(&self, key: &str, message: String) -> CliError {
        self.src.error_at(self.span(key), Self::field(key), message)
    }

    fn take(&mut self, key: &str) -> Option<toml::Value> {
        let p = self.params.iter_mut().find(|p| p.key == key)?;
        p.used = true;
        Some(p.value.clone())
    }

    /// A floating-point parameter (integers are accepted too).
    ///
    /// # Errors
    /// A value of another type.
    pub fn f64(&mut self, key: &str, default: f64) -> Result<f64, CliError> {
        match self.take(key) {
            None => Ok(default),
            Some(toml::Value::Float(v)) => Ok(v),
            Some(toml::Value::Integer(v)) => Ok(v as f64),
            Some(v) => Err(self.error(key, format!("expected a number, found {}", v.type_str()))),
        }
    }

    /// A non-negative integer parameter.
    ///
    /// # Errors
    /// A value of another type, or a negative one.
    pub fn u64(&mut self, key: &str, default: u64) -> Result<u64, CliError> {
        match self.take(key) {
            None => Ok(default),
            Some(toml::Value::Integer(v)) => u64::try_from(v).map_err(|_| {
                self.error(key, format!("{v} is negative; expected a non-negative integer"))
            }),
            Some(v) => {
                Err(self
                    .error(key, format!("expected a non-negative integer, found {}", v.type_str())))
            }
        }
    }

    /// A non-negative integer parameter that fits in 32 bits.
    ///
    /// # Errors
    /// A value of another type, a negative one or one above 4 294 967 295.
    pub fn u32(&mut self, key: &str, default: u32) -> Result<u32, CliError> {
        let v = self.u64(key, u64::from(default))?;
        u32::try_from(v).map_err(|_| self.error(key, format!("{v} is larger than {}", u32::MAX)))
    }

    /// A boolean parameter.
    ///
    /// # Errors
    /// A value of another type.
    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, CliError> {
        match self.take(key) {
            None => Ok(default),
            Some(toml::Value::Boolean(v)) => Ok(v),
            Some(v) => {
                Err(self.error(key, format!("expected true or false, found {}", v.type_str())))
            }
        }
    }

    /// A rate parameter written with a unit (`"40Mbps"`).
    ///
    /// # Errors
    /// A value that is not a string with a rate unit.
    pub fn rate(&mut self, key: &str, default: BitsPerSec) -> Result<BitsPerSec, CliError> {
        match self.take(key) {
            None => Ok(default),
            Some(toml::Value::String(s)) => {
                units::parse_rate(&s).map_err(|e| self.error(key, e.to_string()))
            }
            Some(v) => Err(self.error(
                key,
                format!("expected a rate with a unit such as \"40Mbps\", found {}", v.type_str()),
            )),
        }
    }

    /// A rate parameter whose default depends on the NIC line rate (`None`).
    ///
    /// # Errors
    /// As [`CcParams::rate`].
    pub fn opt_rate(
        &mut self,
        key: &str,
        default: Option<BitsPerSec>,
    ) -> Result<Option<BitsPerSec>, CliError> {
        if self.params.iter().any(|p| p.key == key) {
            self.rate(key, BitsPerSec(0)).map(Some)
        } else {
            Ok(default)
        }
    }

    /// A duration parameter written with a unit (`"55us"`).
    ///
    /// # Errors
    /// A value that is not a string with a time unit.
    pub fn duration(&mut self, key: &str, default: Duration) -> Result<Duration, CliError> {
        match self.take(key) {
            None => Ok(default),
            Some(toml::Value::String(s)) => {
                units::parse_duration(&s).map_err(|e| self.error(key, e.to_string()))
            }
            Some(v) => {
                Err(self.error(key, format!("needs a unit, e.g. \"1us\" (found {})", v.type_str())))
            }
        }
    }

    /// Turns a scheme's own validation error into one that points at the parameter: the
    /// first of the scheme's `valid` parameter names that the message mentions and the
    /// scenario sets (the plugins' messages start with the field's name), else `cc.name`.
    ///
    /// # Errors
    /// `result`'s error, with file, line and field.
    pub fn check(&self, result: Result<(), String>, valid: &[&str]) -> Result<(), CliError> {
        let Err(message) = result else { return Ok(()) };
        let mentioned = |name: &str| {
            message.match_indices(name).any(|(i, _)| {
                let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
                let before = message[..i].chars().next_back().is_none_or(|c| !ident(c));
                let after = message[i + name.len()..].chars().next().is_none_or(|c| !ident(c));
                before && after
            })
        };
        let set = valid
            .iter()
            .filter(|n| mentioned(n))
            .find(|n| self.params.iter().any(|p| p.key == **n));
        Err(match set {
            Some(key) => self.error(key, message),
            None => self.src.error_at(
                self.span("name"),
                "cc.name",
                format!("scheme \"{}\": {message}", self.scheme),
            ),
        })
    }

    /// Rejects every parameter no getter asked for, listing the scheme's `valid` parameters.
    ///
    /// # Errors
    /// The first unused parameter (in key order).
    pub fn finish(&self, valid: &[&str]) -> Result<(), CliError> {
        if let Some(p) = self.params.iter().find(|p| !p.used) {
            let list = if valid.is_empty() {
                "none".to_string()
            } else {
                valid.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
            };
            return Err(self.error(
                &p.key,
                format!(
                    "unknown parameter `{}` for scheme \"{}\" (its parameters: {list})",
                    p.key, self.scheme
                ),
            ));
        }
        Ok(())
    }

    fn unknown_scheme(&self, name: &str) -> CliError {
        self.src.error_at(self.span("name"), "cc.name".to_string(), unknown_scheme_message(name))
    }
}

/// `unknown scheme "x" (valid schemes: none, ...)`, or for a [`RESERVED`] name
/// `scheme "x" is not available yet (valid schemes: ...)`.
pub(crate) fn unknown_scheme_message(name: &str) -> String {
    if RESERVED.contains(&name) {
        format!("scheme \"{name}\" is not available yet (valid schemes: {})", SCHEMES.join(", "))
    } else {
        format!("unknown scheme \"{name}\" (valid schemes: {})", SCHEMES.join(", "))
    }
}
