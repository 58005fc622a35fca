//! Flow-size distributions in the reference generator's CDF format, read either as
//! piecewise-linear (the reference's reading) or as a step function of point masses.

use std::fmt;

use rand::Rng;

use crate::error::WorkloadError;

/// The built-in workloads: (name, CDF text). The texts are the files of the reference
/// repository's `traffic_gen/` folder (see `data/README.md`).
const BUILTINS: [(&str, &str); 4] = [
    ("websearch", include_str!("../data/WebSearch_distribution.txt")),
    ("hadoop", include_str!("../data/FbHdp_distribution.txt")),
    ("alistorage2019", include_str!("../data/AliStorage2019.txt")),
    ("googlerpc2008", include_str!("../data/GoogleRPC2008.txt")),
];

/// How the sizes between the points of a [`Cdf`] are read.
///
/// The same CDF text describes two different distributions:
///
/// * [`Interpolation::Linear`] (the default): sizes are spread uniformly between consecutive
///   points, exactly as the reference `traffic_gen.py` reads a CDF. [`Cdf::sample`] and
///   [`Cdf::mean`] always use it.
/// * [`Interpolation::Step`]: each point `(s_i, p_i)` with `i >= 1` is a point mass of
///   probability `(p_i - p_{i-1}) / 100` at size `s_i`; the first point (at 0 %) carries
///   no mass. This is the right reading of a trace that lists the sizes that occur (the
///   AliStorage 2019 trace: "22.9 % of queries are 4 KB" is a point mass at 4000 B).
///
/// ```
/// use dcsim_workload::{Cdf, Interpolation};
/// let cdf = Cdf::parse("0 0\n100 50\n300 100\n").unwrap();
/// assert_eq!(cdf.mean_with(Interpolation::Linear), 125.0);
/// assert_eq!(cdf.mean_with(Interpolation::Step), 200.0); // 50 % at 100 B, 50 % at 300 B
/// assert_eq!(Interpolation::from_name("step"), Some(Interpolation::Step));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Linear between points (the reference generator's reading).
    #[default]
    Linear,
    /// Point masses at the listed sizes (a discrete distribution).
    Step,
}

impl Interpolation {
    /// Every mode, in a fixed order (for listing the valid names).
    pub const ALL: [Interpolation; 2] = [Interpolation::Linear, Interpolation::Step];

    /// The mode's name as scenarios write it: `"linear"` or `"step"`.
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Linear => "linear",
            Interpolation::Step => "step",
        }
    }

    /// The mode named `name` (see [`Interpolation::name`]; exact, lower case), if any.
    pub fn from_name(name: &str) -> Option<Interpolation> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for Interpolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A flow-size distribution given by points `(size in bytes, cumulative percent)`, read by
/// default with linear interpolation between them, exactly as the reference
/// `traffic_gen.py` reads it ([`Interpolation`] describes the other reading, point masses).
///
/// A valid CDF (spec §7) has at least two points, the first at 0 %, the last at 100 %, and
/// both columns strictly increasing; sizes are finite and `>= 0`. The first size need not be 0.
///
/// ```
/// use dcsim_workload::Cdf;
/// let cdf = Cdf::parse("0 0\n100 50\n300 100\n").unwrap();
/// assert_eq!(cdf.mean(), 125.0); // 50 % around 50 B, 50 % around 200 B
/// assert_eq!(Cdf::builtin("websearch").unwrap().mean(), 1_711_250.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// `(size, percent)`, validated.
    points: Vec<(f64, f64)>,
}

/// The largest size a CDF point may give: 2^62 bytes, beyond any flow a run can complete (a
/// flow's ideal time is bounded by 2^62 ps) and within a `u64` once interpolated. A point of
/// 1e300 B was taken, and its mean flow and gap shown saturated.
pub const MAX_CDF_SIZE: f64 = (1u64 << 62) as f64;

