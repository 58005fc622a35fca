//! The reference simulator's topology file format (spec §6.1): reading and writing.
//!
//! ```text
//! N S L                 node, switch and link counts
//! s1 s2 ... sS          the switch ids; every other id in 0..N is a host
//! a b rate delay err    L lines: a full-duplex link, e.g. `0 64 100Gbps 1000ns 0`
//! ```
//!
//! Rates are a decimal number followed by an ns-3 `DataRate` unit: `bps`, `Kbps`/`kbps`,
//! `Mbps`, `Gbps`, the `b/s` spellings (`Gb/s`), the byte units (`GBps`, `GB/s`, ×8) and
//! the binary `Kib/s`, `Mib/s`, `Gib/s`; the value is truncated to whole bits per second.
//! Delays are a decimal number followed by `s`, `ms`, `us`, `ns` or `ps`, converted to whole
//! nanoseconds exactly as ns-3 does (spec §0): the number is read as a double *in its unit*,
//! its fraction is truncated to a 64-bit binary fraction, and the product with the unit's
//! length in nanoseconds is truncated again. So `0.001ms` and `1us` are exactly 1000 ns,
//! while `0.0001ms` is 99 ns. Both a rate and a delay must carry a unit (ns-3 would read a
//! bare delay as seconds; dcsim rejects it as a likely mistake). Blank lines are ignored.

use std::fmt::Write as _;

use dcsim_core::ids::NodeId;
use dcsim_core::network::{LinkSpec, NodeKind};
use dcsim_core::units::{BitsPerSec, Duration, MAX_RATE, PS_PER_NS, TIME_LIMIT};

use crate::builders::MAX_NODES;
use crate::error::{FilePos, LinkRef, TopologyError};
use crate::topology::Topology;

/// Reads a reference topology file. The returned [`Topology`] records each link's line
/// number, so that [`Topology::validate`] can name lines in its errors; this function checks
/// only the syntax, the counts and the switch-id line.
///
/// # Errors
/// A [`TopologyError`] naming the 1-based line: a bad header, a switch id out of range or
/// listed twice, a wrong number of switch ids or link fields, a bad node id, rate, delay or
/// error rate, a rate above [`dcsim_core::units::MAX_RATE`] or a delay above
/// [`dcsim_core::units::TIME_LIMIT`], fewer links than declared, or content after the declared
/// links.
pub fn parse_ns3(text: &str) -> Result<Topology, TopologyError> {
    let total_lines = text.lines().count();
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty());

    let (hline, header) = lines.next().ok_or(TopologyError::EmptyFile)?;
    let counts: Vec<usize> = header
        .split_whitespace()
        .map(|t| t.parse::<usize>())
        .collect::<Result<_, _>>()
        .ok()
        .filter(|c: &Vec<usize>| c.len() == 3)
        .ok_or_else(|| TopologyError::BadHeader { line: hline, text: header.to_string() })?;
    let (nodes, switches, declared) = (counts[0], counts[1], counts[2]);
    if nodes > MAX_NODES {
        return Err(TopologyError::TooManyNodes { line: hline, nodes, max: MAX_NODES });
    }
    if switches > nodes {
        return Err(TopologyError::TooManySwitches { line: hline, switches, nodes });
    }

    let mut kinds = vec![NodeKind::Host; nodes];
    if switches > 0 {
        let (sline, ids) = lines.next().ok_or(TopologyError::SwitchCount {
            line: hline + 1,
            expected: switches,
            found: 0,
        })?;
        let tokens: Vec<&str> = ids.split_whitespace().collect();
        if tokens.len() != switches {
            return Err(TopologyError::SwitchCount {
                line: sline,
                expected: switches,
                found: tokens.len(),
            });
        }
        for tok in tokens {
            let id = parse_node(sline, tok)?;
            let slot = kinds.get_mut(id.idx()).ok_or(TopologyError::SwitchOutOfRange {
                line: sline,
                id: id.0,
                nodes,
            })?;
            if *slot == NodeKind::Switch {
                return Err(TopologyError::DuplicateSwitch { line: sline, id: id.0 });
            }
            *slot = NodeKind::Switch;
        }
    }

    let mut links = Vec::new();
    let mut link_lines = Vec::new();
    for found in 0..declared {
        let Some((line, text)) = lines.next() else {
            return Err(TopologyError::MissingLinks { line: total_lines + 1, declared, found });
        };
        let fields: Vec<&str> = text.split_whitespace().collect();
        let [a, b, rate, delay, err] = fields[..] else {
            return Err(TopologyError::BadLinkLine {
                line,
                found: fields.len(),
                text: text.to_string(),
            });
        };
        let a = parse_node(line, a)?;
        let b = parse_node(line, b)?;
        let rate_token = rate;
        let rate = parse_rate(rate)
            .ok_or_else(|| TopologyError::BadRate { line, token: rate.to_string() })?;
        if rate > MAX_RATE {
            return Err(TopologyError::RateTooHigh { line, token: rate_token.to_string() });
        }
        let delay_token = delay;
        let delay = parse_delay(delay)
            .ok_or_else(|| TopologyError::BadDelay { line, token: delay.to_string() })?;
        if delay > TIME_LIMIT {
            return Err(TopologyError::DelayTooLong { line, token: delay_token.to_string() });
        }
        let loss = err
            .parse::<f64>()
            .map_err(|_| TopologyError::BadErrorRate { line, token: err.to_string() })?;
        links.push(LinkSpec { a, b, rate, delay, loss });
        link_lines.push(line);
    }
    if let Some((line, text)) = lines.next() {
        return Err(TopologyError::TrailingContent { line, declared, text: text.to_string() });
    }
    Ok(Topology { kinds, links, link_lines })
}

