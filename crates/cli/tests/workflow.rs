//! End-to-end tests of the experiment workflow: `gen` (workload generators), `analyze` and
//! `plot` (FCT analysis), `sweep` and `merge`. Every bad-input class exits with status 2, names
//! the file, line, column and field (or the file and line), and writes nothing.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

mod common;
use common::Case;

fn assert_has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "expected `{p}` in:\n{text}");
    }
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// 16 hosts (4 leaves x 4) at 100 Gb/s, Hadoop flow sizes at 30% load for 20 ms. Line 11 is
/// the `workload` line.
const GEN: &str = r#"[simulation]
seed = 5

[topology]
kind = "leaf-spine"
leaves = 4
spines = 1
hosts_per_leaf = 4

[flows]
workload = { cdf = "hadoop", load = 0.3, duration = "20ms" }
"#;

/// `(src, dst, pg, dport, size, start_seconds)` of every line of a flow file, after checking
/// the count.
fn flow_lines(text: &str) -> Vec<(u32, u32, u8, u16, u64, f64)> {
    let mut lines = text.lines();
    let n: usize = lines.next().expect("count line").trim().parse().expect("count");
    let flows: Vec<_> = lines
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(flows.len(), n);
    flows
}

/// Payload load of flows over `hosts` hosts at 100 Gb/s for `secs`.
fn load_of(flows: &[(u32, u32, u8, u16, u64, f64)], hosts: f64, secs: f64) -> f64 {
    flows.iter().map(|f| f.4 as f64 * 8.0).sum::<f64>() / (hosts * 100e9 * secs)
}

// ---------------------------------------------------------------------------------------------
// gen
// ---------------------------------------------------------------------------------------------

#[test]
fn gen_is_deterministic_and_offers_the_load() {
    let c = Case::new();
    c.write("s.toml", GEN);
    let out = c.ok(&["gen", "s.toml", "--out", "a/flows.txt"]);
    assert_has(&out, &["wrote a/flows.txt: ", "Workload hadoop", "at load 0.3 on 16 hosts"]);
    c.ok(&["gen", "s.toml", "--out", "b.txt"]);
    let a = read(&c.path("a/flows.txt"));
    assert_eq!(a, read(&c.path("b.txt")), "same seed, same file");
    c.ok(&["gen", "s.toml", "--out", "c.txt", "--seed", "6"]);
    assert_ne!(a, read(&c.path("c.txt")), "another seed, other flows");

    let flows = flow_lines(&a);
    // 16 hosts x 20 ms / (120420.75 B * 8 / 30 Gb/s = 32.1 us) = 9965 expected arrivals, one
    // per host fewer with the reference's last-candidate drop. The count is Poisson (1% noise);
    // the load is dominated by the 1% of flows above 2 MB, so it is noisy (about 10% here).
    assert!((9_500..=10_400).contains(&flows.len()), "{} flows", flows.len());
    let load = load_of(&flows, 16.0, 0.02);
    assert!((0.24..=0.36).contains(&load), "realized load {load}");
    let mut prev = 0.0;
    for &(src, dst, pg, dport, size, start) in &flows {
        assert!(src < 16 && dst < 16 && src != dst);
        assert_eq!((pg, dport), (3, 100));
        assert!((1..=10_000_000).contains(&size));
        assert!(start >= prev && start < 0.02, "sorted, in the window: {start}");
        prev = start;
    }

    // drop_last = false keeps each host's last arrival: at least as many flows, a superset.
    c.write(
        "x.toml",
        &GEN.replace("duration = \"20ms\"", "duration = \"20ms\", drop_last = false"),
    );
    c.ok(&["gen", "x.toml", "--out", "x.txt"]);
    let exact = flow_lines(&read(&c.path("x.txt")));
    assert!(exact.len() >= flows.len() + 14, "{} vs {}", exact.len(), flows.len());
    assert!(exact.iter().all(|f| f.5 < 0.02));
    assert!(flows.iter().all(|f| exact.contains(f)), "the dropped flows are only added");

    // Light-tailed sizes (uniform 0..2000 B, mean 1000 B): ~3750 flows per host in 1 ms, so
    // the realized load is within a few per cent of the target (sd about 0.5%).
    c.write("uniform.cdf", "0 0\n2000 100\n");
    c.write("u.toml", &GEN.replace("\"hadoop\"", "\"uniform.cdf\"").replace("\"20ms\"", "\"1ms\""));
    c.ok(&["gen", "u.toml", "--out", "u.txt"]);
    let uniform = flow_lines(&read(&c.path("u.txt")));
    let load = load_of(&uniform, 16.0, 0.001);
    assert!((0.29..=0.31).contains(&load), "realized load {load}");
}

#[test]
fn step_interpolation_draws_only_listed_sizes_at_the_step_mean() {
    let c = Case::new();
    let ali = GEN.replace("\"hadoop\"", "\"alistorage2019\"").replace("\"20ms\"", "\"2ms\"");
    c.write("linear.toml", &ali);
    c.write("step.toml", &ali.replace("cdf =", "interpolate = \"step\", cdf ="));
    c.write("explicit.toml", &ali.replace("cdf =", "interpolate = \"linear\", cdf ="));
    // The linear reading is the default: the same flows and the same description.
    let linear = c.ok(&["gen", "linear.toml", "--out", "linear.txt"]);
    assert_has(&linear, &["Workload alistorage2019 (mean flow 40870 B)"]);
    assert_eq!(linear, c.ok(&["gen", "explicit.toml", "--out", "linear.txt"]));
    let out = c.ok(&["gen", "step.toml", "--out", "step.txt"]);
    assert_has(&out, &["Workload alistorage2019 (step CDF) (mean flow 67050 B)"]);
    let v = c.ok(&["validate", "step.toml"]);
    assert_has(&v, &["Workload alistorage2019 (step CDF) (mean flow 67050 B)"]);
    let listed = [4000, 8000, 16000, 32000, 64000, 128000, 256000, 2000000];
    let flows = flow_lines(&read(&c.path("step.txt")));
    // 16 hosts x 2 ms / (67 050 B * 8 / 30 Gb/s = 17.88 us): about 1790 flows.
    assert!((1_500..=2_100).contains(&flows.len()), "{} flows", flows.len());
    assert!(flows.iter().all(|f| listed.contains(&f.4)), "only listed sizes");
    let at_4000 = flows.iter().filter(|f| f.4 == 4000).count() as f64 / flows.len() as f64;
    assert!((0.17..=0.29).contains(&at_4000), "{at_4000} of the flows are 4000 B");
    let linear_flows = flow_lines(&read(&c.path("linear.txt")));
    assert!(linear_flows.iter().any(|f| !listed.contains(&f.4)));
}

