//! [`CliError`], the one error type of the command line. Every variant that comes from user
//! input names the file, and where there is one the line (and column) and the field.

use std::io;
use std::path::PathBuf;

use crate::spans::LineCol;

/// Everything that can stop a `dcsim` command. `main` prints it after `error: ` and exits
/// with status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path as the user (or the scenario) gave it.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The scenario is not valid TOML, or does not have the expected shape (unknown key,
    /// wrong type). The message is the TOML parser's, prefixed with the field when known.
    #[error("{}:{at}: {}{message}", file.display(), field_prefix(field.as_deref()))]
    Toml {
        /// The scenario file.
        file: PathBuf,
        /// Where the parser stopped.
        at: LineCol,
        /// The dotted path of the key or value there, if known.
        field: Option<String>,
        /// The parser's message (made single-line).
        message: String,
    },
    /// A value that parsed but is not acceptable, in the scenario or in a file it names (a
    /// topology, flow or CDF file: the field is then e.g. `link[3].rate`, `flow[2].size`,
    /// `point[4].percent`).
    #[error("{}:{at}: field `{field}`: {message}", file.display())]
    Field {
        /// The scenario file, or the topology, flow or CDF file.
        file: PathBuf,
        /// Where the value is (the column where its token starts).
        at: LineCol,
        /// Its dotted path, e.g. `flows.list[3].dst` or `link[3].rate`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A scenario problem that has no position (a missing section).
    #[error("{}: {message}", file.display())]
    Scenario {
        /// The scenario file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The simulator refused the validated scenario (a validation gap: please report it).
    #[error("{}: the simulator rejected the scenario: {source}", file.display())]
    Simulation {
        /// The scenario file.
        file: PathBuf,
        /// The simulator's error.
        source: dcsim_core::SimError,
    },
    /// A problem on one line of an output or reference file read back: a reference config or
    /// FCT file, or an `fct.csv`.
    #[error("{}:{line}: {message}", file.display())]
    Line {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A problem with an input file as a whole (no single line to point at): e.g. a topology
    /// file whose hosts cannot reach each other, a CDF with one point.
    #[error("{}: {message}", file.display())]
    Input {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An FCT file could not be analyzed, or a figure could not be drawn (the message names
    /// the file, and the line where there is one).
    #[error("{0}")]
    Analysis(#[from] dcsim_analysis::AnalysisError),
    /// A sweep cell's scenario (the base scenario with the cell's axis values) is not valid.
    #[error("{}: cell {cell} ({values}): {message}", file.display())]
    Cell {
        /// The sweep file.
        file: PathBuf,
        /// The cell's name.
        cell: String,
        /// The cell's axis values, `key = value, ...`.
        values: String,
        /// What is wrong, naming the scenario field.
        message: String,
    },
    /// The worker threads could not be started.
    #[error("cannot start {jobs} worker threads: {message}")]
    Threads {
        /// Threads asked for.
        jobs: usize,
        /// The cause.
        message: String,
    },
    /// A command-line value that parsed but is out of range, e.g. `--k: path length 0 ...`.
    #[error("{option}: {message}")]
    BadOption {
        /// The option, e.g. `--k`.
        option: &'static str,
        /// What is wrong, naming the value.
        message: String,
    },
    /// The PINT library refused experiment parameters that passed validation (a validation
    /// gap: please report it).
    #[error("the PINT library rejected the parameters: {0}")]
    Pint(#[from] dcsim_pint::PintError),
    /// An output file or directory could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

fn field_prefix(field: Option<&str>) -> String {
    match field {
        Some(f) => format!("field `{f}`: "),
        None => String::new(),
    }
}