fn parse_node(line: usize, tok: &str) -> Result<NodeId, TopologyError> {
    tok.parse::<u32>()
        .map(NodeId)
        .map_err(|_| TopologyError::BadNodeId { line, token: tok.to_string() })
}

/// Splits `s` into its leading run of characters in `numeric` and the rest.
fn split_number<'a>(s: &'a str, numeric: &str) -> (&'a str, &'a str) {
    let end = s.find(|c: char| !numeric.contains(c)).unwrap_or(s.len());
    s.split_at(end)
}

/// Parses an ns-3 `DataRate` string such as `100Gbps`, `400Gb/s`, `10Mbps`, `1Kbps`, `64bps`
/// (a non-negative decimal number and a unit; see the [module docs](self)). The value is
/// truncated to whole bits per second. Returns `None` for anything else.
pub fn parse_rate(s: &str) -> Option<BitsPerSec> {
    let (num, unit) = split_number(s, "0123456789.");
    if num.is_empty() {
        return None;
    }
    let value: f64 = num.parse().ok()?;
    let (prefix, bits) = if let Some(p) = unit.strip_suffix("bps").or(unit.strip_suffix("b/s")) {
        (p, 1.0)
    } else if let Some(p) = unit.strip_suffix("Bps").or(unit.strip_suffix("B/s")) {
        (p, 8.0)
    } else {
        return None;
    };
    let scale = match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "m" | "M" => 1e6,
        "g" | "G" => 1e9,
        "Ki" => 1024.0,
        "Mi" => 1_048_576.0,
        "Gi" => 1_073_741_824.0,
        _ => return None,
    };
    let bps = value * scale * bits;
    // 2^64 is the first value that does not fit.
    if !(0.0..18_446_744_073_709_551_616.0).contains(&bps) {
        return None;
    }
    Some(BitsPerSec(bps as u64))
}

