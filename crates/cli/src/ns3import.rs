//! `dcsim import-ns3`: a reference simulator config file (spec §6.6) converted to a scenario.
//!
//! The config is a whitespace-separated list of `KEY value` pairs; maps take a count and
//! that many pairs (`KMAX_MAP 2 100000000000 1600 400000000000 6400`), `LINK_DOWN` three
//! values. Every key the reference reads is either written to a scenario field, with a
//! comment naming the key, its value and its line, or reported as ignored, with the reason,
//! both on stderr and in a comment block at the end of the scenario. An unknown key is an
//! error (the reference would silently skip it and misread its value as the next key).
//!
//! `CC_MODE` and `HAS_WIN` choose the scheme (1 → `dcqcn`/`dcqcn-w`, 3 → `hpcc`,
//! 7 → `timely`/`timely-w`, 8 → `dctcp`, 10 → `hpcc-pint`); then every value the reference
//! passes is written explicitly, so that the scenario does not depend on dcsim's defaults
//! or the scheme's profile. Keys that are absent take the reference program's built-in
//! default, with a note, except where that default is broken (spec §5.2: `RP_TIMER` 0,
//! `EWMA_GAIN` 0, uninitialised `RATE_AI`/`RATE_HAI`, `L2_ACK_INTERVAL` 0,
//! `L2_CHUNK_SIZE` 0), which is an error.
//!
//! `TOPOLOGY_FILE` and `FLOW_FILE` are resolved relative to the config's folder and written
//! relative to the scenario's folder, so the scenario runs from any working directory.
//!
//! ```
//! use dcsim_cli::ns3import::parse_entries;
//!
//! let e = parse_entries("CC_MODE 3\nKMIN_MAP 1 100000000000 400\nLINK_DOWN 0 0 0\n").unwrap();
//! assert_eq!(e.len(), 3);
//! assert_eq!((e[1].key.as_str(), e[1].line, e[1].values.len()), ("KMIN_MAP", 2, 3));
//! let err = parse_entries("CC_MODE 3\nCC_MOOD 1\n").unwrap_err();
//! assert_eq!(err.0, 2);
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use dcsim_core::units::{BitsPerSec, Duration, Time, PS_PER_MS, PS_PER_NS, PS_PER_SEC, PS_PER_US};

use crate::error::CliError;
use crate::units;

/// How many value tokens a key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arity {
    /// A fixed number.
    Fixed(usize),
    /// A count `n`, then `n` pairs.
    Map,
}

/// Every key the reference reads, with its arity.
const KEYS: &[(&str, Arity)] = &[
    ("ENABLE_QCN", Arity::Fixed(1)),
    ("USE_DYNAMIC_PFC_THRESHOLD", Arity::Fixed(1)),
    ("CLAMP_TARGET_RATE", Arity::Fixed(1)),
    ("PAUSE_TIME", Arity::Fixed(1)),
    ("DATA_RATE", Arity::Fixed(1)),
    ("LINK_DELAY", Arity::Fixed(1)),
    ("PACKET_PAYLOAD_SIZE", Arity::Fixed(1)),
    ("L2_CHUNK_SIZE", Arity::Fixed(1)),
    ("L2_ACK_INTERVAL", Arity::Fixed(1)),
    ("L2_BACK_TO_ZERO", Arity::Fixed(1)),
    ("TOPOLOGY_FILE", Arity::Fixed(1)),
    ("FLOW_FILE", Arity::Fixed(1)),
    ("TRACE_FILE", Arity::Fixed(1)),
    ("TRACE_OUTPUT_FILE", Arity::Fixed(1)),
    ("FCT_OUTPUT_FILE", Arity::Fixed(1)),
    ("PFC_OUTPUT_FILE", Arity::Fixed(1)),
    ("SIMULATOR_STOP_TIME", Arity::Fixed(1)),
    ("ALPHA_RESUME_INTERVAL", Arity::Fixed(1)),
    ("RP_TIMER", Arity::Fixed(1)),
    ("EWMA_GAIN", Arity::Fixed(1)),
    ("FAST_RECOVERY_TIMES", Arity::Fixed(1)),
    ("RATE_AI", Arity::Fixed(1)),
    ("RATE_HAI", Arity::Fixed(1)),
    ("ERROR_RATE_PER_LINK", Arity::Fixed(1)),
    ("CC_MODE", Arity::Fixed(1)),
    ("RATE_DECREASE_INTERVAL", Arity::Fixed(1)),
    ("MIN_RATE", Arity::Fixed(1)),
    ("HAS_WIN", Arity::Fixed(1)),
    ("GLOBAL_T", Arity::Fixed(1)),
    ("MI_THRESH", Arity::Fixed(1)),
    ("VAR_WIN", Arity::Fixed(1)),
    ("FAST_REACT", Arity::Fixed(1)),
    ("U_TARGET", Arity::Fixed(1)),
    ("INT_MULTI", Arity::Fixed(1)),
    ("RATE_BOUND", Arity::Fixed(1)),
    ("ACK_HIGH_PRIO", Arity::Fixed(1)),
    ("DCTCP_RATE_AI", Arity::Fixed(1)),
    ("ENABLE_TRACE", Arity::Fixed(1)),
    ("BUFFER_SIZE", Arity::Fixed(1)),
    ("QLEN_MON_FILE", Arity::Fixed(1)),
    ("QLEN_MON_START", Arity::Fixed(1)),
    ("QLEN_MON_END", Arity::Fixed(1)),
    ("MULTI_RATE", Arity::Fixed(1)),
    ("SAMPLE_FEEDBACK", Arity::Fixed(1)),
    ("PINT_LOG_BASE", Arity::Fixed(1)),
    ("PINT_PROB", Arity::Fixed(1)),
    ("KMAX_MAP", Arity::Map),
    ("KMIN_MAP", Arity::Map),
    ("PMAX_MAP", Arity::Map),
    ("LINK_DOWN", Arity::Fixed(3)),
];

