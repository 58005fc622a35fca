//! Figures with `plotters`: slowdown by flow size (categorical x axis labelled like the HPCC
//! figures, one line per scheme) and CDFs of FCT or slowdown (log x axis), as PNG or SVG.
//!
//! PNG text is rendered with the DejaVu Sans font bundled in the crate (`fonts/`, Bitstream
//! Vera license), registered with plotters' `ab_glyph` backend on first use, so no system
//! font library is needed. SVG files name the `sans-serif` family and leave rendering to the
//! viewer (the bundled font still measures their text for the layout).

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::error::AnalysisError;
use crate::fct::FctRow;
use crate::stats::{Bucket, Percentiles};

/// The bundled font (DejaVu Sans 2.37).
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// Figure size in pixels (SVG user units).
const SIZE: (u32, u32) = (900, 560);

/// At most this many points per CDF line (evenly spaced in rank).
const CDF_POINTS: usize = 1000;

/// Line colours, cycled by series index (matplotlib's "tab10").
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn ensure_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            panic!("the bundled DejaVu Sans font is a valid TrueType font");
        }
    });
}

/// Which slowdown percentile a by-size figure shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowdownPercentile {
    /// Median.
    P50,
    /// 95th percentile.
    P95,
    /// 99th percentile.
    P99,
}

impl SlowdownPercentile {
    /// All three, in order.
    pub const ALL: [SlowdownPercentile; 3] =
        [SlowdownPercentile::P50, SlowdownPercentile::P95, SlowdownPercentile::P99];

    /// The value from a bucket's percentiles.
    pub fn of(self, p: &Percentiles) -> f64 {
        match self {
            SlowdownPercentile::P50 => p.p50,
            SlowdownPercentile::P95 => p.p95,
            SlowdownPercentile::P99 => p.p99,
        }
    }

    /// Short name: `p50`, `p95`, `p99`.
    pub fn name(self) -> &'static str {
        match self {
            SlowdownPercentile::P50 => "p50",
            SlowdownPercentile::P95 => "p95",
            SlowdownPercentile::P99 => "p99",
        }
    }

    /// Axis wording: `50th-percentile`, ...
    fn ordinal(self) -> &'static str {
        match self {
            SlowdownPercentile::P50 => "50th-percentile",
            SlowdownPercentile::P95 => "95th-percentile",
            SlowdownPercentile::P99 => "99th-percentile",
        }
    }
}

/// The quantity on the x axis of a CDF figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdfMetric {
    /// Flow completion time, in microseconds.
    Fct,
    /// Slowdown (FCT / ideal FCT, at least 1).
    Slowdown,
}

impl CdfMetric {
    fn value(self, r: &FctRow) -> f64 {
        match self {
            CdfMetric::Fct => r.fct_ns / 1e3,
            CdfMetric::Slowdown => r.slowdown(),
        }
    }
    fn axis(self) -> &'static str {
        match self {
            CdfMetric::Fct => "FCT (µs, log scale)",
            CdfMetric::Slowdown => "Slowdown (log scale)",
        }
    }
    /// Short name: `fct` or `slowdown`.
    pub fn name(self) -> &'static str {
        match self {
            CdfMetric::Fct => "fct",
            CdfMetric::Slowdown => "slowdown",
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Format {
    Png,
    Svg,
}

pub(crate) fn format_of(path: &Path) -> Result<Format, AnalysisError> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => Err(AnalysisError::UnsupportedPlotFormat(path.to_path_buf())),
    }
}

pub(crate) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A figure that can be drawn on any backend.
pub(crate) trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// Draws `fig` on a PNG or SVG backend chosen by the file extension and writes the file.
fn render(path: &Path, fig: &impl Figure) -> Result<(), AnalysisError> {
    render_sized(path, SIZE, fig)
}

/// [`render`] with a figure size in pixels (SVG user units).
pub(crate) fn render_sized(
    path: &Path,
    size: (u32, u32),
    fig: &impl Figure,
) -> Result<(), AnalysisError> {
    let err = |e: &dyn std::fmt::Display| AnalysisError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let format = format_of(path)?;
    // Both backends lay text out with the font (the SVG one to measure labels and legends).
    ensure_font();
    match format {
        Format::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            fig.draw(&root).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        }
        Format::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            fig.draw(&root).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        }
    }
}

