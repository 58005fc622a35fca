//! `dcsim compare-ns3`: slowdown percentiles of a reference FCT file next to ours.
//!
//! Both sides use the same slowdown: the flow's FCT divided by the reference's "standalone"
//! FCT (spec §2.6), floored at 1 as the reference analysis does (spec §8). On the reference
//! side these are columns 7 and 8 of its FCT file; on ours, the `fct_ns` and
//! `ref_ideal_fct_ns` columns of `fct.csv`, which this simulator computes with the same
//! formula.
//!
//! Groups: flows under 100 KB, flows over 1 MB, all flows, then the reference analysis' 20
//! equal-count size buckets (flows sorted by size, bucket k holds positions
//! `floor(k·n/100) .. floor((k+5)·n/100)`), computed on each side separately. Unlike the
//! reference analysis, the largest flow is kept. A percentile p of n sorted values is the
//! element at `floor(n·p)`, as in the reference analysis.
//!
//! ```
//! use dcsim_cli::compare::{parse_ours, parse_reference, Comparison};
//!
//! // One 1000-byte flow: 3000 ns against a standalone FCT of 1000 ns in the reference,
//! // 3150 ns against the same 1000 ns here.
//! let reference = "0b000001 0b000101 10000 100 1000 2000000000 3000 1000\n";
//! let ours = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns\n\
//!             0,0,1,1000,2000000000,3150,900,3.5,1000\n";
//! let c = Comparison::new(&parse_reference(reference).unwrap(), &parse_ours(ours).unwrap());
//! let all = &c.groups[2];
//! assert_eq!(all.name, "all");
//! assert_eq!((all.reference.unwrap().p50, all.ours.unwrap().p50), (3.0, 3.15));
//! assert_eq!(all.status(), "PASS"); // +5% at p50 and p95
//! ```

use std::fmt::Write as _;

/// Flows smaller than this many bytes form the "small" group.
pub const SMALL_BYTES: u64 = 100_000;
/// Flows larger than this many bytes form the "large" group.
pub const LARGE_BYTES: u64 = 1_000_000;
/// Width of a size bucket, in percent of the flows.
pub const BUCKET_STEP_PERCENT: usize = 5;
/// Tolerance on the median's relative difference, in percent.
pub const P50_TOLERANCE_PCT: f64 = 10.0;
/// Tolerance on the 95th percentile's relative difference, in percent.
pub const P95_TOLERANCE_PCT: f64 = 15.0;

/// One completed flow: its size, start and slowdown (≥ 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flow {
    /// Payload bytes.
    pub size: u64,
    /// Start time, ns (the reference's `start_ns`, our `start_ns`: an imported flow keeps its
    /// start, so a flow is known on both sides by its size and start).
    pub start_ns: u64,
    /// FCT / standalone FCT, floored at 1.
    pub slowdown: f64,
    /// The FCT, ns (whole in the reference's file; ours may have a fraction).
    pub fct_ns: f64,
}

/// A problem on one line of an input file (1-based line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

fn line_err(line: usize, message: impl Into<String>) -> LineError {
    LineError { line, message: message.into() }
}

fn slowdown(fct: f64, standalone: f64) -> f64 {
    (fct / standalone).max(1.0)
}

/// The largest time a reference FCT file may give, whole ns (2^62 ps, the time limit).
const MAX_TIME_NS: u64 = (1 << 62) / 1000;

