//! The reference simulator's flow file (spec §6.2): a count on line 1, then one flow per line
//! as `src dst pg dport size_bytes start_seconds`, sorted by start time.
//!
//! [`parse`] checks the syntax and everything that needs no network (count, numbers, order,
//! sizes, priorities); the scenario loader then checks the endpoints against the topology and
//! reports them with the same `FILE:LINE:` prefix.
//!
//! Start times are converted with [`Time::from_secs_f64_ns_trunc`], which truncates to the
//! nanosecond exactly as the reference does, so that flows start at the same nanosecond.

use std::fmt::Write as _;

use dcsim_core::config::FlowSpec;
use dcsim_core::ids::{FlowId, NodeId};
use dcsim_core::units::{Time, PS_PER_NS, TIME_LIMIT, TIME_LIMIT_TEXT};
use dcsim_types::text::tokens;

/// A problem on one line of a flow file: where it is and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct FlowFileError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column (in characters) where the offending token starts.
    pub col: usize,
    /// What the token is: `count` (line 1), `flow[i]` (a whole flow line), or
    /// `flow[i].src`, `.dst`, `.pg`, `.dport`, `.size`, `.start` (`i` from 0 in file order).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// The names of a flow line's six fields, in order.
pub const FIELDS: [&str; 6] = ["src", "dst", "pg", "dport", "size", "start"];

/// One flow read from a flow file, with the line it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileFlow {
    /// 1-based line number.
    pub line: usize,
    /// The 1-based column where each of the six fields starts ([`FIELDS`] order).
    pub cols: [usize; 6],
    /// The flow; its id is its position in the file (0 for the first flow line).
    pub spec: FlowSpec,
}

impl FileFlow {
    /// An error about field `name` (one of [`FIELDS`]) of this flow.
    pub fn error(&self, name: &str, message: impl Into<String>) -> FlowFileError {
        let i = FIELDS.iter().position(|f| *f == name).unwrap_or(0);
        FlowFileError {
            line: self.line,
            col: self.cols[i],
            field: format!("flow[{}].{name}", self.spec.id.idx()),
            message: message.into(),
        }
    }
}

