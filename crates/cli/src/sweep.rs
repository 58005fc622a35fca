//! `dcsim sweep` and `dcsim merge`: a base scenario run over the cartesian product of axis
//! values, one output folder per cell, then a combined summary and figures
//! (`docs/sweeps.md`).
//!
//! The pipeline is the scenario's: parse the sweep file, build every cell's scenario (the base
//! TOML document with the cell's values set), **validate every cell** before anything runs or
//! is written, then run the cells in parallel (each cell is an independent, deterministic
//! simulation in its own folder), and finally combine: `summary.csv`, `cells.csv` and the
//! figures are computed from the cells' `fct.csv` files in cell order, so they do not depend
//! on `--jobs` and a merge of shards computes exactly what an unsharded run does.
//!
//! # Cell order and names
//! Axes are taken in the order they are written in `[axes]`; cells are numbered in row-major
//! order (the first axis varies slowest, the last fastest, like nested loops). A cell's name
//! joins one part per axis with `_`: string values as they are (a workload file by its stem),
//! numbers and booleans after the axis's last key (`load0.3`, `eta0.99`, `seed2`), a scheme
//! table as `name-key<value>` (`hpcc-eta0.99`); characters other than letters, digits and
//! `.+-` become `-`.
//!
//! # Sharding
//! `--shard i/N` runs the cells whose index `% N == i`, writing the same cell folders and a
//! manifest; `dcsim merge` joins shard folders into the combined outputs.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use dcsim_analysis::{
    plot_all, read_fct_csv, AnalysisError, Bucket, FctRow, PooledBacklog, Summary,
};
use dcsim_workload::Cdf;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use toml::{Spanned, Table, Value};

use crate::analyze::{summary, BucketSpec, DEFAULT_BUCKETS};
use crate::error::CliError;
use crate::output;
use crate::output::create_out_dir;
use crate::scenario::{self, Source};

/// The most cells a sweep may have (each is a simulation and a folder of outputs).
pub const MAX_CELLS: usize = 100_000;

/// The manifest every sweep output folder gets: what the sweep is and which cells the folder
/// holds.
pub const MANIFEST: &str = "manifest.toml";

/// The scenario sections a dotted axis may start with (`rpc`, `group` and `queue` are arrays
/// of tables: their second part is the index, e.g. `rpc.0.group`).
const SECTIONS: [&str; 12] = [
    "simulation",
    "topology",
    "flows",
    "cc",
    "switch",
    "nic",
    "rpc",
    "group",
    "queue",
    "output",
    "events",
    "routing",
];

/// The arrays of tables a path may name whole (`"events" = [[], [{ at = ... }]]`).
const ARRAYS: [&str; 4] = ["events", "rpc", "group", "queue"];

/// Axis names that stand for a scenario path (or, for `scheme`, the whole `[cc]` table; for
/// `variant`, several paths at once).
const ALIASES: [(&str, &str); 5] = [
    ("scheme", "cc (the whole table)"),
    (
        "variant",
        "several paths at once: { name = \"x\", \"cc.name\" = ..., \"rpc.0.group\" = ... }",
    ),
    ("workload", "flows.workload.cdf"),
    ("load", "flows.workload.load"),
    ("seed", "simulation.seed"),
];

// ---------------------------------------------------------------------------------------------
// --shard
// ---------------------------------------------------------------------------------------------

/// `--shard i/N`: the cells whose index `% N == i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// `i`, in `0..count`.
    pub index: usize,
    /// `N`, at least 1.
    pub count: usize,
}

