//! Completed-flow rows and the reader of dcsim's `fct.csv`.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;

use crate::error::AnalysisError;

/// The columns `fct.csv` must have (any order; extra columns are ignored).
pub const REQUIRED_COLUMNS: [&str; 7] =
    ["flow_id", "src", "dst", "size_bytes", "start_ns", "fct_ns", "ideal_fct_ns"];

/// Columns read when present: `ref_ideal_fct_ns` (the reference simulator's standalone FCT)
/// and `dport` (destination port, to tell incast from background). The file's `slowdown`
/// column is not read: [`FctRow::slowdown`] recomputes it from `fct_ns / ideal_fct_ns` at
/// full precision.
pub const OPTIONAL_COLUMNS: [&str; 2] = ["ref_ideal_fct_ns", "dport"];

/// One completed flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FctRow {
    /// Flow id.
    pub flow_id: u64,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes (> 0).
    pub size: u64,
    /// Start time in nanoseconds.
    pub start_ns: f64,
    /// Flow completion time in nanoseconds (creation to last byte acknowledged).
    pub fct_ns: f64,
    /// Ideal (standalone) FCT in nanoseconds, > 0: the FCT of the flow alone in the network
    /// with basic headers only.
    pub ideal_ns: f64,
    /// The reference simulator's standalone FCT for the same flow, if the file has it.
    pub ref_ideal_ns: Option<f64>,
    /// Destination port, if the file has it (100 background, 200 incast by convention).
    pub dport: Option<u16>,
}

impl FctRow {
    /// The slowdown `max(1, fct / ideal)` (a flow cannot beat its ideal FCT; the reference
    /// analysis also floors at 1).
    pub fn slowdown(&self) -> f64 {
        (self.fct_ns / self.ideal_ns).max(1.0)
    }

    /// The completion instant `start + fct` in nanoseconds (the reference analysis keeps flows
    /// with `start + fct < T`).
    pub fn end_ns(&self) -> f64 {
        self.start_ns + self.fct_ns
    }
}

/// Replaces every row's `ideal_ns` by its `ref_ideal_ns`, to compute slowdowns the way the
/// reference does (its standalone FCT formula, spec §9.20).
///
/// # Errors
/// [`AnalysisError::MissingReferenceIdeal`] for the first row without one (rows before it
/// are already changed).
pub fn use_reference_ideal(rows: &mut [FctRow]) -> Result<(), AnalysisError> {
    for r in rows {
        r.ideal_ns =
            r.ref_ideal_ns.ok_or(AnalysisError::MissingReferenceIdeal { flow_id: r.flow_id })?;
    }
    Ok(())
}

/// The largest time an `fct.csv` may give, ns: the time limit, 2^62 ps.
const MAX_TIME_NS: f64 = (1u64 << 62) as f64 / 1000.0;
/// The smallest positive time an `fct.csv` may give, ns: a picosecond.
const MIN_TIME_NS: f64 = 0.001;

/// Reads an `fct.csv` file (see [`parse_fct_csv`]).
///
/// # Errors
/// [`AnalysisError::Io`] if the file cannot be opened, otherwise as [`parse_fct_csv`].
pub fn read_fct_csv(path: &Path) -> Result<Vec<FctRow>, AnalysisError> {
    let file = std::fs::File::open(path)
        .map_err(|source| AnalysisError::Io { path: path.to_path_buf(), source })?;
    parse_fct_csv(std::io::BufReader::new(file), &path.display().to_string())
}

