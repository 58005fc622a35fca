//! End-to-end tests of `dcsim pint path-tracing` and `dcsim pint latency`: the CSV files hold
//! exactly the library's rows, the figures are written, the same seed gives the same bytes
//! whatever `--jobs`, and every bad option exits with status 2, names the option and writes
//! nothing. Parameters are small so that the tests are fast in debug builds.

use std::fs;
use std::path::Path;

use dcsim_pint::{latency_table, path_tracing_table, LatencyRow, PathRow, Storage};

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

/// The names in `dir`, sorted (hidden temporary files included).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A PNG and an SVG figure, the SVG naming every `label`.
fn assert_figures(dir: &Path, stem: &str, labels: &[&str]) {
    let png = fs::read(dir.join(format!("{stem}.png"))).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 10_000, "{stem}.png is only {} bytes", png.len());
    let svg = read(&dir.join(format!("{stem}.svg")));
    assert!(svg.contains("<svg"));
    for l in labels {
        assert!(svg.contains(&format!(">\n{l}\n</text>")), "{stem}.svg has no text `{l}`");
    }
}

fn csv_of<R: std::fmt::Display>(header: &str, rows: &[R]) -> String {
    let mut s = format!("{header}\n");
    for r in rows {
        s.push_str(&format!("{r}\n"));
    }
    s
}

// ---------------------------------------------------------------------------------------------
// path-tracing
// ---------------------------------------------------------------------------------------------

const PATH_ARGS: [&str; 9] =
    ["pint", "path-tracing", "--k", "2,4", "--bits", "4,8", "--instances", "1,2", "--trials"];

#[test]
fn path_tracing_writes_the_library_rows_a_figure_and_a_table() {
    let c = Case::new();
    let mut args = PATH_ARGS.to_vec();
    args.extend(["4", "--seed", "7", "--out", "pt", "--jobs", "1"]);
    let out = c.ok(&args);

    let csv = read(&c.path("pt/path_tracing.csv"));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("scheme,k,bits,instances,trials,mean,p50,p99,max,failures,wrong")
    );
    // k, then budget (bits, then instances), then PINT before naive.
    let keys: Vec<String> =
        lines.map(|l| l.split(',').take(5).collect::<Vec<_>>().join(",")).collect();
    let mut expected = Vec::new();
    for k in [2, 4] {
        for (b, i) in [(4, 1), (4, 2), (8, 1), (8, 2)] {
            for s in ["pint", "naive"] {
                expected.push(format!("{s},{k},{b},{i},4"));
            }
        }
    }
    assert_eq!(keys, expected);
    // Exactly what the library computes.
    let budgets = [(4, 1), (4, 2), (8, 1), (8, 2)];
    let rows = path_tracing_table(&[2, 4], &budgets, 4, 7).unwrap();
    assert_eq!(csv, csv_of(PathRow::CSV_HEADER, &rows));
    assert!(rows.iter().all(|r| r.wrong == 0 && r.failures == 0 && r.p50 <= r.p99));

    assert_eq!(names(&c.path("pt")), ["path_tracing.csv", "path_tracing.png", "path_tracing.svg"]);
    assert_figures(
        &c.path("pt"),
        "path_tracing",
        &["PINT, 4 bits", "naive, 8 bits (2x4)", "Mean", "99th percentile", "Path length k (hops)"],
    );

    // The table: one line per (k, budget), PINT's and naive's mean and p99.
    assert_has(
        &out,
        &[
            "path tracing: packets to decode a k-hop path (4 trials per row, seed 7, paths of \
             distinct switches from 65536 IDs)",
            &format!(
                "{:>5}  {:<12}  {:>10}  {:>9}  {:>10}  {:>9}\n",
                "k", "budget", "PINT mean", "PINT p99", "naive mean", "naive p99"
            ),
            "wrote pt/path_tracing.csv, pt/path_tracing.png, pt/path_tracing.svg",
        ],
    );
    let r = &rows[14]; // k = 4, 8 bits (2x4), PINT
    let n = &rows[15];
    assert_eq!((r.k, r.bits, r.instances, r.scheme, n.scheme), (4, 8, 2, "pint", "naive"));
    let line = format!(
        "\n{:>5}  {:<12}  {:>10.1}  {:>9}  {:>10.1}  {:>9}\n",
        4, "8 bits (2x4)", r.mean, r.p99, n.mean, n.p99
    );
    assert_has(&out, &[&line]);
}