/// Parses a flow file. Blank lines after the last flow are ignored; blank lines between flows
/// are errors (the reference would read the next line's fields instead).
///
/// # Errors
/// The first problem found, with its line, column and field: a missing or malformed count, a
/// count that disagrees with the number of flow lines, a line without exactly six fields, a
/// field that is not a number of the right kind, a source equal to the destination, a
/// priority group outside 1..=7, a size of zero, a negative or non-finite start time, one
/// later than [`dcsim_core::units::TIME_LIMIT`], or a start time earlier than the previous
/// line's (the file must be sorted by start time; equal times are fine).
pub fn parse(text: &str) -> Result<Vec<FileFlow>, FlowFileError> {
    let err = |line: usize, col: usize, field: String, message: String| FlowFileError {
        line,
        col,
        field,
        message,
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let (first_no, first) = lines.next().ok_or_else(|| {
        err(1, 1, "count".into(), "empty file; expected the flow count on line 1".into())
    })?;
    let count_text = first.trim();
    let count_col = tokens(first).first().map_or(1, |t| t.0);
    let count: usize = count_text.parse().map_err(|_| {
        err(
            first_no,
            count_col,
            "count".into(),
            format!("expected the number of flows, found `{count_text}`"),
        )
    })?;

    // Drop trailing blank lines.
    let body: Vec<(usize, &str)> = lines.collect();
    let last_content = body.iter().rposition(|(_, l)| !l.trim().is_empty()).map_or(0, |i| i + 1);
    let body = &body[..last_content];

    if let Some(i) = body.iter().position(|(_, l)| l.trim().is_empty()) {
        return Err(err(
            body[i].0,
            1,
            format!("flow[{i}]"),
            "blank line between flows; every line after the count must be a flow".into(),
        ));
    }
    if body.len() != count {
        let line = if body.len() > count {
            body[count].0
        } else {
            body.last().map_or(first_no, |(n, _)| *n)
        };
        return Err(err(
            line,
            1,
            "count".into(),
            format!(
                "line 1 declares {count} flow{}, but the file has {} flow line{}",
                if count == 1 { "" } else { "s" },
                body.len(),
                if body.len() == 1 { "" } else { "s" }
            ),
        ));
    }

    let mut flows = Vec::with_capacity(count);
    let mut prev_start: Option<(Time, usize)> = None;
    for (i, &(line, content)) in body.iter().enumerate() {
        let toks = tokens(content);
        if toks.len() != 6 {
            let col = toks.get(6).map_or(1, |t| t.0);
            return Err(err(
                line,
                col,
                format!("flow[{i}]"),
                format!(
                    "expected 6 fields `src dst pg dport size start_seconds`, found {}: `{}`",
                    toks.len(),
                    content.trim()
                ),
            ));
        }
        let cols: [usize; 6] = std::array::from_fn(|k| toks[k].0);
        let fields: [&str; 6] = std::array::from_fn(|k| toks[k].1);
        let at = |k: usize, message: String| {
            err(line, cols[k], format!("flow[{i}].{}", FIELDS[k]), message)
        };
        let int = |k: usize| -> Result<u64, FlowFileError> {
            fields[k].parse::<u64>().map_err(|_| {
                at(k, format!("{} `{}` is not a non-negative integer", FIELDS[k], fields[k]))
            })
        };
        let node = |k: usize| -> Result<NodeId, FlowFileError> {
            let v = int(k)?;
            u32::try_from(v)
                .map(NodeId)
                .map_err(|_| at(k, format!("{} {v} is not a valid node id", FIELDS[k])))
        };
        let src = node(0)?;
        let dst = node(1)?;
        let pg = int(2)?;
        let dport = int(3)?;
        let size = int(4)?;
        let start_text = fields[5];
        let secs: f64 = start_text
            .parse()
            .map_err(|_| at(5, format!("start time `{start_text}` is not a number of seconds")))?;
        if src == dst {
            return Err(at(1, format!("src and dst are the same node {src}")));
        }
        if !(1..=7).contains(&pg) {
            return Err(at(2, format!("pg {pg} is outside 1..=7")));
        }
        let dport = u16::try_from(dport)
            .map_err(|_| at(3, format!("dport {dport} is larger than 65535")))?;
        if size == 0 {
            return Err(at(4, "size is 0; a flow needs at least 1 byte".into()));
        }
        let start = Time::from_secs_f64_ns_trunc(secs).ok_or_else(|| {
            // Finite and non-negative, but too large for the clock: the limit is the reason.
            let why = if secs.is_finite() && secs >= 0.0 {
                format!("is later than the limit of {TIME_LIMIT_TEXT}")
            } else {
                "must be a finite, non-negative number of seconds".to_string()
            };
            at(5, format!("start time `{start_text}` {why}"))
        })?;
        if start.as_ps() > TIME_LIMIT.as_ps() {
            return Err(at(
                5,
                format!("start time `{start_text}` is later than the limit of {TIME_LIMIT_TEXT}"),
            ));
        }
        if let Some((prev, prev_line)) = prev_start {
            if start < prev {
                return Err(at(
                    5,
                    format!(
                        "start time {start_text} s is earlier than the previous flow's (line {prev_line}); \
                         the flow file must be sorted by start time"
                    ),
                ));
            }
        }
        prev_start = Some((start, line));
        flows.push(FileFlow {
            line,
            cols,
            spec: FlowSpec { id: FlowId::from_idx(i), src, dst, size, start, pg: pg as u8, dport },
        });
    }
    Ok(flows)
}

/// Writes flows in the reference format. Start times are written in seconds with nanosecond
/// digits (the format carries nothing finer; picoseconds are dropped), chosen so that
/// [`parse`], and the reference's own truncating conversion, read back the same nanosecond.
pub fn write(flows: &[FlowSpec]) -> String {
    let mut out = String::with_capacity(32 * (flows.len() + 1));
    let _ = writeln!(out, "{}", flows.len());
    for f in flows {
        let _ = writeln!(
            out,
            "{} {} {} {} {} {}",
            f.src,
            f.dst,
            f.pg,
            f.dport,
            f.size,
            seconds_text(f.start.as_ns())
        );
    }
    out
}

/// Seconds with nine decimals for `ns`; if the truncating conversion would read that back one
/// nanosecond short, a tenth decimal `5` (half a nanosecond) is appended.
fn seconds_text(ns: u64) -> String {
    let ns_per_s = 1_000_000_000;
    let text = format!("{}.{:09}", ns / ns_per_s, ns % ns_per_s);
    let back = text.parse::<f64>().ok().and_then(Time::from_secs_f64_ns_trunc);
    if back.map(|t| t.as_ps() / PS_PER_NS) == Some(ns) {
        text
    } else {
        text + "5"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: u32, src: u32, dst: u32, size: u64, start_ns: u64) -> FlowSpec {
        FlowSpec {
            id: FlowId(id),
            src: NodeId(src),
            dst: NodeId(dst),
            size,
            start: Time::from_ns(start_ns),
            pg: 3,
            dport: 100,
        }
    }

    #[test]
    fn parses_reference_lines() {
        let text = "2 \n0 17 3 100 1000000 2.000001234\n5 3 3 200 42 2.000001234\n\n";
        let flows = parse(text).unwrap();
        assert_eq!(flows.len(), 2);
        assert_eq!(flows[0].line, 2);
        assert_eq!(flows[0].spec, flow(0, 0, 17, 1_000_000, 2_000_001_233));
        let mut f1 = flow(1, 5, 3, 42, 2_000_001_233);
        f1.dport = 200;
        assert_eq!(flows[1].spec, f1);
    }

    #[test]
    fn empty_flow_list() {
        assert_eq!(parse("0\n").unwrap(), vec![]);
    }

    fn error_of(text: &str) -> (usize, String) {
        let e = parse(text).unwrap_err();
        (e.line, e.message)
    }

    /// `LINE:COL FIELD` of the error.
    fn at_of(text: &str) -> String {
        let e = parse(text).unwrap_err();
        format!("{}:{} {}", e.line, e.col, e.field)
    }

    #[test]
    fn errors_point_at_the_column_and_field() {
        assert_eq!(at_of(""), "1:1 count");
        assert_eq!(at_of("  two\n"), "1:3 count");
        assert_eq!(at_of("3\n0 1 3 100 10 0\n0 2 3 100 10 0\n"), "3:1 count");
        assert_eq!(at_of("1\n0 1 3 100 10\n"), "2:1 flow[0]");
        assert_eq!(at_of("1\n0 1 3 100 10 0 9\n"), "2:16 flow[0]");
        assert_eq!(at_of("2\n0 1 3 100 10 0\n\n0 1 3 100 10 0\n"), "3:1 flow[1]");
        assert_eq!(at_of("2\n0 1 3 100 10 0\n0 x 3 100 10 0\n"), "3:3 flow[1].dst");
        assert_eq!(at_of("1\n0 1 3 100  0 0\n"), "2:12 flow[0].size");
        assert_eq!(at_of("1\n4 4 3 100 5 0\n"), "2:3 flow[0].dst");
        assert_eq!(at_of("1\n0 1 8 100 5 0\n"), "2:5 flow[0].pg");
        assert_eq!(at_of("1\n0 1 3 70000 5 0\n"), "2:7 flow[0].dport");
        assert_eq!(at_of("1\n0 1 3 100 5 soon\n"), "2:13 flow[0].start");
        assert_eq!(at_of("1\n0 1 3 100 5 4611687\n"), "2:13 flow[0].start");
        let (_, m) = error_of("1\n0 1 3 100 5 4611687\n");
        assert_eq!(
            m,
            "start time `4611687` is later than the limit of 2^62 ps (4611686.018427387904 s, \
             about 53 days)"
        );
        // Beyond what the clock can hold at all: still the limit, not "not finite".
        let (_, m) = error_of("1\n0 1 3 100 5 1e300\n");
        assert!(m.starts_with("start time `1e300` is later than the limit of 2^62 ps"), "{m}");
        let (_, m) = error_of("1\n0 1 3 100 5 -1\n");
        assert_eq!(m, "start time `-1` must be a finite, non-negative number of seconds");
        let f = parse("1\n 0  1 3 100 5 0\n").unwrap();
        assert_eq!(f[0].cols, [2, 5, 7, 9, 13, 15]);
        assert_eq!(f[0].error("dst", "x").to_string(), "line 2: x");
        assert_eq!(
            (f[0].error("dst", "x").col, f[0].error("dst", "x").field),
            (5, "flow[0].dst".into())
        );
    }

    #[test]
    fn errors_name_the_line() {
        let (l, m) = error_of("");
        assert_eq!(l, 1);
        assert!(m.contains("empty"), "{m}");
        let (l, m) = error_of("two\n");
        assert_eq!(l, 1);
        assert!(m.contains("`two`"), "{m}");
        let (l, m) = error_of("3\n0 1 3 100 10 0\n0 2 3 100 10 0\n");
        assert_eq!(l, 3);
        assert!(m.contains("declares 3 flows, but the file has 2 flow lines"), "{m}");
        let (l, m) = error_of("1\n0 1 3 100 10 0\n0 2 3 100 10 0\n");
        assert_eq!(l, 3);
        assert!(m.contains("declares 1 flow,"), "{m}");
        let (l, m) = error_of("1\n0 1 3 100 10\n");
        assert_eq!(l, 2);
        assert!(m.contains("expected 6 fields"), "{m}");
        let (l, m) = error_of("2\n0 1 3 100 10 0\n\n");
        assert_eq!(l, 2, "{m}");
        let (l, m) = error_of("2\n0 1 3 100 10 0\n\n0 1 3 100 10 0\n");
        assert_eq!(l, 3);
        assert!(m.contains("blank line"), "{m}");
        let (l, m) = error_of("2\n0 1 3 100 10 0\n0 x 3 100 10 0\n");
        assert_eq!(l, 3);
        assert!(m.contains("dst `x`"), "{m}");
        let (l, m) = error_of("1\n0 1 3 100 0 0\n");
        assert_eq!(l, 2);
        assert!(m.contains("size is 0"), "{m}");
        let (l, m) = error_of("1\n0 1 3 100 -5 0\n");
        assert_eq!(l, 2);
        assert!(m.contains("size `-5`"), "{m}");
        let (l, m) = error_of("1\n4 4 3 100 5 0\n");
        assert_eq!(l, 2);
        assert!(m.contains("same node 4"), "{m}");
        let (l, m) = error_of("1\n0 1 8 100 5 0\n");
        assert_eq!(l, 2);
        assert!(m.contains("pg 8"), "{m}");
        let (l, m) = error_of("1\n0 1 3 70000 5 0\n");
        assert_eq!(l, 2);
        assert!(m.contains("dport 70000"), "{m}");
        let (l, m) = error_of("1\n0 1 3 100 5 -1\n");
        assert_eq!(l, 2);
        assert!(m.contains("non-negative"), "{m}");
        let (l, m) = error_of("1\n0 1 3 100 5 soon\n");
        assert_eq!(l, 2);
        assert!(m.contains("`soon`"), "{m}");
        let (l, m) = error_of("3\n0 1 3 100 5 2.0\n0 1 3 100 5 2.0\n0 1 3 100 5 1.5\n");
        assert_eq!(l, 4);
        assert!(m.contains("earlier than the previous flow's (line 3)"), "{m}");
    }

    #[test]
    fn write_then_parse_round_trips() {
        let mut flows = Vec::new();
        // Start times chosen to include values that a 9-decimal rendering would read back one
        // nanosecond short under the truncating conversion.
        let mut t = 0u64;
        for i in 0..2000u32 {
            t += 1 + (i as u64 * 7_919) % 1_000_003;
            flows.push(flow(i, i % 8, 8 + i % 8, 1 + i as u64, 2_000_000_000 + t));
        }
        let text = write(&flows);
        let back: Vec<FlowSpec> = parse(&text).unwrap().into_iter().map(|f| f.spec).collect();
        assert_eq!(back, flows);
        assert!(text.starts_with("2000\n0 8 3 100 1 2.000000001"), "{}", &text[..40]);
    }
}