/// Parses dcsim's `fct.csv` (header `flow_id,src,dst,size_bytes,start_ns,fct_ns,
/// ideal_fct_ns,slowdown,ref_ideal_fct_ns`). Columns are found by name, in any order; the
/// [`REQUIRED_COLUMNS`] must be present, the [`OPTIONAL_COLUMNS`] are read when present (an
/// empty field reads as `None`), anything else is ignored. Fields are trimmed. `file` names
/// the input in error messages.
///
/// Values must be: ids and sizes non-negative integers (size > 0), times finite and `>= 0`,
/// the ideal FCTs `> 0` and large enough that the FCT divided by them is finite.
///
/// # Errors
/// [`AnalysisError::MissingColumns`] naming every missing required column,
/// [`AnalysisError::BadValue`] with the line and column of the first bad field,
/// [`AnalysisError::Csv`] for malformed CSV.
pub fn parse_fct_csv<R: Read>(reader: R, file: &str) -> Result<Vec<FctRow>, AnalysisError> {
    let csv_err =
        |e: csv::Error| AnalysisError::Csv { file: file.to_string(), message: e.to_string() };
    let mut rdr = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(reader);
    let header = rdr.headers().map_err(csv_err)?.clone();
    let index: HashMap<&str, usize> = header.iter().enumerate().map(|(i, h)| (h, i)).collect();
    // A column named twice would be read from its last place only (a second `fct_ns` of 1s
    // made every slowdown 1).
    if let Some((i, h)) = header.iter().enumerate().find(|&(i, h)| index[h] != i) {
        return Err(AnalysisError::Csv {
            file: file.to_string(),
            message: format!(
                "column `{h}` appears twice in the header (columns {} and {})",
                i + 1,
                index[h] + 1
            ),
        });
    }
    let missing: Vec<String> = REQUIRED_COLUMNS
        .iter()
        .filter(|c| !index.contains_key(*c))
        .map(|c| c.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(AnalysisError::MissingColumns { file: file.to_string(), columns: missing });
    }
    let col = |name: &str| index[name];
    let (c_id, c_src, c_dst, c_size, c_start, c_fct, c_ideal) = (
        col("flow_id"),
        col("src"),
        col("dst"),
        col("size_bytes"),
        col("start_ns"),
        col("fct_ns"),
        col("ideal_fct_ns"),
    );
    let c_ref = index.get("ref_ideal_fct_ns").copied();
    let c_dport = index.get("dport").copied();

    let mut rows = Vec::new();
    // Each flow's line, to refuse one listed twice (it would count twice in every statistic).
    let mut seen: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    for rec in rdr.records() {
        let rec = rec.map_err(csv_err)?;
        let line = rec.position().map_or(0, |p| p.line());
        let field = |i: usize| rec.get(i).unwrap_or("");
        let bad =
            |column: &'static str, value: &str, reason: &'static str| AnalysisError::BadValue {
                file: file.to_string(),
                line,
                column,
                value: value.to_string(),
                reason,
            };
        let int = |i: usize, column: &'static str| -> Result<u64, AnalysisError> {
            parse::<u64>(field(i))
                .ok_or_else(|| bad(column, field(i), "expected a non-negative integer"))
        };
        let node = |i: usize, column: &'static str| -> Result<u32, AnalysisError> {
            parse::<u32>(field(i)).ok_or_else(|| bad(column, field(i), "expected a node id"))
        };
        // Times within a run's: at most the time limit, and a positive one at least the
        // simulator's picosecond (`ideal_fct_ns = 1e-300` gave slowdowns of 5e303, and an
        // `fct_ns` of 2^64 passed).
        let time = |i: usize, column: &'static str, positive: bool| -> Result<f64, AnalysisError> {
            let v = parse::<f64>(field(i)).filter(|v| v.is_finite() && *v >= 0.0);
            match v {
                Some(v) if v > MAX_TIME_NS => Err(bad(
                    column,
                    field(i),
                    "too large: expected at most 4611686018427387.904 ns (2^62 ps, the time limit)",
                )),
                Some(v) if positive && v > 0.0 && v < MIN_TIME_NS => Err(bad(
                    column,
                    field(i),
                    "too small: expected at least 0.001 ns (1 ps, the simulator's resolution)",
                )),
                Some(v) if !positive || v > 0.0 => Ok(v),
                _ if positive => Err(bad(column, field(i), "expected a finite number > 0")),
                _ => Err(bad(column, field(i), "expected a finite number >= 0")),
            }
        };
        let size = int(c_size, "size_bytes")?;
        if size == 0 {
            return Err(bad("size_bytes", field(c_size), "expected a size > 0"));
        }
        let ref_ideal_ns = match c_ref {
            Some(i) if !field(i).is_empty() => Some(time(i, "ref_ideal_fct_ns", true)?),
            _ => None,
        };
        let dport = match c_dport {
            Some(i) if !field(i).is_empty() => Some(
                parse::<u16>(field(i))
                    .ok_or_else(|| bad("dport", field(i), "expected a port 0..=65535"))?,
            ),
            _ => None,
        };
        // No flow completes in no time (and the FCT plots have log axes).
        let fct_ns = time(c_fct, "fct_ns", true)?;
        let ideal_ns = time(c_ideal, "ideal_fct_ns", true)?;
        let flow_id = int(c_id, "flow_id")?;
        if let Some(&first) = seen.get(&flow_id) {
            return Err(AnalysisError::DuplicateFlow {
                file: file.to_string(),
                line,
                flow_id,
                first,
            });
        }
        seen.insert(flow_id, line);
        rows.push(FctRow {
            flow_id,
            src: node(c_src, "src")?,
            dst: node(c_dst, "dst")?,
            size,
            start_ns: time(c_start, "start_ns", false)?,
            fct_ns,
            ideal_ns,
            ref_ideal_ns,
            dport,
        });
    }
    Ok(rows)
}