impl Shard {
    /// The whole sweep (`0/1`).
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Whether cell `cell` belongs to this shard.
    pub fn has(self, cell: usize) -> bool {
        cell % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let syntax = || format!("expected i/N with 0 <= i < N (e.g. 0/4), found `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(syntax)?;
        let index: usize = i.trim().parse().map_err(|_| syntax())?;
        let count: usize = n.trim().parse().map_err(|_| syntax())?;
        if count == 0 {
            return Err(format!("the shard count must be at least 1, found `{s}`"));
        }
        if index >= count {
            return Err(format!(
                "shard index {index} is out of range for {count} shard{}: shards are numbered \
                 0..={} (`{s}`)",
                if count == 1 { "" } else { "s" },
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

// ---------------------------------------------------------------------------------------------
// The sweep file.
// ---------------------------------------------------------------------------------------------

#[derive(Deserialize, Debug)]
#[serde(expecting = "a sweep file: a TOML document with `base` and `[axes]`")]
#[serde(deny_unknown_fields)]
struct RawSweep {
    base: Option<Spanned<String>>,
    buckets: Option<Spanned<String>>,
    dport: Option<Spanned<i64>>,
    lines: Option<Spanned<Vec<String>>>,
    set: Option<Table>,
    axes: Option<Table>,
    buffer: Option<Table>,
}

/// Where an axis writes its values.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    /// `scheme`: replaces the whole `[cc]` table.
    Scheme,
    /// `variant`: each value is a table of dotted paths and values, set together.
    Variant,
    /// A dotted path of tables and a key.
    Path(Vec<String>),
}

/// One axis with its values, their labels (CSV columns, legends) and their cell-name parts.
#[derive(Clone, Debug)]
struct Axis {
    key: String,
    target: Target,
    values: Vec<Value>,
    labels: Vec<String>,
    parts: Vec<String>,
}

/// One cell: its index, name, the index of its value on each axis, its scenario text.
#[derive(Clone, Debug)]
struct CellPlan {
    index: usize,
    name: String,
    choice: Vec<usize>,
    buckets: BucketSpec,
    text: String,
    /// The cell scenario's warnings (printed once per cell).
    warnings: Vec<scenario::warnings::Warning>,
}

/// A parsed sweep with every cell's scenario built and validated.
#[derive(Debug)]
struct Plan {
    sweep: PathBuf,
    base: PathBuf,
    base_dir: PathBuf,
    dport: Option<u16>,
    lines: Vec<String>,
    set: Vec<String>,
    axes: Vec<Axis>,
    cells: Vec<CellPlan>,
    /// The buffer-sizing report (`[buffer]`), if asked for.
    buffer: Option<crate::study::StudySpec>,
}

/// `axes.load`, `axes."cc.eta"`, `set."simulation.stop_time"`.
fn key_field(section: &str, key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        format!("{section}.{key}")
    } else {
        format!("{section}.{key:?}")
    }
}

/// The text of a scalar value for labels and names: strings as they are, floats in Rust's
/// shortest round-trip form.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Letters, digits and `.+-` are kept; anything else becomes `-`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-') { c } else { '-' })
        .collect()
}

/// The longest cell name: a cell's folder is named after it, and a file name has at most 255
/// bytes on common file systems (200 leaves a margin; a name of 300 failed only after the
/// cell had run).
pub const MAX_CELL_NAME: usize = 200;

/// Whether `name` can be a cell's folder name: 1 to [`MAX_CELL_NAME`] characters of letters,
/// digits, `.`, `_`, `+` and `-`, and neither `.` nor `..` (which would put the cell's files in
/// the cells folder or the output folder itself).
fn is_cell_name(name: &str) -> bool {
    (1..=MAX_CELL_NAME).contains(&name.len())
        && name != "."
        && name != ".."
        && name.chars().all(|ch| ch.is_ascii_alphanumeric() || "._+-".contains(ch))
}

/// The most parts a dotted key may have. No scenario field lies deeper than a handful; a key of
/// thousands of parts built as deep a table, whose recursive handling overflowed the stack.
const MAX_KEY_PARTS: usize = 16;

/// The error for a key of `n` parts, more than [`MAX_KEY_PARTS`].
fn too_deep(n: usize) -> String {
    format!("a dotted key of {n} parts; scenario fields lie at most {MAX_KEY_PARTS} deep")
}

/// The target of an axis or `[set]` key (`section` names the table, for errors).
fn target_of(src: &Source, section: &str, key: &str) -> Result<Target, CliError> {
    let field = key_field(section, key);
    let err = |message: String| src.error_at(src.span_of(&[section, key]), field.clone(), message);
    Ok(match key {
        "scheme" => Target::Scheme,
        k if section == "axes" && (k == "variant" || k.starts_with("variant_")) => Target::Variant,
        "workload" => Target::Path(vec!["flows".into(), "workload".into(), "cdf".into()]),
        "load" => Target::Path(vec!["flows".into(), "workload".into(), "load".into()]),
        "seed" => Target::Path(vec!["simulation".into(), "seed".into()]),
        _ => {
            let parts: Vec<String> = key.split('.').map(str::to_string).collect();
            let whole_array = parts.len() == 1 && ARRAYS.contains(&parts[0].as_str());
            if parts.len() > MAX_KEY_PARTS {
                return Err(err(too_deep(parts.len())));
            }
            if (parts.len() < 2 && !whole_array)
                || parts.iter().any(String::is_empty)
                || !SECTIONS.contains(&parts[0].as_str())
            {
                let aliases: Vec<String> =
                    ALIASES.iter().map(|(a, p)| format!("`{a}` ({p})")).collect();
                let what = if section == "axes" { "axis" } else { "key" };
                return Err(err(format!(
                    "unknown {what} `{key}`: expected one of {}, or a quoted dotted scenario \
                     path such as \"cc.eta\" starting with a section ({})",
                    aliases.join(", "),
                    SECTIONS.join(", ")
                )));
            }
            Target::Path(parts)
        }
    })
}

/// Whether path `a` is `b` or a table above it.
fn is_prefix(a: &[String], b: &[String]) -> bool {
    a.len() <= b.len() && a == &b[..a.len()]
}

/// The scenario paths axis `a` sets: its own, or, for a variant axis, every key its values
/// give (but `name`). (`scheme` replaces the `[cc]` table, applied before the others.)
fn axis_paths(a: &Axis) -> Vec<Vec<String>> {
    match &a.target {
        Target::Scheme => Vec::new(),
        Target::Path(p) => vec![p.clone()],
        Target::Variant => {
            let mut out: Vec<Vec<String>> = Vec::new();
            for t in a.values.iter().filter_map(Value::as_table) {
                for k in t.keys().filter(|k| k.as_str() != "name") {
                    let p: Vec<String> = k.split('.').map(str::to_string).collect();
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
            out
        }
    }
}

/// The field two axes both set, if any: the same path or one a table above the other, or a
/// path that replaces the `[cc]` table or its name beside the `scheme` axis.
fn axes_clash(a: &Axis, b: &Axis) -> Option<String> {
    let scheme_clash = |other: &Axis| {
        let cc_name = ["cc".to_string(), "name".to_string()];
        axis_paths(other).into_iter().find(|p| is_prefix(p, &cc_name))
    };
    let clash = match (&a.target, &b.target) {
        (Target::Scheme, _) => scheme_clash(b),
        (_, Target::Scheme) => scheme_clash(a),
        _ => {
            let (pa, pb) = (axis_paths(a), axis_paths(b));
            pa.iter()
                .flat_map(|p| pb.iter().map(move |q| (p, q)))
                .find(|(p, q)| is_prefix(p, q) || is_prefix(q, p))
                .map(|(p, q)| if p.len() >= q.len() { p.clone() } else { q.clone() })
        }
    };
    clash.map(|p| p.join("."))
}

fn parse_axis(src: &Source, key: &str, value: &Value) -> Result<Axis, CliError> {
    let field = key_field("axes", key);
    let span = src.span_of(&["axes", key]);
    let err = |message: String| src.error_at(span.clone(), field.clone(), message);
    let target = target_of(src, "axes", key)?;
    let Value::Array(values) = value else {
        return Err(err(format!(
            "an axis is an array of values, e.g. {key} = [...], found {}",
            value.type_str()
        )));
    };
    if values.is_empty() {
        return Err(err("empty axis: give at least one value".to_string()));
    }
    let last = match &target {
        Target::Scheme => "scheme".to_string(),
        Target::Variant => "variant".to_string(),
        Target::Path(p) => p[p.len() - 1].clone(),
    };
    let mut labels = Vec::with_capacity(values.len());
    let mut parts = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let bad = |what: &str| err(format!("value {} ({v}): {what}", i + 1));
        let kind = if target == Target::Variant { "variant" } else { key };
        let (label, part) = match (kind, v) {
            ("scheme", Value::String(s)) => (s.clone(), s.clone()),
            ("scheme", Value::Table(t)) => {
                let Some(Value::String(name)) = t.get("name") else {
                    return Err(bad("a scheme table needs `name = \"...\"`"));
                };
                let mut label = name.clone();
                let mut part = name.clone();
                for (k, x) in t.iter().filter(|(k, _)| k.as_str() != "name") {
                    let text = scalar_text(x).unwrap_or_else(|| x.to_string());
                    label.push_str(&format!(" {k}={text}"));
                    part.push_str(&format!("-{k}{text}"));
                }
                (label, part)
            }
            ("scheme", _) => {
                return Err(bad("expected a scheme name or a [cc] table with a name, e.g. \
                     { name = \"hpcc\", eta = 0.99 }"))
            }
            ("variant", Value::Table(t)) => {
                let Some(Value::String(name)) = t.get("name") else {
                    return Err(bad("a variant needs `name = \"...\"`"));
                };
                for k in t.keys().filter(|k| k.as_str() != "name") {
                    let parts: Vec<&str> = k.split('.').collect();
                    if parts.len() > MAX_KEY_PARTS {
                        return Err(bad(&format!(
                            "`{}…`: {}",
                            &parts[..3].join("."),
                            too_deep(parts.len())
                        )));
                    }
                    if parts.len() < 2
                        || parts.iter().any(|p| p.is_empty())
                        || !SECTIONS.contains(&parts[0])
                    {
                        return Err(bad(&format!(
                            "`{k}` is not a dotted scenario path starting with a section ({})",
                            SECTIONS.join(", ")
                        )));
                    }
                }
                (name.clone(), name.clone())
            }
            ("variant", _) => {
                return Err(bad(
                    "expected a table such as { name = \"newreno\", \"cc.name\" = \"none\" }",
                ))
            }
            ("workload", Value::String(s)) => {
                let part = if Cdf::builtin(s).is_ok() {
                    s.to_ascii_lowercase()
                } else {
                    Path::new(s).file_stem().map_or(s.clone(), |x| x.to_string_lossy().into())
                };
                (s.clone(), part)
            }
            ("workload", _) => {
                return Err(bad("expected a built-in workload name or a CDF file path"))
            }
            ("load", Value::Float(_) | Value::Integer(_)) => {
                let t = scalar_text(v).expect("a number");
                (t.clone(), format!("load{t}"))
            }
            ("load", _) => return Err(bad("expected a number in (0, 1), e.g. 0.3")),
            ("seed", Value::Integer(s)) if *s >= 0 => (s.to_string(), format!("seed{s}")),
            ("seed", _) => return Err(bad("expected a non-negative integer")),
            (_, Value::String(s)) => (s.clone(), s.clone()),
            (_, x) => match scalar_text(x) {
                Some(t) => (t.clone(), format!("{last}{t}")),
                None => (x.to_string(), format!("{last}-v{}", i + 1)),
            },
        };
        labels.push(label);
        parts.push(sanitize(&part));
    }
    Ok(Axis { key: key.to_string(), target, values: values.clone(), labels, parts })
}

/// Sets `path` in `doc`, creating missing tables.
fn set_path(doc: &mut Table, path: &[String], value: Value) -> Result<(), String> {
    let (last, parents) = path.split_last().expect("paths have at least two keys");
    let mut t = doc;
    let mut i = 0;
    while i < parents.len() {
        let k = &parents[i];
        let indexed = path.get(i + 1).is_some_and(|x| x.parse::<usize>().is_ok());
        if indexed && !t.contains_key(k) {
            return Err(format!(
                "cannot set `{}`: the base scenario has no `{k}` array to index",
                path.join(".")
            ));
        }
        let entry = t.entry(k.clone()).or_insert_with(|| Value::Table(Table::new()));
        // An array of tables is indexed by the next part (`rpc.0.group`).
        if let Value::Array(items) = entry {
            let idx = path.get(i + 1).and_then(|x| x.parse::<usize>().ok());
            let len = items.len();
            let Some(item) = idx.and_then(|j| items.get_mut(j)) else {
                return Err(format!(
                    "cannot set `{}`: `{k}` is an array of {len} in the base scenario; index it \
                     with 0..{len}",
                    path.join(".")
                ));
            };
            let Value::Table(inner) = item else {
                return Err(format!("cannot set `{}`: not an array of tables", path.join(".")));
            };
            if i + 1 == parents.len() {
                return Err(format!(
                    "cannot set `{}`: give a key after the index (e.g. `{k}.0.name`)",
                    path.join(".")
                ));
            }
            if i + 2 == parents.len() {
                inner.insert(last.clone(), value);
                return Ok(());
            }
            t = inner;
            i += 2;
            continue;
        }
        match entry {
            Value::Table(inner) => t = inner,
            other => {
                return Err(format!(
                    "cannot set `{}`: `{}` is a {} in the base scenario, not a table",
                    path.join("."),
                    parents[..=i].join("."),
                    other.type_str()
                ))
            }
        }
        i += 1;
    }
    t.insert(last.clone(), value);
    Ok(())
}

fn get_path<'a>(doc: &'a Table, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut v = doc.get(*first)?;
    for k in rest {
        v = v.as_table()?.get(*k)?;
    }
    Some(v)
}

/// Replaces a relative file name at `path` by its absolute path (resolved against `base_dir`)
/// if the file exists, so that the cell's scenario can be run from its own folder.
fn absolutize(doc: &mut Table, path: &[&str], base_dir: &Path) {
    let Some(Value::String(rel)) = get_path(doc, path) else { return };
    if Path::new(rel).is_absolute() || Cdf::builtin(rel).is_ok() && path.last() == Some(&"cdf") {
        return;
    }
    let Ok(abs) = std::fs::canonicalize(base_dir.join(rel)) else { return };
    let abs = abs.to_string_lossy().into_owned();
    let owned: Vec<String> = path.iter().map(|s| s.to_string()).collect();
    let _ = set_path(doc, &owned, Value::String(abs));
}

/// `key = value, ...` for a cell (error messages, scenario headers).
fn values_text(axes: &[Axis], choice: &[usize]) -> String {
    axes.iter()
        .zip(choice)
        .map(|(a, &i)| {
            let k = if a.key.contains('.') { format!("{:?}", a.key) } else { a.key.clone() };
            format!("{k} = {}", a.values[i])
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cell's scenario error on a value that the base file gives and the cell keeps as written
/// there (no axis or `[set]` changed it), located in the base file, with the cell named;
/// else [`cell_error`].
fn base_or_cell_error(
    sweep: &Path,
    (base_src, file_doc): (&Source, &Table),
    cell_doc: &Table,
    name: &str,
    values: String,
    e: CliError,
) -> CliError {
    let (field, message) = match &e {
        CliError::Field { field, message, .. } => (field, message),
        CliError::Toml { field: Some(field), message, .. } => (field, message),
        _ => return cell_error(sweep, name, values, e),
    };
    let path: Vec<&str> = field.split('.').collect();
    let written = value_at(file_doc, &path);
    let span = base_src.span_of(&path);
    match (written, span) {
        (Some(v), Some(span)) if !field.contains('[') && value_at(cell_doc, &path) == Some(v) => {
            base_src.error(
                span,
                field.clone(),
                format!("{message} (in cell {name} ({values}) of {})", sweep.display()),
            )
        }
        _ => cell_error(sweep, name, values, e),
    }
}

/// The value at a dotted path of tables, if there is one.
fn value_at<'a>(t: &'a Table, path: &[&str]) -> Option<&'a Value> {
    let (last, tables) = path.split_last()?;
    let mut t = t;
    for k in tables {
        t = t.get(*k)?.as_table()?;
    }
    t.get(*last)
}

/// A scenario error inside a cell, without the position (which would point into the
/// generated document).
fn cell_error(sweep: &Path, name: &str, values: String, e: CliError) -> CliError {
    let message = match e {
        CliError::Field { field, message, .. } => format!("field `{field}`: {message}"),
        CliError::Toml { field: Some(field), message, .. } => format!("field `{field}`: {message}"),
        CliError::Toml { message, .. } | CliError::Scenario { message, .. } => message,
        other => other.to_string(),
    };
    CliError::Cell { file: sweep.to_path_buf(), cell: name.to_string(), values, message }
}

/// The buckets of a cell: the sweep's `buckets`, or for `auto` the HPCC figure sizes of a
/// web-search or Hadoop workload and ten quantile buckets otherwise.
fn auto_buckets(doc: &Table) -> BucketSpec {
    let cdf = get_path(doc, &["flows", "workload", "cdf"]).and_then(Value::as_str);
    match cdf.map(str::to_ascii_lowercase).as_deref() {
        Some(n @ ("websearch" | "hadoop")) => {
            format!("sizes:{n}").parse().expect("built-in bucket specs parse")
        }
        _ => DEFAULT_BUCKETS,
    }
}

/// Reads the sweep file and the base scenario, builds every cell and validates it.
fn plan(sweep: &Path, jobs: usize) -> Result<Plan, CliError> {
    let text = scenario::read_file(sweep)?;
    scenario::check_parse_memory(sweep, &text)?;
    let src = Source::new(sweep, text);
    let raw: RawSweep = toml::from_str(src.text()).map_err(|e| src.toml_error(&e))?;

    let base_rel = raw.base.as_ref().ok_or_else(|| CliError::Scenario {
        file: sweep.to_path_buf(),
        message: "missing `base = \"scenario.toml\"` (the base scenario, relative to the sweep \
                  file)"
            .into(),
    })?;
    let base = src.resolve(base_rel.get_ref());
    let base_text = crate::scenario::read_text(&base).map_err(|e| {
        src.error(base_rel.span(), "base", format!("cannot read {}: {e}", base.display()))
    })?;
    scenario::check_parse_memory(&base, &base_text)?;
    let base_src = Source::new(&base, base_text);
    let mut base_doc: Table =
        toml::from_str(base_src.text()).map_err(|e| base_src.toml_error(&e))?;
    // The base as written, before `[set]`: a cell's error on a value the base file gave is
    // located in the base file.
    let file_doc = base_doc.clone();
    let base_dir = match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };

    let buckets = match &raw.buckets {
        None => None,
        Some(b) if b.get_ref() == "auto" => None,
        Some(b) => Some(
            b.get_ref()
                .parse::<BucketSpec>()
                .map_err(|e| src.error(b.span(), "buckets", format!("{e}, or auto")))?,
        ),
    };
    let dport = match &raw.dport {
        None => None,
        Some(d) => Some(src.int(d, "dport", 0, i64::from(u16::MAX))? as u16),
    };

    let table = raw.axes.unwrap_or_default();
    if table.is_empty() {
        return Err(src.error_at(
            src.span_of(&["axes"]),
            "axes",
            "a sweep needs at least one axis under [axes], e.g. scheme = [\"hpcc\", \"dctcp\"]",
        ));
    }
    // Axes in the order they are written.
    let mut keys: Vec<(&String, &Value)> = table.iter().collect();
    keys.sort_by_key(|(k, _)| src.span_of(&["axes", k.as_str()]).map_or(usize::MAX, |s| s.start));
    let axes: Vec<Axis> =
        keys.into_iter().map(|(k, v)| parse_axis(&src, k, v)).collect::<Result<_, _>>()?;

    // Two axes that set the same field: the later one won in every cell, and `cells.csv`
    // labelled the cells with values that did not run (`load` beside "flows.workload.load",
    // `scheme` beside a variant's "cc.name").
    for (j, b) in axes.iter().enumerate() {
        for a in &axes[..j] {
            if let Some(path) = axes_clash(a, b) {
                return Err(src.error_at(
                    src.span_of(&["axes", b.key.as_str()]),
                    key_field("axes", &b.key),
                    format!(
                        "`{}` and `{}` both set `{path}`: one would override the other in \
                         every cell, whose names and cells.csv would give values that did not \
                         run; give it in one place",
                        a.key, b.key
                    ),
                ));
            }
        }
    }

    // [set]: fixed values for every cell, applied to the base document first.
    let mut set = Vec::new();
    let fixed = raw.set.unwrap_or_default();
    let mut fixed: Vec<(&String, &Value)> = fixed.iter().collect();
    fixed.sort_by_key(|(k, _)| src.span_of(&["set", k.as_str()]).map_or(usize::MAX, |s| s.start));
    for (key, value) in fixed {
        let target = target_of(&src, "set", key)?;
        let at = |m: String| src.error_at(src.span_of(&["set", key]), key_field("set", key), m);
        if let Some(a) = axes.iter().find(|a| a.target == target) {
            return Err(at(format!("`{key}` is also the axis `{}`; give it in one place", a.key)));
        }
        // An axis applied after `[set]` that replaces what it set (the `scheme` axis replaces
        // the whole [cc], a variant or an axis a table above the key): the value was lost.
        if let Target::Path(p) = &target {
            for a in &axes {
                let lost = axis_paths(a).iter().any(|q| is_prefix(q, p))
                    || (a.target == Target::Scheme && p[0] == "cc");
                if lost {
                    return Err(at(format!(
                        "the axis `{}` replaces `{key}` in every cell, so this value would be \
                         lost; give it in the axis' values instead",
                        a.key
                    )));
                }
            }
        }
        match (&target, value) {
            (Target::Scheme, Value::String(name)) => {
                let cc = Table::from_iter([("name".to_string(), Value::String(name.clone()))]);
                base_doc.insert("cc".into(), Value::Table(cc));
            }
            (Target::Scheme, Value::Table(t)) => {
                base_doc.insert("cc".into(), Value::Table(t.clone()));
            }
            (Target::Scheme, _) => {
                return Err(at("expected a scheme name or a [cc] table with a name".into()))
            }
            (Target::Variant, _) => unreachable!("variant is an axis only"),
            (Target::Path(p), v) => set_path(&mut base_doc, p, v.clone()).map_err(at)?,
        }
        let k = if key.contains('.') { format!("{key:?}") } else { key.clone() };
        set.push(format!("{k} = {value}"));
    }

    let lines = match &raw.lines {
        Some(l) => {
            for name in l.get_ref() {
                if !axes.iter().any(|a| &a.key == name) {
                    let known: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
                    return Err(src.error(
                        l.span(),
                        "lines",
                        format!("`{name}` is not an axis (axes: {})", known.join(", ")),
                    ));
                }
            }
            l.get_ref().clone()
        }
        None if axes.iter().any(|a| a.key == "scheme") => vec!["scheme".to_string()],
        None => vec![axes[axes.len() - 1].key.clone()],
    };

    // Every combination, row-major; their number bounded before any is built (a product of
    // axes of 100 values each ran out of memory from 4 axes on, and took minutes from 3).
    let count = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    let count = match count {
        Some(n) if n <= MAX_CELLS => n,
        _ => {
            let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
            return Err(src.error_at(
                src.span_of(&["axes"]),
                "axes",
                format!(
                    "{} cells is more than the limit of {MAX_CELLS}: split the sweep",
                    sizes.join(" × ")
                ),
            ));
        }
    };
    let mut combos = Vec::with_capacity(count);
    for index in 0..count {
        let mut rest = index;
        let mut choice = vec![0; axes.len()];
        for (slot, a) in choice.iter_mut().zip(&axes).rev() {
            *slot = rest % a.values.len();
            rest /= a.values.len();
        }
        let name = axes.iter().zip(&choice).map(|(a, &i)| a.parts[i].as_str()).collect::<Vec<_>>();
        combos.push((index, name.join("_"), choice));
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, name, choice) in &combos {
        if !is_cell_name(name) {
            return Err(src.error_at(
                src.span_of(&["axes"]),
                "axes",
                format!(
                    "cell {i} ({}) would be named {name:?}, which cannot be its folder's name \
                     (a name of 1 to {MAX_CELL_NAME} characters, not \".\" or \"..\"): name \
                     the values differently, e.g. a variant's `name`",
                    values_text(&axes, choice)
                ),
            ));
        }
        if let Some(&j) = seen.get(name.as_str()) {
            return Err(src.error_at(
                src.span_of(&["axes"]),
                "axes",
                format!(
                    "cells {j} and {i} would both be named \"{name}\" ({} / {}); make the axis \
                     values distinct",
                    values_text(&axes, &combos[j].2),
                    values_text(&axes, choice)
                ),
            ));
        }
        seen.insert(name, *i);
    }

    let buffer = match &raw.buffer {
        None => None,
        Some(t) => {
            let keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
            Some(crate::study::StudySpec::parse(&src, t, &keys)?)
        }
    };
    let build = |(index, name, choice): (usize, String, Vec<usize>)| -> Result<CellPlan, CliError> {
        let values = values_text(&axes, &choice);
        let fail = |m: String| {
            cell_error(
                sweep,
                &name,
                values.clone(),
                CliError::Scenario { file: base.clone(), message: m },
            )
        };
        let mut doc = base_doc.clone();
        // `scheme` first (it replaces [cc]), then the other axes in order.
        for (a, &i) in axes.iter().zip(&choice).filter(|(a, _)| a.target == Target::Scheme) {
            let cc = match &a.values[i] {
                Value::String(s) => {
                    Table::from_iter([("name".to_string(), Value::String(s.clone()))])
                }
                Value::Table(t) => t.clone(),
                _ => unreachable!("checked in parse_axis"),
            };
            doc.insert("cc".into(), Value::Table(cc));
        }
        for (a, &i) in axes.iter().zip(&choice) {
            match (&a.target, &a.values[i]) {
                (Target::Path(p), v) => set_path(&mut doc, p, v.clone()).map_err(fail)?,
                (Target::Variant, Value::Table(t)) => {
                    for (k, v) in t.iter().filter(|(k, _)| k.as_str() != "name") {
                        let p: Vec<String> = k.split('.').map(str::to_string).collect();
                        set_path(&mut doc, &p, v.clone()).map_err(fail)?;
                    }
                }
                _ => {}
            }
        }
        absolutize(&mut doc, &["topology", "path"], &base_dir);
        absolutize(&mut doc, &["flows", "file"], &base_dir);
        absolutize(&mut doc, &["flows", "workload", "cdf"], &base_dir);
        let body = toml::to_string(&doc).map_err(|e| fail(e.to_string()))?;
        let text = format!(
            "# Cell {index} \"{name}\" of the sweep {}: the base scenario {} with\n# {values}.\n\n{body}",
            sweep.display(),
            base.display(),
        );
        let cell_src = Source::with_base_dir(base.clone(), text.clone(), base_dir.clone());
        let valid = scenario::validate(&cell_src, None).map_err(|e| {
            base_or_cell_error(sweep, (&base_src, &file_doc), &doc, &name, values.clone(), e)
        })?;
        // What a `[buffer]` report reads of the cell, checked now rather than after the runs.
        if let Some(spec) = &buffer {
            if let Err((key, m)) = spec.check_cell(&valid) {
                let (at, field) = if key.is_empty() {
                    (src.span_of(&["buffer"]), "buffer".to_string())
                } else {
                    let at = src.span_of(&["buffer", key]).or(src.span_of(&["buffer"]));
                    (at, format!("buffer.{key}"))
                };
                return Err(src.error_at(at, field, format!("cell {name} ({values}): {m}")));
            }
        }
        let warnings = valid.warnings;
        let buckets = buckets.clone().unwrap_or_else(|| auto_buckets(&doc));
        Ok(CellPlan { index, name, choice, buckets, text, warnings })
    };
    // Every cell is validated (in parallel); the error reported is the first cell's in cell
    // order, whatever the thread timing (a `Result` collect would keep whichever came first).
    let built: Vec<Result<CellPlan, CliError>> =
        in_pool(jobs, combos.len(), || combos.into_par_iter().map(build).collect())?;
    let cells: Vec<CellPlan> = built.into_iter().collect::<Result<_, _>>()?;

    Ok(Plan { sweep: sweep.to_path_buf(), base, base_dir, dport, lines, set, axes, cells, buffer })
}

/// Prints the warnings of `cells` to `notes`, once per cell, as cell errors name the cell:
/// `warning: SWEEP: cell NAME (VALUES): field `x`: message`.
fn print_cell_warnings(plan: &Plan, cells: &[&CellPlan], notes: &mut dyn Write) {
    for c in cells {
        for w in &c.warnings {
            let _ = writeln!(
                notes,
                "warning: {}: cell {} ({}): {}",
                plan.sweep.display(),
                c.name,
                values_text(&plan.axes, &c.choice),
                w.detail()
            );
        }
    }
}

/// Runs `f`, which shares out `items` pieces of work, in a pool of `jobs` threads, or of one
/// per item if there are fewer items (`--jobs 100000` on two cells failed to start its
/// threads).
pub(crate) fn in_pool<T: Send>(
    jobs: usize,
    items: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, CliError> {
    let jobs = jobs.min(items).max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| CliError::Threads { jobs, message: e.to_string() })?;
    Ok(pool.install(f))
}

// ---------------------------------------------------------------------------------------------
// The manifest.
// ---------------------------------------------------------------------------------------------

/// `manifest.toml`: the sweep's definition as far as combining needs it, and which cells an
/// output folder holds.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(
    expecting = "a sweep manifest (`manifest.toml`): a table with format, sweep, base, shard, lines, set, axes and cells"
)]
pub struct Manifest {
    /// Manifest format version (1).
    pub format: u32,
    /// The sweep file, as given on the command line.
    pub sweep: String,
    /// The base scenario, as resolved from the sweep file.
    pub base: String,
    /// The shard this folder ran (`0/1` for a whole sweep or a merge).
    pub shard: String,
    /// Only flows with this destination port are analyzed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dport: Option<u16>,
    /// The axes whose values make the lines of a figure.
    pub lines: Vec<String>,
    /// The `[set]` values every cell has, as `key = value`.
    pub set: Vec<String>,
    /// The axes, in order.
    pub axes: Vec<ManifestAxis>,
    /// Every cell of the sweep, in order.
    pub cells: Vec<ManifestCell>,
    /// The buffer-sizing report's settings (`[buffer]`), if the sweep asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<crate::study::StudySpec>,
}

/// An axis in the manifest.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(expecting = "a manifest axis: a table with key, labels and parts")]
pub struct ManifestAxis {
    /// The axis as written (`scheme`, `cc.eta`).
    pub key: String,
    /// Each value's label.
    pub labels: Vec<String>,
    /// Each value's cell-name part.
    pub parts: Vec<String>,
}

/// A cell in the manifest.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(expecting = "a manifest cell: a table with index, name and values")]
pub struct ManifestCell {
    /// Position in the sweep.
    pub index: usize,
    /// Folder name under `cells/`.
    pub name: String,
    /// Index of its value on each axis.
    pub values: Vec<usize>,
    /// Its size buckets.
    pub buckets: String,
    /// Whether this output folder holds the cell's results.
    pub ran: bool,
}

impl Manifest {
    fn new(plan: &Plan, sweep_arg: &Path, shard: Shard) -> Manifest {
        Manifest {
            format: 1,
            sweep: sweep_arg.display().to_string(),
            base: plan.base.display().to_string(),
            shard: shard.to_string(),
            dport: plan.dport,
            lines: plan.lines.clone(),
            set: plan.set.clone(),
            axes: plan
                .axes
                .iter()
                .map(|a| ManifestAxis {
                    key: a.key.clone(),
                    labels: a.labels.clone(),
                    parts: a.parts.clone(),
                })
                .collect(),
            cells: plan
                .cells
                .iter()
                .map(|c| ManifestCell {
                    index: c.index,
                    name: c.name.clone(),
                    values: c.choice.clone(),
                    buckets: c.buckets.to_string(),
                    ran: shard.has(c.index),
                })
                .collect(),
            buffer: plan.buffer.clone(),
        }
    }