/// Keys that only some schemes read, and which schemes.
const SCHEME_KEYS: &[(&str, &[&str])] = &[
    ("ALPHA_RESUME_INTERVAL", &["dcqcn", "dcqcn-w"]),
    ("RATE_DECREASE_INTERVAL", &["dcqcn", "dcqcn-w"]),
    ("RP_TIMER", &["dcqcn", "dcqcn-w"]),
    ("FAST_RECOVERY_TIMES", &["dcqcn", "dcqcn-w"]),
    ("CLAMP_TARGET_RATE", &["dcqcn", "dcqcn-w"]),
    ("EWMA_GAIN", &["dcqcn", "dcqcn-w", "dctcp"]),
    ("RATE_AI", &["dcqcn", "dcqcn-w", "timely", "timely-w", "hpcc", "hpcc-pint"]),
    ("RATE_HAI", &["dcqcn", "dcqcn-w", "timely", "timely-w"]),
    ("MIN_RATE", &["dcqcn", "dcqcn-w", "timely", "timely-w", "dctcp", "hpcc", "hpcc-pint"]),
    ("DCTCP_RATE_AI", &["dctcp"]),
    ("U_TARGET", &["hpcc", "hpcc-pint"]),
    ("MI_THRESH", &["hpcc", "hpcc-pint"]),
    ("FAST_REACT", &["hpcc"]),
    ("MULTI_RATE", &["hpcc"]),
    ("SAMPLE_FEEDBACK", &["hpcc"]),
    ("PINT_LOG_BASE", &["hpcc-pint"]),
    ("PINT_PROB", &["hpcc-pint"]),
];

/// Keys dcsim has no use for, whatever their value, and why.
const IGNORED: &[(&str, &str)] = &[
    (
        "USE_DYNAMIC_PFC_THRESHOLD",
        "the reference ignores it too: its PFC threshold is always dynamic, as dcsim's is",
    ),
    ("DATA_RATE", "parsed but unused by the reference too"),
    ("LINK_DELAY", "parsed but unused by the reference too"),
    (
        "INT_MULTI",
        "dcsim's INT records keep full precision; the multiplier only sets the resolution of \
         the reference's packed INT fields (spec §1.2)",
    ),
    ("TRACE_FILE", "tracing is not modelled"),
    ("TRACE_OUTPUT_FILE", "tracing is not modelled"),
    ("ENABLE_TRACE", "tracing is not modelled"),
    ("FCT_OUTPUT_FILE", "`dcsim run` writes fct.csv into its --out folder"),
];

fn arity(key: &str) -> Option<Arity> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, a)| *a)
}

/// One `KEY values...` of a config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The 1-based line of the key.
    pub line: usize,
    /// The value tokens (a map's count included).
    pub values: Vec<String>,
}

impl Entry {
    /// `KEY v1 v2 ...` as written.
    fn text(&self) -> String {
        let mut s = self.key.clone();
        for v in &self.values {
            s.push(' ');
            s.push_str(v);
        }
        s
    }
}

/// Splits a config file into entries.
///
/// # Errors
/// `(line, message)` for an unknown key, a map count that is not a number, or a key whose
/// values run past the end of the file.
pub fn parse_entries(text: &str) -> Result<Vec<Entry>, (usize, String)> {
    let mut toks =
        text.lines().enumerate().flat_map(|(i, l)| l.split_whitespace().map(move |t| (i + 1, t)));
    let mut entries = Vec::new();
    while let Some((line, key)) = toks.next() {
        let Some(a) = arity(key) else {
            return Err((
                line,
                format!(
                    "unknown key `{key}` (the reference would skip it and read its value as the \
                     next key; see docs/ns3.md for the keys it reads)"
                ),
            ));
        };
        let mut values = Vec::new();
        let mut take = |n: usize, values: &mut Vec<String>| -> Result<(), (usize, String)> {
            for _ in 0..n {
                match toks.next() {
                    Some((_, t)) => values.push(t.to_string()),
                    None => {
                        // What the key has, shortened: a count far too large takes the rest
                        // of the file.
                        let mut written: String =
                            values.iter().take(8).map(|v| format!(" {v}")).collect();
                        if values.len() > 8 {
                            written += &format!(" … ({} values)", values.len());
                        }
                        return Err((
                            line,
                            format!(
                                "{key} needs more values; the file ends after `{key}{written}`"
                            ),
                        ));
                    }
                }
            }
            Ok(())
        };
        match a {
            Arity::Fixed(n) => take(n, &mut values)?,
            Arity::Map => {
                take(1, &mut values)?;
                let n: usize = values[0].parse().map_err(|_| {
                    (line, format!("{key}: the entry count `{}` is not a number", values[0]))
                })?;
                let Some(pairs) = n.checked_mul(2) else {
                    return Err((
                        line,
                        format!("{key}: the entry count `{}` is too large", values[0]),
                    ));
                };
                take(pairs, &mut values)?;
            }
        }
        entries.push(Entry { key: key.to_string(), line, values });
    }
    Ok(entries)
}

/// A message for the user about one key: on stderr while importing, and in the scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The key's line, if the key is present.
    pub line: Option<usize>,
    /// `KEY ...: what happened`.
    pub text: String,
}

/// The result of a conversion.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The scheme chosen by `CC_MODE` / `HAS_WIN`.
    pub scheme: &'static str,
    /// The scenario text.
    pub toml: String,
    /// The same scenario with `[cc]` replaced by `name = "none"`: for checking the rest of a
    /// scenario whose scheme is not available yet.
    pub toml_without_cc: String,
    /// Ignored keys, defaults taken, truncations, in line order (absent keys last).
    pub notes: Vec<Note>,
}

/// A value and where it came from (for the TOML comment).
struct Sourced<T> {
    value: T,
    from: String,
}

/// What to do when a key is absent.
enum Absent<T> {
    /// Use the reference program's built-in default.
    Default(T),
    /// Stop: the reference's built-in default is broken; the text says why.
    Error(&'static str),
}

struct Config<'a> {
    file: &'a Path,
    entries: Vec<Entry>,
    used: Vec<bool>,
    notes: Vec<Note>,
}

/// The message for an integer value that does not parse: too large for its field (up to
/// `max`), or not a non-negative integer at all.
fn int_error(e: &std::num::ParseIntError, max: u64) -> String {
    match e.kind() {
        std::num::IntErrorKind::PosOverflow => format!("too large: at most {max}"),
        _ => "expected a non-negative integer".into(),
    }
}

impl<'a> Config<'a> {
    fn error(&self, line: usize, message: impl Into<String>) -> CliError {
        CliError::Line { file: self.file.to_path_buf(), line, message: message.into() }
    }