/// Parses a reference FCT file (spec §2.6): one line per flow,
/// `sip dip sport dport size start_ns fct_ns standalone_ns`. Blank lines are skipped.
///
/// # Errors
/// A line without eight fields, an IP that is not 8 hex digits, a field that is not a
/// non-negative integer, a time beyond the time limit, or a size, FCT or standalone FCT of 0.
pub fn parse_reference(text: &str) -> Result<Vec<Flow>, LineError> {
    let mut flows = Vec::new();
    for (i, content) in text.lines().enumerate() {
        let line = i + 1;
        let fields: Vec<&str> = content.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() != 8 {
            return Err(line_err(
                line,
                format!(
                    "expected 8 fields `sip dip sport dport size start_ns fct_ns standalone_ns`, found {}",
                    fields.len()
                ),
            ));
        }
        let int = |idx: usize, name: &str| -> Result<u64, LineError> {
            fields[idx].parse::<u64>().map_err(|_| {
                line_err(line, format!("{name} `{}` is not a non-negative integer", fields[idx]))
            })
        };
        // The reference writes each IP as 8 hex digits (`0b000101`); anything else is not its
        // file.
        for (idx, name) in [(0, "sip"), (1, "dip")] {
            let ip = fields[idx];
            if ip.len() != 8 || !ip.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(line_err(
                    line,
                    format!("{name} `{ip}` is not an IP as the reference writes it (8 hex digits)"),
                ));
            }
        }
        // Times within the time limit (2^62 ps): a standalone time of 2^64 ns was floored to a
        // slowdown of 1 and passed.
        let time = |idx: usize, name: &str| -> Result<u64, LineError> {
            let v = int(idx, name)?;
            if v > MAX_TIME_NS {
                return Err(line_err(
                    line,
                    format!(
                        "{name} `{v}` is more than the time limit of {MAX_TIME_NS} ns (2^62 ps)"
                    ),
                ));
            }
            Ok(v)
        };
        let size = int(4, "size")?;
        let start_ns = time(5, "start_ns")?;
        let fct = time(6, "fct_ns")?;
        let standalone = time(7, "standalone_ns")?;
        if standalone == 0 {
            return Err(line_err(line, "standalone_ns is 0; the slowdown is undefined"));
        }
        // A flow carries at least a byte and takes time: a zero is a broken line, not a flow.
        if size == 0 {
            return Err(line_err(line, "size is 0; a flow carries at least one byte"));
        }
        if fct == 0 {
            return Err(line_err(line, "fct_ns is 0; a flow takes time to complete"));
        }
        flows.push(Flow {
            size,
            start_ns,
            slowdown: slowdown(fct as f64, standalone as f64),
            fct_ns: fct as f64,
        });
    }
    Ok(flows)
}

/// Parses our `fct.csv` (see `docs/scenario.md`), reading the `size_bytes`, `start_ns`,
/// `fct_ns` and `ref_ideal_fct_ns` columns by name.
///
/// # Errors
/// A missing column, a malformed row, or a value that is not a non-negative number (or an FCT
/// or reference ideal FCT of 0, or a time outside a run's, below a picosecond or beyond the time
/// limit).
pub fn parse_ours(text: &str) -> Result<Vec<Flow>, LineError> {
    let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = r.headers().map_err(|e| line_err(1, format!("bad CSV header: {e}")))?.clone();
    let col = |name: &str| -> Result<usize, LineError> {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| line_err(1, format!("no `{name}` column (is this a dcsim fct.csv?)")))
    };
    let (size_col, start_col, fct_col, ideal_col) =
        (col("size_bytes")?, col("start_ns")?, col("fct_ns")?, col("ref_ideal_fct_ns")?);
    let mut flows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            line_err(line, format!("malformed row: {e}"))
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let num = |idx: usize, name: &str| -> Result<f64, LineError> {
            let text = rec.get(idx).unwrap_or("");
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(line_err(line, format!("{name} `{text}` is not a non-negative number"))),
            }
        };
        let size_text = rec.get(size_col).unwrap_or("");
        let size = size_text.parse::<u64>().map_err(|_| {
            line_err(line, format!("size_bytes `{size_text}` is not a non-negative integer"))
        })?;
        let start_text = rec.get(start_col).unwrap_or("");
        let start_ns = start_text.parse::<u64>().map_err(|_| {
            line_err(line, format!("start_ns `{start_text}` is not a non-negative integer"))
        })?;
        let fct = num(fct_col, "fct_ns")?;
        let ideal = num(ideal_col, "ref_ideal_fct_ns")?;
        // Within a run's times: at most the time limit, a positive one at least a picosecond.
        for (v, name, col) in [(fct, "fct_ns", fct_col), (ideal, "ref_ideal_fct_ns", ideal_col)] {
            if v > MAX_TIME_NS as f64 + 0.999 || (v > 0.0 && v < 0.001) {
                return Err(line_err(
                    line,
                    format!(
                        "{name} `{}` is outside a run's times (0.001 ns to the time limit, \
                         2^62 ps)",
                        rec.get(col).unwrap_or("")
                    ),
                ));
            }
        }
        if ideal == 0.0 {
            return Err(line_err(line, "ref_ideal_fct_ns is 0; the slowdown is undefined"));
        }
        if fct == 0.0 {
            return Err(line_err(line, "fct_ns is 0; a flow takes time to complete"));
        }
        // Finite: an ideal of at least a picosecond (checked above) under an FCT within the
        // time limit. (An ideal of `1e-320` had given `inf` percentiles.)
        let sd = slowdown(fct, ideal);
        flows.push(Flow { size, start_ns, slowdown: sd, fct_ns: fct });
    }
    Ok(flows)
}