    /// The parts that must agree between shards of one sweep.
    fn definition(&self) -> Manifest {
        let mut m = self.clone();
        m.sweep.clear();
        m.base.clear();
        m.shard.clear();
        for c in &mut m.cells {
            c.ran = false;
        }
        m
    }

    fn text(&self) -> String {
        let body = toml::to_string(self).expect("the manifest serializes");
        format!(
            "# dcsim sweep manifest: the sweep's axes and cells, and which cells this folder \
             holds (ran).\n{body}"
        )
    }

    fn read(dir: &Path) -> Result<Manifest, CliError> {
        let path = dir.join(MANIFEST);
        let text = crate::scenario::read_text(&path).map_err(|e| CliError::Input {
            file: dir.to_path_buf(),
            message: format!("not a sweep output folder: cannot read {}: {e}", path.display()),
        })?;
        let src = Source::new(&path, text);
        let m: Manifest = toml::from_str(src.text()).map_err(|e| src.toml_error(&e))?;
        if m.format != 1 {
            return Err(CliError::Input {
                file: path,
                message: format!("unsupported manifest format {}", m.format),
            });
        }
        m.check().map_err(|message| CliError::Input { file: path, message })?;
        Ok(m)
    }

    /// What combining relies on, in a manifest read back (a hand-edited one made `merge`
    /// index past its cells and panic): the shard is `i/N` and names the cells marked as run; each axis has as many labels as
    /// parts; the cells are listed by index from 0, each with one value per axis within the
    /// axis, a folder name a sweep could have made ([`is_cell_name`]) and a valid bucket spec;
    /// a `[buffer]` report's settings pass [`crate::study::StudySpec::check`].
    fn check(&self) -> Result<(), String> {
        let shard =
            self.shard.parse::<Shard>().map_err(|e| format!("shard {:?}: {e}", self.shard))?;
        // The shard names the cells the folder holds (index % N == i): an edited one was
        // merged without comment.
        if let Some(c) = self.cells.iter().find(|c| c.ran != shard.has(c.index)) {
            return Err(format!(
                "shard \"{shard}\" does not match the cells the folder holds (cell {} ({}) is \
                 {}marked as run); was the manifest edited?",
                c.index,
                c.name,
                if c.ran { "" } else { "not " }
            ));
        }
        for a in &self.axes {
            if a.labels.len() != a.parts.len() || a.labels.is_empty() {
                return Err(format!("axis `{}`: as many labels as parts, at least one", a.key));
            }
            // Parts name the figures' files, as cell names name folders.
            if let Some(p) = a.parts.iter().find(|p| !is_cell_name(p)) {
                return Err(format!("axis `{}`: part {p:?} is not a file name piece", a.key));
            }
        }
        let mut names = std::collections::HashSet::new();
        if let Some(c) = self.cells.iter().find(|c| !names.insert(c.name.as_str())) {
            return Err(format!("cell name {:?} appears twice: each cell has its folder", c.name));
        }
        for (i, c) in self.cells.iter().enumerate() {
            if c.index != i {
                return Err(format!(
                    "cell {:?} has index {} at position {i}: cells are listed by index, from 0",
                    c.name, c.index
                ));
            }
            let values_ok = c.values.len() == self.axes.len()
                && c.values.iter().zip(&self.axes).all(|(&v, a)| v < a.labels.len());
            if !values_ok {
                return Err(format!(
                    "cell {i} ({:?}): its values {:?} do not name a value of each axis",
                    c.name, c.values
                ));
            }
            if !is_cell_name(&c.name) {
                return Err(format!("cell {i}: {:?} is not a cell folder name", c.name));
            }
            if let Err(e) = c.buckets.parse::<BucketSpec>() {
                return Err(format!("cell {i} ({:?}): buckets: {e}", c.name));
            }
        }
        if let Some(b) = &self.buffer {
            let axes: Vec<&str> = self.axes.iter().map(|a| a.key.as_str()).collect();
            b.check(&axes).map_err(|(key, e)| format!("buffer.{key}: {e}"))?;
        }
        for l in &self.lines {
            if !self.axes.iter().any(|a| &a.key == l) {
                return Err(format!("lines: `{l}` is not an axis"));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// dcsim sweep
// ---------------------------------------------------------------------------------------------

/// What one cell's run reports (stdout only: wall time is not written to any file).
struct CellReport {
    done: u64,
    unfinished: u64,
    events: u64,
    /// Seconds of wall time, or `None` for a cell reused from an earlier run (`--resume`).
    wall: Option<f64>,
}

impl CellReport {
    /// `12 flows done, 0 unfinished, 2813452 events, 1.4 s` (`reused` for the wall time of a
    /// reused cell).
    fn text(&self) -> String {
        let wall = match self.wall {
            Some(w) => format!("{w:.1} s"),
            None => "reused".into(),
        };
        format!(
            "{} flows done, {} unfinished, {} events, {wall}",
            self.done, self.unfinished, self.events
        )
    }
}

/// A cell that an earlier run of the same sweep into `dir` finished (`dcsim sweep --resume`):
/// its folder holds the cell's scenario byte for byte (the last file a cell's run puts in
/// place, together with its other outputs), `fct.csv`, and a `counters.csv` with its counts.
/// Its report from those counts; `None` when the cell must run.
fn finished_cell(cell: &CellPlan, dir: &Path) -> Option<CellReport> {
    let cdir = dir.join("cells").join(&cell.name);
    // Lengths first: a file of another size is read no further (nor one a user replaced with
    // something huge).
    let sized = |name: &str, fits: &dyn Fn(u64) -> bool| {
        let path = cdir.join(name);
        std::fs::metadata(&path).ok().filter(|m| m.is_file() && fits(m.len())).map(|_| path)
    };
    let scenario = sized("scenario.toml", &|n| n == cell.text.len() as u64)?;
    if std::fs::read(scenario).ok()? != cell.text.as_bytes()
        || sized("fct.csv", &|_| true).is_none()
    {
        return None;
    }
    // A cell's counters are a few dozen short rows.
    let counters = std::fs::read_to_string(sized("counters.csv", &|n| n < 1 << 20)?).ok()?;
    let count = |key: &str| {
        counters.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(',')?;
            if k == key {
                v.parse::<u64>().ok()
            } else {
                None
            }
        })
    };
    Some(CellReport {
        done: count("flows_done")?,
        unfinished: count("flows_unfinished")?,
        events: count("events")?,
        wall: None,
    })
}

fn run_cell(plan: &Plan, cell: &CellPlan, dir: &Path) -> Result<CellReport, CliError> {
    let values = || values_text(&plan.axes, &cell.choice);
    let src = Source::with_base_dir(plan.base.clone(), cell.text.clone(), plan.base_dir.clone());
    let valid = scenario::validate(&src, None)
        .map_err(|e| cell_error(&plan.sweep, &cell.name, values(), e))?;
    let dports: Vec<u16> = valid.flows.iter().map(|f| f.dport).collect();
    let all_counters = valid.uses_tcp_or_qdiscs();
    let cdir = dir.join("cells").join(&cell.name);
    create_out_dir(&cdir)?;
    let qct = if valid.cfg.apps.is_empty() {
        None
    } else {
        let w = output::QctWriter::create(&cdir, &valid.cfg.apps, valid.cfg.stop_time)?;
        Some(std::sync::Arc::new(std::sync::Mutex::new(Some(w))))
    };
    let sink: Option<crate::schemes::QuerySink> = qct.clone().map(|w| {
        Box::new(move |q: &[dcsim_core::apps::QueryRecord]| {
            if let Some(w) = w.lock().expect("not poisoned").as_mut() {
                w.write(q);
            }
        }) as crate::schemes::QuerySink
    });
    let run = valid.run_streaming(1, Vec::new(), sink);
    let taken = qct.and_then(|w| w.lock().expect("not poisoned").take());
    let result = match run {
        Ok(r) => r,
        Err(source) => {
            if let Some(w) = taken {
                w.abandon();
            }
            return Err(CliError::Simulation { file: plan.base.clone(), source });
        }
    };
    let mut set = output::Staged::new(&cdir);
    crate::stage_run_outputs(&mut set, &result, &dports, all_counters, taken, None)?;
    // Last: a cell whose scenario is in place is finished (`finished_cell`).
    set.write("scenario.toml", &cell.text)?;
    set.commit()?;
    Ok(CellReport {
        done: result.summary.flows_done as u64,
        unfinished: result.summary.flows_unfinished as u64,
        events: result.summary.events,
        wall: Some(result.wall.as_secs_f64()),
    })
}

/// A progress bar over `len` `unit`s (e.g. `cells`) on stderr, hidden when stderr is not a
/// terminal.
pub(crate) fn progress(len: usize, unit: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(len as u64), target);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {unit}, eta {{eta}}  {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// `dcsim sweep --dry-run`: builds and validates every cell, lists the shard's cells, writes
/// nothing.
///
/// With `resume`, the output folder, the cells an earlier run into it finished are marked
/// `reused`: `dcsim sweep --resume` would not run them again.
///
/// # Errors
/// As [`sweep_command`] before it runs anything.
pub fn dry_run(
    sweep: &Path,
    jobs: usize,
    shard: Shard,
    resume: Option<&Path>,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let plan = plan(sweep, jobs)?;
    let mine: Vec<&CellPlan> = plan.cells.iter().filter(|c| shard.has(c.index)).collect();
    print_cell_warnings(&plan, &mine, notes);
    let _ = writeln!(
        out,
        "sweep {}: {} cells, all valid; {} in shard {shard}:",
        sweep.display(),
        plan.cells.len(),
        mine.len()
    );
    for c in mine {
        let reused = resume.and_then(|dir| finished_cell(c, dir)).is_some();
        let _ = writeln!(
            out,
            "  [{}] {} ({}; buckets {}){}",
            c.index,
            c.name,
            values_text(&plan.axes, &c.choice),
            c.buckets,
            if reused { "; reused" } else { "" }
        );
    }
    Ok(())
}

/// `dcsim sweep`. With `resume`, the cells an earlier run into `dir` finished
/// (`finished_cell`) are not run again: their files stay, and the combined outputs are
/// computed from them as from the others.
///
/// # Errors
/// A bad sweep file, base scenario or cell (before anything runs or is written), or a file
/// that cannot be written.
pub fn sweep_command(
    sweep: &Path,
    jobs: usize,
    shard: Shard,
    resume: bool,
    dir: &Path,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let t0 = Instant::now();
    let plan = plan(sweep, jobs)?;
    output::check_out_dir(dir)?;
    let mine: Vec<&CellPlan> = plan.cells.iter().filter(|c| shard.has(c.index)).collect();
    print_cell_warnings(&plan, &mine, notes);
    let dims: Vec<String> = plan.axes.iter().map(|a| a.values.len().to_string()).collect();
    let keys: Vec<&str> = plan.axes.iter().map(|a| a.key.as_str()).collect();
    let _ = writeln!(
        out,
        "sweep {}: {} cells ({} = {}), base {}",
        sweep.display(),
        plan.cells.len(),
        keys.join(" x "),
        dims.join(" x "),
        plan.base.display()
    );
    let shard_text = if shard == Shard::ALL { String::new() } else { format!(" (shard {shard})") };
    // The cells an earlier run finished, with `--resume`; the others run.
    let reused: Vec<Option<CellReport>> =
        mine.iter().map(|c| if resume { finished_cell(c, dir) } else { None }).collect();
    let to_run: Vec<&CellPlan> =
        mine.iter().zip(&reused).filter(|(_, r)| r.is_none()).map(|(c, _)| *c).collect();
    let jobs = jobs.min(to_run.len()).max(1);
    if resume {
        let _ = writeln!(
            out,
            "running {} of {} cells{shard_text} with {jobs} jobs ({} reused from an earlier run)",
            to_run.len(),
            mine.len(),
            mine.len() - to_run.len()
        );
    } else {
        let _ = writeln!(out, "running {} cells{shard_text} with {jobs} jobs", mine.len());
    }
    create_out_dir(&dir.join("cells"))?;

    let bar = progress(to_run.len(), "cells");
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let ran: Vec<CellReport> = in_pool(jobs, to_run.len(), || {
        to_run
            .par_iter()
            .map(|c| {
                let r = run_cell(&plan, c, dir);
                bar.inc(1);
                bar.set_message(c.name.clone());
                // A line per cell as it finishes, above the bar on a terminal, else on stderr.
                let k = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                let line = match &r {
                    Ok(r) => format!(
                        "finished {k}/{}: [{}] {}: {}",
                        to_run.len(),
                        c.index,
                        c.name,
                        r.text()
                    ),
                    Err(_) => format!("failed {k}/{}: [{}] {}", to_run.len(), c.index, c.name),
                };
                if bar.is_hidden() {
                    eprintln!("{line}");
                } else {
                    bar.println(line);
                }
                r
            })
            .collect::<Result<Vec<_>, _>>()
    })??;
    bar.finish_and_clear();
    let mut ran = ran.into_iter();
    let reports: Vec<CellReport> =
        reused.into_iter().map(|r| r.unwrap_or_else(|| ran.next().expect("a run cell"))).collect();
    for (c, r) in mine.iter().zip(&reports) {
        let _ = writeln!(out, "  [{}] {}: {}", c.index, c.name, r.text());
    }

    let manifest = Manifest::new(&plan, sweep, shard);
    output::write_atomic(dir, MANIFEST, manifest.text())?;
    if shard.count == 1 {
        let data = load_cells(&manifest, &vec![dir.to_path_buf(); manifest.cells.len()])?;
        let mut written = write_combined(dir, &manifest, &data, notes)?;
        if let Some(spec) = &manifest.buffer {
            written.extend(crate::study::write_report(dir, &manifest, spec, notes)?);
        }
        report_written(out, dir, &written);
    } else {
        let _ = writeln!(
            out,
            "wrote {} cells and {} to {}; combine the shards with dcsim merge",
            mine.len(),
            MANIFEST,
            dir.display()
        );
    }
    let _ = writeln!(out, "total wall time {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}

fn report_written(out: &mut dyn Write, dir: &Path, written: &[PathBuf]) {
    let plots = written.iter().filter(|p| p.starts_with(dir.join("plots"))).count();
    let files: Vec<String> = written
        .iter()
        .filter(|p| !p.starts_with(dir.join("plots")))
        .map(|p| p.display().to_string())
        .collect();
    let _ = writeln!(
        out,
        "wrote {} and {plots} plots in {}",
        files.join(", "),
        dir.join("plots").display()
    );
}

// ---------------------------------------------------------------------------------------------
// Combining: summary.csv, cells.csv, plots.
// ---------------------------------------------------------------------------------------------

/// One cell's results, read back from its folder.
struct CellData {
    /// The analyzed flows (after the dport filter).
    rows: Vec<FctRow>,
    /// `counters.csv` as name → value.
    counters: BTreeMap<String, String>,
    /// The folder they came from.
    dir: PathBuf,
}

/// Reads every cell of `m` from `dirs[i]/cells/<name>` (the folder that ran cell `i`).
fn load_cells(m: &Manifest, dirs: &[PathBuf]) -> Result<Vec<CellData>, CliError> {
    m.cells
        .iter()
        .zip(dirs)
        .map(|(c, d)| {
            let dir = d.join("cells").join(&c.name);
            let mut rows = read_fct_csv(&dir.join("fct.csv"))?;
            let listed = rows.len();
            if let Some(p) = m.dport {
                rows.retain(|r| r.dport == Some(p));
            }
            let path = dir.join("counters.csv");
            let text = scenario::read_file(&path)?;
            let mut counters = BTreeMap::new();
            // The file as `dcsim run` writes it: its header, then `name,value` rows of counts,
            // `end_time_ns` in ns with at most three decimals (edited values, `abc` or `-5`,
            // had gone into cells.csv as they were).
            if text.lines().next() != Some("name,value") {
                let message = "expected the header `name,value`".to_string();
                return Err(CliError::Input { file: path, message });
            }
            for (i, l) in text.lines().enumerate().skip(1) {
                if l.is_empty() {
                    continue;
                }
                let bad = |m: String| CliError::Input {
                    file: path.clone(),
                    message: format!("line {}: {m}", i + 1),
                };
                let Some((k, v)) = l.split_once(',') else {
                    return Err(bad(format!("expected `name,value`, found {l:?}")));
                };
                let valid = if k == "end_time_ns" {
                    crate::study::ps_of(v)
                        .is_some_and(|ps| ps <= dcsim_core::units::TIME_LIMIT.as_ps())
                } else {
                    v.parse::<u64>().is_ok()
                };
                if k.is_empty() || !valid {
                    let what = if k == "end_time_ns" {
                        "a time in ns (at most three decimals) within the time limit"
                    } else {
                        "a count"
                    };
                    return Err(bad(format!("`{k}` is {v:?}, not {what}")));
                }
                if counters.insert(k.to_string(), v.to_string()).is_some() {
                    // An edited file: the last row would have won.
                    let message = format!("line {}: `{k}` is given again", i + 1);
                    return Err(CliError::Input { file: path, message });
                }
            }
            for key in ["flows_done", "flows_unfinished", "events", "end_time_ns"] {
                if !counters.contains_key(key) {
                    return Err(CliError::Input { file: path, message: format!("no `{key}` row") });
                }
            }
            // Counts that are not counts (an edited file) gave 0 flows done in cells.csv.
            for key in ["flows_done", "flows_unfinished", "events"] {
                if counters[key].parse::<u64>().is_err() {
                    let message = format!("`{key}` is {:?}, not a count", counters[key]);
                    return Err(CliError::Input { file: path, message });
                }
            }
            // Every flow left unfinished has its row in unfinished.csv (written only when
            // there is one).
            let unfinished_path = dir.join("unfinished.csv");
            let unfinished = if unfinished_path.exists() {
                let t = scenario::read_file(&unfinished_path)?;
                t.lines().skip(1).filter(|l| !l.is_empty()).count()
            } else {
                0
            };
            if counters["flows_unfinished"] != unfinished.to_string() {
                let message = format!(
                    "`flows_unfinished` is {}, but {} lists {unfinished} flows",
                    counters["flows_unfinished"],
                    unfinished_path.display()
                );
                return Err(CliError::Input { file: path, message });
            }
            // Every flow that finished has its row in fct.csv.
            if counters["flows_done"] != listed.to_string() {
                let message = format!(
                    "`flows_done` is {}, but {} lists {listed} flows",
                    counters["flows_done"],
                    dir.join("fct.csv").display()
                );
                return Err(CliError::Input { file: path, message });
            }
            Ok(CellData { rows, counters, dir })
        })
        .collect()
}

fn csv_bytes(rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(r).expect("in-memory CSV");
    }
    w.into_inner().expect("in-memory CSV")
}

const SD: usize = 6;
const NS: usize = 3;

fn fixed(v: f64, d: usize) -> String {
    format!("{v:.d$}")
}

/// The figure key of a cell: the values of the axes that are not lines.
fn figure_of(m: &Manifest, cell: &ManifestCell) -> Vec<usize> {
    m.axes
        .iter()
        .zip(&cell.values)
        .filter(|(a, _)| !m.lines.contains(&a.key))
        .map(|(_, &v)| v)
        .collect()
}

/// Writes `summary.csv`, `cells.csv` and `plots/` into `dir`, computed from `data` (one entry
/// per cell of `m`, in order). Returns the files written.
fn write_combined(
    dir: &Path,
    m: &Manifest,
    data: &[CellData],
    notes: &mut dyn Write,
) -> Result<Vec<PathBuf>, CliError> {
    let axis_cols: Vec<String> = m.axes.iter().map(|a| a.key.clone()).collect();
    let labels = |c: &ManifestCell| -> Vec<String> {
        m.axes.iter().zip(&c.values).map(|(a, &v)| a.labels[v].clone()).collect()
    };
    let mut buckets_of: Vec<Vec<Bucket>> = Vec::with_capacity(data.len());
    let mut summaries: Vec<Summary> = Vec::with_capacity(data.len());
    for (c, d) in m.cells.iter().zip(data) {
        let spec: BucketSpec = c
            .buckets
            .parse()
            .map_err(|e: String| CliError::Input { file: d.dir.clone(), message: e })?;
        buckets_of.push(spec.buckets(&d.rows)?);
        summaries.push(summary(&d.rows));
    }

    // summary.csv
    let mut header: Vec<String> = vec!["index".into(), "cell".into()];
    header.extend(axis_cols.iter().cloned());
    header.extend(
        [
            "kind",
            "label",
            "count",
            "max_size",
            "slowdown_p50",
            "slowdown_p95",
            "slowdown_p99",
            "slowdown_mean",
            "fct_mean_ns",
            "fct_p50_ns",
            "fct_p99_ns",
        ]
        .map(String::from),
    );
    let mut rows = vec![header];
    for ((c, s), b) in m.cells.iter().zip(&summaries).zip(&buckets_of) {
        let mut lead = vec![c.index.to_string(), c.name.clone()];
        lead.extend(labels(c));
        for g in &s.groups {
            let mut r = lead.clone();
            r.extend(["group".into(), g.name.into(), g.count.to_string(), String::new()]);
            match &g.stats {
                Some(st) => r.extend([
                    fixed(st.slowdown.p50, SD),
                    fixed(st.slowdown.p95, SD),
                    fixed(st.slowdown.p99, SD),
                    fixed(st.slowdown_mean, SD),
                    fixed(st.fct_mean_ns, NS),
                    fixed(st.fct_p50_ns, NS),
                    fixed(st.fct_p99_ns, NS),
                ]),
                None => r.extend(std::iter::repeat_n(String::new(), 7)),
            }
            rows.push(r);
        }
        for bk in b {
            let mut r = lead.clone();
            r.extend([
                "bucket".into(),
                bk.label.clone(),
                bk.count.to_string(),
                bk.max_size.map_or_else(String::new, |x| x.to_string()),
            ]);
            match &bk.slowdown {
                Some(p) => r.extend([fixed(p.p50, SD), fixed(p.p95, SD), fixed(p.p99, SD)]),
                None => r.extend(std::iter::repeat_n(String::new(), 3)),
            }
            r.extend(std::iter::repeat_n(String::new(), 4));
            rows.push(r);
        }
    }
    // The three tables go in place together, once all are written.
    let mut set = output::Staged::new(dir);
    set.write("summary.csv", csv_bytes(&rows))?;

    // cells.csv
    let mut header: Vec<String> = vec!["index".into(), "cell".into()];
    header.extend(axis_cols.iter().cloned());
    header.extend(
        ["buckets", "flows", "flows_done", "flows_unfinished", "events", "end_time_ns"]
            .map(String::from),
    );
    let mut rows = vec![header];
    for (c, d) in m.cells.iter().zip(data) {
        let get = |k: &str| d.counters.get(k).cloned().unwrap_or_default();
        // Counts, checked when the cell was loaded (`load_cells`).
        let done: u64 = get("flows_done").parse().unwrap_or(0);
        let unfinished: u64 = get("flows_unfinished").parse().unwrap_or(0);
        let mut r = vec![c.index.to_string(), c.name.clone()];
        r.extend(labels(c));
        r.extend([
            c.buckets.clone(),
            (done + unfinished).to_string(),
            done.to_string(),
            unfinished.to_string(),
            get("events"),
            get("end_time_ns"),
        ]);
        rows.push(r);
    }
    set.write("cells.csv", csv_bytes(&rows))?;

    // qlen_summary.csv: each cell's queue lengths pooled over its monitored ports.
    let backlogs: Vec<Option<PooledBacklog>> = data
        .iter()
        .map(|d| {
            let path = d.dir.join("qlen_hist.csv");
            path.exists().then(|| crate::queues::read_backlog(&path, |_, _| true)).transpose()
        })
        .collect::<Result<_, _>>()?;
    if backlogs.iter().any(Option::is_some) {
        let mut header: Vec<String> = vec!["index".into(), "cell".into()];
        header.extend(axis_cols.iter().cloned());
        header.extend(dcsim_analysis::QLEN_SUMMARY_COLUMNS.map(String::from));
        let mut rows = vec![header];
        for (c, b) in m.cells.iter().zip(&backlogs) {
            if let Some(b) = b {
                let mut r = vec![c.index.to_string(), c.name.clone()];
                r.extend(labels(c));
                r.extend(dcsim_analysis::qlen_summary_row(b));
                rows.push(r);
            }
        }
        set.write("qlen_summary.csv", csv_bytes(&rows))?;
    } else {
        set.remove("qlen_summary.csv");
    }

    // Figures: one per combination of the non-line axes, one line per cell in it; drawn into a
    // hidden folder, then put in place with the tables.
    let mut figures: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for (i, c) in m.cells.iter().enumerate() {
        let key = figure_of(m, c);
        match figures.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => figures.push((key, vec![i])),
        }
    }
    let plots = dir.join("plots");
    create_out_dir(&plots)?;
    let drafts = output::Drafts::new(&plots, "plots")?;
    let mut drawn = Vec::new();
    let other: Vec<&ManifestAxis> = m.axes.iter().filter(|a| !m.lines.contains(&a.key)).collect();
    for (key, members) in &figures {
        let prefix = if other.is_empty() {
            "sweep".to_string()
        } else {
            other.iter().zip(key).map(|(a, &v)| a.parts[v].as_str()).collect::<Vec<_>>().join("_")
        };
        let title = other
            .iter()
            .zip(key)
            .map(|(a, &v)| format!("{} {}", a.key, a.labels[v]))
            .collect::<Vec<_>>()
            .join(", ");
        let names: Vec<String> = members
            .iter()
            .map(|&i| {
                let c = &m.cells[i];
                m.axes
                    .iter()
                    .zip(&c.values)
                    .filter(|(a, _)| m.lines.contains(&a.key))
                    .map(|(a, &v)| a.labels[v].clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let b: Vec<(&str, &[Bucket])> = members
            .iter()
            .zip(&names)
            .map(|(&i, n)| (n.as_str(), buckets_of[i].as_slice()))
            .collect();
        let r: Vec<(&str, &[FctRow])> = members
            .iter()
            .zip(&names)
            .map(|(&i, n)| (n.as_str(), data[i].rows.as_slice()))
            .collect();
        match plot_all(&b, &r, drafts.path(), &prefix, &title) {
            Ok(files) => drawn.extend(files),
            Err(AnalysisError::NothingToPlot(_)) => {
                let _ = writeln!(notes, "note: no completed flows to plot for {prefix}; skipped");
            }
            Err(e) => return Err(e.into()),
        }
        // The queue-length CDF of the cells that monitored queues, one line per cell.
        let q: Vec<(&str, &PooledBacklog)> = members
            .iter()
            .zip(&names)
            .filter_map(|(&i, n)| Some((n.as_str(), backlogs[i].as_ref()?)))
            .collect();
        drawn.extend(crate::queues::plot_qlen_cdf(drafts.path(), &prefix, &title, &q)?);
    }
    drafts.stage(&drawn, &plots, &mut set)?;
    set.commit()
}

// ---------------------------------------------------------------------------------------------
// dcsim merge
// ---------------------------------------------------------------------------------------------

/// A cell folder's files as read for copying: name and contents (`None`: absent).
type CellFiles = Vec<(&'static str, Option<Vec<u8>>)>;

/// The files of a cell folder that a merge copies (those after the first three only when
/// present).
const CELL_FILES: [&str; 11] = [
    "fct.csv",
    "counters.csv",
    "scenario.toml",
    "unfinished.csv",
    "qct.csv",
    "qlen.csv",
    "qlen_hist.csv",
    "qlen_class.csv",
    "qlen_class_hist.csv",
    "qlen_mon.csv",
    "pfc.csv",
];

/// `dcsim merge`: joins the cell folders of shard outputs into `dir` and writes the combined
/// outputs, exactly as an unsharded `dcsim sweep` would.
///
/// # Errors
/// A folder that is not a sweep output, shards of different sweeps, a cell that no folder (or
/// more than one) holds, an unreadable cell file; nothing is written then.
pub fn merge_command(
    shards: &[PathBuf],
    dir: &Path,
    out: &mut dyn Write,
    notes: &mut dyn Write,
) -> Result<(), CliError> {
    let manifests: Vec<Manifest> =
        shards.iter().map(|d| Manifest::read(d)).collect::<Result<_, _>>()?;
    let first = &manifests[0];
    let def = first.definition();
    for (m, d) in manifests.iter().zip(shards).skip(1) {
        if m.definition() != def {
            return Err(CliError::Input {
                file: d.clone(),
                message: format!(
                    "not a shard of the same sweep as {} (the axes, cells or analysis settings \
                     in {MANIFEST} differ)",
                    shards[0].display()
                ),
            });
        }
    }
    let mut holder: Vec<Option<usize>> = vec![None; first.cells.len()];
    for (s, m) in manifests.iter().enumerate() {
        for c in m.cells.iter().filter(|c| c.ran) {
            if let Some(prev) = holder[c.index] {
                return Err(CliError::Input {
                    file: shards[s].clone(),
                    message: format!(
                        "cell {} ({}) is also in {}; give each shard folder once",
                        c.index,
                        c.name,
                        shards[prev].display()
                    ),
                });
            }
            holder[c.index] = Some(s);
        }
    }
    let missing: Vec<String> = first
        .cells
        .iter()
        .filter(|c| holder[c.index].is_none())
        .map(|c| format!("{} ({})", c.index, c.name))
        .collect();
    if !missing.is_empty() {
        let given: Vec<&str> = manifests.iter().map(|m| m.shard.as_str()).collect();
        return Err(CliError::Input {
            file: shards[0].clone(),
            message: format!(
                "no shard folder holds cell{} {}; shards given: {} (run the missing shards, \
                 cell index % N == i)",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                given.join(", ")
            ),
        });
    }
    let dirs: Vec<PathBuf> =
        holder.iter().map(|h| shards[h.expect("every cell is held")].clone()).collect();
    // Read everything before writing anything.
    let data = load_cells(first, &dirs)?;
    let mut files: Vec<CellFiles> = Vec::with_capacity(data.len());
    for d in &data {
        let mut f = Vec::new();
        for name in CELL_FILES {
            let p = d.dir.join(name);
            let bytes = match std::fs::read(&p) {
                Ok(b) => Some(b),
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && !CELL_FILES[..3].contains(&name) =>
                {
                    None
                }
                Err(source) => return Err(CliError::Read { path: p, source }),
            };
            f.push((name, bytes));
        }
        files.push(f);
    }

    for (c, f) in first.cells.iter().zip(&files) {
        let to = dir.join("cells").join(&c.name);
        let from = &data[c.index].dir;
        let same = match (std::fs::canonicalize(&to), std::fs::canonicalize(from)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            continue;
        }
        create_out_dir(&to)?;
        let mut set = output::Staged::new(&to);
        for (name, bytes) in f {
            match bytes {
                Some(b) => set.write(name, b)?,
                None => set.remove(name),
            }
        }
        set.commit()?;
    }
    let mut merged = first.clone();
    merged.shard = Shard::ALL.to_string();
    for c in &mut merged.cells {
        c.ran = true;
    }
    let data = load_cells(&merged, &vec![dir.to_path_buf(); merged.cells.len()])?;
    output::write_atomic(dir, MANIFEST, merged.text())?;
    let mut written = write_combined(dir, &merged, &data, notes)?;
    if let Some(spec) = &merged.buffer {
        written.extend(crate::study::write_report(dir, &merged, spec, notes)?);
    }
    let _ = writeln!(
        out,
        "merged {} shard folder{} ({} cells) into {}",
        shards.len(),
        if shards.len() == 1 { "" } else { "s" },
        merged.cells.len(),
        dir.display()
    );
    report_written(out, dir, &written);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
        assert_eq!(
            "4/4".parse::<Shard>().unwrap_err(),
            "shard index 4 is out of range for 4 shards: shards are numbered 0..=3 (`4/4`)"
        );
        assert!("0/0".parse::<Shard>().unwrap_err().contains("at least 1"));
        assert!("1-4".parse::<Shard>().unwrap_err().contains("expected i/N"));
        let s = Shard { index: 1, count: 3 };
        assert_eq!((0..7).filter(|&c| s.has(c)).collect::<Vec<_>>(), [1, 4]);
        assert_eq!(s.to_string(), "1/3");
    }

    #[test]
    fn paths_are_set_creating_tables() {
        let mut doc: Table = toml::from_str("[cc]\nname = \"hpcc\"\n[flows]\nfile = 3\n").unwrap();
        set_path(&mut doc, &["cc".into(), "eta".into()], Value::Float(0.9)).unwrap();
        set_path(&mut doc, &["nic".into(), "mtu".into()], Value::Integer(9)).unwrap();
        assert_eq!(doc["cc"]["eta"].as_float(), Some(0.9));
        assert_eq!(doc["nic"]["mtu"].as_integer(), Some(9));
        let e = set_path(&mut doc, &["flows".into(), "file".into(), "x".into()], Value::Integer(1))
            .unwrap_err();
        assert_eq!(e, "cannot set `flows.file.x`: `flows.file` is a integer in the base scenario, not a table");
        assert_eq!(sanitize("a b/c=d.e+f-g"), "a-b-c-d.e+f-g");
    }

    #[test]
    fn arrays_of_tables_are_indexed() {
        let mut doc: Table = toml::from_str(
            "[[rpc]]
name = \"a\"
[[rpc]]
name = \"b\"
tcp = { x = 1 }
",
        )
        .unwrap();
        let p = |s: &str| s.split('.').map(String::from).collect::<Vec<_>>();
        set_path(&mut doc, &p("rpc.1.group"), Value::String("g".into())).unwrap();
        set_path(&mut doc, &p("rpc.1.tcp.x"), Value::Integer(2)).unwrap();
        let rpc = doc["rpc"].as_array().unwrap();
        assert_eq!(rpc[1]["group"].as_str(), Some("g"));
        assert_eq!(rpc[1]["tcp"]["x"].as_integer(), Some(2));
        assert!(rpc[0].get("group").is_none());
        let e = set_path(&mut doc, &p("rpc.2.group"), Value::Integer(1)).unwrap_err();
        assert!(e.contains("array of 2"), "{e}");
        let e = set_path(&mut doc, &p("rpc.0"), Value::Integer(1)).unwrap_err();
        assert!(e.contains("give a key after the index"), "{e}");
        let e = set_path(&mut doc, &p("queue.0.kind"), Value::Integer(1)).unwrap_err();
        assert!(e.contains("no `queue` array"), "{e}");
    }
}
