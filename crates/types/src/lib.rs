//! # dcsim-types
//!
//! The vocabulary shared by the event core (`dcsim-core`) and the protocol crates that plug into
//! it (`dcsim-aqm`, `dcsim-tcp`): integer picosecond [`units`] and the two-bit IP [`ecn`]
//! codepoint. It depends on nothing, so a queue discipline or a transport can be written and
//! tested without the engine.
#![warn(missing_docs)]

pub mod ecn;
pub mod params;
pub mod text;
pub mod units;

pub use ecn::Ecn;
pub use params::{Kind, ParamError, ParamSpec, Params, PluginSpec, Value};
pub use units::{BitsPerSec, Bytes, Duration, Time};