#[test]
fn gen_with_incast_and_explicit_flows_merges_by_start_time() {
    let c = Case::new();
    c.write(
        "s.toml",
        &format!(
            "{GEN}incast = {{ senders = 8, size = \"500KB\", fraction = 0.05, receiver = 3 }}\n\
             [[flows.list]]\nsrc = 0\ndst = 1\nsize = 123\nstart = \"1ms\"\ndport = 7\n"
        ),
    );
    let out = c.ok(&["gen", "s.toml", "--out", "f.txt"]);
    assert_has(&out, &["Incast: 8 senders x 500000 B at 0.05 of capacity for 20 ms"]);
    let flows = flow_lines(&read(&c.path("f.txt")));
    assert!(flows.windows(2).all(|w| w[0].5 <= w[1].5), "sorted by start");
    let incast: Vec<_> = flows.iter().filter(|f| f.3 == 200).collect();
    // 5% of 16 x 100 Gb/s for 20 ms is 200 MB of incast payload: about 50 events of
    // 8 x 500 KB (a Poisson count, so 30..=75 with a wide margin).
    assert_eq!(incast.len() % 8, 0);
    assert!((30..=75).contains(&(incast.len() / 8)), "{} events", incast.len() / 8);
    assert!(incast.iter().all(|f| f.1 == 3 && f.4 == 500_000 && f.0 != 3));
    assert_eq!(flows.iter().filter(|f| f.3 == 7).count(), 1, "the explicit flow");
    assert!(flows.contains(&(0, 1, 3, 7, 123, 0.001)));
}

// ---------------------------------------------------------------------------------------------
// Bad generator input.
// ---------------------------------------------------------------------------------------------

fn gen_fails(c: &Case, scenario: &str) -> String {
    c.write("s.toml", scenario);
    c.fails(&["gen", "s.toml", "--out", "out/flows.txt"], &["out"])
}

#[test]
fn cdf_that_does_not_increase() {
    let c = Case::new();
    c.write("cdf/bad.txt", "# size percent\n0 0\n10000 50\n5000 100\n");
    let e = gen_fails(&c, &GEN.replace("\"hadoop\"", "\"cdf/bad.txt\""));
    assert_has(
        &e,
        &[
            "error: ",
            "cdf/bad.txt:4:1: field `point[2].size`: bad CDF: size must strictly increase, but \
             5000 follows 10000",
        ],
    );
}

#[test]
fn cdf_that_does_not_end_at_100() {
    let c = Case::new();
    c.write("bad.cdf", "0 0\n10000 50\n20000 99\n");
    let e = gen_fails(&c, &GEN.replace("\"hadoop\"", "\"bad.cdf\""));
    assert_has(
        &e,
        &["bad.cdf:3:7: field `point[2].percent`: bad CDF: the last point must be at 100 %, \
           found 99 %"],
    );
    c.write("bad.cdf", "0 0\n");
    let e = gen_fails(&c, &GEN.replace("\"hadoop\"", "\"bad.cdf\""));
    assert_has(&e, &["error: bad.cdf: bad CDF: a CDF needs at least two points"]);
}

#[test]
fn cdf_that_is_neither_built_in_nor_a_file() {
    let c = Case::new();
    let e = gen_fails(&c, &GEN.replace("\"hadoop\"", "\"datamining\""));
    assert_has(
        &e,
        &["s.toml:11:20: field `flows.workload.cdf`: \"datamining\" is neither a built-in \
             workload (websearch, hadoop, alistorage2019, googlerpc2008) nor a readable CDF file"],
    );
}

#[test]
fn load_out_of_range() {
    let c = Case::new();
    for load in ["0", "0.0", "-0.1", "1", "1.0", "30"] {
        let e = gen_fails(&c, &GEN.replace("load = 0.3", &format!("load = {load}")));
        let shown = load.parse::<f64>().unwrap();
        assert_has(
            &e,
            &[&format!(
                "s.toml:11:37: field `flows.workload.load`: load must be in (0, 1) exclusive, \
                 found {shown} (a fraction: 0.3 means 30%)"
            )],
        );
    }
}

#[test]
fn generator_fields_missing_or_invalid() {
    let c = Case::new();
    let e = gen_fails(&c, &GEN.replace(", duration = \"20ms\"", ""));
    assert_has(
        &e,
        &["s.toml:11:12: field `flows.workload.duration`: missing; expected the arrival window"],
    );
    let e = gen_fails(&c, &GEN.replace("duration = \"20ms\"", "duration = \"0ms\""));
    assert_has(&e, &["s.toml:11:53: field `flows.workload.duration`: must be greater than zero"]);
    let e = gen_fails(&c, &GEN.replace("load = 0.3", "interpolate = \"steps\", load = 0.3"));
    assert_has(
        &e,
        &["s.toml:11:44: field `flows.workload.interpolate`: unknown interpolation \"steps\" \
           (valid: linear, step)"],
    );
    let e = gen_fails(&c, &GEN.replace("load = 0.3", "lod = 0.3"));
    assert_has(&e, &["s.toml:11:30: field `flows.workload.lod`: unknown field `lod`"]);
    let e = gen_fails(
        &c,
        &format!("{GEN}incast = {{ senders = 16, size = \"1KB\", fraction = 0.1 }}\n"),
    );
    assert_has(&e, &["s.toml:12:22: field `flows.incast.senders`: an incast needs at least 17 hosts, found 16"]);
    let e = gen_fails(
        &c,
        &format!(
            "{GEN}incast = {{ senders = 2, size = \"1KB\", fraction = 0.1, receiver = 17 }}\n"
        ),
    );
    assert_has(
        &e,
        &["field `flows.incast.receiver`: node 17 is a switch, not a host (hosts are 0..15)"],
    );
    let e = gen_fails(
        &c,
        "[topology]\nkind = \"star\"\nsenders = 3\n[flows]\nincast = { senders = 2, size = 1, fraction = 0.5 }\n",
    );
    assert_has(&e, &["s.toml:5:10: field `flows.incast.duration`: missing; needed when there is no `workload`"]);
}

// ---------------------------------------------------------------------------------------------
// analyze and plot
// ---------------------------------------------------------------------------------------------

const FCT_HEADER: &str =
    "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,ref_ideal_fct_ns,dport\n";