    fn note(&mut self, line: Option<usize>, text: String) {
        self.notes.push(Note { line, text });
    }

    /// The last entry for `key` (the reference keeps the last), marking every one used.
    fn get(&mut self, key: &str) -> Option<Entry> {
        let idx: Vec<usize> =
            (0..self.entries.len()).filter(|&i| self.entries[i].key == key).collect();
        for &i in &idx {
            self.used[i] = true;
        }
        let last = *idx.last()?;
        let noted = self.notes.iter().any(|n| n.text.starts_with(&format!("{key} is given ")));
        if idx.len() > 1 && !noted {
            let lines: Vec<String> =
                idx.iter().map(|&i| self.entries[i].line.to_string()).collect();
            let e = self.entries[last].clone();
            self.note(
                Some(e.line),
                format!(
                    "{key} is given {} times (lines {}); the last one is used, as the reference does",
                    idx.len(),
                    lines.join(", ")
                ),
            );
        }
        Some(self.entries[last].clone())
    }

    /// The line of the last entry for `key` (0 if absent), without marking it used.
    fn line_of(&self, key: &str) -> usize {
        self.entries.iter().rev().find(|e| e.key == key).map_or(0, |e| e.line)
    }

    /// Marks `key` as used and notes that it is ignored, if present.
    fn ignore(&mut self, key: &str, reason: &str) {
        if let Some(e) = self.get(key) {
            self.note(Some(e.line), format!("{}: {reason}; ignored", e.text()));
        }
    }

    /// A one-value key, parsed by `parse` (which gets the text and returns the value and an
    /// optional remark for the comment).
    fn value<T: Clone>(
        &mut self,
        key: &str,
        absent: Absent<T>,
        default_text: &str,
        parse: impl Fn(&str) -> Result<(T, Option<String>), String>,
    ) -> Result<Sourced<T>, CliError> {
        match self.get(key) {
            Some(e) => {
                let raw = &e.values[0];
                let (value, remark) =
                    parse(raw).map_err(|m| self.error(e.line, format!("{key} {raw}: {m}")))?;
                let mut from = format!("{key} {raw} (line {})", e.line);
                if let Some(r) = remark {
                    from.push_str(", ");
                    from.push_str(&r);
                    self.note(Some(e.line), format!("{key} {raw}: {r}"));
                }
                Ok(Sourced { value, from })
            }
            None => match absent {
                Absent::Default(v) => {
                    self.note(
                        None,
                        format!("{key} is absent; using the reference's built-in default {default_text}"),
                    );
                    Ok(Sourced { value: v, from: format!("{key} absent: the reference's default") })
                }
                Absent::Error(why) => Err(CliError::Input {
                    file: self.file.to_path_buf(),
                    message: format!("{key} is missing: {why}; add it to the config"),
                }),
            },
        }
    }

    fn flag(&mut self, key: &str, default: bool) -> Result<Sourced<bool>, CliError> {
        let d = if default { "1" } else { "0" };
        self.value(key, Absent::Default(default), d, |s| match s {
            "0" => Ok((false, None)),
            "1" => Ok((true, None)),
            _ => Err("expected 0 or 1".into()),
        })
    }

    fn uint(&mut self, key: &str, absent: Absent<u64>, d: &str) -> Result<Sourced<u64>, CliError> {
        self.value(key, absent, d, |s| {
            s.parse::<u64>().map(|v| (v, None)).map_err(|e| int_error(&e, u64::MAX))
        })
    }

    fn u32(&mut self, key: &str, default: u32) -> Result<Sourced<u32>, CliError> {
        self.value(key, Absent::Default(default), &default.to_string(), |s| {
            s.parse::<u32>().map(|v| (v, None)).map_err(|e| int_error(&e, u32::MAX.into()))
        })
    }

