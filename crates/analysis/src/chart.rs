//! Generic line charts: one or more panels side by side, sharing their axes, each with lines of
//! `(x, y)` points (solid or dashed, coloured from the same palette as the FCT figures), with
//! linear or logarithmic axes, as PNG or SVG. The experiment figures that are not about FCTs
//! (the PINT path-tracing and latency results) are drawn with it.
//!
//! ```
//! use dcsim_analysis::{plot_lines, Axis, Dash, Legend, Line, LineChart, Panel};
//!
//! let chart = LineChart {
//!     title: "Packets to decode".into(),
//!     x: Axis::linear("Path length k"),
//!     y: Axis::log("Packets"),
//!     legend: Legend::UpperLeft,
//!     panels: vec![Panel {
//!         title: String::new(),
//!         lines: vec![
//!             Line::new("mean", vec![(5.0, 12.0), (10.0, 30.0)], 0, Dash::Solid),
//!             Line::new("p99", vec![(5.0, 25.0), (10.0, 70.0)], 0, Dash::Dashed),
//!         ],
//!     }],
//! };
//! let dir = tempfile::tempdir().unwrap();
//! plot_lines(&chart, &dir.path().join("packets.svg")).unwrap();
//! ```

use std::path::Path;

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::AnalysisError;
use crate::plot::{format_of, format_tick, render_sized, DrawResult, Figure, PALETTE};

/// How a line is stroked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    /// A continuous line, with filled point markers.
    Solid,
    /// A dashed line, with hollow point markers.
    Dashed,
}

/// One line of a [`Panel`].
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Legend text; `None` keeps the line out of the legend.
    pub label: Option<String>,
    /// The points, joined in this order. On a logarithmic axis, points with a coordinate that
    /// is not positive cannot be shown: they are left out and split the line.
    pub points: Vec<(f64, f64)>,
    /// Colour: an index into the palette (matplotlib's "tab10" without grey and olive), cycled.
    pub color: usize,
    /// Solid or dashed.
    pub dash: Dash,
}

impl Line {
    /// A line with a legend entry.
    pub fn new(
        label: impl Into<String>,
        points: Vec<(f64, f64)>,
        color: usize,
        dash: Dash,
    ) -> Line {
        Line { label: Some(label.into()), points, color, dash }
    }
}

/// One plot area of a [`LineChart`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Panel {
    /// Caption above the panel (may be empty).
    pub title: String,
    /// The lines, drawn in order (later lines on top).
    pub lines: Vec<Line>,
}

/// An axis: its description and scale. The range is computed from the data and shared by all
/// panels. A logarithmic axis labels its ticks at 1, 2 and 5 times a power of ten (only powers
/// of ten when it spans more than three decades); the grid keeps every tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Axis description.
    pub label: String,
    /// Logarithmic scale.
    pub log: bool,
    /// Label only integer ticks (for counts such as path lengths).
    pub integers: bool,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis { label: label.into(), log: false, integers: false }
    }

    /// A logarithmic axis.
    pub fn log(label: impl Into<String>) -> Axis {
        Axis { label: label.into(), log: true, integers: false }
    }

    /// The same axis, labelling only integer ticks.
    pub fn integers(self) -> Axis {
        Axis { integers: true, ..self }
    }

    /// The label of the tick at `v`; empty to leave it out.
    fn tick(&self, v: f64) -> String {
        if self.integers && (v - v.round()).abs() > 1e-9 {
            return String::new();
        }
        format_tick(v)
    }
}

/// Ticks of a logarithmic axis showing `lo..hi` (`0 < lo < hi`): `(labelled, grid only)`.
/// Labelled: 1, 2 and 5 times a power of ten, or only powers of ten over more than three
/// decades; grid only: the other multiples 1..9 of a power of ten. When fewer than two
/// labelled ticks fall in the range, every multiple is labelled; when still fewer, five
/// geometrically spaced ticks are.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let wide = (hi / lo).log10() > 3.0;
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    for e in lo.log10().floor() as i32..=hi.log10().ceil() as i32 {
        for m in 1..=9 {
            // Divide for negative exponents: 3 / 10 is 0.3, 3 * 0.1 is not.
            let v =
                if e < 0 { f64::from(m) / 10f64.powi(-e) } else { f64::from(m) * 10f64.powi(e) };
            if v < lo || v > hi {
                continue;
            }
            if m == 1 || (!wide && (m == 2 || m == 5)) {
                bold.push(v);
            } else {
                light.push(v);
            }
        }
    }
    if bold.len() < 2 {
        bold.append(&mut light);
        bold.sort_by(f64::total_cmp);
    }
    if bold.len() < 2 {
        bold = (0..5).map(|i| lo * (hi / lo).powf(f64::from(i) / 4.0)).collect();
    }
    (bold, light)
}

