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
    /// A CDF size beyond [`crate::MAX_CDF_SIZE`].
    #[error("line {line}: size must be at most 2^62 bytes (4.6 EB), found {value:e}")]
    CdfSizeTooLarge {
        /// 1-based line number.
        line: usize,
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
    /// A generator would make more flows than the limit it was given.
    #[error("more than {limit} flows")]
    TooManyFlows {
        /// The limit.
        limit: usize,
    },
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

/// Where in a CDF text an error points ([`WorkloadError::cdf_position`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdfPos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters) where the offending token starts.
    pub col: usize,
    /// What the token is: `point[i]`, `point[i].size` or `point[i].percent` (`i` counts the
    /// points from 0, skipping blank and comment lines).
    pub field: String,
}

impl WorkloadError {
    /// The message without its `line N: ` prefix (for front ends that print the position
    /// themselves).
    pub fn detail(&self) -> String {
        let s = self.to_string();
        if let Some((num, msg)) = s.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
            if num.parse::<usize>().is_ok() {
                return msg.to_string();
            }
        }
        s
    }

    /// For an error of [`crate::Cdf::parse`] on `text`: the line, the column where the
    /// offending token starts and the field. `None` for other errors and for errors about the
    /// whole CDF (too few points).
    pub fn cdf_position(&self, text: &str) -> Option<CdfPos> {
        let (line, token) = match self {
            WorkloadError::CdfSyntax { line, .. } => (*line, None),
            WorkloadError::CdfBadNumber { line, column, .. }
            | WorkloadError::CdfNotIncreasing { line, column, .. } => {
                (*line, Some(usize::from(*column == "percent")))
            }
            WorkloadError::CdfSizeTooLarge { line, .. } => (*line, Some(0)),
            WorkloadError::CdfFirstNotZero { line, .. }
            | WorkloadError::CdfLastNotHundred { line, .. } => (*line, Some(1)),
            _ => return None,
        };
        let raw = text.lines().nth(line.checked_sub(1)?)?;
        let point = text
            .lines()
            .take(line - 1)
            .filter(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#')
            })
            .count();
        // (column, text) of each whitespace-separated token.
        let toks = dcsim_core::text::tokens(raw);
        const NAMES: [&str; 2] = ["size", "percent"];
        let token = token.or_else(|| {
            // A syntax error: a token that is not a number, or one too many.
            if toks.len() == 2 {
                toks.iter().position(|t| t.1.parse::<f64>().is_err())
            } else {
                None
            }
        });
        let (col, field) = match token {
            Some(i) => (toks.get(i).map_or(1, |t| t.0), format!("point[{point}].{}", NAMES[i])),
            None if toks.len() > 2 => (toks[2].0, format!("point[{point}]")),
            None => (1, format!("point[{point}]")),
        };
        Some(CdfPos { line, col, field })
    }
}
