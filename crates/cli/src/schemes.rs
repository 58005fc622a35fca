//! The congestion-control scheme registry: scheme names as written in `[cc] name = ...`, their
//! parameters, and the static dispatch from a [`CcChoice`] to the generic [`run`].
//!
//! # Adding a scheme
//! 1. add its name to [`SCHEMES`];
//! 2. add a variant holding its factory to [`CcChoice`] and its name to [`CcChoice::name`];
//! 3. add a match arm to `CcChoice::from_params` that reads its parameters with
//!    [`CcParams`] (each getter takes the default) and ends with [`CcParams::finish`];
//! 4. add a match arm to [`run_with_scheme`] calling [`run`] with the factory.

use std::ops::Range;
use std::time::Instant;

use dcsim_core::cc::{CcFactory, NoCcFactory};
use dcsim_core::config::{FlowSpec, SimConfig};
use dcsim_core::network::{Network, RoutingTable};
use dcsim_core::units::{BitsPerSec, Duration};
use dcsim_core::{Counters, FlowResult, RunSummary, SimError, Simulation};

use crate::error::CliError;
use crate::scenario::Source;
use crate::units;

/// Every scheme name `[cc] name` accepts.
pub const SCHEMES: &[&str] = &["none"];

/// A congestion-control scheme chosen by a scenario, with its parameters applied.
#[derive(Clone, Debug)]
pub enum CcChoice {
    /// `none`: line rate, no reaction to congestion.
    None(NoCcFactory),
}

impl CcChoice {
    /// The scheme's name as written in scenarios.
    pub fn name(&self) -> &'static str {
        match self {
            CcChoice::None(_) => "none",
        }
    }

    /// Builds the scheme `name` from its parameters. `name` must be one of [`SCHEMES`].
    pub(crate) fn from_params(name: &str, params: CcParams<'_>) -> Result<CcChoice, CliError> {
        match name {
            "none" => {
                params.finish(&[])?;
                Ok(CcChoice::None(NoCcFactory))
            }
            other => Err(params.unknown_scheme(other)),
        }
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
}

/// Runs the scenario with the chosen scheme (one match arm per scheme).
///
/// # Errors
/// The simulator's own validation ([`Simulation::new`]); a scenario that passed the loader's
/// validation should not trigger it.
pub fn run_with_scheme(choice: CcChoice, input: SimInput) -> Result<RunOutput, SimError> {
    match choice {
        CcChoice::None(f) => run(f, input),
    }
}

/// Builds and runs a simulation with `factory`.
///
/// # Errors
/// See [`run_with_scheme`].
pub fn run<F: CcFactory>(factory: F, input: SimInput) -> Result<RunOutput, SimError> {
    let SimInput { net, routes, cfg, flows } = input;
    let mut sim = Simulation::new(net, routes, cfg, flows, factory)?;
    let t0 = Instant::now();
    let summary = sim.run();
    let wall = t0.elapsed();
    Ok(RunOutput { summary, results: sim.flow_results().to_vec(), counters: *sim.counters(), wall })
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

    /// Rejects every parameter no getter asked for, listing the scheme's `valid` parameters.
    ///
    /// # Errors
    /// The first unused parameter (in key order).
    pub fn finish(self, valid: &[&str]) -> Result<(), CliError> {
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

/// "unknown scheme "x" (valid schemes: none, ...)".
pub(crate) fn unknown_scheme_message(name: &str) -> String {
    format!("unknown scheme \"{name}\" (valid schemes: {})", SCHEMES.join(", "))
}
