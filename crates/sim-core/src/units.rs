//! Simulated time, byte counts and link rates: re-exported from `dcsim-types`, where the
//! protocol crates (`dcsim-aqm`, `dcsim-tcp`) can use them without the engine. See
//! [`dcsim_types::units`] for the time resolution and the rounding rule.

pub use dcsim_types::units::*;
