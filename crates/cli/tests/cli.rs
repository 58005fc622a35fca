//! End-to-end tests of the `dcsim` binary: one test per class of bad input (exit status 2, an
//! error that names the file, line, column and field, and no output written), plus runs that
//! succeed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// A small valid scenario: 2 leaves x 1 spine x 4 hosts (hosts 0..7, leaves 8 and 9, spine
/// 10), two flows. Line numbers matter: tests point at them.
const BASE: &str = r#"[simulation]
stop_time = "10ms"
seed = 7

[topology]
kind = "leaf-spine"
leaves = 2
spines = 1
hosts_per_leaf = 4

[[flows.list]]
src = 0
dst = 5
size = "100KB"

[[flows.list]]
src = 1
dst = 6
size = 20000
start = "5us"
"#;

struct Case {
    dir: TempDir,
}

impl Case {
    fn new() -> Case {
        Case { dir: tempfile::tempdir().expect("tempdir") }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        fs::write(&p, text).expect("write test file");
        p
    }

    /// BASE with each `(from, to)` replaced once (each `from` must occur) and `extra` appended.
    fn scenario(&self, edits: &[(&str, &str)], extra: &str) -> PathBuf {
        let mut text = BASE.to_string();
        for (from, to) in edits {
            assert!(text.contains(from), "BASE has no `{from}`");
            text = text.replacen(from, to, 1);
        }
        text.push_str(extra);
        self.write("scenario.toml", &text)
    }

    fn out(&self) -> PathBuf {
        self.path("out")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_dcsim"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("run dcsim")
    }

    /// `dcsim run scenario.toml --out out`, expected to fail; returns stderr.
    fn run_fails(&self) -> String {
        let o = self.run(&["run", "scenario.toml", "--out", "out"]);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "stderr: {stderr}");
        assert!(o.stdout.is_empty(), "stdout: {}", String::from_utf8_lossy(&o.stdout));
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(!self.out().exists(), "the output folder was created despite the error");
        assert!(!self.out().join("fct.csv").exists());
        stderr
    }
}

