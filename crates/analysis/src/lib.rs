//! FCT analysis for dcsim: slowdown percentiles per flow-size bucket, summaries, tables, CSV
//! and plots.
//!
//! The pipeline: [`read_fct_csv`] (dcsim's `fct.csv`) → [`buckets_by_quantile`] (equal-count
//! buckets like the reference `fct_analysis.py`, but keeping the largest flow) or
//! [`buckets_by_size`] (fixed thresholds such as [`WEBSEARCH_SIZE_EDGES`]) and [`summarize`]
//! → [`buckets_table`] / [`summary_table`] for a terminal, [`buckets_csv`] / [`summary_csv`]
//! for files, [`plot_slowdown_by_size`] / [`plot_cdf`] / [`plot_all`] for figures.
//! [`plot_lines`] draws generic line charts (panels of solid and dashed lines, linear or log
//! axes) for the other experiment figures. The FCT-harm experiment (ccafct) has its own
//! statistics, tables and figures: [`FctStats`], [`harm`], [`harm_table`], [`aggregate_seeds`],
//! [`plot_harm_all`]. Queue lengths (`qlen_hist.csv`) pool into a [`PooledBacklog`] (percentiles,
//! mean, CDF) drawn by [`qlen_cdf_chart`].
//!
//! Definitions (HPCC, spec §8): slowdown = `max(1, FCT / ideal FCT)`; the p-th percentile of
//! `n` sorted values is the element at index `floor(n · p)` ([`percentile`]).
//!
//! Unlike the workload and simulation crates, this crate reads and writes files: the FCT
//! reader and the plot writers take paths (plotters writes images itself).
//!
//! ```
//! use dcsim_analysis::{buckets_by_quantile, parse_fct_csv, summarize};
//! let csv = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns\n\
//!            0,0,1,1000,0,200,100\n1,0,1,5000,0,300,300\n";
//! let rows = parse_fct_csv(csv.as_bytes(), "fct.csv").unwrap();
//! let buckets = buckets_by_quantile(&rows, 50).unwrap();
//! assert_eq!(buckets[0].slowdown.unwrap().p50, 2.0);
//! assert_eq!(buckets[1].label, "5K");
//! assert_eq!(summarize(&rows).groups[0].count, 2);
//! ```
#![warn(missing_docs)]

mod chart;
mod error;
mod fct;
mod harm;
mod plot;
mod qlen;
mod report;
mod stats;

pub use chart::{plot_lines, Axis, Dash, Legend, Line, LineChart, Panel};
pub use error::AnalysisError;
pub use fct::{
    parse_fct_csv, read_fct_csv, use_reference_ideal, FctRow, OPTIONAL_COLUMNS, REQUIRED_COLUMNS,
};
pub use harm::{
    aggregate_seeds, geomean, harm, harm_ci_table, harm_csv, harm_more_is_better, harm_summary_csv,
    harm_table, plot_fct_vs_rtt, plot_harm_all, plot_harm_vs_rtt, quantile_empirical, FctHarm,
    FctStats, HarmRow, HarmStatistic, HarmSummary, MeanCi, CI_LEVEL, HARM_CSV_COLUMNS, SOLO_CCA,
};
pub use plot::{plot_all, plot_cdf, plot_slowdown_by_size, CdfMetric, SlowdownPercentile};
pub use qlen::{
    qlen_cdf_chart, qlen_summary_csv, qlen_summary_row, qlen_table, PooledBacklog,
    QLEN_SUMMARY_COLUMNS,
};
pub use report::{buckets_csv, buckets_table, reference_table, summary_csv, summary_table};
pub use stats::{
    buckets_by_quantile, buckets_by_size, percentile, size_label, summarize, Bucket, GroupStats,
    GroupSummary, Percentiles, Summary, HADOOP_SIZE_EDGES, LARGE_FLOW_BYTES, SMALL_FLOW_BYTES,
    WEBSEARCH_SIZE_EDGES,
};