/// Where the legend goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legend {
    /// A column to the right of the panels listing the labelled lines of all panels, each
    /// label once (for many lines, or lines that fill the plot area).
    Right,
    /// Upper left corner.
    UpperLeft,
    /// Upper right corner.
    UpperRight,
    /// Lower left corner.
    LowerLeft,
    /// Lower right corner.
    LowerRight,
}

impl Legend {
    /// The corner of each panel, or `None` for the column on the right.
    fn position(self) -> Option<SeriesLabelPosition> {
        match self {
            Legend::Right => None,
            Legend::UpperLeft => Some(SeriesLabelPosition::UpperLeft),
            Legend::UpperRight => Some(SeriesLabelPosition::UpperRight),
            Legend::LowerLeft => Some(SeriesLabelPosition::LowerLeft),
            Legend::LowerRight => Some(SeriesLabelPosition::LowerRight),
        }
    }
}

/// A figure of one or more panels side by side with shared axes.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Caption of the whole figure.
    pub title: String,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// Legend position: in a column on the right, or in a corner of every panel that has
    /// labelled lines.
    pub legend: Legend,
    /// The panels, left to right.
    pub panels: Vec<Panel>,
}

/// Panel size in pixels (SVG user units); the figure is as wide as its panels, plus room for
/// the caption.
const PANEL: (u32, u32) = (640, 560);
/// A one-panel figure is as wide as the FCT figures.
const SINGLE_WIDTH: u32 = 900;
const CAPTION_HEIGHT: u32 = 40;
/// Width of the legend column of [`Legend::Right`], and the height of one entry.
const LEGEND_WIDTH: u32 = 230;
const LEGEND_ROW: i32 = 22;

/// A line with its runs of drawable points.
type Drawn<'a> = (&'a Line, Vec<Vec<(f64, f64)>>);

