//! Property test: the files a scenario or a command reads besides the scenario itself — a
//! topology file and a flow file in the reference's format, a flow-size CDF, a reference ns-3
//! config for `import-ns3`, and the FCT files that `analyze` and `compare-ns3` read — mutated
//! token by token from valid examples (numbers swapped for edge values and wrong kinds, tokens
//! and lines deleted, repeated, inserted, the text cut short), always give `Ok` or an error that
//! names the file, within bounded time and memory; the accepted scenarios validate the same way
//! and, being small, run for a few microseconds of simulated time without panicking.
//!
//! `proptest_inputs.rs` does the same for the scenario's own fields.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dcsim_cli::scenario::{validate, Source};
use dcsim_cli::CliError;
use dcsim_core::units::Time;
use proptest::prelude::*;

mod common;

use common::{peak_memory_mib, proptest_config, reset_peak_memory, NS3_CONFIG};

/// How long one case may take (a debug build on a loaded machine).
const CASE_BOUND: Duration = Duration::from_secs(30);
/// The peak resident memory the whole test may reach, MiB.
const MEMORY_BOUND_MIB: f64 = 3072.0;

/// Two leaves of two hosts each under one spine (hosts 0–3, leaves 4–5, spine 6).
const TOPOLOGY: &str = "7 3 6
4 5 6
0 4 100Gbps 1us 0
1 4 100Gbps 1us 0
2 5 100Gbps 1us 0
3 5 100Gbps 1us 0
4 6 400Gbps 1us 0
5 6 400Gbps 1us 0
";

/// Four flows across the spine, starting in the first microseconds.
const FLOWS: &str = "4
0 2 3 100 50000 0.000001
1 3 3 100 3000 0.000002
2 0 3 100 1000000 0.000003
3 1 3 200 20 0.000004
";

/// A flow-size CDF in the reference's format (`size percent` per line).
const CDF: &str = "0 0
1000 10
10000 40
100000 80
1000000 95
3000000 100
";

/// `dcsim run`'s `fct.csv` (what `analyze` and `compare-ns3` read).
const FCT_CSV: &str = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,dport,\
ref_ideal_fct_ns
0,0,2,50000,1000,9000,6000,1.5,100,6100
1,1,3,3000,2000,3500,3000,1.1666,100,3050
2,2,0,1000000,3000,95000,85000,1.1176,100,85100
";

/// The reference's `fct.txt` (`sip dip sport dport size start_ns fct_ns standalone_ns`).
const REFERENCE_FCT: &str = "0b000001 0b000201 10000 100 50000 2000000000 9120 6100
0b000101 0b000301 10001 100 3000 2000001000 3510 3050
0b000201 0b000001 10002 100 1000000 2000002000 95500 85100
";

/// Tokens that replace a token of the example: numbers at and beyond every width's edges,
/// non-finite and negative values, other units, and things that are not numbers at all.
const ODD: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "6",
    "7",
    "8",
    "-1",
    "-0",
    "0.5",
    "1e-300",
    "1e308",
    "1e400",
    "nan",
    "inf",
    "-inf",
    "255",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "0x10",
    "+5",
    "1,5",
    "abc",
    "\u{0661}",
    "100Gbps",
    "0Gbps",
    "1bps",
    "100Mb/s",
    "400000000Gbps",
    "1us",
    "0ns",
    "-1us",
    "1e30s",
    "1000000000000000000ms",
    "0.0000001",
    "2.0",
    "4611686.1",
    "#",
    "\"\"",
];

/// One edit of a text.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace token `i` (counted over the whole text) with `ODD[j]`.
    Replace(usize, usize),
    /// Delete token `i`.
    Delete(usize),
    /// Repeat token `i` after itself.
    Repeat(usize),
    /// Delete line `i`.
    DeleteLine(usize),
    /// Repeat line `i` after itself.
    RepeatLine(usize),
    /// Insert after line `i` a line of the tokens `ODD[j]`.
    InsertLine(usize, Vec<usize>),
    /// Keep only the first `i` bytes (at a character boundary).
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let index = 0usize..10_000;
    prop_oneof![
        8 => (index.clone(), 0..ODD.len()).prop_map(|(i, j)| Edit::Replace(i, j)),
        2 => index.clone().prop_map(Edit::Delete),
        1 => index.clone().prop_map(Edit::Repeat),
        2 => index.clone().prop_map(Edit::DeleteLine),
        2 => index.clone().prop_map(Edit::RepeatLine),
        1 => (index.clone(), prop::collection::vec(0..ODD.len(), 0..8))
            .prop_map(|(i, t)| Edit::InsertLine(i, t)),
        1 => index.prop_map(Edit::Truncate),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 0..5)
}

