//! placeholder
#![warn(missing_docs)]
pub mod approx;
pub mod error;
mod hash;
pub mod path;
pub mod stats;
pub use error::PintError;