/// The element at `floor(n·p)` of ascending `sorted` (the reference analysis' rule), or
/// `None` if it is empty.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64) * p).floor() as usize;
    Some(sorted[i.min(sorted.len() - 1)])
}

/// Percentiles of one group on one side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Number of flows.
    pub n: usize,
    /// Median slowdown.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Stats {
    /// The percentiles of `slowdowns` (any order); `None` if empty.
    pub fn of(slowdowns: impl IntoIterator<Item = f64>) -> Option<Stats> {
        let mut v: Vec<f64> = slowdowns.into_iter().collect();
        v.sort_by(f64::total_cmp);
        Some(Stats {
            n: v.len(),
            p50: percentile(&v, 0.5)?,
            p95: percentile(&v, 0.95)?,
            p99: percentile(&v, 0.99)?,
        })
    }
}

/// One row of the comparison: a group's statistics on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// What the group holds (`< 100KB`, `all`, `q0.00-0.05 <=2921B`, ...).
    pub name: String,
    /// The reference's statistics (`None` if the group is empty there).
    pub reference: Option<Stats>,
    /// Ours.
    pub ours: Option<Stats>,
}

/// `(ours - ref) / ref` in percent.
pub fn relative_diff_pct(reference: f64, ours: f64) -> f64 {
    (ours - reference) / reference * 100.0
}

impl Group {
    /// Relative differences of p50, p95, p99 in percent, if both sides have flows.
    pub fn diffs(&self) -> Option<[f64; 3]> {
        let (r, o) = (self.reference?, self.ours?);
        Some([
            relative_diff_pct(r.p50, o.p50),
            relative_diff_pct(r.p95, o.p95),
            relative_diff_pct(r.p99, o.p99),
        ])
    }

    /// Which tolerances are missed: `[p50 missed, p95 missed]`; `None` if a side is empty.
    pub fn misses(&self) -> Option<[bool; 2]> {
        let d = self.diffs()?;
        Some([d[0].abs() > P50_TOLERANCE_PCT, d[1].abs() > P95_TOLERANCE_PCT])
    }

    /// Whether both sides have flows and p50 and p95 are within tolerance.
    pub fn passes(&self) -> bool {
        self.misses() == Some([false, false])
    }

    /// `PASS`, `MISS p50`, `MISS p95`, `MISS p50+p95`, or `n/a` (a side is empty).
    pub fn status(&self) -> &'static str {
        match self.misses() {
            None => "n/a",
            Some([false, false]) => "PASS",
            Some([true, false]) => "MISS p50",
            Some([false, true]) => "MISS p95",
            Some([true, true]) => "MISS p50+p95",
        }
    }
}

/// Flows sorted by size (ties by slowdown), cut into equal-count buckets of `step` percent:
/// bucket k holds positions `floor(k·n/100) .. floor((k+step)·n/100)`.
pub fn size_buckets(flows: &[Flow], step: usize) -> Vec<Vec<Flow>> {
    let mut sorted = flows.to_vec();
    sorted.sort_by(|a, b| a.size.cmp(&b.size).then(a.slowdown.total_cmp(&b.slowdown)));
    let n = sorted.len();
    (0..100)
        .step_by(step.max(1))
        .map(|k| sorted[k * n / 100..((k + step) * n / 100).min(n)].to_vec())
        .collect()
}

/// Whether a flow belongs to a group.
type Keep = fn(&Flow) -> bool;

/// How far two files hold the same flows, a flow being known by its size and start (as an
/// imported scenario keeps them). Both sides list completed flows only, so a run stopped
/// earlier than the other leaves flows on one side; files of different scenarios share few.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSets {
    /// Flows in both files (counted with multiplicity).
    pub both: usize,
    /// The reference's flows with no match in ours.
    pub only_reference: usize,
    /// Our flows with no match in the reference.
    pub only_ours: usize,
    /// The first unmatched flow of the reference, as (size, start_ns), by size then start.
    pub first_only_reference: Option<(u64, u64)>,
    /// The first unmatched flow of ours, as (size, start_ns), by size then start.
    pub first_only_ours: Option<(u64, u64)>,
    /// Of the flows in both, those whose FCT is the reference's to the nanosecond (a run
    /// that takes the reference's paths: `[switch] ecmp_seed = "node"`, as `import-ns3`
    /// writes). Flows with the same size and start are paired in order of FCT.
    pub same_fct: usize,
}

