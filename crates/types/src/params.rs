//! How a plugin (a congestion controller, a transport, a queue discipline) describes itself and
//! reads its parameters, without knowing the file format they came from.
//!
//! A plugin exports a [`PluginSpec`]: its name, a one-line summary and one [`ParamSpec`] per
//! parameter (name, [`Kind`], default as written in a scenario, meaning). A front end (the CLI
//! reads TOML) looks the spec up by name, rejects keys the spec does not list, converts each
//! given value to its kind (units included) and hands the plugin a [`Params`]. The plugin
//! builds itself with typed getters that take its defaults, checks ranges, and reports a
//! problem as a [`ParamError`] naming the parameter, which the front end turns into a located
//! error (file, line, column, field).
//!
//! ```
//! use dcsim_types::params::{Kind, ParamError, ParamSpec, Params, Value};
//! const SPEC: &[ParamSpec] = &[ParamSpec::new("gain", Kind::Number, "0.0625", "EWMA gain")];
//! fn gain(p: &Params) -> Result<f64, ParamError> {
//!     let g = p.f64("gain", 0.0625);
//!     if !(g > 0.0 && g <= 1.0) {
//!         return Err(ParamError::new("gain", format!("must be in (0, 1], got {g}")));
//!     }
//!     Ok(g)
//! }
//! assert_eq!(gain(&Params::default()), Ok(0.0625));
//! let p = Params::from_values(SPEC, vec![("gain", Value::Number(2.0))]);
//! assert_eq!(gain(&p).unwrap_err().field, "gain");
//! ```

use std::fmt;

use crate::units::{BitsPerSec, Bytes, Duration};

/// A number as an error message shows it: plainly (`0.95`, `1500`), or in scientific notation
/// when that would take dozens of digits (`1e300`, `1e-300` printed 300 digits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v.is_finite() && v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
            write!(f, "{v:e}")
        } else {
            write!(f, "{v}")
        }
    }
}

/// The type of a parameter's value, which fixes how a front end parses it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A real number (an integer is accepted too).
    Number,
    /// A non-negative integer.
    Integer,
    /// `true` or `false`.
    Bool,
    /// A rate with a unit (`"40Mbps"`).
    Rate,
    /// A duration with a unit (`"5ms"`).
    Duration,
    /// A byte count, with or without a unit (`1514`, `"32MiB"`).
    Size,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Number => f.write_str("number"),
            Kind::Integer => f.write_str("non-negative integer"),
            Kind::Bool => f.write_str("true or false"),
            Kind::Rate => f.write_str("rate, e.g. \"40Mbps\""),
            Kind::Duration => f.write_str("duration, e.g. \"5ms\""),
            Kind::Size => f.write_str("size in bytes, e.g. 1514 or \"32MiB\""),
            Kind::Choice(words) => write!(f, "one of {}", words.join(", ")),
        }
    }
}

/// One parameter of a plugin.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ParamSpec {
    /// The key as written in a scenario.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// The default, as a scenario would write it (documentation only).
    pub default: &'static str,
    /// What it means.
    pub doc: &'static str,
}

impl ParamSpec {
    /// A parameter description (usable in `const` tables).
    pub const fn new(
        name: &'static str,
        kind: Kind,
        default: &'static str,
        doc: &'static str,
    ) -> ParamSpec {
        ParamSpec { name, kind, default, doc }
    }
}

/// What a plugin is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PluginSpec {
    /// The name a scenario selects it by.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Its parameters.
    pub params: &'static [ParamSpec],
}

impl PluginSpec {
    /// The spec of parameter `name`, if the plugin has one.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }
    /// The parameter names, for "its parameters: ..." messages.
    pub fn param_names(&self) -> Vec<&'static str> {
        self.params.iter().map(|p| p.name).collect()
    }
}

/// A parameter value, already converted to its [`Kind`].
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Value {
    /// [`Kind::Number`].
    Number(f64),
    /// [`Kind::Integer`].
    Integer(u64),
    /// [`Kind::Bool`].
    Bool(bool),
    /// [`Kind::Rate`].
    Rate(BitsPerSec),
    /// [`Kind::Duration`].
    Duration(Duration),
    /// [`Kind::Size`].
    Size(Bytes),
    /// [`Kind::Choice`]: the word, from the spec's list.
    Choice(&'static str),
}

/// A problem with one parameter's value: which parameter, and what is wrong.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ParamError {
    /// The parameter's name (a key of the plugin's spec).
    pub field: &'static str,
    /// What is wrong, without the name.
    pub message: String,
}

impl ParamError {
    /// An error about parameter `field`.
    pub fn new(field: &'static str, message: impl Into<String>) -> ParamError {
        ParamError { field, message: message.into() }
    }
}

/// The parameters given to one plugin, already typed. Getters return the plugin's default for a
/// parameter that was not given.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Params {
    values: Vec<(&'static str, Value)>,
}

impl Params {
    /// Parameters from `(name, value)` pairs. Names must be in `spec` with values of the
    /// spec's kind (a front end guarantees it; this is checked in debug builds).
    pub fn from_values(spec: &[ParamSpec], values: Vec<(&'static str, Value)>) -> Params {
        for (name, v) in &values {
            let s = spec.iter().find(|s| s.name == *name);
            debug_assert!(s.is_some(), "parameter {name} is not in the spec");
            if let Some(s) = s {
                debug_assert!(
                    kind_matches(s.kind, v),
                    "parameter {name}: {v:?} is not a {}",
                    s.kind
                );
            }
        }
        Params { values }
    }

    /// Whether parameter `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| *n == name)
    }

