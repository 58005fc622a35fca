//! End-to-end tests of the `dcsim` binary: one test per class of bad input (exit status 2, an
//! error that names the file, line, column and field, and no output written), plus runs that
//! succeed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

mod common;

use common::NS3_CONFIG;

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

/// An unknown table is named once (it was `topologyx.topologyx`); a document that does not
/// parse (a number out of range, a duplicate key) is located by line and column without a
/// made-up field (its first character, `1` or `s`, was given as the field).
#[test]
fn unparsable_documents_and_unknown_tables_name_no_wrong_field() {
    let c = Case::new();
    c.scenario(&[], "\n[topologyx]\nkind = \"star\"\n");
    let e = c.run_fails();
    assert_has(&e, &["field `topologyx`: unknown field `topologyx`"]);
    assert!(!e.contains("topologyx.topologyx"), "{e}");
    c.scenario(&[("seed = 7", "seed = 18446744073709551616")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:3:8: "]);
    assert!(!e.contains("field `1`"), "{e}");
    c.scenario(&[("seed = 7", "seed = 7\nseed = 8")], "");
    let e = c.run_fails();
    assert_has(&e, &["duplicate key `seed`"]);
    assert!(!e.contains("field `s`"), "{e}");
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
        &[
            "scenario.toml:23:8: field `cc.name`: unknown scheme \"cubic\"",
            "(valid schemes: none, hpcc, hpcc-pint, dcqcn, dcqcn-w, timely, timely-w, dctcp)",
        ],
    );
}

#[test]
fn hpcc_pint_is_a_scheme() {
    let c = Case::new();
    c.scenario(&[], "\n[cc]\nname = \"hpcc-pint\"\nlog_base = 1.01\nprob = 0.0625\n");
    let out = run_ok(&c, &["run", "scenario.toml", "--out", "out"]);
    assert_has(&out, &["scheme hpcc-pint", "0 unfinished"]);
    assert!(c.out().join("fct.csv").exists());
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
    c.scenario(&[], "\n[cc]\nname = \"hpcc\"\nalpha = 0.5\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &[
            "scenario.toml:24:9: field `cc.alpha`: unknown parameter `alpha` for scheme \"hpcc\"",
            "(its parameters: `eta`, `max_stage`, `rate_ai`, `min_rate`, `fast_react`, \
             `multi_rate`, `sample_feedback`)",
        ],
    );
}

#[test]
fn invalid_cc_parameter_value() {
    let c = Case::new();
    c.scenario(&[], "\n[cc]\nname = \"dcqcn\"\newma_gain = 0\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:24:13: field `cc.ewma_gain`: ewma_gain must be in (0, 1], got 0"],
    );
}

#[test]
fn default_ecn_map_covers_every_link_speed() {
    let c = Case::new();
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\nhost_rate = \"25Gbps\"")], "");
    let out = run_ok(&c, &["run", "scenario.toml", "--out", "out"]);
    assert_has(&out, &["flows: 2 done, 0 unfinished"]);
}

#[test]
fn missing_ecn_entry_in_an_explicit_map() {
    let c = Case::new();
    c.scenario(
        &[],
        "\n[[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = \"400KB\"\nkmax = \"1600KB\"\npmax = 0.2\n",
    );
    let e = c.run_fails();
    assert_has(
        &e,
        &[
            "scenario.toml:22:1: field `switch.ecn_map`: no entry for 400Gbps, a switch port rate \
             of the topology (the default of `topology.fabric_rate`) (entries: 100Gbps)",
            "rate = \"400Gbps\"",
        ],
    );
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

/// Above 100 Tbps a minimum-size frame would take under a few picoseconds (at 90 000 Tbps
/// none at all, and a NIC sent a 1000 GB flow in zero simulated time until memory ran out).
#[test]
fn rate_above_the_largest_supported() {
    let c = Case::new();
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\nfabric_rate = \"90000Tbps\"")], "");
    let e = c.run_fails();
    assert_has(
        &e,
        &["scenario.toml:10:15: field `topology.fabric_rate`: `90000Tbps` is above the largest \
           rate supported, 100 Tbps"],
    );
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\nfabric_rate = \"100Tbps\"")], "");
    run_ok(&c, &["validate", "scenario.toml"]);
    // A scheme's rates too: an additive increase beyond it wrapped a DCTCP flow's rate to 0
    // (the flow never finished; an overflow panic in debug builds).
    for (scheme, key) in [("dctcp", "rate_ai"), ("dcqcn", "rate_hai"), ("hpcc", "min_rate")] {
        c.scenario(&[], &format!("\n[cc]\nname = \"{scheme}\"\n{key} = \"101Tbps\"\n"));
        assert_has(
            &c.run_fails(),
            &[&format!(
                "field `cc.{key}`: `101Tbps` is above the largest rate supported, 100 Tbps"
            )],
        );
    }
}