/// Parses an ns-3 time string such as `1000ns`, `1us`, `0.001ms`, `2s` or `500ps` (a
/// non-negative decimal number and a unit) into whole nanoseconds with ns-3's truncation
/// (spec §0; see the [module docs](self)). Returns `None` for anything else, including a
/// missing unit, a negative value or a value too large for a [`Duration`].
pub fn parse_delay(s: &str) -> Option<Duration> {
    let (num, unit) = split_number(s, "+-0123456789.eE");
    if num.is_empty() || num.starts_with('-') {
        return None;
    }
    let value: f64 = num.parse().ok()?;
    // Bound the integer part so that every conversion below is exact and cannot overflow.
    if !(0.0..9.0e15).contains(&value) {
        return None;
    }
    let whole = value.floor();
    // ns-3's int64x64_t(double): the fraction times 2^64 (exact: a power-of-two scaling),
    // truncated to an integer.
    let frac = ((value - whole) * 18_446_744_073_709_551_616.0) as u128;
    let whole = whole as u128;
    let ns: u128 = match unit {
        // Units at or above the nanosecond resolution: multiply, then keep the integer part.
        "s" | "ms" | "us" | "ns" => {
            let factor: u128 = match unit {
                "s" => 1_000_000_000,
                "ms" => 1_000_000,
                "us" => 1_000,
                _ => 1,
            };
            whole * factor + ((frac * factor) >> 64)
        }
        // Below the resolution: divide and truncate.
        "ps" => ((whole << 64) + frac) / (1_000u128 << 64),
        _ => return None,
    };
    let ps = u64::try_from(ns).ok()?.checked_mul(PS_PER_NS)?;
    Some(Duration(ps))
}

/// The whitespace-separated tokens of line `line` (1-based) of `text`, each with the 1-based
/// column (in characters) where it starts.
fn tokens(text: &str, line: usize) -> Vec<(usize, &str)> {
    let Some(l) = line.checked_sub(1).and_then(|i| text.lines().nth(i)) else {
        return Vec::new();
    };
    dcsim_core::text::tokens(l)
}

/// What a line of a topology file holds.
enum Role {
    Header,
    SwitchIds,
    Link(usize),
    Blank,
}