/// 20 flows with ideal FCT 1000 ns and slowdown `s_i = (7 i mod 20) + 1` (a permutation of
/// 1..=20): sizes 1K..10K for i < 10, 1M..10M for i >= 10. Even flows have dport 100, odd 200.
/// Flow 0's FCT (500 ns) is below its ideal: its slowdown is floored to 1.
fn hand_made_fct() -> String {
    let mut s = String::from(FCT_HEADER);
    for i in 0..20u64 {
        let size = if i < 10 { (i + 1) * 1000 } else { (i - 9) * 1_000_000 };
        let sd = (7 * i) % 20 + 1;
        let fct = if i == 0 { 500 } else { sd * 1000 };
        let dport = if i % 2 == 0 { 100 } else { 200 };
        s.push_str(&format!("{i},0,1,{size},{},{fct},1000,{sd},1000,{dport}\n", i * 10));
    }
    s
}

#[test]
fn analyze_a_hand_made_file_gives_the_known_percentiles() {
    let c = Case::new();
    c.write("run/fct.csv", &hand_made_fct());
    let out = c.ok(&["analyze", "run/fct.csv", "--buckets", "quantile:50", "--out", "res"]);
    // Sorted by size, bucket 0 holds flows 0..9 with slowdowns {1,8,15,2,9,16,3,10,17,4}:
    // sorted 1 2 3 4 8 9 10 15 16 17 -> p50 = [5] = 9, p95 = p99 = [9] = 17. Bucket 1 holds
    // flows 10..19 (the largest included): 5 6 7 11 12 13 14 18 19 20 -> 13, 20, 20.
    assert_has(&out, &["run: run/fct.csv (20 flows)", "slowdown by flow size (quantile:50)"]);
    let row = |label: &str| {
        out.lines()
            .find(|l| l.starts_with("run ") && l.split_whitespace().nth(1) == Some(label))
            .unwrap_or_else(|| panic!("no {label} row in\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("10K"), ["run", "10K", "0.00", "-", "10000", "10", "9.000", "17.000", "17.000"]);
    assert_eq!(
        row("10M"),
        ["run", "10M", "0.50", "-", "10000000", "10", "13.000", "20.000", "20.000"]
    );
    assert_eq!(
        read(&c.path("res/buckets.csv")),
        "scheme,label,start_quantile,upper_edge,max_size,count,p50,p95,p99\n\
         run,10K,0.00,,10000,10,9.000000,17.000000,17.000000\n\
         run,10M,0.50,,10000000,10,13.000000,20.000000,20.000000\n"
    );
    // All 20: slowdowns 1..20 -> p50 = [10] = 11, p95 = [19] = 20, mean 10.5. FCT mean:
    // (500 + 1000 * (210 - 1)) / 20 = 10475 ns. >1MB excludes the 1 MB flow.
    let summary = read(&c.path("res/summary.csv"));
    assert_has(
        &summary,
        &[
            "run,all,20,10475.000,11000.000,20000.000,10.500000,11.000000,20.000000,20.000000\n",
            "run,<100KB,10,",
            "run,<200KB,10,",
            "run,>1MB,9,",
        ],
    );

    // Only dport 100 (even flows): bucket by the HPCC web-search sizes.
    let out = c.ok(&["analyze", "run/fct.csv:even", "--dport", "100", "--buckets", "sizes:10K,1M"]);
    assert_has(&out, &["even: run/fct.csv (10 flows)", "dport 100 only"]);
    // Even flows <= 10K: i = 0 2 4 6 8 -> slowdowns 1 15 9 3 17 -> sorted 1 3 9 15 17: p50 = 9.
    let small =
        out.lines().find(|l| l.split_whitespace().take(2).eq(["even", "10K"])).expect("10K row");
    assert_eq!(small.split_whitespace().nth(6), Some("9.000"), "{small}");
}

/// An output path through a file: every command names the file in the way (they said "File
/// exists", or named an output file `run` was removing).
#[test]
fn output_paths_through_a_file_name_the_file() {
    let c = Case::new();
    c.write("afile", "");
    c.write("good.csv", &hand_made_fct());
    c.write(
        "s.toml",
        "[simulation]\nstop_time = \"1ms\"\n[topology]\nkind = \"star\"\nsenders = 1\n\
         [[flows.list]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n",
    );
    for args in [
        &["plot", "good.csv", "--out", "afile"][..],
        &["analyze", "good.csv", "--out", "afile/x"],
        &["gen", "s.toml", "--out", "afile/flows.txt"],
        &["run", "s.toml", "--out", "afile/sub"],
    ] {
        let e = c.fails(args, &[]);
        assert_has(&e, &["cannot write afile: exists and is not a directory"]);
    }
    // A link to nothing as the folder: said before the run (it failed after it, "File
    // exists").
    std::os::unix::fs::symlink("nowhere", c.path("dangling")).unwrap();
    let e = c.fails(&["run", "s.toml", "--out", "dangling"], &[]);
    assert_has(&e, &["cannot write dangling: is a symbolic link to nothing"]);
    // An output file given as a folder (it wrote a file named `sub`).
    let e = c.fails(&["gen", "s.toml", "--out", "sub/"], &["sub"]);
    assert_has(&e, &["cannot write sub/: names a folder; give the output file's name"]);
}

/// A run's outputs go in place together: when one cannot (a folder where `counters.csv`
/// goes), the error names it and the folder's earlier outputs are left as they were, with no
/// temporary file behind (a new `fct.csv` used to sit beside an old `counters.csv`).
#[test]
fn run_outputs_are_put_in_place_together() {
    let c = Case::new();
    let scenario = |size: &str| {
        format!(
            "[simulation]\nstop_time = \"1ms\"\n[topology]\nkind = \"star\"\nsenders = 1\n\
             [[flows.list]]\nsrc = 0\ndst = 1\nsize = \"{size}\"\n"
        )
    };
    c.write("s.toml", &scenario("1KB"));
    c.ok(&["run", "s.toml", "--out", "res", "--quiet"]);
    let before = fs::read_to_string(c.path("res/fct.csv")).expect("fct.csv");
    assert!(before.contains(",1000,"), "{before}");
    fs::remove_file(c.path("res/counters.csv")).expect("remove");
    fs::create_dir(c.path("res/counters.csv")).expect("a folder in the way");
    c.write("s.toml", &scenario("2KB"));
    let e = c.fails(&["run", "s.toml", "--out", "res", "--quiet"], &[]);
    assert_has(&e, &["counters.csv: is a directory, where an output file goes"]);
    assert_eq!(fs::read_to_string(c.path("res/fct.csv")).expect("fct.csv"), before);
    let mut left: Vec<String> = fs::read_dir(c.path("res"))
        .expect("res")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["counters.csv", "fct.csv"]);
}

#[test]
fn analyze_bad_fct_files() {
    let c = Case::new();
    c.write("missing.csv", "flow_id,src,dst,size_bytes,start_ns,ideal_fct_ns\n0,0,1,5,0,1\n");
    let e = c.fails(&["analyze", "missing.csv", "--out", "res"], &["res"]);
    assert_has(&e, &["error: missing.csv: missing column(s) fct_ns in the header"]);
    c.write("empty.csv", "");
    let e = c.fails(&["analyze", "empty.csv", "--out", "res"], &["res"]);
    assert_has(&e, &["error: empty.csv: empty file; expected a dcsim fct.csv"]);
    c.write("header.csv", FCT_HEADER);
    let e = c.fails(&["analyze", "header.csv", "--out", "res"], &["res"]);
    assert_has(&e, &["error: header.csv: no completed flows to analyze"]);
    c.write("bad.csv", &format!("{FCT_HEADER}0,0,1,5,0,-3,1,1,1,100\n"));
    let e = c.fails(&["analyze", "bad.csv", "--out", "res"], &["res"]);
    assert_has(
        &e,
        &["error: bad.csv:2: column fct_ns: expected a finite number > 0, found \"-3\""],
    );
    c.write("zero.csv", &format!("{FCT_HEADER}0,0,1,5,0,0,1,1,1,100\n"));
    for cmd in ["analyze", "plot"] {
        let e = c.fails(&[cmd, "zero.csv", "--out", "res"], &["res"]);
        assert_has(
            &e,
            &["error: zero.csv:2: column fct_ns: expected a finite number > 0, found \"0\""],
        );
    }
    // A good file and a bad one: nothing is written for either.
    c.write("good.csv", &hand_made_fct());
    let e = c.fails(&["analyze", "good.csv", "missing.csv", "--out", "res"], &["res"]);
    assert_has(&e, &["missing.csv: missing column(s) fct_ns"]);
    let e = c.fails(&["analyze", "good.csv", "--dport", "300", "--out", "res"], &["res"]);
    assert_has(&e, &["good.csv: no completed flows with dport 300 to analyze"]);
    let old = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns\n0,0,1,5,0,3,1\n";
    c.write("old.csv", old);
    let e = c.fails(&["analyze", "old.csv", "--dport", "100"], &[]);
    assert_has(&e, &["old.csv: --dport 100 needs a `dport` column"]);
    let e = c.fails(&["analyze", "good.csv", "--buckets", "quantile:0"], &[]);
    assert_has(&e, &["bad bucket spec `quantile:0`: the step must be 1..=100 percent, found 0"]);
    let e = c.fails(&["plot", "good.csv", "missing.csv", "--out", "figs"], &["figs"]);
    assert_has(&e, &["missing.csv: missing column(s) fct_ns"]);
    // A prefix is the start of a file name in the output folder: a `/` failed after plotting
    // and left a hidden folder, `..` wrote outside the folder.
    for prefix in ["a/b", "../escaped", ".hidden", ""] {
        let e = c.fails(&["plot", "good.csv", "--out", "figs", "--prefix", prefix], &["figs"]);
        assert_has(&e, &["for '--prefix <NAME>'", "cannot start a file name"]);
    }
    // An ideal FCT so small that the slowdown is infinite: `plot` and `merge` looped on it.
    c.write("tiny.csv", &format!("{FCT_HEADER}0,0,3,3000,0,100,1e-308,10,10,100\n"));
    for cmd in ["plot", "analyze"] {
        let e = c.fails(&[cmd, "tiny.csv", "--out", "res"], &["res"]);
        assert_has(&e, &["tiny.csv:2: column ideal_fct_ns: too small"]);
    }
    // Queue-length histograms: a bad value names its line and column; bins are bounded and
    // may not overlap.
    let hist = "switch,port,lower_bytes,upper_bytes,time_ns\n";
    for (rows, expect) in [
        ("4,0,0,10,NaN\n", "line 2: column time_ns: expected a non-negative time in ns"),
        ("4,0,-1,10,5\n", "line 2: column lower_bytes: expected a non-negative integer"),
        ("4,0,4,18446744073709551615,5\n", "line 2: column upper_bytes: expected at most 2^62"),
        ("4,0,10,10,5\n", "line 2: column upper_bytes: expected a bin's upper edge above"),
        (
            "4,0,0,100,5\n4,0,50,60,5\n",
            "lines 2 and 3: switch 4 port 0: bins [0, 100) and [50, 60) overlap",
        ),
        // A port's times beyond a run's length: the pooled sum had wrapped, and `analyze`
        // printed a busy fraction of -1.8e18%.
        (
            "4,0,0,1,18446744073709551.615\n4,1,0,1,18446744073709551.615\n5,1,7,8,1\n",
            "line 2: column time_ns: switch 4 port 0: its bins' times add up to more than a run can last",
        ),
        (
            "4,0,0,1,4611686018427387.904\n4,0,1,2,1\n",
            "line 3: column time_ns: switch 4 port 0: its bins' times add up to more than",
        ),
    ] {
        c.write("q/qlen_hist.csv", &format!("{hist}{rows}"));
        let e = c.fails(&["analyze", "q/qlen_hist.csv", "--out", "res"], &["res"]);
        assert_has(&e, &[expect]);
    }
    // A histogram with no bins: nothing to plot, and no empty folder left (it printed
    // "wrote 0 plots" and exited 0).
    c.write("q/qlen_hist.csv", hist);
    let e = c.fails(&["analyze", "q/qlen_hist.csv", "--out", "res"], &["res"]);
    assert_has(&e, &["q/qlen_hist.csv: no queue-length bins (the file has only its header)"]);
    let e = c.fails(&["plot", "q/qlen_hist.csv", "--out", "figs/a/b"], &["figs"]);
    assert_has(&e, &["q/qlen_hist.csv: no queue-length bins (the file has only its header)"]);
    // Beside the run's fct.csv (the two share the folder's name): the histogram is named
    // (`analyze` named the fct.csv; `plot` left the histogram out and exited 0).
    c.write("q/fct.csv", &read(&c.path("good.csv")));
    for cmd in ["analyze", "plot"] {
        let e = c.fails(&[cmd, "q/fct.csv", "q/qlen_hist.csv", "--out", "res"], &["res"]);
        assert_has(&e, &["error: q/qlen_hist.csv: no queue-length bins"]);
    }
    // An empty histogram file: named as what it is not (it was taken for a second fct.csv
    // input named "q").
    c.write("q/qlen_hist.csv", "");
    let e = c.fails(&["analyze", "q/fct.csv", "q/qlen_hist.csv"], &[]);
    assert_has(
        &e,
        &["error: q/qlen_hist.csv: not a queue-length histogram: its first line is not"],
    );
}

#[test]
fn plot_writes_the_figure_set() {
    let c = Case::new();
    c.write("a/fct.csv", &hand_made_fct());
    c.write("b.csv", &hand_made_fct().replace(",1000,", ",800,"));
    let out = c.ok(&["plot", "a/fct.csv", "b.csv:slower", "--out", "figs", "--title", "test"]);
    assert_has(&out, &["wrote 10 plots to figs"]);
    let mut names: Vec<String> = fs::read_dir(c.path("figs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fct_cdf_fct.png",
            "fct_cdf_fct.svg",
            "fct_cdf_slowdown.png",
            "fct_cdf_slowdown.svg",
            "fct_p50.png",
            "fct_p50.svg",
            "fct_p95.png",
            "fct_p95.svg",
            "fct_p99.png",
            "fct_p99.svg"
        ]
    );
    let svg = read(&c.path("figs/fct_p95.svg"));
    assert_has(
        &svg,
        &["test: 95th-percentile slowdown by flow size", "\na\n</text>", "\nslower\n</text>"],
    );
}

// ---------------------------------------------------------------------------------------------
// sweep and merge
// ---------------------------------------------------------------------------------------------

/// A tiny base: 8 hosts, flows of at most 20 KB for 20 us.
const BASE: &str = r#"[simulation]
seed = 2

[topology]
kind = "leaf-spine"
leaves = 2
spines = 1
hosts_per_leaf = 4

[flows]
workload = { cdf = "small.cdf", load = 0.3, duration = "20us" }
"#;

const SWEEP: &str = r#"base = "base/base.toml"

[axes]
scheme = ["hpcc", "dctcp", { name = "hpcc", eta = 0.9 }]
"#;

fn sweep_case(sweep: &str) -> Case {
    let c = Case::new();
    c.write("base/base.toml", BASE);
    c.write("base/small.cdf", "0 0\n1000 50\n20000 100\n");
    c.write("sweep.toml", sweep);
    c
}

/// Every file under `dir`, relative path → bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn assert_same_tree(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>());
    for (k, v) in &ta {
        assert!(v == &tb[k], "{k} differs between {} and {}", a.display(), b.display());
    }
}

#[test]
fn sweep_is_independent_of_jobs_and_merged_shards_equal_the_whole_run() {
    let c = sweep_case(SWEEP);
    let out = c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--out", "j1"]);
    assert_has(
        &out,
        &[
            "sweep sweep.toml: 3 cells (scheme = 3), base ",
            "running 3 cells with 1 jobs",
            "[0] hpcc: ",
            "[2] hpcc-eta0.9: ",
            "wrote j1/summary.csv, j1/cells.csv and 10 plots in j1/plots",
        ],
    );
    let files = tree(&c.path("j1"));
    for cell in ["hpcc", "dctcp", "hpcc-eta0.9"] {
        for f in ["fct.csv", "counters.csv", "scenario.toml"] {
            assert!(files.contains_key(&format!("cells/{cell}/{f}")), "{cell}/{f}");
        }
    }
    assert!(
        files.contains_key("plots/sweep_p95.png") && files.contains_key("plots/sweep_cdf_fct.svg")
    );
    assert!(files.keys().all(|k| !k.contains(".tmp")), "{:?}", files.keys());
    let cells = read(&c.path("j1/cells.csv"));
    assert!(cells.starts_with("index,cell,scheme,buckets,flows,flows_done,"), "{cells}");
    assert_has(&cells, &["\n2,hpcc-eta0.9,hpcc eta=0.9,quantile:10,"]);
    let summary = read(&c.path("j1/summary.csv"));
    assert!(summary.starts_with("index,cell,scheme,kind,label,count,max_size,slowdown_p50,"));
    assert_has(
        &summary,
        &[
            "\n0,hpcc,hpcc,group,all,",
            "\n1,dctcp,dctcp,group,<200KB,",
            "\n2,hpcc-eta0.9,hpcc eta=0.9,bucket,",
        ],
    );
    let scenario = read(&c.path("j1/cells/hpcc-eta0.9/scenario.toml"));
    assert_has(&scenario, &["scheme = { eta = 0.9, name = \"hpcc\" }", "eta = 0.9", "small.cdf\""]);

    c.ok(&["sweep", "sweep.toml", "--jobs", "2", "--out", "j2"]);
    assert_same_tree(&c.path("j1"), &c.path("j2"));

    let out = c.ok(&["sweep", "sweep.toml", "--shard", "0/2", "--out", "s0"]);
    assert_has(&out, &["running 2 cells (shard 0/2)", "combine the shards with dcsim merge"]);
    c.ok(&["sweep", "sweep.toml", "--shard", "1/2", "--out", "s1"]);
    let s0 = tree(&c.path("s0"));
    assert!(s0.contains_key("cells/hpcc/fct.csv") && s0.contains_key("cells/hpcc-eta0.9/fct.csv"));
    assert!(!s0.keys().any(|k| k.starts_with("cells/dctcp") || k == "summary.csv"));
    let out = c.ok(&["merge", "s0", "s1", "--out", "merged"]);
    assert_has(&out, &["merged 2 shard folders (3 cells) into merged"]);
    assert_same_tree(&c.path("j1"), &c.path("merged"));

    // A missing shard: an error naming the cell, nothing written.
    let e = c.fails(&["merge", "s0", "--out", "m2"], &["m2"]);
    assert_has(&e, &["no shard folder holds cell 1 (dctcp); shards given: 0/2"]);
    let e = c.fails(&["merge", "s0", "s0", "--out", "m2"], &["m2"]);
    assert_has(&e, &["cell 0 (hpcc) is also in s0"]);
    let e = c.fails(&["merge", "base", "--out", "m2"], &["m2"]);
    assert_has(&e, &["base: not a sweep output folder"]);
    // A manifest edited by hand: refused before anything is read (an index past the cells
    // made merge panic; a shard of 5/2 or a cell folder outside `cells/` was taken as given).
    let manifest = read(&c.path("s1/manifest.toml"));
    for (from, to, expect) in [
        ("index = 1\n", "index = 99\n", "cell \"dctcp\" has index 99 at position 1"),
        ("shard = \"1/2\"", "shard = \"5/2\"", "shard \"5/2\": shard index 5 is out of range"),
        // A shard that names other cells than those the folder holds (merged without
        // comment before).
        ("shard = \"1/2\"", "shard = \"0/2\"", "\"0/2\" does not match the cells the folder holds"),
        ("shard = \"1/2\"", "shard = \"2/3\"", "\"2/3\" does not match the cells the folder holds"),
        ("name = \"dctcp\"", "name = \"../..\"", "cell 1: \"../..\" is not a cell folder name"),
        // Two cells of one name (the second reported the first's data), and an axis part
        // that is no file name piece (figures were drawn outside the folder).
        ("name = \"dctcp\"", "name = \"hpcc\"", "cell name \"hpcc\" appears twice"),
        (
            "parts = [\"hpcc\"",
            "parts = [\"../x\"",
            "axis `scheme`: part \"../x\" is not a file name piece",
        ),
        // Checked before anything is written (the merged manifest and cells were written
        // before a bad bucket spec failed).
        (
            "buckets = \"quantile:10\"",
            "buckets = \"quantile:0\"",
            "cell 0 (\"hpcc\"): buckets: bad bucket spec `quantile:0`",
        ),
    ] {
        assert!(manifest.contains(from), "{from:?} in {manifest}");
        fs::write(c.path("s1/manifest.toml"), manifest.replacen(from, to, 1)).unwrap();
        let e = c.fails(&["merge", "s0", "s1", "--out", "m2"], &["m2"]);
        assert_has(&e, &["s1/manifest.toml: ", expect]);
    }
    // A `[buffer]` report's settings in the manifest, checked as the sweep file's are (an
    // unknown port set, a utilisation of 7 or an axis that does not exist were taken, and
    // the report silently pooled every port or left its columns empty).
    let spec = |axis: &str, queues: &str, busy: &str| {
        format!(
            "\n[buffer]\nscheme_axis = \"{axis}\"\nqueues = \"{queues}\"\n\
             busy_utilisation = {busy}\nby_size = false\n"
        )
    };
    for (buffer, expect) in [
        (spec("scheme", "nope", "0.5"), "buffer.queues: unknown port set \"nope\""),
        (spec("zzz", "busy", "0.5"), "buffer.scheme_axis: `zzz` is not an axis"),
        (spec("scheme", "hosts", "0.5"), "buffer.hosts: queues = \"hosts\" needs the hosts"),
        (
            spec("scheme", "busy", "7.0"),
            "buffer.busy_utilisation: expected a fraction in [0, 1], found 7",
        ),
    ] {
        let edited = format!("{manifest}{buffer}");
        fs::write(c.path("s1/manifest.toml"), edited).unwrap();
        let e = c.fails(&["merge", "s0", "s1", "--out", "m2"], &["m2"]);
        assert_has(&e, &["s1/manifest.toml: ", expect]);
    }
    fs::write(c.path("s1/manifest.toml"), &manifest).unwrap();
    // A cell's counters edited to something that is no count: an error naming the file (it
    // gave 0 flows done in cells.csv).
    let counters = read(&c.path("s1/cells/dctcp/counters.csv"));
    // The cell's counters with `flows_done` set to `v`.
    let flows_done = |v: &str| {
        let edited: Vec<String> = counters
            .lines()
            .map(
                |l| if l.starts_with("flows_done,") { format!("flows_done,{v}") } else { l.into() },
            )
            .collect();
        fs::write(c.path("s1/cells/dctcp/counters.csv"), edited.join("\n") + "\n").unwrap();
    };
    flows_done("abc");
    let e = c.fails(&["merge", "s0", "s1", "--out", "m2"], &["m2"]);
    assert_has(&e, &["s1/cells/dctcp/counters.csv", "`flows_done` is \"abc\", not a count"]);
    // A row given twice (the last one won), and a count of flows done that fct.csv does not
    // list.
    fs::write(c.path("s1/cells/dctcp/counters.csv"), format!("{counters}flows_done,7\n")).unwrap();
    let e = c.fails(&["merge", "s0", "s1", "--out", "m2"], &["m2"]);
    assert_has(&e, &["s1/cells/dctcp/counters.csv", "`flows_done` is given again"]);
    flows_done("7");
    let e = c.fails(&["merge", "s0", "s1", "--out", "m2"], &["m2"]);
    assert_has(&e, &["s1/cells/dctcp/counters.csv", "`flows_done` is 7, but "]);
    // Any other row that is not a count (or, `end_time_ns`, a time), a header that is not
    // `counters.csv`'s, and unfinished flows that unfinished.csv does not list: they went into
    // cells.csv as they were.
    let edit = |from: &str, to: &str| {
        assert!(counters.contains(from), "{counters}");
        let edited = counters.replacen(from, to, 1);
        fs::write(c.path("s1/cells/dctcp/counters.csv"), edited).unwrap();
        c.fails(&["merge", "s0", "s1", "--out", "m2"], &["m2"])
    };
    let end = counters.lines().find(|l| l.starts_with("end_time_ns,")).unwrap().to_string();
    let e = edit(&end, "end_time_ns,abc");
    assert_has(&e, &["`end_time_ns` is \"abc\", not a time in ns"]);
    let e = edit(&end, "end_time_ns,1e300");
    assert_has(&e, &["`end_time_ns` is \"1e300\", not a time in ns"]);
    let e = edit("events,", "events,-");
    assert_has(&e, &["`events` is \"-"]);
    let e = edit("name,value", "foo,bar");
    assert_has(&e, &["expected the header `name,value`"]);
    let e = edit("flows_unfinished,0", "flows_unfinished,5");
    assert_has(&e, &["`flows_unfinished` is 5, but ", "unfinished.csv lists 0 flows"]);
    fs::write(c.path("s1/cells/dctcp/counters.csv"), &counters).unwrap();
    c.ok(&["merge", "s0", "s1", "--out", "m3"]);
}

/// `--resume` runs only the cells no earlier run finished (a cell removed, a cell stopped
/// before its scenario went in place), reuses the others, and gives the same folder as a run
/// without interruption; a changed base scenario makes every cell run again.
#[test]
fn sweep_resume_runs_only_unfinished_cells() {
    let c = sweep_case(SWEEP);
    c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--out", "whole"]);
    c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--out", "r"]);
    assert_same_tree(&c.path("whole"), &c.path("r"));
    // Cell 1 never ran; cell 2 was stopped by something no handler sees (its scenario not yet
    // in place, a temporary file left): both run again.
    fs::remove_dir_all(c.path("r/cells/dctcp")).unwrap();
    fs::remove_file(c.path("r/cells/hpcc-eta0.9/scenario.toml")).unwrap();
    fs::write(c.path("r/cells/hpcc-eta0.9/.fct.csv.tmp"), "partial").unwrap();
    let listed = c.ok(&["sweep", "sweep.toml", "--dry-run", "--resume", "--out", "r"]);
    let reused: Vec<&str> = listed.lines().filter(|l| l.ends_with("; reused")).collect();
    assert!(reused.len() == 1 && reused[0].starts_with("  [0] hpcc ("), "{listed}");
    let out = c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--resume", "--out", "r"]);
    assert_has(
        &out,
        &[
            "running 2 of 3 cells with 1 jobs (1 reused from an earlier run)",
            "  [0] hpcc: ",
            " events, reused\n",
            "  [1] dctcp: ",
        ],
    );
    assert_eq!(out.matches("reused\n").count(), 1, "{out}");
    assert_same_tree(&c.path("whole"), &c.path("r"));
    // Resumed again: nothing left to run, and the same folder.
    let out = c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--resume", "--out", "r"]);
    assert_has(&out, &["running 0 of 3 cells with 1 jobs (3 reused from an earlier run)"]);
    assert_same_tree(&c.path("whole"), &c.path("r"));
    // A counts file edited to no count is not a finished cell: it runs again.
    fs::write(c.path("r/cells/dctcp/counters.csv"), "name,value\nevents,x\n").unwrap();
    let out = c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--resume", "--out", "r"]);
    assert_has(&out, &["running 1 of 3 cells with 1 jobs (2 reused from an earlier run)"]);
    assert_same_tree(&c.path("whole"), &c.path("r"));
    // Another base scenario: every cell's scenario differs, so every cell runs.
    c.write("base/base.toml", &BASE.replace("duration = \"20us\"", "duration = \"15us\""));
    let out = c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--resume", "--out", "r"]);
    assert_has(&out, &["running 3 of 3 cells with 1 jobs (0 reused from an earlier run)"]);
    assert!(!out.contains("reused\n"), "{out}");
    c.ok(&["sweep", "sweep.toml", "--jobs", "1", "--out", "whole15"]);
    assert_same_tree(&c.path("whole15"), &c.path("r"));
}

#[test]
fn sweep_axes_order_names_and_set() {
    let c = sweep_case(
        "base = \"base/base.toml\"\nlines = [\"scheme\"]\n\
         [set]\n\"simulation.seed\" = 9\n\
         [axes]\nload = [0.3, 0.4]\nscheme = [\"hpcc\", \"dctcp\"]\n\"flows.workload.duration\" = [\"10us\"]\n",
    );
    let out = c.ok(&["sweep", "sweep.toml", "--out", "o"]);
    assert_has(
        &out,
        &[
            "4 cells (load x scheme x flows.workload.duration = 2 x 2 x 1)",
            "[0] load0.3_hpcc_10us: ",
            "[1] load0.3_dctcp_10us: ",
            "[2] load0.4_hpcc_10us: ",
            "[3] load0.4_dctcp_10us: ",
            "and 20 plots",
        ],
    );
    let manifest = read(&c.path("o/manifest.toml"));
    assert_has(&manifest, &["set = ['\"simulation.seed\" = 9']", "shard = \"0/1\""]);
    let scenario = read(&c.path("o/cells/load0.4_dctcp_10us/scenario.toml"));
    assert_has(&scenario, &["seed = 9", "load = 0.4", "duration = \"10us\"", "name = \"dctcp\""]);
    assert!(c.path("o/plots/load0.3_10us_p99.svg").exists());
    // More jobs than cells: one thread per cell (100000 threads failed to start).
    let out = c.ok(&["sweep", "sweep.toml", "--out", "o2", "--jobs", "100000"]);
    assert_has(&out, &["running 4 cells with 4 jobs"]);
}

fn sweep_fails(sweep: &str, args: &[&str]) -> String {
    let c = sweep_case(sweep);
    let mut all = vec!["sweep", "sweep.toml", "--out", "out"];
    all.extend(args);
    c.fails(&all, &["out"])
}

#[test]
fn sweep_bad_input() {
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = []\n", &[]);
    assert_has(&e, &["sweep.toml:3:8: field `axes.load`: empty axis: give at least one value"]);
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nspeed = [1, 2]\n", &[]);
    assert_has(
        &e,
        &["sweep.toml:3:9: field `axes.speed`: unknown axis `speed`: expected one of `scheme`"],
    );
    // A key of thousands of parts (it built as deep a table and overflowed the stack), as an
    // axis, in [set] and in a variant.
    let deep = format!("simulation{}", ".a".repeat(2000));
    for sweep in [
        format!("base = \"base/base.toml\"\n[axes]\n\"{deep}\" = [1]\n"),
        format!("base = \"base/base.toml\"\n[set]\n\"{deep}\" = 1\n[axes]\nseed = [1]\n"),
        format!(
            "base = \"base/base.toml\"\n[axes]\nvariant = [{{ name = \"v\", \"{deep}\" = 1 }}]\n"
        ),
    ] {
        let e = sweep_fails(&sweep, &[]);
        assert_has(
            &e,
            &["sweep.toml:3:", "a dotted key of 2001 parts; scenario fields lie at most 16 deep"],
        );
    }
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\n\"cc.eta\" = [0.9, 1.5]\n", &[]);
    assert_has(
        &e,
        &["sweep.toml: cell eta0.9 (\"cc.eta\" = 0.9): field `cc.name`: missing; expected one of"],
    );
    let e = sweep_fails(
        "base = \"base/base.toml\"\n[axes]\nscheme = [\"hpcc\"]\n\"cc.eta\" = [0.9, 1.5]\n",
        &[],
    );
    assert_has(
        &e,
        &["sweep.toml: cell hpcc_eta1.5 (scheme = \"hpcc\", \"cc.eta\" = 1.5): field `cc.eta`: \
           eta must be in (0, 1], got 1.5"],
    );
    // A bad value the base file gives (no axis changes it): located in the base file, with
    // the cell named (it named only the sweep file and the cell).
    let c2 = sweep_case("base = \"base/base.toml\"\n[axes]\nseed = [1]\n");
    let base = read(&c2.path("base/base.toml"));
    c2.write("base/base.toml", &base.replace("[topology]\n", "[topology]\nbogus = 1\n"));
    let e = c2.fails(&["sweep", "sweep.toml", "--out", "out"], &["out"]);
    assert_has(&e, &["error: base/base.toml:", ": field `topology.bogus`: unknown field `bogus`"]);
    assert_has(&e, &["(in cell seed1 (seed = 1) of sweep.toml)"]);
    // A flow's unknown group from an axis: the cell and the flow's own field (it was `group`,
    // which the base file's `[[group]]` tables located wrongly, or none there).
    let e = sweep_fails(
        "base = \"base/base.toml\"\n[axes]\n\"flows.list\" = [[{ src = 0, dst = 1, size = 1000, group = \"nosuch\" }]]\n",
        &[],
    );
    assert_has(
        &e,
        &[
            "error: sweep.toml: cell list-v1 (",
            "field `flows.list[0].group`: no [[group]] named \"nosuch\"",
        ],
    );
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = [0.3, 1.0]\n", &[]);
    assert_has(
        &e,
        &["cell load1 (load = 1.0): field `flows.workload.load`: load must be in (0, 1)"],
    );
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = 0.3\n", &[]);
    assert_has(&e, &["field `axes.load`: an axis is an array of values"]);
    let e = sweep_fails("base = \"nope.toml\"\n[axes]\nload = [0.3]\n", &[]);
    assert_has(&e, &["sweep.toml:1:8: field `base`: cannot read nope.toml"]);
    let e = sweep_fails("base = \"base/base.toml\"\n", &[]);
    assert_has(&e, &["field `axes`: a sweep needs at least one axis"]);
    // Cell names that cannot be folders: "." and ".." put a cell's files in the cells folder
    // and the output folder itself, and a name of 300 characters failed only once it had run.
    for (name, says) in [("..", "\"..\""), (".", "\".\""), (&"x".repeat(300), "\"xxx")] {
        let e = sweep_fails(
            &format!(
                "base = \"base/base.toml\"\n[axes]\nvariant = [{{ name = \"{name}\", \
                 \"simulation.seed\" = 2 }}]\n"
            ),
            &["--dry-run"],
        );
        assert_has(
            &e,
            &["sweep.toml:2:1: field `axes`: cell 0 (", &format!("would be named {says}")],
        );
    }
    // A [buffer] report on cells without applications: refused before running (it failed
    // after every cell had run, naming a missing output file).
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = [0.3]\n[buffer]\n", &[]);
    assert_has(
        &e,
        &["field `buffer`: cell load0.3 (load = 0.3): the scenario has no [[rpc]] applications"],
    );
    // Too many cells: refused before any is built (4 axes of 100 ran out of memory).
    let hundred = |v: u32| (0..100).map(|i| (v + i).to_string()).collect::<Vec<_>>().join(", ");
    let e = sweep_fails(
        &format!(
            "base = \"base/base.toml\"\n[axes]\nseed = [{}]\n\"nic.mtu\" = [{}]\n\
             \"nic.chunk\" = [{}]\n\"nic.ack_interval\" = [{}]\n",
            hundred(0),
            hundred(1000),
            hundred(1000),
            hundred(1)
        ),
        &[],
    );
    assert_has(
        &e,
        &["sweep.toml:2:1: field `axes`: 100 × 100 × 100 × 100 cells is more than the limit of \
           100000"],
    );
    let e = sweep_fails(
        "base = \"base/base.toml\"\nbuckets = \"quantile:0\"\n[axes]\nload = [0.3]\n",
        &[],
    );
    assert_has(&e, &["sweep.toml:2:11: field `buckets`: bad bucket spec"]);
    let e = sweep_fails("base = \"base/base.toml\"\nlines = [\"x\"]\n[axes]\nload = [0.3]\n", &[]);
    assert_has(&e, &["sweep.toml:2:9: field `lines`: `x` is not an axis (axes: load)"]);
    let e =
        sweep_fails("base = \"base/base.toml\"\n[set]\nload = 0.4\n[axes]\nload = [0.3]\n", &[]);
    assert_has(&e, &["sweep.toml:3:8: field `set.load`: `load` is also the axis `load`"]);
    // Two axes that set one field: the later won in every cell, and the cells were labelled
    // with values that did not run.
    for (axes, says) in [
        (
            "\"flows.workload.load\" = [0.3, 0.5]\nload = [0.5]",
            "field `axes.load`: `flows.workload.load` and `load` both set `flows.workload.load`",
        ),
        (
            "scheme = [\"dcqcn\", \"hpcc\"]\nvariant = [{ name = \"v\", \"cc.name\" = \"timely\" }]",
            "field `axes.variant`: `scheme` and `variant` both set `cc.name`",
        ),
        ("\"flows.workload\" = [{ cdf = \"websearch\", load = 0.3, duration = \"1ms\" }]\nload = [0.5]", "both set `flows.workload.load`"),
    ] {
        let e = sweep_fails(&format!("base = \"base/base.toml\"\n[axes]\n{axes}\n"), &[]);
        assert_has(&e, &[says]);
    }
    // A `[set]` value an axis replaces (the scheme axis replaces the whole [cc]) was lost.
    let e = sweep_fails(
        "base = \"base/base.toml\"\n[set]\n\"cc.rate_ai\" = \"10Mbps\"\n[axes]\nscheme = [\"hpcc\"]\n",
        &[],
    );
    assert_has(&e, &["field `set.\"cc.rate_ai\"`: the axis `scheme` replaces `cc.rate_ai`"]);
    // Composition is kept: the scheme axis and a [cc] parameter axis, applied after it.
    let c =
        sweep_case("base = \"base/base.toml\"\n[axes]\nscheme = [\"hpcc\"]\n\"cc.eta\" = [0.9]\n");
    c.ok(&["sweep", "sweep.toml", "--dry-run", "--out", "o"]);
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = [0.3]\n", &["--shard", "2/2"]);
    assert_has(&e, &["shard index 2 is out of range for 2 shards: shards are numbered 0..=1"]);
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = [0.3]\n", &["--shard", "1"]);
    assert_has(&e, &["expected i/N with 0 <= i < N"]);
    let e = sweep_fails("base = \"base/base.toml\"\n[axes]\nload = [0.3]\n", &["--jobs", "0"]);
    assert_has(&e, &["--jobs"]);
}