/// Plots one slowdown percentile against flow size, one line (with markers) per scheme, to
/// `path` (`.png` or `.svg`).
///
/// The x axis is categorical: one tick per bucket, labelled with the first scheme's bucket
/// labels (as in the reference, buckets of different schemes are matched by position; a
/// scheme with more buckets supplies the extra labels). Empty buckets leave a gap in the line.
/// The y axis is linear from 0; the legend is in the upper right corner.
///
/// # Errors
/// [`AnalysisError::UnsupportedPlotFormat`], [`AnalysisError::NothingToPlot`] when no bucket
/// of any scheme has flows, or [`AnalysisError::Plot`] when drawing or writing fails.
pub fn plot_slowdown_by_size(
    series: &[(&str, &[Bucket])],
    pct: SlowdownPercentile,
    title: &str,
    path: &Path,
) -> Result<(), AnalysisError> {
    format_of(path)?;
    let n = series.iter().map(|(_, b)| b.len()).max().unwrap_or(0);
    let labels: Vec<String> = (0..n)
        .map(|i| {
            series.iter().find_map(|(_, b)| b.get(i).map(|b| b.label.clone())).unwrap_or_default()
        })
        .collect();
    let ymax = series
        .iter()
        .flat_map(|(_, b)| b.iter().filter_map(|b| b.slowdown.as_ref().map(|p| pct.of(p))))
        .fold(f64::NAN, f64::max);
    if ymax.is_nan() {
        return Err(AnalysisError::NothingToPlot(path.to_path_buf()));
    }
    let ytop = (ymax * 1.1).max(1.5);
    let y_desc = format!("{} slowdown", pct.ordinal());

    struct Fig<'a> {
        series: &'a [(&'a str, &'a [Bucket])],
        pct: SlowdownPercentile,
        title: &'a str,
        labels: Vec<String>,
        ytop: f64,
        y_desc: String,
    }
    impl Figure for Fig<'_> {
        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
            let Fig { series, pct, title, ref labels, ytop, ref y_desc } = *self;
            root.fill(&WHITE)?;
            let n = labels.len();
            let mut chart = ChartBuilder::on(root)
                .caption(title, ("sans-serif", 24))
                .margin(16)
                .x_label_area_size(56)
                .y_label_area_size(64)
                .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), 0.0..ytop)?;
            let fmt = |v: &SegmentValue<usize>| match v {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            };
            chart
                .configure_mesh()
                .disable_x_mesh()
                .light_line_style(WHITE.mix(0.0))
                .bold_line_style(BLACK.mix(0.12))
                .x_labels(n)
                .x_label_formatter(&fmt)
                .x_desc("Flow size (bytes)")
                .y_desc(y_desc)
                .y_label_formatter(&|v| format_tick(*v))
                .label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 17))
                .draw()?;
            for (si, (name, buckets)) in series.iter().enumerate() {
                let color = PALETTE[si % PALETTE.len()];
                let style = color.stroke_width(2);
                let points: Vec<Option<(SegmentValue<usize>, f64)>> = buckets
                    .iter()
                    .enumerate()
                    .map(|(i, b)| {
                        b.slowdown.as_ref().map(|p| (SegmentValue::CenterOf(i), pct.of(p)))
                    })
                    .collect();
                // Contiguous runs of non-empty buckets; the legend entry goes on the first run.
                let mut labelled = false;
                for run in points.split(Option::is_none).filter(|r| !r.is_empty()) {
                    let run: Vec<_> = run.iter().flatten().cloned().collect();
                    let ann = chart.draw_series(LineSeries::new(run.clone(), style))?;
                    if !labelled {
                        ann.label(*name).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                        });
                        labelled = true;
                    }
                    chart
                        .draw_series(run.into_iter().map(|p| Circle::new(p, 4, color.filled())))?;
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(("sans-serif", 16))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .draw()?;
            Ok(())
        }
    }

    render(path, &Fig { series, pct, title, labels, ytop, y_desc })
}