impl Cdf {
    /// Parses CDF text: one point per line, `<size> <cumulative percent>` separated by
    /// whitespace. Blank lines and lines starting with `#` are skipped (they still count for
    /// the line numbers in errors).
    ///
    /// # Errors
    /// A [`WorkloadError`] `Cdf*` variant naming the 1-based line of the first problem.
    pub fn parse(text: &str) -> Result<Cdf, WorkloadError> {
        let mut points = Vec::new();
        let mut lines = Vec::new(); // line number of each point
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = t.split_whitespace().collect();
            let syntax = || WorkloadError::CdfSyntax { line, text: raw.to_string() };
            let [size, percent] = fields[..] else {
                return Err(syntax());
            };
            let size: f64 = size.parse().map_err(|_| syntax())?;
            let percent: f64 = percent.parse().map_err(|_| syntax())?;
            for (column, value) in [("size", size), ("percent", percent)] {
                if !value.is_finite() || value < 0.0 {
                    return Err(WorkloadError::CdfBadNumber { line, column, value });
                }
            }
            if size > MAX_CDF_SIZE {
                return Err(WorkloadError::CdfSizeTooLarge { line, value: size });
            }
            if let Some(&(prev_size, prev_percent)) = points.last() {
                if percent <= prev_percent {
                    return Err(WorkloadError::CdfNotIncreasing {
                        line,
                        column: "percent",
                        previous: prev_percent,
                        value: percent,
                    });
                }
                if size <= prev_size {
                    return Err(WorkloadError::CdfNotIncreasing {
                        line,
                        column: "size",
                        previous: prev_size,
                        value: size,
                    });
                }
            } else if percent != 0.0 {
                return Err(WorkloadError::CdfFirstNotZero { line, percent });
            }
            points.push((size, percent));
            lines.push(line);
        }
        if points.len() < 2 {
            return Err(WorkloadError::CdfTooFewPoints { found: points.len() });
        }
        let (_, last) = points[points.len() - 1];
        if last != 100.0 {
            return Err(WorkloadError::CdfLastNotHundred {
                line: lines[lines.len() - 1],
                percent: last,
            });
        }
        Ok(Cdf { points })
    }

    /// A built-in workload by name (see [`Cdf::builtin_names`]): `websearch` (DCTCP web
    /// search), `hadoop` (Facebook Hadoop, `FbHdp_distribution.txt`), `alistorage2019`,
    /// `googlerpc2008`. Names are matched case-insensitively.
    ///
    /// # Errors
    /// [`WorkloadError::UnknownWorkload`] listing the known names.
    pub fn builtin(name: &str) -> Result<Cdf, WorkloadError> {
        let text = BUILTINS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, t)| *t)
            .ok_or_else(|| WorkloadError::UnknownWorkload {
                name: name.to_string(),
                known: Self::builtin_names().to_vec(),
            })?;
        Ok(Cdf::parse(text).expect("built-in CDFs are valid (tested)"))
    }

    /// Names accepted by [`Cdf::builtin`], in a fixed order.
    pub fn builtin_names() -> &'static [&'static str] {
        const NAMES: [&str; 4] = [BUILTINS[0].0, BUILTINS[1].0, BUILTINS[2].0, BUILTINS[3].0];
        &NAMES
    }

    /// The raw text of a built-in workload, in the reference file format (for writing it out).
    pub fn builtin_text(name: &str) -> Option<&'static str> {
        BUILTINS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, t)| *t)
    }

    /// The validated points `(size in bytes, cumulative percent)`.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The largest size (the size at 100 %).
    pub fn max_size(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }

    /// Mean flow size in bytes by the trapezoid rule, the exact mean of the piecewise-linear
    /// distribution, computed in the reference's order:
    /// `sum((x_i + x_{i-1}) / 2 * (y_i - y_{i-1})) / 100`.
    ///
    /// (Sampled sizes are truncated to whole bytes, so their mean is about 0.5 B lower.)
    pub fn mean(&self) -> f64 {
        let mut s = 0.0;
        let (mut last_x, mut last_y) = self.points[0];
        for &(x, y) in &self.points[1..] {
            s += (x + last_x) / 2.0 * (y - last_y);
            last_x = x;
            last_y = y;
        }
        s / 100.0
    }

    /// The size at cumulative percent `percent` (0..=100) by linear interpolation, with the
    /// reference's segment choice (the first point `i >= 1` with `percent <= y_i`) and float
    /// operation order `x0 + (x1 - x0) / (y1 - y0) * (percent - y0)`. Percents outside
    /// 0..=100 are clamped.
    pub fn value_at_percent(&self, percent: f64) -> f64 {
        let y = percent.clamp(0.0, 100.0);
        for w in self.points.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if y <= y1 {
                return x0 + (x1 - x0) / (y1 - y0) * (y - y0);
            }
        }
        self.max_size()
    }

    /// The cumulative probability (0..=1) of a size: `P(X <= size)` for the continuous
    /// piecewise-linear distribution (0 below the first point, 1 from the last on).
    pub fn probability_le(&self, size: f64) -> f64 {
        let (first_x, _) = self.points[0];
        if size < first_x {
            return 0.0;
        }
        for w in self.points.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if size <= x1 {
                return (y0 + (y1 - y0) / (x1 - x0) * (size - x0)) / 100.0;
            }
        }
        1.0
    }

    /// Draws one flow size exactly like the reference: `r = U[0,1) * 100` (one `f64` draw),
    /// [`Cdf::value_at_percent`]`(r)`, truncated to an integer; results `<= 0` become 1.
    /// The same as [`Cdf::sample_with`] with [`Interpolation::Linear`].
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let r: f64 = rng.gen::<f64>() * 100.0;
        whole_bytes(self.value_at_percent(r))
    }

    /// Draws one flow size read with `mode`, from one `f64` draw `r = U[0,1) * 100` (the
    /// same draw as [`Cdf::sample`], so both modes consume the random stream alike):
    ///
    /// * [`Interpolation::Linear`]: exactly [`Cdf::sample`].
    /// * [`Interpolation::Step`]: [`Cdf::step_value_at_percent`]`(r)`, the smallest listed
    ///   size whose cumulative percent is `>= r` (the first point excluded: it has no mass).
    ///
    /// The size is truncated to whole bytes; results `<= 0` become 1. With whole-byte sizes
    /// in the CDF, every step draw is one of the listed sizes.
    pub fn sample_with<R: Rng + ?Sized>(&self, rng: &mut R, mode: Interpolation) -> u64 {
        match mode {
            Interpolation::Linear => self.sample(rng),
            Interpolation::Step => {
                let r: f64 = rng.gen::<f64>() * 100.0;
                whole_bytes(self.step_value_at_percent(r))
            }
        }
    }

    /// The size at cumulative percent `percent` of the step reading: the size `x_i` of the
    /// first point `i >= 1` with `percent <= y_i` (the segment [`Cdf::value_at_percent`]
    /// picks, taken at its upper end). Percents outside 0..=100 are clamped.
    pub fn step_value_at_percent(&self, percent: f64) -> f64 {
        let y = percent.clamp(0.0, 100.0);
        self.points[1..].iter().find(|&&(_, yi)| y <= yi).map_or(self.max_size(), |&(x, _)| x)
    }

    /// Mean flow size in bytes read with `mode`: [`Cdf::mean`] for
    /// [`Interpolation::Linear`]; for [`Interpolation::Step`] the mean of the point masses,
    /// `sum(x_i * (y_i - y_{i-1})) / 100` over the points `i >= 1`.
    ///
    /// The built-in `alistorage2019` has a step mean of 67 050 B against 40 869.8 B linear.
    pub fn mean_with(&self, mode: Interpolation) -> f64 {
        match mode {
            Interpolation::Linear => self.mean(),
            Interpolation::Step => {
                let mut s = 0.0;
                let mut last_y = self.points[0].1;
                for &(x, y) in &self.points[1..] {
                    s += x * (y - last_y);
                    last_y = y;
                }
                s / 100.0
            }
        }
    }
}