/// `text` with `edits` applied in turn. Lines are rebuilt from their tokens (one space
/// between them); indices wrap around the text's tokens or lines.
fn mutate(text: &str, edits: &[Edit]) -> String {
    let split = |text: &str| -> Vec<Vec<String>> {
        text.lines().map(|l| l.split_whitespace().map(str::to_string).collect()).collect()
    };
    let join = |lines: &[Vec<String>]| lines.iter().map(|l| l.join(" ")).collect::<Vec<_>>();
    let mut lines = split(text);
    for e in edits {
        let tokens: usize = lines.iter().map(Vec::len).sum();
        // The line and position of the token `i` wraps to.
        let locate = |lines: &[Vec<String>], i: usize| -> Option<(usize, usize)> {
            let mut i = i.checked_rem(tokens)?;
            for (l, line) in lines.iter().enumerate() {
                if i < line.len() {
                    return Some((l, i));
                }
                i -= line.len();
            }
            None
        };
        match e {
            Edit::Replace(i, j) => {
                if let Some((l, k)) = locate(&lines, *i) {
                    lines[l][k] = ODD[*j].to_string();
                }
            }
            Edit::Delete(i) => {
                if let Some((l, k)) = locate(&lines, *i) {
                    lines[l].remove(k);
                }
            }
            Edit::Repeat(i) => {
                if let Some((l, k)) = locate(&lines, *i) {
                    let t = lines[l][k].clone();
                    lines[l].insert(k, t);
                }
            }
            Edit::DeleteLine(i) if !lines.is_empty() => {
                let n = lines.len();
                lines.remove(i % n);
            }
            Edit::RepeatLine(i) if !lines.is_empty() => {
                let n = lines.len();
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::InsertLine(i, t) => {
                let at = (i % (lines.len() + 1)).min(lines.len());
                lines.insert(at, t.iter().map(|&j| ODD[j].to_string()).collect());
            }
            Edit::Truncate(i) => {
                let mut s = join(&lines).join("\n");
                let mut cut = i % (s.len() + 1);
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                s.truncate(cut);
                lines = split(&s);
            }
            Edit::DeleteLine(_) | Edit::RepeatLine(_) => {}
        }
    }
    join(&lines).join("\n") + "\n"
}

/// Whether `e` is one line that starts with one of `files` (the file it blames).
fn assert_names_a_file(e: &CliError, files: &[PathBuf], inputs: &str) {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "multi-line error: {msg}\n{inputs}");
    assert!(
        files.iter().any(|f| msg.starts_with(&f.display().to_string())),
        "an error that names none of the input files: {msg}\n{inputs}"
    );
    // A line or a field, where the error has one, is a real position (1-based).
    match e {
        CliError::Field { at, .. } | CliError::Toml { at, .. } => {
            assert!(at.line >= 1 && at.col >= 1, "{msg}")
        }
        CliError::Line { line, .. } => assert!(*line >= 1, "{msg}"),
        _ => {}
    }
}

/// Validates the scenario at `dir/s.toml` (text `toml`); an error must name one of `files`;
/// an accepted scenario runs for at most `run_for` after its first flow starts.
fn validate_and_run(dir: &Path, toml: String, files: &[PathBuf], inputs: &str) {
    reset_peak_memory();
    let t0 = Instant::now();
    let path = dir.join("s.toml");
    let src = Source::new(path, toml);
    let result = validate(&src, None);
    match result {
        Err(e) => assert_names_a_file(&e, files, inputs),
        Ok(mut v) => {
            for w in &v.warnings {
                let w = w.to_string();
                assert!(
                    files.iter().any(|f| w.starts_with(&f.display().to_string())),
                    "a warning that names none of the input files: {w}\n{inputs}"
                );
            }
            if v.net.node_count() <= 64 && v.flows.len() <= 2000 {
                let first = v.flows.iter().map(|f| f.start).min().unwrap_or(Time::ZERO);
                let end = Time(first.0.saturating_add(Time::from_ns(20_000).0));
                v.cfg.stop_time = v.cfg.stop_time.min(end);
                let r = v.run(1, Vec::new());
                assert!(r.is_ok(), "{:?}\n{inputs}", r.err());
            }
        }
    }
    let took = t0.elapsed();
    assert!(took < CASE_BOUND, "the case took {took:?}:\n{inputs}");
    if let Some(m) = peak_memory_mib() {
        assert!(m < MEMORY_BOUND_MIB, "peak memory {m:.0} MiB:\n{inputs}");
    }
}