#[test]
fn path_tracing_is_deterministic_and_independent_of_jobs() {
    let c = Case::new();
    let run = |dir: &str, seed: &str, jobs: &str| {
        let mut args = PATH_ARGS.to_vec();
        args.extend(["3", "--seed", seed, "--out", dir, "--jobs", jobs]);
        c.ok(&args);
        read(&c.path(&format!("{dir}/path_tracing.csv")))
    };
    let a = run("a", "11", "1");
    assert_eq!(a, run("b", "11", "2"));
    assert_ne!(a, run("c", "12", "2"));
    // The figures too: same rows, same bytes.
    for f in ["path_tracing.png", "path_tracing.svg"] {
        assert_eq!(fs::read(c.path("a").join(f)).unwrap(), fs::read(c.path("b").join(f)).unwrap());
    }
    // A second run into the same folder replaces the files and leaves no temporary.
    run("a", "11", "1");
    assert_eq!(names(&c.path("a")), ["path_tracing.csv", "path_tracing.png", "path_tracing.svg"]);
}

#[test]
fn path_tracing_bad_options() {
    let c = Case::new();
    let bad = |extra: &[&str]| {
        let mut args = vec!["pint", "path-tracing", "--out", "pt"];
        args.extend(extra);
        c.fails(&args, &["pt"])
    };
    assert_has(&bad(&["--k", "0,5"]), &["error: --k: path length 0: a path has at least 1 hop"]);
    // 65,536 hops ran out of memory: paths are bounded at 1,024.
    assert_has(
        &bad(&["--k", "5,70000"]),
        &["error: --k: path length 70000 is more than 1024 hops"],
    );
    assert_has(&bad(&["--k", "1025"]), &["error: --k: path length 1025 is more than 1024 hops"]);
    assert_has(
        &bad(&["--k", "10,5"]),
        &["error: --k: values must be strictly increasing, but 5 follows 10"],
    );
    assert_has(&bad(&["--bits", "0,8"]), &["error: --bits: 0 bits: a digest has at least 1 bit"]);
    assert_has(
        &bad(&["--instances", "0"]),
        &["error: --instances: 0 instances: at least 1 is needed"],
    );
    assert_has(
        &bad(&["--bits", "4,8", "--instances", "1,3"]),
        &["error: --bits, --instances: a budget of 4 bits does not split into 3 instances"],
    );
    assert_has(
        &bad(&["--bits", "128"]),
        &["error: --bits, --instances: a budget of 128 bits does not split into 1 instances"],
    );
    assert_has(&bad(&["--trials", "0"]), &["error: --trials: 0 trials: at least 1 is needed"]);
    // Bounded: these ran out of memory (a panic on capacity overflow at the largest) instead.
    for n in ["10000001", "1000000000", "18446744073709551615"] {
        assert_has(&bad(&["--trials", n]), &[&format!("error: --trials: {n} trials is more than")]);
    }
    // Rejected by the parser (also status 2).
    bad(&["--k", ""]);
    bad(&["--k", "5,x"]);
    bad(&["--k", "-5"]);
    bad(&["--jobs", "0"]);
    // Without --out.
    c.fails(&["pint", "path-tracing", "--trials", "1"], &[]);
    // --out names a file: refused before running, the file untouched.
    fs::write(c.path("file"), "keep").unwrap();
    let e = c.fails(&["pint", "path-tracing", "--k", "2", "--out", "file"], &[]);
    assert_has(&e, &["cannot write file: exists and is not a directory"]);
    assert_eq!(read(&c.path("file")), "keep");
}