/// Asserts that `stderr` contains each of `parts`.
fn assert_has(stderr: &str, parts: &[&str]) {
    for p in parts {
        assert!(stderr.contains(p), "expected `{p}` in:\n{stderr}");
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input, one class per test.
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_toml() {
    let c = Case::new();
    c.scenario(&[("[topology]", "[topology")], "");
    let e = c.run_fails();
    assert_has(&e, &["error: scenario.toml:5:10: ", "invalid table header"]);
}

#[test]
fn unknown_key() {
    let c = Case::new();
    c.scenario(&[("seed = 7", "sed = 7")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:3:1: field `simulation.sed`: unknown field `sed`", "`seed`"]);
}

#[test]
fn unknown_key_in_a_flow() {
    let c = Case::new();
    c.scenario(&[("start = \"5us\"", "begin = \"5us\"")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:20:1: field `flows.list[1].begin`: unknown field `begin`"]);
}

#[test]
fn wrong_type() {
    let c = Case::new();
    c.scenario(&[], "\n[nic]\nrate_bound = \"yes\"\n");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:23:14: field `nic.rate_bound`: invalid type: string"]);
}

#[test]
fn unknown_cc_name_lists_the_valid_ones() {
    let c = Case::new();
    c.scenario(&[], "\n[cc]\nname = \"cubic\"\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:23:8: field `cc.name`: unknown scheme \"cubic\"", "(valid schemes: none)"],
    );
}

#[test]
fn unknown_cc_parameter() {
    let c = Case::new();
    c.scenario(&[], "\n[cc]\nname = \"none\"\nalpha = 0.5\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &[
            "scenario.toml:24:9: field `cc.alpha`: unknown parameter `alpha` for scheme \"none\"",
            "(its parameters: none)",
        ],
    );
}

#[test]
fn missing_ecn_entry_for_a_link_speed() {
    let c = Case::new();
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\nhost_rate = \"25Gbps\"")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &[
            "scenario.toml:10:13: field `topology.host_rate`: switch ports run at 25Gbps",
            "no entry for it",
            "[[switch.ecn_map]]",
        ],
    );
}

#[test]
fn missing_ecn_entry_in_an_explicit_map() {
    let c = Case::new();
    c.scenario(
        &[],
        "\n[[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = \"400KB\"\nkmax = \"1600KB\"\npmax = 0.2\n",
    );
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:22:1: field `switch.ecn_map`: no entry for 400Gbps"]);
}

#[test]
fn flow_to_a_host_that_does_not_exist() {
    let c = Case::new();
    c.scenario(&[("dst = 6", "dst = 99")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:18:7: field `flows.list[1].dst`: host 99 does not exist (hosts are 0..7)"],
    );
}

#[test]
fn flow_to_a_switch() {
    let c = Case::new();
    c.scenario(&[("src = 0", "src = 10")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:12:7: field `flows.list[0].src`: node 10 is a switch"]);
}

#[test]
fn zero_size() {
    let c = Case::new();
    c.scenario(&[("size = 20000", "size = 0")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:19:8: field `flows.list[1].size`: must be at least 1 byte"]);
}

#[test]
fn negative_size() {
    let c = Case::new();
    c.scenario(&[("size = 20000", "size = -5")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:19:8: field `flows.list[1].size`: -5 is negative"]);

    c.scenario(&[("size = \"100KB\"", "size = \"-100KB\"")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:14:8: field `flows.list[0].size`: `-100KB` is negative"]);
}

#[test]
fn zero_rate() {
    let c = Case::new();
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\nfabric_rate = \"0Gbps\"")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:10:15: field `topology.fabric_rate`: rate must be greater than zero"],
    );
}

#[test]
fn zero_count() {
    let c = Case::new();
    c.scenario(&[("spines = 1", "spines = 0")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:8:10: field `topology.spines`: 0 must be at least 1"]);
}

#[test]
fn unitless_time() {
    let c = Case::new();
    c.scenario(&[("start = \"5us\"", "start = 5")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:20:9: field `flows.list[1].start`: 5 needs a unit, e.g. \"1us\""],
    );

    c.scenario(&[("stop_time = \"10ms\"", "stop_time = \"10\"")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:2:13: field `simulation.stop_time`: `10` needs a unit, e.g. \"1us\""],
    );
}

#[test]
fn negative_time() {
    let c = Case::new();
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\ndelay = \"-1us\"")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:10:9: field `topology.delay`: `-1us` is negative"]);
}

#[test]
fn sub_picosecond_time() {
    let c = Case::new();
    c.scenario(&[("start = \"5us\"", "start = \"0.5ps\"")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:20:9: field `flows.list[1].start`: `0.5ps` is not a whole number of picoseconds"],
    );
}

#[test]
fn parameter_of_another_topology_kind() {
    let c = Case::new();
    c.scenario(&[("kind = \"leaf-spine\"", "kind = \"star\"")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:7:10: field `topology.leaves`: `leaves` is not a parameter of topology kind \"star\""],
    );
}

#[test]
fn missing_topology_section() {
    let c = Case::new();
    c.write("scenario.toml", "[[flows.list]]\nsrc = 0\ndst = 1\nsize = 1\n");
    let e = c.run_fails();
    assert_has(&e, &["error: scenario.toml: missing required section [topology]"]);
}

#[test]
fn unreadable_scenario_file() {
    let c = Case::new();
    let e = c.run_fails();
    assert_has(&e, &["error: cannot read scenario.toml: ", "os error 2"]);
}

#[test]
fn unreadable_topology_file() {
    let c = Case::new();
    c.write(
        "scenario.toml",
        "[topology]\nkind = \"file\"\npath = \"topo/missing.txt\"\n\n[flows]\nfile = \"flow.txt\"\n",
    );
    let e = c.run_fails();
    assert_has(
        &e,
        &[
            "scenario.toml:3:8: field `topology.path`: cannot read ",
            "topo/missing.txt: ",
            "os error 2",
        ],
    );
}

#[test]
fn topology_file_with_a_bad_line() {
    let c = Case::new();
    c.write("topo.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbp 1us 0\n");
    c.write(
        "scenario.toml",
        "[topology]\nkind = \"file\"\npath = \"topo.txt\"\n\n[flows]\nfile = \"flow.txt\"\n",
    );
    let e = c.run_fails();
    assert_has(&e, &["topo.txt: line 4: bad rate '100Gbp'"]);
}

#[test]
fn unreadable_flow_file() {
    let c = Case::new();
    c.write(
        "scenario.toml",
        "[topology]\nkind = \"star\"\nsenders = 3\n\n[flows]\nfile = \"flows/none.txt\"\n",
    );
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:6:8: field `flows.file`: cannot read ", "flows/none.txt: ", "os error 2"],
    );
}

#[test]
fn flow_file_with_a_bad_line() {
    let c = Case::new();
    c.write(
        "scenario.toml",
        "[topology]\nkind = \"star\"\nsenders = 3\n\n[flows]\nfile = \"flow.txt\"\n",
    );
    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 3 3 100 lots 2.0\n");
    let e = c.run_fails();
    assert_has(&e, &["flow.txt:3: size `lots` is not a non-negative integer"]);

    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 3 3 100 0 2.0\n");
    let e = c.run_fails();
    assert_has(&e, &["flow.txt:3: size is 0"]);

    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 9 3 100 10 2.0\n");
    let e = c.run_fails();
    assert_has(&e, &["flow.txt:3: dst: host 9 does not exist (hosts are 0..3)"]);

    c.write("flow.txt", "3\n0 3 3 100 1000 2.0\n1 3 3 100 10 2.0\n");
    let e = c.run_fails();
    assert_has(&e, &["flow.txt:3: line 1 declares 3 flows, but the file has 2 flow lines"]);

    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 3 3 100 10 1.0\n");
    let e = c.run_fails();
    assert_has(&e, &["flow.txt:3: start time 1.0 s is earlier than the previous flow's (line 2)"]);
}

#[test]
fn flows_from_both_a_file_and_a_list() {
    let c = Case::new();
    c.scenario(&[("[[flows.list]]", "[flows]\nfile = \"flow.txt\"\n\n[[flows.list]]")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:12:8: field `flows.file`: give either `file` or [[flows.list]]"],
    );
}

#[test]
fn zero_threads_is_a_usage_error() {
    let c = Case::new();
    c.scenario(&[], "");
    let o = c.run(&["run", "scenario.toml", "--out", "out", "--threads", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--threads"));
    assert!(!c.out().exists());
}

#[test]
fn validate_reports_errors_with_status_2() {
    let c = Case::new();
    c.scenario(&[("dst = 6", "dst = 99")], "");
    let o = c.run(&["validate", "scenario.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["scenario.toml:18:7: field `flows.list[1].dst`"],
    );
}

// ---------------------------------------------------------------------------------------------
// Runs that succeed.
// ---------------------------------------------------------------------------------------------

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn run_ok(c: &Case, args: &[&str]) -> String {
    let o = c.run(args);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    stdout
}

const FCT_HEADER: &str =
    "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns";

#[test]
fn leaf_spine_run_writes_one_row_per_flow_and_is_deterministic() {
    let c = Case::new();
    let mut flows = String::new();
    // A 6-to-1 incast to host 7 plus one flow the other way.
    for s in 0..6 {
        flows.push_str(&format!(
            "\n[[flows.list]]\nsrc = {s}\ndst = 7\nsize = \"200KB\"\nstart = \"{}ns\"\ndport = 200\n",
            s * 100
        ));
    }
    c.scenario(&[], &flows);
    let stdout = run_ok(&c, &["run", "scenario.toml", "--out", "a", "--seed", "3"]);
    assert_has(&stdout, &["8 flows", "flows: 8 done, 0 unfinished", "PFC pauses", "ECN marks"]);

    let fct = read(&c.path("a/fct.csv"));
    let mut lines = fct.lines();
    assert_eq!(lines.next(), Some(FCT_HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 9);
        assert_eq!(r[0], i.to_string(), "rows sorted by flow id");
        let fct: f64 = r[5].parse().expect("fct_ns");
        let ideal: f64 = r[6].parse().expect("ideal_fct_ns");
        assert!(fct >= ideal, "{r:?}");
        assert_eq!(r[7].split('.').nth(1).map(str::len), Some(6), "slowdown has 6 decimals");
    }
    // Flow 0 (0 -> 5, 100 KB at t = 0) starts before the incast and crosses the fabric.
    assert_eq!(&rows[0][..5], ["0", "0", "5", "100000", "0"]);
    assert_eq!(&rows[1][..5], ["1", "1", "6", "20000", "5000"]);
    assert!(!c.path("a/unfinished.csv").exists());
    let counters = read(&c.path("a/counters.csv"));
    assert!(counters.starts_with("name,value\nevents,"), "{counters}");
    assert_has(&counters, &["\nflows_done,8\n", "\nflows_unfinished,0\n", "\nend_time_ns,"]);
    let names: Vec<String> = fs::read_dir(c.path("a"))
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");

    // Same seed, different thread count: byte-identical results.
    run_ok(&c, &["run", "scenario.toml", "--out", "b", "--seed", "3", "--threads", "2"]);
    assert_eq!(read(&c.path("b/fct.csv")), fct);
    assert_eq!(read(&c.path("b/counters.csv")), counters);
}

#[test]
fn unfinished_flows_are_listed_and_a_stale_list_is_removed() {
    let c = Case::new();
    c.scenario(&[("stop_time = \"10ms\"", "stop_time = \"3us\"")], "");
    run_ok(&c, &["run", "scenario.toml", "--out", "out"]);
    assert_eq!(read(&c.path("out/fct.csv")), format!("{FCT_HEADER}\n"));
    let un = read(&c.path("out/unfinished.csv"));
    assert_eq!(
        un.lines().next(),
        Some("flow_id,src,dst,size_bytes,start_ns,ideal_fct_ns,ref_ideal_fct_ns")
    );
    assert_eq!(un.lines().count(), 3);

    c.scenario(&[], "");
    run_ok(&c, &["run", "scenario.toml", "--out", "out"]);
    assert_eq!(read(&c.path("out/fct.csv")).lines().count(), 3);
    assert!(!c.path("out/unfinished.csv").exists());
}

#[test]
fn default_output_folder_is_out_slash_stem() {
    let c = Case::new();
    c.scenario(&[], "");
    run_ok(&c, &["run", "scenario.toml"]);
    assert!(c.path("out/scenario/fct.csv").exists());
}

#[test]
fn flow_file_and_topology_file_relative_to_the_scenario() {
    let c = Case::new();
    fs::create_dir(c.path("sc")).expect("mkdir");
    // Host 0 and 1 on switch 2.
    c.write("sc/topo.txt", "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 0.001ms 0\n");
    c.write("sc/flow.txt", "2 \n0 1 3 100 5000 2.000001234\n1 0 3 100 3000 2.000001234\n");
    c.write(
        "sc/s.toml",
        "[topology]\nkind = \"file\"\npath = \"topo.txt\"\n[flows]\nfile = \"flow.txt\"\n",
    );
    run_ok(&c, &["run", "sc/s.toml", "--out", "o"]);
    let fct = read(&c.path("o/fct.csv"));
    let rows: Vec<&str> = fct.lines().skip(1).collect();
    assert_eq!(rows.len(), 2);
    // Start times truncated to the nanosecond as the reference does.
    assert!(rows[0].starts_with("0,0,1,5000,2000001233,"), "{fct}");
    assert!(rows[1].starts_with("1,1,0,3000,2000001233,"), "{fct}");
}

#[test]
fn validate_describes_the_scenario() {
    let c = Case::new();
    c.scenario(&[], "");
    let out = run_ok(&c, &["validate", "scenario.toml"]);
    assert_has(
        &out,
        &[
            "scenario.toml: valid.",
            "11 nodes (8 hosts, 3 switches), 10 links",
            "2 flows",
            "Scheme none",
            "Max base RTT",
            "max BDP",
        ],
    );
    assert!(!c.path("out").exists());
}

#[test]
fn example_scenario_validates() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/leafspine-incast.toml");
    let c = Case::new();
    let out = run_ok(&c, &["validate", example.to_str().expect("utf-8 path")]);
    assert_has(&out, &["valid.", "70 nodes (64 hosts, 6 switches)", "32 flows", "Scheme none"]);
}