#[test]
fn zero_count() {
    let c = Case::new();
    c.scenario(&[("spines = 1", "spines = 0")], "");
    let e = c.run_fails();
    assert_has(&e, &["scenario.toml:8:10: field `topology.spines`: 0 must be at least 1"]);
    // A fat tree's k is told what it must be, 0 too (it said "must be at least 1").
    for k in ["0", "1", "5"] {
        c.write(
            "ft.toml",
            &format!(
                "[simulation]\nstop_time = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = {k}\n\
                 [[flows.list]]\nsrc = 0\ndst = 1\nsize = 1000\n"
            ),
        );
        let o = c.run(&["validate", "ft.toml"]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_has(
            &e,
            &[&format!("ft.toml:5:5: field `topology.k`: {k} must be even and at least 2")],
        );
    }
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
fn alibaba_2pod_impossible_parameters_are_located() {
    let ali = |params: &str| {
        let c = Case::new();
        c.scenario(
            &[(
                "kind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4",
                &format!("kind = \"alibaba-2pod\"\n{params}"),
            )],
            "",
        );
        c.run_fails()
    };
    assert_has(
        &ali("pods = 0"),
        &["scenario.toml:7:8: field `topology.pods`: 0 must be at least 1"],
    );
    assert_has(
        &ali("servers = 6\npods = 4"),
        &["scenario.toml:7:11: field `topology.servers`: 6 servers cannot be split evenly over 4 \
           pods (servers must be a multiple of pods)"],
    );
    // Not written: the default of 8 servers, reported at the kind.
    assert_has(
        &ali("pods = 3"),
        &["scenario.toml:6:8: field `topology.servers`: 8 servers cannot be split evenly over 3"],
    );
    for n in ["0", "3"] {
        assert_has(
            &ali(&format!("nics_per_server = {n}")),
            &[&format!(
                "scenario.toml:7:19: field `topology.nics_per_server`: {n} is outside 1..=2"
            )],
        );
    }
    assert_has(
        &ali("tors_per_pod = 1"),
        &[
            "scenario.toml:7:16: field `topology.tors_per_pod`: 2 NICs per server need at least 2 \
           ToRs per pod (each NIC on its own ToR), found tors_per_pod = 1; use nics_per_server = 1",
        ],
    );
    assert_has(
        &ali("tors_per_pod = 1\nnics_per_server = 2"),
        &["scenario.toml:8:19: field `topology.nics_per_server`: 2 NICs per server need"],
    );
    assert_has(
        &ali("hosts_per_tor = 4"),
        &["scenario.toml:7:17: field `topology.hosts_per_tor`: `hosts_per_tor` is not a parameter \
           of topology kind \"alibaba-2pod\" (its parameters: pods, tors_per_pod, aggs_per_pod, \
           cores, servers, nics_per_server, host_rate, fabric_rate, delay)"],
    );
    // nics_per_server belongs to alibaba-2pod only.
    let c = Case::new();
    c.scenario(&[("hosts_per_leaf = 4", "hosts_per_leaf = 4\nnics_per_server = 1")], "");
    assert_has(
        &c.run_fails(),
        &["field `topology.nics_per_server`: `nics_per_server` is not a parameter of topology \
           kind \"leaf-spine\""],
    );
}

#[test]
fn buffer_admission_keys_are_checked_where_written() {
    let switch = |keys: &str| {
        let c = Case::new();
        c.scenario(&[], &format!("\n[switch]\nbuffer = \"1MiB\"\n{keys}"));
        c.run_fails()
    };
    for a in ["0", "-0.5", "1000", "1e9"] {
        let shown = a.parse::<f64>().unwrap();
        assert_has(
            &switch(&format!("pfc_alpha = {a}")),
            &[&format!(
                "scenario.toml:24:13: field `switch.pfc_alpha`: {shown} is outside (0, 1000) \
                 exclusive (a fraction of the free buffer: 0.11 means 11%)"
            )],
        );
    }
    assert_has(
        &switch("lossy_admission = \"egres\""),
        &["scenario.toml:24:19: field `switch.lossy_admission`: unknown admission mode \"egres\" \
           (valid: ingress, egress)"],
    );
    assert_has(
        &switch("ecmp_seed = \"nodes\""),
        &["scenario.toml:24:13: field `switch.ecmp_seed`: unknown ECMP seeding \"nodes\" \
           (valid: run, node)"],
    );
    assert_has(
        &switch("egress_cap = \"256KiB\""),
        &["scenario.toml:24:14: field `switch.egress_cap`: `egress_cap` applies only with \
           lossy_admission = \"egress\""],
    );
    assert_has(
        &switch("lossy_admission = \"ingress\"\negress_alpha = 2"),
        &["scenario.toml:25:16: field `switch.egress_alpha`: `egress_alpha` applies only with"],
    );
    assert_has(
        &switch("lossy_admission = \"egress\"\negress_cap = \"2MiB\""),
        &["scenario.toml:25:14: field `switch.egress_cap`: 2097152B is larger than the switch \
           buffer (1048576B)"],
    );
    assert_has(
        &switch("lossy_admission = \"egress\"\negress_cap = 0"),
        &["scenario.toml:25:14: field `switch.egress_cap`: must be at least 1 byte"],
    );
    assert_has(
        &switch("lossy_admission = \"egress\"\negress_alpha = 0"),
        &["scenario.toml:25:16: field `switch.egress_alpha`: 0 is outside (0, 1000) exclusive"],
    );
    // Valid values load, and `validate` says what they do.
    let c = Case::new();
    c.scenario(
        &[],
        "\n[switch]\nbuffer = \"1MiB\"\npfc_alpha = 0.11\nlossy_admission = \"egress\"\n\
         egress_alpha = 2\necmp_seed = \"node\"\n",
    );
    let out = run_ok(&c, &["validate", "scenario.toml"]);
    assert_has(
        &out,
        &[
            "Ingress dynamic threshold: 0.11 x free buffer.",
            "Lossy classes: egress admission, queue limit min(1048576B, 2 x free buffer).",
            "ECMP: each switch hashes with its node id as the seed, as the reference does.",
        ],
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
    assert_has(&e, &["error: topo.txt:4:5: field `link[1].rate`: bad rate '100Gbp' (expected"]);
    // Graph errors point at the link's field too; whole-topology ones name only the file.
    c.write("topo.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 7 100Gbps 1us 0\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &["error: topo.txt:4:3: field `link[1].b`: link names node 7, but there are only 3 nodes"],
    );
    c.write("topo.txt", "4 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n");
    let e = c.run_fails();
    assert_has(&e, &["error: topo.txt: host 3 has no link (disconnected host)"]);
    // Rates are bounded as in a scenario (at 90 000 Tbps a frame took 0 ps).
    c.write("topo.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 90000000Gbps 1us 0\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &["error: topo.txt:4:5: field `link[1].rate`: rate '90000000Gbps' is above the largest \
           rate supported, 100 Tbps"],
    );
    c.write("topo.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100000Gbps 1us 0\n");
    c.write("flow.txt", "1\n0 1 3 100 1000 2.0\n");
    run_ok(&c, &["validate", "scenario.toml"]);
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
    assert_has(
        &e,
        &["error: flow.txt:3:11: field `flow[1].size`: size `lots` is not a non-negative integer"],
    );

    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 3 3 100 0 2.0\n");
    let e = c.run_fails();
    assert_has(&e, &["error: flow.txt:3:11: field `flow[1].size`: size is 0"]);

    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 9 3 100 10 2.0\n");
    let e = c.run_fails();
    assert_has(&e, &["flow.txt:3:3: field `flow[1].dst`: host 9 does not exist (hosts are 0..3)"]);

    c.write("flow.txt", "3\n0 3 3 100 1000 2.0\n1 3 3 100 10 2.0\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &["flow.txt:3:1: field `count`: line 1 declares 3 flows, but the file has 2 flow lines"],
    );

    c.write("flow.txt", "2\n0 3 3 100 1000 2.0\n1 3 3 100 10 1.0\n");
    let e = c.run_fails();
    assert_has(
        &e,
        &["flow.txt:3:14: field `flow[1].start`: start time 1.0 s is earlier than the previous \
           flow's (line 2)"],
    );
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
    "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns,dport";

/// `--window-trace` writes windows.csv (every shard once per window, their events adding up to
/// the run's) and barriers.csv (every thread once per window, leaving after it arrived); the
/// run's outputs are those of the same run untraced; a later run without the flag removes the
/// stale trace.
#[test]
fn a_window_trace_has_every_shard_once_per_window() {
    let c = Case::new();
    let mut flows = String::new();
    for s in 0..4 {
        flows.push_str(&format!(
            "\n[[flows.list]]\nsrc = {s}\ndst = {}\nsize = \"300KB\"\nstart = \"{}ns\"\n",
            7 - s,
            s * 300
        ));
    }
    c.scenario(&[], &flows);
    let args = ["run", "scenario.toml", "--quiet", "--threads", "2", "--shards", "3"];
    let stdout = run_ok(&c, &[&args[..], &["--out", "t", "--window-trace"]].concat());
    assert_has(&stdout, &["windows.csv", "barriers.csv"]);
    run_ok(&c, &[&args[..], &["--out", "p"]].concat());
    for f in ["fct.csv", "counters.csv"] {
        assert_eq!(read(&c.path(&format!("t/{f}"))), read(&c.path(&format!("p/{f}"))), "{f}");
    }
    assert!(!c.path("p/windows.csv").exists());

    let windows = read(&c.path("t/windows.csv"));
    let mut lines = windows.lines();
    assert_eq!(
        lines.next(),
        Some("window_end_ns,shard,thread,start_ns,took_ns,events,crossings_in")
    );
    let mut by_window: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    // When each thread's last shard of each window ended: before it reached the barrier.
    let mut done: std::collections::HashMap<(String, u32), u64> = Default::default();
    let (mut events, mut crossings, mut busy) = (0u64, 0u64, 0u64);
    for l in lines {
        let r: Vec<&str> = l.split(',').collect();
        assert_eq!(r.len(), 7, "{l}");
        by_window.entry(r[0].to_string()).or_default().push(r[1].parse().expect("shard"));
        let thread: u32 = r[2].parse().expect("thread");
        assert!(thread < 2, "{l}");
        let start: u64 = r[3].parse().expect("start_ns");
        let took: u64 = r[4].parse().expect("took_ns");
        busy += took;
        let end = done.entry((r[0].to_string(), thread)).or_default();
        *end = (*end).max(start + took);
        events += r[5].parse::<u64>().expect("events");
        crossings += r[6].parse::<u64>().expect("crossings_in");
    }
    assert!(by_window.len() > 10, "{} windows", by_window.len());
    for (end, shards) in &by_window {
        assert_eq!(shards, &[0, 1, 2], "window ending at {end} ns");
    }
    let counters = read(&c.path("t/counters.csv"));
    let total = counters.lines().find_map(|l| l.strip_prefix("events,")).expect("events row");
    assert_eq!(events.to_string(), total, "the windows' events add up to the run's");
    assert!(crossings > 0, "the incast crosses shards");
    assert!(busy > 0, "the shards' windows are timed");

    let barriers = read(&c.path("t/barriers.csv"));
    let mut lines = barriers.lines();
    assert_eq!(lines.next(), Some("window_end_ns,thread,arrived_ns,left_ns"));
    let mut waits: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for l in lines {
        let r: Vec<&str> = l.split(',').collect();
        let (arrived, left): (u64, u64) = (r[2].parse().expect("n"), r[3].parse().expect("n"));
        assert!(arrived <= left, "{l}");
        let thread: u32 = r[1].parse().expect("thread");
        let last = done.get(&(r[0].to_string(), thread)).copied().unwrap_or(0);
        assert!(last <= arrived, "{l}: its last shard ended at {last} ns");
        waits.entry(r[0].to_string()).or_default().push(thread);
    }
    assert_eq!(waits.keys().collect::<Vec<_>>(), by_window.keys().collect::<Vec<_>>());
    assert!(waits.values().all(|t| t == &[0, 1]));

    run_ok(&c, &[&args[..], &["--out", "t"]].concat());
    assert!(!c.path("t/windows.csv").exists() && !c.path("t/barriers.csv").exists());

    // One thread over the three shards: the same windows, all on thread 0, no barriers.
    let one = ["run", "scenario.toml", "--quiet", "--threads", "1", "--shards", "3"];
    run_ok(&c, &[&one[..], &["--out", "o", "--window-trace"]].concat());
    let rows: Vec<String> =
        read(&c.path("o/windows.csv")).lines().skip(1).map(String::from).collect();
    assert_eq!(rows.len(), 3 * by_window.len());
    assert!(rows.iter().all(|l| l.split(',').nth(2) == Some("0")));
    let sum: u64 =
        rows.iter().map(|l| l.split(',').nth(5).expect("events").parse::<u64>().expect("n")).sum();
    assert_eq!(sum.to_string(), total);
    assert_eq!(read(&c.path("o/barriers.csv")), "window_end_ns,thread,arrived_ns,left_ns\n");
}

/// The window trace is written as the run goes, a step of simulated time at a time: over a run
/// of several steps the rows stay in window order, every window's shards together, and the
/// windows' events still add up to the run's.
#[test]
fn a_window_trace_streams_in_window_order_across_steps() {
    let c = Case::new();
    let mut flows = String::new();
    for (s, start) in [(0, "100us"), (1, "1500us"), (2, "3200us"), (3, "4700us")] {
        flows.push_str(&format!(
            "\n[[flows.list]]\nsrc = {s}\ndst = {}\nsize = \"200KB\"\nstart = \"{start}\"\n",
            7 - s
        ));
    }
    c.scenario(&[], &flows);
    let args = ["run", "scenario.toml", "--quiet", "--threads", "2", "--shards", "3"];
    run_ok(&c, &[&args[..], &["--out", "t", "--window-trace"]].concat());
    let ends = |file: &str| -> Vec<f64> {
        read(&c.path(file))
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().expect("end").parse::<f64>().expect("ns"))
            .collect()
    };
    let windows = ends("t/windows.csv");
    assert!(windows.windows(2).all(|p| p[0] <= p[1]), "windows.csv in window order");
    assert!(windows.chunks(3).all(|w| w.iter().all(|&e| e == w[0])), "3 shards per window");
    assert!(windows.last().expect("rows") - windows[0] > 4.0e6, "the trace spans 4 steps");
    let barriers = ends("t/barriers.csv");
    assert!(barriers.windows(2).all(|p| p[0] <= p[1]), "barriers.csv in window order");
    assert_eq!(barriers.len(), 2 * windows.len() / 3);
    let events: u64 = read(&c.path("t/windows.csv"))
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(5).expect("events").parse::<u64>().expect("n"))
        .sum();
    let counters = read(&c.path("t/counters.csv"));
    let total = counters.lines().find_map(|l| l.strip_prefix("events,")).expect("events row");
    assert_eq!(events.to_string(), total);
}

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
        assert_eq!(r.len(), 10);
        assert_eq!(r[9], if i < 2 { "100" } else { "200" }, "dport");
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

    // Any shard count and partitioner, on one thread or two: the same results, and the run
    // summary tells how the shards shared the work.
    for (i, args) in [
        &["--shards", "2"][..],
        &["--shards", "2", "--threads", "2", "--partition", "rack"],
        &["--threads", "2", "--partition", "round-robin", "--rebalance", "0"],
        // Shards dealt to the threads by their measured time before every window.
        &["--threads", "2", "--shards", "5", "--partition", "round-robin", "--rebalance", "1"],
        // Threads bound to CPUs of their own (and shards dealt every 16 windows, the default).
        &["--threads", "2", "--partition", "round-robin", "--pin-threads"],
    ]
    .into_iter()
    .enumerate()
    {
        let out = format!("p{i}");
        let mut all = vec!["run", "scenario.toml", "--out", &out, "--seed", "3"];
        all.extend_from_slice(args);
        let summary = run_ok(&c, &all);
        assert_eq!(read(&c.path(&format!("{out}/fct.csv"))), fct, "{args:?}");
        assert_eq!(read(&c.path(&format!("{out}/counters.csv"))), counters, "{args:?}");
        let line = summary.lines().find(|l| l.starts_with("parallel: ")).expect("a parallel line");
        let (shards, by) = match i {
            // `cut` is the default partitioner.
            0 => ("2", "cut on 1 thread,"),
            1 => ("2", "rack on 2 threads,"),
            // Two shards per thread by default.
            2 => ("4", "round-robin on 2 threads,"),
            3 => ("5", "round-robin on 2 threads,"),
            _ => ("4", "round-robin on 2 threads,"),
        };
        assert!(line.starts_with(&format!("parallel: {shards} shards by {by}")), "{line}");
        assert!(line.contains("busiest shard of each window: "), "{line}");
        assert_eq!(line.contains("barrier waits (s) by thread: "), i > 0, "{line}");
        // With more shards than threads, the bound of each thread keeping its own shards.
        assert_eq!(
            line.contains(
                "2 threads each running only its own shards (shard i on thread i mod 2), at most "
            ),
            i >= 2,
            "{line}"
        );
        // Deals are counted only where they happened (how many depends on the wall clock).
        assert!(i >= 3 || !line.contains("dealt to threads by time"), "{line}");
        // Threads pinned only when asked, each to a CPU of its own; where the process's
        // affinity allows two CPUs (Linux), they are.
        let pinned = line.split("; threads pinned to CPUs ").nth(1).map(|rest| {
            let list = rest.split(';').next().unwrap_or("");
            list.split(',').map(|c| c.parse::<usize>().expect("a CPU")).collect::<Vec<_>>()
        });
        match pinned {
            Some(cpus) => {
                assert!(i == 4 && cpus.len() == 2 && cpus[0] != cpus[1], "{line}");
            }
            None => assert!(i != 4 || common::cpus::allowed_cpus().is_none_or(|n| n < 2), "{line}"),
        }
    }
    let plain = run_ok(&c, &["run", "scenario.toml", "--out", "b", "--seed", "3"]);
    assert!(!plain.contains("parallel: "), "one shard: {plain}");
    // An idle run on several shards: every shard at the mean (it said -100.0%).
    c.write("idle.toml", "[simulation]\nstop_time = \"1ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\n[flows]\nlist = []\n");
    let idle = run_ok(&c, &["run", "idle.toml", "--out", "idle", "--shards", "3"]);
    assert!(idle.contains("busiest shard overall: +0.0% on the mean"), "{idle}");
}

#[test]
fn an_unknown_partitioner_zero_shards_or_a_huge_rebalance_is_a_usage_error() {
    let c = Case::new();
    c.scenario(&[], "");
    let o = c.run(&["run", "scenario.toml", "--out", "out", "--partition", "metis"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown partitioner `metis`: expected one of load, cut, rack, round-robin"),
        "{err}"
    );
    let o = c.run(&["run", "scenario.toml", "--out", "out", "--shards", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--shards"));
    let o = c.run(&["run", "scenario.toml", "--out", "out", "--rebalance", "2000000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rebalance"));
    assert!(!c.out().exists());
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
        Some(
            "flow_id,src,dst,size_bytes,start_ns,ideal_fct_ns,ref_ideal_fct_ns,dport,reason,\
             gave_up_ns"
        )
    );
    assert_eq!(un.lines().count(), 3);
    assert!(un.lines().skip(1).all(|l| l.ends_with(",running,")), "{un}");

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
fn alibaba_2pod_example_validates_and_runs() {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/alibaba-2pod.toml");
    let c = Case::new();
    let out = run_ok(&c, &["validate", example.to_str().expect("utf-8 path")]);
    assert_has(
        &out,
        &[
            "valid.",
            "alibaba-2pod (2 pods of 2 ToRs and 2 aggregation switches, 2 cores, 8 dual-homed \
             servers (16 host NICs), 25Gbps host links, 100Gbps fabric, 1 µs per link)",
            "26 nodes (16 hosts, 10 switches), 32 links",
            "Workload alistorage2019 (step CDF) (mean flow 67050 B)",
            // Across pods: 2 x 6 us + 2 x 320 ns + 4 x 80 ns (1000-byte payload).
            "Max base RTT 12.96 µs",
        ],
    );
    // The example's defaults are the testbed's: the bare kind builds the same network.
    c.scenario(
        &[(
            "kind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4",
            "kind = \"alibaba-2pod\"",
        )],
        "",
    );
    let out = run_ok(&c, &["validate", "scenario.toml"]);
    assert_has(&out, &["26 nodes (16 hosts, 10 switches), 32 links", "8 dual-homed servers"]);
    c.scenario(
        &[(
            "kind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4",
            "kind = \"alibaba-2pod\"\nnics_per_server = 1",
        )],
        "",
    );
    let out = run_ok(&c, &["run", "scenario.toml", "--out", "out"]);
    assert_has(&out, &["flows: 2 done, 0 unfinished"]);
}

#[test]
fn example_scenario_validates() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/leafspine-incast.toml");
    let c = Case::new();
    let out = run_ok(&c, &["validate", example.to_str().expect("utf-8 path")]);
    assert_has(&out, &["valid.", "70 nodes (64 hosts, 6 switches)", "32 flows", "Scheme none"]);
}

// ---------------------------------------------------------------------------------------------
// Schemes.
// ---------------------------------------------------------------------------------------------

const SCHEMES: [&str; 7] = ["none", "hpcc", "dcqcn", "dcqcn-w", "timely", "timely-w", "dctcp"];

/// Every scheme runs an incast (which marks ECN and queues) to completion.
#[test]
fn every_scheme_runs() {
    let mut flows = String::new();
    for s in 0..4 {
        flows.push_str(&format!(
            "\n[[flows.list]]\nsrc = {s}\ndst = 7\nsize = \"300KB\"\ndport = 200\n"
        ));
    }
    // Low ECN thresholds so that the incast is marked under every scheme.
    let ecn = "\n[[switch.ecn_map]]\nrate = \"100Gbps\"\nkmin = \"5KB\"\nkmax = \"50KB\"\npmax = 0.2\n\
               \n[[switch.ecn_map]]\nrate = \"400Gbps\"\nkmin = \"20KB\"\nkmax = \"200KB\"\npmax = 0.2\n";
    for name in SCHEMES {
        let c = Case::new();
        c.scenario(&[], &format!("{flows}\n[cc]\nname = \"{name}\"\n{ecn}"));
        let out = run_ok(&c, &["run", "scenario.toml", "--out", "out"]);
        assert_has(&out, &[&format!("scheme {name}\n"), "flows: 6 done, 0 unfinished"]);
        let fct = read(&c.path("out/fct.csv"));
        assert_eq!(fct.lines().count(), 1 + 6, "{name}: {fct}");
        let marks = out.lines().find(|l| l.contains("ECN marks: ")).expect("summary line");
        assert!(!marks.ends_with("ECN marks: 0"), "{name}: no ECN mark in an incast: {marks}");
    }
}

// ---------------------------------------------------------------------------------------------
// import-ns3.
// ---------------------------------------------------------------------------------------------

fn calibration_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/calibration/small-ws30");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipped: {} not found", d.display());
        None
    }
}