/// The role of line `line` (1-based), as [`parse_ns3`] reads the file: blank lines are
/// skipped, the first other line is the header, the next the switch ids if the header declares
/// switches, and every later one a link.
fn role(text: &str, line: usize) -> Role {
    let mut content = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = content.next() else { return Role::Blank };
    let switch_line = header
        .split_whitespace()
        .nth(1)
        .and_then(|t| t.parse::<usize>().ok())
        .is_some_and(|s| s > 0);
    let header_no = text.lines().position(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
    if line == header_no {
        return Role::Header;
    }
    let Some(idx) = content.position(|(i, _)| i + 1 == line) else { return Role::Blank };
    match (idx, switch_line) {
        (0, true) => Role::SwitchIds,
        (i, true) => Role::Link(i - 1),
        (i, false) => Role::Link(i),
    }
}

/// [`TopologyError::file_position`].
pub(crate) fn position(text: &str, e: &TopologyError) -> Option<FilePos> {
    use TopologyError as E;
    let at = |line: usize, col: usize, field: String| Some(FilePos { line, col, field });
    // The column of token `i` of the line (1 if the line has fewer tokens).
    let col_of = |line: usize, i: usize| tokens(text, line).get(i).map_or(1, |t| t.0);
    // The column and field of link field `i` (0 a, 1 b, 2 rate, 3 delay, 4 error_rate) of the
    // link on `line`.
    let link_field = |line: usize, i: usize| {
        const NAMES: [&str; 5] = ["a", "b", "rate", "delay", "error_rate"];
        let k = match role(text, line) {
            Role::Link(k) => k,
            _ => return None,
        };
        let field = match NAMES.get(i) {
            Some(name) => format!("link[{k}].{name}"),
            None => format!("link[{k}]"),
        };
        at(line, col_of(line, i), field)
    };
    // Link field a or b of the link on `line`, whichever is node `node` (a if both).
    let end_of = |line: usize, node: u32| {
        let toks = tokens(text, line);
        let i = usize::from(toks.first().and_then(|t| t.1.parse::<u32>().ok()) != Some(node));
        link_field(line, i)
    };
    let link_line = |r: &LinkRef| match r {
        LinkRef::Line(l) => Some(*l),
        LinkRef::Link(_) => None,
    };
    match e {
        E::EmptyFile
        | E::InvalidArgument { .. }
        | E::TooLarge { .. }
        | E::IsolatedHost { .. }
        | E::DisconnectedHost { .. }
        | E::NoHosts
        | E::Network(_) => None,
        E::BadHeader { line, .. } => {
            let toks = tokens(text, *line);
            let bad = toks.iter().position(|t| t.1.parse::<usize>().is_err());
            let col = match bad {
                Some(i) => toks[i].0,
                None if toks.len() > 3 => toks[3].0,
                None => 1,
            };
            at(*line, col, "header".into())
        }
        E::TooManyNodes { line, .. } => at(*line, col_of(*line, 0), "header.nodes".into()),
        E::TooManySwitches { line, .. } => at(*line, col_of(*line, 1), "header.switches".into()),
        E::SwitchCount { line, expected, found } => {
            let col = if found > expected { col_of(*line, *expected) } else { 1 };
            at(*line, col, "switch_ids".into())
        }
        E::BadNodeId { line, token } => match role(text, *line) {
            Role::SwitchIds => {
                let toks = tokens(text, *line);
                let i = toks.iter().position(|t| t.1 == token).unwrap_or(0);
                at(*line, col_of(*line, i), format!("switch_ids[{i}]"))
            }
            _ => {
                let toks = tokens(text, *line);
                link_field(*line, usize::from(toks.first().map(|t| t.1) != Some(token.as_str())))
            }
        },
        E::SwitchOutOfRange { line, id, .. } => {
            let toks = tokens(text, *line);
            let i = toks.iter().position(|t| t.1.parse::<u32>().ok() == Some(*id)).unwrap_or(0);
            at(*line, col_of(*line, i), format!("switch_ids[{i}]"))
        }
        E::DuplicateSwitch { line, id } => {
            let toks = tokens(text, *line);
            let same: Vec<usize> =
                (0..toks.len()).filter(|&i| toks[i].1.parse::<u32>().ok() == Some(*id)).collect();
            let i = same.get(1).or(same.first()).copied().unwrap_or(0);
            at(*line, col_of(*line, i), format!("switch_ids[{i}]"))
        }
        E::BadLinkLine { line, found, .. } => {
            let pos = link_field(*line, usize::MAX)?;
            let col = if *found > 5 { col_of(*line, 5) } else { 1 };
            Some(FilePos { col, ..pos })
        }
        E::BadRate { line, .. } | E::RateTooHigh { line, .. } => link_field(*line, 2),
        E::BadDelay { line, .. } | E::DelayTooLong { line, .. } => link_field(*line, 3),
        E::BadErrorRate { line, .. } => link_field(*line, 4),
        E::MissingLinks { line, found, .. } => at(*line, 1, format!("link[{found}]")),
        E::TrailingContent { line, .. } => at(*line, col_of(*line, 0), "header.links".into()),
        E::UnknownNode { at: r, node, .. } => end_of(link_line(r)?, node.0),
        E::SelfLoop { at: r, .. } => link_field(link_line(r)?, 1),
        E::DuplicateLink { at: r, .. } => {
            let line = link_line(r)?;
            let pos = link_field(line, usize::MAX)?;
            Some(FilePos { col: col_of(line, 0), ..pos })
        }
        E::ZeroRate { at: r, .. } => link_field(link_line(r)?, 2),
        E::BadLoss { at: r, .. } => link_field(link_line(r)?, 4),
        E::HostMultipleLinks { node, second, .. } => end_of(link_line(second)?, node.0),
    }
}

/// Formats a rate with the largest of `Gbps`, `Mbps`, `Kbps`, `bps` that represents it
/// exactly, e.g. `100Gbps`, `2500Mbps`.
pub fn format_rate(r: BitsPerSec) -> String {
    let v = r.0;
    if v != 0 {
        for (unit, name) in [(1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "Kbps")] {
            if let Some(q) = exact_div(v, unit) {
                return format!("{q}{name}");
            }
        }
    }
    format!("{v}bps")
}

/// Formats a delay as whole nanoseconds (`1000ns`), or as picoseconds (`1500ps`) if it is not
/// a whole number of nanoseconds. (Reading `ps` back truncates to whole nanoseconds, as ns-3
/// does, so only whole-nanosecond delays survive a round trip exactly.)
pub fn format_delay(d: Duration) -> String {
    match exact_div(d.0, PS_PER_NS) {
        Some(ns) => format!("{ns}ns"),
        None => format!("{}ps", d.0),
    }
}

/// `v / unit` if `unit` divides `v` exactly.
fn exact_div(v: u64, unit: u64) -> Option<u64> {
    let q = v / unit;
    (q * unit == v).then_some(q)
}

/// Writes `topo` in the reference topology file format; [`parse_ns3`] reads it back to the
/// same nodes and links (delays that are whole nanoseconds, rates below 2^53 bps). When there
/// are no switches the switch-id line is left empty.
pub fn write_ns3(topo: &Topology) -> String {
    let mut out = String::new();
    let switches: Vec<String> = topo.switches().map(|s| s.to_string()).collect();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{} {} {}", topo.node_count(), switches.len(), topo.link_count());
    let _ = writeln!(out, "{}", switches.join(" "));
    for l in &topo.links {
        let _ = writeln!(
            out,
            "{} {} {} {} {}",
            l.a,
            l.b,
            format_rate(l.rate),
            format_delay(l.delay),
            l.loss
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Option<u64> {
        parse_delay(s).map(|d| {
            assert_eq!(d.0 % PS_PER_NS, 0, "{s} is not whole ns");
            d.as_ns()
        })
    }

    #[test]
    fn delays_follow_ns3_truncation() {
        assert_eq!(ns("1000ns"), Some(1000));
        assert_eq!(ns("0.001ms"), Some(1000));
        assert_eq!(ns("1us"), Some(1000));
        assert_eq!(ns("2s"), Some(2_000_000_000));
        assert_eq!(ns("1.5us"), Some(1500));
        assert_eq!(ns("0ns"), Some(0));
        assert_eq!(ns("1e3ns"), Some(1000));
        // Derived by spec §0's rule: the double 0.0001 lies just below 1e-4 in 64.64.
        assert_eq!(ns("0.0001ms"), Some(99));
        // A fraction of a nanosecond is dropped.
        assert_eq!(ns("1.9ns"), Some(1));
        assert_eq!(ns("1500ps"), Some(1));
        assert_eq!(ns("999ps"), Some(0));
    }

    #[test]
    fn bad_delays_are_rejected() {
        for s in ["", "ns", "1000", "10 ns", "1000nsx", "-1ns", "1.2.3ns", "1min", "1e40s", "abc"] {
            assert_eq!(parse_delay(s), None, "{s:?}");
        }
    }

    #[test]
    fn rates_in_every_unit() {
        let r = |s: &str| parse_rate(s).map(|r| r.0);
        assert_eq!(r("100Gbps"), Some(100_000_000_000));
        assert_eq!(r("400Gbps"), Some(400_000_000_000));
        assert_eq!(r("400Gb/s"), Some(400_000_000_000));
        assert_eq!(r("25gbps"), Some(25_000_000_000));
        assert_eq!(r("10Mbps"), Some(10_000_000));
        assert_eq!(r("10Mb/s"), Some(10_000_000));
        assert_eq!(r("1Kbps"), Some(1_000));
        assert_eq!(r("1kb/s"), Some(1_000));
        assert_eq!(r("64bps"), Some(64));
        assert_eq!(r("64b/s"), Some(64));
        assert_eq!(r("1GBps"), Some(8_000_000_000));
        assert_eq!(r("1KiB/s"), Some(8_192));
        assert_eq!(r("2.5Gbps"), Some(2_500_000_000));
        assert_eq!(r("0bps"), Some(0));
    }

    #[test]
    fn bad_rates_are_rejected() {
        for s in [
            "",
            "Gbps",
            "100",
            "100Gbp",
            "100 Gbps",
            "-1Gbps",
            "1e9bps",
            "100Tbps",
            "1.2.3Gbps",
            "99999999999Gbps",
        ] {
            assert_eq!(parse_rate(s), None, "{s:?}");
        }
    }

    #[test]
    fn formats_read_back() {
        for r in [1u64, 999, 1_000, 2_500_000_000, 100_000_000_000, 123_456_789] {
            assert_eq!(parse_rate(&format_rate(BitsPerSec(r))), Some(BitsPerSec(r)));
        }
        for ns in [0u64, 1, 999, 1000, 123_456_789] {
            let d = Duration::from_ns(ns);
            assert_eq!(parse_delay(&format_delay(d)), Some(d));
        }
        assert_eq!(format_delay(Duration::from_ps(1500)), "1500ps");
        assert_eq!(format_rate(BitsPerSec::gbps(100)), "100Gbps");
        assert_eq!(format_rate(BitsPerSec::mbps(2500)), "2500Mbps");
    }
}