    fn float(&mut self, key: &str, absent: Absent<f64>, d: &str) -> Result<Sourced<f64>, CliError> {
        self.value(key, absent, d, |s| match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok((v, None)),
            _ => Err("expected a number".into()),
        })
    }

    fn rate(
        &mut self,
        key: &str,
        absent: Absent<BitsPerSec>,
        d: &str,
    ) -> Result<Sourced<BitsPerSec>, CliError> {
        self.value(key, absent, d, |s| {
            units::parse_rate(s).map(|r| (r, None)).map_err(|e| e.to_string())
        })
    }

    /// A DCQCN interval: a double number of µs, truncated to whole µs (spec §0). Zero is an
    /// error: the reference's timer would re-fire at the same instant forever (spec §4.3).
    fn micros(
        &mut self,
        key: &str,
        absent: Absent<u64>,
        d: &str,
    ) -> Result<Sourced<Duration>, CliError> {
        let absent = match absent {
            Absent::Default(us) => Absent::Default(Duration::from_us(us)),
            Absent::Error(w) => Absent::Error(w),
        };
        self.value(key, absent, d, |s| {
            let v: f64 = s.parse().map_err(|_| "expected a number of microseconds".to_string())?;
            if !v.is_finite() || v < 0.0 {
                return Err("expected a non-negative number of microseconds".into());
            }
            let us = v.trunc();
            if us == 0.0 {
                return Err(
                    "truncates to 0 µs (the reference passes it to MicroSeconds as an integer, \
                     spec §0), which makes its timer re-fire at the same instant forever (spec §4.3)"
                    .into());
            }
            let limit_us = dcsim_core::units::TIME_LIMIT.as_ps() / PS_PER_US;
            if us > limit_us as f64 {
                return Err(format!(
                    "{us} µs is above the longest time supported, {}",
                    dcsim_core::units::TIME_LIMIT_TEXT
                ));
            }
            let remark = (us != v).then(|| format!("truncated to {us} µs as the reference does"));
            Ok((Duration::from_us(us as u64), remark))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// TOML output.
// ---------------------------------------------------------------------------------------------

/// A quoted TOML string.
fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML float (always with a decimal point or exponent).
fn float(v: f64) -> String {
    toml::Value::Float(v).to_string()
}

fn boolean(v: bool) -> String {
    v.to_string()
}

/// A duration in the largest unit that represents it exactly: `"300us"`, `"4s"`.
pub fn exact_duration(d: Duration) -> String {
    let ps = d.as_ps();
    for (div, unit) in
        [(PS_PER_SEC, "s"), (PS_PER_MS, "ms"), (PS_PER_US, "us"), (PS_PER_NS, "ns"), (1, "ps")]
    {
        if ps.is_multiple_of(div) && (ps != 0 || div == 1) {
            return format!("{}{unit}", ps / div);
        }
    }
    unreachable!("every duration is a whole number of picoseconds")
}

#[derive(Default)]
struct Toml {
    text: String,
}

impl Toml {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }

    /// `text`, then `# comment` in the comment column (if any).
    fn commented(&mut self, text: &str, comment: &str) {
        if comment.is_empty() {
            self.line(text);
        } else {
            let _ = writeln!(self.text, "{text:<31} # {comment}");
        }
    }

    fn kv(&mut self, key: &str, value: String, comment: &str) {
        self.commented(&format!("{key} = {value}"), comment);
    }

    fn sourced<T>(&mut self, key: &str, s: &Sourced<T>, render: impl Fn(&T) -> String) {
        self.kv(key, render(&s.value), &s.from);
    }
}

// ---------------------------------------------------------------------------------------------
// Paths.
// ---------------------------------------------------------------------------------------------

/// `p` made absolute and free of `.`/`..`, with symlinks resolved in the longest part of it
/// that exists (so that an existing file and a folder yet to be created compare correctly).
fn absolute(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut lexical = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            return rest.iter().rev().fold(canon, |acc, c| acc.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return lexical,
        }
    }
}

/// `target` relative to the folder `base` (both absolute and normalized), or `target`
/// itself if the two share nothing but the root.
fn relative(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<Component> = target.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let roots =
        t.iter().take_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir)).count();
    if common <= roots {
        return target.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

/// The folder of a file path (`.` for a bare file name).
fn folder(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

// ---------------------------------------------------------------------------------------------
// The conversion.
// ---------------------------------------------------------------------------------------------

/// Converts the config at `config` (whose text is `text`) into the scenario that will be
/// written to `out`.
///
/// # Errors
/// An unknown key, a malformed value, an unsupported feature (`LINK_DOWN` with a time > 0,
/// an unknown `CC_MODE`), a missing key whose reference default is broken, or an input file
/// (topology, flows) that cannot be read. Each names the config file and line.
pub fn convert(config: &Path, text: &str, out: &Path) -> Result<Imported, CliError> {
    let entries = parse_entries(text).map_err(|(line, message)| CliError::Line {
        file: config.to_path_buf(),
        line,
        message,
    })?;
    let used = vec![false; entries.len()];
    let mut c = Config { file: config, entries, used, notes: Vec::new() };

    // --- The scheme.
    let mode = c.uint("CC_MODE", Absent::Default(1), "1 (DCQCN)")?;
    let has_win = c.flag("HAS_WIN", true)?;
    let var_win = c.flag("VAR_WIN", false)?;
    let mode_line = Some(c.line_of("CC_MODE")).filter(|&l| l > 0);
    let scheme: &'static str = match (mode.value, has_win.value) {
        (1, false) => "dcqcn",
        (1, true) => "dcqcn-w",
        (3, _) => "hpcc",
        (7, false) => "timely",
        (7, true) => "timely-w",
        (8, _) => "dctcp",
        (10, _) => "hpcc-pint",
        (m, _) => {
            let msg = format!(
                "CC_MODE {m} is not a scheme dcsim has (1 = DCQCN, 3 = HPCC, 7 = TIMELY, \
                 8 = DCTCP, 10 = HPCC-PINT)"
            );
            return Err(match mode_line {
                Some(l) => c.error(l, msg),
                None => CliError::Input { file: config.to_path_buf(), message: msg },
            });
        }
    };
    let scheme_from = match (mode.value, has_win.value) {
        (1 | 7, _) => format!("{}; {}", mode.from, has_win.from),
        _ => mode.from.clone(),
    };

    // --- Files.
    let config_dir = absolute(&folder(config));
    let out_dir = absolute(&folder(out));
    let file_key = |c: &mut Config, key: &str| -> Result<Sourced<String>, CliError> {
        let Some(e) = c.get(key) else {
            return Err(CliError::Input {
                file: config.to_path_buf(),
                message: format!("{key} is missing; the scenario needs it"),
            });
        };
        let given = &e.values[0];
        let target = absolute(&config_dir.join(given));
        match std::fs::metadata(&target) {
            Err(err) => {
                return Err(c.error(
                    e.line,
                    format!("{key} {given}: cannot read {}: {err}", target.display()),
                ))
            }
            // A folder (`TOPOLOGY_FILE .`) was written as an empty path and refused later,
            // naming neither the config nor its line.
            Ok(m) if m.is_dir() => {
                return Err(c.error(
                    e.line,
                    format!("{key} {given}: {} is a folder, not a file", target.display()),
                ))
            }
            Ok(_) => {}
        }
        let rel = relative(&target, &out_dir);
        let rel = rel.to_str().ok_or_else(|| {
            c.error(e.line, format!("{key} {given}: the path {} is not UTF-8", rel.display()))
        })?;
        Ok(Sourced {
            value: rel.replace('\\', "/"),
            from: format!("{key} {given} (line {}), relative to the config's folder", e.line),
        })
    };
    let topology = file_key(&mut c, "TOPOLOGY_FILE")?;
    let flows = file_key(&mut c, "FLOW_FILE")?;

    // --- Everything else the reference reads, grouped by section.
    let stop = c.value(
        "SIMULATOR_STOP_TIME",
        // The built-in default is the double 3.01, converted like any other.
        Absent::Default(Time::from_secs_f64_ns_trunc(3.01).expect("a valid time")),
        "3.01 s",
        |s| {
            let secs: f64 = s.parse().map_err(|_| "expected a number of seconds".to_string())?;
            match Time::from_secs_f64_ns_trunc(secs) {
                Some(t) if t > Time::ZERO => Ok((t, None)),
                _ => Err("expected a positive, finite number of seconds".into()),
            }
        },
    )?;
    let error_rate = c.float("ERROR_RATE_PER_LINK", Absent::Default(0.0), "0")?;
    if !(0.0..=1.0).contains(&error_rate.value) {
        let line = c.line_of("ERROR_RATE_PER_LINK");
        return Err(
            c.error(line, format!("ERROR_RATE_PER_LINK {} is outside [0, 1]", error_rate.value))
        );
    }

    let ecn = c.flag("ENABLE_QCN", true)?;
    let buffer = c.uint("BUFFER_SIZE", Absent::Default(16), "16 (MiB)")?;
    if buffer.value == 0 || buffer.value > u64::from(u32::MAX >> 20) {
        let line = c.line_of("BUFFER_SIZE");
        return Err(c.error(
            line,
            format!(
                "BUFFER_SIZE {} MiB is outside 1..=4095 (the reference keeps bytes in 32 bits)",
                buffer.value
            ),
        ));
    }
    let ecn_map = ecn_map(&mut c)?;

    let mtu = c.uint("PACKET_PAYLOAD_SIZE", Absent::Default(1000), "1000")?;
    let ack_interval = c.uint(
        "L2_ACK_INTERVAL",
        Absent::Error("the reference's built-in default is 0, with which no flow completes (spec §2.3, §5.2); the run script uses 1"),
        "",
    )?;
    let chunk = c.uint(
        "L2_CHUNK_SIZE",
        Absent::Error("the reference's built-in default is 0, which divides by zero (spec §5.2); the run script uses 4000"),
        "",
    )?;
    for (key, s) in [
        ("PACKET_PAYLOAD_SIZE", &mtu),
        ("L2_ACK_INTERVAL", &ack_interval),
        ("L2_CHUNK_SIZE", &chunk),
    ] {
        if s.value == 0 || s.value > u64::from(u32::MAX) {
            let line = c.line_of(key);
            return Err(c.error(line, format!("{key} {} is outside 1..=4294967295", s.value)));
        }
    }
    let back_to_zero = c.flag("L2_BACK_TO_ZERO", false)?;
    let global_t = c.flag("GLOBAL_T", true)?;
    let rate_bound = c.flag("RATE_BOUND", true)?;
    let ack_high_prio = c.flag("ACK_HIGH_PRIO", false)?;

    let pfc_file = c.get("PFC_OUTPUT_FILE").map(|e| (e.line, e.values[0].clone()));
    // The queue-length monitor: samples every 100 ns from START to the first sample >= END
    // (spec §6.5), into 1000-byte bins.
    let qlen_mon = match (c.get("QLEN_MON_FILE"), c.get("QLEN_MON_START"), c.get("QLEN_MON_END")) {
        (Some(f), Some(s), Some(e)) => {
            let ns = |e: &Entry| {
                e.values[0].parse::<u64>().map_err(|_| {
                    c.error(
                        e.line,
                        format!("{}: `{}` is not a whole number of ns", e.text(), e.values[0]),
                    )
                })
            };
            let (start, end) = (ns(&s)?, ns(&e)?);
            if u128::from(start) * 1000 > u128::from(stop.value.as_ps()) {
                c.note(
                    Some(s.line),
                    format!(
                        "{}: after the stop time: the reference's monitor takes no sample; \
                         ignored (with QLEN_MON_FILE and QLEN_MON_END)",
                        s.text()
                    ),
                );
                None
            } else {
                Some((f.line, f.values[0].clone(), start, end.max(start)))
            }
        }
        (f, s, e) => {
            for e in [f, s, e].into_iter().flatten() {
                c.note(
                    Some(e.line),
                    format!(
                        "{}: the queue monitor needs QLEN_MON_FILE, QLEN_MON_START and \
                         QLEN_MON_END; ignored",
                        e.text()
                    ),
                );
            }
            None
        }
    };

    // --- Keys with no counterpart.
    for (key, reason) in IGNORED {
        c.ignore(key, reason);
    }
    if let Some(e) = c.get("PAUSE_TIME") {
        let small = e.values[0].parse::<f64>().is_ok_and(|v| v < 1.0);
        let reason = if small {
            "below 1 it turns every reference PFC pause into a resume (spec §3.2), which dcsim \
             does not reproduce: pauses last until resumed"
        } else {
            "pauses last until resumed, in the reference (spec §3.2) and in dcsim"
        };
        c.note(Some(e.line), format!("{}: {reason}; ignored", e.text()));
    }
    let mut link_down = None;
    if let Some(e) = c.get("LINK_DOWN") {
        let t = &e.values[0];
        match t.parse::<u64>() {
            Ok(0) => c.note(
                Some(e.line),
                format!(
                    "{}: time 0 means no link goes down, in the reference too; ignored",
                    e.text()
                ),
            ),
            Ok(us) => {
                let node = |v: &str| {
                    v.parse::<u32>().map_err(|_| {
                        c.error(e.line, format!("{}: `{v}` is not a node id", e.text()))
                    })
                };
                let (a, b) = (node(&e.values[1])?, node(&e.values[2])?);
                let at = us.checked_add(2_000_000).ok_or_else(|| {
                    c.error(e.line, format!("{}: the time `{t}` µs is too large", e.text()))
                })?;
                link_down = Some((at, a, b, e.line, e.text()));
            }
            Err(_) => {
                return Err(c.error(
                    e.line,
                    format!("{}: the time `{t}` is not a whole number of µs", e.text()),
                ))
            }
        }
    }

    // --- [cc].
    let mut cc = Toml::default();
    cc.line("[cc]");
    cc.kv("name", q(scheme), &scheme_from);
    cc_params(&mut c, scheme, &mut cc)?;
    for (key, users) in SCHEME_KEYS {
        if !users.contains(&scheme) {
            let reason =
                format!("used only by {} (this config's scheme is {scheme})", users.join(", "));
            c.ignore(key, &reason);
        }
    }
    // Every key present has been used or reported by now; this catches a key added to KEYS
    // and forgotten above.
    for i in 0..c.entries.len() {
        if !c.used[i] {
            let e = c.entries[i].clone();
            c.used[i] = true;
            c.note(Some(e.line), format!("{}: not used by dcsim; ignored", e.text()));
        }
    }

    // --- The scenario text.
    let mut head = Toml::default();
    head.line(&format!(
        "# Imported by `dcsim import-ns3` from {} (a reference HPCC ns-3 config file).",
        config.display()
    ));
    head.line(&format!(
        "# Scheme: {scheme}. Each comment names the reference key a value came from;"
    ));
    head.line("# keys dcsim does not use are listed at the end. See docs/ns3.md.");
    head.line("");
    head.line("[simulation]");
    head.kv(
        "stop_time",
        q(&exact_duration(Duration::from_ps(stop.value.as_ps()))),
        &format!("{}, truncated to ns as the reference does", stop.from),
    );
    head.kv(
        "seed",
        "1".into(),
        "not in the reference config (its RED draws cannot be reproduced; ECMP below can)",
    );
    head.line(
        "# The reference converts serialization times to whole ns through a double (spec §0,",
    );
    head.line("# often 1 ns short); \"exact\" is dcsim's picosecond-exact default.");
    head.kv("serialization", q("ns3"), "as the reference computes it");
    head.kv(
        "flow_start",
        q("after-queued"),
        "a flow starts after the events already queued for its nanosecond at its host, as the \
         reference's flow input creates the queue pair through zero-delay events",
    );
    head.line("");
    head.line("[topology]");
    head.kv("kind", q("file"), "");
    head.sourced("path", &topology, |v| q(v));
    head.sourced("error_rate_per_link", &error_rate, |v| float(*v));
    head.line("");
    head.line("[flows]");
    head.sourced("file", &flows, |v| q(v));
    head.line("");
    if pfc_file.is_some() || qlen_mon.is_some() {
        head.line("[output]");
    }
    if let Some((line, file)) = &pfc_file {
        head.kv(
            "pfc_log",
            "true".into(),
            &format!("PFC_OUTPUT_FILE {file} (line {line}): `dcsim run` writes pfc.csv instead"),
        );
    }
    if let Some((line, file, start, end)) = &qlen_mon {
        head.kv(
            "qlen_mon",
            format!(
                "{{ start = \"{start}ns\", end = \"{end}ns\", interval = \"100ns\", bin = \"1000B\" }}"
            ),
            &format!("QLEN_MON_FILE {file} (line {line}): `dcsim run` writes qlen_mon.csv instead"),
        );
    }
    if pfc_file.is_some() || qlen_mon.is_some() {
        head.line("");
    }

    let mut tail = Toml::default();
    tail.line("");
    tail.line("[switch]");
    tail.kv("buffer", q(&format!("{}MiB", buffer.value)), &format!("{}, in MiB", buffer.from));
    tail.sourced("ecn", &ecn, |v| boolean(*v));
    tail.kv("pfc", "true".into(), "always on in the reference");
    tail.kv("reserve", q("4096B"), "hard-coded in the reference");
    tail.kv("resume_offset", q("3072B"), "hard-coded in the reference");
    tail.kv("headroom_bdp_multiple", "3".into(), "hard-coded in the reference");
    tail.kv(
        "ecmp_seed",
        q("node"),
        "each switch's node id, as the reference seeds its ECMP hash: its paths, flow by flow",
    );
    match &ecn_map {
        Some((from, entries)) => {
            for (rate, kmin, kmax, pmax) in entries {
                tail.line("");
                tail.commented("[[switch.ecn_map]]", from);
                tail.kv("rate", q(&rate.to_string()), "");
                tail.kv("kmin", (kmin * 1000).to_string(), &format!("{kmin} KB"));
                tail.kv("kmax", (kmax * 1000).to_string(), &format!("{kmax} KB"));
                tail.kv("pmax", float(*pmax), "");
            }
        }
        None => tail.line(&format!(
            "# No KMIN_MAP/KMAX_MAP/PMAX_MAP: the {scheme} profile's default ECN map applies."
        )),
    }
    tail.line("");
    tail.line("[nic]");
    tail.sourced("mtu", &mtu, |v| v.to_string());
    tail.sourced("ack_interval", &ack_interval, |v| v.to_string());
    tail.sourced("chunk", &chunk, |v| v.to_string());
    tail.sourced("back_to_chunk", &back_to_zero, |v| boolean(*v));
    tail.kv("nack_interval", q("500us"), "hard-coded in the reference");
    tail.sourced("rate_bound", &rate_bound, |v| boolean(*v));
    tail.sourced("ack_high_prio", &ack_high_prio, |v| boolean(*v));
    let window = match (has_win.value, var_win.value) {
        (false, _) => "none",
        (true, false) => "fixed",
        (true, true) => "variable",
    };
    let window_from = if has_win.value {
        format!("{}; {}", has_win.from, var_win.from)
    } else {
        let reason = "HAS_WIN is 0: no window";
        c.ignore("VAR_WIN", reason);
        has_win.from.clone()
    };
    tail.kv("window", q(window), &window_from);
    tail.sourced("global_t", &global_t, |v| boolean(*v));
    tail.kv(
        "rto",
        q("off"),
        "the reference has no retransmission timeout: a lost tail packet or ACK is never \
         repaired (dcsim's default, \"auto\", would turn one on where packets can be lost)",
    );
    if let Some((at, a, b, line, text)) = link_down {
        tail.line("");
        tail.line(&format!(
            "# line {line}: {text}: the reference takes the link down at 2 s + the given µs, \
             flushes both ends' queues and recomputes routes at once."
        ));
        tail.line("[[events]]");
        tail.kv("at", q(&format!("{at}us")), "");
        tail.line("action = \"link-down\"");
        tail.line(&format!("link = [{a}, {b}]"));
        tail.line("");
        tail.line("[routing]");
        tail.kv("convergence", q("0s"), "the reference recomputes routes at the failure");
    }

    let mut notes = std::mem::take(&mut c.notes);
    notes.sort_by_key(|n| n.line.unwrap_or(usize::MAX));
    let ignored: Vec<&Note> = notes.iter().filter(|n| n.text.ends_with("; ignored")).collect();
    if !ignored.is_empty() {
        tail.line("");
        tail.line("# Not imported (also reported on stderr by `dcsim import-ns3`):");
        for n in ignored {
            let at = n.line.map_or_else(String::new, |l| format!("line {l}: "));
            tail.line(&format!("#   {at}{}", n.text));
        }
    }

    let toml = format!("{}{}{}", head.text, cc.text, tail.text);
    let toml_without_cc = format!("{}[cc]\nname = \"none\"\n{}", head.text, tail.text);
    Ok(Imported { scheme, toml, toml_without_cc, notes })
}

/// One ECN map entry: rate, kmin KB, kmax KB, pmax.
type EcnEntry = (BitsPerSec, u64, u64, f64);

/// KMIN_MAP, KMAX_MAP and PMAX_MAP merged by rate, with a comment naming their lines; `None`
/// if none of them is given.
fn ecn_map(c: &mut Config) -> Result<Option<(String, Vec<EcnEntry>)>, CliError> {
    let kmin = c.get("KMIN_MAP");
    let kmax = c.get("KMAX_MAP");
    let pmax = c.get("PMAX_MAP");
    let (kmin, kmax, pmax) = match (kmin, kmax, pmax) {
        (None, None, None) => {
            c.note(
                None,
                "KMIN_MAP, KMAX_MAP and PMAX_MAP are absent: the reference would have no ECN \
                 thresholds (an optimized build marks every packet that leaves a queue behind it, \
                 spec §3.3); the scheme's default ECN map is used instead"
                    .into(),
            );
            return Ok(None);
        }
        (Some(a), Some(b), Some(p)) => (a, b, p),
        (a, b, p) => {
            let given: Vec<&Entry> = [&a, &b, &p].into_iter().flatten().collect();
            let line = given.first().map_or(0, |e| e.line);
            return Err(c.error(
                line,
                "KMIN_MAP, KMAX_MAP and PMAX_MAP must be given together (the reference looks up \
                 all three for every port rate)",
            ));
        }
    };
    let pairs = |c: &Config, e: &Entry| -> Result<Vec<(BitsPerSec, String)>, CliError> {
        let mut v: Vec<(BitsPerSec, String)> = Vec::new();
        for pair in e.values[1..].chunks(2) {
            let rate = pair[0].parse::<u64>().ok().filter(|&r| r > 0).map(BitsPerSec).ok_or_else(
                || {
                    c.error(
                        e.line,
                        format!("{}: rate `{}` is not a positive number of bit/s", e.key, pair[0]),
                    )
                },
            )?;
            if v.iter().any(|(r, _)| *r == rate) {
                return Err(c.error(e.line, format!("{}: rate {rate} is listed twice", e.key)));
            }
            v.push((rate, pair[1].clone()));
        }
        Ok(v)
    };
    let kb = |c: &Config, e: &Entry, text: &str| -> Result<u64, CliError> {
        text.parse::<u64>().ok().filter(|&k| k <= u64::from(u32::MAX) / 1000).ok_or_else(|| {
            c.error(e.line, format!("{}: `{text}` is not a whole number of KB", e.key))
        })
    };
    let kmins = pairs(c, &kmin)?;
    let kmaxs = pairs(c, &kmax)?;
    let pmaxs = pairs(c, &pmax)?;
    let mut out = Vec::new();
    let mut rates: BTreeMap<BitsPerSec, ()> = BTreeMap::new();
    for (r, _) in kmins.iter().chain(&kmaxs).chain(&pmaxs) {
        rates.insert(*r, ());
    }
    for rate in rates.keys() {
        let find = |v: &[(BitsPerSec, String)], e: &Entry| -> Result<String, CliError> {
            v.iter().find(|(r, _)| r == rate).map(|(_, t)| t.clone()).ok_or_else(|| {
                c.error(
                    e.line,
                    format!("{} has no entry for {rate}, which the other ECN maps list", e.key),
                )
            })
        };
        let lo = kb(c, &kmin, &find(&kmins, &kmin)?)?;
        let hi = kb(c, &kmax, &find(&kmaxs, &kmax)?)?;
        let p_text = find(&pmaxs, &pmax)?;
        let p =
            p_text.parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p)).ok_or_else(|| {
                c.error(
                    pmax.line,
                    format!("PMAX_MAP: `{p_text}` for {rate} is not a probability in [0, 1]"),
                )
            })?;
        if lo > hi {
            return Err(c.error(
                kmin.line,
                format!(
                    "KMIN_MAP: {lo} KB for {rate} is above KMAX_MAP's {hi} KB (line {})",
                    kmax.line
                ),
            ));
        }
        out.push((*rate, lo, hi, p));
    }
    let from = format!(
        "KMIN_MAP, KMAX_MAP, PMAX_MAP (lines {}, {}, {}); KB = 1000 bytes",
        kmin.line, kmax.line, pmax.line
    );
    Ok(Some((from, out)))
}