/// Up to [`CDF_POINTS`] points `(value, cumulative fraction)` of the empirical CDF of the
/// positive values, evenly spaced in rank and always including the largest.
fn cdf_points(mut values: Vec<f64>) -> Vec<(f64, f64)> {
    values.retain(|v| *v > 0.0 && v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let m = n.min(CDF_POINTS);
    (0..m)
        .map(|j| {
            let i = if m == 1 { n - 1 } else { j * (n - 1) / (m - 1) };
            (values[i], (i + 1) as f64 / n as f64)
        })
        .collect()
}

/// Plots the empirical CDF of FCT or slowdown, one line per scheme, x axis log-scaled, to
/// `path` (`.png` or `.svg`). Non-positive values (a zero FCT) cannot be shown on a log axis
/// and are left out.
///
/// # Errors
/// As [`plot_slowdown_by_size`]; [`AnalysisError::NothingToPlot`] when no scheme has a flow.
pub fn plot_cdf(
    series: &[(&str, &[FctRow])],
    metric: CdfMetric,
    title: &str,
    path: &Path,
) -> Result<(), AnalysisError> {
    format_of(path)?;
    let curves: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, rows)| (*name, cdf_points(rows.iter().map(|r| metric.value(r)).collect())))
        .collect();
    let all = curves.iter().flat_map(|(_, c)| c.iter().map(|p| p.0));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return Err(AnalysisError::NothingToPlot(path.to_path_buf()));
    }
    let (lo, hi) = if hi > lo * 1.01 { (lo / 1.1, hi * 1.1) } else { (lo / 2.0, lo * 10.0) };

    struct Fig<'a> {
        curves: Vec<(&'a str, Vec<(f64, f64)>)>,
        metric: CdfMetric,
        title: &'a str,
        lo: f64,
        hi: f64,
    }
    impl Figure for Fig<'_> {
        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
            let Fig { ref curves, metric, title, lo, hi } = *self;
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(root)
                .caption(title, ("sans-serif", 24))
                .margin(16)
                .x_label_area_size(56)
                .y_label_area_size(64)
                .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)?;
            chart
                .configure_mesh()
                .light_line_style(WHITE.mix(0.0))
                .bold_line_style(BLACK.mix(0.12))
                .x_desc(metric.axis())
                .y_desc("CDF")
                .x_label_formatter(&|v| format_tick(*v))
                .label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 17))
                .draw()?;
            for (si, (name, points)) in curves.iter().enumerate() {
                let color = PALETTE[si % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))?
                    .label(*name)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                    });
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .label_font(("sans-serif", 16))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .draw()?;
            Ok(())
        }
    }

    render(path, &Fig { curves, metric, title, lo, hi })
}

/// Tick text: integers without decimals, others with up to 3 decimals, trailing zeros
/// dropped; non-zero values below 0.001 in scientific notation (`5e-4`).
pub(crate) fn format_tick(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:.0e}")
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as u64)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Writes the standard figure set into `dir` and returns the files written, in order:
/// `{prefix}_p50`, `_p95`, `_p99` (slowdown by size, from `buckets`), then, if `rows` has any
/// flows, `{prefix}_cdf_fct` and `{prefix}_cdf_slowdown`; each as `.png` and `.svg`. Captions
/// are `title` followed by what the figure shows.
///
/// # Errors
/// The first error of [`plot_slowdown_by_size`] or [`plot_cdf`].
pub fn plot_all(
    buckets: &[(&str, &[Bucket])],
    rows: &[(&str, &[FctRow])],
    dir: &Path,
    prefix: &str,
    title: &str,
) -> Result<Vec<PathBuf>, AnalysisError> {
    let caption = |what: &str| caption(title, what);
    let mut written = Vec::new();
    for pct in SlowdownPercentile::ALL {
        for ext in ["png", "svg"] {
            let path = dir.join(format!("{prefix}_{}.{ext}", pct.name()));
            let what = format!("{} slowdown by flow size", pct.ordinal());
            plot_slowdown_by_size(buckets, pct, &caption(&what), &path)?;
            written.push(path);
        }
    }
    if rows.iter().any(|(_, r)| !r.is_empty()) {
        for metric in [CdfMetric::Fct, CdfMetric::Slowdown] {
            for ext in ["png", "svg"] {
                let path = dir.join(format!("{prefix}_cdf_{}.{ext}", metric.name()));
                let what = match metric {
                    CdfMetric::Fct => "CDF of FCT",
                    CdfMetric::Slowdown => "CDF of slowdown",
                };
                plot_cdf(rows, metric, &caption(what), &path)?;
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// A figure's caption: `title: what`, or `what` alone when there is no title.
pub(crate) fn caption(title: &str, what: &str) -> String {
    if title.is_empty() {
        what.to_string()
    } else {
        format!("{title}: {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_cdf_points() {
        assert_eq!(format_tick(100.0), "100");
        assert_eq!(format_tick(0.05), "0.05");
        assert_eq!(format_tick(2.5), "2.5");
        assert_eq!(format_tick(0.0005), "5e-4");
        assert_eq!(format_tick(0.0), "0");
        let p = cdf_points(vec![3.0, 1.0, 2.0, 0.0]);
        assert_eq!(p, [(1.0, 1.0 / 3.0), (2.0, 2.0 / 3.0), (3.0, 1.0)]);
        let p = cdf_points((1..=5000).map(f64::from).collect());
        assert_eq!(p.len(), CDF_POINTS);
        assert_eq!(p[0], (1.0, 1.0 / 5000.0));
        assert_eq!(p[CDF_POINTS - 1], (5000.0, 1.0));
    }
}
