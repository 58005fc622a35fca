//! The one error type of this crate: invalid parameters, reported where a codec, scheme,
//! sketch or experiment is built (nothing fails after construction).

use std::fmt;

/// A parameter that cannot be used, with the offending value.
#[derive(Debug, Clone, PartialEq)]
pub enum PintError {
    /// The multiplicative error target ε must be finite and positive.
    InvalidEps(f64),
    /// A logarithm base must be finite and greater than 1.
    InvalidBase(f64),
    /// The additive error target Δ must be at least 1.
    InvalidDelta,
    /// A value range `[1, max]` cannot be compressed into `bits` bits (needs `max > 1` and
    /// `1 <= bits <= 31`), or `[min, max]` is empty.
    InvalidRange {
        /// Lower end of the range.
        min: f64,
        /// Upper end of the range.
        max: f64,
        /// The bit budget asked for.
        bits: u32,
    },
    /// A path-tracing bit budget must split evenly into instances of 1 to 32 bits each, with at
    /// most 64 bits in all.
    InvalidBudget {
        /// Total bits per packet.
        bits: u32,
        /// Number of independent instances sharing them.
        instances: u32,
    },
    /// A path-tracing layer list must be non-empty, with finite non-negative weights summing
    /// to a positive number and XOR probabilities in `(0, 1]`.
    InvalidLayers(String),
    /// The path length must be at least 1.
    InvalidPathLength(usize),
    /// The decoder's universe of switch IDs is empty.
    EmptyUniverse,
    /// A switch ID of the true path is not in the decoder's universe.
    NotInUniverse(u32),
    /// A KLL sketch needs `k >= 2` (and a memory budget of at least 8 items).
    InvalidSketch(usize),
    /// A code histogram's byte budget must hold at least two buckets of `bits + 16` bits, and
    /// codes have 1 to 31 bits.
    InvalidHistogram {
        /// The byte budget asked for.
        bytes: usize,
        /// Bits per code.
        bits: u32,
    },
    /// A quantile must lie in `[0, 1]`.
    InvalidQuantile(f64),
    /// An experiment parameter is out of range (the message names it).
    InvalidExperiment(String),
}

impl fmt::Display for PintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PintError::InvalidEps(e) => {
                write!(f, "multiplicative error target eps = {e} must be finite and > 0")
            }
            PintError::InvalidBase(b) => write!(f, "log base {b} must be finite and > 1"),
            PintError::InvalidDelta => write!(f, "additive error target delta must be >= 1"),
            PintError::InvalidRange { min, max, bits } => write!(
                f,
                "cannot compress the range [{min}, {max}] into {bits} bits \
                 (need min >= 1, max > min, 1 <= bits <= 31)"
            ),
            PintError::InvalidBudget { bits, instances } => write!(
                f,
                "a budget of {bits} bits does not split into {instances} instances of 1..=32 \
                 bits each (total <= 64)"
            ),
            PintError::InvalidLayers(why) => write!(f, "invalid path-tracing layers: {why}"),
            PintError::InvalidPathLength(k) => write!(f, "path length {k} must be >= 1"),
            PintError::EmptyUniverse => write!(f, "the universe of switch IDs is empty"),
            PintError::NotInUniverse(id) => {
                write!(f, "switch ID {id} of the path is not in the decoder's universe")
            }
            PintError::InvalidSketch(k) => {
                write!(f, "KLL sketch parameter {k} is too small (k >= 2, budget >= 8)")
            }
            PintError::InvalidHistogram { bytes, bits } if (1..=31).contains(bits) => write!(
                f,
                "a histogram of {bytes} bytes holds fewer than two buckets of {bits}-bit codes \
                 ({} bytes needed)",
                crate::hist::min_bytes(*bits)
            ),
            PintError::InvalidHistogram { bits, .. } => {
                write!(f, "{bits}-bit codes: a histogram's codes have 1..=31 bits")
            }
            PintError::InvalidQuantile(q) => write!(f, "quantile {q} must lie in [0, 1]"),
            PintError::InvalidExperiment(why) => write!(f, "invalid experiment: {why}"),
        }
    }
}

impl std::error::Error for PintError {}