/// A size truncated to whole bytes, at least 1.
fn whole_bytes(v: f64) -> u64 {
    let v = v.trunc();
    if v <= 0.0 {
        1
    } else {
        v as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn builtins_parse_and_have_the_reference_means() {
        // Means from spec §7 (trapezoid rule).
        let expect =
            [("websearch", 1_711_250.0), ("hadoop", 120_420.75), ("alistorage2019", 40_869.8)];
        for (name, mean) in expect {
            let m = Cdf::builtin(name).unwrap().mean();
            assert!((m - mean).abs() < 1e-6, "{name}: {m}");
        }
        let g = Cdf::builtin("googlerpc2008").unwrap();
        assert_eq!(g.points().len(), 843);
        assert_eq!(g.max_size(), 15_158_197.0);
        assert!((g.mean() - 2891.6).abs() < 0.1, "{}", g.mean());
        for name in Cdf::builtin_names() {
            assert!(Cdf::builtin(name).is_ok());
            assert!(Cdf::builtin_text(name).is_some());
        }
        assert!(Cdf::builtin("WebSearch").is_ok());
    }

    #[test]
    fn unknown_builtin_lists_the_names() {
        let e = Cdf::builtin("datamining").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown built-in workload \"datamining\"; known: websearch, hadoop, \
             alistorage2019, googlerpc2008"
        );
    }

    #[test]
    fn interpolation_matches_hand_values() {
        let cdf = Cdf::builtin("websearch").unwrap();
        // 50 % lies in the segment (50000, 40) .. (80000, 53): 50000 + 30000/13*10.
        assert!((cdf.value_at_percent(50.0) - 73_076.923_076_923).abs() < 1e-6);
        assert_eq!(cdf.value_at_percent(0.0), 0.0);
        assert_eq!(cdf.value_at_percent(100.0), 30_000_000.0);
        assert_eq!(cdf.value_at_percent(15.0), 10_000.0);
        assert!((cdf.probability_le(73_076.923_076_923) - 0.5).abs() < 1e-12);
        assert_eq!(cdf.probability_le(-1.0), 0.0);
        assert_eq!(cdf.probability_le(4e7), 1.0);
    }

    #[test]
    fn samples_are_never_zero() {
        // Every draw below 1 % maps to a size below 1 byte here, which becomes 1.
        let cdf = Cdf::parse("0 0\n1 1\n100 100").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut ones = 0;
        for _ in 0..10_000 {
            let s = cdf.sample(&mut rng);
            assert!((1..=99).contains(&s), "{s}");
            ones += usize::from(s == 1);
        }
        // P(size == 1) = P(X < 2) = 2 %.
        assert!((100..=300).contains(&ones), "{ones}");
    }

    fn err(text: &str) -> String {
        Cdf::parse(text).unwrap_err().to_string()
    }

    /// Every line error points at the column of the offending token and names the point.
    #[test]
    fn errors_point_at_line_column_and_field() {
        let pos = |text: &str| {
            let e = Cdf::parse(text).unwrap_err();
            let p = e.cdf_position(text).map(|p| format!("{}:{} {}", p.line, p.col, p.field));
            (p.unwrap_or_default(), e.detail())
        };
        let cases: &[(&str, &str, &str)] = &[
            (
                "# c\n0 0\n\n10 x\n",
                "4:4 point[1].percent",
                "expected `<size> <cumulative percent>`, found \"10 x\"",
            ),
            (
                "0 0\nten 50\n",
                "2:1 point[1].size",
                "expected `<size> <cumulative percent>`, found \"ten 50\"",
            ),
            (
                "0 0\n10 50 7\n",
                "2:7 point[1]",
                "expected `<size> <cumulative percent>`, found \"10 50 7\"",
            ),
            ("0 0\n10\n", "2:1 point[1]", "expected `<size> <cumulative percent>`, found \"10\""),
            (
                "0 0\n  inf 50\n",
                "2:3 point[1].size",
                "size must be a finite number >= 0, found inf",
            ),
            (
                "0 0\n10 -5\n",
                "2:4 point[1].percent",
                "percent must be a finite number >= 0, found -5",
            ),
            ("0 1\n10 100\n", "1:3 point[0].percent", "the first point must be at 0 %, found 1 %"),
            ("0 0\n10 99\n", "2:4 point[1].percent", "the last point must be at 100 %, found 99 %"),
            (
                "0 0\n10 50\n5 100\n",
                "3:1 point[2].size",
                "size must strictly increase, but 5 follows 10",
            ),
            (
                "0 0\n10 50\n20 50\n",
                "3:4 point[2].percent",
                "percent must strictly increase, but 50 follows 50",
            ),
            (
                "0 0\n",
                "",
                "a CDF needs at least two points (the first at 0 %, the last at 100 %), found 1",
            ),
        ];
        for &(text, at, detail) in cases {
            assert_eq!(pos(text), (at.to_string(), detail.to_string()), "{text:?}");
        }
    }

    #[test]
    fn validation_errors_name_the_line() {
        assert_eq!(
            err("0 0\n10 50\n5 100\n"),
            "line 3: size must strictly increase, but 5 follows 10"
        );
        assert_eq!(
            err("0 0\n10 50\n20 50\n30 100\n"),
            "line 3: percent must strictly increase, but 50 follows 50"
        );
        assert_eq!(
            err("0 0\n10 50\n20 99\n"),
            "line 3: the last point must be at 100 %, found 99 %"
        );
        assert_eq!(
            err("# c\n\n0 5\n10 100\n"),
            "line 3: the first point must be at 0 %, found 5 %"
        );
        assert_eq!(
            err("0 0\n10 x\n"),
            "line 2: expected `<size> <cumulative percent>`, found \"10 x\""
        );
        assert_eq!(
            err("0 0\n10 20 30\n"),
            "line 2: expected `<size> <cumulative percent>`, found \"10 20 30\""
        );
        assert_eq!(err("0 0\nNaN 50\n"), "line 2: size must be a finite number >= 0, found NaN");
        assert_eq!(err("-1 0\n10 100\n"), "line 1: size must be a finite number >= 0, found -1");
        // Beyond any flow (a point of 1e300 B was taken, its mean shown saturated).
        assert_eq!(
            err("0 0\n1e300 100\n"),
            "line 2: size must be at most 2^62 bytes (4.6 EB), found 1e300"
        );
        assert!(Cdf::parse("0 0\n4611686018427387904 100\n").is_ok());
        assert_eq!(err("0 0\n10 inf\n"), "line 2: percent must be a finite number >= 0, found inf");
        assert_eq!(
            err("0 0\n10 50\n20 101\n"),
            "line 3: the last point must be at 100 %, found 101 %"
        );
        assert_eq!(
            err("0 0\n"),
            "a CDF needs at least two points (the first at 0 %, the last at 100 %), found 1"
        );
        assert_eq!(
            err(""),
            "a CDF needs at least two points (the first at 0 %, the last at 100 %), found 0"
        );
    }

    #[test]
    fn step_mean_of_alistorage2019_is_67050() {
        // Exactly, in integers: the percents have two decimals, so sum(size * hundredths of a
        // percent) / 10 000 is the step mean. 4000·2293 + 8000·4628 + 16000·1140 + 32000·986
        // + 64000·306 + 128000·324 + 256000·76 + 2000000·247 = 670 500 000 → 67 050 B.
        let text = Cdf::builtin_text("alistorage2019").unwrap();
        let mut exact: u64 = 0;
        let mut last = 0u64;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut f = line.split_whitespace();
            let size: u64 = f.next().unwrap().parse().unwrap();
            let pct: f64 = f.next().unwrap().parse().unwrap();
            let hundredths = (pct * 100.0).round() as u64;
            exact += size * (hundredths - last);
            last = hundredths;
        }
        assert_eq!(exact, 670_500_000);
        let cdf = Cdf::builtin("alistorage2019").unwrap();
        assert!((cdf.mean_with(Interpolation::Step) - 67_050.0).abs() < 1e-6);
        assert!((cdf.mean_with(Interpolation::Linear) - 40_869.8).abs() < 1e-6);
        assert_eq!(cdf.mean_with(Interpolation::Linear), cdf.mean());
    }

    #[test]
    fn step_values_are_the_upper_ends_of_the_linear_segments() {
        let cdf = Cdf::parse("10 0\n100 50\n300 100\n").unwrap();
        assert_eq!(cdf.step_value_at_percent(0.0), 100.0); // the first point has no mass
        assert_eq!(cdf.step_value_at_percent(1e-9), 100.0);
        assert_eq!(cdf.step_value_at_percent(50.0), 100.0);
        assert_eq!(cdf.step_value_at_percent(50.000_001), 300.0);
        assert_eq!(cdf.step_value_at_percent(100.0), 300.0);
        assert_eq!(cdf.step_value_at_percent(250.0), 300.0);
        assert_eq!(cdf.step_value_at_percent(-3.0), 100.0);
        assert_eq!(cdf.mean_with(Interpolation::Step), 200.0);
        // Sizes below one byte still become 1.
        let tiny = Cdf::parse("0 0\n0.5 100").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        assert_eq!(tiny.sample_with(&mut rng, Interpolation::Step), 1);
    }

    #[test]
    fn linear_sample_with_is_sample_and_both_modes_take_one_draw() {
        let cdf = Cdf::builtin("alistorage2019").unwrap();
        let (mut a, mut b, mut c) = (
            ChaCha8Rng::seed_from_u64(9),
            ChaCha8Rng::seed_from_u64(9),
            ChaCha8Rng::seed_from_u64(9),
        );
        for _ in 0..1000 {
            assert_eq!(cdf.sample(&mut a), cdf.sample_with(&mut b, Interpolation::Linear));
            cdf.sample_with(&mut c, Interpolation::Step);
        }
        assert_eq!(a.get_word_pos(), b.get_word_pos());
        assert_eq!(a.get_word_pos(), c.get_word_pos());
    }

    #[test]
    fn step_draws_are_listed_sizes_with_the_listed_masses() {
        // 22.93 % of AliStorage2019 step draws are exactly 4000 B (the trace's "4 KB"). With
        // n = 200 000 draws the count is binomial: mean n·p = 45 860, sd sqrt(n·p·(1-p))
        // = 188.0; the test allows 5 sd (a false failure has probability ~6e-7).
        const N: usize = 200_000;
        let cdf = Cdf::builtin("alistorage2019").unwrap();
        let sizes: Vec<u64> = cdf.points()[1..].iter().map(|&(x, _)| x as u64).collect();
        let mut counts = vec![0usize; sizes.len()];
        let mut sum = 0u64;
        let mut rng = ChaCha8Rng::seed_from_u64(2019);
        for _ in 0..N {
            let s = cdf.sample_with(&mut rng, Interpolation::Step);
            let i = sizes.iter().position(|&x| x == s);
            let Some(i) = i else { panic!("{s} is not a listed size") };
            counts[i] += 1;
            sum += s;
        }
        let n = N as f64;
        let mut last = 0.0;
        for (i, &(_, pct)) in cdf.points()[1..].iter().enumerate() {
            let p = (pct - last) / 100.0;
            last = pct;
            let sd = (n * p * (1.0 - p)).sqrt();
            let dev = (counts[i] as f64 - n * p).abs();
            assert!(dev <= 5.0 * sd, "size {}: {} draws, expected {}", sizes[i], counts[i], n * p);
        }
        assert_eq!(sizes[0], 4000);
        assert!((counts[0] as f64 - n * 0.2293).abs() <= 5.0 * 188.0, "{}", counts[0]);
        // The sample mean: the size's sd is 309 228 B (2.47 % at 2 MB), its standard
        // error 691.5 B at n = 200 000; allow 5 of them.
        let mean = sum as f64 / n;
        assert!((mean - 67_050.0).abs() < 5.0 * 691.5, "{mean}");
    }

    #[test]
    fn first_size_may_be_positive() {
        let cdf = Cdf::parse("100 0\n200 100").unwrap();
        assert_eq!(cdf.mean(), 150.0);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1000 {
            assert!((100..200).contains(&cdf.sample(&mut rng)));
        }
    }
}
