//! The crate's error type.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong reading FCT files, bucketing or plotting.
///
/// Errors about input files name the file (as given by the caller) and, where there is one,
/// the 1-based line.
#[derive(Debug, Error)]
pub enum AnalysisError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The CSV layer failed (malformed quoting, ragged rows, bad UTF-8).
    #[error("{file}: {message}")]
    Csv {
        /// The file.
        file: String,
        /// The CSV reader's message.
        message: String,
    },
    /// Required columns are missing from the header.
    #[error("{file}: missing column(s) {} in the header", columns.join(", "))]
    MissingColumns {
        /// The file.
        file: String,
        /// The missing column names, in the order of the expected header.
        columns: Vec<String>,
    },
    /// A field is not a valid value for its column.
    #[error("{file}:{line}: column {column}: {reason}, found {value:?}")]
    BadValue {
        /// The file.
        file: String,
        /// 1-based line number.
        line: u64,
        /// Column name.
        column: &'static str,
        /// The field as written.
        value: String,
        /// What is expected.
        reason: &'static str,
    },
    /// A flow listed twice (a file put together from several runs, or edited).
    #[error(
        "{file}:{line}: flow {flow_id} is listed again (first at line {first}); a fct.csv \
             lists each flow once"
    )]
    DuplicateFlow {
        /// The file.
        file: String,
        /// 1-based line number of the repeat.
        line: u64,
        /// The flow's id.
        flow_id: u64,
        /// 1-based line number where it was first listed.
        first: u64,
    },
    /// A quantile bucket step outside 1..=100 percent.
    #[error("bucket step must be 1..=100 percent, found {0}")]
    InvalidStep(u32),
    /// Size-bucket edges that are empty or not strictly increasing.
    #[error("size bucket edges must be non-empty and strictly increasing, found {0:?}")]
    InvalidEdges(Vec<u64>),
    /// A row lacks the reference ideal FCT that was asked for.
    #[error("flow {flow_id} has no ref_ideal_fct_ns value")]
    MissingReferenceIdeal {
        /// The flow's id.
        flow_id: u64,
    },
    /// Nothing to plot.
    #[error("{0}: nothing to plot (no series or no flows)")]
    NothingToPlot(PathBuf),
    /// The plot file name has no `.png` or `.svg` extension.
    #[error("{}: plot files must end in .png or .svg", .0.display())]
    UnsupportedPlotFormat(PathBuf),
    /// The plotting library failed.
    #[error("{}: plotting failed: {message}", path.display())]
    Plot {
        /// The output file.
        path: PathBuf,
        /// The plotting library's message.
        message: String,
    },
}
