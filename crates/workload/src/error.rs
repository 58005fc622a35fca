//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong when parsing a CDF or configuring a generator.
///
/// CDF errors carry the 1-based line number of the offending line of the CDF text (blank and
/// `#` comment lines count, so the number matches what an editor shows). The caller that read
/// the text from a file adds the file name.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorkloadError {
    /// A CDF line is not two numbers.
    #[error("line {line}: expected `<size> <cumulative percent>`, found {text:?}")]
    CdfSyntax {
        /// 1-based line number.
        line: usize,
        /// The line as written.
        text: String,
    },
    /// A CDF number is NaN, infinite or negative.
    #[error("line {line}: {column} must be a finite number >= 0, found {value}")]
    CdfBadNumber {
        /// 1-based line number.
        line: usize,
        /// `size` or `percent`.
        column: &'static str,
        /// The value read.
        value: f64,
    },
    /// The CDF has fewer than two points.
    #[error(
        "a CDF needs at least two points (the first at 0 %, the last at 100 %), found {found}"
    )]
    CdfTooFewPoints {
        /// Number of points found.
        found: usize,
    },
    /// The first point's percentile is not 0.
    #[error("line {line}: the first point must be at 0 %, found {percent} %")]
    CdfFirstNotZero {
        /// 1-based line number.
        line: usize,
        /// The percentile found.
        percent: f64,
    },
    /// The last point's percentile is not 100.
    #[error("line {line}: the last point must be at 100 %, found {percent} %")]
    CdfLastNotHundred {
        /// 1-based line number.
        line: usize,
        /// The percentile found.
        percent: f64,
    },
    /// A column does not strictly increase.
    #[error("line {line}: {column} must strictly increase, but {value} follows {previous}")]
    CdfNotIncreasing {
        /// 1-based line number.
        line: usize,
        /// `size` or `percent`.
        column: &'static str,
        /// The previous point's value.
        previous: f64,
        /// This point's value.
        value: f64,
    },
    /// No built-in workload has this name.
    #[error("unknown built-in workload {name:?}; known: {}", known.join(", "))]
    UnknownWorkload {
        /// The name asked for.
        name: String,
        /// The built-in names.
        known: Vec<&'static str>,
    },
    /// A load outside (0, 1).
    #[error("load must be in (0, 1) exclusive, found {0}")]
    InvalidLoad(f64),
    /// An incast fraction outside (0, 1).
    #[error("incast fraction of capacity must be in (0, 1) exclusive, found {0}")]
    InvalidFraction(f64),
    /// Fewer hosts than the generator needs.
    #[error("{what} needs at least {needed} hosts, found {found}")]
    TooFewHosts {
        /// Which generator.
        what: &'static str,
        /// Hosts needed.
        needed: usize,
        /// Hosts given.
        found: usize,
    },
    /// A host is listed twice.
    #[error("host {0} is listed more than once")]
    DuplicateHost(u32),
    /// A zero host rate.
    #[error("host rate must be > 0")]
    ZeroRate,
    /// A zero incast flow size or sender count.
    #[error("{0} must be > 0")]
    Zero(&'static str),
    /// The fixed incast receiver is not one of the hosts.
    #[error("incast receiver {0} is not one of the hosts")]
    ReceiverNotAHost(u32),
    /// The mean gap between arrivals would be under 1 ns; gaps are whole nanoseconds, so the
    /// generator could not reach the requested rate.
    #[error(
        "mean inter-arrival time {mean_ns} ns is under 1 ns (gaps are whole nanoseconds); \
         lower the load or use larger flows"
    )]
    InterArrivalTooShort {
        /// The mean inter-arrival time in nanoseconds.
        mean_ns: f64,
    },
}