proptest! {
    // 300 cases per property by default; `PROPTEST_CASES=N` for a longer search.
    #![proptest_config(proptest_config(300, 300))]

    /// A topology file and a flow file, each mutated, under a scenario that names them.
    #[test]
    fn topology_and_flow_files(
        topo_edits in edits(),
        flow_edits in edits(),
        cc in prop::sample::select(vec!["hpcc", "dcqcn", "timely", "dctcp", "none"]),
    ) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let (topo, flows) = (mutate(TOPOLOGY, &topo_edits), mutate(FLOWS, &flow_edits));
        std::fs::write(dir.path().join("topo.txt"), &topo).expect("write");
        std::fs::write(dir.path().join("flow.txt"), &flows).expect("write");
        let toml = format!(
            "[simulation]\nstop_time = \"1s\"\n[topology]\nkind = \"file\"\npath = \"topo.txt\"\n\
             [flows]\nfile = \"flow.txt\"\n[cc]\nname = \"{cc}\"\n"
        );
        let files: Vec<PathBuf> =
            ["s.toml", "topo.txt", "flow.txt"].iter().map(|f| dir.path().join(f)).collect();
        let inputs = format!("--- topo.txt\n{topo}--- flow.txt\n{flows}--- cc {cc}");
        validate_and_run(dir.path(), toml, &files, &inputs);
    }

    /// A flow-size CDF file, mutated, as a workload's distribution.
    #[test]
    fn cdf_files(cdf_edits in edits(), interpolate in prop::sample::select(vec!["linear", "step"])) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let cdf = mutate(CDF, &cdf_edits);
        std::fs::write(dir.path().join("w.txt"), &cdf).expect("write");
        let toml = format!(
            "[simulation]\nstop_time = \"30us\"\n[topology]\nkind = \"star\"\nsenders = 3\n\
             [flows]\nmax_flows = 2000\nworkload = {{ cdf = \"w.txt\", load = 0.3, \
             duration = \"20us\", interpolate = \"{interpolate}\" }}\n"
        );
        let files: Vec<PathBuf> = ["s.toml", "w.txt"].iter().map(|f| dir.path().join(f)).collect();
        validate_and_run(dir.path(), toml, &files, &format!("--- w.txt\n{cdf}"));
    }

    /// A reference config, mutated, through `import-ns3`'s conversion; an imported scenario
    /// validates and runs.
    #[test]
    fn ns3_configs(config_edits in edits()) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        // The shared reference config (over `topo.txt` and `flow.txt`), stopping 30 us in.
        let config = NS3_CONFIG.replace("SIMULATOR_STOP_TIME 2.01", "SIMULATOR_STOP_TIME 0.00003");
        let config = mutate(&config, &config_edits);
        let (config_path, out) = (dir.path().join("config.txt"), dir.path().join("s.toml"));
        std::fs::write(&config_path, &config).expect("write");
        std::fs::write(dir.path().join("topo.txt"), TOPOLOGY).expect("write");
        std::fs::write(dir.path().join("flow.txt"), FLOWS).expect("write");
        let files: Vec<PathBuf> = ["config.txt", "s.toml", "topo.txt", "flow.txt"]
            .iter()
            .map(|f| dir.path().join(f))
            .collect();
        let inputs = format!("--- config.txt\n{config}");
        let t0 = Instant::now();
        match dcsim_cli::ns3import::convert(&config_path, &config, &out) {
            Err(e) => assert_names_a_file(&e, &files, &inputs),
            Ok(imported) => validate_and_run(dir.path(), imported.toml, &files, &inputs),
        }
        prop_assert!(t0.elapsed() < CASE_BOUND, "the case took {:?}:\n{inputs}", t0.elapsed());
    }

    /// `fct.csv` through `dcsim analyze` (`--buckets` drawn), and a reference `fct.txt` with
    /// it through `dcsim compare-ns3`: each exits 0 or 2, never with a panic.
    #[test]
    fn fct_files(
        ours_edits in edits(),
        reference_edits in edits(),
        buckets in prop::sample::select(vec!["quantile:10", "quantile:1", "quantile:100",
            "sizes:websearch", "sizes:10K,100K,1M"]),
    ) {
        let ours = mutate(&FCT_CSV.replace(',', " "), &ours_edits).replace(' ', ",");
        let reference = mutate(REFERENCE_FCT, &reference_edits);
        let dir = tempfile::tempdir().expect("a temporary folder");
        let (fct, ref_fct) = (dir.path().join("fct.csv"), dir.path().join("fct.txt"));
        std::fs::write(&fct, &ours).expect("write");
        std::fs::write(&ref_fct, &reference).expect("write");
        let inputs = format!("--- fct.csv\n{ours}--- fct.txt\n{reference}");
        let out = dir.path().join("out");
        for args in [
            vec!["analyze".as_ref(), fct.as_os_str(), "--buckets".as_ref(), buckets.as_ref(),
                 "--out".as_ref(), out.as_os_str()],
            vec!["compare-ns3".as_ref(), ref_fct.as_os_str(), fct.as_os_str()],
        ] {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_dcsim"))
                .args(&args)
                .output()
                .expect("dcsim runs");
            let stderr = String::from_utf8_lossy(&o.stderr);
            prop_assert!(
                matches!(o.status.code(), Some(0 | 2)) && !stderr.contains("panicked"),
                "{args:?}: {:?}\n{stderr}\n{inputs}", o.status
            );
            if o.status.code() == Some(2) {
                prop_assert!(stderr.contains("fct."), "an error that names no file: {stderr}\n{inputs}");
            }
        }
    }
}