/// An imported reference config seeds each switch's ECMP hash with its node id, as the
/// reference does, so that its flows take the reference's paths: the first 30 TIMELY flows of the
/// calibration (they finish within 0.84 ms, before the traffic piles up) end at the very
/// nanosecond the reference's do. With the hash seeded from the run's seed the fifth one
/// already takes another path and ends 6 ns later.
#[test]
fn imported_configs_take_the_references_ecmp_paths() {
    let Some(dir) = calibration_dir() else { return };
    let c = Case::new();
    let toml = import_timely(&c, &dir);
    assert_has(&toml, &["ecmp_seed = \"node\""]);
    // The reference's FCT by (src, dst, size, start): sip and dip are 11.0.x.1 in hex.
    let reference: std::collections::HashMap<(u32, u32, u64, u64), u64> =
        read(&dir.join("fct-timely.txt"))
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let host = |h: &str| (u32::from_str_radix(h, 16).unwrap() >> 8) & 0xffff;
                let n = |i: usize| f[i].parse::<u64>().unwrap();
                ((host(f[0]), host(f[1]), n(4), n(5)), n(6))
            })
            .collect();
    let matching = |seeding: &str| -> usize {
        let text = toml.replacen("stop_time = \"4s\"", "stop_time = \"2.00084s\"", 1).replacen(
            "ecmp_seed = \"node\"",
            &format!("ecmp_seed = \"{seeding}\""),
            1,
        );
        c.write("short.toml", &text);
        let o = c.run(&["run", "short.toml", "--out", seeding, "--quiet"]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let fct = read(&c.path(&format!("{seeding}/fct.csv")));
        let mut rows: Vec<(u64, Vec<&str>)> = fct
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .map(|f| (f[4].parse().unwrap(), f))
            .collect();
        rows.sort_by_key(|r| r.0);
        rows.iter()
            .take(30)
            .filter(|(start, f)| {
                let key =
                    (f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap(), *start);
                f[5].parse::<u64>().ok() == Some(reference[&key])
            })
            .count()
    };
    assert_eq!(matching("node"), 30, "the first 30 flows end when the reference's do");
    assert!(matching("run") < 30, "with the run's seed some take other paths");
}