impl FlowSets {
    /// Matches the two sides' (size, start) pairs.
    pub fn of(reference: &[Flow], ours: &[Flow]) -> FlowSets {
        let keys = |flows: &[Flow]| {
            let mut k: Vec<(u64, u64, f64)> =
                flows.iter().map(|f| (f.size, f.start_ns, f.fct_ns)).collect();
            k.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
            k
        };
        let (r, o) = (keys(reference), keys(ours));
        let mut sets = FlowSets {
            both: 0,
            only_reference: 0,
            only_ours: 0,
            first_only_reference: None,
            first_only_ours: None,
            same_fct: 0,
        };
        let (mut i, mut j) = (0, 0);
        let key = |f: &(u64, u64, f64)| (f.0, f.1);
        while i < r.len() || j < o.len() {
            match (r.get(i), o.get(j)) {
                (Some(a), Some(b)) if key(a) == key(b) => {
                    sets.both += 1;
                    sets.same_fct += usize::from(a.2 == b.2);
                    i += 1;
                    j += 1;
                }
                (Some(a), b) if b.is_none_or(|b| key(a) < key(b)) => {
                    sets.only_reference += 1;
                    sets.first_only_reference.get_or_insert(key(a));
                    i += 1;
                }
                (_, Some(b)) => {
                    sets.only_ours += 1;
                    sets.first_only_ours.get_or_insert(key(b));
                    j += 1;
                }
                (_, None) => unreachable!("the loop runs while a side has flows left"),
            }
        }
        sets
    }

    /// Whether every flow has its match on the other side.
    pub fn same(&self) -> bool {
        self.only_reference == 0 && self.only_ours == 0
    }

    /// The warning `dcsim compare-ns3` prints when the sets differ, or `None` when they are
    /// the same.
    pub fn warning(&self) -> Option<String> {
        if self.same() {
            return None;
        }
        let example = |side: &str, f: Option<(u64, u64)>| {
            f.map_or_else(String::new, |(size, start)| {
                format!(" (the first only in {side}: {size} B at {start} ns)")
            })
        };
        Some(format!(
            "the files do not hold the same flows: {} in both (same size and start), {} only in \
             the reference{}, {} only in ours{}; the groups compare different flow sets (a run \
             stopped earlier than the other leaves its unfinished flows out; files of different \
             scenarios share few flows)",
            self.both,
            self.only_reference,
            example("the reference", self.first_only_reference),
            self.only_ours,
            example("ours", self.first_only_ours),
        ))
    }
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Flows < 100 KB, flows > 1 MB, all flows, then the 20 size buckets.
    pub groups: Vec<Group>,
}

impl Comparison {
    /// Compares the reference's flows with ours.
    pub fn new(reference: &[Flow], ours: &[Flow]) -> Comparison {
        let stats = |flows: &[Flow], keep: Keep| {
            Stats::of(flows.iter().filter(|f| keep(f)).map(|f| f.slowdown))
        };
        let mut groups = Vec::new();
        let filters: [(&str, Keep); 3] = [
            ("< 100KB", |f| f.size < SMALL_BYTES),
            ("> 1MB", |f| f.size > LARGE_BYTES),
            ("all", |_| true),
        ];
        for (name, keep) in filters {
            groups.push(Group {
                name: name.to_string(),
                reference: stats(reference, keep),
                ours: stats(ours, keep),
            });
        }
        let rb = size_buckets(reference, BUCKET_STEP_PERCENT);
        let ob = size_buckets(ours, BUCKET_STEP_PERCENT);
        for (i, (r, o)) in rb.iter().zip(&ob).enumerate() {
            let k = i * BUCKET_STEP_PERCENT;
            let largest =
                r.last().or(o.last()).map_or_else(String::new, |f| format!(" <={}B", f.size));
            groups.push(Group {
                name: format!(
                    "q{:.2}-{:.2}{largest}",
                    k as f64 / 100.0,
                    (k + BUCKET_STEP_PERCENT) as f64 / 100.0
                ),
                reference: Stats::of(r.iter().map(|f| f.slowdown)),
                ours: Stats::of(o.iter().map(|f| f.slowdown)),
            });
        }
        Comparison { groups }
    }