fn parse<T: FromStr>(s: &str) -> Option<T> {
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns\n";

    fn parse_str(s: &str) -> Result<Vec<FctRow>, AnalysisError> {
        parse_fct_csv(s.as_bytes(), "fct.csv")
    }

    #[test]
    fn a_flow_listed_twice_is_refused_with_both_lines() {
        let row = "7,1,2,1000,0,1200,1000,1.2,990\n";
        let e = parse_str(&format!("{HEADER}{row}8,1,2,1000,0,1200,1000,1.2,990\n{row}"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "fct.csv:4: flow 7 is listed again (first at line 2); a fct.csv lists each flow once"
        );
    }

    #[test]
    fn reads_dcsim_output() {
        let rows =
            parse_str(&format!("{HEADER}0,1,2,1000,2000000000.5,1200,1000,1.2,990\n")).unwrap();
        assert_eq!(
            rows,
            [FctRow {
                flow_id: 0,
                src: 1,
                dst: 2,
                size: 1000,
                start_ns: 2_000_000_000.5,
                fct_ns: 1200.0,
                ideal_ns: 1000.0,
                ref_ideal_ns: Some(990.0),
                dport: None,
            }]
        );
        assert_eq!(rows[0].slowdown(), 1.2);
        let mut rows = rows;
        use_reference_ideal(&mut rows).unwrap();
        assert_eq!(rows[0].ideal_ns, 990.0);
    }

    #[test]
    fn slowdown_is_floored_at_one() {
        let rows = parse_str(&format!("{HEADER}0,1,2,1000,0,900,1000,,\n")).unwrap();
        assert_eq!(rows[0].slowdown(), 1.0);
        assert_eq!(rows[0].ref_ideal_ns, None);
        let mut rows = rows;
        assert_eq!(
            use_reference_ideal(&mut rows).unwrap_err().to_string(),
            "flow 0 has no ref_ideal_fct_ns value"
        );
    }

    #[test]
    fn missing_columns_are_named_with_the_file() {
        let e = parse_str("flow_id,src,size_bytes,start_ns,ideal_fct_ns\n").unwrap_err();
        assert_eq!(e.to_string(), "fct.csv: missing column(s) dst, fct_ns in the header");
        let e = parse_str("").unwrap_err();
        assert!(e.to_string().starts_with("fct.csv: missing column(s) flow_id, src"), "{e}");
    }

    #[test]
    fn a_column_named_twice_is_refused() {
        let text =
            "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,fct_ns\n0,1,2,1000,0,10,1,1\n";
        let e = parse_str(text).unwrap_err().to_string();
        assert!(e.contains("column `fct_ns` appears twice in the header (columns 6 and 8)"), "{e}");
    }

    #[test]
    fn bad_values_name_line_and_column() {
        let e =
            parse_str(&format!("{HEADER}0,1,2,1000,0,10,1,,\n1,1,2,1000,0,-5,1,,\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fct.csv:3: column fct_ns: expected a finite number > 0, found \"-5\""
        );
        // No flow completes in no time (`plot` failed on such a file, naming a temporary
        // path, since the FCT plots' log axes cannot show 0).
        let e = parse_str(&format!("{HEADER}0,1,2,1000,0,0,1,,\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fct.csv:2: column fct_ns: expected a finite number > 0, found \"0\""
        );
        let e = parse_str(&format!("{HEADER}0,1,2,1000,0,10,0,,\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fct.csv:2: column ideal_fct_ns: expected a finite number > 0, found \"0\""
        );
        // An ideal so small that the slowdown overflows to infinity (it sent `plot` and
        // `merge` into endless loops over slowdown scales), or only absurd (1e-300 gave
        // slowdowns of 5e303 in 300-digit columns): times are at least a picosecond.
        let e = parse_str(&format!("{HEADER}0,1,2,1000,0,100,1e-308,,\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fct.csv:2: column ideal_fct_ns: too small: expected at least 0.001 ns (1 ps, the \
             simulator's resolution), found \"1e-308\""
        );
        // ... and at most the time limit (an fct_ns of 2^64 passed, with a slowdown of 4.6e15).
        for (row, column, why) in [
            ("0,1,2,1000,0,5000,1e-300,,", "ideal_fct_ns", "too small"),
            ("0,1,2,1000,0,100,1,,1e-308", "ref_ideal_fct_ns", "too small"),
            ("0,1,2,1000,0,0.0009,1,,", "fct_ns", "too small"),
            ("0,1,2,1000,0,18446744073709551615,1,,", "fct_ns", "too large"),
            ("0,1,2,1000,4611686018427392,100,1,,", "start_ns", "too large"),
            ("0,1,2,1000,0,100,1e17,,", "ideal_fct_ns", "too large"),
        ] {
            let e = parse_str(&format!("{HEADER}{row}\n")).unwrap_err();
            assert!(e.to_string().contains(&format!("column {column}: {why}")), "{e}");
        }
        // The limit itself, and a picosecond, are a run's times.
        parse_str(&format!("{HEADER}0,1,2,1000,4611686018427387.904,0.001,0.001,,\n")).unwrap();
        let e = parse_str(&format!("{HEADER}0,1,2,0,0,10,1,,\n")).unwrap_err();
        assert_eq!(e.to_string(), "fct.csv:2: column size_bytes: expected a size > 0, found \"0\"");
        let e = parse_str(&format!("{HEADER}x,1,2,5,0,10,1,,\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fct.csv:2: column flow_id: expected a non-negative integer, found \"x\""
        );
        let e = parse_str(&format!("{HEADER}0,1,2,5,0,10\n")).unwrap_err();
        assert!(matches!(e, AnalysisError::Csv { .. }), "{e}");
    }

    #[test]
    fn columns_by_name_and_optional_dport() {
        let rows = parse_str(
            "dport,ideal_fct_ns,fct_ns,start_ns,size_bytes,dst,src,flow_id\n200,10,30,5,7,1,2,9\n",
        )
        .unwrap();
        assert_eq!((rows[0].flow_id, rows[0].src, rows[0].dst, rows[0].size), (9, 2, 1, 7));
        assert_eq!((rows[0].dport, rows[0].slowdown(), rows[0].end_ns()), (Some(200), 3.0, 35.0));
    }
}