/// Writes the `[cc]` parameters of `scheme`.
fn cc_params(c: &mut Config, scheme: &str, t: &mut Toml) -> Result<(), CliError> {
    const RATE_AI_MISSING: &str = "the reference would leave the rate uninitialised (spec §5.2)";
    let min_rate =
        |c: &mut Config| c.rate("MIN_RATE", Absent::Default(BitsPerSec::mbps(100)), "100Mb/s");
    let rate = |v: &BitsPerSec| q(&v.to_string());
    let dur = |v: &Duration| q(&exact_duration(*v));
    match scheme {
        "hpcc" | "hpcc-pint" => {
            let eta = c.float("U_TARGET", Absent::Default(0.95), "0.95")?;
            let max_stage = c.u32("MI_THRESH", 5)?;
            let ai = c.rate("RATE_AI", Absent::Error(RATE_AI_MISSING), "")?;
            let min = min_rate(c)?;
            t.sourced("eta", &eta, |v| float(*v));
            t.sourced("max_stage", &max_stage, |v| v.to_string());
            t.sourced("rate_ai", &ai, rate);
            t.sourced("min_rate", &min, rate);
            if scheme == "hpcc" {
                let fast = c.flag("FAST_REACT", true)?;
                let multi = c.flag("MULTI_RATE", true)?;
                let sample = c.flag("SAMPLE_FEEDBACK", false)?;
                t.sourced("fast_react", &fast, |v| boolean(*v));
                t.sourced("multi_rate", &multi, |v| boolean(*v));
                t.sourced("sample_feedback", &sample, |v| boolean(*v));
            } else {
                c.ignore("FAST_REACT", "HPCC-PINT always reacts to every sampled ACK (spec §4.2)");
                let base = c.float("PINT_LOG_BASE", Absent::Default(1.05), "1.05")?;
                let prob = c.float("PINT_PROB", Absent::Default(1.0), "1.0")?;
                t.sourced("log_base", &base, |v| float(*v));
                t.sourced("prob", &prob, |v| float(*v));
            }
        }
        "dcqcn" | "dcqcn-w" => {
            let ta = c.micros("ALPHA_RESUME_INTERVAL", Absent::Default(55), "55 µs")?;
            let td = c.micros("RATE_DECREASE_INTERVAL", Absent::Default(4), "4 µs")?;
            let ti = c.micros(
                "RP_TIMER",
                Absent::Error("the reference's built-in default is 0, which stalls simulated time (spec §4.3)"),
                "",
            )?;
            let g = c.float(
                "EWMA_GAIN",
                Absent::Error(
                    "the reference's built-in default is 0 (the integer division 1/16, spec §5.2)",
                ),
                "",
            )?;
            let f = c.u32("FAST_RECOVERY_TIMES", 5)?;
            let ai = c.rate("RATE_AI", Absent::Error(RATE_AI_MISSING), "")?;
            let hai = c.rate("RATE_HAI", Absent::Error(RATE_AI_MISSING), "")?;
            let min = min_rate(c)?;
            let clamp = c.flag("CLAMP_TARGET_RATE", false)?;
            t.sourced("alpha_resume_interval", &ta, dur);
            t.sourced("rate_decrease_interval", &td, dur);
            t.sourced("rp_timer", &ti, dur);
            t.sourced("ewma_gain", &g, |v| float(*v));
            t.sourced("fast_recovery_times", &f, |v| v.to_string());
            t.sourced("rate_ai", &ai, rate);
            t.sourced("rate_hai", &hai, rate);
            t.sourced("min_rate", &min, rate);
            t.sourced("clamp_target_rate", &clamp, |v| boolean(*v));
        }
        "timely" | "timely-w" => {
            let ai = c.rate("RATE_AI", Absent::Error(RATE_AI_MISSING), "")?;
            let hai = c.rate("RATE_HAI", Absent::Error(RATE_AI_MISSING), "")?;
            let min = min_rate(c)?;
            t.sourced("rate_ai", &ai, rate);
            t.sourced("rate_hai", &hai, rate);
            t.sourced("min_rate", &min, rate);
            let fixed = "hard-coded in the reference (spec §4.4)";
            t.kv("alpha", float(0.875), fixed);
            t.kv("beta", float(0.8), fixed);
            t.kv("t_low", q("50us"), fixed);
            t.kv("t_high", q("500us"), fixed);
            t.kv("min_rtt", q("20us"), fixed);
            t.kv("hai_after", "5".into(), fixed);
        }
        "dctcp" => {
            let g = c.float(
                "EWMA_GAIN",
                Absent::Error(
                    "the reference's built-in default is 0 (the integer division 1/16, spec §5.2)",
                ),
                "",
            )?;
            let ai =
                c.rate("DCTCP_RATE_AI", Absent::Default(BitsPerSec::mbps(1000)), "1000Mb/s")?;
            let min = min_rate(c)?;
            t.sourced("ewma_gain", &g, |v| float(*v));
            t.sourced("rate_ai", &ai, rate);
            t.sourced("min_rate", &min, rate);
        }
        other => unreachable!("scheme {other} is chosen above"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_durations() {
        assert_eq!(exact_duration(Duration::from_us(300)), "300us");
        assert_eq!(exact_duration(Duration::from_ms(4000)), "4s");
        assert_eq!(exact_duration(Duration::from_ns(3_010_000_000)), "3010ms");
        assert_eq!(exact_duration(Duration::from_ps(1500)), "1500ps");
        assert_eq!(exact_duration(Duration::ZERO), "0ps");
    }

    #[test]
    fn relative_paths() {
        let r = relative(Path::new("/a/b/c/topo.txt"), Path::new("/a/x/y"));
        assert_eq!(r, PathBuf::from("../../b/c/topo.txt"));
        let r = relative(Path::new("/a/topo.txt"), Path::new("/a"));
        assert_eq!(r, PathBuf::from("topo.txt"));
        let r = relative(Path::new("/a/topo.txt"), Path::new("/b/c"));
        assert_eq!(r, PathBuf::from("/a/topo.txt"), "only the root in common: absolute");
    }

    #[test]
    fn entries_span_lines() {
        let e = parse_entries("KMAX_MAP 2 1 2\n 3 4 CC_MODE\n3").unwrap();
        assert_eq!(e[0].values, ["2", "1", "2", "3", "4"]);
        assert_eq!((e[1].key.as_str(), e[1].line, e[1].values[0].as_str()), ("CC_MODE", 2, "3"));
        let err = parse_entries("LINK_DOWN 1 2").unwrap_err();
        assert_eq!(err.0, 1);
        assert!(err.1.contains("LINK_DOWN needs more values"), "{}", err.1);
        let err = parse_entries("PMAX_MAP x").unwrap_err();
        assert!(err.1.contains("entry count `x`"), "{}", err.1);
        // Twice the largest count overflows: an error, not an overflow (found by the file
        // property test, in a debug build).
        let err = parse_entries("KMAX_MAP 18446744073709551615 1 2").unwrap_err();
        assert_eq!(
            err,
            (1, "KMAX_MAP: the entry count `18446744073709551615` is too large".into())
        );
        // A timer beyond the longest time: an error (from_us overflowed, found by the file
        // property test with overflow checks on).
        let mut c = Config {
            file: Path::new("c.txt"),
            entries: parse_entries("RP_TIMER 1e308\nRATE_DECREASE_INTERVAL 4611686018427\n")
                .unwrap(),
            used: vec![false; 2],
            notes: Vec::new(),
        };
        let Err(e) = c.micros("RP_TIMER", Absent::Default(300), "") else {
            panic!("1e308 us accepted")
        };
        let e = e.to_string();
        assert!(
            e.contains("c.txt:1: RP_TIMER 1e308: ") && e.contains("above the longest time"),
            "{e}"
        );
        let Ok(ok) = c.micros("RATE_DECREASE_INTERVAL", Absent::Default(4), "") else {
            panic!("the longest time refused")
        };
        assert_eq!(ok.value, Duration::from_us(4_611_686_018_427));
        // A count far beyond the file: the values shown are shortened.
        let long = format!("KMIN_MAP 1000000 {}", "7 ".repeat(20));
        let err = parse_entries(&long).unwrap_err();
        assert!(
            err.1.ends_with("the file ends after `KMIN_MAP 1000000 7 7 7 7 7 7 7 … (21 values)`"),
            "{}",
            err.1
        );
    }
}