// ---------------------------------------------------------------------------------------------
// latency
// ---------------------------------------------------------------------------------------------

const LATENCY_ARGS: [&str; 12] = [
    "pint",
    "latency",
    "--bits",
    "4,8",
    "--sketch",
    "8,16",
    "--hist",
    "20",
    "--checkpoints",
    "10,50,200",
    "--flows",
    "2",
];

#[test]
fn latency_writes_the_library_rows_a_figure_and_a_table() {
    let c = Case::new();
    let mut args = LATENCY_ARGS.to_vec();
    args.extend(["--seed", "3", "--out", "lat", "--jobs", "1"]);
    let out = c.ok(&args);

    let csv = read(&c.path("lat/latency.csv"));
    assert!(
        csv.starts_with("bits,storage,packets,p50_err,p99_err,p50_rank_err,p99_rank_err\n"),
        "{csv}"
    );
    let keys: Vec<String> =
        csv.lines().skip(1).map(|l| l.split(',').take(3).collect::<Vec<_>>().join(",")).collect();
    let mut expected = Vec::new();
    for b in [4, 8] {
        for s in ["all", "kll8", "kll16", "hist20"] {
            for p in [10, 50, 200] {
                expected.push(format!("{b},{s},{p}"));
            }
        }
    }
    assert_eq!(keys, expected);
    let storages = [Storage::All, Storage::Kll(8), Storage::Kll(16), Storage::Hist(20)];
    let rows = latency_table(&[4, 8], &storages, &[10, 50, 200], 2, 3).unwrap();
    assert_eq!(csv, csv_of(LatencyRow::CSV_HEADER, &rows));
    assert!(rows.iter().all(|r| r.p50_err >= 0.0 && r.p99_err >= 0.0));

    assert_eq!(names(&c.path("lat")), ["latency.csv", "latency.png", "latency.svg"]);
    assert_figures(
        &c.path("lat"),
        "latency",
        &[
            "4 bits, exact",
            "8 bits, KLL 16",
            "8 bits, hist 20B",
            "Median (p50)",
            "99th percentile (p99)",
        ],
    );

    // The table: a line per checkpoint, a `p50 / p99` column per bits and storage.
    assert_has(
        &out,
        &[
            "relative error of the per-hop p50 / p99 estimates (mean over 5 hops x 2 flows, seed 3",
            &format!(
                "\n{:>8}  {:>15}  {:>15}  {:>15}  {:>15}  {:>15}",
                "packets",
                "4 bits exact",
                "4 bits KLL 8",
                "4 bits KLL 16",
                "4 bits hist 20B",
                "8 bits exact"
            ),
            "wrote lat/latency.csv, lat/latency.png, lat/latency.svg",
        ],
    );
    let at = |b: u32, s: Storage| {
        let r = rows.iter().find(|r| r.bits == b && r.storage == s && r.packets == 200).unwrap();
        format!("{:.4} / {:.4}", r.p50_err, r.p99_err)
    };
    let line = format!(
        "\n{:>8}  {:>15}  {:>15}  {:>15}  {:>15}",
        200,
        at(4, Storage::All),
        at(4, Storage::Kll(8)),
        at(4, Storage::Kll(16)),
        at(4, Storage::Hist(20))
    );
    assert_has(&out, &[&line]);
}

#[test]
fn latency_with_empty_storage_lists_runs_exact_storage_only() {
    let c = Case::new();
    let args = [
        "pint",
        "latency",
        "--bits",
        "8",
        "--sketch",
        "",
        "--hist",
        "",
        "--checkpoints",
        "10,20",
        "--flows",
        "1",
        "--out",
        "lat",
    ];
    c.ok(&args);
    let csv = read(&c.path("lat/latency.csv"));
    let storages: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(storages, ["all", "all"], "{csv}");
}