/// `dcsim import-ns3` of the calibration's TIMELY config into `timely.toml`; its text.
fn import_timely(c: &Case, dir: &std::path::Path) -> String {
    let config = dir.join("config-timely.txt");
    let o = c.run(&["import-ns3", config.to_str().unwrap(), "--out", "timely.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    read(&c.path("timely.toml"))
}

/// An imported config starts each flow after the events already queued for its nanosecond at
/// its host, as the reference does: TIMELY's flow 42 (14 -> 22, 20,576 B) starts as a frame of
/// flow 39 from the same host ends; the reference sends 39's next frame first and 42 ends
/// 11,735 ns later, as the import does, where flows started first end at 11,610 ns.
#[test]
fn imported_configs_start_flows_in_the_references_order() {
    let Some(dir) = calibration_dir() else { return };
    let c = Case::new();
    let toml = import_timely(&c, &dir);
    assert_has(&toml, &["flow_start = \"after-queued\""]);
    let o = c.run(&["validate", "timely.toml"]);
    assert_has(
        &String::from_utf8_lossy(&o.stdout),
        &["Flow starts: after the events already queued for their instant at their host"],
    );
    let fct_42 = |order: &str| -> String {
        let text = toml.replacen("stop_time = \"4s\"", "stop_time = \"2.0004s\"", 1).replacen(
            "flow_start = \"after-queued\"",
            &format!("flow_start = \"{order}\""),
            1,
        );
        c.write("short.toml", &text);
        let o = c.run(&["run", "short.toml", "--out", order, "--quiet"]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let fct = read(&c.path(&format!("{order}/fct.csv")));
        let row = fct.lines().find(|l| l.starts_with("42,")).expect("flow 42").to_string();
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!((f[1], f[2], f[3], f[4]), ("14", "22", "20576", "2000286640"), "{row}");
        f[5].to_string()
    };
    assert_eq!(fct_42("after-queued"), "11735", "the reference's FCT");
    assert_eq!(fct_42("first"), "11610");
    c.write(
        "bad.toml",
        &toml.replacen("flow_start = \"after-queued\"", "flow_start = \"last\"", 1),
    );
    let o = c.run(&["validate", "bad.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["field `simulation.flow_start`: unknown flow start order \"last\" (valid: first, after-queued)"],
    );
}

#[test]
fn import_ns3_converts_every_calibration_config() {
    let Some(dir) = calibration_dir() else { return };
    let mut configs: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("calibration dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            n.starts_with("config-") && n.ends_with(".txt")
        })
        .collect();
    configs.sort();
    assert_eq!(configs.len(), 7, "{configs:?}");
    let c = Case::new();
    for config in &configs {
        let scheme = config.file_stem().unwrap().to_string_lossy().replace("config-", "");
        let out = format!("scenarios/{scheme}.toml");
        let o = c.run(&["import-ns3", config.to_str().unwrap(), "--out", &out]);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(0), "{scheme}: {stderr}");
        assert_has(&stdout, &[&format!("(scheme {scheme}, 1952 flows,")]);
        assert_has(
            &stderr,
            &[
                ":8: TRACE_FILE trace.txt: tracing is not modelled; ignored",
                ":2: USE_DYNAMIC_PFC_THRESHOLD 1: ",
                ":38: INT_MULTI ",
                ":48: LINK_DOWN 0 0 0: time 0 means no link goes down",
                ":57: QLEN_MON_START 9000000000: after the stop time: the reference's monitor \
                 takes no sample; ignored",
            ],
        );
        assert!(!stderr.contains("error"), "{scheme}: {stderr}");
        let toml = read(&c.path(&out));
        assert_has(
            &toml,
            &[
                &format!("name = \"{scheme}\""),
                "buffer = \"32MiB\"",
                "stop_time = \"4s\"",
                // The reference's truncated serialization, and its PFC log as pfc.csv.
                "serialization = \"ns3\"",
                "pfc_log = true",
            ],
        );
        // The scenario validates from another working directory.
        let o = Command::new(env!("CARGO_BIN_EXE_dcsim"))
            .args(["validate", c.path(&out).to_str().unwrap()])
            .current_dir(&dir)
            .output()
            .expect("run dcsim");
        let stderr = String::from_utf8_lossy(&o.stderr);
        {
            assert_eq!(o.status.code(), Some(0), "{scheme}: {stderr}");
            let v = String::from_utf8_lossy(&o.stdout);
            assert_has(
                &v,
                &[
                    "valid.",
                    "70 nodes (64 hosts, 6 switches)",
                    "1952 flows",
                    &format!("Scheme {scheme}."),
                ],
            );
        }
    }
    // Per-scheme values and notes.
    let dcqcn = read(&c.path("scenarios/dcqcn.toml"));
    assert_has(
        &dcqcn,
        &[
            "rp_timer = \"300us\"",
            "rate_ai = \"20Mbps\"",
            "rate_hai = \"200Mbps\"",
            "window = \"none\"",
            "ack_high_prio = true",
            "kmin = 400000",
            "kmax = 6400000",
        ],
    );
    let dctcp = read(&c.path("scenarios/dctcp.toml"));
    assert_has(
        &dctcp,
        &["ewma_gain = 0.0625", "rate_ai = \"615Mbps\"", "kmin = 300000", "pmax = 1.0"],
    );
    assert_has(&dctcp, &["#   line 22: RATE_AI 10Mb/s: used only by"]);
    let timely_w = read(&c.path("scenarios/timely-w.toml"));
    assert_has(&timely_w, &["window = \"variable\"", "ack_high_prio = true", "t_high = \"500us\""]);
}

/// Writes `ref/config.txt` (NS3_CONFIG with `edits`), `ref/topo.txt` (three hosts on one
/// switch) and `ref/flow.txt` (two flows to host 2).
fn ns3_case(edits: &[(&str, &str)]) -> Case {
    let c = Case::new();
    fs::create_dir(c.path("ref")).expect("mkdir");
    let mut text = NS3_CONFIG.to_string();
    for (from, to) in edits {
        assert!(text.contains(from), "NS3_CONFIG has no `{from}`");
        text = text.replacen(from, to, 1);
    }
    c.write("ref/config.txt", &text);
    c.write(
        "ref/topo.txt",
        "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n",
    );
    c.write("ref/flow.txt", "2\n0 2 3 100 50000 2.0\n1 2 3 100 50000 2.0\n");
    c
}

#[test]
fn import_ns3_output_runs_from_anywhere() {
    let c = ns3_case(&[]);
    let o = c.run(&["import-ns3", "ref/config.txt", "--out", "sc/deep/s.toml"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_has(
        &stderr,
        &[
            "note: ref/config.txt:15: RP_TIMER 300.7: truncated to 300 µs as the reference does",
            "note: ref/config.txt:6: TRACE_FILE trace.txt: tracing is not modelled; ignored",
            "note: ref/config.txt:28: VAR_WIN 0: HAS_WIN is 0: no window; ignored",
            "note: ref/config.txt:29: FAST_REACT 0: used only by hpcc (this config's scheme is dcqcn); ignored",
        ],
    );
    let toml = read(&c.path("sc/deep/s.toml"));
    assert_has(
        &toml,
        &[
            "path = \"../../ref/topo.txt\"",
            "file = \"../../ref/flow.txt\"",
            "rp_timer = \"300us\"              # RP_TIMER 300.7 (line 15), truncated to 300 µs",
            "stop_time = \"2009999999ns\"", // Seconds(2.01) truncated, as in the reference
            "error_rate_per_link = 0.0",
            "name = \"dcqcn\"                  # CC_MODE 1 (line 11); HAS_WIN 0 (line 26)",
            "qlen_mon = { start = \"2000000000ns\", end = \"3000000000ns\", interval = \"100ns\", \
             bin = \"1000B\" } # QLEN_MON_FILE qlen.txt (line 45)",
        ],
    );
    // Run it from inside its own folder.
    let o = Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(["run", "s.toml", "--out", "out"])
        .current_dir(c.path("sc/deep"))
        .output()
        .expect("run dcsim");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_has(
        &String::from_utf8_lossy(&o.stdout),
        &["flows: 2 done, 0 unfinished", "scheme dcqcn"],
    );
    assert_eq!(read(&c.path("sc/deep/out/fct.csv")).lines().count(), 3);
    // The queue monitor: every 100 ns from 2 s to the stop time (2.009999999 s), per port.
    let mon = read(&c.path("sc/deep/out/qlen_mon.csv"));
    assert_eq!(mon.lines().next(), Some("switch,port,lower_bytes,upper_bytes,samples"));
    let mut per_port = std::collections::BTreeMap::<(String, String), u64>::new();
    for l in mon.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        *per_port.entry((f[0].into(), f[1].into())).or_default() += f[4].parse::<u64>().unwrap();
    }
    assert_eq!(per_port.len(), 3, "{mon}");
    assert!(per_port.values().all(|&n| n == 100_000), "{per_port:?}");
}

/// Runs `dcsim import-ns3 ref/config.txt --out s.toml`, expected to fail; returns stderr.
fn import_fails(c: &Case) -> String {
    let o = c.run(&["import-ns3", "ref/config.txt", "--out", "s.toml"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(!c.path("s.toml").exists(), "a scenario was written despite the error");
    stderr
}

/// An output that is one of the inputs is refused: `import-ns3 --out` naming the config, its
/// topology or its flow file, and `gen --out` naming the scenario or a file it reads, replaced
/// that input and exited 0.
#[test]
fn outputs_that_name_an_input_are_refused() {
    let c = ns3_case(&[]);
    for input in ["ref/config.txt", "ref/topo.txt", "ref/flow.txt"] {
        let before = fs::read(c.path(input)).unwrap();
        let o = c.run(&["import-ns3", "ref/config.txt", "--out", input]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("error: --out: ") && stderr.contains("is an input"), "{stderr}");
        assert_eq!(fs::read(c.path(input)).unwrap(), before, "{input} was replaced");
    }
    run_ok(&c, &["import-ns3", "ref/config.txt", "--out", "s.toml"]);
    for input in ["s.toml", "ref/flow.txt"] {
        let before = fs::read(c.path(input)).unwrap();
        let o = c.run(&["gen", "s.toml", "--out", input]);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        assert_eq!(fs::read(c.path(input)).unwrap(), before, "{input} was replaced");
    }
    run_ok(&c, &["gen", "s.toml", "--out", "flows-again.txt"]);
}

/// The imported scenario's warnings are told at once: every flow starting after the stop time
/// was told only by a later `validate`.
#[test]
fn import_ns3_tells_the_scenarios_warnings() {
    let c = ns3_case(&[("SIMULATOR_STOP_TIME 2.01", "SIMULATOR_STOP_TIME 1.5")]);
    let o = c.run(&["import-ns3", "ref/config.txt", "--out", "s.toml"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: s.toml:") && stderr.contains("after the stop time"),
        "{stderr}"
    );
    let o = ns3_case(&[]).run(&["import-ns3", "ref/config.txt", "--out", "s.toml"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"), "{o:?}");
}

#[test]
fn import_ns3_unknown_key_is_an_error() {
    let c = ns3_case(&[("ENABLE_TRACE 0", "ENABLE_TRACE 0\nENABLE_TRACING 1")]);
    let e = import_fails(&c);
    assert_has(&e, &["error: ref/config.txt:41: unknown key `ENABLE_TRACING`"]);
}

#[test]
fn import_ns3_refuses_a_folder_as_a_file() {
    // It was written as `path = ""` and refused later, naming neither the config nor its line.
    let c = ns3_case(&[("TOPOLOGY_FILE topo.txt", "TOPOLOGY_FILE .")]);
    let e = import_fails(&c);
    assert_has(&e, &["error: ref/config.txt:", ": TOPOLOGY_FILE .: ", " is a folder, not a file"]);
    assert!(!c.path("s.toml").exists());
}

#[test]
fn import_ns3_link_down_with_bad_nodes_is_refused() {
    // LINK_DOWN t a b with t > 0 becomes an [[events]] entry (tests/faults.rs); node ids that
    // are not numbers cannot.
    let c = ns3_case(&[("LINK_DOWN 0 0 0", "LINK_DOWN 1000 two 3")]);
    let e = import_fails(&c);
    assert_has(&e, &["error: ref/config.txt:39: LINK_DOWN 1000 two 3: `two` is not a node id"]);
}

#[test]
fn import_ns3_refuses_broken_reference_defaults() {
    let c = ns3_case(&[("RP_TIMER 300.7\n", "")]);
    let e = import_fails(&c);
    assert_has(
        &e,
        &["error: ref/config.txt: RP_TIMER is missing: the reference's built-in default is 0"],
    );
    let c = ns3_case(&[("RP_TIMER 300.7", "RP_TIMER 0.5")]);
    let e = import_fails(&c);
    assert_has(&e, &["error: ref/config.txt:15: RP_TIMER 0.5: truncates to 0 µs"]);
    let c = ns3_case(&[("CC_MODE 1", "CC_MODE 2")]);
    let e = import_fails(&c);
    assert_has(&e, &["error: ref/config.txt:11: CC_MODE 2 is not a scheme dcsim has"]);
    // An integer too large for its key is called that (it read "expected a non-negative
    // integer").
    let c = ns3_case(&[("FAST_RECOVERY_TIMES 1", "FAST_RECOVERY_TIMES 99999999999")]);
    let e = import_fails(&c);
    assert_has(&e, &["FAST_RECOVERY_TIMES 99999999999: too large: at most 4294967295"]);
    let c = ns3_case(&[("FAST_RECOVERY_TIMES 1", "FAST_RECOVERY_TIMES -1")]);
    let e = import_fails(&c);
    assert_has(&e, &["FAST_RECOVERY_TIMES -1: expected a non-negative integer"]);
    let c = ns3_case(&[("KMIN_MAP 1 100000000000 400", "KMIN_MAP 1 400000000000 400")]);
    let e = import_fails(&c);
    assert_has(&e, &["error: ref/config.txt:", "has no entry for "]);
}

// ---------------------------------------------------------------------------------------------
// compare-ns3.
// ---------------------------------------------------------------------------------------------

/// Ten reference flows of 1 KB .. 10 KB with slowdowns 1..10 (fct = k * 1000, standalone
/// 1000), and ours 5% slower.
fn compare_case() -> Case {
    let c = Case::new();
    let mut r = String::new();
    let mut o = String::from(FCT_HEADER);
    o.push('\n');
    for k in 1..=10u64 {
        r.push_str(&format!(
            "0b000001 0b000101 10000 100 {} 2000000000 {} 1000\n",
            k * 1000,
            k * 1000
        ));
        o.push_str(&format!("{},0,1,{},2000000000,{},900,1,1000,100\n", k - 1, k * 1000, k * 1050));
    }
    c.write("ref.txt", &r);
    c.write("fct.csv", &o);
    c
}

#[test]
fn compare_ns3_prints_a_table_and_exits_0() {
    let c = compare_case();
    // An output that is one of the inputs is refused (it replaced the input, exit 0).
    for input in ["ref.txt", "fct.csv"] {
        let before = fs::read(c.path(input)).unwrap();
        let o = c.run(&["compare-ns3", "ref.txt", "fct.csv", "--csv", input]);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--csv: "), "{o:?}");
        assert_eq!(fs::read(c.path(input)).unwrap(), before);
    }
    let out = run_ok(&c, &["compare-ns3", "ref.txt", "fct.csv", "--csv", "cmp/out.csv"]);
    // p50 of 1..10 is element 5 = 6; p95 and p99 element 9 = 10.
    let all = out.lines().find(|l| l.starts_with("all ")).expect("`all` row");
    let cols: Vec<&str> = all.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "all", "10/10", "6.000", "10.000", "10.000", "6.300", "10.500", "10.500", "+5.0",
            "+5.0", "+5.0", "PASS"
        ]
    );
    // Ten flows fill every other size bucket only.
    assert_has(
        &out,
        &["ref p50 / p95 / p99", "12 of 12 groups within tolerance", "wrote cmp/out.csv"],
    );
    let empty = out.lines().find(|l| l.starts_with("q0.00-0.05 ")).expect("first bucket");
    assert!(empty.contains(" 0/0 ") && empty.ends_with("n/a"), "{empty}");
    let small = out.lines().find(|l| l.starts_with("< 100KB")).expect("small row");
    assert!(small.contains("10/10"), "{small}");
    let large = out.lines().find(|l| l.starts_with("> 1MB")).expect("large row");
    assert!(large.ends_with("n/a") && large.contains("0/0"), "{large}");
    let csv = read(&c.path("cmp/out.csv"));
    assert!(csv.starts_with("group,n_ref,n_ours,"), "{csv}");
    assert_has(&csv, &["\nall,10,10,6.000000,10.000000,10.000000,6.300000,10.500000,10.500000,5.000000,5.000000,5.000000,PASS\n"]);

    // 20% slower: a report with misses, still status 0.
    let o = read(&c.path("fct.csv")).replace(",1,1000,100\n", ",1,833.333333,100\n");
    c.write("fct.csv", &o);
    let out = run_ok(&c, &["compare-ns3", "ref.txt", "fct.csv"]);
    let all = out.lines().find(|l| l.starts_with("all ")).expect("`all` row");
    assert!(all.ends_with("MISS p50+p95"), "{all}");
}

#[test]
fn compare_ns3_reports_and_warns_about_flows_on_one_side_only() {
    let c = compare_case();
    let o = c.run(&["compare-ns3", "ref.txt", "fct.csv"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_has(
        &out,
        &["flows in both (same size and start): 10; only in the reference: 0; only in ours: 0"],
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"), "{o:?}");

    // Our run lost its 10 KB flow and started the 1 KB one a nanosecond late: a report still
    // (status 0), with the sets counted and a warning naming the first flow of each side.
    let ours = read(&c.path("fct.csv"))
        .replace("0,0,1,1000,2000000000,", "0,0,1,1000,2000000001,")
        .lines()
        .filter(|l| !l.starts_with("9,"))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    c.write("fct.csv", &ours);
    let o = c.run(&["compare-ns3", "ref.txt", "fct.csv"]);
    assert_eq!(o.status.code(), Some(0));
    assert_has(
        &String::from_utf8_lossy(&o.stdout),
        &[
            "ours:      fct.csv (9 flows)",
            "flows in both (same size and start): 8; only in the reference: 2; only in ours: 1",
        ],
    );
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["warning: the files do not hold the same flows: 8 in both", "2 only in the reference (the first only in the reference: 1000 B at 2000000000 ns), 1 only in ours (the first only in ours: 1000 B at 2000000001 ns)"],
    );
}

#[test]
fn compare_ns3_bad_input_exits_2() {
    let c = compare_case();
    // No flow in common: not runs of the same flows (it reported PASS, with a warning).
    let other =
        fs::read_to_string(c.path("ref.txt")).unwrap().replace(" 10000 100 ", " 10000 100 1");
    c.write("other.txt", &other);
    let o = c.run(&["compare-ns3", "other.txt", "fct.csv"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["error: fct.csv: no flow in common with other.txt (same size and start)"],
    );
    c.write("bad.txt", "0b000001 0b000101 10000 100 1000 2000000000 1000 1000\n0b000001 7\n");
    let o = c.run(&["compare-ns3", "bad.txt", "fct.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(&String::from_utf8_lossy(&o.stderr), &["error: bad.txt:2: expected 8 fields"]);
    c.write("bad.csv", "flow_id,size_bytes,start_ns,fct_ns\n0,1000,0,5\n");
    let o = c.run(&["compare-ns3", "ref.txt", "bad.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(
        &String::from_utf8_lossy(&o.stderr),
        &["error: bad.csv:1: no `ref_ideal_fct_ns` column"],
    );
    let o = c.run(&["compare-ns3", "ref.txt", "missing.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(&String::from_utf8_lossy(&o.stderr), &["error: cannot read missing.csv: "]);
    c.write("empty.txt", "\n");
    let o = c.run(&["compare-ns3", "empty.txt", "fct.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert_has(&String::from_utf8_lossy(&o.stderr), &["error: empty.txt: no flows to compare"]);
}

// ---------------------------------------------------------------------------------------------
// TCP flow groups and queue disciplines: bad input is located; good input runs.
// ---------------------------------------------------------------------------------------------

/// A TCP group for BASE's flows (appended after line 31).
const TCP_GROUP: &str = "\n[[group]]\nname = \"web\"\ncca = \"cubic\"\n";

/// BASE with both flows in group "web" and `extra` appended after [`TCP_GROUP`].
fn tcp_case(c: &Case, group_extra: &str, extra: &str) -> PathBuf {
    let edits = [
        ("size = \"100KB\"", "size = \"100KB\"\ngroup = \"web\""),
        ("size = 20000", "size = 20000\ngroup = \"web\""),
    ];
    c.scenario(&edits, &format!("{TCP_GROUP}{group_extra}{extra}"))
}

#[test]
fn tcp_groups_and_queues_run() {
    let c = Case::new();
    tcp_case(
        &c,
        "tcp = { ecn = \"accurate\", min_rto = \"1ms\" }\n",
        "\n[[queue]]\nat = \"fabric\"\nkind = \"fq_codel\"\nflows = 1\n",
    );
    let o = c.run(&["validate", "scenario.toml"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_has(
        &text,
        &["TCP group \"web\": 2 flows with cubic", "ECN Accurate", "fq_codel on 4 ports"],
    );
    // Rules for two classes of the same ports: each port is named once.
    let two = "\n[[queue]]\nat = \"fabric\"\nkind = \"fq_codel\"\nclasses = [1]\n\
               \n[[queue]]\nat = \"fabric\"\nkind = \"fq_codel\"\nclasses = [3]\n";
    tcp_case(&c, "", two);
    let o = c.run(&["validate", "scenario.toml"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_has(&text, &["fq_codel on 4 ports"]);
    tcp_case(
        &c,
        "tcp = { ecn = \"accurate\", min_rto = \"1ms\" }\n",
        "\n[[queue]]\nat = \"fabric\"\nkind = \"fq_codel\"\nflows = 1\n",
    );
    let o = c.run(&["run", "scenario.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let fct = fs::read_to_string(c.out().join("fct.csv")).unwrap();
    assert_eq!(fct.lines().count(), 3, "both flows complete:\n{fct}");
    let counters = fs::read_to_string(c.out().join("counters.csv")).unwrap();
    assert_has(&counters, &["aqm_drops,", "timeouts,", "tcp_acks_sent,"]);
}

#[test]
fn unknown_transport_controller_and_queue_names() {
    let c = Case::new();
    tcp_case(&c, "transport = \"quic\"\n", "");
    assert_has(
        &c.run_fails(),
        &["scenario.toml:27:13: field `group[0].transport`", "unknown transport", "tcp, roce"],
    );
    c.scenario(
        &[("size = 20000", "size = 20000\ngroup = \"web\"")],
        "\n[[group]]\nname = \"web\"\ncca = \"bbr9\"\n",
    );
    assert_has(
        &c.run_fails(),
        &[
            "field `group[0].cca`",
            "unknown congestion controller \"bbr9\"",
            "newreno, cubic, dctcp, prague, bbr",
        ],
    );
    c.scenario(&[], "\n[[queue]]\nat = \"all\"\nkind = \"sfq\"\n");
    assert_has(
        &c.run_fails(),
        &[
            "scenario.toml:24:8: field `queue[0].kind`",
            "unknown queue discipline \"sfq\"",
            "fq_codel",
        ],
    );
    c.scenario(&[("size = 20000", "size = 20000\ngroup = \"mail\"")], "");
    assert_has(
        &c.run_fails(),
        &["20:9: field `flows.list[1].group`", "no [[group]] named \"mail\""],
    );
    // `[flows] group` is checked even when every flow names its own (it was ignored).
    tcp_case(&c, "", "\n[flows]\ngroup = \"nobody\"\n");
    assert_has(&c.run_fails(), &["field `flows.group`", "no [[group]] named \"nobody\""]);
}

#[test]
fn codel_target_must_be_positive_and_below_the_interval() {
    let c = Case::new();
    c.scenario(&[], "\n[[queue]]\nat = \"all\"\nkind = \"codel\"\ntarget = \"200ms\"\n");
    assert_has(&c.run_fails(), &["scenario.toml:25:10: field `queue[0].target`", "interval"]);
    c.scenario(&[], "\n[[queue]]\nat = \"all\"\nkind = \"fq_codel\"\ntarget = \"0s\"\n");
    assert_has(&c.run_fails(), &["field `queue[0].target`"]);
}

#[test]
fn mss_must_fit_the_mtu_and_min_rto_must_be_positive() {
    let c = Case::new();
    tcp_case(&c, "tcp = { mss = 9000 }\n", "");
    assert_has(&c.run_fails(), &["field `group[0].tcp.mss`", "exceeds the group's MTU of 1500 B"]);
    tcp_case(&c, "tcp = { mss = 8900 }\nmtu = 9000\n", "");
    let o = c.run(&["validate", "scenario.toml"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "jumbo frames fit: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    tcp_case(&c, "tcp = { min_rto = \"0s\" }\n", "");
    assert_has(&c.run_fails(), &["field `group[0].tcp.min_rto`"]);
    // A written MTU too small for the profile's MSS is blamed (it pointed at the table).
    tcp_case(&c, "mtu = 68\n", "");
    assert_has(
        &c.run_fails(),
        &["field `group[0].mtu`: 68 B cannot carry a full segment of the group: mss 1448 B plus \
           52 B of TCP/IP headers"],
    );
}

/// Values that made a run take days or do nothing, each refused with its field: timers below
/// a microsecond (TCP's RTOs, DualPI2's update period, the RoCE timeout), frames larger than a
/// segment's, a DualPI2 byte limit that wrapped to 0, TLP without SACK.
#[test]
fn timers_and_frames_that_cannot_run_are_refused() {
    let c = Case::new();
    for (group, field, says) in [
        (
            "tcp = { min_rto = \"1ps\", initial_rto = \"1ps\", max_rto = \"1ps\" }",
            "min_rto",
            "at least 1us",
        ),
        ("tcp = { initial_rto = \"999ns\" }", "initial_rto", "at least 1us"),
        (
            "tcp = { handshake = true, request_bytes = 20000000 }",
            "request_bytes",
            "must not exceed mss (1448)",
        ),
        (
            "tcp = { min_frame_bytes = 100000000 }",
            "min_frame_bytes",
            "exceeds the group's MTU of 1500 B",
        ),
        (
            "tcp = { syn_frame_bytes = 100000000 }",
            "syn_frame_bytes",
            "exceeds the group's MTU of 1500 B",
        ),
        ("tcp = { profile = \"dc-newreno\", tlp = true }", "tlp", "needs sack = true"),
    ] {
        tcp_case(&c, &format!("{group}\n"), "");
        assert_has(&c.run_fails(), &[&format!("field `group[0].tcp.{field}`"), says]);
    }
    // Without `tlp` given, `sack = false` turns the Linux profile's TLP off.
    tcp_case(&c, "tcp = { sack = false, recovery = \"newreno\" }\n", "");
    let o = c.run(&["validate", "scenario.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for (queue, field, says) in [
        ("tupdate = \"1ps\"", "tupdate", "at least 1us"),
        ("mtu = 0", "mtu", "must be positive"),
        ("limit = 4294967295\nmtu = 4294967295", "mtu", "overflow 64 bits"),
        ("memory_limit = \"1GiB\"\nmtu = \"4GiB\"", "mtu", "must be below 4GiB"),
    ] {
        tcp_case(&c, "", &format!("\n[[queue]]\nat = \"all\"\nkind = \"dualpi2\"\n{queue}\n"));
        assert_has(&c.run_fails(), &[&format!("field `queue[0].{field}`"), says]);
    }
    c.scenario(&[], "\n[nic]\nrto = \"1ps\"\nrto_retries = 4294967295\n");
    assert_has(&c.run_fails(), &["field `nic.rto`", "shorter than the minimum of 1 µs"]);
}

#[test]
fn transport_parameters_belong_to_their_transport() {
    let c = Case::new();
    // A TCP parameter on a RoCE group.
    c.scenario(&[], "\n[[group]]\nname = \"rdma\"\ntransport = \"roce\"\ncca = \"cubic\"\n");
    assert_has(&c.run_fails(), &["field `group[0].cca`", "a RoCE group uses the [cc] scheme"]);
    // A RoCE congestion-control parameter inside a TCP group's controller.
    c.scenario(
        &[("size = 20000", "size = 20000\ngroup = \"web\"")],
        "\n[[group]]\nname = \"web\"\ncca = { name = \"dctcp\", rate_ai = \"40Mbps\" }\n",
    );
    assert_has(
        &c.run_fails(),
        &["field `group[0].cca.rate_ai`", "unknown parameter `rate_ai` for \"dctcp\""],
    );
    // An unknown TCP parameter.
    tcp_case(&c, "tcp = { alpha = 0.5 }\n", "");
    assert_has(&c.run_fails(), &["field `group[0].tcp.alpha`", "unknown parameter"]);
}

#[test]
fn a_queue_on_a_port_that_does_not_exist() {
    let c = Case::new();
    c.scenario(&[], "\n[[queue]]\nswitch = 8\nport = 17\nkind = \"codel\"\n");
    assert_has(
        &c.run_fails(),
        &["scenario.toml:24:8: field `queue[0].port`", "not a port of switch 8"],
    );
    c.scenario(&[], "\n[[queue]]\nlink = [0, 8]\nkind = \"codel\"\n");
    assert_has(&c.run_fails(), &["field `queue[0].link`", "node 0 is not a switch"]);
    c.scenario(&[], "\n[[queue]]\nlink = [8, 9]\nkind = \"codel\"\n");
    assert_has(&c.run_fails(), &["field `queue[0].link`", "no link from 8 to 9"]);
}

#[test]
fn tcp_cannot_share_a_lossless_roce_class() {
    let c = Case::new();
    c.scenario(&[("size = 20000", "size = 20000\ngroup = \"web\"")], TCP_GROUP);
    assert_has(&c.run_fails(), &["group \"web\"", "class 3", "give the group another `pg`"]);
    c.scenario(
        &[("size = 20000", "size = 20000\ngroup = \"web\"")],
        &format!("{TCP_GROUP}pg = 2\n"),
    );
    let o = c.run(&["run", "scenario.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}