    /// The value given for `name`, if any.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// The given names, in the order given.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.iter().map(|(n, _)| *n)
    }

    /// A [`Kind::Number`] parameter.
    pub fn f64(&self, name: &str, default: f64) -> f64 {
        match self.get(name) {
            Some(Value::Number(v)) => v,
            Some(Value::Integer(v)) => v as f64,
            _ => default,
        }
    }
    /// A [`Kind::Integer`] parameter.
    pub fn u64(&self, name: &str, default: u64) -> u64 {
        match self.get(name) {
            Some(Value::Integer(v)) => v,
            _ => default,
        }
    }
    /// A [`Kind::Integer`] parameter that must fit in 32 bits.
    ///
    /// # Errors
    /// A value above `u32::MAX`.
    pub fn u32(&self, name: &'static str, default: u32) -> Result<u32, ParamError> {
        let v = self.u64(name, u64::from(default));
        u32::try_from(v)
            .map_err(|_| ParamError::new(name, format!("{v} is larger than {}", u32::MAX)))
    }
    /// A [`Kind::Bool`] parameter.
    pub fn bool(&self, name: &str, default: bool) -> bool {
        match self.get(name) {
            Some(Value::Bool(v)) => v,
            _ => default,
        }
    }
    /// A [`Kind::Rate`] parameter.
    pub fn rate(&self, name: &str, default: BitsPerSec) -> BitsPerSec {
        match self.get(name) {
            Some(Value::Rate(v)) => v,
            _ => default,
        }
    }
    /// A [`Kind::Rate`] parameter whose default is decided later (`None`).
    pub fn opt_rate(&self, name: &str, default: Option<BitsPerSec>) -> Option<BitsPerSec> {
        match self.get(name) {
            Some(Value::Rate(v)) => Some(v),
            _ => default,
        }
    }
    /// A [`Kind::Duration`] parameter.
    pub fn duration(&self, name: &str, default: Duration) -> Duration {
        match self.get(name) {
            Some(Value::Duration(v)) => v,
            _ => default,
        }
    }
    /// A [`Kind::Size`] parameter.
    pub fn size(&self, name: &str, default: Bytes) -> Bytes {
        match self.get(name) {
            Some(Value::Size(v)) => v,
            _ => default,
        }
    }
    /// A [`Kind::Choice`] parameter.
    pub fn choice(&self, name: &str, default: &'static str) -> &'static str {
        match self.get(name) {
            Some(Value::Choice(v)) => v,
            _ => default,
        }
    }
}

/// Whether `v` is a value of kind `k`.
pub fn kind_matches(k: Kind, v: &Value) -> bool {
    matches!(
        (k, v),
        (Kind::Number, Value::Number(_) | Value::Integer(_))
            | (Kind::Integer, Value::Integer(_))
            | (Kind::Bool, Value::Bool(_))
            | (Kind::Rate, Value::Rate(_))
            | (Kind::Duration, Value::Duration(_))
            | (Kind::Size, Value::Size(_))
    ) || matches!((k, v), (Kind::Choice(words), Value::Choice(w)) if words.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_stay_short() {
        let show = |v: f64| Num(v).to_string();
        assert_eq!(show(0.95), "0.95");
        assert_eq!(show(1500.0), "1500");
        assert_eq!(show(0.0), "0");
        assert_eq!(show(1e300), "1e300");
        assert_eq!(show(-2.5e-300), "-2.5e-300");
        assert_eq!(show(f64::NAN), "NaN");
        assert_eq!(show(f64::INFINITY), "inf");
    }

    const SPEC: &[ParamSpec] = &[
        ParamSpec::new("a", Kind::Number, "1", ""),
        ParamSpec::new("n", Kind::Integer, "2", ""),
        ParamSpec::new("mode", Kind::Choice(&["x", "y"]), "x", ""),
    ];

    #[test]
    fn getters_take_the_default_for_absent_parameters() {
        let p = Params::from_values(SPEC, vec![("n", Value::Integer(7))]);
        assert_eq!(p.f64("a", 1.5), 1.5);
        assert_eq!(p.u64("n", 2), 7);
        assert_eq!(p.choice("mode", "x"), "x");
        assert!(p.has("n") && !p.has("a"));
    }

    #[test]
    fn u32_rejects_values_that_do_not_fit() {
        let p = Params::from_values(SPEC, vec![("n", Value::Integer(1 << 40))]);
        let e = p.u32("n", 0).unwrap_err();
        assert_eq!(e.field, "n");
        assert!(e.message.contains("larger than"));
    }

    #[test]
    fn kinds_match_values() {
        assert!(kind_matches(Kind::Number, &Value::Integer(3)));
        assert!(!kind_matches(Kind::Integer, &Value::Number(3.0)));
        assert!(kind_matches(Kind::Choice(&["x"]), &Value::Choice("x")));
        assert!(!kind_matches(Kind::Choice(&["x"]), &Value::Choice("z")));
    }
}