#[test]
fn latency_is_deterministic_and_independent_of_jobs() {
    let c = Case::new();
    let run = |dir: &str, seed: &str, jobs: &str| {
        let mut args = LATENCY_ARGS.to_vec();
        args.extend(["--seed", seed, "--out", dir, "--jobs", jobs]);
        c.ok(&args);
        read(&c.path(&format!("{dir}/latency.csv")))
    };
    let a = run("a", "5", "1");
    assert_eq!(a, run("b", "5", "2"));
    assert_ne!(a, run("c", "6", "1"));
}

#[test]
fn latency_bad_options() {
    let c = Case::new();
    let bad = |extra: &[&str]| {
        let mut args = vec!["pint", "latency", "--out", "lat"];
        args.extend(extra);
        c.fails(&args, &["lat"])
    };
    assert_has(
        &bad(&["--bits", "0"]),
        &["error: --bits: 0 bits: cannot compress the range [64, 4194304] into 0 bits"],
    );
    assert_has(&bad(&["--bits", "4,32"]), &["error: --bits: 32 bits: cannot compress"]);
    assert_has(
        &bad(&["--bits", "8,4"]),
        &["error: --bits: values must be strictly increasing, but 4 follows 8"],
    );
    assert_has(
        &bad(&["--sketch", "4"]),
        &["error: --sketch: a sketch of 4 digests: at least 8 are needed"],
    );
    assert_has(
        &bad(&["--hist", "4"]),
        &["error: --hist: a histogram of 4 bytes holds fewer than two buckets of 4-bit codes"],
    );
    assert_has(
        &bad(&["--checkpoints", "100,50"]),
        &["error: --checkpoints: values must be strictly increasing, but 50 follows 100"],
    );
    assert_has(
        &bad(&["--checkpoints", "0,10"]),
        &["error: --checkpoints: 0 packets: checkpoints start at 1"],
    );
    assert_has(
        &bad(&["--checkpoints", "10,20000000"]),
        &["error: --checkpoints: 20000000 packets is more than 10000000"],
    );
    assert_has(&bad(&["--flows", "0"]), &["error: --flows: 0 flows: at least 1 is needed"]);
    // Bounded work: this one ran for days.
    assert_has(
        &bad(&["--flows", "4294967295", "--checkpoints", "100"]),
        &["error: --flows, --checkpoints: 4294967295 flows of 100 packets is more than"],
    );
    bad(&["--sketch", "x"]);
    bad(&["--hist", "100,"]);
    bad(&["--checkpoints", ""]);
}

/// A small fabric with an incast: 4 senders on leaf 1 send 300 KB each to host 0 on leaf 0
/// (three switches on every path) and one sender next to host 0 sends 100 KB.
const TRACE_SCENARIO: &str = r#"
[simulation]
stop_time = "5ms"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[cc]
name = "hpcc"
[flows]
list = [
    { src = 4, dst = 0, size = "300KB" },
    { src = 5, dst = 0, size = "300KB" },
    { src = 6, dst = 0, size = "300KB" },
    { src = 7, dst = 0, size = "300KB" },
    { src = 1, dst = 0, size = "100KB" },
]
"#;