#[test]
fn paper_sweeps_validate() {
    // Checks the example files; running them is the README's command.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/paper");
    let c = Case::new();
    let out = c.ok(&["validate", root.join("base.toml").to_str().unwrap()]);
    assert_has(&out, &["320 hosts", "Workload websearch", "at load 0.3", "Scheme hpcc"]);
    let expect = [
        "16 cells, all valid; 4 in shard 1/4:",
        "[1] websearch_load0.3_dcqcn-w (workload = \"websearch\", load = 0.3, scheme = \"dcqcn-w\"; buckets sizes:websearch)",
        "[13] hadoop_load0.5_dcqcn-w (",
    ];
    let reduced = root.join("sweep-reduced.toml");
    let out = c.ok(&["sweep", reduced.to_str().unwrap(), "--dry-run", "--shard", "1/4"]);
    assert_has(&out, &expect);
    // The full sweep generates 0.1 s of traffic per cell (slow in a debug build): check its
    // axes and [set] keys against a two-host base instead.
    let full = read(&root.join("sweep-full.toml"));
    c.write("tiny.toml", "[topology]\nkind = \"star\"\nsenders = 1\n[flows]\nworkload = { cdf = \"hadoop\", load = 0.1, duration = \"1ms\" }\n");
    c.write("full.toml", &full.replace("base = \"base.toml\"", "base = \"tiny.toml\""));
    let out = c.ok(&["sweep", "full.toml", "--dry-run", "--shard", "1/4"]);
    assert_has(&out, &expect);
    assert!(!c.path("out").exists());
}