/// The runs of drawable points of a line: on a log axis, points with a coordinate `<= 0` (or
/// any non-finite coordinate) are dropped and split the line.
fn runs(line: &Line, xlog: bool, ylog: bool) -> Vec<Vec<(f64, f64)>> {
    let ok = |&(x, y): &(f64, f64)| {
        x.is_finite() && y.is_finite() && (!xlog || x > 0.0) && (!ylog || y > 0.0)
    };
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for p in &line.points {
        if ok(p) {
            cur.push(*p);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The shown range of values from `lo` to `hi`: logarithmic axes get a factor 1.25 of room on
/// each side, linear ones 4% of the span (a linear y axis starts at 0 for positive data).
fn axis_range(lo: f64, hi: f64, log: bool, from_zero: bool) -> (f64, f64) {
    if log {
        if hi > lo {
            (lo / 1.25, hi * 1.25)
        } else {
            (lo / 2.0, lo * 2.0)
        }
    } else {
        let lo = if from_zero { lo.min(0.0) } else { lo };
        let span = hi - lo;
        if span > 0.0 {
            let pad = span * 0.04;
            (if from_zero && lo == 0.0 { 0.0 } else { lo - pad }, hi + pad)
        } else {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            (lo - pad, hi + pad)
        }
    }
}

/// Draws `chart` to `path` (`.png` or `.svg`): the caption, then the panels side by side, each
/// with the same x and y ranges (the extent of all drawable points), a mesh, its lines with
/// point markers, and a legend of its labelled lines (a dashed line shows dashed). Only the
/// leftmost panel shows the y description.
///
/// # Errors
/// [`AnalysisError::UnsupportedPlotFormat`], [`AnalysisError::NothingToPlot`] when no line has
/// a drawable point, or [`AnalysisError::Plot`] when drawing or writing fails.
pub fn plot_lines(chart: &LineChart, path: &Path) -> Result<(), AnalysisError> {
    format_of(path)?;
    let (xlog, ylog) = (chart.x.log, chart.y.log);
    let panels: Vec<Vec<Drawn>> = chart
        .panels
        .iter()
        .map(|p| p.lines.iter().map(|l| (l, runs(l, xlog, ylog))).collect())
        .collect();
    let all = panels.iter().flatten().flat_map(|(_, r)| r.iter().flatten());
    let ext = |(a, b): (f64, f64), v: f64| (a.min(v), b.max(v));
    let inf = (f64::INFINITY, f64::NEG_INFINITY);
    let (xs, ys) = all.fold((inf, inf), |(xs, ys), &(x, y)| (ext(xs, x), ext(ys, y)));
    if !xs.0.is_finite() {
        return Err(AnalysisError::NothingToPlot(path.to_path_buf()));
    }
    let x = axis_range(xs.0, xs.1, xlog, false);
    let y = axis_range(ys.0, ys.1, ylog, true);
    let n = chart.panels.len() as u32;
    let mut width = if n == 1 { SINGLE_WIDTH } else { PANEL.0 * n };
    // The legend column: every label once, in order of appearance.
    let mut entries: Vec<(&str, usize, Dash)> = Vec::new();
    if chart.legend == Legend::Right {
        for l in chart.panels.iter().flat_map(|p| &p.lines) {
            if let Some(label) = &l.label {
                if !entries.iter().any(|e| e.0 == label) {
                    entries.push((label, l.color, l.dash));
                }
            }
        }
        width += LEGEND_WIDTH;
    }
    let rows_height = (entries.len() as i32 * LEGEND_ROW + 2 * LEGEND_ROW) as u32;
    let size = (width, (PANEL.1 + CAPTION_HEIGHT).max(rows_height + CAPTION_HEIGHT));
    render_sized(path, size, &Fig { chart, panels, entries, x, y })
}

struct Fig<'a> {
    chart: &'a LineChart,
    panels: Vec<Vec<Drawn<'a>>>,
    entries: Vec<(&'a str, usize, Dash)>,
    x: (f64, f64),
    y: (f64, f64),
}

impl Figure for Fig<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let area = root.titled(&self.chart.title, ("sans-serif", 24))?;
        let area = if self.chart.legend == Legend::Right {
            let (w, _) = area.dim_in_pixel();
            let (plots, legend) = area.split_horizontally(w - LEGEND_WIDTH);
            self.legend_column(&legend)?;
            plots
        } else {
            area
        };
        let cells = area.split_evenly((1, self.panels.len().max(1)));
        let (x, y) = (self.x, self.y);
        for (i, (cell, lines)) in cells.iter().zip(&self.panels).enumerate() {
            let title = &self.chart.panels[i].title;
            // One generic drawing function, instantiated for each pair of axis scales.
            let log = |(lo, hi): (f64, f64)| {
                let (bold, light) = log_ticks(lo, hi);
                LogCoord::from((lo..hi).log_scale()).with_key_points(bold).with_light_points(light)
            };
            let lin = |(lo, hi): (f64, f64)| RangedCoordf64::from(lo..hi);
            match (self.chart.x.log, self.chart.y.log) {
                (false, false) => self.panel(cell, i, title, lines, lin(x), lin(y))?,
                (true, false) => self.panel(cell, i, title, lines, log(x), lin(y))?,
                (false, true) => self.panel(cell, i, title, lines, lin(x), log(y))?,
                (true, true) => self.panel(cell, i, title, lines, log(x), log(y))?,
            }
        }
        Ok(())
    }
}

impl Fig<'_> {
    /// The legend of [`Legend::Right`]: a line sample and the label per entry, from the top
    /// of the plot areas.
    fn legend_column<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let font = ("sans-serif", 14).into_font().color(&BLACK);
        let text = font.pos(Pos::new(HPos::Left, VPos::Center));
        for (i, &(label, color, dash)) in self.entries.iter().enumerate() {
            let y = 2 * LEGEND_ROW + i as i32 * LEGEND_ROW;
            let color = PALETTE[color % PALETTE.len()];
            let style = color.stroke_width(2);
            let pts = vec![(4, y), (34, y)];
            match dash {
                Dash::Solid => {
                    area.draw(&PathElement::new(pts, style))?;
                    area.draw(&Circle::new((19, y), 3, color.filled()))?;
                }
                Dash::Dashed => {
                    area.draw(&DashedPathElement::new(pts, 6, 4, style))?;
                    area.draw(&Circle::new((19, y), 3, color.stroke_width(1)))?;
                }
            }
            area.draw(&Text::new(label.to_string(), (42, y), text.clone()))?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn panel<DB, X, Y>(
        &self,
        area: &DrawingArea<DB, Shift>,
        index: usize,
        title: &str,
        lines: &[Drawn],
        x: X,
        y: Y,
    ) -> DrawResult<DB>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 19))
            .margin(14)
            .x_label_area_size(52)
            .y_label_area_size(if index == 0 { 70 } else { 56 })
            .build_cartesian_2d(x, y)?;
        let y_desc = if index == 0 { self.chart.y.label.as_str() } else { "" };
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.12))
            .x_desc(self.chart.x.label.as_str())
            .y_desc(y_desc)
            .x_label_formatter(&|v| self.chart.x.tick(*v))
            .y_label_formatter(&|v| self.chart.y.tick(*v))
            .label_style(("sans-serif", 15))
            .axis_desc_style(("sans-serif", 17))
            .draw()?;
        let mut labelled = false;
        for (line, runs) in lines {
            let color = PALETTE[line.color % PALETTE.len()];
            let style = color.stroke_width(2);
            let mut legend_done = line.label.is_none();
            for run in runs {
                let ann = match line.dash {
                    Dash::Solid => chart.draw_series(LineSeries::new(run.clone(), style))?,
                    Dash::Dashed => {
                        chart.draw_series(DashedLineSeries::new(run.clone(), 7, 5, style))?
                    }
                };
                if !legend_done && self.chart.legend != Legend::Right {
                    let label = line.label.clone().unwrap_or_default();
                    let dash = line.dash;
                    ann.label(label).legend(move |(x, y)| -> DynElement<'static, DB, _> {
                        let pts = vec![(x, y), (x + 28, y)];
                        match dash {
                            Dash::Solid => PathElement::new(pts, style).into_dyn(),
                            Dash::Dashed => DashedPathElement::new(pts, 6, 4, style).into_dyn(),
                        }
                    });
                    legend_done = true;
                    labelled = true;
                }
                let marker = |p: (f64, f64)| match line.dash {
                    Dash::Solid => Circle::new(p, 3, color.filled()),
                    Dash::Dashed => Circle::new(p, 3, color.stroke_width(1)),
                };
                chart.draw_series(run.iter().map(|&p| marker(p)))?;
            }
        }
        if let (true, Some(position)) = (labelled, self.chart.legend.position()) {
            chart
                .configure_series_labels()
                .position(position)
                .label_font(("sans-serif", 14))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .draw()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_at_points_a_log_axis_cannot_show() {
        let l =
            Line::new("a", vec![(1.0, 2.0), (2.0, 0.0), (3.0, 4.0), (4.0, 5.0)], 0, Dash::Solid);
        assert_eq!(runs(&l, false, true), vec![vec![(1.0, 2.0)], vec![(3.0, 4.0), (4.0, 5.0)]]);
        assert_eq!(runs(&l, false, false).len(), 1);
        let nan = Line::new("b", vec![(1.0, f64::NAN)], 0, Dash::Dashed);
        assert!(runs(&nan, false, false).is_empty());
    }

    #[test]
    fn ticks() {
        let (bold, light) = log_ticks(0.8, 60.0);
        assert_eq!(bold, [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]);
        assert_eq!(light[..3], [0.8, 0.9, 3.0]);
        assert_eq!(log_ticks(8.0, 6e4).0, [10.0, 100.0, 1000.0, 10_000.0]);
        assert_eq!(log_ticks(80.0, 6e4).0.len(), 9);
        assert_eq!(log_ticks(0.25, 0.45).0, [0.3, 0.4]);
        assert_eq!(log_ticks(0.25, 0.45).1, Vec::<f64>::new());
        assert_eq!(log_ticks(1.1, 1.9).0.len(), 5);
        let k = Axis::linear("k").integers();
        assert_eq!((k.tick(5.5), k.tick(6.0)), (String::new(), "6".to_string()));
        assert_eq!(Axis::log("y").tick(0.5), "0.5");
    }

    #[test]
    fn ranges() {
        assert_eq!(axis_range(10.0, 100.0, true, true), (8.0, 125.0));
        assert_eq!(axis_range(5.0, 5.0, true, false), (2.5, 10.0));
        assert_eq!(axis_range(5.0, 55.0, false, false), (3.0, 57.0));
        assert_eq!(axis_range(5.0, 55.0, false, true), (0.0, 57.2));
        assert_eq!(axis_range(0.0, 0.0, false, true), (-1.0, 1.0));
    }
}