#[test]
fn latency_on_simulated_hop_latencies() {
    let c = Case::new();
    c.write("incast.toml", TRACE_SCENARIO);
    let args = |threads: &'static str, out: &'static str| {
        vec![
            "pint",
            "latency",
            "--scenario",
            "incast.toml",
            "--bits",
            "8",
            "--sketch",
            "16",
            "--checkpoints",
            "10,50,300",
            "--flows",
            "3",
            "--threads",
            threads,
            "--out",
            out,
        ]
    };
    let out = c.ok(&args("1", "one"));
    assert_has(
        &out,
        &[
            "recorded 3 flows of incast.toml (3 switch hops each); codec range ",
            "(mean over the switch hops of 3 recorded flows, seed 1;",
        ],
    );
    let csv = read(&c.path("one/latency.csv"));
    let row = |storage: &str, packets: u64| -> Vec<f64> {
        let key = format!("8,{storage},{packets},");
        let line = csv.lines().find(|l| l.starts_with(&key)).expect("row present");
        line.split(',').skip(3).map(|v| v.parse().unwrap()).collect()
    };
    // Exact storage: sampling error shrinks as packets accumulate.
    let exact = row("all", 300);
    assert!(exact[0] < row("all", 10)[0] && exact[1] < row("all", 10)[1], "{csv}");
    assert_eq!((exact[2], exact[3]), (0.0, 0.0), "exact storage has no rank error");
    // The sketch holds 16 of the 100 digests per hop: some rank error, but small; it is
    // exact while it holds every digest.
    let kll = row("kll16", 300);
    assert!(kll[3] > 0.0 && kll[3] < 0.1, "{csv}");
    assert_eq!(row("kll16", 10), row("all", 10));
    // The 100-byte code histogram (33 buckets of 8-bit codes) is exact until the hops use more
    // codes; then it coarsens its codes but never errs in rank.
    assert_eq!(row("hist100", 50), row("all", 50));
    let hist = row("hist100", 300);
    assert_eq!((hist[2], hist[3]), (0.0, 0.0), "{csv}");
    assert!((hist[0] - exact[0]).abs() < 0.05 && (hist[1] - exact[1]).abs() < 0.05, "{csv}");
    // Any thread count gives the same recording.
    c.ok(&args("2", "two"));
    assert_eq!(csv, read(&c.path("two/latency.csv")));

    // Flows too small for the last checkpoint, and a scenario with errors.
    let mut a = args("1", "x");
    a[9] = "10,50,301";
    let e = c.fails(&a, &["x"]);
    assert_has(
        &e,
        &["error: --checkpoints: 301 packets: the largest flow of incast.toml has 300 packets"],
    );
    // TCP flows count their MSS-sized segments (they were counted in RoCE MTUs: 300 KB made
    // 300 packets, not 208, and the run then traced too few).
    let tcp = TRACE_SCENARIO.replace(
        "[flows]",
        "[[group]]\nname = \"t\"\ncca = \"dctcp\"\ntcp = { ecn = \"classic\" }\n\n[flows]\ngroup = \"t\"",
    );
    c.write("tcp.toml", &tcp);
    let mut a = args("1", "x");
    (a[3], a[9]) = ("tcp.toml", "10,50,300");
    let e = c.fails(&a, &["x"]);
    assert_has(
        &e,
        &["error: --checkpoints: 300 packets: the largest flow of tcp.toml has 208 packets"],
    );
    c.write("bad.toml", "[topology]\nkind = \"nope\"\n");
    let mut a = args("1", "x");
    a[3] = "bad.toml";
    assert_has(&c.fails(&a, &["x"]), &["bad.toml"]);
}

/// In a terminal the progress bar draws to stderr from worker threads; the binary must not
/// hold the stderr lock meanwhile (it once did, and hung). Needs `script` for a pseudo-terminal.
#[test]
fn progress_bars_in_a_terminal_do_not_hang() {
    let script = std::path::Path::new("/usr/bin/script");
    if !script.exists() {
        eprintln!("skipped: no /usr/bin/script to provide a terminal");
        return;
    }
    let c = Case::new();
    let cmd = format!(
        "{} pint latency --checkpoints 100,1000,20000 --flows 8 --jobs 2 --out {}",
        env!("CARGO_BIN_EXE_dcsim"),
        c.path("tty").display()
    );
    let mut child = std::process::Command::new(script)
        .args(["-qec", &cmd, "/dev/null"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run script");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.is_some_and(|s| s.success()), "dcsim hung or failed in a terminal");
    assert!(c.path("tty/latency.csv").exists());
}