    /// The table printed by `dcsim compare-ns3`.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let width = self.groups.iter().map(|g| g.name.len()).max().unwrap_or(5).max(5);
        let _ = writeln!(
            out,
            "{:<width$}  {:>11}  {:>23}  {:>23}  {:>23}  result",
            "group",
            "n ref/ours",
            "ref p50 / p95 / p99",
            "ours p50 / p95 / p99",
            "diff % p50 / p95 / p99"
        );
        for g in &self.groups {
            let n = format!("{}/{}", g.reference.map_or(0, |s| s.n), g.ours.map_or(0, |s| s.n));
            let ps = |s: Option<Stats>| match s {
                Some(s) => format!("{:>7.3} {:>7.3} {:>7.3}", s.p50, s.p95, s.p99),
                None => format!("{:>7} {:>7} {:>7}", "-", "-", "-"),
            };
            let diffs = match g.diffs() {
                Some(d) => format!("{:>+7.1} {:>+7.1} {:>+7.1}", d[0], d[1], d[2]),
                None => format!("{:>7} {:>7} {:>7}", "-", "-", "-"),
            };
            let _ = writeln!(
                out,
                "{:<width$}  {n:>11}  {}  {}  {diffs}  {}",
                g.name,
                ps(g.reference),
                ps(g.ours),
                g.status()
            );
        }
        let compared = self.groups.iter().filter(|g| g.misses().is_some()).count();
        let passed = self.groups.iter().filter(|g| g.passes()).count();
        let _ = writeln!(
            out,
            "{passed} of {compared} groups within tolerance (p50 within {P50_TOLERANCE_PCT}%, p95 within {P95_TOLERANCE_PCT}%); slowdown = fct / reference standalone fct, floored at 1"
        );
        out
    }

    /// The same table as CSV (full precision).
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let header = [
            "group",
            "n_ref",
            "n_ours",
            "ref_p50",
            "ref_p95",
            "ref_p99",
            "ours_p50",
            "ours_p95",
            "ours_p99",
            "diff_p50_pct",
            "diff_p95_pct",
            "diff_p99_pct",
            "result",
        ];
        w.write_record(header).expect("in-memory CSV");
        let opt = |v: Option<f64>| v.map_or_else(String::new, |x| format!("{x:.6}"));
        for g in &self.groups {
            let (r, o, d) = (g.reference, g.ours, g.diffs());
            let rec = [
                g.name.clone(),
                r.map_or(0, |s| s.n).to_string(),
                o.map_or(0, |s| s.n).to_string(),
                opt(r.map(|s| s.p50)),
                opt(r.map(|s| s.p95)),
                opt(r.map(|s| s.p99)),
                opt(o.map(|s| s.p50)),
                opt(o.map(|s| s.p95)),
                opt(o.map(|s| s.p99)),
                opt(d.map(|d| d[0])),
                opt(d.map(|d| d[1])),
                opt(d.map(|d| d[2])),
                g.status().to_string(),
            ];
            w.write_record(&rec).expect("in-memory CSV");
        }
        String::from_utf8(w.into_inner().expect("in-memory CSV")).expect("CSV of UTF-8 fields")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(v: &[(u64, f64)]) -> Vec<Flow> {
        v.iter()
            .map(|&(size, slowdown)| Flow { size, start_ns: 0, slowdown, fct_ns: 1.0 })
            .collect()
    }

    fn keyed(v: &[(u64, u64)]) -> Vec<Flow> {
        v.iter()
            .map(|&(size, start_ns)| Flow { size, start_ns, slowdown: 1.0, fct_ns: 1.0 })
            .collect()
    }

    #[test]
    fn flow_sets_match_size_and_start_with_multiplicity() {
        // The same flows in another order: the same sets, no warning.
        let r = keyed(&[(1000, 5), (2000, 7), (1000, 5)]);
        let o = keyed(&[(1000, 5), (1000, 5), (2000, 7)]);
        let s = FlowSets::of(&r, &o);
        assert_eq!((s.both, s.only_reference, s.only_ours), (3, 0, 0));
        assert!(s.same() && s.warning().is_none());

        // A repeated flow counts once per copy; a start differing by 1 ns is another flow.
        let o = keyed(&[(1000, 5), (2000, 8), (3000, 1), (500, 9)]);
        let s = FlowSets::of(&r, &o);
        assert_eq!((s.both, s.only_reference, s.only_ours), (1, 2, 3));
        assert_eq!(s.first_only_reference, Some((1000, 5)));
        assert_eq!(s.first_only_ours, Some((500, 9)));
        let w = s.warning().expect("the sets differ");
        assert!(w.contains("1 in both (same size and start), 2 only in the reference (the first only in the reference: 1000 B at 5 ns), 3 only in ours (the first only in ours: 500 B at 9 ns)"), "{w}");

        // One side a subset of the other (a run stopped earlier): only that side's count.
        let s = FlowSets::of(&r, &r[..1]);
        assert_eq!((s.both, s.only_reference, s.only_ours), (1, 2, 0));
        assert_eq!(s.first_only_ours, None);
        assert!(!s.warning().expect("differ").contains("only in ours ("));
        let s = FlowSets::of(&[], &r);
        assert_eq!((s.both, s.only_reference, s.only_ours), (0, 0, 3));
    }

    #[test]
    fn flow_sets_count_the_flows_that_end_with_the_reference() {
        let f = |size, start_ns, fct_ns| Flow { size, start_ns, slowdown: 1.0, fct_ns };
        let r = [f(1000, 5, 300.0), f(1000, 5, 200.0), f(2000, 7, 400.0), f(9, 1, 50.0)];
        // Twins (same size and start) pair in order of FCT, whatever their order in the file;
        // 400 against 400.5 is another FCT; the unmatched flow is not counted.
        let o = [f(2000, 7, 400.5), f(1000, 5, 200.0), f(1000, 5, 300.0), f(8, 1, 50.0)];
        let s = FlowSets::of(&r, &o);
        assert_eq!((s.both, s.same_fct), (3, 2));
        let o = [f(1000, 5, 300.0), f(1000, 5, 250.0), f(2000, 7, 400.0)];
        assert_eq!(FlowSets::of(&r, &o).same_fct, 2);
    }

    #[test]
    fn percentile_is_element_floor_n_p() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(6.0));
        assert_eq!(percentile(&v, 0.95), Some(10.0));
        assert_eq!(percentile(&v, 0.99), Some(10.0));
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(51.0));
        assert_eq!(percentile(&v, 0.95), Some(96.0));
        assert_eq!(percentile(&v, 0.99), Some(100.0));
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        // 20 * 0.95 is 19 in floating point, as in the reference's Python.
        assert_eq!(percentile(&v, 0.95), Some(20.0));
        assert_eq!(percentile(&[7.0], 0.99), Some(7.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn reference_lines_give_floored_slowdowns() {
        let text = "0b000001 0b000101 10000 100 5000 2000000000 3000 1000\n\n\
                    0b000101 0b000001 10000 100 700 2000000123 500 1000\n";
        assert_eq!(
            parse_reference(text).unwrap(),
            [
                Flow { size: 5000, start_ns: 2_000_000_000, slowdown: 3.0, fct_ns: 3000.0 },
                Flow { size: 700, start_ns: 2_000_000_123, slowdown: 1.0, fct_ns: 500.0 }
            ]
        );
        let e = parse_reference("a b c\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("expected 8 fields")), (1, true));
        let e = parse_reference("\n0b000001 0b000002 1 1 10 0 x 5\n").unwrap_err();
        assert_eq!(e, line_err(2, "fct_ns `x` is not a non-negative integer"));
        let e = parse_reference("0b000001 0b000002 1 1 10 0 5 0\n").unwrap_err();
        assert!(e.message.contains("standalone_ns is 0"), "{e:?}");
        let e = parse_reference("0b000001 0b000002 1 1 0 0 5 5\n").unwrap_err();
        assert_eq!(e, line_err(1, "size is 0; a flow carries at least one byte"));
        let e = parse_reference("0b000001 0b000002 1 1 10 0 0 5\n").unwrap_err();
        assert_eq!(e, line_err(1, "fct_ns is 0; a flow takes time to complete"));
    }

    const HEADER: &str =
        "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns\n";

    #[test]
    fn our_rows_use_the_reference_ideal_fct() {
        let text =
            format!("{HEADER}0,0,1,1000,0,2500.5,900,2.778333,1000\n1,0,1,9,77,10,9,1.1,20\n");
        assert_eq!(
            parse_ours(&text).unwrap(),
            [
                Flow { size: 1000, start_ns: 0, slowdown: 2.5005, fct_ns: 2500.5 },
                Flow { size: 9, start_ns: 77, slowdown: 1.0, fct_ns: 10.0 }
            ]
        );
        let e = parse_ours("flow_id,size_bytes\n0,1\n").unwrap_err();
        assert_eq!(e, line_err(1, "no `start_ns` column (is this a dcsim fct.csv?)"));
        let e = parse_ours("flow_id,size_bytes,start_ns\n0,1,0\n").unwrap_err();
        assert_eq!(e, line_err(1, "no `fct_ns` column (is this a dcsim fct.csv?)"));
        let e = parse_ours(&format!("{HEADER}0,0,1,1000,1.5,3,900,1,1000\n")).unwrap_err();
        assert_eq!(e, line_err(2, "start_ns `1.5` is not a non-negative integer"));
        let e = parse_ours(&format!("{HEADER}0,0,1,1000,0,-3,900,1,1000\n")).unwrap_err();
        assert_eq!(e, line_err(2, "fct_ns `-3` is not a non-negative number"));
        let e = parse_ours(&format!("{HEADER}0,0,1,1000,0,3\n")).unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_ours(&format!("{HEADER}0,0,1,1000,0,0,900,1,1000\n")).unwrap_err();
        assert_eq!(e, line_err(2, "fct_ns is 0; a flow takes time to complete"));
        // A reference ideal so small that the slowdown is infinite (it printed `inf`) or
        // absurd (1e-300 printed a 300-digit table), and times beyond the time limit.
        for (row, says) in [
            ("14678,900,1,1e-320", "ref_ideal_fct_ns `1e-320`"),
            ("14678,900,1,1e-300", "ref_ideal_fct_ns `1e-300`"),
            ("18446744073709551615,900,1,1000", "fct_ns `18446744073709551615`"),
        ] {
            let e = parse_ours(&format!("{HEADER}0,0,1,1000,0,{row}\n")).unwrap_err();
            assert_eq!(e.line, 2);
            assert!(e.message.starts_with(says), "{}", e.message);
            assert!(e.message.contains("outside a run's times"), "{}", e.message);
        }
        // The reference's own file: its IPs are 8 hex digits, its times within the limit.
        let line = |l: &str| parse_reference(l).unwrap_err().message;
        assert!(line("zz000001 0b000101 10000 100 1000 2000000000 1000 1000")
            .contains("sip `zz000001`"));
        assert!(line("0b000001 1 10000 100 1000 2000000000 1000 1000").contains("dip `1`"));
        let huge = "0b000001 0b000101 10000 100 1000 2000000000 1000 18446744073709551615";
        assert!(
            line(huge).contains("standalone_ns `18446744073709551615` is more than the time limit")
        );
        parse_reference("0b000001 0b000101 10000 100 1000 2000000000 1000 4611686018427387")
            .unwrap();
    }

    #[test]
    fn groups_and_buckets() {
        // 40 flows: sizes 1 KB .. 40 KB plus... sizes chosen so that 10 are > 1 MB.
        let mut r = Vec::new();
        let mut o = Vec::new();
        for i in 0..40u64 {
            let size = if i < 30 { 1000 * (i + 1) } else { 2_000_000 + i };
            r.push(Flow { size, start_ns: 0, slowdown: 1.0 + i as f64, fct_ns: 1.0 });
            o.push(Flow { size, start_ns: 0, slowdown: (1.0 + i as f64) * 1.12, fct_ns: 1.0 });
        }
        let c = Comparison::new(&r, &o);
        assert_eq!(c.groups.len(), 3 + 20);
        let small = &c.groups[0];
        assert_eq!(small.reference.unwrap().n, 30);
        // 30 values 1..30: p50 = element 15 = 16, p95 = element 28 = 29, p99 = element 29.
        assert_eq!(small.reference.unwrap(), Stats { n: 30, p50: 16.0, p95: 29.0, p99: 30.0 });
        let large = &c.groups[1];
        assert_eq!(large.reference.unwrap(), Stats { n: 10, p50: 36.0, p95: 40.0, p99: 40.0 });
        // 12% higher everywhere: p50 misses (> 10%), p95 passes (<= 15%).
        let d = large.diffs().unwrap();
        assert!((d[0] - 12.0).abs() < 1e-9 && (d[1] - 12.0).abs() < 1e-9, "{d:?}");
        assert_eq!(large.status(), "MISS p50");
        // Buckets of 2 flows each (40 * 5 / 100).
        let b0 = &c.groups[3];
        assert_eq!(b0.name, "q0.00-0.05 <=2000B");
        assert_eq!(b0.reference.unwrap(), Stats { n: 2, p50: 2.0, p95: 2.0, p99: 2.0 });
        assert_eq!(c.groups[22].name, "q0.95-1.00 <=2000039B");
        let table = c.table();
        assert!(table.contains("0 of 23 groups within tolerance"), "{table}");
        assert!(table.lines().nth(2).unwrap().ends_with("MISS p50"), "{table}");
        let csv = c.csv();
        assert!(csv.starts_with("group,n_ref,n_ours,ref_p50"), "{csv}");
        assert!(csv.contains("\n< 100KB,30,30,16.000000,29.000000,30.000000,17.920000,"), "{csv}");

        let same = Comparison::new(&r, &r);
        assert!(same.groups.iter().all(Group::passes));
        assert!(same.table().contains("23 of 23 groups within tolerance"));
    }

    #[test]
    fn empty_sides_are_not_applicable() {
        let r = flows(&[(10, 1.5)]);
        let c = Comparison::new(&r, &[]);
        assert_eq!(c.groups[2].status(), "n/a");
        assert_eq!(c.groups[1].reference, None);
        // One flow: only the last bucket (positions 0..1) holds it.
        assert!(c.groups[3..22].iter().all(|g| g.reference.is_none()));
        assert_eq!(c.groups[22].reference.unwrap().n, 1);
        assert!(c.table().contains("0 of 0 groups"));
    }

    /// With the largest flow dropped and the slowdowns rounded to 6 significant digits as
    /// awk prints them, the buckets reproduce the reference's own analysis file.
    #[test]
    fn buckets_reproduce_the_reference_analysis() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/reference/calibration/small-ws30");
        let Ok(fct) = std::fs::read_to_string(dir.join("fct-hpcc.txt")) else {
            eprintln!("skipped: {} not found", dir.display());
            return;
        };
        let analysis = std::fs::read_to_string(dir.join("fct-analysis-hpcc.txt")).unwrap();
        let mut fl = parse_reference(&fct).unwrap();
        for f in &mut fl {
            f.slowdown = format!("{:.5e}", f.slowdown).parse().unwrap();
        }
        fl.sort_by(|a, b| a.size.cmp(&b.size).then(a.slowdown.total_cmp(&b.slowdown)));
        fl.pop();
        let buckets = size_buckets(&fl, 5);
        for (b, line) in buckets.iter().zip(analysis.lines()) {
            let s = Stats::of(b.iter().map(|f| f.slowdown)).unwrap();
            let largest = b.last().unwrap().size;
            let ours = format!("{largest}\t{:.3} {:.3} {:.3}", s.p50, s.p95, s.p99);
            assert!(line.ends_with(&ours), "reference `{line}`, ours `{ours}`");
        }
        assert_eq!(buckets.len(), analysis.lines().count());
    }

    #[test]
    fn calibration_group_sizes_match_the_readme() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/reference/calibration/small-ws30");
        let Ok(fct) = std::fs::read_to_string(dir.join("fct-hpcc.txt")) else {
            eprintln!("skipped: {} not found", dir.display());
            return;
        };
        let fl = parse_reference(&fct).unwrap();
        let c = Comparison::new(&fl, &fl);
        let n: Vec<usize> = c.groups[..3].iter().map(|g| g.reference.unwrap().n).collect();
        assert_eq!(n, [1064, 586, 1952]);
        // README: hpcc 1.13 / 1.95 / 2.60 for flows < 100 KB, 1.34 / 3.64 / 5.80 for all.
        let s = c.groups[0].reference.unwrap();
        assert_eq!(format!("{:.2} {:.2} {:.2}", s.p50, s.p95, s.p99), "1.13 1.95 2.60");
        let s = c.groups[2].reference.unwrap();
        assert_eq!(format!("{:.2} {:.2} {:.2}", s.p50, s.p95, s.p99), "1.34 3.64 5.80");
    }
}
